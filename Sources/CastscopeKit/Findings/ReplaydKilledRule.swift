/// replayd-killed: ReplayKit's daemon itself died (jetsam `highwater`, or its own memory
/// limit). Every broadcast and in-app capture on the device stops with it, whatever the
/// extension did: its own finding, not `extension-killed`.
struct ReplaydKilledRule: FindingRule {
    let kind = "replayd-killed"
    /// Made once (an array and its filter per call was most of the rule on a session of its own).
    static let kinds = KindSet([.replaydKilled])

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        perLine(r, kinds: Self.kinds) { e in
            guard e.code == .replaydKilled else { return nil }
            var why = e.attr("reason").map { "jetsam reason \($0)" } ?? "jetsam"
            if let mb = e.attr("limit_mb") { why = "its \(mb) MB memory limit (\(e.attr("limit_kind") ?? "limit"))" }
            let pid = e.attr("pid").map { "[\($0)]" } ?? ""
            return (.error, "replayd\(pid), ReplayKit's daemon, was killed (\(why)): every broadcast and in-app capture on the device stopped with it")
        }
    }
}

/// replayd-killed: ReplayKit's daemon itself died (jetsam `highwater`, or its own memory
/// limit). Every broadcast and in-app capture on the device stops with it, whatever the
/// extension did: its own finding, not `extension-killed`.
struct ReplaydKilledRule: FindingRule {
    let kind = "replayd-killed"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        var out: [Finding] = []
        func make(_ e: Event, _ s: Session?) -> Finding {
            var why = e.attr("reason").map { "jetsam reason \($0)" } ?? "jetsam"
            if let mb = e.attr("limit_mb") { why = "its \(mb) MB memory limit (\(e.attr("limit_kind") ?? "limit"))" }
            let pid = e.attr("pid").map { "[\($0)]" } ?? ""
            let m = "replayd\(pid), ReplayKit's daemon, was killed (\(why)): every broadcast and in-app capture on the device stopped with it"
            if let s { return s.finding(kind, .error, at: e.time, m, [e.source]) }
            return Finding(kind: kind, severity: .error, time: e.time, displayOffset: e.displayOffset, session: nil, message: m,
                           evidence: [e.source])
        }
        for s in r.sessions { for i in s.events.indices where s.events[i].kind == "replayd.killed" { out.append(make(s.events[i], s)) } }
        for e in r.unattached where e.kind == "replayd.killed" { out.append(make(e, nil)) }
        return out
    }
}

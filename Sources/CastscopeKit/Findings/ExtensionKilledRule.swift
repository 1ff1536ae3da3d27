/// extension-killed: the system killed the extension — jetsam at the extension memory limit
/// (`EXC_RESOURCE … exceeded mem limit: ActiveHard 50 MB`) or signal 9.
struct ExtensionKilledRule: FindingRule {
    let kind = "extension-killed"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.borrowingCompactMap { s in
            guard s.outcome == .killed, let e = s.deciding.first else { return nil }
            var m = "the extension"
            if let p = e.attr("target") ?? s.process { m += " \(p)" }
            if let pid = e.attr("target_pid") ?? s.pid.map(String.init) { m += "[\(pid)]" }
            if let mb = e.attr("limit_mb") {
                m += " was killed at its \(mb) MB memory limit (\(e.attr("limit_kind") ?? "limit")): frames must be encoded and sent without holding them"
            } else {
                m += " was killed (\(e.message))"
            }
            return s.finding(kind, .error, at: e.time, m, [e.source])
        }
    }
}

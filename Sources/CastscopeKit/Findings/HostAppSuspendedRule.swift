/// host-app-suspended: runningboardd suspends the host app while the broadcast is connected; its
/// socket server stops, so the extension's connection closes (the usual cause of 10001).
struct HostAppSuspendedRule: FindingRule {
    let kind = "host-app-suspended"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        // An excerpt that holds only the system's lines (no extension line, so no session):
        // the suspension is still what the reader must be told; a warning, as nothing shows
        // the broadcast was live then.
        let lone: [Finding] = r.sessionCount == 0 ? Array(r.unattached.matching(KindSet([.appSuspended])).prefix(1)).map { e in
            let app = e.attr("bundle").map { " \($0)" } ?? ""
            return Finding(kind: kind, severity: .warning, time: e.time, displayOffset: e.displayOffset, session: nil,
                           message: "the app\(app) was suspended by runningboardd: if it hosts the broadcast's socket server, sharing stops here",
                           evidence: [e.source])
        } : []
        return lone + r.sessions.borrowingCompactMap { s in
            guard let c = s.connectedAt, let span = s.span else { return nil }
            // By index and code first: `firstIndex(where:)` handed its closure a copy of every
            // line it looked at.
            var found: Int?
            for i in s.events.indices where s.events[i].code == .appSuspended {
                if let t = s.events[i].time, t >= c, span.contains(t) {
                    found = i
                    break
                }
            }
            guard let at = found else { return nil }
            let e = s.events[at]
            let app = e.attr("bundle").map { " \($0)" } ?? ""
            return s.finding(kind, .error, at: e.time,
                             "the host app\(app) was suspended while the broadcast was streaming: its socket server stopped",
                             [e.source])
        }
    }
}

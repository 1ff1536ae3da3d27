/// host-app-suspended: runningboardd suspends the host app while the broadcast is connected; its
/// socket server stops, so the extension's connection closes (the usual cause of 10001).
struct HostAppSuspendedRule: FindingRule {
    let kind = "host-app-suspended"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.compactMap { s in
            guard let c = s.connectedAt, let span = s.span else { return nil }
            guard let e = s.events.first(where: { $0.kind == "app.suspended" && ($0.time.map { $0 >= c && span.contains($0) } ?? false) })
            else { return nil }
            let app = e.attr("bundle").map { " \($0)" } ?? ""
            return s.finding(kind, .error, at: e.time,
                             "the host app\(app) was suspended while the broadcast was streaming: its socket server stopped",
                             [e.source])
        }
    }
}

/// stopped-by-host: the host app ended the broadcast — code 10001 "Screen sharing stopped"
/// (its socket closed: it stopped sharing, was suspended or killed) is a warning; a graceful
/// shutdown with a reason ("The call has ended") is information.
struct StoppedByHostRule: FindingRule {
    let kind = "stopped-by-host"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.borrowingCompactMap { s in
            guard s.outcome == .stoppedByHost else { return nil }
            let graceful = s.deciding.contains { $0.kind == "broadcast.stopped_by_app" }
            return s.finding(kind, graceful ? .info : .warning, at: s.end, s.reason, s.deciding.map(\.source))
        }
    }
}

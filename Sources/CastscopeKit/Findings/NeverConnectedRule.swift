/// never-connected: the extension tried but never reached the host app, so nothing was shared.
struct NeverConnectedRule: FindingRule {
    let kind = "never-connected"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.borrowingCompactMap { s in
            guard !s.attempts.isEmpty, !s.connected else { return nil }
            let last = s.deciding.last?.source ?? s.attempts.last!.source
            return s.finding(kind, .error, at: s.start,
                             "the extension never connected to the host app (\(s.attempts.count) attempt\(s.attempts.count == 1 ? "" : "s")): nothing was shared",
                             [s.attempts.first!.source, last])
        }
    }
}

/// duplicate-session-start: a second broadcastStarted before the first session ended.
struct DuplicateSessionStartRule: FindingRule {
    let kind = "duplicate-session-start"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.borrowingCompactMap { s in
            guard s.interruptedByNewStart, let e = s.deciding.first else { return nil }
            return s.finding(kind, .warning, at: e.time, "a second broadcastStarted arrived before this session ended", [e.source])
        }
    }
}

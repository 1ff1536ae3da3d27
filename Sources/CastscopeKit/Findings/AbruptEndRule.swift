/// abrupt-end: the log stops mid-session with no end line (the export ended, or the process
/// died without a trace in these logs).
struct AbruptEndRule: FindingRule {
    let kind = "abrupt-end"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.borrowingCompactMap { s in
            guard s.outcome == .truncated, !s.interruptedByNewStart else { return nil }
            return s.finding(kind, .warning, at: s.end, "the log stops mid-session with no end line", s.deciding.map(\.source))
        }
    }
}

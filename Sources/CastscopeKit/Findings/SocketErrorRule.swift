/// socket-error: the connection to the host app closed with an error (didClose with an error,
/// a stream error, or Sendbird's lost connection).
struct SocketErrorRule: FindingRule {
    let kind = "socket-error"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.borrowingCompactMap { s in
            guard s.outcome == .socketError else { return nil }
            return s.finding(kind, .error, at: s.deciding.first?.time ?? s.end, s.reason, s.deciding.map(\.source))
        }
    }
}

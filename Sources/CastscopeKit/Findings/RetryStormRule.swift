/// connect-retry-storm: the extension keeps dialing the host app's socket — more attempts than
/// the threshold, or connecting (or failing to) for longer than it. Jitsi's timer fires every
/// ~100 ms, Sendbird retries 5 × 0.3 s; either way a healthy start connects within a few tries.
struct RetryStormRule: FindingRule {
    let kind = "connect-retry-storm"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.borrowingCompactMap { s in
            guard let first = s.attempts.first, let t0 = first.time else { return nil }
            let endT = s.connectedAt ?? s.attempts.last?.time ?? t0
            let span = endT - t0
            // One slow attempt is not a storm (slow-start covers it).
            guard s.attempts.count > t.retryStormAttempts || (s.attempts.count > 1 && Double(span) / 1e6 > t.retryStormSeconds)
            else { return nil }
            var m = "\(s.attempts.count) connect attempts over \(Fmt.duration(span))"
            if let c = s.attemptCadence { m += " (every \(Fmt.duration(c.median)))" }
            m += !s.connected ? " without ever connecting" : " before connecting"
            return s.finding(kind, .warning, at: t0, m, [first.source, s.attempts.last!.source])
        }
    }
}

/// socket-file-missing: attempts fail because the socket file does not exist — the host app is
/// not sharing yet (its server never opened `rtc_SSFD` / `sb_ss.sock`), or the extension and the
/// host app use different app groups, so they look in different containers.
struct SocketFileMissingRule: FindingRule {
    let kind = "socket-file-missing"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.borrowingCompactMap { s in
            // By index: a retry storm has hundreds of thousands of attempts, none built here
            // but the first and the last missing one, and each cause tested once.
            let missing = s.attempts.failing(first: 1, Session.isENOENT)
            guard let firstIndex = missing.first.first, let lastIndex = missing.last else { return nil }
            let count = missing.count
            let first = s.attempts[firstIndex], last = s.attempts[lastIndex]
            let timed = first.time != nil && last.time != nil
            let span = (last.time ?? 0) - (first.time ?? 0)
            let connected = s.connected
            // Without times a connected session's early misses are not measured: not told.
            guard !connected || (timed && Double(span) / 1e6 >= t.socketMissingSeconds) else { return nil }
            let m = "the socket file was missing for \(count) attempt\(count == 1 ? "" : "s")"
                + (timed ? " over \(Fmt.duration(span))" : "")
                + (connected ? " before the host app opened it" : "")
                + ": the host app was not sharing yet, or the extension and the host app use different app groups"
            return s.finding(kind, connected ? .warning : .error, at: first.time,
                             m, [first.failureSource ?? first.source, last.failureSource ?? last.source])
        }
    }
}

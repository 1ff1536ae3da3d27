/// connect-refused: the socket file exists but nobody accepts on it (ECONNREFUSED, 61 on
/// Darwin): a stale file from a host app that stopped sharing, or a server that closed.
struct ConnectRefusedRule: FindingRule {
    let kind = "connect-refused"

    static func refused(_ text: String) -> Bool { text.hasBytes("errno=61") || text.hasBytes("Connection refused") }

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        var out: [Finding] = []
        r.sessions.borrowingForEach { s in
            // By index: only the first three refused attempts are built (evidence), and each
            // cause is tested once.
            let refused = s.attempts.failing(first: 3, Self.refused)
            let count = refused.count
            let firstThree = refused.first.map { s.attempts[$0] }
            if let first = firstThree.first {
                out.append(s.finding(kind, .warning, at: first.time,
                                     "\(count) connect attempt\(count == 1 ? " was" : "s were") refused: the socket file exists but no server accepts on it",
                                     firstThree.map { $0.failureSource ?? $0.source }))
            }
        }
        // Network.framework's own refused connections, outside any session: whatever the
        // process dialed (a server, a debug packager) was not listening. It is said with the
        // process and connection, and only as a note once the broadcast socket is seen to
        // work (a session connected, or the host app's server took a connection): the
        // extension's refused connects are its own connect lines, above.
        // Counted as they are read (a storm of them is on disk, a chunk at a time), with the
        // first four names (three and "…").
        var so = CountedLines()
        var whose: [String] = []
        r.unattached.forEach(named: "socket.so_error") { e in
            guard e.attr("errno") == "61" else { return }
            so.add(e)
            if whose.count < 4 {
                let name = (e.process ?? "?") + (e.attr("conn").map { " C\($0)" } ?? "")
                if !whose.contains(name) { whose.append(name) }
            }
        }
        if let first = so.first {
            // From the tally: sessions handed on as they ended are no longer in the report.
            let socketWorks = r.tally.anyConnected || r.unattached.has(kind: "server.client_connected")
            let named = whose.prefix(3).joined(separator: ", ") + (whose.count > 3 ? ", …" : "")
            let tail = socketWorks ? "; the broadcast socket itself connected, so these are other connections"
                : "; if that was the broadcast socket, the host app was not listening"
            out.append(Finding(kind: kind, severity: socketWorks ? .info : .warning, time: first.time, displayOffset: first.displayOffset,
                               session: nil,
                               message: "connections were refused (ECONNREFUSED, \(so.count)×; \(named)): the other end was not listening\(tail)",
                               evidence: so.evidence))
        }
        return out
    }
}

/// connect-refused: the socket file exists but nobody accepts on it (ECONNREFUSED, 61 on
/// Darwin): a stale file from a host app that stopped sharing, or a server that closed.
struct ConnectRefusedRule: FindingRule {
    let kind = "connect-refused"

    static func refused(_ text: String) -> Bool { text.hasBytes("errno=61") || text.hasBytes("Connection refused") }

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        var out: [Finding] = []
        for s in r.sessions {
            let refused = s.attempts.filter { $0.failure.map(Self.refused) ?? false }
            if let first = refused.first {
                out.append(s.finding(kind, .warning, at: first.time,
                                     "\(refused.count) connect attempt\(refused.count == 1 ? " was" : "s were") refused: the socket file exists but no server accepts on it",
                                     refused.prefix(3).map { $0.failureSource ?? $0.source }))
            }
        }
        let so = r.unattached.filter { $0.kind == "socket.so_error" && $0.attr("errno") == "61" }
        if let first = so.first {
            out.append(Finding(kind: kind, severity: .warning, time: first.time, displayOffset: first.displayOffset, session: nil,
                               message: "connections were refused (ECONNREFUSED, \(so.count)×): the other end was not listening",
                               evidence: so.prefix(3).map(\.source)))
        }
        return out
    }
}

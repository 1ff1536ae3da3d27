/// daemon-died: a Linux daemon died — the relay, an SFU, a TURN server — as systemd and the
/// kernel say it (`linux-daemons` vocabulary: killed, crashed, OOM-killed, restarted until
/// systemd gave up). The relay logs no `closed` line for the sessions it was serving then:
/// those that stopped at that moment with none (their last line at most `gone` before it, none
/// after) are named, and the finding is an error; a daemon with no relay session open when it
/// died (another unit, or an idle relay) is a warning. Each line of one death is evidence of one
/// finding.
struct DaemonDiedRule: FindingRule {
    let kind = "daemon-died"
    static let kinds = KindSet([.daemonDied])
    /// A session whose last line came this long before the daemon died was open then.
    static let gone: Int64 = 120_000_000

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        // The relay sessions left without a closed line, read back once (not per death line).
        var unclosed: [(id: String, last: Int64)]?
        func open(at time: Int64) -> [String] {
            if unclosed == nil {
                unclosed = []
                for i in r.relaySessions.indices {
                    let s = r.relaySessions[i]
                    guard s.closed == nil, let last = s.end else { continue }
                    unclosed!.append((s.id, last))
                }
            }
            return unclosed!.filter { $0.last <= time && time - $0.last <= Self.gone }.map(\.id)
        }
        // The kernel's OOM line, systemd's and its exit line are one death: one finding, each
        // line its evidence (the same unit within a few seconds).
        let sameDeath: (Event, Event) -> Bool = { a, b in
            a.attr("unit") == b.attr("unit") && (a.time.flatMap { ta in b.time.map { abs($0 - ta) <= 5_000_000 } } ?? false)
        }
        return perLine(r, kinds: Self.kinds, continues: sameDeath) { e in
            guard e.code == .daemonDied, let unit = e.attr("unit") else { return nil }
            var what = "\(unit): \(e.attr("how") ?? "it died")"
            if let status = e.attr("status") { what += " (status=\(status))" }
            guard let time = e.time, !r.relaySessions.isEmpty else { return (.warning, what) }
            let ids = open(at: time)
            guard !ids.isEmpty else { return (.warning, what) }
            let named = ids.prefix(3).map { String($0.prefix(8)) }.joined(separator: ", ") + (ids.count > 3 ? ", …" : "")
            let sessions = ids.count == 1 ? "the relay session open then (\(named)) stopped" : "the \(ids.count) relay sessions open then (\(named)) stopped"
            return (.error, "\(what): \(sessions) with it, with no closed line")
        }
    }
}

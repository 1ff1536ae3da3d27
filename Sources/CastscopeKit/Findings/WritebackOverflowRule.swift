/// replayd-writeback-overflow: replayd's pool of frame buffers ran out (FigVirtualDisplayProcessor
/// `writeback pool capacity exceeded`, `got error -6689`): new screen frames are dropped until
/// buffers come back, so the extension receives video rarely or not at all. The usual cause is
/// an extension that keeps the sample buffers it is handed (queued for an encoder or an
/// upload) instead of letting them go. One finding per session (or for the bundle), with
/// every line as evidence.
struct WritebackOverflowRule: FindingRule {
    let kind = "replayd-writeback-overflow"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        func make(_ lines: [Event], _ s: Session?) -> Finding? {
            guard let first = lines.first else { return nil }
            let code = lines.lazy.compactMap { $0.attr("code") }.first.map { " (error \($0))" } ?? ""
            let m = "replayd ran out of frame buffers\(code), \(lines.count == 1 ? "1 line" : "\(lines.count) lines"): new frames are dropped until buffers come back, so the extension receives video rarely; an extension that keeps the sample buffers it is handed (queued for encoding or upload) causes this"
            if let s { return s.finding(kind, .warning, at: first.time, m, lines.map(\.source)) }
            return Finding(kind: kind, severity: .warning, time: first.time, displayOffset: first.displayOffset, session: nil,
                           message: m, evidence: lines.map(\.source))
        }
        var out: [Finding] = []
        // Picked by index: `filter` copies every line it looks at.
        func lines(_ events: [Event]) -> [Event] {
            events.indices.filter { events[$0].code == .replaydWritebackOverflow }.map { events[$0] }
        }
        r.sessions.borrowingForEach { s in
            let l = lines(s.events)
            if !l.isEmpty, let f = make(l, copy s) { out.append(f) }
        }
        if let f = make(r.unattached.lines(of: KindSet([.replaydWritebackOverflow])), nil) { out.append(f) }
        return out
    }
}

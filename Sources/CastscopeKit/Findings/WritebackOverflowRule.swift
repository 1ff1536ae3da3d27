/// replayd-writeback-overflow: replayd's pool of frame buffers ran out (FigVirtualDisplayProcessor
/// `writeback pool capacity exceeded`, `got error -6689`): new screen frames are dropped until
/// buffers come back, so the extension receives video rarely or not at all. The usual cause is
/// an extension that keeps the sample buffers it is handed (queued for an encoder or an
/// upload) instead of letting them go. One finding per session (or for the bundle), with
/// its number of lines and the first three as evidence.
struct WritebackOverflowRule: FindingRule {
    let kind = "replayd-writeback-overflow"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        // Counted, and the first error code (a day of them outside any session was cited
        // line by line: 5 MB on one line of the report).
        struct Lines {
            var counted = CountedLines()
            var code: String?
            mutating func add(_ e: Event) {
                counted.add(e)
                if code == nil { code = e.attr("code") }
            }
        }
        func make(_ lines: Lines, _ s: Session?) -> Finding? {
            guard let first = lines.counted.first else { return nil }
            let code = lines.code.map { " (error \($0))" } ?? ""
            let m = "replayd ran out of frame buffers\(code), \(lines.counted.count == 1 ? "1 line" : "\(lines.counted.count) lines"): new frames are dropped until buffers come back, so the extension receives video rarely; an extension that keeps the sample buffers it is handed (queued for encoding or upload) causes this"
            if let s { return s.finding(kind, .warning, at: first.time, m, lines.counted.evidence) }
            return Finding(kind: kind, severity: .warning, time: first.time, displayOffset: first.displayOffset, session: nil,
                           message: m, evidence: lines.counted.evidence)
        }
        var out: [Finding] = []
        r.sessions.borrowingForEach { s in
            // Picked by index: `filter` copies every line it looks at.
            var l = Lines()
            for i in s.events.indices where s.events[i].code == .replaydWritebackOverflow { l.add(s.events[i]) }
            if let f = make(l, copy s) { out.append(f) }
        }
        var l = Lines()
        for e in r.unattached.matching(KindSet([.replaydWritebackOverflow])) { l.add(e) }
        if let f = make(l, nil) { out.append(f) }
        return out
    }
}

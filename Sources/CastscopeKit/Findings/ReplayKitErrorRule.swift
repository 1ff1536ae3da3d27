/// replaykit-error: ReplayKit reported an error (`RPRecordingErrorDomain` code, with its meaning
/// from the complete `RPRecordingErrorCode` table, `parsers/tables/replaykit-errors.json`).
/// One error echoed on the next lines (a plugin repeating the native error, the description
/// printed after the code) is one finding with all its lines as evidence.
struct ReplayKitErrorRule: FindingRule {
    let kind = "replaykit-error"

    /// An echo: the same code (or a line without one) within this many µs of the first.
    static let echoWindow: Int64 = 2_000_000

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        var out: [Finding] = []
        func group(_ events: [Event]) -> [[Event]] {
            var groups: [[Event]] = []
            for i in events.indices where events[i].code == .replaykitError {
                let e = events[i]
                let code = ReplayKitErrors.code(of: e)
                if var last = groups.last, let first = last.first,
                    Self.near(first, e), code == nil || ReplayKitErrors.code(of: first) == nil || ReplayKitErrors.code(of: first) == code
                {
                    last.append(e)
                    groups[groups.count - 1] = last
                } else {
                    groups.append([e])
                }
            }
            // (a code on a line of its own, `- code: 18446744073709545809` in Swift's `dump()`
            // of an NSError, is ReplayKit's only next to its domain's line)
            return groups.filter { g in g.contains { $0.attr("needs") == nil } }
        }
        func make(_ g: [Event], _ session: Session?) -> Finding {
            let code = g.lazy.compactMap { ReplayKitErrors.code(of: $0) }.first
            let text = g.lazy.compactMap { $0.attr("text") }.first
            var m = ReplayKitErrors.describe(code: code, text: text, message: g[0].message)
            if code == nil, let cause = g.lazy.compactMap({ $0.attr("cause") }).first { m += ": \(cause)" }
            let evidence = g.map(\.source)
            let e = g[0]
            if let session { return session.finding(kind, .error, at: e.time, m, evidence) }
            return Finding(kind: kind, severity: .error, time: e.time, displayOffset: e.displayOffset, session: nil, message: m,
                           evidence: evidence)
        }
        r.sessions.borrowingForEach { s in for g in group(s.events) { out.append(make(g, copy s)) } }
        for g in group(Array(r.unattached.matching(KindSet([.replaykitError])))) { out.append(make(g, nil)) }
        return out
    }

    /// Two lines close enough to be one error told twice: within the window when both have
    /// times, next to each other in one file when either has none.
    static func near(_ a: Event, _ b: Event) -> Bool {
        if let ta = a.time, let tb = b.time { return abs(tb - ta) <= echoWindow }
        return a.source.path == b.source.path && abs(b.source.line - a.source.line) <= 2
    }
}

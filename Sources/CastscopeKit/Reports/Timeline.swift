/// One row of a session timeline: a line, or a run of repeated lines folded into one.
public struct TimelineEntry: Sendable {
    public var time: Int64?
    public var side: Side
    public var kind: String
    public var text: String
    public var count: Int
    public var first: SourceRef
    public var last: SourceRef
    public var timeInferred: Bool
}

/// Folds a session's events into timeline rows: a run of connect attempts and their
/// failures becomes `open socket connection ×37 over 3.9 s, every 104 ms`, a run of
/// the same line becomes `line ×N over T`.
public enum Timeline {
    public static let minimumRun = 3

    static func foldKey(_ e: Event) -> String {
        switch e.kind {
        case "socket.connect_attempt", "socket.connect_failed", "socket.connect_retry": return "\(e.side):connect"
        case "frame.sent", "frame.chunk_writable", "frame.chunk_written": return "\(e.side):frames"
        default: return "\(e.side):\(e.kind):\(e.message)"
        }
    }

    public static func entries(_ events: [Event]) -> [TimelineEntry] {
        var out: [TimelineEntry] = []
        var i = 0
        while i < events.count {
            let key = foldKey(events[i])
            var j = i + 1
            while j < events.count && foldKey(events[j]) == key { j += 1 }
            let run = events[i..<j]
            // Fold only a run that repeats itself; three different lines stay three rows.
            let repeats = Set(run.map(\.message)).count < run.count
            if run.count >= minimumRun && repeats {
                out.append(fold(run))
            } else {
                for e in run {
                    out.append(TimelineEntry(time: e.time, side: e.side, kind: e.kind, text: e.message, count: 1,
                                             first: e.source, last: e.source, timeInferred: e.timeInferred))
                }
            }
            i = j
        }
        return out
    }

    static func fold(_ run: ArraySlice<Event>) -> TimelineEntry {
        // Count each distinct message, in order of first appearance.
        var texts: [(String, Int, [Int64])] = []
        for e in run {
            if let k = texts.firstIndex(where: { $0.0 == e.message }) {
                texts[k].1 += 1
                if let t = e.time { texts[k].2.append(t) }
            } else {
                texts.append((e.message, 1, e.time.map { [$0] } ?? []))
            }
        }
        let parts = texts.map { text, count, times -> String in
            var s = "\(text) ×\(count)"
            if let a = times.first, let b = times.last, let gap = intervals(times) {
                s += " over \(Fmt.duration(b - a)), every \(Fmt.duration(gap.median))"
            }
            return s
        }
        let first = run.first!
        return TimelineEntry(time: first.time, side: first.side, kind: first.kind, text: parts.joined(separator: "; "),
                             count: run.count, first: first.source, last: run.last!.source,
                             timeInferred: run.contains(where: \.timeInferred))
    }
}

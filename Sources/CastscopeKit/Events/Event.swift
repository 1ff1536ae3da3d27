/// Where a line came from: the path inside the bundle and the line number.
public struct SourceRef: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var path: String
    public var line: Int
    public var description: String { "\(path):\(line)" }
    public static func < (a: SourceRef, b: SourceRef) -> Bool { (a.path, a.line) < (b.path, b.line) }
}

/// A normalized event: one log line that the vocabulary recognized.
public struct Event: Sendable {
    /// Normalized name, e.g. `socket.connect_attempt` (see parsers/vocabulary).
    public var kind: String
    public var sdk: String
    public var side: Side
    /// Microseconds since the epoch, once resolved; nil when the file carries no times.
    public var time: Int64?
    /// The UTC offset to show the time in (the line's own, or the bundle's).
    public var displayOffset: Int = 0
    /// True when the time was taken from a neighbouring line (Xcode `print()` output) or the
    /// date came from elsewhere in the bundle.
    public var timeInferred = false
    public var process: String?
    public var pid: Int?
    public var message: String
    public var attrs: [(String, String)]
    public var source: SourceRef
    /// Position in reading order, for a stable sort.
    public var order: Int
    var parsedTime: ParsedTime?
    var fileIndex: Int
    /// A run of the same line repeated (frames): one event stands for all of them, with each
    /// one's time and line kept compactly, so that memory does not grow by an event per frame.
    public var repeats: Repeats? = nil

    public func attr(_ name: String) -> String? { attrs.first(where: { $0.0 == name })?.1 }

    /// How many log lines the event stands for.
    public var count: Int { repeats?.lines.count ?? 1 }
    /// The time of the last line it stands for.
    public var lastTime: Int64? { repeats?.times.last ?? time }
    public var lastSource: SourceRef {
        guard let r = repeats, let l = r.lines.last else { return source }
        return SourceRef(path: source.path, line: Int(l))
    }

    /// Calls `body` with the time and source of every line the event stands for, in order.
    public func forEachLine(_ body: (Int64?, SourceRef) -> Void) {
        guard let r = repeats else { body(time, source); return }
        for k in r.lines.indices {
            body(k < r.times.count ? r.times[k] : time, SourceRef(path: source.path, line: Int(r.lines[k])))
        }
    }

    /// The event as its last line alone (for "decided by" evidence).
    var lastLine: Event {
        guard repeats != nil else { return self }
        var e = self
        e.time = lastTime
        e.source = lastSource
        e.repeats = nil
        return e
    }
}

/// The lines a repeated event stands for: times as parsed (for resolution), resolved times,
/// and line numbers. Shared by copies of the event; written only while reading and resolving.
public final class Repeats: @unchecked Sendable {
    var naive: [Int64] = []
    var lines: [Int32] = []
    public internal(set) var times: [Int64] = []
    /// Seconds since midnight of the last line, for midnight roll-over in dateless files.
    var lastSecondOfDay: Int?

    init() {}
}

extension ParsedTime {
    /// The instant with missing parts taken as 2000-01-01 UTC: differences between two lines of
    /// one file are right (but for midnight, which resolution handles).
    var naive: Int64 { instant(defaultYear: 2000, defaultMonth: 1, defaultDay: 1, defaultOffset: 0) }
}

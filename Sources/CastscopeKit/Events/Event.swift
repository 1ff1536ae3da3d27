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

    public func attr(_ name: String) -> String? { attrs.first(where: { $0.0 == name })?.1 }
}

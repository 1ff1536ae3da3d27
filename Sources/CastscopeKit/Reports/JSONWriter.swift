/// A small pretty-printing JSON writer (2-space indent, keys in the order written), appending
/// bytes to an `OutputBuffer`.
public struct JSONWriter {
    public private(set) var out = OutputBuffer()
    private var indent = 0
    private var needComma: [Bool] = [false]

    public init(capacity: Int = 0) { out = OutputBuffer(capacity: capacity) }

    /// A writer for elements of a container `depth` levels deep in another document (the
    /// same indentation and commas as if written there); `first`: the container's first element.
    /// Room for a session's element from the start (from 16 bytes, doubling, it was copied
    /// nine times on the way to a dense bundle's 5 KB).
    public init(nestedAt depth: Int, first: Bool) {
        out = OutputBuffer(capacity: 8192)
        indent = depth
        needComma = [!first]
    }

    /// Gaps left so far.
    private var gaps = 0

    /// Leaves a gap in the open container for `count` elements written elsewhere (by
    /// `init(nestedAt:first:)` writers): what is before it goes to `sink`, then `fill` writes
    /// them (called with the gap's number, from 0).
    public mutating func gap(count: Int) {
        if count > 0 { needComma[needComma.count - 1] = true }
        drain()
        if !failed, let fill, !fill(gaps) { failed = true }
        gaps += 1
    }

    /// A document written out as it is made (a report's can be tens of megabytes): the bytes
    /// go to `sink` once a megabyte is buffered (`flushIfFull`, called between elements) and
    /// at each gap, whose elements `fill` writes (called with the gap's number). A false from
    /// either stops the writing: `failed`.
    public var sink: ((ArraySlice<UInt8>) -> Bool)?
    public var fill: ((Int) -> Bool)?
    public private(set) var failed = false
    /// Bytes handed to `sink` so far.
    private var drained = 0

    private mutating func drain() {
        guard let sink, !out.isEmpty else { return }
        if !failed && !out.withUnsafeBytes({ sink(ArraySlice($0)) }) { failed = true }
        drained += out.count
        out.removeAll()
    }

    /// Hands the buffered bytes to `sink` once there is a megabyte of them.
    public mutating func flushIfFull() {
        if sink != nil && out.count >= 1 << 20 { drain() }
    }

    /// The end of a streamed part of a document (an element): what is still buffered, to
    /// `sink`. False when a write failed.
    public mutating func finish() -> Bool {
        drain()
        return !failed
    }

    /// The end of a streamed document: its final newline and what is still buffered.
    public mutating func finishLine() -> Bool {
        out.byte(0x0A)
        drain()
        return !failed
    }

    /// The document so far, as text.
    public var text: String { out.string }
    public var bytes: [UInt8] { out.bytes }

    /// The document with a final newline, taken out of the writer (not copied: a report's
    /// document can be tens of megabytes).
    public mutating func takeLine() -> OutputBuffer {
        out.byte(0x0A)
        let b = out
        out = OutputBuffer()
        return b
    }

    public static func quote(_ s: String) -> String {
        var b = OutputBuffer()
        b.jsonString(s)
        return b.string
    }

    private mutating func prefix(_ key: String?) {
        let last = needComma.count - 1
        let comma = needComma[last]
        needComma[last] = true
        // (After a comma the buffer is not empty: a newline.)
        let newline = comma || indent > 0 || !out.isEmpty || drained > 0
        out.jsonMemberPrefix(comma: comma, newline: newline, indent: 2 * indent, key: key)
    }

    public mutating func open(_ key: String? = nil, array: Bool = false) {
        prefix(key)
        out.byte(array ? UInt8(ascii: "[") : UInt8(ascii: "{"))
        indent += 1
        needComma.append(false)
    }

    public mutating func close(array: Bool = false) {
        let had = needComma.removeLast()
        indent -= 1
        if had {
            out.byte(0x0A)
            out.repeating(0x20, count: 2 * indent)
        }
        out.byte(array ? UInt8(ascii: "]") : UInt8(ascii: "}"))
    }

    public mutating func raw(_ key: String?, _ value: String) {
        prefix(key)
        out.append(value)
    }

    public mutating func string(_ key: String?, _ value: String?) {
        prefix(key)
        stringValue(value)
    }

    public mutating func int(_ key: String?, _ value: Int?) {
        prefix(key)
        intValue(value)
    }

    public mutating func bool(_ key: String?, _ value: Bool) {
        prefix(key)
        boolValue(value)
    }

    public mutating func number(_ key: String?, _ value: Double?, places: Int = 6) {
        prefix(key)
        numberValue(value, places: places)
    }

    private mutating func stringValue(_ value: String?) {
        if let value { out.jsonString(value) } else { out.append("null") }
    }

    private mutating func intValue(_ value: Int?) {
        if let value { out.int(value) } else { out.append("null") }
    }

    private mutating func boolValue(_ value: Bool) { out.append(value ? "true" : "false") }

    private mutating func numberValue(_ value: Double?, places: Int) {
        if let value, value.isFinite { out.decimal(value, places) } else { out.append("null") }
    }

    /// An RFC 3339 time (microseconds, the given UTC offset) as a string, or null.
    public mutating func time(_ key: String?, _ micros: Int64?, offset: Int) {
        prefix(key)
        timeValue(micros, offset: offset)
    }

    private mutating func timeValue(_ micros: Int64?, offset: Int) {
        guard let micros else { out.append("null"); return }
        out.byte(UInt8(ascii: "\""))
        out.rfc3339(micros, offset: offset)
        out.byte(UInt8(ascii: "\""))
    }

    /// `path:line` as a string.
    public mutating func source(_ key: String?, _ s: SourceRef?) {
        prefix(key)
        sourceValue(s)
    }

    private mutating func sourceValue(_ s: SourceRef?) {
        guard let s else { out.append("null"); return }
        // The path as a JSON string, then `:line` inside its quotes (neither needs escaping):
        // no buffer of its own per line.
        out.jsonString(s.path)
        out.dropLast()
        lineAndClose(s.line)
    }

    /// `:line` and the closing quote, after a path's JSON string without its own.
    private mutating func lineAndClose(_ line: Int) {
        out.byte(UInt8(ascii: ":"))
        out.int(line)
        out.byte(UInt8(ascii: "\""))
    }

    /// The bytes before each member of an array's elements that are objects of the same keys,
    /// made once for the array: a retry storm's connect list has an element per attempt,
    /// whose members' commas, newlines, indentation and keys were each written piece by
    /// piece. `open(shape)`, the members by `shape[k]`, `close(shape)` write the same bytes as
    /// `open()`, the members by name and `close()`.
    public struct ElementShape {
        fileprivate let first: [UInt8], next: [UInt8], end: [UInt8]
        fileprivate let keys: [Key]
        /// A member's key with what goes before it.
        public struct Key { fileprivate let bytes: [UInt8] }
        public subscript(_ k: Int) -> Key { keys[k] }
    }

    /// The shape of an element with `keys` (in that order) in the array open now: made once
    /// per depth and keys (a dense bundle's thousands of sessions list an attempt or two each).
    public func elementShape(keys: [String]) -> ElementShape {
        Self.shapes.shape(indent: indent, keys: keys) { makeShape(keys: keys) }
    }

    /// The shapes made so far, by depth and keys (report writers run on several threads).
    private static let shapes = ShapeCache()

    private final class ShapeCache: @unchecked Sendable {
        private let lock = NSLockLite()
        private var made: [Int: [([String], ElementShape)]] = [:]
        func shape(indent: Int, keys: [String], make: () -> ElementShape) -> ElementShape {
            lock.locked {
                if let s = made[indent]?.first(where: { $0.0 == keys }) { return s.1 }
                let s = make()
                made[indent, default: []].append((keys, s))
                return s
            }
        }
    }

    private func makeShape(keys: [String]) -> ElementShape {
        let outer = [UInt8](repeating: 0x20, count: 2 * indent)
        var members: [ElementShape.Key] = []
        for (k, key) in keys.enumerated() {
            var b = OutputBuffer()
            b.jsonMemberPrefix(comma: k > 0, newline: true, indent: 2 * (indent + 1), key: key)
            members.append(ElementShape.Key(bytes: b.bytes))
        }
        return ElementShape(first: [0x0A] + outer + [UInt8(ascii: "{")], next: [UInt8(ascii: ","), 0x0A] + outer + [UInt8(ascii: "{")],
                            end: [0x0A] + outer + [UInt8(ascii: "}")], keys: members)
    }

    /// Opens an element of `shape` in the array it was made for; its members follow, each
    /// at most once, in the shape's key order, the first of them always.
    public mutating func open(_ shape: ElementShape) {
        let last = needComma.count - 1
        shape.first.withUnsafeBytes { f in shape.next.withUnsafeBytes { n in out.append(needComma[last] ? n : f) } }
        needComma[last] = true
    }

    public mutating func close(_ shape: ElementShape) {
        shape.end.withUnsafeBytes { out.append($0) }
    }

    // A shaped member: its key's bytes, then the value as the named member writes it.
    public mutating func time(_ key: ElementShape.Key, _ micros: Int64?, offset: Int) { put(key); timeValue(micros, offset: offset) }
    public mutating func string(_ key: ElementShape.Key, _ value: String?) { put(key); stringValue(value) }
    public mutating func int(_ key: ElementShape.Key, _ value: Int?) { put(key); intValue(value) }
    public mutating func bool(_ key: ElementShape.Key, _ value: Bool) { put(key); boolValue(value) }
    public mutating func number(_ key: ElementShape.Key, _ value: Double?, places: Int = 6) { put(key); numberValue(value, places: places) }
    public mutating func source(_ key: ElementShape.Key, _ s: SourceRef?) { put(key); sourceValue(s) }

    private mutating func put(_ key: ElementShape.Key) { key.bytes.withUnsafeBytes { out.append($0) } }

    /// A value written before (`OutputBuffer.jsonQuoted`), or null.
    public mutating func raw(_ key: ElementShape.Key, _ value: OutputBuffer?) {
        put(key)
        if let value { out.append(value) } else { out.append("null") }
    }

    /// `path:line` as `source(_:_:)` writes it, the path's part made before
    /// (`OutputBuffer.jsonOpened`).
    public mutating func source(_ key: ElementShape.Key, opened path: OutputBuffer, line: Int) {
        put(key)
        out.append(path)
        lineAndClose(line)
    }
}

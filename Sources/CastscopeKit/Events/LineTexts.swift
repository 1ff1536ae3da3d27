/// The texts of a folded run's lines when they are not all the same: frame lines that carry a
/// length or a counter (`client stream writeToStream 10240`, `… video frame 41872`). Such a
/// line used to stay an event of its own, ~500 bytes each, so a broadcast that logs its chunk
/// sizes for an hour held every line of it (issue 15: memory follows open sessions, not the
/// lines of one). Here each line keeps its message and its attributes' values as bytes in
/// columns that go to disk past their first megabyte (`SpilledColumn`); the rest of its text
/// (kind, SDK, process, file, the attributes' names) is the run's own.
///
/// A line's record: its message, then each attribute's value, each as a 32-bit length and the
/// bytes. `starts` holds where each record begins, for a line looked up alone.
final class LineTexts: @unchecked Sendable {
    private(set) var starts = SpilledColumn<Int64>()
    private(set) var bytes = SpilledColumn<UInt8>()

    init() {}

    /// With columns in blocks of `blockBytes` (tests).
    init(blockBytes: Int) {
        starts = SpilledColumn(blockBytes: blockBytes)
        bytes = SpilledColumn(blockBytes: blockBytes)
    }

    /// Whether part of it is on disk (tests).
    var spilled: Bool { bytes.spilled }

    /// Lines held.
    var count: Int { starts.count }

    /// A record that is only this length field: the line says what the run's first line says
    /// (most lines of a run whose lines differ: `writeToStream 10240` between the remainders).
    static let sameAsHead = UInt32.max

    /// Adds a line whose text is `t` (its attributes in the run's order); `head` is the run's
    /// own text (a line that is it is kept as a mark).
    func append(_ t: Event.Text, head: Event.Text) {
        starts.append(Int64(bytes.count))
        if t === head {
            length(Self.sameAsHead)
            return
        }
        field(t.message)
        for (_, v) in t.attrs { field(v) }
    }

    /// Adds `n` lines that say what the run's first line says.
    func appendHead(times n: Int) {
        for _ in 0..<n {
            starts.append(Int64(bytes.count))
            length(Self.sameAsHead)
        }
    }

    private func length(_ n: UInt32) {
        withUnsafeBytes(of: n.littleEndian) { bytes.append(buffer: $0.bindMemory(to: UInt8.self)) }
    }

    private func field(_ s: String) {
        var s = s
        s.withUTF8 { u in
            length(UInt32(truncatingIfNeeded: u.count))
            bytes.append(buffer: u)
        }
    }

    /// Line `k`'s text: `head`'s, with that line's message and attribute values.
    func text(_ k: Int, like head: Event.Text) -> Event.Text {
        let start = Int(starts[k])
        let end = k + 1 < starts.count ? Int(starts[k + 1]) : bytes.count
        var record: [UInt8] = []
        record.reserveCapacity(end - start)
        for i in start..<end { record.append(bytes[i]) }
        return record.withUnsafeBufferPointer { Self.decode($0, like: head) }
    }

    /// Each line's text in order (read a block at a time; a text is made per line).
    func forEach(like head: Event.Text, _ body: (Event.Text) -> Void) {
        var c = Cursor(self, like: head)
        while let t = c.nextText() { body(t) }
    }

    /// Each line's message only, in order (no text made).
    func forEachMessage(like head: Event.Text, _ body: (String) -> Void) {
        var c = Cursor(self, like: head)
        while let m = c.nextMessage() { body(m) }
    }

    /// The lines' texts one at a time, in order.
    func makeIterator(like head: Event.Text) -> AnyIterator<Event.Text> {
        var c = Cursor(self, like: head)
        return AnyIterator { c.nextText() }
    }

    /// The length of the record `b` begins with, when `b` holds its length fields.
    private static func recordLength(_ b: UnsafeBufferPointer<UInt8>, fields: Int) -> Int? {
        var at = 0
        for f in 0..<fields {
            guard b.count - at >= 4 else { return nil }
            let n = Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24
            if f == 0, n == Int(sameAsHead) { return 4 }
            at += 4 + n
        }
        return at
    }

    private static func decode(_ record: UnsafeBufferPointer<UInt8>, like head: Event.Text) -> Event.Text {
        var at = 0
        func length() -> Int {
            var n = 0
            for k in 0..<4 { n |= Int(record[at + k]) << (8 * k) }
            at += 4
            return n
        }
        func next() -> String {
            let n = length()
            defer { at += n }
            return String(decoding: UnsafeBufferPointer(rebasing: record[at..<(at + n)]), as: UTF8.self)
        }
        if record.count == 4, length() == Int(sameAsHead) { return head }
        at = 0
        let message = next()
        var attrs = head.attrs
        for k in attrs.indices { attrs[k].1 = next() }
        return head.with(message: message, attrs: attrs)
    }

    private static func message(_ record: UnsafeBufferPointer<UInt8>, like head: Event.Text) -> String {
        let n = Int(record[0]) | Int(record[1]) << 8 | Int(record[2]) << 16 | Int(record[3]) << 24
        if n == Int(sameAsHead) { return head.message }
        return String(decoding: UnsafeBufferPointer(rebasing: record[4..<(4 + n)]), as: UTF8.self)
    }

    /// The lines' records one at a time, in order, a block read at a time (a record cut by a
    /// block's end is put together in a buffer of its own): what every reader in order uses,
    /// also those that take the lines of several runs in turn (`LineOrder`).
    struct Cursor {
        private var chunks: SpilledColumn<UInt8>.ChunkIterator
        private var chunk: [UInt8] = []
        private var at = 0
        private let head: Event.Text
        private let fields: Int

        init(_ t: LineTexts, like head: Event.Text) {
            chunks = t.bytes.makeChunkIterator()
            self.head = head
            fields = 1 + head.attrs.count
        }

        mutating func nextText() -> Event.Text? { next { [head] in LineTexts.decode($0, like: head) } }
        mutating func nextMessage() -> String? { next { [head] in LineTexts.message($0, like: head) } }

        /// `body` of the next record's bytes (in place when the record lies in one block).
        private mutating func next<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
            let (from, fields) = (at, fields)
            if let r = chunk.withUnsafeBufferPointer({ b -> R? in
                let rest = UnsafeBufferPointer(rebasing: b[from...])
                guard let n = LineTexts.recordLength(rest, fields: fields), n <= rest.count else { return nil }
                at = from + n
                return body(UnsafeBufferPointer(rebasing: rest[0..<n]))
            }) {
                return r
            }
            // Across blocks (or at the start of one): field by field.
            var record: [UInt8] = []
            for f in 0..<fields {
                let length = take(4)
                guard length.count == 4 else { return nil }
                record += length
                let n = Int(length[0]) | Int(length[1]) << 8 | Int(length[2]) << 16 | Int(length[3]) << 24
                if f == 0, n == Int(LineTexts.sameAsHead) { break }
                let bytes = take(n)
                guard bytes.count == n else { return nil }
                record += bytes
            }
            return record.withUnsafeBufferPointer(body)
        }

        /// The next `n` bytes (across blocks; fewer at the end).
        private mutating func take(_ n: Int) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(n)
            while out.count < n {
                if at == chunk.count {
                    guard let c = chunks.next() else { return out }
                    chunk = c
                    at = 0
                    continue
                }
                let m = Swift.min(n - out.count, chunk.count - at)
                out.append(contentsOf: chunk[at..<(at + m)])
                at += m
            }
            return out
        }
    }

    /// The lines whose flag is set, and the text of the first of them (the new run's own).
    func selecting(_ flags: [Bool], like head: Event.Text) -> (texts: LineTexts, head: Event.Text) {
        let out = LineTexts()
        var first: Event.Text?
        var k = 0
        forEach(like: head) { t in
            if k < flags.count, flags[k] {
                if first == nil { first = t }
                out.append(t, head: first!)
            }
            k += 1
        }
        return (out, first ?? head)
    }

    /// The first `n` lines.
    func leading(_ n: Int, like head: Event.Text) -> LineTexts {
        let out = LineTexts()
        var k = 0
        forEach(like: head) { t in
            if k < n { out.append(t, head: head) }
            k += 1
        }
        return out
    }

    /// For the spill: the columns as they are (`restore` puts them back).
    var columns: (starts: SpilledColumn<Int64>, bytes: SpilledColumn<UInt8>) { (starts, bytes) }

    static func restore(starts: SpilledColumn<Int64>, bytes: SpilledColumn<UInt8>) -> LineTexts {
        let t = LineTexts()
        t.starts = starts
        t.bytes = bytes
        return t
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A paste whose long lines were broken at a fixed width: copied out of a terminal that wraps
/// (tmux's and screen's copy modes, a narrow window), or put through `fold -w`. Each record
/// longer than the width became a line of exactly that width and the rest of it on the lines
/// after, so a `log show` export or a `journalctl` paste lost every record whose layout was cut
/// (nothing recognized) and an Xcode console every message cut in two.
///
/// `detect` finds the width in a file's first 64 KB: the longest line (60 characters or more),
/// when at least two lines are exactly that long, two of them begin with a time (a timed
/// layout's records), four in five of them are followed by a line that does not begin with a
/// time (a record's continuation, not the next record), and they end, and the lines after them
/// begin, in more than one way (a terminal cuts records anywhere). This source then joins a
/// line of that width with the lines after it that do not begin with a time, and leaves an empty
/// line in place of each line it joined (line numbers stay the file's; readers skip empty lines).
/// Widths are counted in characters (UTF-8 sequences; a TAB to the next multiple of 8), as a
/// terminal counts columns for all but wide (CJK) characters. Streaming, in bounded memory: at
/// most `maxJoined` lines make one.
public final class HardWrapSource: RewritingSource {
    private var lines: LineInput
    private let width: Int
    /// Broken between words (a mail client's or a ticket form's wrap, `detectWords`), not at
    /// the width itself: a line is the rest of the one before when its first word would not
    /// have fit after it, and the two are joined with the space the wrap took.
    private let words: Bool
    /// The last physical line's width in columns (for `words`).
    private var lastColumns = 0
    private(set) var eof = false
    /// The record being put together from its physical lines, how many lines were joined to its
    /// first, and whether the last of them filled the width (the record may go on).
    private var record: [UInt8] = []
    private var hasRecord = false
    private var joined = 0
    private var lastFull = false
    var out: [UInt8] = []
    var outPos = 0
    static let maxJoined = 64
    /// The bytes `detect` looks at.
    public static let headBytes = 64 << 10
    static let maxLineBytes = 1 << 20

    public init(_ source: ByteSource, width: Int, words: Bool = false) {
        lines = LineInput(source, maxBytes: Self.maxLineBytes)
        self.width = width
        self.words = words
    }

    /// The width a paste's lines were wrapped at between words, or nil: a plain-text mail's
    /// or a narrow form's copy of a log (`… bosh6d60319a-…    info    BOSH` / `client
    /// disconnected`, winfried/HelpIM#230), whose records lost their tails to lines of their
    /// own (counted unparsed). The width is the longest line's (60 to 100 columns: a timed
    /// log's own lines are longer); at least two lines that begin no record follow a line their
    /// first word would not have fit after (reaching the width: the wrap may have taken more
    /// than one space, `info    Authenticated`), four times as many as follow a line it would
    /// have (a record's own next line: a stack, a dump), and two lines begin with a time. Only
    /// when `detect` finds no fixed width.
    public static func detectWords(_ head: [UInt8]) -> Int? { detectWords(HeadLines(head)) }

    static func detectWords(_ table: HeadLines) -> Int? {
        let (lines, widths) = (table.lines, table.widths)
        guard let width = table.widest, width >= 60, width <= 100 else { return nil }
        var timed = 0
        var wrapped = 0
        var unwrapped = 0
        for k in lines.indices {
            if startsRecord(lines[k]) { timed += 1 }
            guard k + 1 < lines.count, let first = lines[k + 1].first, first != 0x20, first != 0x09, !startsRecord(lines[k + 1]) else { continue }
            if widths[k] + 1 + firstWordColumns(lines[k + 1]) >= width { wrapped += 1 } else { unwrapped += 1 }
        }
        guard timed >= 2, wrapped >= 2, wrapped >= unwrapped * 4 else { return nil }
        return width
    }

    /// The columns of a line's first word (to its first space).
    static func firstWordColumns(_ line: ArraySlice<UInt8>) -> Int {
        let word = line.prefix { $0 != 0x20 && $0 != 0x09 }
        return word.withUnsafeBytes { columns($0) }
    }

    public var consumedOffset: UInt64 { lines.source.consumedOffset }

    /// The width the lines of `head` (a file's first bytes) were broken at, or nil.
    public static func detect(_ head: [UInt8]) -> Int? { detect(HeadLines(head)) }

    static func detect(_ table: HeadLines) -> Int? {
        let (lines, widths) = (table.lines, table.widths)
        guard let width = table.widest, width >= 60, width <= 1024 else { return nil }
        var full = 0
        var timed = 0
        var continued = 0
        // Where the lines of that width end, and the lines after them: a terminal cuts records
        // anywhere, so both differ; the longest record of each of several `log show` exports
        // pasted one after the other is the same record, and its footer follows it each time.
        var ends = Set<ArraySlice<UInt8>>()
        var rests = Set<ArraySlice<UInt8>>()
        for k in lines.indices where widths[k] == width {
            full += 1
            ends.insert(lines[k].suffix(16))
            if startsRecord(lines[k]) { timed += 1 }
            if k + 1 < lines.count, !lines[k + 1].isEmpty, !startsRecord(lines[k + 1]) {
                continued += 1
                rests.insert(lines[k + 1].prefix(16))
            }
        }
        // (Records with times only: an untimed paste's lines, or `journalctl -o export`'s
        // `FIELD=value` lines, give no way to tell a record's rest from the next record.)
        guard full >= 2, timed >= 2, continued >= 2, continued * 5 >= full * 4, ends.count >= 2, rests.count >= 2 else { return nil }
        return width
    }

    /// How a file's head is wrapped: at a fixed width (`detect`), else between words
    /// (`detectWords`), or nil. Its lines split once for both (each split it byte by byte:
    /// ~0.4M instructions a file, for every file read by one reader).
    public static func layout(_ head: [UInt8]) -> (width: Int, words: Bool)? {
        let table = HeadLines(head)
        if let width = detect(table) { return (width, false) }
        return detectWords(table).map { ($0, true) }
    }

    /// A head's whole lines (without a CR before the newline) and the columns each takes.
    struct HeadLines {
        var lines: [ArraySlice<UInt8>] = []
        var widths: [Int] = []
        var widest: Int? { widths.max() }

        init(_ head: [UInt8]) {
            head.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                var start = 0
                while start < raw.count, let hit = memchr(base + start, 0x0A, raw.count - start) {
                    let i = base.distance(to: UnsafeRawPointer(hit))
                    var end = i
                    if end > start, raw[end - 1] == 0x0D { end -= 1 }
                    lines.append(head[start..<end])
                    widths.append(HardWrapSource.columns(UnsafeRawBufferPointer(rebasing: raw[start..<end])))
                    start = i + 1
                }
            }
        }
    }

    /// Characters a terminal shows for `line`: a UTF-8 sequence is one, a TAB goes to the next
    /// multiple of 8.
    static func columns(_ line: UnsafeRawBufferPointer) -> Int {
        // (most lines: ASCII without a TAB, a byte a column)
        if isASCII(line) && !line.contains(0x09) { return line.count }
        var n = 0
        for b in line {
            if b == 0x09 {
                n = (n / 8 + 1) * 8
            } else if b & 0xC0 != 0x80 {
                n += 1
            }
        }
        return n
    }

    /// Whether `line` begins as a record of a timed layout does (a date, a time of day, `<PRI>`,
    /// a Console.app row's type and time, journalctl's `-- …` lines): then it is not the rest of
    /// the line before it.
    static func startsRecord(_ line: ArraySlice<UInt8>) -> Bool {
        guard let first = line.first else { return true }
        return line.withUnsafeBytes { whole -> Bool in
            let p = UnsafeRawBufferPointer(rebasing: whole.prefix(48))
            let base = p.baseAddress!
            let n = p.count
            if ISODate.starts(base, n) || BSDDate.starts(base, n) || Clock.starts(base, n) { return true }
            if first == UInt8(ascii: "<"), n > 2, p[1] &- 0x30 < 10 { return true }
            if first == UInt8(ascii: "-"), n > 2, p[1] == UInt8(ascii: "-"), p[2] == 0x20 { return true }
            // `default<TAB>11:35:41.397185+0100<TAB>…`, `<TAB>18:16:46.520<TAB>…`
            if let tab = p.prefix(16).firstIndex(of: 0x09), tab + 1 < n {
                return Clock.starts(base + tab + 1, n - tab - 1)
            }
            return false
        }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try readMade(into: buffer) }

    /// Reads input up to the next whole line and takes it (at the end, what is left).
    func step() throws {
        guard let (l, newline) = try lines.next() else {
            flush()
            eof = true
            return
        }
        take(l, newline: newline)
    }

    /// Whether the record ends with a newline (the file's last line may not).
    private var recordNewline = true

    private func take(_ l: [UInt8], newline: Bool) {
        var body = l[...]
        if body.last == 0x0D { body = body.dropLast() }
        let columns = body.withUnsafeBytes { Self.columns($0) }
        if words {
            defer { lastColumns = columns }
            if hasRecord, let first = body.first, first != 0x20, first != 0x09, joined < Self.maxJoined, !Self.startsRecord(body),
                lastColumns + 1 + Self.firstWordColumns(body) >= width
            {
                if record.last == 0x0D { record.removeLast() }
                record.append(0x20)
                record.append(contentsOf: l)
                joined += 1
                recordNewline = newline
                return
            }
            flush()
            record.append(contentsOf: l)
            hasRecord = true
            joined = 0
            recordNewline = newline
            return
        }
        let full = columns == width
        if hasRecord, lastFull, !body.isEmpty, joined < Self.maxJoined, !Self.startsRecord(body) {
            if record.last == 0x0D { record.removeLast() }
            record.append(contentsOf: l)
            joined += 1
            lastFull = full
            recordNewline = newline
            return
        }
        flush()
        record.append(contentsOf: l)
        hasRecord = true
        joined = 0
        lastFull = full
        recordNewline = newline
    }

    /// Hands on the record, then an empty line for each line joined to it.
    private func flush() {
        guard hasRecord else { return }
        out.append(contentsOf: record)
        if recordNewline { out.append(0x0A) }
        for _ in 0..<joined { out.append(0x0A) }
        record.removeAll(keepingCapacity: true)
        hasRecord = false
        joined = 0
    }
}

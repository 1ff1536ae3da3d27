/// Xcode 15 and later, with the console's metadata shown, copy each entry as its message lines
/// followed by one line of metadata:
///
///     Hang detected: 0.77s (debugger attached, not reporting)
///     Type: Error | Timestamp: 2025-08-22 10:41:13.994158+09:00 | Process: BobCamAgent | Library: HangTracer | Subsystem: com.apple.hangtracer | Category:  | TID: 0xf700
///
/// (`Type: stdio` alone after `print()` output, which has no time; the fields shown are the
/// ones the user chose, in this order.) Read line by line, every message would be an untimed
/// line and every metadata line a line of its own. This source turns each entry into one JSON
/// line at its first line (`xcode-metadata` in `parsers/formats` reads them; the entry's other
/// lines become empty lines, so line numbers stay the file's): the message with its lines
/// joined, and the metadata's fields. A `print()` entry takes the time of the next entry that
/// has one (the last one's, at the end), marked as taken, as the `xcode` format's print lines
/// do. Lines after the last metadata line (a selection that stopped short of it) are entries
/// of their own, with the last time, marked likewise.
///
/// Bounded memory: an entry of more than `maxEntryLines` lines is handed on line by line
/// without metadata, and at most `maxHeldBytes` wait for a time.
public final class XcodeMetadataSource: RewritingSource {
    private var lines: LineInput
    private(set) var eof = false
    /// The current entry's message lines.
    private var message: [[UInt8]] = []
    private var messageBytes = 0
    /// Lines waiting while an entry before them waits for a time: an entry's JSON (without its
    /// closing brace) and the empty lines after it, or a line passed as it is.
    private struct Held {
        var bytes: [UInt8]
        var blankLines = 0
        var needsTime = false
        var raw = false
    }
    private var held: [Held] = []
    private var heldBytes = 0
    private var lastTimestamp: [UInt8]?
    private var lastProcess: [UInt8]?
    /// Bytes ready to hand out (written, and escaped for JSON, by the reports' byte buffer).
    var out = OutputBuffer()
    var outPos = 0
    static let maxEntryLines = 200
    static let maxHeldBytes = 4 << 20
    static let maxLineBytes = 1 << 20

    public init(_ source: ByteSource) { lines = LineInput(source, maxBytes: Self.maxLineBytes) }

    public var consumedOffset: UInt64 { lines.source.consumedOffset }

    /// Whether `head` (a file's first bytes) holds a metadata line (`Type: Notice | Timestamp: …`,
    /// or `Timestamp: … | Process: …` when the type is not shown).
    public static func detect(_ head: [UInt8]) -> Bool {
        var start = 0
        for i in head.indices where head[i] == 0x0A {
            if i > start, metadata(head[start..<i])?.contains(where: { $0.0 == "timestamp" }) == true { return true }
            start = i + 1
        }
        // The line the head ends in (after a long first message): its start says enough.
        let tail = head[start...]
        return tail.starts(with: "Type: ".utf8) && tail.firstRange(of: " | Timestamp: 20".utf8) != nil
    }

    static let keys: Set<String> = ["Type", "Timestamp", "Process", "Library", "Subsystem", "Category", "TID", "PID"]

    /// The fields of a metadata line (keys lower-cased: `type`, `timestamp`, `process`,
    /// `library`, `subsystem`, `category`, `tid`, `pid`), or nil: every ` | `-separated part is
    /// `Key: value` with a key Xcode shows, and there is a `Timestamp` or the line is `Type:
    /// stdio` (or another type alone). Detection wants one with a `Timestamp` (`Type: stdio`
    /// alone is too little to tell).
    static func metadata(_ line: ArraySlice<UInt8>) -> [(String, [UInt8])]? {
        var l = Array(line)
        if l.last == 0x0D { l.removeLast() }
        guard l.count >= 6, l[0] == UInt8(ascii: "T") || l[0] == UInt8(ascii: "P") || l[0] == UInt8(ascii: "L") || l[0] == UInt8(ascii: "S") || l[0] == UInt8(ascii: "C")
        else { return nil }
        var fields: [(String, [UInt8])] = []
        var i = 0
        while i <= l.count {
            // The part up to the next " | " (or the end).
            var j = i
            while j < l.count, !(l[j] == UInt8(ascii: "|") && j > i && l[j - 1] == 0x20 && (j + 1 == l.count || l[j + 1] == 0x20)) { j += 1 }
            var part = l[i..<j]
            if part.last == 0x20 { part = part.dropLast() }
            guard let colon = part.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            let key = String(decoding: part[part.startIndex..<colon], as: UTF8.self)
            guard keys.contains(key) else { return nil }
            var value = part[(colon + 1)...]
            while value.first == 0x20 { value = value.dropFirst() }
            while value.last == 0x20 { value = value.dropLast() }
            fields.append((key.lowercased(), Array(value)))
            if j >= l.count { break }
            i = j + 2
        }
        let named = Set(fields.map(\.0))
        guard named.count == fields.count else { return nil }
        // A type is one word; a timestamp a date (`2025-08-22 10:41:13.994158+09:00`).
        if let type = fields.first(where: { $0.0 == "type" })?.1, type.isEmpty || type.contains(0x20) { return nil }
        if let t = fields.first(where: { $0.0 == "timestamp" })?.1 {
            guard t.count >= 19, t[0..<4].allSatisfy(isDigit), t[4] == UInt8(ascii: "-"), fields.count >= 2 else { return nil }
            return fields
        }
        return fields.count == 1 && fields[0].0 == "type" ? fields : nil
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try readMade(into: buffer) }

    /// Reads input up to the next whole line and deals with it (at the end, with what is left).
    func step() throws {
        guard let (l, _) = try lines.next() else {
            finish()
            eof = true
            return
        }
        take(l)
    }

    private func take(_ l: [UInt8]) {
        if let fields = Self.metadata(l[...]) {
            entry(fields)
            return
        }
        // Blank lines between entries are kept as they are.
        if message.isEmpty, l.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
            emit(l, blankLines: 0, needsTime: false, raw: true)
            return
        }
        message.append(l)
        messageBytes += l.count
        if message.count > Self.maxEntryLines || messageBytes > Self.maxLineBytes {
            // No metadata in sight: the lines as they are (each its own untimed entry).
            flushMessageWithoutMetadata()
        }
    }

    private func flushMessageWithoutMetadata() {
        for m in message { emit(render(message: [m], fields: []), blankLines: 0, needsTime: false, raw: false) }
        message = []
        messageBytes = 0
    }

    private func entry(_ fields: [(String, [UInt8])]) {
        let lines = message
        message = []
        messageBytes = 0
        let time = fields.first(where: { $0.0 == "timestamp" })?.1
        // The entry's other lines and its metadata line: empty lines.
        emit(render(message: lines, fields: fields), blankLines: lines.count, needsTime: time == nil, raw: false)
        if let time { resolve(with: time, process: fields.first(where: { $0.0 == "process" })?.1) }
    }

    /// `{"xcodeConsole":1,"message":"…","type":"Error","timestamp":"…",…}` (the first key is what
    /// detection looks for); a time given later is added at the end.
    private func render(message lines: [[UInt8]], fields: [(String, [UInt8])]) -> [UInt8] {
        var text: [UInt8] = []
        for (k, l) in lines.enumerated() {
            if k > 0 { text.append(0x0A) }
            text.append(contentsOf: l.last == 0x0D ? l.dropLast() : l[...])
        }
        var j = OutputBuffer()
        j.append(#"{"xcodeConsole":1,"message":"#)
        text.withUnsafeBytes { j.jsonString($0) }
        for (key, value) in fields { Self.member(key, value, into: &j) }
        return j.bytes
    }

    /// `,"key":"value"`.
    static func member(_ key: String, _ value: [UInt8], into j: inout OutputBuffer) {
        j.append(",\"\(key)\":")
        value.withUnsafeBytes { j.jsonString($0) }
    }

    /// Hands a line on, or holds it (and everything after it) while an entry waits for a time.
    private func emit(_ bytes: [UInt8], blankLines: Int, needsTime: Bool, raw: Bool) {
        if held.isEmpty && !needsTime {
            if raw { out.append(contentsOf: bytes); out.byte(0x0A) } else { write(bytes, blankLines: blankLines, time: nil, inferred: false) }
            return
        }
        held.append(Held(bytes: bytes, blankLines: blankLines, needsTime: needsTime, raw: raw))
        heldBytes += bytes.count
        if heldBytes > Self.maxHeldBytes { resolve(with: lastTimestamp, process: lastProcess) }
    }

    /// The entries held for a time get `time` (nil: none) and the process of the entry that
    /// gave it (the console is the debugged process's: its print() output is its own), and
    /// everything held is handed on.
    private func resolve(with time: [UInt8]?, process: [UInt8]?) {
        for h in held {
            if h.raw {
                out.append(contentsOf: h.bytes)
                out.byte(0x0A)
            } else {
                write(h.bytes, blankLines: h.blankLines, time: h.needsTime ? time : nil, inferred: h.needsTime && time != nil,
                      process: h.needsTime ? process : nil)
            }
        }
        held = []
        heldBytes = 0
        if let time {
            lastTimestamp = time
            lastProcess = process
        }
    }

    private func write(_ json: [UInt8], blankLines: Int, time: [UInt8]?, inferred: Bool, process: [UInt8]? = nil) {
        out.append(contentsOf: json)
        if let process { Self.member("process", process, into: &out) }
        if let time { Self.member("timestamp", time, into: &out) }
        if inferred { out.append(#","timeInferred":true"#) }
        out.byte(UInt8(ascii: "}"))
        out.repeating(0x0A, count: 1 + blankLines)
    }

    private func finish() {
        // Lines after the last metadata line: entries without one.
        let rest = message
        message = []
        for m in rest { emit(render(message: [m], fields: []), blankLines: 0, needsTime: true, raw: false) }
        resolve(with: lastTimestamp, process: lastProcess)
    }
}

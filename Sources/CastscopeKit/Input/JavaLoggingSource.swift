/// java.util.logging's default `SimpleFormatter` writes each record on two lines, the time and
/// the source (the class and method, or the logger's name) on the first, the level and the
/// message on the second, a stack trace after them:
///
///     Jun 02, 2020 1:48:49 PM org.ice4j.stack.NetAccessManager handleFatalError
///     SEVERE: Unexpected Error!
///     java.lang.NullPointerException
///     	at org.ice4j.socket.MergingDatagramSocket.initializeActive(MergingDatagramSocket.java:577)
///
/// (jitsi-videobridge and jicofo without their own logging.properties, docker-jitsi-meet#953,
/// jitsi-videobridge#1289; a JVM under another locale writes `SCHWERWIEGEND:` and, before Java
/// 7, `24.10.2012 20:33:26 …`.) Read line by line, every first line was a record without its
/// level and every second one an untimed line. This source makes each such pair one line at
/// the first line's place, `first line<TAB>LEVEL: message`, and the second an empty line, so
/// that line numbers stay the file's (`java-logging` in `parsers/formats` reads them; the stack
/// trace's lines continue the record). Every other line passes as it is: a pair is joined only
/// when the first line is a time and one or two words, nothing else, and the second begins
/// with a level in capitals and a colon. One line is held at a time.
public final class JavaLoggingSource: RewritingSource {
    private var lines: LineInput
    private(set) var eof = false
    /// A first line waiting for its level line (with its newline, when it had one).
    private var held: [UInt8]?
    private var heldNewline = false
    var out: [UInt8] = []
    var outPos = 0
    /// A byte more than the reader takes (`LineReader.maxLineLength`): a longer line is cut
    /// here but stays too long, so the reader still skips it and says so.
    static let maxLineBytes = (1 << 20) + 1
    /// The longest line the reader takes (`LineReader.maxLineLength`): a pair joined past it is
    /// cut there, the rest of its message on the next line, indented (a continuation line).
    static let maxJoinedBytes = 1 << 20

    public init(_ source: ByteSource) { lines = LineInput(source, maxBytes: Self.maxLineBytes) }

    public var consumedOffset: UInt64 { lines.source.consumedOffset }

    /// Whether `head` (a file's first bytes) holds such a pair of lines whose level is one of
    /// java.util.logging's (`julLevel`): a dated line of two words and a `FATAL ERROR: …` after
    /// it (Node's heap death) took a whole log for this layout and lost its times and findings.
    public static func detect(_ head: [UInt8]) -> Bool {
        var start = 0
        var previousWasFirst = false
        for i in head.indices where head[i] == 0x0A {
            let line = head[start..<i]
            start = i + 1
            if previousWasFirst, let end = levelEnd(line) {
                let l = trimmed(line)
                if julLevel(l[l.startIndex..<(l.startIndex + end)]) { return true }
            }
            previousWasFirst = isFirstLine(line)
        }
        return false
    }

    /// java.util.logging's levels in English, and as the JDK's other locales name them (any
    /// level with a letter beyond ASCII is taken too: `PRÉCIS`, `重大`, `詳細レベル(低)`).
    static let julLevels: Set<String> = [
        "SEVERE", "WARNING", "INFO", "CONFIG", "FINE", "FINER", "FINEST",
        "SCHWERWIEGEND", "WARNUNG", "INFORMATION", "KONFIGURATION", "FEIN", "FEINER", "AM FEINSTEN",
        "GRAVE", "AVERTISSEMENT", "INFOS", "PLUS PRECIS", "ADVERTENCIA", "DETALLADO", "MUY DETALLADO",
        "AVVERTENZA", "AVISO", "ADVERTÊNCIA", "GRAVE", "WAARSCHUWING", "ERNSTIG",
    ]

    static func julLevel(_ level: ArraySlice<UInt8>) -> Bool {
        level.contains { $0 >= 0x80 } || julLevels.contains(String(decoding: level, as: UTF8.self))
    }

    /// The line without a CR or spaces at its end.
    static func trimmed(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var l = line
        while let b = l.last, b == 0x0D || b == 0x20 || b == 0x09 { l = l.dropLast() }
        return l
    }

    /// A record's first line: `SimpleFormatter`'s time (`TimeScan.jul`), one space, and one or
    /// two words (the class and its method, or a logger's name), nothing after them.
    static func isFirstLine(_ line: ArraySlice<UInt8>) -> Bool {
        let l = trimmed(line)
        guard l.count >= 16, let f = l.first, isDigit(f) || isLetter(f) || f >= 0x80 else { return false }
        return l.withUnsafeBytes { p -> Bool in
            var t = ParsedTime()
            guard let e = TimeScan.jul(p, 0, into: &t), e < p.count, p[e] == 0x20 else { return false }
            var words = 0
            var k = e
            var dotted = false
            while k < p.count {
                guard p[k] == 0x20, k + 1 < p.count, p[k + 1] != 0x20 else { return false }
                k += 1
                let s = k
                while k < p.count, p[k] != 0x20, p[k] != 0x09 {
                    // (the class, or a logger's name, is a Java name with its package: `org.ice4j.…`)
                    if words == 0, p[k] == UInt8(ascii: "."), k > s, k + 1 < p.count, isLetter(p[k + 1]) { dotted = true }
                    k += 1
                }
                guard k - s <= 512, k == p.count || p[k] == 0x20 else { return false }
                if words == 0, !isLetter(p[s]) { return false }
                words += 1
            }
            return words >= 1 && words <= 2 && dotted
        }
    }

    /// Where the level of a record's second line ends (at its colon): capitals (a translated
    /// level's letters, `PLUS PRÉCIS`, `重大`, `詳細レベル(低)`), a colon, then a space or the
    /// line's end; nil for any other line (`Caused by: …`, a message's `ERROR: …` is not at a
    /// line's start after a first line).
    static func levelEnd(_ line: ArraySlice<UInt8>) -> Int? {
        let l = trimmed(line)
        var k = l.startIndex
        var capitals = false
        while k < l.endIndex, k - l.startIndex <= 40 {
            let b = l[k]
            if b == UInt8(ascii: ":") { break }
            if b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") || b >= 0x80 {
                capitals = true
            } else if !(b == 0x20 || b == UInt8(ascii: "(") || b == UInt8(ascii: ")")) {
                return nil
            }
            k += 1
        }
        guard capitals, k < l.endIndex, l[k] == UInt8(ascii: ":"), k - l.startIndex >= 2, l[l.startIndex] != 0x20, l[k - 1] != 0x20
        else { return nil }
        guard k + 1 == l.endIndex || l[k + 1] == 0x20 else { return nil }
        return k - l.startIndex
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try readMade(into: buffer) }

    func step() throws {
        guard let (l, newline) = try lines.next() else {
            if let h = held { pass(h[...], newline: heldNewline) }
            held = nil
            eof = true
            return
        }
        if let h = held {
            held = nil
            if let level = Self.levelEnd(l[...]) {
                // The pair as one line, then an empty one where the second was.
                let start = out.count
                out.append(contentsOf: Self.trimmed(h[...]))
                out.append(0x09)
                let second = Self.trimmed(l[...])
                out.append(contentsOf: second.prefix(level + 1))
                out.append(0x20)
                var rest = second.dropFirst(level + 1)
                if rest.first == 0x20 { rest = rest.dropFirst() }
                out.append(contentsOf: rest)
                if out.count - start > Self.maxJoinedBytes {
                    // A message of a megabyte (a record with its payload dumped into it) made the
                    // joined line one the reader skips, time and level with it, and the stack
                    // trace after it went to the record before. The line is cut where the
                    // reader's limit is (not inside a character) and the rest is the record's
                    // continuation line where the second line was: the reader joins it to the
                    // message, or says the record was cut, as it does for any joined record.
                    var cut = start + Self.maxJoinedBytes
                    while cut > start, out[cut] & 0xC0 == 0x80 { cut -= 1 }
                    let tail = out[cut...]
                    out.removeSubrange(cut...)
                    out.append(0x0A)
                    out.append(0x09)
                    out.append(contentsOf: tail)
                    if newline { out.append(0x0A) }
                    return
                }
                out.append(0x0A)
                if newline { out.append(0x0A) }
                return
            }
            pass(h[...], newline: heldNewline)
        }
        if Self.isFirstLine(l[...]) {
            held = l
            heldNewline = newline
            return
        }
        pass(l[...], newline: newline)
    }

    private func pass(_ l: ArraySlice<UInt8>, newline: Bool) {
        out.append(contentsOf: l)
        if newline { out.append(0x0A) }
    }
}

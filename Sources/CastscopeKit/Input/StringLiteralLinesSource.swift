#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Log lines pasted as JSON string literals, one a line: `"<14>1 2021-02-10T22:39:58.667188Z
/// - - - - - 2021-02-10T22:39:58.667Z\tDEBUG\t…\n"` (livekit#15), as `jq` without `-r`, a
/// JSON array of lines (Loki's, CloudWatch's exports) or a script's `json.dumps` print them,
/// `grep -C`'s `--` between the groups. Read as they were, the file was plain text with every
/// time lost. This source hands out each such line unquoted (its escapes undone: a `\n` inside
/// is a line break, the one at its end the line's own), empties `--` lines and the array's
/// brackets, and passes other lines unchanged; it holds one line at a time.
public final class StringLiteralLinesSource: RewritingSource {
    private let source: ByteSource
    private var input = [UInt8](repeating: 0, count: 64 << 10)
    private var line: [UInt8] = []
    /// A line longer than `maxLine` passes through as it is, to its end.
    private var passing = false
    var out: [UInt8] = []
    var outPos = 0
    private(set) var eof = false
    static let maxLine = 1 << 20

    public init(_ source: ByteSource) { self.source = source }

    public var consumedOffset: UInt64 { source.consumedOffset }

    /// Whether four in five of `head`'s lines that are not blank (nor `--`, `[`, `]`) are one
    /// JSON string literal each, and two at least.
    public static func detect(_ head: [UInt8]) -> Bool {
        var lines = 0
        var literals = 0
        var start = 0
        for i in head.indices where head[i] == 0x0A {
            defer { start = i + 1 }
            let line = trimmed(head[start..<i])
            if line.isEmpty || isDropped(line) { continue }
            lines += 1
            if unquoted(line) != nil { literals += 1 }
        }
        return literals >= 2 && literals * 5 >= lines * 4
    }

    /// `head` as this source hands it out.
    public static func stripped(_ head: [UInt8]) -> [UInt8] { drained(StringLiteralLinesSource(MemorySource(head))) }

    static func trimmed(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var s = line.startIndex
        var e = line.endIndex
        while s < e, line[s] == 0x20 || line[s] == 0x09 { s += 1 }
        while e > s, line[e - 1] == 0x20 || line[e - 1] == 0x09 || line[e - 1] == 0x0D { e -= 1 }
        return line[s..<e]
    }

    /// `grep -C`'s group separator, and a JSON array's own brackets.
    static func isDropped(_ line: ArraySlice<UInt8>) -> Bool {
        line.elementsEqual("--".utf8) || line.elementsEqual("[".utf8) || line.elementsEqual("]".utf8) || line.elementsEqual("],".utf8)
    }

    /// The text of a line that is one JSON string literal (a `,` after it allowed), or nil.
    static func unquoted(_ line: ArraySlice<UInt8>) -> [UInt8]? {
        var body = line
        if body.last == UInt8(ascii: ",") { body = body.dropLast() }
        guard body.count >= 2, body.first == UInt8(ascii: "\""), body.last == UInt8(ascii: "\"") else { return nil }
        body = body.dropFirst().dropLast()
        var out: [UInt8] = []
        out.reserveCapacity(body.count)
        var i = body.startIndex
        var pendingHigh: UInt32?
        func append(scalar v: UInt32) {
            let s = Unicode.Scalar(v) ?? "\u{FFFD}"
            out.append(contentsOf: String(Character(s)).utf8)
        }
        while i < body.endIndex {
            let b = body[i]
            if b == UInt8(ascii: "\"") { return nil }  // (two literals, or text with quotes)
            guard b == UInt8(ascii: "\\") else {
                if let h = pendingHigh { append(scalar: h); pendingHigh = nil }
                out.append(b)
                i += 1
                continue
            }
            guard i + 1 < body.endIndex else { return nil }
            let e = body[i + 1]
            i += 2
            if e == UInt8(ascii: "u") {
                guard i + 4 <= body.endIndex, let v = UInt32(String(decoding: body[i..<(i + 4)], as: UTF8.self), radix: 16) else { return nil }
                i += 4
                if (0xD800..<0xDC00).contains(v) {
                    if let h = pendingHigh { append(scalar: h) }
                    pendingHigh = v
                } else if (0xDC00..<0xE000).contains(v), let h = pendingHigh {
                    append(scalar: 0x10000 + ((h - 0xD800) << 10) + (v - 0xDC00))
                    pendingHigh = nil
                } else {
                    if let h = pendingHigh { append(scalar: h); pendingHigh = nil }
                    append(scalar: v)
                }
                continue
            }
            if let h = pendingHigh { append(scalar: h); pendingHigh = nil }
            switch e {
            case UInt8(ascii: "n"):
                // (the line's own end, written into it: not a line of its own)
                if i < body.endIndex { out.append(0x0A) }
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"), UInt8(ascii: "b"), UInt8(ascii: "f"): break
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            default: return nil
            }
        }
        if let h = pendingHigh { append(scalar: h) }
        return out
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try readMade(into: buffer) }

    /// Takes the next read's bytes.
    func step() throws {
        let n = try input.withUnsafeMutableBytes { try source.read(into: $0) }
        if n == 0 {
            eof = true
            if !line.isEmpty || passing { finishLine(newline: false) }
            return
        }
        var i = 0
        while i < n {
            let rest = input.withUnsafeBytes { raw -> Int in
                let base = raw.baseAddress! + i
                if let nl = memchr(base, 0x0A, n - i) { return base.distance(to: UnsafeRawPointer(nl)) }
                return n - i
            }
            if passing {
                out.append(contentsOf: input[i..<(i + rest)])
            } else {
                line.append(contentsOf: input[i..<(i + rest)])
                if line.count > Self.maxLine {
                    out.append(contentsOf: line)
                    line.removeAll()
                    passing = true
                }
            }
            i += rest
            if i < n {
                finishLine(newline: true)
                i += 1
            }
        }
    }

    private func finishLine(newline: Bool) {
        defer {
            line.removeAll(keepingCapacity: true)
            passing = false
        }
        if passing {
            if newline { out.append(0x0A) }
            return
        }
        let t = Self.trimmed(line[...])
        if !t.isEmpty, Self.isDropped(t) {
            // (an empty line in its place: the lines after keep their numbers)
        } else if let text = Self.unquoted(t) {
            out.append(contentsOf: text)
        } else {
            out.append(contentsOf: line)
        }
        if newline { out.append(0x0A) }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `docker compose logs` (and `docker-compose up`) put the service's name before every line:
/// `relay_1          | session … accepted …` (compose v1), `relay-1  | …` (v2). A relay or an
/// SFU run under compose is pasted that way. This source takes the prefix off each line that has
/// one, so that the lines are detected and read as the service wrote them (its times, the
/// relay's words); lines without it pass unchanged, and line numbers stay the file's.
///
/// Streaming, in bounded memory: only the first bytes of a line are held while it is decided
/// whether they are a prefix; the rest of the line is copied through.
public final class ComposePrefixSource: ByteSource {
    private let source: ByteSource
    private var input = [UInt8](repeating: 0, count: 64 << 10)
    private var inPos = 0
    private var inEnd = 0
    private var eof = false
    /// The start of the current line while it is decided (at most `maxPrefix` bytes).
    private var head: [UInt8] = []
    private var deciding = true
    /// Bytes decided and not yet handed out.
    private var out: [UInt8] = []
    private var outPos = 0
    static let maxPrefix = 80

    public init(_ source: ByteSource) { self.source = source }

    public var consumedOffset: UInt64 { source.consumedOffset }

    /// Whether most of the lines in `head` (a file's first bytes) carry a compose prefix (3 in 5).
    public static func detect(_ bytes: [UInt8]) -> Bool {
        var lines = 0
        var prefixed = 0
        var start = 0
        for i in bytes.indices where bytes[i] == 0x0A {
            let line = bytes[start..<i]
            start = i + 1
            // (nor a Markdown fence around a paste copied from an issue: in a paste of two lines
            // the fences were half of the lines)
            guard !line.isEmpty, !line.starts(with: "```".utf8), !line.starts(with: "~~~".utf8) else { continue }
            lines += 1
            if case .prefix = classify(line) { prefixed += 1 }
        }
        // Long lines: the line the head ends in counts too.
        if start < bytes.count, bytes.count - start >= 24 {
            lines += 1
            if case .prefix = classify(bytes[start...]) { prefixed += 1 }
        }
        // (compose's own lines, `Attaching to relay_1, livekit_1`, have none)
        return prefixed >= 2 && prefixed * 5 >= lines * 3
    }

    enum Verdict { case prefix(Int), notPrefix, undecided }

    /// `name  | ` at the start of `line` (name: letters, digits, `_`, `.`, `-`; one space or
    /// more; `|`; one space): its length.
    static func classify(_ line: ArraySlice<UInt8>) -> Verdict {
        var i = line.startIndex
        let end = line.endIndex
        guard i < end else { return .undecided }
        guard isName(line[i]) else { return .notPrefix }
        while i < end, isName(line[i]) { i += 1 }
        guard i < end else { return .undecided }
        guard line[i] == 0x20 else { return .notPrefix }
        while i < end, line[i] == 0x20 { i += 1 }
        guard i < end else { return .undecided }
        guard line[i] == UInt8(ascii: "|") else { return .notPrefix }
        i += 1
        guard i < end else { return .undecided }
        // `| ` and then the line; an empty message is `|` at the line's end.
        if line[i] == 0x20 { return .prefix(i + 1 - line.startIndex) }
        return line[i] == 0x0A ? .prefix(i - line.startIndex) : .notPrefix
    }

    /// A byte of a service's name: letters, digits, `_`, `.`, `-`.
    @inline(__always) static func isName(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b == 0x2E || b == 0x2D
    }

    /// A byte a prefix's name, spaces or bar may hold.
    @inline(__always) static func mayContinue(_ b: UInt8) -> Bool { isName(b) || b == 0x20 || b == UInt8(ascii: "|") }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while outPos == out.count {
            out.removeAll(keepingCapacity: true)
            outPos = 0
            guard try produce() else { return 0 }
        }
        return handOut(out, from: &outPos, into: buffer)
    }

    /// Decides what the next input bytes become; false at the end.
    private func produce() throws -> Bool {
        if inPos == inEnd {
            if eof { return finishHead() }
            inEnd = try input.withUnsafeMutableBytes { try source.read(into: $0) }
            inPos = 0
            if inEnd == 0 {
                eof = true
                return finishHead()
            }
        }
        while inPos < inEnd {
            if deciding {
                let b = input[inPos]
                inPos += 1
                let afterBar = head.last == UInt8(ascii: "|")
                head.append(b)
                // Judged once the line can be told (after `|`, at a byte no prefix has, at the
                // line's end or the bound): not again at every byte of a long name.
                guard afterBar || b == 0x0A || head.count >= Self.maxPrefix || !Self.mayContinue(b) else { continue }
                switch Self.classify(head[...]) {
                case .prefix(let n):
                    out.append(contentsOf: head[n...])
                    head.removeAll(keepingCapacity: true)
                    deciding = b == 0x0A
                case .notPrefix:
                    out.append(contentsOf: head)
                    head.removeAll(keepingCapacity: true)
                    deciding = b == 0x0A
                case .undecided:
                    if b == 0x0A || head.count >= Self.maxPrefix {
                        out.append(contentsOf: head)
                        head.removeAll(keepingCapacity: true)
                        deciding = b == 0x0A
                    }
                }
            } else {
                if copyRestOfLine(input, from: &inPos, to: inEnd, into: &out) { deciding = true }
            }
            if out.count >= 32 << 10 { break }
        }
        return true
    }

    private func finishHead() -> Bool {
        guard !head.isEmpty else { return false }
        out.append(contentsOf: head)
        head.removeAll()
        return true
    }
}

/// Appends `input[from..<end]` up to and with its first line feed to `out` and moves `from`
/// past it; true when a line feed ended what was copied (a line-prefix source's pass-through).
func copyRestOfLine(_ input: [UInt8], from: inout Int, to end: Int, into out: inout [UInt8]) -> Bool {
    let start = from
    let rest = input.withUnsafeBytes { raw -> Int in
        let base = raw.baseAddress! + start
        if let nl = memchr(base, 0x0A, end - start) { return base.distance(to: UnsafeRawPointer(nl)) + 1 }
        return end - start
    }
    out.append(contentsOf: input[start..<(start + rest)])
    from += rest
    return rest > 0 && input[from - 1] == 0x0A
}

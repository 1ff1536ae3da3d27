/// Text captured from a terminal with its colours: `script` sessions, `pymobiledevice3 syslog
/// live -o` with colour on, `journalctl` or `docker compose logs` forced to colour, CI logs.
/// Every line starts with `ESC[32m` or the like, so no format would recognize it. This source
/// takes the escape sequences out (CSI `ESC [ … final`, OSC `ESC ] … BEL` or `ESC \`, and the
/// two- and three-byte `ESC x`), streaming, across reads; the text and its line breaks pass
/// unchanged, so line numbers stay the file's. The result is sniffed again (compose prefixes,
/// Xcode metadata), as an inflated file is.
public final class TerminalEscapeSource: ByteSource {
    private let source: ByteSource
    private enum State { case text, escape, csi, osc, oscEscape }
    private var state = State.text
    /// Bytes of the sequence being dropped (an OSC without its end stops at a line break or
    /// after `maxSequence` bytes; a CSI ends at any byte that cannot be in one).
    private var length = 0
    static let maxSequence = 4096

    public init(_ source: ByteSource) { self.source = source }

    public var consumedOffset: UInt64 { source.consumedOffset }

    /// Whether a file's first bytes hold a CSI sequence (`ESC [`).
    public static func detect(_ head: [UInt8]) -> Bool {
        guard head.count > 1 else { return false }
        for i in 0..<(head.count - 1) where head[i] == 0x1B && head[i + 1] == UInt8(ascii: "[") { return true }
        return false
    }

    /// `head` without its sequences (what this source would hand out for it).
    public static func stripped(_ head: [UInt8]) -> [UInt8] {
        var copy = head
        let kept = copy.withUnsafeMutableBytes { TerminalEscapeSource(MemorySource([])).strip($0) }
        return Array(copy[0..<kept])
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let n = try source.read(into: buffer)
            if n == 0 { return 0 }
            let kept = strip(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<n]))
            if kept > 0 { return kept }
        }
    }

    /// Removes the sequences from `p` in place; returns the bytes kept.
    private func strip(_ p: UnsafeMutableRawBufferPointer) -> Int {
        var w = 0
        for r in 0..<p.count {
            let b = p[r]
            switch state {
            case .text:
                if b == 0x1B {
                    state = .escape
                    length = 1
                } else {
                    p[w] = b
                    w += 1
                }
                continue
            case .escape:
                length += 1
                if b == UInt8(ascii: "[") { state = .csi; continue }
                if b == UInt8(ascii: "]") { state = .osc; continue }
                // `ESC ( B` and the like: intermediates, then a final byte.
                if b >= 0x20 && b <= 0x2F && length < 4 { continue }
                state = .text
                if b >= 0x30 && b <= 0x7E { continue }
            case .csi:
                length += 1
                if b >= 0x20 && b <= 0x3F && length < 64 { continue }
                state = .text
                if b >= 0x40 && b <= 0x7E { continue }
            case .osc:
                length += 1
                if b == 0x07 { state = .text; continue }
                if b == 0x1B { state = .oscEscape; continue }
                if b != 0x0A && length < Self.maxSequence { continue }
                state = .text
            case .oscEscape:
                state = .text
                if b == UInt8(ascii: "\\") { continue }
            }
            // A byte that ends a sequence without belonging to it is text (or a new escape).
            if b == 0x1B {
                state = .escape
                length = 1
            } else {
                p[w] = b
                w += 1
            }
        }
        return w
    }
}

/// Text captured from a terminal with its colours: `script` sessions, `pymobiledevice3 syslog
/// live -o` with colour on, `journalctl` or `docker compose logs` forced to colour, CI logs.
/// Every line starts with `ESC[32m` or the like, so no format would recognize it. This source
/// takes the escape sequences out (CSI `ESC [ … final`; OSC `ESC ] … BEL` or `ESC \`, and DCS,
/// SOS, PM, APC likewise; the two- and three-byte `ESC x`), streaming, across reads; the text
/// and its line breaks pass unchanged, so line numbers stay the file's. The result is sniffed again (compose prefixes,
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

    /// Whether a file's first bytes are a coloured capture: lines that begin with a CSI sequence
    /// (`ESC [`, or a few spaces and one), at least two and one in four (a tool colours each
    /// line's time or level), or every line when there is one (a one-line paste of `grep
    /// --color=always`'s output: its time behind `ESC[01;31mESC[K` was lost). An
    /// escape inside a line (a journal export's value, a message) is not enough: a binary-safe
    /// export must keep its bytes, and a coloured message is matched without its codes anyway
    /// (`RawRecord.withMessage`).
    public static func detect(_ head: [UInt8]) -> Bool {
        var lines = 0
        var coloured = 0
        var start = 0
        while start < head.count {
            let end = head[start...].firstIndex(of: 0x0A) ?? head.count
            if end > start {
                lines += 1
                // (after a few spaces too: Node's `debug` on a terminal writes `  ESC[36;1mmediasoup:Worker …`)
                var k = start
                while k < end, k - start < 8, head[k] == 0x20 { k += 1 }
                if end - k > 1 && head[k] == 0x1B && head[k + 1] == UInt8(ascii: "[") { coloured += 1 }
            }
            start = end + 1
        }
        return coloured >= 2 && coloured * 4 >= lines || coloured == 1 && lines == 1
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
                break
            case .escape:
                length += 1
                if b == UInt8(ascii: "[") { state = .csi; continue }
                // OSC, and DCS, SOS, PM, APC: strings up to BEL or `ESC \`.
                if b == UInt8(ascii: "]") || b == UInt8(ascii: "P") || b == UInt8(ascii: "X") || b == UInt8(ascii: "^")
                    || b == UInt8(ascii: "_")
                {
                    state = .osc
                    continue
                }
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
            // Text, or a byte that ends a sequence without belonging to it (or a new escape).
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

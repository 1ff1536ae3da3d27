/// Text that went through a rich-text editor, a mail or a chat (Teams, Outlook, Confluence, a
/// web form) on its way to the ticket: some of its spaces came back as no-break spaces, U+00A0
/// (`C2 A0`), or narrow ones, U+202F (`E2 80 AF`, what macOS writes before AM/PM). Between a
/// line's date and its time, the time was not read (`2018-09-07␣15:00:15.607415+0530`: plain
/// text, times lost); with every space so, nothing was recognized. This source makes each one
/// an ASCII space, streaming, across reads; everything else passes unchanged (a line is one
/// or two bytes shorter for each, its number the same).
public final class NoBreakSpaceSource: ByteSource {
    private let source: ByteSource
    /// The first bytes of a sequence that the last read ended in, handed out before the next.
    private var held: [UInt8] = []
    private var ended = false

    public init(_ source: ByteSource) { self.source = source }

    public var consumedOffset: UInt64 { source.consumedOffset }

    /// Whether a file's first bytes have such a space near the start of a line, where a log
    /// line's time, level and process are: only then is the file read through this source (a
    /// message's own no-break space, French punctuation, is left as written).
    public static func detect(_ head: [UInt8]) -> Bool {
        var start = 0
        while start < head.count {
            let end = head[start...].firstIndex(of: 0x0A) ?? head.count
            let near = min(end, start + 64)
            var k = start
            while k + 1 < near {
                if head[k] == 0xC2 && head[k + 1] == 0xA0 { return true }
                if head[k] == 0xE2 && k + 2 < end && head[k + 1] == 0x80 && head[k + 2] == 0xAF { return true }
                k += 1
            }
            start = end + 1
        }
        return false
    }

    /// `head` as this source would hand it out.
    public static func stripped(_ head: [UInt8]) -> [UInt8] {
        var copy = head
        let kept = copy.withUnsafeMutableBytes { Self.replace($0) }
        return Array(copy[0..<kept.count]) + kept.held
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 2 else { return try source.read(into: buffer) }
        while true {
            // What the last read held back goes first; the sequence it begins is looked at whole.
            let h = held.count
            for (i, b) in held.enumerated() { buffer[i] = b }
            held = []
            let n = ended ? 0 : try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[h...]))
            if n == 0 {
                ended = true
                return h
            }
            let (count, rest) = Self.replace(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(h + n)]))
            held = rest
            if count > 0 { return count }
        }
    }

    /// Each no-break space in `p` made one ASCII space, in place: the bytes kept, and the start
    /// of a sequence `p` ends in (not written: the next bytes decide).
    static func replace(_ p: UnsafeMutableRawBufferPointer) -> (count: Int, held: [UInt8]) {
        let n = p.count
        var w = 0
        var r = 0
        while r < n {
            let b = p[r]
            if b == 0xC2 || b == 0xE2 {
                let need = b == 0xC2 ? 2 : 3
                if r + need > n {
                    // (the bytes there so far could still begin one)
                    let tail = Array(p[r..<n])
                    if b == 0xC2 || tail.count < 2 || tail[1] == 0x80 { return (w, tail) }
                } else if b == 0xC2 ? p[r + 1] == 0xA0 : p[r + 1] == 0x80 && p[r + 2] == 0xAF {
                    p[w] = 0x20
                    w += 1
                    r += need
                    continue
                }
            }
            p[w] = b
            w += 1
            r += 1
        }
        return (w, [])
    }
}

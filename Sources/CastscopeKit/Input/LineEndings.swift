#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lines ended by a lone carriage return (classic Mac text; some terminal and paste tools
/// save a copied log that way): read as if each lone CR were a line feed, so that a file of such
/// lines is lines, not one record, while line numbers are those an editor shows and byte
/// offsets are unchanged (one byte for one byte). A CR before an LF stays (readers drop it):
/// a CR log with a last LF, or joined to an LF log (`cat cr.log lf.log`), was one record of
/// the CR part (206 of 207 events lost, a false `never-connected`), as a file of CR LF is
/// none of this.
public enum CROnlyLines {
    /// The head ends lines with CR alone: it has lone CRs (not before an LF), at least as many
    /// as LFs (a CR log with a last LF, or an LF log after it; not an LF log with a terminal's
    /// progress line in it).
    static func endLines(_ head: [UInt8]) -> Bool {
        head.withUnsafeBytes { b in
            guard let base = b.baseAddress, memchr(base, 0x0D, b.count) != nil else { return false }
            var lone = 0, lf = 0
            for k in 0..<b.count {
                if b[k] == 0x0A { lf += 1 } else if b[k] == 0x0D, k + 1 < b.count, b[k + 1] != 0x0A { lone += 1 }
            }
            // (a head of one line ended by a lone CR at its very end: that CR is the line's end)
            if lone == 0, lf == 0, b[b.count - 1] == 0x0D { return true }
            return lone > 0 && lone >= lf
        }
    }

    /// `bytes` with every lone CR made an LF.
    static func translated(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        for k in out.indices where out[k] == 0x0D && (k + 1 == out.count || out[k + 1] != 0x0A) { out[k] = 0x0A }
        return out
    }

    /// A stream whose first bytes `head` were read from it, the rest being `rest` (`tail`'s
    /// standard input): the same two, CR-ended lines given as lines.
    public static func stream(head: [UInt8], rest: ByteSource) -> (head: [UInt8], rest: ByteSource) {
        guard endLines(head) else { return (head, rest) }
        // (a CR that ends the head is the rest's first byte's to decide: held back)
        if head.last == 0x0D {
            return (translated(Array(head.dropLast())), CROnlySource(rest, carry: true))
        }
        return (translated(head), CROnlySource(rest))
    }

    /// `readHead` for a text reader: a file of CR-ended lines comes back as lines.
    static func readHead(_ count: Int, from source: ByteSource) throws -> (head: [UInt8], source: ByteSource) {
        let (head, whole) = try CastscopeKit.readHead(count, from: source)
        guard endLines(head) else { return (head, whole) }
        return (translated(head), CROnlySource(whole))
    }
}

/// `source` with every lone CR given as an LF (see `CROnlyLines`); a CR that ends a read is
/// held until the next byte shows whether an LF follows it.
final class CROnlySource: ByteSource {
    private let source: ByteSource
    /// A CR held from the last read (the byte before the next one).
    private var heldCR: Bool
    init(_ source: ByteSource, carry: Bool = false) {
        self.source = source
        heldCR = carry
    }
    var consumedOffset: UInt64 { source.consumedOffset }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count > 1 else { return try source.read(into: buffer) }
        // The held CR first, then what the source gives after it.
        var start = 0
        if heldCR {
            base[0] = 0x0D
            start = 1
        }
        let n = try source.read(into: UnsafeMutableRawBufferPointer(start: base + start, count: buffer.count - start))
        var total = start + n
        if n == 0 {
            // (the end: a held CR ended the last line)
            if heldCR { base[0] = 0x0A; heldCR = false }
            return total
        }
        heldCR = false
        // (a CR at the end of what was read waits for the next byte)
        if base[total - 1] == 0x0D {
            heldCR = true
            total -= 1
        }
        var p = base
        let end = base + total
        while p < end, let cr = memchr(p, 0x0D, end - p) {
            let at = cr.assumingMemoryBound(to: UInt8.self)
            if at + 1 == end || at[1] != 0x0A { at.pointee = 0x0A }
            p = at + 1
        }
        // (a read of the held CR alone: the next read decides it; give what there is)
        if total == 0 { return try read(into: buffer) }
        return total
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lines ended by a lone carriage return (classic Mac text; some terminal and paste tools
/// save a copied log that way): read as if each CR were a line feed, so that a file of such
/// lines is lines, not one record, while line numbers are those an editor shows and byte
/// offsets are unchanged (one byte for one byte). CR LF files are not touched: their lines
/// already end in LF, and readers drop the CR.
public enum CROnlyLines {
    /// The head ends lines with CR alone: it has a CR and no LF at all.
    static func endLines(_ head: [UInt8]) -> Bool {
        head.withUnsafeBytes { b in
            guard let base = b.baseAddress else { return false }
            return memchr(base, 0x0A, b.count) == nil && memchr(base, 0x0D, b.count) != nil
        }
    }

    /// `bytes` with every CR made an LF.
    static func translated(_ bytes: [UInt8]) -> [UInt8] { bytes.map { $0 == 0x0D ? 0x0A : $0 } }

    /// A stream whose first bytes `head` were read from it, the rest being `rest` (`tail`'s
    /// standard input): the same two, CR-ended lines given as lines.
    public static func stream(head: [UInt8], rest: ByteSource) -> (head: [UInt8], rest: ByteSource) {
        guard endLines(head) else { return (head, rest) }
        return (translated(head), CROnlySource(rest))
    }

    /// `readHead` for a text reader: a file of CR-ended lines comes back as lines.
    static func readHead(_ count: Int, from source: ByteSource) throws -> (head: [UInt8], source: ByteSource) {
        let (head, whole) = try CastscopeKit.readHead(count, from: source)
        guard endLines(head) else { return (head, whole) }
        return (translated(head), CROnlySource(whole))
    }
}

/// `source` with every CR given as an LF (see `CROnlyLines`).
final class CROnlySource: ByteSource {
    private let source: ByteSource
    init(_ source: ByteSource) { self.source = source }
    var consumedOffset: UInt64 { source.consumedOffset }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try source.read(into: buffer)
        guard n > 0, let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return n }
        var p = base
        let end = base + n
        while p < end, let cr = memchr(p, 0x0D, end - p) {
            let at = cr.assumingMemoryBound(to: UInt8.self)
            at.pointee = 0x0A
            p = at + 1
        }
        return n
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A text file that begins with a block of NUL bytes: what logrotate's `copytruncate` leaves
/// when the writer does not append (the old size comes back as a hole, then the new lines), or
/// a preallocating logger. The block is passed over and the text after it read; it was a
/// "binary file" before session 43, every line of it lost.
final class LeadingZerosSource: ByteSource {
    /// A run of NULs at least this long at the start (a binary format's header has a few).
    static let minimumRun = 64

    private let source: ByteSource
    private var pending: [UInt8] = []
    private var started = false
    private static let zeros = [UInt8](repeating: 0, count: 1 << 16)
    /// The NUL bytes passed over.
    private(set) var skipped: UInt64 = 0

    /// A run of NULs longer than this at the start of a stream is no copytruncate hole (nor
    /// any log).
    static let longestRun: UInt64 = 1 << 30
    private let path: String
    /// The longest run passed over: `longestRun`, or a regular file's size (finite: a log
    /// past 1 GB truncated by copytruncate leaves a hole as long, and its new lines were lost).
    private let longest: UInt64

    init(_ source: ByteSource, path: String = "", fileSize: UInt64? = nil) {
        self.source = source
        self.path = path
        longest = max(Self.longestRun, fileSize ?? 0)
    }

    static func detect(_ head: [UInt8]) -> Bool {
        head.count >= minimumRun && head.prefix(minimumRun).allSatisfy { $0 == 0 }
    }

    var consumedOffset: UInt64 { source.consumedOffset }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if !started {
            started = true
            var block = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = try block.withUnsafeMutableBytes { try source.read(into: $0) }
                if n == 0 { return 0 }
                // (a block of NULs told by memcmp against one: a hole of gigabytes is read at
                // the speed of memory, byte by byte it took a minute in a debug build)
                let allZero = block.withUnsafeBytes { b in Self.zeros.withUnsafeBytes { z in memcmp(b.baseAddress!, z.baseAddress!, n) == 0 } }
                if !allZero, let first = block[..<n].firstIndex(where: { $0 != 0 }) {
                    skipped += UInt64(first)
                    pending = Array(block[first..<n])
                    break
                }
                skipped += UInt64(n)
                // (a stream of nothing but NULs, `- < /dev/zero`, was read to the bundle's 32 GB
                // budget: a hole that long is no log's)
                if skipped > longest {
                    throw InputError(path: path, offset: skipped, "binary data: more than \(Self.longestRun >> 30) GB of NUL bytes and nothing else, not a log: the rest is not read")
                }
            }
        }
        if !pending.isEmpty {
            let n = min(buffer.count, pending.count)
            pending.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            pending.removeFirst(n)
            return n
        }
        return try source.read(into: buffer)
    }
}

/// A stream whose head begins with a block of NULs (`tail -` fed a copytruncate'd log): the
/// block passed over (to `LeadingZerosSource.longestRun`), and the next `count` bytes after it
/// as the new head. Nil when the head does not begin with such a block.
public func skippingLeadingZeros(head: [UInt8], rest: ByteSource, count: Int, path: String) throws
    -> (head: [UInt8], rest: ByteSource, skipped: UInt64)?
{
    guard LeadingZerosSource.detect(head) else { return nil }
    let skipping = LeadingZerosSource(PrefixedSource(prefix: head, rest: rest), path: path)
    var first = [UInt8](repeating: 0, count: count)
    let n = try first.withUnsafeMutableBytes { try skipping.read(into: $0) }
    first.removeSubrange(n...)
    return (first, skipping, skipping.skipped)
}

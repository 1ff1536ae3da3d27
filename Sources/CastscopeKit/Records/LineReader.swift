#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a byte stream into lines without copying: each line is a view into an internal
/// buffer, valid until the next call. `\r\n` endings lose the `\r`. A line longer than
/// `maxLineLength` is skipped (never buffered whole) and reported.
public final class LineReader {
    private let source: ByteSource
    public let path: String
    public let maxLineLength: Int
    private var buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private var eof = false
    /// The buffer's first byte starts a line (false after an overlong line's tail).
    private var bufferStartsLine = true
    /// Where the last complete line in the buffer ends (-1: not known since the last fill).
    private var completeEnd = -1
    /// 1-based number of the line last returned.
    public private(set) var lineNumber = 0
    /// Lines that were too long, as errors naming the line.
    public private(set) var problems: [InputError] = []
    /// The source threw (damage, a cut, a budget spent): the lines before it were all given.
    public private(set) var sourceFailed = false

    public init(source: ByteSource, path: String, maxLineLength: Int = 1 << 20) {
        self.source = source
        self.path = path
        self.maxLineLength = maxLineLength
        buffer = .allocate(byteCount: maxLineLength + 256 * 1024, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Bytes asked of the source per read: few enough that they are still in the core's
    /// cache when the lines are scanned (the whole 1.25 MB buffer at once was 2.5 % slower on
    /// a 256 MB log with few matches, 30 interleaved runs).
    static let readSize = 256 << 10

    public var consumedOffset: UInt64 { source.consumedOffset }

    /// Moves unread bytes to the front and reads more. Returns false at end of stream.
    private func fill() throws -> Bool {
        completeEnd = -1
        if eof { return false }
        if start > 0 {
            bufferStartsLine = true
            let remaining = end - start
            if remaining > 0 { memmove(buffer.baseAddress!, buffer.baseAddress! + start, remaining) }
            start = 0
            end = remaining
        }
        if end == buffer.count { return true }
        let n: Int
        do {
            n = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[end..<min(buffer.count, end + Self.readSize)]))
        } catch {
            sourceFailed = true
            throw error
        }
        if n == 0 { eof = true; return false }
        end += n
        return true
    }

    /// The next line without its terminator, or nil at the end of the stream.
    public func nextLine() throws -> UnsafeRawBufferPointer? {
        // (NULs passed over before the last line and not taken are that line's, not this one's)
        collapsedNULs = 0
        var scanFrom = start
        while true {
            if scanFrom < end,
                let nl = memchr(buffer.baseAddress! + scanFrom, 0x0A, end - scanFrom)
            {
                let nlIndex = buffer.baseAddress!.distance(to: nl)
                var lineStart = start
                start = nlIndex + 1
                lineNumber += 1
                // (a zero-filled block before the line, longer than a line may be: `collapseNULs`)
                if nlIndex - lineStart > maxLineLength, buffer[lineStart] == 0 { lineStart = collapseNULs(lineStart, nlIndex) }
                if nlIndex - lineStart > maxLineLength {
                    tooLong(length: UInt64(nlIndex - lineStart + takeCollapsedNULs()))
                    scanFrom = start
                    continue
                }
                var lineEnd = nlIndex
                if lineEnd > lineStart && buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                return UnsafeRawBufferPointer(rebasing: buffer[lineStart..<lineEnd])
            }
            var scanned = end - start
            if scanned > maxLineLength, buffer[start] == 0 {
                // A zero-filled block of a megabyte or more (a crash's zeroed pages, a sparse
                // file's hole) before a line: the line after it was lost as part of one line
                // "longer than the limit". Its NULs are passed over, one kept: the reader
                // says the block (`takeCollapsedNULs`) and reads the line.
                start = collapseNULs(start, end)
                scanned = end - start
                if scanned <= maxLineLength {
                    let before = end - start
                    guard try fill() else { continue }
                    scanFrom = start + before
                    continue
                }
            }
            if scanned > maxLineLength {
                // Drop the overlong line's bytes as they stream past; keep the count.
                lineNumber += 1
                var length = UInt64(scanned)
                start = end
                while true {
                    start = 0
                    end = 0
                    bufferStartsLine = false
                    guard try fill() else { break }
                    if let nl = memchr(buffer.baseAddress!, 0x0A, end) {
                        let i = buffer.baseAddress!.distance(to: nl)
                        length += UInt64(i)
                        start = i + 1
                        break
                    }
                    length += UInt64(end)
                }
                tooLong(length: length + UInt64(takeCollapsedNULs()))
                scanFrom = start
                continue
            }
            let before = end - start
            guard try fill() else {
                if end > start {
                    let lineStart = start
                    start = end
                    lineNumber += 1
                    var lineEnd = end
                    if buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                    return UnsafeRawBufferPointer(rebasing: buffer[lineStart..<lineEnd])
                }
                return nil
            }
            scanFrom = start + before
        }
    }

    /// Passes over the empty lines (`\n` alone) that follow in the buffer; how many. A file of
    /// newlines was read a line at a time, 25 times slower a byte than text (a 31 MB gzip of
    /// them: minutes).
    public func skipEmptyLines() -> Int {
        var k = start
        while k < end && buffer[k] == 0x0A { k += 1 }
        let n = k - start
        start = k
        lineNumber += n
        return n
    }

    /// Hands the buffered complete lines (after reading more when none is buffered) to `body`,
    /// which consumes whole lines from their start and says how many bytes and lines. Returns
    /// true when it consumed all it was handed (more may follow); false when it stopped at a
    /// line, or there was no complete line to hand over (end of stream, or a line longer than
    /// the buffer): `nextLine` deals with those.
    public func skim(_ body: (UnsafeRawBufferPointer) -> (bytes: Int, lines: Int)) throws -> Bool {
        var stop = lastCompleteEnd()
        if stop <= start {
            // No complete line buffered: read more (moving only the partial line to the front).
            guard !eof, try fill() else { return false }
            stop = lastCompleteEnd()
            guard stop > start else { return false }
        }
        let (bytes, n) = body(UnsafeRawBufferPointer(rebasing: buffer[start..<stop]))
        start += bytes
        lineNumber += n
        return start == stop
    }

    /// The lines already read that the buffer still holds (those since its last refill), the
    /// last first, each with its number: `body` returns false to stop. For a look back at a
    /// few lines the prefilter passed over (a pasted crash report's `Process:`).
    public func precedingLines(_ body: (Int, UnsafeRawBufferPointer) -> Bool) {
        guard start > 0, buffer[start - 1] == 0x0A else { return }
        var lineEnd = start - 1
        var number = lineNumber
        while number > 0 {
            var lineStart = lineEnd
            while lineStart > 0 && buffer[lineStart - 1] != 0x0A { lineStart -= 1 }
            // (the tail of an overlong line is no line)
            if lineStart == 0 && !bufferStartsLine { return }
            var e = lineEnd
            if e > lineStart && buffer[e - 1] == 0x0D { e -= 1 }
            guard body(number, UnsafeRawBufferPointer(rebasing: buffer[lineStart..<e])), lineStart > 0 else { return }
            lineEnd = lineStart - 1
            number -= 1
        }
    }

    /// The end of the buffer's last complete line (looked for once per fill: the skimmer asks
    /// after every line it stops at).
    private func lastCompleteEnd() -> Int {
        if completeEnd < 0 {
            var stop = end
            while stop > 0 && buffer[stop - 1] != 0x0A { stop -= 1 }
            completeEnd = stop
        }
        return completeEnd
    }

    /// NUL bytes of the line being read passed over (`collapseNULs`), not yet said.
    private var collapsedNULs = 0

    /// Passes over the run of NUL bytes at `from` (up to `to`) but its last one; the new start.
    private func collapseNULs(_ from: Int, _ to: Int) -> Int {
        var k = from
        while k < to && buffer[k] == 0 { k += 1 }
        let keep = max(from, k - 1)
        collapsedNULs += keep - from
        return keep
    }

    /// The NUL bytes passed over before the line just read, which begins with the run's last
    /// one (0 when none were); taken once.
    public func takeCollapsedNULs() -> Int {
        defer { collapsedNULs = 0 }
        return collapsedNULs
    }

    private func tooLong(length: UInt64) {
        problems.append(InputError(path: path, line: lineNumber,
                                   "line of \(length) bytes is longer than the \(maxLineLength)-byte limit, skipped"))
    }

    /// Exactly `count` raw bytes (journal export binary fields), or nil if the stream ends first.
    public func readExact(_ count: Int) throws -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(min(count, 1 << 20))
        while out.count < count {
            if start == end { guard try fill() else { return nil } }
            let n = min(count - out.count, end - start)
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start..<(start + n)]))
            start += n
        }
        return out
    }

    /// Reads `count` bytes, keeping the first `keep` of them (the rest is passed over, never
    /// buffered): nil when the input ends first. Also says how many newlines were in them.
    public func readExact(_ count: Int, keeping keep: Int) throws -> (kept: [UInt8], newlines: Int)? {
        var out: [UInt8] = []
        out.reserveCapacity(min(count, keep, 1 << 20))
        var done = 0
        var newlines = 0
        while done < count {
            if start == end { guard try fill() else { return nil } }
            let n = min(count - done, end - start)
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[start..<(start + n)])
            if out.count < keep { out.append(contentsOf: chunk.prefix(keep - out.count)) }
            for b in chunk where b == 0x0A { newlines += 1 }
            done += n
            start += n
        }
        return (out, newlines)
    }

    /// Counts newlines in raw data consumed by `readExact`, so line numbers stay right.
    public func advanceLineCount(by n: Int) { lineNumber += n }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes kept in memory up to `limit`, then in an unlinked temporary file: the sessions of a
/// report written as they end, until the head (which counts them) can be written before them.
/// The buffer never grows past `limit`: bytes that would take it past are written out first
/// (it used to be appended to, then written: its room doubled at the first write and stayed
/// so, 4 MB for a JSON report's two).
public final class ByteSpill {
    private var buffer: [UInt8] = []
    private var file: UnsafeMutablePointer<FILE>?
    public private(set) var failed = false
    public let limit: Int
    /// The room the buffer holds (tests: it never passes `limit` while writes succeed).
    public var heldCapacity: Int { buffer.capacity }

    /// (A quarter of a megabyte: a JSON report holds two, and what is held is written in
    /// writes this big, few enough.)
    public init(limit: Int = 1 << 18) {
        self.limit = max(1, limit)
        buffer.reserveCapacity(self.limit)
    }
    deinit { if let file { fclose(file) } }

    public func append(_ b: [UInt8]) {
        b.withUnsafeBytes { append($0) }
    }

    public func append(_ b: OutputBuffer) {
        b.withUnsafeBytes { append(UnsafeRawBufferPointer($0)) }
    }

    public func append(_ b: UnsafeRawBufferPointer) {
        if buffer.count + b.count > limit, !failed {
            // What is held goes first; bytes as many as the buffer holds go straight after it.
            if !buffer.isEmpty, write(buffer.withUnsafeBytes { $0 }) { buffer.removeAll(keepingCapacity: true) }
            if b.count >= limit, !failed, write(b) { return }
        }
        buffer.append(contentsOf: b)
    }

    /// Appends everything appended to `other` (false when reading it back failed).
    public func append(_ other: ByteSpill) -> Bool {
        other.forEachChunk {
            append($0)
            return true
        }
    }

    /// Writes `b` to the file (made at the first write); false, and kept in memory from then
    /// on, when that fails.
    private func write(_ b: UnsafeRawBufferPointer) -> Bool {
        if file == nil { file = tmpfile() }
        guard let file, Self.writeAll(b, to: file) else {
            failed = true
            return false
        }
        return true
    }

    /// Forgets everything appended.
    public func reset() {
        buffer.removeAll(keepingCapacity: true)
        if let file { fclose(file) }
        file = nil
        failed = false
    }

    /// Copies everything appended to `out`.
    public func copy(to out: UnsafeMutablePointer<FILE>) -> Bool {
        forEachChunk { Self.writeAll($0, to: out) }
    }

    /// Reads back what was appended, a given number of bytes at a time, in order (the pieces
    /// of a report chosen only at its end: `StreamedMarkdown`).
    public final class Reader {
        private let spill: ByteSpill
        private var inFile: Bool
        private var offset = 0

        public init(_ spill: ByteSpill) {
            self.spill = spill
            if let file = spill.file, fflush(file) == 0 {
                rewind(file)
                inFile = true
            } else {
                inFile = false
            }
        }

        /// The next `n` bytes; nil when they cannot be read.
        public func next(_ n: Int) -> [UInt8]? {
            var out = [UInt8](repeating: 0, count: n)
            var done = 0
            if inFile, let file = spill.file {
                done = out.withUnsafeMutableBytes { fread($0.baseAddress, 1, n, file) }
                if done < n {
                    if ferror(file) != 0 { return nil }
                    inFile = false
                }
            }
            guard done < n else { return out }
            let rest = n - done
            guard offset + rest <= spill.buffer.count else { return nil }
            out.withUnsafeMutableBytes { o in
                spill.buffer.withUnsafeBytes { b in
                    (o.baseAddress! + done).copyMemory(from: b.baseAddress! + offset, byteCount: rest)
                }
            }
            offset += rest
            return out
        }
    }

    /// Hands everything appended to `body`, `limit` bytes at a time, in order; false when a
    /// read failed or `body` said so.
    private func forEachChunk(_ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        if let file {
            guard fflush(file) == 0 else { return false }
            rewind(file)
            var chunk = [UInt8](repeating: 0, count: limit)
            while true {
                let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
                if n == 0 { break }
                guard chunk.withUnsafeBytes({ body(UnsafeRawBufferPointer(rebasing: $0[..<n])) }) else { return false }
            }
            if ferror(file) != 0 { return false }
        }
        return buffer.withUnsafeBytes { body($0) }
    }

    /// Writes all of `b` to `f` (false when it could not): the one way report bytes go to a stream
    /// (`OutputWriter.writeAll` too).
    public static func writeAll(_ b: UnsafeRawBufferPointer, to f: UnsafeMutablePointer<FILE>) -> Bool {
        b.isEmpty || fwrite(b.baseAddress, 1, b.count, f) == b.count
    }
}

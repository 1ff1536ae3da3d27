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
    /// The bytes the file holds: everything written before a write that failed. Reads stop
    /// there, so that a write cut short (a full disk) repeats nothing that is also in memory.
    private var inFile = 0
    /// Tests: how many bytes the file can take in all, as a full disk would (nil: no limit).
    let diskRoom: Int?
    public private(set) var failed = false
    public let limit: Int
    /// The room the buffer holds (tests: it never passes `limit` while writes succeed).
    public var heldCapacity: Int { buffer.capacity }

    /// (A quarter of a megabyte: a JSON report holds two, and what is held is written in
    /// writes this big, few enough.)
    public convenience init(limit: Int = 1 << 18) { self.init(limit: limit, diskRoom: nil) }

    init(limit: Int, diskRoom: Int?) {
        self.limit = max(1, limit)
        self.diskRoom = diskRoom
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

    /// Writes `b` to the file (made at the first write, unbuffered: every write is a buffer's
    /// worth); false, and kept in memory from then on, when that fails. A write cut short
    /// leaves part of `b` in the file while all of it stays in memory: the file is cut back
    /// to what it held (and reads stop there whatever the cut did).
    private func write(_ b: UnsafeRawBufferPointer) -> Bool {
        if file == nil, let f = tmpfile() {
            setvbuf(f, nil, _IONBF, 0)
            file = f
        }
        guard let file else {
            failed = true
            return false
        }
        let ok: Bool
        if let diskRoom, inFile + b.count > diskRoom {
            _ = Self.writeAll(UnsafeRawBufferPointer(rebasing: b.prefix(max(0, diskRoom - inFile))), to: file)
            ok = false
        } else {
            ok = Self.writeAll(b, to: file)
        }
        if ok {
            inFile += b.count
            return true
        }
        clearerr(file)
        _ = ftruncate(fileno(file), off_t(inFile))
        failed = true
        return false
    }

    /// Forgets everything appended.
    public func reset() {
        buffer.removeAll(keepingCapacity: true)
        if let file { fclose(file) }
        file = nil
        inFile = 0
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
        /// The file's bytes not read yet.
        private var leftInFile: Int
        private var offset = 0

        public init(_ spill: ByteSpill) {
            self.spill = spill
            if let file = spill.file, fflush(file) == 0 {
                rewind(file)
                leftInFile = spill.inFile
            } else {
                leftInFile = 0
            }
        }

        /// The next `n` bytes; nil when they cannot be read.
        public func next(_ n: Int) -> [UInt8]? {
            var out = [UInt8](repeating: 0, count: n)
            var done = 0
            if leftInFile > 0, let file = spill.file {
                let want = min(n, leftInFile)
                done = out.withUnsafeMutableBytes { fread($0.baseAddress, 1, want, file) }
                // (the file ends before what was written to it: it was cut or lost)
                if done < want { return nil }
                leftInFile -= done
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
            var left = inFile
            while left > 0 {
                let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, min($0.count, left), file) }
                // (the file ends before what was written to it: it was cut or lost)
                if n == 0 { return false }
                left -= n
                guard chunk.withUnsafeBytes({ body(UnsafeRawBufferPointer(rebasing: $0[..<n])) }) else { return false }
            }
        }
        return buffer.withUnsafeBytes { body($0) }
    }

    /// Writes all of `b` to `f` (false when it could not): the one way report bytes go to a stream
    /// (`OutputWriter.writeAll` too).
    public static func writeAll(_ b: UnsafeRawBufferPointer, to f: UnsafeMutablePointer<FILE>) -> Bool {
        b.isEmpty || fwrite(b.baseAddress, 1, b.count, f) == b.count
    }
}

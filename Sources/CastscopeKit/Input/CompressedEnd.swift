/// The bytes of an xz or zstd file up to the end of its last whole stream (xz) or frame (zstd),
/// handed to libarchive's filter; what follows that is neither padding nor another stream or
/// frame is not handed on, and is said (`trailing`) once everything before it was read.
///
/// libarchive's filters fail on such bytes (a log appended to a `.xz`, a download's HTML error
/// page after a `.zst`) and drop the output block they were decompressing: a small file's
/// every line, a big one's last block, with "Unknown frame descriptor" or "cut short". `xz -d`
/// and `zstd -d` write everything and then complain. Only the structure's boundaries are read
/// (zstd's frame and block headers give their sizes; an xz stream's end is its footer, found
/// by its magic `YZ` at a 4-byte boundary, checked by its CRC32 and its flags being the
/// header's): anything else, damage inside a stream among it, is left to the filter.
final class CompressedEndSource: ByteSource {
    private let inner: ByteSource
    private let path: String
    private let kind: Compression
    /// Bytes read from `inner` and not yet handed on: `buffer[head...]`, at `handed` in the file.
    private var buffer: [UInt8] = []
    private var head = 0
    private var handed: UInt64 = 0
    private var innerEnded = false
    /// Bytes before this offset are inside a stream or frame: handed on as they come.
    private var clearUntil: UInt64 = 0
    /// Nothing more is handed on: the data ended (cleanly, or with `trailing`).
    private var stopped = false
    /// The structure is not one this reads (damage, a cut): everything is handed on as it comes.
    private var passAll = false
    private(set) var trailing: InputError?

    private enum State {
        case streamStart
        /// Inside an xz stream begun at `start` with header flags `flags`; positions before
        /// `scanned` were looked at for its footer.
        case xzStream(start: UInt64, flags: (UInt8, UInt8), scanned: UInt64)
        case afterXzStream
        case zstdBlock(checksum: Bool)
    }
    private var state = State.streamStart

    init(_ inner: ByteSource, path: String, kind: Compression) {
        self.inner = inner
        self.path = path
        self.kind = kind
    }

    var consumedOffset: UInt64 { handed }

    private var available: Int { buffer.count - head }

    /// At least `n` bytes past `head` when the file has them.
    private func ensure(_ n: Int) throws {
        while available < n && !innerEnded {
            if head > 0 && head >= buffer.count / 2 {
                buffer.removeFirst(head)
                head = 0
            }
            var chunk = [UInt8](repeating: 0, count: max(64 * 1024, n))
            let got = try chunk.withUnsafeMutableBytes { try inner.read(into: $0) }
            if got == 0 { innerEnded = true } else { buffer.append(contentsOf: chunk[..<got]) }
        }
    }

    private func byte(_ k: Int) -> UInt8 { buffer[head + k] }

    private func le32(_ k: Int) -> UInt32 {
        UInt32(byte(k)) | UInt32(byte(k + 1)) << 8 | UInt32(byte(k + 2)) << 16 | UInt32(byte(k + 3)) << 24
    }

    func read(into out: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !stopped, out.count > 0 else { return 0 }
        while true {
            if passAll || handed < clearUntil {
                try ensure(1)
                if available == 0 { return 0 }
                var n = min(available, out.count)
                if !passAll { n = min(n, Int(clearUntil - handed)) }
                buffer.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress! + head, byteCount: n) }
                head += n
                handed += UInt64(n)
                return n
            }
            try step()
            if stopped { return 0 }
        }
    }

    /// At a boundary (`handed == clearUntil`): reads the structure there.
    private func step() throws {
        switch state {
        case .streamStart:
            try ensure(12)
            if available == 0 && handed > 0 { stopped = true; return }
            if kind == .xz {
                let magic: [UInt8] = [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]
                guard available >= 12, (0..<6).allSatisfy({ byte($0) == magic[$0] }) else { return notAStart() }
                state = .xzStream(start: handed, flags: (byte(6), byte(7)), scanned: handed + 12)
                clearUntil = handed + 12
                return
            }
            guard available >= 4 else { return notAStart() }
            let magic = le32(0)
            if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
                // A skippable frame: its size, then that many bytes.
                try ensure(8)
                guard available >= 8 else { passAll = true; return }
                clearUntil = handed + 8 + UInt64(le32(4))
                return
            }
            guard magic == 0xFD2F_B528 else { return notAStart() }
            try ensure(5)
            guard available >= 5 else { passAll = true; return }
            let descriptor = byte(4)
            guard descriptor & 0x08 == 0 else { passAll = true; return }
            let single = descriptor & 0x20 != 0
            let fcs = Int(descriptor >> 6)
            let size = 5 + (single ? 0 : 1) + [0, 1, 2, 4][Int(descriptor & 3)] + (fcs == 0 ? (single ? 1 : 0) : [0, 2, 4, 8][fcs])
            clearUntil = handed + UInt64(size)
            state = .zstdBlock(checksum: descriptor & 0x04 != 0)
        case .zstdBlock(let checksum):
            try ensure(3)
            guard available >= 3 else { passAll = true; return }
            let header = Int(byte(0)) | Int(byte(1)) << 8 | Int(byte(2)) << 16
            let type = (header >> 1) & 3
            guard type != 3 else { passAll = true; return }
            clearUntil = handed + 3 + UInt64(type == 1 ? 1 : header >> 3)
            if header & 1 != 0 {
                if checksum { clearUntil += 4 }
                state = .streamStart
            }
        case .xzStream(let start, let flags, var scanned):
            try ensure(64 * 1024)
            let end = handed + UInt64(available)
            // Footer candidates: `YZ` at a stream offset of 2 mod 4, the footer's 10 bytes
            // before it still here (bytes are handed on only up to 12 before what was read).
            var p = max(scanned, handed + 10)
            p += (start + 2 &- p) & 3
            while p + 1 < end {
                let k = Int(p - handed)
                if byte(k) == 0x59, byte(k + 1) == 0x5A, byte(k - 2) == flags.0, byte(k - 1) == flags.1,
                    crc32Of(k - 6, 6) == le32(k - 10)
                {
                    clearUntil = p + 2
                    state = .afterXzStream
                    return
                }
                p += 4
            }
            scanned = p
            state = .xzStream(start: start, flags: flags, scanned: scanned)
            if innerEnded {
                // No footer: cut short or damaged; the filter says which.
                passAll = true
                return
            }
            clearUntil = max(handed, end > 12 ? end - 12 : 0)
        case .afterXzStream:
            // Stream padding (zeros), then another stream or the end.
            try ensure(1)
            if available == 0 { stopped = true; return }
            var zeros = 0
            while zeros < available && byte(zeros) == 0 { zeros += 1 }
            if zeros > 0 {
                clearUntil = handed + UInt64(zeros)
                return
            }
            state = .streamStart
        }
    }

    /// No stream or frame starts where one should: the first is left to the filter (it says
    /// what the file is), a later one is trailing bytes.
    private func notAStart() {
        if handed == 0 {
            passAll = true
            return
        }
        stopped = true
        trailing = InputError(path: path, offset: handed,
                              "what follows the \(kind.rawValue) data is not \(kind.rawValue) (trailing garbage?): passed over; everything before it was read")
    }

    /// CRC-32 (the zlib and xz polynomial) of `count` bytes at `k` past `head`.
    private func crc32Of(_ k: Int, _ count: Int) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for i in 0..<count {
            c ^= UInt32(byte(k + i))
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0xEDB8_8320 : c >> 1 }
        }
        return ~c
    }
}

/// The decompressed bytes, then `end`'s trailing bytes said once, after the last of them.
final class TrailingSaidSource: ByteSource {
    private let inner: ByteSource
    private let end: CompressedEndSource
    private var said = false

    init(_ inner: ByteSource, end: CompressedEndSource) {
        self.inner = inner
        self.end = end
    }

    var consumedOffset: UInt64 { inner.consumedOffset }

    /// The last byte handed on (a line break before any).
    private var lastByte: UInt8 = 0x0A

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try inner.read(into: buffer)
        if n > 0 {
            lastByte = buffer[n - 1]
            return n
        }
        guard !said, let e = end.trailing else { return 0 }
        // (a last line without its line break is ended with one first: thrown at once, the
        // error lost it, which the data without the trailing bytes reads)
        if lastByte != 0x0A, buffer.count > 0 {
            lastByte = 0x0A
            buffer[0] = 0x0A
            return 1
        }
        said = true
        throw e
    }
}

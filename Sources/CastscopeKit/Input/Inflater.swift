import CCastscopeZlib

/// Streams a gzip file (multi-member) through zlib, as a `ByteSource` of the inflated bytes.
///
/// The z_stream lives in its own allocation: zlib keeps a back-pointer to it and rejects a
/// moved stream. A stream that ends without its trailer is reported as truncated, with the
/// compressed byte offset where input ran out; trailing zero padding is accepted.
public final class GzipSource: ByteSource {
    private let input: ByteSource
    private let path: String
    private let stream: UnsafeMutablePointer<z_stream>
    private var inBuf: UnsafeMutableRawBufferPointer
    private var atMemberEnd = false
    private var inputEOF = false
    private var finished = false
    private var producedAny = false
    /// Damage met after some output of a read: thrown at the next.
    private var damage: InputError?

    public init(input: ByteSource, path: String) throws {
        self.input = input
        self.path = path
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        inBuf = .allocate(byteCount: 256 * 1024, alignment: 16)
        let rc = ccastscope_inflateInit2(stream, 16 + MAX_WBITS)
        guard rc == Z_OK else {
            stream.deallocate()
            inBuf.deallocate()
            throw InputError(path: path, "gzip: inflateInit2 failed (zlib \(rc))")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        inBuf.deallocate()
    }

    /// The input's offset less what zlib has not taken yet. (Saturating: a gzip inside a gzip
    /// reads through a read-ahead whose offset is the outer file's, while what zlib holds is of
    /// the outer stream's decompressed bytes; a repetitive inner log trapped there, and took
    /// every other input of the run with it.)
    public var consumedOffset: UInt64 {
        let at = input.consumedOffset, held = UInt64(stream.pointee.avail_in)
        return at >= held ? at - held : 0
    }

    private func refill() throws {
        let n = try input.read(into: inBuf)
        if n == 0 { inputEOF = true }
        stream.pointee.next_in = inBuf.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(n)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let damage { throw damage }
        guard !finished, let outBase = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            if stream.pointee.avail_in == 0 && !inputEOF { try refill() }
            if atMemberEnd {
                // Another member, zero padding, or the end.
                if stream.pointee.avail_in == 0 && inputEOF { finished = true; return 0 }
                if stream.pointee.next_in.pointee == 0 {
                    do {
                        try skipZeroPadding()
                    } catch let e as InputError {
                        finished = true
                        return try endWithTrailing(e, outBase)
                    }
                    finished = true
                    return 0
                }
                // Bytes that cannot begin another member (`1f 8b`): what follows the gzip data
                // (a log appended to a `.gz`, a download's HTML error page), as `gzip -d` says
                // ("trailing garbage ignored"). It was "incorrect header check (zlib -3)".
                if stream.pointee.next_in.pointee != 0x1F || (stream.pointee.avail_in > 1 && stream.pointee.next_in[1] != 0x8B) {
                    finished = true
                    return try endWithTrailing(Self.trailing(path: path, at: consumedOffset), outBase)
                }
                inflateReset(stream)
                atMemberEnd = false
            }
            if stream.pointee.avail_in == 0 && inputEOF {
                throw InputError(path: path, offset: consumedOffset,
                                 "gzip data cut short: the file ends inside it: what was decompressed before the cut is read")
            }
            stream.pointee.next_out = outBase.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(buffer.count)
            let rc = inflate(stream, Z_NO_FLUSH)
            let produced = buffer.count - Int(stream.pointee.avail_out)
            switch rc {
            case Z_OK, Z_BUF_ERROR:
                break
            case Z_STREAM_END:
                atMemberEnd = true
            default:
                let msg = stream.pointee.msg.map { String(cString: $0) } ?? "inflate failed"
                let error = InputError(path: path, offset: consumedOffset, "gzip: \(msg) (zlib \(rc))")
                // What this call inflated before the damage (a bad CRC is found after the whole
                // member's output) is handed out first; the error comes at the next read.
                if produced > 0 {
                    damage = error
                    producedAny = true
                    return produced
                }
                throw error
            }
            if produced > 0 {
                producedAny = true
                lastByte = outBase.load(fromByteOffset: produced - 1, as: UInt8.self)
                return produced
            }
        }
    }

    /// The data's last byte handed on (a line break before any).
    private var lastByte: UInt8 = 0x0A

    /// Trailing bytes found after data whose last line has no line break: that line is ended
    /// with one (the error thrown at the next read, so that the line is read, as it is without
    /// the trailing bytes); else the error now.
    private func endWithTrailing(_ e: InputError, _ out: UnsafeMutableRawPointer) throws -> Int {
        guard lastByte != 0x0A else { throw e }
        lastByte = 0x0A
        damage = e
        out.storeBytes(of: 0x0A, as: UInt8.self)
        return 1
    }

    private func skipZeroPadding() throws {
        while true {
            let p = stream.pointee.next_in!
            for i in 0..<Int(stream.pointee.avail_in) where p[i] != 0 {
                throw Self.trailing(path: path, at: consumedOffset + UInt64(i))
            }
            stream.pointee.avail_in = 0
            if inputEOF { return }
            try refill()
            if inputEOF && stream.pointee.avail_in == 0 { return }
        }
    }

    /// Bytes after the last member that are no member (not zeros either): said, not read.
    static func trailing(path: String, at offset: UInt64) -> InputError {
        InputError(path: path, offset: offset,
                   "what follows the gzip data is not gzip (trailing garbage?): passed over; everything before it was read")
    }
}

/// Text saved as UTF-16: what Windows PowerShell 5.1 writes for `idevicesyslog > syslog.txt`
/// or `Out-File` (little-endian, with a byte-order mark), Notepad's "Unicode", a log copied out
/// of some Windows tools. Read as UTF-8, streaming, across reads: a line stays a line (line
/// numbers are the file's), a surrogate pair becomes its one character and an unpaired
/// surrogate U+FFFD. Without this the file's every other byte is a NUL and it was refused as
/// binary. The result is sniffed again (colours, compose prefixes, Xcode metadata), as an
/// inflated file is.
public final class UTF16Source: ByteSource {
    public enum Order: Sendable { case littleEndian, bigEndian }

    private let source: ByteSource
    private let order: Order
    /// UTF-16 bytes read and not yet decoded (an odd byte, a high surrogate, a whole read).
    private var pending: [UInt8] = []
    private var start = 0
    private var atStart = true
    private var ended = false

    public init(_ source: ByteSource, _ order: Order) {
        self.source = source
        self.order = order
    }

    public var consumedOffset: UInt64 { source.consumedOffset }
    public var utf16Origin: UTF16Source? { self }
    /// The file began with a byte-order mark (2 bytes the decoded text does not hold).
    public private(set) var droppedBOM = false

    /// The byte in the UTF-16 file of the byte at `offset` of its decoded text (`text`, all of
    /// it or a prefix reaching `offset`): its UTF-16 code units before it, 2 bytes each, after
    /// the byte-order mark.
    public func fileByte(ofDecoded offset: Int, in text: String) -> Int {
        let utf8 = text.utf8
        let at = utf8.index(utf8.startIndex, offsetBy: min(max(0, offset), utf8.count))
        return (droppedBOM ? 2 : 0) + 2 * text.utf16.distance(from: text.utf16.startIndex, to: at)
    }

    /// The byte order of a file's first bytes when they are UTF-16 text: a byte-order mark
    /// (`FF FE`, `FE FF`; not UTF-32's `FF FE 00 00`), or, without one, text whose code units
    /// are nearly all ASCII: a NUL in every other byte and printable text in the others.
    public static func detect(_ head: [UInt8]) -> Order? {
        if head.count >= 2 {
            if head[0] == 0xFF && head[1] == 0xFE { return head.count >= 4 && head[2] == 0 && head[3] == 0 ? nil : .littleEndian }
            if head[0] == 0xFE && head[1] == 0xFF { return .bigEndian }
        }
        let n = min(head.count, 1024) & ~1
        guard n >= 32 else { return nil }
        func text(_ b: UInt8) -> Bool { (b >= 0x20 && b < 0x7F) || b == 0x09 || b == 0x0A || b == 0x0D }
        var lowText = 0, highText = 0, lowZero = 0, highZero = 0
        for i in stride(from: 0, to: n, by: 2) {
            if text(head[i]) { lowText += 1 } else if head[i] == 0 { lowZero += 1 }
            if text(head[i + 1]) { highText += 1 } else if head[i + 1] == 0 { highZero += 1 }
        }
        let units = n / 2
        if highZero * 20 >= units * 19 && lowText * 20 >= units * 19 && lowZero == 0 { return .littleEndian }
        if lowZero * 20 >= units * 19 && highText * 20 >= units * 19 && highZero == 0 { return .bigEndian }
        return nil
    }

    /// `head` as this source hands it out (its last character may be cut).
    public static func decoded(_ head: [UInt8], _ order: Order) -> [UInt8] { drained(UTF16Source(MemorySource(head), order)) }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 0 else { return 0 }
        if readyStart == ready.count {
            readyStart = 0
            ready = []
            try fill()
        }
        return handOut(ready, from: &readyStart, into: buffer)
    }

    /// Decoded bytes not yet handed out.
    private var ready: [UInt8] = []
    private var readyStart = 0
    static let chunk = 1 << 16

    /// Decodes the next characters into `ready` (empty at the end of the input).
    private func fill() throws {
        let room = Self.chunk * 3 / 2 + 8
        while ready.isEmpty {
            if pending.count - start < 4 && !ended { try refill(wanting: Self.chunk) }
            var used = 0
            ready = [UInt8](unsafeUninitializedCapacity: room) { out, count in
                (count, used) = decode(into: out.baseAddress!, room: room)
            }
            start += used
            if ready.isEmpty && ended {
                // A lone byte at the end, or a high surrogate with nothing after it.
                if pending.count - start > 0 {
                    start = pending.count
                    ready = [0xEF, 0xBF, 0xBD]
                }
                return
            }
        }
    }

    /// Reads up to `count` more bytes into `pending` (through one buffer kept for it).
    private func refill(wanting count: Int) throws {
        pending.removeFirst(start)
        start = 0
        if scratch.count < count { scratch = [UInt8](repeating: 0, count: count) }
        let n = try scratch.withUnsafeMutableBytes { try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<count])) }
        if n == 0 { ended = true }
        pending += scratch[0..<n]
    }

    private var scratch: [UInt8] = []

    /// Decodes whole characters from `pending[start...]` into `out` (at most `room` bytes);
    /// returns the bytes written and the UTF-16 bytes used.
    private func decode(into out: UnsafeMutablePointer<UInt8>, room: Int) -> (Int, Int) {
        pending.withUnsafeBufferPointer { p in
            var i = start
            var w = 0
            let end = p.count
            @inline(__always) func unit(_ k: Int) -> UInt32 {
                order == .littleEndian ? UInt32(p[k]) | UInt32(p[k + 1]) << 8 : UInt32(p[k]) << 8 | UInt32(p[k + 1])
            }
            while i + 2 <= end && w + 4 <= room {
                var c = unit(i)
                var size = 2
                if c >= 0xD800 && c <= 0xDBFF {
                    if i + 4 > end && !ended { break }  // its low half is in the next read
                    if i + 4 <= end, case let low = unit(i + 2), low >= 0xDC00 && low <= 0xDFFF {
                        c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00)
                        size = 4
                    } else {
                        c = 0xFFFD
                    }
                } else if c >= 0xDC00 && c <= 0xDFFF {
                    c = 0xFFFD
                }
                i += size
                if atStart {
                    atStart = false
                    if c == 0xFEFF { droppedBOM = true; continue }  // the byte-order mark
                }
                if c < 0x80 {
                    out[w] = UInt8(c); w += 1
                } else if c < 0x800 {
                    out[w] = UInt8(0xC0 | c >> 6); out[w + 1] = UInt8(0x80 | c & 0x3F); w += 2
                } else if c < 0x10000 {
                    out[w] = UInt8(0xE0 | c >> 12); out[w + 1] = UInt8(0x80 | c >> 6 & 0x3F); out[w + 2] = UInt8(0x80 | c & 0x3F); w += 3
                } else {
                    out[w] = UInt8(0xF0 | c >> 18); out[w + 1] = UInt8(0x80 | c >> 12 & 0x3F)
                    out[w + 2] = UInt8(0x80 | c >> 6 & 0x3F); out[w + 3] = UInt8(0x80 | c & 0x3F); w += 4
                }
            }
            return (w, i - start)
        }
    }
}

/// A UTF-8 byte-order mark (`EF BB BF`) before a file's first line (Notepad's "UTF-8 with
/// BOM", PowerShell 7's `utf8BOM`): taken off, or the first line (an ndjson object, a header)
/// was not a record. Such a file is read by one reader, its line numbers kept.
public final class UTF8MarkSource: ByteSource {
    private let source: ByteSource
    private var toDrop = 3

    public init(_ source: ByteSource) { self.source = source }

    public var consumedOffset: UInt64 { source.consumedOffset }

    public static func detect(_ head: [UInt8]) -> Bool { head.count >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while toDrop > 0 {
            let n = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer.prefix(toDrop)))
            if n == 0 { return 0 }
            toDrop -= n
        }
        return try source.read(into: buffer)
    }
}

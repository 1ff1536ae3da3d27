#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fast 128-bit content digest: four independent 64-bit multiply-rotate lanes over 32-byte
/// blocks (independent, so the multiplies overlap: the read from the page cache is the limit),
/// finished with a murmur-style avalanche. Not cryptographic: it names bundles and records so
/// that the same input always gets the same id, for ClickHouse's ReplacingMergeTree keys. Feed
/// bytes in any split: the result depends on the bytes only.
public struct Digest128: Sendable {
    private var l0: UInt64 = 0x9E37_79B9_7F4A_7C15
    private var l1: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private var l2: UInt64 = 0x1656_67B1_9E37_79F9
    private var l3: UInt64 = 0x85EB_CA77_C2B2_AE63
    private var length: UInt64 = 0
    /// Bytes not yet forming a whole 32-byte block.
    private var pending: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var pendingCount = 0

    public init() {}

    @inline(__always) static func lane(_ x: UInt64, _ w: UInt64) -> UInt64 {
        let y = (x ^ w) &* 0x87C3_7B91_1142_53D5
        return ((y << 31) | (y >> 33)) &* 0x4CF5_AD43_2745_937F
    }

    @inline(__always) private mutating func block(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64) {
        l0 = Self.lane(l0, a)
        l1 = Self.lane(l1, b)
        l2 = Self.lane(l2, c)
        l3 = Self.lane(l3, d)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var p = bytes.baseAddress else { return }
        var n = bytes.count
        length &+= UInt64(n)
        // Fill a partial block first.
        if pendingCount > 0 {
            let take = min(n, 32 - pendingCount)
            withUnsafeMutableBytes(of: &pending) { $0.baseAddress!.advanced(by: pendingCount).copyMemory(from: p, byteCount: take) }
            pendingCount += take
            p += take
            n -= take
            if pendingCount < 32 { return }
            block(UInt64(littleEndian: pending.0), UInt64(littleEndian: pending.1), UInt64(littleEndian: pending.2),
                  UInt64(littleEndian: pending.3))
            pendingCount = 0
        }
        var a = l0, b = l1, c = l2, d = l3
        while n >= 32 {
            a = Self.lane(a, UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)))
            b = Self.lane(b, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            c = Self.lane(c, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
            d = Self.lane(d, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
            p += 32
            n -= 32
        }
        l0 = a; l1 = b; l2 = c; l3 = d
        if n > 0 {
            pending = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &pending) { $0.baseAddress!.copyMemory(from: p, byteCount: n) }
            pendingCount = n
        }
    }

    public mutating func update(_ s: String) {
        var s = s
        s.withUTF8 { update(UnsafeRawBufferPointer($0)) }
        // A separator, so that ("ab", "c") and ("a", "bc") differ.
        update(field: 0x1F)
    }

    public mutating func update(_ v: Int64) {
        withUnsafeBytes(of: v.littleEndian) { update($0) }
    }

    private mutating func update(field byte: UInt8) {
        withUnsafeBytes(of: byte) { update($0) }
    }

    /// The same as `update(String(v))`, without making the `String`.
    public mutating func update(decimal v: Int) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: a sign and 20 digits
        var n = v.magnitude
        var k = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[23 - k] = 0x30 + UInt8(n % 10)
                n /= 10
                k += 1
            } while n > 0
            if v < 0 { d[23 - k] = UInt8(ascii: "-"); k += 1 }
            update(UnsafeRawBufferPointer(rebasing: d[(24 - k)...]))
        }
        update(field: 0x1F)
    }

    @inline(__always) static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        z = (z ^ (z >> 33)) &* 0xC4CE_B9FE_1A85_EC53
        return z ^ (z >> 33)
    }

    /// 32 lowercase hex digits.
    public func hex() -> String {
        var b = OutputBuffer(capacity: 32)
        hex(into: &b)
        return b.string
    }

    /// The 32 hex digits appended to `out`.
    public func hex(into out: inout OutputBuffer) {
        let (x, y) = final()
        var digits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { d in
            for k in 0..<16 {
                d[k] = Self.hexDigits[Int((x >> (60 - 4 * UInt64(k))) & 0xF)]
                d[16 + k] = Self.hexDigits[Int((y >> (60 - 4 * UInt64(k))) & 0xF)]
            }
            out.append(UnsafeRawBufferPointer(d))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    func final() -> (UInt64, UInt64) {
        var d = self
        if d.pendingCount > 0 {
            // The partial block, zero-padded (its length is in `length`).
            var rest = d.pending
            withUnsafeMutableBytes(of: &rest) { r in for k in d.pendingCount..<32 { r[k] = 0 } }
            d.block(UInt64(littleEndian: rest.0), UInt64(littleEndian: rest.1), UInt64(littleEndian: rest.2),
                    UInt64(littleEndian: rest.3))
        }
        let x = Self.mix(d.l0 ^ Self.mix(d.l2 ^ d.length))
        let y = Self.mix(d.l1 ^ Self.mix(d.l3 ^ (d.length << 1)) ^ x)
        return (x, y)
    }

    /// The digest of a few strings (ids built from parts).
    public static func of(_ parts: String...) -> String { digest(parts).hex() }

    public static func digest(_ parts: String...) -> Digest128 { digest(parts) }

    static func digest(_ parts: [String]) -> Digest128 {
        var d = Digest128()
        for p in parts { d.update(p) }
        return d
    }
}

/// The content digest of what `analyze` read: every regular file under the given paths, in
/// sorted order, with its name relative to the argument it was found under (so the same bundle
/// unpacked elsewhere gets the same id). Standard input cannot be read twice: its digest comes
/// from the recognized lines instead (`fallback`).
public enum BundleDigest {
    public static func of(paths: [String], fallback: () -> String) -> String {
        var d = Digest128()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var sawStdin = false
        for path in paths.sorted() {
            if path == "-" { sawStdin = true; continue }
            let base = path.split(separator: "/").last.map(String.init) ?? path
            walk(path, name: base, into: &d, buffer: &buffer)
        }
        if sawStdin { d.update("<stdin>"); d.update(fallback()) }
        return d.hex()
    }

    static func walk(_ path: String, name: String, into d: inout Digest128, buffer: inout [UInt8]) {
        var st = stat()
        guard stat(path, &st) == 0 else { d.update(name); d.update("<unreadable>"); return }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            guard let dir = opendir(path) else { return }
            var names: [String] = []
            while let ent = readdir(dir) {
                let n = withUnsafePointer(to: ent.pointee.d_name) {
                    $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
                }
                if n.hasPrefix(".") { continue }  // as the bundle walk: hidden files are not read
                names.append(n)
            }
            closedir(dir)
            for n in names.sorted() { walk(path + "/" + n, name: name + "/" + n, into: &d, buffer: &buffer) }
            return
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return }
        d.update(name)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { d.update("<unreadable>"); return }
        defer { close(fd) }
        // Mapped 8 MB at a time, not read: hashing needs no copy out of the page cache, and
        // each window is unmapped before the next (resident memory stays small).
        let size = Int(st.st_size)
        let window = 8 << 20
        var offset = 0
        while offset < size {
            let len = min(window, size - offset)
            guard let base = mmap(nil, len, PROT_READ, MAP_PRIVATE, fd, off_t(offset)), base != MAP_FAILED else { break }
            madvise(base, len, MADV_SEQUENTIAL)
            d.update(UnsafeRawBufferPointer(start: base, count: len))
            munmap(base, len)
            offset += len
        }
        // What could not be mapped (or grew meanwhile) is read.
        while true {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, $0.count, off_t(offset)) }
            if n <= 0 { break }
            buffer.withUnsafeBytes { d.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            offset += n
        }
        // (cut short while mapped, its pages past the new end read as zeros: `MappedFile`)
        var now = stat()
        if fstat(fd, &now) == 0, Int(now.st_size) < size { d.update("<shrank while read>") }
        d.update("<eof>")
    }
}

extension Digest128 {
    /// Takes a session's lines (standard input's bundle id is a digest of what was read): each
    /// event's source and message in list order, and connect lines folded as the session was
    /// built each as the event of its own it was, in its place (`Event.forEachLinePlace`),
    /// merged with the others (`LineOrder`: not a list of a storm's lines).
    public mutating func updateLines(of s: Session) {
        let events = s.events
        guard events.contains(where: \.foldsLines) else {
            for e in events {
                update(e.source.description)
                update(e.message)
            }
            return
        }
        // The other events in list order (each as a negative number, −1 − index), and each
        // folded run's lines (a line's number, its event in the key's last field).
        var cursors: [LineOrder.Cursor<Int>] = [{
            var i = 0
            return AnyIterator {
                while i < events.count, events[i].foldsLines { i += 1 }
                guard i < events.count else { return nil }
                defer { i += 1 }
                return (LineKey(a: events[i].time ?? Int64.min, b: Int64(events[i].order), c: 0, d: 0), -i - 1)
            }
        }]
        for i in events.indices where events[i].foldsLines {
            cursors.append {
                let places = events[i].linePlaces()
                return AnyIterator {
                    guard let (_, line, place) = places.next() else { return nil }
                    return (LineKey(a: place.time, b: Int64(place.order), c: Int64(place.k), d: Int64(i)), line)
                }
            }
        }
        // The messages of runs whose lines differ, a line at a time as the merge takes them.
        var messages: [Int: LineTexts.Cursor] = [:]
        for i in events.indices { if let t = events[i].repeats?.texts { messages[i] = events[i].lineMessages(t) } }
        LineOrder.merge(cursors) { key, n in
            if n < 0 {
                let e = events[-n - 1]
                update(e.source.description)
                update(e.message)
            } else {
                let e = events[Int(key.d)]
                update("\(e.sourcePath):\(n)")
                update(messages[Int(key.d)] != nil ? messages[Int(key.d)]!.nextMessage()! : e.message)
            }
        }
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fast 128-bit content digest (two independent 64-bit multiply-rotate lanes over 8-byte
/// words, finished with a murmur-style avalanche). Not cryptographic: it names bundles and
/// records so that the same input always gets the same id, for ClickHouse's
/// ReplacingMergeTree keys. Feed bytes in any split: the result depends on the bytes only.
public struct Digest128: Sendable {
    private var a: UInt64 = 0x9E37_79B9_7F4A_7C15
    private var b: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private var length: UInt64 = 0
    private var tail: UInt64 = 0
    private var tailCount = 0

    public init() {}

    @inline(__always) private mutating func word(_ w: UInt64) {
        a = ((a ^ w) &* 0x87C3_7B91_1142_53D5)
        a = (a << 31) | (a >> 33)
        b = ((b ^ (w &* 0x4CF5_AD43_2745_937F)) &* 0x52DC_E729_DA3E_D66B)
        b = (b << 27) | (b >> 37)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var p = bytes.baseAddress else { return }
        var n = bytes.count
        length &+= UInt64(n)
        while tailCount != 0 && n > 0 {
            tail |= UInt64(p.load(as: UInt8.self)) << (8 * UInt64(tailCount))
            tailCount += 1
            p += 1
            n -= 1
            if tailCount == 8 { word(tail); tail = 0; tailCount = 0 }
        }
        while n >= 8 {
            word(UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)))
            p += 8
            n -= 8
        }
        while n > 0 {
            tail |= UInt64(p.load(as: UInt8.self)) << (8 * UInt64(tailCount))
            tailCount += 1
            p += 1
            n -= 1
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

    @inline(__always) static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        z = (z ^ (z >> 33)) &* 0xC4CE_B9FE_1A85_EC53
        return z ^ (z >> 33)
    }

    /// 32 lowercase hex digits.
    public func hex() -> String {
        var d = self
        if d.tailCount > 0 || d.length == 0 { d.word(d.tail ^ (UInt64(d.tailCount) << 56)) }
        let x = Self.mix(d.a ^ d.length ^ (d.b >> 1))
        let y = Self.mix(d.b ^ (d.length << 1) ^ x)
        return Self.hex64(x) + Self.hex64(y)
    }

    static func hex64(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }

    /// The digest of a few strings (ids built from parts).
    public static func of(_ parts: String...) -> String {
        var d = Digest128()
        for p in parts { d.update(p) }
        return d.hex()
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
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n <= 0 { break }
            buffer.withUnsafeBytes { d.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
        d.update("<eof>")
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The vocabulary's literal prefilter: decides on bytes, before any parsing, whether a line can
/// hold a recognized message at all. Every rule's pattern has a literal anchor that must occur
/// in the message; each anchor is indexed by its rarest span of `stride` consecutive four-byte
/// windows (rare by a static estimate of byte frequency in logs), hashed into a 64 Kbit table.
/// A line is checked every `stride` bytes, four positions at a time, and only a hit is verified
/// with memcmp. Lines of noisy daemons pass through without being turned into records.
public final class Prefilter: @unchecked Sendable {
    private let bitmap: UnsafeMutablePointer<UInt64>
    /// For each hash of a four-byte window: the anchors indexed by it (anchor, window offset, window).
    private var buckets: [[(bytes: [UInt8], offset: Int, window: UInt32)]] = Array(repeating: [], count: 65536)
    public let anchors: [[UInt8]]
    /// False when some rule has no literal of four bytes to anchor on: then every line is parsed.
    public let isUseful: Bool

    @inline(__always) static func hash(_ w: UInt32) -> Int { Int((w &* 0x9E37_79B1) >> 16) }

    /// Windows are checked only every `stride` bytes: each anchor indexes `stride` consecutive
    /// windows (its rarest such span), so any occurrence puts one of them on a checked position.
    public let stride: Int

    public init(anchors: [[UInt8]]) {
        self.anchors = anchors
        bitmap = .allocate(capacity: 1024)
        bitmap.initialize(repeating: 0, count: 1024)
        isUseful = !anchors.isEmpty && anchors.allSatisfy { $0.count >= 4 }
        stride = max(1, min(4, (anchors.map(\.count).min() ?? 4) - 3))
        guard isUseful else { return }
        func score(_ a: [UInt8], _ k: Int) -> Int {
            Self.frequency(a[k]) * Self.frequency(a[k + 1]) * Self.frequency(a[k + 2]) * Self.frequency(a[k + 3])
        }
        for a in anchors {
            var best = 0
            var bestScore = Int.max
            for k in 0...(a.count - 3 - stride) {
                let s = (k..<(k + stride)).map { score(a, $0) }.max()!
                if s < bestScore { bestScore = s; best = k }
            }
            for k in best..<(best + stride) {
                let window = UInt32(a[k]) | UInt32(a[k + 1]) << 8 | UInt32(a[k + 2]) << 16 | UInt32(a[k + 3]) << 24
                let h = Self.hash(window)
                bitmap[h >> 6] |= 1 << UInt64(h & 63)
                buckets[h].append((a, k, window))
            }
        }
    }

    deinit { bitmap.deallocate() }

    /// A rough frequency class of a byte in log text (higher is more common).
    static func frequency(_ b: UInt8) -> Int {
        switch b {
        case UInt8(ascii: " "): return 14
        case UInt8(ascii: "e"), UInt8(ascii: "t"), UInt8(ascii: "a"), UInt8(ascii: "o"), UInt8(ascii: "i"), UInt8(ascii: "n"),
            UInt8(ascii: "s"), UInt8(ascii: "r"):
            return 10
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return 6
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return 7
        case UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"), UInt8(ascii: "x"): return 6
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return 3
        default: return 2
        }
    }

    /// Whether any anchor occurs in `line`.
    public func mayMatch(_ line: UnsafeRawBufferPointer) -> Bool { scanner.mayMatch(line) }

    /// A copy of the scanning state without reference counting, for per-line use.
    public var scanner: PrefilterScanner {
        PrefilterScanner(bitmap: bitmap, stride: stride, isUseful: isUseful, owner: Unmanaged.passUnretained(self))
    }

    func verify(_ base: UnsafeRawPointer, _ n: Int, _ i: Int, _ w: UInt32, _ h: Int) -> Bool {
        buckets.withUnsafeBufferPointer { all in
            for entry in all[h] where entry.window == w {
                let start = i - entry.offset
                guard start >= 0, start + entry.bytes.count <= n else { continue }
                if entry.bytes.withUnsafeBytes({ memcmp(base + start, $0.baseAddress!, entry.bytes.count) }) == 0 { return true }
            }
            return false
        }
    }
}

/// The prefilter's table as plain pointers: scanning a line touches no reference count, so
/// parallel readers sharing one table do not contend (the owner must outlive it).
public struct PrefilterScanner: @unchecked Sendable {
    let bitmap: UnsafeMutablePointer<UInt64>
    let stride: Int
    let isUseful: Bool
    let owner: Unmanaged<Prefilter>

    @inline(__always) static func hash(_ w: UInt32) -> Int { Prefilter.hash(w) }

    /// Whether any anchor occurs in `line`.
    @inline(__always)
    public func mayMatch(_ line: UnsafeRawBufferPointer) -> Bool {
        guard isUseful else { return true }
        let n = line.count
        guard n >= 4, let base = line.baseAddress else { return false }
        let bits = bitmap
        let step = stride
        var i = 0
        // Four checked positions per round, independent work the processor overlaps; a hit is
        // looked at position by position.
        while i &+ 3 &* step &+ 4 <= n {
            let w0 = base.loadUnaligned(fromByteOffset: i, as: UInt32.self)
            let w1 = base.loadUnaligned(fromByteOffset: i &+ step, as: UInt32.self)
            let w2 = base.loadUnaligned(fromByteOffset: i &+ 2 &* step, as: UInt32.self)
            let w3 = base.loadUnaligned(fromByteOffset: i &+ 3 &* step, as: UInt32.self)
            let h0 = Self.hash(w0)
            let h1 = Self.hash(w1)
            let h2 = Self.hash(w2)
            let h3 = Self.hash(w3)
            let b0 = bits[h0 >> 6] >> UInt64(h0 & 63)
            let b1 = bits[h1 >> 6] >> UInt64(h1 & 63)
            let b2 = bits[h2 >> 6] >> UInt64(h2 & 63)
            let b3 = bits[h3 >> 6] >> UInt64(h3 & 63)
            if (b0 | b1 | b2 | b3) & 1 != 0 {
                if b0 & 1 != 0, owner._withUnsafeGuaranteedRef({ $0.verify(base, n, i, w0, h0) }) { return true }
                if b1 & 1 != 0, owner._withUnsafeGuaranteedRef({ $0.verify(base, n, i &+ step, w1, h1) }) { return true }
                if b2 & 1 != 0, owner._withUnsafeGuaranteedRef({ $0.verify(base, n, i &+ 2 &* step, w2, h2) }) { return true }
                if b3 & 1 != 0, owner._withUnsafeGuaranteedRef({ $0.verify(base, n, i &+ 3 &* step, w3, h3) }) { return true }
            }
            i &+= 4 &* step
        }
        while i &+ 4 <= n {
            let w = base.loadUnaligned(fromByteOffset: i, as: UInt32.self)
            let h = Self.hash(w)
            if bits[h >> 6] & (1 << UInt64(h & 63)) != 0, owner._withUnsafeGuaranteedRef({ $0.verify(base, n, i, w, h) }) { return true }
            i &+= step
        }
        return false
    }

    /// Whether any anchor occurs in the `n` bytes at `base`, or any of them is not ASCII (the
    /// ASCII test rides on the prefilter's loads when they cover every byte).
    @inline(__always)
    func hitOrNonASCII(_ base: UnsafeRawPointer, _ n: Int) -> Bool {
        let line = UnsafeRawBufferPointer(start: base, count: n)
        guard stride == 4, isUseful else { return mayMatch(line) || !isASCII(line) }
        let bits = bitmap
        var any: UInt32 = 0
        var i = 0
        while i &+ 16 <= n {
            let w0 = base.loadUnaligned(fromByteOffset: i, as: UInt32.self)
            let w1 = base.loadUnaligned(fromByteOffset: i &+ 4, as: UInt32.self)
            let w2 = base.loadUnaligned(fromByteOffset: i &+ 8, as: UInt32.self)
            let w3 = base.loadUnaligned(fromByteOffset: i &+ 12, as: UInt32.self)
            any |= w0 | w1 | w2 | w3
            let h0 = Self.hash(w0)
            let h1 = Self.hash(w1)
            let h2 = Self.hash(w2)
            let h3 = Self.hash(w3)
            let b0 = bits[h0 >> 6] >> UInt64(h0 & 63)
            let b1 = bits[h1 >> 6] >> UInt64(h1 & 63)
            let b2 = bits[h2 >> 6] >> UInt64(h2 & 63)
            let b3 = bits[h3 >> 6] >> UInt64(h3 & 63)
            if (b0 | b1 | b2 | b3) & 1 != 0 {
                if b0 & 1 != 0, owner._withUnsafeGuaranteedRef({ $0.verify(base, n, i, w0, h0) }) { return true }
                if b1 & 1 != 0, owner._withUnsafeGuaranteedRef({ $0.verify(base, n, i &+ 4, w1, h1) }) { return true }
                if b2 & 1 != 0, owner._withUnsafeGuaranteedRef({ $0.verify(base, n, i &+ 8, w2, h2) }) { return true }
                if b3 & 1 != 0, owner._withUnsafeGuaranteedRef({ $0.verify(base, n, i &+ 12, w3, h3) }) { return true }
            }
            i &+= 16
        }
        while i &+ 4 <= n {
            let w = base.loadUnaligned(fromByteOffset: i, as: UInt32.self)
            any |= w
            let h = Self.hash(w)
            if bits[h >> 6] & (1 << UInt64(h & 63)) != 0, owner._withUnsafeGuaranteedRef({ $0.verify(base, n, i, w, h) }) { return true }
            i &+= 4
        }
        while i < n {
            any |= UInt32(base.load(fromByteOffset: i, as: UInt8.self))
            i &+= 1
        }
        return any & 0x8080_8080 != 0
    }
}

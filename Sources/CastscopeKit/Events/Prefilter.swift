#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The vocabulary's literal prefilter: decides on bytes, before any parsing, whether a line can
/// hold a recognized message at all. Every rule's pattern has a literal anchor that must occur
/// in the message; each anchor is indexed by its rarest two-byte window (rare by a static
/// estimate of byte frequency in logs) in a 64 Kbit table. A line is scanned two bytes at a
/// time against the table, and only a hit is verified with memcmp. Lines of noisy daemons pass
/// through at memory speed and are never turned into records.
public final class Prefilter: @unchecked Sendable {
    private let bitmap: UnsafeMutablePointer<UInt64>
    /// For each two-byte window value, the anchors that use it: (anchor, offset of the window).
    private var buckets: [UInt16: [(bytes: [UInt8], offset: Int)]] = [:]
    public let anchors: [[UInt8]]
    /// False when some rule has no literal to anchor on: then every line must be parsed.
    public let isUseful: Bool

    public init(anchors: [[UInt8]]) {
        self.anchors = anchors
        bitmap = .allocate(capacity: 1024)
        bitmap.initialize(repeating: 0, count: 1024)
        isUseful = !anchors.isEmpty && anchors.allSatisfy { $0.count >= 2 }
        guard isUseful else { return }
        for a in anchors {
            var best = 0
            var bestScore = Int.max
            for k in 0..<(a.count - 1) {
                let s = Self.frequency(a[k]) * Self.frequency(a[k + 1])
                if s < bestScore { bestScore = s; best = k }
            }
            let key = UInt16(a[best]) | UInt16(a[best + 1]) << 8
            bitmap[Int(key >> 6)] |= 1 << UInt64(key & 63)
            buckets[key, default: []].append((a, best))
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
    @inline(__always)
    public func mayMatch(_ line: UnsafeRawBufferPointer) -> Bool {
        guard isUseful else { return true }
        let n = line.count
        guard n >= 2, let base = line.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        let bits = bitmap
        var i = 0
        var key = UInt16(base[0])
        while i < n &- 1 {
            key = key | UInt16(base[i &+ 1]) << 8
            if bits[Int(key >> 6)] & (1 << UInt64(key & 63)) != 0, verify(base, n, i, key) { return true }
            key = UInt16(base[i &+ 1])
            i &+= 1
        }
        return false
    }

    private func verify(_ base: UnsafePointer<UInt8>, _ n: Int, _ i: Int, _ key: UInt16) -> Bool {
        guard let list = buckets[key] else { return false }
        for (bytes, offset) in list {
            let start = i - offset
            guard start >= 0, start + bytes.count <= n else { continue }
            if bytes.withUnsafeBytes({ memcmp(base + start, $0.baseAddress!, bytes.count) }) == 0 { return true }
        }
        return false
    }
}

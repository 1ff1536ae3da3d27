#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The vocabulary's literal prefilter: decides on bytes, before any parsing, whether a line can
/// hold a recognized message at all. Every rule's pattern has a literal anchor that must occur
/// in the message. Lines are checked at every `stride`-th byte (stride = shortest anchor − 3,
/// at most 8): the four-byte window there is hashed into a byte table. Each anchor enters the
/// table with `stride` consecutive windows — its rarest such span, by a static estimate of byte
/// frequency in logs — so wherever it occurs, one of them sits on a checked position. A table
/// hit is verified against the anchors filed under that hash. Lines of noisy daemons pass
/// through without being turned into records. A reader's own copy (`adaptive()`) also moves
/// anchors off windows that keep matching the input's common words (`demote`).
public final class Prefilter: @unchecked Sendable {
    public let anchors: [[UInt8]]
    /// False when some rule has no literal of four bytes to anchor on: then every line is parsed.
    public let isUseful: Bool
    /// Lines are checked every `stride` bytes.
    public let stride: Int
    let tables: PrefilterScanner

    static let tableBits: UInt32 = 15

    struct Entry {
        var window: UInt32
        /// Where the window sits in its anchor.
        var offset: Int32
        var anchorStart: Int32
        var anchorLength: Int32
        /// The anchor's index in `anchors`.
        var anchor: Int32
        /// The next entry filed under the same slot (-1: none).
        var next: Int32
        var slot: Int32
    }

    /// Where each anchor's indexed span of windows starts.
    private var spans: [Int]
    /// Slots whose windows turned out common in this input, with the misses seen there (in
    /// units of `demoteAfter`; see `demote`).
    private var common: [Int: Int] = [:]
    /// Demotions that moved an anchor to another span (bounded by `maxDemotions`).
    private(set) var demotions = 0
    /// Demotions tried, moving something or not (bounds the work spent adapting).
    private var attempts = 0
    /// Whether this prefilter adapts (one reader's own copy, on one thread).
    let adapts: Bool
    /// A slot whose table hits fail to verify this often is demoted; at most this many times.
    static let demoteAfter: UInt16 = 32
    static let maxDemotions = 64
    static let maxAttempts = 512

    public convenience init(anchors: [[UInt8]]) { self.init(anchors: anchors, adapts: false, spans: nil) }

    init(anchors: [[UInt8]], adapts: Bool, spans given: [Int]?) {
        self.anchors = anchors
        self.adapts = adapts
        isUseful = !anchors.isEmpty && anchors.allSatisfy { $0.count >= 4 }
        let stride = isUseful ? max(1, min(8, anchors.map(\.count).min()! - 3)) : 1
        self.stride = stride
        let size = 1 << Int(Self.tableBits)
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        table.initialize(repeating: 0, count: size)
        let heads = UnsafeMutablePointer<Int32>.allocate(capacity: size)
        heads.initialize(repeating: -1, count: size)
        let misses = UnsafeMutablePointer<UInt16>.allocate(capacity: size)
        misses.initialize(repeating: 0, count: size)
        let flat = anchors.flatMap { $0 }
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, flat.count))
        bytes.initialize(from: flat, count: flat.count)
        let entryCount = isUseful ? anchors.count * stride : 0
        tables = PrefilterScanner(table: table, heads: heads, entries: .allocate(capacity: max(1, entryCount)),
                                  anchorBytes: bytes, stride: stride, isUseful: isUseful,
                                  wordCount: (anchors.count + 63) / 64, misses: misses)
        spans = Array(repeating: 0, count: anchors.count)
        guard isUseful else { return }
        var start = 0
        for (index, a) in anchors.enumerated() {
            spans[index] = given?[index] ?? choose(a)
            for j in 0..<stride {
                tables.entries[index * stride + j] = Entry(window: 0, offset: 0, anchorStart: Int32(start),
                                                           anchorLength: Int32(a.count), anchor: Int32(index), next: -1, slot: -1)
            }
            file(index)
            start += a.count
        }
    }

    deinit {
        tables.table.deallocate()
        tables.heads.deallocate()
        tables.entries.deallocate()
        tables.anchorBytes.deallocate()
        tables.misses.deallocate()
    }

    /// A copy for one reader that adapts to the words common in its input (`demote`). One
    /// reader at a time: the next range of the same input may reuse it, learning kept.
    public func adaptive() -> Prefilter { Prefilter(anchors: anchors, adapts: true, spans: spans) }

    @inline(__always) static func window(_ a: [UInt8], _ k: Int) -> UInt32 {
        UInt32(a[k]) | UInt32(a[k + 1]) << 8 | UInt32(a[k + 2]) << 16 | UInt32(a[k + 3]) << 24
    }

    /// The anchor's rarest span of `stride` consecutive windows (by its most common window):
    /// by the misses seen in this input's common slots first, then by a static estimate.
    /// When every span has a common window, the one whose worst is least common wins.
    private func choose(_ a: [UInt8]) -> Int {
        // Each window's score: the misses seen at its slot, above the product of its bytes'
        // frequency classes (< 2^16).
        var scores = [Int](repeating: 0, count: a.count - 3)
        for k in scores.indices {
            scores[k] = Self.frequency(a[k]) * Self.frequency(a[k + 1]) * Self.frequency(a[k + 2]) * Self.frequency(a[k + 3])
            if !common.isEmpty, let seen = common[PrefilterScanner.hash(Self.window(a, k))] { scores[k] += seen << 20 }
        }
        var best = 0
        var bestScore = Int.max
        for k in 0...(a.count - 3 - stride) {
            var s = 0
            for j in k..<(k + stride) where scores[j] > s { s = scores[j] }
            if s < bestScore { bestScore = s; best = k }
        }
        return best
    }

    /// Files anchor `index`'s windows (its span in `spans`) under their slots.
    private func file(_ index: Int) {
        let a = anchors[index]
        for j in 0..<stride {
            let e = index * stride + j
            let k = spans[index] + j
            let window = Self.window(a, k)
            let h = PrefilterScanner.hash(window)
            tables.entries[e].window = window
            tables.entries[e].offset = Int32(k)
            tables.entries[e].slot = Int32(h)
            tables.entries[e].next = tables.heads[h]
            tables.heads[h] = Int32(e)
            tables.table[h] = 1
        }
    }

    /// Takes anchor `index`'s windows out of their slots.
    private func unfile(_ index: Int) {
        for j in 0..<stride {
            let e = Int32(index * stride + j)
            let h = Int(tables.entries[Int(e)].slot)
            if tables.heads[h] == e {
                tables.heads[h] = tables.entries[Int(e)].next
            } else {
                var k = tables.heads[h]
                while k >= 0 && tables.entries[Int(k)].next != e { k = tables.entries[Int(k)].next }
                if k >= 0 { tables.entries[Int(k)].next = tables.entries[Int(e)].next }
            }
            if tables.heads[h] < 0 { tables.table[h] = 0 }
        }
    }

    /// The windows filed under slot `h` keep matching text that is no anchor: words of this
    /// input's daemons ("channel", "Received", "did change") that an anchor shares. The
    /// anchors filed there move to another span of windows when they have one. Returns whether
    /// the tables changed: then positions checked before and after look for different windows,
    /// and the caller rechecks from a line start.
    func demote(_ h: Int) -> Bool {
        tables.misses[h] = 0
        guard adapts, demotions < Self.maxDemotions, attempts < Self.maxAttempts else { return false }
        attempts += 1
        common[h, default: 0] += 1
        var moved: [Int] = []
        var k = tables.heads[h]
        while k >= 0 {
            let index = Int(tables.entries[Int(k)].anchor)
            if !moved.contains(index) { moved.append(index) }
            k = tables.entries[Int(k)].next
        }
        var changed = false
        for index in moved {
            let span = choose(anchors[index])
            guard span != spans[index] else { continue }
            unfile(index)
            spans[index] = span
            file(index)
            changed = true
        }
        if changed { demotions += 1 }
        return changed
    }

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

    /// The tables as plain pointers, for per-line use: scanning touches no reference count, so
    /// parallel readers sharing one prefilter do not contend (the prefilter must outlive it).
    public var scanner: PrefilterScanner {
        var t = tables
        if adapts { t.owner = Unmanaged.passUnretained(self) }
        return t
    }
}

/// The prefilter's tables as plain pointers.
public struct PrefilterScanner: @unchecked Sendable {
    let table: UnsafeMutablePointer<UInt8>
    /// Per slot, the first entry filed there (-1: none); entries chain through `next`.
    let heads: UnsafeMutablePointer<Int32>
    let entries: UnsafeMutablePointer<Prefilter.Entry>
    let anchorBytes: UnsafeMutablePointer<UInt8>
    let stride: Int
    let isUseful: Bool
    /// Words of an `anchorsPresent` bit set.
    let wordCount: Int
    /// Table hits that did not verify, per slot (counted while certifying).
    let misses: UnsafeMutablePointer<UInt16>
    /// The adaptive prefilter these tables belong to (unretained: it outlives its scanners).
    var owner: Unmanaged<Prefilter>?

    @inline(__always) static func hash(_ w: UInt32) -> Int { Int((w &* 0x9E37_79B1) >> (32 &- Prefilter.tableBits)) }

    /// Whether an anchor filed under `h` with window `w` occurs with that window at `i`.
    @inline(never)
    func verify(_ base: UnsafeRawPointer, _ n: Int, _ i: Int, _ w: UInt32, _ h: Int) -> Bool {
        var k = Int(heads[h])
        while k >= 0 {
            let e = entries[k]
            k = Int(e.next)
            if occurs(e, base, n, i, w) { return true }
        }
        return false
    }

    /// Whether entry `e`'s anchor occurs in `base` (`n` bytes) with its window `w` at `i`.
    @inline(__always)
    private func occurs(_ e: Prefilter.Entry, _ base: UnsafeRawPointer, _ n: Int, _ i: Int, _ w: UInt32) -> Bool {
        let start = i &- Int(e.offset)
        let length = Int(e.anchorLength)
        return e.window == w && start >= 0 && start &+ length <= n
            && memcmp(base + start, anchorBytes + Int(e.anchorStart), length) == 0
    }

    /// Which anchors occur in `text`, into `found` (bit `i` of word `i / 64` for `anchors[i]`,
    /// `wordCount` words, cleared first). Every occurrence has one window on a checked position.
    public func anchorsPresent(_ text: UnsafeRawBufferPointer, into found: UnsafeMutablePointer<UInt64>) {
        found.update(repeating: 0, count: wordCount)
        guard text.count >= 4, let base = text.baseAddress else { return }
        let n = text.count
        var i = 0
        while i &+ 4 <= n {
            let w = base.loadUnaligned(fromByteOffset: i, as: UInt32.self)
            let h = Self.hash(w)
            if table[h] != 0 {
                var k = Int(heads[h])
                while k >= 0 {
                    let e = entries[k]
                    k = Int(e.next)
                    if occurs(e, base, n, i, w) { found[Int(e.anchor) >> 6] |= 1 << UInt64(e.anchor & 63) }
                }
            }
            i &+= stride
        }
    }

    /// Certifies a stretch of a buffer of many lines at once, so that lines need no scan of
    /// their own: from `from` (checked positions continue `from`'s alignment) to at least
    /// `upTo`, returns how far everything is clean — no window at a checked position verifies
    /// as an anchor and every byte is ASCII — and whether something was found there (then
    /// `clean` is where, or a little before). `anchor`: what was found is a verified anchor
    /// covering position `clean` (not a byte over 0x7F, nor a demotion's recheck). Loads stay
    /// within `end`. Windows may straddle lines: an anchor holds no newline, so a verified one
    /// lies within one line.
    @inline(__always)
    func certify(_ base: UnsafeRawPointer, from: Int, upTo: Int, end: Int) -> (clean: Int, found: Bool, anchor: Bool) {
        let t = table
        let s = stride
        let mask: UInt64 = 0x8080_8080_8080_8080
        var i = from
        // Whole rounds fit below `stop`. Bytes are tested for ASCII eight rounds at a time;
        // non-ASCII reports the start of those rounds (a little early is safe: the lines in
        // between go through the full path).
        // Eight checked positions a round here (two rounds of `verifyRound`).
        let stop = min(upTo, end &- 7 &* s &- 7)
        var any: UInt64 = 0
        var chunk = i
        var rounds = 0
        while i < stop {
            let q0 = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let q1 = base.loadUnaligned(fromByteOffset: i &+ s, as: UInt64.self)
            let q2 = base.loadUnaligned(fromByteOffset: i &+ 2 &* s, as: UInt64.self)
            let q3 = base.loadUnaligned(fromByteOffset: i &+ 3 &* s, as: UInt64.self)
            let q4 = base.loadUnaligned(fromByteOffset: i &+ 4 &* s, as: UInt64.self)
            let q5 = base.loadUnaligned(fromByteOffset: i &+ 5 &* s, as: UInt64.self)
            let q6 = base.loadUnaligned(fromByteOffset: i &+ 6 &* s, as: UInt64.self)
            let q7 = base.loadUnaligned(fromByteOffset: i &+ 7 &* s, as: UInt64.self)
            any |= (q0 | q1 | q2 | q3) | (q4 | q5 | q6 | q7)
            let h0 = Self.hash(UInt32(truncatingIfNeeded: q0))
            let h1 = Self.hash(UInt32(truncatingIfNeeded: q1))
            let h2 = Self.hash(UInt32(truncatingIfNeeded: q2))
            let h3 = Self.hash(UInt32(truncatingIfNeeded: q3))
            let h4 = Self.hash(UInt32(truncatingIfNeeded: q4))
            let h5 = Self.hash(UInt32(truncatingIfNeeded: q5))
            let h6 = Self.hash(UInt32(truncatingIfNeeded: q6))
            let h7 = Self.hash(UInt32(truncatingIfNeeded: q7))
            if (t[h0] | t[h1] | t[h2] | t[h3]) | (t[h4] | t[h5] | t[h6] | t[h7]) != 0 {
                var at = verifyRound(base, end, i, counting: true)
                if at == -1 { at = verifyRound(base, end, i &+ 4 &* s, counting: true) }
                if at != -1 {
                    if any & mask != 0 { return (chunk, true, false) }
                    return at >= 0 ? (at, true, true) : (-2 &- at, true, false)
                }
            }
            i &+= 8 &* s
            rounds &+= 1
            if rounds & 3 == 0 {
                if any & mask != 0 { return (chunk, true, false) }
                chunk = i
            }
        }
        if any & mask != 0 { return (chunk, true, false) }
        guard i < upTo else { return (i, false, false) }
        // The buffer's last bytes, too few for a whole round.
        var k = i
        while k < end {
            if base.load(fromByteOffset: k, as: UInt8.self) >= 0x80 { return (i, true, false) }
            k &+= 1
        }
        var at = i
        while at &+ 4 <= end {
            let w = base.loadUnaligned(fromByteOffset: at, as: UInt32.self)
            let h = Self.hash(w)
            if t[h] != 0, verify(base, end, at, w, h) { return (i, true, false) }
            at &+= s
        }
        return (end, false, false)
    }

    /// The four checked positions of the round at `i`, after a table hit: the first that
    /// verifies, or -1. `counting`: a hit that does not verify counts against its slot, and a
    /// slot that misses too often is demoted (`Prefilter.demote`); when that changes the tables
    /// its position `p` is reported as `-2 - p`, so that the caller rechecks that line (an
    /// anchor there may have been looked for with the old windows before and the new ones
    /// after).
    @inline(never)
    func verifyRound(_ base: UnsafeRawPointer, _ n: Int, _ i: Int, counting: Bool = false) -> Int {
        for k in 0..<4 {
            let at = i &+ k &* stride
            let w = base.loadUnaligned(fromByteOffset: at, as: UInt32.self)
            let h = Self.hash(w)
            guard table[h] != 0 else { continue }
            if verify(base, n, at, w, h) { return at }
            if counting, let owner {
                misses[h] &+= 1
                if misses[h] >= Prefilter.demoteAfter, owner._withUnsafeGuaranteedRef({ $0.demote(h) }) { return -2 &- at }
            }
        }
        return -1
    }

    /// Whether any anchor occurs in `line`.
    @inline(__always)
    public func mayMatch(_ line: UnsafeRawBufferPointer) -> Bool {
        guard isUseful else { return true }
        guard line.count >= 4, let base = line.baseAddress else { return false }
        return scan(base, line.count)
    }

    /// The scan of one line: four checked positions per round, independent work the processor
    /// overlaps; a hit is looked at position by position.
    @inline(__always)
    func scan(_ base: UnsafeRawPointer, _ n: Int) -> Bool {
        let t = table
        let s = stride
        var i = 0
        while i &+ 3 &* s &+ 8 <= n {
            let q0 = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let q1 = base.loadUnaligned(fromByteOffset: i &+ s, as: UInt64.self)
            let q2 = base.loadUnaligned(fromByteOffset: i &+ 2 &* s, as: UInt64.self)
            let q3 = base.loadUnaligned(fromByteOffset: i &+ 3 &* s, as: UInt64.self)
            let w0 = UInt32(truncatingIfNeeded: q0)
            let w1 = UInt32(truncatingIfNeeded: q1)
            let w2 = UInt32(truncatingIfNeeded: q2)
            let w3 = UInt32(truncatingIfNeeded: q3)
            let h0 = Self.hash(w0)
            let h1 = Self.hash(w1)
            let h2 = Self.hash(w2)
            let h3 = Self.hash(w3)
            // Nothing of this round stays live past the test (the rare hit recomputes), so the
            // loop keeps everything in registers.
            if t[h0] | t[h1] | t[h2] | t[h3] != 0, verifyRound(base, n, i) >= 0 { return true }
            i &+= 4 &* s
        }
        while i &+ 4 <= n {
            let w = base.loadUnaligned(fromByteOffset: i, as: UInt32.self)
            let h = Self.hash(w)
            if t[h] != 0, verify(base, n, i, w, h) { return true }
            i &+= s
        }
        return false
    }
}

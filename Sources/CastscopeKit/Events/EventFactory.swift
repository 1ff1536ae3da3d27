#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a record into an event when the vocabulary recognizes its message.
public struct EventFactory: Sendable {
    public let matcher: EventMatcher

    public init(matcher: EventMatcher) { self.matcher = matcher }

    public init(registry: ParserRegistry) { matcher = EventMatcher(vocabularies: registry.vocabularies) }

    /// The event for `rec`, or nil when no rule matches. Its time is still unresolved
    /// (`parsedTime`); `resolveNow` or the analyzer's bundle-wide resolution sets it.
    public func event(from rec: RawRecord, path: String, order: Int, fileIndex: Int, interner: Interner? = nil) -> Event? {
        let found = rec.withBytes(.message) { bytes -> EventMatcher.Hit? in
            let category = rec.string(.category)
            guard let interner else { return matcher.match(bytes, category: category) }
            return interner.match(bytes, category: category) { matcher.match(bytes, category: category) }
        }
        guard let hit = found ?? nil else { return nil }
        var process = interner.flatMap { i in rec.withBytes(.process) { i.string($0) } } ?? rec.string(.process)
        if let p = process, p.hasSuffix(")"), let open = p.firstIndex(of: "(") {
            process = String(p[..<open])  // `proc(library)` in idevicesyslog
        }
        var attrs = hit.attrs
        if let host = rec.string(.host) { attrs.append(("host", host)) }
        return Event(
            kind: hit.rule.event, sdk: hit.rule.sdk, side: hit.rule.side,
            time: nil, timeInferred: rec.timeInferred, process: process, pid: rec.pid,
            message: interner.flatMap { i in rec.withBytes(.message) { i.string($0) } } ?? rec.string(.message) ?? "", attrs: attrs,
            source: SourceRef(path: path, line: rec.line), order: order,
            parsedTime: rec.time, fileIndex: fileIndex)
    }
}

extension Event {
    /// Live streams: parts a line lacks (year, date, zone) are taken from `now` (µs, UTC).
    public mutating func resolveNow(_ now: Int64, defaultOffset: Int = 0) {
        guard let t = parsedTime else { return }
        let local = (now + Int64(defaultOffset) * 1_000_000).floorDiv(1_000_000)
        let (y, m, d) = civilFromDays(Int(local.floorDiv(86_400)))
        time = t.instant(defaultYear: y, defaultMonth: m, defaultDay: d, defaultOffset: defaultOffset)
        displayOffset = t.offset ?? defaultOffset
    }
}

/// Shares one `String` between the many events that carry the same text (a frame line logged
/// thousands of times, the same process name): memory follows distinct texts, not lines.
/// Bounded: past `capacity` texts it stops remembering new ones.
public final class Interner {
    private var table: [Int: [String]] = [:]
    private var count = 0
    public let capacity: Int
    /// What the vocabulary made of a message already seen (the same frame line thousands of
    /// times): matching depends on the message and its category only.
    private var matches: [Int: [(message: [UInt8], category: String?, hit: EventMatcher.Hit?)]] = [:]
    private var matchCount = 0

    public init(capacity: Int = 8192) { self.capacity = capacity }

    /// The matcher's result for a message, computed once per distinct message and category.
    func match(_ bytes: UnsafeRawBufferPointer, category: String?, _ compute: () -> EventMatcher.Hit?) -> EventMatcher.Hit? {
        let key = Self.hash(bytes)
        if let seen = matches[key] {
            for m in seen where m.message.count == bytes.count && m.category == category {
                let same = bytes.isEmpty || m.message.withUnsafeBytes { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }
                if same { return m.hit }
            }
        }
        let hit = compute()
        if matchCount < capacity {
            matches[key, default: []].append((Array(bytes), category, hit))
            matchCount += 1
        }
        return hit
    }

    static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        // Eight bytes at a time (multiply, fold the high half in); the length seeds it.
        var h = UInt64(truncatingIfNeeded: bytes.count) &* 0x9E37_79B9_7F4A_7C15
        if let base = bytes.baseAddress {
            var i = 0
            while i &+ 8 <= bytes.count {
                h = (h ^ base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
                h ^= h >> 31
                i &+= 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while i < bytes.count {
                tail |= UInt64(base.load(fromByteOffset: i, as: UInt8.self)) << shift
                shift &+= 8
                i &+= 1
            }
            h = (h ^ tail) &* 0x94D0_49BB_1331_11EB
            h ^= h >> 29
        }
        return Int(truncatingIfNeeded: h)
    }

    public func string(_ bytes: UnsafeRawBufferPointer) -> String {
        let key = Self.hash(bytes)
        if let candidates = table[key] {
            for var c in candidates {
                let same = c.withUTF8 { u in u.count == bytes.count && (bytes.count == 0 || memcmp(u.baseAddress!, bytes.baseAddress!, bytes.count) == 0) }
                if same { return c }
            }
        }
        let s = String(decoding: bytes, as: UTF8.self)
        if count < capacity {
            table[key, default: []].append(s)
            count += 1
        }
        return s
    }
}

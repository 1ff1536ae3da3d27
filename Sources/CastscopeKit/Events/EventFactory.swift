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
        if let interner {
            var lent = rec
            guard let (hit, message, _) = recognize(&lent, interner, fold: { _, _, _ in false }) else { return nil }
            return event(rec, hit, message, rec.withBytes(.process) { interner.process($0).name }, rec.string(.host), rec.pid, path,
                         order, fileIndex)
        }
        guard let (hit, message) = rec.withMessage({ bytes in
            matcher.match(bytes, category: rec.string(.category)).map { ($0, Event.text(bytes)) }
        }) ?? nil else { return nil }
        return event(rec, hit, message, rec.string(.process).map(Interner.processName), rec.string(.host), rec.pid, path, order,
                     fileIndex)
    }

    /// Adds `rec`'s event (if the vocabulary recognizes it) to `events` through `compactor`;
    /// a frame line that continues the frame run before it is folded in without an `Event`
    /// being built for it. Returns whether `rec` was recognized (it took `order`).
    /// (The record lent in place, `inout` though it is only read: lent by value from a reader's
    /// closure, the record, 224 bytes, was copied to the stack first, per line.)
    func add(_ rec: inout RawRecord, path: String, order: Int, fileIndex: Int, interner: Interner,
             compactor: inout EventCompactor, to events: inout [Event]) -> Bool
    {
        // A relay `stats` line that continues its session's run is folded in from the match
        // itself (`EventMatcher.Fold`): no hit, attributes or message made and let go for it.
        // (Only while a stats run is open: a device log, which has none, passes no closure that
        // captures, whose context cost ~40 instructions a recognized line.)
        var folded = false
        let found: (EventMatcher.Hit, String, Int)?
        if compactor.isEmpty {
            found = recognize(&rec, interner, fold: { _, _, _ in false })
        } else {
            let time = rec.time, line = rec.line
            found = recognize(&rec, interner) { index, m, body in
                guard let slots = matcher.statsSlots(index),
                    compactor.continuesStats(slots, m, body, fileIndex: fileIndex, time: time, line: line, in: &events)
                else { return false }
                folded = true
                return true
            }
        }
        guard let (hit, message, verdict) = found else { return folded }
        let (process, processIndex) = rec.withBytes(.process) { interner.process($0) } ?? (nil, -1)
        let pid = rec.pid
        if compactor.continuesRun(code: hit.code, message: message, pid: pid, process: process, fileIndex: fileIndex,
                                  time: rec.time, line: rec.line, in: &events)
        {
            return true
        }
        // A relay `stats` line that continues its session's run: folded in from the hit, without
        // an event (its attributes, its text) made and let go for each line.
        if compactor.continuesStats(hit, fileIndex: fileIndex, time: rec.time, line: rec.line, in: &events) { return true }
        // Not `compactor.add`: the line was just found not to continue a run.
        // (A syslog layout's host, `localhost` on every line of a device's log, is one of the
        // texts too: an attribute list and a text per line were ~170 bytes of each event.)
        let (host, hostIndex) = rec.withBytes(.host) { interner.host($0) } ?? (nil, -1)
        if hit.code == .extensionKilledMemory, let process, Self.victimIsLine(hit.attrs) {
            // The kill of the line's own process: its name and pid are the victim's.
            var e = event(rec, hit, message, process, host, pid, path, order, fileIndex)
            e.attrs += [("target", process)] + (pid.map { [("target_pid", String($0))] } ?? [])
            compactor.absorb(e, into: &events)
        } else if verdict >= 0, processIndex >= 0 || process == nil, hostIndex >= 0 || host == nil {
            // The text of the events of one message, process, host and file is made once.
            let text = interner.text(verdict: verdict, process: processIndex, host: hostIndex, path: path) {
                Event.Text(kind: hit.rule.event, code: hit.code, sdk: hit.rule.sdk, process: process, message: message,
                           attrs: Self.attrs(hit, host: host), path: path)
            }
            compactor.absorb(Event(text: text, side: hit.rule.side, time: nil, timeInferred: rec.timeInferred, pid: pid,
                                   line: rec.line, order: order, parsedTime: rec.time, fileIndex: fileIndex),
                             into: &events)
        } else {
            compactor.absorb(event(rec, hit, message, process, host, pid, path, order, fileIndex), into: &events)
        }
        return true
    }

    /// `add` of a record held by value (a crash report's, made from its lines).
    func add(_ rec: RawRecord, path: String, order: Int, fileIndex: Int, interner: Interner, compactor: inout EventCompactor,
             to events: inout [Event]) -> Bool
    {
        var rec = rec
        return add(&rec, path: path, order: order, fileIndex: fileIndex, interner: interner, compactor: &compactor, to: &events)
    }

    /// The rule `rec`'s message matches and the message as events share it, remembered per
    /// distinct message and category.
    /// Nil also when `fold` took the line (`EventMatcher.Outcome.folded`).
    private func recognize(_ rec: inout RawRecord, _ interner: Interner, fold: EventMatcher.Fold) -> (EventMatcher.Hit, String, Int)? {
        // (Both fields lent at once: a closure inside `withMessage` that read `rec` again
        // captured a copy of the record, its three lists retained and released, per line.)
        guard let (h, m, k) = rec.withMessageAndCategory({ bytes, category in
            guard let category else {
                return interner.verdictOrFold(bytes, category: nil) {
                    matcher.match(bytes, category: nil, fold: fold, scratch: &interner.scratch)
                }
            }
            return interner.verdictOrFold(bytes, category: category) {
                matcher.match(bytes, category: String(decoding: category, as: UTF8.self), fold: fold, scratch: &interner.scratch)
            }
        }) ?? nil, let h, let m else { return nil }
        return (h, m, k)
    }

    /// A rule whose line tells the kill of its own process (`"set": {"victim": "line"}`): Xcode's
    /// `Message from debugger: Terminated due to memory issue`, which comes under the debugged
    /// process's name as its untimed lines do (RMGallery#10 gave no session and no finding).
    static func victimIsLine(_ attrs: [(String, String)]) -> Bool {
        attrs.contains { $0.0 == "victim" && $0.1 == "line" }
    }

    /// A hit's attributes, with the record's host name last when it has one.
    private static func attrs(_ hit: EventMatcher.Hit, host: String?) -> [(String, String)] {
        host.map { hit.attrs + [("host", $0)] } ?? hit.attrs
    }

    private func event(_ rec: RawRecord, _ hit: EventMatcher.Hit, _ message: String, _ process: String?, _ host: String?,
                       _ pid: Int?, _ path: String, _ order: Int, _ fileIndex: Int) -> Event
    {
        Event(
            kind: hit.rule.event, code: hit.code, sdk: hit.rule.sdk, side: hit.rule.side,
            time: nil, timeInferred: rec.timeInferred, process: process, pid: pid,
            message: message, attrs: Self.attrs(hit, host: host),
            source: SourceRef(path: path, line: rec.line), order: order,
            parsedTime: rec.time, fileIndex: fileIndex)
    }
}

extension Event {
    /// The most of a recognized line's message (and of each value captured from it) an event
    /// keeps: a line of a megabyte (a dump, a base64 blob after `client stream error
    /// occurred:`) is cut there, and says how much more it had. A session of 1,000 such lines
    /// held them whole, 1 GB, whatever `--max-events` said (hostile round 64).
    public static let maxTextBytes = 16 << 10

    /// `bytes` as an event's text, cut at `maxTextBytes` (at a character's start).
    @inline(__always)
    static func text(_ bytes: UnsafeRawBufferPointer) -> String {
        guard bytes.count > maxTextBytes else { return String(decoding: bytes, as: UTF8.self) }
        var end = maxTextBytes
        while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<end]), as: UTF8.self) + "… (\(bytes.count - end) bytes more)"
    }

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
    public let capacity: Int
    /// Process names as events carry them (see `processName`).
    private var processes = BytesTable<String>()
    /// Host names (syslog layouts), likewise.
    private var hosts = BytesTable<String>()
    /// What the vocabulary made of a message already seen (the same frame line thousands of
    /// times): matching depends on the message and its category only. With a hit, the
    /// message as the events share it.
    private var verdicts = BytesTable<(category: [UInt8]?, hit: EventMatcher.Hit?, message: String?)>()
    /// Events' texts (kind, SDK, process, message, attributes, file) by verdict and process
    /// name: the lines of one message and process share one, instead of an allocation and a
    /// reference to each of its strings taken, and given back, per event.
    private var texts: [Int: Event.Text] = [:]
    /// The hashes of recognized messages seen once and not kept, one a slot (direct-mapped): such
    /// a message is kept from its second sighting on. One with a counter or an id in it (a
    /// relay's `stats` line, 13 % of a relay log's time) never comes again: kept at its first,
    /// each filled the tables with a key, a text and a hit that only cost their making and
    /// tearing down (a range's tables, torn down at its end, were 10 % of the time). The first
    /// `keptAtOnce` are kept at once (a device log's few hundred messages are each built into a
    /// shared text from their first line on, as before), and so is a message not recognized
    /// (matching a noise line again costs more than its key).
    private var seenOnce = [UInt64](repeating: 0, count: 4096)
    static let keptAtOnce = 1024
    /// Messages longer than this (a frame line is about 100 bytes) are remembered while their
    /// bytes come to `longKeptBudget` at most.
    static let longestKept = 2048
    static let longKeptBudget = 16 << 20
    private var longKept = 0
    /// The matcher's captures, kept from message to message (`EventMatcher.match(…scratch:)`).
    var scratch = PatternMatch(slots: 0)

    public init(capacity: Int = 8192) { self.capacity = min(capacity, 1 << 20) }

    /// The text of an event whose message is verdict `verdict` and process name `process`
    /// (indexes given by `verdict` and `process`, -1 for none), in `path`: made by `make` the
    /// first time.
    func text(verdict: Int, process: Int, host: Int = -1, path: String, _ make: () -> Event.Text) -> Event.Text {
        // Each index is below `capacity` (at most 2^21 here), or -1: all ones in its 21 bits.
        let key = verdict << 42 | (process & 0x1F_FFFF) << 21 | (host & 0x1F_FFFF)
        // The texts used lately first, by a few bits of their indexes (no `Hasher` per line).
        let near = (verdict &* 8 &+ process &* 3 &+ host) & (nearTexts.count - 1)
        if nearKeys[near] == key, let t = nearTexts[near], t.path == path { return t }
        if let t = texts[key], t.path == path {
            nearKeys[near] = key
            nearTexts[near] = t
            return t
        }
        let t = make()
        if texts.count < capacity { texts[key] = t }
        return t
    }
    private var nearKeys = [Int](repeating: -1, count: 16)
    private var nearTexts = [Event.Text?](repeating: nil, count: 16)

    /// The matcher's result for a message (and its text, when it is a hit), computed once per
    /// distinct message and category; and where it is kept (-1: not kept, the table is full).
    func verdict(_ bytes: UnsafeRawBufferPointer, category: UnsafeRawBufferPointer?, _ compute: () -> EventMatcher.Hit?)
        -> (EventMatcher.Hit?, String?, Int)
    {
        verdictOrFold(bytes, category: category) { compute().map { .hit($0) } ?? .missed }!
    }

    /// `verdict`, for a `compute` that may fold the line into what is already there
    /// (`EventMatcher.Outcome.folded`): then nil, and nothing remembered (a stats line's
    /// counters make each one new).
    func verdictOrFold(_ bytes: UnsafeRawBufferPointer, category: UnsafeRawBufferPointer?, _ compute: () -> EventMatcher.Outcome)
        -> (EventMatcher.Hit?, String?, Int)?
    {
        var key = Self.hash(bytes)
        if let category { key = (key ^ Self.hash(category)) &* 0x9E37_79B9_7F4A_7C15 | 1 }
        // (The entry looked at by its index: handed to the test, the entry was a copy of its
        // three references, taken and given back per line. The table is lent to the test, not
        // read by it from `self`: a test that read `verdicts` made each lookup copy the table
        // first, a reference to each of its five lists taken and given back per line.)
        if let k = verdicts.find(bytes, key, { table, k in
            table.values[k].category.withBytes { c in
                guard let c, let category else { return c == nil && category == nil }
                return c.count == category.count && (c.isEmpty || memcmp(c.baseAddress!, category.baseAddress!, c.count) == 0)
            }
        }) {
            // Field by field: the entry whole would be a copy of its three references.
            return (verdicts.values[k].hit, verdicts.values[k].message, k)
        }
        let hit: EventMatcher.Hit?
        switch compute() {
        case .hit(let h): hit = h
        case .missed: hit = nil
        case .folded: return nil
        }
        let message = hit == nil ? nil : Event.text(bytes)
        // (long messages are remembered up to a budget of their bytes: the table keeps them as
        // its keys, and 1,000 recognized lines of a megabyte each held a gigabyte there; a
        // long NSError repeated by a retry storm is still made once)
        guard verdicts.count < capacity, bytes.count <= Self.longestKept || longKept + bytes.count <= Self.longKeptBudget
        else { return (hit, message, -1) }
        if hit != nil, verdicts.count >= Self.keptAtOnce {
            let slot = Int(truncatingIfNeeded: key) & (seenOnce.count - 1)
            guard seenOnce[slot] == key else {
                seenOnce[slot] = key
                return (hit, message, -1)
            }
        }
        verdicts.insert(bytes, key, (category.map { Array($0) }, hit, message))
        if bytes.count > Self.longestKept { longKept += bytes.count }
        return (hit, message, verdicts.count - 1)
    }

    /// The process name of a record as events carry it, and where it is kept (-1: not kept).
    func process(_ bytes: UnsafeRawBufferPointer) -> (name: String, index: Int) {
        Self.name(bytes, in: &processes, last: &lastProcess, capacity: capacity, Self.processName)
    }

    /// The host name of a record (a syslog layout's), and where it is kept (-1: not kept).
    func host(_ bytes: UnsafeRawBufferPointer) -> (name: String, index: Int) {
        Self.name(bytes, in: &hosts, last: &lastHost, capacity: capacity) { $0 }
    }

    /// The process and host names found last: the lines of a log mostly repeat the name of the
    /// line before (a device log's host is `localhost` on every line), compared before hashing.
    private var lastProcess = -1, lastHost = -1

    /// `bytes` as `table` keeps it (`make` of its text, the first time), and where (-1: the
    /// table is full and it is not kept).
    private static func name(_ bytes: UnsafeRawBufferPointer, in table: inout BytesTable<String>, last: inout Int, capacity: Int,
                             _ make: (String) -> String) -> (name: String, index: Int)
    {
        if last >= 0, table.keyIs(last, bytes) { return (table.values[last], last) }
        let key = hash(bytes)
        if let k = table.find(bytes, key, { _, _ in true }) {
            last = k
            return (table.values[k], k)
        }
        let name = make(String(decoding: bytes, as: UTF8.self))
        guard table.count < capacity else { return (name, -1) }
        table.insert(bytes, key, name)
        last = table.count - 1
        return (name, table.count - 1)
    }

    /// `proc(library)` (idevicesyslog) names the process `proc`; a name with a space before
    /// its parenthesis (`Fox (Objective-C)`) is the process's own and stays whole.
    static func processName(_ p: String) -> String {
        if p.hasSuffix(")"), let open = p.firstIndex(of: "("), open > p.startIndex, p[p.index(before: open)] != " " {
            return String(p[..<open])
        }
        return p
    }

    /// A 64-bit hash of `bytes`, never 0 (the empty-slot mark of `BytesTable`).
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
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
        return h | 1
    }
}

/// An open-addressing table from byte strings to values, for lookups by bytes without a
/// `String` or `Hasher` per lookup. Keys are found by their 64-bit hash (nonzero), then
/// compared byte for byte; `matches` (given the entry's index) narrows further (entries that
/// share the bytes). The keys' bytes are kept in one pool (a list per key was a reference
/// taken and given back at each comparison).
struct BytesTable<Value> {
    private var hashes = [UInt64](repeating: 0, count: 64)
    private var slots = [Int32](repeating: -1, count: 64)
    /// Key k's bytes are `pool[ends[k - 1] ..< ends[k]]` (from 0 for the first).
    private var pool: [UInt8] = []
    private var ends: [Int] = []
    private(set) var values: [Value] = []
    var count: Int { values.count }

    /// (`mutating` though it changes nothing: called on a class's property, a non-mutating
    /// call copied the table, five references, around an opaque `matches`.)
    mutating func find(_ bytes: UnsafeRawBufferPointer, _ hash: UInt64, _ matches: (Self, Int) -> Bool) -> Int? {
        let mask = hashes.count - 1
        var i = Int(truncatingIfNeeded: hash) & mask
        while true {
            let h = hashes[i]
            if h == 0 { return nil }
            if h == hash {
                let k = Int(slots[i])
                if keyIs(k, bytes), matches(self, k) { return k }
            }
            i = (i &+ 1) & mask
        }
    }

    /// Whether key `k` is exactly `bytes`.
    @inline(__always) func keyIs(_ k: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let from = k == 0 ? 0 : ends[k - 1]
        let n = ends[k] - from
        guard n == bytes.count else { return false }
        guard n > 0 else { return true }
        return pool.withUnsafeBytes { memcmp($0.baseAddress! + from, bytes.baseAddress!, n) == 0 }
    }

    mutating func insert(_ bytes: UnsafeRawBufferPointer, _ hash: UInt64, _ value: Value) {
        if (values.count + 1) * 2 > hashes.count { grow() }
        place(hash, Int32(values.count))
        pool.append(contentsOf: bytes)
        ends.append(pool.count)
        values.append(value)
    }

    private mutating func place(_ hash: UInt64, _ index: Int32) {
        let mask = hashes.count - 1
        var i = Int(truncatingIfNeeded: hash) & mask
        while hashes[i] != 0 { i = (i &+ 1) & mask }
        hashes[i] = hash
        slots[i] = index
    }

    private mutating func grow() {
        let old = zip(hashes, slots).filter { $0.0 != 0 }
        hashes = [UInt64](repeating: 0, count: hashes.count * 2)
        slots = [Int32](repeating: -1, count: slots.count * 2)
        for (h, k) in old { place(h, k) }
    }
}

extension Optional where Wrapped == [UInt8] {
    /// The bytes, lent (nil: none).
    @inline(__always) func withBytes<R>(_ body: (UnsafeRawBufferPointer?) -> R) -> R {
        guard let a = self else { return body(nil) }
        return a.withUnsafeBytes { body($0) }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Relay sessions built while the bundle is read, so that a relay's lines leave memory as
/// their session closes (issue 15): a relay fleet's journal has tens of thousands of sessions,
/// and the join with the phone's sessions needs only a few facts of each until the end.
///
/// It takes relay lines of a session whose time needs nothing from the rest of the bundle
/// (journald's, or a full timestamp with a zone: `ParsedTime.isSelfContained`), in reading
/// order. A session's `closed` line ends it: when it was read from one file in time order, as
/// a relay's journal gives it, it is made then (the same fields the whole-bundle grouping
/// takes, in the same order) and its lines go to the `EventSpill`; otherwise its lines are
/// spilled as read and it is made at the end. At the end (`finish`), every session touched
/// again, read from several files (an export beside the journal), left open, or cut by
/// `--since` / `--until` gets what the whole-bundle path gives every relay line: time order,
/// the dedupe of a line two files hold, the window, then the grouping. Lines of relay logs
/// whose times need the bundle (syslog text without a year) are resolved with the bundle and
/// handed to `finish`.
final class RelayStage {
    private struct Slot {
        /// Lines read since it was last closed (reading order; times not resolved yet).
        var open: [Event] = []
        /// Lines spilled as read, to be made at the end.
        var raw: [EventSpill.Chunk] = []
        /// Made at its close: where the session is written in the spill (its lines too). Read
        /// back at the end, so that a closed session holds a few words until then.
        var done: EventSpill.Chunk?
        /// What `done` adds to the report: the lines it stands for, their span, its first line.
        var lines = 0
        var span = Analyzer.TimeSpan()
        var firstKey: Key?
        /// Needs the whole treatment at the end.
        var dirty = false
    }

    /// The order of the whole-bundle path: time, then file, then reading order.
    struct Key: Comparable {
        var time: Int64
        var file: Int
        var order: Int
        init(_ e: Event) { (time, file, order) = Analyzer.orderKey(e) }
        static func < (a: Key, b: Key) -> Bool { (a.time, a.file, a.order) < (b.time, b.file, b.order) }
    }

    /// Made when the first session closes; nil when no temporary file can be made (the lines
    /// are then held, as the whole-bundle path holds them).
    private lazy var spill: EventSpill? = EventSpill()
    /// A time window is set: no session is made before the end (the window needs the zone).
    private let windowed: Bool
    /// Session ids, one after another in one buffer, found by hash: a `String` per session
    /// would be allocated by the reading thread among its lines, and keep their pages.
    private var ids = IdTable()
    private var slots: [Slot] = []
    /// Lines taken in all (a journal read in stretches that met damage is read again when any was).
    private(set) var taken = 0
    private var closedEarly = 0
    /// The first line with a time, in reading order: the report's zone when no phone line has one.
    private(set) var firstTimed: (order: Int, time: Int64, offset: Int)?

    init(windowed: Bool) { self.windowed = windowed }

    /// Whether `e` is taken here rather than held with the bundle's lines.
    static func takes(_ e: Event) -> Bool {
        e.side == .relay && (e.parsedTime?.isSelfContained ?? true) && e.attr("session") != nil
    }

    /// The next relay line in reading order (`takes` said yes).
    func add(_ e: Event) {
        taken += e.count
        if firstTimed == nil, let t = e.parsedTime {
            firstTimed = (e.order, t.instant(defaultYear: 1970, defaultMonth: 1, defaultDay: 1, defaultOffset: 0), t.offset ?? 0)
        }
        let k = slot(of: e)
        if slots[k].done != nil { slots[k].dirty = true }
        // A `stats` line right after another of its session in the same file continues its
        // run (as `EventCompactor` folds it for the lines held with the bundle's).
        if e.kind == "relay.stats", let last = slots[k].open.indices.last, slots[k].open[last].kind == "relay.stats",
            slots[k].open[last].fileIndex == e.fileIndex
        {
            EventCompactor.fold(e, into: &slots[k].open[last])
            return
        }
        slots[k].open.append(e)
        if e.kind == "relay.closed" { close(k) }
    }

    private func close(_ k: Int) {
        guard let spill else { return }
        var lines = slots[k].open
        slots[k].open = []
        if !windowed, !slots[k].dirty, slots[k].done == nil, slots[k].raw.isEmpty {
            Self.resolve(&lines)
            let file = lines[0].fileIndex
            let inOrder = !lines.indices.dropFirst().contains { Key(lines[$0]) < Key(lines[$0 - 1]) }
            if inOrder, !lines.contains(where: { $0.fileIndex != file }) {
                var r = RelaySession(id: ids.id(k))
                for i in lines.indices { r.take(lines[i]) }
                slots[k].span.cover(lines, lines.indices)
                slots[k].lines = Analyzer.lineCount(lines)
                slots[k].firstKey = Key(lines[0])
                r.spill(lines, to: spill)
                slots[k].done = r.writeRecord(to: spill)
                closedEarly += 1
                // The lines just spilled were freed among the reading threads' live ones: their
                // pages go back now and then, or memory would follow the lines read after all.
                if closedEarly % 1024 == 0 { releaseFreedMemory() }
                return
            }
        }
        slots[k].raw.append(spill.write(lines))
        slots[k].dirty = true
    }

    /// The slot of `e`'s session, made on its first line.
    private func slot(of e: Event) -> Int {
        var id = e.attr("session")!
        return id.withUTF8 { bytes in
            if let k = ids.find(bytes) { return k }
            ids.insert(bytes)
            slots.append(Slot())
            return slots.count - 1
        }
    }

    /// Journald times and full timestamps with a zone: their instants, line by line (the
    /// bundle's references change nothing for them).
    private static func resolve(_ lines: inout [Event]) {
        var resolver = FileTimeResolver(reference: nil, date: nil, today: (1970, 1, 1))
        for i in lines.indices where lines[i].parsedTime?.isSelfContained == true { resolver.resolve(&lines, i..<i + 1) }
    }

    /// What the relay side adds to the report.
    struct Result {
        var sessions: [RelaySession] = []
        var span = Analyzer.TimeSpan()
        /// Lines kept (after the window), and those the window removed.
        var lines = 0
        var filteredOut = 0
    }

    /// The relay sessions, in the order of their first lines. `held`: relay lines with a
    /// session resolved with the bundle (in time order); `window`: `--since` / `--until`;
    /// `display`: the zone relay lines are shown in.
    func finish(held: inout [Event], window: (Int64?, Int64?), display: RelayDisplay) -> Result {
        held.drain { e in
            let k = slot(of: e)
            slots[k].open.append(e)
            slots[k].dirty = true
        }
        var out = Result()
        var made: [RelaySession] = []
        var keys: [Key] = []
        made.reserveCapacity(slots.count)
        keys.reserveCapacity(slots.count)
        for k in slots.indices {
            var slot = Slot()
            swap(&slot, &slots[k])
            if !slot.dirty, slot.open.isEmpty, let record = slot.done, let spill, let key = slot.firstKey {
                out.span.merge(slot.span)
                out.lines += slot.lines
                var r = RelaySession(record: record, in: spill)
                r.display = display
                r.applyDisplay()
                made.append(r)
                keys.append(key)
                continue
            }
            var lines = slot.done.map { RelaySession(record: $0, in: spill!).events } ?? []
            slot.done = nil
            for c in slot.raw { lines += spill!.read(c) }
            lines += slot.open
            slot.open = []
            Self.resolve(&lines)
            if lines.indices.dropFirst().contains(where: { Key(lines[$0]) < Key(lines[$0 - 1]) }) {
                lines.sort { Key($0) < Key($1) }
            }
            // A relay line names its session, so both copies of a line two files hold are
            // lines of one session: deduped here as the bundle's lines are.
            Analyzer.dedupe(&lines)
            out.span.cover(lines, lines.indices)
            out.filteredOut += Analyzer.applyWindow(&lines, window)
            guard !lines.isEmpty else { continue }
            out.lines += Analyzer.lineCount(lines)
            var r = RelaySession(id: ids.id(k))
            for i in lines.indices { r.take(lines[i]) }
            let key = Key(lines[0])
            if let spill {
                r.spill(lines, to: spill)
            } else {
                r.events = lines
                r.finishHeld()
            }
            r.display = display
            r.applyDisplay()
            made.append(r)
            keys.append(key)
        }
        slots = []
        ids = IdTable()
        if keys.indices.dropFirst().contains(where: { keys[$0] < keys[$0 - 1] }) {
            // Put in order in place (a rotated journal's older file is often read second): a
            // sorted copy would hold every session twice.
            var from = keys.indices.sorted { keys[$0] < keys[$1] }
            for i in from.indices where from[i] >= 0 {
                var j = i
                while from[j] != i {
                    let k = from[j]
                    made.swapAt(j, k)
                    from[j] = -1
                    j = k
                }
                from[j] = -1
            }
        }
        out.sessions = made
        return out
    }
}

/// The zone relay lines are shown in: their own (UTC for journald), the phone's, or the one
/// `--utc` / `--timezone` asks for.
enum RelayDisplay: Sendable {
    case own
    case phone(Int)
    case option(DisplayZone)

    func apply(_ e: inout Event) {
        switch self {
        case .own: break
        case .phone(let offset): e.displayOffset = offset
        case .option(let zone): if let t = e.time { e.displayOffset = zone.offset(at: t) }
        }
    }
}

/// Byte strings numbered in the order they were added, kept in one buffer and found by an
/// open-addressing table of their hashes.
struct IdTable {
    private var bytes: [UInt8] = []
    private var starts: [Int] = [0]
    private var table = [Int32](repeating: -1, count: 64)
    private var hashes = [UInt64](repeating: 0, count: 64)

    var count: Int { starts.count - 1 }

    /// The string numbered `k`.
    func id(_ k: Int) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: $0[starts[k]..<starts[k + 1]], as: UTF8.self) }
    }

    func find(_ key: UnsafeBufferPointer<UInt8>) -> Int? {
        let h = Self.hash(key)
        let mask = table.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        while table[i] >= 0 {
            let k = Int(table[i])
            if hashes[i] == h, starts[k + 1] - starts[k] == key.count,
                key.isEmpty || bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress! + starts[k], key.baseAddress!, key.count) == 0 })
            {
                return k
            }
            i = (i &+ 1) & mask
        }
        return nil
    }

    /// Adds `key` (not in the table) as number `count`.
    mutating func insert(_ key: UnsafeBufferPointer<UInt8>) {
        if (count + 1) * 2 > table.count { grow() }
        place(Self.hash(key), Int32(count))
        bytes.append(contentsOf: key)
        starts.append(bytes.count)
    }

    private mutating func place(_ h: UInt64, _ k: Int32) {
        let mask = table.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        while table[i] >= 0 { i = (i &+ 1) & mask }
        table[i] = k
        hashes[i] = h
    }

    private mutating func grow() {
        let old = zip(table, hashes).filter { $0.0 >= 0 }
        table = [Int32](repeating: -1, count: table.count * 2)
        hashes = [UInt64](repeating: 0, count: hashes.count * 2)
        for (k, h) in old { place(h, k) }
    }

    /// FNV-1a.
    static func hash(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in key { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }
}

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
    /// A session not made yet (open, or to be made at the end), or touched again after it was.
    private struct Live {
        var id: String
        /// Lines read since it was last closed (reading order; times not resolved yet).
        var open: [Event] = []
        /// Lines spilled as read, to be made at the end.
        var raw: [EventSpill.Chunk] = []
        /// Needs the whole treatment at the end.
        var dirty = false
    }

    /// The order of the whole-bundle path: time, then file, then reading order.
    struct Key: Comparable {
        var time: Int64
        var file: Int
        var order: Int
        init(_ e: Event) { (time, file, order) = Analyzer.orderKey(e) }
        init(time: Int64, file: Int, order: Int) { (self.time, self.file, self.order) = (time, file, order) }
        static func < (a: Key, b: Key) -> Bool { (a.time, a.file, a.order) < (b.time, b.file, b.order) }
    }

    /// Lines at most held per open session: a session that never closes (a relay that died,
    /// a journal cut short) spills them, and is made at the end.
    static let maxOpenLines = 1024

    /// Made when the first session closes; nil when no temporary file can be made (the lines
    /// are then held, as the whole-bundle path holds them). Its lines, and their records.
    private lazy var spill: EventSpill? = EventSpill()
    private lazy var records: EventSpill? = EventSpill()
    /// The sessions made at their close, one `RelaySessionList.Entry` after another, in the order
    /// they were made: read back at the end (the list that grows while reading is on disk).
    private lazy var entryFile: EventSpill? = EventSpill()
    private var entryCount = 0
    /// Those made again at the end (touched after their close): their first entry is dropped.
    private var remade = Set<Int32>()
    /// Where the lines of a session to be made at the end lie (closed while touched again,
    /// from several files or out of order, or in a window), in reading order: 24 bytes a
    /// stretch, instead of a live session's id and list (touched again, the export beside the
    /// journal, and `--since` make every session one).
    private struct Parked: BitwiseCopyable {
        var session: Int32
        var count: Int32
        var offset: Int64
        var length: Int64
        var chunk: EventSpill.Chunk { EventSpill.Chunk(offset: offset, length: Int(length), count: Int(count)) }
    }
    /// Written to a file of their own while reading (as the entries are), read back at the end.
    private lazy var parkedFile: EventSpill? = EventSpill()
    private var parkedCount = 0
    /// A time window is set: no session is made before the end (the window needs the zone).
    private let windowed: Bool
    /// Sessions by the hash of their id, numbered in the order of their first lines. Only a
    /// live session keeps its id in memory; a made one's is in its record.
    private var index = SessionIndex()
    /// Each session's made entry in `entryFile`, else -2 - its first stretch in `parkedFile`, else -1;
    /// its place in `lives`, or -1.
    private var entryOf: [Int32] = []
    private var liveOf: [Int32] = []
    /// Each session's first `accepted` and latest `closed` times (`Int64.max` / `Int64.min`:
    /// none yet), and the session that had its id before it (-1: none): an id used again
    /// (`RelayJoiner.reuses`) is a chain of sessions, newest first in the index.
    private var acceptedAt: [Int64] = []
    private var closedAt: [Int64] = []
    private var previous: [Int32] = []
    private var superseded: [Bool] = []
    /// Live sessions, and the places in it that are free.
    private var lives: [Live] = []
    private var freeLives: [Int32] = []
    /// The lines of those made at their close, and their span.
    private var closedLines = 0
    private var closedSpan = Analyzer.TimeSpan()
    /// Lines taken in all (a journal read in stretches that met damage is read again when any was).
    private(set) var taken = 0
    /// Lines given to `hold`.
    private(set) var held = 0
    /// Sessions closed (made or parked), for `spilledAClose`.
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
        if e.kind == "relay.accepted", let t = Self.instant(e) { acceptedAt[Int(k)] = min(acceptedAt[Int(k)], t) }
        let v = Int(liveOf[Int(k)])
        // A `stats` line right after another of its session in the same file continues its
        // run (as `EventCompactor` folds it for the lines held with the bundle's).
        if e.kind == "relay.stats", let last = lives[v].open.indices.last, lives[v].open[last].kind == "relay.stats",
            lives[v].open[last].fileIndex == e.fileIndex
        {
            EventCompactor.fold(e, into: &lives[v].open[last])
            return
        }
        lives[v].open.append(e)
        if e.kind == "relay.closed" {
            if let t = Self.instant(e) { closedAt[Int(k)] = max(closedAt[Int(k)], t) }
            close(k)
        } else if lives[v].open.count >= Self.maxOpenLines, let spill {
            // (its last line stays: a `stats` run goes on folding into it)
            let chunk = lives[v].open.withUnsafeBufferPointer { spill.write(UnsafeBufferPointer(rebasing: $0.dropLast())) }
            lives[v].raw.append(chunk)
            lives[v].open = [lives[v].open[lives[v].open.count - 1]]  // (not the capacity of 1,024)
            lives[v].dirty = true
        }
    }

    /// Makes session `k` live (its first line, or a line after it was made).
    private func makeLive(_ k: Int32, _ l: Live) {
        if let v = freeLives.popLast() {
            lives[Int(v)] = l
            liveOf[Int(k)] = v
        } else {
            liveOf[Int(k)] = Int32(lives.count)
            lives.append(l)
        }
    }

    /// Session `k` is live no more: its `Live`, taken out.
    private func takeLive(_ k: Int32) -> Live {
        let v = liveOf[Int(k)]
        var l = Live(id: "")
        swap(&l, &lives[Int(v)])
        liveOf[Int(k)] = -1
        freeLives.append(v)
        return l
    }

    private func close(_ k: Int32) {
        guard let spill, let records, let entryFile, let parkedFile else { return }
        var l = takeLive(k)
        var lines = l.open
        l.open = []
        if !windowed, !l.dirty, entryOf[Int(k)] < 0, l.raw.isEmpty {
            Self.resolve(&lines)
            let file = lines[0].fileIndex
            let inOrder = !lines.indices.dropFirst().contains { Key(lines[$0]) < Key(lines[$0 - 1]) }
            if inOrder, !lines.contains(where: { $0.fileIndex != file }) {
                var r = RelaySession(id: l.id)
                for i in lines.indices { r.take(lines[i]) }
                closedSpan.cover(lines, lines.indices)
                let n = Analyzer.lineCount(lines)
                closedLines += n
                r.spill(lines, to: spill)
                entryOf[Int(k)] = Int32(entryCount)
                entryFile.appendPlain(RelaySessionList.Entry(r, record: r.writeRecord(to: records), key: Key(lines[0]), lines: n))
                entryCount += 1
                spilledAClose()
                return
            }
        }
        // To be made at the end: its stretches parked, the session live no more.
        park(k, l, lines, spill, parkedFile)
        spilledAClose()
    }

    /// Session `k`, taken out of `lives` (`l`), is made at the end: its stretches spilled and
    /// before, and `lines` (its lines in memory), parked.
    private func park(_ k: Int32, _ l: Live, _ lines: [Event], _ spill: EventSpill, _ parkedFile: EventSpill) {
        var raw = l.raw
        raw.append(spill.write(lines))
        if entryOf[Int(k)] == -1 { entryOf[Int(k)] = -2 - Int32(parkedCount) }
        for c in raw {
            parkedFile.appendPlain(Parked(session: k, count: Int32(c.count), offset: c.offset, length: Int64(c.length)))
            parkedCount += 1
        }
    }

    /// Relay lines whose times needed the bundle (syslog text without a year), resolved with
    /// it, in reading order (after every line `add` took): made at the end with the whole
    /// treatment, as `finish`'s `held` are, but a session's lines are parked at its `closed`
    /// line (and every `maxOpenLines`) instead of held to the end: memory follows the open
    /// sessions, not the file (100 MB of `journalctl -o short-precise` held 172 MB of lines).
    func hold(_ e: Event) {
        held += 1
        let k = slot(of: e)
        let v = Int(liveOf[Int(k)])
        lives[v].open.append(e)
        lives[v].dirty = true
        guard e.kind == "relay.closed" || lives[v].open.count >= Self.maxOpenLines, let spill, let parkedFile else { return }
        let l = takeLive(k)
        park(k, l, l.open, spill, parkedFile)
        spilledAClose()
    }

    /// The lines just spilled were freed among the reading threads' live ones: their pages go
    /// back now and then, or memory would follow the lines read after all.
    private func spilledAClose() {
        closedEarly += 1
        if closedEarly % 1024 == 0 { releaseFreedMemory() }
    }

    /// The number of `e`'s session, made on its first line; live from here on.
    private func slot(of e: Event) -> Int32 {
        let id = e.attr("session")!
        var bytes = id
        let h = bytes.withUTF8 { SessionIndex.hash($0) }
        var before: Int32 = -1
        if let newest = index.find(h, where: { !superseded[Int($0)] && sameId($0, id) }) {
            // Of the sessions under this id, the last to begin at or before the line (a copy
            // of an earlier session's lines, an export beside the journal, read after a later
            // session took the id; the older file of a rotated pair read second).
            // (the line's instant only where it decides: most lines of most ids need none)
            let accepted = e.kind == "relay.accepted"
            let t = accepted || previous[Int(newest)] >= 0 ? Self.instant(e) : nil
            var k = newest
            if let t, previous[Int(newest)] >= 0 {
                var (best, earliest, c): (Int32, Int32, Int32) = (-1, newest, newest)
                while c >= 0 {
                    let a = acceptedAt[Int(c)]
                    if a != .max, a <= t, best < 0 || a > acceptedAt[Int(best)] { best = c }
                    if a < acceptedAt[Int(earliest)] { earliest = c }
                    c = previous[Int(c)]
                }
                k = best >= 0 ? best : earliest
            }
            // (an `accepted` outside that session's span, and not its own copy: another session)
            let other = accepted && t.map { t in
                acceptedAt[Int(k)] != .max && t != acceptedAt[Int(k)]
                    && (t < acceptedAt[Int(k)] || (closedAt[Int(k)] != .min && t > closedAt[Int(k)]))
            } == true
            if !other {
                if liveOf[Int(k)] < 0 { makeLive(k, Live(id: id, dirty: true)) }  // touched again after it was made
                return k
            }
            superseded[Int(newest)] = true
            before = newest
        }
        let k = Int32(entryOf.count)
        index.insert(h, k)
        entryOf.append(-1)
        liveOf.append(-1)
        acceptedAt.append(.max)
        closedAt.append(.min)
        previous.append(before)
        superseded.append(false)
        makeLive(k, Live(id: id))
        return k
    }

    /// A line's instant, from its own time (journald's, or a full timestamp with a zone).
    private static func instant(_ e: Event) -> Int64? {
        guard let t = e.parsedTime, t.isSelfContained else { return e.time }
        return t.instant(defaultYear: 1970, defaultMonth: 1, defaultDay: 1, defaultOffset: 0)
    }

    private func sameId(_ k: Int32, _ id: String) -> Bool {
        if liveOf[Int(k)] >= 0 { return lives[Int(liveOf[Int(k)])].id == id }
        let j = Int(entryOf[Int(k)])
        if j <= -2, let spill, let parkedFile {
            return spill.read(parkedFile.plain(Parked.self, at: -2 - j).chunk).first?.attr("session") == id
        }
        guard j >= 0, let records, let entryFile else { return false }
        return RelaySession.id(ofRecord: entryFile.plain(RelaySessionList.Entry.self, at: j).record, in: records) == id
    }

    /// Journald times and full timestamps with a zone: their instants, line by line (the
    /// bundle's references change nothing for them).
    private static func resolve(_ lines: inout [Event]) {
        var resolver = FileTimeResolver(reference: nil, date: nil, today: (1970, 1, 1))
        for i in lines.indices where lines[i].parsedTime?.isSelfContained == true { resolver.resolve(&lines, i..<i + 1) }
    }

    /// What the relay side adds to the report.
    struct Result {
        var sessions: RelaySessionList = []
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
            let v = Int(liveOf[Int(slot(of: e))])
            lives[v].open.append(e)
            lives[v].dirty = true
        }
        var out = Result()
        out.span = closedSpan
        out.lines = closedLines
        // Made at the end (few, or with a window every one): their entries join the others' in
        // their file. Held when a temporary file could not be made (then none was made at its close).
        let spilled = spill.flatMap { s in records.flatMap { r in entryFile.map { (s, r, $0) } } }
        var made: [(RelaySession, Key)] = []
        index = SessionIndex()
        // Each session's parked stretches, in reading order.
        var parked = parkedFile?.readPlain(Parked.self, count: parkedCount) ?? []
        var byParked = [Int32](unsafeUninitializedCapacity: parked.count) { b, n in
            for i in parked.indices { b[i] = Int32(i) }
            n = parked.count
        }
        byParked.sort { (parked[Int($0)].session, $0) < (parked[Int($1)].session, $1) }
        var next = 0
        for k in entryOf.indices.lazy.map(Int32.init) {
            let hasParked = next < byParked.count && parked[Int(byParked[next])].session == k
            guard hasParked || liveOf[Int(k)] >= 0 else { continue }
            var lines: [Event] = []
            let j = Int(entryOf[Int(k)])
            if j >= 0, let (spill, records, entryFile) = spilled {
                // Made at its close and touched again: made again with every line.
                let first = entryFile.plain(RelaySessionList.Entry.self, at: j)
                lines = RelaySession(record: first.record, in: records, lines: spill).events
                out.lines -= Int(first.lines)
                remade.insert(Int32(j))
            }
            while next < byParked.count, parked[Int(byParked[next])].session == k {
                if let spill { lines += spill.read(parked[Int(byParked[next])].chunk) }
                next += 1
            }
            if liveOf[Int(k)] >= 0 {
                let l = takeLive(k)
                if let spill { for c in l.raw { lines += spill.read(c) } }
                lines += l.open
            }
            // (every line taken here names its session)
            guard let id = lines.first?.attr("session") else { continue }
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
            let n = Analyzer.lineCount(lines)
            out.lines += n
            var r = RelaySession(id: id)
            for i in lines.indices { r.take(lines[i]) }
            let key = Key(lines[0])
            if let (spill, records, entryFile) = spilled {
                r.spill(lines, to: spill)
                entryFile.appendPlain(RelaySessionList.Entry(r, record: r.writeRecord(to: records), key: key, lines: n))
                entryCount += 1
            } else {
                r.events = lines
                r.finishHeld()
                r.display = display
                r.applyDisplay()
                made.append((r, key))
            }
        }
        // (what found the sessions goes before their entries come back)
        (lives, freeLives, liveOf, entryOf, parked, byParked) = ([], [], [], [], [], [])
        (acceptedAt, closedAt, previous, superseded) = ([], [], [], [])
        guard let (spill, records, entryFile) = spilled else {
            made.sort { $0.1 < $1.1 }
            out.sessions = RelaySessionList(made.map(\.0))
            return out
        }
        var entries = entryFile.readPlain(RelaySessionList.Entry.self, count: entryCount)
        if !remade.isEmpty {
            var kept = 0
            for j in entries.indices where !remade.contains(Int32(j)) {
                entries[kept] = entries[j]
                kept += 1
            }
            entries.removeLast(entries.count - kept)
        }
        Self.sortInPlace(&entries)
        out.sessions = RelaySessionList(entries: entries, records: records, lines: spill, display: display)
        return out
    }
}

extension RelayStage {
    /// In the order of their first lines (sessions are made as they close; a rotated journal's
    /// older file may be read second), moved in place: a sorted copy, or a merge sort's
    /// buffer, would hold a relay fleet's sessions twice for a moment.
    static func sortInPlace(_ entries: inout [RelaySessionList.Entry]) {
        guard entries.indices.dropFirst().contains(where: { entries[$0].key < entries[$0 - 1].key }) else { return }
        var from = [Int32](unsafeUninitializedCapacity: entries.count) { b, n in
            for i in 0..<entries.count { b[i] = Int32(i) }
            n = entries.count
        }
        entries.withUnsafeBufferPointer { e in from.sort { e[Int($0)].key < e[Int($1)].key } }
        // Position i takes the entry at from[i]: each cycle of the permutation, once.
        for start in from.indices where from[start] >= 0 {
            let first = entries[start]
            var i = start
            while Int(from[i]) != start {
                let j = Int(from[i])
                entries[i] = entries[j]
                from[i] = -1
                i = j
            }
            entries[i] = first
            from[i] = -1
        }
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

/// Session numbers found by the hash of their ids (open addressing): 8 bytes a slot (the number
/// and 32 bits of the hash, which also give its place), half of them empty at most, whatever the
/// ids' length; `find` asks its caller whether a number with the same bits is the one (the ids
/// are not kept here).
struct SessionIndex {
    private var table = [Int32](repeating: -1, count: 64)
    private var tags = [UInt32](repeating: 0, count: 64)
    private var count = 0

    func find(_ h: UInt64, where same: (Int32) -> Bool) -> Int32? {
        let tag = UInt32(truncatingIfNeeded: h >> 32)
        let mask = table.count - 1
        var i = Int(tag) & mask
        while table[i] >= 0 {
            if tags[i] == tag, same(table[i]) { return table[i] }
            i = (i &+ 1) & mask
        }
        return nil
    }

    /// Adds `k` (not in the table) under `h`.
    mutating func insert(_ h: UInt64, _ k: Int32) {
        if (count + 1) * 2 > table.count { grow() }
        place(UInt32(truncatingIfNeeded: h >> 32), k)
        count += 1
    }

    private mutating func place(_ tag: UInt32, _ k: Int32) {
        let mask = table.count - 1
        var i = Int(tag) & mask
        while table[i] >= 0 { i = (i &+ 1) & mask }
        table[i] = k
        tags[i] = tag
    }

    private mutating func grow() {
        let (oldTable, oldTags) = (table, tags)
        table = [Int32](repeating: -1, count: oldTable.count * 2)
        tags = [UInt32](repeating: 0, count: oldTable.count * 2)
        for i in oldTable.indices where oldTable[i] >= 0 { place(oldTags[i], oldTable[i]) }
    }

    /// FNV-1a.
    static func hash(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in key { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }
}

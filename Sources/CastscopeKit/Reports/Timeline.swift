/// One row of a session timeline: a line, or a run of repeated lines folded into one.
public struct TimelineEntry: Sendable {
    public var time: Int64?
    public var side: Side
    public var kind: String
    public var text: String
    public var count: Int
    public var first: SourceRef
    public var last: SourceRef
    public var timeInferred: Bool
    /// The zone its first line is shown in (lines outside sessions come from several files).
    public var displayOffset = 0
}

/// Folds a session's events into timeline rows: a run of connect attempts and their
/// failures becomes `open socket connection ×37 over 3.9 s, every 104 ms`, a run of
/// the same line becomes `line ×N over T`.
public enum Timeline {
    public static let minimumRun = 3

    /// What makes lines one run: connect lines, frame lines and relay stats each fold
    /// together (per side); any other line only with lines of its kind and message shape
    /// (`MessageShape`: the same words but for those that hold a digit).
    /// Any other line is keyed by its own index: two keys of that group are the same when
    /// their lines' kind and message shape are (compared where the lines lie, no strings held).
    struct FoldKey {
        enum Group { case connect, frames, stats, line(Int) }
        var side: Side
        var group: Group

        func same(_ other: FoldKey, in events: [Event]) -> Bool {
            guard side == other.side else { return false }
            switch (group, other.group) {
            case (.connect, .connect), (.frames, .frames), (.stats, .stats): return true
            case (.line(let a), .line(let b)):
                return events[a].kind == events[b].kind && MessageShape.same(events[a].message, events[b].message)
            default: return false
            }
        }
    }

    /// (Connect and frame lines: the groups `SessionBuilder` folds in a session, so that its
    /// folded events and the lines one by one make the same runs.)
    static func foldKey(_ events: [Event], _ i: Int) -> FoldKey {
        let code = events[i].code
        if SessionBuilder.connectCodes.contains(code) { return FoldKey(side: events[i].side, group: .connect) }
        if SessionBuilder.frameCodes.contains(code) { return FoldKey(side: events[i].side, group: .frames) }
        if code == .relayStats { return FoldKey(side: .relay, group: .stats) }
        return FoldKey(side: events[i].side, group: .line(i))
    }

    /// Runs are per side: a run stays open while the other sides log (device frames and relay
    /// stats interleave), and ends at the next line of its own side that is something else.
    /// So at most one run per side is open: a short list, searched in place. Runs hold indices
    /// into `events` (no copies), and rows are put back in time order by their event's index.
    public static func entries(_ events: [Event]) -> [TimelineEntry] { Array(rows(events)) }

    /// The same rows, each made when it is read: a row of one line (nearly all) is held as its
    /// event's index, 4 bytes, not as a row of strings (a session of 73,000 rows held 23 MB of
    /// them while its report was written). What the report writers use.
    public static func rows(_ events: [Event]) -> TimelineRows {
        let found = refs(events, complete: true)
        return TimelineRows(events: events, refs: found.refs, made: found.made)
    }

    /// The rows of `events` as `TimelineRows` holds them: per row its event's index (a row of
    /// that one line), or -(k + 1) for `made[k]`. Unless `complete` (more lines follow), only
    /// the rows that no later line can change: the rows of the runs that begin before `rest`,
    /// the first line from which a scan begun afresh gives the same runs (no run that began
    /// before it has a line at or after it). The lines from `rest` on are to be handed again,
    /// with those that follow.
    static func refs(_ events: [Event], complete: Bool) -> (refs: [Int32], made: [TimelineEntry], rest: Int) {
        // Each run's first line, and all its lines once it has a second (a run of one line,
        // nearly every run, holds no list of its own).
        var firsts: [Int] = []
        var members: [[Int]] = []
        firsts.reserveCapacity(min(events.count, 64))
        members.reserveCapacity(min(events.count, 64))
        func join(_ r: Int, _ index: Int) {
            if members[r].isEmpty { members[r] = [firsts[r], index] } else { members[r].append(index) }
        }
        // Whether each run is one of lines of one shape (any line but connect, frame and stats
        // lines), which folds only as a storm, else goes back to runs of the same line.
        var byShape: [Bool] = []
        var open: [(side: Side, key: FoldKey, run: Int)] = []
        // By index: `for e in events` would copy every event (a retain and release per string).
        for index in events.indices {
            let key = foldKey(events, index)
            let side = events[index].side
            if let o = open.firstIndex(where: { $0.side == side }) {
                if open[o].key.same(key, in: events) {
                    join(open[o].run, index)
                    continue
                }
                open.remove(at: o)
            }
            // A stats run keys on the relay side whatever side its line says.
            if let o = open.firstIndex(where: { $0.key.same(key, in: events) }) {
                join(open[o].run, index)
                continue
            }
            open.append((side, key, firsts.count))
            firsts.append(index)
            members.append([])
            if case .line = key.group { byShape.append(true) } else { byShape.append(false) }
        }
        // Rows, and the index of the event each comes from (kept apart: rows already in order,
        // nearly all, are returned as they are, not copied out of pairs).
        var out: [Int32] = []
        var made: [TimelineEntry] = []
        var at: [Int] = []
        // Rows are at most one per event but for expanded repeats: room made once, not grown,
        // up to a point (a retry storm's hundreds of thousands of lines fold into a few rows).
        out.reserveCapacity(min(events.count, 4096))
        at.reserveCapacity(min(events.count, 4096))
        func append(_ row: TimelineEntry) {
            made.append(row)
            out.append(Int32(truncatingIfNeeded: -made.count))
        }
        func rows(_ run: ArraySlice<Int>, storm: Set<UInt64>) {
            let lines = events.withUnsafeBufferPointer { ev in run.reduce(0) { $0 + ev[$1].count } }
            // Fold only a run that repeats itself; three different lines stay three rows.
            // (A compacted relay stats run is always folded: its lines' own texts are not kept.)
            if (lines >= minimumRun && (!storm.isEmpty || repeatsItself(run, lines: lines, events)))
                || (events[run[run.startIndex]].code == .relayStats && events[run[run.startIndex]].repeats != nil)
            {
                append(fold(events, run, storm: storm))
                at.append(run[run.startIndex])
                return
            }
            if run.contains(where: { events[$0].linesDiffer }) {
                // A row per line, in the order the lines stood, each placed after the event
                // whose own line comes last before it (where it stood as an event of its own).
                var after = run.startIndex
                forEachLineInPlace(run, events) { key, i, t, line, m in
                    while after + 1 < run.endIndex, !(key < Self.place(events[run[after + 1]])) { after += 1 }
                    let e = events[i]
                    let source = SourceRef(path: e.sourcePath, line: line)
                    append(TimelineEntry(time: t, side: e.side, kind: e.kind, text: m, count: 1, first: source, last: source,
                                         timeInferred: e.timeInferred, displayOffset: e.displayOffset))
                    at.append(run[after])
                }
                return
            }
            for i in run {
                guard events[i].repeats != nil else {
                    // One line (nearly all): one row, its event's index, without a closure per line.
                    out.append(Int32(truncatingIfNeeded: i))
                    at.append(i)
                    continue
                }
                let e = events[i]
                let path = e.sourcePath
                e.forEachLineWithMessage { t, line, message in
                    let source = SourceRef(path: path, line: line)
                    append(TimelineEntry(time: t, side: e.side, kind: e.kind, text: message, count: 1,
                                         first: source, last: source, timeInferred: e.timeInferred, displayOffset: e.displayOffset))
                    at.append(i)
                }
            }
        }
        // Where the runs that later lines may still join, and the runs they overlap, begin.
        var rest = events.count
        if !complete {
            for o in open { rest = min(rest, firsts[o.run]) }
            var moved = true
            while moved {
                moved = false
                for r in firsts.indices where firsts[r] < rest && (members[r].last ?? firsts[r]) >= rest {
                    rest = firsts[r]
                    moved = true
                }
            }
        }
        for r in firsts.indices where firsts[r] < rest {
            // A run of one line that is one line (nearly all): its row is its event's index.
            if members[r].isEmpty, events[firsts[r]].repeats == nil {
                out.append(Int32(truncatingIfNeeded: firsts[r]))
                at.append(firsts[r])
                continue
            }
            let run = members[r].isEmpty ? [firsts[r]] : members[r]
            let storm = storming(run, events)
            guard byShape[r], storm.isEmpty, run.count > 1 else {
                rows(run[...], storm: storm)
                continue
            }
            // Lines of one shape but no storm: runs of the same line, as they always were.
            var from = 0
            for k in 1...run.count where k == run.count || !events.withUnsafeBufferPointer({ $0[run[k]].sameMessage($0[run[k - 1]]) }) {
                rows(run[from..<k], storm: [])
                from = k
            }
        }
        // Back in time order (stable: reading order breaks ties); most sessions' rows already are.
        if !at.indices.dropFirst().contains(where: { at[$0] < at[$0 - 1] }) { return (out, made, rest) }
        return (at.indices.sorted { (at[$0], $0) < (at[$1], $1) }.map { out[$0] }, made, rest)
    }

    /// The rows of the lines outside any session, handed to `body` in order a chunk of lines at
    /// a time (the lines may be on disk: `LinesOutside`): the rows `entries` gives for all of
    /// them, but for a run still open after `carryLimit` lines carried from chunk to chunk,
    /// which is cut there into rows of its own.
    public static func entries(_ lines: LinesOutside, carryLimit: Int = Timeline.carryLimit, _ body: (TimelineEntry) -> Void) {
        var carried: [Event] = []
        lines.forEachChunk { chunk, last in
            carried.append(contentsOf: chunk)
            let found = refs(carried, complete: last || carried.count > carryLimit)
            for r in TimelineRows(events: carried, refs: found.refs, made: found.made) { body(r) }
            carried.removeFirst(found.rest)
        }
    }

    public static let carryLimit = 1 << 14

    /// Whether a run has a line twice (a relay stats run, or a compacted run, always does).
    static func repeatsItself(_ run: ArraySlice<Int>, lines: Int, _ events: [Event]) -> Bool {
        if events[run[run.startIndex]].code == .relayStats { return true }
        if run.contains(where: { events[$0].linesDiffer }) {
            if run.contains(where: { !events[$0].linesDiffer && events[$0].count > 1 }) { return true }
            // Lines that differ, as the events of their own they were (not storming: few texts).
            var seen = Set<String>()
            var twice = false
            forEachMessage(Array(run), events, collapsing: false) { m in if !twice, !seen.insert(m).inserted { twice = true } }
            return twice
        }
        if lines > run.count { return true }
        // Short runs (nearly all) compare messages pairwise instead of hashing each one.
        if run.count <= 8 {
            for a in run.indices {
                for b in (a + 1)..<run.endIndex where events[run[a]].message == events[run[b]].message { return true }
            }
            return false
        }
        // Stops at the first message seen twice (a repeating run shows one early).
        var seen = Set<String>(minimumCapacity: run.count)
        for i in run where !seen.insert(events[i].message).inserted { return true }
        return false
    }

    /// A run's lines of one shape with more than this many texts of their own fold as one: a
    /// storm of lines that each carry a counter or an id (fewer, such as Sendbird's `retries
    /// left: 4` … `0` or `exists=0` / `exists=1`, are told apart as they always were).
    static let stormTexts = 8

    /// The shapes (`MessageShape.hash`) of `run` that have more than `stormTexts` texts.
    static func storming(_ run: [Int], _ events: [Event]) -> Set<UInt64> {
        let differ = run.contains { events[$0].linesDiffer }
        guard run.count > stormTexts || differ else { return [] }
        // Nearly every run has a few texts (interned: equal ones compare at once): counted by
        // comparison, and hashed only past `stormTexts` of them.
        var few: [String] = []
        few.reserveCapacity(stormTexts + 1)
        if differ {
            // (Lines that differ: their messages one by one, as the events of their own they were.)
            forEachMessage(run, events) { m in
                if few.count <= stormTexts, !few.contains(m) { few.append(m) }
            }
        } else {
            for i in run where !few.contains(events[i].message) {
                few.append(events[i].message)
                if few.count > stormTexts { break }
            }
        }
        guard few.count > stormTexts else { return [] }
        var texts = Set<String>()
        var perShape: [UInt64: Int] = [:]
        var storm = Set<UInt64>()
        forEachMessage(run, events) { m in
            // A shape known to storm needs its texts no more (a counter's million texts).
            let h = MessageShape.hash(m)
            guard !storm.contains(h), texts.insert(m).inserted else { return }
            perShape[h, default: 0] += 1
            if perShape[h]! > stormTexts {
                storm.insert(h)
                texts = texts.filter { MessageShape.hash($0) != h }
            }
        }
        return storm
    }

    /// Each line of `run`'s events in the order they stood as events of their own (time, then
    /// reading order: `Event.forEachLinePlace`, as the ClickHouse rows and the digest take
    /// them), merged (`LineOrder`): (its event, time, number, message).
    /// An event `whole` picks is given once, at its first line's place, with line number −1.
    static func forEachLineInPlace(_ run: ArraySlice<Int>, _ events: [Event], whole: (Int) -> Bool = { _ in false },
                                   _ body: (LineKey, Int, Int64?, Int, String) -> Void)
    {
        typealias Line = (slot: Int, time: Int64?, line: Int)
        var cursors: [LineOrder.Cursor<Line>] = []
        // Each run's messages, taken as the merge comes to its lines (in order within a run),
        // by the event's place in `run`.
        var messages: [LineTexts.Cursor?] = []
        let indices = Array(run)
        for (slot, i) in indices.enumerated() {
            messages.append(events[i].repeats?.texts.map { events[i].lineMessages($0) })
            if whole(i) {
                let head: (LineKey, Line) = (place(events[i]), (slot: slot, time: events[i].time, line: -1))
                cursors.append { AnyIterator(CollectionOfOne(head).makeIterator()) }
                continue
            }
            cursors.append {
                let places = events[i].linePlaces()
                return AnyIterator {
                    guard let (t, line, p) = places.next() else { return nil }
                    return (LineKey(a: p.time, b: Int64(p.order), c: Int64(p.k), d: 0), (slot, t, line))
                }
            }
        }
        LineOrder.merge(cursors) { key, l in
            let i = indices[l.slot]
            let m = messages[l.slot] != nil ? messages[l.slot]!.nextMessage()! : events[i].message
            body(key, i, l.time, l.line, m)
        }
    }

    /// Where an event's first line stood.
    static func place(_ e: Event) -> LineKey { LineKey(a: e.time ?? Int64.min, b: Int64(e.order), c: 0, d: 0) }

    /// The messages of `run`'s events, those of an event whose lines differ line by line.
    /// (Collapsing, a message the same as the one before it is given once: which texts and
    /// shapes a run has does not change with repeats.)
    static func forEachMessage(_ run: [Int], _ events: [Event], collapsing: Bool = true, _ body: (String) -> Void) {
        var previous: String?
        for i in run {
            if events[i].linesDiffer {
                events[i].forEachLineMessage { m in
                    if !collapsing || previous != m { body(m) }
                    previous = m
                }
            } else {
                if !collapsing || previous != events[i].message { body(events[i].message) }
                previous = events[i].message
            }
        }
    }

    /// One row for the run `events[run]` (indices: iterating copies of the events would
    /// retain and release every string of each).
    static func fold(_ events: [Event], _ run: ArraySlice<Int>, storm: Set<UInt64> = []) -> TimelineEntry {
        if events[run[run.startIndex]].code == .relayStats { return foldStats(run.lazy.map { events[$0] }) }
        // Count each distinct message, in order of first appearance (kept apart: texts, counts,
        // times, so that each list is appended to where it lies); the lines of a shape that
        // storms (`storming`) count as one message, its words that vary shown as ranges.
        var texts: [String] = []
        // The texts of a storming shape, by their group's number (none for other runs).
        var shapes: [Int: MessageShape.Fold] = [:]
        var counts: [Int] = []
        var timesOf: [Gaps] = []
        // Past a few texts, found by hash instead of one comparison per text.
        var byText: [String: Int] = [:]
        var byShape: [UInt64: Int] = [:]
        var last = -1
        // The place of `message` among the texts (made when new).
        func slot(_ message: String) -> Int {
            // A loop, not `firstIndex(where:)`: its closure took the message per comparison.
            var k = -1
            if last >= 0 && texts[last] == message {
                k = last
            } else if !storm.isEmpty, case let h = MessageShape.hash(message), storm.contains(h) {
                if let j = byShape[h], MessageShape.same(texts[j], message) { k = j }
                if k < 0, byShape[h] == nil {
                    k = texts.count
                    byShape[h] = k
                    shapes[k] = MessageShape.Fold(message)
                    texts.append(message)
                    counts.append(0)
                    timesOf.append(Gaps())
                }
            }
            if k < 0 {
                if texts.count <= 8 {
                    for j in texts.indices where texts[j] == message {
                        k = j
                        break
                    }
                } else {
                    k = byText[message] ?? -1
                }
            }
            if k < 0 {
                texts.append(message)
                counts.append(0)
                timesOf.append(Gaps())
                k = texts.count - 1
                if texts.count == 9 {
                    for j in texts.indices { byText[texts[j]] = j }
                } else if texts.count > 9 {
                    byText[message] = k
                }
            } else if !shapes.isEmpty, shapes[k] != nil {
                shapes[k]!.see(message)
            }
            last = k
            return k
        }
        /// Every line of event `i`, at once: its message's count and times.
        func addWhole(_ i: Int) {
            let k = slot(events[i].message)
            // Moved out while the closure appends (a list per line, or appending through
            // `timesOf[k]` in the closure, cost an allocation or a uniqueness check per line).
            var times = Gaps()
            swap(&times, &timesOf[k])
            // Room for the event's lines at once (grown from one gap a run of 180 lines was
            // copied eight times).
            if times.count == 0 { times.reserveCapacity(events[i].count) }
            var count = 0
            // Through a buffer pointer, and the times by the fields they come from: a method
            // called on an element of the array (`forEachTime`, `count`) copied the whole event.
            events.withUnsafeBufferPointer { ev in
                Event.forEachTimeAndLine(repeats: ev[i].repeats, time: ev[i].time, line: ev[i].line) { t, _ in
                    count += 1
                    if let t { times.add(t) }
                }
            }
            swap(&times, &timesOf[k])
            counts[k] += count
        }
        if run.contains(where: { events[$0].linesDiffer }) || (!storm.isEmpty && run.contains(where: { events[$0].foldsLines })) {
            // Lines that differ inside one event, or a storm's texts counted as one that
            // come from runs folded as the session was built (whose lines interleave with
            // the run's other events): every line of the run as the event of its own it was,
            // in the order they stood (texts are counted in order of first appearance, a
            // shape's fold sees them in order, times go in in order: a run's lines taken at
            // once put the storm's gaps out of order). A line that says what the line before
            // it said is counted with it: seen again, a shape's fold would not change.
            // The last few messages and their places (lines of two or three kinds take turns:
            // a writable note, a chunk), and the text each storming shape last saw (seeing it
            // again changes nothing: only another text is shown to the shape's fold).
            var recent: [(message: String, k: Int)] = []
            var lastSeen: [Int: String] = [:]
            // A run of one text that no storm takes (a writable note between chunks), whose
            // text no other event of the run has after its first line (the run's first lines,
            // events of their own before the fold began, come before it), is counted whole
            // where its first line stood: its lines change nothing but their own text's count
            // and gaps, in order.
            var holders: [String: [Int]] = [:]
            for i in run where !events[i].linesDiffer { holders[events[i].message, default: []].append(i) }
            let whole = { (i: Int) -> Bool in
                guard events[i].repeats != nil, !events[i].linesDiffer,
                    storm.isEmpty || !storm.contains(MessageShape.hash(events[i].message))
                else { return false }
                let head = place(events[i])
                return holders[events[i].message]!.allSatisfy { j in j == i || (events[j].repeats == nil && place(events[j]) < head) }
            }
            forEachLineInPlace(run, events, whole: whole) { _, i, t, line, m in
                if line < 0 { return addWhole(i) }
                var k = -1
                for r in recent where r.message == m {
                    k = r.k
                    break
                }
                if k >= 0 {
                    last = k
                    if !shapes.isEmpty, shapes[k] != nil, lastSeen[k] != m {
                        shapes[k]!.see(m)
                        lastSeen[k] = m
                    }
                } else {
                    k = slot(m)
                    if shapes[k] != nil { lastSeen[k] = m }
                    if recent.count == 4 { recent.removeFirst() }
                    recent.append((m, k))
                }
                counts[k] += 1
                if let t { timesOf[k].add(t) }
            }
        } else {
            for i in run { addWhole(i) }
        }
        // The row's text, written as bytes: `text ×N over D, every G; …`.
        var text = OutputBuffer(capacity: 256)
        for k in texts.indices {
            if k > 0 { text.append("; ") }
            if !shapes.isEmpty, let shape = shapes[k] { shape.write(into: &text) } else { text.append(texts[k]) }
            text.append(" ×")
            text.int(counts[k])
            let times = timesOf[k]
            if let a = times.first, let b = times.last, let gap = times.intervals {
                text.append(" over ")
                text.duration(b - a)
                if gap.median > 0 {
                    text.append(", every ")
                    text.duration(gap.median)
                } else if b > a {
                    // Whole-second timestamps: many lines share one; say the rate instead.
                    text.append(", ")
                    text.decimal(Double(times.count - 1) / (Double(b - a) / 1e6), 1)
                    text.append("/s")
                }
            }
        }
        let first = run[run.startIndex]
        // The lines counted above (`count` read through the array copied each event).
        return events.withUnsafeBufferPointer { ev in
            TimelineEntry(time: ev[first].time, side: ev[first].side, kind: ev[first].kind,
                          text: text.string, count: counts.reduce(0, +),
                          first: ev[first].source, last: ev[run[run.endIndex - 1]].lastSource,
                          timeInferred: run.contains { ev[$0].timeInferred }, displayOffset: ev[first].displayOffset)
        }
    }
}

extension Timeline {
    /// `relay stats ×20 over 19.0 s, every 1.0 s: 200 frames, 10.0 fps (min 9.0), 0 dropped`
    static func foldStats<Run: BidirectionalCollection>(_ run: Run) -> TimelineEntry where Run.Element == Event {
        var times: [Int64] = []
        var frames = 0
        var dropped = 0
        var fps: [Double] = []
        for e in run {
            e.forEachStat { t, _, f, r, d in
                if let t { times.append(t) }
                frames += f
                dropped += d
                fps.append(r)
            }
        }
        var text = "relay stats ×\(fps.count)"
        if let a = times.first, let b = times.last, let gap = intervals(times) {
            text += " over \(Fmt.duration(b - a)), every \(Fmt.duration(gap.median))"
        }
        text += ": \(frames) frames"
        if !fps.isEmpty {
            let mean = fps.reduce(0, +) / Double(fps.count)
            text += ", \(Fmt.decimal(mean, 1)) fps (min \(Fmt.decimal(fps.min()!, 1)))"
        }
        text += ", \(dropped) dropped"
        let first = run.first!
        return TimelineEntry(time: first.time, side: first.side, kind: first.kind, text: text, count: fps.count,
                             first: first.source, last: run.last!.lastSource, timeInferred: false, displayOffset: first.displayOffset)
    }
}

/// A session's timeline rows (`Timeline.rows`), each made as it is read: a row of one line is its
/// event's index into `events` (shared, not copied), any other row (a folded run, a line of a run
/// whose lines differ) is made once and held. Read each row once (`for t in rows`, or
/// `let t = rows[i]`): a row of one line is built anew at each read.
public struct TimelineRows: RandomAccessCollection {
    let events: [Event]
    let refs: [Int32]
    let made: [TimelineEntry]

    public var startIndex: Int { 0 }
    public var endIndex: Int { refs.count }

    public subscript(i: Int) -> TimelineEntry {
        let r = Int(refs[i])
        if r < 0 { return made[-r - 1] }
        return events.withUnsafeBufferPointer { ev in
            let source = ev[r].source
            return TimelineEntry(time: ev[r].time, side: ev[r].side, kind: ev[r].kind, text: ev[r].message, count: 1,
                                 first: source, last: source, timeInferred: ev[r].timeInferred, displayOffset: ev[r].displayOffset)
        }
    }
}

/// Sessions built while a one-file bundle is still being read, so that memory holds the open
/// sessions and about one range of lines, not every line of the file (issue 15).
///
/// A big text file's ranges are taken in file order as they are read (`ResultSlots`); their
/// events come here, to a thread of their own, and go through what the whole-bundle path
/// does to every line at once: times resolved (`FileTimeResolver`, from the file's first
/// complete time, which the first ranges give), the zone counted (`DisplayZoneChoice`),
/// extension streams learned, the lines put in time order, then fed to the `SessionStage`.
/// Lines are fed once a later range has begun past them: a range's lines may run back in time
/// (a log's few out-of-order lines) as far as the start of the range before it.
///
/// It gives up — and `analyze` reads the bundle again the whole-bundle way, with the same
/// result as if it had not tried — when that would not give the whole-bundle result: relay
/// lines (the join needs every session), a line earlier than one already fed, or anything
/// that is not one text file's ranges.
final class StreamedRead: @unchecked Sendable {
    /// A class: handed from thread to thread, it is the reference to it that is copied, and the
    /// list it holds stays the only reference to its events (a copy of a struct holding the
    /// list, somewhere on the way, made the thread that takes it copy every event of it to
    /// resolve their times in place).
    final class Batch {
        var events: [Event]
        let firstComplete: ParsedTime?
        let fileIndex: Int
        let path: String
        init(events: consuming [Event], firstComplete: ParsedTime?, fileIndex: Int, path: String) {
            self.events = events
            self.firstComplete = firstComplete
            self.fileIndex = fileIndex
            self.path = path
        }
    }

    let stage: SessionStage
    private let date: (year: Int, month: Int, day: Int)?
    private let today: (Int, Int, Int)
    /// Called with the file's path before its first line is fed.
    private let willStart: (String) -> Void
    private var pipe: OrderedPipe<Batch, Batch>?
    private var fileIndex: Int?
    private(set) var started = false

    private(set) var resolver: FileTimeResolver?
    /// Lines waiting for the file's first complete time.
    private var unresolved: [Event] = []
    /// Lines in time order, not fed yet.
    private var held: [Event] = []
    private var lastFed: (Int64, Int)?
    /// The most lines one range gave (the lines held wait for about one range).
    private var largestRange = 0
    /// Lines held past this (and past three ranges' worth) end the attempt: the file's clock
    /// goes back far (rotated files joined newest first, a log pasted twice), so nothing can be
    /// fed until its end, and the whole-bundle read holds them on disk instead. (Held here,
    /// 4.3 M lines whose clock went back 56,000 times took 522 MB.)
    var mostHeld = 1 << 17

    private(set) var zone: DisplayZoneChoice
    private(set) var lines = 0
    private(set) var span = Analyzer.TimeSpan()
    private(set) var sawUnzoned = false

    private let lock = NSLockLite()
    private var why: String?

    init(stage: SessionStage, date: (year: Int, month: Int, day: Int)?, today: (Int, Int, Int), zone: DisplayZone?,
         willStart: @escaping (String) -> Void)
    {
        self.stage = stage
        self.date = date
        self.today = today
        self.zone = DisplayZoneChoice(option: zone)
        self.willStart = willStart
        // Two ranges wait at most: the readers stop when sessions are built more slowly.
        pipe = OrderedPipe(capacity: 2, maxWeight: Int.max, weigh: { _ in 1 }) { [unowned self] b in self.take(b) }
    }

    /// Why it gave up, or nil.
    var abandoned: String? { lock.locked { why } }

    /// Why it gives up at relay lines.
    static let relayLines = "relay lines (the join needs every session)"

    func giveUp(_ reason: String) {
        lock.locked { if why == nil { why = reason } }
    }

    /// One range's events, in file order (called by the readers, one at a time).
    func put(_ b: Batch) {
        guard abandoned == nil else { return }
        pipe?.put(b)
    }

    private func take(_ b: Batch) {
        guard abandoned == nil else { return }
        FreedMemory.watch()
        // Moved out of the batch: the list is then not shared, and is changed in place.
        var events: [Event] = []
        swap(&events, &b.events)
        if let f = fileIndex, f != b.fileIndex { return giveUp("more than one file") }
        if fileIndex == nil {
            fileIndex = b.fileIndex
            willStart(b.path)
            started = true
        }
        if resolver == nil {
            guard let reference = b.firstComplete else {
                // (a relay's year-less lines were read to the file's end before this gave up:
                // 170 MB for 100 MB of `journalctl -o short-precise`)
                if events.contains(where: { $0.side == .relay }) { return giveUp(Self.relayLines) }
                unresolved.append(contentsOf: events)
                return
            }
            resolver = FileTimeResolver(reference: reference, date: date, today: today)
            if !unresolved.isEmpty {
                events = unresolved + events
                unresolved = []
            }
        }
        add(&events, last: false)
    }

    /// Resolves, learns and orders `events` (the next in the file), and feeds the lines no
    /// later one can precede (all of them when `last`).
    private func add(_ events: inout [Event], last: Bool) {
        resolver!.resolve(&events, events.indices)
        var bound = Int64.max
        for i in events.indices {
            if events[i].side == .relay { return giveUp(Self.relayLines) }
            if events[i].displayOffset == Fmt.unzoned { sawUnzoned = true }
            let t = events[i].time ?? Int64.min
            if let (ft, fo) = lastFed, (t, events[i].order) < (ft, fo) {
                return giveUp("a line earlier than lines of a range before it")
            }
            bound = min(bound, t)
            lines += events[i].count
        }
        largestRange = max(largestRange, events.count)
        span.cover(events, events.indices)
        zone.see(&events, events.indices)
        stage.learn(events)
        let before: (Event, Event) -> Bool = { ($0.time ?? Int64.min, $0.order) < ($1.time ?? Int64.min, $1.order) }
        // The held lines earlier than every line of this range (most often all of them: the
        // range before's) go first, fed from where they are: merged with the range first, they
        // were copied behind it or it behind them, then the range moved back down over them, a
        // whole range's events moved twice per range.
        var n = 0
        while n < held.count, (held[n].time ?? Int64.min) < bound { n += 1 }
        if !last, held.count - n + events.count > max(mostHeld, 3 * largestRange) {
            return giveUp("\(held.count - n + events.count) lines held for lines earlier than them (the clock goes back)")
        }
        if n > 0 {
            lastFed = (held[n - 1].time ?? Int64.min, held[n - 1].order)
            stage.feed(&held, 0..<n)
            held.removeFirst(n)
        }
        // The shorter list is copied into the longer (the other's events move with their
        // buffer): most often none are left to go before a whole range's.
        if held.count < events.count {
            if !held.isEmpty { events.insert(contentsOf: held, at: 0) }
            swap(&held, &events)
        } else {
            held.append(contentsOf: events)
        }
        events = []
        if held.indices.dropFirst().contains(where: { before(held[$0], held[$0 - 1]) }) { held.sort(by: before) }
        // What is left is this range's lines and those as late: none earlier than `bound`.
        guard last, !held.isEmpty else { return }
        lastFed = (held[held.count - 1].time ?? Int64.min, held[held.count - 1].order)
        stage.feed(&held, held.indices)
        held.removeAll()
    }

    /// After the last range: feeds what is left and finishes the sessions. False when it gave
    /// up (the sessions handed on so far are finished, and nothing is kept).
    func finish(into report: inout AnalysisReport) -> Bool {
        pipe?.finish()
        pipe = nil
        if abandoned == nil {
            if resolver == nil { resolver = FileTimeResolver(reference: nil, date: date, today: today) }
            var rest = unresolved
            unresolved = []
            add(&rest, last: true)
        }
        guard abandoned == nil else {
            held = []
            stage.abandon()
            return false
        }
        stage.finish(into: &report)
        return true
    }
}

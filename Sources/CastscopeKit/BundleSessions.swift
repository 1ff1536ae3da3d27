/// From a bundle's events, read, to its device sessions: times resolved, the report's zone,
/// duplicates dropped, the time window, time order, and the session stage. The bundle's events
/// are either in memory or, for a big bundle with a sink for its sessions, held on disk
/// (`HeldEvents`): then every step goes a chunk at a time, the sort as runs merged, and memory
/// follows the sessions open, not the size of the bundle. Both give the same report (a test
/// compares them on every sample and real log).
struct BuiltSessions {
    var stage: SessionStage
    /// Relay lines left for the join (those the `RelayStage` did not take).
    var relayEvents: [Event]
    /// Relay lines of sessions the `RelayStage` took, whose times needed the bundle.
    var heldRelay: [Event]
    var span: Analyzer.TimeSpan
    /// `--since` / `--until`, resolved.
    var window: (Int64?, Int64?)
    var relayDisplay: RelayDisplay
    /// Whether the `RelayStage` has relay sessions to finish.
    var relayTaken: Bool
}

extension Analyzer {
    /// The order sessions are built in: time (untimed lines first), then file, then reading order.
    @inline(__always) static func orderKey(_ e: Event) -> (Int64, Int, Int) { (e.time ?? Int64.min, e.fileIndex, e.order) }

    static func sortsBefore(_ a: Event, _ b: Event) -> Bool { orderKey(a) < orderKey(b) }

    /// `orderKey(events[i])`, the fields read in place (handing the event to a function copied it).
    @inline(__always) static func orderKey(_ events: [Event], _ i: Int) -> (Int64, Int, Int) {
        (events[i].time ?? Int64.min, events[i].fileIndex, events[i].order)
    }

    /// `sortsBefore(events[i], events[j])`, read in place.
    @inline(__always) static func sortsBefore(_ events: [Event], _ i: Int, _ j: Int) -> Bool {
        orderKey(events, i) < orderKey(events, j)
    }

    /// `--since` / `--until` in the report's zone: a time without a zone at the offset the
    /// zone (`--timezone`), or the phone's lines, have at that time (`choice`).
    func window(zone: Int?, choice: DisplayZoneChoice) -> (Int64?, Int64?) {
        let now = options.now ?? currentMicros()
        let z = zone ?? 0
        func resolve(_ spec: TimeSpec) -> Int64 { spec.resolve(zone: z, now: now) { choice.offset(atWall: $0, fallback: z) } }
        let since = options.sinceSpec.map(resolve) ?? options.since
        let until = options.untilSpec.map(resolve) ?? options.until
        return (since, until)
    }

    /// `applyWindow` on a block of a stream in `sortsBefore` order (the held bundle's merge),
    /// keeping the order: a run that `since` cuts starts later than it did, possibly past the
    /// block's last line; such lines wait in `carry` for the block their time belongs in (the
    /// caller hands on what is left in it, in order, after the last block).
    static func applyWindowInOrder(_ block: inout [Event], _ window: (Int64?, Int64?), carry: inout [Event]) -> Int {
        guard let boundary = block.last.map(orderKey) else { return 0 }
        let removed = applyWindow(&block, window)
        guard !carry.isEmpty || block.indices.dropFirst().contains(where: { sortsBefore(block, $0, $0 - 1) })
            || block.last.map({ orderKey($0) > boundary }) == true
        else { return removed }
        block.append(contentsOf: carry)
        carry = []
        block.sort(by: sortsBefore)
        // (the lines past the boundary may have lines of the next block before them: they
        // wait. `partitionPoint` ends the prefix that holds: the lines up to the boundary; with
        // the test turned round, a run whose first lines `since` cut, alone past the boundary,
        // went on ahead of the next block's earlier lines: a fuzzed bundle's frame run across
        // two files was fed backwards, "×12 over -35 ms")
        let cut = block.partitionPoint { orderKey($0) <= boundary }
        carry = Array(block[cut...])
        block.removeSubrange(cut...)
        return removed
    }

    /// Drops the timed lines outside the window; returns how many lines that removed.
    static func applyWindow(_ events: inout [Event], _ window: (Int64?, Int64?)) -> Int {
        let (since, until) = window
        guard since != nil || until != nil else { return 0 }
        let before = lineCount(events)
        let (from, to) = (since ?? Int64.min, until ?? Int64.max)
        var kept: [Event] = []
        kept.reserveCapacity(events.count)
        // (a run of lines by each line's time, not its first's)
        events.drain { e in
            if e.repeats == nil {
                if e.time.map({ $0 >= from && $0 <= to }) ?? true { kept.append(e) }
            } else {
                kept.append(contentsOf: e.within(from, to))
            }
        }
        events = kept
        return before - lineCount(events)
    }

    /// The stage that builds the sessions: handed to `sessionSink` as they end; with relay lines
    /// to join (the join needs every one), written to disk as they end and handed on after the
    /// join (`HeldDeviceSessions`), or kept when there is no sink.
    func sessionStage(relayLeft: Bool, relayTaken: Bool) -> SessionStage {
        let relay = relayLeft || relayTaken
        return SessionStage(idleHorizon: idleHorizon, thresholds: options.thresholds, capacity: sessionPipeCapacity,
                            sink: relay ? nil : sessionSink, finishers: sessionFinishers, keepsFindings: keepsSessionFindings,
                            holding: relay && sessionSink != nil ? HeldDeviceSessions() : nil)
    }

    /// The sessions `held` for the relay join, read back in order, each with the relay session
    /// `pairs` joined to it (its lines shifted by `offset`), handed to `sessionSink` as a bundle
    /// without relay lines hands its sessions on; the stage that finished them (its findings).
    func handOnJoined(_ held: HeldDeviceSessions, pairs: [(d: Int, r: Int)], relay: RelaySessionList, offset: Int64,
                      report: inout AnalysisReport) -> SessionStage
    {
        let stage = SessionStage(idleHorizon: idleHorizon, thresholds: options.thresholds, capacity: sessionPipeCapacity,
                                 sink: sessionSink, finishers: sessionFinishers, keepsFindings: keepsSessionFindings,
                                 joined: !relay.isEmpty)
        willStreamSessions?(report)
        var relayOf = [Int32](repeating: -1, count: held.count)
        for p in pairs { relayOf[p.d] = Int32(p.r) }
        for i in 0..<held.count {
            var s = held.take(i)
            if relayOf[i] >= 0 { RelayJoiner.attach(relay[Int(relayOf[i])], to: &s, offset: offset) }
            stage.handOn(s)
        }
        stage.finishHandingOn(into: &report)
        return stage
    }

    /// The bundle's events all in memory.
    func sessionsInMemory(_ events: inout [Event], files: [FileTimes], report: inout AnalysisReport,
                          relayStage: RelayStage?) -> BuiltSessions
    {
        report.timeNotes = resolveTimes(&events, files: files, inputs: &report.inputs)
        let (zone, relayDisplay, choice) = applyDisplayZone(&events, relayFirst: relayStage?.firstTimed)
        report.displayOffset = zone
        // Relay lines of a session the stage did not take (their times needed the bundle) join
        // its sessions now; they are deduped and windowed there, session by session.
        var heldRelay: [Event] = []
        if relayStage != nil {
            heldRelay = events.moveOut(side: .relay) { $0.attr("session") != nil }
        }
        Self.dedupe(&events)
        Stages.mark("times, zone, dedupe")
        // Loops over the events go by index: `for e in events` copies each one (a retain and a
        // release of each of its strings), which on a dense bundle costs more than the work.
        var span = TimeSpan()
        span.cover(events, events.indices)
        report.span = span.range
        let window = window(zone: zone, choice: choice)
        report.filteredOut = Self.applyWindow(&events, window)
        // One file read in order is mostly sorted already: checked first (a sort moves every
        // event, and its buffer doubles the memory for a moment).
        if events.indices.dropFirst().contains(where: { Self.sortsBefore(events, $0, $0 - 1) }) {
            events.sort(by: Self.sortsBefore)
        }
        report.eventCount = Self.lineCount(events)
        // Split without a second copy of every event: the relay lines left here (the stage took
        // the relay's journal) are moved out, the device lines stay in place.
        let relayEvents = events.moveOut(side: .relay)
        var deviceEvents: [Event] = []
        swap(&deviceEvents, &events)
        events = []  // the sessions keep what they need: no third copy of every event
        Stages.mark("sort")
        let relayTaken = relayStage.map { $0.taken > 0 || !heldRelay.isEmpty } ?? false
        let stage = sessionStage(relayLeft: !relayEvents.isEmpty, relayTaken: relayTaken)
        stage.stream.learnsWholeBundle = true
        stage.learn(deviceEvents)
        if stage.handsOn { willStreamSessions?(report) }
        stage.feed(&deviceEvents, deviceEvents.indices)
        deviceEvents = []
        stage.finish(into: &report)
        return BuiltSessions(stage: stage, relayEvents: relayEvents, heldRelay: heldRelay, span: span, window: window,
                             relayDisplay: relayDisplay, relayTaken: relayTaken)
    }

    /// The bundle's events held on disk, in reading order: the same steps as `sessionsInMemory`,
    /// in passes over the chunks. (1) Times resolved (each file's resolver going on from chunk
    /// to chunk), what the zone and the duplicates need seen, the relay lines held for the
    /// relay stage moved out, which streams are extensions learned (`StreamLearning`), and each
    /// chunk sorted and written as (part of) a run. (2) Only when two files cover the same time,
    /// and only for the chunks another file's span covers: duplicates dropped, the chunk put back
    /// in reading order for it and sorted again. (3) The runs merged in time order, windowed, into
    /// the session stage; with a window, or when a duplicate dropped changed an extension's
    /// lines, a merge before it learns which streams are extensions from the lines that stay.
    func sessionsFromHeld(_ held: HeldEvents, files: [FileTimes], report: inout AnalysisReport,
                          relayStage: RelayStage?) -> BuiltSessions
    {
        // The runs go to a new temporary file; the one the bundle was read into goes once read.
        guard let sorted = HeldEvents(chunkSize: held.chunkSize, blockSize: held.blockSize, fanIn: held.fanIn) else {
            var events: [Event] = []
            events.reserveCapacity(held.count)
            held.forEachChunk { events.append(contentsOf: $0) }
            return sessionsInMemory(&events, files: files, report: &report, relayStage: relayStage)
        }
        // (1)
        var resolvers = timeResolvers(files)
        var choice = DisplayZoneChoice(option: options.displayZone)
        var sawUnzoned = false
        var firstTimedOrder: Int?
        var dedupe = Dedupe()
        // (the relay stage holds the relay lines it did not take: `RelayStage.hold`)
        let heldRelay: [Event] = []
        // Per chunk: its span, and its files' times (which duplicates may be among).
        var spans: [TimeSpan] = []
        var covers: [[Int: ClosedRange<Int64>]] = []
        // Without a window, what the session stage learns and counts is gathered here instead
        // of in a pass of its own (lines per chunk, as the duplicates a chunk loses change
        // them; an extension line lost that way makes the stage learn in that pass after all).
        let windowed = options.since != nil || options.until != nil || options.sinceSpec != nil || options.untilSpec != nil
        var learning = StreamLearning()
        var learnAgain = windowed
        var lines: [Int] = []
        var relayLeft = false
        var position = 0
        held.forEachChunk { chunk in
            let here = position..<position + chunk.count
            position = here.upperBound
            for f in files.indices where files[f].eventRange.overlaps(here) {
                let r = files[f].eventRange.clamped(to: here)
                resolvers[f].resolve(&chunk, (r.lowerBound - here.lowerBound)..<(r.upperBound - here.lowerBound))
            }
            if !sawUnzoned { sawUnzoned = chunk.contains { $0.displayOffset == Fmt.unzoned } }
            if firstTimedOrder == nil { firstTimedOrder = chunk.first(where: { $0.time != nil })?.order }
            choice.see(&chunk, chunk.indices)
            // (to their sessions now, which park them as they close)
            if let relayStage { for e in chunk.moveOut(side: .relay, where: { $0.attr("session") != nil }) { relayStage.hold(e) } }
            // What is noted per chunk goes by the number of `writeSorted` calls.
            guard !chunk.isEmpty else { return }
            var seen = Dedupe()
            seen.see(chunk)
            dedupe.merge(seen)
            covers.append(seen.covers)
            var span = TimeSpan()
            span.cover(chunk, chunk.indices)
            spans.append(span)
            if !windowed {
                learning.see(chunk)
                lines.append(Self.lineCount(chunk))
                if !relayLeft { relayLeft = chunk.contains { $0.side == .relay } }
            }
            chunk.sort(by: Self.sortsBefore)
            sorted.writeSorted(chunk, by: Self.sortsBefore)
            chunk = []
        }
        held.discard()
        report.timeNotes = FileTimeResolver.reportNotes(noteResolved(resolvers, inputs: &report.inputs),
                                                        sawUnzoned: sawUnzoned)
        let (zone, relayDisplay) = decideZone(choice, firstTimedOrder: firstTimedOrder, relayFirst: relayStage?.firstTimed)
        report.displayOffset = zone
        // (The relay lines held take the phone's zone, when it is theirs, as their sessions are
        // read back: `RelaySession.display`.)
        Stages.mark("held: times, zone, runs")
        // (2) Only chunks with a line at a time another file covers can lose one; which
        // file's copy is kept depends on reading order.
        if dedupe.overlaps {
            var k = 0
            sorted.rewriteSorted(keeping: { k = $0; return !covers[$0].contains { dedupe.contests($0.value, of: $0.key) } },
                                 change: { chunk in
                                     chunk.sort { ($0.fileIndex, $0.order) < ($1.fileIndex, $1.order) }
                                     // What the stage learns changes when an extension line goes, or
                                     // a folded run of them loses its first lines (its time moves).
                                     func extensionLines() -> [Int64?] { chunk.filter { $0.side == .extension }.map(\.time) }
                                     let before = extensionLines()
                                     dedupe.apply(&chunk)
                                     if extensionLines() != before { learnAgain = true }
                                     spans[k] = TimeSpan()
                                     spans[k].cover(chunk, chunk.indices)
                                     if !windowed { lines[k] = Self.lineCount(chunk) }
                                     chunk.sort(by: Self.sortsBefore)
                                 }, by: Self.sortsBefore)
            Stages.mark("held: dedupe")
        }
        // The lines remembered for duplicates: only the rewritten chunks needed them.
        dedupe = Dedupe()
        var span = TimeSpan()
        for s in spans { span.merge(s) }
        report.span = span.range
        // (3)
        let window = window(zone: zone, choice: choice)
        var learned = SessionStream()
        learned.learnsWholeBundle = true
        report.filteredOut = 0
        report.eventCount = 0
        if learnAgain {
            learning = StreamLearning()
            relayLeft = false
            var carry: [Event] = []
            func take(_ block: inout [Event]) {
                report.eventCount += Self.lineCount(block)
                if !relayLeft { relayLeft = block.contains { $0.side == .relay } }
                learned.learn(block)
            }
            sorted.merge(by: Self.sortsBefore) { block in
                report.filteredOut += Self.applyWindowInOrder(&block, window, carry: &carry)
                take(&block)
            }
            if !carry.isEmpty { take(&carry) }
        } else {
            learning.take(into: &learned)
            report.eventCount = lines.reduce(0, +)
        }
        let relayTaken = relayStage.map { $0.taken > 0 || $0.held > 0 } ?? false
        let stage = sessionStage(relayLeft: relayLeft, relayTaken: relayTaken)
        stage.stream.takeLearned(from: &learned)
        if stage.handsOn { willStreamSessions?(report) }
        var relayEvents: [Event] = []
        var carry: [Event] = []
        func feed(_ block: inout [Event]) {
            if relayLeft {
                var relay = block.moveOut(side: .relay)
                if case .phone(let phone) = relayDisplay {
                    for i in relay.indices { relay[i].displayOffset = phone }
                }
                relayEvents.append(contentsOf: relay)
            }
            stage.feed(&block, block.indices)
        }
        sorted.merge(by: Self.sortsBefore) { block in
            _ = Self.applyWindowInOrder(&block, window, carry: &carry)
            feed(&block)
        }
        if !carry.isEmpty { feed(&carry) }
        stage.finish(into: &report)
        return BuiltSessions(stage: stage, relayEvents: relayEvents, heldRelay: heldRelay, span: span, window: window,
                             relayDisplay: relayDisplay, relayTaken: relayTaken)
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sessions built from time-ordered events as they arrive, each handed on as soon as nothing
/// later in the logs can change it, so that memory holds the open sessions, not all of them.
///
/// The state machine and the routing are `SessionBuilder`'s. What streaming adds:
/// - A session is *closed* by its end line, or when its process has ended: a newer session
///   of the same process name in the same file (a new extension pid) has started and the old process has
///   written nothing for `idleHorizon` of log time. It closes as the log leaves it
///   (`truncated`, ended at its last line: what the whole-bundle view concludes when that
///   process never writes again). So does one whose stream has no line to come (the whole
///   bundle was learned first: `learnsWholeBundle`) and has been silent as long. Any other
///   session stays open to the end.
/// - Host-app and system lines join the session whose span holds them, else the next session
///   to start within `attachBeforeMicros` (`SessionSpansTests` holds it to a scan of every
///   session): a line is placed once the logs
///   have passed it by that much and every session that could still claim it is decided.
/// - A closed session is *handed on* once no pending line can join it and lines of its own
///   process after its end (`afterEnd`) have had their time; ids are given in start order
///   (S1, S2, … as the whole-bundle view numbers them) and sessions are handed on in that order.
public struct SessionStream {
    public var builder = SessionBuilder()
    /// An open session superseded by a newer one of the same process name, whose process
    /// has been silent this long (log time), is closed.
    public var idleHorizon: Int64 = 60_000_000
    /// Lines of a process this long after its session ended still join that session.
    public var afterEnd: Int64 = 30_000_000
    /// Set before `learn` sees the whole bundle (read whole before its sessions are built):
    /// it then also notes when each stream's last line is (`lastLines`). An open session
    /// whose stream has no line to come and has been silent for `idleHorizon` closes as a
    /// superseded one does. (A ticket's short excerpt cut mid-session beside a whole day's log
    /// kept every later session waiting behind it to the end, parked on disk.) A stream named
    /// by pid runs through every file that has its lines, so it is the stream's end that
    /// counts, not its file's.
    public var learnsWholeBundle = false
    var lastLineAt: [String: Int] = [:]
    var lastLines: [Int64?] = []

    /// Which (process, pid) streams are extension processes, from a first pass over the events
    /// (as `SessionBuilder.build`): a kill can name a process before its own lines are seen.
    var extensionKeys = Set<String>()
    var keyByPid: [Int: String] = [:]
    var keyByProcess: [String: String] = [:]
    /// The stream of the last extension line learned, and routed: consecutive lines of one
    /// process (most lines) reuse its key instead of building and looking it up again.
    struct StreamOf {
        var pid: Int?
        var process: String?
        var path: String
        var key: String
        /// Where its last line's time is kept (`lastLines`), when learning notes it.
        var index = -1
        /// Its number in `streams`, once routed (-1: learned only).
        var stream = -1
        /// The stream of `e` (same pid and process, and file when there is no pid), its fields
        /// read in place: no copy of the event's strings (called per line, where a copy of
        /// this value and of the event's strings was a fifth of building sessions).
        func holds(_ e: borrowing Event) -> Bool {
            guard e.pid == pid, e.process == process else { return false }
            return pid != nil || e.sourcePath == path
        }
    }
    /// The streams of the extension lines learned, and routed, lately: lines of one process
    /// mostly follow each other, or alternate among the extensions running at once. Found by
    /// pid in a hash table of integers (`PidSlots`), not by a scan: a busy log has dozens at
    /// once, a relay's device log or a fleet's hundreds or thousands, and with a scan of the
    /// last sixty-four nearly every line of more than that missed, building and hashing its
    /// stream's key (half of the session thread with 5,000 open). It holds up to `bound(_:)`
    /// streams (following the open sessions), then starts afresh; a retired stream's entry is
    /// taken out (`forget`).
    struct Recent {
        private var slots: [StreamOf] = []
        /// The slot noted before each one with the same pid (-1: none).
        private var samePid: [Int32] = []
        private var byPid = PidSlots()
        /// The slot of the last stream found or noted (-1: none).
        private(set) var last = -1
        /// When each slot's stream last began a run of lines, for `SessionStream.flushLearned`
        /// (0: written since), and the slots with a stamp.
        private var touched: [Int] = []
        private var touchedSlots: [Int] = []
        private var clock = 0
        var count: Int { slots.count }
        /// How many streams it holds before it starts afresh, with `open` sessions open (not
        /// ready to hand on).
        static func bound(open: Int) -> Int { 1024 + 2 * open }
        /// The slot of `e`'s stream, looked up in place.
        func slot(_ e: borrowing Event) -> Int? {
            var k = byPid[e.pid ?? Int.min]
            while k >= 0 {
                if slots[k].holds(e) { return k }
                k = Int(samePid[k])
            }
            return nil
        }
        subscript(_ k: Int) -> StreamOf { _read { yield slots[k] } }
        /// The last stream found or noted holds `e`.
        func lastHolds(_ e: borrowing Event) -> Bool { last >= 0 && slots[last].holds(e) }
        func stream(_ e: borrowing Event) -> Int? { slot(e).map { slots[$0].stream } }
        /// Makes slot `k` the last, beginning a run of lines now.
        mutating func touch(_ k: Int) {
            last = k
            clock += 1
            if touched[k] == 0 { touchedSlots.append(k) }
            touched[k] = clock
        }
        mutating func note(_ s: StreamOf) {
            let k = slots.count
            samePid.append(Int32(truncatingIfNeeded: byPid.set(s.pid ?? Int.min, k)))
            slots.append(s)
            touched.append(0)
            touch(k)
        }
        /// The slots touched since the last call, oldest run first; marks them written.
        mutating func takeTouched() -> [Int] {
            let k = touchedSlots.sorted { touched[$0] < touched[$1] }
            for i in k { touched[i] = 0 }
            touchedSlots.removeAll(keepingCapacity: true)
            return k
        }
        /// Stream `key` (of pid `pid`) is retired: its entries hold no line from now on (its
        /// slot in `streams` and its place in `lastLines` are used again). Looked for by key:
        /// a line with no process name and one named "?" are one stream. (A file's stream
        /// whose name ends like a pid is looked for too.)
        mutating func forget(key: String, pid: Int) {
            for p in [pid, Int.min] {
                var k = byPid[p]
                while k >= 0 {
                    if slots[k].key == key {
                        slots[k].pid = nil
                        slots[k].process = nil
                        slots[k].path = "\u{0}"  // no line's file
                    }
                    k = Int(samePid[k])
                }
            }
        }
    }
    var learned = Recent()
    var routed = Recent()

    /// The streams by number, numbered in order of first appearance (lines of processes
    /// without a session are placed in that order at the end, as `SessionBuilder.build` did).
    /// A line is routed to a number, not a key: looking a key up hashed it per line.
    var streams: [SessionBuilder.Stream] = []
    /// Each stream's key, and whether it is an in-app capture's (`in-app:…`).
    var streamKeys: [String] = []
    var isCapture: [Bool] = []
    var streamNumbers: [String: Int] = [:]

    /// The number of stream `key`, made when it is new.
    mutating func number(_ key: String) -> Int {
        if let n = streamNumbers[key] { return n }
        streams.append(SessionBuilder.Stream())
        if !retiredProcesses.isEmpty, let (process, pid) = Self.processAndPid(key), retiredProcesses.reopen(pid: pid, process: process) {
            // A retired stream's process writes again: its stream as it was.
            streams[streams.count - 1].phase = .ended
            retireQueue.append((streams.count - 1, now))
        }
        streamKeys.append(key)
        isCapture.append(key.hasPrefix("in-app:"))
        asleepSeq.append(0)
        streamNumbers[key] = streams.count - 1
        return streams.count - 1
    }

    /// Stream `key`, if it has had a line.
    func stream(_ key: String) -> SessionBuilder.Stream? { streamNumbers[key].map { streams[$0] } }
    /// Sessions opened and not handed on, in start order: where to find each, and the lines of
    /// other processes that joined it (kept apart until it closes: its end is its own last line).
    struct Live {
        /// Its stream's number.
        var stream: Int
        var seq: Int
        var joined: [Event] = []
        var ready = false
        /// The time of its process's last line.
        var lastOwn: Int64?
        /// Copies of the session's start and end (looking the session up costs a copy of it).
        var start: Int64?
        var ended = false
        var end: Int64?
        /// The file of its first line, for untimed sessions.
        var path: String?
        var process: String?
        var pid: Int?
        /// Where it lies in the spill while it sleeps.
        var asleep: Asleep? {
            get { asleepBox?.value }
            set { asleepBox = newValue.map(Boxed.init) }
        }
        /// (Held aside: 88 bytes in every entry, of the few that sleep.)
        var asleepBox: Boxed<Asleep>?
        /// A newer session with the same key supersedes this one: the same process name in
        /// the same file (one device's log; another file may be another device).
        var supersedeKey: InFile? { process.map { InFile(path: path, name: $0) } }
        /// Or the same pid in the same file under another process name: a pid names one
        /// living process at a time, so the process it named before has exited.
        var pidKey: InFile? { pid.map { InFile(path: path, pid: $0) } }
    }
    /// A process name or a pid in a file (its strings shared with the session's: no key
    /// built per session).
    struct InFile: Hashable {
        var path: String?
        var name: String?
        var pid = 0
    }
    /// The newest live session of each process name, and of each pid, per file (an entry
    /// leaves with its session: a log where every line names a new process kept one each).
    var newestByProcess: [InFile: Int] = [:]
    var newestByPid: [InFile: Int] = [:]
    /// Sessions a newer one of their process name superseded, by number: unless the whole
    /// bundle was learned, the only open sessions that close for being silent, so the check
    /// made each second of log time looks at them, not at every open session (a log with
    /// tens of thousands open at once spent minutes in that check).
    var supersededOpen: [Int] = []
    /// Sessions that ended and are not ready to hand on, by number: likewise the only ones the
    /// check for ready sessions looks at, but at the end.
    var endedWaiting: [Int] = []
    /// Sessions that ended since `sleepEnded` last walked `endedWaiting`.
    var endedSinceWalk = 0
    /// Sessions in `live` that are ready (for `park`, which counted them each time).
    var readyLive = 0
    var live: [Live] = []
    /// Entries taken off `live`'s front so far: a place in `live` plus this stays the same
    /// until `park` takes out entries before it (`liveIndex(_:hint:)`).
    var liveFront = 0
    var nextSeq = 1
    /// Host-app and system lines not placed yet, in time order.
    var pending: [Event] = []
    var pendingHead = 0
    public private(set) var unattached = LinesOutside()
    var now: Int64 = Int64.min
    var lastSweep: Int64 = Int64.min

    /// Sessions that are done but wait behind an earlier one still open (sessions are handed
    /// on in start order, and one open for hours, such as a process that went silent without
    /// an end line in a log that goes on, would otherwise keep every later session in
    /// memory): taken out of the stream as if handed on, and written whole to a spill file
    /// until their turn comes. In start order.
    struct Parked {
        var seq: Int
        var session: EventSpill.Chunk
        /// Its `Live.supersedeKey` and `pidKey`, forgotten when it is handed on (in start
        /// order: an earlier session it superseded is decided by then).
        var keys: (InFile?, InFile?)
    }
    var parked: [Parked] = []
    /// Sessions taken out of their streams when they became ready, waiting for their turn:
    /// from then on they are done whatever comes later, whether or not an earlier session is
    /// still open (a later line of their process is placed like a host line, as it is once
    /// a session is handed on).
    var done: [Int: Session] = [:]
    var parkedHead = 0
    var spill: EventSpill?
    var spillFailed = false
    /// Sessions are parked once this many are done and wait (fewer wait behind an open one for
    /// a moment in any busy log: parking those would cost a spill and buy little).
    public var parkAfter = 512
    /// Open sessions silent for `idleHorizon` are in the spill while more than `sleepAfter`
    /// are open (`SleepingSessions.swift`): by stream number, the one asleep (its seq; 0 when
    /// none: read per line), and how many are.
    var asleepSeq: [Int] = []
    var asleepCount = 0
    /// Sessions that may be open and awake, by seq (made or woken since the last walk, or
    /// kept by it): what `sleepSilent` walks.
    var awakeOpen: [Int] = []
    public var sleepAfter = SessionStream.defaultSleepAfter
    /// Tests make it 0 so that every silent open session of a small log sleeps (`castscope`
    /// takes `CASTSCOPE_SLEEP_AFTER` at its start: `useSleepAfterFromEnvironment`).
    nonisolated(unsafe) static var defaultSleepAfter = 512

    public static func useSleepAfterFromEnvironment() {
        if let v = getenv("CASTSCOPE_SLEEP_AFTER").flatMap({ Int(String(cString: $0)) }), v >= 0 { defaultSleepAfter = v }
    }
    var sleepCheckAt = 0

    /// Streams whose sessions were all handed on, with the log time they were queued at:
    /// retired (`RetiredStreams.swift`) once their process has been silent for `retireAfter`.
    var retireQueue: [(stream: Int, at: Int64)] = []
    /// Queued streams that wrote (or, learned whole, write) after they were queued, by the time
    /// of their last line (`retireSilent`).
    var retireLater = TimeHeap<Int>()
    var retireHead = 0
    /// Retired extension processes: a later line of theirs opens their stream again as it
    /// was (ended, nothing in it).
    var retiredProcesses = RetiredProcesses()
    /// Slots of `streams` retired (their key ""), taken out once they are half of them.
    var retiredSlots = 0
    /// Places in `lastLines` free again.
    var freeLastLines: [Int] = []
    public var retireAfter: Int64 = 600_000_000
    /// While more than this many streams wait to retire, those silent for a second retire
    /// (`retireSilent`; not when `retireAfter` is `Int64.max`: never).
    public var retireCrowd = 4096

    public init() {}

    /// The first pass: which streams are extension processes.
    public mutating func learn(_ events: [Event]) {
        // By index and field by field: `for e in events`, or handing `events[i]` to a
        // function, would copy the event.
        for i in events.indices where events[i].side == .extension {
            // The same process as the line before (most lines): nothing new to learn.
            if learned.lastHolds(events[i]) {
                if let t = events[i].lastTime { runLast = max(runLast ?? t, t) }
                continue
            }
            noteRunEnd()
            // One string per stream, shared by every table that names it; the last few are
            // remembered, so that alternating processes do not build and hash it per line.
            if let k = learned.slot(events[i]) {
                learned.touch(k)
            } else {
                let pid = events[i].pid, process = events[i].process, path = events[i].sourcePath
                let k = extensionKeys.insert(SessionBuilder.streamKey(process: process, pid: pid, path: path)).memberAfterInsert
                var of = StreamOf(pid: pid, process: process, path: path, key: k)
                // (its last line: whether the stream has ended, with the whole bundle learned;
                // when it may be retired, either way)
                of.index = lastLineIndex(k)
                // The stream it replaces may have begun the latest run of its pid or name:
                // the runs waiting are written first, in the order they began. Otherwise they
                // wait (the tables are read only after `learn`, and what they end with is the
                // latest run of each pid and name either way): with many extensions at once,
                // writing every waiting run at each new stream was most of learning.
                if learned.count >= Recent.bound(open: live.count - readyLive) {
                    flushLearned()
                    learned = Recent()
                }
                learned.note(of)
            }
            runLast = events[i].lastTime
        }
        noteRunEnd()
        flushLearned()
    }

    /// The stream of the latest line of a pid or process name is the one a kill names: noted
    /// for the streams whose runs of lines began since the last time, in the order they did
    /// (once per few streams, not per run: alternating processes begin a run every line or two).
    private mutating func flushLearned() {
        let touched = learned.takeTouched()
        for (n, k) in touched.enumerated() {
            if let pid = learned[k].pid { keyByPid[pid] = learned[k].key }
            // Not when the next run's stream has the same name and writes over it (every
            // extension of a device most often has one name: a name hashed per run).
            if let process = learned[k].process, n + 1 == touched.count || learned[touched[n + 1]].process != process {
                keyByProcess[process] = learned[k].key
            }
        }
    }

    /// The time of the last line of the run of one stream's lines just learned (consecutive
    /// lines of one process: noted once per run, not per line).
    var runLast: Int64?
    private mutating func noteRunEnd() {
        guard let t = runLast, learned.last >= 0 else { return }
        let i = learned[learned.last].index
        guard i >= 0 else { return }
        noteLastLine(i, t)
        runLast = nil
    }

    /// Where the time of stream `key`'s last line is kept (by number: a run of lines notes it
    /// without hashing the key).
    private mutating func lastLineIndex(_ key: String) -> Int {
        if let i = lastLineAt[key] { return i }
        if let i = freeLastLines.popLast() {
            lastLineAt[key] = i
            return i
        }
        lastLines.append(nil)
        lastLineAt[key] = lastLines.count - 1
        return lastLines.count - 1
    }

    private mutating func noteLastLine(_ i: Int, _ t: Int64) {
        if lastLines[i].map({ t > $0 }) ?? true { lastLines[i] = t }
    }

    /// What `other` learned (`learn`, or a `StreamLearning` taken), instead of what this one
    /// did; `other` is left with nothing (sharing its tables, the first change here would
    /// copy each whole).
    public mutating func takeLearned(from other: inout SessionStream) {
        swap(&extensionKeys, &other.extensionKeys)
        swap(&keyByPid, &other.keyByPid)
        swap(&keyByProcess, &other.keyByProcess)
        swap(&learned, &other.learned)
        learnsWholeBundle = other.learnsWholeBundle
        swap(&lastLineAt, &other.lastLineAt)
        swap(&lastLines, &other.lastLines)
        other = SessionStream()
    }

    /// Feeds the next event (in time order); `emit` receives the sessions it lets go.
    public mutating func feed(_ e: Event, emit: (Session) -> Void) {
        if let t = e.time, t > now {
            now = t
            // Closing and handing on are checked once per second of log time.
            if lastSweep == Int64.min || now - lastSweep >= 1_000_000 {
                lastSweep = now
                sweep(final: false, emit: emit)
            }
        }
        guard let n = route(e) else { pending.append(e); return }
        // Changed in place in the list, taken out of `self` meanwhile (neither the stream nor
        // its sessions copied).
        var table: [SessionBuilder.Stream] = []
        swap(&table, &streams)
        feed(e, stream: n, into: &table[n])
        swap(&table, &streams)
    }

    private mutating func feed(_ e: Event, stream k: Int, into s: inout SessionBuilder.Stream) {
        // (the count first: with thousands of streams the list's entry is a read that misses the
        // cache, per line, and most logs have no session asleep)
        if asleepCount > 0, asleepSeq[k] != 0 { s.sessions.append(wake(k).0) }
        let before = s.sessions.count
        if isCapture[k] { builder.feedCapture(e, into: &s) } else { builder.feed(e, into: &s) }
        if s.sessions.count > before {
            // The new session is the stream's last; the one before it (if any) has ended.
            if s.sessions.count >= 2 { noteEnd(seq: s.sessions[s.sessions.count - 2].seq, end: s.sessions[s.sessions.count - 2].end) }
            let n = s.sessions.count - 1
            s.sessions[n].id = "S\(nextSeq)"
            s.sessions[n].seq = nextSeq
            live.append(Live(stream: k, seq: nextSeq, start: s.sessions[n].start, path: s.sessions[n].events.first?.sourcePath,
                             process: s.sessions[n].process, pid: s.sessions[n].pid))
            awakeOpen.append(nextSeq)
            s.liveHint = live.count - 1 + liveFront
            var olderByName: Int?
            if let p = live.last!.supersedeKey {
                olderByName = newestByProcess[p]
                if let older = olderByName { supersededOpen.insertSorted(older) }
                newestByProcess[p] = nextSeq
            }
            if let p = live.last!.pidKey {
                if let older = newestByPid[p], older != olderByName { supersededOpen.insertSorted(older) }
                newestByPid[p] = nextSeq
            }
            nextSeq += 1
        }
        if !s.late.isEmpty {
            // Lines after a session already handed on: placed like host lines.
            pending.append(contentsOf: s.late)
            s.late.removeAll()
        }
        // By index: `s.sessions.last` would copy the session, every field of it, per line.
        if let n = s.sessions.indices.last, let i = liveIndex(s.sessions[n].seq, hint: &s.liveHint) {
            if let t = e.time { live[i].lastOwn = t }
            if s.phase == .ended && !live[i].ended { noteEnd(seq: s.sessions[n].seq, end: s.sessions[n].end) }
        }
    }

    /// Records that a session has ended, and when.
    mutating func noteEnd(seq: Int, end: Int64?) {
        guard let i = liveIndex(seq) else { return }
        if !live[i].ended {
            endedWaiting.insertSorted(seq)
            endedSinceWalk += 1
        }
        live[i].ended = true
        live[i].end = end
    }

    /// The end of the logs: every session closes and is handed on, every line is placed.
    public mutating func finish(emit: (Session) -> Void) {
        // In order of first appearance.
        for k in streams.indices {
            if asleepSeq[k] != 0 {
                finishAsleep(k)
                continue
            }
            guard streams[k].phase != .ended, !streams[k].sessions.isEmpty else { continue }
            builder.finish(&streams[k])
            streams[k].phase = .ended
            if let n = streams[k].sessions.indices.last { noteEnd(seq: streams[k].sessions[n].seq, end: streams[k].sessions[n].end) }
        }
        // Lines of processes that never opened a session are placed like host lines.
        for k in streams.indices where !streams[k].preamble.isEmpty {
            pending.append(contentsOf: streams[k].preamble)
            streams[k].preamble = []
        }
        sweep(final: true, emit: emit)
    }

    /// `liveIndex(seq)` for a stream's latest session, first at the place `hint` gives
    /// (`SessionBuilder.Stream.liveHint`, kept up to date here). With thousands of sessions
    /// open, a binary search per line was a dozen reads of entries all over the list, most of
    /// them missing the cache (a tenth of the session thread's time).
    func liveIndex(_ seq: Int, hint: inout Int) -> Int? {
        let h = hint - liveFront
        if h >= 0 && h < live.count && live[h].seq == seq { return h }
        // `park` took entries out before it (it moved nearer the front), or it is another session.
        guard let i = liveIndex(seq) else { return nil }
        hint = i + liveFront
        return i
    }

    func liveIndex(_ seq: Int) -> Int? {
        // Live sessions are in seq order: a binary search.
        var lo = 0, hi = live.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if live[mid].seq < seq { lo = mid + 1 } else { hi = mid }
        }
        return lo < live.count && live[lo].seq == seq ? lo : nil
    }

    /// The stream a line belongs to (`SessionBuilder.build`'s routing), or nil for a host line.
    /// By number: an extension line of a stream routed lately (most lines) finds it in
    /// `routed`, with no key built or hashed.
    mutating func route(_ e: Event) -> Int? {
        if let ck = builder.captureKey(e, { stream($0) }) { return number(ck) }
        if e.side == .extension {
            if let n = routed.stream(e) { return n }
            var k = SessionBuilder.streamKey(e)
            k = extensionKeys.firstIndex(of: k).map { extensionKeys[$0] } ?? k
            var of = StreamOf(pid: e.pid, process: e.process, path: e.sourcePath, key: k)
            of.stream = number(k)
            if routed.count >= Recent.bound(open: live.count - readyLive) { routed = Recent() }
            routed.note(of)
            return of.stream
        }
        guard e.side == .system else { return nil }
        return systemKey(e).map { number($0) }
    }

    /// The stream a system line (a kill, a crash, an exit) is about, if any.
    private mutating func systemKey(_ e: Event) -> String? {
        let targetPid = e.attr("target_pid").flatMap { Int($0) }
        if let pid = targetPid, let tk = keyByPid[pid] { return tk }
        // A retired stream's (`RetiredStreams.swift`) line is placed as a host line, as the
        // lines after its end were.
        if let pid = targetPid, retiredProcesses.contains(pid: pid) { return nil }
        if let name = e.attr("target"), let tk = keyByProcess[name] {
            return streamNumbers[tk] != nil || extensionKeys.contains(tk) ? tk : nil
        }
        // The line's own stream key, built only now (a string per system line).
        let key = SessionBuilder.streamKey(e)
        if extensionKeys.contains(key) { return key }
        if let pid = e.pid, !retiredProcesses.isEmpty, retiredProcesses.contains(pid: pid, process: e.process ?? "?") { return nil }
        guard SessionBuilder.killCodes.contains(e.code) else { return nil }
        if let only = onlyOpenExtension(killedBy: e) { return only }
        if SessionBuilder.killsBroadcastExtension(e), let name = e.attr("target") {
            let tk = "\(name)[\(e.attr("target_pid") ?? "?")]"
            extensionKeys.insert(tk)
            if let pid = e.attr("target_pid").flatMap({ Int($0) }) { keyByPid[pid] = tk }
            keyByProcess[name] = tk
            return tk
        }
        return nil
    }

    /// A memory kill at the broadcast limit that names no process (iOS 26's `memorystatus:
    /// exceeded mem limit: ActiveHard 50 MB`) while exactly one extension's session is open:
    /// that extension's (with two open, or none, it stays a line of its own).
    func onlyOpenExtension(killedBy e: Event) -> String? {
        guard e.kind == "extension.killed_memory", e.attr("target") == nil,
            let mb = e.attr("limit_mb").flatMap({ Int($0) }), (45...55).contains(mb)
        else { return nil }
        var found: String?
        for k in extensionKeys {
            guard let n = streamNumbers[k], streams[n].phase != .idle, streams[n].phase != .ended else { continue }
            guard found == nil else { return nil }
            found = k
        }
        return found
    }

    func session(_ l: Live) -> Session? {
        streams[l.stream].sessions.first { $0.seq == l.seq }
    }

    /// The end of an ended session's span: its end, else (an untimed end line) its last line.
    func endOf(_ l: Live) -> Int64? {
        if let end = l.end { return end }
        if let end = asleepEnd(l) { return end }
        guard let s = session(l) else { return nil }
        return s.end ?? (l.joined.last ?? s.events.last)?.latestTime ?? s.start
    }

    /// Where a pending line goes: `.some(index into live)`, `.some(nil)` for nowhere, or nil
    /// when a session that could claim it is still open.
    func place(_ e: Event, final: Bool) -> Int?? {
        guard let t = e.time else {
            // By file: the last untimed session of the line's file.
            for i in live.indices.reversed() where live[i].start == nil && live[i].path == e.sourcePath { return .some(i) }
            return .some(nil)
        }
        let before = builder.attachBeforeMicros, after = builder.attachAfterMicros
        var upcoming: Int?
        for i in live.indices.reversed() {
            guard let start = live[i].start else { continue }
            if t < start {
                if t >= start - before { upcoming = i }
                continue
            }
            if live[i].ended || final {
                let end = endOf(live[i]) ?? start
                if t <= end + after { return .some(i) }
            } else if let own = live[i].lastOwn, t <= own + after {
                return .some(i)  // still open, and already past the line
            } else {
                return nil  // open and silent since before the line: undecided
            }
        }
        return .some(upcoming)
    }

    /// A newer session of the same process name, or of the same pid, in the same file has
    /// started.
    func superseded(_ l: Live) -> Bool {
        if let p = l.supersedeKey, let newest = newestByProcess[p], newest > l.seq { return true }
        if let p = l.pidKey, let newest = newestByPid[p], newest > l.seq { return true }
        return false
    }

    /// Session `seq` is handed on: the newest-session tables forget it (`keys`: its
    /// `Live.supersedeKey` and `pidKey`).
    private mutating func forget(seq: Int, keys: (InFile?, InFile?)) {
        if let p = keys.0, newestByProcess[p] == seq { newestByProcess[p] = nil }
        if let p = keys.1, newestByPid[p] == seq { newestByPid[p] = nil }
    }

    /// The logs have passed the last line of the session's stream (known when the whole
    /// bundle was learned first).
    func streamEnded(_ l: Live) -> Bool {
        guard let i = lastLineAt[streamKeys[l.stream]], let last = lastLines[i] else { return false }
        return now > last
    }

    mutating func sweep(final: Bool, emit: (Session) -> Void) {
        // Open sessions of processes that ended (superseded or no line to come, then silent)
        // close as the log leaves them.
        if !final && learnsWholeBundle {
            // By index: iterating `live` itself would hold it while `noteEnd` changes it (a
            // copy of the whole list each time).
            for i in live.indices where !live[i].ended {
                let l = live[i]
                guard let own = l.lastOwn, now - own > idleHorizon, superseded(l) || streamEnded(l) else { continue }
                close(l)
            }
        } else if !final && !supersededOpen.isEmpty {
            // Only superseded sessions can close (no stream's end is known), in start order;
            // those still open stay in the list (compacted in place).
            var kept = 0
            for k in supersededOpen.indices {
                let seq = supersededOpen[k]
                guard let i = liveIndex(seq), !live[i].ended else { continue }
                if let own = live[i].lastOwn, now - own > idleHorizon {
                    close(live[i])
                    continue
                }
                supersededOpen[kept] = seq
                kept += 1
            }
            supersededOpen.removeLast(supersededOpen.count - kept)
        }
        // Place the lines the logs have passed by the look-ahead (all of them at the end).
        while pendingHead < pending.count {
            let e = pending[pendingHead]
            if !final, let t = e.time, t >= now - builder.attachBeforeMicros { break }
            if !final, e.time == nil, now == Int64.min { break }
            guard let target = place(e, final: final) else { break }
            if let i = target {
                live[i].joined.append(e)
                SessionBuilder.foldRepeatedLine(&live[i].joined)
            } else {
                unattached.append(e)
            }
            pendingHead += 1
        }
        if pendingHead > 4096 && pendingHead * 2 > pending.count {
            pending.removeFirst(pendingHead)
            pendingHead = 0
        }
        // Hand on, in start order, the sessions no pending line and no later line of their
        // own process can still join.
        let waiting = pendingHead < pending.count ? pending[pendingHead].time : nil
        if final {
            // Each is taken out as its turn comes (below), not all at once: a log that ends
            // with every session open held them all twice.
            endedWaiting = []
        } else if !endedWaiting.isEmpty {
            // The ended sessions only, in start order (not every open one, each second); those
            // not ready yet stay in the list (compacted in place).
            var kept = 0
            for k in endedWaiting.indices {
                let seq = endedWaiting[k]
                guard let i = liveIndex(seq), !live[i].ready else { continue }
                if let end = live[i].end ?? endOf(live[i]), now - end > max(afterEnd, builder.attachBeforeMicros + builder.attachAfterMicros),
                    !(waiting.map { $0 <= end + builder.attachAfterMicros } ?? false),
                    !(pendingHead < pending.count && waiting == nil)
                {
                    makeReady(i)
                    continue
                }
                endedWaiting[kept] = seq
                kept += 1
            }
            endedWaiting.removeLast(endedWaiting.count - kept)
        }
        var handed = 0
        while true {
            // The next in start order: a parked session, or the first live one once it is ready.
            let nextLive = handed < live.count ? live[handed].seq : Int.max
            if parkedHead < parked.count, parked[parkedHead].seq < nextLive {
                let chunk = parked[parkedHead].session
                forget(seq: parked[parkedHead].seq, keys: parked[parkedHead].keys)
                parkedHead += 1
                emit(spill!.readSession(chunk))
                continue
            }
            guard handed < live.count else { break }
            if final && !live[handed].ready { makeReady(handed) }
            guard live[handed].ready else { break }
            forget(seq: live[handed].seq, keys: (live[handed].supersedeKey, live[handed].pidKey))
            emit(done.removeValue(forKey: live[handed].seq)!)
            handed += 1
        }
        if handed > 0 {
            live.removeFirst(handed)
            liveFront += handed
            readyLive -= handed
        }
        if parkedHead > 0 && parkedHead == parked.count {
            parked.removeAll(keepingCapacity: parked.count < 1024)
            parkedHead = 0
        }
        if !final {
            park()
            sleepSilent()
            sleepEnded()
            retireSilent()
        }
    }

    /// Closes open session `l`, whose process ended, as the log leaves it.
    private mutating func close(_ l: Live) {
        let k = l.stream
        wakeInPlace(k, seq: l.seq)
        builder.finish(&streams[k])
        streams[k].phase = .ended
        if let n = streams[k].sessions.indices.last { noteEnd(seq: streams[k].sessions[n].seq, end: streams[k].sessions[n].end) }
    }

    /// Live session `i` is done: taken out of its stream and kept until its turn.
    private mutating func makeReady(_ i: Int) {
        wakeInPlace(live[i].stream, seq: live[i].seq)
        live[i].ready = true
        readyLive += 1
        // Its end as the span it was decided with (`endOf` reads the session, which leaves).
        live[i].end = live[i].end ?? endOf(live[i])
        done[live[i].seq] = takeOut(live[i])
    }

    /// A ready session taken out of its stream, with the lines of other processes that joined
    /// it, decided: what is handed on.
    private mutating func takeOut(_ l: Live) -> Session {
        // Removed in place (not copied) so that removing the session does not copy the others.
        let n = l.stream
        let k = streams[n].sessions.firstIndex { $0.seq == l.seq }!
        var s = streams[n].sessions.remove(at: k)
        // (not while the stream's open session sleeps: the marks are that session's)
        if streams[n].sessions.isEmpty && asleepSeq[n] == 0 {
            // Kept (small: no buffer left) so that later lines of the process are not a new
            // session: they go to `late`, and are placed like host lines.
            streams[n].sessions = []
            streams[n].sawError = nil
            streams[n].peerClosed = nil
            retireQueue.append((n, now))
        }
        if !l.joined.isEmpty {
            Self.mergeInTime(&s.events, l.joined)
            if s.events.contains(where: \.foldsLines) { SessionBuilder.cutFoldedRuns(&s.events) }
        }
        builder.decideFromHost(&s)
        return s
    }

    /// `events` and `more` as one list in time order (reading order among equal times; of two
    /// lines with the same time and place, `events`' first): what appending and a stable sort
    /// give. Both are nearly always in that order already, and are then merged into a list of
    /// their exact size: appending grew the session's list to up to twice its size, and the
    /// sort took half of it again (a session as long as the log, 14 + 7 MB at its end).
    static func mergeInTime(_ events: inout [Event], _ more: [Event]) {
        @inline(__always) func before(_ a: borrowing Event, _ b: borrowing Event) -> Bool {
            (a.time ?? Int64.min, a.order) < (b.time ?? Int64.min, b.order)
        }
        func inOrder(_ list: [Event]) -> Bool {
            list.withUnsafeBufferPointer { l in !l.indices.dropFirst().contains { before(l[$0], l[$0 - 1]) } }
        }
        guard inOrder(events), inOrder(more) else {
            events.append(contentsOf: more)
            events.sort { before($0, $1) }
            return
        }
        var out: [Event] = []
        out.reserveCapacity(events.count + more.count)
        events.withUnsafeBufferPointer { a in
            more.withUnsafeBufferPointer { b in
                var i = 0, j = 0
                while i < a.count, j < b.count {
                    if before(b[j], a[i]) { out.append(b[j]); j += 1 } else { out.append(a[i]); i += 1 }
                }
                out.append(contentsOf: a[i...])
                out.append(contentsOf: b[j...])
            }
        }
        events = out
    }

    /// Parks the ready sessions waiting behind an open one, once `parkAfter` of them wait.
    private mutating func park() {
        guard let head = live.first, !head.ready, !spillFailed, readyLive >= parkAfter, let spill = spillFile() else { return }
        // Those that stay are moved up in place, in order (a second list of them all was the
        // peak of thousands of open sessions: 1.9 MB of 48 at 5,000 open).
        var kept = 0
        var more: [Parked] = []
        for i in live.indices {
            if live[i].ready {
                let s = done.removeValue(forKey: live[i].seq)!
                if s.relayBox == nil {
                    more.append(Parked(seq: s.seq, session: spill.write(session: s), keys: (live[i].supersedeKey, live[i].pidKey)))
                    continue
                }
                // The spill does not write a relay view (streaming never makes one): kept.
                done[s.seq] = s
            }
            if kept != i { live.swapAt(kept, i) }
            kept += 1
        }
        readyLive -= live.count - kept
        live.removeLast(live.count - kept)
        // In start order with those parked before (a session that closed late may precede them).
        if parkedHead > 0 {
            parked.removeFirst(parkedHead)
            parkedHead = 0
        }
        if let first = more.first, let last = parked.last, first.seq < last.seq {
            parked.append(contentsOf: more)
            parked.sort { $0.seq < $1.seq }
        } else {
            parked.append(contentsOf: more)
        }
    }
}

extension Array where Element == Int {
    /// Inserts `n` in increasing order (at the end, nearly always: sessions end and are
    /// superseded about in the order they began).
    mutating func insertSorted(_ n: Int) {
        guard let last, n < last else { return append(n) }
        insert(n, at: partitionPoint { $0 <= n })
    }
}

/// What `SessionStream.learn` finds, gathered from lines seen in any order (a bundle held on
/// disk, a chunk at a time): every extension stream, and for each pid and process name the
/// stream of its latest line in time order (`Analyzer.sortsBefore`), the one `learn`, which
/// sees them in that order, keeps.
///
/// Gathered straight into the tables the session stage reads (`take` moves them there), one
/// key string per stream shared by all of them: kept in tables of its own, by stream value,
/// and copied into the stage's after, 100,000 short sessions in a gzip peaked at 105 MB, 0.85
/// KB a session (the same lines in a plain file, learned as they are fed: 41 MB).
struct StreamLearning {
    typealias At = (Int64, Int, Int)
    private(set) var extensionKeys = Set<String>()
    private(set) var keyByPid: [Int: String] = [:]
    private(set) var keyByProcess: [String: String] = [:]
    /// Where each stream's last line time is (`SessionStream.lastLineAt`, `lastLines`).
    private(set) var lastLineAt: [String: Int] = [:]
    private(set) var lastLines: [Int64?] = []
    /// When the line that put each pid's and name's entry there is (only while gathering).
    private var pidAt: [Int: At] = [:]
    private var processAt: [String: At] = [:]
    /// The streams of the runs noted lately: lines of several processes alternate, and each
    /// new run would build and hash its stream's key again. Found by pid (`PidSlots`, a chain
    /// per pid), not by a scan of the last sixty-four: with more extensions writing at once
    /// than that, nearly every line missed (most of the held path's session stage with 5,000
    /// open). Up to `recentBound` streams, then afresh.
    private struct Recent {
        var pid: Int?
        var process: String?
        var path: String?
        var key: String
        var index: Int
        /// The slot noted before it with the same pid (-1: none).
        var samePid: Int
        /// The latest place and last time among its runs seen since it was noted, not yet in
        /// the tables (`flush`).
        var at: At?
        var lastT: Int64?
    }
    private var recent: [Recent] = []
    private var recentByPid = PidSlots()
    private static let recentBound = 16_384

    mutating func see(_ events: [Event]) {
        // Consecutive lines of one stream (most lines) are noted once, at the latest of them.
        var last = -1
        var lastAt: At = (0, 0, 0)
        var lastT: Int64?
        for i in events.indices where events[i].side == .extension {
            if last >= 0, recent[last].pid == events[i].pid, recent[last].process == events[i].process,
               events[i].pid != nil || recent[last].path == events[i].sourcePath
            {
                let at = Analyzer.orderKey(events, i)
                if lastAt < at { lastAt = at }
                if let t = events[i].lastTime { lastT = max(lastT ?? t, t) }
                continue
            }
            if last >= 0 { note(last, lastAt, lastT) }
            last = slot(events, i)
            lastAt = Analyzer.orderKey(events, i)
            lastT = events[i].lastTime
        }
        if last >= 0 { note(last, lastAt, lastT) }
    }

    /// The slot of `events[i]`'s stream among the recent ones, made (its key looked up or
    /// added) when it is not there.
    private mutating func slot(_ events: [Event], _ i: Int) -> Int {
        let pid = events[i].pid, process = events[i].process
        let path: String? = pid == nil ? events[i].sourcePath : nil
        var k = recentByPid[pid ?? Int.min]
        while k >= 0 {
            if recent[k].pid == pid && recent[k].process == process && recent[k].path == path { return k }
            k = recent[k].samePid
        }
        let key = extensionKeys.insert(SessionBuilder.streamKey(process: process, pid: pid, path: path ?? "")).memberAfterInsert
        let index: Int
        if let at = lastLineAt[key] {
            index = at
        } else {
            lastLines.append(nil)
            index = lastLines.count - 1
            lastLineAt[key] = index
        }
        if recent.count >= Self.recentBound {
            flush()
            recent.removeAll(keepingCapacity: true)
            recentByPid = PidSlots()
        }
        let n = recent.count
        recent.append(Recent(pid: pid, process: process, path: path, key: key, index: index, samePid: recentByPid.set(pid ?? Int.min, n)))
        return n
    }

    /// A run of stream `k`'s lines, its latest line at `at`, its last time `t`: kept in its slot
    /// until `flush`. The tables keep each pid's and name's latest and each stream's last time,
    /// the same whichever order the runs come in, so a slot notes them once, not per run (with
    /// many extensions writing at once nearly every line is a run of its own: looking up its pid
    /// and hashing its process name in four tables per line was a tenth of a held read).
    private mutating func note(_ k: Int, _ at: At, _ t: Int64?) {
        if recent[k].at.map({ $0 < at }) ?? true { recent[k].at = at }
        if let t, recent[k].lastT.map({ t > $0 }) ?? true { recent[k].lastT = t }
    }

    /// The slots' runs, into the tables.
    private mutating func flush() {
        for k in recent.indices {
            let r = recent[k]
            if let t = r.lastT, lastLines[r.index].map({ t > $0 }) ?? true { lastLines[r.index] = t }
            guard let at = r.at else { continue }
            if let pid = r.pid, pidAt[pid].map({ $0 < at }) ?? true {
                pidAt[pid] = at
                keyByPid[pid] = r.key
            }
            if let p = r.process, processAt[p].map({ $0 < at }) ?? true {
                processAt[p] = at
                keyByProcess[p] = r.key
            }
        }
    }

    /// Its tables, moved into `stream` (which has learned nothing); what is left is empty.
    mutating func take(into stream: inout SessionStream) {
        flush()
        pidAt = [:]
        processAt = [:]
        recent = []
        recentByPid = PidSlots()
        swap(&stream.extensionKeys, &extensionKeys)
        swap(&stream.keyByPid, &keyByPid)
        swap(&stream.keyByProcess, &keyByProcess)
        swap(&stream.lastLineAt, &lastLineAt)
        swap(&stream.lastLines, &lastLines)
        self = StreamLearning()
    }
}

/// A slot number for each pid (`SessionStream.Recent`), by open addressing over the pids
/// themselves: no `Hasher` per line (a dictionary's lookup was about as long as the rest of
/// routing a line). Entries are only added or changed; the table is dropped whole.
struct PidSlots {
    /// Each pid beside its slot (-1: empty), so that a probe reads one place: with thousands of
    /// streams the table is far bigger than the cache, and two lists were two misses a probe.
    private struct Entry {
        var pid = 0
        var slot: Int32 = -1
    }
    private var entries = [Entry](repeating: Entry(), count: 16)
    private var count = 0

    private static func start(_ pid: Int, _ mask: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: Int64(pid)) &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }

    /// The slot of `pid`, -1 when none.
    subscript(_ pid: Int) -> Int {
        let mask = entries.count - 1
        var i = Self.start(pid, mask)
        while entries[i].slot >= 0 {
            if entries[i].pid == pid { return Int(entries[i].slot) }
            i = (i &+ 1) & mask
        }
        return -1
    }

    /// Makes `slot` the slot of `pid`; returns the one it had (-1: none).
    mutating func set(_ pid: Int, _ slot: Int) -> Int {
        if (count + 1) * 2 > entries.count { grow() }
        let mask = entries.count - 1
        var i = Self.start(pid, mask)
        while entries[i].slot >= 0 {
            if entries[i].pid == pid {
                let old = Int(entries[i].slot)
                entries[i].slot = Int32(truncatingIfNeeded: slot)
                return old
            }
            i = (i &+ 1) & mask
        }
        entries[i] = Entry(pid: pid, slot: Int32(truncatingIfNeeded: slot))
        count += 1
        return -1
    }

    private mutating func grow() {
        let old = entries
        entries = [Entry](repeating: Entry(), count: old.count * 2)
        count = 0
        for e in old where e.slot >= 0 { _ = set(e.pid, Int(e.slot)) }
    }
}

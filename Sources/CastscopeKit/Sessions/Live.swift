/// Sessions as they happen, for `castscope tail`: the same state machine as `analyze`, fed one
/// event at a time, reporting each change (started, connected, stalled, ended) as it occurs.
public final class LiveSessions {
    public enum Change: Sendable {
        case started(Session)
        case connected(Session)
        case stalled(Session, String)
        case ended(Session)
        case relayAccepted(RelaySession)
        case relayStalled(RelaySession, Event)
        case relayClosed(RelaySession)
        /// A relay session that had no line for `relaySilence` (the relay's log time, or its
        /// live clock) with no `closed` line: ended, its end not seen (the relay restarted or was
        /// killed, a lost line); let go of as a closed one is. The time is its last line's.
        case relayNoEnd(RelaySession, lastLine: Int64)
        /// A relay session paired with a device session (the same join as `analyze`).
        case joined(Session, RelaySession)
        /// A finding of `analyze`'s rules on a session that just ended.
        case finding(Session, Finding)
    }

    let builder = SessionBuilder()
    var streams: [String: SessionBuilder.Stream] = [:]
    /// The streams with a session open (neither idle nor ended): what a host line, the host
    /// app's close and the stall check look at. Iterating every stream per host line, and
    /// changing one meanwhile, copied the whole table each time: 20,000 sessions piped in
    /// took 13 s.
    var openStreams = Set<String>()

    /// Notes whether stream `k` has a session open, after its phase may have changed.
    func notePhase(_ k: String) {
        let phase = streams[k]?.phase ?? .idle
        if phase != .ended && phase != .idle { openStreams.insert(k) } else { openStreams.remove(k) }
    }
    /// Session ids by stream key and index within the stream.
    var ids: [String: [String]] = [:]
    var nextID = 1
    /// The stream of each pid's latest extension line (a kill naming the pid goes there, as
    /// `analyze` sends it by `keyByPid`).
    var latestByPid: [Int: String] = [:]
    public private(set) var relay: [String: RelaySession] = [:]
    /// Relay session ids in the order seen (those let go of, below, taken out now and then).
    public private(set) var relayOrder: [String] = []
    /// Relay sessions seen in all (each line of a session said ended unseen and let go of,
    /// `relayNoEndGone`, counted again here: `relaySessions` is the summary's count).
    public private(set) var relaySeen = 0
    /// Lines of a relay session said ended unseen and let go of that came after all (its
    /// `closed` line at last): the same session, not another.
    var relayReturned = 0
    /// Relay sessions seen in all, each once.
    public var relaySessions: Int { relaySeen - relayReturned }
    /// A closed relay session is let go of once it closed this long before the latest relay
    /// line and (when phone sessions are followed too) the latest phone line: the join looks at
    /// most `RelayJoiner.maxOffset` away, and a relay's journal followed for days would
    /// otherwise keep every session it saw.
    static let relayHorizon: Int64 = 30 * 60_000_000
    /// Closed sessions in the order they closed, with their close times; the first not yet let go of.
    var closedRelay: [(time: Int64, id: String)] = []
    var closedRelayStart = 0
    var relayLetGo = 0
    /// A relay session with no line for this long and no `closed` line has ended unseen
    /// (`closeSilentRelay`). A relay that restarted, or a build that logs no close, left every
    /// such session open for good: 100,000 of them, one a second, held 436 MB.
    public static let relaySilence: Int64 = relayHorizon
    /// Relay sessions not closed, by the time of their last line when queued: the earliest
    /// first. One entry a session (`silentQueued`); an entry that comes up older than its
    /// session's last line is queued again with that time.
    var silentRelay = TimeHeap<String>()
    var silentQueued = Set<String>()
    /// Relay sessions said ended with no end seen and not let go of yet (a line of one takes it
    /// out again), and how many were said in all (the summary's).
    public private(set) var relayNoEnd = Set<String>()
    public private(set) var relayNoEndSeen = 0
    /// Relay sessions said ended unseen and let go of, by the relay's newest time then, for
    /// `relayHorizon` more of the relay's log: a line of one then (its `closed` line, late) is
    /// that session's, not another's. A session that went quiet for 30 minutes and then
    /// closed was two relay sessions in the summary, one of them ended unseen.
    var relayNoEndGone: [(time: Int64, id: String)] = []
    var relayNoEndGoneStart = 0
    var relayNoEndGoneIDs: [String: Int64] = [:]
    var latestRelayTime = Int64.min
    /// The same on the phone's side: an ended session's lines go once it ended `relayHorizon`
    /// before the latest phone line (and the latest relay line, when a relay is followed too),
    /// and it leaves the join's list (its id, outcome and facts stay, for the summary). A
    /// phone's log followed for days kept every line of every session.
    var endedDevice: [(time: Int64, key: SessionKey)] = []
    var endedDeviceStart = 0
    var latestDeviceTime = Int64.min
    var connectedLetGo = Set<SessionKey>()
    /// The phone's side has ended (`tail`'s standard input closed): the relay's side no longer
    /// waits for the phone's clock, and the phone's ended sessions wait for the relay's alone
    /// (a relay followed from its start may still bring the sessions they pair with). A phone
    /// line arriving after that, from a journal, undoes it.
    public var phoneSideEnded = false {
        didSet { if phoneSideEnded { letGoOfEndedDevice(); letGoOfClosedRelay() } }
    }
    /// The finding rules' thresholds (as `analyze --config` / options give them).
    public var thresholds = Thresholds() {
        didSet { stallAfterMicros = Int64(thresholds.stallSeconds * 1e6) }
    }
    /// Frames stop for longer than this while streaming: a stall (device side).
    public var stallAfterMicros: Int64 = 2_000_000
    var stalledSessions = Set<String>()
    /// Relay clock minus device clock, once relay and device sessions could be paired.
    public private(set) var clock: ClockEstimate?
    /// Device session id → the relay session joined to it.
    var joinedRelay: [String: String] = [:]
    /// Relay sessions by `accepted` time (in the order seen among equal times), their place in
    /// `relayOrder`, and the frames their `stats` and `closed` lines give: a session is taken
    /// line by line, and the join looks only at those near the phone's sessions (a relay's
    /// journal followed for a day has tens of thousands).
    var acceptedTimes: [(time: Int64, id: String, index: Int)] = []
    var relayIndex: [String: Int] = [:]
    var relayStatFrames: [String: Int] = [:]
    var relayClosedFrames: [String: Int] = [:]

    /// The sessions that have connected, in session order (`join` takes them: gathering and
    /// sorting every session seen, per connect, grew with the sessions of a long tail).
    var connected: [(number: Int, stream: String, index: Int)] = []
    struct SessionKey: Hashable { var stream: String; var index: Int }
    var connectedKeys = Set<SessionKey>()
    /// The connected sessions still in the join's list and joined to no relay session, by
    /// number: their connect, and their end once they `ended` (what the join reads of them).
    var unjoined: [(number: Int, key: SessionKey, start: Int64, end: Int64?, ended: Bool)] = []
    /// Sessions that arrived since the clock was last estimated (phone sessions settled, relay
    /// sessions accepted within its reach), and how many sessions that estimate looked at.
    /// Past `estimateAlwaysBelow` sessions, the estimate is made again once half as many again
    /// arrived (`settle`): made at every connect and accept, it went over every pair in reach
    /// each time (0.4 s with 1,700 phone and 800 relay sessions), and a phone's dense log piped
    /// in beside a relay's day had not caught up after minutes.
    var arrivedSinceEstimate = 0
    var estimatedOver = 0
    static let estimateAlwaysBelow = 256
    /// Estimates made (a test counts them).
    var estimates = 0
    /// The latest close of a relay session let go of before any phone session connected (a
    /// relay's journal read from its start before a phone's log is piped in): a phone session
    /// connected within the estimate's reach of it may have lost its relay session, and is
    /// neither joined nor looked at by the estimate (paired with another phone's, it misled
    /// the clock by 14 minutes, and every pair after it).
    var relayForgotten = Int64.min

    /// Whether a phone session connected at `t` may have lost its relay session (see
    /// `relayForgotten`).
    func mayHaveLostItsRelay(_ t: Int64) -> Bool { t <= Self.plus(relayForgotten, RelayJoiner().maxOffset) }
    /// The earliest and latest time a session connected.
    var connectSpan: (first: Int64, last: Int64)?

    public init() {}

    /// Session `i` of stream `k` has connected: into `connected`, in its place.
    func noteConnected(_ k: String, _ i: Int) {
        guard connectedKeys.insert(SessionKey(stream: k, index: i)).inserted else { return }
        let n = ids[k].flatMap { i < $0.count ? Int($0[i].dropFirst()) : nil } ?? 0
        connected.insert((n, k, i), at: connected.partitionPoint { $0.number <= n })
        let t = streams[k]!.sessions[i].connectedAt!
        if !mayHaveLostItsRelay(t) { unjoined.insert((n, SessionKey(stream: k, index: i), t, streams[k]!.sessions[i].end, !streams[k]!.sessions[i].reason.isEmpty),
                        at: unjoined.partitionPoint { $0.number <= n }) }
        connectSpan = connectSpan.map { (min($0.first, t), max($0.last, t)) } ?? (t, t)
    }

    func key(_ e: Event) -> String { SessionBuilder.streamKey(e) }

    /// Every session seen so far, with its current state.
    public var sessions: [Session] {
        var out: [Session] = []
        for (k, s) in streams {
            for (i, var session) in s.sessions.enumerated() {
                session.id = ids[k]?[i] ?? "?"
                out.append(session)
            }
        }
        return out.sorted { (Int($0.id.dropFirst()) ?? 0) < (Int($1.id.dropFirst()) ?? 0) }
    }

    /// Every session seen so far: its id, and its outcome once it ended (nil while open), in
    /// session order (the summary's; not a copy of every session).
    public var outcomes: [(id: String, outcome: Outcome?)] {
        var out: [(number: Int, id: String, outcome: Outcome?)] = []
        for (k, s) in streams {
            for i in s.sessions.indices {
                let id = ids[k]?[i] ?? "?"
                out.append((Int(id.dropFirst()) ?? 0, id, s.sessions[i].reason.isEmpty ? nil : s.sessions[i].outcome))
            }
        }
        return out.sorted { $0.number < $1.number }.map { ($0.id, $0.outcome) }
    }

    /// Sessions not ended yet (an ended session always has its reason).
    public var open: [Session] {
        // (the open ones only are copied: the status line asks each second)
        var out: [Session] = []
        for (k, s) in streams {
            for i in s.sessions.indices where s.sessions[i].reason.isEmpty { out.append(named(k, i)) }
        }
        return out.sorted { (Int($0.id.dropFirst()) ?? 0) < (Int($1.id.dropFirst()) ?? 0) }
    }

    /// The newest phone line's time, and the wall clock when it was read (`feed`'s `wall`; the
    /// line's own time without one): the phone's clock for the stall check.
    var deviceClock: (line: Int64, wall: Int64)?
    /// The same on the relay's side: its clock for the joins a quiet relay's journal leaves
    /// waiting (`tick`).
    var relayClock: (line: Int64, wall: Int64)?
    /// Lines read within this of their own time are live (`tick`).
    static let liveWithin: Int64 = 5 * 60_000_000

    /// One line, read at `wall` (the wall clock, microseconds).
    public func feed(_ e: Event, wall: Int64? = nil) -> [Change] {
        var changes = e.side == .relay ? feedRelay(e, wall: wall) : feedPhone(e, wall: wall)
        // (the findings of sessions let go of while they waited for their join: `awaiting`)
        if !lateFindings.isEmpty { changes += lateFindings; lateFindings = [] }
        return changes
    }

    /// Findings made as a session waiting for its join was let go of (`letGoOfEndedDevice`).
    var lateFindings: [Change] = []

    /// The findings of every session still waiting for its join (tail's end).
    public func finishFindings() -> [Change] {
        let changes = awaitingOrder.flatMap { findingsOnceDecided($0) } + lateFindings
        (awaitingOrder, lateFindings) = ([], [])
        return changes
    }

    /// An open session superseded by a newer session of the same process name in the same
    /// file (the next extension process) closes, as `analyze` closes it (`SessionStream`), once
    /// its process has been silent this long (the phone's log time).
    public var idleHorizon: Int64 = 60_000_000
    /// Open streams a newer session of their process name superseded, waiting for that silence;
    /// each stream's first line's file and its last own line's time.
    var supersededOpen: [String] = []
    var superseded = Set<String>()
    /// The stream of the newest session of each process name in each file (`file\0name`): the
    /// one a new session of that name supersedes (those before it were when it began).
    var newestOfName: [String: String] = [:]
    var streamFile: [String: String] = [:]
    var lastOwn: [String: Int64] = [:]
    var supersedeCheckedAt = Int64.min

    func feedPhone(_ e: Event, wall: Int64?) -> [Change] {
        var closed: [Change] = []
        if let t = e.time, t >= latestDeviceTime {
            latestDeviceTime = t
            deviceClock = (t, wall ?? t)
            // (before the line, as `analyze`'s sweep: checked once per second of log time)
            if !supersededOpen.isEmpty, t.saturatingSince(supersedeCheckedAt) >= 1_000_000 {
                supersedeCheckedAt = t
                closed = closeSuperseded()
            }
        }
        return closed.isEmpty ? feedPhoneLine(e, wall: wall) : closed + feedPhoneLine(e, wall: wall)
    }

    /// The superseded open sessions whose process has been silent for `idleHorizon` end as the
    /// log leaves them (`SessionBuilder.finish`: "never connected: the log ends after 12 failed
    /// connect attempts"). Without it a retry storm that never connected stayed open for good,
    /// and every host line after it was added to it and to every other such: 25,000 sessions
    /// piped in grew to 3.5 GB.
    func closeSuperseded() -> [Change] {
        var changes: [Change] = []
        var kept: [String] = []
        for k in supersededOpen {
            guard openStreams.contains(k) else {
                superseded.remove(k)
                continue
            }
            guard let own = lastOwn[k], latestDeviceTime.saturatingSince(own) > idleHorizon, streams[k]?.sessions.isEmpty == false else {
                kept.append(k)
                continue
            }
            superseded.remove(k)
            builder.finish(&streams[k]!)
            streams[k]!.phase = .ended
            notePhase(k)
            let s = named(k, streams[k]!.sessions.count - 1)
            noteEnded(k, s)
            changes.append(.ended(s))
            changes += ended(s)
        }
        supersededOpen = kept
        return changes
    }

    /// A new session started in stream `k`: the newest open session of its process name in
    /// its file before it is superseded (by name: a walk over every open stream per new
    /// session, and over the list, made tail quadratic in them: 4,000 sessions 50 ms apart took
    /// 18 s).
    func noteSuperseding(_ k: String) {
        // (itself the newest of its name now)
        if superseded.remove(k) != nil { supersededOpen.removeAll { $0 == k } }
        guard let process = streams[k]?.sessions.last?.process, let file = streamFile[k] else { return }
        let name = file + "\u{0}" + process
        if let older = newestOfName[name], older != k, openStreams.contains(older), superseded.insert(older).inserted {
            supersededOpen.append(older)
        }
        newestOfName[name] = k
    }

    func feedPhoneLine(_ e: Event, wall: Int64?) -> [Change] {
        if e.side == .extension || e.side == .app { phoneSideEnded = false }
        defer { letGoOfEndedDevice(); letGoOfClosedRelay() }
        var k: String?
        if e.side == .extension, let pid = e.pid, let process = e.process, retiredProcesses.contains(pid: pid, process: process) {
            // A retired process writes again: a start line begins a stream of its own, any
            // other is placed like a host line (`retire`).
            guard e.code == .broadcastStarted || SessionBuilder.startCodes.contains(e.code) else {
                attach(e)
                return hostEvent(e)
            }
            _ = retiredProcesses.reopen(pid: pid, process: process)
        }
        if e.side == .extension {
            k = key(e)
            if let pid = e.pid { latestByPid[pid] = k }
            if let t = e.time { lastOwn[k!] = t }
            if streamFile[k!] == nil { streamFile[k!] = e.sourcePath }
        } else if e.side == .system, let pid = e.attr("target_pid").flatMap({ Int($0) }) {
            // The stream of the pid's latest line (not the first of a dictionary's keys, whose
            // order differs from run to run: two processes can have had the same pid).
            k = latestByPid[pid]
        } else if e.side == .system, streams[key(e)] != nil {
            k = key(e)
        }
        guard let k else {
            attach(e)
            return hostEvent(e)
        }
        // The stream is fed where it lies (a copy taken out and put back copied its sessions'
        // lists on every line: a session retrying for hours grew slower line by line).
        let (before, beforePhase, beforeConnected, beforeFrame) = streams[k].map {
            ($0.sessions.count, $0.phase, $0.sessions.last?.connectedAt, $0.sessions.last?.lastFrameAt)
        } ?? (0, .idle, nil, nil)
        if streams[k] == nil, retiredUnpruned.contains(k) { pruneRetired() }
        builder.feed(e, into: &streams[k, default: SessionBuilder.Stream()])
        notePhase(k)
        let count = streams[k]!.sessions.count
        var changes: [Change] = []
        // A gap between two frame lines longer than the stall threshold, as analyze's
        // frame-stall rule sees it (the lines may be old: event times, not the clock).
        if e.kind == "frame.sent", e.side == .extension, count == before, count > 0,
            let previous = beforeFrame, let t = e.time, t - previous > stallAfterMicros
        {
            var s = named(k, count - 1)
            s.lastFrameAt = previous
            changes.append(.stalled(s, "no frames for \(Fmt.duration(t - previous)) while streaming (device)"))
        }
        if count > before {
            // A new session (a second broadcastStarted may have ended the previous one).
            if before > 0 && beforePhase != .ended {
                changes.append(.ended(named(k, before - 1)))
            }
            ids[k, default: []].append("S\(nextID)")
            nextID += 1
            changes.append(.started(named(k, count - 1)))
            noteSuperseding(k)
        }
        for i in max(0, before - 1)..<count where streams[k]!.sessions[i].connectedAt != nil { noteConnected(k, i) }
        let last = count - 1
        if last >= 0 {
            if beforeConnected == nil, streams[k]!.sessions[last].connectedAt != nil {
                changes.append(.connected(named(k, last)))
            }
            if streams[k]!.phase == .ended && (beforePhase != .ended || count > before) {
                changes.append(.ended(named(k, last)))
            }
        }
        return changes.flatMap { c -> [Change] in
            if case .ended(let s) = c {
                noteEnded(k, s)
                // (joined before its findings are made: they read its relay session)
                return [c] + ended(s)
            }
            return [c]
        }
    }

    /// Phone sessions ended and joined to nothing, by end time (from `pendingStart` on), until
    /// the relay's clock passed their end: then every relay line of their end has arrived,
    /// and they are joined (`settle`).
    var pending: [(end: Int64, number: Int)] = []
    var pendingStart = 0
    /// How long after a phone session's end (on the relay's clock) its relay lines are waited
    /// for: the relay logs a session's close within a second of the phone's end.
    static let settleAfter: Int64 = 5_000_000

    /// Sessions that ended waiting to be joined, with all their lines: their findings are made
    /// once they are joined or settle without a relay session (those of a relay's stats, a
    /// relay stall, read the relay session), at most `awaitingMost` of them (past that, the
    /// oldest's are made without it: a phone's log read far ahead of the relay's).
    var awaiting: [Int: Session] = [:]
    var awaitingOrder: [Int] = []
    static let awaitingMost = 256

    /// Phone session `s` ended: joined if the relay's clock already passed its end, and its
    /// findings made then, or once it is joined or settled (with no relay followed, at once).
    func ended(_ s: Session) -> [Change] {
        // (before there is a clock, a join may be a quarter of an hour away: made at once, after
        // the join a settled relay's clock may make now)
        guard relaySeen > 0, clock != nil, let n = Int(s.id.dropFirst()), unjoinedIndex(n) != nil else {
            return settle(relayNow: latestRelayTime) + findings(s)
        }
        awaiting[n] = s
        awaitingOrder.append(n)
        var changes = settle(relayNow: latestRelayTime)
        while awaiting.count > Self.awaitingMost, let first = awaitingOrder.first {
            awaitingOrder.removeFirst()
            changes += findingsOnceDecided(first)
        }
        return changes
    }

    /// The findings of session number `n` if it was waiting for them (see `awaiting`).
    func findingsOnceDecided(_ n: Int) -> [Change] {
        guard let s = awaiting.removeValue(forKey: n) else { return [] }
        if awaitingOrder.count > 2 * awaiting.count + 64 { awaitingOrder.removeAll { awaiting[$0] == nil } }
        // (tail's `finishFindings` walks `awaitingOrder`: one made already is skipped there)
        return findings(s)
    }

    /// The phone sessions whose end the relay's clock (`relayNow`) has passed by
    /// `settleAfter`, on the clock estimate (`firstEstimate` before there is one), are joined.
    /// Counted toward the next estimate: made again at each while it looks at fewer than
    /// `estimateAlwaysBelow` sessions, then once half as many again settled or were accepted
    /// within its reach; after an estimate every settled session joined to nothing is tried.
    func settle(relayNow: Int64, deviceNow: Int64? = nil) -> [Change] {
        guard pendingStart < pending.count, relayNow != .min, let connects = connectSpan else { return [] }
        let joiner = RelayJoiner()
        if clock == nil, !firstEstimate(joiner, connects, relayNow: relayNow, deviceNow: deviceNow ?? latestDeviceTime) { return [] }
        let shift = Self.plus(clock!.offset, Self.settleAfter)
        var ready: [Int] = []
        while pendingStart < pending.count, Self.plus(pending[pendingStart].end, shift) <= relayNow {
            ready.append(pending[pendingStart].number)
            pendingStart += 1
        }
        if pendingStart > 1024 && pendingStart * 2 > pending.count {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        guard !ready.isEmpty else { return [] }
        arrivedSinceEstimate += ready.count
        var changes: [Change]
        if estimatedOver < Self.estimateAlwaysBelow || arrivedSinceEstimate * 2 >= estimatedOver {
            // (the sessions whose relay lines have all arrived on either clock: a relay behind
            // the phone's has them by the end plus `settleAfter`)
            estimateClock(joiner, connects, settledBy: Self.plus(max(clock!.offset, 0), Self.settleAfter), relayNow: relayNow)
            // (every settled one, and those just taken: on a clock moved later they would not
            // count as settled, and nothing would try them again)
            changes = join(ready, all: true, relayNow: relayNow)
        } else {
            changes = join(ready, all: false, relayNow: relayNow)
        }
        // Those settled with no relay session get their findings now.
        for n in ready where awaiting[n] != nil { changes += findingsOnceDecided(n) }
        return changes
    }

    /// Phone sessions that had passed when the first clock was last tried, and whether it was
    /// tried with the whole reach passed (see `firstEstimate`).
    var firstTriedWith = 0
    var firstTriedWhole = false
    /// Pairs agreeing at both ends that the first clock needs (see `firstEstimate`).
    static let firstClockEnds = 3

    /// Before there is a clock: the phone and the relay keep clocks seconds apart, as a rule, so
    /// the sessions whose end the relay's clock passed by `settleAfter` are looked at. Beside a
    /// busy relay any offset pairs a session's start with some relay session's, and a few of
    /// the hundreds within reach its end too: the estimate is taken once `firstClockEnds`
    /// pairs agree at both ends, or else once both sides' clocks passed the first session's
    /// end by the estimate's whole reach (the phone's side once its standard input ended), as `analyze` would
    /// take it. Tried again only as more sessions pass. True once there is a clock.
    func firstEstimate(_ joiner: RelayJoiner, _ connects: (first: Int64, last: Int64), relayNow: Int64, deviceNow: Int64) -> Bool {
        let passed = pending[pendingStart...].partitionPoint { Self.plus($0.end, Self.settleAfter) <= relayNow } - pendingStart
        let reach = Self.plus(joiner.maxOffset, Self.settleAfter)
        let whole = Self.plus(pending[pendingStart].end, reach) <= relayNow
            && (phoneSideEnded || Self.plus(pending[pendingStart].end, reach) <= deviceNow)
        guard passed > firstTriedWith || (whole && !firstTriedWhole) else { return false }
        (firstTriedWith, firstTriedWhole) = (passed, whole)
        guard let estimate = estimateClock(joiner, connects, settledBy: whole ? reach : Self.settleAfter, relayNow: relayNow, keep: false),
            whole || estimate.agreeingEnds >= Self.firstClockEnds else { return false }
        clock = estimate
        return true
    }

    /// Where phone session number `n` is in `unjoined` (nil: not there).
    func unjoinedIndex(_ n: Int) -> Int? {
        let at = unjoined.partitionPoint { $0.number < n }
        return at < unjoined.count && unjoined[at].number == n ? at : nil
    }

    /// Pairs relay sessions with device sessions as `analyze` does (the clock estimate, then
    /// `RelayJoiner.matches`, one to one), among those joined to nothing yet, once the phone
    /// session ended and the relay's clock passed its end. `analyze` sees every session whole;
    /// tail paired a session as it connected or was accepted, with what had arrived by then:
    /// beside a busy relay, another phone's session accepted within a second of this one's
    /// connect, on a clock estimated while the newest phone session's relay session had not
    /// arrived yet (one period off, on a phone that broadcasts regularly). `numbers`: the phone
    /// sessions that just settled; `all`: every settled one too.
    func join(_ numbers: [Int], all: Bool, relayNow: Int64) -> [Change] {
        guard let offset = clock?.offset else { return [] }
        let joiner = RelayJoiner()
        let reach = joiner.maxOffset + joiner.tolerance
        // The phone's sessions, in session order; the relay's joined to nothing and accepted
        // within reach of them on the relay's clock, in the order seen.
        var device = numbers.sorted().compactMap(unjoinedIndex).filter { unjoined[$0].ended }
        if all {
            let shift = Self.plus(offset, Self.settleAfter)
            device = Array(Set(device).union(unjoined.indices.filter {
                unjoined[$0].ended && unjoined[$0].end.map { Self.plus($0, shift) <= relayNow } ?? false
            })).sorted()
        }
        guard !device.isEmpty else { return [] }
        let window = Self.around(device.map { unjoined[$0].start }.min()!, device.map { unjoined[$0].start }.max()!, offset, reach)
        var rel: [(index: Int, id: String, span: (start: Int64, end: Int64?)?)] = []
        for a in accepted(within: window) {
            if let r = relay[a.id], r.deviceSession == nil { rel.append((a.index, a.id, r.start.map { ($0, r.end) })) }
        }
        guard !rel.isEmpty else { return [] }
        rel.sort { $0.index < $1.index }
        let spans = rel.map(\.span)
        let matches = joiner.matches(device.map { (unjoined[$0].start, unjoined[$0].end) }, spans, offset: offset)
            .map { (d: device[$0.d], r: $0.r) }.sorted { $0.r < $1.r }
        var changes: [Change] = []
        for m in matches {
            // (each pair joined as `analyze` joins it: the relay's lines on the session's)
            let key = unjoined[m.d].key
            var s = [named(key.stream, key.index)]
            var r = [relay[rel[m.r].id]!]
            joiner.join(&s, &r, offset: offset)
            joinedRelay[s[0].id] = r[0].id
            relay[r[0].id]?.deviceSession = s[0].id
            changes.append(.joined(s[0], r[0]))
            changes += findingsOnceDecided(unjoined[m.d].number)
        }
        for d in matches.map(\.d).sorted(by: >) { unjoined.remove(at: d) }
        return changes
    }

    /// `a + b`, held at the ends of `Int64` (a hostile line's time must not trap the join).
    static func plus(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    /// The relay sessions accepted within `times`, by accepted time.
    func accepted(within times: ClosedRange<Int64>) -> ArraySlice<(time: Int64, id: String, index: Int)> {
        acceptedTimes[acceptedTimes.partitionPoint { $0.time < times.lowerBound }..<acceptedTimes.partitionPoint { $0.time <= times.upperBound }]
    }

    /// The relay's times within `reach` of device times `first` … `last` shifted by `offset`.
    static func around(_ first: Int64, _ last: Int64, _ offset: Int64, _ reach: Int64) -> ClosedRange<Int64> {
        plus(plus(first, offset), -reach)...plus(plus(last, offset), reach)
    }

    /// The clock estimated again from the phone's sessions in the join's list that settled (see
    /// `settle`) and the relay's accepted within reach of them (kept when they give none): a
    /// phone session whose relay lines had not arrived yet pulled it toward another's.
    @discardableResult
    func estimateClock(_ joiner: RelayJoiner, _ connects: (first: Int64, last: Int64), settledBy shift: Int64, relayNow: Int64,
                       keep: Bool = true) -> ClockEstimate? {
        // The relay sessions accepted within the offsets the estimate looks at, in the order seen.
        let near = accepted(within: Self.around(connects.first, connects.last, 0, joiner.maxOffset + joiner.tolerance))
        let rel = near.sorted { $0.index < $1.index }.compactMap { relay[$0.id] }
        // (the device sessions only when there is a relay session to pair them with: a phone's
        // log followed without a relay has nothing to join)
        guard !rel.isEmpty else { return nil }
        let device = connected.filter { !connectedLetGo.contains(SessionKey(stream: $0.stream, index: $0.index)) }
            .map { named($0.stream, $0.index) }
            .filter { joinedRelay[$0.id] != nil || (!$0.reason.isEmpty && $0.end.map { Self.plus($0, shift) <= relayNow } ?? false
                && !mayHaveLostItsRelay($0.connectedAt!)) }
        (arrivedSinceEstimate, estimatedOver) = (0, device.count + rel.count)
        estimates += 1
        let estimate = joiner.estimate(device, rel)
        // (a later estimate over the sessions settled by then replaces the clock unless it rests
        // on fewer pairs agreeing at both ends: one made from a single session beside a busy
        // relay said -388 s after three had said +2.5 s, and every pair after it was wrong)
        if keep, let estimate, estimate.agreeingEnds >= min(Self.firstClockEnds, clock?.agreeingEnds ?? 0) { clock = estimate }
        return estimate
    }

    /// analyze's findings on one ended session (with its relay session when joined).
    func findings(_ s: Session) -> [Change] {
        var report = AnalysisReport()
        var device = [s]
        var rel: [RelaySession] = []
        if let rid = joinedRelay[s.id], var r = relay[rid] {
            r.deviceSession = nil
            rel = [r]
            RelayJoiner().join(&device, &rel, offset: clock?.offset ?? 0)
        }
        report.sessions = device
        report.relaySessions = RelaySessionList(rel)
        report.clock = rel.isEmpty ? nil : clock
        report.eventCount = device[0].events.count
        return Findings.run(report, thresholds).filter { $0.session == s.id }.map { .finding(s, $0) }
    }

    func named(_ k: String, _ i: Int) -> Session {
        var s = streams[k]!.sessions[i]
        s.id = ids[k]?[i] ?? "?"
        return s
    }

    /// Host-app and system lines join the open sessions they fall in, as in `analyze` (so
    /// that the finding rules see, e.g., the host app being suspended).
    func attach(_ e: Event) {
        guard e.side == .app || e.side == .system,
            e.kind != "server.client_disconnected" && e.kind != "app.extension_disconnected"  // hostEvent adds those
        else { return }
        for k in openStreams {
            guard let i = streams[k]!.sessions.indices.last else { continue }
            if let t = e.time, let start = streams[k]!.sessions[i].start, t < start { continue }
            streams[k]!.sessions[i].events.append(e)
        }
    }

    /// The number of the stream's latest session (`S12` → 12), -1 for none: sessions are
    /// numbered as they start.
    func number(_ k: String) -> Int { ids[k]?.last.flatMap { Int($0.dropFirst()) } ?? -1 }

    /// Host-app lines: the extension closing its end finishes a connected open session: the
    /// newest one that had started by the line, as `analyze` places a host line (with two
    /// extensions open, a dictionary's order picked one at random, differently run to run).
    func hostEvent(_ e: Event) -> [Change] {
        guard e.side == .app, e.kind == "server.client_disconnected" || e.kind == "app.extension_disconnected" else { return [] }
        var newest: String?
        for k in openStreams {
            guard let i = streams[k]!.sessions.indices.last, streams[k]!.sessions[i].connectedAt != nil else { continue }
            if let t = e.time, let start = streams[k]!.sessions[i].start, t < start { continue }
            if newest.map({ number(k) > number($0) }) ?? true { newest = k }
        }
        if let k = newest, let i = streams[k]!.sessions.indices.last {
            var stream = streams[k]!
            stream.sessions[i].events.append(e)
            stream.sessions[i].end = e.time
            stream.sessions[i].outcome = .completed
            stream.sessions[i].reason = "the host app saw the extension close the connection (\(e.message)): the broadcast was finished"
            stream.sessions[i].deciding = [e]
            stream.phase = .ended
            streams[k] = stream
            notePhase(k)
            let s = named(k, i)
            noteEnded(k, s)
            return [.ended(s)] + ended(s)
        }
        return []
    }

    func feedRelay(_ e: Event, wall: Int64? = nil) -> [Change] {
        let changes = feedRelayLine(e, wall: wall)
        // (the silence is measured on the relay's log: checked once its newest line moved on)
        guard let first = silentRelay.first, Self.pastSilence(first.time, latestRelayTime) else { return changes }
        return changes + closeSilentRelay(now: latestRelayTime)
    }

    func feedRelayLine(_ e: Event, wall: Int64?) -> [Change] {
        guard let id = e.attr("session") else { return [] }
        defer { letGoOfClosedRelay(); letGoOfEndedDevice() }
        // (an `accepted` after its id's session closed begins another: the closed one goes)
        if let old = relay[id], RelayJoiner.reuses(e, old) { letGoOfRelay(id) }
        if relay[id] == nil {
            relayIndex[id] = relaySeen
            relaySeen += 1
            relayOrder.append(id)
            // (one said ended unseen and let go of: its line came after all; an `accepted`
            // line begins another under its id)
            if relayNoEndGoneIDs.removeValue(forKey: id) != nil, e.kind != "relay.accepted" {
                relayReturned += 1
                relayNoEndSeen -= 1
            }
        } else if relayNoEnd.remove(id) != nil {
            // (said ended unseen and still held: its end, or another line, came after all)
            relayNoEndSeen -= 1
        }
        if let t = e.time, t >= latestRelayTime {
            latestRelayTime = t
            relayClock = (t, wall ?? t)
        }
        // Taken line by line, as `RelayJoiner.group` takes a session's lines (its frames: the
        // last `closed` line's, else the sum of its stats lines).
        var r = relay.removeValue(forKey: id) ?? RelaySession(id: id)  // (held once: appended in place)
        let wasAccepted = r.accepted
        r.events.append(e)
        r.take(e)
        if e.kind == "relay.stats" { e.forEachStat { _, _, frames, _, _ in relayStatFrames[id, default: 0] += frames } }
        if e.kind == "relay.closed" { relayClosedFrames[id] = r.frames }
        r.frames = relayClosedFrames[id] ?? relayStatFrames[id]
        if wasAccepted == nil, let t = r.accepted {
            acceptedTimes.insert((t, id, relayIndex[id]!), at: acceptedTimes.partitionPoint { $0.time <= t })
        }
        relay[id] = r
        if r.closed == nil {
            // (a line of one said ended unseen, above: open again, watched again)
            if silentQueued.insert(id).inserted { silentRelay.push(e.lastTime ?? latestRelayTime, id) }
        }
        switch e.kind {
        case "relay.accepted":
            // (a relay session accepted within the estimate's reach counts toward the next one)
            if let c = connectSpan, let t = r.accepted, Self.around(c.first, c.last, 0, RelayJoiner().maxOffset).contains(t) {
                arrivedSinceEstimate += 1
            }
            return [.relayAccepted(r)] + settle(relayNow: latestRelayTime)
        case "relay.stalled": return [.relayStalled(r, e)] + settle(relayNow: latestRelayTime)
        case "relay.closed":
            // A relay followed alone (no phone session has connected yet) needs no more of a
            // closed session's lines than the join reads (its `accepted` and `closed` lines, the
            // clock estimate's evidence): the rest go, its facts stay (a relay's journal
            // followed for a day kept every line of every session). With none kept, a phone's
            // log piped in after the relay's journal was read joined nothing.
            if noPhoneConnected {
                relay[id]?.events = [r.events.first { $0.kind == "relay.accepted" }, r.events.last { $0.kind == "relay.closed" }].compactMap { $0 }
            }
            closedRelay.append((e.time ?? latestRelayTime, id))
            return [.relayClosed(r)] + settle(relayNow: latestRelayTime)
        default: return settle(relayNow: latestRelayTime)
        }
    }

    /// Relay sessions closed more than `relayHorizon` before the latest relay line (and the
    /// latest phone line, once a phone session connected): gone from every table (a line of one
    /// after that starts it afresh). Touched again since it closed (open again): kept.
    func letGoOfClosedRelay() {
        // With phone sessions too, a relay session joined to one goes with it (the clock
        // estimate is misled when a pair loses one side); one joined to none outlives the phone
        // sessions it could have paired with by twice the join's reach.
        // (once the phone's side ended, no phone session is to come that it could pair with)
        let extra = noPhoneConnected || phoneSideEnded ? 0 : 2 * RelayJoiner().maxOffset
        while closedRelayStart < closedRelay.count, Self.past(closedRelay[closedRelayStart].time, latestRelayTime, extra),
            noPhoneConnected || phoneSideEnded || Self.past(closedRelay[closedRelayStart].time, latestDeviceTime, extra)
        {
            let id = closedRelay[closedRelayStart].id
            closedRelayStart += 1
            // (one whose phone session went already, as it was still open then, goes now)
            if relay[id]?.deviceSession.map({ joinedRelay[$0] == nil }) ?? true {
                if noPhoneConnected, let t = relay[id]?.end { relayForgotten = max(relayForgotten, t) }
                letGoOfRelay(id)
            }
        }
        // The lists behind, compacted once half of them is gone.
        if closedRelayStart > 1024 && closedRelayStart * 2 > closedRelay.count {
            closedRelay.removeFirst(closedRelayStart)
            closedRelayStart = 0
        }
        if relayLetGo > 1024 && relayLetGo * 2 > relayOrder.count {
            relayOrder.removeAll { relay[$0] == nil }
            relayLetGo = 0
        }
        while relayNoEndGoneStart < relayNoEndGone.count, Self.past(relayNoEndGone[relayNoEndGoneStart].time, latestRelayTime) {
            let (time, id) = relayNoEndGone[relayNoEndGoneStart]
            if relayNoEndGoneIDs[id] == time { relayNoEndGoneIDs[id] = nil }
            relayNoEndGoneStart += 1
        }
        if relayNoEndGoneStart > 1024 && relayNoEndGoneStart * 2 > relayNoEndGone.count {
            relayNoEndGone.removeFirst(relayNoEndGoneStart)
            relayNoEndGoneStart = 0
        }
    }

    /// Relay sessions not closed whose last line is more than `relaySilence` before `now` (the
    /// relay's newest line's time, or its live clock: a relay killed writes nothing more) end
    /// with no end seen, said once each; then they go as a closed one goes (at once with no
    /// phone session to pair them with, else by `letGoOfClosedRelay`'s rule).
    func closeSilentRelay(now: Int64) -> [Change] {
        var changes: [Change] = []
        while let top = silentRelay.first, Self.pastSilence(top.time, now) {
            silentRelay.popFirst()
            guard let r = relay[top.value], r.closed == nil, !relayNoEnd.contains(top.value) else {
                silentQueued.remove(top.value)
                continue
            }
            let last = r.events.last?.lastTime ?? top.time
            if last > top.time {
                silentRelay.push(last, top.value)
                continue
            }
            silentQueued.remove(top.value)
            relayNoEnd.insert(top.value)
            relayNoEndSeen += 1
            changes.append(.relayNoEnd(r, lastLine: last))
            if noPhoneConnected || phoneSideEnded {
                if noPhoneConnected { relayForgotten = max(relayForgotten, last) }
                letGoOfRelay(top.value)
            } else {
                closedRelay.append((last, top.value))
            }
        }
        return changes
    }

    /// Whether `time` is more than `relaySilence` before `now`.
    static func pastSilence(_ time: Int64, _ now: Int64) -> Bool {
        let (bound, overflow) = now.subtractingReportingOverflow(relaySilence)
        return now != .min && !overflow && time < bound
    }

    /// Relay session `id` out of every table, when it is closed (or ended unseen) and was not
    /// touched again since.
    func letGoOfRelay(_ id: String) {
        // (not if touched again since it closed: its last line is another)
        guard let r = relay[id],
            relayNoEnd.contains(id) || r.closed != nil && r.events.last.map({ $0.kind == "relay.closed" }) ?? true
        else { return }
        if relayNoEnd.remove(id) != nil {
            // (by the relay's newest time, which only grows: kept 30 minutes of the relay's log
            // from now, not from its last line, as long ago as that when it is said)
            relayNoEndGoneIDs[id] = latestRelayTime
            relayNoEndGone.append((latestRelayTime, id))
        }
        silentQueued.remove(id)
        relay[id] = nil
        relayIndex[id] = nil
        relayStatFrames[id] = nil
        relayClosedFrames[id] = nil
        if let t = r.accepted {
            var i = acceptedTimes.partitionPoint { $0.time < t }
            while i < acceptedTimes.count, acceptedTimes[i].time == t, acceptedTimes[i].id != id { i += 1 }
            if i < acceptedTimes.count, acceptedTimes[i].id == id { acceptedTimes.remove(at: i) }
        }
        relayLetGo += 1
    }

    /// Whether `time` is more than `relayHorizon` before `latest` (on either clock: the two
    /// are at most `RelayJoiner.maxOffset` apart, half the horizon).
    static func past(_ time: Int64, _ latest: Int64, _ extra: Int64 = 0) -> Bool {
        let (bound, overflow) = latest.subtractingReportingOverflow(relayHorizon + extra)
        return latest != .min && !overflow && time < bound
    }

    /// Session `s` of stream `k` ended (its findings are made as it is handed on, from `s`).
    /// Until the horizon lets it go, it keeps only the lines read of an ended session: by the
    /// join (`RelayJoiner`: its first line, its first `socket.connected`, its last) and by its
    /// ClickHouse row when a relay session joins it later (its first line naming the app).
    /// A dense phone log piped in kept every line of the last 30 minutes' sessions.
    func noteEnded(_ k: String, _ s: Session) {
        guard let i = ids[k]?.lastIndex(of: s.id) else { return }
        endedDevice.append((s.end ?? s.events.last?.time ?? latestDeviceTime, SessionKey(stream: k, index: i)))
        if let n = Int(s.id.dropFirst()), let at = unjoinedIndex(n) {
            (unjoined[at].end, unjoined[at].ended) = (s.end, true)
            if let end = s.end { pending.insert((end, n), at: pending[pendingStart...].partitionPoint { $0.end <= end }) }
        }
        Self.keepLinesReadAfterEnd(&streams[k]!.sessions[i].events)
    }

    static func keepLinesReadAfterEnd(_ events: inout [Event]) {
        guard events.count > 3 else { return }
        let connected = events.firstIndex { $0.kind == "socket.connected" }
        let named = events.firstIndex { $0.attr("bundle") != nil }
        var keep = [0, events.count - 1]
        if let connected { keep.append(connected) }
        if let named { keep.append(named) }
        let kept = Set(keep).sorted().map { events[$0] }
        events = kept
    }

    /// Sessions let go of, per stream: when all of a stream's are and it has ended, it is
    /// retired (`retire`).
    var letGoInStream: [String: Int] = [:]
    var letGoKeys = Set<SessionKey>()
    /// Retired extension processes (`RetiredProcesses`, as `analyze` keeps them).
    var retiredProcesses = RetiredProcesses()
    /// Sessions retired with their streams (`retire`): how many, and their outcomes, for the
    /// summary. Everything else of them is gone (a phone's log piped in for a day kept every
    /// session it had seen, 1.8 KB each: 100,000 sessions, 229 MB).
    public private(set) var retiredSessions = 0
    public private(set) var retiredOutcomes: [Outcome: Int] = [:]

    /// Stream `k`, whose sessions have all ended and been let go of, leaves every table; a later
    /// line of its process (its pid used again half an hour on) begins a stream of its own.
    func retire(_ k: String) {
        guard let s = streams.removeValue(forKey: k) else { return }
        for i in s.sessions.indices {
            retiredOutcomes[s.sessions[i].outcome, default: 0] += 1
            // (its place in `connected` stays until `pruneRetired`: every session of it was
            // let go of, so `connectedLetGo` names it while it is there, and the prune takes it
            // out; one a prune took out already is not counted again)
            let key = SessionKey(stream: k, index: i)
            if connectedKeys.remove(key) != nil && connectedLetGo.contains(key) { connectedRetired += 1 }
            letGoKeys.remove(SessionKey(stream: k, index: i))
            if let id = ids[k]?[i] {
                stalledSessions.remove(id)
                // (nothing may name the stream after it: a session left waiting to be joined was
                // joined later by its key, to nothing (a trap) or to a new stream of the same key)
                if let n = Int(id.dropFirst()), let at = unjoinedIndex(n) { unjoined.remove(at: at) }
            }
            if let pid = s.sessions[i].pid, latestByPid[pid] == k { latestByPid[pid] = nil }
        }
        retiredSessions += s.sessions.count
        // `connected` and `endedDevice` are cleared of it later, many streams at once (each
        // retirement went over both lists: a tail of a phone's log with thousands of sessions
        // an hour spent half its time there), or before a stream of the same key begins.
        retiredUnpruned.insert(k)
        // What `analyze` remembers of a retired extension process: a later line of it is
        // placed like a host line (a new session only at a start line), as it was while its
        // stream was ended.
        for i in s.sessions.indices {
            guard let pid = s.sessions[i].pid, let process = s.sessions[i].process else { continue }
            retiredProcesses.add(pid: pid, process: process)
        }
        if let process = s.sessions.last?.process, let file = streamFile[k], newestOfName[file + "\u{0}" + process] == k {
            newestOfName[file + "\u{0}" + process] = nil
        }
        ids[k] = nil
        lastOwn[k] = nil
        streamFile[k] = nil
        letGoInStream[k] = nil
        openStreams.remove(k)
        superseded.remove(k)
    }

    /// Streams retired since `connected` and `endedDevice` were last cleared of them, and how
    /// many places in `connected` are theirs (`noPhoneConnected` does not count those).
    var retiredUnpruned = Set<String>()
    var connectedRetired = 0
    /// No phone session that has connected is kept (retired streams' do not count).
    var noPhoneConnected: Bool { connected.count == connectedRetired }

    /// `connected` without the sessions let go of, and `endedDevice` without retired streams.
    func pruneRetired() {
        connected.removeAll { connectedLetGo.contains(SessionKey(stream: $0.stream, index: $0.index)) }
        connectedLetGo = []
        connectedRetired = 0
        if !retiredUnpruned.isEmpty {
            if endedDevice[endedDeviceStart...].contains(where: { retiredUnpruned.contains($0.key.stream) }) {
                endedDevice = Array(endedDevice[endedDeviceStart...].filter { !retiredUnpruned.contains($0.key.stream) })
                endedDeviceStart = 0
            }
            retiredUnpruned = []
        }
    }

    /// Ended phone sessions older than the horizon on both sides: their lines go, and they
    /// leave `connected` (and the join's record of them).
    func letGoOfEndedDevice() {
        var gone = false
        // (once the phone's side ended, its sessions wait for the relay's clock alone: a relay
        // followed from its start may still bring the sessions they pair with)
        while endedDeviceStart < endedDevice.count,
            phoneSideEnded ? relaySeen > 0 && Self.past(endedDevice[endedDeviceStart].time, latestRelayTime)
                : Self.past(endedDevice[endedDeviceStart].time, latestDeviceTime)
                    && (relaySeen == 0 || Self.past(endedDevice[endedDeviceStart].time, latestRelayTime))
        {
            let key = endedDevice[endedDeviceStart].key
            endedDeviceStart += 1
            guard streams[key.stream]?.sessions.indices.contains(key.index) == true,
                !streams[key.stream]!.sessions[key.index].reason.isEmpty else { continue }
            if let id = ids[key.stream]?[key.index], let rid = joinedRelay.removeValue(forKey: id) { letGoOfRelay(rid) }
            streams[key.stream]!.sessions[key.index].events = []
            streams[key.stream]!.sessions[key.index].deciding = []
            streams[key.stream]!.sessions[key.index].relay = nil
            streams[key.stream]!.sessions[key.index].attempts = ConnectAttempts()
            connectedLetGo.insert(key)
            if letGoKeys.insert(key).inserted { letGoInStream[key.stream, default: 0] += 1 }
            // (a session let go of no longer waits to be joined)
            if let n = ids[key.stream].flatMap({ key.index < $0.count ? Int($0[key.index].dropFirst()) : nil }),
                let at = unjoinedIndex(n) {
                unjoined.remove(at: at)
            }
            if let s = streams[key.stream], s.phase == .ended, letGoInStream[key.stream] == s.sessions.count { retire(key.stream) }
            gone = true
        }
        while gone, pendingStart < pending.count, unjoinedIndex(pending[pendingStart].number) == nil {
            lateFindings += findingsOnceDecided(pending[pendingStart].number)
            pendingStart += 1
            // (`firstEstimate` counts from here: it tries again)
            (firstTriedWith, firstTriedWhole) = (0, false)
        }
        if pendingStart > 1024 && pendingStart * 2 > pending.count {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        if gone && (connectedLetGo.count > 256 || retiredUnpruned.count > 256) { pruneRetired() }
        if endedDeviceStart > 1024 && endedDeviceStart * 2 > endedDevice.count {
            endedDevice.removeFirst(endedDeviceStart)
            endedDeviceStart = 0
        }
    }

    /// Called now and then with the wall clock: device sessions whose frames stopped. Their
    /// last frame is measured against the phone's clock: its newest line's time plus the wall
    /// time since that line was read (a log written hours ago and piped in had every session
    /// streaming "stalled: no frames for 6292 h" against the wall clock). Once the phone's side
    /// ended (standard input closed), no frame can come: its open sessions are not stalls.
    public func tick(now: Int64) -> [Change] {
        // (the phone sessions whose end the relay's clock passed while its journal was quiet)
        // (the joins a quiet relay leaves waiting: its clock runs on with the wall only when its
        // lines are live, written within minutes of being read; a journal replayed from its
        // start that pauses has not reached the lines it would skip)
        func live(_ c: (line: Int64, wall: Int64)) -> Int64 {
            c.line.magnitude(from: c.wall) <= UInt64(Self.liveWithin) ? Self.plus(c.line, now &- c.wall) : c.line
        }
        var changes = relayClock.map { settle(relayNow: live($0), deviceNow: deviceClock.map(live)) } ?? []
        // (relay sessions silent past `relaySilence` on the relay's clock, run on by the wall
        // while its lines are live: a relay killed writes no line that would move it)
        if let c = relayClock { changes += closeSilentRelay(now: live(c)) }
        if !lateFindings.isEmpty { changes += lateFindings; lateFindings = [] }
        guard !phoneSideEnded else { return changes }
        let now = deviceClock.map { Self.plus($0.line, now &- $0.wall) } ?? now
        // In session order: several stalls in one tick are printed in the same order every run.
        for k in openStreams.sorted(by: { number($0) < number($1) }) {
            let s = streams[k]!
            guard s.phase == .streaming, let i = s.sessions.indices.last, let last = s.sessions[i].lastFrameAt else { continue }
            let id = ids[k]?[i] ?? "?"
            if now - last > stallAfterMicros {
                if stalledSessions.insert(id).inserted {
                    changes.append(.stalled(named(k, i), "no frames for \(Fmt.duration(now - last))"))
                }
            } else {
                stalledSessions.remove(id)
            }
        }
        return changes
    }
}

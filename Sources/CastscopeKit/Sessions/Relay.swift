/// One session of the relay daemon (one broadcast it received), from its journald lines.
public struct RelaySession: Sendable {
    public struct Stat: Sendable {
        public var time: Int64?
        public var frames: Int
        public var fps: Double
        public var dropped: Int
        public var source: SourceRef
    }

    public var id: String
    public var peer: String?
    public var room: String?
    public var host: String?
    public var accepted: Int64?
    public var closed: Int64?
    public var reason: String?
    /// Frames received in all, from the `closed` line (else the sum of the stats).
    public var frames: Int?
    /// Its `stats` lines, read from its events when asked (a folded run keeps them compactly;
    /// a list of them per session would double the memory of a relay journal).
    public var stats: [Stat] {
        var out: [Stat] = []
        // Read once: `events` of a session the relay stage spilled reads the spill back on each
        // use (by index, every stats line read them all again: 16,000 relay lines took 0.3 s).
        let events = self.events
        for i in events.indices where events[i].kind == "relay.stats" {
            events[i].forEachStat { t, source, frames, fps, dropped in
                out.append(Stat(time: t, frames: frames, fps: fps, dropped: dropped, source: source))
            }
        }
        return out
    }
    public var stalls: [Event] = []
    public var errors: [Event] = []
    /// Its lines in time order. A session the relay stage built has them in an `EventSpill`
    /// (read back on each use: the join, an export of every line); others hold them.
    public var events: [Event] {
        get {
            if let s = spilled { return read(s) }
            return held
        }
        set {
            held = newValue
            spilled = nil
            facts = nil
        }
        _modify {
            if let s = spilled {
                held = read(s)
                spilled = nil
                facts = nil
            }
            yield &held
        }
    }
    private var held: [Event] = []
    /// Whether its lines are in memory (false: in the relay stage's spill).
    var holdsLines: Bool { spilled == nil }
    /// The zone its spilled lines are shown in (set once the report's zone is known).
    var display = RelayDisplay.own

    private func read(_ s: (store: EventSpill, chunk: EventSpill.Chunk)) -> [Event] {
        var lines = s.store.read(s.chunk)
        if case .own = display { return lines }
        for i in lines.indices { display.apply(&lines[i]) }
        return lines
    }

    /// Shows its lines kept in memory in `display`'s zone.
    mutating func applyDisplay() {
        if case .own = display { return }
        for i in stalls.indices { display.apply(&stalls[i]) }
        for i in errors.indices { display.apply(&errors[i]) }
        for i in held.indices { display.apply(&held[i]) }
    }

    /// With its lines held (taken in order): the frames its `stats` lines add up to when no
    /// `closed` line said.
    mutating func finishHeld() {
        guard frames == nil else { return }
        let stats = self.stats
        if !stats.isEmpty { frames = stats.reduce(0) { $0 + $1.frames } }
    }
    private var spilled: (store: EventSpill, chunk: EventSpill.Chunk)?
    /// What the reports need of its lines, read off them before they were spilled.
    private var facts: Facts?
    struct Facts {
        var firstTime: Int64?
        var lastTime: Int64?
        var firstSource: SourceRef?
        var firstProcess: String?
        var firstPid: Int?
        var acceptedSource: SourceRef?
        var closedSource: SourceRef?
        var fpsSum: Double
        var fpsCount: Int
    }
    /// The device session it was joined to.
    public var deviceSession: String?

    public init(id: String) { self.id = id }

    public var start: Int64? { accepted ?? (facts.map(\.firstTime) ?? events.first?.time) }
    public var end: Int64? { closed ?? (facts.map(\.lastTime) ?? events.last?.latestTime) }
    /// How long it lasted (`end` less `start`); nil without both, or when its end is before its
    /// start (`backwardsNote`).
    public var duration: Int64? {
        guard let s = start, let e = end, e >= s else { return nil }
        return e - s
    }
    /// Said when its end line is timed before its start line (the relay's clock set back
    /// between them, or lines of two hosts under one id): it has no duration then. A session
    /// `closed` 10 s before its `accepted` went to ClickHouse as `DurationSeconds: -10.0`,
    /// with no word anywhere.
    public var backwardsNote: String? {
        guard let s = start, let e = end, e < s else { return nil }
        return "its \(closed != nil ? "closed" : "last") line is timed \(Fmt.duration(s - e)) before its "
            + "\(accepted != nil ? "accepted" : "first") line (the relay's clock set back, or two hosts' lines under one id): no duration"
    }
    /// The streaming server that logged it (`ingest-servers`: mediamtx, nginx-rtmp, SRS), nil
    /// for the relay's own lines. Not written with a spilled session's record.
    public var server: String?
    /// A streaming server's connection known only by its close: a player's or a reader's as
    /// often as a publisher's begun before the log.
    var isServerCloseOnly: Bool { server != nil && accepted == nil }

    /// How it ended, for the orphans' list: `lasted 1.0 s, closed: disconnect` (a server's
    /// connection with no device session is told by its end: mediamtx's `i/o timeout`).
    public var endText: String? {
        guard closed != nil else { return nil }
        // (none when its lines are of one second, a server's log in whole seconds: not "0 µs")
        let lasted = accepted != nil ? duration.flatMap { $0 > 0 ? "lasted \(Fmt.duration($0)), " : nil } ?? "" : ""
        return lasted + "closed" + (reason.map { ": " + Sanitize.line($0) } ?? "")
    }
    /// Where its first line is.
    public var firstSource: SourceRef? { facts.map(\.firstSource) ?? events.first?.source }
    public var firstProcess: String? { facts.map(\.firstProcess) ?? events.first?.process }
    public var firstPid: Int? { facts.map(\.firstPid) ?? events.first?.pid }
    /// Its first `accepted` line and its last `closed` line (the clock estimate's evidence).
    var acceptedSource: SourceRef? { facts.map(\.acceptedSource) ?? events.first(where: { $0.kind == "relay.accepted" })?.source }
    var closedSource: SourceRef? { facts.map(\.closedSource) ?? events.last(where: { $0.kind == "relay.closed" })?.source }
    /// The mean of its `stats` lines' frames per second (summed in line order), nil without any.
    public var meanFps: Double? {
        if let f = facts { return f.fpsCount == 0 ? nil : f.fpsSum / Double(f.fpsCount) }
        let fps = stats.map(\.fps)
        return fps.isEmpty ? nil : fps.reduce(0, +) / Double(fps.count)
    }

    /// Takes what `e`, its next line in time order, says of the session (not the line itself).
    mutating func take(_ e: Event) {
        if host == nil { host = e.attr("host") }
        if server == nil { server = e.attr("server") }
        switch e.kind {
        case "relay.accepted":
            accepted = accepted ?? e.time
            peer = e.attr("peer") ?? peer
            room = e.attr("room") ?? room
        case "relay.stalled": stalls.append(e)
        case "relay.error": errors.append(e)
        case "relay.closed":
            closed = e.time
            // (a streaming server's close names the client: nginx-rtmp's `client: 10.0.0.5`)
            if peer == nil { peer = e.attr("peer") }
            reason = e.attr("reason")
            frames = Int(e.attr("frames") ?? "").flatMap { $0 >= 0 ? $0 : nil }
        default: break
        }
    }

    /// A session whose lines (in time order, each already taken) are written to `store`, and
    /// only what the reports need of them kept.
    mutating func spill(_ lines: [Event], to store: EventSpill) {
        var f = Facts(firstTime: lines.first?.time, lastTime: lines.last?.latestTime, firstSource: lines.first?.source,
                      firstProcess: lines.first?.process, firstPid: lines.first?.pid,
                      acceptedSource: lines.first(where: { $0.kind == "relay.accepted" })?.source,
                      closedSource: lines.last(where: { $0.kind == "relay.closed" })?.source, fpsSum: 0, fpsCount: 0)
        var statFrames: Int?
        for i in lines.indices where lines[i].kind == "relay.stats" {
            lines[i].forEachStat { _, _, frames, fps, _ in
                f.fpsSum += fps
                f.fpsCount += 1
                statFrames = (statFrames ?? 0) + frames
            }
        }
        if frames == nil { frames = statFrames }
        held = []
        spilled = (store, store.write(lines))
        facts = f
    }
}

extension RelaySession {
    /// A session whose lines are spilled, written to `store` (its facts, its stalls and
    /// errors, where its lines are): the report holds where it is, not the session.
    func writeRecord(to store: EventSpill) -> EventSpill.Chunk {
        store.writeBytes { w, codec in
            w.string(id)
            w.optionalString(peer)
            w.optionalString(room)
            w.optionalString(host)
            w.optionalI64(accepted)
            w.optionalI64(closed)
            w.optionalString(reason)
            w.optionalI64(frames.map(Int64.init))
            w.i64(Int64(stalls.count))
            for e in stalls { codec.event(e, &w) }
            w.i64(Int64(errors.count))
            for e in errors { codec.event(e, &w) }
            let (lines, f) = (spilled!.chunk, facts!)
            w.i64(lines.offset)
            w.i64(Int64(lines.length))
            w.i64(Int64(lines.count))
            w.optionalI64(f.firstTime)
            w.optionalI64(f.lastTime)
            codec.source(f.firstSource, &w)
            w.optionalString(f.firstProcess)
            w.optionalI64(f.firstPid.map(Int64.init))
            codec.source(f.acceptedSource, &w)
            codec.source(f.closedSource, &w)
            w.i64(Int64(bitPattern: f.fpsSum.bitPattern))
            w.i64(Int64(f.fpsCount))
        }
    }

    /// The id of the session whose record is `record` (its first field).
    static func id(ofRecord record: EventSpill.Chunk, in records: EventSpill) -> String {
        records.readBytes(record, cached: true) { r, _ in r.string() }
    }

    /// The session `writeRecord` wrote to `records`, its lines in `store`.
    init(record: EventSpill.Chunk, in records: EventSpill, lines store: EventSpill) {
        self = records.readBytes(record, cached: true) { r, codec in
            var s = RelaySession(id: r.string())
            s.peer = r.optionalString()
            s.room = r.optionalString()
            s.host = r.optionalString()
            s.accepted = r.optionalI64()
            s.closed = r.optionalI64()
            s.reason = r.optionalString()
            s.frames = r.optionalI64().map(Int.init)
            s.stalls = (0..<Int(r.i64())).map { _ in codec.event(&r) }
            s.errors = (0..<Int(r.i64())).map { _ in codec.event(&r) }
            let lines = EventSpill.Chunk(offset: r.i64(), length: Int(r.i64()), count: Int(r.i64()))
            let f = Facts(firstTime: r.optionalI64(), lastTime: r.optionalI64(), firstSource: codec.source(&r),
                          firstProcess: r.optionalString(), firstPid: r.optionalI64().map(Int.init),
                          acceptedSource: codec.source(&r), closedSource: codec.source(&r),
                          fpsSum: Double(bitPattern: UInt64(bitPattern: r.i64())), fpsCount: Int(r.i64()))
            s.spilled = (store, lines)
            s.facts = f
            return s
        }
    }
}

/// The clock difference between the relay server and the phone: relay time − device time.
public struct ClockEstimate: Sendable {
    public var offset: Int64
    /// Half-spread of the paired differences; nil when a single pair gives no spread.
    public var uncertainty: Int64?
    public var pairs: Int
    public var forced: Bool
    /// The pairs used: (device event source, relay event source, difference µs).
    public var evidence: [(SourceRef, SourceRef, Int64)] = []
    /// How many of the pairs agree at their ends too (device end ↔ relay closed).
    public var agreeingEnds = 0
}

/// Groups relay events into relay sessions, estimates the clock offset from paired events
/// (device connected ↔ relay accepted, device end ↔ relay closed), and joins each relay
/// session to a device session it overlaps once the offset is applied: the one whose start and
/// end agree best with its own (each up to `tolerance`), then the one it overlaps most.
public struct RelayJoiner {
    /// How far paired differences may disagree and still describe one offset.
    public var tolerance: Int64 = 1_000_000
    /// Offsets beyond this are not considered: phone and server clocks differ by seconds, at
    /// times minutes (`--clock-offset` covers anything larger).
    public var maxOffset: Int64 = 15 * 60_000_000

    public init() {}

    public func group(_ events: [Event]) -> [RelaySession] {
        var sessions: [RelaySession] = []
        var index: [String: Int] = [:]
        for e in events { add(e, to: &sessions, index: &index) }
        return finish(sessions)
    }

    /// The same, taking the events: each is moved into its session (not copied), and the
    /// list is left empty, so that the relay's lines are held once, not twice.
    public func group(taking events: inout [Event]) -> [RelaySession] {
        var sessions: [RelaySession] = []
        var index: [String: Int] = [:]
        events.drain { add($0, to: &sessions, index: &index) }
        return finish(sessions)
    }

    private func add(_ e: Event, to sessions: inout [RelaySession], index: inout [String: Int]) {
        do {
            guard let id = e.attr("session") else { return }
            let i: Int
            if let k = index[id], !Self.reuses(e, sessions[k]) { i = k } else {
                i = sessions.count
                index[id] = i
                sessions.append(RelaySession(id: id))
            }
            sessions[i].events.append(e)
            sessions[i].take(e)
        }
    }

    /// `e` begins a new session under an id whose session `r` closed before it (a relay whose
    /// ids are a counter that restarts with it, or pooled: merged, 273 sessions were 50 and
    /// the clock estimate minutes off). A copy of its `accepted` line (an export beside the
    /// journal) is no new session: it is no later than the close.
    static func reuses(_ e: Event, _ r: RelaySession) -> Bool {
        guard e.kind == "relay.accepted", let closed = r.closed, let t = e.time else { return false }
        return t > closed
    }

    private func finish(_ grouped: [RelaySession]) -> [RelaySession] {
        var sessions = grouped
        for i in sessions.indices { sessions[i].finishHeld() }
        return sessions
    }

    /// A device and a relay session that may be one broadcast: relay accepted − device
    /// connected, and relay closed − device end when both ends are known. 32 bytes, no
    /// allocation: a busy relay beside a phone's bundle makes hundreds of thousands.
    struct Pair {
        var device: Int32
        var relay: Int32
        var start: Int64
        var end: Int64?
        /// Its differences: the start's, then the end's.
        var diffs: [Int64] { end.map { [start, $0] } ?? [start] }
    }

    /// At most this many candidate pairs are made: beyond it the offsets looked at are
    /// narrowed (`maxOffset` halved, down to a minute), so that memory stays bounded when
    /// hundreds of phone sessions lie among a busy relay's (each within a quarter of an hour of
    /// thousands).
    var maxPairs = 250_000
    /// Options the join weighs at most, over all device sessions (`matches`).
    var maxOptions = 1_000_000

    /// Candidate pairs of (device, relay), by device then relay index. The relay sessions are
    /// looked up by their `accepted` time (a relay's day has tens of thousands: a pair per
    /// device and relay session would be quadratic).
    func pairs(_ device: [DeviceJoinFacts], _ relay: RelaySessionList) -> [Pair] {
        // (each session's facts read once: its times, not the session, are what is sorted)
        var accepted: [(time: Int64, index: Int)] = []
        for ri in relay.indices {
            let r = relay.joinFacts(ri)
            if let t = r.accepted, r.hasAcceptedSource { accepted.append((t, ri)) }
        }
        accepted.sort { ($0.time, $0.index) < ($1.time, $1.index) }
        let byAccepted = accepted.map(\.index)
        let times = accepted.map(\.time)
        let connected = device.indices.filter { device[$0].connectedAt != nil }
        func ranges(within window: Int64) -> (found: [(Int, Range<Int>)], total: Int) {
            let found = connected.map { di in
                let dc = device[di].connectedAt!
                return (di, times.partitionPoint { $0 < dc - window }..<times.partitionPoint { $0 <= dc + window })
            }
            return (found, found.reduce(0) { $0 + $1.1.count })
        }
        var window = maxOffset
        var (found, total) = ranges(within: window)
        while window > 60_000_000, total > maxPairs {
            window = max(60_000_000, window / 2)
            (found, total) = ranges(within: window)
        }
        // Thousands of phones sharing at once beside the relay (a fleet's folder): every one
        // of them is within a minute of every relay session, and the pairs grow as their
        // product (4,000 of each: 16 million pairs, 1.1 GB, 6.5 s). Every k-th phone session
        // then stands for the rest: the offset they agree on is the one all of them do.
        if total > maxPairs {
            let stride = (total + maxPairs - 1) / maxPairs
            found = found.enumerated().filter { $0.offset % stride == 0 }.map(\.element)
            total = found.reduce(0) { $0 + $1.1.count }
        }
        var out: [Pair] = []
        out.reserveCapacity(total)
        for (di, range) in found where !range.isEmpty {
            let d = device[di]
            let dc = d.connectedAt!
            for ri in byAccepted[range].sorted() {
                let r = relay.joinFacts(ri)
                var p = Pair(device: Int32(di), relay: Int32(ri), start: r.accepted! - dc, end: nil)
                if let de = d.end, let rc = r.closed, d.lastSource != nil, r.hasClosedSource { p.end = rc - de }
                out.append(p)
            }
        }
        return out
    }

    /// When no pair is within `maxOffset`: the whole number of hours (±1 to ±26) that most
    /// phone sessions' connects and relay sessions' accepts lie apart, within `maxOffset` of
    /// it, if most phone sessions do (a relay host in another zone, logs exported in local time
    /// and read as UTC: every session on both sides was an orphan, the clock never named).
    func wholeHoursApart(_ device: [DeviceJoinFacts], _ relay: RelaySessionList) -> Int? {
        var accepted: [Int64] = []
        for ri in relay.indices { if let t = relay.joinFacts(ri).accepted { accepted.append(t) } }
        accepted.sort()
        let connects = device.compactMap(\.connectedAt)
        guard !connects.isEmpty, !accepted.isEmpty else { return nil }
        var best: (hours: Int, count: Int)?
        for hours in (-26...26) where hours != 0 {
            let shift = Int64(hours) * 3_600_000_000
            let count = connects.count { c in
                let lo = accepted.partitionPoint { $0 < c + shift - maxOffset }
                return lo < accepted.count && accepted[lo] <= c + shift + maxOffset
            }
            if count > (best?.count ?? 0) { best = (hours, count) }
        }
        guard let best, best.count * 2 >= connects.count else { return nil }
        return best.hours
    }

    /// The lines behind a pair's differences: (difference, device line, relay line).
    func evidence(_ p: Pair, _ device: [DeviceJoinFacts], _ relay: RelaySessionList) -> [(Int64, SourceRef, SourceRef)] {
        let d = device[Int(p.device)]
        let r = relay[Int(p.relay)]
        var out = [(p.start, d.connectSource!, r.acceptedSource!)]
        if let end = p.end, let last = d.lastSource { out.append((end, last, r.closedSource!)) }
        return out
    }

    /// How many pairs' greedy matchings `estimate` may look at in all (the sum of their
    /// windows) before it keeps the best found: only a bundle of hundreds of device sessions
    /// within minutes of each other against a busy relay comes near it.
    var estimateBudget = 10_000_000

    /// The offset most pairs agree on (a one-to-one matching within `tolerance`).
    ///
    /// Each pair's start difference is a center tried: the pairs within `tolerance` of it,
    /// closest first, are matched one to one; the center with most pairs wins, then most
    /// agreeing differences (start and end), then the least spread, then the first pair. The
    /// pairs within `tolerance` of a center are a window of the pairs in difference order, and
    /// a center cannot match more pairs than its window has distinct devices or distinct relay
    /// sessions, nor agree on more differences than those pairs' starts and the ends in its
    /// window: centers are tried in the order of the first bound, those the bounds rule out are
    /// skipped, and the rest once it falls below the best found. The result is the one trying
    /// every center gives, unless `estimateBudget` ran out first.
    public func estimate(_ device: [Session], _ relay: [RelaySession]) -> ClockEstimate? {
        estimate(device, RelaySessionList(relay))
    }

    public func estimate(_ device: [Session], _ relay: RelaySessionList) -> ClockEstimate? {
        estimate(device.map(DeviceJoinFacts.init), relay)
    }

    /// The same from what the join reads of each device session (sessions spilled while the
    /// relay's were made: `HeldDeviceSessions`).
    func estimate(_ device: [DeviceJoinFacts], _ relay: RelaySessionList) -> ClockEstimate? {
        let candidates = pairs(device, relay)
        guard !candidates.isEmpty else { return nil }
        let diff = candidates.map(\.start)
        let byDiff = candidates.indices.sorted { (diff[$0], $0) < (diff[$1], $1) }
        // Each center's window [lo, hi) in `byDiff`, and its bound.
        var lo = [Int](repeating: 0, count: byDiff.count)
        var hi = lo
        var bound = lo
        do {
            var (l, h) = (0, 0)
            // Pairs in the window per device and per relay session, and how many have any.
            var perDevice = [Int32](repeating: 0, count: device.count)
            var perRelay = [Int32](repeating: 0, count: relay.count)
            var (devices, relays) = (0, 0)
            for (k, c) in byDiff.enumerated() {
                let center = diff[c]
                while h < byDiff.count, diff[byDiff[h]] - center <= tolerance {
                    let p = candidates[byDiff[h]]
                    perDevice[Int(p.device)] += 1
                    perRelay[Int(p.relay)] += 1
                    if perDevice[Int(p.device)] == 1 { devices += 1 }
                    if perRelay[Int(p.relay)] == 1 { relays += 1 }
                    h += 1
                }
                while center - diff[byDiff[l]] > tolerance {
                    let p = candidates[byDiff[l]]
                    perDevice[Int(p.device)] -= 1
                    perRelay[Int(p.relay)] -= 1
                    if perDevice[Int(p.device)] == 0 { devices -= 1 }
                    if perRelay[Int(p.relay)] == 0 { relays -= 1 }
                    l += 1
                }
                (lo[k], hi[k], bound[k]) = (l, h, min(devices, relays))
            }
        }
        let tries = byDiff.indices.sorted { (bound[$1], byDiff[$0]) < (bound[$0], byDiff[$1]) }
        // Most pairs, then most agreeing differences, then the offset in the fewest whole
        // minutes from none, then the least spread, then the first. (Phone and server clocks
        // differ by seconds, at times minutes: one broadcast beside a relay of a few sessions a
        // minute lined up at both ends with a stranger ten minutes off as well as with its own,
        // and the stranger's spread was the smaller as often as not.)
        var best: (score: Int, agreeing: Int, minutes: Int64, spread: Int64, first: Int, used: [Pair])?
        var work = 0
        // Which center last used a device or relay session (no set per center).
        var deviceUsedBy = [Int](repeating: -1, count: device.count)
        var relayUsedBy = [Int](repeating: -1, count: relay.count)
        for k in tries {
            if let b = best, bound[k] < b.score || work > estimateBudget { break }
            let c = byDiff[k]
            let center = diff[c]
            if let b = best, bound[k] == b.score {
                // As many pairs at most as the best: it wins only with as many agreeing
                // differences, at most one start and one end per pair.
                var ends = 0
                for i in byDiff[lo[k]..<hi[k]] where candidates[i].end.map({ abs($0 - center) <= tolerance }) ?? false {
                    ends += 1
                }
                work += hi[k] - lo[k]
                if bound[k] + min(bound[k], ends) < b.agreeing { continue }
            }
            let window = byDiff[lo[k]..<hi[k]].sorted { (abs(diff[$0] - center), $0) < (abs(diff[$1] - center), $1) }
            work += window.count
            var used: [Pair] = []
            for i in window where deviceUsedBy[Int(candidates[i].device)] != k && relayUsedBy[Int(candidates[i].relay)] != k {
                deviceUsedBy[Int(candidates[i].device)] = k
                relayUsedBy[Int(candidates[i].relay)] = k
                used.append(candidates[i])
            }
            let all = used.flatMap(\.diffs).filter { abs($0 - center) <= tolerance }
            let spread = (all.max() ?? 0) - (all.min() ?? 0)
            let minutes = Self.minutesOff(center)
            if let b = best, (used.count, all.count, -minutes, -spread, -c) <= (b.score, b.agreeing, -b.minutes, -b.spread, -b.first) {
                continue
            }
            best = (used.count, all.count, minutes, spread, c, used)
        }
        guard let best, best.score > 0 else { return nil }
        return estimate(from: best.used, device, relay)
    }

    /// Whole minutes between an offset and none (the estimate's tie-break).
    static func minutesOff(_ offset: Int64) -> Int64 { Int64(offset.magnitude / 60_000_000) }

    /// The estimate the pairs a center matched give: the median of their differences within
    /// `tolerance` of the first pair's, half their spread as the bound.
    func estimate(from used: [Pair], _ device: [DeviceJoinFacts], _ relay: RelaySessionList) -> ClockEstimate {
        let center = used[0].start
        let evidence = used.flatMap { self.evidence($0, device, relay) }.filter { abs($0.0 - center) <= tolerance }
        let values = evidence.map(\.0).sorted()
        let mid = values.count / 2
        let median = values.count % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2
        let uncertainty = values.count >= 2 ? max(1_000, (values.last! - values.first!) / 2) : nil
        return ClockEstimate(offset: median, uncertainty: uncertainty, pairs: values.count, forced: false,
                             evidence: evidence.map { ($0.1, $0.2, $0.0) },
                             agreeingEnds: used.filter { $0.end.map { abs($0 - center) <= tolerance } ?? false }.count)
    }

    /// Joins relay sessions to device sessions (`matches`) once `offset` is applied, and puts
    /// the relay's lines on the device's time axis.
    public func join(_ device: inout [Session], _ relay: inout [RelaySession], offset: Int64) {
        var list = RelaySessionList(relay)
        join(&device, &list, offset: offset)
        relay = list.heldSessions
    }

    public func join(_ device: inout [Session], _ relay: inout RelaySessionList, offset: Int64) {
        for o in pair(device.map(DeviceJoinFacts.init), &relay, offset: offset) {
            Self.attach(relay[o.r], to: &device[o.d], offset: offset)
        }
    }

    /// The pairs `join` makes (device, relay), each relay session told its device session's id.
    func pair(_ device: [DeviceJoinFacts], _ relay: inout RelaySessionList, offset: Int64) -> [(d: Int, r: Int)] {
        let relaySpans = relay.indices.map { relay.joinFacts($0).span }
        let made = matches(device.map(\.span), relaySpans, offset: offset)
        for o in made { relay.setDeviceSession(o.r, device[o.d].id) }
        return made
    }

    /// A relay session joined to a device session: its view, and its lines on the device's
    /// time axis among the session's.
    static func attach(_ r: RelaySession, to d: inout Session, offset: Int64) {
        d.relay = r
        for var e in r.events {
            e.time = e.time.map { $0 - offset }
            e.repeats = e.repeats?.shifted(by: -offset)
            e.displayOffset = d.displayOffset
            d.events.append(e)
        }
        d.events.sort { ($0.time ?? Int64.min, $0.order) < ($1.time ?? Int64.min, $1.order) }
    }


    /// The pairs the join makes among those that overlap, one to one: those whose starts and
    /// ends agree best first (each end within `tolerance` counts by how far apart; before
    /// session 38 the largest overlap alone, and a longer relay session of another phone that
    /// spans this one's overlaps it as much as its own), then the largest overlap, then
    /// (device, relay) order, given each side's spans (a relay session's on its own clock, `offset`
    /// ahead of the device's; nil: no start). `tail` pairs the sessions not yet joined by this
    /// alone, without taking their lines.
    func matches(_ device: [(start: Int64, end: Int64?)?], _ relay: [(start: Int64, end: Int64?)?],
                 offset: Int64) -> [(d: Int, r: Int)] {
        // Relay sessions by start: a device session's candidates start at most the longest
        // relay session (plus `tolerance`) before it and at most `tolerance` after it ends.
        var spans: [(start: Int64, end: Int64, ended: Bool, index: Int)] = []
        for (ri, r) in relay.enumerated() {
            guard let rs = r.map({ $0.start - offset }) else { continue }
            spans.append((rs, max(r!.end.map { $0 - offset } ?? rs, rs), r!.end != nil, ri))
        }
        spans.sort { ($0.start, $0.index) < ($1.start, $1.index) }
        let longest = spans.map { $0.end - $0.start }.max() ?? 0
        // A pair's ends each count as much as they disagree, up to `tolerance` (a relay that
        // notices a killed extension's close on a timeout half a minute later disagrees no more
        // than another phone's session would); an end unknown on either side counts in full.
        func disagree(_ a: Int64, _ b: Int64) -> Int64 { Int64(min(a.magnitude(from: b), UInt64(tolerance))) }
        // (24 bytes an option, sorted in place: a phone's thousands of broadcasts beside a busy
        // relay have hundreds of thousands, and a copy per step held them three times over.)
        var options: [(apart: Int64, overlap: Int64, d: Int32, r: Int32)] = []
        // Each device session's best few options at most (thousands of phones sharing at once
        // beside the relay, every one overlapping every relay session: 4 million options, 240
        // MB): the pairs are made best first, and one further down a session's list than this
        // is taken only when every better one went to another session.
        let perDevice = max(16, maxOptions / max(1, device.count))
        /// Device session `di`'s options: each relay session it overlaps, how far their ends
        /// are apart, how much they overlap.
        func forEachOption(_ di: Int, _ body: (_ apart: Int64, _ overlap: Int64, _ r: Int) -> Void) {
            guard let d = device[di] else { return }
            let ds = d.start
            let de = max(d.end ?? ds, ds)
            let first = spans.partitionPoint { $0.start < ds - tolerance - longest }
            let last = spans.partitionPoint { $0.start <= de + tolerance }
            for s in spans[first..<max(first, last)] {
                // Touching spans count: a one-second session against second-precision logs.
                let overlap = min(de, s.end) - max(ds, s.start)
                guard overlap >= -tolerance else { continue }
                let end = d.end != nil && s.ended ? disagree(s.end, de) : tolerance
                body(disagree(s.start, ds) + end, overlap, s.index)
            }
        }
        var mine: [(apart: Int64, overlap: Int64, d: Int32, r: Int32)] = []
        var cut: [Int] = []
        for di in device.indices {
            mine.removeAll(keepingCapacity: true)
            forEachOption(di) { apart, overlap, r in mine.append((apart, overlap, Int32(di), Int32(r))) }
            if mine.count > perDevice {
                mine.sort { ($0.apart, $1.overlap, $0.r) < ($1.apart, $0.overlap, $1.r) }
                mine.removeSubrange(perDevice...)
                cut.append(di)
            }
            options.append(contentsOf: mine)
        }
        // The pair whose starts and ends agree best first (a session's own relay session is
        // accepted as it connects and closes as it ends; another phone's longer one that spans
        // it overlaps it as much, and came first), then the largest overlap; equal ones in
        // (device, relay) order.
        options.sort { ($0.apart, $1.overlap, $0.d, $0.r) < ($1.apart, $0.overlap, $1.d, $1.r) }
        var usedD = [Bool](repeating: false, count: device.count)
        var usedR = [Bool](repeating: false, count: relay.count)
        var out: [(d: Int, r: Int)] = []
        for o in options where !usedD[Int(o.d)] && !usedR[Int(o.r)] {
            usedD[Int(o.d)] = true
            usedR[Int(o.r)] = true
            out.append((Int(o.d), Int(o.r)))
        }
        // A session whose best options all went to others, its list cut: its best among the
        // relay sessions left, as the whole list would have given it (the review: 1,100 phones
        // alike left 191 of each side orphans).
        for di in cut where !usedD[di] {
            var best: (apart: Int64, overlap: Int64, r: Int)?
            forEachOption(di) { apart, overlap, r in
                guard !usedR[r] else { return }
                if best.map({ (apart, $0.overlap, r) < ($0.apart, overlap, $0.r) }) ?? true { best = (apart, overlap, r) }
            }
            guard let b = best else { continue }
            usedD[di] = true
            usedR[b.r] = true
            out.append((di, b.r))
        }
        return out
    }
}

extension Int64 {
    /// How far this is from `other` (as large as it gets, without trapping).
    func magnitude(from other: Int64) -> UInt64 {
        self > other ? UInt64(bitPattern: self &- other) : UInt64(bitPattern: other &- self)
    }
}

extension RandomAccessCollection {
    /// The first index whose element is not `isBefore` (which holds for a prefix): a binary search.
    func partitionPoint(_ isBefore: (Element) -> Bool) -> Index {
        var (lo, n) = (startIndex, count)
        while n > 0 {
            let half = n / 2
            let mid = index(lo, offsetBy: half)
            if isBefore(self[mid]) {
                lo = index(after: mid)
                n -= half + 1
            } else {
                n = half
            }
        }
        return lo
    }
}

/// What the relay join reads of a device session (`RelayJoiner`): its id, its times, and the
/// lines a paired difference cites. Made from a session in memory, or kept beside one written
/// to disk while the relay's sessions were made (`HeldDeviceSessions`).
struct DeviceJoinFacts: Sendable {
    var id: String
    var start: Int64?
    var end: Int64?
    var connectedAt: Int64?
    /// Its `socket.connected` line (else its first line), and the last line that decided its
    /// outcome (else its last line): a pair's evidence.
    var connectSource: SourceRef?
    var lastSource: SourceRef?

    init(_ s: Session) {
        id = s.id
        start = s.start
        end = s.end
        connectedAt = s.connectedAt
        var connect: SourceRef?
        for i in s.events.indices where s.events[i].code == .socketConnected {
            connect = s.events[i].source
            break
        }
        connectSource = connect ?? s.events.first?.source
        lastSource = (s.deciding.last ?? s.events.last)?.source
    }

    /// What the join reads: from its connect (else its first line) to its end (nil: no time).
    var span: (start: Int64, end: Int64?)? { (connectedAt ?? start).map { ($0, end) } }
}

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
        for i in events.indices where events[i].kind == "relay.stats" {
            events[i].forEachStat { t, source, frames, fps, dropped in
                out.append(Stat(time: t, frames: frames, fps: fps, dropped: dropped, source: source))
            }
        }
        return out
    }
    public var stalls: [Event] = []
    public var errors: [Event] = []
    public var events: [Event] = []
    /// The device session it was joined to.
    public var deviceSession: String?

    public var start: Int64? { accepted ?? events.first?.time }
    public var end: Int64? { closed ?? events.last?.lastTime }
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
}

/// Groups relay events into relay sessions, estimates the clock offset from paired events
/// (device connected ↔ relay accepted, device end ↔ relay closed), and joins each relay
/// session to the device session it overlaps best once the offset is applied.
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
            if let k = index[id] { i = k } else {
                i = sessions.count
                index[id] = i
                sessions.append(RelaySession(id: id))
            }
            sessions[i].events.append(e)
            if sessions[i].host == nil { sessions[i].host = e.attr("host") }
            switch e.kind {
            case "relay.accepted":
                sessions[i].accepted = sessions[i].accepted ?? e.time
                sessions[i].peer = e.attr("peer") ?? sessions[i].peer
                sessions[i].room = e.attr("room") ?? sessions[i].room
            case "relay.stats":
                break  // kept in `events`; `stats` reads them
            case "relay.stalled": sessions[i].stalls.append(e)
            case "relay.error": sessions[i].errors.append(e)
            case "relay.closed":
                sessions[i].closed = e.time
                sessions[i].reason = e.attr("reason")
                sessions[i].frames = Int(e.attr("frames") ?? "")
            default: break
            }
        }
    }

    private func finish(_ grouped: [RelaySession]) -> [RelaySession] {
        var sessions = grouped
        for i in sessions.indices where sessions[i].frames == nil {
            let stats = sessions[i].stats
            if !stats.isEmpty { sessions[i].frames = stats.reduce(0) { $0 + $1.frames } }
        }
        return sessions
    }

    struct Pair {
        var device: Int
        var relay: Int
        var diffs: [(Int64, SourceRef, SourceRef)]
    }

    /// Candidate pairs of (device, relay) with their start and end differences.
    func pairs(_ device: [Session], _ relay: [RelaySession]) -> [Pair] {
        var out: [Pair] = []
        for (di, d) in device.enumerated() {
            guard let dc = d.connectedAt else { continue }
            let dcSource = d.events.first(where: { $0.kind == "socket.connected" })?.source ?? d.events.first!.source
            for (ri, r) in relay.enumerated() {
                guard let ra = r.accepted else { continue }
                let raSource = r.events.first(where: { $0.kind == "relay.accepted" })!.source
                var diffs = [(ra - dc, dcSource, raSource)]
                if let de = d.end, let rc = r.closed, let last = d.deciding.last ?? d.events.last,
                    let closedEvent = r.events.last(where: { $0.kind == "relay.closed" })
                {
                    diffs.append((rc - de, last.source, closedEvent.source))
                }
                if abs(diffs[0].0) <= maxOffset { out.append(Pair(device: di, relay: ri, diffs: diffs)) }
            }
        }
        return out
    }

    /// The offset most pairs agree on (a one-to-one matching within `tolerance`).
    public func estimate(_ device: [Session], _ relay: [RelaySession]) -> ClockEstimate? {
        let candidates = pairs(device, relay)
        // Most pairs, then most agreeing differences (start and end), then the least spread.
        var best: (score: Int, agreeing: Int, spread: Int64, used: [Pair])?
        for c in candidates {
            let center = c.diffs[0].0
            var usedDevice = Set<Int>()
            var usedRelay = Set<Int>()
            var used: [Pair] = []
            for p in candidates.sorted(by: { abs($0.diffs[0].0 - center) < abs($1.diffs[0].0 - center) })
            where abs(p.diffs[0].0 - center) <= tolerance && !usedDevice.contains(p.device) && !usedRelay.contains(p.relay) {
                usedDevice.insert(p.device)
                usedRelay.insert(p.relay)
                used.append(p)
            }
            let all = used.flatMap { $0.diffs.map(\.0) }.filter { abs($0 - center) <= tolerance }
            let spread = (all.max() ?? 0) - (all.min() ?? 0)
            if let b = best {
                if (used.count, all.count) < (b.score, b.agreeing) { continue }
                if (used.count, all.count) == (b.score, b.agreeing) && spread >= b.spread { continue }
            }
            best = (used.count, all.count, spread, used)
        }
        guard let best, best.score > 0 else { return nil }
        let center = best.used[0].diffs[0].0
        let evidence = best.used.flatMap { $0.diffs }.filter { abs($0.0 - center) <= tolerance }
        let values = evidence.map(\.0).sorted()
        let mid = values.count / 2
        let median = values.count % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2
        let uncertainty = values.count >= 2 ? max(1_000, (values.last! - values.first!) / 2) : nil
        return ClockEstimate(offset: median, uncertainty: uncertainty, pairs: values.count, forced: false,
                             evidence: evidence.map { ($0.1, $0.2, $0.0) })
    }

    /// Joins relay sessions to device sessions by overlap once `offset` is applied, and puts
    /// the relay's lines on the device's time axis.
    public func join(_ device: inout [Session], _ relay: inout [RelaySession], offset: Int64) {
        var options: [(overlap: Int64, d: Int, r: Int)] = []
        for (di, d) in device.enumerated() {
            guard let ds = d.connectedAt ?? d.start else { continue }
            let de = max(d.end ?? ds, ds)
            for (ri, r) in relay.enumerated() {
                guard let rs = r.start.map({ $0 - offset }) else { continue }
                let re = max(r.end.map { $0 - offset } ?? rs, rs)
                // Touching spans count: a one-second session against second-precision logs.
                let overlap = min(de, re) - max(ds, rs)
                if overlap >= -tolerance { options.append((overlap, di, ri)) }
            }
        }
        var usedD = Set<Int>()
        var usedR = Set<Int>()
        for o in options.sorted(by: { $0.overlap > $1.overlap }) where !usedD.contains(o.d) && !usedR.contains(o.r) {
            usedD.insert(o.d)
            usedR.insert(o.r)
            relay[o.r].deviceSession = device[o.d].id
            device[o.d].relay = relay[o.r]
            for var e in relay[o.r].events {
                e.time = e.time.map { $0 - offset }
                e.repeats = e.repeats?.shifted(by: -offset)
                e.displayOffset = device[o.d].displayOffset
                device[o.d].events.append(e)
            }
            device[o.d].events.sort { ($0.time ?? Int64.min, $0.order) < ($1.time ?? Int64.min, $1.order) }
        }
    }
}

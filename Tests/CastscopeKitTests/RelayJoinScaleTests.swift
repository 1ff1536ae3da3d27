import Foundation
import Testing

@testable import CastscopeKit

/// The clock estimate and the join look relay sessions up by time and try the likeliest
/// offsets first (a relay's day has tens of thousands of sessions; a phone's bundle beside it
/// hung when every pair was compared with every pair). Their results must be those of trying
/// everything, written here the way the joiner did before.
@Suite("relay join: by lookup, as trying every pair")
struct RelayJoinScaleTests {
    /// A deterministic generator (the runs must be reproducible).
    struct Lcg: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
        mutating func next(_ n: Int64) -> Int64 { Int64((next() >> 33) % UInt64(n)) }
    }

    static func relayEvent(_ kind: String, _ t: Int64, _ id: String, order: Int) -> Event {
        Event(kind: kind, sdk: "relay", side: .relay, time: t, process: nil, pid: nil, message: kind, attrs: [("session", id)],
              source: SourceRef(path: "relay", line: order), order: order, parsedTime: nil, fileIndex: 1)
    }

    /// `devices` phone sessions and `relays` relay sessions over `spread` µs; `matched` of the
    /// phone sessions have a relay session at `offset` (± a little), the rest are strangers.
    /// Coarse times make exact ties between centers likely.
    static func bundle(seed: UInt64, devices: Int, relays: Int, matched: Int, spread: Int64, offset: Int64, grain: Int64,
                       ends: Bool = false) -> ([Session], [RelaySession])
    {
        var rng = Lcg(state: seed)
        var device: [Session] = []
        var events: [Event] = []
        var order = 0
        for k in 0..<devices {
            let start = rng.next(spread / grain) * grain
            var s = Session(id: "S\(k + 1)", sdk: "jitsi")
            s.start = start
            s.connectedAt = start + rng.next(3) * grain
            if ends || rng.next(4) > 0 { s.end = s.connectedAt! + (1 + rng.next(20)) * grain }
            s.events = [Event(kind: "socket.connected", sdk: "jitsi", side: .extension, time: s.connectedAt, process: nil, pid: 1,
                              message: "connected", attrs: [], source: SourceRef(path: "phone", line: k), order: k,
                              parsedTime: nil, fileIndex: 0)]
            device.append(s)
            if k < matched {
                let id = "m\(k)"
                let accepted = s.connectedAt! + offset + rng.next(3) * grain / 2
                order += 1
                events.append(relayEvent("relay.accepted", accepted, id, order: order))
                if let end = s.end {
                    order += 1
                    events.append(relayEvent("relay.closed", end + offset + rng.next(3) * grain / 2, id, order: order))
                }
            }
        }
        for k in 0..<relays {
            let id = "r\(k)"
            let accepted = rng.next(spread / grain) * grain
            order += 1
            events.append(relayEvent("relay.accepted", accepted, id, order: order))
            if rng.next(5) > 0 {
                order += 1
                events.append(relayEvent("relay.closed", accepted + (1 + rng.next(30)) * grain, id, order: order))
            }
        }
        events.shuffle(using: &rng)
        events.sort { $0.time! < $1.time! }
        return (device, RelayJoiner().group(events))
    }

    /// The estimate as it was: every pair a center, every pair sorted for each.
    static func referenceEstimate(_ j: RelayJoiner, _ device: [Session], _ relay: [RelaySession]) -> ClockEstimate? {
        var candidates: [RelayJoiner.Pair] = []
        for (di, d) in device.enumerated() {
            guard let dc = d.connectedAt else { continue }
            for (ri, r) in relay.enumerated() {
                guard let ra = r.accepted, r.acceptedSource != nil else { continue }
                var p = RelayJoiner.Pair(device: Int32(di), relay: Int32(ri), start: ra - dc, end: nil)
                if let de = d.end, let rc = r.closed, (d.deciding.last ?? d.events.last) != nil, r.closedSource != nil { p.end = rc - de }
                if abs(p.start) <= j.maxOffset { candidates.append(p) }
            }
        }
        var best: (score: Int, agreeing: Int, minutes: Int64, spread: Int64, used: [RelayJoiner.Pair])?
        for c in candidates {
            let center = c.start
            var usedDevice = Set<Int32>()
            var usedRelay = Set<Int32>()
            var used: [RelayJoiner.Pair] = []
            let closest = candidates.enumerated().sorted {
                (abs($0.element.start - center), $0.offset) < (abs($1.element.start - center), $1.offset)
            }.map(\.element)
            for p in closest
            where abs(p.start - center) <= j.tolerance && !usedDevice.contains(p.device) && !usedRelay.contains(p.relay) {
                usedDevice.insert(p.device)
                usedRelay.insert(p.relay)
                used.append(p)
            }
            let all = used.flatMap(\.diffs).filter { abs($0 - center) <= j.tolerance }
            let spread = (all.max() ?? 0) - (all.min() ?? 0)
            let minutes = RelayJoiner.minutesOff(center)
            if let b = best {
                if (used.count, all.count) < (b.score, b.agreeing) { continue }
                if (used.count, all.count) == (b.score, b.agreeing) && minutes > b.minutes { continue }
                if (used.count, all.count, minutes) == (b.score, b.agreeing, b.minutes) && spread >= b.spread { continue }
            }
            best = (used.count, all.count, minutes, spread, used)
        }
        guard let best, best.score > 0 else { return nil }
        return j.estimate(from: best.used, device.map(DeviceJoinFacts.init), RelaySessionList(relay))  // (unchanged: the search is what is compared)
    }

    /// The join by brute force: every device session against every relay session; of those
    /// that overlap, the best agreeing starts and ends (each up to the tolerance) first, then
    /// the largest overlap (the rule since session 38).
    static func referenceJoin(_ j: RelayJoiner, _ device: [Session], _ relay: [RelaySession], offset: Int64) -> [String?] {
        var options: [(apart: Int64, overlap: Int64, d: Int, r: Int)] = []
        for (di, d) in device.enumerated() {
            guard let ds = d.connectedAt ?? d.start else { continue }
            let de = max(d.end ?? ds, ds)
            for (ri, r) in relay.enumerated() {
                guard let rs = r.start.map({ $0 - offset }) else { continue }
                let re = max(r.end.map { $0 - offset } ?? rs, rs)
                let overlap = min(de, re) - max(ds, rs)
                let end = d.end != nil && r.end != nil ? min(abs(re - de), j.tolerance) : j.tolerance
                if overlap >= -j.tolerance { options.append((min(abs(rs - ds), j.tolerance) + end, overlap, di, ri)) }
            }
        }
        var joined = [String?](repeating: nil, count: relay.count)
        var usedD = Set<Int>()
        var usedR = Set<Int>()
        let ordered = options.enumerated().sorted {
            ($0.element.apart, $1.element.overlap, $0.offset) < ($1.element.apart, $0.element.overlap, $1.offset)
        }
        for o in ordered.map(\.element) where !usedD.contains(o.d) && !usedR.contains(o.r) {
            usedD.insert(o.d)
            usedR.insert(o.r)
            joined[o.r] = device[o.d].id
        }
        return joined
    }

    static func same(_ a: ClockEstimate?, _ b: ClockEstimate?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return a.offset == b.offset && a.uncertainty == b.uncertainty && a.pairs == b.pairs
            && a.evidence.map { "\($0.0) \($0.1) \($0.2)" } == b.evidence.map { "\($0.0) \($0.1) \($0.2)" }
    }

    @Test("the estimate and the join equal trying every pair", arguments: 0..<24)
    func sameAsEveryPair(seed: Int) {
        let j = RelayJoiner()
        // Small and coarse (ties), a relay far busier than the phone, strangers only, a wide offset,
        // no relay, a relay session a second.
        let shapes: [(Int, Int, Int, Int64, Int64, Int64)] = [
            (4, 6, 3, 60_000_000, 2_300_000, 1_000_000),
            (12, 40, 8, 1_800_000_000, -4_700_000, 500_000),
            (30, 30, 0, 600_000_000, 0, 1_000_000),
            (16, 24, 12, 300_000_000, 14 * 60_000_000, 250_000),
            (6, 0, 0, 60_000_000, 0, 1_000_000),
            (5, 120, 4, 120_000_000, 1_700_000, 100_000),
        ]
        let (devices, relays, matched, spread, offset, grain) = shapes[seed % shapes.count]
        var (device, relay) = Self.bundle(seed: UInt64(seed) &+ 7, devices: devices, relays: relays, matched: matched,
                                          spread: spread, offset: offset, grain: grain)
        let expected = Self.referenceEstimate(j, device, relay)
        let got = j.estimate(device, relay)
        #expect(Self.same(got, expected), "seed \(seed): \(String(describing: got?.offset)) vs \(String(describing: expected?.offset))")
        if matched > 0 { #expect(got != nil) }
        let at = expected?.offset ?? offset
        let joined = Self.referenceJoin(j, device, relay, offset: at)
        j.join(&device, &relay, offset: at)
        #expect(relay.map(\.deviceSession) == joined, "seed \(seed)")
    }

    @Test("one broadcast lined up at both ends with its own relay session and a stranger's ten minutes off: its own, the offset nearer none")
    func nearerOffsetWins() {
        let s: Int64 = 1_000_000
        var d = Session(id: "S1", sdk: "jitsi")
        d.start = 1_000 * s
        d.connectedAt = 1_000 * s
        d.end = 1_090 * s
        d.events = [Event(kind: "socket.connected", sdk: "jitsi", side: .extension, time: d.connectedAt, process: nil, pid: 1,
                          message: "connected", attrs: [], source: SourceRef(path: "phone", line: 1), order: 0,
                          parsedTime: nil, fileIndex: 0)]
        // Its own at +34 s (ends 0.4 s apart), a stranger's at -643 s (ends 0.1 s apart: the
        // smaller spread, which decided before).
        let events = [Self.relayEvent("relay.accepted", 1_034 * s, "own", order: 1),
                      Self.relayEvent("relay.closed", 1_124 * s + 400_000, "own", order: 2),
                      Self.relayEvent("relay.accepted", 357 * s, "stranger", order: 3),
                      Self.relayEvent("relay.closed", 447 * s + 100_000, "stranger", order: 4)].sorted { $0.time! < $1.time! }
        let estimate = RelayJoiner().estimate([d], RelayJoiner().group(events))
        #expect(estimate.map { $0.offset / s } == 34, "\(String(describing: estimate?.offset))")
    }

    @Test("a phone's sessions beside a busy relay's day: the pairs whose ends agree win")
    func busyRelay() {
        // 8 phone sessions within an hour against 10,000 relay sessions (about three a second:
        // any offset pairs every phone session with some relay session; the old way compared
        // every pair with every pair, some 10^10 steps).
        var (device, relay) = Self.bundle(seed: 3, devices: 8, relays: 10_000, matched: 8, spread: 3_600_000_000,
                                      offset: 3_100_000, grain: 1_000, ends: true)
        let j = RelayJoiner()
        let c = j.estimate(device, relay)
        #expect(c.map { abs($0.offset - 3_100_000) <= 1_000 } == true, "\(String(describing: c?.offset))")
        j.join(&device, &relay, offset: c!.offset)
        #expect(Set(relay.filter { $0.id.hasPrefix("m") }.compactMap(\.deviceSession)).count == 8)
    }

    @Test("hundreds of phone sessions among a busy relay's: the pairs are capped by narrowing the offsets looked at")
    func pairsAreCapped() {
        // 300 phone sessions and 20,000 relay sessions over an hour (5 a second): within a
        // quarter of an hour of each phone session lie some 9,000 relay sessions.
        let (device, relay) = Self.bundle(seed: 5, devices: 300, relays: 20_000, matched: 200, spread: 3_600_000_000,
                                          offset: 2_500_000, grain: 1_000, ends: true)
        var j = RelayJoiner()
        let all = j.pairs(device.map(DeviceJoinFacts.init), RelaySessionList(relay))
        #expect(all.count <= j.maxPairs, "\(all.count)")
        #expect((all.map { abs($0.start) }.max() ?? 0) <= j.maxOffset / 2, "not narrowed")
        // The matched pairs (2.5 s) are within the narrowed window: the offset is still found.
        let c = j.estimate(device, relay)
        #expect(c.map { abs($0.offset - 2_500_000) <= 1_000 } == true, "\(String(describing: c?.offset))")
        // With room for every pair, nothing is narrowed.
        j.maxPairs = Int.max
        #expect(j.pairs(device.map(DeviceJoinFacts.init), RelaySessionList(relay)).count > 1_000_000)
    }
}

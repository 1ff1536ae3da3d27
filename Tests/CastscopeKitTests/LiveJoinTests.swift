import Testing

@testable import CastscopeKit

@Suite("tail: the join beside a busy relay, and the stall check on the phone's clock")
struct LiveJoinTests {
    func phone(_ kind: String, _ pid: Int, _ t: Int64, _ order: Int) -> Event {
        Event(kind: kind, sdk: "jitsi", side: .extension, time: t, process: "BroadcastExtension", pid: pid, message: kind,
              attrs: [], source: SourceRef(path: "device.log", line: order), order: order, parsedTime: nil, fileIndex: 0)
    }

    func relay(_ kind: String, _ id: String, _ t: Int64, _ order: Int) -> Event {
        Event(kind: kind, sdk: "relay", side: .relay, time: t, process: "broadcast-relay", pid: 811, message: "session \(id) \(kind)",
              attrs: [("session", id)], source: SourceRef(path: "relay.journal", line: order), order: order,
              parsedTime: nil, fileIndex: 0)
    }

    /// A phone starting a broadcast every 10 s (each lasting 9 to 23 s, up to three open at
    /// once) beside a relay that also serves other phones (one session in each 10 s, 2 to 8 s
    /// long, accepted at a random time: often within a second of the phone's own), the
    /// relay's clock 2.05 s ahead; the lines in the order they happen.
    func busy(_ count: Int) -> (lines: [Event], own: [String: String]) {
        var timed: [(t: Int64, make: (Int) -> Event)] = []
        var own: [String: String] = [:]
        var rng = SplitMix(seed: 38)
        for k in 0..<count {
            let t = Int64(k) * 10_000_000, length = Int64(9 + (k * 7) % 15) * 1_000_000, pid = 4000 + k
            let id = String(format: "%08x-0003", k)
            own["S\(k + 1)"] = id
            timed += [(t, { self.phone("broadcast.started", pid, t, $0) }),
                      (t + 100_000, { self.phone("socket.connected", pid, t + 100_000, $0) }),
                      (t + length, { self.phone("broadcast.finished", pid, t + length, $0) }),
                      (t + 2_150_000, { self.relay("relay.accepted", id, t + 2_150_000, $0) }),
                      (t + length + 2_050_000, { self.relay("relay.closed", id, t + length + 2_050_000, $0) })]
            let other = t + Int64(rng.next() % 10_000_000), otherId = String(format: "%08x-0004", k)
            let otherLength = Int64(2_000_000 + rng.next() % 6_000_000)
            timed += [(other, { self.relay("relay.accepted", otherId, other, $0) }),
                      (other + otherLength, { self.relay("relay.closed", otherId, other + otherLength, $0) })]
        }
        timed.sort { $0.t < $1.t }
        return (timed.enumerated().map { $0.element.make($0.offset + 1) }, own)
    }

    @Test("beside a busy relay, each broadcast is joined to its own relay session, with the clock estimated now and then")
    func busyRelay() {
        let (lines, own) = busy(1500)
        let live = LiveSessions()
        var joins: [String: String] = [:]
        var clocks = Set<Int64>()
        func take(_ changes: [LiveSessions.Change]) {
            for c in changes {
                if case .joined(let s, let r) = c {
                    #expect(joins[s.id] == nil)
                    joins[s.id] = r.id
                    clocks.insert(live.clock!.offset)
                }
            }
        }
        for e in lines { take(live.feed(e)) }
        // (the last once the relay's clock passed its end: the journal quiet for a minute)
        take(live.tick(now: lines.last!.time! + 60_000_000))
        #expect(joins.count == 1500)
        let wrong = joins.filter { own[$0.key] != $0.value }
        #expect(wrong.isEmpty, "\(wrong.count) joined to another phone's session, e.g. \(wrong.sorted { $0.key < $1.key }.prefix(3))")
        #expect(clocks.allSatisfy { abs($0 - 2_050_000) <= 100_000 }, "\(clocks.sorted())")
        // 1,500 phone sessions settle: the estimate is made at each while it looks at fewer
        // than 256 sessions (the relay's within reach count too), then once half as many again
        // settled: 64 times (before session 38, at each of the 4,500 sessions that arrived).
        #expect(live.estimates < 200, "\(live.estimates) estimates")
    }

    @Test("a phone's log piped in after the relay's journal was read is joined as well (the relay's closed sessions keep the lines the join reads)")
    func relayFirst() {
        let (lines, own) = busy(100)
        let live = LiveSessions()
        var joins: [String: String] = [:]
        for e in lines.filter({ $0.side == .relay }) + lines.filter({ $0.side != .relay }) {
            for c in live.feed(e) { if case .joined(let s, let r) = c { joins[s.id] = r.id } }
        }
        live.phoneSideEnded = true
        for c in live.tick(now: lines.last!.time! + 60_000_000) { if case .joined(let s, let r) = c { joins[s.id] = r.id } }
        #expect(joins.count == 100 && joins == own, "\(joins.count) joined, \(joins.filter { own[$0.key] != $0.value }.count) to another's")
    }

    @Test("analyze's join gives a broadcast its own relay session, not another phone's longer one that spans it and came first")
    func closestEndsFirst() {
        // A broadcast from 100 s to 130 s; the relay's clock 2 s ahead: another phone's relay
        // session from 90 s to 160 s (seen first) overlaps all of it, its own (102.1–132.0 s)
        // a tenth of a second less.
        let m = RelayJoiner().matches([(100_000_000, 130_000_000)], [(90_000_000, 160_000_000), (102_100_000, 132_000_000)],
                                      offset: 2_000_000)
        #expect(m.map(\.r) == [1])
        // A killed extension's relay session, closed on a timeout half a minute late, still
        // beats another phone's short one inside the broadcast; an open broadcast its own open
        // relay session.
        #expect(RelayJoiner().matches([(100_000_000, 130_000_000)], [(102_100_000, 162_000_000), (112_000_000, 127_000_000)],
                                      offset: 2_000_000).map(\.r) == [0])
        #expect(RelayJoiner().matches([(100_000_000, nil)], [(102_100_000, nil), (103_000_000, 105_000_000)],
                                      offset: 2_000_000).map(\.r) == [0])
        // Alone, the other phone's still joins it (an overlap is all the join asks).
        #expect(RelayJoiner().matches([(100_000_000, 130_000_000)], [(90_000_000, 160_000_000)], offset: 2_000_000).map(\.r) == [0])
    }

    @Test("in live order (the join a few seconds after the end), a session's findings still read its relay session")
    func findingsAfterTheJoin() {
        var (lines, own) = busy(6)
        // The relay sees no frames for a while in S6's own relay session.
        let sixth = lines.first { $0.attr("session") == own["S6"] && $0.kind == "relay.accepted" }!
        var stall = relay("relay.stalled", own["S6"]!, sixth.time! + 3_000_000, 0)
        stall.message = "session \(own["S6"]!) no frames for 2.0 s"
        lines.append(stall)
        lines.sort { $0.time! < $1.time! }
        let live = LiveSessions()
        var changes: [LiveSessions.Change] = []
        for (i, var e) in lines.enumerated() {
            e.order = i + 1
            changes += live.feed(e)
        }
        changes += live.tick(now: lines.last!.time! + 60_000_000)
        let six = changes.compactMap { c -> String? in
            switch c {
            case .ended(let s) where s.id == "S6": "ended"
            case .joined(let s, _) where s.id == "S6": "joined"
            case .finding(let s, let f) where s.id == "S6": f.message.hasPrefix("the relay received no frames") ? "relay-stall" : "finding"
            default: nil
            }
        }
        #expect(six.first == "ended" && six.contains("joined") && six.contains("relay-stall"), "\(six)")
        #expect(six.firstIndex(of: "relay-stall")! > six.firstIndex(of: "joined")!)
    }

    @Test("a session the host app's close ended gets its findings, as one its own end line ended does")
    func hostEndedFindings() {
        let live = LiveSessions()
        var changes: [LiveSessions.Change] = []
        var order = 0
        func line(_ kind: String, _ t: Int64, side: Side = .extension) {
            order += 1
            changes += live.feed(Event(kind: kind, sdk: "jitsi", side: side, time: t, process: side == .app ? "Host" : "BroadcastExtension",
                                       pid: side == .app ? 640 : 700, message: kind, attrs: [],
                                       source: SourceRef(path: "device.log", line: order), order: order, parsedTime: nil, fileIndex: 0))
        }
        line("broadcast.started", 0)
        line("socket.connected", 100_000)
        for k in 0..<5 { line("frame.sent", 200_000 + Int64(k) * 100_000) }
        line("frame.sent", 5_000_000)  // 4.4 s without a frame
        line("server.client_disconnected", 6_000_000, side: .app)
        let ended = changes.contains { if case .ended(let s) = $0 { s.outcome == .completed } else { false } }
        let kinds = changes.compactMap { c -> String? in if case .finding(_, let f) = c { f.kind } else { nil } }
        #expect(ended)
        #expect(kinds.contains("frame-stall"), "\(kinds)")
    }

    @Test("the stall check measures against the phone's clock: a log piped in hours after it was written is not stalled by them")
    func stallOnThePhonesClock() {
        let live = LiveSessions()
        let written: Int64 = 1_000_000_000_000, read = written + 3_600_000_000 * 6000
        var order = 0
        func line(_ kind: String, _ t: Int64) {
            order += 1
            _ = live.feed(phone(kind, 900, written + t, order), wall: read + t / 100)
        }
        line("broadcast.started", 0)
        line("socket.connected", 100_000)
        for k in 0..<10 { line("frame.sent", 200_000 + Int64(k) * 100_000) }
        // (the last line was read at read + 11 ms; its frame is the newest line)
        let lastRead = read + 1_100_000 / 100
        #expect(live.tick(now: lastRead + 1_000_000).isEmpty)
        let stalls = live.tick(now: lastRead + 2_500_000).compactMap { c -> String? in
            if case .stalled(_, let why) = c { return why } else { return nil }
        }
        #expect(stalls == ["no frames for 2.5 s"])
        // Standard input closed: what is open is where the input ended, not a stall.
        let other = LiveSessions()
        _ = other.feed(phone("broadcast.started", 901, written, 1), wall: read)
        _ = other.feed(phone("socket.connected", 901, written + 100_000, 2), wall: read)
        _ = other.feed(phone("frame.sent", 901, written + 200_000, 3), wall: read)
        other.phoneSideEnded = true
        #expect(other.tick(now: read + 10_000_000).isEmpty)
    }
}

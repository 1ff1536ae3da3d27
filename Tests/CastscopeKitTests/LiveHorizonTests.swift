import Foundation
import Testing

@testable import CastscopeKit

@Suite("tail: what it keeps follows what is open, not what it has seen")
struct LiveHorizonTests {
    func relayLine(_ kind: String, _ id: String, _ t: Int64, _ order: Int, _ extra: [(String, String)] = []) -> Event {
        Event(kind: kind, sdk: "relay", side: .relay, time: t, process: "broadcast-relay", pid: 811, message: "session \(id) \(kind)",
              attrs: [("session", id)] + extra, source: SourceRef(path: "relay.journal", line: order), order: order,
              parsedTime: nil, fileIndex: 0)
    }

    @Test("a relay followed alone lets go of closed sessions past the horizon; one touched again starts afresh")
    func relayHorizon() {
        let live = LiveSessions()
        var order = 0
        // A session every 10 s for 3 hours, each open 5 s with two stats lines.
        for k in 0..<1080 {
            let id = String(format: "%08x-0000", k), t = Int64(k) * 10_000_000
            for (kind, dt) in [("relay.accepted", 0), ("relay.stats", 2), ("relay.stats", 4), ("relay.closed", 5)] {
                order += 1
                _ = live.feed(relayLine(kind, id, t + Int64(dt) * 1_000_000, order, kind == "relay.stats" ? [("frames", "10")] : []))
            }
        }
        #expect(live.relaySeen == 1080)
        // Sessions closed within the last 30 minutes (180 of them) and no older.
        #expect(live.relay.count <= 200 && live.relay.count >= 180, "\(live.relay.count)")
        #expect(live.relay.values.allSatisfy { $0.events.map(\.kind) == ["relay.accepted", "relay.closed"] },
                "closed sessions keep only the lines the join reads")
        #expect(live.relay["00000000-0000"] == nil && live.relay[String(format: "%08x-0000", 1079)] != nil)
        // A line of a let-go session starts it afresh.
        order += 1
        _ = live.feed(relayLine("relay.stats", "00000000-0000", 10_800_000_000, order, [("frames", "10")]))
        #expect(live.relay["00000000-0000"]?.events.count == 1)
    }

    @Test("a phone followed alone drops an ended session's lines past the horizon and keeps its outcome")
    func deviceHorizon() {
        let live = LiveSessions()
        var order = 0
        func line(_ kind: String, _ pid: Int, _ t: Int64) {
            order += 1
            _ = live.feed(Event(kind: kind, sdk: "jitsi", side: .extension, time: t, process: "BroadcastExtension", pid: pid,
                                message: kind, attrs: [], source: SourceRef(path: "device.log", line: order), order: order,
                                parsedTime: nil, fileIndex: 0))
        }
        // A session a minute for two hours, each in its own extension process.
        for k in 0..<120 {
            let t = Int64(k) * 60_000_000
            line("broadcast.started", 1000 + k, t)
            line("socket.connected", 1000 + k, t + 100_000)
            line("broadcast.finished", 1000 + k, t + 20_000_000)
        }
        let sessions = live.sessions
        // Those let go of leave with their streams, counted by outcome (session 45: a day piped
        // in kept every session seen, 1.8 KB each); the last half hour's are held, lines and all.
        #expect(sessions.count + live.retiredSessions == 120)
        #expect(live.retiredOutcomes[.completed] == live.retiredSessions)
        #expect(sessions.allSatisfy { !$0.reason.isEmpty }, "every one ended, with its outcome kept")
        let kept = sessions.filter { !$0.events.isEmpty }.count
        #expect(kept >= 30 && kept <= 32, "only the last half hour keeps its lines: \(kept)")
        #expect(sessions.count <= 32 && live.streams.count <= 32 && live.ids.count <= 32 && live.connectedKeys.count <= 32,
                "\(sessions.count) \(live.streams.count) \(live.connectedKeys.count)")
        // What a host line and the stall check look at: the open streams, none here.
        #expect(live.openStreams.isEmpty)
        line("broadcast.started", 5000, 120 * 60_000_000)
        #expect(live.openStreams.count == 1)
    }

    @Test("with both sides followed, sessions are still joined, and what closed on both clocks half an hour ago goes")
    func bothSides() {
        let live = LiveSessions()
        var order = 0
        var joined = 0
        func count(_ changes: [LiveSessions.Change]) {
            for c in changes { if case .joined = c { joined += 1 } }
        }
        func device(_ kind: String, _ pid: Int, _ t: Int64) {
            order += 1
            count(live.feed(Event(kind: kind, sdk: "jitsi", side: .extension, time: t, process: "BroadcastExtension", pid: pid,
                                  message: kind, attrs: [], source: SourceRef(path: "device.log", line: order), order: order,
                                  parsedTime: nil, fileIndex: 0)))
        }
        // A broadcast a minute for three hours; the relay's clock 2 s ahead of the phone's.
        for k in 0..<180 {
            let t = Int64(k) * 60_000_000, id = String(format: "%08x-0001", k)
            device("broadcast.started", 2000 + k, t)
            device("socket.connected", 2000 + k, t + 100_000)
            for (kind, dt) in [("relay.accepted", 2_200_000), ("relay.stats", 10_000_000), ("relay.closed", 21_000_000)] {
                order += 1
                count(live.feed(relayLine(kind, id, t + Int64(dt), order, kind == "relay.stats" ? [("frames", "10")] : [])))
            }
            device("broadcast.finished", 2000 + k, t + 20_000_000)
        }
        // (the last one once the relay's clock passed its end: a quiet journal, a minute later)
        count(live.tick(now: 181 * 60_000_000))
        #expect(joined == 180, "every broadcast joined to its relay session")
        // (relay sessions outlive the phone's by twice the join's reach: an hour and a half)
        #expect(live.relay.count <= 92, "\(live.relay.count) relay sessions kept")
        #expect(live.sessions.filter { !$0.events.isEmpty }.count <= 32)
        #expect(live.connected.count <= 32 + 256, "the join's list is trimmed")
    }

    @Test("once the phone's side ended (standard input closed), the relay's goes on letting go")
    func phoneSideEnded() {
        let live = LiveSessions()
        var order = 0
        // An hour of a phone's broadcasts beside the relay, then three more hours of the relay alone.
        for k in 0..<240 {
            let t = Int64(k) * 60_000_000, id = String(format: "%08x-0002", k)
            if k < 60 {
                for (kind, dt) in [("broadcast.started", 0), ("socket.connected", 100_000), ("broadcast.finished", 20_000_000)] {
                    order += 1
                    _ = live.feed(Event(kind: kind, sdk: "jitsi", side: .extension, time: t + Int64(dt), process: "BroadcastExtension",
                                        pid: 3000 + k, message: kind, attrs: [], source: SourceRef(path: "device.log", line: order),
                                        order: order, parsedTime: nil, fileIndex: 0))
                }
            }
            if k == 60 { live.phoneSideEnded = true }
            for (kind, dt) in [("relay.accepted", 2_200_000), ("relay.closed", 21_000_000)] {
                order += 1
                _ = live.feed(relayLine(kind, id, t + Int64(dt), order))
            }
        }
        #expect(live.relay.count <= 92, "\(live.relay.count) relay sessions kept")
    }

    @Test("an ended phone session keeps only the lines the join and its row read, and still joins a relay session that comes later")
    func endedSessionKeepsWhatTheJoinReads() {
        var order = 0
        func phone(_ kind: String, _ t: Int64, side: Side = .extension, attrs: [(String, String)] = []) -> Event {
            order += 1
            return Event(kind: kind, sdk: "jitsi", side: side, time: t, process: side == .app ? "Host" : "BroadcastExtension",
                         pid: side == .app ? 640 : 700, message: "\(kind) \(order)", attrs: attrs,
                         source: SourceRef(path: "device.log", line: order), order: order, parsedTime: nil, fileIndex: 0)
        }
        // A broadcast whose host app logs a line every 100 ms (joined to the open session), then
        // its relay session, whose journal arrives a minute late.
        var lines = [phone("broadcast.started", 0), phone("socket.connect_attempt", 50_000),
                     phone("socket.connected", 100_000, attrs: [("bundle", "org.example.app")])]
        for k in 0..<300 { lines.append(phone("server.frame_received", 200_000 + Int64(k) * 100_000, side: .app)) }
        lines.append(phone("broadcast.finished", 40_000_000))
        let full = lines.filter { $0.side == .extension || $0.kind == "server.frame_received" }
        var relay: [Event] = []
        for (kind, dt) in [("relay.accepted", Int64(2_100_000)), ("relay.closed", Int64(41_000_000))] {
            order += 1
            relay.append(relayLine(kind, "0000abcd-0000", dt, order))
        }
        let live = LiveSessions()
        for e in lines { _ = live.feed(e) }
        let kept = live.sessions[0].events
        #expect(kept.count <= 4, "\(kept.count) lines kept")
        #expect(kept.first?.source == full.first?.source && kept.last?.source == lines.last?.source)
        #expect(kept.first { $0.kind == "socket.connected" }?.source == lines[2].source)
        #expect(kept.lazy.compactMap { $0.attr("bundle") }.first == "org.example.app")
        var joins: [(Session, RelaySession)] = []
        // (one session beside the relay: joined once both clocks passed its end by the clock
        // estimate's reach, as one pair gives no other evidence: the phone's log ended, the
        // relay's journal then quiet for a quarter of an hour)
        var changes = relay.flatMap { live.feed($0) }
        live.phoneSideEnded = true
        changes += live.tick(now: 40_000_000 + 905_000_000 - 1)
        #expect(!changes.contains { if case .joined = $0 { true } else { false } })
        for c in changes + live.tick(now: 40_000_000 + 905_000_000) {
            if case .joined(let s, let r) = c { joins.append((s, r)) }
        }
        #expect(joins.count == 1 && joins.first?.0.id == "S1" && joins.first?.1.id == "0000abcd-0000")
        // The clock is the one all of the session's lines give, with the relay session as
        // tail has it when it joins (closed), and so are the lines behind it.
        var device = SessionBuilder().build(lines).sessions
        var rel = RelayJoiner().group(relay)
        let estimate = RelayJoiner().estimate(device, rel)
        RelayJoiner().join(&device, &rel, offset: estimate?.offset ?? 0)
        #expect(estimate != nil && live.clock?.offset == estimate?.offset)
        #expect(live.clock.map { "\($0.evidence)" } == estimate.map { "\($0.evidence)" })
        #expect(rel.first?.deviceSession == "S1")
    }

    @Test("the lines kept of an ended session answer the join's and the row's questions as all of them do")
    func keptLinesAnswerTheSame() {
        var rng = SplitMix(seed: 11)
        let kinds = ["frame.sent", "socket.connected", "socket.connect_attempt", "server.client_connected", "broadcast.finished"]
        for _ in 0..<200 {
            var events: [Event] = []
            for n in 0..<Int(rng.next() % 12) {
                let bundle: [(String, String)] = rng.next() % 5 == 0 ? [("bundle", "b\(n)")] : []
                events.append(Event(kind: kinds[Int(rng.next() % 5)], sdk: "jitsi", side: .extension, time: Int64(n), process: "E", pid: 1,
                                    message: "m\(n)", attrs: bundle, source: SourceRef(path: "d.log", line: n + 1), order: n,
                                    parsedTime: nil, fileIndex: 0))
            }
            var kept = events
            LiveSessions.keepLinesReadAfterEnd(&kept)
            #expect(kept.count <= 4)
            #expect(kept.first?.source == events.first?.source && kept.last?.source == events.last?.source)
            #expect(kept.first { $0.kind == "socket.connected" }?.source == events.first { $0.kind == "socket.connected" }?.source)
            #expect(kept.lazy.compactMap { $0.attr("bundle") }.first == events.lazy.compactMap { $0.attr("bundle") }.first)
            #expect(kept.map(\.order) == kept.map(\.order).sorted())
        }
    }

    @Test("a retry storm superseded by the next extension closes as analyze closes it, and host lines stop joining it")
    func supersededStormCloses() {
        let live = LiveSessions()
        var order = 0
        var ended: [String: String] = [:]
        func line(_ kind: String, _ pid: Int, _ t: Int64, side: Side = .extension, process: String = "BroadcastExtension",
                  attrs: [(String, String)] = []) {
            order += 1
            for c in live.feed(Event(kind: kind, sdk: "jitsi", side: side, time: t, process: process, pid: pid, message: kind,
                                     attrs: attrs, source: SourceRef(path: "device.log", line: order), order: order,
                                     parsedTime: nil, fileIndex: 0)) {
                if case .ended(let s) = c { ended[s.id] = s.reason }
            }
        }
        // Every third session never connects (its socket file missing) and writes nothing more;
        // the host app writes a line every ten seconds throughout.
        for k in 0..<300 {
            let t = Int64(k) * 97_000_000, pid = 2000 + k
            line("broadcast.started", pid, t)
            if k % 3 == 1 {
                for i in 0..<5 {
                    line("socket.connect_attempt", pid, t + Int64(i) * 100_000)
                    line("socket.connect_failed", pid, t + Int64(i) * 100_000 + 50, attrs: [("cause_text", "socket file missing")])
                }
            } else {
                line("socket.connected", pid, t + 600_000)
                line("broadcast.finished", pid, t + 20_000_000)
            }
            for h in 0..<9 { line("app.log", 900, t + Int64(h) * 10_000_000, side: .app, process: "HostApp") }
        }
        // Every storm ended once the next session began and it had been silent a minute, with
        // analyze's reason.
        let storms = (0..<300).filter { $0 % 3 == 1 }.map { "S\($0 + 1)" }
        for id in storms {
            #expect(ended[id] == "never connected: the log ends after 5 failed connect attempts over 400 ms", "\(id): \(ended[id] ?? "open")")
        }
        #expect(live.openStreams.count <= 2, "\(live.openStreams.count) open")
        // The open storms did not collect every host line after them.
        #expect(live.open.allSatisfy { $0.events.count < 40 })
    }

    /// The review of session 45's retirement (`LiveSessions.retire`): a relay session that
    /// arrives late for a retired phone session, and that phone's pid used again, must neither
    /// trap nor join the new session; a retired process that writes again is placed like a host
    /// line, as `analyze` places it, not made a session of its own.
    @Test("a retired stream: a late relay session for it, its pid used again, its process writing again")
    func retiredStreams() throws {
        func ts(_ s: Double) -> String {
            let h = 7 + Int(s) / 3600, m = Int(s) % 3600 / 60, sec = s.truncatingRemainder(dividingBy: 60)
            return "2026-03-12T\(h < 10 ? "0" : "")\(h):\(m < 10 ? "0" : "")\(m):\(sec < 10 ? "0" : "")\(String(format: "%.6f", sec))+00:00"
        }
        var out: [(Double, String)] = []
        func phone(_ t: Double, _ pid: Int, _ m: String) { out.append((t, "\(ts(t)) iphone BroadcastExtension[\(pid)]: \(m)")) }
        func relay(_ t: Double, _ sid: String, _ m: String) { out.append((t, "\(ts(t)) relay1 broadcast-relay[811]: session \(sid) \(m)")) }
        func session(_ t0: Double, _ pid: Int, _ sid: String?) {
            phone(t0, pid, "broadcast started"); phone(t0 + 0.1, pid, "Open socket connection"); phone(t0 + 0.2, pid, "client stream open completed")
            phone(t0 + 1, pid, "video sample processed successfully"); phone(t0 + 5, pid, "server socket closed")
            phone(t0 + 5.0001, pid, "client connection did close: (null)")
            if let sid { relay(t0 + 0.3, sid, "accepted peer=iPhone14,2 room=r1"); relay(t0 + 5.1, sid, "closed reason=peer-eof frames=10 duration=4.8s") }
        }
        session(60, 500, nil)
        for i in 0..<40 { session(Double(120 + i * 120), 1000 + i, String(format: "%08x-1b7e-4f0e-9a51-2f1d3c4b5a69", i + 1)) }
        out.sort { $0.0 < $1.0 }
        var lines = out.map(\.1)
        lines.append("\(ts(60.3)) relay1 broadcast-relay[811]: session deadbeef-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=rX")
        lines.append("\(ts(65.1)) relay1 broadcast-relay[811]: session deadbeef-1b7e-4f0e-9a51-2f1d3c4b5a69 closed reason=peer-eof frames=10 duration=4.8s")
        out = []
        let base = Double(120 + 40 * 120)
        session(base + 60, 500, "cafe0001-1b7e-4f0e-9a51-2f1d3c4b5a69")
        // (the first phone process writes once more, long after its session was let go of)
        phone(base + 90, 1000, "video sample processed successfully")
        for i in 0..<5 { session(base + 120 + Double(i) * 120, 2000 + i, String(format: "%08x-1b7e-4f0e-9a51-2f1d3c4b5a69", i + 0x100)) }
        lines += out.sorted { $0.0 < $1.0 }.map(\.1)
        let r = try castscope(["tail", "--no-journal", "-"], stdin: Data((lines.joined(separator: "\n") + "\n").utf8))
        #expect(r.status == 0, "\(r.stderr)")
        let joins = r.stdout.split(separator: "\n").filter { $0.contains(" joined ") }
        let reused = joins.filter { $0.contains("S42 ") }
        #expect(reused.count == 1 && reused.first?.contains("cafe0001") == true, "\(reused)")
        #expect(r.stdout.contains("47 sessions seen"), "\(r.stdout.suffix(300))")
    }
    @Test("a retired stream's sessions a prune took out of the connected list already are not counted again: a live connected session still counts as connected (a review's case)")
    func retiredPlacesCountedOnce() {
        let live = LiveSessions()
        var order = 0
        func line(_ kind: String, _ pid: Int, _ t: Int64) {
            order += 1
            _ = live.feed(Event(kind: kind, sdk: "jitsi", side: .extension, time: t, process: "BroadcastExtension", pid: pid,
                                message: kind, attrs: [], source: SourceRef(path: "device.log", line: order), order: order,
                                parsedTime: nil, fileIndex: 0))
        }
        let s: Int64 = 1_000_000, m = 60 * s
        // Stream A (pid 1000) with two sessions, stream B (pid 2000) with one.
        line("broadcast.started", 1000, 0); line("socket.connected", 1000, s / 10); line("broadcast.finished", 1000, 20 * s)
        line("broadcast.started", 2000, 10 * s); line("socket.connected", 2000, 11 * s); line("broadcast.finished", 2000, 30 * s)
        line("broadcast.started", 1000, 60 * s); line("socket.connected", 1000, 61 * s); line("broadcast.finished", 1000, 80 * s)
        // A live session (pid 3000), connected and open; time moves on: A's first and B let go, B retired.
        line("broadcast.started", 3000, 30 * m); line("socket.connected", 3000, 30 * m + s)
        line("frame.sent", 3000, 30 * m + 35 * s)
        // pid 2000 again: the prune runs before its new stream begins.
        line("broadcast.started", 2000, 30 * m + 40 * s)
        line("broadcast.finished", 2000, 30 * m + 45 * s)
        // Past A's second session's end and the horizon: A retired.
        line("frame.sent", 3000, 32 * m)
        #expect(live.connectedRetired == live.connected.filter { live.streams[$0.stream] == nil }.count)
        #expect(!live.noPhoneConnected)
        // A relay session closing now keeps its stats line (a relay followed alone keeps only
        // its accepted and closed lines).
        func relay(_ kind: String, _ t: Int64, _ extra: [(String, String)] = []) {
            order += 1
            _ = live.feed(Event(kind: kind, sdk: "relay", side: .relay, time: t, process: "broadcast-relay", pid: 811,
                                message: "session r1 \(kind)", attrs: [("session", "r1")] + extra,
                                source: SourceRef(path: "relay.journal", line: order), order: order, parsedTime: nil, fileIndex: 0))
        }
        relay("relay.accepted", 30 * m + 2 * s); relay("relay.stats", 31 * m, [("frames", "10")]); relay("relay.closed", 32 * m + 5 * s)
        #expect(live.relay["r1"]?.events.count == 3)
    }
}


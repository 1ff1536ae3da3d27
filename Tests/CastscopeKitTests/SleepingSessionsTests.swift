import Foundation
import Testing

@testable import CastscopeKit

/// Open sessions whose process has been silent for the idle horizon go to the spill while
/// many are open, and come back when their process writes again or the logs end: the sessions
/// handed on are the same, field for field and line for line, as when every one stays in
/// memory. A pid that comes back under another process name ends the process it named before.
@Suite("sleeping open sessions, and a pid used again")
struct SleepingSessionsTests {
    typealias Line = (t: Int64, pid: Int, process: String, kind: String, message: String, side: Side)

    static func events(_ lines: [Line]) -> [Event] {
        lines.sorted { $0.t < $1.t }.enumerated().map { n, l in
            Event(kind: l.kind, sdk: "jitsi", side: l.side, time: l.t, process: l.process, pid: l.pid, message: l.message,
                  attrs: l.kind == "socket.connect_failed" ? [("cause_text", "socket file missing")] : [],
                  source: SourceRef(path: "p.log", line: n + 1), order: n, parsedTime: nil, fileIndex: 0)
        }
    }

    struct Run {
        var sessions: [String]
        /// (seq, whether `finish` handed it on) per session, in the order handed on.
        var handedAtEnd: [Int: Bool]
        var maxAsleep: Int
        var woke: Int
    }

    static func run(_ events: [Event], sleepAfter: Int, parkAfter: Int = 512, idleHorizon: Int64 = 60_000_000,
                    afterEnd: Int64 = 30_000_000) -> Run {
        var stream = SessionStream()
        stream.sleepAfter = sleepAfter
        stream.parkAfter = parkAfter
        stream.idleHorizon = idleHorizon
        stream.afterEnd = afterEnd
        stream.learn(events)
        var out: [Session] = []
        var handedAtEnd: [Int: Bool] = [:]
        var maxAsleep = 0, woke = 0
        for e in events {
            let before = stream.asleepCount
            stream.feed(e) { handedAtEnd[$0.seq] = false; out.append($0) }
            if stream.asleepCount < before { woke += 1 }
            maxAsleep = max(maxAsleep, stream.asleepCount)
        }
        stream.finish { handedAtEnd[$0.seq] = true; out.append($0) }
        #expect(stream.asleepCount == 0)
        return Run(sessions: describe(out, texts: true), handedAtEnd: handedAtEnd, maxAsleep: maxAsleep, woke: woke)
    }

    /// Quiet extensions: each starts, connects, sends a few frames (a counter in each line),
    /// goes silent for five minutes while others start, then sends more and (most) end.
    @Test func quietSessionsSleepAndComeBackTheSame() {
        var lines: [Line] = []
        for k in 0..<40 {
            let t = Int64(k) * 2_000_000, pid = 300 + k, p = "Ext\(k)"
            lines.append((t, pid, p, "broadcast.started", "broadcast started", .extension))
            lines.append((t + 1_000, pid, p, "socket.connect_attempt", "open socket connection", .extension))
            if k % 5 == 2 {
                lines.append((t + 2_000, pid, p, "socket.connect_failed", "failure: socket file missing", .extension))
                lines.append((t + 3_000, pid, p, "socket.connect_attempt", "open socket connection", .extension))
            }
            lines.append((t + 4_000, pid, p, "socket.connected", "client stream open completed", .extension))
            lines.append((t + 4_500, 7, "Host", "server.client_connected", "server stream open completed", .app))
            for f in 0..<30 {
                lines.append((t + 100_000 + Int64(f) * 100_000, pid, p, "frame.sent", "video sample processed successfully \(f)", .extension))
            }
            let back = t + 300_000_000
            for f in 30..<60 {
                lines.append((back + Int64(f) * 100_000, pid, p, "frame.sent", "video sample processed successfully \(f)", .extension))
            }
            if k % 4 != 3 { lines.append((back + 7_000_000, pid, p, "broadcast.finished", "broadcastFinished", .extension)) }
        }
        let events = Self.events(lines)
        let kept = Self.run(events, sleepAfter: Int.max)
        let slept = Self.run(events, sleepAfter: 0)
        #expect(kept.sessions.count == 40)
        #expect(slept.sessions == kept.sessions)
        #expect(kept.maxAsleep == 0)
        #expect(slept.maxAsleep >= 30)
        #expect(slept.woke >= 30)
        // With a few sessions parked behind one still open as well.
        #expect(Self.run(events, sleepAfter: 0, parkAfter: 2).sessions == kept.sessions)
    }

    /// Every line a new process that never ends (a hostile log): the sessions sleep, and the
    /// end of the logs finishes and hands them on one at a time.
    @Test func sessionsOpenToTheEndAreFinishedOneAtATime() {
        var lines: [Line] = []
        for k in 0..<300 {
            lines.append((Int64(k) * 1_000_000, 10_000 + k, "BroadcastExt\(k)", "frame.sent", "video sample processed successfully", .extension))
        }
        let events = Self.events(lines)
        let kept = Self.run(events, sleepAfter: Int.max)
        let slept = Self.run(events, sleepAfter: 0)
        #expect(slept.sessions == kept.sessions)
        #expect(slept.maxAsleep > 200)
        #expect(slept.handedAtEnd.values.allSatisfy { $0 })
    }

    /// A process's second session sleeps after a socket error while its first, ended, still
    /// waits to be handed on (a long `afterEnd`): taking the first out must not lose the
    /// second's error, which decides its outcome when the logs end.
    @Test func anEarlierSessionTakenOutLeavesTheSleepingOnesError() {
        let lines: [Line] = [(0, 77, "Ext", "broadcast.started", "broadcast started", .extension),
                             (1_000, 77, "Ext", "socket.connected", "client stream open completed", .extension),
                             (500_000, 77, "Ext", "broadcast.finished", "broadcastFinished", .extension),
                             (2_000_000, 77, "Ext", "broadcast.started", "broadcast started", .extension),
                             (2_001_000, 77, "Ext", "socket.connected", "client stream open completed", .extension),
                             (2_500_000, 77, "Ext", "socket.error", "socket error: Broken pipe", .extension),
                             (9_000_000, 8, "Other", "broadcast.started", "broadcast started", .extension),
                             (12_000_000, 8, "Other", "frame.sent", "video sample processed successfully", .extension)]
        func run(_ sleepAfter: Int) -> [String] {
            var stream = SessionStream()
            stream.sleepAfter = sleepAfter
            stream.idleHorizon = 1_000_000
            stream.afterEnd = 3_600_000_000
            var out: [String] = []
            for e in Self.events(lines) { stream.feed(e) { out.append("\($0.id) \($0.outcome) \($0.reason)") } }
            stream.finish { out.append("\($0.id) \($0.outcome) \($0.reason)") }
            return out
        }
        let kept = run(Int.max)
        #expect(kept.count == 3 && kept[1].hasPrefix("S2 socketError"))
        #expect(run(0) == kept)
    }

    /// Where a sleeping session's span ends is where it ends awake, also when its last line
    /// carries no time (the span then ends at its start).
    @Test func aSleepingSessionsSpanIsTheAwakeOnes() {
        var events = Self.events([(0, 5, "Quiet", "broadcast.started", "broadcast started", .extension)])
        events.append(Event(kind: "frame.sent", sdk: "jitsi", side: .extension, time: nil, process: "Quiet", pid: 5,
                            message: "video sample processed successfully", attrs: [], source: SourceRef(path: "p.log", line: 2),
                            order: 1, parsedTime: nil, fileIndex: 0))
        for k in 0..<120 {
            let t = Int64(k + 1) * 1_000_000
            events.append(Event(kind: "frame.sent", sdk: "jitsi", side: .extension, time: t, process: "Busy", pid: 6,
                                message: "video sample processed successfully", attrs: [], source: SourceRef(path: "p.log", line: k + 3),
                                order: k + 2, parsedTime: nil, fileIndex: 0))
        }
        func spans(_ sleepAfter: Int) -> (ends: [Int64?], asleep: Int) {
            var stream = SessionStream()
            stream.sleepAfter = sleepAfter
            for e in events { stream.feed(e) { _ in } }
            return (stream.live.map { stream.endOf($0) }, stream.asleepCount)
        }
        let awake = spans(Int.max), slept = spans(0)
        #expect(awake.asleep == 0 && slept.asleep == 1)
        #expect(slept.ends == awake.ends)
        #expect(awake.ends.first == .some(0))
    }

    /// Random processes, silences, lines and ends: the same sessions with or without sleeping.
    @Test func randomLogsGiveTheSameSessionsAsleep() {
        var rng = SplitMix(seed: 37)
        let kinds: [(String, String)] = [("frame.sent", "video sample processed successfully"),
                                         ("socket.connect_attempt", "open socket connection"),
                                         ("socket.connect_failed", "failure: socket file missing"),
                                         ("socket.connected", "client stream open completed"),
                                         ("broadcast.finished", "broadcastFinished"),
                                         ("socket.closed", "client connection did close nil"),
                                         ("broadcast.started", "broadcast started"),
                                         ("socket.error", "socket error: Broken pipe"),
                                         ("socket.closed_by_peer", "server socket closed")]
        for round in 0..<24 {
            var lines: [Line] = []
            var t: Int64 = 0
            for _ in 0..<(400 + Int(rng.next() % 400)) {
                // Mostly short steps, now and then a silence past the horizon.
                t += rng.next() % 20 == 0 ? 61_000_000 + Int64(rng.next() % 100_000_000) : Int64(rng.next() % 2_000_000)
                let p = Int(rng.next() % 12)
                let side: Side = rng.next() % 8 == 0 ? .app : .extension
                var (kind, message) = kinds[Int(rng.next() % UInt64(kinds.count))]
                if kind == "frame.sent" && rng.next() % 2 == 0 { message += " \(rng.next() % 1000)" }
                if side == .app { (kind, message) = ("server.client_connected", "server stream open completed") }
                // A pid now and then comes back under another name.
                let pid = side == .app ? 7 : 400 + (rng.next() % 5 == 0 ? (p + 1) % 12 : p)
                lines.append((t, pid, side == .app ? "Host" : "Ext\(p)", kind, message, side))
            }
            let events = Self.events(lines)
            // Every other round, ended sessions wait long to be handed on while others sleep
            // soon (an earlier session of a process taken out while its later one sleeps).
            let (horizon, after): (Int64, Int64) = round % 2 == 0 ? (60_000_000, 30_000_000) : (3_000_000, 3_600_000_000)
            let kept = Self.run(events, sleepAfter: Int.max, idleHorizon: horizon, afterEnd: after)
            let slept = Self.run(events, sleepAfter: 0, parkAfter: 1 + round % 3, idleHorizon: horizon, afterEnd: after)
            #expect(slept.sessions == kept.sessions, "round \(round)")
            #expect(slept.maxAsleep > 0, "round \(round)")
        }
    }

    /// A session left open, and its pid then taken by a process of another name: its process
    /// has exited, so it closes (as a newer session of its own name would close it) once it
    /// has been silent for the horizon, and is handed on before the logs end.
    @Test func aPidUsedAgainEndsTheProcessItNamedBefore() {
        func lines(newPid: Int) -> [Line] {
            var out: [Line] = [(0, 500, "ShareExtA", "broadcast.started", "broadcast started", .extension),
                               (1_000, 500, "ShareExtA", "socket.connected", "client stream open completed", .extension),
                               (100_000, 500, "ShareExtA", "frame.sent", "video sample processed successfully", .extension)]
            out.append((200_000_000, newPid, "ShareExtB", "broadcast.started", "broadcast started", .extension))
            out.append((200_001_000, newPid, "ShareExtB", "socket.connected", "client stream open completed", .extension))
            for f in 0..<10 {
                out.append((201_000_000 + Int64(f) * 1_000_000, newPid, "ShareExtB", "frame.sent", "video sample processed successfully", .extension))
            }
            return out
        }
        let reused = Self.run(Self.events(lines(newPid: 500)), sleepAfter: Int.max)
        let other = Self.run(Self.events(lines(newPid: 501)), sleepAfter: Int.max)
        #expect(reused.handedAtEnd[1] == false)
        #expect(other.handedAtEnd[1] == true)
        // Either way it is the same session: truncated at its last line.
        #expect(reused.sessions.first == other.sessions.first)
        #expect(reused.sessions.first?.contains("outcome=truncated") == true)
    }

    /// End to end: every report of the samples, the real pastes and a log of many open
    /// sessions is the same when every silent open session sleeps.
    @Test func reportsAreTheSameWhenEverySilentSessionSleeps() throws {
        let dir = try temporaryDirectory()
        let log = dir.appendingPathComponent("open.log")
        var text = "Timestamp                       (process)[PID]\n", later = ""
        for k in 0..<400 {
            let s = k * 7
            let stamp = String(format: "2026-03-12 10:%02d:%02d.%06d+0100", s / 60 % 60, s % 60, k % 1000 * 1000)
            let late = String(format: "2026-03-12 11:%02d:%02d.%06d+0100", s / 60 % 60, s % 60, k % 1000 * 1000)
            text += "\(stamp)  localhost BroadcastExt\(k % 150)[\(20_000 + k)]: [io.example:Broadcast] broadcast started\n"
            text += "\(stamp)  localhost BroadcastExt\(k % 150)[\(20_000 + k)]: [io.example:Broadcast] client stream open completed\n"
            text += "\(stamp)  localhost BroadcastExt\(k % 150)[\(20_000 + k)]: [io.example:Broadcast] client stream writeToStream \(k * 31 % 9000)\n"
            if k % 3 == 0 {
                later += "\(late)  localhost BroadcastExt\(k % 150)[\(20_000 + k)]: [io.example:Broadcast] client stream writeToStream \(k)\n"
                later += "\(late)  localhost BroadcastExt\(k % 150)[\(20_000 + k)]: [io.example:Broadcast] broadcastFinished\n"
            }
        }
        text += later
        try text.write(to: log, atomically: true, encoding: .utf8)
        let pastes = try FileManager.default.contentsOfDirectory(atPath: realLogs.path).sorted().prefix(6).map { realLogs.appendingPathComponent($0).path }
        try expectSameReports([log.path, "samples"] + pastes,
                              formats: [[], ["--json"], ["--markdown-full"], ["--format", "perfetto"]],
                              with: ["CASTSCOPE_SLEEP_AFTER": "0"])
    }
}

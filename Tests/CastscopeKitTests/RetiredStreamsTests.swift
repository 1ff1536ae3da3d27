import Foundation
import Testing

@testable import CastscopeKit

/// Extension processes whose sessions were all handed on are forgotten once silent for
/// `retireAfter` (`RetiredStreams.swift`): what every later line of theirs does — a frame line,
/// a new start, a kill naming the pid or the name, a line of the pid under another name — is
/// what it did when the stream stayed, and the tables no longer grow with every process seen.
@Suite("retired extension streams")
struct RetiredStreamsTests {
    typealias Line = (t: Int64, pid: Int, process: String, kind: String, message: String, side: Side, attrs: [(String, String)])

    static func events(_ lines: [Line]) -> [Event] {
        lines.sorted { $0.t < $1.t }.enumerated().map { n, l in
            Event(kind: l.kind, sdk: "jitsi", side: l.side, time: l.t, process: l.process, pid: l.pid, message: l.message,
                  attrs: l.attrs, source: SourceRef(path: "p.log", line: n + 1), order: n, parsedTime: nil, fileIndex: 0)
        }
    }

    struct Run: Equatable {
        var sessions: [String]
        var outside: [String]
        var streamsLeft: Int
        var retired: Int
    }

    static func run(_ events: [Event], retireAfter: Int64, retireCrowd: Int = 4096, learnInBatches: Int? = nil) -> Run {
        var stream = SessionStream()
        stream.retireAfter = retireAfter
        stream.retireCrowd = retireCrowd
        var out: [Session] = []
        if let n = learnInBatches {
            // As a file streamed while read: each batch learned just before it is fed.
            var i = 0
            while i < events.count {
                let batch = Array(events[i..<min(i + n, events.count)])
                stream.learn(batch)
                for e in batch { stream.feed(e) { out.append($0) } }
                i += n
            }
        } else {
            stream.learn(events)
            for e in events { stream.feed(e) { out.append($0) } }
        }
        stream.finish { out.append($0) }
        let outside = stream.unattached.map { "\($0.time ?? -1) \($0.process ?? "-")[\($0.pid ?? -1)] \($0.message)" }
        return Run(sessions: describe(out, texts: true), outside: outside,
                   streamsLeft: stream.streams.count - stream.retiredSlots, retired: stream.retiredProcesses.count)
    }

    static let minute: Int64 = 60_000_000

    /// One extension process per broadcast (`BroadcastExtension`, a new pid each time), each
    /// session connected, a few frames, finished; then, long after, lines of the old pids.
    static func bundle(sessions: Int) -> [Line] {
        var lines: [Line] = []
        let name = "BroadcastExtension"
        for k in 0..<sessions {
            let t = Int64(k) * 2 * minute, pid = 1000 + k
            lines.append((t, pid, name, "broadcast.started", "broadcast started", .extension, []))
            lines.append((t + 1_000, pid, name, "socket.connect_attempt", "open socket connection", .extension, []))
            lines.append((t + 4_000, pid, name, "socket.connected", "client stream open completed", .extension, []))
            lines.append((t + 4_500, 7, "Host", "server.client_connected", "server stream open completed", .app, []))
            for f in 0..<5 {
                lines.append((t + 100_000 + Int64(f) * 100_000, pid, name, "frame.sent", "video sample processed successfully \(f)", .extension, []))
            }
            lines.append((t + 2_000_000, pid, name, "broadcast.finished", "broadcastFinished", .extension, []))
            lines.append((t + 2_100_000, 7, "Host", "app.log", "host line \(k)", .app, []))
        }
        // A pid used again by another process after its first one's session (and both retired).
        let reuse = Int64(sessions) * 2 * minute + 12 * minute
        lines.append((reuse, 1005, "OtherExt", "broadcast.started", "broadcast started", .extension, []))
        lines.append((reuse + 1_000_000, 1005, "OtherExt", "broadcast.finished", "broadcastFinished", .extension, []))
        // Long after its session, each kind of line a retired process can still bring.
        let late = Int64(sessions) * 2 * minute + 30 * minute
        lines.append((late - 3_000_000, 1005, name, "frame.sent", "video sample processed successfully first name", .extension, []))
        lines.append((late - 2_000_000, 1005, "OtherExt", "frame.sent", "video sample processed successfully second name", .extension, []))
        lines.append((late, 1000, name, "frame.sent", "video sample processed successfully late", .extension, []))
        lines.append((late + 1_000_000, 1001, name, "extension.killed_memory", "killed", .system,
                      [("target", name), ("target_pid", "1001"), ("limit_mb", "50")]))
        lines.append((late + 2_000_000, 1002, name, "broadcast.started", "broadcast started", .extension, []))
        lines.append((late + 2_100_000, 1002, name, "socket.connect_attempt", "open socket connection", .extension, []))
        lines.append((late + 3_000_000, 99, "kernel", "extension.killed", "killed by name", .system, [("target", name)]))
        lines.append((late + 4_000_000, 1003, "OtherProcess", "frame.sent", "video sample processed successfully other", .extension, []))
        lines.append((late + 5_000_000, 1004, name, "socket.connect_attempt", "open socket connection", .extension, []))
        return lines
    }

    @Test func laterLinesOfRetiredProcessesDoWhatTheyDid() {
        let events = Self.events(Self.bundle(sessions: 40))
        let kept = Self.run(events, retireAfter: Int64.max)
        let retired = Self.run(events, retireAfter: Self.minute)
        #expect(retired.retired > 30)
        #expect(kept.retired == 0)
        #expect(retired.sessions == kept.sessions)
        #expect(retired.outside == kept.outside)
        // (the 40, the reused pid's, the retired pid's new start, the other name's frame line,
        // the new pid's attempt)
        #expect(kept.sessions.count == 44)
        // Learned a batch at a time ahead of feeding (a file streamed while read): the same.
        let batched = Self.run(events, retireAfter: Self.minute, learnInBatches: 37)
        #expect(batched.sessions == kept.sessions)
        #expect(batched.outside == kept.outside)
    }

    /// Enough processes for the retired slots to be taken out of the tables (numbered again):
    /// the same sessions, and the tables hold about the streams of the last horizon.
    @Test func manyProcessesLeaveTheTables() {
        let events = Self.events(Self.bundle(sessions: 9_000))
        let kept = Self.run(events, retireAfter: Int64.max)
        let retired = Self.run(events, retireAfter: Self.minute)
        #expect(retired.sessions == kept.sessions)
        #expect(retired.outside == kept.outside)
        #expect(kept.streamsLeft >= 9_000)
        #expect(retired.streamsLeft < 100)
    }

    /// Extensions coming and going fast (a broadcast every 10 ms, ~150 open at once): far more
    /// processes end within the ten-minute horizon than wait to retire (`retireCrowd`), so those
    /// silent for a second retire; the tables hold about the crowd, not every process of the
    /// last ten minutes, and every later line (a frame, a kill naming a pid, a start on an old
    /// pid) does what it did.
    @Test func aCrowdRetiresThoseSilentForASecond() {
        var lines: [Line] = []
        let name = "BroadcastExtension"
        for k in 0..<3_000 {
            let t = Int64(k) * 10_000, pid = 10_000 + k
            lines.append((t, pid, name, "broadcast.started", "broadcast started", .extension, []))
            lines.append((t + 1_000, pid, name, "socket.connect_attempt", "open socket connection", .extension, []))
            lines.append((t + 4_000, pid, name, "socket.connected", "client stream open completed", .extension, []))
            for f in 0..<3 {
                lines.append((t + 100_000 + Int64(f) * 400_000, pid, name, "frame.sent", "video sample processed successfully \(f)", .extension, []))
            }
            lines.append((t + 1_500_000, pid, name, "broadcast.finished", "broadcastFinished", .extension, []))
        }
        // (ended sessions are handed on, and may retire, some 30 s after their end)
        let late: Int64 = 120_000_000
        lines.append((late, 10_000, name, "frame.sent", "video sample processed successfully late", .extension, []))
        lines.append((late + 1_000_000, 10_001, name, "extension.killed_memory", "killed", .system,
                      [("target", name), ("target_pid", "10001"), ("limit_mb", "50")]))
        lines.append((late + 2_000_000, 10_002, name, "broadcast.started", "broadcast started", .extension, []))
        lines.append((late + 2_100_000, 10_002, name, "socket.connect_attempt", "open socket connection", .extension, []))
        lines.append((late + 3_000_000, 10_003, "OtherExt", "frame.sent", "video sample processed successfully other", .extension, []))
        let events = Self.events(lines)
        let kept = Self.run(events, retireAfter: Int64.max)
        let crowded = Self.run(events, retireAfter: 10 * Self.minute, retireCrowd: 64)
        #expect(crowded.sessions == kept.sessions)
        #expect(crowded.outside == kept.outside)
        #expect(kept.sessions.count == 3_002)
        #expect(kept.streamsLeft >= 3_000)
        #expect(crowded.retired > 2_500)
        #expect(crowded.streamsLeft < 600)
        let batched = Self.run(events, retireAfter: 10 * Self.minute, retireCrowd: 64, learnInBatches: 41)
        #expect(batched.sessions == kept.sessions)
        #expect(batched.outside == kept.outside)
        #expect(batched.streamsLeft < 600)
    }

    /// More extensions writing at once than the streams remembered by a scan once were (64),
    /// their lines interleaved, while others retire and their pids write again (the streams
    /// learned and routed are found by pid, and a retired stream's entries are taken out by
    /// key: a line with no process name and one named "?" are one stream, `?[pid]`).
    @Test func manyInterleavedWhileOthersRetire() {
        var lines: [Line] = []
        let name = "BroadcastExtension"
        for k in 0..<300 {
            let t0 = Int64(k) * 2_000_000, pid = 3000 + k
            // Every thirteenth has no process name on its lines but its frames ("?", the same key).
            let process = k % 13 == 0 ? "" : name
            let frameProcess = k % 13 == 0 ? "?" : name
            lines.append((t0, pid, process, "broadcast.started", "broadcast started", .extension, []))
            lines.append((t0 + 1_000, pid, process, "socket.connected", "client stream open completed", .extension, []))
            for f in 0..<100 {
                lines.append((t0 + 500_000 + Int64(f) * 2_000_000, pid, frameProcess, "frame.sent", "video sample processed successfully",
                              .extension, []))
            }
            let end = t0 + 201_000_000
            lines.append((end, pid, process, "broadcast.finished", "broadcastFinished", .extension, []))
            // Long after (retired by then), while later extensions still write.
            if k % 7 == 0 { lines.append((end + 5 * Self.minute, pid, process, "frame.sent", "video sample processed successfully", .extension, [])) }
            if k % 11 == 0 {
                lines.append((end + 6 * Self.minute, pid, process, "broadcast.started", "broadcast started", .extension, []))
                lines.append((end + 6 * Self.minute + 1_000, pid, frameProcess, "frame.sent", "video sample processed successfully", .extension, []))
            }
        }
        let events = Self.events(lines).map { e -> Event in
            var e = e
            if e.process == "" { e.process = nil }
            return e
        }
        let kept = Self.run(events, retireAfter: Int64.max)
        let retired = Self.run(events, retireAfter: Self.minute)
        let batched = Self.run(events, retireAfter: Self.minute, learnInBatches: 501)
        #expect(retired.retired > 100)
        #expect(kept.sessions.count == 300 + 28)
        #expect(retired.sessions == kept.sessions)
        #expect(retired.outside == kept.outside)
        #expect(batched.sessions == kept.sessions)
        #expect(batched.outside == kept.outside)
        // Each first session kept its own hundred frames (no line went to another stream).
        #expect(kept.sessions.filter { $0.contains(" frames=100 ") }.count == 300)
    }

    @Test func keyParsing() {
        #expect(SessionStream.processAndPid("BroadcastExtension[812]")! == ("BroadcastExtension", 812))
        #expect(SessionStream.processAndPid("a [b][7]")! == ("a [b]", 7))
        #expect(SessionStream.processAndPid("file:/x/y.log") == nil)
        #expect(SessionStream.processAndPid("x[-3]") == nil)
        #expect(SessionStream.processAndPid("x[]") == nil)
        #expect(SessionStream.processAndPid("x[99999999999999999999999]") == nil)
    }

    /// The retired pids' table (a name number a pid, other names aside) answers as a plain
    /// list of (pid, name) pairs would, over random additions and reopenings of a few pids
    /// reused under a few names.
    @Test func retiredProcessesAnswerAsAListOfPairs() {
        var rng = SplitMix(seed: 77)
        var table = RetiredProcesses()
        var pairs: [(pid: Int, name: String)] = []
        let names = ["BroadcastExtension", "Upload", "ScreenShare", "SBCBroadcast"]
        for _ in 0..<20_000 {
            let pid = Int(rng.next() % 40) + 100
            let name = names[Int(rng.next() % UInt64(names.count))]
            if rng.next() % 3 == 0 {
                let had = pairs.contains { $0 == (pid, name) }
                #expect(table.reopen(pid: pid, process: name) == had)
                pairs.removeAll { $0 == (pid, name) }
            } else {
                table.add(pid: pid, process: name)
                if !pairs.contains(where: { $0 == (pid, name) }) { pairs.append((pid, name)) }
            }
            let probe = Int(rng.next() % 40) + 100
            #expect(table.contains(pid: probe) == pairs.contains { $0.pid == probe })
            for n in names { #expect(table.contains(pid: probe, process: n) == pairs.contains { $0 == (probe, n) }) }
            #expect(table.count == Set(pairs.map(\.pid)).count)
            #expect(table.isEmpty == pairs.isEmpty)
        }
    }
}

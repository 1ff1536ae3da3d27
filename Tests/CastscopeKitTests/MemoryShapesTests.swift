import Foundation
import Testing

@testable import CastscopeKit

/// Session shapes whose memory grew with the input (issue 15, session 49): what a session holds
/// while it is open or waits stays bounded, and the report is what it was.
@Suite("memory per session shape")
struct MemoryShapesTests {
    static let header = "Timestamp                       Thread     Type        Activity             PID    TTL  \n"

    static func showTime(_ ms: Int) -> String {
        let s = ms / 1000
        return String(format: "2026-03-12 %02d:%02d:%02d.%06d+0100", 8 + s / 3600, s / 60 % 60, s % 60, ms % 1000 * 1000)
    }

    /// One extension session streaming frames, a host-app line (recognized, another process)
    /// after every one to three frame lines: the reader folds each short run of frames.
    static func interleavedFrames(lines: Int) -> String {
        var text = header
        let ext = " 0x2f1c4    Default     0x0                  812    0    BroadcastExtension: "
        let app = " 0x2e0a1    Default     0x0                  640    0    JitsiDemo: [org.jitsi.demo:JitsiMeetSDK] "
        var ms = 0
        for m in ["broadcast started", "Open socket connection", "client stream open completed"] {
            ms += 1
            text += showTime(ms) + ext + m + "\n"
        }
        var k = 0
        while k < lines {
            for _ in 0..<(1 + k % 3) {
                ms += 1
                text += showTime(ms) + ext + "video sample processed successfully\n"
                k += 1
            }
            ms += 1
            text += showTime(ms) + app + (k % 2 == 0 ? "Broadcast started" : "server stream open completed") + "\n"
            k += 1
        }
        return text
    }

    static func analyze(_ path: String) throws -> (AnalysisReport, [Session]) {
        var options = AnalyzeOptions()
        options.now = 1_773_306_000_000_000
        let a = try Analyzer(registry: try ParserRegistry.builtin(), options: options)
        var sessions: [Session] = []
        a.onSession = { s, _ in sessions.append(s) }
        let r = a.analyze([path])
        return (r, sessions)
    }

    @Test("frame runs the reader folded between host-app lines fold into one run as the session is built")
    func interleavedFrameRunsFold() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("mix.log")
        try Data(Self.interleavedFrames(lines: 6_000).utf8).write(to: log)
        let (_, sessions) = try Self.analyze(log.path)
        #expect(sessions.count == 1)
        let s = try #require(sessions.first)
        let own = s.events.filter { $0.side == .extension }
        #expect(own.reduce(0) { $0 + $1.count } == 3 + s.frames, "every frame line is still counted")
        // 4,000 frame lines in ~2,000 runs the reader folded, between 2,000 host-app lines.
        #expect(s.frames == 4_000)
        #expect(own.count <= 8, "\(own.count) extension events held for \(s.frames) frame lines")
    }

    /// Extensions that come and go: 600 short sessions, 20 at once, their lines interleaved,
    /// each ending with its own end line; an ended one waits `afterEnd` (30 s) for late lines.
    static func churn() -> [Event] {
        typealias Line = SleepingSessionsTests.Line
        var lines: [Line] = []
        for k in 0..<600 {
            let t0 = Int64(k / 20) * 1_500_000 + Int64(k % 20) * 7_000, pid = 3_000 + k, p = "BroadcastExtension"
            lines.append((t0, pid, p, "broadcast.started", "broadcast started", .extension))
            lines.append((t0 + 1_000, pid, p, "socket.connected", "client stream open completed", .extension))
            for f in 0..<(10 + k % 7) {
                lines.append((t0 + 2_000 + Int64(f) * 100_000, pid, p, "frame.sent", "video sample processed successfully", .extension))
            }
            lines.append((t0 + 1_400_000, pid, p, "socket.closed", "client connection did close nil", .extension))
            // Now and then a late line of the process after its end, and a host line.
            if k % 9 == 0 { lines.append((t0 + 4_000_000, pid, p, "frame.sent", "video sample processed successfully", .extension)) }
            if k % 5 == 0 { lines.append((t0 + 1_450_000, 77, "Host", "server.client_connected", "server stream open completed", .app)) }
        }
        return SleepingSessionsTests.events(lines)
    }

    @Test("ended sessions waiting for late lines go to the spill while many wait, and come back the same")
    func endedSessionsWaitAsleep() {
        let events = Self.churn()
        let kept = SleepingSessionsTests.run(events, sleepAfter: Int.max)
        let slept = SleepingSessionsTests.run(events, sleepAfter: 64)
        #expect(slept.sessions.count == 600)
        #expect(slept.sessions == kept.sessions)
        // 20 open at once: none is ever silent for the idle horizon, so what sleeps has ended
        // (about 20 end each 1.5 s, and wait 30 s: some 400 at once).
        #expect(kept.maxAsleep == 0)
        #expect(slept.maxAsleep > 200, "\(slept.maxAsleep) asleep at most")
        #expect(slept.woke > 0)
    }
}


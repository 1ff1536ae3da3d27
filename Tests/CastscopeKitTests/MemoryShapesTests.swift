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
}

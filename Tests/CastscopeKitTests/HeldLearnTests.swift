import Foundation
import Testing

@testable import CastscopeKit

/// A folded run of extension frame lines that loses its first lines as duplicates of another
/// file's starts later: what the session stage learns (which stream a kill of the pid names)
/// must follow, as in memory (found in review: the held path learned the run's old time).
@Suite("held: a folded run deduped in part")
struct HeldLearnTests {
    static let header = "Timestamp                       Thread     Type        Activity             PID    TTL  \n"
    static func line(_ time: String, _ pid: Int, _ proc: String, _ msg: String) -> String {
        "2026-03-12 \(time)+0100 0x2f1c4    Default     0x0                  \(String(pid).padding(toLength: 7, withPad: " ", startingAt: 0))0    \(proc): \(msg)\n"
    }

    static func run(_ paths: [String], held: Bool) throws -> (String, Int) {
        var options = AnalyzeOptions()
        options.now = 1_773_306_000_000_000
        let a = try Analyzer(registry: try ParserRegistry.builtin(), options: options)
        let text = TextReport(color: false)
        var writer = text
        var parts = ""
        a.willStreamSessions = { writer = text.prepared(inputs: $0.inputs); parts = "" }
        a.onSession = { s, f in parts += writer.sessionBlock(s, findings: f) }
        if held {
            HeldEventsTests.held(parallel: false)(a)
            a.holdsEventsAfter = 1
        } else {
            a.holdsEventsAfter = 0
        }
        let r = a.analyze(paths)
        return (writer.head(r) + parts + writer.tail(r), a.lastHeldEvents)
    }

    @Test func killRoutedAsInMemory() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let frame = "video sample processed successfully"
        // Read first: two frame lines of BroadcastExtension[812], then another extension reusing pid 812.
        let f0 = Self.header + Self.line("10:00:00.000000", 812, "BroadcastExtension", frame)
            + Self.line("10:00:00.033000", 812, "BroadcastExtension", frame)
            + Self.line("10:00:00.050000", 812, "BroadcastUpload", "broadcast started")
        // Read second: the same frame run, longer (its first two lines are duplicates), then a kill of pid 812.
        let f1 = Self.header + Self.line("10:00:00.000000", 812, "BroadcastExtension", frame)
            + Self.line("10:00:00.033000", 812, "BroadcastExtension", frame)
            + Self.line("10:00:00.066000", 812, "BroadcastExtension", frame)
            + Self.line("10:00:00.099000", 812, "BroadcastExtension", frame)
            + Self.line("10:00:01.500000", 0, "kernel",
                        "memorystatus: killing_specific_process pid 812 [BroadcastExtension] (per-process-limit 10) 51200KB - memorystatus_available_pages: 41522")
        try f0.write(to: dir.appendingPathComponent("f0.txt"), atomically: true, encoding: .utf8)
        try f1.write(to: dir.appendingPathComponent("f1.txt"), atomically: true, encoding: .utf8)
        let memory = try Self.run([dir.path], held: false)
        let held = try Self.run([dir.path], held: true)
        #expect(memory.1 == 0)
        #expect(held.1 > 0)
        #expect(held.0 == memory.0)
        if held.0 != memory.0 { print("=== in memory\n\(memory.0)\n=== held\n\(held.0)") }
    }
}

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
        let memory = try HeldFuzzTests.run([dir.path], held: false, window: (nil, nil), parallel: false)
        let held = try HeldFuzzTests.run([dir.path], held: true, window: (nil, nil), parallel: false) { $0.holdsEventsAfter = 1 }
        #expect(memory.hasSuffix("\nheld false"))
        #expect(held.hasSuffix("\nheld true"))
        #expect(held.dropLast(" true".count) == memory.dropLast(" false".count))
    }

    /// Events that each carry a text of their own weigh more than the count of events says:
    /// past `holdsPastMegabytes` resident, a bundle's events go to disk before `holdsEventsAfter`,
    /// with the same report.
    @Test func residentMemoryHoldsEarly() throws {
        #if os(Linux)
        let mb = try #require(Resident.megabytes())
        #expect(mb > 1 && mb < 1 << 20, "\(mb) MB resident")
        #endif
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var log = Self.header + Self.line("10:00:00.000000", 812, "BroadcastExtension", "broadcast started")
        for k in 0..<600 {
            let t = String(format: "10:%02d:%02d.%06d", k / 600, (k / 10) % 60, (k % 10) * 100_000)
            log += Self.line(t, 812, "BroadcastExtension", "open socket connection (attempt \(k + 1))")
        }
        try log.write(to: dir.appendingPathComponent("a.txt"), atomically: true, encoding: .utf8)
        try log.write(to: dir.appendingPathComponent("b.txt"), atomically: true, encoding: .utf8)
        func run(pastMegabytes: Int) throws -> String {
            try HeldFuzzTests.run([dir.path], held: false, window: (nil, nil), parallel: false) { a in
                a.holdsEventsAfter = 1 << 17
                a.heldBatchEvents = 64
                a.streamedBatchEvents = 64
                a.holdsPastMegabytes = pastMegabytes
            }
        }
        let memory = try run(pastMegabytes: Int.max)
        #expect(memory.hasSuffix("\nheld false"))
        #if os(Linux)
        let held = try run(pastMegabytes: 0)
        #expect(held.hasSuffix("\nheld true"))
        #expect(held.dropLast(" true".count) == memory.dropLast(" false".count))
        #endif
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// A relay's year-less text (`journalctl -o short-precise`) is held with the bundle's lines,
/// and a relay `stats` run open at the end of a part stays in memory to fold the next part's
/// lines of its session. The oldest open run kept every line after it as well: with 5,000
/// sessions open, the lines of the sessions closed since it began (~30,000 events where the
/// open runs are ~5,000; 79 MB resident at 256 MB, the same text with a year 60). The open
/// runs are now moved behind those lines, which go to disk (issue 15).
@Suite("year-less relay text: lines of closed sessions behind an open run go to disk")
struct MemShapes6Tests {
    /// One session open the whole file (a stats line every round), beside short sessions one
    /// after another (accepted, two stats, closed), as `-o short-precise` writes them.
    static func text(rounds: Int) -> String {
        var text = ""
        func id(_ k: Int) -> String { String(format: "%08x-1b7e-4f0e-9a51-2f1d3c4b5a69", k) }
        func line(_ s: Int, _ k: Int, _ m: String) -> String {
            let t = 9 * 3600 + s / 1000, us = s % 1000 * 1000
            let clock = String(format: "%02d:%02d:%02d.%06d", t / 3600, t / 60 % 60, t % 60, us)
            return "Mar 12 \(clock) relay1 broadcast-relay[811]: session \(id(k)) \(m)\n"
        }
        var s = 0
        text += line(s, 0, "accepted peer=iPhone14,2 room=r0")
        for r in 1...rounds {
            s += 1
            text += line(s, 0, "stats frames=10 bytes=\(281000 + r) fps=10.0 dropped=0")
            s += 1
            text += line(s, r, "accepted peer=iPhone14,2 room=r\(r)")
            s += 1
            text += line(s, r, "stats frames=10 bytes=\(281000 + r) fps=10.0 dropped=0")
            s += 1
            text += line(s, r, "stats frames=10 bytes=\(281001 + r) fps=10.0 dropped=0")
            s += 1
            text += line(s, r, "closed reason=peer-eof frames=20 duration=2.0s")
        }
        s += 1
        text += line(s, 0, "closed reason=peer-eof frames=\(rounds * 10) duration=\(rounds).0s")
        return text
    }

    @Test("the events kept while reading follow the open runs, not the lines since the oldest")
    func closedSessionsBehindAnOpenRunHeld() throws {
        let rounds = 3000
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("relay.txt")
        try Data(Self.text(rounds: rounds).utf8).write(to: log)
        let registry = try ParserRegistry.builtin()
        func run(held: Bool) throws -> (AnalysisReport, Int) {
            var options = AnalyzeOptions()
            options.now = 1_773_306_000_000_000
            let a = try Analyzer(registry: registry, options: options)
            a.parallelism = 1
            a.onSession = { _, _ in }
            // Parts of 64 events; held from the first part on, whatever the resident size.
            a.streamedBatchEvents = 64
            a.holdsPastMegabytes = held ? 0 : 1 << 30
            a.heldBatchEvents = held ? 1 : 1 << 30
            a.holdsEventsAfter = held ? 1 : 1 << 30
            let r = a.analyze([log.path])
            return (r, a.lastMostEventsKept)
        }
        let (held, kept) = try run(held: true)
        let (inMemory, all) = try run(held: false)
        // 3,001 sessions: 3 events each (accepted, a stats run, closed), 9,003 in all.
        #expect(all > 9000, "in memory, every event stays: \(all)")
        // (before: the first session's run kept all 9,000 behind it)
        #expect(kept < 400, "kept \(kept) events while reading")
        #expect(held.relaySessions.count == rounds + 1 && inMemory.relaySessions.count == rounds + 1)
        #expect(held.eventCount == inMemory.eventCount && held.eventCount == 5 * rounds + 2)
        #expect(held.relaySessions.indices.allSatisfy {
            held.relaySessions[$0].frames == inMemory.relaySessions[$0].frames
                && held.relaySessions[$0].meanFps == inMemory.relaySessions[$0].meanFps
        })
    }
}

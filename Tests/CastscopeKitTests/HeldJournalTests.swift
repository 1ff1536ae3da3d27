import Foundation
import Testing

@testable import CastscopeKit

/// A journal read in stretches on parallel threads cannot be held while it is read (a damaged
/// stretch takes its lines back); its lines are held once it is read, as a journal read by one
/// reader's are, and the report is the one built in memory.
@Suite("held: journals read in stretches")
struct HeldJournalTests {
    @Test func stretchedJournalsAreHeldAfterwards() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journal = packageRoot.appendingPathComponent("samples/relay/relay.journal")
        try #require(FileManager.default.fileExists(atPath: journal.path), "make journals writes samples/relay/relay.journal")
        for name in ["a.journal", "b.journal", "c.journal"] {
            try FileManager.default.copyItem(at: journal, to: dir.appendingPathComponent(name))
        }
        var reports: [String] = []
        var held: [Int] = []
        for stretches in [false, true] {
            let a = try Analyzer(registry: try ParserRegistry.builtin())
            a.onSession = { _, _ in }
            // Relay lines stay with the bundle's (the relay stage would take them as read).
            a.spillsRelayLines = false
            HeldEventsTests.held(parallel: stretches)(a)
            a.holdsEventsAfter = 1
            if !stretches { a.parallelThreshold = UInt64.max }
            let r = a.analyze([dir.path])
            #expect(a.journalsInStretches.read == (stretches ? 3 : 0))
            // The first files' lines are held as each is read (the last one's after the walk).
            #expect(a.lastHeldEvents > 0, "stretches \(stretches)")
            held.append(a.lastHeldEvents)
            reports.append(TextReport(color: false).render(r))
        }
        #expect(held[0] == held[1])
        #expect(reports[0] == reports[1])
    }
}

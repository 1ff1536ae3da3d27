import Foundation
import Testing

@testable import CastscopeKit

/// Relay lines go to their sessions as they are read and leave memory when those close
/// (`RelayStage`, `EventSpill`): every report must be the one the whole-bundle path gives,
/// whatever the bundle mixes — journald renderings whose times need the bundle (short-precise,
/// no year) beside ones that do not, the same lines in two files, a time window, a display zone,
/// a join with the phone's sessions, a journal read in stretches.
@Suite("relay sessions made as they close")
struct RelayStageTests {
    static let samples = packageRoot.appendingPathComponent("samples")

    static func reports(_ paths: [String], spills: Bool, options: AnalyzeOptions = AnalyzeOptions(), stretched: Bool = false)
        throws -> (text: String, json: [UInt8], markdown: String, perfetto: String, report: AnalysisReport)
    {
        var options = options
        options.now = 1_773_306_000_000_000
        let analyzer = try Analyzer(registry: try ParserRegistry.builtin(), options: options)
        analyzer.spillsRelayLines = spills
        if stretched {
            analyzer.parallelism = 2
            analyzer.parallelThreshold = 0
            analyzer.minimumRange = 4096
            analyzer.rangesPerThread = 4
        }
        let r = analyzer.analyze(paths)
        let provenance = Provenance(commandLine: ["castscope", "analyze"], generatedAt: 1_773_306_000_000_000)
        return (TextReport(color: false).render(r), JSONReport.renderBytes(r, provenance: provenance),
                MarkdownReport.render(r, provenance: provenance), PerfettoReport.render(r, provenance: provenance), r)
    }

    static func expectSame(_ paths: [String], _ options: AnalyzeOptions = AnalyzeOptions(), _ what: String,
                           stretched: Bool = false) throws -> AnalysisReport
    {
        let held = try reports(paths, spills: false, options: options, stretched: stretched)
        let spilled = try reports(paths, spills: true, options: options, stretched: stretched)
        // Compared as booleans: a failure names the bundle and the format, not every byte.
        let (sameText, sameJSON) = (spilled.text == held.text, spilled.json == held.json)
        let (sameMarkdown, samePerfetto) = (spilled.markdown == held.markdown, spilled.perfetto == held.perfetto)
        #expect(sameText, "text: \(what)")
        #expect(sameJSON, "JSON: \(what)")
        #expect(sameMarkdown, "Markdown: \(what)")
        #expect(samePerfetto, "Perfetto: \(what)")
        #expect(spilled.report.relaySessions.count == held.report.relaySessions.count, "\(what)")
        let allHeld = held.report.relaySessions.allSatisfy { $0.holdsLines }
        #expect(allHeld, "\(what)")
        return spilled.report
    }

    @Test("the same reports as the whole-bundle path, on every bundle with relay lines and every option that touches them")
    func sameReports() throws {
        let mixed = Self.samples.appendingPathComponent("mixed-bundle/support-bundle.tar.gz").path
        let relayDir = Self.samples.appendingPathComponent("relay").path
        let bundles: [[String]] = [[mixed], [relayDir], [relayExport.path, relayJournal.path], [relayJournal.path, relayExport.path]]
        var window = AnalyzeOptions()
        window.since = 1_773_306_906_000_000
        window.until = 1_773_306_930_000_000
        var utc = AnalyzeOptions()
        utc.displayZone = .fixed(0)
        var berlin = AnalyzeOptions()
        berlin.displayZone = DisplayZone.parse("Europe/Berlin")
        var forced = AnalyzeOptions()
        forced.clockOffset = 2_000_000
        var sawJoin = false, sawSpill = false
        for paths in bundles {
            for (name, options) in [("default", AnalyzeOptions()), ("window", window), ("utc", utc), ("berlin", berlin), ("offset", forced)] {
                let r = try Self.expectSame(paths, options, "\(paths.map { ($0 as NSString).lastPathComponent }) \(name)")
                sawJoin = sawJoin || r.relaySessions.contains { $0.deviceSession != nil }
                sawSpill = sawSpill || r.relaySessions.contains { !$0.holdsLines }
            }
        }
        #expect(sawJoin, "some relay session was joined to a phone's")
        #expect(sawSpill, "some relay session had its lines spilled")
    }

    @Test("relay lines without a year held on disk with the phone's: their sessions parked as they close, the same reports")
    func yearlessHeldOnDisk() throws {
        // The mixed bundle's relay-short-precise.txt needs the bundle's year; the bundle is held
        // on disk as it is read (a sink for its sessions), so those lines reach the relay stage
        // chunk by chunk as they are resolved (`RelayStage.hold`).
        let mixed = Self.samples.appendingPathComponent("mixed-bundle/support-bundle.tar.gz").path
        var utc = AnalyzeOptions()
        utc.displayZone = .fixed(0)
        var window = AnalyzeOptions()
        window.since = 1_773_306_906_000_000
        for (name, options) in [("default", AnalyzeOptions()), ("utc", utc), ("window", window)] {
            var out: [String] = []
            for spills in [false, true] {
                var o = options
                o.now = 1_773_306_000_000_000
                let a = try Analyzer(registry: try ParserRegistry.builtin(), options: o)
                a.spillsRelayLines = spills
                var handed: [String] = []
                a.onSession = { s, findings in
                    handed.append("\(s.id) \(s.outcome) \(s.events.count) \(s.relay.map(\.id)) \(findings.map(\.message))")
                }
                HeldEventsTests.held(parallel: false)(a)
                let r = a.analyze([mixed])
                #expect(a.lastHeldEvents > 0, "\(name)")
                let provenance = Provenance(commandLine: ["castscope", "analyze"], generatedAt: 1_773_306_000_000_000)
                out.append(handed.joined(separator: "\n") + TextReport(color: false).render(r)
                           + String(decoding: JSONReport.renderBytes(r, provenance: provenance), as: UTF8.self))
            }
            #expect(out[0] == out[1], "\(name)")
        }
    }

    @Test("a closed session's lines are not held; the join and an export of every line read them back")
    func closedSessionsSpill() throws {
        let r = try Self.reports([relayJournal.path], spills: true).report
        #expect(!r.relaySessions.isEmpty)
        for rs in r.relaySessions where rs.closed != nil {
            #expect(!rs.holdsLines, "\(rs.id)")
            let lines = rs.events
            #expect(!lines.isEmpty)
            #expect(lines.last?.kind == "relay.closed", "\(rs.id)")
            #expect(rs.firstSource == lines.first?.source)
        }
        // The ClickHouse rows of every line (an export that reads the spilled lines back).
        let held = try Self.reports([relayJournal.path], spills: false).report
        let rows = ClickHouseRows(bundleId: "b", version: 1)
        var a = ClickHouseRowBuffer(), b = ClickHouseRowBuffer()
        rows.events(r, into: &a)
        rows.events(held, into: &b)
        #expect(a.rows > 0 && a.bytes == b.bytes)
    }

    @Test("a long journal read in stretches on two threads",
          .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote), "needs systemd-journal-remote (make test installs it)"))
    func stretched() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let long = try JournalStretchTests.longJournal(in: dir)
        let r = try Self.expectSame([long.path], AnalyzeOptions(), "long journal", stretched: true)
        #expect(r.relaySessions.count == 100)
        _ = try Self.expectSame([relayExport.path, long.path], AnalyzeOptions(), "export + long journal", stretched: true)
    }

    /// A journal export of relay sessions with the shapes a journal of the field has beside the
    /// plain ones: a session that gets a line after its `closed` one, one that never closes
    /// and has more lines than a live session holds (`RelayStage.maxOpenLines`), and many.
    static func oddRelayExport(in dir: URL) throws -> URL {
        var out = ""
        var t: Int64 = 1_773_306_904_000_000
        func entry(_ session: String, _ event: String, _ message: String, priority: Int = 6) {
            t += 1_000
            out += "__REALTIME_TIMESTAMP=\(t)\n_PID=811\n_HOSTNAME=relay1\nSYSLOG_IDENTIFIER=broadcast-relay\nPRIORITY=\(priority)\n"
            out += "RELAY_SESSION=\(session)\nRELAY_EVENT=\(event)\nMESSAGE=session \(session) \(message)\n\n"
        }
        let never = "never-closes", again = "touched-again"
        entry(never, "accepted", "accepted peer=iPhone14,2 room=long")
        entry(again, "accepted", "accepted peer=iPhone15,3 room=again")
        entry(again, "stats", "stats frames=15 bytes=1000 fps=15.0 dropped=0")
        entry(again, "closed", "closed reason=peer-eof frames=15 duration=1.0s")
        for n in 0..<RelayStage.maxOpenLines + 300 {
            if n % 2 == 0 {
                entry(never, "stalled", "no frames for 2.0 s", priority: 4)
            } else {
                entry(never, "stats", "stats frames=15 bytes=\(n) fps=15.0 dropped=0")
            }
            if n % 40 == 0 {
                let id = "plain-\(n / 40)"
                entry(id, "accepted", "accepted peer=iPhone14,2 room=r\(n)")
                entry(id, "stats", "stats frames=10 bytes=1 fps=10.0 dropped=0")
                entry(id, "closed", "closed reason=peer-eof frames=10 duration=1.0s")
            }
        }
        entry(again, "stats", "stats frames=15 bytes=2000 fps=15.0 dropped=0")
        let url = dir.appendingPathComponent("odd-relay.export")
        try out.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    @Test("odd sessions: touched again after it closed, never closed and longer than a live session holds, many")
    func oddSessions() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let odd = try Self.oddRelayExport(in: dir)
        var window = AnalyzeOptions()
        window.since = 1_773_306_904_500_000
        // The same lines in a second file (an export beside the journal): every session to be
        // made at the end, its stretches parked.
        let twice = dir.appendingPathComponent("odd-relay-again.export")
        try FileManager.default.copyItem(at: odd, to: twice)
        _ = try Self.expectSame([odd.path, twice.path], AnalyzeOptions(), "odd in two files")
        _ = try Self.expectSame([odd.path, twice.path], window, "odd in two files, window")
        for (name, options) in [("default", AnalyzeOptions()), ("window", window)] {
            let r = try Self.expectSame([odd.path], options, "odd \(name)")
            guard name == "default" else {
                #expect(r.filteredOut > 0 && !r.relaySessions.isEmpty)
                continue
            }
            #expect(r.relaySessions.count == 2 + (RelayStage.maxOpenLines + 300 + 39) / 40, "\(name)")
            let long = r.relaySessions.first { $0.id == "never-closes" }
            #expect(long.map { $0.stalls.count == (RelayStage.maxOpenLines + 300) / 2 } == true, "\(name)")
        }
        // The one touched again has both its stats lines.
        let r = try Self.reports([odd.path], spills: true).report
        let again = try #require(r.relaySessions.first { $0.id == "touched-again" })
        #expect(again.stats.count == 2)
        #expect(!r.relaySessions.holdsSessions, "made sessions are kept as places in the spill")
        // One orphan-relay-session finding per relay session, made when read, in the report's order.
        #expect(r.findings.filter { $0.kind == "orphan-relay-session" }.count == r.relaySessions.count)
        #expect(r.findings.made.allSatisfy { $0.kind != "orphan-relay-session" })
        #expect(r.findingTally.count == r.findings.count)
    }

    @Test("session ids found by hash: ids whose hashes are equal stay apart")
    func hashCollisions() {
        var index = SessionIndex()
        let ids = (0..<300).map { "id-\($0)" }
        // Every id under one of three hashes: only the caller's check tells them apart.
        for (k, _) in ids.enumerated() { index.insert(UInt64(k % 3) << 32, Int32(k)) }
        for (k, id) in ids.enumerated() {
            #expect(index.find(UInt64(k % 3) << 32, where: { ids[Int($0)] == id }) == Int32(k))
        }
        #expect(index.find(7 << 32, where: { _ in true }) == nil)
    }
}

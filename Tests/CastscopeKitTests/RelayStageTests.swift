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
}

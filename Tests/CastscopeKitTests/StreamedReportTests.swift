import Foundation
import Testing

@testable import CastscopeKit

/// Issue 15: sessions are handed on as they end (`Analyzer.onSession`) and the text and JSON
/// reports are written from them in parts. The parts must make the same bytes as the
/// whole-report writers, on the samples, the real pastes, many sessions one after another,
/// and a dense log where sessions overlap, are cut off and are superseded by new pids.
@Suite("reports written as sessions end")
struct StreamedReportTests {
    /// The generated ones are written into `dir` (the caller removes it).
    static func inputs(in dir: URL) throws -> [(String, [String])] {
        let fm = FileManager.default
        var out: [(String, [String])] = []
        let samples = packageRoot.appendingPathComponent("samples")
        for name in try fm.contentsOfDirectory(atPath: samples.path).sorted() where !name.hasPrefix(".") {
            out.append((name, [samples.appendingPathComponent(name).path]))
        }
        if let real = try? fm.contentsOfDirectory(atPath: realLogs.path) {
            for name in real.sorted() where !name.hasPrefix(".") && !name.hasSuffix(".md") {
                out.append((name, [realLogs.appendingPathComponent(name).path]))
            }
        }
        out.append(("300 sessions", [try manySessionsLog(300, in: dir).path]))
        out.append(("dense 3 MB", [try denseBenchLog(megabytes: 3, in: dir).path]))
        out.append(("host app crash report", [try hostAppCrashBundle(in: dir).path]))
        return out
    }

    /// A sysdiagnose's shape: the phone's log and a crash report (`.ips`, bug_type 309) of the
    /// host app whose lines are in a session, after it. The bundle's `app-crashed` finding
    /// needs the sessions' processes, also when they were handed on (before session 43 the
    /// report written as sessions ended had none). A Linux daemon's death within the session
    /// is a bundle finding likewise.
    static func hostAppCrashBundle(in dir: URL) throws -> URL {
        let folder = dir.appendingPathComponent("host-app-crash")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var log = try String(contentsOf: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt"), encoding: .utf8)
        log = log.replacingOccurrences(of: "\n2026-03-12 10:15:03.", with: "\n2026-03-12 10:15:02.900000+0100 0x1a2      Default     0x0                  0      0    kernel: Out of memory: Killed process 4242 (turnserver) total-vm:1234kB\n2026-03-12 10:15:03.", options: [], range: log.range(of: "\n2026-03-12 10:15:03."))
        try log.write(to: folder.appendingPathComponent("system_logs.txt"), atomically: true, encoding: .utf8)
        let ips = """
            {"app_name":"JitsiDemo","timestamp":"2026-03-12 10:16:30.00 +0100","app_version":"1.0","bug_type":"309","os_version":"iPhone OS 17.4 (21E219)","name":"JitsiDemo"}
            {"procName" : "JitsiDemo", "pid" : 640, "captureTime" : "2026-03-12 10:16:30.1234 +0100",
             "exception" : {"codes" : "0x0000000000000000, 0x0000000000000000", "type" : "EXC_CRASH", "signal" : "SIGABRT"}}

            """
        try ips.write(to: folder.appendingPathComponent("JitsiDemo-2026-03-12-101630.ips"), atomically: true, encoding: .utf8)
        return folder
    }

    struct Outcome {
        var handedOn = false
        var superseded = false
        var whole = false
        var mode = Analyzer.ReadMode.whole
        var findingsApart = false
    }

    /// Analyzes `paths` with sessions handed on (`tune` sets the analyzer up) and holds the
    /// parts, put together, to the whole report's bytes (text and JSON) and findings.
    static func streamedMatchesWhole(_ name: String, _ paths: [String], tune: (Analyzer) -> Void = { _ in }) throws -> Outcome {
        // The findings of handed-on sessions are written by the sink when the analyzer does not
        // keep them: the JSON document then has a part for them too.
        let registry = try ParserRegistry.builtin()
        let provenance = Provenance(commandLine: ["castscope", "analyze"], generatedAt: 1_773_306_000_000_000)
        var outcome = Outcome()
        var options = AnalyzeOptions()
        options.now = 1_773_306_000_000_000
        let whole = try Analyzer(registry: registry, options: options).analyze(paths)
        let text = TextReport(color: false)
        let json = JSONReport.renderBytes(whole, provenance: provenance)

        let analyzer = try Analyzer(registry: registry, options: options)
        tune(analyzer)
        var parts = ""
        var elements: [UInt8] = []
        var count = 0
        var findingElements: [UInt8] = []
        var handedOn: [Finding] = []
        var writer = text
        analyzer.willStreamSessions = {
            // A second call starts over (the analyzer gave up streaming while reading).
            writer = text.prepared(inputs: $0.inputs)
            parts = ""
            elements = []
            count = 0
            findingElements = []
            handedOn = []
        }
        analyzer.onSession = { s, findings in
            parts += writer.sessionBlock(s, findings: findings)
            elements += JSONReport.sessionElement(s, first: count == 0)
            count += 1
            for f in findings { findingElements += JSONReport.findingElement(f, first: handedOn.isEmpty); handedOn.append(f) }
        }
        let streamed = analyzer.analyze(paths)
        outcome.mode = analyzer.lastReadMode
        guard streamed.streamed != nil else {
            // Relay lines: the join needs every session, so nothing was handed on. The CLI
            // writes that whole report in the same parts, a session at a time.
            #expect(streamed.sessions.count == whole.sessions.count, "\(name)")
            let w = text.prepared(inputs: whole.inputs)
            let bySession = whole.findingsBySession()
            var blocks = OutputBuffer()
            var items: [UInt8] = []
            for (i, s) in whole.sessions.enumerated() {
                w.sessionBlock(s, findings: bySession[s.id] ?? [], into: &blocks)
                items += JSONReport.sessionElement(s, first: i == 0)
            }
            #expect(w.head(whole) + blocks.string + w.tail(whole) == text.render(whole), "\(name): text in parts differs")
            let document = Self.written(whole, provenance, sessionCount: whole.sessions.count, parts: [items])
            #expect(document.gaps == 1)
            let same = document.bytes == json
            #expect(same, "\(name): JSON in parts differs")
            #expect(text.render(streamed) == text.render(whole), "\(name): the report kept whole differs")
            outcome.whole = !whole.sessions.isEmpty
            return outcome
        }
        outcome.handedOn = true
        #expect(streamed.sessions.isEmpty, "\(name): handed-on sessions are not kept")
        #expect(count == whole.sessions.count, "\(name)")
        outcome.superseded = whole.sessions.contains(where: { $0.outcome == .truncated }) && count > 50
        let assembled = writer.head(streamed) + parts + writer.tail(streamed)
        #expect(assembled == text.render(whole), "\(name): text differs")
        if streamed.handedOnFindings != nil {
            #expect(!analyzer.keepsSessionFindings)
            let document = Self.written(streamed, provenance, sessionCount: count, parts: [findingElements, elements])
            #expect(document.gaps == 2)
            let same = document.bytes == json
            #expect(same, "\(name): JSON with the findings written apart differs")
            #expect(streamed.findings.allSatisfy { $0.session == nil }, "\(name): only the bundle's findings are kept")
            outcome.findingsApart = !handedOn.isEmpty
        } else {
            let document = Self.written(streamed, provenance, sessionCount: count, parts: [elements])
            #expect(document.gaps == 1)
            let same = document.bytes == json
            #expect(same, "\(name): JSON differs")
            handedOn = []
        }
        #expect((handedOn + streamed.findings).map(\.message) == whole.findings.map(\.message), "\(name)")
        return outcome
    }

    /// The document as the CLI writes it (`JSONReport.write`), its gaps filled with `parts`
    /// in order; and how many gaps it had.
    static func written(_ r: AnalysisReport, _ provenance: Provenance, sessionCount: Int, parts: [[UInt8]])
        -> (bytes: [UInt8], gaps: Int)
    {
        final class Out: @unchecked Sendable { var bytes: [UInt8] = []; var gaps = 0 }
        let out = Out()
        let ok = JSONReport.write(r, provenance: provenance, sessionCount: sessionCount, to: { out.bytes += $0; return true }) { k in
            out.gaps += 1
            guard k < parts.count else { return false }
            out.bytes += parts[k]
            return true
        }
        #expect(ok)
        return (out.bytes, out.gaps)
    }

    /// The bundle's findings that read the sessions' lines are made when the sessions were
    /// handed on too: the host app's crash report and a daemon's death within a session.
    @Test func bundleFindingsOfSessionsHandedOn() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let folder = try Self.hostAppCrashBundle(in: dir)
        let analyzer = try Analyzer(registry: ParserRegistry.builtin(), options: AnalyzeOptions())
        analyzer.keepsSessionFindings = false
        var handed = 0
        analyzer.sessionSink = SessionSink(take: { _, _, _ in handed += 1 })
        let r = analyzer.analyze([folder.path])
        #expect(handed == 1 && r.streamed != nil)
        let kinds = r.findings.map(\.kind)
        #expect(kinds.contains("app-crashed"), "\(kinds)")
        #expect(kinds.contains("daemon-died"), "\(kinds)")
        #expect(r.findings.first { $0.kind == "app-crashed" }?.message.hasPrefix("JitsiDemo[640] crashed") == true)
    }

    @Test func sameBytesAsTheWholeReport() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var streamedSomething = false
        var sawSuperseded = false
        var sawWhole = false
        for (name, paths) in try Self.inputs(in: dir) {
            let o = try Self.streamedMatchesWhole(name, paths) { $0.streamsWhileReading = false }
            streamedSomething = streamedSomething || o.handedOn
            sawSuperseded = sawSuperseded || o.superseded
            sawWhole = sawWhole || o.whole
            #expect(o.mode == .whole)
        }
        #expect(streamedSomething)
        // (Since session 43 a bundle with relay lines hands its sessions on after the join.)
        #expect(!sawWhole, "a bundle with relay lines and sessions was kept whole")
        #expect(sawSuperseded, "the dense log has cut-off sessions closed when a new pid took over")
    }

    /// Sessions built while one file is read (`StreamedRead`): every file of the inputs cut
    /// in small ranges (so that sessions, frame runs and host lines straddle them) gives the
    /// whole report's bytes; relay lines, and a line out of time order by more than a range,
    /// make it give up and read the file again, with the same bytes.
    /// Two readers and small ranges and batches, so that sessions, frame runs and host lines
    /// straddle them.
    static func small(_ a: Analyzer) {
        a.keepsSessionFindings = false
        a.parallelThreshold = 0
        a.parallelism = 2
        a.minimumRange = 4096
        a.maximumStreamedRange = 16 * 1024
        a.streamedBatchEvents = 64
    }

    @Test func sameBytesWhenSessionsAreBuiltWhileReading() throws {
        let small = Self.small
        var modes: [String: Analyzer.ReadMode] = [:]
        var findingsApart = 0
        // Single files too: a relay export, a journal file and an archive.
        let single = ["relay/relay.export", "relay/relay.journal", "mixed-bundle/support-bundle.tar.gz"].map {
            ($0, [packageRoot.appendingPathComponent("samples/" + $0).path])
        }
        // And gzip: one reader, its events handed on 64 at a time.
        let gzDir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: gzDir) }
        var gzipped: [(String, [String])] = []
        let inputs = try Self.inputs(in: gzDir)
        for (name, paths) in inputs where name == "dense 3 MB" || name == "300 sessions" {
            let gz = gzDir.appendingPathComponent(name.replacingOccurrences(of: " ", with: "-") + ".log.gz")
            let log = try [UInt8](Data(contentsOf: URL(fileURLWithPath: paths[0])))
            try Data(makeArchive(.gz, [("device.log", log)])).write(to: gz)
            gzipped.append((name + " .gz", [gz.path]))
            // A folder holding just the file (and a hidden one, which is not read).
            let folder = gzDir.appendingPathComponent(name.replacingOccurrences(of: " ", with: "-"))
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: paths[0], toPath: folder.appendingPathComponent("device.log").path)
            try "notes".write(to: folder.appendingPathComponent(".DS_Store"), atomically: true, encoding: .utf8)
            gzipped.append((name + " folder", [folder.path]))
        }
        for (name, paths) in inputs + single + gzipped {
            let o = try Self.streamedMatchesWhole(name, paths, tune: small)
            modes[name] = o.mode
            if o.findingsApart { findingsApart += 1 }
        }
        #expect(findingsApart >= 5, "findings were written with their sessions, and not kept")
        // Not text by their first bytes: not tried (giving up would cost a second read).
        #expect(modes["mixed-bundle/support-bundle.tar.gz"] == .whole, "\(modes)")
        #expect(modes["relay/relay.journal"] == .whole, "\(modes)")
        #expect(modes["dense 3 MB"] == .streamed)
        #expect(modes["300 sessions"] == .streamed)
        #expect(modes["dense 3 MB .gz"] == .streamed, "\(modes)")
        #expect(modes["300 sessions .gz"] == .streamed, "\(modes)")
        #expect(modes["dense 3 MB folder"] == .streamed, "\(modes)")
        #expect(modes["jetsam-kill"] == .whole, "a folder of two files: \(modes)")
        #expect(modes["healthy-jitsi"] == .streamed, "a folder of one file: \(modes)")
        #expect(modes.values.filter { $0 == .streamed }.count >= 10, "\(modes)")
        #expect(modes.values.contains { if case .readAgain(let why) = $0 { why.hasPrefix("relay lines") } else { false } }, "\(modes)")
        // A line from the file's start copied to its end: earlier than lines already fed.
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let dense = try denseBenchLog(megabytes: 1, in: dir)
        var lines = try String(contentsOf: dense, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let early = lines.first { $0.contains("JitsiMeetSDK") || $0.contains("[SBCBroadcast]") }!
        lines.insert(early, at: lines.count - 1)
        let shuffled = dir.appendingPathComponent("late-line.log")
        try lines.joined(separator: "\n").write(to: shuffled, atomically: true, encoding: .utf8)
        let o = try Self.streamedMatchesWhole("late line", [shuffled.path], tune: small)
        #expect(o.mode == .readAgain("a line earlier than lines of a range before it"))
        #expect(o.handedOn)
    }

    /// A zone-less log whose clock goes back 23 minutes inside an extension's run of frame
    /// lines (folded into one run whose last line is earlier than its first), then a new
    /// extension days later. The host app's line among those frames is the running session's,
    /// read in file order or in time order. Before, that session ended at the run's last line,
    /// before its start: the whole read (which closes it once its process has no line to come)
    /// gave its host line to the session before it, the streamed read (which placed the line
    /// while the session was open) to it. (Differential run, session 50: seeds 7001 and 7005.)
    @Test func aClockGoingBackInsideAFrameRunKeepsTheSessionsHostLines() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        func line(_ time: String, _ process: String, _ message: String) -> String {
            "\(time) Df \(process):7c1a2] \(message)\n"
        }
        let started = "[SBCBroadcast] broadcastStarted - appGroup=group.com.example.calls"
        let frame = "video sample processed successfully"
        var text = line("2026-03-17 18:42:38.622", "BroadcastExtension[3032", started)
        text += line("2026-03-17 18:42:38.662", "BroadcastExtension[3032", "[SBCBroadcast] Socket connected successfully")
        text += line("2026-03-17 18:42:38.763", "BroadcastExtension[3032", "[SBCBroadcast] broadcastFinished")
        text += line("2026-03-17 18:42:38.805", "BroadcastExtension[3066", started)
        text += line("2026-03-17 18:42:38.805", "BroadcastExtension[3066", "[SBCBroadcast] Socket connected successfully")
        for k in 0..<20 {
            let ms = 39_005 + 60 * k
            let time = "2026-03-17 18:42:" + String(format: "%02d.%03d", ms / 1000, ms % 1000)
            text += line(time, "BroadcastExtension[3066", frame)
            if k == 1 { text += line(time, "CallsDemo[2742", "[SBCBroadcast] Extension connected to server") }
        }
        for _ in 0..<3 { text += line("2026-03-17 18:19:23.192", "BroadcastExtension[3066", frame) }
        text += line("2026-03-20 02:10:03.634", "BroadcastExtension[3110", started)
        text += line("2026-03-20 02:10:03.675", "BroadcastExtension[3110", "[SBCBroadcast] Socket connected successfully")
        let log = dir.appendingPathComponent("clock-back-in-run.log")
        try text.write(to: log, atomically: true, encoding: .utf8)

        var options = AnalyzeOptions()
        options.now = 1_773_306_000_000_000
        let whole = try Analyzer(registry: try ParserRegistry.builtin(), options: options).analyze([log.path])
        let running = try #require(whole.sessions.first { $0.pid == 3066 })
        #expect(running.events.contains { $0.side == .app && $0.message.hasSuffix("Extension connected to server") }, "the host line went to \(whole.sessions.map { ($0.id, $0.events.map { "\($0.side):\($0.line)" }) })")
        let end = try #require(running.end)
        #expect(end >= running.start!, "the session ends before it starts")
        let o = try Self.streamedMatchesWhole("clock back in a run", [log.path], tune: Self.small)
        #expect(o.mode == .streamed)
    }

    /// A file whose clock goes back at every copy of a log (rotated files joined newest first,
    /// a log pasted twice): no line can be fed before the file's end, so the lines held for
    /// earlier ones pass a bound and the read starts over the whole-bundle way (held on disk),
    /// with the same report. (Held here, 4.3 M lines took 522 MB; hostile round 9.)
    @Test func aClockGoingBackFarStartsOver() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sample = try String(contentsOf: packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt"), encoding: .utf8)
        let lines = sample.split(separator: "\n").filter { $0.first?.isNumber == true }
        // Copies an hour apart, the latest first.
        func copies(_ order: [Int]) -> String {
            var text = "Timestamp                       (process)[PID]\n"
            for copy in order {
                for line in lines { text += line.replacingOccurrences(of: "2026-03-12 10:", with: "2026-03-\(String(format: "%02d", 12 + copy / 24)) \(String(format: "%02d", copy % 24)):") + "\n" }
            }
            return text
        }
        let text = copies((0..<40).reversed())
        let log = dir.appendingPathComponent("newest-first.log")
        try text.write(to: log, atomically: true, encoding: .utf8)
        let o = try Self.streamedMatchesWhole("clock back", [log.path]) {
            Self.small($0)
            $0.streamedMostHeld = 500
        }
        guard case .readAgain(let why) = o.mode else { Issue.record("\(o.mode)"); return }
        #expect(why.hasSuffix("lines held for lines earlier than them (the clock goes back)"), "\(why)")
        // In time order, the same lines are streamed.
        let ordered = dir.appendingPathComponent("oldest-first.log")
        try copies(Array(0..<40)).write(to: ordered, atomically: true, encoding: .utf8)
        let f = try Self.streamedMatchesWhole("clock forward", [ordered.path]) {
            Self.small($0)
            $0.streamedMostHeld = 500
        }
        #expect(f.mode == .streamed)
    }

    /// A folded run of frame lines whose second line is earlier than its first, as the first
    /// lines of the file (the streamed read once made a range from a line to an earlier one
    /// here, and crashed). The span covers both lines: it runs from the earlier one, the
    /// second, to the first (it was the first line alone until every line of a run counted).
    @Test func aRunGoingBackInTimeFirst() throws {
        let r = try Self.streamedInRangesMatchesWhole("back in time", """
            2026-03-12 10:01:05.000000+0100 0x2     Default     0x0                  2114   0    BroadcastExtension: video sample processed successfully
            2026-03-12 10:01:01.000000+0100 0x2     Default     0x0                  2114   0    BroadcastExtension: video sample processed successfully

            """)
        #expect(r.span.map { $0.upperBound - $0.lowerBound } == 4_000_000, "the span covers both lines of the run")
    }

    /// `text` as a file read in ranges on two threads, sessions streamed: the same report as
    /// the whole read (`streamedMatchesWhole`); the whole read's report.
    static func streamedInRangesMatchesWhole(_ name: String, _ text: String) throws -> AnalysisReport {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("in.log")
        try text.write(to: log, atomically: true, encoding: .utf8)
        let o = try Self.streamedMatchesWhole(name, [log.path]) {
            $0.parallelThreshold = 0
            $0.parallelism = 2
        }
        #expect(o.mode == .streamed, "\(name)")
        return try Analyzer(registry: try ParserRegistry.builtin()).analyze([log.path])
    }

    /// A run whose middle line is its latest (16.909, 16.956, 16.932 in a kept bundle): the
    /// session ends at the latest line, not the run's last, in the streamed read as in the
    /// whole one.
    @Test func aSessionEndsAtItsRunsLatestLine() throws {
        let r = try Self.streamedInRangesMatchesWhole("latest in the middle", """
            2026-03-12 10:01:00.000000+0100 0x2     Default     0x0                  2114   0    BroadcastExtension: broadcastStarted(withSetupInfo:)
            2026-03-12 10:01:01.000000+0100 0x2     Default     0x0                  2114   0    BroadcastExtension: video sample processed successfully
            2026-03-12 10:01:05.000000+0100 0x2     Default     0x0                  2114   0    BroadcastExtension: video sample processed successfully
            2026-03-12 10:01:03.000000+0100 0x2     Default     0x0                  2114   0    BroadcastExtension: video sample processed successfully

            """)
        #expect(r.sessions.count == 1)
        let s = try #require(r.sessions.first)
        #expect(s.end.flatMap { e in s.start.map { e - $0 } } == 5_000_000, "the session lasts to 10:01:05, its latest line")
    }

    /// The command line on a file big enough to be streamed while read (over 32 MB, two
    /// threads): the same report as the whole-bundle read (`--threads 1`); and when the
    /// analyzer gives up half-way (a line out of order at the end) and starts over, the
    /// sessions written before are dropped, not written twice.
    @Test func theCommandLineStartsOverCleanly() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let dense = try denseBenchLog(megabytes: 34, in: dir)
        let late = dir.appendingPathComponent("late.log")
        var text = try String(contentsOf: dense, encoding: .utf8)
        let early = text.split(separator: "\n").first { $0.contains("[SBCBroadcast]") }!
        text += early + "\n"
        try text.write(to: late, atomically: true, encoding: .utf8)
        /// The JSON report after its generator (whose command line differs).
        func afterGenerator(_ json: String) -> Substring {
            json.range(of: "\"files\":").map { json[$0.lowerBound...] } ?? ""
        }
        for (input, gaveUp) in [(dense, false), (late, true)] {
            let streamed = try castscope(["analyze", "--threads", "2", input.path], env: ["CASTSCOPE_STAGES": "1"])
            let whole = try castscope(["analyze", "--threads", "1", input.path])
            #expect(streamed.status == whole.status)
            // Compared first: a failing #expect on two long strings would diff them for minutes.
            let sameText = streamed.stdout == whole.stdout
            #expect(sameText, "\(input.lastPathComponent): text differs")
            #expect(streamed.stderr.contains("given up: a line earlier") == gaveUp, "\(streamed.stderr)")
            #expect(streamed.stdout.contains("S600"), "hundreds of sessions")
            let sj = try castscope(["analyze", "--threads", "2", "--json", input.path])
            let wj = try castscope(["analyze", "--threads", "1", "--json", input.path])
            #expect(afterGenerator(sj.stdout).count > 1000)
            let sameJSON = afterGenerator(sj.stdout) == afterGenerator(wj.stdout)
            #expect(sameJSON, "\(input.lastPathComponent): JSON differs")
        }
    }

    /// A process that writes again after a long silence, with no other session of its name
    /// started meanwhile, is still the same session (nothing closed it).
    @Test func aSilentProcessNotSupersededStaysOneSession() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("gap.log")
        try """
            2026-03-12 09:20:00.492204+0100  localhost BroadcastExtension[1300]: broadcast started
            2026-03-12 09:20:00.514204+0100  localhost BroadcastExtension[1300]: open socket connection
            2026-03-12 09:20:00.614204+0100  localhost BroadcastExtension[1300]: client stream open completed
            2026-03-12 11:20:00.614204+0100  localhost BroadcastExtension[1300]: video sample processed successfully

            """.write(to: log, atomically: true, encoding: .utf8)
        let analyzer = try Analyzer(registry: try ParserRegistry.builtin())
        var handed: [Session] = []
        analyzer.onSession = { s, _ in handed.append(s) }
        _ = analyzer.analyze([log.path])
        #expect(handed.count == 1)
        #expect(handed.first?.events.count == 4)
    }
}

/// A session open to the end (a pasted excerpt cut mid-session, a stray extension's one line)
/// holds every later session back, as sessions are handed on in start order: those that are
/// done wait in a spill file, not in memory, and come out as they would have.
@Suite("sessions waiting behind an open one")
struct ParkedSessionTests {
    static func events() -> [Event] {
        var out: [Event] = []
        func add(_ t: Int64, _ pid: Int, _ process: String, _ kind: String, _ message: String, _ attrs: [(String, String)] = [],
                 side: Side = .extension)
        {
            let n = out.count
            out.append(Event(kind: kind, sdk: "jitsi", side: side, time: t, process: process, pid: pid, message: message,
                             attrs: attrs, source: SourceRef(path: "p.log", line: n + 1), order: n, parsedTime: nil, fileIndex: 0))
        }
        add(0, 1, "Stray", "broadcast.started", "broadcast started")  // never ends, never superseded
        for k in 0..<200 {
            let t = Int64(k + 1) * 120_000_000, pid = 100 + k, p = "Ext\(k)"
            // A second session that stays open a while (ends at k = 150), and another stray
            // that ends at k = 120: the head of the line changes while sessions are parked.
            if k == 40 { add(t - 5_000_000, 2, "Long", "broadcast.started", "broadcast started") }
            if k == 150 { add(t - 5_000_000, 2, "Long", "broadcast.finished", "broadcastFinished") }
            if k == 60 { add(t - 4_000_000, 3, "Other", "broadcast.started", "broadcast started") }
            if k == 120 { add(t - 4_000_000, 3, "Other", "socket.closed", "client connection did close nil") }
            add(t, pid, p, "broadcast.started", "broadcast started")
            add(t + 500, 7, "Host", "server.client_connected", "server stream open completed", side: .app)  // joins it
            add(t + 1_000, pid, p, "socket.connect_attempt", "open socket connection")
            if k % 4 == 1 {
                add(t + 1_500, pid, p, "socket.connect_failed", "failure: socket file missing", [("cause_text", "socket file missing")])
                add(t + 1_800, pid, p, "socket.connect_attempt", "open socket connection")
            }
            add(t + 2_000, pid, p, "socket.connected", "client stream open completed")
            for f in 0..<5 { add(t + 100_000 + Int64(f) * 100_000, pid, p, "frame.sent", "video sample processed successfully \(f)") }
            add(t + 1_000_000, pid, p, k % 3 == 0 ? "socket.closed" : "broadcast.finished", k % 3 == 0 ? "client connection did close nil" : "broadcastFinished")
            // A line of an earlier session's process long after it ended (it is placed like a
            // host line, whether or not that session waits behind an open one).
            if k >= 30, k % 10 == 0 { add(t + 1_500_000, 100 + k - 25, "Ext\(k - 25)", "frame.sent", "video sample processed successfully late") }
        }
        return out
    }

    static func run(parkAfter: Int) -> (sessions: [String], maxLive: Int, parkedEver: Bool) {
        var stream = SessionStream()
        stream.parkAfter = parkAfter
        let events = Self.events()
        stream.learn(events)
        var out: [Session] = []
        var maxLive = 0
        var parkedEver = false
        for e in events {
            stream.feed(e) { out.append($0) }
            maxLive = max(maxLive, stream.live.count)
            parkedEver = parkedEver || !stream.parked.isEmpty
        }
        stream.finish { out.append($0) }
        return (describe(out), maxLive, parkedEver)
    }

    @Test("done sessions behind an open one are spilled and handed on in order, the same as kept")
    func parkedBehindAnOpenSession() {
        let kept = Self.run(parkAfter: Int.max)
        let parked = Self.run(parkAfter: 8)
        #expect(kept.sessions.count == 203)
        #expect(parked.sessions == kept.sessions)
        #expect(parked.parkedEver)
        // Kept, every session waits behind the stray one; parked, only a few at a time.
        #expect(kept.maxLive > 150)
        #expect(parked.maxLive < 20)
    }
}

/// A short excerpt cut mid-session beside a whole day's log: once the logs have passed the
/// last line of the excerpt's stream (learned from the whole bundle first) and it has been
/// silent for the idle horizon, its session closes instead of holding every later session back.
/// A stream named by pid runs through every file that has its lines: one that goes on in
/// another file, after a silence longer than the horizon, is not closed.
@Suite("a session whose stream has no line to come")
struct StreamEndedSessionTests {
    static func events(continued: Bool) -> [Event] {
        var out: [Event] = []
        func add(_ t: Int64, _ pid: Int, _ kind: String, _ message: String, file: Int) {
            let n = out.count
            out.append(Event(kind: kind, sdk: "jitsi", side: .extension, time: t, process: "BroadcastExtension", pid: pid,
                             message: message, attrs: [], source: SourceRef(path: file == 0 ? "day.log" : "excerpt.log", line: n + 1),
                             order: n, parsedTime: nil, fileIndex: file))
        }
        // The excerpt: a session that starts, connects, sends frames and is cut off.
        add(5_000_000, 812, "broadcast.started", "broadcast started", file: 1)
        add(5_100_000, 812, "socket.connected", "client stream open completed", file: 1)
        for f in 0..<20 { add(5_200_000 + Int64(f) * 100_000, 812, "frame.sent", "video sample processed successfully", file: 1) }
        // The same process in the day's log, quiet for ten minutes, then finishing.
        if continued { add(600_000_000, 812, "broadcast.finished", "broadcastFinished", file: 0) }
        // The day: a session every two minutes, each ended by its own lines.
        for k in 0..<30 {
            let t = Int64(k) * 120_000_000 + 10_000_000, pid = 2000 + k
            add(t, pid, "broadcast.started", "broadcast started", file: 0)
            add(t + 100_000, pid, "socket.connected", "client stream open completed", file: 0)
            add(t + 1_000_000, pid, "broadcast.finished", "broadcastFinished", file: 0)
        }
        return out.sorted { ($0.time!, $0.order) < ($1.time!, $1.order) }
    }

    static func run(wholeBundle: Bool, continued: Bool = false) -> (sessions: [String], beforeTheEnd: Int) {
        var stream = SessionStream()
        stream.learnsWholeBundle = wholeBundle
        let events = Self.events(continued: continued)
        stream.learn(events)
        var out: [Session] = []
        for e in events { stream.feed(e) { out.append($0) } }
        let beforeTheEnd = out.count
        stream.finish { out.append($0) }
        return (out.map { "\($0.id) \($0.process ?? "") \($0.pid ?? -1) \($0.outcome) \($0.start ?? -1) \($0.end ?? -1) \($0.events.reduce(0) { $0 + $1.count })" },
                beforeTheEnd)
    }

    @Test("closed once the logs pass its stream's last line: the same sessions, handed on as the day goes")
    func closesWhenItsStreamHasEnded() throws {
        let open = Self.run(wholeBundle: false)
        let closed = Self.run(wholeBundle: true)
        #expect(open.sessions.count == 31)
        #expect(closed.sessions == open.sessions)
        // S1 is the excerpt's: truncated, ended at its last frame, either way.
        let excerpt = try #require(closed.sessions.first { $0.contains(" 812 ") })
        #expect(excerpt.hasPrefix("S1 ") && excerpt.contains("truncated"))
        // Without knowing the stream's end, every later session waits behind it to the end.
        #expect(open.beforeTheEnd == 0)
        #expect(closed.beforeTheEnd >= 25)
    }

    @Test("a stream that goes on in another file after a long silence stays one session")
    func continuedInAnotherFile() throws {
        let open = Self.run(wholeBundle: false, continued: true)
        let learned = Self.run(wholeBundle: true, continued: true)
        #expect(learned.sessions == open.sessions)
        let excerpt = try #require(learned.sessions.first { $0.contains(" 812 ") })
        // Ended by its own finishing line ten minutes on, with all 23 of its lines.
        #expect(excerpt.hasPrefix("S1 ") && excerpt.contains(" completed ") && excerpt.hasSuffix(" 23"), "\(excerpt)")
        // Handed on when its end line came, as without learning.
        #expect(learned.beforeTheEnd == open.beforeTheEnd && learned.beforeTheEnd > 20)
    }
}

/// The same line in two exports of one bundle counts once (`Analyzer.dedupe`): only lines at a
/// time another file also covers are looked up, and the list is compacted in place.
@Suite("lines seen in two files")
struct DedupeTests {
    @Test("a whole copy, a half copy and a file of another hour: each line once, the other hour's all kept")
    func overlappingExports() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let registry = try ParserRegistry.builtin()
        let original = packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt")
        let other = packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt")
        let text = try String(contentsOf: original, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        // The header lines and the second half of the records: a second export of the same hour.
        let half = (lines.prefix(2) + lines.dropFirst(lines.count / 2)).joined(separator: "\n")
        func count(_ files: [(String, String)]) throws -> (events: Int, sessions: Int) {
            let sub = dir.appendingPathComponent(UUID().uuidString)
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
            for (name, body) in files { try body.write(to: sub.appendingPathComponent(name), atomically: true, encoding: .utf8) }
            let r = try Analyzer(registry: registry).analyze([sub.path])
            return (r.eventCount, r.tally.count)
        }
        let one = try count([("a.txt", text)])
        let otherAlone = try count([("z.txt", try String(contentsOf: other, encoding: .utf8))])
        #expect(one.events > 10 && otherAlone.events > 10)
        #expect(try count([("a.txt", text), ("b.txt", text)]) == one)
        #expect(try count([("a.txt", text), ("b.txt", half)]) == one)
        let all = try count([("a.txt", text), ("b.txt", half), ("z.txt", try String(contentsOf: other, encoding: .utf8))])
        #expect(all.events == one.events + otherAlone.events)
        #expect(all.sessions == one.sessions + otherAlone.sessions)
    }
}

/// The sessions handed on are finished on other threads (`SessionPipe`): prepared on one or
/// several at once, committed in the order they were handed on, every one, and a session
/// bigger than the pipe's line bound still passes (an empty pipe takes anything).
@Suite("session pipe")
struct SessionPipeTests {
    @Test("order kept, nothing lost, a session over the line bound passes, small capacities do not deadlock",
          arguments: [1, 2, 3])
    func orderAndBounds(workers: Int) {
        for (capacity, maxLines) in [(1, 1), (4, 10), (64, 1 << 16)] {
            final class Seen: @unchecked Sendable {
                var ids: [String] = []
                var preparing = 0, most = 0
                let lock = NSLock()
            }
            let seen = Seen()
            let pipe = SessionPipe(capacity: capacity, maxLines: maxLines, workers: workers, prepare: { s in
                seen.lock.withLock { seen.preparing += 1; seen.most = max(seen.most, seen.preparing) }
                // Slow now and then, so that a later session is ready first.
                if s.id.hasSuffix("0") || s.id.hasSuffix("7") { usleep(300) }
                seen.lock.withLock { seen.preparing -= 1 }
                return FinishedSession(session: s, findings: [], prepared: s.id)
            }, commit: { done in
                if done.session.id.hasSuffix("3") { usleep(100) }  // a slow writer now and then
                seen.ids.append(done.prepared as! String)
            })
            var expected: [String] = []
            for k in 0..<500 {
                var s = Session(id: "S\(k)", sdk: "jitsi")
                // Every 50th session stands for more lines than the bound.
                let n = k % 50 == 0 ? maxLines + 5 : 1
                s.events = (0..<n).map { i in
                    Event(kind: "frame.sent", sdk: "jitsi", side: .extension, time: Int64(i), process: "X", pid: 1, message: "f",
                          attrs: [], source: SourceRef(path: "p", line: i + 1), order: i, parsedTime: nil, fileIndex: 0)
                }
                expected.append(s.id)
                pipe.put(s)
            }
            pipe.finish()
            #expect(seen.ids == expected, "capacity \(capacity), \(maxLines) lines, \(workers) workers")
            #expect(seen.most <= workers)
            if workers > 1 && capacity > 1 { #expect(seen.most > 1, "sessions were prepared at once") }
        }
    }
}

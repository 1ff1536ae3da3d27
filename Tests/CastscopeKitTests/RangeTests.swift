import Foundation
import Testing

@testable import CastscopeKit

/// Big text files are read as byte ranges on several threads, more ranges than threads; the
/// report must not depend on how the file was cut.
@Suite("reading big files in ranges")
struct RangeTests {
    /// A noisy `log show` export: daemons' lines, Jitsi-style sessions (started, attempts,
    /// connected, frame runs, finished), continuation lines after relevant and irrelevant
    /// records, a non-ASCII line now and then, blank lines.
    func noisyExport(lines count: Int) -> String {
        var rng = SplitMix(seed: 7)
        let noise = [
            ("runningboardd", 33, "(RunningBoard) [com.apple.runningboard:process] Set jetsam priority to 100 [0] flag[1]"),
            ("mDNSResponder", 198, "[com.apple.mDNSResponder:Default] [R26089->Q10431] getaddrinfo start -- flags: 0xC000D000"),
            ("SpringBoard", 58, "(FrontBoard) [com.apple.FrontBoard:Process] Scene lifecycle state did change: Foreground"),
            ("kernel", 0, "(AppleBCMWLANCore) wl0: Roamed or switched channel, reason #4, last RSSI -61"),
            ("assertiond", 64, "[com.apple.assertiond:assertion] Attempting to acquire assertion for com.apple.mobilemail"),
        ]
        var session: [String] = []
        var pid = 812
        var out = ""
        var us = 0
        for i in 0..<count {
            us += Int(rng.next() % 3000) + 50
            let (s, u) = (us / 1_000_000, us % 1_000_000)
            let time = String(format: "2026-03-12 %02d:%02d:%02d.%06d+0100", 10 + s / 3600 % 12, s / 60 % 60, s % 60, u)
            let proc: String, p: Int, msg: String
            if rng.next() % 25 == 0 {
                if session.isEmpty {
                    session = ["broadcast started", "Open socket connection", "failure: socket file missing", "Open socket connection",
                               "client stream open completed"]
                        + Array(repeating: "video sample processed successfully", count: Int(rng.next() % 300) + 20)
                        + ["Broadcast finished"]
                    pid += 7
                }
                (proc, p, msg) = ("BroadcastExtension", pid, session.removeFirst())
            } else {
                (proc, p, msg) = noise[Int(rng.next() % UInt64(noise.count))]
            }
            out += "\(time) 0x\(String(i % 0xFFFFF + 0x1000, radix: 16)) Default     0x0                  \(p)    0    \(proc): \(msg)\n"
            switch rng.next() % 97 {
            case 0: out += "    continued: detail line \(i)\n"
            case 1: out += "caf\u{E9} cr\u{E8}me line \(i)\n"
            case 2: out += "\n"
            default: break
            }
        }
        return out
    }

    /// The JSON report of `path` read by `threads` threads in up to `perThread` ranges each,
    /// none smaller than `minimum` bytes (files of 64 KB or more are cut).
    func rangedReport(_ path: String, _ registry: ParserRegistry, threads: Int, perThread: Int, minimum: UInt64) throws -> String {
        JSONReport.render(try rangedAnalysis(path, registry, threads: threads, perThread: perThread, minimum: minimum))
    }

    func rangedAnalysis(_ path: String, _ registry: ParserRegistry, threads: Int, perThread: Int, minimum: UInt64,
                        options: AnalyzeOptions = AnalyzeOptions()) throws -> AnalysisReport {
        let analyzer = try Analyzer(registry: registry, options: options)
        analyzer.parallelism = threads
        analyzer.parallelThreshold = 64 * 1024
        analyzer.rangesPerThread = perThread
        analyzer.minimumRange = minimum
        return analyzer.analyze([path])
    }

    @Test("the report is the same for one reader and for many ranges on several threads")
    func rangesAgreeWithOneReader() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("system_logs.log")
        try noisyExport(lines: 20_000).write(to: file, atomically: true, encoding: .utf8)
        let registry = try ParserRegistry.builtin()

        func report(threads: Int, perThread: Int, minimum: UInt64) throws -> String {
            try rangedReport(file.path, registry, threads: threads, perThread: perThread, minimum: minimum)
        }
        let one = try report(threads: 1, perThread: 1, minimum: 1 << 40)
        // Sessions were found (the comparison below is about something).
        #expect(one.contains("\"sessions\": ") && !one.contains("\"sessions\": 0,"))
        for (threads, perThread, minimum) in [(2, 1, UInt64(1 << 40)), (2, 4, 64 * 1024), (3, 16, 16 * 1024)] {
            let many = try report(threads: threads, perThread: perThread, minimum: minimum)
            #expect(many == one, "\(threads) threads × \(perThread) ranges")
        }

        // The cuts land on record starts, and there really were many of them.
        let context = ReadContext(factory: EventFactory(registry: registry), prefilter: Prefilter(anchors: []), filter: JournalFilter(),
                                  maxLineLength: 1 << 20)
        let size = UInt64(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as! Int)
        let format = try #require(registry.format(named: "apple-default"))
        let ranges = try context.splitPoints(file.path, size: size, format: format, parts: 48)
        #expect(ranges.count > 40)
        let bytes = try Data(contentsOf: file)
        for r in ranges.dropFirst() {
            #expect(bytes[Int(r.lowerBound) - 1] == 0x0A)
            #expect(bytes[Int(r.lowerBound)..<Int(r.lowerBound) + 4] == Data("2026".utf8))
        }
    }
}

extension RangeTests {
    /// A pasted crash report's header is parsed whole after its `Hardware Model:` line by one
    /// reader: no range may begin inside it (a review found headers lost at range bounds).
    @Test("crash reports pasted among plain lines: every one found, whatever the ranges")
    func crashHeadersAcrossRanges() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("notes.txt")
        var text = ""
        // (the lines a header is read whole for, 60, between two: reports are not pasted denser)
        for n in 0..<120 {
            for i in 0..<(62 + n % 13) { text += "some unrelated words of a log line \(i)\n" }
            text += "Incident Identifier: 5CE05737-666A-4AD8-9BC5-D3ECD4CE2F71\nHardware Model:      iPhone14,2\n"
                + "Process:             ScreenShareExt\(n) [\(n + 100)]\nDate/Time:           2024-05-01 16:47:45.5386 +0100\n"
                + "Exception Type:  EXC_CRASH (SIGKILL)\nTermination Reason: RUNNINGBOARD 0xd00d2bad\n"
        }
        try text.write(to: file, atomically: true, encoding: .utf8)
        let registry = try ParserRegistry.builtin()
        for (threads, perThread, minimum) in [(1, 1, UInt64(1 << 40)), (2, 64, UInt64(256)), (3, 200, UInt64(128))] {
            let analyzer = try Analyzer(registry: registry)
            analyzer.parallelism = threads
            analyzer.parallelThreshold = 1024
            analyzer.rangesPerThread = perThread
            analyzer.minimumRange = minimum
            let report = analyzer.analyze([file.path])
            #expect(report.sessions.count == 120, "\(threads) threads × \(perThread) ranges")
        }
    }
}

/// A small deterministic generator (tests must not depend on the system's random source).
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension RangeTests {
    /// A scratch folder, and an analyzer and a reading context to sample files with.
    func sampling() throws -> (URL, ParserRegistry, Analyzer, ReadContext) {
        let registry = try ParserRegistry.builtin()
        let analyzer = try Analyzer(registry: registry)
        let context = ReadContext(factory: EventFactory(registry: registry), prefilter: analyzer.prefilter, filter: JournalFilter(),
                                  maxLineLength: 1 << 20)
        return (try temporaryDirectory(), registry, analyzer, context)
    }

    /// A big file streamed while read is cut so that a range holds about
    /// `streamedRangeEvents` events: noise keeps the largest ranges, a log of nothing but
    /// extension lines gets small ones (the ranges waiting are what is held), the busy part
    /// found wherever it is in the file, and never below `minimumStreamedRange`.
    @Test("streamed ranges shrink where recognized lines are dense")
    func streamedRangesFollowDensity() throws {
        let (dir, registry, analyzer, context) = try sampling()
        defer { try? FileManager.default.removeItem(at: dir) }
        let format = try #require(registry.format(named: "apple-default"))
        func line(_ i: Int, _ message: String, pid: Int) -> String {
            "2026-03-12 10:\(String(format: "%02d:%02d", i / 60000 % 60, i / 1000 % 60)).\(String(format: "%06d", i % 1000 * 1000))+0100 "
                + "0x4e470    Default     0x0                  \(pid)   0    \(message)\n"
        }
        let noise = "locationd: [com.apple.locationd.Core:Client] os_transaction releasing: (0x16c179c20) GetIdentifyingInformation"
        func range(_ name: String, busy: (Int) -> Bool) throws -> UInt64 {
            var text = ""
            for i in 0..<8000 {
                if busy(i) {
                    text += line(i, i % 2 == 0 ? "BroadcastExtension: [SBCBroadcast] broadcastStarted - appGroup=group.example"
                                                : "BroadcastExtension: [SBCBroadcast] broadcastFinished", pid: 1000 + i / 2)
                } else {
                    text += line(i, noise, pid: 87)
                }
            }
            let file = dir.appendingPathComponent(name)
            try text.write(to: file, atomically: true, encoding: .utf8)
            let size = UInt64(text.utf8.count)
            #expect(size > 16 * (16 << 10))
            return analyzer.streamedRange(context, diskPath: file.path, path: name, size: size, format: format)
        }
        #expect(try range("noise.log", busy: { _ in false }) == analyzer.maximumStreamedRange)
        // Every line an extension's: a 16 KB sample holds ~100 events, a range ~1.3 MB.
        let dense = try range("dense.log", busy: { _ in true })
        #expect(dense >= analyzer.minimumStreamedRange && dense < 2 << 20)
        // One line in four: ranges about four times as big.
        let quarter = try range("quarter.log", busy: { $0 % 4 == 0 })
        #expect(quarter > 3 * dense && quarter < analyzer.maximumStreamedRange)
        // Busy only in the last quarter of the file: still found.
        let late = try range("late.log", busy: { $0 >= 6000 })
        #expect(late < 2 << 20)
        // Short lines, every one an extension's (`log stream` of thousands of sessions at
        // once: ~190 events in 16 KB): below a megabyte, since seven ranges are held at once
        // (a megabyte each held 16 MB of events).
        var short = ""
        for i in 0..<12000 {
            short += "2026-03-12 00:00:00.\(String(format: "%06d", i))+0100  localhost BroadcastExtension[\(2000 + i % 5000)]: "
                + (i % 3 == 0 ? "broadcast started\n" : "video sample processed successfully\n")
        }
        let shortFile = dir.appendingPathComponent("stream.log")
        try short.write(to: shortFile, atomically: true, encoding: .utf8)
        let stream = try #require(registry.format(named: "apple-syslog"))
        let shortRange = analyzer.streamedRange(context, diskPath: shortFile.path, path: "stream.log", size: UInt64(short.utf8.count), format: stream)
        #expect(shortRange < 1 << 20 && shortRange >= analyzer.minimumStreamedRange)
        // Never below the minimum.
        analyzer.minimumStreamedRange = 4 << 20
        #expect(try range("dense2.log", busy: { _ in true }) == 4 << 20)
    }
}

extension RangeTests {
    /// `journalctl -o export` of a relay with many sessions: entries of text fields and, now and
    /// then, a binary-safe MESSAGE (a multi-line one, whose bytes hold a blank line and a
    /// `__CURSOR=` line of their own), and an entry journalctl wrote without a cursor.
    func relayExport(entries count: Int) -> Data {
        var out = Data()
        var rng = SplitMix(seed: 11)
        var open: [Int] = []
        var next = 0
        for i in 0..<count {
            let t = 1_773_306_904_000_000 + i * 40_000
            let message: String
            if open.count < 8 || rng.next() % 6 == 0 {
                open.append(next)
                message = "session \(String(format: "%08x", next))-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=r\(next)"
                next += 1
            } else if rng.next() % 5 == 0 {
                let s = open.remove(at: Int(rng.next() % UInt64(open.count)))
                message = "session \(String(format: "%08x", s))-1b7e-4f0e-9a51-2f1d3c4b5a69 closed reason=peer-eof frames=120 duration=13.0s"
            } else {
                let s = open[Int(rng.next() % UInt64(open.count))]
                message = "session \(String(format: "%08x", s))-1b7e-4f0e-9a51-2f1d3c4b5a69 stats frames=10 bytes=281133 fps=10.0 dropped=0"
            }
            if i % 97 != 50 { out += Data("__CURSOR=s=5272d5c3;i=\(String(i, radix: 16));b=0;m=0;t=\(String(t, radix: 16));x=1\n".utf8) }
            out += Data("__REALTIME_TIMESTAMP=\(t)\n_PID=811\n_HOSTNAME=relay1\nSYSLOG_IDENTIFIER=broadcast-relay\nPRIORITY=6\n".utf8)
            if i % 41 == 7 {
                let value = Data((message + "\n\n__CURSOR=s=inside;i=1\nMESSAGE=not a field\n").utf8)
                out += Data("MESSAGE\n".utf8)
                withUnsafeBytes(of: UInt64(value.count).littleEndian) { out.append(contentsOf: $0) }
                out += value + Data("\n".utf8)
            } else {
                out += Data("MESSAGE=\(message)\n".utf8)
            }
            out += Data("\n".utf8)
        }
        return out
    }

    @Test("a journal export is read in ranges cut where journalctl starts an entry, with the report of one reader")
    func exportRangesAgreeWithOneReader() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("relay.export")
        let bytes = relayExport(entries: 6_000)
        try bytes.write(to: file)
        let registry = try ParserRegistry.builtin()

        func report(threads: Int, perThread: Int, minimum: UInt64) throws -> String {
            try rangedReport(file.path, registry, threads: threads, perThread: perThread, minimum: minimum)
        }
        let one = try report(threads: 1, perThread: 1, minimum: 1 << 40)
        #expect(one.contains("\"format\": \"journal-export\"") && one.contains("orphan-relay-session"))
        for (threads, perThread, minimum) in [(2, 4, UInt64(64 * 1024)), (3, 16, UInt64(16 * 1024))] {
            let many = try report(threads: threads, perThread: perThread, minimum: minimum)
            #expect(many == one, "\(threads) threads × \(perThread) ranges")
        }

        // Every cut is a cursor line after the blank line that ends an entry, never the
        // look-alike inside a binary MESSAGE, and there were many.
        let context = ReadContext(factory: EventFactory(registry: registry), prefilter: Prefilter(anchors: []), filter: JournalFilter(),
                                  maxLineLength: 1 << 20)
        let format = try #require(registry.format(named: "journal-export"))
        let ranges = try context.splitPoints(file.path, size: UInt64(bytes.count), format: format, parts: 64)
        #expect(ranges.count > 50)
        for r in ranges.dropFirst() {
            let at = Int(r.lowerBound)
            #expect(bytes[at - 2..<at] == Data("\n\n".utf8))
            #expect(bytes[at..<at + 12] == Data("__CURSOR=s=5".utf8))
        }
    }
}

extension RangeTests {
    /// `--max-events` on a file read in ranges: the lines up to the budget in file order are
    /// analyzed (a run the budget ends in keeps its lines up to it), one error names the first
    /// line left out, and the report is the one reader's. Ranges each stopped on their own
    /// before: 1,372 errors for a 2 GB retry storm, and holes in the session.
    @Test("the recognized-line budget cuts a file read in ranges where one reader cuts it, with one error")
    func budgetAcrossRanges() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("system_logs.log")
        try noisyExport(lines: 80_000).write(to: file, atomically: true, encoding: .utf8)
        let registry = try ParserRegistry.builtin()
        let whole = try rangedReport(file.path, registry, threads: 1, perThread: 1, minimum: 1 << 40)
        let recognized = try #require(Int(whole.firstMatch(of: /"events": (\d+)/)!.1))
        #expect(recognized > 2000)
        // Budgets that end between events and inside frame runs.
        for limit in [1000, 1337, recognized / 2 + 11, recognized - 1] {
            var options = AnalyzeOptions()
            options.budget.maxEventsPerFile = limit
            func report(threads: Int, perThread: Int, minimum: UInt64) throws -> AnalysisReport {
                try rangedAnalysis(file.path, registry, threads: threads, perThread: perThread, minimum: minimum, options: options)
            }
            let one = try report(threads: 1, perThread: 1, minimum: 1 << 40)
            #expect(one.errors.count == 1 && one.inputs[0].events == limit, "\(limit): \(one.errors)")
            let oneJSON = JSONReport.render(one)
            for (threads, perThread, minimum) in [(2, 4, UInt64(64 * 1024)), (3, 16, UInt64(16 * 1024))] {
                let many = try report(threads: threads, perThread: perThread, minimum: minimum)
                #expect(many.errors.map(\.description) == one.errors.map(\.description), "\(limit), \(threads) × \(perThread)")
                #expect(many.inputs[0].events == limit)
                // The same sessions and lines; what the readers read past the budget (lines,
                // records, skipped lines) may differ.
                let strip = { (s: String) in s.replacing(/"(records|lines|skipped|unparsed)": \d+/, with: "") }
                #expect(strip(JSONReport.render(many)) == strip(oneJSON), "\(limit), \(threads) × \(perThread)")
            }
        }
    }
}

extension RangeTests {
    /// One reader handing its events on in parts (a sink for the sessions) whose part is cut
    /// after the budget ran out and before the reader noticed: its last result carries the
    /// whole file's counts and problems, and they stay (a first version of the rule that drops
    /// what ranges read past the budget dropped them too: no records, no invalid-UTF-8 error).
    @Test("one reader's counts and errors stay when a part of it is cut past the budget")
    func budgetCutInOneReadersParts() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("system_logs.log")
        var text = noisyExport(lines: 80_000)
        // An invalid UTF-8 line early in the file.
        let cut = text.index(text.startIndex, offsetBy: 2000)
        let lineEnd = text[cut...].firstIndex(of: "\n")!
        var bytes = Array(text[..<lineEnd].utf8) + [0xFF, 0xFE]
        bytes += Array(text[lineEnd...].utf8)
        text = ""
        try Data(bytes).write(to: file)
        let registry = try ParserRegistry.builtin()
        for limit in [1500, 2100, 2500] {
            var options = AnalyzeOptions()
            options.budget.maxEventsPerFile = limit
            let analyzer = try Analyzer(registry: registry, options: options)
            analyzer.parallelism = 1
            analyzer.streamsWhileReading = false
            analyzer.streamedBatchEvents = 1  // (a part cut right after the budget ran out)
            analyzer.onSession = { _, _ in }
            let report = analyzer.analyze([file.path])
            let input = try #require(report.inputs.first)
            #expect(input.events == limit, "\(limit)")
            #expect(input.stats.records > limit && input.stats.lines > limit, "\(limit): \(input.stats.records) records, \(input.stats.lines) lines")
            #expect(input.stats.invalidUTF8Lines == 1, "\(limit)")
            #expect(report.errors.contains { $0.description.contains("memory budget") }, "\(limit)")
            #expect(report.errors.contains { $0.description.contains("UTF-8") }, "\(limit): \(report.errors)")
        }
    }
}

extension RangeTests {
    /// A relay `stats` run takes its session's later lines past other sessions' lines: the
    /// budget's cut is still in file order (a review found lines after the named one kept and
    /// earlier ones dropped). For every budget, the lines kept are those of the file cut just
    /// before the line the error names.
    @Test("the budget keeps the lines before the first line left out when relay stats runs interleave")
    func budgetWithInterleavedRuns() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var entries: [String] = []
        var ts: Int64 = 1_773_306_904_673_211
        func entry(_ session: String, _ event: String, _ message: String, _ extra: [String] = []) {
            ts += 1_000_000
            let n = entries.count + 1
            entries.append((["__CURSOR=s=4f1d0c6e2b8a4e55a0c3d9b7e1f2a3b4;i=\(n);b=9b2e6c1d4f3a4b5c8d7e6f5a4b3c2d1e;m=\(n);t=\(ts);x=1",
                             "__REALTIME_TIMESTAMP=\(ts)", "__MONOTONIC_TIMESTAMP=\(1_000_000_000 + n * 1000)",
                             "_BOOT_ID=9b2e6c1d4f3a4b5c8d7e6f5a4b3c2d1e", "_PID=811", "_HOSTNAME=relay1", "_TRANSPORT=journal",
                             "_SYSTEMD_UNIT=broadcast-relay.service", "SYSLOG_IDENTIFIER=broadcast-relay", "PRIORITY=6",
                             "RELAY_SESSION=\(session)", "RELAY_EVENT=\(event)"] + extra + ["MESSAGE=session \(session) \(message)"])
                .joined(separator: "\n") + "\n")
        }
        let a = "0b7f3c1e-5d2a-4e8b-9c61-7a2e4f9d1b03", b = "6a1d9e27-3c4b-4f58-8e02-b5d7c9a1e364"
        entry(a, "accepted", "accepted peer=iPhone14,2 room=standup", ["RELAY_PEER=iPhone14,2", "RELAY_ROOM=standup"])
        entry(b, "accepted", "accepted peer=iPad13,4 room=retro", ["RELAY_PEER=iPad13,4", "RELAY_ROOM=retro"])
        for k in 0..<12 {
            for (s, f) in [(a, 10), (b, 15)] {
                entry(s, "stats", "stats frames=\(f) bytes=281461 fps=\(f).0 dropped=\(k % 3)", ["RELAY_FRAMES=\(f)", "RELAY_FPS=\(f).0", "RELAY_DROPPED=\(k % 3)"])
            }
        }
        entry(a, "closed", "closed reason=peer-eof frames=120 duration=12.0s")
        entry(b, "closed", "closed reason=peer-eof frames=180 duration=12.0s")
        let text = entries.joined(separator: "\n")
        let file = dir.appendingPathComponent("relay.export"), cut = dir.appendingPathComponent("cut.export")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let registry = try ParserRegistry.builtin()
        func analyze(_ path: String, limit: Int? = nil) throws -> AnalysisReport {
            var options = AnalyzeOptions()
            if let limit { options.budget.maxEventsPerFile = limit }
            return try Analyzer(registry: registry, options: options).analyze([path])
        }
        /// Each relay session's line numbers.
        func lines(_ r: AnalysisReport) -> [[Int]] {
            r.relaySessions.map { rs in
                var out: [Int] = []
                for e in rs.events { e.forEachTimeAndLine { _, l in out.append(l) } }
                return out.sorted()
            }
        }
        let total = try analyze(file.path).inputs[0].events
        #expect(total == 28)
        let fileLines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for n in 1..<total {
            let r = try analyze(file.path, limit: n)
            #expect(r.inputs[0].events == n && r.errors.count == 1, "\(n): \(r.errors)")
            let named = try #require(r.errors.first?.line)
            try (fileLines[..<(named - 1)].joined(separator: "\n") + "\n").write(to: cut, atomically: true, encoding: .utf8)
            let whole = try analyze(cut.path)
            #expect(whole.inputs[0].events == n, "\(n)")
            #expect(lines(r) == lines(whole), "\(n): line \(named)")
        }
    }
}

extension RangeTests {
    /// One session streaming frames through a big file: each range folds its own frame lines
    /// into a run, and the ranges' runs were kept apart to the session's end, each holding its
    /// lines' times in memory (a column under the megabyte past which it goes to disk): 86 MB
    /// for 512 MB of frames, 279 MB for 2 GB. Joined again as the session is built, as one
    /// reader folds them, the session holds one run.
    @Test("a frame run cut by the ranges is one run in the session, as one reader reads it")
    func frameRunCutByRangesIsJoined() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("system_logs.log")
        var text = "Timestamp                       Thread     Type        Activity             PID    TTL  \n"
        var us = 0
        func line(_ pid: Int, _ proc: String, _ msg: String) {
            us += 1000
            let (s, u) = (us / 1_000_000, us % 1_000_000)
            text += String(format: "2026-03-12 10:%02d:%02d.%06d+0100", s / 60 % 60, s % 60, u)
                + " 0x2f1c4    Default     0x0                  \(pid)    0    \(proc): \(msg)\n"
        }
        for m in ["broadcast started", "Open socket connection", "client stream open completed"] { line(812, "BroadcastExtension", m) }
        let frames = 30_000
        for k in 0..<frames {
            line(812, "BroadcastExtension", "video sample processed successfully")
            if k % 10 == 0 { line(58, "SpringBoard", "(FrontBoard) [com.apple.FrontBoard:Process] Scene lifecycle state did change") }
        }
        line(812, "BroadcastExtension", "Broadcast finished")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let registry = try ParserRegistry.builtin()
        let one = try rangedAnalysis(file.path, registry, threads: 1, perThread: 1, minimum: 1 << 40)
        let many = try rangedAnalysis(file.path, registry, threads: 3, perThread: 16, minimum: 16 * 1024)
        for (name, report) in [("one reader", one), ("ranges", many)] {
            #expect(report.sessions.count == 1, "\(name)")
            let runs = report.sessions.first?.events.filter { $0.code == .frameSent } ?? []
            #expect(runs.count == 1, "\(name): \(runs.map(\.count))")
            #expect(runs.map(\.count).reduce(0, +) == frames, "\(name)")
            #expect(report.sessions.first?.frames == frames, "\(name)")
        }
        #expect(JSONReport.render(many) == JSONReport.render(one))
    }
}

extension RangeTests {
    /// A relay's text (`journalctl -o short-iso-precise`) with `open` sessions open at once, the
    /// first `open` accepted in a burst at its start (a relay restarted), then each session's
    /// `stats` lines interleaved with the others' until it closes and another is accepted.
    func busyRelay(open: Int, lines count: Int, yearless: Bool = false, brokenRuns: Bool = false) -> String {
        var rng = SplitMix(seed: 11)
        var out = ""
        var live: [(id: Int, left: Int)] = []
        var next = 0
        var us = 0
        func line(_ id: Int, _ what: String) {
            us += Int(rng.next() % 400) + 20
            let (s, u) = (us / 1_000_000, us % 1_000_000)
            // (`journalctl -o short-precise`: no year, no zone)
            out += String(format: yearless ? "Mar 11 22:%02d:%02d.%06d relay1 broadcast-relay[811]: session %08x-1b7e-4f0e-9a51-2f1d3c4b5a69 "
                                           : "2026-03-11T22:%02d:%02d.%06d+00:00 relay1 broadcast-relay[811]: session %08x-1b7e-4f0e-9a51-2f1d3c4b5a69 ",
                          s / 60 % 60, s % 60, u, id) + what + "\n"
        }
        for _ in 0..<open {
            line(next, "accepted peer=iPhone14,2 room=r1")
            live.append((next, Int(rng.next() % 60) + 30))
            next += 1
        }
        for _ in 0..<count {
            let k = Int(rng.next() % UInt64(live.count))
            live[k].left -= 1
            if live[k].left > 0 {
                line(live[k].id, "stats frames=10 bytes=281001 fps=10.0 dropped=0")
                // (another line of the session after each: its stats lines never fold)
                if brokenRuns { line(live[k].id, "no frames for 0.4 s") }
            } else {
                line(live[k].id, "closed reason=peer-eof frames=430 duration=43.0s")
                line(next, "accepted peer=iPhone14,2 room=r1")
                live[k] = (next, Int(rng.next() % 60) + 30)
                next += 1
            }
        }
        return out
    }

    /// A relay with thousands of sessions open: a 16 KB sample folds none of its `stats` lines
    /// (each is another session's), but a range does, so they count for an eighth of an event
    /// and the ranges are eight times as big; a burst of accepted sessions at the file's start
    /// keeps small ranges there, not in the whole file. (Cut by its densest sample, a relay
    /// with 5,000 open was read in 870 KB ranges, every line an event of its own in its range,
    /// and two threads took twice the time of one.)
    @Test("a busy relay's stats lines fold in its ranges; a burst sizes only the ranges around it")
    func busyRelayRanges() throws {
        let (dir, _, analyzer, context) = try sampling()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = busyRelay(open: 3000, lines: 40_000)
        let file = dir.appendingPathComponent("relay.log")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let size = UInt64(text.utf8.count)
        let head = try #require(text.data(using: .utf8)?.prefix(64 * 1024))
        let format = try #require(head.withUnsafeBytes { analyzer.detector.detect(head: $0) }?.format)
        let sampled = analyzer.sampled(context, diskPath: file.path, path: "relay.log", size: size, format: format)
        #expect(sampled.relay)
        #expect(sampled.held.count == Analyzer.samples)
        // The first sample is the burst of accepted lines (an event each); the others are
        // nearly all `stats` lines of sessions that do not meet again in 16 KB.
        let raw = context.read(try RangeFileSource(path: file.path, from: size / 2, to: size / 2 + Analyzer.sampleWindow),
                               path: "relay.log", format: format, adapts: false, onRecord: nil).events.count
        let middle = sampled.held[Analyzer.samples / 2]
        #expect(sampled.held[0] > 4 * middle, "\(sampled.held)")
        #expect(middle * 5 < raw && middle * 12 > raw, "\(middle) of \(raw)")
        // Ranges (of 512 events here, the file being small): small while the burst lasts,
        // then as big as the rest's density allows.
        analyzer.minimumStreamedRange = 1024
        analyzer.streamedRangeEvents = 512
        let targets = analyzer.rangeTargets(held: sampled.held, size: size)
        let sizes = zip([0] + targets, targets + [size]).map { $1 - $0 }
        let burst = analyzer.rangeBytes(held: max(sampled.held[0], sampled.held[1]))
        let rest = analyzer.rangeBytes(held: sampled.held.dropFirst(2).max()!)
        #expect(sizes.first == burst, "\(sizes)")
        #expect(rest > 4 * burst)
        #expect(sizes.dropLast().filter { $0 >= rest }.count >= sizes.count / 2, "\(sizes)")
        #expect(sizes.dropLast().allSatisfy { $0 >= burst && $0 <= analyzer.maximumStreamedRange })
        // Several, but far fewer than cut by the densest sample everywhere.
        #expect(targets.count >= 4 && targets.count + 1 < Int(size / burst) / 3, "\(targets.count + 1) ranges")
        #expect(targets == targets.sorted() && Set(targets).count == targets.count && (targets.last ?? size) < size)
        // None bigger than asked (the threads' share of the file).
        let capped = analyzer.rangeTargets(held: sampled.held, size: size, most: size / 64)
        #expect(capped.count >= 63 && zip([0] + capped, capped).allSatisfy { $1 - $0 <= size / 64 }, "\(capped.count)")
        // Too small to sample: no cuts (the equal ones are used).
        #expect(analyzer.rangeTargets(held: [5, 5], size: 1000).isEmpty)
    }

    /// A relay's year-less text is held with the bundle's lines (its times need the bundle), so
    /// its `stats` lines fold only within a range: with thousands of sessions open a range held
    /// a line or two of each, every range began a piece of every session's run, and the pieces
    /// were joined on one thread (two threads: 2.0 s for 64 MB, one: 1.5 s). The samples tell
    /// how many sessions are open (how seldom two lines of a sample are one session's), and
    /// such a file is read by one reader; with few open, or with a year, in ranges.
    @Test("a year-less relay with thousands of sessions open is read by one reader, with few open in ranges")
    func yearlessBusyRelayReadWhole() throws {
        let (dir, registry, analyzer, context) = try sampling()
        defer { try? FileManager.default.removeItem(at: dir) }
        // (and with a line of the session between its stats lines, so that no run folds two:
        // the estimate counts a session's lines in a sample, not its runs' lines)
        for (open, yearless, broken, whole) in [(3000, true, false, true), (40, true, false, false), (3000, false, false, false),
                                                (40, true, true, false)] {
            let text = busyRelay(open: open, lines: 40_000, yearless: yearless, brokenRuns: broken)
            let file = dir.appendingPathComponent("relay-\(open)-\(yearless)-\(broken).log")
            try text.write(to: file, atomically: true, encoding: .utf8)
            let size = UInt64(text.utf8.count)
            let head = try #require(text.data(using: .utf8)?.prefix(64 * 1024))
            let format = try #require(head.withUnsafeBytes { analyzer.detector.detect(head: $0) }?.format)
            let sampled = analyzer.sampled(context, diskPath: file.path, path: file.lastPathComponent, size: size, format: format)
            #expect(sampled.relay)
            if yearless {
                // (broken, about half: a line of the session between every two)
                #expect(2 * sampled.heldStatsLines > (broken ? 4 * sampled.lines / 5 : sampled.lines),
                        "\(sampled.heldStatsLines) of \(sampled.lines)")
                // the estimate within a factor of two (a sample holds ~100 lines)
                let estimate = try #require(sampled.openRelaySessions)
                #expect(estimate > open / 2 && estimate < open * 2, "\(estimate) open, \(open) made")
            } else {
                #expect(sampled.heldStatsLines == 0 && sampled.openRelaySessions == nil)
            }
            #expect(analyzer.readsWhole(sampled) == whole, "\(open) open, year-less \(yearless), broken runs \(broken)")
            // The whole analysis: read so, and the same report as one reader's.
            func run(threads: Int) throws -> (String, [String]) {
                let a = try Analyzer(registry: registry)
                a.parallelThreshold = 0
                a.parallelism = threads
                a.minimumRange = 4096
                a.onSession = { _, _ in }
                let report = a.analyze([file.path])
                return (JSONReport.render(report), a.lastReadByOneReader)
            }
            let (ranged, oneReader) = try run(threads: 2)
            #expect(oneReader == (whole ? [file.path] : []))
            #expect(try run(threads: 1).0 == ranged)
        }
    }

    /// A big relay text streamed while read: the samples show relay lines, so the attempt gives
    /// up before any range is read or any batch taken (it gave up at its first batch, after the
    /// ranges in flight were read), and the report is the whole read's.
    @Test("streaming a relay log gives up at the samples, before reading")
    func relayStreamingGivesUpAtTheSamples() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = busyRelay(open: 500, lines: 12_000)
        let file = dir.appendingPathComponent("relay.log")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let registry = try ParserRegistry.builtin()
        func run(streams: Bool) throws -> (report: String, starts: Int, mode: Analyzer.ReadMode) {
            let analyzer = try Analyzer(registry: registry)
            analyzer.parallelThreshold = 0
            analyzer.parallelism = 2
            analyzer.minimumRange = 4096
            analyzer.minimumStreamedRange = 4096
            analyzer.streamsWhileReading = streams
            var starts = 0
            analyzer.willStreamSessions = { _ in starts += 1 }
            analyzer.onSession = { _, _ in }
            let report = analyzer.analyze([file.path])
            return (TextReport(color: false).render(report), starts, analyzer.lastReadMode)
        }
        let attempt = try run(streams: true)
        let whole = try run(streams: false)
        #expect(attempt.mode == .readAgain(StreamedRead.relayLines))
        #expect(whole.mode == .whole)
        #expect(attempt.starts == whole.starts, "the attempt took no batch")
        #expect(attempt.report == whole.report)
        #expect(attempt.report.contains("orphan-relay-session"))
    }
}

extension Analyzer {
    /// One range size for a whole file from its densest sample (the rule before a file was cut
    /// by `rangeTargets`; what the older range test states).
    func streamedRange(_ context: ReadContext, diskPath: String, path: String, size: UInt64, format: LogFormat) -> UInt64 {
        rangeBytes(held: sampled(context, diskPath: diskPath, path: path, size: size, format: format).held.max() ?? 0)
    }
}

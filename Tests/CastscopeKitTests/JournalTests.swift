import Foundation
import Testing

@testable import CastscopeKit

let journalRemote = "/lib/systemd/systemd-journal-remote"

/// Builds a real journal file from export text with systemd-journal-remote.
func makeJournal(_ export: Data, at path: URL) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: journalRemote)
    p.arguments = ["--output=" + path.path, "-"]
    var env = ProcessInfo.processInfo.environment
    env["SYSTEMD_JOURNAL_COMPACT"] = "0"
    p.environment = env
    let input = Pipe()
    p.standardInput = input
    p.standardError = FileHandle.nullDevice
    try p.run()
    input.fileHandleForWriting.write(export)
    try input.fileHandleForWriting.close()
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
}

let relayJournal = packageRoot.appendingPathComponent("samples/relay/relay.journal")
let relayExport = packageRoot.appendingPathComponent("samples/relay/relay.export")

@Suite("journald: real journal files through sd-journal",
       .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote), "needs systemd-journal-remote (make test installs it)"))
struct JournalTests {
    @Test("samples/relay/relay.journal (built by make from relay.export) reads the same as the export text")
    func journalEqualsExport() throws {
        #expect(FileManager.default.fileExists(atPath: relayJournal.path), "run `make journals` (make test does)")
        let j = try #require(try castscope(["analyze", "--json", relayJournal.path]).json)
        let e = try #require(try castscope(["analyze", "--json", relayExport.path]).json)
        #expect((j["inputs"] as? [[String: Any]])?.first?["format"] as? String == "journal")
        #expect((j["inputs"] as? [[String: Any]])?.first?["records"] as? Int == 117)
        let js = try #require(j["relaySessions"] as? [[String: Any]])
        let es = try #require(e["relaySessions"] as? [[String: Any]])
        #expect(js.count == 5)
        func strip(_ a: [[String: Any]]) -> [NSDictionary] { a.map { var d = $0; d["source"] = nil; return NSDictionary(dictionary: d) } }
        #expect(strip(js) == strip(es))
    }

    @Test("reopening the file at the cursor every few entries (which bounds memory on long files) reads the same entries")
    func reopeningReadsTheSame() throws {
        let registry = try ParserRegistry.builtin()
        let format = try #require(registry.format(named: "journal-export"))
        for matches in [[], ["RELAY_EVENT=accepted", "RELAY_EVENT=closed"]] {
            func read(every: Int) -> ([String], JournalReader.Result) {
                var reader = JournalReader(format: format, filter: JournalFilter(matches: matches))
                reader.reopenEvery = every
                var out: [String] = []
                let result = reader.read(path: relayJournal.path) { rec in
                    out.append("\(rec.line) \(rec.time.map { "\($0)" } ?? "-") \(rec.string(.message) ?? "")")
                }
                return (out, result)
            }
            let (whole, r0) = read(every: 1 << 30)
            #expect(r0.error == nil)
            #expect(whole.count == (matches.isEmpty ? 117 : 10))
            for every in [1, 2, 7] {
                let (pieces, r) = read(every: every)
                #expect(r.error == nil, "every \(every)")
                #expect(pieces == whole, "every \(every), \(matches)")
                #expect(r.read == r0.read && r.stats.records == r0.stats.records && r.stats.lines == r0.stats.lines)
            }
        }
    }

    @Test("journalctl filters: --unit, --identifier, --match give the same entries from the journal file and the export")
    func filters() throws {
        for args in [["--unit", "broadcast-relay"], ["-t", "broadcast-relay"], ["--match", "RELAY_SESSION=5c8e2d71-9a0b-4c3d-b6e4-f7a8b9c0d1e2"],
                     ["--match", "RELAY_EVENT=accepted", "--match", "RELAY_EVENT=closed"], ["--unit", "other.service"]]
        {
            let r = try #require(try castscope(["analyze", "--json"] + args + [relayJournal.path, relayExport.path]).json)
            let inputs = try #require(r["inputs"] as? [[String: Any]])
            let counts = inputs.map { $0["events"] as? Int ?? -1 }
            #expect(counts[0] == counts[1], "\(args): \(counts)")
            let expected = ["--unit broadcast-relay": 117, "-t broadcast-relay": 117,
                            "--match RELAY_SESSION=5c8e2d71-9a0b-4c3d-b6e4-f7a8b9c0d1e2": 43,
                            "--match RELAY_EVENT=accepted --match RELAY_EVENT=closed": 10, "--unit other.service": 0]
            #expect(counts[0] == expected[args.joined(separator: " ")], "\(args)")
        }
    }

    @Test("a journal inside a tar.gz is streamed to a private temporary file, read, and removed")
    func journalInArchive() throws {
        let tmp = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let bundle = tmp.appendingPathComponent("bundle.tgz")
        try Data(makeArchive(.tarGz, [("relay/system@0001.journal", Array(try Data(contentsOf: relayJournal)))])).write(to: bundle)
        let scratch = tmp.appendingPathComponent("scratch")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let r = try castscope(["analyze", "--json", bundle.path], env: ["TMPDIR": scratch.path])
        #expect(r.status == 0, "\(r.stderr)")
        let input = try #require((r.json?["inputs"] as? [[String: Any]])?.first)
        #expect(input["path"] as? String == bundle.path + "!relay/system@0001.journal")
        #expect(input["records"] as? Int == 117)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty, "temporary files removed")
    }

    @Test("a truncated or damaged journal is reported with what the header promised; the rest is analyzed")
    func damagedJournals() throws {
        let tmp = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let good = try Data(contentsOf: relayJournal)
        try good.prefix(40_000).write(to: tmp.appendingPathComponent("a-truncated.journal"))
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt"),
                                         to: tmp.appendingPathComponent("b-device.log"))
        let r = try castscope(["analyze", "--json", tmp.path])
        #expect(r.status == 1)
        #expect(r.stderr == "castscope: error: \(tmp.path)/a-truncated.journal: the file is cut short: its header says \(good.count) bytes, it has 40000 (a copy or download that stopped part way?); no entry lies whole before the cut; the header promised 117 entries, 0 were read\n")
        #expect((r.json?["sessions"] as? [[String: Any]])?.count == 1)

        // Damage the entry objects near the tail until sd-journal loses one: it must be said.
        var bytes = [UInt8](good)
        let tail = (0..<8).reduce(0) { $0 | Int(bytes[136 + $1]) << (8 * $1) }
        var reported = false
        for offset in stride(from: tail - 60_000, to: tail, by: 4_000) {
            var damaged = bytes
            for i in offset..<(offset + 256) { damaged[i] = 0xAA }
            let path = tmp.appendingPathComponent("c-damaged.journal")
            try Data(damaged).write(to: path)
            let d = try castscope(["analyze", "--json", path.path])
            #expect(d.status == 0 || d.status == 1, "no crash at offset \(offset)")
            if d.stderr.contains("journal file damaged: the header promised 117 entries,") { reported = true; break }
        }
        bytes = []
        #expect(reported)
    }

    /// A journal copied or downloaded part way: sd-journal refuses a file shorter than its
    /// header says, and journalctl shows "No data available". journald writes an entry after
    /// the data it points to, so the entries before the cut are whole: they are read.
    @Test("a journal file cut short among its entries: those before the cut are read, in order, and the cut is said with the count")
    func cutAmongEntries() throws {
        let tmp = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: tmp) }
        let good = try Data(contentsOf: relayJournal)
        let bytes = [UInt8](good)
        // The header's tail object (byte 136): the entries lie in the last ~70 KB before it.
        let tail = (0..<8).reduce(0) { $0 | Int(bytes[136 + $1]) << (8 * $1) }
        let cut = tmp.appendingPathComponent("relay.journal")
        try good.prefix(tail - 30_000).write(to: cut)
        let whole = try castscope(["show", relayJournal.path])
        let part = try castscope(["show", cut.path])
        #expect(part.status == 1, "\(part.stderr)")
        #expect(part.stderr.contains("relay.journal: the file is cut short: its header says \(good.count) bytes, it has \(tail - 30_000)"), "\(part.stderr)")
        #expect(part.stderr.contains("the entries before the cut were read"), "\(part.stderr)")
        let partLines = part.stdout.split(separator: "\n"), wholeLines = whole.stdout.split(separator: "\n")
        // Some entries read, not all, and they are the whole file's first ones.
        #expect(partLines.count > 10 && partLines.count < wholeLines.count, "\(partLines.count) of \(wholeLines.count)")
        #expect(Array(wholeLines.prefix(partLines.count)) == partLines)
        // analyze: the records read are counted in the message, the relay sessions of those
        // entries are there, and the exit code is 1 (read, with a damaged input).
        let r = try castscope(["analyze", "--json", cut.path])
        #expect(r.status == 1, "\(r.stderr)")
        let input = try #require((r.json?["inputs"] as? [[String: Any]])?.first)
        let records = try #require(input["records"] as? Int)
        #expect(records == partLines.count - 1, "\(input)")
        // (entries, of which those with a message are records)
        let said = r.stderr.components(separatedBy: "; the header promised 117 entries, ").last?.split(separator: " ").first.flatMap { Int($0) }
        #expect(said.map { $0 >= records && $0 < 117 } == true, "\(r.stderr)")
        #expect(((r.json?["relaySessions"] as? [[String: Any]])?.count ?? 0) > 0)
        // The input is left as it was (the made-up length is a private copy's).
        #expect(try Data(contentsOf: cut) == good.prefix(tail - 30_000))
    }
}

@Suite("one timeline across phone and relay")
struct JoinTests {
    @Test("samples/: relay sessions joined to device sessions, the clock offset estimated with its bound, orphans named")
    func samplesJoin() throws {
        let r = try castscope(["analyze", "--json", "samples/"])
        let json = try #require(r.json)
        let clock = try #require(json["clock"] as? [String: Any])
        let offset = try #require(clock["offsetSeconds"] as? Double)
        // The samples' relay clock runs 2.350 s ahead (plus 2–4 ms of network latency).
        #expect(offset > 2.35 && offset < 2.40, "\(offset)")
        let bound = try #require(clock["uncertaintySeconds"] as? Double)
        #expect(bound > 0 && bound < 0.5)
        #expect(clock["forced"] as? Bool == false)
        let sessions = try #require(json["sessions"] as? [[String: Any]])
        func relayID(_ pid: Int) -> String? {
            (sessions.first(where: { $0["pid"] as? Int == pid })?["relay"] as? [String: Any])?["id"] as? String
        }
        #expect(relayID(812) == "0b7f3c1e-5d2a-4e8b-9c61-7a2e4f9d1b03")
        #expect(relayID(915) == "6a1d9e27-3c4b-4f58-8e02-b5d7c9a1e364")
        #expect(relayID(1533) == "5c8e2d71-9a0b-4c3d-b6e4-f7a8b9c0d1e2")
        #expect(relayID(2044) == "7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69")
        let orphans = try #require(json["orphans"] as? [String: Any])
        #expect(orphans["relaySessions"] as? [String] == ["e93b0a4f-72c1-4d6e-a8f5-1c2b3d4e5f60"])
        let orphanDevice = try #require(orphans["deviceSessions"] as? [String])
        #expect(orphanDevice.count == 1)
        #expect(sessions.first(where: { $0["id"] as? String == orphanDevice.first })?["pid"] as? Int == 2101)
        // The relay's frames are the frame series of the Sendbird session, which logs none.
        let sendbird = try #require(sessions.first(where: { $0["pid"] as? Int == 1533 }))
        let frames = try #require(sendbird["frames"] as? [String: Any])
        #expect(frames["count"] as? Int == 0)
        #expect(frames["seriesSource"] as? String == "relay")
        #expect((frames["series"] as? [[String: Any]])?.count == 41)
        let terminal = try castscope(["analyze", "samples/"])
        #expect(terminal.stdout.contains("clock: the relay's clock is "))
        #expect(terminal.stdout.contains("relay lines are shown on the device's clock"))
    }

    @Test func forcedClockOffset() throws {
        let r = try castscope(["analyze", "--json", "--clock-offset", "2.35", "samples/sendbird-call-ended", "samples/relay"])
        let clock = try #require(r.json?["clock"] as? [String: Any])
        #expect(clock["forced"] as? Bool == true)
        #expect(clock["offsetSeconds"] as? Double == 2.35)
        let s = try #require((r.json?["sessions"] as? [[String: Any]])?.first)
        #expect((s["relay"] as? [String: Any])?["id"] as? String == "5c8e2d71-9a0b-4c3d-b6e4-f7a8b9c0d1e2")
    }

    @Test("the estimator ignores pairs that disagree (a relay that closed on a timeout)")
    func estimatorIsRobust() {
        func ev(_ kind: String, _ t: Int64, _ attrs: [(String, String)] = []) -> Event {
            Event(kind: kind, sdk: "x", side: .relay, time: t, process: nil, pid: nil, message: kind, attrs: attrs,
                  source: SourceRef(path: "r", line: Int(t / 1000)), order: Int(t / 1000), parsedTime: nil, fileIndex: 0)
        }
        var device: [Session] = []
        var events: [Event] = []
        for (k, start) in [Int64(0), 100_000_000, 200_000_000].enumerated() {
            var s = Session(id: "S\(k + 1)", sdk: "jitsi")
            s.start = start
            s.connectedAt = start + 10_000
            s.end = start + 30_000_000
            s.events = [Event(kind: "socket.connected", sdk: "x", side: .extension, time: start + 10_000, process: nil, pid: 1,
                              message: "c", attrs: [], source: SourceRef(path: "d", line: k), order: k, parsedTime: nil, fileIndex: 0)]
            device.append(s)
            let id = [("session", "r\(k)")]
            events.append(ev("relay.accepted", start + 10_000 + 5_000_000 + Int64(k) * 1_000, id))
            // The last one closes on a 20 s timeout: its end pair must not move the estimate.
            events.append(ev("relay.closed", start + 30_000_000 + 5_000_000 + (k == 2 ? 20_000_000 : 2_000), id))
        }
        let joiner = RelayJoiner()
        var relay = joiner.group(events)
        let c = joiner.estimate(device, relay)
        #expect(c?.offset == 5_002_000)  // median of 5.000, 5.001, 5.002 and the two agreeing end pairs 5.002
        #expect(c?.pairs == 5)
        joiner.join(&device, &relay, offset: c!.offset)
        #expect(relay.map(\.deviceSession) == ["S1", "S2", "S3"])
    }
}

/// A big journal file is read as stretches on parallel threads (`JournalCut`): the report must
/// be the one a single reader gives, and a stretch that meets damage sends the file back to one
/// reader, which words the damage as before.
@Suite("journald: a big journal read in stretches",
       .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote), "needs systemd-journal-remote (make test installs it)"))
struct JournalStretchTests {
    /// relay.export twenty times over, each copy an hour later with its own session ids.
    static func longJournal(in dir: URL) throws -> URL {
        let export = try String(contentsOf: relayExport, encoding: .utf8)
        let ids = Set(export.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("RELAY_SESSION=") ? String(line.dropFirst("RELAY_SESSION=".count)) : nil
        })
        #expect(ids.count == 5)
        var out = ""
        for copy in 0..<20 {
            var text = export
            for id in ids { text = text.replacingOccurrences(of: id, with: String(format: "%02x", copy) + id.dropFirst(2)) }
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
                guard line.hasPrefix("__REALTIME_TIMESTAMP="), let t = Int64(line.dropFirst("__REALTIME_TIMESTAMP=".count)) else {
                    return String(line)
                }
                return "__REALTIME_TIMESTAMP=\(t + Int64(copy) * 3_600_000_000)"
            }
            out += lines.joined(separator: "\n")
            if !out.hasSuffix("\n\n") { out += out.hasSuffix("\n") ? "\n" : "\n\n" }
        }
        let path = dir.appendingPathComponent("long.journal")
        try makeJournal(Data(out.utf8), at: path)
        return path
    }

    static func reports(_ paths: [String], stretched: Bool) throws -> (text: String, json: [UInt8], analyzer: Analyzer) {
        var options = AnalyzeOptions()
        options.now = 1_773_306_000_000_000
        let analyzer = try Analyzer(registry: try ParserRegistry.builtin(), options: options)
        if stretched {
            analyzer.parallelism = 2
            analyzer.parallelThreshold = 0
            analyzer.minimumRange = 4096
            analyzer.rangesPerThread = 4
        } else {
            analyzer.parallelism = 1
        }
        let r = analyzer.analyze(paths)
        let provenance = Provenance(commandLine: ["castscope", "analyze"], generatedAt: 1_773_306_000_000_000)
        return (TextReport(color: false).render(r), JSONReport.renderBytes(r, provenance: provenance), analyzer)
    }

    @Test("the same text and JSON report as one reader; damage sends the file back to one reader")
    func stretchesReadTheSame() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let long = try Self.longJournal(in: dir)
        // With the export read first, a stats run cut by a stretch's bound shows: unless it is
        // joined again, its second half is not found in the export and is counted twice.
        for path in [[relayJournal.path], [long.path], [relayExport.path, relayJournal.path]] {
            let one = try Self.reports(path, stretched: false)
            let parts = try Self.reports(path, stretched: true)
            #expect(one.analyzer.journalsInStretches.read == 0)
            #expect(parts.analyzer.journalsInStretches.read == 1, "\(path) was cut")
            let sameText = parts.text == one.text
            let sameJSON = parts.json == one.json
            #expect(sameText && sameJSON, "\(path)")
        }
        let whole = try Self.reports([long.path], stretched: false)
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(whole.json)) as? [String: Any])
        #expect((doc["relaySessions"] as? [Any])?.count == 100)

        // Damage near the tail, then near the head: whatever one reader says, the cut read says.
        var bytes = [UInt8](try Data(contentsOf: long))
        let tail = (0..<8).reduce(0) { $0 | Int(bytes[136 + $1]) << (8 * $1) }
        var readAgain = 0
        for offset in [tail - 9_000, tail - 30_000, 300_000, tail / 2] where offset > 4096 {
            var damaged = bytes
            for i in offset..<(offset + 256) { damaged[i] = 0xAA }
            let path = dir.appendingPathComponent("damaged-\(offset).journal")
            try Data(damaged).write(to: path)
            let one = try Self.reports([path.path], stretched: false)
            let parts = try Self.reports([path.path], stretched: true)
            readAgain += parts.analyzer.journalsInStretches.readAgain
            let sameText = parts.text == one.text
            let sameJSON = parts.json == one.json
            #expect(sameText && sameJSON, "damaged at \(offset)")
        }
        bytes = []
        #expect(readAgain > 0, "some damage was met by a stretch")
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// A file that is several pastes in different layouts (an Xcode console, then `journalctl`
/// output; a `log show` export with the relay's journal appended) is read as those pastes: the
/// lines of another format than the head's are set aside and read in theirs (`ForeignLines`).
@Suite("Lines of another format in one file")
struct ForeignSegmentTests {
    let registry = try! ParserRegistry.builtin()

    /// The text files of `samples/` and the real pastes, without the `# source:` notes the
    /// stored pastes begin with (a paste's own first lines are what a ticket holds).
    func pastes() throws -> [(name: String, bytes: [UInt8])] {
        var out: [(String, [UInt8])] = []
        let samples = packageRoot.appendingPathComponent("samples")
        let fm = FileManager.default
        var files: [URL] = []
        for dir in try fm.contentsOfDirectory(atPath: samples.path) {
            for f in try fm.contentsOfDirectory(atPath: samples.appendingPathComponent(dir).path)
            where f.hasSuffix(".txt") || f.hasSuffix(".ndjson") {
                files.append(samples.appendingPathComponent(dir).appendingPathComponent(f))
            }
        }
        for f in try fm.contentsOfDirectory(atPath: realLogs.path) { files.append(realLogs.appendingPathComponent(f)) }
        for url in files.sorted(by: { $0.path < $1.path }) {
            var lines = String(decoding: try Data(contentsOf: url), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            while let first = lines.first, first.hasPrefix("# ") { lines.removeFirst() }
            var text = lines.joined(separator: "\n")
            if !text.hasSuffix("\n") { text += "\n" }
            out.append((url.lastPathComponent, Array(text.utf8)))
        }
        return out
    }

    func analyze(_ paths: [String], options: AnalyzeOptions = AnalyzeOptions()) throws -> AnalysisReport {
        try Analyzer(registry: registry, options: options).analyze(paths)
    }

    /// What must not depend on whether two pastes came as two files or as one.
    func gist(_ r: AnalysisReport) throws -> String {
        let json = try JSONSerialization.jsonObject(with: Data(JSONReport.render(r).utf8)) as! [String: Any]
        let summary = json["summary"] as! [String: Any]
        let recognized = r.inputs.reduce(0) { $0 + $1.events }
        let outcomes = (summary["outcomes"] as? [String: Int] ?? [:]).sorted { $0.key < $1.key }
        let findings = (summary["findings"] as? [String: Int] ?? [:]).sorted { $0.key < $1.key }
        return "\(recognized) recognized, \(r.sessionCount) sessions, \(outcomes), \(findings)"
    }

    @Test("two pastes in one file read as the two files: lines, sessions, outcomes, findings")
    func twoPastesReadAsTwoFiles() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Left out, for what they begin or are made of, not their layout:
        // - pastes castscope reads as plain text (no layout: nothing tells their lines apart);
        // - a paste that begins with print() lines before its first timed line (HaishinKit's,
        //   jitsi-meet-sdk-samples#147): after a `log show` export they continue its last message,
        //   as any of its multi-line messages' lines do;
        // - a paste whose records lost their line breaks and whose first one lost its time;
        // - HaishinKit's layout, which also reads Xcode's NSLog lines (one format, not two).
        let leftOut = ["haishinkit-1791-broadcast-ext-rtmp-yyyy-dd-mm-timestamps.txt",
                       "jitsi-sdk-samples-147-app-group-not-entitled.txt",
                       "rnwebrtc-1106-econnrefused-collapsed-onto-one-line.txt"]
        var read: [(name: String, bytes: [UInt8], format: String)] = []
        for p in try pastes() where !leftOut.contains(p.name) {
            let url = dir.appendingPathComponent("one")
            try Data(p.bytes).write(to: url)
            let r = try analyze([url.path])
            guard let format = r.inputs.first?.format, format != "plain", r.inputs[0].events > 0 else { continue }
            read.append((p.name, p.bytes, format))
        }
        #expect(read.count >= 10)
        var pairs = 0
        for a in read {
            for b in read where a.format != b.format {
                let (ua, ub, uab) = (dir.appendingPathComponent("a"), dir.appendingPathComponent("b"), dir.appendingPathComponent("ab"))
                try Data(a.bytes).write(to: ua)
                try Data(b.bytes).write(to: ub)
                try Data(a.bytes + b.bytes).write(to: uab)
                let apart = try gist(analyze([ua.path, ub.path]))
                let together = try analyze([uab.path])
                #expect(try gist(together) == apart, "\(a.name) then \(b.name)")
                #expect(together.fileCount == 1)
                pairs += 1
            }
        }
        #expect(pairs >= 70)
    }

    /// A file of `samples/`, as text.
    func sample(_ path: String) throws -> String {
        try String(contentsOf: packageRoot.appendingPathComponent("samples/" + path), encoding: .utf8)
    }

    /// The relay sample's journal as `journalctl -o short-iso` prints it.
    func relayShortISO() throws -> String {
        let journal = packageRoot.appendingPathComponent("samples/relay/relay.journal").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/journalctl")
        p.arguments = ["--file", journal, "-o", "short-iso", "--no-pager", "--utc"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test("a log show export with the relay's journal pasted after it: paired, every line cited where it is")
    func relayAfterDeviceLog() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let device = try sample("healthy-jitsi/sysdiagnose-log-show.txt")
        let relay = try relayShortISO()
        #expect(relay.contains("broadcast-relay"))
        let (d, r, both) = (dir.appendingPathComponent("device.txt"), dir.appendingPathComponent("relay.txt"), dir.appendingPathComponent("ticket.txt"))
        try device.write(to: d, atomically: true, encoding: .utf8)
        try relay.write(to: r, atomically: true, encoding: .utf8)
        try (device + relay).write(to: both, atomically: true, encoding: .utf8)
        let apart = try analyze([d.path, r.path])
        let together = try analyze([both.path])
        #expect(apart.clock != nil)
        #expect(together.clock?.offset == apart.clock?.offset)
        #expect(together.orphanDeviceSessions == apart.orphanDeviceSessions)
        #expect(try gist(together) == gist(apart))
        #expect(together.inputs.map(\.format) == ["apple-default", "journal-short-iso"])
        #expect(together.inputs[1].segmentOf == 0)
        let deviceLines = device.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        #expect(together.inputs[0].notes.contains { $0.hasPrefix("lines \(deviceLines + 1)–") })
        // Every line a report cites holds what it says, in the one file.
        let lines = (device + relay).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let json = try JSONSerialization.jsonObject(with: Data(JSONReport.render(together).utf8)) as! [String: Any]
        var cited = 0
        for s in json["sessions"] as! [[String: Any]] {
            for row in s["timeline"] as! [[String: Any]] {
                // (a folded run's row: its first line holds the text before ` ×`; relay stats
                // rows are castscope's own words)
                guard let source = row["source"] as? String, let message = row["message"] as? String,
                    let n = Int(source.split(separator: ":").last!), !message.hasPrefix("relay stats")
                else { continue }
                #expect(source.hasSuffix("ticket.txt:\(n)"))
                let text = message.components(separatedBy: " ×").first!
                #expect(lines[n - 1].contains(text.prefix(40)), "\(source): \(message)")
                cited += 1
            }
        }
        for rs in json["relaySessions"] as! [[String: Any]] {
            let source = rs["source"] as! String
            let n = Int(source.split(separator: ":").last!)!
            #expect(lines[n - 1].contains(rs["id"] as! String))
            cited += 1
        }
        #expect(cited > 12)
    }

    @Test("a file's segment is a row of its own in castscope_inputs (ids apart, one file's path)")
    func segmentRowsApart() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let device = try sample("healthy-jitsi/sysdiagnose-log-show.txt")
        let url = dir.appendingPathComponent("ticket.txt")
        try (device + relayShortISO()).write(to: url, atomically: true, encoding: .utf8)
        let r = try analyze([url.path])
        #expect(r.inputs.count == 2)
        var b = ClickHouseRowBuffer()
        ClickHouseRows(bundleId: "b", version: 1).inputs(r, into: &b)
        let rows = String(decoding: b.bytes, as: UTF8.self).split(separator: "\n").map {
            try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        #expect(rows.count == 2)
        #expect(Set(rows.map { $0["InputId"] as! String }).count == 2)
        #expect(Set(rows.map { $0["Path"] as! String }) == [url.path])
        #expect(rows.map { $0["Format"] as! String } == ["apple-default", "journal-short-iso"])
    }

    @Test("a `log show --style json` array with text pasted after it")
    func textAfterJSONArray() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ndjson = try sample("sendbird-call-ended/log-show.ndjson")
        let objects = ndjson.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["eventMessage"] != nil }
        let array = String(decoding: try JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted]), as: UTF8.self) + "\n"
        let relay = try relayShortISO()
        let (a, b, ab) = (dir.appendingPathComponent("a.json"), dir.appendingPathComponent("b.txt"), dir.appendingPathComponent("ab.txt"))
        try array.write(to: a, atomically: true, encoding: .utf8)
        try relay.write(to: b, atomically: true, encoding: .utf8)
        try (array + relay).write(to: ab, atomically: true, encoding: .utf8)
        let together = try analyze([ab.path])
        #expect(together.inputs.map(\.format) == ["apple-json", "journal-short-iso"])
        #expect(try gist(together) == gist(analyze([a.path, b.path])))
    }

    @Test("a format the user names is not second-guessed: the other lines stay unparsed")
    func namedFormatKeepsItsLines() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let xcode = try sample("stopped-10001/host-app-xcode.txt")
        let relay = try relayShortISO()
        let url = dir.appendingPathComponent("ticket.txt")
        try (relay + xcode).write(to: url, atomically: true, encoding: .utf8)
        var options = AnalyzeOptions()
        options.forcedFormat = "journal-short-iso"
        let named = try analyze([url.path], options: options)
        #expect(named.inputs.count == 1)
        #expect(named.inputs[0].stats.unparsed == 3)
        let found = try analyze([url.path])
        #expect(found.inputs.map(\.format) == ["journal-short-iso", "xcode"])
        #expect(found.inputs[0].stats.unparsed == 0)
        #expect(found.inputs[1].events == 3)
    }

    @Test("an Xcode console's printed `time Tag: text` lines stay its own, not a journalctl --no-hostname segment")
    func printedLinesAreNotANoHostJournal() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("xcode.txt")
        try """
            2026-03-12 10:20:00.514204+0100 BroadcastExtension[915:1a2b] broadcast started
            2026-03-12 10:20:00.524204+0100 BroadcastExtension[915:1a2b] open socket connection
            2026-03-12 10:20:00.534204+0100 BroadcastExtension[915:1a2b] client stream open completed
            2026-03-12T10:20:05.600+01:00 SocketConnection: client stream error occured: Error Domain=NSPOSIXErrorDomain Code=32 "Broken pipe"
            2026-03-12T10:20:05.700+01:00 SocketConnection: client connection did close: Error Domain=NSPOSIXErrorDomain Code=32 "Broken pipe"

            """.write(to: url, atomically: true, encoding: .utf8)
        let report = try analyze([url.path])
        #expect(report.inputs.map(\.format) == ["xcode"])
        #expect(report.sessions.count == 1)
        #expect(report.sessions.first?.outcome == .socketError)
    }

    @Test("read in parallel ranges, the lines of another format are those one reader finds")
    func rangesFindTheSameLines() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let device = try sample("healthy-jitsi/sysdiagnose-log-show.txt")
        let relay = try relayShortISO()
        // Relay pastes in the middle and at the end of a log big enough to be cut in ranges.
        var text = ""
        for i in 0..<400 {
            // (each copy at its own minute: identical lines at one instant fold in an order of their own)
            text += device.replacingOccurrences(of: "2026-03-12 10:15", with: "2026-03-12 \(String(format: "%02d:%02d", 10 + i / 60, i % 60))")
            if i == 150 || i == 399 { text += relay }
        }
        let url = dir.appendingPathComponent("big.txt")
        try text.write(to: url, atomically: true, encoding: .utf8)
        func report(threads: Int) throws -> String {
            let analyzer = try Analyzer(registry: registry)
            analyzer.parallelism = threads
            analyzer.parallelThreshold = 64 * 1024
            analyzer.rangesPerThread = 8
            analyzer.minimumRange = 16 * 1024
            return JSONReport.render(analyzer.analyze([url.path]))
                .replacingOccurrences(of: #""generatedAt": "[^"]*""#, with: "", options: .regularExpression)
        }
        let one = try report(threads: 1)
        #expect(one.contains("\"journal-short-iso\""))
        let two = try report(threads: 2)
        #expect(two == one)
        if two != one, let dump = ProcessInfo.processInfo.environment["CASTSCOPE_TEST_DUMP"] {
            try one.write(toFile: dump + ".1", atomically: true, encoding: .utf8)
            try two.write(toFile: dump + ".2", atomically: true, encoding: .utf8)
        }
    }

    @Test("set-aside lines past the memory bound go to a temporary file and come back with their numbers")
    func spilledLinesComeBack() throws {
        let lines = ForeignLines()
        var expected: [(String, Int)] = []
        var number = 10
        for i in 0..<40_000 {
            // Runs of consecutive lines, with gaps between them.
            number += i % 7 == 0 ? 5 : 1
            let text = "2026-03-12T09:15:04+0000 relay1 broadcast-relay[811]: line \(i) " + String(repeating: "x", count: i % 50)
            text.utf8CString.withUnsafeBytes { lines.append(UnsafeRawBufferPointer(rebasing: $0.dropLast()), number: number) }
            expected.append((text, number))
        }
        #expect(expected.reduce(0) { $0 + $1.0.utf8.count + 1 } > ForeignLines.memoryBytes)
        // Joined after the lines of an earlier range: numbers moved as the file's.
        let joined = ForeignLines()
        joined.append(lines) { $0 + 1000 }
        #expect(joined.lineCount == expected.count)
        #expect(joined.span == (expected.first!.1 + 1000)...(expected.last!.1 + 1000))
        let reader = LineReader(source: joined.source(), path: "t")
        var k = 0
        while let line = try reader.nextLine() {
            #expect(String(decoding: line, as: UTF8.self) == expected[k].0)
            #expect(joined.fileLine(reader.lineNumber) == expected[k].1 + 1000)
            k += 1
        }
        #expect(k == expected.count)
        #expect(joined.described == "\(expected.count) lines between line \(expected.first!.1 + 1000) and line \(expected.last!.1 + 1000)")
    }
}

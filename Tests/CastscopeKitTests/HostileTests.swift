import Foundation
import Testing

@testable import CastscopeKit

/// Issue 12, end to end on the binary: each hostile input lies beside a good log, and the good
/// log's session must still be in the report, with a one-line error naming the bad input and the
/// documented exit code (1: analyzed, some input could not be read). Time and memory of the bomb
/// cases are measured with /usr/bin/time in the README, not asserted here.
@Suite("Hostile input", .serialized)
struct HostileTests {
    static let good = packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt")

    /// A scratch folder holding `good.txt`.
    func scratch() throws -> URL {
        let dir = try temporaryDirectory()
        try FileManager.default.copyItem(at: Self.good, to: dir.appendingPathComponent("good.txt"))
        return dir
    }

    /// The good log's session is in the JSON report.
    func expectGoodSession(_ r: RunResult, sourceLocation: SourceLocation = #_sourceLocation) {
        let sessions = r.json?["sessions"] as? [[String: Any]] ?? []
        #expect(sessions.contains { ($0["outcome"] as? String) == "failed-to-connect" }, "good session missing: \(r.stderr)",
                sourceLocation: sourceLocation)
    }

    func errorLines(_ r: RunResult) -> [String] { r.stderr.split(separator: "\n").map(String.init) }

    // 1. A 512-byte tar that libarchive refuses: the reader freed its handle twice (exit 139).
    @Test("a refused tar (zeros with ustar, a wrong checksum; raw, in a .tar.gz, in a zip) is one error, not a crash",
          arguments: ["tar", "tar.gz", "zip"])
    func refusedTar(_ wrapping: String) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        var tar = [UInt8](repeating: 0, count: 512)
        tar.replaceSubrange(257..<262, with: Array("ustar".utf8))
        var checksummed = tar
        checksummed.replaceSubrange(0..<8, with: Array("log.txt\0".utf8))
        checksummed.replaceSubrange(148..<156, with: Array("0001234\0".utf8))  // wrong checksum
        for (name, bytes) in [("zeros", tar), ("checksum", checksummed)] {
            let data: [UInt8]
            switch wrapping {
            case "tar": data = bytes
            case "tar.gz": data = makeArchive(.gz, [("x", bytes)])
            default: data = makeArchive(.zip, [("inner.tar", bytes)])
            }
            try Data(data).write(to: dir.appendingPathComponent("\(name).\(wrapping)"))
        }
        let r = try castscope(["analyze", "--json", dir.path])
        #expect(r.status == 1, "\(r.status) \(r.stderr)")
        expectGoodSession(r)
        let errors = errorLines(r)
        #expect(errors.count == 2, "\(errors)")
        #expect(errors.allSatisfy { $0.hasPrefix("castscope: error: \(dir.path)/") && $0.contains("archive") })
    }

    // 3. A nested zip bomb: 45 KB, 10 levels of 10 copies; the nesting limit alone did not bound it.
    @Test("a nested zip bomb ends at the member budget with one line naming the member; the good file is read")
    func nestedZipBomb() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        var data = Array(String(repeating: "hello\n", count: 10).utf8)
        var name = "x.txt"
        for level in 0..<10 {
            data = makeArchive(.zip, (0..<10).map { ("\($0)_\(name)", data) })
            name = "l\(level).zip"
        }
        try Data(data).write(to: dir.appendingPathComponent("bomb.zip"))
        let r = try castscope(["analyze", "--json", "--max-members", "3000", dir.appendingPathComponent("bomb.zip").path,
                               dir.appendingPathComponent("good.txt").path])
        #expect(r.status == 1)
        expectGoodSession(r)
        let budget = errorLines(r).filter { $0.contains("bundle budget: more than 3000 archive members (--max-members)") }
        #expect(budget.count == 1, "\(r.stderr.suffix(2000))")
        #expect(budget.first?.contains("bomb.zip!") == true)
        // Problems past the limit per input are counted, not printed one by one.
        #expect(errorLines(r).count <= 53)
    }

    @Test("the byte budget stops one member with one line naming it and the offset; the good file is read")
    func byteBudget() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(makeArchive(.gz, [("x", [UInt8](repeating: 0x0A, count: 4 << 20))])).write(to: dir.appendingPathComponent("lines.gz"))
        let bomb = dir.appendingPathComponent("lines.gz").path
        let r = try castscope(["analyze", "--json", "--max-bytes", "1M", bomb, dir.appendingPathComponent("good.txt").path])
        #expect(r.status == 1)
        expectGoodSession(r)
        #expect(errorLines(r) == ["castscope: error: \(bomb): at byte 1048576: bundle budget: more than 1048576 bytes decompressed or streamed (--max-bytes); the rest of this member and of the compressed inputs is not read"])
    }

    // 7. A bomb of valid recognized lines: memory followed the lines (~36 bytes each).
    @Test("a bomb of valid frame lines stops at the per-file budget of recognized lines; the good file is read")
    func validLineBomb() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        var text = ""
        for i in 0..<20_000 {
            text += String(format: "Mar 12 11:%02d:%02d BroadcastExtension[915] <Notice>: video sample processed successfully\n", i / 1800 % 60, i / 30 % 60)
        }
        try Data(makeArchive(.gz, [("x", Array(text.utf8))])).write(to: dir.appendingPathComponent("frames.log.gz"))
        let bomb = dir.appendingPathComponent("frames.log.gz").path
        let r = try castscope(["analyze", "--json", "--max-events", "5000", bomb, dir.appendingPathComponent("good.txt").path])
        #expect(r.status == 1)
        expectGoodSession(r)
        // The first line not analyzed: the run of frame lines keeps its first 5,000.
        #expect(errorLines(r) == ["castscope: error: \(bomb):5001: memory budget: more than 5000 recognized lines in this file (--max-events); the rest of it is not analyzed"])
        // Events made of other lines (JetsamEvent entries pasted as JSON) count against it too.
        let fragments = dir.appendingPathComponent("fragments.txt").path
        let entry = "{\n  \"rpages\" : 1, \"reason\" : \"per-process-limit\", \"pid\" : 1, \"name\" : \"n1\"\n},\n"
        try String(repeating: entry, count: 3000).write(toFile: fragments, atomically: true, encoding: .utf8)
        let f = try castscope(["analyze", "--json", "--threads", "1", "--max-events", "1000", fragments])
        #expect(errorLines(f) == ["castscope: error: \(fragments):3001: memory budget: more than 1000 recognized lines in this file (--max-events); the rest of it is not analyzed"],
                "\(errorLines(f))")
        // Without the budget every line is kept.
        let all = try castscope(["analyze", "--json", bomb])
        #expect(all.status == 0)
        #expect((all.json?["summary"] as? [String: Any])?["events"] as? Int == 20_000)
    }

    @Test("the expansion budget stops a file that expands too much; the next input is still read (in process, small floor)")
    func expansionBudget() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bomb = dir.appendingPathComponent("lines.gz")
        try Data(makeArchive(.gz, [("x", [UInt8](repeating: 0x0A, count: 8 << 20))])).write(to: bomb)
        var walker = BundleWalker(visit: { _, source in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 8)
            defer { buffer.deallocate() }
            while try source.read(into: buffer) > 0 {}
        }, report: { _ in })
        var errors: [String] = []
        walker.report = { errors.append($0.description) }
        walker.budget.ratioFloor = 1 << 20
        walker.budget.maxExpansion = 100
        walker.walk([bomb.path, Self.good.path])
        #expect(errors.count == 1 && errors[0].contains("expansion budget:") && errors[0].contains("more than 100×"), "\(errors)")
        // Inside a folder each file on disk has its own ratio.
        try FileManager.default.copyItem(at: Self.good, to: dir.appendingPathComponent("good.txt"))
        errors = []
        walker.walk([dir.path])
        #expect(errors.count == 1 && errors[0].hasPrefix(bomb.path + ": at byte ") && errors[0].contains("expansion budget:"), "\(errors)")
    }

    // 9. Journal export text: the valid entries after a malformed binary field were dropped.
    @Test("a malformed binary field in export text skips its entry only", arguments: [5, 1 << 40])
    func exportMalformedBinaryField(_ size: Int) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        func entry(_ i: Int) -> [UInt8] {
            Array(("__REALTIME_TIMESTAMP=\(1_773_306_904_000_000 + i * 1_000_000)\n_PID=811\nSYSLOG_IDENTIFIER=broadcast-relay\n"
                + "MESSAGE=session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 stats frames=10 bytes=\(i) fps=10.0 dropped=0\n\n").utf8)
        }
        var data = entry(0)
        data += Array("__REALTIME_TIMESTAMP=1773306905000000\n_PID=811\nBIN\n".utf8)
        data += withUnsafeBytes(of: UInt64(size).littleEndian, Array.init) + Array("abcdefg\nMESSAGE=lost\n\n".utf8)
        for i in 2..<6 { data += entry(i) }
        let path = dir.appendingPathComponent("relay.export").path
        try Data(data).write(to: URL(fileURLWithPath: path))
        let r = try castscope(["analyze", "--json", path, dir.appendingPathComponent("good.txt").path])
        #expect(r.status == 1)
        expectGoodSession(r)
        #expect(errorLines(r) == ["castscope: error: \(path):8: malformed binary field BIN in export entry (entry skipped)"])
        let input = (r.json?["inputs"] as? [[String: Any]])?.first { ($0["path"] as? String) == path }
        #expect(input?["records"] as? Int == 5)
    }

    // Found by the fuzzer (export target): a relay's mean fps of +inf trapped in Fmt.decimal.
    @Test("numbers read from a log that are not finite or too big are written, not trapped on")
    func nonFiniteNumbers() {
        #expect(Fmt.decimal(.infinity, 2) == "inf")
        #expect(Fmt.decimal(-.infinity, 0) == "-inf")
        #expect(Fmt.decimal(.nan, 1) == "nan")
        #expect(Fmt.decimal(1e300, 2) == "1e+300")
        #expect(Fmt.decimal(2.345, 2) == "2.35" || Fmt.decimal(2.345, 2) == "2.34")
        #expect(Fmt.relative(.min).hasPrefix("-"))
        #expect(Fmt.duration(.min).hasPrefix("-"))
        var w = JSONWriter()
        w.number("fps", .infinity)
        #expect(w.text.contains("null"), "\(w.text)")
    }

    // 4. Terminal injection through messages and file names.
    @Test("control characters in messages and file names reach no output raw (text, Markdown, stderr)")
    func controlCharacters() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let hostile = "Timestamp                       (process)[PID]\n"
            + "2026-03-12 11:00:00.000000+0100  localhost BroadcastExtension[2000]: [x:Broadcast] open socket connection\n"
            + "2026-03-12 11:00:01.000000+0100  localhost BroadcastExtension[2000]: [x:Broadcast] client connection did close: "
            + "\u{1B}]0;pwned\u{07}\u{1B}[2J\u{1B}]8;;http://evil\u{1B}\\link\u{1B}]8;;\u{1B}\\\u{1B}P+q544e\u{1B}\\ \r\u{08}\u{9B}\u{202E}end\n"
        try Data(hostile.utf8).write(to: dir.appendingPathComponent("inj.log"))
        // A name with ESC and a newline, holding a binary file (so that it also makes an error line).
        let badName = "bad\u{1B}]0;t\u{07}\nname.log"
        try Data([0x41, 0, 0x42, 0x0A]).write(to: dir.appendingPathComponent(badName))
        for format in [[], ["--markdown"], ["--no-color"]] {
            let r = try castscope(["analyze"] + format + [dir.path])
            #expect(r.status == 1)
            for (what, text) in [("stdout", r.stdout), ("stderr", r.stderr)] {
                let raw = text.unicodeScalars.filter {
                    ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || $0.value == 0x7F || (0x80...0x9F).contains($0.value)
                        || (0x202A...0x202E).contains($0.value)
                }
                #expect(raw.isEmpty, "\(format) \(what) holds raw control characters \(raw.map(\.value))")
            }
            #expect(r.stderr.contains("bad\\x1b]0;t\\x07\\nname.log"), "\(r.stderr)")
            // The error for the bad name stays on one line.
            #expect(errorLines(r).count == 1, "\(r.stderr)")
        }
        // A message's terminal sequences (title, clear, hyperlink) are taken off before it is
        // matched and shown (session 26); the other controls are shown escaped.
        let text = try castscope(["analyze", "--no-color", dir.path]).stdout
        #expect(text.contains("client connection did close: link \\r\\b"), "\(text)")
        #expect(!text.contains("pwned") && !text.contains("evil") && !text.contains("q544e"), "\(text)")
        #expect(text.contains("\\r\\b\\u{9b}\\u{202e}end"))
        // JSON keeps what is left exactly (escaped the JSON way).
        let json = try castscope(["analyze", "--json", dir.path])
        #expect(json.stdout.contains("client connection did close: link"), "\(json.stdout)")
        #expect(json.stdout.contains("client connection did close: link \\r\\u0008\u{9b}\u{202e}end"), "\(json.stdout)")
    }

    @Test("Sanitize: the quick test says a text needs escaping exactly when escaping changes it (8-byte steps, lead bytes at every offset)")
    func sanitizeQuickTestIsExact() {
        // Bytes that matter (controls, DEL, C1 and bidi lead and trail bytes, `–`'s) among plain ones,
        // at random offsets and lengths, so that each falls inside, across and outside 8-byte steps.
        let pieces: [[UInt8]] = [[0x41], [0x20], [0x7E], [0x09], [0x0A], [0x1B], [0x0D], [0x7F], [0xC2, 0x9B], [0xC2, 0xA0],
                                 [0xC2], [0xE2, 0x80, 0xAE], [0xE2, 0x80, 0x93], [0xE2, 0x81, 0xA6], [0xE2, 0x81], [0xE2],
                                 [0xC3, 0x97], Array("plain text ".utf8)]
        var rng = SystemRandomNumberGenerator()
        for round in 0..<20_000 {
            var bytes: [UInt8] = []
            let plain = Int.random(in: 0...40, using: &rng)
            bytes += Array(repeating: 0x61, count: plain)
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                // Mostly harmless pieces: the escaping ones are rarer, as in reports.
                let p = Int.random(in: 0..<100, using: &rng) < 70 ? pieces.last! : pieces.randomElement(using: &rng)!
                bytes += p
                bytes += Array(repeating: 0x62, count: Int.random(in: 0...12, using: &rng))
            }
            for oneLine in [false, true] {
                bytes.withUnsafeBufferPointer { b in
                    var escaped: [UInt8] = []
                    Sanitize.escape(b, oneLine: oneLine, styles: false, into: &escaped)
                    #expect(Sanitize.needsEscaping(b, oneLine: oneLine) == (escaped != bytes), "round \(round): \(bytes)")
                }
            }
        }
    }

    // 6. Non-regular inputs: never dropped silently.
    @Test("a FIFO and bash process substitution are read as streams; a FIFO inside a folder is reported")
    func fifoAndProcessSubstitution() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("stream.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", "cat '\(Self.good.path)' > '\(fifo)'"]
        try writer.run()
        let r = try castscope(["analyze", "--json", fifo])
        writer.waitUntilExit()
        #expect(r.status == 0, "\(r.stderr)")
        expectGoodSession(r)
        // Inside a folder the FIFO would block: it is named and skipped, the good file read.
        let inFolder = try castscope(["analyze", "--json", dir.path])
        #expect(inFolder.status == 1)
        expectGoodSession(inFolder)
        #expect(errorLines(inFolder) == ["castscope: error: \(fifo): a FIFO: not read inside a folder (name it on the command line to read it as a stream), skipped"])
        let binary = packageRoot.appendingPathComponent(".build/debug/castscope").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-c", "'\(binary)' analyze --json <(gzip -c '\(Self.good.path)')"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        expectGoodSession(RunResult(status: p.terminationStatus, stdout: String(decoding: data, as: UTF8.self), stderr: ""))
    }

    // 8. The cursor file: empty or garbled is an error naming it; --cursor-reset starts over.
    @Test("an empty or garbled cursor file is a one-line error naming it; --cursor-reset starts over",
          .enabled(if: FileManager.default.fileExists(atPath: packageRoot.appendingPathComponent("samples/relay/relay.journal").path)))
    func badCursorFile() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journal = packageRoot.appendingPathComponent("samples/relay/relay.journal").path
        let cursor = dir.appendingPathComponent("cursor").path
        for (content, message) in [("", "the cursor file is empty"), ("s=zz;garbage here\n", "not a journal cursor")] {
            try Data(content.utf8).write(to: URL(fileURLWithPath: cursor))
            let r = try castscope(["tail", "--file", journal, "--cursor-file", cursor, "--json"])
            #expect(r.status == 1)
            let errors = errorLines(r).filter { $0.hasPrefix("castscope: error:") }
            #expect(errors.count == 1 && errors[0].contains(cursor) && errors[0].contains(message)
                        && errors[0].contains("--cursor-reset"), "\(r.stderr)")
        }
        // --cursor-reset: reads from the start and writes a good cursor (stopped by SIGTERM).
        let p = Process()
        p.executableURL = packageRoot.appendingPathComponent(".build/debug/castscope")
        p.arguments = ["tail", "--file", journal, "--cursor-file", cursor, "--cursor-reset", "--from-start", "--json", "--events"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let end = Date().addingTimeInterval(10)
        while Date() < end, (try? String(contentsOfFile: cursor, encoding: .utf8))?.contains(";t=") != true { usleep(50_000) }
        kill(p.processIdentifier, SIGTERM)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(String(decoding: data, as: UTF8.self).contains("\"type\":\"event\""))
        let saved = try String(contentsOfFile: cursor, encoding: .utf8)
        #expect(saved.hasPrefix("s=") && !saved.contains("pending"), "\(saved)")
    }

    // 8. Exactly once across SIGKILL, SIGTERM and rotation (the short run of `make soak`).
    @Test("tail: 6 SIGKILL/SIGTERM cycles with a rotation lose, repeat and tear nothing",
          .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote)))
    func soakShort() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", packageRoot.appendingPathComponent("scripts/soak-tail.py").path,
                       packageRoot.appendingPathComponent(".build/debug/castscope").path, "6"]
        var env = ProcessInfo.processInfo.environment
        env["SOAK_RATE"] = "1000"
        p.environment = env
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        #expect(p.terminationStatus == 0, "\(text)")
        #expect(text.contains(": 0 lost, 0 repeated, 0 torn lines"), "\(text)")
    }

    /// The fuzz targets' entry points over their seeds and deterministic mutations of them, in
    /// process (the smoke run in `make test`; `make fuzz` runs libFuzzer over the same entries).
    @Test("fuzz smoke: every entry point on the seeds and 3,000 mutations of them")
    func fuzzSmoke() throws {
        var seeds: [[UInt8]] = []
        for folder in ["samples", "../shared/reference/real-logs"] {
            let base = packageRoot.appendingPathComponent(folder)
            guard let e = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in e where !url.hasDirectoryPath {
                if let d = try? Data(contentsOf: url), !d.isEmpty { seeds.append(Array(d.prefix(4096))) }
            }
        }
        seeds.append(makeArchive(.tarGz, [("a.log", seeds[0]), ("b.log", seeds[1])]))
        seeds.append(makeArchive(.zip, [("a.log", seeds[0])]))
        #expect(seeds.count > 10)
        var rng = SplitMix(seed: 12)
        for k in 0..<3000 {
            var d = seeds[k % seeds.count]
            for _ in 0..<(1 + Int(rng.next() % 8)) where !d.isEmpty {
                let i = Int(rng.next() % UInt64(d.count))
                switch rng.next() % 4 {
                case 0: d[i] = UInt8(truncatingIfNeeded: rng.next())
                case 1: d.remove(at: i)
                case 2: d.insert(contentsOf: d[i..<min(d.count, i + 16)], at: i)
                default: d = Array(d[..<i])
                }
            }
            switch k % 6 {
            case 0: FuzzEntry.pipeline(d)
            case 1: FuzzEntry.pipeline(d, forcedFormat: "journal-export")
            case 2: FuzzEntry.pipeline(d, forcedFormat: "apple-ndjson")
            case 3: FuzzEntry.gzip(makeArchive(.gz, [("x", d)]).enumerated().map { $0.offset == 20 ? $0.element ^ 0x55 : $0.element })
            case 4: FuzzEntry.archive(d)
            default: FuzzEntry.sanitize(d)
            }
        }
    }

    /// The Unified Logging targets (tracev3 reader, uuidtext/dsc parsers) over the real Apple
    /// files and mutations of them: a damaged file is a problem reported, never a crash.
    @Test("fuzz smoke: tracev3 and string files, real Apple files and 1,200 mutations of them")
    func fuzzSmokeUnifiedLogging() throws {
        let ul = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/reference/unified-logging")
        let traces = try ["0000000000000030.tracev3", "0000000000000f85.tracev3"].map {
            Array(try Data(contentsOf: ul.appendingPathComponent($0)).prefix(65536))
        }
        let strings = try ["uuidtext/00/7EF56328D53A78B59CCCE3E3189F57", "uuidtext/dsc/dsc-version1", "uuidtext/dsc/dsc-version2",
                           "uuidtext/dsc/8E21CAB1DCF936B49F85CF860E6F34EC"].map {
            Array(try Data(contentsOf: ul.appendingPathComponent($0)).prefix(16384))
        }
        for t in traces { FuzzEntry.tracev3(t) }
        for d in strings { FuzzEntry.stringFiles(d) }
        var rng = SplitMix(seed: 14)
        for k in 0..<1200 {
            let tracev3 = k % 2 == 0
            var d = tracev3 ? traces[k / 2 % traces.count] : strings[k / 2 % strings.count]
            for _ in 0..<(1 + Int(rng.next() % 8)) where !d.isEmpty {
                let i = Int(rng.next() % UInt64(d.count))
                switch rng.next() % 4 {
                case 0: d[i] = UInt8(truncatingIfNeeded: rng.next())
                case 1: d[i] ^= 0xFF
                case 2: d.insert(contentsOf: d[i..<min(d.count, i + 16)], at: i)
                default: d = Array(d[..<i])
                }
            }
            if tracev3 { FuzzEntry.tracev3(d) } else { FuzzEntry.stringFiles(d) }
        }
    }
}

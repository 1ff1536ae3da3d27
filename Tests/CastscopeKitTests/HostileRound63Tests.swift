import Foundation
import Testing

@testable import CastscopeKit

/// A hostile-input review (session 63): standard output redirected onto a file inside an input
/// folder (or a hard link to one) was written into, and the file then read without a word.
@Suite("hostile round 63: standard output into an input folder")
struct HostileRound63Tests {
    @Test("standard output onto a file in an input folder, through a link into one, or a hard link to one: refused, exit 2, the file unchanged")
    func stdoutIntoAnInputFolder() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        let input = dir.appendingPathComponent("in"), outside = dir.appendingPathComponent("ext")
        try fm.createDirectory(at: input, withIntermediateDirectories: true)
        try fm.createDirectory(at: outside, withIntermediateDirectories: true)
        let a = input.appendingPathComponent("a.log")
        try fm.copyItem(at: packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt"), to: a)
        try fm.copyItem(at: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"), to: input.appendingPathComponent("b.log"))
        try fm.createSymbolicLink(at: input.appendingPathComponent("ext"), withDestinationURL: outside)
        try "kept\n".write(to: outside.appendingPathComponent("x.log"), atomically: true, encoding: .utf8)
        try fm.linkItem(at: a, to: dir.appendingPathComponent("hard.log"))
        let binary = packageRoot.appendingPathComponent(".build/debug/castscope").path
        let before = try Data(contentsOf: a)
        let cases: [(String, String)] = [
            ("exec \"$0\" analyze \"$1\" >> \"$1/a.log\"", "is inside the input folder"),
            ("exec \"$0\" analyze --json \"$1\" 1<> \"$1/a.log\"", "is inside the input folder"),
            ("exec \"$0\" sessions \"$1\" >> \"$1/a.log\"", "is inside the input folder"),
            ("exec \"$0\" show \"$1\" >> \"$1/a.log\"", "is inside the input folder"),
            ("exec \"$0\" analyze \"$1\" >> \"$1/../hard.log\"", "(a hard link), which is read as an input"),
            ("exec \"$0\" analyze \"$1\" >> \"$1/../ext/x.log\"", "is inside the folder the link"),
            ("exec \"$0\" tail --file \"$1/a.log\" >> \"$1/a.log\"", "castscope never writes over an input"),
        ]
        for (script, says) in cases {
            let (status, text) = try runShell(script, [binary, input.path])
            #expect(status == 2 && text.contains(says), "\(script): \(status) \(text)")
            #expect(try Data(contentsOf: a) == before, "\(script)")
        }
        #expect(try String(contentsOf: outside.appendingPathComponent("x.log"), encoding: .utf8) == "kept\n")
        // (castscope's own report appended to in the folder, a cron job's: written, not read)
        for _ in 0..<2 {
            let (status, text) = try runShell("exec \"$0\" analyze \"$1\" >> \"$1/castscope.log\"", [binary, input.path])
            #expect(status == 0, "\(text)")
        }
        #expect(try String(contentsOf: input.appendingPathComponent("castscope.log"), encoding: .utf8).components(separatedBy: "castscope: 3 files").count == 3)
        // (a file beside the folder, not in it: written as before)
        let (status, _) = try runShell("exec \"$0\" analyze \"$1\" > \"$1/../report.txt\"", [binary, input.path])
        #expect(status == 0)
        #expect(try String(contentsOf: dir.appendingPathComponent("report.txt"), encoding: .utf8).hasPrefix("castscope: 4 files"))  // (castscope.log among them, said to be a report)
    }

    @Test("links to a folder that holds the input, or to /proc and /sys, are not followed; a diamond of links is read once per folder, in bounded time")
    func linksThatWouldNeverEnd() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        let bundle = dir.appendingPathComponent("b")
        try fm.createDirectory(at: bundle, withIntermediateDirectories: true)
        try fm.copyItem(at: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"), to: bundle.appendingPathComponent("good.txt"))
        for (name, target) in [("root", "/"), ("up", ".."), ("proc", "/proc"), ("sys", "/sys")] {
            try fm.createSymbolicLink(atPath: bundle.appendingPathComponent(name).path, withDestinationPath: target)
        }
        let started = Date()
        let r = try castscope(["analyze", "--json", bundle.path])
        #expect(Date().timeIntervalSince(started) < 20, "the walk ends")
        let json = try #require(r.json, "\(r.stderr)")
        #expect((json["sessions"] as? [Any])?.count == 1)
        #expect(r.stderr.contains("/root: a link to /, a folder that holds the input: not followed"), "\(r.stderr)")
        #expect(r.stderr.contains("/up: a link to \(dir.resolvingSymlinksInPath().path), a folder that holds the input: not followed"), "\(r.stderr)")
        #expect(r.stderr.contains("/proc: a kernel file system (/proc, /sys and the like), not logs: not read"), "\(r.stderr)")
        // A diamond 20 deep: each folder links to the next one twice (2^20 paths, 21 folders).
        let diamond = dir.appendingPathComponent("d")
        for k in 0...20 { try fm.createDirectory(at: diamond.appendingPathComponent("f\(k)"), withIntermediateDirectories: true) }
        for k in 0..<20 {
            for name in ["x", "y"] {
                try fm.createSymbolicLink(atPath: diamond.appendingPathComponent("f\(k)/\(name)").path, withDestinationPath: "../f\(k + 1)")
            }
        }
        try fm.copyItem(at: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"), to: diamond.appendingPathComponent("f20/good.txt"))
        let walkStarted = Date()
        let d = try castscope(["analyze", "--json", diamond.appendingPathComponent("f0").path])
        #expect(Date().timeIntervalSince(walkStarted) < 20, "each folder once")
        let inputs = (try #require(d.json, "\(d.stderr)"))["inputs"] as? [[String: Any]] ?? []
        #expect(inputs.count == 1, "\(inputs.map { $0["path"] ?? "" })")
    }

    @Test("lines ended by lone CRs are lines though the file ends in an LF or an LF log follows; a CR LF file and an LF log with a progress line's CR read as before")
    func loneCarriageReturns() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = try String(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"), encoding: .utf8)
        let lf = try castscope(["analyze", "--json", packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt").path])
        let want = try #require(lf.json)
        func same(_ name: String, _ text: String) throws {
            let url = dir.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            let r = try castscope(["analyze", "--json", url.path])
            let got = try #require(r.json, "\(name): \(r.stderr)")
            #expect((got["findings"] as? [[String: Any]])?.compactMap { $0["kind"] as? String } == (want["findings"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }, "\(name)")
            #expect((got["inputs"] as? [[String: Any]])?.first?["events"] as? Int == (want["inputs"] as? [[String: Any]])?.first?["events"] as? Int, "\(name)")
        }
        let cr = log.replacingOccurrences(of: "\n", with: "\r")
        try same("cr-last-lf.log", cr + "\n")
        try same("crlf.log", log.replacingOccurrences(of: "\n", with: "\r\n"))
        try same("cr-then-crlf.log", String(cr.dropLast()) + "\r\n")
        // (a CR log joined to an LF log: both halves read, each line's events twice in the file)
        let joined = dir.appendingPathComponent("cr-then-lf.log")
        try Data((cr + log).utf8).write(to: joined)
        let j = try castscope(["analyze", "--json", joined.path])
        let events = (want["inputs"] as? [[String: Any]])?.first?["events"] as? Int ?? 0
        let jsonJoined = try #require(j.json)
        #expect(events > 100 && (jsonJoined["inputs"] as? [[String: Any]])?.first?["events"] as? Int == 2 * events)
        // (a progress line's CR in an LF log stays in its line)
        let progress = dir.appendingPathComponent("progress.log")
        try Data(("uploading 10%\ruploading 100%\n" + log).utf8).write(to: progress)
        let p = try castscope(["analyze", "--json", progress.path])
        #expect((try #require(p.json)["inputs"] as? [[String: Any]])?.first?["events"] as? Int == (want["inputs"] as? [[String: Any]])?.first?["events"] as? Int)
    }

    @Test("a log after a hole longer than 1 GB (copytruncate of a log past 1 GB) is read, the hole said")
    func logAfterAGigabyteHole() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("rotated.log")
        FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        try handle.seek(toOffset: (1 << 30) + (1 << 20))
        try handle.write(contentsOf: try Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt")))
        try handle.close()
        let r = try castscope(["analyze", "--json", url.path])
        let json = try #require(r.json, "\(r.stderr)")
        #expect((json["sessions"] as? [Any])?.count == 1, "\(r.stderr)")
        #expect(r.stderr.contains("\((1 << 30) + (1 << 20)) NUL bytes at the start passed over"), "\(r.stderr)")
    }

    @Test("--oneline names a path with a newline or a byte that is not UTF-8 escaped, on its one line")
    func onelineEscapesNames() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = try Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"))
        let newline = dir.appendingPathComponent("a\nb.log")
        try log.write(to: newline)
        let r = try castscope(["analyze", "--oneline", newline.path])
        #expect(r.stdout.split(separator: "\n").count == 1 && r.stdout.hasPrefix(dir.path + "/a\\nb.log: 1 session"), "\(r.stdout)")
        // (a name that is not UTF-8, made and given on the command line through a shell)
        let made = try runShell("exec cp \"$0\" \"$1/$(printf 'caf\\351.log')\"", [newline.path, dir.path])
        #expect(made.status == 0, "\(made.stderr)")
        let (status, text) = try runShell("exec \"$0\" analyze --oneline \"$1/$(printf 'caf\\351.log')\" 1>&2", [packageRoot.appendingPathComponent(".build/debug/castscope").path, dir.path])
        #expect(status == 0 && text.contains("/caf\\xe9.log: 1 session"), "\(status) \(text)")
    }

    @Test("a journal export's time that is no time (negative, past year 9999) is said with its line, the entry read untimed")
    func exportTimeThatIsNoTime() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let export = try String(contentsOf: packageRoot.appendingPathComponent("samples/relay/relay.export"), encoding: .utf8)
        for bad in ["-1773306904673211", "9223372036854775807"] {
            let url = dir.appendingPathComponent("r.export")
            try export.replacingOccurrences(of: #"(?m)^__REALTIME_TIMESTAMP=.*$"#, with: "__REALTIME_TIMESTAMP=" + bad, options: .regularExpression)
                .write(to: url, atomically: true, encoding: .utf8)
            let r = try castscope(["analyze", "--json", url.path])
            #expect(r.stderr.contains("r.export:1: time \(bad) is no time: the entry is read untimed"), "\(r.stderr)")
            #expect(r.stderr.contains("more records with damaged fields"), "\(r.stderr)")
        }
        // (a damaged `_SOURCE_REALTIME_TIMESTAMP` beside a good `__REALTIME_TIMESTAMP`: the good
        // one is the time, as journalctl takes it, nothing lost or said)
        let url = dir.appendingPathComponent("s.export")
        try export.replacingOccurrences(of: #"(?m)^(__REALTIME_TIMESTAMP=.*)$"#, with: "_SOURCE_REALTIME_TIMESTAMP=-5\n$1", options: .regularExpression)
            .write(to: url, atomically: true, encoding: .utf8)
        let good = try castscope(["analyze", "--json", packageRoot.appendingPathComponent("samples/relay/relay.export").path])
        let r = try castscope(["analyze", "--json", url.path])
        #expect(!r.stderr.contains("is no time"), "\(r.stderr)")
        let got = try #require(r.json), want = try #require(good.json)
        let kept = (got["relaySessions"] as? [[String: Any]])?.compactMap { $0["accepted"] as? String } ?? []
        #expect(kept.count == 5 && kept == (want["relaySessions"] as? [[String: Any]])?.compactMap { $0["accepted"] as? String }, "\(kept)")
    }

    @Test("a UTF-16 line among a UTF-8 log's first lines is that line's damage, not a binary file; NULs all through are still binary")
    func aUTF16LineIsNoBinaryFile() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var lines = try Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt")).split(separator: 0x0A, omittingEmptySubsequences: false)
        let line4 = String(decoding: lines[3], as: UTF8.self)
        lines[3] = Data(line4.data(using: .utf16LittleEndian)!)
        let url = dir.appendingPathComponent("mixed.log")
        try Data(lines.joined(separator: [0x0A])).write(to: url)
        let r = try castscope(["analyze", "--json", url.path])
        let json = try #require(r.json, "\(r.stderr)")
        let input = try #require((json["inputs"] as? [[String: Any]])?.first)
        #expect(input["events"] as? Int == 206 && input["firstUnparsedLines"] as? [Int] == [4], "\(input)")
        // (bytes with NULs on most lines: binary, as before)
        var bytes: [UInt8] = []
        for k in 0..<4096 { bytes.append(k % 37 == 0 ? 0x0A : k % 5 == 0 ? 0 : UInt8(0x41 + k % 26)) }
        let binary = dir.appendingPathComponent("blob.log")
        try Data(bytes).write(to: binary)
        let b = try castscope(["analyze", binary.path])
        #expect(b.stderr.contains("binary file (NUL byte), not a log"), "\(b.stderr)")
    }

    @Test("tail -D names a journal in its folder that sd-journal refuses (a damaged header), as analyze does; the good one is followed")
    func tailNamesARefusedJournal() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journal = try Data(contentsOf: packageRoot.appendingPathComponent("samples/relay/relay.journal"))
        try journal.write(to: dir.appendingPathComponent("good.journal"))
        var bad = journal
        // (its incompatible flags, at byte 12: ones no sd-journal knows)
        bad.replaceSubrange(12..<16, with: [0xF0, 0xFF, 0xFF, 0xFF])
        try bad.write(to: dir.appendingPathComponent("bad.journal"))
        let binary = packageRoot.appendingPathComponent(".build/debug/castscope").path
        let (_, text) = try runShell("timeout 5 \"$0\" tail -D \"$1\" --from-start --no-color < /dev/null 1>&2", [binary, dir.path])
        #expect(text.contains("bad.journal: sd-journal refused the file ("), "\(text)")
        #expect(text.contains("none of its entries is followed"), "\(text)")
        #expect(text.contains(" relay "), "the good journal's lines: \(text)")
    }

    @Test("xz or zstd data damaged in its first block names how far it was read, as later damage does")
    func damagedCompressedDataNamesAByte() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt").path
        for (tool, ext, name) in [("xz", "xz", "xz"), ("zstd -q", "zst", "zstd")] {
            let url = dir.appendingPathComponent("d.log.\(ext)")
            let made = try runShell("\(tool) -c \"$0\" > \"$1\"", [log, url.path])
            guard made.status == 0 else { continue }  // (the tool is not installed here)
            var bytes = try Data(contentsOf: url)
            for k in (bytes.count / 2)..<(bytes.count / 2 + 8) { bytes[k] ^= 0xFF }
            try bytes.write(to: url)
            let r = try castscope(["analyze", url.path])
            #expect(r.stderr.contains("d.log.\(ext): at byte ") && r.stderr.contains("not readable \(name) data: "), "\(r.stderr)")
        }
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// Session 42's hostile-input review: files that crashed, hung or filled the disk, each next
/// to a good log that must still be reported whole.
@Suite("hostile files: nested gzip, a journal header that lies, log archive members that cannot be copied or are too big, a mapped file cut short")
struct HostileFilesTests {
    static let good = packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt")

    /// The good log's one session, completed, is in the report.
    func expectGoodSession(_ r: RunResult, _ what: String) {
        let sessions = r.json?["sessions"] as? [[String: Any]] ?? []
        #expect(sessions.contains { $0["outcome"] as? String == "completed" }, "\(what): \(r.stderr)")
    }

    @Test("a gzip inside a gzip of a repetitive log is read, not a trap that loses the run")
    func nestedGzip() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // (a frame storm: the inner stream is far larger than the outer file read so far)
        let line = "2026-03-12 10:15:02.104211+0100 0x1a2b     Default     0x0                  812    0    BroadcastExtension: video sample processed successfully\n"
        let inner = makeArchive(.gz, [("storm.log", Array(String(repeating: line, count: 30_000).utf8))])
        let twice = dir.appendingPathComponent("storm.log.gz.gz")
        try Data(makeArchive(.gz, [("storm.log.gz", inner)])).write(to: twice)
        let r = try castscope(["analyze", "--json", twice.path, Self.good.path])
        #expect(r.status == 0, "\(r.status): \(r.stderr)")
        expectGoodSession(r, "nested gzip")
        let inputs = r.json?["inputs"] as? [[String: Any]] ?? []
        #expect(inputs.first?["records"] as? Int == 30_000, "\(inputs)")
    }

    @Test("a journal whose header claims more entries than the file can hold is one error, not a hang")
    func journalHeaderThatLies() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var bytes = [UInt8](try Data(contentsOf: relayJournal))
        // n_entries, at offset 152 of the header
        for k in 0..<8 { bytes[152 + k] = k == 0 ? 0xF8 : 0xFF }
        let damaged = dir.appendingPathComponent("damaged.journal")
        try Data(bytes).write(to: damaged)
        let r = try castscope(["analyze", "--json", damaged.path, Self.good.path])
        #expect(r.status == 1, "\(r.status): \(r.stderr)")
        #expect(r.stderr.contains("damaged.journal") && r.stderr.contains("more than"), "\(r.stderr)")
        expectGoodSession(r, "lying header")
    }

    @Test("a log archive member that cannot be copied is its own error; the members after it are read; copies count against the budgets")
    func logArchiveMembers() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = [UInt8](try Data(contentsOf: Self.good))
        // `a` is a file, so `a/b.tracev3` cannot be made beside it.
        let collide = dir.appendingPathComponent("collide.tar")
        try Data(makeArchive(.tar, [("s.logarchive/a", [0]), ("s.logarchive/a/b.tracev3", [0, 0x10, 0, 0]), ("good.log", log)])).write(to: collide)
        let r = try castscope(["analyze", "--json", collide.path])
        #expect(r.status == 1, "\(r.status): \(r.stderr)")
        #expect(r.stderr.contains("collide.tar!s.logarchive/a/b.tracev3: cannot copy it"), "\(r.stderr)")
        #expect(!r.stderr.contains("castscope-logarchive-"), "the temporary path is not what the user gave: \(r.stderr)")
        expectGoodSession(r, "member after a failed copy")
        // A log archive member of 8 MB of zeros against --max-bytes 1M: stopped as it is copied.
        let big = dir.appendingPathComponent("big.tar.xz")
        try Data(makeArchive(.tarXz, [("x.logarchive/Persist/0000000000000001.tracev3", [UInt8](repeating: 0, count: 8 << 20)), ("good.log", log)])).write(to: big)
        let b = try castscope(["analyze", "--json", "--max-bytes", "1M", big.path])
        #expect(b.stderr.contains("big.tar.xz!x.logarchive/Persist/0000000000000001.tracev3") && b.stderr.contains("--max-bytes"), "\(b.stderr)")
        // A lone tracev3 member likewise.
        let lone = dir.appendingPathComponent("lone.tar.xz")
        var tracev3: [UInt8] = [0x00, 0x10, 0x00, 0x00, 0, 0, 0, 0, 0xD0, 0, 0, 0, 0, 0, 0, 0]
        tracev3 += [UInt8](repeating: 0, count: 8 << 20)
        try Data(makeArchive(.tarXz, [("lone.tracev3", tracev3), ("good.log", log)])).write(to: lone)
        let l = try castscope(["analyze", "--json", "--max-bytes", "1M", Self.good.path, lone.path])
        #expect(l.stderr.contains("lone.tar.xz!lone.tracev3") && l.stderr.contains("--max-bytes"), "\(l.stderr)")
        expectGoodSession(l, "lone tracev3 over the budget")
    }

    @Test("a mapped file cut short while it is read reads as zeros past its new end, and says so, instead of SIGBUS")
    func mappedFileCutShort() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("cut.tracev3").path
        try Data([UInt8](repeating: 0xAB, count: 1 << 20)).write(to: URL(fileURLWithPath: path))
        let mapped = try MappedFile(path: path)
        #expect(mapped.bytes[(1 << 20) - 1] == 0xAB)
        #expect(!mapped.shrank)
        #expect(truncate(path, 4096) == 0)
        // Past the new end: zeros, not a signal.
        #expect(mapped.bytes[(1 << 20) - 1] == 0)
        #expect(mapped.bytes[100] == 0xAB)
        #expect(mapped.shrank)
        #expect(mapped.shrankError(display: "x!cut.tracev3").description.contains("x!cut.tracev3"))
    }

    @Test("Ctrl-C (or SIGTERM, SIGUSR1, SIGALRM) while a log archive member is copied out of a tarball leaves nothing in TMPDIR")
    func interruptedCopyIsRemoved() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tmp = dir.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        let big = dir.appendingPathComponent("big.tar.xz")
        try Data(makeArchive(.tarXz, [("x.logarchive/Persist/0000000000000001.tracev3", [UInt8](repeating: 0, count: 64 << 20))])).write(to: big)
        // (SIGQUIT too, in the code; not here: its default action dumps a core)
        for sig in [SIGINT, SIGTERM, SIGUSR1, SIGALRM] {
            let p = Process()
            p.executableURL = packageRoot.appendingPathComponent(".build/debug/castscope")
            // (a slow copy: the member is read a few bytes at a time through the budget)
            p.arguments = ["analyze", "--json", "--max-expansion", "1000000", big.path]
            var env = ProcessInfo.processInfo.environment
            env["TMPDIR"] = tmp.path
            p.environment = env
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            // Wait for the copy to begin (the run's folder holds a log archive folder).
            var began = false
            for _ in 0..<400 where !began {
                usleep(5_000)
                let roots = (try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? []
                began = roots.contains { !((try? FileManager.default.contentsOfDirectory(atPath: tmp.appendingPathComponent($0).path)) ?? []).isEmpty }
            }
            kill(p.processIdentifier, sig)
            p.waitUntilExit()
            #expect(began, "the copy was seen")
            // (killed by the signal, or done before it came: either way nothing is left)
            #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).isEmpty, "signal \(sig), \(p.terminationReason == .uncaughtSignal ? "killed" : "finished first")")
        }
    }

    @Test("a .tar.bz2 cut within its first block is one damage line; a journal member with a name too long to copy under is read")
    func cutCompressionAndLongMemberName() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = [UInt8](try Data(contentsOf: Self.good))
        let whole = makeArchive(.tarBz2, [("good.log", log)])
        let cut = dir.appendingPathComponent("cut.tar.bz2")
        try Data(whole.prefix(10)).write(to: cut)
        let r = try castscope(["analyze", "--json", cut.path, Self.good.path])
        #expect(r.stderr.contains("cut.tar.bz2: bzip2 data that does not decompress"), "\(r.stderr)")
        #expect(!r.stderr.contains("nested"), "\(r.stderr)")
        expectGoodSession(r, "beside a cut .tar.bz2")
        // 200 control bytes: escaped for display (`\x01` each), longer than a file name may be.
        let name = "d/" + String(repeating: "\u{01}", count: 200) + ".journal"
        let tar = dir.appendingPathComponent("long.tar")
        try Data(makeArchive(.tar, [(name, [UInt8](try Data(contentsOf: relayJournal)))])).write(to: tar)
        let l = try castscope(["analyze", "--json", tar.path])
        #expect(l.status == 0, "\(l.stderr)")
        #expect(((l.json?["inputs"] as? [[String: Any]])?.first?["records"] as? Int ?? 0) > 0, "\(l.stderr)")
    }

    @Test("zeros after a tracev3's chunks are one line, read at once, not 16 bytes at a time in silence")
    func tracev3ZeroPadding() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ul = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/reference/unified-logging")
        var bytes = [UInt8](try Data(contentsOf: ul.appendingPathComponent("0000000000000030.tracev3")))
        let real = bytes.count
        bytes += [UInt8](repeating: 0, count: 32 << 20)
        let padded = dir.appendingPathComponent("padded.tracev3")
        try Data(bytes).write(to: padded)
        for command in ["analyze", "show"] {
            let r = try castscope([command, padded.path])
            #expect(r.stderr.contains("padded.tracev3: at byte \(real): \(32 << 20) bytes of zeros to the end of the file"), "\(command): \(r.stderr)")
        }
    }

    @Test(".ips: a header with no report after it, and a body that is bad JSON, are said of the body")
    func ipsBodies() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let header = #"{"bug_type":"298","timestamp":"2026-03-12 10:15:07.00 +0100","os_version":"iPhone OS 17.4"}"#
        let only = dir.appendingPathComponent("JetsamEvent-only.ips")
        try Data((header + "\n").utf8).write(to: only)
        let o = try castscope(["analyze", only.path, Self.good.path])
        #expect(o.status == 1 && o.stderr.contains("JetsamEvent-only.ips:1: .ips report: a header (bug_type 298) and no report after it"), "\(o.stderr)")
        let bad = dir.appendingPathComponent("JetsamEvent-bad.ips")
        try Data((header + "\n{\"processes\": [NaN]}\n").utf8).write(to: bad)
        let b = try castscope(["analyze", bad.path])
        #expect(b.stderr.contains("its body (from line 2): invalid JSON at byte 15"), "\(b.stderr)")
    }

    @Test("a tar member whose header is damaged is named with its offset (exit 1), the members after it read (it vanished with exit 0)")
    func damagedTarHeader() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = try [UInt8](Data(contentsOf: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt")))
        let storm = try [UInt8](Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001").appendingPathComponent(
            try FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent("samples/stopped-10001").path).filter { !$0.hasPrefix(".") }.sorted()[0])))
        var tar = makeArchive(.tar, [("a.txt", good), ("b.txt", [UInt8]("damaged\n".utf8)), ("c.txt", storm)])
        // b.txt's header: after a.txt's (a pax tar may put an extended header first: find it by name)
        let name = Array("b.txt".utf8)
        var at = 0
        while at + 512 <= tar.count, !(Array(tar[at..<at + name.count]) == name && tar[at + 156] == UInt8(ascii: "0")) { at += 512 }
        #expect(at + 512 <= tar.count)
        for k in 148..<156 { tar[at + k] = UInt8(ascii: "9") }
        let path = dir.appendingPathComponent("bundle.tar")
        try Data(tar).write(to: path)
        let r = try castscope(["analyze", "--json", path.path])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("bundle.tar: at byte \(at): damaged member header, skipped to the next member that can be read"), "\(r.stderr)")
        let inputs = (try #require(r.json)["inputs"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(inputs.contains { $0.hasSuffix("!a.txt") } && inputs.contains { $0.hasSuffix("!c.txt") }, "\(inputs)")
    }

    @Test("a record's joined lines stop at 1 MB, said with the record's line (a gzip of one line and 3 million continuation lines held 438 MB)")
    func recordJoinedLinesBounded() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = try String(contentsOf: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt"), encoding: .utf8)
        var lines = good.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let frame = "    0x0000000100abcdef frame in BroadcastExtension + 1234 continuation"
        lines.insert(contentsOf: Array(repeating: frame, count: 20_000), at: 5)
        let path = dir.appendingPathComponent("dump.log")
        try lines.joined(separator: "\n").write(to: path, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", path.path])
        #expect(r.status == 1)
        #expect(r.stderr.contains("dump.log:5: record longer than 1 MB with the lines joined to it: its last "), "\(r.stderr)")
        let outcomes = (try #require(r.json)["sessions"] as? [[String: Any]] ?? []).compactMap { $0["outcome"] as? String }
        #expect(outcomes == ["completed"], "\(outcomes)")
    }

    @Test("a log that begins with a block of NULs (logrotate's copytruncate) is read after it, said once (it was a binary file, exit 4)")
    func leadingNULBlock() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = try [UInt8](Data(contentsOf: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt")))
        let path = dir.appendingPathComponent("syslog.txt")
        try Data([UInt8](repeating: 0, count: 100_000) + good).write(to: path)
        let r = try castscope(["analyze", "--json", path.path])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("syslog.txt: at byte 0: 100000 NUL bytes at the start passed over"), "\(r.stderr)")
        let json = try #require(r.json)
        let outcomes = (json["sessions"] as? [[String: Any]] ?? []).compactMap { $0["outcome"] as? String }
        #expect(outcomes == ["completed"], "\(outcomes)")
        #expect((json["inputs"] as? [Any])?.count == 1, "one file, one input: \(json["inputs"] ?? "")")
        // Nothing but NULs is nothing to read (since round 15 said so: it was "binary file").
        let zeros = dir.appendingPathComponent("zeros.log")
        try Data(count: 5000).write(to: zeros)
        let z = try castscope(["analyze", zeros.path])
        #expect(z.status == 4 && z.stderr.contains("all 5000 bytes are NUL"), "\(z.stderr)")
        // A binary file with a few NULs first is still one.
        let binary = dir.appendingPathComponent("x.bin")
        try Data([0, 0, 0, 1] + Array("Bud1".utf8) + [UInt8](repeating: 0, count: 200) + good).write(to: binary)
        let b = try castscope(["analyze", binary.path])
        #expect(b.status == 4 && b.stderr.contains("binary file"), "\(b.stderr)")
    }

    @Test("one cause, one line: a missing $TMPDIR fails every log-archive member with the same sentence, printed once with its count")
    func sameErrorOnce() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let unified = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/reference/unified-logging")
        var members: [(String, [UInt8])] = []
        for name in ["0000000000000030.tracev3", "0000000000000f85.tracev3"] {
            members.append(("s.logarchive/Persist/" + name, try [UInt8](Data(contentsOf: unified.appendingPathComponent(name)))))
        }
        members.append(("good.log", try [UInt8](Data(contentsOf: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt")))))
        let tar = dir.appendingPathComponent("sd.tar")
        try Data(makeArchive(.tar, members)).write(to: tar)
        let r = try castscope(["analyze", "--oneline", tar.path], env: ["TMPDIR": "/nonexistent-castscope-tmp"])
        let lines = r.stderr.split(separator: "\n").filter { $0.contains("/nonexistent-castscope-tmp") }
        #expect(lines.count == 1 && lines[0].hasSuffix("(2 times)"), "\(r.stderr)")
        #expect(r.stdout.contains("1 session"), "\(r.stdout)")
    }

    @Test("runs of empty lines are passed over in one scan, line numbers kept (a file of newlines was 25 times slower a byte than text)")
    func emptyLineRuns() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = try String(contentsOf: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt"), encoding: .utf8)
        var lines = good.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // empty lines first (no record yet), and between records
        lines.insert(contentsOf: Array(repeating: "", count: 3_000), at: 20)
        let path = dir.appendingPathComponent("gaps.log")
        try (String(repeating: "\n", count: 100_000) + lines.joined(separator: "\n")).write(to: path, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", path.path])
        let json = try #require(r.json)
        let input = (json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect(input["lines"] as? Int == 100_000 + lines.count - (lines.last == "" ? 1 : 0), "\(input)")
        // The line that ended the session, where the file has it.
        let end = lines.firstIndex { $0.contains("server stream end encountered") }!
        #expect(r.stdout.contains("gaps.log:\(100_000 + end + 1)"), "\(r.stdout.prefix(2000))")
    }

    @Test("pzstd's output (a skippable frame first), lz4's legacy frame and lzma-alone are read (each was \"binary file (NUL byte)\")")
    func otherCompressionFrames() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt").path
        for (name, command) in [("a.zst", "pzstd -q -c"), ("a.lz4", "lz4 -q -l -c"), ("a.lzma", "lzma -c")] {
            let out = dir.appendingPathComponent(name).path
            #expect(try runShell("\(command) \"$0\" > \"$1\"", [good, out]).status == 0, "\(command): make deps installs zstd, lz4 and xz-utils")
            let r = try castscope(["analyze", "--oneline", out])
            #expect(r.status == 0 && r.stdout.contains("1 session — 1 completed"), "\(name): \(r.stdout) \(r.stderr)")
        }
    }

    @Test("a log archive whose Persist is a symlink is read through it; a folder merely named *.logarchive is a folder (its text logs were never read nor named)")
    func logArchiveFolderShapes() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        let unified = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/reference/unified-logging")
        let archive = dir.appendingPathComponent("la/sys.logarchive")
        try fm.createDirectory(at: archive, withIntermediateDirectories: true)
        for part in ["timesync", "uuidtext"] { try fm.copyItem(at: unified.appendingPathComponent(part), to: archive.appendingPathComponent(part)) }
        let elsewhere = dir.appendingPathComponent("kept/Persist")
        try fm.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        for name in ["0000000000000030.tracev3", "0000000000000f85.tracev3"] {
            try fm.copyItem(at: unified.appendingPathComponent(name), to: elsewhere.appendingPathComponent(name))
        }
        try fm.createSymbolicLink(at: archive.appendingPathComponent("Persist"), withDestinationURL: elsewhere)
        let linked = try castscope(["analyze", "--json", archive.path])
        let records = ((try #require(linked.json)["inputs"] as? [[String: Any]]) ?? []).reduce(0) { $0 + ($1["records"] as? Int ?? 0) }
        #expect(records > 1000, "\(linked.stderr)")
        // A plain folder whose name ends in .logarchive, beside another log.
        let b = dir.appendingPathComponent("b/notes.logarchive")
        try fm.createDirectory(at: b, withIntermediateDirectories: true)
        let storm = packageRoot.appendingPathComponent("samples/retry-storm")
        for name in try fm.contentsOfDirectory(atPath: storm.path) where !name.hasPrefix(".") {
            try fm.copyItem(at: storm.appendingPathComponent(name), to: b.appendingPathComponent(name))
        }
        let r = try castscope(["analyze", "--json", b.deletingLastPathComponent().path])
        let outcomes = (try #require(r.json)["sessions"] as? [[String: Any]] ?? []).compactMap { $0["outcome"] as? String }
        #expect(outcomes == ["failed-to-connect"], "\(outcomes) \(r.stderr)")
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// The eighth hostile review: zip member names flagged UTF-8 (bit 11) came out empty; the read
/// that crossed a budget, and the last reads of an archive cut short, were dropped.
@Suite("hostile round 8: archive member names, budgets and cut archives")
struct HostileRound8Tests {
    @Test("zip names as Python, Java and Windows write them (UTF-8, bit 11), and as DOS wrote them (code page 437), are the members' names: never empty, never the same")
    func zipMemberNamesNotASCII() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let src = dir.appendingPathComponent("src")
        let phone = src.appendingPathComponent("Jürgens iPhone")
        try FileManager.default.createDirectory(at: phone, withIntermediateDirectories: true)
        let samples = packageRoot.appendingPathComponent("samples")
        try FileManager.default.copyItem(at: samples.appendingPathComponent("stopped-10001/device-syslog.txt"),
                                         to: phone.appendingPathComponent("device-syslog.txt"))
        try FileManager.default.copyItem(at: samples.appendingPathComponent("retry-storm/log-stream-debug.txt"),
                                         to: src.appendingPathComponent("café.txt"))
        try jetsamStory().write(to: phone.appendingPathComponent("system_logs.logarchive"))
        let zip = dir.appendingPathComponent("bundle.zip")
        // Python's zipfile sets bit 11 on every name that is not ASCII. Two members named in
        // code page 437 (no flag: `Jürgen` and `Jörgen`, one name with U+FFFD for the byte
        // that is not UTF-8) and one flagged UTF-8 whose bytes are not (libarchive gives no
        // name for it) are written under placeholders of the same length and patched in.
        let gen = try runShell("""
            exec python3 -c '
            import os, struct, sys, zipfile
            src, out = sys.argv[1], sys.argv[2]
            log = open(os.path.join(src, "café.txt"), "rb").read()
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
                for d, _, fs in os.walk(src):
                    for f in sorted(fs):
                        p = os.path.join(d, f)
                        z.write(p, os.path.relpath(p, src))
                for i in (1, 2, 3):
                    z.writestr("PLACEHOLDER-%d.txt" % i, log)
            d = bytearray(open(out, "rb").read())
            names = {b"PLACEHOLDER-1.txt": "Jürgen/syslog.txt".encode("cp437"),
                     b"PLACEHOLDER-2.txt": "Jörgen/syslog.txt".encode("cp437"),
                     b"PLACEHOLDER-3.txt": b"bad\\xff\\xfe--name-3.txt"}
            for old, new in names.items():
                assert len(old) == len(new)
                d = d.replace(old, new)
            for sig, flag, length, name in ((b"PK\\x03\\x04", 6, 26, 30), (b"PK\\x01\\x02", 8, 28, 46)):
                p = d.find(sig)
                while p >= 0:
                    n = struct.unpack_from("<H", d, p + length)[0]
                    if bytes(d[p + name:p + name + n]).startswith(b"bad\\xff"):
                        struct.pack_into("<H", d, p + flag, struct.unpack_from("<H", d, p + flag)[0] | 0x800)
                    p = d.find(sig, p + 4)
            open(out, "wb").write(d)
            ' "$0" "$1"
            """, [src.path, zip.path])
        #expect(gen.status == 0, "\(gen.stderr)")
        let r = try castscope(["analyze", "--json", zip.path])
        let json = try #require(r.json, "\(r.stderr)")
        let paths = (json["inputs"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
            .map { String($0.dropFirst(zip.path.count)) }
        let unreadable = paths.filter { $0.hasPrefix("!\u{FFFD}member ") && $0.hasSuffix(" (its name cannot be read)") }
        #expect(unreadable.count == 1, "\(paths)")
        #expect(Set(paths).subtracting(unreadable) == ["!café.txt", "!Jürgens iPhone/device-syslog.txt", "!Jürgens iPhone/system_logs.logarchive",
                                                       "!Jürgen/syslog.txt", "!Jörgen/syslog.txt"], "\(paths)")
        #expect(paths.count == 6)
        // The logarchive under the folder is put together (its timesync file was read as a log: a binary file).
        #expect((json["inputErrors"] as? [Any])?.isEmpty == true, "\(r.stderr)")
        let sessions = json["sessions"] as? [[String: Any]] ?? []
        #expect(sessions.contains { $0["outcome"] as? String == "killed" && $0["process"] as? String == "BroadcastExtension" })
        // The evidence names its member.
        #expect(r.stdout.contains("bundle.zip!Jürgens iPhone/device-syslog.txt:"))
    }

    @Test("a member name's bytes: UTF-8 when they are, else code page 437 in a zip and ISO 8859-1 in a tar, every byte its own character")
    func memberNameDecoding() {
        func name(_ bytes: [UInt8], zip: Bool) -> String? {
            bytes.withUnsafeBytes { ArchiveReader.memberName($0, zip: zip) }
        }
        #expect(name(Array("Jürgens iPhone/café.txt".utf8), zip: true) == "Jürgens iPhone/café.txt")
        #expect(name(Array("Jürgens iPhone/café.txt".utf8), zip: false) == "Jürgens iPhone/café.txt")
        #expect(name([0x4A, 0x81, 0x72, 0x67], zip: true) == "Jürg")
        #expect(name([0x4A, 0x94, 0x72, 0x67], zip: true) == "Jörg")
        #expect(name([0xE1, 0xFF], zip: true) == "ß\u{A0}")
        #expect(name([0x4A, 0xFC, 0x72, 0x67], zip: false) == "Jürg")
        #expect(name([0x4A, 0xE4, 0x72, 0x67], zip: false) == "Järg")
        #expect(name([], zip: true) == nil)
    }

    /// 300 sessions of `stopped-10001`'s syslog, each its own pid (5.4 MB).
    static func manySessions() throws -> [UInt8] {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"), encoding: .utf8)
        let lines = text.split(separator: "\n").dropFirst()
        var out: [UInt8] = []
        for i in 0..<300 {
            for line in lines { out += Array(line.replacingOccurrences(of: "[915]", with: "[\(1000 + i)]").utf8) + [0x0A] }
        }
        return out
    }

    /// The whole lines within the first `n` bytes.
    static func wholeLines(_ bytes: [UInt8], within n: Int) -> [UInt8] {
        let head = bytes.prefix(n)
        return Array(head.prefix((head.lastIndex(of: 0x0A) ?? -1) + 1))
    }

    /// Every byte a walk hands on, per input, and its errors (a budget small enough to test).
    static func walked(_ paths: [String], _ setBudget: (inout Budget) -> Void) -> (bytes: [String: Int], errors: [String]) {
        var bytes: [String: Int] = [:]
        var errors: [String] = []
        var walker = BundleWalker(visit: { path, source in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 8)
            defer { buffer.deallocate() }
            while true {
                let n = try source.read(into: buffer)
                if n == 0 { break }
                bytes[path, default: 0] += n
            }
        }, report: { _ in })
        walker.report = { errors.append($0.description) }
        setBudget(&walker.budget)
        walker.walk(paths)
        return (bytes, errors)
    }

    @Test("the read that crosses --max-bytes or --max-expansion hands on its bytes up to the limit, the error naming that byte")
    func budgetKeepsBytesUpToTheLimit() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let storm = [UInt8](try Data(contentsOf: packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt")))
        let gz = dir.appendingPathComponent("storm.gz").path
        try Data(makeArchive(.gz, [("x", storm)])).write(to: URL(fileURLWithPath: gz))
        // (a budget under one read kept nothing: the read that crossed it was dropped whole)
        let small = Self.walked([gz]) { $0.maxBytes = 3000 }
        #expect(small.bytes[gz] == 3000, "\(small)")
        #expect(small.errors == ["\(gz): at byte 3000: bundle budget: more than 3000 bytes decompressed or streamed (--max-bytes); the rest of this member and of the compressed inputs is not read"])
        // A tar member: the limit is the bundle's, its offset the member's.
        let many = try Self.manySessions()
        let tar = dir.appendingPathComponent("many.tar").path
        try Data(makeArchive(.tar, [("many.txt", many)])).write(to: URL(fileURLWithPath: tar))
        let member = Self.walked([tar]) { $0.maxBytes = 1 << 20 }
        #expect(member.bytes["\(tar)!many.txt"] == 1 << 20, "\(member.bytes)")
        #expect(member.errors.count == 1 && member.errors[0].hasPrefix("\(tar)!many.txt: at byte 1048576: bundle budget:"), "\(member.errors)")
        // The expansion ratio: 8 MB of newlines out of a few KB, over 100× from 1 MB out.
        let bomb = dir.appendingPathComponent("lines.gz").path
        try Data(makeArchive(.gz, [("x", [UInt8](repeating: 0x0A, count: 8 << 20))])).write(to: URL(fileURLWithPath: bomb))
        let expanded = Self.walked([bomb]) { $0.ratioFloor = 1 << 20; $0.maxExpansion = 100 }
        #expect(expanded.bytes[bomb] == 1 << 20, "\(expanded)")
        #expect(expanded.errors.count == 1 && expanded.errors[0].hasPrefix("\(bomb): at byte 1048576: expansion budget: "), "\(expanded.errors)")
    }

    @Test("under --max-bytes the sessions of the lines before the limit are analyzed (gzip, tar member, standard input)")
    func budgetAnalyzesWhatCameBefore() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let many = try Self.manySessions()
        let whole = dir.appendingPathComponent("whole-lines.txt")
        try Data(Self.wholeLines(many, within: 1 << 20)).write(to: whole)
        let expected = try #require(try castscope(["analyze", "--json", whole.path]).json)
        let expectedSessions = try #require(expected["sessions"] as? [[String: Any]]).count
        #expect(expectedSessions == 58)
        let gz = dir.appendingPathComponent("many.txt.gz")
        try Data(makeArchive(.gz, [("x", many)])).write(to: gz)
        let tar = dir.appendingPathComponent("many.tar")
        try Data(makeArchive(.tar, [("many.txt", many)])).write(to: tar)
        for (path, name) in [(gz.path, gz.path), (tar.path, tar.path + "!many.txt")] {
            let r = try castscope(["analyze", "--json", "--max-bytes", "1M", path])
            let sessions = r.json?["sessions"] as? [[String: Any]] ?? []
            #expect(sessions.count == expectedSessions, "\(name): \(sessions.count) sessions")
            #expect(r.json.map(Self.events) == Self.events(expected), "\(name)")
            #expect(r.stderr.contains("\(name): at byte 1048576: bundle budget"), "\(r.stderr)")
        }
        // Standard input from a file (castscope stops reading it at the limit: a pipe written
        // from here would end the test with SIGPIPE).
        let text = dir.appendingPathComponent("many.txt")
        try Data(many).write(to: text)
        let out = dir.appendingPathComponent("stdin.json")
        let r = try runShell("exec \"$0\" analyze --json --max-bytes 1M - < \"$1\" > \"$2\"",
                             [packageRoot.appendingPathComponent(".build/debug/castscope").path, text.path, out.path])
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any]
        #expect((json?["sessions"] as? [[String: Any]])?.count == expectedSessions, "<stdin>: \(r.stderr)")
        #expect(json.map(Self.events) == Self.events(expected), "<stdin>")
        #expect(r.stderr.contains("<stdin>: at byte 1048576: bundle budget"), "\(r.stderr)")
        // A budget under one read: the retry storm's first 3000 bytes are its session.
        let storm = dir.appendingPathComponent("storm.gz")
        try Data(makeArchive(.gz, [("x", [UInt8](try Data(contentsOf: packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt"))))])).write(to: storm)
        let s = try castscope(["analyze", "--json", "--max-bytes", "3000", storm.path])
        #expect((s.json?["sessions"] as? [[String: Any]])?.count == 1, "\(s.stdout.prefix(300)) \(s.stderr)")
    }

    @Test("a .tar, .tar.gz or .zip cut short (an interrupted download) keeps every byte of its member that came before the cut, with one error", arguments: ["tar", "tar.gz", "zip"])
    func cutArchiveKeepsWhatCameBefore(_ kind: String) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let many = try Self.manySessions()
        let (whole, cut): ([UInt8], Int) = switch kind {
        case "tar": (makeArchive(.tar, [("many.txt", many)]), 1_000_000)
        case "tar.gz": (makeArchive(.tarGz, [("many.txt", many)]), 20_000)
        default: (makeArchive(.zip, [("many.txt", many)]), 20_000)
        }
        let path = dir.appendingPathComponent("many.\(kind)").path
        try Data(whole.prefix(cut)).write(to: URL(fileURLWithPath: path))
        // What of the member the cut file still holds, decompressed by Python's zlib.
        let bytes = try Self.held(kind, path)
        let start = try #require(kind == "zip" ? 0 : 512)
        #expect(Array(bytes[start..<start + 64]) == Array(many.prefix(64)))
        let kept = min(bytes.count - start, many.count)
        #expect(kept < many.count && kept > 500_000, "\(kept)")
        // Every byte of the member before the cut is handed on (the last 100-150 KB were lost).
        let walked = Self.walked([path]) { _ in }
        #expect(walked.bytes["\(path)!many.txt"] == kept, "\(walked)")
        #expect(walked.errors.count == 1, "\(walked.errors)")
        // And analyzed: the sessions of the whole lines it holds; one error line, one input.
        let expectedFile = dir.appendingPathComponent("expected.txt")
        try Data(Self.wholeLines(many, within: kept)).write(to: expectedFile)
        let expected = try #require(try castscope(["analyze", "--json", expectedFile.path]).json)
        let r = try castscope(["analyze", "--json", path])
        let json = try #require(r.json, "\(r.stderr)")
        #expect((json["sessions"] as? [[String: Any]])?.count == (expected["sessions"] as? [[String: Any]])?.count)
        #expect(Self.events(json) == Self.events(expected), "\(Self.events(json)) recognized lines for \(Self.events(expected))")
        #expect((json["inputs"] as? [Any])?.count == 1)
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
    }

    @Test("a sparse tar member reads with its holes as zeros, the one at its end too (blocks read as libarchive holds them)")
    func sparseMemberKeepsItsHoles() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let gen = try runShell("""
            cd "$0" && cat "$1" > a.txt && truncate -s 3M a.txt && cat "$1" >> a.txt && truncate -s 5M a.txt \
              && tar -cSf sparse.tar a.txt && tar --format=posix -cSf sparse-pax.tar a.txt
            """, [dir.path, packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt").path])
        #expect(gen.status == 0, "\(gen.stderr)")
        for name in ["sparse.tar", "sparse-pax.tar"] {
            let path = dir.appendingPathComponent(name).path
            let walked = Self.walked([path]) { _ in }
            #expect(walked.bytes["\(path)!a.txt"] == 5 << 20, "\(walked)")
            #expect(walked.errors.isEmpty, "\(walked.errors)")
            let r = try castscope(["analyze", "--json", path])
            // (the holes are zero-filled blocks, passed over and said, the storm before and after
            // them read; since session 64 the line after the first hole too, which was skipped
            // with it as one line too long)
            #expect(r.json?["sessions"] as? [[String: Any]] != nil)
            #expect(r.stderr.contains("a.txt:79: 3135324 NUL bytes passed over") && r.stderr.contains("a.txt:157: 2086748 NUL bytes passed over"), "\(r.stderr)")
        }
    }

    /// The recognized lines of a JSON report.
    static func events(_ json: [String: Any]) -> Int? { (json["summary"] as? [String: Any])?["events"] as? Int }

    /// The bytes Python's zlib gets out of a cut file: a gzip's (`gz`, `tar.gz`), a zip's first
    /// member's, or the file's own (`tar`).
    static func held(_ kind: String, _ path: String) throws -> [UInt8] {
        let out = path + ".held"
        let py = try runShell("""
            exec python3 -c '
            import struct, sys, zlib
            kind, path, out = sys.argv[1:4]
            d = open(path, "rb").read()
            if kind in ("gz", "tar.gz"):
                d = zlib.decompressobj(31).decompress(d)
            elif kind == "zip":
                method, = struct.unpack_from("<H", d, 8)
                n, e = struct.unpack_from("<HH", d, 26)
                d = d[30 + n + e:]
                if method == 8:
                    d = zlib.decompressobj(-15).decompress(d)
            open(out, "wb").write(d)
            ' "$0" "$1" "$2"
            """, [kind, path, out])
        #expect(py.status == 0, "\(py.stderr)")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    @Test("the record being read when the input breaks off (a .gz cut short) is analyzed with the lines before it")
    func lastRecordBeforeACut() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let storm = [UInt8](try Data(contentsOf: packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt")))
        let gz = makeArchive(.gz, [("x", storm)])
        for cut in [gz.count / 2, gz.count * 2 / 3, gz.count - 40] {
            let path = dir.appendingPathComponent("storm-\(cut).gz").path
            try Data(gz.prefix(cut)).write(to: URL(fileURLWithPath: path))
            let held = try Self.held("gz", path)
            #expect(held.count > 1000 && held.count < storm.count, "\(held.count)")
            let expectedFile = dir.appendingPathComponent("expected-\(cut).txt")
            try Data(Self.wholeLines(held, within: held.count)).write(to: expectedFile)
            let expected = try #require(try castscope(["analyze", "--json", expectedFile.path]).json)
            let r = try castscope(["analyze", "--json", path])
            let json = try #require(r.json, "\(r.stderr)")
            #expect(Self.events(json) == Self.events(expected), "cut at \(cut) of \(gz.count): \(Self.events(json) ?? -1) recognized lines for \(Self.events(expected) ?? -1)")
            #expect(r.stderr.contains("\(path): at byte \(cut): gzip data cut short"), "\(r.stderr)")
        }
    }
    @Test("a reader of standard output that stops early (| head) ends the text report only: the page, the trace and the file:// tables asked for are written whole, and castscope still ends by SIGPIPE")
    func stdoutClosedEarlyKeepsTheFiles() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let one = try String(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"), encoding: .utf8)
        let input = dir.appendingPathComponent("many.txt")
        try String(repeating: one, count: 300).write(to: input, atomically: true, encoding: .utf8)
        let bin = packageRoot.appendingPathComponent(".build/debug/castscope").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-c", "\"$0\" analyze --html r.html --perfetto p.json --clickhouse \"file://$PWD/ch\" many.txt | head -c 100 > /dev/null; echo ${PIPESTATUS[0]}", bin]
        p.currentDirectoryURL = dir
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        let status = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(status == "141")
        let html = (try? String(contentsOf: dir.appendingPathComponent("r.html"), encoding: .utf8)) ?? ""
        #expect(html.hasSuffix("</html>\n") || html.hasSuffix("</html>"), "the page is written whole")
        let trace = (try? Data(contentsOf: dir.appendingPathComponent("p.json"))) ?? Data()
        #expect((try? JSONSerialization.jsonObject(with: trace)) != nil, "the trace is written whole")
        for (table, rows) in [("castscope_sessions", 300), ("castscope_inputs", 1)] {
            let text = (try? String(contentsOf: dir.appendingPathComponent("ch/\(table).jsonl"), encoding: .utf8)) ?? ""
            #expect(text.split(separator: "\n").count == rows, "\(table)")
        }
        let events = (try? String(contentsOf: dir.appendingPathComponent("ch/castscope_events.jsonl"), encoding: .utf8)) ?? ""
        #expect(events.hasSuffix("}\n"), "no torn last line")
    }
    @Test("--clickhouse file://DIR on a full disk leaves the last export whole (no torn line, no table removed) and says so",
          .enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"), "needs root and unshare for a private tmpfs"))
    func fileExportOnAFullDisk() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bin = packageRoot.appendingPathComponent(".build/debug/castscope").path
        let samples = packageRoot.appendingPathComponent("samples").path
        // A private mount namespace over a 256 KB tmpfs: the export, the disk filled, the export again.
        let script = """
            set -u
            M="$1"; B="$2"; S="$3"
            mount -t tmpfs -o size=256k tmpfs "$M" || exit 90
            mkdir "$M/ch"
            "$B" analyze --clickhouse "file://$M/ch" "$S/stopped-10001" > /dev/null 2>&1 || exit 91
            cat "$M"/ch/*.jsonl | md5sum > "$M/before"
            avail=$(df -k --output=avail "$M" | tail -1)
            dd if=/dev/zero of="$M/fill" bs=1k count=$((avail - 6)) 2> /dev/null
            "$B" analyze --clickhouse "file://$M/ch" "$S/stopped-10001" "$S/retry-storm" "$S/jetsam-kill" "$S/healthy-jitsi" > /dev/null 2> "$M/err"
            echo "rc=$?"
            cat "$M"/ch/*.jsonl | md5sum | cmp -s - "$M/before" && echo same-files
            ls -A "$M/ch" | tr '\\n' ' '; echo
            cat "$M/err"
            """
        let mount = dir.appendingPathComponent("m")
        try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        p.arguments = ["-m", "/bin/bash", "-c", script, "sh", mount.path, bin, samples]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(text)")
        #expect(text.contains("rc=5"), "\(text)")
        #expect(text.contains("same-files"), "the last export is left as it was: \(text)")
        #expect(!text.contains("castscope-partial"), "nothing left beside it: \(text)")
        #expect(text.contains("No space left on device"), "\(text)")
        #expect(!text.contains("File exists"), "\(text)")
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// A journal of one relay session's `stats` entries, frame counts 1...n (a second apart), in
/// `dir/a.journal`, written by systemd-journal-remote.
func statsJournal(in dir: URL, entries n: Int, session: String = "7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69") throws {
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    let t0: Int64 = 1_773_306_904_673_211
    var text = ""
    for i in 1...n {
        text += "__REALTIME_TIMESTAMP=\(t0 + Int64(i) * 1_000_000)\n_PID=811\nSYSLOG_IDENTIFIER=broadcast-relay\n"
            + "RELAY_SESSION=\(session)\nMESSAGE=session \(session) stats frames=\(i) bytes=1 fps=10.0 dropped=0\n\n"
    }
    try makeJournal(Data(text.utf8), at: dir.appendingPathComponent("a.journal"))
}

/// The frame counts of the whole `stats` event lines in tail's JSON output.
func statsSeqs(_ text: String) -> [Int] {
    text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().compactMap { line in
        guard line.hasPrefix("{\"type\":\"event\""), line.hasSuffix("}"), let r = line.range(of: "stats frames=") else { return nil }
        return Int(line[r.upperBound...].prefix(while: \.isNumber))
    }
}

/// The lines of standard error that are castscope's errors.
func errorLines(_ stderr: String) -> [Substring] {
    stderr.split(separator: "\n").filter { $0.hasPrefix("castscope: error:") }
}

@Suite("hostile round 9: tail's output, outputs over inputs and each other", .serialized,
       .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote), "needs systemd-journal-remote"))
struct HostileRound9Tests {
    static let binary = packageRoot.appendingPathComponent(".build/debug/castscope").path

    @Test("tail whose standard output cannot be written (a file size limit, /dev/full, closed, a pipe whose reader left with SIGPIPE ignored) ends with exit 5 and one line, its cursor never past what was written")
    func tailStdoutUnwritable() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journals = dir.appendingPathComponent("j")
        try statsJournal(in: journals, entries: 3000)
        let cursor = dir.appendingPathComponent("cur").path
        let out = dir.appendingPathComponent("out").path
        let err = dir.appendingPathComponent("err").path
        // A disk that fills up: a file size limit of 200 KB (EFBIG), two batches whole and the
        // third torn. (`timeout` only ends a tail that did not stop by itself: the bug.)
        let r = try runShell("ulimit -f 400; exec timeout -s KILL 60 \"$0\" tail -D \"$1\" --from-start --json --events --cursor-file \"$2\" < /dev/null > \"$3\" 2> \"$4\"",
                             [Self.binary, journals.path, cursor, out, err])
        let stderr = try String(contentsOfFile: err, encoding: .utf8)
        #expect(r.status == 5, "\(stderr)")
        #expect(errorLines(stderr) == ["castscope: error: standard output: cannot write: File too large"], "\(stderr)")
        let written = try String(contentsOfFile: out, encoding: .utf8)
        let first = statsSeqs(written)
        #expect(!first.isEmpty && first == Array(1...first.count))
        // The cursor is an entry whose line was written whole, with no pending batch.
        let saved = try String(contentsOfFile: cursor, encoding: .utf8).split(separator: "\n")
        #expect(saved.count == 1, "\(saved)")
        let committed = try #require(saved.first.map(String.init))
        let line = written.split(separator: "\n").first { $0.contains("\"cursor\":\"\(committed)\"") }
        let committedSeq = try #require(line.flatMap { statsSeqs(String($0) + "\n").first }, "the cursor's entry was not written: \(committed)")
        #expect(committedSeq < 3000)
        // The restart prints every entry after it.
        let tail = try TailProcess(directory: journals, cursor: URL(fileURLWithPath: cursor), scratch: dir)
        #expect(tail.out.waitFor(timeout: 60) { _ in tail.seen.last?.0 == 3000 }, "\(tail.seen.count) \(tail.stderr)")
        tail.stop(SIGTERM)
        #expect(tail.seen.map(\.0) == Array((committedSeq + 1)...3000))

        // /dev/full, a closed standard output: nothing delivered, nothing committed.
        for redirect in ["> /dev/full", ">&-"] {
            try? FileManager.default.removeItem(atPath: cursor)
            let r = try runShell("exec timeout -s KILL 60 \"$0\" tail -D \"$1\" --from-start --json --events --cursor-file \"$2\" < /dev/null \(redirect) 2> \"$3\"",
                                 [Self.binary, journals.path, cursor, err])
            let stderr = try String(contentsOfFile: err, encoding: .utf8)
            #expect(r.status == 5, "\(redirect): \(stderr)")
            #expect(errorLines(stderr).count == 1 && errorLines(stderr)[0].hasPrefix("castscope: error: standard output: cannot write: "), "\(redirect): \(stderr)")
            #expect((try? String(contentsOfFile: cursor, encoding: .utf8)) ?? "-\n" == "-\n", "\(redirect)")
        }
        // Standard input alone.
        let storm = packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt").path
        let s = try runShell("exec timeout -s KILL 60 \"$0\" tail --no-journal - < \"$1\" > /dev/full", [Self.binary, storm])
        #expect(s.status == 5 && errorLines(s.stderr) == ["castscope: error: standard output: cannot write: No space left on device"], "\(s.stderr)")
        // SIGPIPE ignored (systemd's IgnoreSIGPIPE=yes) and the reader gone: as analyze ends.
        let status = dir.appendingPathComponent("status").path
        try? FileManager.default.removeItem(atPath: cursor)
        let p = try runShell("(trap '' PIPE; timeout -s KILL 60 \"$0\" tail -D \"$1\" --from-start --json --events --cursor-file \"$2\" < /dev/null 2> \"$3\"; echo $? > \"$4\") | head -c 1 > /dev/null; wait",
                             [Self.binary, journals.path, cursor, err, status])
        #expect(p.status == 0)
        let piped = try String(contentsOfFile: err, encoding: .utf8)
        #expect(try String(contentsOfFile: status, encoding: .utf8) == "5\n", "\(piped)")
        #expect(errorLines(piped) == ["castscope: error: standard output: cannot write: Broken pipe"], "\(piped)")
    }

    @Test("tail -D on a folder of more journal files than the soft open-file limit reads them all (the limit raised to the hard one, as journalctl does); past the hard limit, one line naming it")
    func moreJournalFilesThanTheFileLimit() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journals = dir.appendingPathComponent("jm")
        for i in 0..<50 {
            try statsJournal(in: journals.appendingPathComponent("part\(i)"), entries: 2, session: String(format: "00000000-0000-4000-8000-%012d", i))
            try FileManager.default.moveItem(at: journals.appendingPathComponent("part\(i)/a.journal"), to: journals.appendingPathComponent("f\(i).journal"))
            try FileManager.default.removeItem(at: journals.appendingPathComponent("part\(i)"))
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "ulimit -Sn 30 && exec \"$0\" tail -D \"$1\" --from-start --json --events", Self.binary, journals.path]
        let pipe = Pipe()
        p.standardOutput = pipe
        let errURL = dir.appendingPathComponent("err")
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        p.standardError = try FileHandle(forWritingTo: errURL)
        p.standardInput = FileHandle.nullDevice
        let out = LineCollector(pipe.fileHandleForReading)
        try p.run()
        let events = { out.all.filter { $0.0.hasPrefix("{\"type\":\"event\"") }.count }
        #expect(out.waitFor(timeout: 60) { _ in events() == 100 || !p.isRunning }, "\(events()) of 100")
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        let stderr = try String(contentsOf: errURL, encoding: .utf8)
        #expect(events() == 100 && p.terminationStatus == 0, "\(stderr)")
        #expect(errorLines(stderr).isEmpty, "\(stderr)")
        // A hard limit too low: said in one line, naming the limit and how to raise it.
        let r = try runShell("ulimit -n 30 && exec timeout -s KILL 60 \"$0\" tail -D \"$1\" --from-start --json --events < /dev/null", [Self.binary, journals.path])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(errorLines(r.stderr) == ["castscope: error: \(journals.path): more journal files than may be open at once: raise the open-file limit (30), e.g. ulimit -n or LimitNOFILE= in the unit, or follow fewer files"], "\(r.stderr)")
    }

    @Test("a cursor file saved from an editor (CRLF after it, a byte order mark before it) is the cursor: tail resumes after it")
    func cursorFromAnEditor() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journals = dir.appendingPathComponent("j")
        try statsJournal(in: journals, entries: 50)
        let first = try TailProcess(directory: journals, cursor: dir.appendingPathComponent("c0"), scratch: dir, extra: ["--from-start"])
        #expect(first.out.waitFor(timeout: 60) { _ in first.seen.count == 50 }, "\(first.stderr)")
        first.stop(SIGTERM)
        let line = try #require(first.out.all.map(\.0).first { $0.contains("stats frames=25 ") })
        let r = try #require(line.range(of: "\"cursor\":\""))
        let cursor = String(line[r.upperBound...].prefix { $0 != "\"" })
        for (name, bytes) in [("crlf", Array(cursor.utf8) + [0x0D, 0x0A]), ("bom", [0xEF, 0xBB, 0xBF] + Array(cursor.utf8) + [0x0A]),
                              ("both", [0xEF, 0xBB, 0xBF] + Array(cursor.utf8) + [0x0D, 0x0A])] {
            let file = dir.appendingPathComponent(name)
            try Data(bytes).write(to: file)
            let tail = try TailProcess(directory: journals, cursor: file, scratch: dir)
            #expect(tail.out.waitFor(timeout: 60) { _ in tail.seen.last?.0 == 50 || !tail.process.isRunning }, "\(name): \(tail.stderr)")
            tail.stop(SIGTERM)
            #expect(tail.seen.map(\.0) == Array(26...50), "\(name): \(tail.stderr)")
            #expect(tail.stderr.contains("resuming after the saved cursor") && errorLines(tail.stderr).isEmpty, "\(name): \(tail.stderr)")
        }
    }
}

@Suite("hostile round 9: definitions, config and outputs that share a file")
struct HostileRound9OutputTests {
    static let storm = packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt").path

    @Test("--parsers DIR ($CASTSCOPE_PARSERS) and --config FILE are inputs: no output is written into or over them, --force or not")
    func definitionsAndConfigAreInputs() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let pdir = dir.appendingPathComponent("pdir")
        try FileManager.default.createDirectory(at: pdir, withIntermediateDirectories: true)
        let definition = pdir.appendingPathComponent("apple-default.json")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("parsers/formats/apple-default.json"), to: definition)
        let kept = try Data(contentsOf: definition)
        let cfg = dir.appendingPathComponent("cfg.json")
        let config = Data("{\"thresholds\": {\"min-fps\": 8}}\n".utf8)
        try config.write(to: cfg)
        let journals = dir.appendingPathComponent("j")
        try FileManager.default.createDirectory(at: journals, withIntermediateDirectories: true)
        let p = pdir.path, c = cfg.path
        let runs: [([String], [String: String])] = [
            (["analyze", Self.storm, "--parsers", p, "--json", "-o", p + "/report.json"], [:]),
            (["analyze", Self.storm, "--json", "-o", p + "/report.json"], ["CASTSCOPE_PARSERS": p]),
            (["analyze", Self.storm, "--parsers", p, "--json", "-o", definition.path, "--force"], [:]),
            (["analyze", Self.storm, "--parsers", p, "--html", p + "/r.html"], [:]),
            (["analyze", Self.storm, "--parsers", p, "--perfetto", p + "/t.json"], [:]),
            (["analyze", Self.storm, "--parsers", p, "--clickhouse", "file://" + p + "/ch"], [:]),
            (["analyze", Self.storm, "--config", c, "-o", c, "--force"], [:]),
            (["analyze", Self.storm, "--config", c, "--html", c, "--force"], [:]),
            (["tail", "-D", journals.path, "--parsers", p, "--cursor-file", p + "/cur"], [:]),
            (["tail", "-D", journals.path, "--config", c, "--cursor-file", c, "--cursor-reset"], [:]),
            (["tail", "-D", journals.path, "--parsers", p, "--clickhouse", "file://" + p], [:]),
        ]
        for (args, env) in runs {
            let r = try castscope(args, env: env)
            #expect(r.status == 2, "\(args) \(env): \(r.stderr)")
            #expect(errorLines(r.stderr).count == 1 && r.stderr.contains("never write"), "\(args): \(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: p) == ["apple-default.json"])
        #expect(try Data(contentsOf: definition) == kept)
        #expect(try Data(contentsOf: cfg) == config)
        // Beside them is fine.
        let ok = try castscope(["analyze", Self.storm, "--parsers", p, "--config", c, "--json", "-o", dir.appendingPathComponent("r.json").path])
        #expect(ok.status == 0, "\(ok.stderr)")
    }

    @Test("a --clickhouse file:// table named by -o, --perfetto, --cursor-file or standard output, and an --html/--perfetto file standard output is redirected to: refused, exit 2")
    func outputsSharingAFile() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ch = dir.appendingPathComponent("ch")
        try FileManager.default.createDirectory(at: ch, withIntermediateDirectories: true)
        let journals = dir.appendingPathComponent("j")
        try FileManager.default.createDirectory(at: journals, withIntermediateDirectories: true)
        let url = "file://" + ch.path
        let bin = HostileRound9Tests.binary
        let cases: [String] = [
            "exec \"$0\" analyze \"$1\" --clickhouse \"$2\" -o \"$3\"/castscope_sessions.jsonl",
            "exec \"$0\" analyze \"$1\" --clickhouse \"$2\" -o \"$3\"/r.txt --perfetto \"$3\"/../ch/castscope_inputs.jsonl",
            "exec \"$0\" analyze \"$1\" --clickhouse \"$2\" > \"$3\"/castscope_events.jsonl",
            "exec \"$0\" analyze \"$1\" --html \"$3\"/r.html > \"$3\"/r.html",
            "exec \"$0\" analyze \"$1\" --perfetto \"$3\"/p.json > \"$3\"/p.json",
            "exec \"$0\" tail -D \"$4\" --clickhouse \"$2\" --cursor-file \"$3\"/castscope_events.jsonl < /dev/null",
            "exec \"$0\" tail -D \"$4\" --clickhouse \"$2\" < /dev/null > \"$3\"/castscope_findings.jsonl",
        ]
        for script in cases {
            let r = try runShell(script.replacingOccurrences(of: "exec \"$0\"", with: "exec timeout -s KILL 60 \"$0\""),
                                 [bin, Self.storm, url, ch.path, journals.path])
            #expect(r.status == 2 && errorLines(r.stderr).count == 1, "\(script): \(r.stderr)")
            // (what stdout got, for the redirected cases: the one error line only)
            for name in try FileManager.default.contentsOfDirectory(atPath: ch.path) {
                let text = try String(contentsOfFile: ch.appendingPathComponent(name).path, encoding: .utf8)
                #expect(text.isEmpty, "\(script): \(name) holds \(text.prefix(80))")
            }
        }
        // The page on standard output by name is the report there, as before; beside the tables, fine.
        let page = try runShell("exec \"$0\" analyze \"$1\" --html - > \"$2\"/r.html", [bin, Self.storm, ch.path])
        #expect(page.status == 0, "\(page.stderr)")
        let beside = try castscope(["analyze", Self.storm, "--clickhouse", url, "-o", ch.appendingPathComponent("report.txt").path])
        #expect(beside.status == 0, "\(beside.stderr)")
    }
}

/// `script` run by bash in a private mount namespace (`unshare -m`), `$1` a scratch folder to
/// mount on, then `args`: standard output and error together, and the exit status.
func inPrivateMounts(_ script: String, _ args: [String]) throws -> (status: Int32, text: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
    p.arguments = ["-m", "/bin/bash", "-c", script, "sh"] + args
    let out = Pipe()
    p.standardOutput = out
    p.standardError = out
    p.standardInput = FileHandle.nullDevice
    try p.run()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    return (p.terminationStatus, text)
}

@Suite("hostile round 9: tail on file systems that refuse writes", .serialized,
       .enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
                && FileManager.default.isExecutableFile(atPath: journalRemote), "needs root, unshare and systemd-journal-remote"))
struct HostileRound9MountTests {
    @Test("tail --cursor-file in a folder that exists but cannot be written (read-only, full): exit 2 before anything is read, one line naming the cursor file")
    func cursorFolderUnwritable() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journals = dir.appendingPathComponent("j")
        try statsJournal(in: journals, entries: 600)
        let mount = dir.appendingPathComponent("m")
        try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
        let script = """
            set -u
            M="$1"; B="$2"; J="$3"
            mount -t tmpfs -o size=64k,ro tmpfs "$M" || exit 90
            timeout -s KILL 60 "$B" tail -D "$J" --from-start --json --events --cursor-file "$M/cur" > "$J/../out-ro" 2>&1
            echo "rc=$? lines=$(wc -l < "$J/../out-ro")"; cat "$J/../out-ro"
            mount -o remount,rw "$M" || exit 91
            dd if=/dev/zero of="$M/fill" bs=4k 2> /dev/null
            timeout -s KILL 60 "$B" tail -D "$J" --from-start --json --events --cursor-file "$M/cur" > "$J/../out-full" 2>&1
            echo "rc=$? lines=$(wc -l < "$J/../out-full")"; cat "$J/../out-full"
            ls -A "$M" | tr '\\n' ' '
            """
        let r = try inPrivateMounts(script, [mount.path, HostileRound9Tests.binary, journals.path])
        #expect(r.status == 0, "\(r.text)")
        let lines = r.text.split(separator: "\n").map(String.init)
        #expect(lines.count == 5, "\(r.text)")
        guard lines.count == 5 else { return }
        #expect(lines[0] == "rc=2 lines=1")
        #expect(lines[1] == "castscope: error: --cursor-file \(mount.path)/cur: its folder cannot be written: Read-only file system")
        #expect(lines[2] == "rc=2 lines=1")
        #expect(lines[3] == "castscope: error: --cursor-file \(mount.path)/cur: its folder cannot be written: No space left on device")
        #expect(lines[4] == "fill ", "nothing left beside it")
    }
}

@Suite("hostile round 9: small things")
struct HostileRound9SmallTests {
    @Test("tail --clickhouse file:// appends after whole rows: a torn last row (a full disk, a kill) is cut back to its line's start, never joined by the next row")
    func tornRowCutBeforeAppending() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ch = dir.appendingPathComponent("ch")
        func run() throws {
            let r = try runShell("exec timeout -s KILL 60 \"$0\" tail --no-journal - --clickhouse \"$1\" < \"$2\" > /dev/null",
                                 [HostileRound9Tests.binary, "file://" + ch.path, HostileRound9OutputTests.storm])
            #expect(r.status == 0, "\(r.stderr)")
        }
        func rows(_ table: String) throws -> [Substring] {
            let text = try String(contentsOf: ch.appendingPathComponent(table), encoding: .utf8)
            #expect(text.hasSuffix("}\n"), "\(table)")
            return text.split(separator: "\n")
        }
        try run()
        let events = try rows("castscope_events.jsonl").count
        #expect(events > 10)
        // A row torn by a full disk: half of it, no newline.
        let table = ch.appendingPathComponent("castscope_events.jsonl")
        let handle = try FileHandle(forWritingTo: table)
        handle.seekToEndOfFile()
        handle.write(Data("{\"BundleId\":\"0123\",\"SessionId\":".utf8))
        try handle.close()
        try run()
        let after = try rows("castscope_events.jsonl")
        #expect(after.count == 2 * events)
        for line in after {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "not a JSON row: \(line.prefix(120))")
        }
    }

    @Test("a negative number given to an option that takes one is refused for its range, not as a missing value", arguments: [
        (["--stall-seconds", "-5"], "--stall-seconds: threshold 'stall-seconds' needs a number from 0 to 1000000000, got '-5.0'"),
        (["--min-fps", "-1"], "--min-fps: threshold 'min-fps' needs a number from 0 to 1000000000, got '-1.0'"),
        (["--retry-storm-attempts", "-1"], "--retry-storm-attempts: threshold 'retry-storm-attempts' needs a number from 0 to 1000000000, got '-1.0'"),
        (["--clock-skew-seconds", "-1"], "--clock-skew-seconds: threshold 'clock-skew-seconds' needs a number from 0 to 1000000000, got '-1.0'"),
        (["--width", "-1"], "--width must be 0 (no limit) or more, got -1"),
        (["--max-nesting", "-1"], "--max-nesting must be 0 or more"),
        (["-n", "-1"], "-n/--last must be at least 1, got -1"),
        (["--threads", "-2"], "--threads must be at least 1, got -2"),
        (["--max-events", "-3"], "--max-events must be at least 1"),
        (["--max-bytes", "0"], "--max-bytes must be a number of bytes above 0 (e.g. 500M, 4G), got '0'"),
    ])
    func negativeOptionValues(_ args: [String], _ message: String) throws {
        let r = try castscope(["analyze", HostileRound9OutputTests.storm, "--oneline"] + args)
        #expect(r.status == 2)
        #expect(errorLines(r.stderr).first.map { $0.hasPrefix("castscope: error: " + message) } == true, "\(r.stderr)")
    }

    @Test("new reports (-o, --html, --perfetto) follow the umask, as a shell's > does; a replaced one keeps its mode", arguments: ["077", "022", "002"])
    func reportsFollowTheUmask(_ mask: String) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let storm = HostileRound9OutputTests.storm
        let r = try runShell("umask \(mask) && cd \"$2\" && exec \"$0\" analyze \"$1\" --json -o r.json --html r.html --perfetto r.perfetto.json > out.txt",
                             [HostileRound9Tests.binary, storm, dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        let expected = 0o666 & ~Int(mask, radix: 8)!
        for name in ["r.json", "r.html", "r.perfetto.json", "out.txt"] {
            let mode = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent(name).path)[.posixPermissions] as? Int
            #expect(mode == expected, "\(name): \(String(mode ?? 0, radix: 8)) under umask \(mask)")
        }
        chmod(dir.appendingPathComponent("r.json").path, 0o640)
        #expect(try runShell("umask \(mask) && exec \"$0\" analyze \"$1\" --json -o \"$2\"/r.json", [HostileRound9Tests.binary, storm, dir.path]).status == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("r.json").path)[.posixPermissions] as? Int == 0o640)
    }
}

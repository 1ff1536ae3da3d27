import Foundation
import Testing

@testable import CastscopeKit

/// Found by a second fuzz of the release binary, aimed at the writers: documents that did not
/// parse or broke their schema, values out of a column's range, raw control characters in
/// HTML and on stderr, a Markdown ticket past its limit, two reports on standard output, and
/// `tail` regrouping every relay session at every line.
@Suite("Hostile values in every output")
struct HostileOutputsTests {
    func write(_ files: [String: String]) throws -> URL {
        let dir = try temporaryDirectory()
        for (name, text) in files { try Data(text.utf8).write(to: dir.appendingPathComponent(name)) }
        return dir
    }

    static let device = """
        Timestamp                       (process)[PID]
        2026-03-12 10:20:04.360000+0100 localhost BroadcastExtension[1204]: didConnectToRoom: <TVIRoom: 0x1>
        2026-03-12 10:20:04.370000+0100 localhost BroadcastExtension[1204]: room: ABC didFailToConnectWithError: Error Domain=com.twilio.video Code=53002 "Signaling connection timed out"
        2026-03-12 10:20:04.380000+0100 localhost BroadcastExtension[1204]: Error Domain=com.twilio.video Code=53002 "Signaling connection timed out"
        2026-03-12 10:20:04.390000+0100 localhost BroadcastExtension[1204]: DEBUG:TwilioVideo:[Core]:onTerminated: code: 53002 msg: Signaling connection timed out explanation:

        """

    static func relay(fps: String, frames: String) -> String {
        """
        2026-03-12T09:20:03.000000+00:00 relay1 broadcast-relay[811]: session 7c1e0d52 accepted peer=iPhone14,2 room=standup
        2026-03-12T09:20:03.010000+00:00 relay1 broadcast-relay[811]: session 7c1e0d52 stats frames=\(frames) bytes=100 fps=\(fps) dropped=-3
        2026-03-12T09:20:04.010000+00:00 relay1 broadcast-relay[811]: session 7c1e0d52 stats frames=10 bytes=100 fps=nan dropped=0
        2026-03-12T09:20:05.000000+00:00 relay1 broadcast-relay[811]: session 7c1e0d52 closed reason=peer-eof frames=-7 duration=2.0s

        """
    }

    @Test("a relay's fps of inf, nan or past a Float and negative counts: Perfetto parses, the JSON report validates",
          arguments: [("inf", "10"), ("-inf", "-5"), ("1.7976931348623157e308", "99999999999"), ("nan", "-1")])
    func nonFiniteStats(_ fps: String, _ frames: String) throws {
        let dir = try write(["device.txt": Self.device, "relay.txt": Self.relay(fps: fps, frames: frames)])
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: out) }
        let perfetto = out.appendingPathComponent("trace.json")
        let r = try castscope(["analyze", "--json", "--perfetto", perfetto.path, dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect((try? JSONSerialization.jsonObject(with: Data(contentsOf: perfetto))) != nil, "Perfetto JSON does not parse")
        let joined = (r.json?["sessions"] as? [[String: Any]])?.first?["relay"] as? [String: Any]
        #expect(joined != nil, "the relay session is joined (the fps series is written)")
        let relays = r.json?["relaySessions"] as? [[String: Any]] ?? []
        #expect(relays.allSatisfy { (($0["frames"] as? Int) ?? 0) >= 0 }, "\(relays)")
        let report = out.appendingPathComponent("report.json")
        try Data(r.stdout.utf8).write(to: report)
        let v = Process()
        v.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        v.arguments = ["python3", packageRoot.appendingPathComponent("scripts/validate-json.py").path, "report", report.path]
        let pipe = Pipe()
        v.standardOutput = pipe
        try v.run()
        let said = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        v.waitUntilExit()
        // (the script names each violation on a line of its own, then `report=N`)
        #expect(said.trimmingCharacters(in: .whitespacesAndNewlines) == "report=1", "\(said)")
    }

    @Test("a zone offset of +9999 or -2400 is no zone: the line is not read as a time no RFC 3339 can write")
    func impossibleOffsets() throws {
        let dir = try write(["log.txt": """
            2026-03-12 10:20:00.492204+9999 0x1 Default 0x0 915 0 BroadcastExtension: broadcast started
            2026-03-12 10:20:00.592204-2400 0x1 Default 0x0 915 0 BroadcastExtension: open socket connection
            2026-03-12 10:20:00.692204+0100 0x1 Default 0x0 915 0 BroadcastExtension: client stream open completed

            """])
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try castscope(["analyze", "--json", dir.path])
        #expect(!r.stdout.contains("+100:") && !r.stdout.contains("-100:"), "\(r.stdout)")
        #expect((r.json?["inputs"] as? [[String: Any]])?.first?["unparsed"] as? Int == 2)
    }

    @Test("ClickHouse DateTime values are held to 1970–2106")
    func dateTimeRange() throws {
        let dir = try write(["log.txt": """
            Timestamp                       (process)[PID]
            9999-12-31 23:59:59.000000+0000  localhost BroadcastExtension[1204]: broadcast started
            9999-12-31 23:59:59.500000+0000  localhost BroadcastExtension[1204]: open socket connection

            """])
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try castscope(["analyze", "--oneline", "--clickhouse", "file://" + out.path, dir.appendingPathComponent("log.txt").path])
        #expect(r.status == 0, "\(r.stderr)")
        for table in ClickHouseSchema.tables {
            let text = try String(contentsOf: out.appendingPathComponent(table + ".jsonl"), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let row = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                for (k, v) in row where ["Timestamp", "Start", "End", "ConnectedAt"].contains(k) {
                    if let n = v as? Int { #expect((0...4_294_967_295).contains(n), "\(table).\(k) = \(n)") }
                }
            }
        }
    }

    @Test("HTML and stderr carry no raw control characters from the input; a config key with a NUL is one whole line")
    func controls() throws {
        let dir = try write([
            "relay.txt": "2026-03-12T09:20:00.000000+00:00 relay1 broadcast-relay[811]: session s\u{1b}[2J\u{7}\u{7f}\u{202e}x accepted peer=p\u{1b}]0;t\u{7} room=r\n",
            "escape.json": "{\"thresholds\":{\"min-fps\\u001b[2J\":1}}",
            "nul.json": "{\"thresholds\":{\"x\\u0000y\":1}}",
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let html = dir.appendingPathComponent("r.html")
        let r = try castscope(["analyze", "--oneline", "--html", html.path, dir.appendingPathComponent("relay.txt").path])
        #expect(r.status == 0, "\(r.stderr)")
        let bytes = try Data(contentsOf: html)
        #expect(!bytes.contains { ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D) || $0 == 0x7F }, "raw control in the HTML")
        #expect(!String(decoding: bytes, as: UTF8.self).contains("\u{202e}"))
        for name in ["escape.json", "nul.json"] {
            let c = try castscope(["analyze", "--oneline", "--config", dir.appendingPathComponent(name).path, packageRoot.appendingPathComponent("samples/relay").path])
            #expect(c.status == 2)
            #expect(!c.stderr.contains("\u{1b}") && c.stderr.hasSuffix("\n") && c.stderr.contains("' (known:"), "\(c.stderr)")
        }
    }

    @Test("the Markdown ticket keeps to 65,536 characters with 400 orphan relay sessions, and says what it left out")
    func markdownLimit() throws {
        var text = ""
        for k in 0..<400 { text += "2026-03-12T09:\(20 + k / 60):\(String(format: "%02d", k % 60)).000000+00:00 relay1 broadcast-relay[811]: session s\(k) accepted peer=iPhone14,2 room=standup\n" }
        let dir = try write(["relay.txt": text])
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try castscope(["analyze", "--no-pager", "--markdown", dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.count <= 65_536, "\(r.stdout.count)")
        #expect(r.stdout.contains("380 orphan relay sessions"))
        let full = try castscope(["analyze", "--no-pager", "--markdown-full", dir.path])
        #expect(full.stdout.components(separatedBy: "- relay session `").count - 1 == 400)
    }

    @Test("two reports asked for on standard output are refused, whichever extra comes first")
    func twoOnStdout() throws {
        for args in [["--html", "-", "--perfetto", "-"], ["--json", "--perfetto", "-"]] {
            let r = try castscope(["analyze"] + args + [packageRoot.appendingPathComponent("samples/retry-storm").path])
            #expect(r.status == 2, "\(args): \(r.status)")
            #expect(r.stdout.isEmpty)
        }
    }

    @Test("tail takes a relay session line by line (as analyze groups it) and names lines it could not read")
    func tailRelay() throws {
        var text = ""
        for k in 0..<3_000 {
            text += "2026-03-12T09:20:00.\(String(format: "%06d", k))+00:00 relay1 broadcast-relay[811]: session one stats frames=10 bytes=1 fps=10.0 dropped=0\n"
        }
        text += "2026-03-12T09:20:01.000000+00:00 relay1 broadcast-relay[811]: session one closed reason=peer-eof duration=1.0s\n"
        text += String(repeating: "x", count: 1_100_000) + "\n"
        let r = try castscope(["tail", "--no-journal", "--json", "-"], stdin: Data(text.utf8))
        let lines = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let closed = lines.first { ($0["type"] as? String) == "relay" && ($0["change"] as? String) == "closed" }
        #expect(closed?["frames"] as? Int == 30_000, "\(String(describing: closed))")
        #expect(r.status == 1)
        #expect(r.stderr.contains("<stdin>:3002: line of 1100000 bytes is longer than"), "\(r.stderr)")
    }

    @Test("a file size limit (ulimit -f) is an output not written: exit 5, one line, no temporary file left (it was SIGXFSZ, 153)")
    func fileSizeLimit() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let binary = packageRoot.appendingPathComponent(".build/debug/castscope").path
        let out = dir.appendingPathComponent("report.json").path
        let (status, text) = try runShell("ulimit -f 8; exec \"$0\" analyze --json -o \"$1\" \"$2\"", [binary, out, packageRoot.appendingPathComponent("samples").path])
        #expect(status == 5, "\(status): \(text)")
        #expect(text.contains("report.json: cannot write"), "\(text)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty, "a temporary file was left")
    }

    @Test("a password in --clickhouse's URL is not copied into the reports' command line")
    func clickhousePasswordNotInReports() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = "http://alice:S3cretPw@127.0.0.1:1/?database=x&password=Other9"
        let sample = packageRoot.appendingPathComponent("samples/retry-storm").path
        var texts: [String] = []
        for (k, args) in [["--json", "-o", "r.json", "--html", "r.html", "--perfetto", "r.trace"], ["--markdown", "-o", "r.md"]].enumerated() {
            let r = try castscope(["analyze"] + args.map { $0.hasPrefix("r.") ? dir.appendingPathComponent($0).path : $0 }
                                  + ["--clickhouse", url, "--clickhouse-retries", "0", sample])
            #expect(r.status == 5, "\(k): \(r.stderr)")
            texts.append(r.stderr)
        }
        for name in ["r.json", "r.html", "r.trace", "r.md"] { texts.append(try String(contentsOfFile: dir.appendingPathComponent(name).path, encoding: .utf8)) }
        for text in texts { #expect(!text.contains("S3cretPw") && !text.contains("Other9")) }
        #expect(texts[2].contains("alice:***@127.0.0.1"), "\(texts[2].prefix(600))")
    }

    @Test("a ClickHouse that takes the connection and never answers fails the attempt after --clickhouse-timeout (it held analyze 6 minutes)")
    func clickhouseTimeout() throws {
        // A socket that listens and never accepts: the kernel completes the handshake and
        // takes the request; no answer ever comes.
        let (fd, port) = boundLoopbackSocket()
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(listen(fd, 16) == 0)
        let sample = packageRoot.appendingPathComponent("samples/healthy-jitsi").path
        let start = Date()
        let r = try castscope(["analyze", "-q", "--clickhouse", "http://127.0.0.1:\(port)/", "--clickhouse-timeout", "1",
                               "--clickhouse-retries", "2", sample])
        let took = Date().timeIntervalSince(start)
        #expect(r.status == 5, "\(r.status): \(r.stderr)")
        #expect(r.stderr.contains("reading the answer: no answer within 1 s (--clickhouse-timeout)"), "\(r.stderr)")
        #expect(took < 30, "took \(took) s")
        let bad = try castscope(["analyze", "--clickhouse", "http://127.0.0.1:\(port)/", "--clickhouse-timeout", "0", sample])
        #expect(bad.status == 2, "\(bad.status)")
        #expect(bad.stderr.contains("--clickhouse-timeout must be at least 1"), "\(bad.stderr)")
    }

    @Test("an earlier report inside a bundle is not read as a log; a report redirected onto an input is refused; show's exit codes are analyze's")
    func ownReportsAndRedirects() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bundle = dir.appendingPathComponent("b")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let log = bundle.appendingPathComponent("syslog.txt")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt"), to: log)
        let alone = try castscope(["analyze", "--json", bundle.path])
        let sessions = (try #require(alone.json)["sessions"] as? [Any])?.count
        // Every report format, kept beside the customer's log.
        for (name, args) in [("r.txt", ["-o"]), ("r.json", ["--json", "-o"]), ("r.md", ["--markdown", "-o"]), ("r.html", ["--html"]), ("r.trace", ["--perfetto"])] {
            let out = dir.appendingPathComponent(name).path
            let made = try castscope(["analyze"] + args + [out] + (args == ["--html"] || args == ["--perfetto"] ? ["-o", "/dev/null"] : []) + [log.path])
            #expect(made.status == 0, "\(name): \(made.stderr)")
            try FileManager.default.copyItem(atPath: out, toPath: bundle.appendingPathComponent(name).path)
        }
        let again = try castscope(["analyze", "--json", bundle.path])
        let json = try #require(again.json)
        #expect((json["sessions"] as? [Any])?.count == sessions, "\(again.stdout.prefix(400))")
        let inputs = json["inputs"] as? [[String: Any]] ?? []
        #expect(inputs.filter { ($0["notes"] as? [String] ?? []).contains("a castscope report, not a log: not read") }.count == 5, "\(inputs)")
        // castscope's own stderr line pasted before a log is no report: the log is read.
        let pasted = dir.appendingPathComponent("ticket.txt")
        try ("castscope: error: nothing recognized: earlier.log is empty\n" + String(decoding: try Data(contentsOf: log), as: UTF8.self)).write(to: pasted, atomically: true, encoding: .utf8)
        let read = try castscope(["analyze", "--json", pasted.path])
        #expect((try #require(read.json)["sessions"] as? [Any])?.count == sessions, "\(read.stderr)")
        // A report named alone: said so (it was "none of the 1 file could be read (errors above)").
        let alone1 = try castscope(["analyze", bundle.appendingPathComponent("r.txt").path])
        #expect(alone1.status == 4 && alone1.stderr.contains("r.txt is a castscope report, not a log"), "\(alone1.stderr)")
        // `>> input` and `1<> input`: refused before anything is written (exit 2), the input unchanged.
        let binary = packageRoot.appendingPathComponent(".build/debug/castscope").path
        let before = try Data(contentsOf: log)
        for script in ["exec \"$0\" analyze \"$1\" >> \"$1\"", "exec \"$0\" show \"$1\" 1<> \"$1\"", "exec \"$0\" analyze - < \"$1\" >> \"$1\""] {
            let (status, text) = try runShell(script, [binary, log.path])
            #expect(status == 2 && text.contains("castscope never writes over an input"), "\(script): \(status) \(text)")
            #expect(try Data(contentsOf: log) == before, "\(script)")
        }
        // show: a missing path 4, an output not written 5 (both were 1).
        let missing = try castscope(["show", dir.appendingPathComponent("nope.log").path])
        #expect(missing.status == 4 && missing.stderr.hasPrefix("castscope: error: "), "\(missing.status) \(missing.stderr)")
        #expect(try runShell("exec \"$0\" show \"$1\" > /dev/full", [binary, log.path]).status == 5)
    }

    @Test("--clickhouse file:///dir does not replace a table file castscope did not write, without --force")
    func clickhouseFolderForeignFile() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sample = packageRoot.appendingPathComponent("samples/retry-storm").path
        let url = "file://" + dir.path
        #expect(try castscope(["analyze", sample, "--clickhouse", url]).status == 0)
        #expect(try castscope(["analyze", sample, "--clickhouse", url]).status == 0, "castscope's own rows are replaced")
        let inputs = dir.appendingPathComponent("castscope_inputs.jsonl")
        try "precious user data\n".write(to: inputs, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", sample, "--clickhouse", url])
        #expect(r.status == 2 && r.stderr.contains("castscope_inputs.jsonl exists and was not written by castscope: pass --force"), "\(r.stderr)")
        #expect(try String(contentsOf: inputs, encoding: .utf8) == "precious user data\n")
        #expect(try castscope(["analyze", sample, "--force", "--clickhouse", url]).status == 0)
    }
}

import Foundation
import Testing

@testable import CastscopeKit

let journalctl = "/usr/bin/journalctl"

/// What the real journalctl prints for a journal file in one output mode (`TZ` as given).
func journalctlOutput(_ file: URL, mode: String, tz: String = "UTC", env more: [String: String] = [:]) throws -> Data {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: journalctl)
    // (`mode` may carry further options after it: `short-iso --no-hostname`)
    p.arguments = ["--file=" + file.path, "--no-pager", "-o"] + mode.split(separator: " ").map(String.init)
    var env = ProcessInfo.processInfo.environment
    env["TZ"] = tz
    env["LC_ALL"] = "C"
    for (k, v) in more { env[k] = v }
    p.environment = env
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
    return data
}

/// Every output mode of the real journalctl, printed from the relay sample's journal file and
/// read back: the relay sessions are the ones the journal file itself gives, to the precision the
/// mode prints (seconds for `short`, `short-full`, `with-unit`; none for `short-monotonic`, whose
/// times count from boot; none for `cat`).
@Suite("journalctl: every output mode of a real journal reads back as the journal",
       .enabled(if: FileManager.default.isExecutableFile(atPath: journalctl)
           && FileManager.default.isExecutableFile(atPath: journalRemote), "needs journalctl and systemd-journal-remote (make test installs them)"))
struct JournalctlModesTests {
    enum Times { case exact, seconds, none }

    static let modes: [(mode: String, tz: String, format: String, times: Times)] = [
        ("short", "UTC", "journal-short-precise", .seconds),
        ("short-precise", "UTC", "journal-short-precise", .exact),
        ("short-iso", "UTC", "journal-short-iso", .seconds),
        ("short-iso-precise", "Asia/Kolkata", "journal-short-iso", .exact),
        ("short-full", "Europe/Berlin", "journal-short-full", .seconds),
        ("short-full", "America/New_York", "journal-short-full", .seconds),
        ("short-full", "Asia/Kathmandu", "journal-short-full", .seconds),
        ("with-unit", "UTC", "journal-short-full", .seconds),
        ("short-unix", "UTC", "journal-short-unix", .exact),
        ("short-monotonic", "UTC", "journal-short-monotonic", .none),
        ("short-delta", "UTC", "journal-short-monotonic", .none),
        ("verbose", "Europe/Helsinki", "journal-verbose", .exact),
        ("export", "UTC", "journal-export", .exact),
        ("json", "UTC", "journal-json", .exact),
        ("json-pretty", "UTC", "journal-json-pretty", .exact),
        ("json-seq", "UTC", "journal-json", .exact),
        ("json-sse", "UTC", "journal-json", .exact),
        // Without the hostname column (read as plain text, times lost, before session 39).
        ("short --no-hostname", "UTC", "journal-short-nohost", .seconds),
        ("short-precise --no-hostname", "UTC", "journal-short-nohost", .exact),
        ("short-iso --no-hostname", "UTC", "journal-short-nohost", .seconds),
        ("short-iso-precise --no-hostname", "Asia/Kolkata", "journal-short-nohost", .exact),
        ("short-full --no-hostname", "Europe/Berlin", "journal-short-nohost", .seconds),
        ("short-unix --no-hostname", "UTC", "journal-short-nohost", .exact),
        ("short-monotonic --no-hostname", "UTC", "journal-short-nohost", .none),
    ]

    @Test("each mode is detected as its format and gives the journal's relay sessions", arguments: modes.indices)
    func modeReadsBack(_ k: Int) throws {
        let (mode, tz, format, times) = Self.modes[k]
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = dir.appendingPathComponent("relay-\(mode.replacingOccurrences(of: " ", with: "_")).txt")
        try journalctlOutput(relayJournal, mode: mode, tz: tz).write(to: text)
        let got = try #require(try castscope(["analyze", "--json", text.path]).json)
        let want = try #require(try castscope(["analyze", "--json", relayJournal.path]).json)
        let input = try #require((got["inputs"] as? [[String: Any]])?.first)
        #expect(input["format"] as? String == format, "\(mode) TZ=\(tz)")
        #expect(input["records"] as? Int == 117, "\(mode) TZ=\(tz)")
        #expect(input["unparsed"] as? Int == 0, "\(mode) TZ=\(tz)")
        let g = try #require(got["relaySessions"] as? [[String: Any]])
        let w = try #require(want["relaySessions"] as? [[String: Any]])
        #expect(g.count == 5 && w.count == 5, "\(mode) TZ=\(tz)")
        for (a, b) in zip(g, w) {
            for key in ["id", "host", "peer", "room", "reason", "frames", "meanFps", "stalls", "errors"] where key != "host" || !mode.contains("--no-hostname") {
                #expect("\(a[key] ?? "-")" == "\(b[key] ?? "-")", "\(mode) TZ=\(tz): \(key)")
            }
            for key in ["accepted", "closed"] {
                let x = try #require(a[key] as? String)
                let y = try #require(b[key] as? String)
                switch times {
                case .exact: #expect(instant(x) == instant(y), "\(mode) TZ=\(tz): \(key) \(x) vs \(y)")
                case .seconds: #expect(instant(x) / 1_000_000 == instant(y) / 1_000_000, "\(mode) TZ=\(tz): \(key) \(x) vs \(y)")
                case .none: break
                }
            }
        }
        if times == .none {
            // Seconds since boot: each session starts at its line's count of seconds after
            // midnight (of today: the bundle gives no date), and the report says why.
            let lines = try String(contentsOf: text, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for session in g {
                let source = try #require(session["source"] as? String)
                let line = try #require(Int(source.split(separator: ":").last ?? ""))
                let bracket = lines[line - 1].dropFirst().prefix { $0 != "]" && $0 != "<" }
                let seconds = try #require(Double(bracket.trimmingCharacters(in: .whitespaces)))
                let accepted = instant(session["accepted"] as! String)
                #expect(accepted.floorDiv(86_400_000_000) * 86_400_000_000 + Int64((seconds * 1e6).rounded()) == accepted, "\(mode): \(source)")
            }
            let notes = input["notes"] as? [String] ?? []
            #expect(notes.contains { $0.contains("seconds since boot") }, "\(notes)")
            let text = try castscope(["analyze", "--no-color", text.path]).stdout
            #expect(text.contains("seconds since boot in the lines, no wall clock"), "\(text)")
        }
    }

    /// An RFC 3339 time as µs since the epoch.
    func instant(_ text: String) -> Int64 {
        TimeArgument.parse(text.replacingOccurrences(of: "T", with: " ")) ?? Int64.min
    }

    @Test("multi-line and binary messages: verbose, json-pretty and short-full keep every line of a message, and a binary one as journalctl shows it")
    func multiLineMessages() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        func binary(_ name: String, _ value: [UInt8]) -> Data {
            var d = Data((name + "\n").utf8)
            var n = UInt64(value.count).littleEndian
            d.append(Data(bytes: &n, count: 8))
            d.append(contentsOf: value)
            d.append(0x0A)
            return d
        }
        var export = Data()
        let head = "_BOOT_ID=9b2e6c1d4f3a4b5c8d7e6f5a4b3c2d1e\n_HOSTNAME=relay1\nSYSLOG_IDENTIFIER=broadcast-relay\n_PID=811\n"
        export.append(Data(("__REALTIME_TIMESTAMP=1773306904673211\n__MONOTONIC_TIMESTAMP=1000001000\n" + head).utf8))
        export.append(binary("MESSAGE", Array("session 0b7f3c1e accepted peer=iPhone14,2\nsecond line\n  third, indented".utf8)))
        export.append(Data("\n__REALTIME_TIMESTAMP=1773306905673211\n__MONOTONIC_TIMESTAMP=1000002000\n".utf8))
        export.append(Data(head.utf8))
        export.append(binary("MESSAGE", [0x62, 0x01, 0x02, 0x63]))
        export.append(Data("\n".utf8))
        let journal = dir.appendingPathComponent("multi.journal")
        try makeJournal(export, at: journal)
        for (mode, continuation) in [("verbose", "second line\n  third, indented"), ("json-pretty", "second line\n  third, indented"),
                                     ("short-full", "second line")] {
            let text = dir.appendingPathComponent("multi-\(mode).txt")
            try journalctlOutput(journal, mode: mode).write(to: text)
            let out = try castscope(["show", "--style", "ndjson", text.path])
            let lines = out.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(lines.count == 2, "\(mode): \(out.stdout)")
            let first = lines.first?["eventMessage"] as? String ?? ""
            #expect(first.hasPrefix("session 0b7f3c1e accepted peer=iPhone14,2"), "\(mode): \(first)")
            #expect(first.contains(continuation), "\(mode): \(first)")
            #expect(lines.first?["timestamp"] as? String == "2026-03-12 09:15:04.\(mode == "short-full" ? "000000" : "673211")+0000", "\(mode)")
            let second = lines.last?["eventMessage"] as? String ?? ""
            #expect(second == (mode == "json-pretty" ? "b\u{1}\u{2}c" : "[4B blob data]"), "\(mode): \(second)")
        }
    }

    @Test("verbose as a pager shows it: headers cut before the cursor's time, no blank lines between entries; the header's zone is read")
    func verboseCutByPager() throws {
        let text = """
            $ journalctl -o verbose _PID=1551
            Sat 2019-08-17 23:16:27.839596 PDT [s=018b5ea1065b4eca938caedebbf94c60;i=7952;b=
                PRIORITY=6
                SYSLOG_IDENTIFIER=broadcast-relay
                _PID=1551
                MESSAGE=session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=standup
            Sat 2019-08-17 23:16:29.839596 PDT [s=018b5ea1065b4eca938caedebbf94c60;i=7953;b=
                SYSLOG_IDENTIFIER=broadcast-relay
                MESSAGE=session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 closed reason=peer-eof frames=20 duration=2.0s
                _PID=1551

            """
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("verbose.txt")
        try Data(text.utf8).write(to: file)
        let got = try #require(try castscope(["analyze", "--json", file.path]).json)
        let input = try #require((got["inputs"] as? [[String: Any]])?.first)
        #expect(input["format"] as? String == "journal-verbose")
        #expect(input["records"] as? Int == 2)
        #expect(input["unparsed"] as? Int == 1)  // the prompt
        let relay = try #require((got["relaySessions"] as? [[String: Any]])?.first)
        #expect(relay["accepted"] as? String == "2019-08-18T06:16:27.839596+00:00")
        #expect(relay["closed"] as? String == "2019-08-18T06:16:29.839596+00:00")
    }
}

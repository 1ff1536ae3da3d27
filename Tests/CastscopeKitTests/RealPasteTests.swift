import Foundation
import Testing

@testable import CastscopeKit

/// Issue 13: what the field sends. Every family of real pastes, built from lines constructed
/// from the reference docs (several variants each), and a table over every stored real paste.
@Suite("real pastes")
struct RealPasteTests {
    struct Analysis {
        var json: [String: Any]
        var input: [String: Any] { ((json["inputs"] as? [[String: Any]]) ?? []).first ?? [:] }
        var format: String? { input["format"] as? String }
        var records: Int { input["records"] as? Int ?? -1 }
        var unparsed: Int { input["unparsed"] as? Int ?? -1 }
        var lines: Int { input["lines"] as? Int ?? -1 }
        var notes: [String] { input["notes"] as? [String] ?? [] }
        var errors: [String] { json["inputErrors"] as? [String] ?? [] }
        var sessions: [[String: Any]] { json["sessions"] as? [[String: Any]] ?? [] }
        var outcomes: [String] { sessions.compactMap { $0["outcome"] as? String } }
        var sdks: [String] { sessions.compactMap { $0["sdk"] as? String } }
        var findings: [[String: Any]] { json["findings"] as? [[String: Any]] ?? [] }
        var kinds: [String] { findings.compactMap { $0["kind"] as? String }.sorted() }
        var unattachedCount: Int { (json["unattached"] as? [Any])?.count ?? 0 }
        func messages(_ kind: String) -> [String] { findings.filter { $0["kind"] as? String == kind }.compactMap { $0["message"] as? String } }
        var events: [String] {
            let unattached = (json["unattached"] as? [[String: Any]] ?? []).compactMap { $0["event"] as? String }
            let timeline = sessions.flatMap { ($0["timeline"] as? [[String: Any]] ?? []).compactMap { $0["event"] as? String } }
            return (unattached + timeline).sorted()
        }
        func timeline(_ i: Int) -> [[String: Any]] { sessions[i]["timeline"] as? [[String: Any]] ?? [] }
    }

    /// Writes `text` to a file and runs `castscope analyze --json` on it.
    func analyze(dated: Bool = true, _ text: String, name: String = "paste.txt", _ args: [String] = []) throws -> Analysis {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        let r = try castscope(["analyze", "--json"] + (dated ? ["--date", "2026-03-12"] : []) + args + [url.path])
        let json = try #require(r.json, "no JSON: \(r.stderr)")
        return Analysis(json: json)
    }

    // MARK: the stored real pastes

    struct Expected {
        var format: String
        var records: Int
        var unparsed: Int
        var events: [String]
        var outcomes: [String]
        var findings: [String]
    }

    /// What a careful reader gives for each stored paste (its two header lines removed).
    static let table: [String: Expected] = [
        "apprtcmobile-10-user-alert-invalid-broadcast-session.txt":
            Expected(format: "plain", records: 2, unparsed: 0, events: ["broadcast.stopped_alert", "replaykit.error"], outcomes: [],
                     findings: ["replaykit-error", "screen-share-failed"]),
        "capacitor-jitsi-meet-101-ios-sdk-console-rejoin.txt":
            Expected(format: "plain", records: 13, unparsed: 0, events: [], outcomes: [], findings: []),
        "formats-consoleapp-copy-livekit-swift-510.txt":
            Expected(format: "console-copy", records: 10, unparsed: 0, events: ["app.suspended", "app.suspended", "app.suspended"],
                     outcomes: [], findings: ["host-app-suspended"]),
        "formats-journalctl-json-sentinel-linux.txt":
            Expected(format: "journal-json", records: 4, unparsed: 8, events: [], outcomes: [], findings: []),
        "formats-journalctl-short-iso-offset-without-colon-systemd-29134.txt":
            // (two shell prompts: the second, after lines no anchor hits, was lost uncounted)
            Expected(format: "journal-short-iso", records: 11, unparsed: 2, events: [], outcomes: [], findings: []),
        "formats-journalctl-short-precise-bottlerocket-2900.txt":
            Expected(format: "journal-short-precise", records: 4, unparsed: 0, events: [], outcomes: [], findings: []),
        "formats-logshow-default-header-footer-simoncblyth-env.txt":
            Expected(format: "apple-default", records: 4, unparsed: 2, events: [], outcomes: [], findings: []),
        "formats-logstream-default-pymobiledevice3-remotexpc.txt":
            Expected(format: "apple-default", records: 3, unparsed: 0, events: [], outcomes: [], findings: []),
        "formats-logstream-syslog-style-hacktricks.txt":
            Expected(format: "apple-syslog", records: 3, unparsed: 1, events: [], outcomes: [], findings: []),
        "haishinkit-1791-broadcast-ext-rtmp-yyyy-dd-mm-timestamps.txt":
            Expected(format: "haishinkit", records: 9, unparsed: 0,
                     events: ["broadcast.started", "socket.connect_attempt", "socket.connected"],
                     outcomes: ["truncated"], findings: ["abrupt-end"]),
        "jitsi-meet-15969-start-broadcast-app-group-not-entitled.txt":
            Expected(format: "plain", records: 7, unparsed: 0, events: ["app.screenshare_requested", "app_group.not_entitled"],
                     outcomes: [], findings: ["app-group-not-entitled"]),
        "jitsi-sdk-samples-147-app-group-not-entitled.txt":
            Expected(format: "xcode", records: 3, unparsed: 0, events: ["app.screenshare_requested", "app_group.not_entitled"],
                     outcomes: [], findings: ["app-group-not-entitled"]),
        "livekit-swift-510-host-app-suspended-runningboardd.txt":
            Expected(format: "console-copy", records: 2, unparsed: 0, events: ["app.suspended"], outcomes: [],
                     findings: ["host-app-suspended"]),
        "nativescript-webrtc-16-rpdaemonproxy-pause-on-background.txt":
            Expected(format: "plain", records: 5, unparsed: 0, events: ["capture.frame", "capture.interrupted", "capture.interrupted"],
                     outcomes: ["interrupted"], findings: ["capture-interrupted"]),
        "rnwebrtc-1071-app-server-stream-open-then-econnrefused.txt":
            Expected(format: "xcode", records: 5, unparsed: 0,
                     events: ["server.client_connected", "server.client_connected", "socket.so_error"], outcomes: [],
                     findings: ["connect-refused"]),
        "rnwebrtc-1106-econnrefused-collapsed-onto-one-line.txt":
            Expected(format: "xcode", records: 3, unparsed: 0, events: ["socket.so_error"], outcomes: [], findings: ["connect-refused"]),
    ]

    @Test("every stored real paste gives the records, events, sessions and findings a careful reader gives")
    func realPasteTable() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: realLogs.path).filter { $0.hasSuffix(".txt") }.sorted()
        #expect(files.count >= 16)
        for name in files {
            let expected = try #require(Self.table[name], "\(name): no row in the table (add what a careful reader gives)")
            let text = try String(contentsOf: realLogs.appendingPathComponent(name), encoding: .utf8)
            // The first two lines are the file's own header (source URL, what it shows).
            let body = text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(2).joined(separator: "\n")
            let a = try analyze(body, name: name)
            #expect(a.format == expected.format, "\(name)")
            #expect(a.records == expected.records, "\(name): records")
            #expect(a.unparsed == expected.unparsed, "\(name): unparsed")
            #expect(a.events == expected.events, "\(name): events")
            #expect(a.outcomes == expected.outcomes, "\(name): outcomes")
            #expect(a.kinds == expected.findings, "\(name): findings")
            #expect(a.errors.isEmpty, "\(name): \(a.errors)")
        }
    }

    // MARK: 1. Apple json / ndjson

    static let backtrace = """
          "backtrace" : {
            "frames" : [
              {
                "imageOffset" : 279748,
                "imageUUID" : "BB6669E7-A1B7-3807-AF97-FBF5D0D0B4D5"
              }
            ]
          },
        """

    func prettyRecord(_ message: String, _ time: String, source: Bool = false) -> String {
        """
          "messageType" : "Default",
          "source" : \(source ? "{\n    \"symbol\" : \"x\",\n    \"line\" : 24\n  }" : "null"),
        \(Self.backtrace)
          "processImagePath" : "\\/private\\/var\\/containers\\/Bundle\\/Application\\/A\\/Host.app\\/PlugIns\\/BroadcastExtension.appex\\/BroadcastExtension",
          "timestamp" : "\(time)",
          "eventMessage" : "\(message)",
          "processID" : 912,
          "threadID" : 617126
        """
    }

    @Test("log show --style json: nested objects on their own lines, escapes, preambles; records are not lost")
    func appleJSONNested() throws {
        let records = [
            prettyRecord("open socket connection", "2026-03-12 10:00:00.100000+0100"),
            prettyRecord("client stream open completed", "2026-03-12 10:00:00.200000+0100", source: true),
            prettyRecord("a brace } and a quote \\\" in text {", "2026-03-12 10:00:00.300000+0100"),
        ]
        // Apple's own layout: `[{`, `},{` separators, `}]`.
        let apple = "Filtering the log data using \"process == \"BroadcastExtension\"\"\n"
            + "Skipping info and debug messages, pass --info and/or --debug to include.\n"
            + "[{\n" + records.joined(separator: "\n},{\n") + "\n}]\n"
        // Separators on lines of their own, and objects opened with `{` alone.
        let spaced = "[\n{\n" + records.joined(separator: "\n}\n,\n{\n") + "\n}\n]\n"
        for (label, text) in [("apple", apple), ("spaced", spaced)] {
            let a = try analyze(text, name: "export.json")
            #expect(a.format == "apple-json", "\(label)")
            #expect(a.records == 3, "\(label)")
            #expect(a.unparsed == 0, "\(label)")
            #expect(a.sessions.first?["process"] as? String == "BroadcastExtension", "\(label)")
            #expect(a.outcomes == ["truncated"], "\(label)")
        }
        // A minified array on one line (other tools' re-export).
        let minified = "[" + (0..<3).map { i in
            #"{"messageType":"Default","backtrace":{"frames":[{"imageOffset":1}]},"processImagePath":"\/x\/BroadcastExtension","timestamp":"2026-03-12 10:00:0\#(i).000000+0100","eventMessage":"open socket connection","processID":912}"#
        }.joined(separator: ",") + "]\n"
        let m = try analyze(minified, name: "min.json", ["--format", "apple-json"])
        #expect(m.records == 3)
        #expect(m.unparsed == 0)
        // A truncated export: the records before it are kept, the cut is an error.
        let cut = "[{\n" + records[0] + "\n},{\n  \"backtrace\" : {\n    \"frames\" : [\n"
        let c = try analyze(cut, name: "cut.json")
        #expect(c.records == 1)
        #expect(c.errors.contains { $0.contains("truncated") })
    }

    @Test("log show --style json written again by jq (`\"key\": value`): read as such; lines of nothing are passed over")
    func appleJSONRewritten() throws {
        func record(_ message: String, _ n: Int) -> String {
            """
            {
              "backtrace": {
                "frames": [
                  {
                    "imageOffset": 279748
                  }
                ]
              },
              "eventMessage": "\(message)",
              "messageType": "Default",
              "processID": 912,
              "processImagePath": "\\/private\\/var\\/A\\/BroadcastExtension.appex\\/BroadcastExtension",
              "timestamp": "2026-03-12 10:00:\(String(format: "%02d", n)).100000+0100"
            }
            """
        }
        let messages = ["broadcast started", "Open socket connection", "client stream open completed"]
            + (0..<20).map { "Scene lifecycle state did change: Foreground \($0) \\\"quoted\\\" \\/ path" }
            + ["video sample processed successfully", "Broadcast finished"]
        let text = "[\n" + messages.enumerated().map { record($1, $0) }.joined(separator: ",\n") + "\n]\n"
        let a = try analyze(text, name: "rewritten.json")
        #expect(a.format == "apple-json")
        #expect(a.records == messages.count)
        #expect(a.unparsed == 0)
        #expect(a.outcomes == ["completed"])
    }

    @Test("log show --style json minified onto one line (`jq -c`): read as the array it is, not as ndjson")
    func appleJSONMinified() throws {
        func record(_ message: String, _ n: Int) -> String {
            #"{"backtrace":{"frames":[{"imageOffset":279748}]},"eventMessage":"\#(message)","messageType":"Default","processID":912,"#
                + #""processImagePath":"\/private\/var\/A\/BroadcastExtension.appex\/BroadcastExtension","#
                + #""timestamp":"2026-03-12 10:00:\#(String(format: "%02d", n)).100000+0100"}"#
        }
        let messages = ["broadcast started", "Open socket connection", "client stream open completed",
                        "video sample processed successfully", "Broadcast finished"]
        let records = messages.enumerated().map { record($1, $0) }
        // The whole array on one line, and the same with its first records on lines of their own.
        for text in ["[" + records.joined(separator: ",") + "]\n",
                     "[" + records[0] + ",\n" + records[1] + ",\n" + records[2...].joined(separator: ",") + "]\n"] {
            let a = try analyze(text, name: "minified.json")
            #expect(a.format == "apple-json")
            #expect(a.records == messages.count)
            #expect(a.unparsed == 0)
            #expect(a.outcomes == ["completed"])
        }
    }

    @Test("log show --style ndjson with nested objects on one line")
    func appleNDJSONNested() throws {
        let lines = (0..<3).map { i in
            #"{"traceID":1,"messageType":"Default","source":null,"backtrace":{"frames":[{"imageOffset":2,"imageUUID":"A"}]},"processImagePath":"\/x\/BroadcastExtension","timestamp":"2026-03-12 10:00:0\#(i).000000+0100","eventMessage":"open socket connection","processID":912}"#
        } + [#"{"count":3,"finished":1}"#]
        let a = try analyze(lines.joined(separator: "\n") + "\n", name: "stream.ndjson")
        #expect(a.format == "apple-ndjson")
        #expect(a.records == 3)
        #expect(a.unparsed == 0)
    }

    // MARK: 2. timestamps

    @Test("Xcode NSLog lines without a zone, in ms and µs, with a Markdown backtick; a (-containing process stays whole")
    func xcodeWithoutZone() throws {
        let variants = [
            "2017-04-25 11:12:48.348 MyBroadcast[71910:6705587] open socket connection\n2017-04-25 11:12:48.448 MyBroadcast[71910:6705587] client stream open completed\n",
            "2016-10-03 09:01:02.123456 MyBroadcast[412:88123] open socket connection\n2016-10-03 09:01:02.223456 MyBroadcast[412:88123] client stream open completed\n",
            "`2017-04-25 11:12:48.348 MyBroadcast[71910:6705587] open socket connection\n2017-04-25 11:12:48.448 MyBroadcast[71910:6705587] client stream open completed\n",
            "2020-02-02 10:00:00.000001+0100 Fox (Objective-C)[77:12] open socket connection\n2020-02-02 10:00:00.100001+0100 Fox (Objective-C)[77:12] client stream open completed\n",
        ]
        for v in variants {
            let a = try analyze(v)
            #expect(a.format == "xcode", "\(v)")
            #expect(a.records == 2, "\(v)")
            #expect(a.unparsed == 0, "\(v)")
            let s = try #require(a.sessions.first, "\(v)")
            #expect((s["start"] as? String) != nil, "\(v): times kept")
            #expect(a.kinds.contains("never-connected") == false, "\(v)")
        }
        let fox = try analyze(variants[3])
        #expect(fox.sessions.first?["process"] as? String == "Fox (Objective-C)")
        #expect(fox.sessions.first?["pid"] as? Int == 77)
    }

    @Test("Xcode NSLog lines whose timestamp was cut off keep their process and pid and take the nearest line's time")
    func xcodeLinesWithoutTheirTimestamp() throws {
        // amazon-chime-sdk-ios#287 (alone: no time anywhere), and mixed with timestamped lines.
        let alone = try analyze(" AmazonChimeSDKDemo[2015:833845] PostLogger post request failed Error Domain= Code=403 \"(null)\"\n")
        #expect(alone.format == "xcode-untimed")
        #expect(alone.records == 1)
        let mixed = try analyze("""
             BroadcastExtension[812:1234] LKSampleHandler created
            2026-03-12 10:15:02.104211+0100 BroadcastExtension[812:1234] broadcast started
             BroadcastExtension[812:1234] open socket connection
            2026-03-12 10:15:02.214211+0100 BroadcastExtension[812:1234] client stream open completed
            2026-03-12 10:15:09.214211+0100 BroadcastExtension[812:1234] broadcastFinished

            """)
        #expect(mixed.format == "xcode-untimed")
        #expect(mixed.outcomes == ["completed"])
        // One session of that pid, the untimed lines in their places, their times marked taken.
        #expect(mixed.sessions.count == 1)
        #expect(mixed.sessions.first?["pid"] as? Int == 812)
        let rows = mixed.sessions.first?["timeline"] as? [[String: Any]] ?? []
        #expect(rows.compactMap { $0["message"] as? String } == [
            "LKSampleHandler created", "broadcast started", "open socket connection", "client stream open completed", "broadcastFinished",
        ])
        #expect(rows.map { $0["timeInferred"] as? Bool ?? false } == [true, false, true, false, false])
        #expect(mixed.kinds.isEmpty)
    }

    @Test("Console.app rows whose TABs became runs of spaces keep their times")
    func consoleCopyWithSpaces() throws {
        let variants = [
            "default 17:24:56.282676+0000 BroadcastExt open socket connection\ndefault 17:24:56.382676+0000 BroadcastExt client stream open completed\n",
            "default    17:24:56.282676+0000    BroadcastExt    open socket connection\nerror      17:24:56.382676+0000    BroadcastExt    client stream open completed\n",
            "info  17:24:56.282676+0100  BroadcastExt  open socket connection\n    continued detail\ndefault  17:24:56.382676+0100  BroadcastExt  client stream open completed\n",
        ]
        for v in variants {
            let a = try analyze(v)
            #expect(a.format == "console-copy-spaces", "\(v)")
            #expect(a.records == 2, "\(v)")
            #expect(a.unparsed == 0, "\(v)")
            let start = try #require(a.sessions.first?["start"] as? String, "\(v)")
            #expect(start.hasPrefix("2026-03-12T17:24:56.282676"), "\(v): \(start)")
        }
    }

    @Test("HaishinKit's Logboard writes yyyy-dd-MM always; NSLog lines in the same paste keep their own date and zone")
    func haishinKitDates() throws {
        let text = """
            2025-05-09 13:04:04.774 [Info] [com.haishinkit.HaishinKit] [RTMPConnection.swift:207] readyState > uninitialized=>versionSent
            2025-05-09 13:04:05.271 [Info] [com.haishinkit.HaishinKit] [RTMPConnection.swift:207] readyState > ackSent=>handshakeDone
            2025-09-05 13:04:06.000000+0200 Ext[12:34] NSLog from the extension
            2025-26-09 13:04:07.000 [Info] [com.haishinkit.HaishinKit] [RTMPConnection.swift:207] readyState > handshakeDone=>connected

            """
        let a = try analyze(text)
        #expect(a.format == "haishinkit")
        #expect(a.records == 4)
        let times = a.timeline(0).compactMap { $0["time"] as? String }
        // 2025-05-09 in Logboard's order is 5 September.
        #expect(times.first?.hasPrefix("2025-09-05T13:04:04.774") == true, "\(times)")
        #expect(a.notes.contains { $0.contains("3 timestamps written yyyy-dd-MM") }, "\(a.notes)")
    }

    @Test("a file read as plain although most lines start with a timestamp gets a note")
    func plainFallbackNote() throws {
        // (the sixth survey: docker compose's prefix, a service's word, a Go log's JSON dumps between its lines)
        // A date and a time first, then anything (Go's `log`, docker logs -t): the fallback
        // format `timestamped` keeps the times.
        for v in ["2024/05/01 10:00:00 one\n2024/05/01 10:00:01 two\n", "web_1  | 2022/11/25 20:15:13 GET /\nweb_1  | 2022/11/25 20:15:14 GET /x\n",
                  "2026-03-12T09:15:04.673211000Z one\n2026-03-12T09:15:05.1Z two\n",
                  // (a level of three letters then `[`: no `-o verbose` header, whose `[` holds the cursor)
                  "```\n2022-02-10 14:04:47 INF [RTMP] [conn 1.2.3.4:21558] opened\n2022-02-10 14:04:57 INF [RTMP] [conn 1.2.3.4:21558] closed\n```\n"] {
            let a = try analyze(v)
            #expect(a.format == "timestamped", "\(v)")
            #expect(!a.notes.contains { $0.contains("begin with a timestamp") }, "\(v)")
        }
        for v in ["12:00:01.5 a b\n12:00:02.5 a b\nline\n", "[2024.05.01 10:00:00] x\n[2024.05.01 10:00:01] y\n",
                  // (JVB's own layout is a format since session 40: a word before another layout's time)
                  "sfu 2025-04-16 14:41:06.751 peer.go:147 => closed\nsfu 2025-04-16 14:41:07.751 peer.go:150 => gone\n",
                  "2020/08/12 08:11:35.578720 mcu_janus.go:954: closing {\n  \"janus\": \"hangup\",\n  \"reason\": \"DTLS alert\"\n}\n2020/08/12 08:11:36.578720 mcu_janus.go:955: closed\n",
                  // (session 43: nginx-rtmp's access log, the Common Log Format's time after the
                  // client's address (nginx-rtmp#1515), and PHP's error_log (AVideo#4773))
                  "206.1.2.226 [30/Apr/2020:03:42:24 +0000] PLAY \"live\" \"3100689\" \"\" - 476 454 \"xxx\" \"WIN 32,0,0,363\" (1m 0s)\n206.1.2.226 [30/Apr/2020:03:43:24 +0000] PUBLISH \"live\" \"3100689\" \"\" - 476 454 \"\" \"\" (1m 0s)\n",
                  "[23-Mar-2021 16:45:25 Europe/Dublin] AVideoLog::ERROR: a\n[23-Mar-2021 16:45:26 Europe/Dublin] AVideoLog::ERROR: b\n"] {
            let a = try analyze(v)
            #expect(a.format == "plain", "\(v)")
            #expect(a.notes.contains { $0.contains("begin with a timestamp") }, "\(v)")
        }
        let prose = try analyze("hello\nworld\n12:00:00 once\n")
        #expect(prose.notes.isEmpty)
        let sentences = try analyze("at 12:00:00 it stopped\nthen nothing\nand more words here\n")
        #expect(sentences.notes.isEmpty)
    }

    @Test("session 43's pastes: a crash report whose Application Specific Information is the uncaught exception is one crash")
    func session43Pastes() throws {
        // KSCrash#143: the report's `*** Terminating app …` line is its own exception, not a
        // second crash of no process at no time.
        let header = """
            Incident Identifier: FAFDB6A3-1D24-4A95-A3E7-B35F98043C36
            CrashReporter Key:   432872cb1b82f6b0a32817736a3628694de007d1
            Hardware Model:      iPad4,4
            Process:         Test [1966]
            Path:            /private/var/mobile/Containers/Bundle/Application/A230C74D-90B3-4760-8C78-284DE1395131/Test.app/Test
            Identifier:      xxxxxxxxxxxxx
            Version:         1.0.0 (0000)
            Code Type:       ARM-64
            Parent Process:  ? [1]

            Date/Time:       2016-04-11 17:31:59.000 +0800
            OS Version:      iPhone OS 8.4.1 (12H321)
            Report Version:  104

            Exception Type:  EXC_CRASH (SIGABRT)
            Exception Codes: 0x00000000 at 0x0000000000000000
            Crashed Thread:  0

            Application Specific Information:
            *** Terminating app due to uncaught exception 'test', reason: 'for crash report test'

            """
        let report = try analyze(dated: false, header + """
            Thread 0 name:  Dispatch queue: com.apple.main-thread
            Thread 0 Crashed:
            0   CoreFoundation                  0x00000001834fc22c 0x1833d4000 + 1212972 (<redacted> + 132)

            """)
        #expect(report.kinds == ["app-crashed"], "\(report.kinds)")
        #expect(report.messages("app-crashed").first?.hasPrefix("Test[1966] crashed (EXC_CRASH (SIGABRT); uncaught exception 'test', reason: 'for crash report test'; thread 0, queue com.apple.main-thread)") == true,
                "\(report.messages("app-crashed"))")
        // Cut before its first thread: the header still makes the report at its exception
        // (session 63: a paste cut there made none, and its exception line was read as a line
        // of its own, whose process was not said), one crash with its uncaught exception.
        let cut = try analyze(dated: false, header)
        #expect(cut.kinds == ["app-crashed"], "\(cut.kinds)")
        #expect(cut.messages("app-crashed") == ["Test[1966] crashed (EXC_CRASH (SIGABRT); uncaught exception 'test', reason: 'for crash report test'; thread 0): whatever it was sharing or serving stopped with it"],
                "\(cut.messages("app-crashed"))")
        // The same report as an `.ips` (JSON), its `asi` holding the exception.
        let ips = try analyze(dated: false, """
            {"app_name":"Test","timestamp":"2016-04-11 17:31:59.00 +0800","bug_type":"309","name":"Test"}
            {"procName" : "Test", "pid" : 1966, "captureTime" : "2016-04-11 17:31:59.1234 +0800",
             "exception" : {"type" : "EXC_CRASH", "signal" : "SIGABRT"},
             "asi" : {"CoreFoundation" : ["*** Terminating app due to uncaught exception 'test', reason: 'for crash report test'"]}}

            """, name: "Test-2016-04-11-173159.ips")
        #expect(ips.messages("app-crashed").first?.hasPrefix("Test[1966] crashed (EXC_CRASH (SIGABRT); uncaught exception 'test', reason: 'for crash report test')") == true,
                "\(ips.messages("app-crashed"))")
        // AdguardForiOS#1585: the crash summary TestFlight feedback and the Organizer give
        // (`Exception type:` in lowercase, `Date:` in the US form, no pid): "nothing recognized".
        let summary = try analyze(dated: false, """
            Date: 6/24/20, 12:54 AM
            Process: AdGuardProTodayExtension
            Bundle id: com.adguard.AdguardPro.todayExtension
            Device: iPhone 7, iOS 13.5
            Bundle version: 4.0.1

            Exception type: EXC_BAD_ACCESS (SIGSEGV)
            Exception subtype: KERN_INVALID_ADDRESS: 0x0
            Exception codes: 0x0000000000000001, 0x0000000000000000
            Culprit: Unknown
            VM Protection: 0x0 is not in any region.

            Triggered by thread: 0
            Thread name: Dispatch queue: com.apple.main-thread
            Call stack:
            0   libsystem_kernel.dylib        \t0x000000019686d198 0x196869000 + 16792      \t// mach_msg_trap

            """)
        #expect(summary.kinds == ["app-crashed"], "\(summary.kinds) \(summary.json["unattached"] ?? "")")
        #expect(summary.messages("app-crashed").first?.hasPrefix("AdGuardProTodayExtension crashed (EXC_BAD_ACCESS (SIGSEGV), KERN_INVALID_ADDRESS: 0x0; thread 0)") == true,
                "\(summary.messages("app-crashed"))")
        #expect(summary.sessions.isEmpty, "a widget's crash is no broadcast session")
        // (its `Date:` comes before its `Process:`: looked back for past it)
        #expect(summary.findings.first?["time"] as? String == "2020-06-24T00:54:00.000000", "\(summary.findings)")
        // Crashlytics' copy of an NSException crash (Agora-Flutter-SDK#700): its header names
        // the exception.
        let fatal = try analyze(dated: false, """
            Fatal Exception: NSInternalInconsistencyException
            0  CoreFoundation                 0x99288 __exceptionPreprocess
            1  libobjc.A.dylib                0x16744 objc_exception_throw
            4  agora_rtc_engine               0xbdc4 EventHandler::OnEvent(char const*, char const*) + 20 (FlutterIrisEventHandler.mm:20)

            """)
        #expect(fatal.kinds == ["app-crashed"], "\(fatal.kinds)")
        #expect(fatal.messages("app-crashed").first?.contains("uncaught exception NSInternalInconsistencyException") == true, "\(fatal.messages("app-crashed"))")
    }

    @Test("session 44's pastes: a daemon's exit status and Go panic, Xcode's memory kill, a report in backticks, a cut .ips, termination codes")
    func session44Pastes() throws {
        // 1panel#223, XManagerPlus#51: a Go daemon dies by exiting (a panic exits 2), not by a
        // signal; with a relay session open, that session stopped with it.
        let relay = """
            Mar 15 08:47:40 relayhost broadcast-relay[18078]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=standup
            Mar 15 08:47:41 relayhost broadcast-relay[18078]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 stats frames=10 bytes=281133 fps=10.0 dropped=0
            Mar 15 08:47:42 relayhost broadcast-relay[18078]: panic: runtime error: invalid memory address or nil pointer dereference
            Mar 15 08:47:42 relayhost broadcast-relay[18078]: [signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x2442368]
            Mar 15 08:47:42 relayhost systemd[1]: broadcast-relay.service: Main process exited, code=exited, status=2/INVALIDARGUMENT
            Mar 15 08:47:42 relayhost systemd[1]: broadcast-relay.service: Failed with result 'exit-code'.

            """
        let died = try analyze(relay)
        #expect(died.kinds.contains("daemon-died"), "\(died.kinds)")
        let death = died.messages("daemon-died").first ?? ""
        #expect(death.hasPrefix("broadcast-relay: its main process exited with an error (status=2/INVALIDARGUMENT) after a panic (runtime error: invalid memory address"), "\(death)")
        #expect(death.contains("the relay session open then (7c1e0d52) stopped with it"), "\(death)")
        // A stop that exits 0 or 143 (SIGTERM's exit) is no death.
        for status in ["0/SUCCESS", "143/n/a"] {
            let stopped = try analyze("Mar 15 08:47:42 relayhost systemd[1]: jibri.service: Main process exited, code=exited, status=\(status)\nMar 15 08:47:40 relayhost broadcast-relay[18078]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=standup\n")
            #expect(!stopped.kinds.contains("daemon-died"), "\(status): \(stopped.kinds)")
        }
        // RMGallery#10: Xcode's word on a memory kill, under the name of the console's lines
        // before it: the debugged app's kill, or (an extension's name) its session's.
        let debugger = "2015-10-14 16:16:51.510 RMGalleryDemo[3438:887692] Received memory warning.\nMessage from debugger: Terminated due to memory issue\n"
        let app = try analyze(dated: false, debugger)
        #expect(app.messages("app-crashed").first?.hasPrefix("RMGalleryDemo[3438] was killed (terminated for its memory") == true, "\(app.kinds) \(app.messages("app-crashed"))")
        let ext = try analyze(dated: false, debugger.replacingOccurrences(of: "RMGalleryDemo", with: "BroadcastUploadExtension"))
        #expect(ext.outcomes == ["killed"] && ext.kinds == ["extension-killed"], "\(ext.outcomes) \(ext.kinds)")
        // iCloud-Control#14: a report pasted inside one pair of single backticks keeps its
        // `Process:` (it was "a process the report does not name").
        let backticked = try analyze(dated: false, """
            `Process:               iCloud Extension [668]
            Path:                  /Applications/iCloud Control.app/Contents/PlugIns/iCloud Extension.appex/Contents/MacOS/iCloud Extension
            Date/Time:             2019-01-14 16:11:10.836 +0100

            Exception Type:        EXC_BAD_INSTRUCTION (SIGILL)
            Exception Codes:       0x0000000000000001, 0x0000000000000000
            Exception Note:        EXC_CORPSE_NOTIFY

            Termination Signal:    Illegal instruction: 4
            Termination Reason:    Namespace SIGNAL, Code 0x4
            Terminating Process:   exc handler [0]`

            """)
        #expect(backticked.messages("app-crashed").first?.hasPrefix("iCloud Extension[668] crashed (EXC_BAD_INSTRUCTION (SIGILL)") == true,
                "\(backticked.messages("app-crashed"))")
        // A crash report's `.ips` cut inside its threads (a forum's or an issue's length limit)
        // after its exception and termination: the kill is read, and the cut said; the
        // watchdog's code is named.
        let head = """
            {"app_name":"BroadcastUpload","timestamp":"2022-10-11 01:01:33.00 -0500","bug_type":"309","name":"BroadcastUpload"}
            {
              "captureTime": "2022-10-11 01:01:33.3725 -0500",
              "pid": 23733,
              "procName": "BroadcastUpload",
              "procPath": "/private/var/containers/Bundle/Application/X/VCS.app/PlugIns/BroadcastUpload.appex/BroadcastUpload",
            """
        let rest = """
              "exception": {"type": "EXC_CRASH", "signal": "SIGKILL"},
              "termination": {"flags": 0, "code": 2343432205, "namespace": "FRONTBOARD", "indicator": "scene-update watchdog"},
              "threads" : [{"id":1,"queue":"com.apple.main-thread","frames":[{"imageOffset":9048,"imageIndex":0},{"imageOff
            """
        for name in ["BroadcastUpload-2022-10-11-010133.ips", "paste.txt"] {
            let cut = try analyze(dated: false, head + "\n" + rest, name: name)
            #expect(cut.outcomes == ["killed"], "\(name): \(cut.outcomes) \(cut.errors)")
            #expect(cut.messages("extension-killed").first?.contains("termination FRONTBOARD code 0x8badf00d scene-update watchdog (watchdog: it took too long") == true,
                    "\(name): \(cut.messages("extension-killed"))")
            #expect(cut.errors.count == 1 && cut.errors[0].contains("the report is cut short; what came before the cut was read"), "\(name): \(cut.errors)")
        }
        // A report's `Path:` tells an app from an extension whatever its name's words: a host
        // app named ScreenShareDemo crashed (no extension session), its extension was killed.
        for (process, path, kinds) in [("ScreenShareDemo", "/private/var/containers/Bundle/Application/X/ScreenShareDemo.app/ScreenShareDemo", ["app-crashed"]),
                                       ("ScreenShareExt", "/private/var/containers/Bundle/Application/X/ScreenShareDemo.app/PlugIns/ScreenShareExt.appex/ScreenShareExt", ["extension-killed"])] {
            let report = try analyze(dated: false, """
                Hardware Model:      iPhone14,2
                Process:             \(process) [812]
                Path:                \(path)
                Date/Time:           2026-03-12 10:00:00.000 +0000
                Exception Type:  EXC_CRASH (SIGABRT)
                Triggered by Thread:  0

                """)
            #expect(report.kinds == kinds, "\(process): \(report.kinds)")
            #expect(report.sessions.count == (kinds == ["app-crashed"] ? 0 : 1), "\(process)")
        }
        // Cut before its exception: nothing to tell, and the error says why.
        let early = try castscopeAnalyzeErrors(head, name: "early.ips")
        #expect(early.contains("the report is cut short before its exception and termination"), "\(early)")
    }

    /// `analyze`'s standard error on `text` saved as `name` (an input that gives nothing).
    func castscopeAnalyzeErrors(_ text: String, name: String) throws -> String {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return try castscope(["analyze", url.path]).stderr
    }

    @Test("today's crash report layouts: the uncaught exception after the header's Termination Reason or Triggered by Thread is the report's")
    func uncaughtAfterHeader() throws {
        // macOS 12 and later, and iOS's translated `.ips`, write `Application Specific
        // Information:` after `Termination Reason:` / `Triggered by Thread:`, where the header
        // has closed: it gave a second crash of no process at no time.
        let head = """
            Process:               ShareHost [4821]
            Path:                  /Applications/ShareHost.app/Contents/MacOS/ShareHost
            Date/Time:             2024-03-05 14:22:31.5123 +0100
            OS Version:            macOS 14.3.1 (23D60)

            Exception Type:        EXC_CRASH (SIGABRT)
            Exception Codes:       0x0000000000000000, 0x0000000000000000

            """
        let uncaught = "*** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: '-[__NSCFNumber length]: unrecognized selector'\n"
        let thread = "\nThread 0 Crashed::  Dispatch queue: com.apple.main-thread\n0   libsystem_kernel.dylib 0x18f49a0dc __pthread_kill + 8\n"
        for (closer, label) in [("Termination Reason:    Namespace SIGNAL, Code 6 Abort trap: 6\nTerminating Process:   ShareHost [4821]\n", "macOS"),
                                ("Triggered by Thread:  0\n", "iOS")] {
            for tail in [thread, "", "\nBinary Images:\n"] {
                let report = try analyze(dated: false, head + closer + "\nApplication Specific Information:\n" + uncaught + "abort() called\n" + tail)
                #expect(report.kinds == ["app-crashed"], "\(label): \(report.kinds)")
                #expect(report.messages("app-crashed").first?.hasPrefix("ShareHost[4821] crashed (EXC_CRASH (SIGABRT)") == true, "\(label): \(report.messages("app-crashed"))")
                #expect(report.messages("app-crashed").first?.contains("uncaught exception 'NSInvalidArgumentException'") == true, "\(label): \(report.messages("app-crashed"))")
            }
            // Without an uncaught exception: the one crash, as before.
            let plain = try analyze(dated: false, head + closer + thread)
            #expect(plain.kinds == ["app-crashed"], "\(label): \(plain.kinds)")
            // An uncaught exception far after the report (another crash's line) stays its own.
            let far = try analyze(dated: false, head + closer + thread + String(repeating: "0   libsystem_kernel.dylib 0x1 x + 8\n", count: 20) + uncaught)
            #expect(far.kinds == ["app-crashed", "app-crashed"], "\(label): \(far.kinds)")
        }
    }

    /// A JetsamEvent (bug_type 298) whatever its file is called, and its process entries pasted
    /// with the `physicalPages` object every entry has had since iOS 14 (the ios-crash-dump-
    /// analysis book's report, its killed process renamed): the 50 MB kill, not "nothing
    /// recognized".
    static let jetsamEvent = """
            {"bug_type":"298","timestamp":"2020-10-15 17:29:58.79 +0100","os_version":"iPhone OS 14.2 (18B5061e)","incident_id":"B04A36B1-19EC-4895-B203-6AE21BE52B02"}
            {
              "crashReporterKey" : "d3e622273dd1296e8599964c99f70e07d25c8ddc",
              "kernel" : "Darwin Kernel Version 20.1.0: Mon Sep 21 00:09:01 PDT 2020; root:xnu-7195.40.113.0.2~22\\/RELEASE_ARM64_T8030",
              "product" : "iPhone12,1",
              "incident" : "B04A36B1-19EC-4895-B203-6AE21BE52B02",
              "date" : "2020-10-15 17:29:58.79 +0100",
              "build" : "iPhone OS 14.2 (18B5061e)",
              "timeDelta" : 7,
              "memoryStatus" : {
              "compressorSize" : 96635,
              "compressions" : 3009015,
              "decompressions" : 2533158,
              "zoneMapCap" : 1472872448,
              "largestZone" : "APFS_4K_OBJS",
              "largestZoneSize" : 41271296,
              "pageSize" : 16384,
              "uncompressed" : 257255,
              "zoneMapSize" : 193200128,
              "memoryPages" : {
                "active" : 45459,
                "throttled" : 0,
                "fileBacked" : 34023,
                "wired" : 49236,
                "anonymous" : 55900,
                "purgeable" : 12,
                "inactive" : 40671,
                "free" : 5142,
                "speculative" : 3793
              }
            },
              "largestProcess" : "AppStore",
              "genCounter" : 1,
              "processes" : [
              {
                "uuid" : "7607487f-d2b1-3251-a2a6-562c8c4be18c",
                "states" : [
                  "daemon",
                  "idle"
                ],
                "age" : 3724485992920,
                "purgeable" : 0,
                "fds" : 25,
                "coalition" : 68,
                "rpages" : 229,
                "priority" : 0,
                "physicalPages" : {
                  "internal" : [
                    6,
                    183
                  ]
                },
                "pid" : 350,
                "cpuTime" : 0.066796999999999995,
                "name" : "SBRendererService",
                "lifetimeMax" : 976
              },
            {
              "uuid" : "f71f1e2b-a7ca-332d-bf87-42193c153ef8",
              "states" : [
                "daemon",
                "idle"
              ],
              "lifetimeMax" : 385,
              "killDelta" : 13595,
              "age" : 94337735133,
              "purgeable" : 0,
              "fds" : 50,
              "genCount" : 0,
              "coalition" : 320,
              "rpages" : 3300,
              "priority" : 1,
              "reason" : "per-process-limit",
              "physicalPages" : {
                "internal" : [
                  327,
                  41
                ]
              },
              "pid" : 2527,
              "idleDelta" : 41601646,
              "name" : "BroadcastUpload",
              "cpuTime" : 0.634077
            }
            ]
            }

        """

    @Test("HaishinKit: a reconnect clears the close before it (#823); RTMPConnection's on(status:) warning is its connect-closed (muxinc/examples#118)")
    func haishinKitReconnect() throws {
        let reconnect = try analyze(dated: false, """
            2021-04-02 15:17:46.675 [Warn] [com.haishinkit.HaishinKit] [RTMPConnection.swift:380] on(status:) > 
            2021-04-02 15:17:46.677 [Info] [com.moungroup.yumitup] [LiveViewController.swift:168] rtmpStatusHandler(_:) > NetConnection.Connect.Closed
            the code: NetConnection.Connect.Closed
            2021-04-02 15:17:54.313 [Info] [com.moungroup.yumitup] [LiveViewController.swift:168] rtmpStatusHandler(_:) > NetConnection.Connect.Success
            the code: NetConnection.Connect.Success

            """)
        #expect(reconnect.sessions.count == 1, "\(reconnect.outcomes)")
        // The same lines as an iPhone set to 12-hour time writes them (the paste as it was).
        let twelve = try analyze(dated: false, """
            2021-04-02 3:17:46.675 PM [Warn] [com.haishinkit.HaishinKit] [RTMPConnection.swift:380] on(status:) > 
            2021-04-02 3:17:46.677 PM [Info] [com.moungroup.yumitup] [LiveViewController.swift:168] rtmpStatusHandler(_:) > NetConnection.Connect.Closed
            2021-04-02 3:17:54.313 PM [Info] [com.moungroup.yumitup] [LiveViewController.swift:168] rtmpStatusHandler(_:) > NetConnection.Connect.Success

            """)
        #expect(twelve.format == "haishinkit" && twelve.sessions.first?["start"] as? String == "2021-02-04T15:17:46.675000", "\(twelve.format ?? "") \(twelve.sessions)")
        // After a 24-hour time, AM or PM is the message's: the times stay.
        let messages = try analyze(dated: false, "2021-04-02 13:00:02 PM one\n2021-04-02 13:00:03 PM two\n2021-04-02 00:00:03 AM three\n2021-04-02 13:00:04 x four\n")
        #expect(messages.format == "timestamped", "\(messages.format ?? "")")
        let why = reconnect.sessions.first?["reason"] as? String ?? ""
        #expect(!why.contains("closed the connection"), "\(why)")
        let closes = try analyze(dated: false, """
            Calling connect()
            RTMP Status Handler called.
            Calling publish()
            2022-23-11 14:54:12.924 [Warn] [com.haishinkit.HaishinKit] [RTMPConnection.swift:382] on(status:) > 
            RTMP Status Handler called.
            RTMP Connection was not successful.
            Calling connect()
            2022-23-11 14:54:14.844 [Warn] [com.haishinkit.HaishinKit] [RTMPConnection.swift:382] on(status:) > 
            RTMP Connection was not successful.
            Calling connect()
            2022-23-11 14:54:18.331 [Warn] [com.haishinkit.HaishinKit] [RTMPConnection.swift:382] on(status:) > 

            """)
        // (the three closes are one folded row of the timeline)
        #expect(closes.events == ["socket.closed_by_peer"] && closes.input["events"] as? Int == 3, "\(closes.events) \(closes.input)")
    }

    @Test("show: zone-less HaishinKit lines among zoned Xcode lines take the file's zone, in order (HaishinKit#1056 printed them 9 h away)")
    func showFileZone() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let paste = dir.appendingPathComponent("paste.txt")
        try """
            2022-08-09 18:19:29.041 [Debug] [com.haishinkit.HaishinKit] [RTMPConnection.swift:465] didSetReadyState(_:) > uninitialized
            2022-09-08 18:19:29.082291+0900 LiveSports[73922:2213688] CMTimeMakeWithSeconds(285962.146 seconds, timescale 1): warning: error of -0.146 introduced due to very low timescale
            2022-08-09 18:19:29.091 [Debug] [com.haishinkit.HaishinKit] [RTMPConnection.swift:465] didSetReadyState(_:) > versionSent

            """.write(to: paste, atomically: true, encoding: .utf8)
        let r = try castscope(["show", paste.path])
        let times = r.stdout.split(separator: "\n").dropFirst().map { String($0.prefix(31)) }
        #expect(times == ["2022-09-08 09:19:29.041000+0000", "2022-09-08 09:19:29.082291+0000", "2022-09-08 09:19:29.091000+0000"], "\(r.stdout)")
    }

    @Test("a JetsamEvent named .txt, .json, .ips.synced or nothing is read as the .ips it is; a pasted entry with physicalPages is a kill")
    func jetsamEventAnyName() throws {
        for name in ["JetsamEvent-2020-10-15-172958.ips.synced", "report.txt", "report.json", "JetsamEvent"] {
            let a = try analyze(dated: false, Self.jetsamEvent, name: name)
            #expect(a.outcomes == ["killed"], "\(name): \(a.outcomes) \(a.format ?? "")")
            #expect(a.kinds.contains("extension-killed"), "\(name): \(a.kinds)")
        }
        // One entry, pasted alone (from `{` to `}`), the nested object in it.
        let pasted = try analyze(dated: false, """
            Here is the entry from the JetsamEvent:
            {
              "uuid" : "f71f1e2b",
              "physicalPages" : {
                "internal" : [
                  327,
                  41
                ]
              },
              "rpages" : 3300,
              "reason" : "per-process-limit",
              "pid" : 2527,
              "name" : "BroadcastUpload"
            },

            """)
        #expect(pasted.outcomes == ["killed"], "\(pasted.outcomes) \(pasted.kinds)")
    }

    @Test("session 42's pastes: a ticket's sentences around a short nginx block, pm2's time, a syslog tagged by a tool in one month, prose naming an API constant, an uncaught exception told twice")
    func seventhSurvey() throws {
        // kaltura#168: two nginx lines between a lead-in and a question keep their times.
        let nginx = try analyze("""
            Here are the error logs from Nginx:

            2023/07/13 22:01:52 [error] 30496#30496: *3 ngx_rtmp_kmp_idle: closing idle connection, client: 51.91.66.224, server: 0.0.0.0:1935
            2023/07/13 22:03:13 [error] 30496#30496: *8 ngx_rtmp_kmp_idle: closing idle connection, client: 51.91.66.224, server: 0.0.0.0:1935

            How can I solve this issue?

            """)
        #expect(nginx.format == "timestamped" && nginx.notes.isEmpty, "\(nginx.format ?? "") \(nginx.notes)")
        // A line without a time in such a file is a record of its own, as plain text reads it:
        // a ReplayKit error pasted between upload lines keeps its finding (review 42).
        let between = try analyze("""
            Logs from the extension when it stops:
            2024-03-03 10:00:01.120 upload: chunk 1 sent
            2024-03-03 10:00:02.120 upload: chunk 2 sent
            2024-03-03 10:00:03.120 upload: chunk 3 sent
            2024-03-03 10:00:04.120 upload: chunk 4 sent
            broadcastFinished with error: Error Domain=RPRecordingErrorDomain Code=-5808 "Attempted to start an invalid broadcast session"
            Any idea what causes this?

            """)
        #expect(between.format == "timestamped" && between.kinds.contains("replaykit-error"), "\(between.format ?? "") \(between.kinds)")
        // One timed line among many sentences is prose, not a log.
        let talk = try analyze("We saw this:\n2023/07/13 22:01:52 [error] closing idle connection\nThen the stream stopped.\nIt happens daily.\nAny idea why?\n")
        #expect(talk.format == "plain", "\(talk.format ?? "")")
        // mediasoup#357: pm2's `--time` prefix.
        let pm2 = try analyze("""
            2020-04-05T11:23:54: 2020-04-05T11:23:54.845Z mediasoup:ERROR:Worker worker process died unexpectedly [pid:23445, code:null, signal:SIGABRT]
            2020-04-05T11:23:54: mediasoup worker died!: { Error: [pid:23445, code:null, signal:SIGABRT]

            """)
        #expect(pm2.format == "timestamped" && pm2.records == 2, "\(pm2.format ?? "") \(pm2.records)")
        // legacy-ios-kit#182: a restore tool's `SYSLOG: ` before an iPhone's syslog, every line in June.
        let tagged = try analyze("""
            SYSLOG: Jun  8 20:55:52 localhost kernel[0] <Notice>: [NAND] _ppnvflGetStruct:3469 Checking borrowed blocks - count: 44 max_count: 44
            SYSLOG: Jun  8 20:55:52 localhost kernel[0] <Notice>: [NAND] _fetchBorrowedList:881 number of borrowed blocks 37
            SYSLOG: Jun  8 20:55:52 localhost kernel[0] <Notice>: [nand_part_core:INF@ 157] published partition 0

            """)
        #expect(tagged.format == "idevicesyslog" && tagged.records == 3, "\(tagged.format ?? "") \(tagged.records)")
        // haishinkit#376: the reporter names the API's constant; the log line is HaishinKit's own close.
        let prose = try analyze("""
            When closing the connection the `Event.RTMP_STATUS` listener wont fire the `RTMPConnection.Code.connectClosed` event. All I see in the logs is this:

            2018-23-02 00:18:34.395 [Trace] [com.haishinkit.HaishinKit] [NetSocket.swift:91] close(isDisconnected:) > isDisconnected: false

            """)
        #expect(prose.sessions.isEmpty && prose.findings.isEmpty, "\(prose.sessions) \(prose.findings)")
        // flutter_screen_recording#64: libc++abi tells the uncaught exception again after the stack.
        let twice = try analyze("""
            2021-05-29 23:03:09.275187+0800 Runner[11546:1257656] *** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: '*** -[AVAssetWriter finishWritingWithCompletionHandler:] Cannot call method when status is 2'
            *** First throw call stack:
            (0x1992259d8 0x1ad58eb54 0x1a07963ec 0x10363658c)
            libc++abi.dylib: terminating with uncaught exception of type NSException
            *** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: '*** -[AVAssetWriter finishWritingWithCompletionHandler:] Cannot call method when status is 2'
            terminating with uncaught exception of type NSException

            """)
        #expect(twice.kinds == ["app-crashed"], "\(twice.kinds)")
        #expect((twice.findings.first?["evidence"] as? [Any])?.count == 2, "\(twice.findings)")
        // Another exception after it is another crash.
        let other = try analyze("""
            2021-05-29 23:03:09.275187+0800 Runner[11546:1257656] *** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: 'a'
            2021-05-29 23:03:19.275187+0800 Runner[11547:1257656] *** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: 'a'

            """)
        #expect(other.kinds == ["app-crashed", "app-crashed"], "\(other.kinds)")
    }

    // MARK: 3. multi-line records

    @Test("an NSLog message spanning lines (dictionary, JS array, call stack) is one record")
    func multiLineNSLog() throws {
        let dict = """
            2024-05-01 10:00:00.000001+0200 App[1:2] [RNCallKit][updateCall] options = {
                hasVideo = 1;
                nested = {
                    a = b;
                };
            }
            print line after
            """
        let a = try analyze(dict + "\n")
        #expect(a.records == 2)
        #expect(a.unparsed == 0)
        let stack = """
            2024-05-01 10:00:01.000001+0200 App[1:2] *** First throw call stack:
            (
            0   CoreFoundation                      0x1 __exceptionPreprocess + 1
            1   libobjc.A.dylib                     0x2 objc_exception_throw + 2
            )
            another print
            """
        let b = try analyze(stack + "\n")
        #expect(b.records == 2)
        let array = "2024-05-01 10:00:02.000001+0200 App[1:2] participants: [\n  \"a\",\n  \"b\"\n]\nbroadcast started\n"
        let c = try analyze(array)
        #expect(c.records == 2)
        // Balanced brackets: print() lines stay records of their own.
        let flat = try analyze("2024-05-01 10:00:02.000001+0200 App[1:2] value (see below) {a}\nline one\nline two\n")
        #expect(flat.records == 3)
        // Plain (untimed) pastes too: the CallKit dictionary of a real Jitsi paste.
        let plain = try analyze("[VideoCaptureController] Capture will start\n[RNCallKit][updateCall] callUUID = X options = {\n    hasVideo = 1;\n}\n[VideoCaptureController] Capture started\n")
        #expect(plain.format == "plain")
        #expect(plain.records == 3)
    }

    // MARK: 4. ReplayKit errors

    @Test("ReplayKit errors in every shape, with the meaning from the complete RPRecordingErrorCode table")
    func replayKitShapes() throws {
        let cases: [(String, String, String)] = [
            ("Error Domain=com.apple.ReplayKit.RPRecordingErrorDomain Code=-5807 \"Recording interrupted by multitasking and content resizing\" UserInfo={NSLocalizedDescription=Recording interrupted by multitasking and content resizing}", "-5807", "contentResize"),
            ("domain: \"com.apple.ReplayKit.RPRecordingErrorDomain\" Code=-5815 \"(null)\"", "-5815", "failedApplicationConnectionInterrupted"),
            ("startCapture error: RPRecordingErrorDomain, userInfo: [:], Code=-5809", "-5809", "systemDormancy"),
            ("ReplayKit error: Code=-5833", "-5833", "failedToStartCaptureStack"),
            ("[ScreenCapturer] ReplayKit startCapture failed, Code=-5830", "-5830", "attemptToStartInRecordingState"),
            ("Screen capture failed: Recording interrupted by multitasking and content resizing", "-5807", "contentResize"),
            ("Error Domain=com.apple.ReplayKit.RPRecordingErrorDomain Code=-5808 \"Attempted to start an invalid broadcast session\"", "-5808", "broadcastInvalidSession"),
            ("Error Domain=RPRecordingErrorDomain Code=-5829", "-5829", "attemptToStopNonRecording"),
        ]
        for (line, code, name) in cases {
            let a = try analyze(line + "\n")
            let m = a.messages("replaykit-error")
            #expect(m.count == 1, "\(line): \(a.kinds)")
            #expect(m.first?.contains("\(code) (\(name))") == true, "\(line): \(m)")
        }
        // -5807 is no FairPlay error.
        let fair = try analyze("RPRecordingErrorDomain Code=-5807\n")
        #expect(fair.messages("replaykit-error").first?.contains("FairPlay") == false)
        #expect(fair.messages("replaykit-error").first?.contains("multitasking") == true)
        // A code the table lacks is named as unknown, never given a made-up meaning.
        let unknown = try analyze("Error Domain=com.apple.ReplayKit.RPRecordingErrorDomain Code=-5899 \"Something new\"\n")
        #expect(unknown.messages("replaykit-error").first?.contains("unknown code -5899") == true)
        // RPScreenRecorder's own failure line, in an in-app capture.
        let rp = try analyze("2026-03-12 10:00:00.000001+0100 App[5:6] -[RPScreenRecorder startCaptureWithHandler:completionHandler:]_block_invoke_3:1059 failed to start due to error: Error Domain=com.apple.ReplayKit.RPRecordingErrorDomain Code=-5807 \"Recording interrupted by multitasking and content resizing\"\n")
        #expect(rp.messages("replaykit-error").first?.contains("-5807") == true)
        #expect(rp.outcomes == ["failed"])
    }

    @Test("one ReplayKit error echoed by a plugin on the next line is one finding with both lines")
    func replayKitEcho() throws {
        let timed = """
            2026-03-12 10:00:00.000001+0100 App[5:6] Error Domain=com.apple.ReplayKit.RPRecordingErrorDomain Code=-5801 "The user declined application recording"
            2026-03-12 10:00:00.010001+0100 App[5:6] [Plugin] startRecording failed: RPRecordingErrorDomain Code=-5801
            2026-03-12 10:05:00.000001+0100 App[5:6] Error Domain=com.apple.ReplayKit.RPRecordingErrorDomain Code=-5801 "The user declined application recording"

            """
        let a = try analyze(timed)
        #expect(a.kinds == ["replaykit-error", "replaykit-error"])
        #expect((a.findings.first?["evidence"] as? [String])?.count == 2)
        let untimed = try analyze("Error Domain=com.apple.ReplayKit.RPRecordingErrorDomain Code=-5807 \"x\"\nReplayKit error: Recording interrupted by multitasking and content resizing\n")
        #expect(untimed.kinds == ["replaykit-error"])
    }

    // MARK: 5. in-app capture

    @Test("in-app capture sessions: started → frames → stopped, interrupted by backgrounding, failed with a code")
    func inAppCapture() throws {
        let stopped = """
            2026-03-12 10:00:00.000001+0100 Runner[5:6] start replykit capture
            2026-03-12 10:00:00.100001+0100 Runner[5:6] RPDaemonProxy: captureHandlerWithSample:
            2026-03-12 10:00:00.200001+0100 Runner[5:6] RPDaemonProxy: captureHandlerWithSample:
            2026-03-12 10:00:05.000001+0100 Runner[5:6] stop replykit capture, trackID 8A1C

            """
        let a = try analyze(stopped)
        #expect(a.outcomes == ["completed"])
        #expect(a.sdks == ["flutter-webrtc"])
        #expect((a.sessions.first?["frames"] as? [String: Any])?["count"] as? Int == 2)
        let interrupted = """
            2026-03-12 10:00:00.000001+0100 App[5:6] [ScreenShare] RPScreenRecorder.shared().startCapture called
            2026-03-12 10:00:00.100001+0100 App[5:6] RPDaemonProxy: captureHandlerWithSample:
            2026-03-12 10:00:03.000001+0100 App[5:6] RPDaemonProxy: pauseRecording
            2026-03-12 10:00:03.000101+0100 App[5:6] RPDaemonProxy: clientDidResignActiveWithBundleID

            """
        let b = try analyze(interrupted)
        #expect(b.outcomes == ["interrupted"])
        #expect(b.kinds == ["capture-interrupted"])
        let failed = """
            2026-03-12 10:00:00.000001+0100 App[5:6] start replykit capture
            2026-03-12 10:00:00.500001+0100 App[5:6] Error Domain=com.apple.ReplayKit.RPRecordingErrorDomain Code=-5807 "Recording interrupted by multitasking and content resizing"

            """
        let c = try analyze(failed)
        #expect(c.outcomes == ["failed"])
        #expect(c.kinds == ["replaykit-error"])
        // flutter-webrtc#399: the plugin's only line when RPScreenRecorder is not available.
        let unavailable = try analyze("2020-10-31 23:58:17.489548+0300 assessment[525:35302] **Screen recorder is not available!**\n")
        #expect(unavailable.outcomes == ["failed"])
        #expect(unavailable.kinds == ["replaykit-error"])
        #expect(unavailable.messages("replaykit-error").first?.contains("RPScreenRecorder.isAvailable is NO") == true)
        // Side by side with an extension session in the same bundle.
        let both = stopped + "2026-03-12 10:01:00.000001+0100 BroadcastExtension[9:1] broadcast started\n2026-03-12 10:01:00.100001+0100 BroadcastExtension[9:1] open socket connection\n"
        let d = try analyze(both)
        #expect(d.outcomes.sorted() == ["completed", "truncated"])
    }

    // MARK: 6. Apple's own lines

    @Test("Apple's broadcast lines give any extension a session; replayd dying is its own finding")
    func appleBroadcastLines() throws {
        let custom = """
            2026-03-12 10:00:00.000001+0100 MauiBroadcast[44:1] -[RPBroadcastSampleHandler broadcastStartedWithSetupInfo:]
            2026-03-12 10:00:09.000001+0100 MauiBroadcast[44:1] broadcastFinished

            """
        let a = try analyze(custom)
        #expect(a.outcomes == ["completed"])
        #expect(a.sdks == ["replaykit"])
        let replayd = """
            Mar 12 10:00:00 iPhone MauiBroadcast[44] <Notice>: broadcastStarted
            Mar 12 10:00:05 iPhone osanalyticshelper[55] <Notice>: Process replayd [77] killed by jetsam reason highwater

            """
        let b = try analyze(replayd)
        #expect(b.kinds.contains("replayd-killed"))
        #expect(!b.kinds.contains("extension-killed"))
        // An extension no vocabulary knows, seen only through ReplayKit's own class.
        let unknown = try analyze("2026-03-12 10:00:00.000001+0100 XamarinBroadcast[61:1] -[RPBroadcastSampleHandler _processPayload:completion:] 2 buffers\n2026-03-12 10:00:00.500001+0100 XamarinBroadcast[61:1] -[RPBroadcastSampleHandler _processPayload:completion:] 2 buffers\n")
        #expect(unknown.sdks == ["replaykit"])
        #expect(unknown.sessions.first?["process"] as? String == "XamarinBroadcast")
        let exc = try analyze("Mar 12 10:00:00 iPhone kernel[0] <Notice>: EXC_RESOURCE -> replayd[88] exceeded mem limit: ActiveHard 120 MB (fatal)\n")
        #expect(exc.kinds == ["replayd-killed"])
        #expect(exc.sessions.isEmpty)
    }

    // MARK: 7. kills without a session start

    @Test("a broadcast extension's kill is a killed session even alone; other processes' jetsams never end one")
    func killsWithoutStart() throws {
        for line in [
            "Mar 12 10:00:01 iPhone kernel[0] <Notice>: EXC_RESOURCE -> MyBroadcastExt[912] exceeded mem limit: ActiveHard 50 MB (fatal)",
            "Mar 12 10:00:01 iPhone ReportCrash[3] <Notice>: EXC_RESOURCE -> Ext[13] exceeded mem limit: ActiveHard 50 MB (fatal)",
            "Mar 12 10:00:01 iPhone osanalyticshelper[55] <Notice>: Process ScreenShareUpload [4412] killed by jetsam reason per-process-limit",
            // iOS 18 and later: the kernel's own wording, without `EXC_RESOURCE ->`.
            "Mar 12 10:00:01 iPhone kernel[0] <Notice>: memorystatus: Upload [33371] exceeded mem limit: ActiveHard 50 MB (fatal)",
            "Mar 12 10:00:01 iPhone kernel[0] <Notice>: 234295.021 memorystatus: killing_specific_process pid 4412 [BroadcastUpload] (per-process-limit 100 0s rf:- type:daemon) 51200KB - memorystatus_available_pages: 137406",
        ] {
            let a = try analyze(line + "\n")
            #expect(a.outcomes == ["killed"], "\(line)")
            #expect(a.kinds == ["extension-killed"], "\(line)")
        }
        let others = """
            Mar 12 10:00:00 iPhone BroadcastExtension[912] <Notice>: broadcast started
            Mar 12 10:00:00 iPhone BroadcastExtension[912] <Notice>: open socket connection
            Mar 12 10:00:00 iPhone BroadcastExtension[912] <Notice>: client stream open completed
            Mar 12 10:00:01 iPhone kernel[0] <Notice>: EXC_RESOURCE -> NotificationService[812] exceeded mem limit: ActiveHard 24 MB (fatal)
            Mar 12 10:00:02 iPhone kernel[0] <Notice>: EXC_RESOURCE -> MyApp[100] exceeded mem limit: ActiveHard 650 MB (fatal)
            Mar 12 10:00:02 iPhone kernel[0] <Notice>: memorystatus: tunnel [33371] exceeded mem limit: ActiveHard 15 MB (fatal)
            Mar 12 10:00:02 iPhone kernel[0] <Notice>: memorystatus: killing_specific_process pid 33371 [tunnel] (per-process-limit 100 0s rf:- type:daemon) 15360KB
            Mar 12 10:00:02 iPhone pkd[70] <Notice>: Extension com.example.app.BroadcastUpload died unexpectedly
            Mar 12 10:00:03 iPhone BroadcastExtension[912] <Notice>: client connection did close: (null)

            """
        let b = try analyze(others)
        #expect(b.outcomes == ["stopped-by-host"])
        #expect(!b.kinds.contains("extension-killed"))
    }

    // MARK: 8. logs without times

    @Test("without timestamps order decides: connected, frames, ended; never 'never connected'")
    func untimed() throws {
        let text = """
            broadcast started
            open socket connection
            failure: socket file missing
            open socket connection
            client stream open completed
            video sample processed successfully
            video sample processed successfully
            server socket closed
            client connection did close: (null)

            """
        let a = try analyze(text)
        #expect(a.outcomes == ["stopped-by-host"])
        #expect(!a.kinds.contains("never-connected"))
        #expect(!a.kinds.contains("socket-file-missing"))
        #expect((a.sessions.first?["frames"] as? [String: Any])?["count"] as? Int == 2)
        let never = try analyze("broadcast started\nopen socket connection\nfailure: socket file missing\nopen socket connection\nfailure: socket file missing\n")
        #expect(never.kinds.contains("never-connected"))
        #expect(never.messages("socket-file-missing").first?.contains("µs") == false)
    }

    // MARK: 9. honest accounting

    @Test("a syslog whose days lost their padding space on a web page (`Apr 3 07:46:43`, solar2d's forum) reads as the padded one")
    func collapsedDayPadding() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = try String(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"), encoding: .utf8)
        let padded = text.replacingOccurrences(of: "Mar 12 ", with: "Mar  3 ")
        let collapsed = text.replacingOccurrences(of: "Mar 12 ", with: "Mar 3 ")
        #expect(padded != text && collapsed != padded)
        let reports = try reportsWithoutNames([("padded", Array(padded.utf8)), ("collapsed", Array(collapsed.utf8))], in: dir)
        #expect(reports["padded"]!.contains("idevicesyslog") && reports["padded"]!.contains("recognized"))
        #expect(reports["collapsed"] == reports["padded"])
    }

    @Test("every line is a record, a continuation or counted unparsed, whichever anchors hit the file")
    func accounting() throws {
        let registry = try ParserRegistry.builtin()
        let withVocabulary = Prefilter(anchors: EventMatcher(vocabularies: registry.vocabularies).anchors)
        let inputs: [(String, String)] = [
            ("apple-default", "2026-03-12 10:00:00.000001+0100 0x1 Default 0x0 912 0 Ext: open socket connection\n  continued\n2026-03-12 10:00:00.000002+0100 0x1 Default 0x0 912 0 Ext: other thing\nnot a record\n"),
            ("xcode", "2024-05-01 10:00:00.000001+0200 App[1:2] opts = {\n  a = 1;\n}\nopen socket connection\nprint\n"),
            ("plain", "options = {\n  open socket connection\n}\nx\n"),
            ("console-copy", "default\t11:35:41.397185+0100\tExt\topen socket connection\n\tcont\ngarbage\n"),
            // A row that opens a dump (a macOS Console copy's `Stop apps {`): its lines, column-0
            // text and `}` included, go with it whether or not an anchor is in it.
            ("console-copy", "default\t11:35:41.397185+0100\taudiomxd\tStop apps {(\n    \"a\" : 1,\n)} tail\n"
                + "default\t11:35:41.397186+0100\tExt\topen socket connection {\nx\n}\ndefault\t11:35:41.397187+0100\tExt\tdone\n"),
            // `-o short` then `-o short-iso` in one paste: the second mode's lines, after records no
            // anchor hits, are unparsed either way (they were lost uncounted on the fast path).
            // A line ending in a backtick (no span open: the message's), then a dump.
            ("plain", "open socket connection\nhello\nfoo = {`\n  a = 1;\n}\nbar\n"),
            // A code span opened on a line and closed on a later one, whichever path reads them.
            ("journal-short-precise", "Mar 12 10:15:04 h relay[1]: open socket connection\n`Mar 12 10:15:04 h relay[1]: opened span\n"
                + "Mar 12 10:15:05 h relay[1]: hello`\n`\nMar 12 10:15:06 h relay[1]: x\n"),
            // `Job 5 12:30:00` is no collapsed syslog day (no month's name).
            ("journal-short-precise", "Mar 12 10:15:04 h relay[1]: open socket connection\nJob 5 12:30:00 started\nMar 12 10:15:05 h relay[1]: x\n"),
            // A paste's code fence and span, a day whose padding space a web page collapsed.
            ("idevicesyslog", "```log\nApr 3 07:46:43 iPhone pkd[3642] <Warning>: x\nApr  3 07:46:43 iPhone BroadcastExtension[1] <Notice>: Open socket connection\n"
                + "`Apr 3 07:46:44 iPhone pkd[3642] <Warning>: y\nApr 3 07:46:45 iPhone pkd[3642] <Warning>: z`\n```\n"),
            ("journal-short-precise", "Sep 16 11:47:50 h systemd[1004]: Starting Default.\nSep 16 11:47:50 h systemd[1004]: Reached.\n"
                + "2015-09-16T11:47:50+0200 h systemd[1004]: Starting Default.\nhello world\n  indented goes on\n"),
        ]
        for (name, text) in inputs {
            let format = try #require(registry.format(named: name))
            func read(_ prefilter: Prefilter?) throws -> ReadStats {
                let bytes = Array(text.utf8)
                let source = ArraySource(bytes)
                let reader = RecordReader(format: format, lines: LineReader(source: source, path: "t", maxLineLength: 4096), prefilter: prefilter)
                try reader.run { _ in }
                return reader.stats
            }
            let a = try read(withVocabulary)
            let b = try read(nil)
            #expect(a.records == b.records, "\(name)")
            #expect(a.unparsed == b.unparsed, "\(name)")
            #expect(a.skipped == b.skipped, "\(name)")
            #expect(a.lines == b.lines, "\(name)")
            if text.contains("Starting Default") { #expect(a.records == 2 && a.unparsed == 2, "\(a)") }
            if name == "idevicesyslog" { #expect(a.records == 4 && a.unparsed == 0 && a.skipped == 2, "\(a)") }
            if text.contains("Stop apps") { #expect(a.records == 3 && a.unparsed == 0, "\(a)") }
            if text.contains("foo = {`") { #expect(a.records == 6, "\(a)") }
            if text.contains("Job 5") { #expect(a.records == 2 && a.unparsed == 1, "\(a)") }
        }
    }

    @Test("journalctl and syslog as pasted: RFC 5424, the header's year and zone, -x and systemctl status asides, TAB-indented verbose")
    func journalctlAsPasted() throws {
        // RFC 5424 (rsyslog's RSYSLOG_SyslogProtocol23Format) with a relay session in it; the
        // forum paste's kernel line (`- - -`: no pid, msgid, structured data).
        let rfc5424 = try analyze("""
            <30>1 2026-03-12T10:15:04.221+01:00 relay1 broadcast-relay 811 - - session 0b7f3c1e accepted peer=iPhone14,2 room=standup
            <30>1 2026-03-12T10:15:09.221+01:00 relay1 broadcast-relay 811 - [meta seq="2"] session 0b7f3c1e closed reason=peer-eof frames=50 duration=5.0s
            <4>1 2024-04-10T10:15:57.163826-07:00 T01 kernel - - - [25523.801864] WARNING: CPU: 12 PID: 42870 at fs/smb/client/file.c:3341

            """)
        #expect(rfc5424.format == "syslog-pri" && rfc5424.records == 3 && rfc5424.unparsed == 0)
        let relay = try #require((rfc5424.json["relaySessions"] as? [[String: Any]])?.first)
        #expect(relay["host"] as? String == "relay1")
        #expect(relay["accepted"] as? String == "2026-03-12T09:15:04.221000+00:00")  // (relay times: UTC)
        #expect(relay["reason"] as? String == "peer-eof")

        // `-o short` under journalctl's header: the year and zone are the header's (not today's).
        let header = try analyze(dated: false, """
            $ journalctl -u broadcast-relay
            -- Logs begin at Wed 2017-11-08 15:37:00 CET, end at Thu 2017-12-28 16:00:30 CET. --
            Dec 28 06:43:00 relay1 broadcast-relay[811]: session 0b7f3c1e accepted peer=iPhone14,2 room=standup
            -- Subject: A start job for unit broadcast-relay.service has finished successfully
            -- Defined-By: systemd
            --
            Dec 28 06:43:05 relay1 broadcast-relay[811]: session 0b7f3c1e closed reason=peer-eof frames=50 duration=5.0s

            """)
        #expect(header.records == 2 && header.unparsed == 1)
        let accepted = try #require((header.json["relaySessions"] as? [[String: Any]])?.first?["accepted"] as? String)
        #expect(accepted == "2017-12-28T05:43:00.000000+00:00")
        // From CET to CEST the header says nothing of each line's zone: the year only.
        let dst = try analyze(dated: false, """
            -- Journal begins at Sat 2017-03-04 15:37:00 CET, ends at Thu 2017-04-06 16:00:30 CEST. --
            Apr 06 06:43:00 relay1 broadcast-relay[811]: session 0b7f3c1e accepted peer=iPhone14,2 room=standup

            """)
        #expect((dst.json["relaySessions"] as? [[String: Any]])?.first?["accepted"] as? String == "2017-04-06T06:43:00.000000+00:00")
        // `journalctl -f`'s header has no end (nixpkgs#66061): its beginning gives the year and
        // zone; `-x`'s catalog lines as journalctl 246+ marks them (`░░`) are skipped, not unread.
        let follow = try analyze(dated: false, """
            -- Logs begin at Thu 2019-08-01 15:22:28 UTC. --
            Aug 01 15:24:06 relay1 broadcast-relay[811]: session 0b7f3c1e accepted peer=iPhone14,2 room=standup
            ░░ Subject: A start job for unit broadcast-relay.service has finished successfully
            ░░ Defined-By: systemd
            ░░
            Aug 01 15:24:07 relay1 broadcast-relay[811]: session 0b7f3c1e closed reason=peer-eof frames=50 duration=5.0s

            """)
        #expect(follow.records == 2 && follow.unparsed == 0 && follow.input["skipped"] as? Int == 4, "\(follow.input)")
        #expect((follow.json["relaySessions"] as? [[String: Any]])?.first?["accepted"] as? String == "2019-08-01T15:24:06.000000+00:00")
        // Where the journal begins is a floor: `Mar 12` after `Aug 01 2019` is in 2020.
        let floor = try analyze(dated: false, "-- Logs begin at Thu 2019-08-01 15:22:28 UTC. --\n"
                                + "Mar 12 10:15:04 relay1 broadcast-relay[811]: session 0b7f3c1e accepted peer=iPhone14,2 room=standup\n")
        #expect((floor.json["relaySessions"] as? [[String: Any]])?.first?["accepted"] as? String == "2020-03-12T10:15:04.000000+00:00")
        // An identifier with a space ends at its first `[pid]:`; an idevicesyslog line in a
        // journal is no journal line.
        let ident = try analyze(dated: false, """
            Mar 12 10:15:04 relay1 broadcast-relay[811]: session 0b7f3c1e accepted peer=iPhone14,2 room=standup
            Mar 12 10:15:08 relay1 broadcast-relay[811] <Notice>: worker[2]: session 0b7f3c1e closed reason=timeout
            Aug 01 15:24:06 targets-host container target1[3470]: hello

            """)
        #expect(ident.records == 2 && (ident.json["relaySessions"] as? [[String: Any]])?.first?["reason"] is NSNull, "\(ident.input)")
        // `show` dates them the same.
        let shown = try castscope(["show", "-"], stdin: Data("-- Logs begin at Thu 2019-08-01 15:22:28 UTC. --\nAug 01 15:24:06 relay1 broadcast-relay[811]: hello\n".utf8))
        #expect(shown.stdout.contains("2019-08-01 15:24:06.000000+0000"), "\(shown.stdout)")

        // `systemctl status`'s head before the lines: skipped, not unread.
        let status = try analyze("""
            ● broadcast-relay.service - Broadcast relay
                 Loaded: loaded (/etc/systemd/system/broadcast-relay.service; enabled; vendor preset: enabled)
                 Active: failed (Result: exit-code) since Thu 2026-03-12 10:15:09 CET; 5s ago
               Main PID: 811 (code=exited, status=1/FAILURE)
                 CGroup: /system.slice/broadcast-relay.service
                         └─811 /usr/bin/broadcast-relay

            Mar 12 10:15:04 relay1 broadcast-relay[811]: session 0b7f3c1e accepted peer=iPhone14,2 room=standup

            """)
        // (its `Active: failed … since` line is a record of the unit's since session 45: its death)
        #expect(status.records == 2 && status.unparsed == 0)
        #expect(status.input["skipped"] as? Int == 7)  // six lines of the head, one blank
        // Its `Active: … since Thu 2026-03-12 10:15:09 CET;` dates the lines (year and zone).
        let since = try analyze(dated: false, """
                 Active: failed (Result: exit-code) since Thu 2024-03-12 10:15:09 CET; 5s ago

            Mar 12 10:15:04 relay1 broadcast-relay[811]: session 0b7f3c1e accepted peer=iPhone14,2 room=standup

            """)
        #expect((since.json["relaySessions"] as? [[String: Any]])?.first?["accepted"] as? String == "2024-03-12T09:15:04.000000+00:00")
        // `failed … since` is when it stopped: its lines are before it (Dec 31 under Jan 4 2024 is 2023).
        let stopped = try analyze(dated: false, """
                 Active: failed (Result: exit-code) since Thu 2024-01-04 00:00:10 UTC; 5s ago

            Dec 31 23:59:58 relay1 broadcast-relay[811]: session 0b7f3c1e accepted peer=iPhone14,2 room=standup

            """)
        #expect((stopped.json["relaySessions"] as? [[String: Any]])?.first?["accepted"] as? String == "2023-12-31T23:59:58.000000+00:00")

        // A relay writing through a logger with its own dated time (livekit-server's zap, Go's
        // `log`): read as the relay, and that time dates the journal's year-less lines.
        let logger = try analyze(dated: false, """
            Mar 12 10:15:04 relay1 broadcast-relay[811]: 2024-03-12T10:15:04.500+0100 INFO session 0b7f3c1e accepted peer=iPhone14,2 room=standup
            Mar 12 10:15:09 relay1 broadcast-relay[811]: 2024-03-12T10:15:09.500+0100 INFO session 0b7f3c1e closed reason=peer-eof frames=50 duration=5.0s

            """)
        let loggerRelay = (logger.json["relaySessions"] as? [[String: Any]])?.first
        #expect(loggerRelay?["accepted"] as? String == "2024-03-12T09:15:04.000000+00:00", "\(logger.json)")
        #expect(loggerRelay?["reason"] as? String == "peer-eof" && loggerRelay?["frames"] as? Int == 50)

        // Lines a pager cut at the screen's edge (`>` in the last column, livekit#3076's
        // `systemctl status`): the file says so, and how to get whole lines.
        let lines = ["session 0b7f3c1e-5d2a-4e8b-9c61-7a2e4f9d1b03 accepted peer=iPhone14,2 room=standup",
                     "session 0b7f3c1e-5d2a-4e8b-9c61-7a2e4f9d1b03 stats frames=10 bytes=281461 fps=10.0 dropped=0",
                     "session 0b7f3c1e-5d2a-4e8b-9c61-7a2e4f9d1b03 stats frames=10 bytes=282100 fps=10.0 dropped=0",
                     "session 0b7f3c1e-5d2a-4e8b-9c61-7a2e4f9d1b03 closed reason=peer-eof frames=20 duration=2.0s"]
        let chopped = lines.enumerated().map { k, m in String("Mar 12 10:15:0\(k) relay1 broadcast-relay[811]: \(m)".prefix(99)) + ">" }
        let cut = try analyze(chopped.joined(separator: "\n") + "\n")
        #expect(cut.records == 4 && cut.notes.contains { $0.contains("4 of the first 4 lines end in `>` at column 100: a pager cut them") }, "\(cut.notes)")
        let whole = try analyze(lines.enumerated().map { k, m in "Mar 12 10:15:0\(k) relay1 broadcast-relay[811]: \(m)" }.joined(separator: "\n") + "\n")
        #expect(!whole.notes.contains { $0.contains("pager") }, "\(whole.notes)")

        // `-o json-pretty` through a pager: a member's string cut at the screen's edge. The
        // objects after it were read as that string's text and lost; the member is left out.
        let prettyCut = try analyze("""
            {
            	"__CURSOR" : "s=633ab86e915d4210ab09a052655476f9;i=1;b=9b2e6c1d4f3a4b5c8d7e6f5a4b3c2d1e;m=3b9acde8;t=64cd0302>
            	"__REALTIME_TIMESTAMP" : "1773306904673211",
            	"_HOSTNAME" : "relay1",
            	"SYSLOG_IDENTIFIER" : "broadcast-relay",
            	"MESSAGE" : "session 0b7f3c1e accepted peer=iPhone14,2 room=standup"
            }
            {
            	"__REALTIME_TIMESTAMP" : "1773306909673211",
            	"_HOSTNAME" : "relay1",
            	"SYSLOG_IDENTIFIER" : "broadcast-relay",
            	"MESSAGE" : "session 0b7f3c1e closed reason=peer-eof frames=50 duration=5.0s",
            	"_PID" : "811>
            }

            """)
        #expect(prettyCut.format == "journal-json-pretty" && prettyCut.records == 2 && prettyCut.unparsed == 0, "\(prettyCut.input)")
        #expect((prettyCut.json["relaySessions"] as? [[String: Any]])?.first?["reason"] as? String == "peer-eof")
        #expect(prettyCut.errors.count == 1 && prettyCut.errors[0].contains("paste.txt:2: a JSON string cut at its line's end"), "\(prettyCut.errors)")

        // `-o verbose` whose field indent became a TAB (a blog's code block).
        let verbose = try analyze("""
            Thu 2026-03-12 10:15:04.221000 CET [s=438c;i=1d8f;b=a6bd;m=1bfd5a3;t=5e6a;x=9c1a]
            \tPRIORITY=6
            \tSYSLOG_IDENTIFIER=broadcast-relay
            \t_PID=811
            \t_HOSTNAME=relay1
            \tMESSAGE=session 0b7f3c1e accepted peer=iPhone14,2 room=standup

            """)
        #expect(verbose.format == "journal-verbose" && verbose.records == 1 && verbose.unparsed == 0)
        #expect((verbose.json["relaySessions"] as? [[String: Any]])?.first?["host"] as? String == "relay1")
    }

    // MARK: 10. vocabularies seen in real pastes

    @Test("HaishinKit, Twilio, LLDB: sessions and findings from their own lines")
    func newVocabularies() throws {
        let haishin = """
            broadcastStarted - preparing session for URL: rtmp://live.example/app/[REDACTED]
            2025-26-09 13:04:04.774 [Info] [com.haishinkit.RTMPHaishinKit] [RTMPConnection.swift:207] readyState > uninitialized=>versionSent
            2025-26-09 13:04:07.516 [Info] [com.haishinkit.RTMPHaishinKit] [RTMPConnection.swift:207] readyState > ackSent=>handshakeDone
            2025-26-09 13:05:07.516 [Info] [com.haishinkit.RTMPHaishinKit] [RTMPStream.swift:10] status: NetConnection.Connect.Closed
            2025-26-09 13:05:07.517 [Error] [com.haishinkit.RTMPHaishinKit] [RTMPStream.swift:10] connectClosed

            """
        let h = try analyze(haishin)
        #expect(h.format == "haishinkit")
        #expect(h.sdks == ["haishinkit"])
        #expect(h.outcomes == ["socket-error"])
        // The connection reset once it was up (HaishinKit#1688's two lines after #1791's
        // handshake, times made one session's): the log ends after a socket error. The
        // transition back to uninitialized is not read: `close()` logs it on a normal stop.
        let dropped = try analyze("""
            2025-26-09 13:04:05.272 [Info] [com.haishinkit.RTMPHaishinKit] [RTMPConnection.swift:207] readyState > uninitialized=>versionSent
            2025-26-09 13:04:07.516 [Info] [com.haishinkit.RTMPHaishinKit] [RTMPConnection.swift:207] readyState > ackSent=>handshakeDone
            2025-26-09 13:05:31.081 [Warn] [com.haishinkit.HaishinKit] [RTMPSocket.swift:157] stateDidChange(to:) > Connection failed:POSIXErrorCode(rawValue: 54): Connection reset by peer
            2025-26-09 13:05:36.105 [Info] [com.haishinkit.HaishinKit] [RTMPConnection.swift:199] readyState > handshakeDone=>uninitialized

            """)
        #expect(dropped.events == ["socket.connect_attempt", "socket.connected", "socket.error"], "\(dropped.events)")
        #expect(dropped.outcomes == ["socket-error"])
        let stopped = try analyze("""
            2025-26-09 13:04:05.272 [Info] [com.haishinkit.RTMPHaishinKit] [RTMPConnection.swift:207] readyState > uninitialized=>versionSent
            2025-26-09 13:04:07.516 [Info] [com.haishinkit.RTMPHaishinKit] [RTMPConnection.swift:207] readyState > ackSent=>handshakeDone
            2025-26-09 13:34:07.516 [Info] [com.haishinkit.RTMPHaishinKit] [RTMPConnection.swift:199] readyState > handshakeDone=>uninitialized

            """)
        #expect(stopped.outcomes != ["socket-error"], "\(stopped.outcomes)")
        // The same error before the handshake: a connect that failed, not a broken stream.
        let early = try analyze("""
            2025-26-09 13:04:05.272 [Info] [com.haishinkit.RTMPHaishinKit] [RTMPConnection.swift:207] readyState > uninitialized=>versionSent
            2025-26-09 13:04:05.281 [Warn] [com.haishinkit.HaishinKit] [RTMPSocket.swift:157] stateDidChange(to:) > Connection failed:POSIXErrorCode(rawValue: 61): Connection refused

            """)
        #expect(early.outcomes == ["failed-to-connect"], "\(early.outcomes)")
        // Frames sent before the error: it was connected, whatever its lines said.
        let streamed = try analyze("""
            2026-03-12 10:20:00.514204+0100 BroadcastExtension[915:1a2b] open socket connection
            2026-03-12 10:20:00.614204+0100 BroadcastExtension[915:1a2b] video sample processed successfully
            2026-03-12 10:20:00.714204+0100 BroadcastExtension[915:1a2b] video sample processed successfully
            2026-03-12 10:20:01.814204+0100 BroadcastExtension[915:1a2b] client stream error occured: Error Domain=NSPOSIXErrorDomain Code=32 "Broken pipe"

            """)
        #expect(streamed.outcomes == ["socket-error"], "\(streamed.outcomes)")
        // An RTMP push that never connected (HaishinKit#828's Connect.Failed): its extension
        // reaches for the RTMP server, not the host app.
        let refused = try analyze("""
            2021-22-02 12:18:26.270 [Info] [com.haishinkit.HaishinKit] [RTMPConnection.swift:207] readyState > uninitialized=>versionSent
            2021-22-02 12:18:26.381 [Debug] [com.haishinkit.HaishinKit] [RTMPConnection.swift:462] status: NetConnection.Connect.Failed

            """)
        #expect(refused.messages("never-connected").first?.hasPrefix("the extension never connected to the RTMP server") == true,
                "\(refused.messages("never-connected"))")
        let twilio = """
            2026-03-12 10:00:00.000001+0100 TwilioExt[7:1] broadcastStartedWithSetupInfo: nil
            2026-03-12 10:00:10.000001+0100 TwilioExt[7:1] room: ABC didFailToConnectWithError: Error Domain=com.twilio.video Code=53002 "Signaling connection timed out"

            """
        let t = try analyze(twilio)
        #expect(t.sdks == ["twilio"])
        #expect(t.outcomes == ["socket-error"])
        let lldb = try analyze("* thread #1, queue = 'com.apple.main-thread', stop reason = EXC_BAD_ACCESS (code=1, address=0x0)\n")
        #expect(lldb.events == ["app.crashed"])
        #expect(lldb.kinds == ["app-crashed"])
        #expect(lldb.messages("app-crashed").first?.contains("stopped by the debugger on EXC_BAD_ACCESS (code=1, address=0x0)") == true)
        // Xcode's red banner (rn-screen-capture#6, metalresize#1), and Crashlytics' text (HaishinKit#1077).
        let banner = try analyze("Thread 1: EXC_BAD_ACCESS (code=2, address=0x16b443fe0)\n")
        #expect(banner.messages("app-crashed").first?.contains("stopped by the debugger on EXC_BAD_ACCESS (code=2, address=0x16b443fe0)") == true,
                "\(banner.messages("app-crashed"))")
        #expect(try analyze("* thread #1, queue = 'com.apple.main-thread', stop reason = signal SIGSTOP\n").kinds.isEmpty)
        let crashlytics = try analyze("Crashed: com.haishinkit.HaishinKit.NetSocket.output\n0  Foundation                     0x41cacc Data.InlineSlice.replaceSubrange(:with:count:) + 224\n")
        #expect(crashlytics.messages("app-crashed").first?.hasPrefix("the app Crashlytics reported crashed (on com.haishinkit.HaishinKit.NetSocket.output)") == true,
                "\(crashlytics.messages("app-crashed"))")
        // Network.framework's refused connection of the host app, outside a session whose
        // extension connected (handed on before the bundle's rules run): a note, not a warning.
        let refusedBeside = try analyze("""
            2026-03-12 10:15:02.104211+0100 BroadcastExtension[812:1234] broadcast started
            2026-03-12 10:15:02.204211+0100 BroadcastExtension[812:1234] open socket connection
            2026-03-12 10:15:02.214211+0100 BroadcastExtension[812:1234] client stream open completed
            2026-03-12 10:15:09.214211+0100 BroadcastExtension[812:1234] broadcastFinished
            2026-03-12 10:19:05.193274+0100 App[700:1] [connection] nw_socket_handle_socket_event [C13:1] Socket SO_ERROR [61: Connection refused]

            """)
        let refusedFinding = refusedBeside.findings.first { $0["kind"] as? String == "connect-refused" }
        #expect(refusedFinding?["severity"] as? String == "info")
        #expect((refusedFinding?["message"] as? String)?.contains("App C13") == true)
        // The debugger stopping an extension at its memory limit (image_background_remover#8,
        // Harbeth#33 show the wordings) is a kill of the process whose lines it follows.
        for stop in [
            "* thread #53, queue = 'com.apple.root.user-initiated-qos', stop reason = EXC_RESOURCE (RESOURCE_TYPE_MEMORY: high watermark memory limit exceeded) (limit=50 MB)",
            "Thread 1: EXC_RESOURCE RESOURCE_TYPE_MEMORY (limit=50 MB, unused=0x0)",
        ] {
            let debugged = try analyze("""
                2026-03-12 10:15:02.104211+0100 BroadcastExtension[812:1234] broadcast started
                2026-03-12 10:15:02.204211+0100 BroadcastExtension[812:1234] open socket connection
                2026-03-12 10:15:02.214211+0100 BroadcastExtension[812:1234] client stream open completed
                \(stop)

                """)
            #expect(debugged.outcomes == ["killed"], "\(stop)")
            #expect(debugged.kinds == ["extension-killed"], "\(stop)")
        }
    }

    @Test("HaishinKit 1.x, Twilio's core, an uncaught exception: the wordings public issues show")
    func moreWordings() throws {
        // HaishinKit 1.x (HaishinKit.swift#817, #742): handshake, then the server closes.
        let old = """
            2021-29-01 13:42:09.679 [Debug] [com.haishinkit.HaishinKit] [RTMPConnection.swift:462] didSetReadyState(_:) > versionSent
            2021-29-01 13:42:09.687 [Debug] [com.haishinkit.HaishinKit] [RTMPConnection.swift:462] didSetReadyState(_:) > handshakeDone
            2021-29-01 13:43:09.687 [Info] [com.haishinkit.Exsample.iOS] [LiveViewController.swift:154] rtmpStatusHandler(_:) > NetConnection.Connect.Closed

            """
        let h = try analyze(old)
        #expect(h.outcomes == ["truncated"])
        #expect(((h.sessions.first?["connect"] as? [String: Any])?["connectedAt"] as? String) != nil, "\(h.sessions)")
        #expect((h.sessions.first?["reason"] as? String)?.hasPrefix("the other end closed the connection") == true, "\(h.sessions)")
        // Twilio's core (twilio/video-quickstart-ios#302): the Room terminated with 53002.
        let twilio = """
            2018-09-07 15:00:15.607415+0530 ScreenShareTwilio[525:23910] INFO:TwilioVideo:[Signaling]:RESIP::SIP: got content
             DEBUG:TwilioVideo:[Core]:onTerminated: code: 53002 msg: Signaling connection timed out explanation:

            """
        let t = try analyze(twilio)
        #expect(t.outcomes == ["socket-error"])
        // An uncaught exception is a crash on the timeline; a stop with nothing recording no error.
        let crash = try analyze("""
            2021-05-29 23:03:09.275187+0800 Runner[11546:1257656] [ERROR] -[RPScreenRecorder stopCaptureWithHandler:]:526 failed to stop in app recording becasue we're not recording
            2021-05-29 23:03:09.275187+0800 Runner[11546:1257656] *** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: 'Cannot call method when status is 2'

            """)
        #expect(crash.kinds == ["app-crashed"], "\(crash.kinds)")
        #expect(crash.messages("app-crashed").first?.hasPrefix("Runner[11546] crashed (uncaught exception NSInternalInconsistencyException: 'Cannot call method when status is 2')") == true,
                "\(crash.messages("app-crashed"))")
        #expect(crash.events.contains("app.crashed") && crash.events.contains("capture.stop_not_recording"), "\(crash.events)")
    }

    /// A fourth survey of public pastes (flutter-webrtc #937, capacitor-screen-recorder #20,
    /// a .NET MAUI question, ed_screen_recorder #2): in-app capture refused to start, replayd
    /// out of frame buffers, and a crash that is all the paste holds.
    @Test func fourthSurvey() throws {
        let handler = try analyze("2023-01-31 12:29:06.203554+0500 App[2542:21722]  [ERROR] -[RPScreenRecorder startCaptureWithHandler:completionHandler:]_block_invoke:521 undefined completion handler\n")
        #expect(handler.outcomes == ["failed"])
        #expect(handler.kinds == ["replaykit-error"])
        #expect(handler.messages("replaykit-error").first?.contains("without a completion handler") == true, "\(handler.messages("replaykit-error"))")
        let active = try analyze("512 failed to start because we're already active with another session\n")
        #expect(active.outcomes == ["failed"])
        #expect(active.messages("replaykit-error").first?.contains("still running") == true, "\(active.messages("replaykit-error"))")
        let writeback = try analyze("""
            default 17:24:56.282676+0000 BroadcastExt [INFO] -[RPBroadcastSampleHandler _processPayloadWithAudioSample:type:]:180 Broadcast extension received audio payload from replayd

            default 17:24:56.290769+0000 replayd <<<< FigVirtualDisplayProcessor >>>> writebackCacheAllocateBuffer: writeback pool capacity exceeded

            default 17:24:56.290967+0000 replayd <<<< FigVirtualDisplayProcessor >>>> writebackCacheAllocateBuffer: 1515: got error -6689

            default 17:24:56.291004+0000 replayd <<<< FigVirtualDisplayProcessor >>>><private> fvdp_ensureWritebackPixelBuffer: 4074: got error -6689

            """)
        #expect(writeback.kinds.contains("replayd-writeback-overflow"), "\(writeback.kinds)")
        let overflow = writeback.messages("replayd-writeback-overflow")
        #expect(overflow.count == 1 && overflow[0].contains("(error -6689), 3 lines"), "\(overflow)")
        let quotedCrash = try analyze("""
            2022-04-28 08:33:02.467842+0200 Runner[20228:84206] *** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: '*** -[AVAssetWriterInput markAsFinished] Cannot call method when status is 0'

            """)
        #expect(quotedCrash.sessions.isEmpty)
        #expect(quotedCrash.kinds == ["app-crashed"])
        // Quoted in Markdown: each line one record (the quote marker was a record of its own).
        let quoted = try analyze("""
            > 2022-04-28 08:33:02.467842+0200 Runner[20228:84206] flutter:       >>> Start Record Response Output:
            > 2022-04-28 08:33:02.468826+0200 Runner[20228:84206] flutter:       Event Name: startRecordScreen
            > 2022-04-28 08:33:06.747271+0200 Runner[20228:84206] *** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: 'Cannot call method when status is 0'

            """)
        #expect(quoted.format == "xcode")
        #expect(quoted.records == 3, "\(quoted.records)")
        #expect(quoted.kinds == ["app-crashed"])
        #expect(quoted.messages("app-crashed").first?.hasPrefix("Runner[20228] crashed") == true, "\(quoted.messages("app-crashed"))")
        // The host app's SDK says it cannot share the screen (jitsi-meet #4742): an error, with
        // what enables it; likewise a stream it could not create and a missing Info.plist key.
        let unsupported = try analyze("2019-10-15 07:08:19.582650-0400 BeBetter-mobile[6874:2088170] [JitsiMeetSDK] [modules/RTC/ScreenObtainer.js] Screen sharing not supported by the current browser:  react-native\n")
        #expect(unsupported.kinds == ["screen-share-failed"])
        #expect(unsupported.messages("screen-share-failed").first?.contains("not supported in this app (react-native): enable it with the `ios.screensharing.enabled` feature flag") == true,
                "\(unsupported.messages("screen-share-failed"))")
        let failed = try analyze("""
            2026-03-12 10:00:00.000001+0100 JitsiDemo[640:1] [app:tracks] Error creating screen-sharing stream Error(AbortError){"message":"aborted"}
            2026-03-12 10:00:01.000001+0100 JitsiDemo[640:1] Not able to find the RTCScreenSharingExtension key

            """)
        #expect(failed.kinds == ["screen-share-failed", "screen-share-failed"], "\(failed.kinds)")
        // Console rows with a time of day and no date, the bundle giving none: marked `~`, and
        // the legend says the date was assumed (not only print()'s borrowed time).
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let console = dir.appendingPathComponent("console.txt")
        try "default 17:24:56.282676+0000 BroadcastExt [INFO] -[RPBroadcastSampleHandler _processPayloadWithAudioSample:type:]:180 Broadcast extension received audio payload from replayd\n"
            .write(to: console, atomically: true, encoding: .utf8)
        let text = try castscope(["analyze", "--no-color", console.path]).stdout
        #expect(text.contains("~ time not wholly the line's: its date assumed"), "\(text)")
    }

    /// A fifth survey of public pastes: the alert's text as users type it (twilio
    /// video-quickstart-ios #554, an openradar mirror), one crash told twice (jitsi-meet #4995),
    /// and lines outside sessions from files in different zones.
    @Test("ReplayKit's -5807 text in any case; an uncaught exception and its SIGABRT stop are one crash; lines outside sessions keep their zone")
    func fifthSurvey() throws {
        for text in ["\u{201C}screen recording has stopped due to recording interrupted by multitasking and content resizing\u{201D}\n",
                     "Screenrecording fails with error \u{201E}Recording interrupted by multitasking and Content Resizing\u{201C}\n",
                     "Recording Interrupted By Multitasking And Content Resizing\n", "RECORDING INTERRUPTED BY MULTITASKING AND CONTENT RESIZING\n"] {
            let a = try analyze(text)
            #expect(a.kinds == ["replaykit-error"], "\(text)")
            #expect(a.messages("replaykit-error").first?.hasPrefix("ReplayKit error -5807") == true, "\(a.messages("replaykit-error"))")
        }
        let crash = """
            2020-01-20 12:35:32.122883+0530 XXXX[977:193744] [JitsiMeetSDK] NSInvalidArgumentException: *** -[__NSPlaceholderDictionary initWithObjects:forKeys:count:]: attempt to insert nil object from objects[3]
            2020-01-20 12:35:32.123203+0530 XXXX[977:193743] *** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: '*** -[__NSPlaceholderDictionary initWithObjects:forKeys:count:]: attempt to insert nil object from objects[3]'
            libc++abi.dylib: terminating with uncaught exception of type NSException

            * thread #11, queue = 'WebRTCModule.queue', stop reason = signal SIGABRT

            """
        let one = try analyze(crash)
        #expect(one.kinds == ["app-crashed"], "\(one.kinds)")
        let evidence = one.findings.first?["evidence"] as? [Any]
        #expect(evidence?.count == 2, "\(String(describing: evidence))")
        // A SIGABRT with no exception before it, or a second exception, is a crash of its own.
        let two = try analyze(crash + "2020-01-20 12:40:00.000001+0530 XXXX[990:1] *** Terminating app due to uncaught exception 'NSGenericException', reason: 'x'\n"
                              + "2020-01-20 12:41:00.000001+0530 XXXX[991:1] started again\n* thread #1, queue = 'main', stop reason = signal SIGABRT\n")
        #expect(two.kinds == ["app-crashed", "app-crashed", "app-crashed"], "\(two.kinds)")
        // A VPN's packet tunnel shares the 50 MB limit: its jetsam is no broadcast session
        // (xray_ios #19); a broadcast extension named otherwise still is (go-ios #622).
        let tunnel = try analyze("""
            EXC_RESOURCE -> PacketTunnel[38382] exceeded mem limit: ActiveHard 50 MB (fatal)
            memorystatus: killing_specific_process pid 38382 [PacketTunnel] (per-process-limit 100) 51201KB - memorystatus_available_pages: 173203
            Process PacketTunnel [38382] killed by jetsam reason per-process-limit

            """)
        #expect(tunnel.sessions.isEmpty, "\(tunnel.outcomes)")
        #expect(tunnel.kinds.isEmpty, "\(tunnel.kinds)")
        let connect = try analyze("Dec 18 16:14:25 iPad kernel[0] <Notice>: EXC_RESOURCE -> Connect[9546] exceeded mem limit: ActiveHard 50 MB (fatal)\n")
        #expect(connect.outcomes == ["killed"], "\(connect.outcomes)")
        // Outside sessions: each line in its own file's zone, a borrowed time marked `~`.
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try "2020-01-20T07:00:00.000001+0000 iphone osanalyticshelper[1]: Process replayd [26715] killed by jetsam reason highwater\n"
            .write(to: dir.appendingPathComponent("a.log"), atomically: true, encoding: .utf8)
        try crash.write(to: dir.appendingPathComponent("b.log"), atomically: true, encoding: .utf8)
        let text = try castscope(["analyze", "--no-color", dir.path]).stdout
        #expect(text.contains("  2020-01-20T07:00:00.000001+00:00  sys  Process replayd"), "\(text)")
        #expect(text.contains("  2020-01-20T12:35:32.123203+05:30  sys  *** Terminating app"), "\(text)")
        #expect(text.contains("stop reason = signal SIGABRT ~  "), "\(text)")
        // A session of one instant says when, not "lasted 0 µs"; two instants say how long.
        try FileManager.default.removeItem(at: dir.appendingPathComponent("b.log"))
        let kill = "Dec 18 16:14:25 iPad kernel[0] <Notice>: EXC_RESOURCE -> Connect[9546] exceeded mem limit: ActiveHard 50 MB (fatal)\n"
        try kill.write(to: dir.appendingPathComponent("b.log"), atomically: true, encoding: .utf8)
        let once = try castscope(["analyze", "--no-color", "--date", "2026-03-12", dir.path]).stdout
        #expect(once.contains("Connect[9546]  killed") && !once.contains("lasted"), "\(once)")
        let lines = "2023-06-21 22:06:20.890540+0800 BroadcastExtension[6966:290838] [Broadcast] server socket closed\n"
            + "2023-06-21 22:06:22.890778+0800 BroadcastExtension[6966:290838] [Broadcast] client connection did close nil\n"
        try lines.write(to: dir.appendingPathComponent("b.log"), atomically: true, encoding: .utf8)
        let twice = try castscope(["analyze", "--no-color", dir.path]).stdout
        #expect(twice.contains("  lasted 2.0 s"), "\(twice)")
    }

    /// A sixth survey: a crash report pasted as text (an Apple forum thread, with the extension's
    /// names put in) is the kill the `.ips` file would give, at the report's time in its zone; a
    /// report cut before its exception gives nothing. Its exception part pasted alone (the
    /// forum post's first lines; a Twilio issue's `Exception Type: EXC_BAD_ACCESS (SIGSEGV)`
    /// paste) is a crash of a process it does not name, unless a whole report of the same
    /// crash follows in the file.
    @Test("a crash report pasted as text is its process's kill, at the report's time, on its termination line")
    func pastedCrashReport() throws {
        let header = """
            Exception Type:  EXC_CRASH (SIGKILL)
            Termination Reason: RUNNINGBOARD 0xd00d2bad

            Attaching error log below.

            Incident Identifier: 5CE05737-666A-4AD8-9BC5-D3ECD4CE2F71
            Distributor ID:      com.apple.AppStore
            Hardware Model:      iPhone14,2
            Process:             ScreenShareExt [482]
            Path:                /private/var/containers/Bundle/Application/B0D2B0B9/App.app/PlugIns/ScreenShareExt.appex/ScreenShareExt
            Identifier:          uk.co.example.app.ScreenShareExt
            Parent Process:      launchd [1]

            Date/Time:           2024-05-01 16:47:45.5386 +0100
            OS Version:          iPhone OS 17.4.1 (21E236)

            Exception Type:  EXC_CRASH (SIGKILL)
            Exception Codes: 0x0000000000000000, 0x0000000000000000
            Termination Reason: RUNNINGBOARD 0xd00d2bad

            Triggered by Thread:  0

            """
        let a = try analyze(header)
        #expect(a.records == 16, "\(a.records)")
        #expect(a.outcomes == ["killed"], "\(a.outcomes)")
        #expect(a.kinds == ["extension-killed"], "\(a.kinds)")
        let message = a.messages("extension-killed").first ?? ""
        #expect(message.contains("ScreenShareExt[482] was killed (Crash report: ScreenShareExt[482] terminated: EXC_CRASH (SIGKILL); termination RUNNINGBOARD 0xd00d2bad)"), "\(message)")
        let start = a.sessions.first?["start"] as? String ?? ""
        #expect(start.hasPrefix("2024-05-01T16:47:45.5386") && start.hasSuffix("+01:00"), "\(start)")
        // The evidence is the termination line (19 of the paste).
        let evidence = "\(a.findings.first?["evidence"] ?? "")"
        #expect(evidence.contains("paste.txt:19"), "\(evidence)")
        // An app's whole report, crashed on a signal (OneSignal-iOS-SDK#870: `EXC_CRASH (SIGABRT)`),
        // outside any session: a crash of the process it names (no finding before session 40);
        // the same report killed (`SIGKILL`) is no crash.
        let app = """
            Incident Identifier: C0676F28-0BAC-4C63-973A-06B0A174E07B
            Hardware Model:      iPod9,1
            Process:             brandpoint [1178]
            Identifier:          com.brandpointservices

            Date/Time:           2021-02-26 10:21:20.5872 -0500
            OS Version:          iPhone OS 14.4 (18D52)

            Exception Type:  EXC_CRASH (SIGABRT)
            Exception Codes: 0x0000000000000000, 0x0000000000000000
            Exception Note:  EXC_CORPSE_NOTIFY
            Triggered by Thread:  3

            """
        let crashed = try analyze(app)
        #expect(crashed.sessions.isEmpty && crashed.kinds == ["app-crashed"], "\(crashed.kinds)")
        #expect(crashed.messages("app-crashed").first?.hasPrefix("brandpoint[1178] crashed (EXC_CRASH (SIGABRT), EXC_CORPSE_NOTIFY; thread 3)") == true,
                "\(crashed.messages("app-crashed"))")
        let killedApp = try analyze(app.replacingOccurrences(of: "EXC_CRASH (SIGABRT)", with: "EXC_CRASH (SIGKILL)"))
        #expect(killedApp.kinds.isEmpty, "\(killedApp.kinds)")
        // macOS aligns the values in one column (livekit client-sdk-swift#266): the same kill.
        let aligned = try analyze(header.replacingOccurrences(of: "Exception Type:  EXC", with: "Exception Type:        EXC"))
        #expect(aligned.kinds == ["extension-killed"], "\(aligned.kinds)")
        // A memory kill by the report's words; the session opened by it as the `.ips` opens one.
        let jetsam = try analyze("Hardware Model:      iPhone14,2\nProcess:             BroadcastUpload [77]\nDate/Time:           2024-05-01 16:47:45.5386 +0100\n"
                                 + "Exception Type:  EXC_RESOURCE (SIGKILL)\nException Subtype: MEMORY\nTermination Reason: Namespace JETSAM, Code 0x3 (per-process-limit)\n")
        #expect(jetsam.outcomes == ["killed"], "\(jetsam.outcomes)")
        // No process named: whose is not made up; no session. A SIGKILL is a kill (a warning),
        // the same report with SIGSEGV a crash.
        let noProcess = try analyze("Hardware Model:      iPhone14,2\nException Type:  EXC_CRASH (SIGKILL)\nTermination Reason: RUNNINGBOARD 0xd00d2bad\n")
        #expect(noProcess.kinds == ["app-crashed"] && noProcess.sessions.isEmpty, "\(noProcess.kinds)")
        #expect(noProcess.messages("app-crashed") == ["a process the pasted crash report does not name was killed (EXC_CRASH (SIGKILL); termination RUNNINGBOARD 0xd00d2bad), not a crash of its own: if it was the broadcast extension or its app, sharing stopped with it"],
                "\(noProcess.messages("app-crashed"))")
        #expect(noProcess.findings.map { $0["severity"] as? String } == ["warning"])
        let noProcessCrash = try analyze("Hardware Model:      iPhone14,2\nException Type:  EXC_BAD_ACCESS (SIGSEGV)\nTermination Reason: Namespace SIGNAL, Code 11\n")
        #expect(noProcessCrash.findings.map { $0["severity"] as? String } == ["error"] && noProcessCrash.messages("app-crashed").first?.contains(" crashed (EXC_BAD_ACCESS (SIGSEGV)") == true,
                "\(noProcessCrash.messages("app-crashed"))")
        // The part from `Exception Type:` on, as an issue's paste has it (twilio-video-ios #114).
        let twilio = try analyze("""
            Exception Type:  EXC_BAD_ACCESS (SIGSEGV)
            Exception Subtype: KERN_INVALID_ADDRESS at 0x0000e9d037ba924c
            VM Region Info: 0xe9d037ba924c is not in any region.  Bytes after previous region: 256599461106253
                  REGION TYPE                      START - END             [ VSIZE] PRT/MAX SHRMOD  REGION DETAIL

            Termination Signal: Segmentation fault: 11
            Termination Reason: Namespace SIGNAL, Code 0xb
            Terminating Process: exc handler [6008]
            Triggered by Thread:  7

            Thread 7 name:  MediaFactoryImpl::signaling
            Thread 7 Crashed:
            0   TwilioVideo                   \t0x0000000100960e58 0x10065c000 + 3165784

            """)
        #expect(twilio.kinds == ["app-crashed"], "\(twilio.kinds)")
        #expect(twilio.messages("app-crashed").first?.contains("(EXC_BAD_ACCESS (SIGSEGV), KERN_INVALID_ADDRESS at 0x0000e9d037ba924c; termination Namespace SIGNAL, Code 0xb; thread 7, top frame in TwilioVideo)") == true,
                "\(twilio.messages("app-crashed"))")
        #expect("\(twilio.findings.first?["evidence"] ?? "")".contains("paste.txt:7"))
        // A paste that begins at `Process:` (the device lines left out) names it: the extension's kill.
        let fromProcess = try analyze("Process:             BroadcastUpload [4821]\nIdentifier:          com.example.app.BroadcastUpload\n"
                                      + "Date/Time:           2024-05-02 10:11:12.123 +0200\n\nException Type:  EXC_RESOURCE\nException Subtype: MEMORY\n"
                                      + "Exception Message: (Limit 50 MB) Crossed High Water Mark\nTriggered by Thread:  3\n")
        #expect(fromProcess.outcomes == ["killed"] && fromProcess.kinds == ["extension-killed"], "\(fromProcess.kinds)")
        #expect((fromProcess.sessions.first?["start"] as? String ?? "") == "2024-05-02T10:11:12.123000+02:00", "\(fromProcess.sessions)")
        // Quoted twice with a different crash between: each unnamed one that no whole report
        // claims is kept, the one a report claims is not.
        let two = try analyze("Exception Type:  EXC_CRASH (SIGABRT)\nTermination Reason: A\n\n" + header)
        #expect(two.kinds.sorted() == ["app-crashed", "extension-killed"], "\(two.kinds)")
        #expect(two.messages("app-crashed").first?.contains("(EXC_CRASH (SIGABRT); termination A)") == true, "\(two.messages("app-crashed"))")
        let cut = try analyze("Hardware Model:      iPhone14,2\nProcess:             ScreenShareExt [482]\nTermination Reason: RUNNINGBOARD 0xd00d2bad\n")
        #expect(cut.kinds.isEmpty && cut.sessions.isEmpty)
        // A JetsamEvent's process entries pasted as JSON (an Apple forum thread): each killed
        // process as the whole report gives it; a tunnel's is no broadcast session.
        let fragment = try analyze("""
              {
                "uuid" : "14350be0-e8a2-3419-b7fa-42ae204997e5",
                "states" : [
                  "frontmost"
                ],
                "rpages" : 960,
                "reason" : "per-process-limit",
                "pid" : 4624,
                "name" : "RebornTunnel"
              },
              {
                "rpages" : 3300,
                "reason" : "per-process-limit",
                "pid" : 4625,
                "name" : "BroadcastUploadExtension",
                "note" : "a } in a string"
              },

            """)
        #expect(fragment.records == 2, "\(fragment.records)")
        #expect(fragment.outcomes == ["killed"], "\(fragment.outcomes)")
        #expect(fragment.messages("extension-killed").first?.contains("BroadcastUploadExtension[4625] was killed at its 51 MB memory limit (per-process-limit)") == true,
                "\(fragment.messages("extension-killed"))")
        #expect(fragment.sessions.count == 1 && fragment.sessions.first?["process"] as? String == "BroadcastUploadExtension",
                "\(fragment.sessions)")
        // The whole report with its middle elided (`...`, a blog's JetsamEvent): its own object
        // never closes, and its entry is still a kill (it was lost before session 40).
        let elided = try analyze("""
            {"bug_type":"298","timestamp":"2020-01-03 04:11:13.65 +0800","os_version":"iPhone OS 11.4.1 (15G77)"}
            {
              "product" : "iPhone10,1",
              "memoryStatus" : {
              "pageSize" : 16384,
              "memoryPages" : {
                "active" : 39800
              }
            },
            ...
              {
                "states" : [
                  "frontmost"
                ],
                "rpages" : 3300,
                "reason" : "per-process-limit",
                "pid" : 4625,
                "name" : "BroadcastUploadExtension"
              },
            ...

            """)
        #expect(elided.outcomes == ["killed"], "\(elided.outcomes) \(elided.json)")
        #expect(elided.messages("extension-killed").first?.contains("BroadcastUploadExtension[4625] was killed at its 51 MB memory limit") == true)
        // A JSON log line with a `reason` and a `name` is no process entry (no `rpages`).
        let pino = try analyze("2023-09-08T17:20:30+0200 host relay[811]: {\"level\":30,\"pid\":811,\"name\":\"relay\",\"msg\":\"peer left\",\"reason\":\"timeout\"}\n")
        #expect(pino.kinds.isEmpty && pino.sessions.isEmpty && pino.unattachedCount == 0, "\(pino.kinds)")
        // Lines far after the model are no header of it.
        let far = try analyze("Hardware Model:      iPhone14,2\nProcess:             ScreenShareExt [482]\n" + String(repeating: "noise\n", count: 70)
                              + "Termination Reason: x\n")
        #expect(far.kinds.isEmpty)
    }

    /// iOS 26's kernel line names no process (`memorystatus: exceeded mem limit: ActiveHard
    /// 50 MB`): with one extension's session open it is that extension's kill; with two, or
    /// none, it stays a line of its own.
    @Test("a 50 MB kill that names no process ends the one extension session open, and no other")
    func namelessKill() throws {
        let start = "Dec 18 16:14:20 iPad ReplayKitExt(ReplayKit)[9546] <Notice>: broadcastStartedWithSetupInfo\n"
        let kill = "Dec 18 16:14:25 iPad kernel[0] <Notice>: memorystatus: exceeded mem limit: ActiveHard 50 MB (fatal)\n"
        let one = try analyze(start + kill)
        #expect(one.outcomes == ["killed"], "\(one.outcomes)")
        #expect((one.sessions.first?["reason"] as? String ?? "").contains("names no process"), "\(one.sessions)")
        let other = "Dec 18 16:14:21 iPad OtherExt(ReplayKit)[9547] <Notice>: broadcastStartedWithSetupInfo\n"
        let two = try analyze(start + other + kill)
        #expect(!two.outcomes.contains("killed"), "\(two.outcomes)")
        let none = try analyze(kill)
        #expect(none.sessions.isEmpty, "\(none.outcomes)")
        // Not at the broadcast limit: a host app's 650 MB is no extension's.
        let host = try analyze(start + kill.replacingOccurrences(of: "50 MB", with: "650 MB"))
        #expect(!host.outcomes.contains("killed"), "\(host.outcomes)")
    }

    /// Paste damage the fourth survey left: a line wrapped inside an Objective-C method name
    /// (capacitor-screen-recorder #20) and an NSLog dictionary printed from column 0 inside a
    /// Console copy (CopilotForXcode #35).
    @Test("a line wrapped inside -[Class selector] is one record; a column-0 dump in a Console copy continues its row")
    func wrappedAndColumnZeroDumps() throws {
        let wrapped = try analyze("""
            To Native ->  ScreenRecorder start 130865217
            2023-01-31 12:29:06.203554+0500 App[2542:21722]  [ERROR] -[RPScreenRecorder\u{20}
            startCaptureWithHandler:completionHandler:]_block_invoke:521 undefined completion handler
            To Native ->  ScreenRecorder stop 130865218

            """)
        #expect(wrapped.records == 3, "\(wrapped.records)")
        #expect(wrapped.outcomes == ["failed"])
        #expect(wrapped.kinds == ["replaykit-error"])
        #expect(wrapped.messages("replaykit-error").first?.contains("-[RPScreenRecorder startCaptureWithHandler:completionHandler:]") == true,
                "\(wrapped.messages("replaykit-error"))")
        // Not wrapped: the method name is closed, or the next line is no rest of one.
        for (text, records) in [
            ("2023-01-31 12:29:06.203554+0500 App[2542:21722] -[RPScreenRecorder start] done\nstartCapture:]x\n", 2),
            ("2023-01-31 12:29:06.203554+0500 App[2542:21722] array [RPScreenRecorder \nstartCapture:]\n", 2),
            ("2023-01-31 12:29:06.203554+0500 App[2542:21722] -[RPScreenRecorder \nflutter: value] two words\n", 2),
        ] {
            let a = try analyze(text)
            #expect(a.records == records, "\(text)")
        }
        // A dump left open ends with the next record, also one the prefilter passes over: the
        // irrelevant records after it keep their continuation lines (they were counted unparsed).
        var relay = "2023-09-08T17:20:30+0200 host broadcast-relay[811]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2\n{\n    a = 1;\n"
        for i in 0..<300 { relay += "2023-09-08T17:20:31+0200 host zzapp[1]: noise \(i)\n  more of it\n  and more\n" }
        let open = try analyze(relay)
        #expect(open.format == "journal-short-iso")
        #expect(open.unparsed == 0, "\(open.unparsed)")
        #expect(open.records == 301, "\(open.records)")
        let dump = "Default\t14:39:22.411993+0900\tBroadcastExt\tReleased connection: 2F64\n{\n    UUID = \"2F64\";\n    eventCount = 0;\n}\n"
            + "Default\t14:39:22.511993+0900\tBroadcastExt\topen socket connection\n"
        let console = try analyze(dump)
        #expect(console.format == "console-copy")
        #expect(console.records == 2, "\(console.records)")
        #expect(console.unparsed == 0, "\(console.unparsed)")
        // Its spaces variant too; and a stray line at column 0 is still counted unparsed.
        let spaces = try analyze(dump.replacingOccurrences(of: "\t", with: "    ").replacingOccurrences(of: "Default", with: "default")
                                 + "stray words\n")
        #expect(spaces.format == "console-copy-spaces")
        #expect(spaces.records == 2, "\(spaces.records)")
        #expect(spaces.unparsed == 1, "\(spaces.unparsed)")
    }

    /// `journalctl -o export` pasted with the shell's prompt before it and after it (systemd
    /// #16202): the prompt is no binary field whose "size" swallows the first entry.
    @Test("a shell prompt around a pasted export is an unparsed line, not a binary field")
    func exportAfterPrompt() throws {
        let entry = { (i: Int, m: String) in
            "__CURSOR=s=\(i)\n__REALTIME_TIMESTAMP=\(1_773_306_904_000_000 + i * 1_000_000)\n_PID=811\nSYSLOG_IDENTIFIER=broadcast-relay\nMESSAGE=\(m)\n\n"
        }
        let a = try analyze("ruben@nas:~$ journalctl --no-pager -o export -n 2\n"
                            + entry(1, "session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted from 10.0.0.7")
                            + entry(2, "session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 closed") + "ruben@nas:~$ \n", name: "relay.export")
        #expect(a.format == "journal-export" && a.records == 2 && a.unparsed == 2 && a.errors.isEmpty, "\(a.format ?? "") \(a.records) \(a.unparsed) \(a.errors)")
        // A binary MESSAGE pasted from a terminal: its size's bytes in caret notation
        // (victoriametrics#7105: `^G^@^@^@^@^@^@^@foo` then `bar`); a printable low byte shows
        // as itself (55 is `7`). The entry is read (it was skipped with an error).
        func caret(_ n: Int) -> String {
            (0..<8).map { k in
                let b = (n >> (8 * k)) & 0xFF
                return b >= 0x20 && b < 0x7F ? String(UnicodeScalar(UInt8(b))) : "^" + String(UnicodeScalar(UInt8(b == 0x7F ? 0x3F : b + 0x40)))
            }.joined()
        }
        let message = "session 7c1e0d52 accepted peer=iPhone14,2\nroom=standup"
        let binary = "__REALTIME_TIMESTAMP=1773306904000000\n_PID=811\nSYSLOG_IDENTIFIER=broadcast-relay\nMESSAGE\n\(caret(message.utf8.count))\(message)\n_HOSTNAME=relay1\n\n"
        let b = try analyze(binary + entry(2, "session 7c1e0d52 closed reason=peer-eof frames=50 duration=5.0s"), name: "relay.export")
        #expect(b.records == 2 && b.errors.isEmpty, "\(b.records) \(b.errors)")
        #expect((b.json["relaySessions"] as? [[String: Any]])?.first?["reason"] as? String == "peer-eof", "\(b.json)")
        #expect(caret(7) == "^G^@^@^@^@^@^@^@" && caret(55) == "7^@^@^@^@^@^@^@")
    }

    /// A seventh survey (formats): Xcode 15+ copies its console with metadata as each entry's
    /// message lines, then `Type: … | Timestamp: … | Process: … | …` (four real pastes: an
    /// Apple forum thread's BobCam agent, a visionOS app, a macOS app with blank lines between
    /// entries, a feedback report without `Process:` and a `+0900` zone after a 660-byte
    /// message). The lines below are the first of the BobCam paste, then a broadcast
    /// extension's entries in the same layout.
    @Test("Xcode's console copied with metadata: one record per entry at its first line, with its time, process and subsystem; print() entries take the next time")
    func xcodeConsoleWithMetadata() throws {
        let bobcam = """
            Publishing changes from background threads is not allowed; make sure to publish values from the main thread (via operators like receive(on:)) on model updates.
            Type: Fault | Timestamp: 2025-08-22 10:41:12.881714+09:00 | Process: BobCamAgent | Library: SwiftUICore | Subsystem: com.apple.runtime-issues | Category: SwiftUI | TID: 0xf900
            Frame dropped
            Frame dropped
            Type: stdio
            App is being debugged, do not track this hang
            Type: Error | Timestamp: 2025-08-22 10:41:13.994158+09:00 | Process: BobCamAgent | Library: HangTracer | Subsystem: com.apple.hangtracer | Category:  | TID: 0xf700
            Hang detected: 0.77s (debugger attached, not reporting)
            Type: Error | Timestamp: 2025-08-22 10:41:13.994268+09:00 | Process: BobCamAgent | Library: HangTracer | Subsystem: com.apple.hangtracer | Category:  | TID: 0xf700

            """
        // The source: one JSON line per entry at its first line, the entry's other lines empty.
        let out = String(decoding: try drain(XcodeMetadataSource(MemorySource(bobcam))), as: UTF8.self)
        let outLines = out.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(outLines.count == bobcam.split(separator: "\n", omittingEmptySubsequences: false).count, "\(out)")
        #expect(outLines[0].hasPrefix(#"{"xcodeConsole":1,"message":"Publishing changes"#) && outLines[1].isEmpty, "\(out)")
        #expect(outLines[2] == #"{"xcodeConsole":1,"message":"Frame dropped\nFrame dropped","type":"stdio","process":"BobCamAgent","timestamp":"2025-08-22 10:41:13.994158+09:00","timeInferred":true}"#,
                "\(outLines[2])")
        #expect(outLines[5].contains(#""category":"","tid":"0xf700""#) && outLines[7].contains("Hang detected"), "\(out)")
        let real = try analyze(bobcam)
        #expect(real.format == "xcode-metadata" && real.records == 4 && real.unparsed == 0, "\(real.format ?? "") \(real.records)")

        // A broadcast extension's entries: one session, each line cited where it is.
        let meta = " | Process: BroadcastExtension | Library: BroadcastExtension | Subsystem: org.jitsi.meet.broadcast | Category: socket | TID: 0x1f03"
        let ext = """
            broadcastStarted(withSetupInfo:)
            Type: stdio
            Open socket connection
            Type: Notice | Timestamp: 2026-03-12 10:15:02.104211+01:00\(meta)
            client stream open completed
            Type: Notice | Timestamp: 2026-03-12 10:15:02.110000+01:00\(meta)

            video sample processed successfully
            Type: stdio
            server socket closed
            Type: Notice | Timestamp: 2026-03-12 10:15:12.000000+01:00\(meta)
            client connection did close: (null)
            Type: Notice | Timestamp: 2026-03-12 10:15:12.000100+01:00\(meta)

            """
        let a = try analyze(ext)
        #expect(a.format == "xcode-metadata" && a.records == 6, "\(a.format ?? "") \(a.records)")
        #expect(a.outcomes == ["stopped-by-host"], "\(a.outcomes)")
        #expect(a.sessions.first?["process"] as? String == "BroadcastExtension", "\(a.sessions)")
        let rows = a.timeline(0).map { "\($0["time"] as? String ?? "-") \($0["source"] as? String ?? "")" }
        #expect(rows.first?.hasPrefix("2026-03-12T10:15:02.104211+01:00 ") == true && rows.first?.hasSuffix("paste.txt:1") == true, "\(rows)")
        #expect(rows.contains { $0.hasPrefix("2026-03-12T10:15:12.000000+01:00") && $0.hasSuffix("paste.txt:8") }, "\(rows)")
        #expect(rows.contains { $0.hasSuffix("paste.txt:12") }, "\(rows)")

        // A first message longer than 512 bytes before its metadata line, with no `Process:`
        // and a `+0900` zone (the feedback report's paste); a last entry whose metadata the
        // selection left out takes the last time.
        let long = "> {CSInlineDonation[async]: " + String(repeating: "x", count: 640) + "}\n"
            + "Type: Error | Timestamp: 2026-07-04 22:23:14.279294+0900 | Library: CoreSpotlight | Subsystem: com.apple.corespotlight | Category: index | TID: 0xf09f\n"
            + "broadcastFinished\n"
        let l = try analyze(long)
        #expect(l.format == "xcode-metadata" && l.records == 2, "\(l.format ?? "") \(l.records)")
        // A file with no metadata line is not this format.
        #expect(!XcodeMetadataSource.detect(Array("Type: stdio is a word here\nTimestamp: 3\n".utf8)))
        #expect(!XcodeMetadataSource.detect(Array("Process: x | Foo: y\n".utf8)))
    }
}

/// Bytes in memory as a `ByteSource`.
private final class ArraySource: ByteSource {
    private let bytes: [UInt8]
    private var position = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var consumedOffset: UInt64 { UInt64(position) }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, bytes.count - position)
        if n > 0 { bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + position, byteCount: n) } }
        position += n
        return n
    }
}

import Foundation
import Testing

@testable import CastscopeKit

@Suite("Terminal colours: captured text with escape sequences reads as the text under them")
struct TerminalColourTests {
    static let esc = "\u{1B}"

    @Test("CSI, OSC (BEL or ST), charset and two-byte escapes come out; text, line breaks and a sequence cut by a line break stay")
    func sequences() throws {
        let e = Self.esc
        let cases: [(String, String)] = [
            ("\(e)[32m2026-02-21 21:22:45.272141\(e)[0m msg\n", "2026-02-21 21:22:45.272141 msg\n"),
            ("\(e)[0;1;38;5;185mwarn\(e)[0m\n", "warn\n"),
            ("\(e)]0;title\u{07}after\n", "after\n"),
            ("\(e)]8;;https://x\(e)\\link\(e)]8;;\(e)\\\n", "link\n"),
            ("\(e)(Bplain\(e)7\(e)8\n", "plain\n"),
            ("\(e)P+q544e\(e)\\kept\n", "kept\n"),
            ("\(e)[12\nnext\n", "\nnext\n"),
            ("a\(e)\(e)[1mb\n", "ab\n"),
            ("no escapes at all\n", "no escapes at all\n"),
        ]
        for (input, want) in cases {
            let bytes = Array(input.utf8)
            #expect(TerminalEscapeSource.stripped(bytes) == Array(want.utf8), "\(input.debugDescription)")
            // The same across reads of one byte each.
            #expect(try drain(TerminalEscapeSource(ChunkedSource(bytes, chunk: 1))) == Array(want.utf8), "\(input.debugDescription)")
        }
        // A coloured capture: lines that begin with a sequence. Not: one inside a line (an
        // export's value must keep its bytes), nor a paste that lost its ESC bytes.
        #expect(TerminalEscapeSource.detect(Array("\(e)[32mone\(e)[0m\n\(e)[32mtwo\(e)[0m\nthree\n".utf8)))
        #expect(!TerminalEscapeSource.detect(Array("MESSAGE=\(e)[31mred\(e)[0m\nMESSAGE=\(e)[31mred\n".utf8)))
        #expect(!TerminalEscapeSource.detect(Array("[0;32m  OK  [0m] lost its ESC in a paste\n[0;32m  OK  [0m]\n".utf8)))
    }

    @Test("a file coloured from its first line (pymobiledevice3 with colour, a script capture) is detected and read as its format")
    func colouredFromTheStart() throws {
        let e = Self.esc
        let lines = [
            "\(e)[32m2026-02-21 21:22:45.272141\(e)[0m \(e)[35mreplayd\(e)[0m{\(e)[35mReplayKit\(e)[0m}[\(e)[36m107\(e)[0m] <\(e)[37mNOTICE\(e)[0m>: \(e)[37mbroadcast started\(e)[0m",
            "\(e)[32m2026-02-21 21:22:47.001000\(e)[0m \(e)[35mBroadcastExtension\(e)[0m{}[\(e)[36m2915\(e)[0m] <\(e)[31mERROR\(e)[0m>: \(e)[31mclient connection did close nil\(e)[0m",
        ]
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("colour.txt")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)
        let out = try castscope(["show", "--style", "ndjson", file.path])
        let records = out.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(records.count == 2)
        #expect(records.last?["timestamp"] as? String == "2026-02-21 21:22:47.001000")
        #expect(records.last?["processImagePath"] as? String == "BroadcastExtension")
        #expect(records.last?["eventMessage"] as? String == "client connection did close nil")
        #expect(!out.stdout.contains(e))
    }

    @Test("the stopped-10001 device log captured with pymobiledevice3 (text, coloured as before 2024, or --format json) reads as idevicesyslog's capture of it")
    func pymobiledevice3Capture() throws {
        let e = Self.esc
        let sample = packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt")
        let lines = try String(contentsOf: sample, encoding: .utf8).split(separator: "\n")
        var text = "", coloured = "", json = ""
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        for line in lines {
            // `Mar 12 11:02:07 BroadcastExtension[915] <Notice>: message`
            guard let open = line.firstIndex(of: "["), let close = line.firstIndex(of: "]"), let lt = line.range(of: " <"),
                let gt = line.range(of: ">: "), let month = months.firstIndex(of: String(line.prefix(3)))
            else { continue }
            let day = line.dropFirst(4).prefix(2).trimmingCharacters(in: .whitespaces)
            let time = "2026-\(String(format: "%02d", month + 1))-\(String(format: "%02d", Int(day)!)) \(line.dropFirst(7).prefix(8))"
            let process = line[line.index(line.startIndex, offsetBy: 16)..<open]
            let pid = line[line.index(after: open)..<close]
            let level = line[lt.upperBound..<gt.lowerBound].uppercased()
            let message = String(line[gt.upperBound...])
            text += "\(time) \(process){\(process)}[\(pid)] <\(level)>: \(message)\n"
            coloured += "\(e)[32m\(time)\(e)[0m \(e)[35m\(process)\(e)[0m{\(e)[35m\(process)\(e)[0m}[\(e)[36m\(pid)\(e)[0m] <\(level)>: \(e)[37m\(message)\(e)[0m\n"
            let object: [String: Any] = ["pid": Int(pid)!, "procid": Int(pid)!, "thread_id": 1, "timestamp": time.replacingOccurrences(of: " ", with: "T"),
                                         "level": level, "image_name": "/usr/lib/\(process)", "filename": "/private/var/\(process).appex/\(process)",
                                         "mach_timestamp": 1, "message": message, "label": NSNull()]
            json += String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self) + "\n"
        }
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let want = try #require(try castscope(["analyze", "--json", sample.path]).json)
        for (name, body, format) in [("pmd.txt", text, "pymobiledevice3"), ("pmd-colour.txt", coloured, "pymobiledevice3"),
                                     ("pmd.ndjson", json, "pymobiledevice3-json")] {
            let file = dir.appendingPathComponent(name)
            try Data(body.utf8).write(to: file)
            let got = try #require(try castscope(["analyze", "--json", file.path]).json)
            #expect((got["inputs"] as? [[String: Any]])?.first?["format"] as? String == format, "\(name)")
            let g = try #require(got["summary"] as? [String: Any])
            let w = try #require(want["summary"] as? [String: Any])
            #expect(g["events"] as? Int == w["events"] as? Int && g["sessions"] as? Int == w["sessions"] as? Int, "\(name)")
            for key in ["outcomes", "findings"] {
                let a = try #require(g[key] as? [String: Int])
                #expect(a == w[key] as? [String: Int] && !a.isEmpty, "\(name): \(key)")
            }
        }
    }

    @Test("journalctl's coloured warning far past the first bytes, and colour stored in a journal's MESSAGE, are recognized",
          .enabled(if: FileManager.default.isExecutableFile(atPath: journalctl)
              && FileManager.default.isExecutableFile(atPath: journalRemote), "needs journalctl and systemd-journal-remote"))
    func colourInsideLines() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // SYSTEMD_COLORS=1: journalctl colours the relay's stall warning (line 116 of 117).
        let coloured = try journalctlOutput(relayJournal, mode: "short-precise", env: ["SYSTEMD_COLORS": "1"])
        #expect(coloured.contains(0x1B), "journalctl printed no colour")
        let text = dir.appendingPathComponent("coloured.txt")
        try coloured.write(to: text)
        let got = try #require(try castscope(["analyze", "--json", text.path]).json)
        #expect((got["summary"] as? [String: Any])?["events"] as? Int == 117)
        // A relay logging in colour into its journal (after a line of nothing: the readers
        // read a file's first record whatever it holds).
        var export = "__REALTIME_TIMESTAMP=1773306904000000\n_HOSTNAME=relay1\nSYSLOG_IDENTIFIER=broadcast-relay\n_PID=811\n"
        export += "MESSAGE=worker 0 heartbeat ok queue=0\n\n"
        export += "__REALTIME_TIMESTAMP=1773306904673211\n_HOSTNAME=relay1\nSYSLOG_IDENTIFIER=broadcast-relay\n_PID=811\n"
        export += "MESSAGE=\(Self.esc)[32msession 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=standup\(Self.esc)[0m\n\n"
        export += "__REALTIME_TIMESTAMP=1773306906673211\n_HOSTNAME=relay1\nSYSLOG_IDENTIFIER=broadcast-relay\n_PID=811\n"
        export += "MESSAGE=\(Self.esc)[33msession 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 closed reason=peer-eof frames=20 duration=2.0s\(Self.esc)[0m\n\n"
        let journal = dir.appendingPathComponent("colour.journal")
        try makeJournal(Data(export.utf8), at: journal)
        // The journal, and journalctl's JSON of it, which writes such a MESSAGE as its bytes'
        // values (`"MESSAGE":[27,91,…]`: the prefilter, reading raw bytes, must not pass it over).
        var inputs = [journal]
        for mode in ["json", "json-pretty", "json-seq"] {
            let file = dir.appendingPathComponent("colour.\(mode).txt")
            try journalctlOutput(journal, mode: mode).write(to: file)
            inputs.append(file)
        }
        #expect(try String(contentsOf: inputs[1], encoding: .utf8).contains("\"MESSAGE\":[27,"))
        for input in inputs {
            let j = try #require(try castscope(["analyze", "--json", input.path]).json, "\(input.lastPathComponent)")
            let relay = try #require((j["relaySessions"] as? [[String: Any]])?.first, "\(input.lastPathComponent)")
            #expect(relay["reason"] as? String == "peer-eof", "\(input.lastPathComponent)")
            #expect(relay["peer"] as? String == "iPhone14,2", "\(input.lastPathComponent)")
        }
    }
}

import Foundation
import Testing

@testable import CastscopeKit

let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

@Suite("reports: Markdown, HTML, Perfetto, --fail-on")
struct ReportTests {
    @Test("the HTML report of the samples is self-contained and renders in headless Chromium",
          .enabled(if: chromium != nil, "needs Debian's chromium (make test installs it)"))
    func htmlRendersInChromium() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let html = dir.appendingPathComponent("report.html")
        let r = try castscope(["analyze", "--html", html.path, "samples/"])
        #expect(r.status == 0, "\(r.stderr)")
        let text = try String(contentsOf: html, encoding: .utf8)
        #expect(text.hasPrefix("<!DOCTYPE html>"))
        for forbidden in ["<link", " src=", "@import", "url(http", "https://"] { #expect(!text.contains(forbidden), "\(forbidden)") }
        #expect(text.components(separatedBy: "class=\"card\"").count - 1 == 7, "one card (timeline drawn by the page's script) per session")
        #expect(text.contains("socket-file-missing"))
        let png = dir.appendingPathComponent("shot.png")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: chromium!)
        p.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1100,1400",
                       "--user-data-dir=" + dir.appendingPathComponent("profile").path, "--screenshot=" + png.path, html.absoluteString]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let bytes = try Data(contentsOf: png)
        #expect(bytes.count > 20_000, "a real page, not a blank one")
        #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG")
    }

    @Test("every value in the HTML is escaped")
    func htmlEscapes() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("x<y>.log")
        try """
            2021-12-23 02:56:59.980625+0530 Evil<script>[12:34] broadcast started
            2021-12-23 02:56:59.990625+0530 Evil<script>[12:34] client stream error occured: <script>alert("x'&")</script>
            2021-12-23 02:56:59.991625+0530 Evil<script>[12:34] client connection did close Optional(<img src=x onerror=alert(1)>)
            """.write(to: log, atomically: true, encoding: .utf8)
        let html = dir.appendingPathComponent("r.html")
        _ = try castscope(["analyze", "--html", html.path, log.path])
        let text = try String(contentsOf: html, encoding: .utf8)
        #expect(text.components(separatedBy: "<script").count - 1 == 2, "only the page's own data and script elements")
        #expect(!text.contains("<script>alert") && !text.contains("<img"))
        #expect(text.contains("\\u003cimg src=x"), "in the script's data, < is escaped")
        #expect(text.contains("&lt;script&gt;alert(&quot;x&#39;&amp;&quot;)&lt;/script&gt;"))
        #expect(text.contains("x&lt;y&gt;.log"))
    }

    @Test("the HTML escapes, written as bytes: entities, controls, C1 and bidi shown escaped, script-safe JSON")
    func htmlByteEscapes() {
        // Each character class the byte tables single out, next to its neighbours that stay.
        #expect(HTMLReport.esc("a&b<c>d\"e'f") == "a&amp;b&lt;c&gt;d&quot;e&#39;f")
        #expect(HTMLReport.esc("tab\tnew\nline") == "tab\tnew\nline")
        #expect(HTMLReport.esc("\u{1b}[2J\r\u{0}\u{7f}") == "\\x1b[2J\\r\\x00\\x7f")
        #expect(HTMLReport.esc("\u{9b}\u{a0}\u{b5}") == "\\u{9b}\u{a0}\u{b5}", "C1 escaped; NBSP and µ (also C2 lead bytes) kept")
        #expect(HTMLReport.esc("\u{202e}x\u{2069}\u{2027}\u{202f}\u{2013}") == "\\u{202e}x\\u{2069}\u{2027}\u{202f}\u{2013}",
                "bidi overrides escaped; other E2 characters kept")
        #expect(HTMLReport.esc("😀é\u{301}") == "😀é\u{301}")
        #expect(HTMLReport.js("</script><a href='x'>&\u{2028}\u{2029}\u{2027}") == "\"\\u003c/script\\u003e\\u003ca href='x'\\u003e\\u0026\\u2028\\u2029\u{2027}\"")
        // Controls (but tab and newline), C1 and the bidi controls as the page's text shows them.
        #expect(HTMLReport.js("q\"b\\n\n\u{1}\u{7f}") == "\"q\\\"b\\\\n\\n\\\\x01\\\\x7f\"")
        #expect(HTMLReport.js("\u{202e}x\u{2069}\u{9b}\u{a0}\u{2013}") == "\"\\\\u{202e}x\\\\u{2069}\\\\u{9b}\u{a0}\u{2013}\"")
        #expect(HTMLReport.js(nil) == "null")
        #expect(HTMLReport.eventClass("socket.connect_failed").description == "fail")
        for (kind, cls) in [("relay.stats", "frames"), ("relay.statsx", "conn"), ("frame.sent", "frames"), ("broadcast.started", "life"),
                            ("e\u{301}rror", "other"), ("x.dropped", "fail"), ("", "other"), ("sdk.log", "other")] {
            #expect(HTMLReport.eventClass(kind).description == cls, "\(kind)")
        }
    }

    @Test("the Perfetto file is valid trace-event JSON: device and relay as processes, phases, instants, counters")
    func perfettoTraceEvents() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let trace = dir.appendingPathComponent("t.json")
        let r = try castscope(["analyze", "--perfetto", trace.path, "samples/"])
        #expect(r.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: trace)) as? [String: Any])
        let events = try #require(json["traceEvents"] as? [[String: Any]])
        var phases = Set<String>()
        for e in events {
            let ph = try #require(e["ph"] as? String)
            phases.insert(ph)
            #expect(e["pid"] is Int, "\(e)")
            #expect(e["name"] is String)
            switch ph {
            case "M":
                let name = e["name"] as? String ?? ""
                #expect(["process_name", "thread_name", "process_sort_index", "thread_sort_index"].contains(name))
                #expect(name.hasSuffix("sort_index") ? (e["args"] as? [String: Any])?["sort_index"] is Int : (e["args"] as? [String: Any])?["name"] is String)
            case "X":
                #expect((e["ts"] as? Int).map { $0 >= 0 } == true)
                #expect((e["dur"] as? Int).map { $0 >= 0 } == true)
                #expect(e["tid"] is Int)
            case "i":
                #expect(e["ts"] is Int)
                #expect(["t", "p", "g"].contains(e["s"] as? String))
            case "C":
                #expect(e["ts"] is Int)
                let args = try #require(e["args"] as? [String: Any])
                #expect(!args.isEmpty && args.values.allSatisfy { $0 is NSNumber })
            default:
                Issue.record("unexpected phase \(ph)")
            }
        }
        #expect(phases == ["M", "X", "i", "C"])
        let processes = events.filter { $0["name"] as? String == "process_name" }.compactMap { ($0["args"] as? [String: Any])?["name"] as? String }
        #expect(processes.count == 2 && processes[0].hasPrefix("device") && processes[1].hasPrefix("relay"))
        #expect(events.contains { $0["cat"] as? String == "finding" && ($0["name"] as? String)?.hasSuffix("socket-file-missing") == true })
    }

    @Test func markdownForATicket() throws {
        let r = try castscope(["analyze", "--markdown", "samples/retry-storm"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("# castscope report\n"))
        #expect(r.stdout.contains("| `S1` | jitsi | `BroadcastExtension[1204]` |"))
        #expect(r.stdout.contains("- **error** `socket-file-missing` — the socket file was missing for 37 attempts"))
        #expect(r.stdout.contains("`samples/retry-storm/log-stream-debug.txt:77`"))
    }

    @Test("--fail-on: exit 3 when a finding of that severity or worse exists")
    func failOn() throws {
        #expect(try castscope(["analyze", "--fail-on", "warning", "samples/healthy-jitsi"]).status == 0)
        #expect(try castscope(["analyze", "--fail-on", "error", "samples/sendbird-call-ended"]).status == 0)
        #expect(try castscope(["analyze", "--fail-on", "error", "samples/retry-storm"]).status == 3)
        #expect(try castscope(["analyze", "--fail-on", "warning", "samples/stopped-10001"]).status == 3)
        #expect(try castscope(["analyze", "--fail-on", "fatal", "samples"]).status == 2)
    }

    @Test("thresholds: defaults in --help, overridden by a config file and by options")
    func thresholds() throws {
        let help = try castscope(["analyze", "--help"]).stdout
        #expect(help.contains("(default: 5)") && help.contains("--min-fps"))
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("c.json")
        try #"{"thresholds": {"retry-storm-attempts": 100, "retry-storm-seconds": 60}}"#.write(to: config, atomically: true, encoding: .utf8)
        func kinds(_ args: [String]) throws -> [String] {
            ((try castscope(["analyze", "--json"] + args + ["samples/retry-storm"]).json?["findings"] as? [[String: Any]]) ?? [])
                .map { $0["kind"] as? String ?? "" }
        }
        #expect(try kinds([]).contains("connect-retry-storm"))
        #expect(try !kinds(["--config", config.path]).contains("connect-retry-storm"))
        #expect(try kinds(["--config", config.path, "--retry-storm-attempts", "10"]).contains("connect-retry-storm"))
        try #"{"thresholds": {"nope": 1}}"#.write(to: config, atomically: true, encoding: .utf8)
        #expect(try castscope(["analyze", "--config", config.path, "samples/retry-storm"]).status == 2)
    }
}

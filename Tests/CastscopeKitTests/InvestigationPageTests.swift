import Foundation
import Testing

@testable import CastscopeKit

/// Writes the bench's dense `log show` export (scripts/make-bench-input.py, about 15 sessions
/// per MB, overlapping and cut off) of `megabytes` into `dir`.
func denseBenchLog(megabytes: Int, in dir: URL) throws -> URL {
    let out = dir.appendingPathComponent("dense-\(megabytes).log")
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", packageRoot.appendingPathComponent("scripts/make-bench-input.py").path, out.path, String(megabytes), "dense"]
    try p.run()
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
    return out
}

/// Writes a log with `n` sessions (scripts/generate-many-sessions.py) into `dir`.
func manySessionsLog(_ n: Int, in dir: URL) throws -> URL {
    let out = dir.appendingPathComponent("many-\(n).log")
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", packageRoot.appendingPathComponent("scripts/generate-many-sessions.py").path, String(n), out.path]
    try p.run()
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
    return out
}

/// Loads `url` in headless Chromium at `width` px, lets its script run (virtual time), and
/// returns the DOM and the `data-probe-*` values the page's `?probe=1` wrote on `<body>`.
func chromiumProbe(_ url: String, width: Int, profile: URL) throws -> (dom: String, probe: [String: String]) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: chromium!)
    p.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=\(width),900",
                   "--user-data-dir=" + profile.path, "--virtual-time-budget=4000", "--dump-dom", url]
    let out = profile.deletingLastPathComponent().appendingPathComponent("dom-\(UUID().uuidString).html")
    FileManager.default.createFile(atPath: out.path, contents: nil)
    let h = try FileHandle(forWritingTo: out)
    p.standardOutput = h
    p.standardError = FileHandle.nullDevice
    try p.run()
    p.waitUntilExit()
    try h.close()
    let dom = try String(contentsOf: out, encoding: .utf8)
    var probe: [String: String] = [:]
    if let body = dom.range(of: "<body[^>]*>", options: .regularExpression) {
        let tag = String(dom[body])
        let re = try NSRegularExpression(pattern: "data-(probe-[a-z-]+|jumped)=\"([^\"]*)\"")
        for m in re.matches(in: tag, range: NSRange(tag.startIndex..., in: tag)) {
            probe[String(tag[Range(m.range(at: 1), in: tag)!])] = String(tag[Range(m.range(at: 2), in: tag)!])
        }
    }
    return (dom, probe)
}

@Suite("the HTML investigation page, in headless Chromium", .serialized,
       .enabled(if: chromium != nil, "needs Debian's chromium (make test installs it)"))
struct InvestigationPageTests {
    @Test("1 and 300 sessions at 1400 and 420 px: legend, overview, no horizontal overflow, lazy timelines")
    func layouts() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let many = try manySessionsLog(300, in: dir)
        for (name, input, sessions) in [("one", packageRoot.appendingPathComponent("samples/retry-storm").path, 1), ("many", many.path, 300)] {
            let html = dir.appendingPathComponent("\(name).html")
            let r = try castscope(["analyze", "--html", html.path, input])
            #expect(r.status == 0, "\(r.stderr)")
            let text = try String(contentsOf: html, encoding: .utf8)
            #expect(text.contains("<meta name=\"viewport\""))
            #expect(text.components(separatedBy: "class=\"card\"").count - 1 == sessions)
            // Self-contained: nothing fetched from anywhere.
            for forbidden in ["<link", " src=", "@import", "url(http", "url(//", "https://", "fetch(", "XMLHttpRequest"] {
                #expect(!text.contains(forbidden), "\(forbidden)")
            }
            for width in [1400, 420] {
                let (dom, probe) = try chromiumProbe(html.absoluteString + "?probe=1", width: width, profile: dir.appendingPathComponent("p"))
                #expect(probe["probe-done"] == "1", "the page's script ran (\(name) at \(width))")
                #expect(dom.contains("class=\"legend\""), "legend")
                #expect(dom.contains("failed connect attempt") && dom.contains("line that decided the outcome"))
                #expect(Int(probe["probe-overflow"] ?? "") ?? 1 <= 0, "no horizontal overflow: \(name) at \(width) px: \(probe)")
                #expect(Int(probe["probe-bars"] ?? "") == sessions, "one overview bar per session")
                #expect(Int(probe["probe-visible"] ?? "") == sessions)
                // Lazy: only the timelines near the viewport are drawn.
                let drawn = Int(probe["probe-drawn"] ?? "") ?? -1
                #expect(drawn >= 0 && drawn <= min(sessions, 12), "drawn \(drawn)")
                #expect((Int(probe["probe-max-ticks"] ?? "") ?? 99) <= 12)
            }
        }
    }

    @Test("clicking a session in the overview scrolls to it and draws its timeline; the filter hides healthy sessions")
    func overviewAndFilter() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let many = try manySessionsLog(300, in: dir)
        let html = dir.appendingPathComponent("r.html")
        let r = try castscope(["analyze", "--html", html.path, "--json", many.path])
        let completed = ((r.json?["summary"] as? [String: Any])?["outcomes"] as? [String: Any])?["completed"] as? Int ?? 0
        #expect(completed > 100 && completed < 300)
        for width in [1400, 420] {
            let (dom, jump) = try chromiumProbe(html.absoluteString + "?jump=250&probe=1", width: width, profile: dir.appendingPathComponent("p"))
            #expect(jump["jumped"] == "250", "the overview bar's click handler ran")
            #expect((Int(jump["probe-scroll-y"] ?? "") ?? 0) > 5000, "scrolled down to session 251: \(jump)")
            let top = Int(jump["probe-target-top"] ?? "") ?? -1
            #expect(top >= 0 && top < 200, "the card is at the top of the viewport: \(top)")
            #expect(dom.contains("aria-label=\"timeline of session S251\""), "its timeline is drawn")
            // A tap on a mark shows its wall time, offset and file:line; the + button halves the span.
            let detail = jump["probe-detail"] ?? ""
            #expect(detail.hasPrefix("2026-03-12T") && detail.contains("(+") && detail.contains("many-300.log:"), "\(detail)")
            #expect(jump["probe-zoom"] == "0.50")
            let (_, filtered) = try chromiumProbe(html.absoluteString + "?outcome=failing&probe=1", width: width, profile: dir.appendingPathComponent("p"))
            #expect(Int(filtered["probe-visible"] ?? "") == 300 - completed, "\(filtered)")
            #expect(Int(filtered["probe-hidden-completed"] ?? "") == completed)
        }
        let (_, searched) = try chromiumProbe(html.absoluteString + "?probe=1#q=socket%20file%20missing", width: 1400, profile: dir.appendingPathComponent("p"))
        #expect(Int(searched["probe-visible"] ?? "") == 30, "search matches the 30 retry-storm sessions: \(searched)")
    }

    @Test("one line dated 200 years off: bounded axis ticks, a small page, the good file's session still drawn (issue 12)")
    func farFutureTimestamp() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = dir.appendingPathComponent("bad.log")
        try """
            Timestamp                       (process)[PID]
            2026-03-12 09:20:00.492204+0100  localhost BroadcastExtension[1300]: (ReplayKit) [com.apple.ReplayKit:RPBroadcastExtension] extension started
            2026-03-12 09:20:00.514204+0100  localhost BroadcastExtension[1300]: [io.livekit.example.flutter:Broadcast] open socket connection
            2026-03-12 09:20:00.514514+0100  localhost BroadcastExtension[1300]: [io.livekit.example.flutter:Broadcast] failure: socket file missing
            2226-03-12 09:20:00.614204+0100  localhost BroadcastExtension[1300]: [io.livekit.example.flutter:Broadcast] open socket connection

            """.write(to: bad, atomically: true, encoding: .utf8)
        let html = dir.appendingPathComponent("r.html")
        let r = try castscope(["analyze", "--html", html.path, bad.path, "samples/healthy-jitsi"])
        #expect(r.status == 0, "\(r.stderr)")
        let size = try FileManager.default.attributesOfItem(atPath: html.path)[.size] as? Int ?? 0
        #expect(size > 0 && size < 200_000, "the page stays small: \(size) bytes")
        let text = try String(contentsOf: html, encoding: .utf8)
        #expect(text.components(separatedBy: "class=\"card\"").count - 1 == 2)
        for width in [1400, 420] {
            let (dom, probe) = try chromiumProbe(html.absoluteString + "?probe=1&jump=1", width: width, profile: dir.appendingPathComponent("p"))
            #expect(probe["probe-done"] == "1")
            #expect((Int(probe["probe-max-ticks"] ?? "") ?? 99) <= 12, "\(probe)")
            #expect(Int(probe["probe-overflow"] ?? "") ?? 1 <= 0)
            #expect(dom.contains("aria-label=\"timeline of session S2\"") || dom.contains("aria-label=\"timeline of session S1\""))
        }
    }

    @Test("screenshots at 1400 and 420 px are real pages (kept in $CASTSCOPE_SCREENSHOTS when set)")
    func screenshots() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let html = dir.appendingPathComponent("r.html")
        #expect(try castscope(["analyze", "--html", html.path, "samples/"]).status == 0)
        let keep = ProcessInfo.processInfo.environment["CASTSCOPE_SCREENSHOTS"]
        for width in [1400, 420] {
            let png = URL(fileURLWithPath: keep ?? dir.path).appendingPathComponent("samples-\(width).png")
            let p = Process()
            p.executableURL = URL(fileURLWithPath: chromium!)
            p.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=\(width),2400",
                           "--virtual-time-budget=3000", "--user-data-dir=" + dir.appendingPathComponent("profile").path,
                           "--screenshot=" + png.path, html.absoluteString]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            p.waitUntilExit()
            let bytes = try Data(contentsOf: png)
            #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) && bytes.count > 50_000, "a PNG of a real page")
        }
    }
}

@Suite("the HTML page's colours")
struct InvestigationPageColourTests {
    @Test("WCAG AA in light and dark mode: text ≥ 4.5:1, chart marks ≥ 3:1 (scripts/check-contrast.py)")
    func contrast() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", packageRoot.appendingPathComponent("scripts/check-contrast.py").path,
                       packageRoot.appendingPathComponent("Sources/CastscopeKit/Reports/HTMLAssets.swift").path]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(out)")
        #expect(out.contains("light min text") && out.contains("dark min text"))
    }
}

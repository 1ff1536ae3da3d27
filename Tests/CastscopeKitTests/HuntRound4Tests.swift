import Foundation
import Testing

/// What the fourth hunt for real pastes (session 45) found read wrong, each around its real
/// lines: a Java server's level written before its time (OpenVidu#547), a kill line cut short and
/// a kernel `exceeded mem limit` line that names no process (radiance#595, iOS 26), RunningBoard
/// ending an app on dasd's request (Apple forum 759754).
@Suite("hunt round 4: level before the time, nameless jetsam, RunningBoard's termination")
struct HuntRound4Tests {
    func analyze(_ text: String, name: String = "paste.txt", _ extra: [String] = []) throws -> (json: [String: Any], text: String) {
        try analyzePaste(text, name: name, extra)
    }

    @Test("a bracketed level before the time ([ERROR] 2020-…): each line keeps its own time and level")
    func levelBeforeTime() throws {
        let lines = """
            [INFO] 2020-10-01 11:11:53,845 [Timer-1319] io.openvidu.server.kurento.core.KurentoSession - Resetting process: closing media pipeline
            [ERROR] 2020-10-01 11:11:54,001 [tExec-e2-t14578] io.openvidu.server.kurento.core.KurentoSession - media pipeline closed
            [INFO] 2020-10-01 11:11:55,883 [tExec-e2-t14578] io.openvidu.server.kurento.core.KurentoSession - SESSION 65e4: Creating MediaPipeline

            """
        let show = try analyze(lines).text
        #expect(show.contains("2020-10-01 11:11:54.001000") && show.contains("Error"), "\(show)")
        #expect(show.contains("2020-10-01 11:11:55.883000"), "\(show)")
        #expect(!show.contains("[ERROR]"), "the level is a field, not the message's: \(show)")
        // Without brackets (log4j's `%-5p %d`) a word before the time is no level: a JVB-style
        // `sfu 2025-…` line, or a `log show` export's date taken off as a paste's lead, would pass.
        let log4j = try analyze("""
            INFO  2020-10-01 11:11:53,845 [main] o.k.j.c.JsonRpcClient - connected
            ERROR 2020-10-01 11:11:54,001 [main] o.k.j.c.JsonRpcClient - closed

            """).json
        #expect((log4j["inputs"] as? [[String: Any]])?.first?["format"] as? String == "plain")
    }

    @Test("a nameless exceeded-limit line before the kill: killed at its 50 MB limit; the kill line as a paste cuts it")
    func namelessJetsam() throws {
        let r = try analyze("""
            Aug 12 16:12:48 iPhone BroadcastUpload(ReplayKit)[1879] <Notice>: broadcast started
            Aug 12 16:12:49 iPhone kernel[0] <Notice>: memorystatus: exceeded mem limit: ActiveHard 50 MB (fatal)
            Aug 12 16:12:49 iPhone kernel[0] <Notice>: memorystatus: killing_specific_process pid 1879 [BroadcastUpload] (per-process-limit 3) 51200KB - memorystatus_available_pages: 34567

            """, ["--date", "2025-08-12"]).json
        let findings = r["findings"] as? [[String: Any]] ?? []
        let killed = try #require(findings.first { $0["kind"] as? String == "extension-killed" }, "\(findings)")
        #expect((killed["message"] as? String)?.contains("killed at its 50 MB memory limit (ActiveHard)") == true, "\(killed)")
        // (the only extension session open takes the nameless line: it decides)
        // The kill line as the paste cut it (no `memorystatus:`, no reason).
        let cut = try analyze("""
            2025-08-12 16:12:48.785 BroadcastUpload: broadcast started
            2025-08-12 16:12:49.226 kernel: memorystatus: exceeded mem limit: ActiveHard 50 MB (fatal)
            2025-08-12 16:12:49.229 kernel: killing_specific_process pid 1879 [Tunnel] ... 51200KB

            """)
        let events = (cut.json["unattached"] as? [[String: Any]] ?? []).compactMap { $0["event"] as? String }
        #expect(events.contains("extension.killed"), "\(cut.json)")
    }

    static let rbsTermination = "runningboardd[33] <Notice>: Received termination request from [osservice<com.apple.dasd>:76] on <RBSProcessPredicate <RBSProcessHandlePredicateImpl| app<org.jitsi.demo(4B1F0D8E-7C51-4B8A-9F0E-2C7D1A6B3E95)>>> with context <RBSTerminateContext| explanation:BG Kill Demo reportType:None maxTerminationResistance:Interactive>"

    @Test("RunningBoard terminates the app on dasd's request: an error when the broadcast ends with it, a warning when it goes on")
    func runningBoardTermination() throws {
        let head = """
            Mar 12 11:02:07 BroadcastExtension[915] <Notice>: broadcast started
            Mar 12 11:02:07 BroadcastExtension[915] <Notice>: Open socket connection
            Mar 12 11:02:07 BroadcastExtension[915] <Notice>: client stream open completed
            Mar 12 11:02:08 BroadcastExtension[915] <Notice>: video sample processed successfully
            Mar 12 11:02:28 \(Self.rbsTermination)

            """
        let ends = try analyze(head + """
            Mar 12 11:02:28 BroadcastExtension[915] <Notice>: server socket closed
            Mar 12 11:02:28 BroadcastExtension[915] <Notice>: client connection did close: (null)

            """, ["--date", "2026-03-12"]).json
        let f = try #require((ends["findings"] as? [[String: Any]] ?? []).first { $0["kind"] as? String == "host-app-terminated" }, "\(ends)")
        #expect(f["severity"] as? String == "error")
        #expect(f["message"] as? String == "the host app org.jitsi.demo was terminated by runningboardd on com.apple.dasd's request (\"BG Kill Demo\") while the broadcast was streaming: its socket server went with it")
        let goesOn = try analyze(head + """
            Mar 12 11:03:28 BroadcastExtension[915] <Notice>: video sample processed successfully
            Mar 12 11:03:29 BroadcastExtension[915] <Notice>: broadcast finished

            """, ["--date", "2026-03-12"]).json
        let w = try #require((goesOn["findings"] as? [[String: Any]] ?? []).first { $0["kind"] as? String == "host-app-terminated" }, "\(goesOn)")
        #expect(w["severity"] as? String == "warning")
    }

    /// livekit#2417: journal lines without a year whose messages begin with the daemon's own
    /// dated time. `analyze` dated them 2024 from it; `show` gave today's year.
    @Test("show dates year-less journal lines from a daemon's own dated time, as analyze does")
    func showYearFromInnerTime() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("livekit.txt")
        try """
            Jan 26 11:52:49 livekit-21 livekit-server[16175]: 2024-01-26T11:52:49.389Z        INFO        livekit        service/rtcservice.go:309        new client WS connected
            Jan 26 11:53:02 livekit-21 systemd[1]: livekit-docker.service: Main process exited, code=killed, status=9/KILL

            """.write(to: url, atomically: true, encoding: .utf8)
        let show = try castscope(["show", url.path]).stdout
        #expect(show.contains("2024-01-26 11:53:02"), "\(show)")
        let window = try castscope(["show", "--start", "2024-01-26 11:50:00", "--end", "2024-01-26 12:00:00", url.path]).stdout
        #expect(window.contains("livekit-docker.service"), "\(window)")
        let a = try castscope(["analyze", "--json", url.path]).json
        let died = (a?["findings"] as? [[String: Any]] ?? []).first { $0["kind"] as? String == "daemon-died" }
        #expect((died?["time"] as? String)?.hasPrefix("2024-01-26T11:53:02") == true, "\(String(describing: died))")
    }

    /// Hunt round 5 (KSCrash#278's shape): a JetsamEvent kill of a broadcast extension under
    /// the 50 MB limit (its footprint at the kill, 31 MB, `per-process-limit`) was no session,
    /// no finding, exit 0; at 51 MB it was `extension-killed`.
    @Test("a broadcast extension's jetsam kill under 50 MB is its kill, said so")
    func jetsamUnderTheLimit() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ips = dir.appendingPathComponent("JetsamEvent-2024-06-16-130026.ips")
        try """
            {"bug_type":"298","timestamp":"2024-06-16 13:00:26.00 +0700","os_version":"iPhone OS 17.5 (21F79)","incident_id":"947EE743-65EC-4787-B86D-F072B04909BC"}
            {
              "date" : "2024-06-16 13:00:26.64 +0700",
              "pageSize" : 16384,
              "largestProcess" : "BroadcastUploadExtension",
              "processes" : [
              {
                "rpages" : 2000,
                "reason" : "per-process-limit",
                "pid" : 4624,
                "name" : "BroadcastUploadExtension"
              }
              ]
            }

            """.write(to: ips, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", ips.path])
        let killed = (r.json?["findings"] as? [[String: Any]] ?? []).first { $0["kind"] as? String == "extension-killed" }
        #expect((killed?["message"] as? String)?.contains("killed by jetsam (per-process-limit) at 31 MB, under the 50 MB") == true, "\(String(describing: r.json?["findings"]))")
        // A host app at 650 MB is still not a broadcast extension's kill, whatever its name.
        let app = dir.appendingPathComponent("app.ips")
        try (try String(contentsOf: ips, encoding: .utf8)).replacingOccurrences(of: "\"rpages\" : 2000", with: "\"rpages\" : 41600")
            .write(to: app, atomically: true, encoding: .utf8)
        let a = try castscope(["analyze", "--json", app.path])
        #expect(!(a.json?["findings"] as? [[String: Any]] ?? []).contains { $0["kind"] as? String == "extension-killed" })
    }

    /// Hunt round 5 (KSCrash#278): a JetsamEvent entry pasted from Markdown, two spaces at the
    /// end of every line, was a record a line and its kill unread.
    @Test("a JetsamEvent entry with Markdown's trailing spaces is one entry, its kill read")
    func jetsamEntryTrailingSpaces() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let lines = ["{", "    \"uuid\" : \"14350be0-e8a2-3419-b7fa-42ae204997e5\",", "    \"states\" : [", "        \"frontmost\"", "    ],",
                     "    \"rpages\" : 960,", "    \"reason\" : \"per-process-limit\",", "    \"pid\" : 4624,",
                     "    \"name\" : \"BroadcastUploadExtension\",", "    \"cpuTime\" : 1223.5413490000001", "},"]
        let path = dir.appendingPathComponent("comment.txt")
        try lines.map { $0 + "  \n" }.joined().write(to: path, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", path.path])
        #expect((r.json?["findings"] as? [[String: Any]] ?? []).contains { $0["kind"] as? String == "extension-killed" }, "\(r.stdout.prefix(600))")
        // A paste that begins at the report's `"processes" : [` (its entries join that line).
        let from = dir.appendingPathComponent("processes.txt")
        try (["\"processes\" : ["] + lines + ["]"]).map { $0 + "\n" }.joined().write(to: from, atomically: true, encoding: .utf8)
        let p = try castscope(["analyze", "--json", from.path])
        #expect((p.json?["findings"] as? [[String: Any]] ?? []).contains { $0["kind"] as? String == "extension-killed" }, "\(p.stdout.prefix(600))")
    }
}

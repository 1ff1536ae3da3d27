import Foundation
import Testing

@testable import CastscopeKit

/// The fifth hostile review (session 44): what it found lost, overwritten or misread.
@Suite("hostile input, fifth review: cursor resets, negative option values, an empty TMPDIR, .ips variants, reused relay ids, outputs into input folders")
struct HostileRound5Tests {
    @Test("tail --cursor-reset removes only a cursor file: never the standard input being read, a file of many lines or a device")
    func cursorResetRemovesOnlyACursor() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("in.txt")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt"), to: log)
        let bin = packageRoot.appendingPathComponent(".build/debug/castscope").path
        // The input itself, on standard input: refused, kept.
        let input = try runShell("\"$0\" tail --no-journal --cursor-file \"$1\" --cursor-reset - < \"$1\"", [bin, log.path])
        #expect(input.status == 2 && input.stderr.contains("is the standard input being read"), "\(input)")
        #expect(FileManager.default.fileExists(atPath: log.path))
        // Someone's notes (more than one line): refused, kept.
        let notes = dir.appendingPathComponent("notes.txt")
        try Data("my notes\nmore\n".utf8).write(to: notes)
        let many = try runShell("\"$0\" tail --no-journal --cursor-file \"$1\" --cursor-reset - < /dev/null", [bin, notes.path])
        #expect(many.status == 2 && many.stderr.contains("removes only a cursor file"), "\(many)")
        #expect(FileManager.default.fileExists(atPath: notes.path))
        let device = try runShell("\"$0\" tail --no-journal --cursor-file /dev/null --cursor-reset - < /dev/null", [bin])
        #expect(device.status == 2 && device.stderr.contains("not a regular file"), "\(device)")
        // A garbled cursor (one line) is what the option is for: removed.
        let cursor = dir.appendingPathComponent("cursor")
        try Data("s=garbled;i=1".utf8).write(to: cursor)
        let reset = try runShell("\"$0\" tail --no-journal --cursor-file \"$1\" --cursor-reset - < /dev/null", [bin, cursor.path])
        #expect(reset.status == 0, "\(reset)")
        #expect(!FileManager.default.fileExists(atPath: cursor.path))
    }

    @Test("negative values without '=': --timezone -05:00, --clock-offset -0.8 (the help's own example), show --pid")
    func negativeOptionValues() throws {
        let log = packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt").path
        let zoned = try castscope(["analyze", "--json", "--timezone", "-05:00", log])
        #expect(zoned.status == 0, "\(zoned.stderr)")
        let start = ((zoned.json?["sessions"] as? [[String: Any]])?.first?["start"] as? String) ?? ""
        #expect(start.hasSuffix("-05:00"), "\(start)")
        let offset = try castscope(["analyze", "--oneline", "--clock-offset", "-0.8", log])
        #expect(offset.status == 0, "\(offset.stderr)")
        let pid = try castscope(["show", "--pid", "-1", log])
        #expect(pid.status != 2 && !pid.stderr.contains("Missing value"), "\(pid.stderr)")
    }

    @Test("TMPDIR set but empty is /tmp, as POSIX tools take it")
    func emptyTMPDIR() throws {
        let r = try castscope(["analyze", "--oneline", packageRoot.appendingPathComponent("samples/relay").path], env: ["TMPDIR": ""])
        #expect(r.status == 0 && !r.stderr.contains("cannot create"), "\(r.stderr)")
        // (as root the empty path made the folder in `/`, and the run above passed either way)
        let saved = getenv("TMPDIR").map { String(cString: $0) }
        setenv("TMPDIR", "", 1)
        let base = temporaryBase()
        if let saved { setenv("TMPDIR", saved, 1) } else { unsetenv("TMPDIR") }
        #expect(base == "/tmp")
    }

    @Test(".ips reports with CRLF ends, the iOS 14 layout (a JSON header over a text report), damaged numbers and bodies; a text log named .ips")
    func ipsVariants() throws {
        let crlf = jetsamIPS.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try IPSReport.parse(crlf, path: "j.ips").records.first?.message.hasPrefix("JetsamEvent: BroadcastExtension[2210] killed: per-process-limit, footprint 51 MB") == true)
        #expect(try IPSReport.parse(crashIPS.replacingOccurrences(of: "\n", with: "\r\n"), path: "c.ips").records.count == 1)
        // iOS 12–14: the JSON header, then the report as text.
        let header = "{\"app_name\":\"BroadcastExtension\",\"timestamp\":\"2020-03-12 23:59:54.00 +0100\",\"bug_type\":\"109\",\"name\":\"BroadcastExtension\"}\n"
        let old = try IPSReport.parse(header + oldTextCrash, path: "o.ips")
        #expect(old.bugType == "109" && old.records.first?.message.contains("BroadcastExtension[2210]") == true, "\(old)")
        // A count that is no count: no footprint rather than "0 MB" or an exabyte.
        let float = try IPSReport.parse(jetsamIPS.replacingOccurrences(of: "\"rpages\" : 3301", with: "\"rpages\" : 3301.7"), path: "f.ips")
        #expect(float.records.first?.message.contains("footprint 51 MB (3302 pages)") == true, "\(float.records)")
        let negative = try IPSReport.parse(jetsamIPS.replacingOccurrences(of: "\"rpages\" : 3301", with: "\"rpages\" : -9223372036854775807"), path: "n.ips")
        #expect(negative.records.first?.message.hasPrefix("JetsamEvent (no footprint): BroadcastExtension[2210]") == true, "\(negative.records)")
        // (and it is still the extension's kill, with the report's largest process after it)
        let noPages = try IPSReport.parse(jetsamIPS.replacingOccurrences(of: "\"rpages\" : 3301, ", with: ""), path: "p.ips")
        #expect(noPages.records.first?.message == "JetsamEvent (no footprint): BroadcastExtension[2210] killed: per-process-limit; largest process BroadcastExtension",
                "\(noPages.records)")
        let matcher = EventMatcher(vocabularies: try ParserRegistry.builtin().vocabularies)
        let killed = noPages.records.first!.message.utf8.withContiguousStorageIfAvailable { matcher.match(UnsafeRawBufferPointer($0), category: nil) }
        #expect(killed??.rule.event == "extension.killed_memory", "\(String(describing: killed))")
        // A crash report's header over a body of `null` is no kill of anything.
        #expect(throws: InputError.self) { try IPSReport.parse(header.replacingOccurrences(of: "109", with: "309") + "null\n", path: "x.ips") }
        // The whole pipeline: the CRLF report kills its extension, a log export named .ips is read as text.
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(crlf.utf8).write(to: dir.appendingPathComponent("JetsamEvent-2026-03-12.ips"))
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt"),
                                         to: dir.appendingPathComponent("exported.ips"))
        let r = try castscope(["analyze", "--json", dir.path])
        let formats = ((r.json?["inputs"] as? [[String: Any]]) ?? []).compactMap { $0["format"] as? String }.sorted()
        #expect(formats == ["apple-default", "ips (JetsamEvent, bug_type 298)"], "\(formats) \(r.stderr)")
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
    }

    @Test("a relay session id used again after its session closed (a counter that restarts with the relay) is another session; a copy of the same lines in a second file is not")
    func reusedRelayIds() throws {
        var text = ""
        for (k, minute) in [10, 20, 30].enumerated() {
            text += "2026-03-12T10:\(minute):00.000000+0100 relayhost broadcast-relay[811]: session relay-1 accepted peer=iPhone14,2 room=r\(k)\n"
            text += "2026-03-12T10:\(minute):05.000000+0100 relayhost broadcast-relay[811]: session relay-1 stats frames=50 bytes=1000 fps=10.0 dropped=0\n"
            text += "2026-03-12T10:\(minute):09.000000+0100 relayhost broadcast-relay[811]: session relay-1 closed reason=peer frames=90 duration=9.0s\n"
        }
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = dir.appendingPathComponent("relay.log"), b = dir.appendingPathComponent("relay-copy.log")
        try Data(text.utf8).write(to: a)
        try Data(text.utf8).write(to: b)
        for inputs in [[a.path], [a.path, b.path]] {
            let r = try castscope(["analyze", "--json"] + inputs)
            let summary = r.json?["summary"] as? [String: Any]
            #expect(summary?["relaySessions"] as? Int == 3, "\(inputs.count) file(s): \(summary ?? [:]) \(r.stderr)")
        }
        // (the review's cases: a copy of the first session read after the id was used again,
        // and a rotated pair whose newer file is read first)
        func session(_ hour: Int, _ room: String) -> String {
            "2026-03-12T\(hour):00:00+0000 relay1 broadcast-relay[811]: session 7 accepted peer=iPhone14,2 room=\(room)\n"
                + "2026-03-12T\(hour):00:10+0000 relay1 broadcast-relay[811]: session 7 stats frames=10 bytes=100 fps=10.0 dropped=0\n"
                + "2026-03-12T\(hour):05:00+0000 relay1 broadcast-relay[811]: session 7 closed reason=peer-eof frames=100 duration=300.0s\n"
        }
        for (name, files) in [("copy", [("journal.log", session(10, "a") + session(11, "b")), ("export.log", session(10, "a"))]),
                              ("rotated", [("relay.log", session(11, "b")), ("relay.log.1", session(10, "a"))])] {
            let folder = dir.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (file, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(file)) }
            let r = try castscope(["analyze", "--json", folder.path])
            let starts = ((r.json?["relaySessions"] as? [[String: Any]]) ?? []).compactMap { $0["accepted"] as? String }
            #expect(starts == ["2026-03-12T10:00:00.000000+00:00", "2026-03-12T11:00:00.000000+00:00"], "\(name): \(starts)")
        }
        let tailed = try castscope(["tail", "--no-journal", "-"], stdin: Data(text.utf8))
        #expect((tailed.stdout + tailed.stderr).contains("3 relay sessions"), "\(tailed.stdout) \(tailed.stderr)")
    }

    @Test("--clickhouse file://localhost/dir is /dir; a user and password or another host in a file:// URL is refused without printing them")
    func fileURLs() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let relay = packageRoot.appendingPathComponent("samples/relay").path
        let local = try castscope(["analyze", "--oneline", "--clickhouse", "file://localhost" + dir.path + "/rows", relay])
        #expect(local.status == 0 && FileManager.default.fileExists(atPath: dir.path + "/rows/castscope_sessions.jsonl"), "\(local.stderr)")
        let secret = try castscope(["analyze", "--oneline", "--clickhouse", "file://u:S3cretQ@localhost" + dir.path + "/x", relay])
        #expect(secret.status == 2 && !(secret.stdout + secret.stderr).contains("S3cretQ"), "\(secret.stderr)")
        let other = try castscope(["analyze", "--oneline", "--clickhouse", "file://otherhost" + dir.path + "/y", relay])
        #expect(other.status == 2 && other.stderr.contains("not of another host"), "\(other.stderr)")
    }

    @Test("standard output redirected into an input folder is not read as an input of itself (a cron job's `>> folder/log` is written as before)")
    func stdoutIntoInputFolder() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bundle = dir.appendingPathComponent("b")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("samples/retry-storm"), to: bundle)
        let bin = packageRoot.appendingPathComponent(".build/debug/castscope").path
        for command in ["analyze --json", "show"] {
            let r = try runShell("\"$0\" \(command) \"$1\" > \"$1/out.txt\"", [bin, bundle.path])
            #expect(r.status == 0, "\(command): \(r)")
            let written = try String(contentsOf: bundle.appendingPathComponent("out.txt"), encoding: .utf8)
            #expect(!written.contains("out.txt"), "\(command): the output listed as an input")
        }
    }

    @Test("a relay clock whole hours off: the report says so and names the --clock-offset that joins them, instead of only orphans")
    func relayWholeHoursOff() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let gen = try runShell("exec python3 \"$0\" 6 10 60 0 -3600 \"$1\"", [packageRoot.appendingPathComponent("scripts/make-join-bundle.py").path, dir.path])
        #expect(gen.status == 0, "\(gen.stderr)")
        let inputs = [dir.appendingPathComponent("phone.log").path, dir.appendingPathComponent("relay.export").path]
        let off = try castscope(["analyze"] + inputs)
        #expect(off.stdout.contains("they line up 1 h apart") && off.stdout.contains("--clock-offset -3600"), "\(off.stdout.prefix(600))")
        let joined = try castscope(["analyze", "--json", "--clock-offset", "-3600"] + inputs)
        let kinds = ((joined.json?["findings"] as? [[String: Any]]) ?? []).compactMap { $0["kind"] as? String }
        #expect(!kinds.contains("orphan-device-session"), "\(Set(kinds))")
    }

    @Test("the review's slips: an uncaught exception after a kill but not under its report's Application Specific Information stays its own crash; an exit after systemd's Stopping line is no death; a number cut at the end is no number")
    func reviewSlips() throws {
        let kill = """
            Hardware Model:      iPhone14,2
            Process:             ScreenShareExt [482]
            Date/Time:           2026-03-12 10:00:00.000 +0000
            Exception Type:  EXC_CRASH (SIGKILL)
            Termination Reason: RUNNINGBOARD 0xdead10cc
            Triggered by Thread:  0

            And then the host app crashed too, its console said:
            *** Terminating app due to uncaught exception 'NSRangeException', reason: 'index 3 beyond bounds'

            """
        let r = try castscope(["analyze", "--json", "-"], stdin: Data(kill.utf8))
        let kinds = ((r.json?["findings"] as? [[String: Any]]) ?? []).compactMap { $0["kind"] as? String }.sorted()
        #expect(kinds == ["app-crashed", "extension-killed"], "\(kinds)")
        let stop = """
            2026-03-12T10:00:00+0000 relay1 broadcast-relay[811]: session 7 accepted peer=iPhone14,2 room=a
            2026-03-12T10:00:20+0000 relay1 systemd[1]: Stopping broadcast-relay.service - Broadcast relay...
            2026-03-12T10:00:21+0000 relay1 systemd[1]: broadcast-relay.service: Main process exited, code=exited, status=1/FAILURE
            2026-03-12T10:00:21+0000 relay1 systemd[1]: broadcast-relay.service: Failed with result 'exit-code'.

            """
        let stopped = try castscope(["analyze", "--json", "-"], stdin: Data(stop.utf8))
        let stopKinds = ((stopped.json?["findings"] as? [[String: Any]]) ?? []).compactMap { $0["kind"] as? String }
        #expect(!stopKinds.contains("daemon-died"), "\(stopKinds)")
        let crashed = try castscope(["analyze", "--json", "-"], stdin: Data(stop.replacingOccurrences(of: "Stopping broadcast-relay.service - Broadcast relay...", with: "Started cron.service.").utf8))
        let crashKinds = ((crashed.json?["findings"] as? [[String: Any]]) ?? []).compactMap { $0["kind"] as? String }
        #expect(crashKinds.contains("daemon-died"), "\(crashKinds)")
        // A number the cut ends in may be a part of one: left out, as a string the cut ends in.
        let cut = JSONValue.parseCut("{\"a\": 1, \"code\": 234343\n")
        #expect(cut?["a"] != nil && cut?["code"] == nil, "\(String(describing: cut))")
    }
}

import Foundation
import Testing

/// Issue 11 item 7: tail runs analyze's state machine and findings, joins, one zone, same errors.
@Suite struct CommandLineTailParityTests {
    var bin: String { packageRoot.appendingPathComponent(".build/debug/castscope").path }
    let deviceLog = packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt")

    /// The phone's log with 71 frame lines taken out: a 7 s device-side frame stall.
    func stalledStream() throws -> Data {
        let lines = try String(contentsOf: deviceLog, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        return Data((lines[0..<49] + lines[120...]).joined(separator: "\n").utf8)
    }

    /// The same lines as `log stream --style syslog` would give them, with the phone's zone.
    func zonedStream() throws -> Data {
        let text = try String(contentsOf: deviceLog, encoding: .utf8)
        var out = ""
        for line in text.split(separator: "\n") where line.hasPrefix("Mar 12 ") {
            let time = line.dropFirst(7).prefix(8)
            let rest = line.dropFirst(16)
            guard let close = rest.range(of: ">: ") , let open = rest.range(of: " <") else { continue }
            out += "2026-03-12 \(time).000000+0100  localhost \(rest[..<open.lowerBound]): \(rest[close.upperBound...])\n"
        }
        return Data(out.utf8)
    }

    /// Runs tail for `seconds`, then Ctrl-C (SIGINT); returns status, stdout, stderr.
    func tail(_ args: [String], stdin: Data, seconds: Double, after: (Double, () throws -> Void)? = nil) throws -> RunResult {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: bin)
        p.arguments = ["tail"] + args
        p.currentDirectoryURL = packageRoot
        let outURL = dir.appendingPathComponent("out"), errURL = dir.appendingPathComponent("err")
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: outURL)
        p.standardError = try FileHandle(forWritingTo: errURL)
        let input = Pipe()
        p.standardInput = input
        try p.run()
        input.fileHandleForWriting.write(stdin)
        try input.fileHandleForWriting.close()
        if let (delay, action) = after {
            Thread.sleep(forTimeInterval: delay)
            try action()
            Thread.sleep(forTimeInterval: seconds - delay)
        } else {
            Thread.sleep(forTimeInterval: seconds)
        }
        if p.isRunning { kill(p.processIdentifier, SIGINT) }
        p.waitUntilExit()
        return RunResult(status: p.terminationStatus, stdout: try String(contentsOf: outURL, encoding: .utf8),
                         stderr: try String(contentsOf: errURL, encoding: .utf8))
    }

    /// Found by a differential run (two extensions open, one host-app line): tail ended one of
    /// them at random, by the order of a dictionary (a new hash seed per process).
    @Test("with several extensions connected, the host app's \"server stream end\" ends the newest session, in tail as in analyze, every run")
    func aHostEndGoesToTheNewestSession() throws {
        var text = ""
        for k in 1...6 {
            text += "2026-03-12 10:20:0\(k).000000+0100 Ext\(k)[\(10 + k):99] broadcast started\n"
            text += "2026-03-12 10:20:0\(k).100000+0100 Ext\(k)[\(10 + k):99] client stream open completed\n"
        }
        text += "2026-03-12 10:20:06.500000+0100 App[5:99] server stream end encountered\n"
        let stream = Data(text.utf8)
        let analyzed = try castscope(["analyze", "--no-color", "-"], stdin: stream)
        #expect(analyzed.stdout.contains("S6  jitsi · Ext6[16]  completed"), "\(analyzed.stdout)")
        // Each run of the command hashes with another seed: six runs, six chances to differ.
        for _ in 0..<6 {
            let tailed = try castscope(["tail", "--no-journal", "--events", "--no-color", "-"], stdin: stream)
            #expect(tailed.status == 0)
            let ended = tailed.stdout.split(separator: "\n").filter { $0.contains(" ended ") }
            #expect(ended.count == 1 && ended[0].contains("S6 ended      jitsi Ext6[16]  completed"), "\(tailed.stdout)")
        }
    }

    /// Found by a review for the same cause: three processes that had the same pid (a pid
    /// reused), none in a session yet, then a kill naming the pid: tail picked the stream at
    /// random. It goes to the stream of the pid's latest line, as in `analyze`.
    @Test("a kill naming a pid three processes had goes to the same stream every run")
    func aKillOfASharedPidIsDecidedTheSameWay() throws {
        let stream = Data("""
            2026-03-12 10:20:01.000000+0100 ExtA[77:99] LKSampleHandler created
            2026-03-12 10:20:01.100000+0100 ExtB[77:99] LKSampleHandler created
            2026-03-12 10:20:01.200000+0100 ExtC[77:99] LKSampleHandler created
            2026-03-12 10:20:02.000000+0100 kernel[0:99] Process ExtA [77] killed by jetsam reason per-process-limit
            2026-03-12 10:20:03.000000+0100 ExtA[77:99] video sample processed successfully
            2026-03-12 10:20:03.100000+0100 ExtB[77:99] video sample processed successfully
            2026-03-12 10:20:03.200000+0100 ExtC[77:99] video sample processed successfully

            """.utf8)
        var outputs = Set<String>()
        for _ in 0..<6 {
            let tailed = try castscope(["tail", "--no-journal", "--json", "--events", "--no-color", "-"], stdin: stream)
            #expect(tailed.status == 0)
            outputs.insert(tailed.stdout)
        }
        #expect(outputs.count == 1, "\(outputs.sorted().joined(separator: "\n----\n"))")
        #expect(outputs.first?.contains("\"change\":\"started\"") == true)
    }

    @Test("tail - reads UTF-16 as analyze - does (PowerShell's pipe; it was refused as binary data)")
    func utf16OnStandardInput() throws {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt"), encoding: .utf8)
        let plain = try castscope(["tail", "--no-journal", "--no-color", "-"], stdin: Data(text.utf8))
        #expect(plain.stdout.contains(" S1 ended "), "\(plain.stdout)")
        for (name, data) in [("little-endian", Data([0xFF, 0xFE]) + text.data(using: .utf16LittleEndian)!),
                             ("big-endian", text.data(using: .utf16BigEndian)!)] {
            let r = try castscope(["tail", "--no-journal", "--no-color", "-"], stdin: data)
            #expect(r.status == 0, "\(name): \(r.stderr)")
            #expect(r.stdout == plain.stdout, "\(name): \(r.stdout)")
            #expect(r.stderr.contains("standard input is UTF-16 (\(name)): read as UTF-8"), "\(name): \(r.stderr)")
        }
    }

    @Test("tail reports the device-side frame stall and the findings analyze reports on the same lines")
    func stallsAndFindings() throws {
        let stream = try stalledStream()
        let analyzed = try castscope(["analyze", "-"], stdin: stream)
        #expect(analyzed.stdout.contains("warning: [frame-stall] no frames for 7.0 s while streaming (device)"))
        let tailed = try castscope(["tail", "--no-journal", "-"], stdin: stream)
        #expect(tailed.status == 0)
        #expect(tailed.stdout.contains("11:02:12.000  S1 stalled    jitsi BroadcastExtension[915]  no frames for 7.0 s while streaming (device)\n"))
        #expect(tailed.stdout.contains("S1 warning     [frame-stall] no frames for 7.0 s while streaming (device)\n"))
        #expect(tailed.stdout.contains("S1 warning     [stopped-by-host] "))
        // --stall-seconds moves the threshold in both commands.
        #expect(!(try castscope(["tail", "--no-journal", "--stall-seconds", "10", "-"], stdin: stream)).stdout.contains("stalled"))
        let json = try castscope(["tail", "--json", "--no-journal", "-"], stdin: stream)
        #expect(json.stdout.contains("{\"type\":\"finding\",\"session\":\"S1\",\"kind\":\"frame-stall\",\"severity\":\"warning\""))
        // The same findings as analyze on the same lines.
        let tailKinds = json.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["type"] as? String == "finding" }.compactMap { $0["kind"] as? String }.sorted()
        let analyzeJSON = try castscope(["analyze", "--json", "-"], stdin: stream)
        let analyzeKinds = ((analyzeJSON.json?["findings"] as? [[String: Any]]) ?? []).compactMap { $0["kind"] as? String }.sorted()
        #expect(tailKinds == analyzeKinds)
        #expect(tailKinds == ["frame-stall", "host-app-suspended", "stopped-by-host"])
    }

    @Test("tail joins relay and device sessions and shows the relay's times in the phone's zone, on its clock")
    func joinAndZone() throws {
        let journal = packageRoot.appendingPathComponent("samples/relay/relay.journal")
        // The journal file appears in the followed folder after the phone's stream was read, so
        // that the order of the two reading threads is fixed.
        func run(_ extra: [String]) throws -> RunResult {
            let dir = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            return try tail(extra + ["-D", dir.path, "--from-start", "-"], stdin: try zonedStream(), seconds: 5, after: (1.5, {
                try FileManager.default.copyItem(at: journal, to: dir.appendingPathComponent("relay.journal"))
            }))
        }
        let r = try run([])
        // The relay's accept (10:02:09.532 UTC) on the device's clock and in its zone: joined
        // once the relay's clock passed the session's end, on the estimate from both ends.
        #expect(r.stdout.contains("11:02:06.887  S1 joined     relay 6a1d9e27 (relay clock +2.645 s; relay times shown on the device's clock)\n"), "\(r.stdout)")
        // The relay stall at 23:00:06.540 UTC: +01:00, and 2.645 s earlier (the estimate from
        // both ends of the session).
        #expect(r.stdout.contains("00:00:03.895  relay c4f6a8b0 stalled"), "\(r.stdout)")
        let utc = try run(["--utc"])
        #expect(utc.stdout.contains("10:02:07.000  S1 started"))
        #expect(utc.stdout.contains("23:00:03.895  relay c4f6a8b0 stalled"), "\(utc.stdout)")
    }

    @Test("tail: a missing journal path is one line naming it, exit 4, no summary; an empty journal says it waits")
    func errors() throws {
        let r = try castscope(["tail", "-D", "/nonexistent/journal"])
        #expect(r.status == 4)
        #expect(r.stderr == "castscope: error: -D /nonexistent/journal: No such file or directory\n")
        #expect(r.stdout.isEmpty)
        let f = try castscope(["tail", "--file", "/nonexistent.journal"])
        #expect(f.status == 4)
        #expect(f.stderr.hasPrefix("castscope: error: --file /nonexistent.journal: "))
        // A damaged journal's error names the file (it said "journal:", naming none).
        let damagedDir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: damagedDir) }
        let cut = damagedDir.appendingPathComponent("cut.journal")
        var bytes = try [UInt8](Data(contentsOf: packageRoot.appendingPathComponent("samples/relay/relay.journal")))
        bytes = Array(bytes.prefix(5000))
        try Data(bytes).write(to: cut)
        let d = try castscope(["tail", "--file", cut.path, "--from-start"])
        #expect(d.stderr.contains("castscope: error: \(cut.path): "), "\(d.stderr)")
        #expect(try castscope(["tail", "-S", "-1h", "--no-journal", "-"]).status == 2)
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let waiting = try tail(["-D", dir.path], stdin: Data(), seconds: 4.5)
        #expect(waiting.stderr.contains("castscope tail: no entries yet from the journal files in \(dir.path) since it started (no filter); waiting, Ctrl-C to stop\n"))
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// Runs `tar` (the archive shape support receives: a sysdiagnose tar.gz).
func runTar(_ args: [String], cwd: URL) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
    p.arguments = args
    p.currentDirectoryURL = cwd
    try p.run()
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
}

@Suite struct UnifiedLogEndToEndTests {
    @Test func constructedArchiveRendersThroughTheReader() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let root = dir.appendingPathComponent("x.logarchive")
        try jetsamStory().write(to: root)
        let reader = UnifiedLogReader(root: root.path)
        let data = try Data(contentsOf: root.appendingPathComponent("Persist/0000000000000001.tracev3"))
        var lines: [String] = []
        let summary = data.withUnsafeBytes { b in
            reader.read(b) { r in
                lines.append("\(r.pid) \(String(decoding: r.subsystem, as: UTF8.self)) \(String(decoding: r.message, as: UTF8.self))")
            }
        }
        #expect(summary.problems.isEmpty && summary.formatMissing == 0 && summary.stats.storedBlocks == 1)
        #expect(lines.first == "2210 org.jitsi.meet.broadcast broadcast started")
        #expect(lines.contains("2210 org.jitsi.meet.broadcast client stream open completed"))
        #expect(lines.last == "0  EXC_RESOURCE -> BroadcastExtension[2210] exceeded mem limit: ActiveHard 50 MB (fatal)")
    }

    @Test func sysdiagnoseTarGzWithLogArchiveAndTextLogIsOneReport() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sd = dir.appendingPathComponent("sysdiagnose_2026.03.12_23-59-40+0100_iPhone-OS_iPhone_23E224")
        try jetsamStory().write(to: sd.appendingPathComponent("system_logs.logarchive"))
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("samples/jetsam-kill/host-app-log-show.txt"),
                                         to: sd.appendingPathComponent("host-app-log-show.txt"))
        try runTar(["czf", "sysdiagnose.tar.gz", sd.lastPathComponent], cwd: dir)
        let tarball = dir.appendingPathComponent("sysdiagnose.tar.gz").path
        let r = try castscope(["analyze", "--json", tarball])
        let json = try #require(r.json, "\(r.stderr)")
        let sessions = try #require(json["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        #expect(sessions.first?["outcome"] as? String == "killed")
        #expect(sessions.first?["process"] as? String == "BroadcastExtension")
        let inputs = try #require(json["inputs"] as? [[String: Any]])
        #expect(inputs.count == 2)
        #expect(inputs.contains { ($0["path"] as? String)?.hasSuffix("!\(sd.lastPathComponent)/system_logs.logarchive") == true })
        // The private spill is gone.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("castscope-logarchive-") }
        #expect(leftovers.isEmpty)
        // The same as a folder, and as a zip with macOS litter (__MACOSX/, ._ files).
        let folder = try castscope(["analyze", "--json", sd.appendingPathComponent("system_logs.logarchive").path])
        #expect((folder.json?["sessions"] as? [[String: Any]])?.count == 1)
        let zip = Process()
        zip.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        zip.arguments = ["-c", """
            import os, sys, zipfile
            z = zipfile.ZipFile(sys.argv[2], "w")
            for d, _, fs in os.walk(sys.argv[1]):
                for f in fs:
                    p = os.path.join(d, f); rel = os.path.relpath(p, os.path.dirname(sys.argv[1]))
                    z.write(p, rel)
                    z.writestr("__MACOSX/" + os.path.dirname(rel) + "/._" + f, b"\\x00\\x05\\x16\\x07 junk")
            z.close()
            """, sd.appendingPathComponent("system_logs.logarchive").path, dir.appendingPathComponent("logs.zip").path]
        try zip.run()
        zip.waitUntilExit()
        let zipped = try castscope(["analyze", "--json", dir.appendingPathComponent("logs.zip").path])
        #expect((zipped.json?["sessions"] as? [[String: Any]])?.first?["outcome"] as? String == "killed")
        #expect((zipped.json?["inputErrors"] as? [Any])?.isEmpty == true, "\(zipped.stdout.prefix(2000))")
    }

    @Test func realTracev3IsNoLongerBinaryErrors() throws {
        let r = try castscope(["analyze", "--json", unifiedLogging.appendingPathComponent("0000000000000f85.tracev3").path])
        let json = try #require(r.json)
        #expect((json["inputErrors"] as? [Any])?.isEmpty == true)
        let input = try #require((json["inputs"] as? [[String: Any]])?.first)
        #expect(input["format"] as? String == "tracev3")
    }
}

@Suite struct LogShowTests {
    @Test func showPrintsLogShowNdjsonAndFilters() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let root = dir.appendingPathComponent("device.logarchive")
        try jetsamStory().write(to: root)
        let r = try castscope(["show", "--style", "ndjson", root.path])
        #expect(r.status == 0, "\(r.stderr)")
        let objects = r.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
        #expect(objects.count == 44)
        let first = try #require(objects.first)
        for key in ["timestamp", "machTimestamp", "processID", "threadID", "messageType", "subsystem", "category", "eventMessage",
                    "formatString", "processImagePath", "senderImagePath"]
        {
            #expect(first[key] != nil, "\(key)")
        }
        #expect(first["eventMessage"] as? String == "broadcast started")
        #expect(first["timestamp"] as? String == "2026-03-12 22:59:50.000000+0000")
        #expect(first["processID"] as? Int == 2210 && first["threadID"] as? Int == 0x3A0C1)
        #expect(first["subsystem"] as? String == "org.jitsi.meet.broadcast" && first["category"] as? String == "extension")
        #expect((first["processImagePath"] as? String)?.hasSuffix("/BroadcastExtension") == true)
        let stamps = objects.compactMap { $0["timestamp"] as? String }
        #expect(stamps == stamps.sorted())
        let open = objects.first { ($0["eventMessage"] as? String) == "client stream open completed" }
        #expect(open?["formatString"] as? String == "client stream %{public}s completed")
        // Filters: process, pid, subsystem, time.
        let kernel = try castscope(["show", "--style", "ndjson", "--process", "kernel", root.path])
        #expect(kernel.stdout.split(separator: "\n").count == 1)
        let byPID = try castscope(["show", "--style", "ndjson", "--pid", "2210", "--subsystem", "org.jitsi", root.path])
        #expect(byPID.stdout.split(separator: "\n").count == 43)
        let late = try castscope(["show", "--style", "ndjson", "--start", "2026-03-12 22:59:53", root.path])
        #expect(late.stdout.split(separator: "\n").count == 12)  // 11 frames and the kernel line
        let json = try castscope(["show", "--style", "json", root.path])
        #expect(((try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) as? [Any])?.count == 44)
    }

    @Test func showDefaultStyleIsReadBackAsLogShowOutput() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let root = dir.appendingPathComponent("device.logarchive")
        try jetsamStory().write(to: root)
        let r = try castscope(["show", root.path])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines[1] == "2026-03-12 22:59:50.000000+0000 0x3a0c1    Default     0x0                  2210   0    BroadcastExtension: [org.jitsi.meet.broadcast:extension] broadcast started")
        let file = dir.appendingPathComponent("show.txt")
        try r.stdout.write(to: file, atomically: true, encoding: .utf8)
        let analyzed = try castscope(["analyze", "--json", file.path])
        let inputs = try #require(analyzed.json?["inputs"] as? [[String: Any]])
        #expect(inputs.first?["format"] as? String == "apple-default")
        #expect((analyzed.json?["sessions"] as? [[String: Any]])?.first?["outcome"] as? String == "killed")
    }
}

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
        // The same as a folder and as a zip (with macOS litter).
        let folder = try castscope(["analyze", "--json", sd.appendingPathComponent("system_logs.logarchive").path])
        #expect((folder.json?["sessions"] as? [[String: Any]])?.count == 1)
    }

    @Test func realTracev3IsNoLongerBinaryErrors() throws {
        let r = try castscope(["analyze", "--json", unifiedLogging.appendingPathComponent("0000000000000f85.tracev3").path])
        let json = try #require(r.json)
        #expect((json["errors"] as? [Any])?.isEmpty == true)
        let input = try #require((json["inputs"] as? [[String: Any]])?.first)
        #expect(input["format"] as? String == "tracev3")
    }
}

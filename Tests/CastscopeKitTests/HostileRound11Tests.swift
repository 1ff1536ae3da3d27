import Foundation
import Testing

@testable import CastscopeKit

@Suite("hostile round 11: links inside input folders, ClickHouse DDL names, damaged members and journals")
struct HostileRound11Tests {
    static let log = """
        2026-03-12 10:20:00.492204+0100  localhost BroadcastExtension[1204]: (ReplayKit) [com.apple.ReplayKit:RPBroadcastExtension] extension started
        2026-03-12 10:20:00.514204+0100  localhost BroadcastExtension[1204]: [io.livekit.example.flutter:Broadcast] open socket connection
        2026-03-12 10:20:00.514514+0100  localhost BroadcastExtension[1204]: [io.livekit.example.flutter:Broadcast] failure: socket file missing

        """

    /// The folder walk follows links, so what a link inside an input folder leads to is an
    /// input: `--force -o outside.txt logs/` with `logs/l.txt -> ../outside.txt` replaced the
    /// log by the report; `-o elsewhere/r.txt logs/` with `logs/sub -> ../elsewhere` wrote into
    /// a folder being read (the next run read its own report).
    @Test("a file or folder reached through a link in an input folder is an input: never written")
    func linksInsideInputFolders() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let outside = dir.appendingPathComponent("outside.txt")
        try Self.log.write(to: outside, atomically: true, encoding: .utf8)
        let logs = dir.appendingPathComponent("logs")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: logs.appendingPathComponent("l.txt").path, withDestinationPath: "../outside.txt")
        // It is read through the link.
        let read = try castscope(["analyze", "--no-pager", "-q", logs.path])
        #expect(read.status == 0 && read.stdout.contains("1 session"), "\(read.stderr)")
        for option in ["-o", "--html", "--perfetto"] {
            let r = try castscope(["analyze", "--no-pager", "--force", option, outside.path, logs.path])
            #expect(r.status == 2 && r.stderr.contains("through the link"), "\(option): \(r.stderr)")
            #expect(try String(contentsOf: outside, encoding: .utf8) == Self.log, "\(option): the input kept")
        }
        // A link to a folder: nothing is written into that folder, not even a new file.
        let elsewhere = dir.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try Self.log.write(to: elsewhere.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
        let logs2 = dir.appendingPathComponent("logs2")
        try FileManager.default.createDirectory(at: logs2.appendingPathComponent("deep"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: logs2.appendingPathComponent("deep/sub").path, withDestinationPath: elsewhere.path)
        let report = elsewhere.appendingPathComponent("r.txt")
        let w = try castscope(["analyze", "--no-pager", "-o", report.path, logs2.path])
        #expect(w.status == 2 && w.stderr.contains("the link") && w.stderr.contains("deep/sub"), "\(w.stderr)")
        #expect(!FileManager.default.fileExists(atPath: report.path))
        let ch = try castscope(["analyze", "--no-pager", "-q", "--clickhouse", "file://" + elsewhere.path, logs2.path])
        #expect(ch.status == 2, "\(ch.stderr)")
        #expect(!FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent("castscope_sessions.jsonl").path))
        // A report beside the folder, not reached by any link, is written as before; a loop of
        // links (`a -> .`) ends.
        try FileManager.default.createSymbolicLink(atPath: logs2.appendingPathComponent("deep/loop").path, withDestinationPath: "..")
        let ok = try castscope(["analyze", "--no-pager", "-o", dir.appendingPathComponent("r.txt").path, logs2.path])
        #expect(ok.status == 0 || ok.status == 1, "\(ok.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("r.txt").path))
    }
}

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
}

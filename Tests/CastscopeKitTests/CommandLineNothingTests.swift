import Foundation
import Testing

/// Issue 11 item 4: nothing recognized, or a missing input, is exit 4 with a one-line diagnosis.
@Suite struct CommandLineNothingTests {
    @Test("an empty folder, an unknown file, a binary file, a missing path: exit 4, one line saying why")
    func nothingRecognized() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = dir.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        try Data("hello\nthis is not a screen-sharing log\n".utf8).write(to: dir.appendingPathComponent("notes.txt"))
        try Data([0x89, 0x50, 0x4E, 0x47, 0, 0, 0, 0]).write(to: dir.appendingPathComponent("img.png"))
        let cases: [([String], String)] = [
            (["empty"], "castscope: error: nothing recognized: no files in empty"),
            (["notes.txt"], "castscope: error: nothing recognized: 1 file read (plain), 2 records, none from a screen-sharing extension"),
            (["img.png"], "castscope: error: nothing recognized: none of the 1 file could be read"),
            (["no-such.log"], "castscope: error: no-such.log: cannot open: No such file or directory"),
        ]
        for (args, line) in cases {
            for extra in [[], ["--json"], ["--fail-on", "warning"], ["--fail-on", "info"]] {
                let r = try castscope(["analyze"] + extra + args, cwd: dir)
                #expect(r.status == 4, "\(args) \(extra)")
                #expect(r.stderr.split(separator: "\n").contains { $0.hasPrefix(line) }, "\(args): \(r.stderr)")
            }
        }
        // A wrong bundle: a folder of logs from another app.
        let other = dir.appendingPathComponent("other-app")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try Data("2026-03-12T10:00:00+0100 host sshd[12]: Accepted publickey for root\n2026-03-12T10:00:01+0100 host cron[9]: job done\n".utf8)
            .write(to: other.appendingPathComponent("syslog"))
        let wrong = try castscope(["analyze", "other-app"], cwd: dir)
        #expect(wrong.status == 4)
        #expect(wrong.stderr.hasPrefix("castscope: error: nothing recognized: 1 file read (journal-short-iso), 2 records"))
        // A missing path next to good input: the good input is still analyzed, exit 4.
        let mixed = try castscope(["analyze", "no/such/file.log", "samples/retry-storm"])
        #expect(mixed.status == 4)
        #expect(mixed.stdout.contains("failed-to-connect"))
        // Empty standard input.
        let emptyStdin = try castscope(["analyze", "-"], stdin: Data())
        #expect(emptyStdin.status == 4)
        #expect(emptyStdin.stderr == "castscope: error: nothing recognized: <stdin> is empty\n")
        // Something recognized is still 0.
        #expect(try castscope(["analyze", "samples/healthy-jitsi"]).status == 0)
    }

    @Test("a file with times read as plain text is a warning naming it")
    func timestampedPlain() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("2026.03.12 10:20:00.123 [ext] broadcastStarted\n2026.03.12 10:20:01.000 [ext] stopped\n".utf8)
            .write(to: dir.appendingPathComponent("odd.log"))
        let r = try castscope(["analyze", "odd.log"], cwd: dir)
        #expect(r.stderr.contains("castscope: warning: odd.log: read as plain text (times lost) although 2 of the first 2 lines begin with a timestamp"))
        #expect(r.stdout.contains("read as plain text"))
        // A message-only paste (no times) gets no such warning.
        let plain = try castscope(["analyze", "samples/healthy-jitsi"])
        #expect(!plain.stderr.contains("warning"))
    }

    @Test("--fail-on names the findings that tripped it and takes info")
    func failOnSaysWhy() throws {
        let r = try castscope(["analyze", "--fail-on", "error", "samples/retry-storm"])
        #expect(r.status == 3)
        #expect(r.stderr == "castscope: --fail-on error: 2 findings at or above error: socket-file-missing (S1), never-connected (S1)\n")
        #expect(try castscope(["analyze", "--fail-on", "info", "samples/retry-storm"]).status == 3)
    }
}

import Foundation
import Testing

/// Issue 11: every line of the README's Usage block runs. Stand-ins, for what a test machine
/// does not have: `idevicesyslog` (no phone) is `cat` of the sample phone log; `less -R` (no
/// terminal) is `cat`; the system journal (no journald) is the sample relay journal through
/// `--file … --from-start`; `/var/log/journal/relay` and `relay-journal/` are a folder holding a
/// copy of it; `castscope tail` lines are stopped by SIGINT after 3 s (`timeout -s INT 3`).
/// File names map to the samples: bundle.zip is a zip of two sample folders, bundle/ is samples/;
/// system_logs.logarchive is a sample folder (`show` reads text logs as it reads archives; the
/// archive itself is read by UnifiedLogEndToEndTests).
@Suite struct CommandLineReadmeUsageTests {
    static func usageLines() throws -> [String] {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Usage\n\n```sh\n"))
        let rest = readme[section.upperBound...]
        let end = try #require(rest.range(of: "\n```"))
        return rest[..<end.lowerBound].split(separator: "\n").map(String.init)
    }

    @Test("the README's Usage block has the new options")
    func covered() throws {
        let block = try Self.usageLines().joined(separator: "\n")
        for option in ["-o report.json", "--format markdown", "--session", "--only-problems", "castscope sessions", " -q ",
                       "--oneline", "-S '", "--utc", "--input-format", "--color always", "--fail-on"] {
            #expect(block.contains(option), "\(option)")
        }
    }

    @Test("each line of the README's Usage block runs", arguments: try usageLines())
    func runs(_ line: String) throws {
        let root = packageRoot.path
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Stand-ins (see the suite's comment).
        let journalDir = dir.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journalDir, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "\(root)/samples/relay/relay.journal", toPath: journalDir.appendingPathComponent("relay.journal").path)
        let parsersDir = dir.appendingPathComponent("my-parsers")
        try FileManager.default.createDirectory(at: parsersDir, withIntermediateDirectories: true)
        var entries: [(String, [UInt8])] = []
        for f in ["retry-storm/log-stream-debug.txt", "stopped-10001/device-syslog.txt", "stopped-10001/host-app-xcode.txt"] {
            entries.append((f, Array(try Data(contentsOf: URL(fileURLWithPath: "\(root)/samples/\(f)")))))
        }
        try Data(makeArchive(.zip, entries)).write(to: dir.appendingPathComponent("bundle.zip"))

        var command = line
        if let comment = command.range(of: " # ") { command = String(command[..<comment.lowerBound]) }
        command = command.trimmingCharacters(in: .whitespaces)
        let bin = "\(root)/.build/debug/castscope"
        let replacements: [(String, String)] = [
            ("idevicesyslog |", "cat '\(root)/samples/stopped-10001/device-syslog.txt' |"),
            ("| less -R", "| cat"),
            ("/var/log/journal/relay", journalDir.path),
            ("relay-journal/", journalDir.path),
            ("~/.castscope.cursor", dir.appendingPathComponent("cursor").path),
            ("sysdiagnose.tar.gz", "'\(root)/samples/mixed-bundle/support-bundle.tar.gz'"),
            ("relay-logs/", "'\(root)/samples/relay/'"),
            ("device-logs/", "'\(root)/samples/stopped-10001/'"),
            ("relay.journal", "'\(root)/samples/relay/relay.journal'"),
            (" bundle/", " '\(root)/samples/'"),
            ("console.txt", "'\(root)/samples/jetsam-kill/console-copy.txt'"),
            ("paste.txt", "'\(root)/samples/stopped-10001/host-app-xcode.txt'"),
            ("huge.log", "'\(root)/samples/retry-storm/log-stream-debug.txt'"),
            ("system_logs.logarchive", "'\(root)/samples/healthy-jitsi/'"),
        ]
        for (from, to) in replacements { command = command.replacingOccurrences(of: from, with: to) }
        var variants = [command]
        if command.contains("[--check] [--parsers DIR]") {
            let base = command.replacingOccurrences(of: " [--check] [--parsers DIR]", with: "")
            variants = [base, base + " --check", base + " --parsers '\(parsersDir.path)'"]
        }
        let isTail = command.contains("castscope tail")
        for var v in variants {
            if isTail && !v.contains("-D ") { v = v.replacingOccurrences(of: "castscope tail", with: "castscope tail --file '\(root)/samples/relay/relay.journal' --from-start") }
            if isTail { v = v.replacingOccurrences(of: "castscope tail", with: "timeout -s INT 3 castscope tail") }
            v = v.replacingOccurrences(of: "castscope ", with: "'\(bin)' ")
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", v + " > out 2> err"]
            p.currentDirectoryURL = dir
            p.standardInput = FileHandle.nullDevice
            try p.run()
            p.waitUntilExit()
            let out = (try? String(contentsOf: dir.appendingPathComponent("out"), encoding: .utf8)) ?? ""
            let err = (try? String(contentsOf: dir.appendingPathComponent("err"), encoding: .utf8)) ?? ""
            let expected: Int32 = isTail ? 124 : v.contains("--fail-on") ? 3 : 0
            #expect(p.terminationStatus == expected, "\(line)\n\(v)\n\(err)")
            if isTail {
                #expect(out.contains("castscope tail: "), "\(line): \(out)")
            } else if v.contains(" -o ") || v.contains("> report.json") {
                #expect(out.isEmpty || !v.contains(" -o "))
            } else if !v.contains("parsers") {
                #expect(!out.isEmpty, "\(line)")
            }
        }
        // The files the lines name were written where they say.
        if command.contains("-o report.json") {
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("report.json"))) as? [String: Any]
            #expect(json?["schema"] as? String == "castscope.report/2")
        }
        if command.contains("-o ticket.md") {
            #expect(try String(contentsOf: dir.appendingPathComponent("ticket.md"), encoding: .utf8).hasPrefix("# castscope"))
        }
        if command.contains("-o report.html") {
            #expect(try String(contentsOf: dir.appendingPathComponent("report.html"), encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("trace.json").path))
        }
    }
}

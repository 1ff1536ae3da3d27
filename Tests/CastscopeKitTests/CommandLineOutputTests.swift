import Foundation
import Testing

/// Issue 11 item 1 (and issue 12 item 5): outputs never overwrite an input, never replace a
/// file castscope did not write, go through a temporary file, and failed writes are reported.
@Suite struct CommandLineOutputTests {
    let sample = packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt")

    /// A folder with two copies of a sample log, a.log and b.log.
    func twoLogs() throws -> (URL, URL, URL) {
        let dir = try temporaryDirectory()
        let a = dir.appendingPathComponent("a.log"), b = dir.appendingPathComponent("b.log")
        try FileManager.default.copyItem(at: sample, to: a)
        try FileManager.default.copyItem(at: sample, to: b)
        return (dir, a, b)
    }

    func entries(_ dir: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
    }

    @Test("--html/--perfetto/-o naming an input leave it byte-identical and exit 2")
    func neverOverwritesAnInput() throws {
        let (dir, a, b) = try twoLogs()
        defer { try? FileManager.default.removeItem(at: dir) }
        let before = try Data(contentsOf: a)
        for args in [["--html", a.path, b.path], ["--perfetto", a.path, b.path], ["-o", a.path, a.path],
                     ["--output", a.path, "--force", a.path], ["--html", a.path, "--force", a.path]] {
            let r = try castscope(["analyze"] + args)
            #expect(r.status == 2, "\(args)")
            #expect(r.stdout.isEmpty)
            #expect(r.stderr.hasPrefix("castscope: error: "), "\(args)")
            #expect(r.stderr.split(separator: "\n").count == 1)
            #expect(try Data(contentsOf: a) == before, "\(args)")
        }
        // Through a symlink, and inside an input folder (with --force too).
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("link.log").path, withDestinationPath: "a.log")
        let link = try castscope(["analyze", "--force", "-o", "link.log", "a.log"], cwd: dir)
        #expect(link.status == 2)
        #expect(link.stderr.contains("is one of the inputs"))
        let inside = try castscope(["analyze", "--force", "-o", dir.appendingPathComponent("r.json").path, dir.path])
        #expect(inside.status == 2)
        #expect(inside.stderr.contains("inside the input folder"))
        #expect(try entries(dir) == ["a.log", "b.log", "link.log"])
        #expect(try Data(contentsOf: a) == before)
    }

    @Test("a file castscope did not write is replaced only with --force; its own reports are")
    func foreignFilesNeedForce() throws {
        let (dir, a, _) = try twoLogs()
        defer { try? FileManager.default.removeItem(at: dir) }
        let notes = dir.appendingPathComponent("notes.txt")
        try Data("my notes\n".utf8).write(to: notes)
        let refused = try castscope(["analyze", "-o", notes.path, a.path])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--force"))
        #expect(try String(contentsOf: notes, encoding: .utf8) == "my notes\n")
        // A file that names castscope is not therefore one of its reports (hostile review, H7).
        let readme = dir.appendingPathComponent("README.md")
        try Data("# my relay\n\nWe run castscope on every ticket.\n".utf8).write(to: readme)
        #expect(try castscope(["analyze", "-o", readme.path, a.path]).status == 2)
        #expect(try String(contentsOf: readme, encoding: .utf8).hasPrefix("# my relay"))
        // Standard input redirected from the target is an input, --force or not.
        let piped = dir.appendingPathComponent("piped.log")
        try Data(contentsOf: a).write(to: piped)
        let before = try Data(contentsOf: piped)
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "exec \"$0\" analyze --force -o \"$1\" - < \"$1\" 2>/dev/null",
                           packageRoot.appendingPathComponent(".build/debug/castscope").path, piped.path]
        try shell.run()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 2)
        #expect(try Data(contentsOf: piped) == before)
        // From a pipe, standard input is no file: the report is written.
        #expect(try castscope(["analyze", "--force", "-o", piped.path, "-"], stdin: before).status == 0)
        let forced = try castscope(["analyze", "--force", "-o", notes.path, a.path])
        #expect(forced.status == 0)
        #expect(try String(contentsOf: notes, encoding: .utf8).hasPrefix("castscope: 1 file"))
        // Each format castscope writes can be written again over itself without --force.
        for (name, format) in [("r.html", "html"), ("r.json", "json"), ("r.md", "markdown"), ("r.trace.json", "perfetto"), ("r.txt", "text")] {
            let out = dir.appendingPathComponent(name)
            #expect(try castscope(["analyze", "-o", out.path, a.path]).status == 0, "\(format)")
            let again = try castscope(["analyze", "--format", format, "-o", out.path, a.path])
            #expect(again.status == 0, "\(format): \(again.stderr)")
            #expect(again.stdout.isEmpty)
        }
        #expect(try String(contentsOf: dir.appendingPathComponent("r.html"), encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
        #expect(try String(contentsOf: dir.appendingPathComponent("r.md"), encoding: .utf8).hasPrefix("# castscope"))
        // No temporary file is left beside the outputs.
        #expect(try entries(dir).allSatisfy { !$0.contains(".castscope-") })
    }

    @Test("'-' is standard output; --json --markdown is refused; --format picks the report or the input format")
    func standardOutputAndFormats() throws {
        let (dir, a, _) = try twoLogs()
        defer { try? FileManager.default.removeItem(at: dir) }
        let html = try castscope(["analyze", "--html", "-", a.path], cwd: dir)
        #expect(html.status == 0)
        #expect(html.stdout.hasPrefix("<!DOCTYPE html>"))
        #expect(try entries(dir) == ["a.log", "b.log"])  // no file named '-'
        let both = try castscope(["analyze", "--json", "--markdown", a.path])
        #expect(both.status == 2)
        #expect(both.stderr.hasPrefix("castscope: error: --json and --markdown"))
        #expect(try castscope(["analyze", "--json", "--html", "-", a.path]).status == 2)
        let md = try castscope(["analyze", "--format", "markdown", "-o", "-", a.path])
        #expect(md.stdout.hasPrefix("# castscope"))
        // The earlier spelling: a parser name after --format reads the input as that format.
        let legacy = try castscope(["analyze", "--json", "--format", "apple-syslog", a.path])
        let modern = try castscope(["analyze", "--json", "--input-format", "apple-syslog", a.path])
        #expect(legacy.status == 0 && modern.status == 0)
        // The same report but for the command line it names.
        func withoutGenerator(_ r: RunResult) -> String {
            guard var json = r.json, var summary = json["summary"] as? [String: Any] else { return r.stdout }
            summary["generator"] = nil
            json["summary"] = summary
            return String(decoding: (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
        }
        #expect(withoutGenerator(legacy) == withoutGenerator(modern))
        #expect(!withoutGenerator(legacy).isEmpty)
    }

    @Test("an unwritable output is one line and exit 5, and loses none of the other outputs")
    func writeFailures() throws {
        let (dir, a, _) = try twoLogs()
        defer { try? FileManager.default.removeItem(at: dir) }
        for option in ["--html", "--perfetto"] {
            let r = try castscope(["analyze", option, "/dev/full", a.path])
            #expect(r.status == 5)
            #expect(r.stderr == "castscope: error: /dev/full: cannot write: No space left on device\n")
            #expect(r.stdout.hasPrefix("castscope: 1 file"))  // the terminal report is still there
        }
        // Standard output on a full disk, the HTML file still written.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        let bin = packageRoot.appendingPathComponent(".build/debug/castscope").path
        shell.arguments = ["-c", "'\(bin)' analyze --html r.html a.log > /dev/full 2> err"]
        shell.currentDirectoryURL = dir
        try shell.run()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 5)
        #expect(try String(contentsOf: dir.appendingPathComponent("err"), encoding: .utf8)
            == "castscope: error: standard output: cannot write: No space left on device\n")
        let good = try Data(contentsOf: dir.appendingPathComponent("r.html"))
        #expect(String(decoding: good, as: UTF8.self).hasSuffix("</html>\n"))
        // A write that fails half-way (file size limit) leaves the earlier report whole and no
        // temporary file behind.
        let limited = Process()
        limited.executableURL = URL(fileURLWithPath: "/bin/sh")
        limited.arguments = ["-c", "trap '' XFSZ; ulimit -f 2; exec '\(bin)' analyze --html r.html a.log > /dev/null 2> err"]
        limited.currentDirectoryURL = dir
        try limited.run()
        limited.waitUntilExit()
        #expect(limited.terminationStatus == 5)
        #expect(try String(contentsOf: dir.appendingPathComponent("err"), encoding: .utf8)
            == "castscope: error: r.html: cannot write: File too large\n")
        #expect(try Data(contentsOf: dir.appendingPathComponent("r.html")) == good)
        #expect(try entries(dir) == ["a.log", "b.log", "err", "r.html"])
    }

    @Test("usage errors are one line on stderr, exit 2")
    func oneLineUsageErrors() throws {
        for args in [["analyze"], ["analyze", "--threads"], ["analyze", "--json", "--markdown", "x"], ["analyze", "--bogus", "x"]] {
            let r = try castscope(args)
            #expect(r.status == 2, "\(args)")
            #expect(r.stderr.hasPrefix("castscope: error: "), "\(args): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(args): \(r.stderr)")
        }
    }
}

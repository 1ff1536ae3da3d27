import Foundation
import Testing

@testable import CastscopeKit

@Suite("bad input: a clear error per file, exit 1, the rest of the bundle still analyzed")
struct BadInputTests {
    @Test func brokenFilesNeverHideTheRest() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        func write(_ name: String, _ bytes: [UInt8]) throws {
            try Data(bytes).write(to: dir.appendingPathComponent(name))
        }
        let good = try Data(contentsOf: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt"))
        try write("a-good.log", Array(good))
        // A gzip cut in half: the lines before the cut still count.
        let storm = try String(contentsOf: packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt"), encoding: .utf8)
        let gz = makeArchive(.gz, [("s", Array(String(repeating: storm, count: 20).utf8))])
        try write("b-truncated.log.gz", Array(gz.prefix(gz.count / 2)))
        try write("c-blob.bin", (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try write("d-evil.zip", makeArchive(.zip, [("../escape.log", Array("open socket connection\n".utf8)),
                                                   ("ok/inner.log", Array("x\n".utf8))]))
        try write("e-bad-utf8.log", Array("fine\n".utf8) + [0x66, 0xC3, 0x28, 0xFF, 0x0A] + Array("open socket connection\n".utf8))
        // A 100 MB line, then a recognized line.
        let huge = dir.appendingPathComponent("f-huge.log")
        FileManager.default.createFile(atPath: huge.path, contents: nil)
        let h = try FileHandle(forWritingTo: huge)
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 1 << 20)
        for _ in 0..<100 { h.write(chunk) }
        h.write(Data("\nopen socket connection\n".utf8))
        try h.close()

        let r = try castscope(["analyze", "--json", dir.path])
        #expect(r.status == 1)
        let errors = r.stderr.split(separator: "\n").map(String.init)
        let p = dir.path
        #expect(errors.count == 5, "\(errors)")
        #expect(errors.contains(where: { $0.hasPrefix("castscope: error: \(p)/b-truncated.log.gz: at byte ") && $0.hasSuffix("gzip data cut short: the file ends inside it: what was decompressed before the cut is read") }))
        #expect(errors.contains("castscope: error: \(p)/c-blob.bin: at byte 0: binary file (NUL byte), not a log: skipped"))
        #expect(errors.contains("castscope: error: \(p)/d-evil.zip!../escape.log: unsafe member name (absolute or '..'), skipped"))
        #expect(errors.contains("castscope: error: \(p)/e-bad-utf8.log:2: invalid UTF-8 (1 line in this file; bytes replaced with U+FFFD)"))
        #expect(errors.contains("castscope: error: \(p)/f-huge.log:1: line of 104857600 bytes is longer than the 1048576-byte limit, skipped"))

        let json = try #require(r.json)
        let sessions = try #require(json["sessions"] as? [[String: Any]])
        let goodSession: [String: Any]? = sessions.first(where: { ($0["pid"] as? Int) == 812 })
        let goodOutcome = goodSession?["outcome"] as? String
        #expect(goodOutcome == "completed", "the good file is analyzed")
        let inputs = try #require(json["inputs"] as? [[String: Any]])
        func input(_ suffix: String) -> [String: Any]? { inputs.first(where: { ($0["path"] as? String)?.hasSuffix(suffix) == true }) }
        #expect((input("b-truncated.log.gz")?["events"] as? Int ?? 0) > 10, "lines before the cut are kept")
        #expect(input("d-evil.zip!ok/inner.log")?["records"] as? Int == 1)
        #expect(input("e-bad-utf8.log")?["events"] as? Int == 1)
        #expect(input("f-huge.log")?["events"] as? Int == 1, "the line after the 100 MB line is read")
    }

    @Test func missingPathIsAnErrorNotACrash() throws {
        let r = try castscope(["analyze", "no/such/file.log", "samples/retry-storm"])
        #expect(r.status == 4)  // issue 11: a missing input has its own exit code
        #expect(r.stderr == "castscope: error: no/such/file.log: cannot open: No such file or directory\n")
        #expect(r.stdout.contains("failed-to-connect"))
    }

    @Test func usageErrorsExit2() throws {
        #expect(try castscope(["analyze"]).status == 2)
        #expect(try castscope(["analyze", "--date", "12/03/2026", "samples"]).status == 2)
        let unknown = try castscope(["analyze", "--format", "nope", "samples"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.hasPrefix("castscope: error: --format: unknown format 'nope'"))
        #expect(try castscope(["analyze", "--help"]).status == 0)
    }

    /// `analyze` is parsed by itself when it parses so (`Castscope.analyzeAsRoot`); a request
    /// for help it finds inside a flag cluster or a longer flag is drawn by the whole command
    /// line, as before: `castscope analyze`'s usage, the root's `--version` listed.
    @Test(arguments: [["-qh"], ["x.log", "-help"], ["--help-hidden"], ["--help"]])
    func helpInsideFlagsIsTheWholeCommandsHelp(args: [String]) throws {
        let r = try castscope(["analyze"] + args)
        #expect(r.status == 0)
        #expect(r.stdout.contains("castscope analyze"))
        #expect(r.stdout.contains("--version"))
    }

    @Test("--date dates a Console.app copy on its own, with midnight roll-over")
    func dateOption() throws {
        let r = try castscope(["analyze", "--json", "--date", "2026-03-12", "samples/jetsam-kill/console-copy.txt"])
        let s = try #require((r.json?["sessions"] as? [[String: Any]])?.first)
        #expect(s["start"] as? String == "2026-03-12T23:59:50.118204+01:00")
        #expect((s["end"] as? String)?.hasPrefix("2026-03-13T00:00:02.") == true)
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// A hostile-input review (session 63): standard output redirected onto a file inside an input
/// folder (or a hard link to one) was written into, and the file then read without a word.
@Suite("hostile round 63: standard output into an input folder")
struct HostileRound63Tests {
    @Test("standard output onto a file in an input folder, through a link into one, or a hard link to one: refused, exit 2, the file unchanged")
    func stdoutIntoAnInputFolder() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        let input = dir.appendingPathComponent("in"), outside = dir.appendingPathComponent("ext")
        try fm.createDirectory(at: input, withIntermediateDirectories: true)
        try fm.createDirectory(at: outside, withIntermediateDirectories: true)
        let a = input.appendingPathComponent("a.log")
        try fm.copyItem(at: packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt"), to: a)
        try fm.copyItem(at: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"), to: input.appendingPathComponent("b.log"))
        try fm.createSymbolicLink(at: input.appendingPathComponent("ext"), withDestinationURL: outside)
        try "kept\n".write(to: outside.appendingPathComponent("x.log"), atomically: true, encoding: .utf8)
        try fm.linkItem(at: a, to: dir.appendingPathComponent("hard.log"))
        let binary = packageRoot.appendingPathComponent(".build/debug/castscope").path
        let before = try Data(contentsOf: a)
        let cases: [(String, String)] = [
            ("exec \"$0\" analyze \"$1\" >> \"$1/a.log\"", "is inside the input folder"),
            ("exec \"$0\" analyze --json \"$1\" 1<> \"$1/a.log\"", "is inside the input folder"),
            ("exec \"$0\" sessions \"$1\" >> \"$1/a.log\"", "is inside the input folder"),
            ("exec \"$0\" show \"$1\" >> \"$1/a.log\"", "is inside the input folder"),
            ("exec \"$0\" analyze \"$1\" >> \"$1/../hard.log\"", "(a hard link), which is read as an input"),
            ("exec \"$0\" analyze \"$1\" >> \"$1/../ext/x.log\"", "is inside the folder the link"),
            ("exec \"$0\" tail --file \"$1/a.log\" >> \"$1/a.log\"", "castscope never writes over an input"),
        ]
        for (script, says) in cases {
            let (status, text) = try runShell(script, [binary, input.path])
            #expect(status == 2 && text.contains(says), "\(script): \(status) \(text)")
            #expect(try Data(contentsOf: a) == before, "\(script)")
        }
        #expect(try String(contentsOf: outside.appendingPathComponent("x.log"), encoding: .utf8) == "kept\n")
        // (a file beside the folder, not in it: written as before)
        let (status, _) = try runShell("exec \"$0\" analyze \"$1\" > \"$1/../report.txt\"", [binary, input.path])
        #expect(status == 0)
        #expect(try String(contentsOf: dir.appendingPathComponent("report.txt"), encoding: .utf8).hasPrefix("castscope: 3 files"))
    }
}

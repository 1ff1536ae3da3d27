import Foundation
import Testing

/// The seventh hostile review (session 45): outputs that name standard output through a link
/// (`-o /dev/stdout` as root replaced /dev/stdout with a file), an input named by another path
/// to the same file (a bind mount, a hard link), a cursor file that is no regular file.
@Suite("hostile round 7: outputs through links and aliases")
struct HostileRound7Tests {
    static let log = """
        Mar 12 11:02:07 BroadcastExtension[915] <Notice>: broadcast started
        Mar 12 11:02:07 BroadcastExtension[915] <Notice>: Open socket connection
        Mar 12 11:02:07 BroadcastExtension[915] <Notice>: client stream open completed
        Mar 12 11:02:28 BroadcastExtension[915] <Notice>: client connection did close: (null)

        """

    @Test("-o through a link to standard output writes to it, the link kept; any other link is replaced, not written through")
    func outputThroughLinkToStdout() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("device.txt")
        try Self.log.write(to: input, atomically: true, encoding: .utf8)
        // (a private stand-in for /dev/stdout: standard output is a regular file here, as with `> report.txt`)
        let link = dir.appendingPathComponent("stdout")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/proc/self/fd/1")
        let r = try castscope(["analyze", "--no-pager", "-o", link.path, input.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("castscope: 1 file"), "\(r.stdout)")
        let kind = try FileManager.default.attributesOfItem(atPath: link.path)[.type] as? FileAttributeType
        #expect(kind == .typeSymbolicLink)
        // Any other link is replaced by the report, not written through (the review: a link
        // planted where a report goes made a root run create the file it pointed to).
        let elsewhere = dir.appendingPathComponent("elsewhere.txt")
        let alias = dir.appendingPathComponent("latest.txt")
        try FileManager.default.createSymbolicLink(atPath: alias.path, withDestinationPath: elsewhere.path)
        let w = try castscope(["analyze", "--no-pager", "-o", alias.path, input.path])
        #expect(w.status == 0, "\(w.stderr)")
        #expect(!FileManager.default.fileExists(atPath: elsewhere.path))
        #expect(try String(contentsOf: alias, encoding: .utf8).hasPrefix("castscope: 1 file"))
        #expect(try FileManager.default.attributesOfItem(atPath: alias.path)[.type] as? FileAttributeType == .typeRegular)
        // Standard error redirected onto the input (`2>> in.txt`) is refused as standard output is.
        let errLink = dir.appendingPathComponent("stderr")
        try FileManager.default.createSymbolicLink(atPath: errLink.path, withDestinationPath: "/proc/self/fd/2")
        let p = Process()
        p.executableURL = packageRoot.appendingPathComponent(".build/debug/castscope")
        p.arguments = ["analyze", "--no-pager", "-o", errLink.path, input.path]
        p.standardOutput = FileHandle.nullDevice
        let appending = try FileHandle(forWritingTo: input)
        appending.seekToEndOfFile()
        p.standardError = appending
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 2)
        #expect(try String(contentsOf: input, encoding: .utf8).hasPrefix(Self.log), "the input kept")
        // tail's cursor file: never a link to standard output, nor anything but a regular file.
        let t = try castscope(["tail", "--no-journal", "--cursor-file", link.path, "-"], stdin: Data())
        #expect(t.status == 2 && t.stderr.contains("not a regular file"), "\(t.stderr)")
        #expect(try FileManager.default.attributesOfItem(atPath: link.path)[.type] as? FileAttributeType == .typeSymbolicLink)
    }

    @Test("an input named by another path to the same file (a hard link; a bind mount likewise) is an input")
    func inputByAnotherName() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("device.txt")
        try Self.log.write(to: input, atomically: true, encoding: .utf8)
        let other = dir.appendingPathComponent("other-name.txt")
        try FileManager.default.linkItem(at: input, to: other)
        let r = try castscope(["analyze", "--no-pager", "--force", "-o", other.path, input.path])
        #expect(r.status == 2 && r.stderr.contains("is one of the inputs"), "\(r.stderr)")
        #expect(try String(contentsOf: input, encoding: .utf8) == Self.log)
        // A link inside an input folder pointing out of it: replacing it writes into the folder.
        let folder = dir.appendingPathComponent("logs")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.log.write(to: folder.appendingPathComponent("device.txt"), atomically: true, encoding: .utf8)
        let latest = folder.appendingPathComponent("latest.txt")
        try FileManager.default.createSymbolicLink(atPath: latest.path, withDestinationPath: dir.appendingPathComponent("out.txt").path)
        let l = try castscope(["analyze", "--no-pager", "-o", latest.path, folder.path])
        #expect(l.status == 2 && l.stderr.contains("is inside the input folder"), "\(l.stderr)")
    }

    @Test("argument errors escape control characters; a cursor file's missing folder is a usage error; a junk .ips body is one short line")
    func smallerOnes() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("device.txt")
        try Self.log.write(to: input, atomically: true, encoding: .utf8)
        let evil = "evil\u{1b}]0;PWN\u{07}\u{1b}[2J"
        for args in [["analyze", "--since", evil, input.path], ["analyze", "--session", evil, input.path], ["tail", "-D", evil], [evil]] {
            let r = try castscope(args)
            #expect(r.status != 0)
            #expect(!r.stderr.contains("\u{1b}") && r.stderr.contains("\\x1b"), "\(args): \(r.stderr)")
        }
        let nodir = try castscope(["tail", "--no-journal", "--cursor-file", dir.appendingPathComponent("missing/cur").path, "-"], stdin: Data())
        #expect(nodir.status == 2 && nodir.stderr.contains("its folder does not exist"), "\(nodir.stderr)")
        // An .ips whose body is 100 KB of one control byte: its error quotes a few of them.
        let ips = dir.appendingPathComponent("junk.ips")
        var body = Data(#"{"bug_type":"298","timestamp":"2026-03-12 10:15:04.00 +0100","os_version":"iPhone OS 17.4 (21E219)"}"#.utf8)
        body.append(0x0A)
        body.append(Data(repeating: 0x01, count: 100_000))
        try body.write(to: ips)
        let j = try castscope(["analyze", "-q", ips.path])
        let lines = j.stderr.split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy { $0.utf8.count < 1_000 }, "\(j.stderr.prefix(300))")
    }

    @Test("tail - refuses a stream that is not text (NUL bytes, gzip data) in one line, and stops reading it")
    func tailStdinNotText() throws {
        let nul = try castscope(["tail", "--no-journal", "-"], stdin: Data(repeating: 0, count: 60_000))
        #expect(nul.stderr.contains("<stdin>: at byte 0: binary data (NUL bytes), not a log"), "\(nul.stderr)")
        // (gzip's magic and a deflate block: what `gzip -c log | castscope tail -` sends first)
        var gz = Data([0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03])
        gz.append(Data(repeating: 0x4B, count: 100))
        let g = try castscope(["tail", "--no-journal", "-"], stdin: gz)
        #expect(g.stderr.contains("<stdin>: gzip data, not a text stream"), "\(g.stderr)")
        // A block of NULs, then the log (copytruncate): passed over, as analyze passes it over.
        var led = Data(repeating: 0, count: 4096)
        led.append(Data(Self.log.utf8))
        let l = try castscope(["tail", "--no-journal", "-"], stdin: led)
        #expect(l.stdout.contains("S1 started"), "\(l.stdout) \(l.stderr)")
        #expect(l.stderr.contains("4096 NUL bytes at the start passed over"), "\(l.stderr)")
    }

    /// The second review: a link naming standard error is fd 2 by its name even when fd 1 is
    /// the same file (`2>&1`: by inode it passed for standard output, and `--html /dev/stderr`
    /// replaced the text report); a link naming a descriptor that is not open is never replaced.
    @Test("links to descriptors: named by their descriptor; one that is not open is not replaced")
    func descriptorLinks() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("device.txt")
        try Self.log.write(to: input, atomically: true, encoding: .utf8)
        let err = dir.appendingPathComponent("stderr")
        try FileManager.default.createSymbolicLink(atPath: err.path, withDestinationPath: "/proc/self/fd/2")
        // Standard output and error the same file.
        let both = dir.appendingPathComponent("both.txt")
        FileManager.default.createFile(atPath: both.path, contents: nil)
        let h = try FileHandle(forWritingTo: both)
        let p = Process()
        p.executableURL = packageRoot.appendingPathComponent(".build/debug/castscope")
        p.arguments = ["analyze", "--no-pager", "--html", err.path, input.path]
        p.standardOutput = h
        p.standardError = h
        try p.run()
        p.waitUntilExit()
        try h.close()
        let text = try String(contentsOf: both, encoding: .utf8)
        #expect(text.contains("castscope: 1 file") && text.contains("<html"), "\(text.prefix(200))")
        // A link to a descriptor no process has open here: refused or unwritable, never replaced.
        let closed = dir.appendingPathComponent("fd9")
        try FileManager.default.createSymbolicLink(atPath: closed.path, withDestinationPath: "/proc/self/fd/9")
        let r = try castscope(["analyze", "--no-pager", "-o", closed.path, input.path])
        #expect(r.status != 0 && r.stderr.contains("file descriptor 9 is not open"), "\(r.stderr)")
        #expect(try FileManager.default.attributesOfItem(atPath: closed.path)[.type] as? FileAttributeType == .typeSymbolicLink)
    }
}

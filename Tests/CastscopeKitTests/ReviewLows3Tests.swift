import Foundation
import Testing

@testable import CastscopeKit

/// The small items session 50's review left: symbolic links in tar archives (and zips),
/// UTF-16 `.ips` offsets, `log show` ndjson records whose image path is no string or whose
/// pid is null.
@Suite("the reviews' low items, third round")
struct ReviewLows3Tests {
    static let sample = packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt")

    /// The inputs of a JSON report.
    static func inputs(_ json: [String: Any]?) -> [[String: Any]] { json?["inputs"] as? [[String: Any]] ?? [] }

    @Test("a tarball's symbolic link members are noted on the archive (five by name, then a count), not followed, and the exit code stays 0")
    func tarSymlinksNoted() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A sysdiagnose-like folder: one log, seven links to it or elsewhere, one hidden link.
        let script = """
            mkdir -p "$1/b/logs" && cp "$2" "$1/b/logs/device.log" && cd "$1/b/logs" || exit 2
            for i in 1 2 3 4 5 6; do ln -s device.log link$i.log || exit 2; done
            ln -s /private/var/mobile/Library/Logs/CrashReporter abs || exit 2
            ln -s device.log .hidden || exit 2
            cd "$1/b" && tar -cf "$1/bundle.tar" logs
            """
        let made = try runShell(script, ["sh", dir.path, Self.sample.path])
        try #require(made.status == 0, "\(made.stderr)")
        let r = try castscope(["analyze", "--json", dir.appendingPathComponent("bundle.tar").path])
        #expect(r.status == 0, "\(r.stderr)")
        let inputs = Self.inputs(r.json)
        let archive = inputs.first { ($0["path"] as? String)?.hasSuffix("bundle.tar") == true } ?? [:]
        let notes = archive["notes"] as? [String] ?? []
        #expect((archive["errors"] as? [Any] ?? []).isEmpty, "\(archive)")
        // (the members' order is the folder's: any five of the seven are named)
        let named = notes.filter { $0.hasSuffix(": a link, not followed") }
        #expect(named.count == 5, "\(notes)")
        let expected = Set((1...6).map { "logs/link\($0).log -> device.log: a link, not followed" }
            + ["logs/abs -> /private/var/mobile/Library/Logs/CrashReporter: a link, not followed"])
        #expect(named.allSatisfy { expected.contains($0) }, "\(notes)")
        #expect(notes.last == "2 more members are links, not followed", "\(notes)")
        #expect(!notes.contains { $0.contains(".hidden") }, "\(notes)")
        // The log itself is read once; a link is no input of its own.
        let read = inputs.filter { $0["format"] is String }
        #expect(read.count == 1 && (read.first?["path"] as? String)?.hasSuffix("bundle.tar!logs/device.log") == true, "\(inputs)")
        // A tarball of links alone: nothing read, said as such (not "could not be read (errors above)").
        let only = try runShell(#"cd "$1/b" && tar -cf "$1/links.tar" logs/link1.log logs/abs"#, ["sh", dir.path])
        try #require(only.status == 0, "\(only.stderr)")
        let o = try castscope(["analyze", "--no-pager", dir.appendingPathComponent("links.tar").path])
        #expect(o.status == 4 && o.stderr.contains("no files in \(dir.appendingPathComponent("links.tar").path) (hidden files are skipped, links not followed: see the notes)"), "\(o.stderr)")
        #expect(o.stdout.contains("note: logs/link1.log -> device.log: a link, not followed"), "\(o.stdout)")
    }

    /// `text` as UTF-16 bytes: little-endian with a byte-order mark (Notepad's "Unicode",
    /// PowerShell's `>`), or big-endian without one.
    static func utf16(_ text: String, littleEndian: Bool) -> [UInt8] {
        (littleEndian ? [0xFF, 0xFE] : []) + text.utf16.flatMap { u -> [UInt8] in
            littleEndian ? [UInt8(u & 0xFF), UInt8(u >> 8)] : [UInt8(u >> 8), UInt8(u & 0xFF)]
        }
    }

    @Test("a UTF-16 .ips whose JSON is damaged names the file's own byte of the damage (it named a byte of the text decoded as UTF-8)")
    func utf16IPSOffset() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // (a name of three UTF-8 bytes and one UTF-16 unit before the damage: the two counts part)
        let bad = crashIPS.replacingOccurrences(of: "\"pid\" : 2210,", with: "\"pid\" : 22x10,")
            .replacingOccurrences(of: "\"procName\" : \"BroadcastExtension\"", with: "\"procName\" : \"Broadcast\u{2014}Extension\"")
        try #require(bad.contains("22x10") && bad.contains("\u{2014}"))
        let good = crashIPS
        for (name, text, le) in [("le-bom.ips", bad, true), ("be.ips", bad, false),
                                 ("crlf.ips", bad.replacingOccurrences(of: "\n", with: "\r\n"), true),
                                 // (the second of two reports in one file)
                                 ("two.ips", good + "\n" + bad, true)]
        {
            let bytes = Self.utf16(text, littleEndian: le)
            let url = dir.appendingPathComponent(name)
            try Data(bytes).write(to: url)
            // Where the damaged number is in the file.
            let needle = Self.utf16("22x10", littleEndian: le).dropFirst(le ? 2 : 0)
            let at = try #require((0...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) })
            let r = try castscope(["analyze", "--json", url.path])
            let errors = Self.inputs(r.json).flatMap { $0["errors"] as? [String] ?? [] }
            #expect(errors.contains { $0.hasSuffix("its body (from line 2): invalid JSON at byte \(at) of the file: malformed number '22x10'") }, "\(name): \(errors)")
        }
        // A UTF-8 report's error is as it was: the byte in its body.
        let url = dir.appendingPathComponent("utf8.ips")
        try Data(bad.utf8).write(to: url)
        let r = try castscope(["analyze", "--json", url.path])
        let errors = Self.inputs(r.json).flatMap { $0["errors"] as? [String] ?? [] }
        let body = bad[bad.index(after: bad.firstIndex(of: "\n")!)...]
        let inBody = body.utf8.count - body[body.range(of: "22x10")!.lowerBound...].utf8.count
        #expect(errors.contains { $0.hasSuffix("its body (from line 2): invalid JSON at byte \(inBody): malformed number '22x10'") }, "\(errors)")
    }
}

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

    /// `analyze --json` of an archive in `dir` (exit 0 expected): every input, and the archive's own.
    static func analyzeArchive(_ dir: URL, _ name: String) throws -> (inputs: [[String: Any]], archive: [String: Any]) {
        let r = try castscope(["analyze", "--json", dir.appendingPathComponent(name).path])
        #expect(r.status == 0, "\(r.stderr)")
        let inputs = Self.inputs(r.json)
        return (inputs, inputs.first { ($0["path"] as? String)?.hasSuffix(name) == true } ?? [:])
    }

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
        let (inputs, archive) = try Self.analyzeArchive(dir, "bundle.tar")
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

    static let sendbird = packageRoot.appendingPathComponent("samples/sendbird-call-ended/log-show.ndjson")

    /// The Sendbird sample (`log show --style ndjson`) with fields of some lines replaced
    /// (line number: the field's JSON key and its new value).
    static func sendbird(with fields: [Int: (String, String)]) throws -> String {
        let lines = try String(contentsOf: sendbird, encoding: .utf8).components(separatedBy: "\n")
        return lines.enumerated().map { i, line -> String in
            guard let (key, v) = fields[i + 1],
                let r = line.range(of: "\"\(key)\":(\"[^\"]*\"|[0-9]+)", options: .regularExpression)
            else { return line }
            return line.replacingCharacters(in: r, with: "\"\(key)\":\(v)")
        }.joined(separator: "\n")
    }

    @Test("an ndjson record whose image path is no string (7, null) or whose pid is null keeps its message in its process's session, said with its line")
    func damagedImagePathAndNullPid() throws {
        let text = try Self.sendbird(with: [5: ("processImagePath", "7"), 8: ("processImagePath", "null"),
                                            13: ("processID", "null"), 14: ("processImagePath", "{\"a\":1}")])
        for (line, value) in [(5, "7"), (8, "null"), (13, "null"), (14, "{\"a\":1}")] {
            try #require(text.components(separatedBy: "\n")[line - 1].contains(":\(value),"), "line \(line) not replaced")
        }
        let r = try analyzePaste(text, name: "fields.ndjson")
        let sessions = r.json["sessions"] as? [[String: Any]] ?? []
        #expect(sessions.count == 1, "\(sessions.map { "\($0["process"] ?? "")[\($0["pid"] ?? "")]" })")
        #expect(sessions.first?["process"] as? String == "BroadcastExt" && sessions.first?["pid"] as? Int == 1533, "\(sessions.first ?? [:])")
        let input = Self.inputs(r.json).first ?? [:]
        let errors = (input["errors"] as? [Any] ?? []).map { "\($0)" }
        #expect(errors.count == 4, "\(errors)")
        #expect(errors.contains { $0.hasSuffix("fields.ndjson:5: process '7' is no process image path: the record is read as BroadcastExt[1533]'s, the process that last had its pid") }, "\(errors)")
        #expect(errors.contains { $0.hasSuffix("fields.ndjson:8: process 'null' is no process image path: the record is read as BroadcastExt[1533]'s, the process that last had its pid") }, "\(errors)")
        #expect(errors.contains { $0.hasSuffix("fields.ndjson:13: pid 'null' is no pid: the record is read as BroadcastExt[1533]'s, the pid it last had") }, "\(errors)")
        // (the fourth is counted, as the other damaged fields are: three said per file)
        #expect(errors.last?.hasSuffix("fields.ndjson:14: more records with damaged fields: not said one by one") == true, "\(errors)")
        // Every message is still there; the file ends with exit 1, as a damaged pid's does.
        #expect(input["events"] as? Int == 21, "\(input)")
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("fields.ndjson")
        try Data(text.utf8).write(to: file)
        let exit = try castscope(["analyze", "-q", "--no-pager", file.path])
        #expect(exit.status == 1, "\(exit.stderr)")
        // A record whose process had no pid before it is read without a process, said.
        let first = try analyzePaste(try Self.sendbird(with: [1: ("processImagePath", "7")]), name: "first.ndjson")
        let fi = (Self.inputs(first.json).first?["errors"] as? [Any] ?? []).map { "\($0)" }
        #expect(fi.count == 1 && fi[0].hasSuffix("first.ndjson:1: process '7' is no process image path: the record is read without one"), "\(fi)")
    }

    @Test("a zip on disk holding symbolic links (zip -y, Archive Utility) notes them on the archive; they were read as one-line files holding their targets' paths")
    func zipSymlinksNoted() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = """
            mkdir -p "$1/b/logs" && cp "$2" "$1/b/logs/device.log" && cd "$1/b/logs" || exit 2
            ln -s device.log current.log && ln -s ../../shared/other.log other.log || exit 2
            cd "$1/b" && zip -qry "$1/bundle.zip" logs
            """
        let made = try runShell(script, ["sh", dir.path, Self.sample.path])
        try #require(made.status == 0, "\(made.stderr)")
        let (inputs, archive) = try Self.analyzeArchive(dir, "bundle.zip")
        #expect(Set(archive["notes"] as? [String] ?? []) == ["logs/current.log -> device.log: a link, not followed",
                                                             "logs/other.log -> ../../shared/other.log: a link, not followed"], "\(inputs)")
        // The log is read once; the links are no inputs (each was a plain file of one line).
        let read = inputs.filter { $0["format"] is String }
        #expect(read.count == 1 && (read.first?["path"] as? String)?.hasSuffix("bundle.zip!logs/device.log") == true, "\(inputs)")
    }
}

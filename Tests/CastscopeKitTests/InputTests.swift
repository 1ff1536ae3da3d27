import Foundation
import Testing

@testable import CastscopeKit

/// Yields `count` bytes of `byte` without holding them: a 100 MB line costs no memory here.
final class RepeatingSource: ByteSource {
    var remaining: Int
    let byte: UInt8
    var tail: [UInt8]
    var consumedOffset: UInt64 = 0
    init(byte: UInt8, count: Int, then tail: String) {
        self.byte = byte
        remaining = count
        self.tail = Array(tail.utf8)
    }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if remaining > 0 {
            let n = min(remaining, buffer.count)
            memset(buffer.baseAddress!, Int32(byte), n)
            remaining -= n
            consumedOffset += UInt64(n)
            return n
        }
        let n = min(tail.count, buffer.count)
        tail.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: n) }
        tail.removeFirst(n)
        return n
    }
}

func drain(_ s: ByteSource) throws -> [UInt8] {
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = try buf.withUnsafeMutableBytes { try s.read(into: $0) }
        if n == 0 { return out }
        out += buf[0..<n]
    }
}

@Suite("input")
struct InputTests {
    @Test func linesAreSplitWithoutTheirTerminators() throws {
        let r = LineReader(source: MemorySource("a\r\nbb\n\nlast"), path: "m")
        var lines: [String] = []
        while let l = try r.nextLine() { lines.append(String(decoding: l, as: UTF8.self)) }
        #expect(lines == ["a", "bb", "", "last"])
        #expect(r.lineNumber == 4)
    }

    @Test("lines ended by CR alone are lines (plain, gzip, and `show`), numbered as an editor numbers them")
    func crOnlyLineEndings() throws {
        let dir = try temporaryDirectory()
        let sample = packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt")
        let lf = try Data(contentsOf: sample)
        try lf.write(to: dir.appendingPathComponent("lf.txt"))
        try Data(lf.map { $0 == 0x0A ? 0x0D : $0 }).write(to: dir.appendingPathComponent("cr.txt"))
        try Data(makeArchive(.gz, [("cr.txt", lf.map { $0 == 0x0A ? 0x0D : $0 })])).write(to: dir.appendingPathComponent("cr.txt.gz"))
        let want = try castscope(["analyze", "--no-color", "lf.txt"], cwd: dir)
        #expect(want.status == 0 && want.stdout.contains("43 recognized"))
        for name in ["cr.txt", "cr.txt.gz"] {
            let got = try castscope(["analyze", "--no-color", name], cwd: dir)
            #expect(got.stdout == want.stdout.replacingOccurrences(of: "lf.txt", with: name), "\(name)")
        }
        let shown = try castscope(["show", "cr.txt"], cwd: dir)
        #expect(shown.stdout == (try castscope(["show", "lf.txt"], cwd: dir)).stdout)
        // CR LF files keep their lines as they were (no empty line between two).
        try Data(String(decoding: lf, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n").utf8)
            .write(to: dir.appendingPathComponent("crlf.txt"))
        let crlf = try castscope(["analyze", "--no-color", "crlf.txt"], cwd: dir)
        #expect(crlf.stdout == want.stdout.replacingOccurrences(of: "lf.txt", with: "crlf.txt"))
    }

    @Test("a 100 MB line is skipped and reported; the next line is read; memory stays bounded")
    func overlongLine() throws {
        let source = RepeatingSource(byte: UInt8(ascii: "x"), count: 100 << 20, then: "\nopen socket connection\n")
        let r = LineReader(source: source, path: "big.log", maxLineLength: 1 << 20)
        var lines: [String] = []
        while let l = try r.nextLine() { lines.append(String(decoding: l, as: UTF8.self)) }
        #expect(lines == ["open socket connection"])
        #expect(r.problems.map(\.description) == ["big.log:1: line of 104857600 bytes is longer than the 1048576-byte limit, skipped"])
        #expect(r.lineNumber == 2)
    }

    @Test func gzipMultiMemberAndPadding() throws {
        let a = makeArchive(.gz, [("a", Array("hello\n".utf8))])
        let b = makeArchive(.gz, [("b", Array("world\n".utf8))])
        let g = try GzipSource(input: MemorySource(a + b + [0, 0, 0, 0]), path: "x.gz")
        #expect(String(decoding: try drain(g), as: UTF8.self) == "hello\nworld\n")
    }

    @Test func truncatedGzipNamesTheOffset() throws {
        let text = String(repeating: "open socket connection\n", count: 2000)
        let full = makeArchive(.gz, [("a", Array(text.utf8))])
        let cut = Array(full.prefix(full.count / 2))
        let g = try GzipSource(input: MemorySource(cut), path: "x.gz")
        #expect(throws: InputError.self) { _ = try drain(g) }
        do { _ = try drain(try GzipSource(input: MemorySource(cut), path: "x.gz")) } catch let e as InputError {
            #expect(e.description.hasPrefix("x.gz: at byte "))
            #expect(e.description.hasSuffix("gzip data cut short: the file ends inside it: what was decompressed before the cut is read"))
        }
    }

    @Test("xz, bzip2 and zstd: a member compressed on its own and a tar compressed whole are read like gzip's; a cut one keeps its lines and names the byte")
    func otherCompressions() throws {
        let text = (0..<3000).map { "2026-03-12 10:20:\(String(format: "%02d", $0 % 60)).5 line \($0) open socket connection\n" }.joined()
        let bytes = Array(text.utf8)
        for (kind, tarKind, name) in [(ArchiveKind.xz, ArchiveKind.tarXz, "xz"), (.bz2, .tarBz2, "bz2"), (.zst, .tarZst, "zst")] {
            var seen: [String: [UInt8]] = [:]
            var errors: [String] = []
            let walker = BundleWalker(visit: { path, source in seen[path] = try drain(source) },
                                      report: { errors.append($0.description) })
            let alone = makeArchive(kind, [("a", bytes)])
            #expect(sniff(alone) == .compressed, "\(name)")
            walker.stream(MemorySource(alone), path: "syslog.1.\(name)", depth: 0)
            walker.stream(MemorySource(makeArchive(tarKind, [("logs/ext.log", bytes), ("logs/app.txt", Array("hi\n".utf8))])),
                          path: "bundle.tar.\(name)", depth: 0)
            #expect(errors == [], "\(name)")
            #expect(seen == ["syslog.1.\(name)": bytes, "bundle.tar.\(name)!logs/ext.log": bytes,
                             "bundle.tar.\(name)!logs/app.txt": Array("hi\n".utf8)], "\(name)")

            // Cut in the middle: what came before the cut is read, and one error names the file and the byte.
            let cut = Array(alone.prefix(alone.count * 2 / 3))
            seen = [:]
            walker.stream(MemorySource(cut), path: "cut.\(name)", depth: 0)
            #expect(errors.count == 1, "\(name)")
            #expect(errors.first?.hasPrefix("cut.\(name): ") == true, "\(name): \(errors)")
            if let got = seen["cut.\(name)"] { #expect(bytes.starts(with: got), "\(name)") }
        }
        // Only the magic numbers decide, not the name; a text file that starts like one is text.
        #expect(sniff(Array("BZh9 is not bzip2\n".utf8)) == .text)
        #expect(Compression.sniff([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00, 0x00]) == .xz)
    }

    @Test("nested archives are streamed with their provenance; unsafe names are refused")
    func nestedArchives() throws {
        let inner = makeArchive(.zip, [("logs/ext.log", Array("open socket connection\n".utf8)),
                                       ("../evil.log", Array("x\n".utf8))])
        let outer = makeArchive(.tarGz, [("bundle/a.txt", Array("hi\n".utf8)), ("bundle/inner.zip", inner)])
        var seen: [String: String] = [:]
        var errors: [String] = []
        let walker = BundleWalker(visit: { path, source in
            seen[path] = String(decoding: try drain(source), as: UTF8.self)
        }, report: { errors.append($0.description) })
        walker.stream(MemorySource(outer), path: "b.tgz", depth: 0)
        #expect(seen == ["b.tgz!bundle/a.txt": "hi\n", "b.tgz!bundle/inner.zip!logs/ext.log": "open socket connection\n"])
        #expect(errors == ["b.tgz!bundle/inner.zip!../evil.log: unsafe member name (absolute or '..'), skipped"])
    }

    @Test func symlinkLoopsAreDetected() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("a"), withIntermediateDirectories: true)
        try "open socket connection\n".write(to: dir.appendingPathComponent("a/x.log"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("a/loop").path, withDestinationPath: "..")
        var seen: [String] = []
        var errors: [String] = []
        BundleWalker(visit: { p, _ in seen.append(p) }, report: { errors.append($0.description) }).walk([dir.path])
        #expect(seen == [dir.path + "/a/x.log"])
        #expect(errors.count == 1 && errors[0].contains("symlink loop"))
    }

    /// A ticket's folder holds notes beside the logs: a Markdown table quoting log words (the
    /// fifth survey's SOURCES.md made a session and five findings of them).
    @Test("a Markdown file is read for its code blocks and quotes; its prose and tables are skipped, line numbers kept")
    func markdownCodeOnly() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fenced = """
            # Ticket 123

            The user says sharing stopped; the app logged `didFinishWithError: Code=-5808`.

            | file | what |
            |---|---|
            | a.log | Broadcast did finish with error Code=-5808 |

            ```
            2023-06-21 22:06:22.890540+0800 BroadcastExtension[6966:290838] [Broadcast] server socket closed
            2023-06-21 22:06:22.890778+0800 BroadcastExtension[6966:290838] [Broadcast] client connection did close nil
            ```
            > 2023-06-21 22:06:23.000001+0800 BroadcastExtension[6966:290838] Program ended with exit code: 9

            """
        try fenced.write(to: dir.appendingPathComponent("notes.md"), atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", dir.path])
        let json = try #require(r.json, "\(r.stderr)")
        let sessions = json["sessions"] as? [[String: Any]] ?? []
        #expect(sessions.count == 1)
        let kinds = (json["findings"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(kinds == ["stopped-by-host"], "\(kinds)")
        let text = try castscope(["analyze", "--no-color", dir.path]).stdout
        #expect(text.contains("notes.md:10, "), "\(text)")
        #expect(text.contains("Program ended with exit code: 9  [1]:13"), "\(text)")
        // No fences: all but the tables and headings (a log saved as .md).
        let bare = "# log\n| x | Code=-5808 invalid broadcast session |\n2023-06-21 22:06:22.890540+0800 BroadcastExtension[6966:290838] [Broadcast] server socket closed\n"
        try FileManager.default.removeItem(at: dir.appendingPathComponent("notes.md"))
        try bare.write(to: dir.appendingPathComponent("log.markdown"), atomically: true, encoding: .utf8)
        let b = try #require(try castscope(["analyze", "--json", dir.path]).json)
        #expect((b["findings"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }.contains("replaykit-error") == false)
        #expect((b["sessions"] as? [[String: Any]] ?? []).count == 1)
        // The same lines in a .txt are all read (the table row's words too).
        try FileManager.default.removeItem(at: dir.appendingPathComponent("log.markdown"))
        try bare.write(to: dir.appendingPathComponent("log.txt"), atomically: true, encoding: .utf8)
        let t = try #require(try castscope(["analyze", "--json", dir.path]).json)
        #expect((t["findings"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }.contains("replaykit-error"))
        // Over the limit a Markdown file is read as it is, every byte (not held whole).
        try FileManager.default.removeItem(at: dir.appendingPathComponent("log.txt"))
        let filler = String(repeating: "some notes that say nothing in particular about the broadcast\n", count: MarkdownSource.limit / 60 + 1)
        try (filler + bare).write(to: dir.appendingPathComponent("big.md"), atomically: true, encoding: .utf8)
        let big = try #require(try castscope(["analyze", "--json", dir.path]).json)
        #expect((big["findings"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }.contains("replaykit-error"))
        #expect((big["sessions"] as? [[String: Any]] ?? []).count == 1)
    }

    /// A relay or SFU run under docker compose is pasted with the service's name before every
    /// line (the sixth survey: livekit #1192, openvidu #552).
    @Test("docker compose's 'name  | ' prefix comes off every line that has one, in any split of the input; line numbers kept")
    func composePrefix() throws {
        let more = String(repeating: "relay_1          | listening on :7000\n", count: 4)
        let text = more + "relay_1          | session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=standup\n"
            + "relay-1  | session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 closed reason=timeout frames=1234 duration=123.4s\n"
            + "relay_1 |\n"
            + "not a prefix | at all\n"
            + String(repeating: "x", count: 200) + " | long\n"
            + "relay_1  | last line without a newline"
        let expected = String(repeating: "listening on :7000\n", count: 4) + "session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=standup\n"
            + "session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 closed reason=timeout frames=1234 duration=123.4s\n"
            + "\n"
            + "not a prefix | at all\n"
            + String(repeating: "x", count: 200) + " | long\n"
            + "last line without a newline"
        #expect(ComposePrefixSource.detect(Array(text.utf8)))
        #expect(!ComposePrefixSource.detect(Array("2026-03-12 10:00:00 a | b\nplain words | here\n".utf8)))
        // Two lines inside a Markdown fence, as copied from an issue (livekit/livekit#2787): the
        // fences are not lines of the log.
        let fenced = "```bash\nlivekit-livekit-1  | 2024-06-13T07:15:12.868Z\tINFO\tlivekit\trtc/participant.go:829\tparticipant closing\n"
            + "livekit-livekit-1  | 2024-06-13T07:15:25.088Z\tINFO\tlivekit\trtc/room.go:100\troom closing\n```\n"
        #expect(ComposePrefixSource.detect(Array(fenced.utf8)))
        // Read through sources that hand out 1, 7 and 4096 bytes at a time, into buffers of 1, 3 and 64 KB.
        for chunk in [1, 7, 4096] {
            for size in [1, 3, 65536] {
                let source = ComposePrefixSource(ChunkedSource(Array(text.utf8), chunk: chunk))
                var out: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: size)
                while true {
                    let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
                    if n == 0 { break }
                    out += buffer[0..<n]
                }
                #expect(String(decoding: out, as: UTF8.self) == expected, "chunk \(chunk), buffer \(size)")
            }
        }
        // End to end: the relay's lines behind the prefix are its lines.
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try text.write(to: dir.appendingPathComponent("compose.log"), atomically: true, encoding: .utf8)
        let r = try #require(try castscope(["analyze", "--json", dir.path]).json)
        #expect((r["findings"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String } == ["orphan-relay-session"])
        let text2 = try castscope(["analyze", "--no-color", dir.path]).stdout
        #expect(text2.contains("compose.log:5"), "\(text2)")
    }
}

/// A Console.app copy from a Mac in Japanese, with the time-zone column shown (the
/// cinderella-project/iMast#138 paste): its times were lost (read as plain text).
@Suite("Console.app copies")
struct ConsoleCopyTests {
    @Test("localized type names and a zone after a space: console-copy, times and zone kept")
    func localizedWithZone() throws {
        let text = "エラー\t19:43:57.810276 +0900\tiMast\tHub connection error Error Domain=NSCocoaErrorDomain Code=4097\n"
            + "デフォルト\t19:43:57.811757 +0900\tiMast\tHOST: Failed to load remote view controller\n"
            + "デフォルト\t19:43:58.249245 +0900\tReportCrash\tFormulating report for corpse[6113] iMastShare\n"
        let registry = try ParserRegistry.builtin()
        let detected = Array(text.utf8).withUnsafeBytes { FormatDetector(formats: registry.formats).detect(head: $0) }
        #expect(detected?.format.name == "console-copy")
        func read(_ text: String) throws -> [(process: String?, offset: Int?, second: Int?)] {
            let reader = RecordReader(format: try #require(registry.format(named: "console-copy")),
                                      lines: LineReader(source: MemorySource(text), path: "t"))
            var out: [(String?, Int?, Int?)] = []
            try reader.run { out.append(($0.string(.process), $0.time?.offset, $0.time?.secondOfDay)) }
            return out
        }
        let recs = try read(text)
        #expect(recs.count == 3)
        #expect(recs.first?.process == "iMast")
        #expect(recs.allSatisfy { $0.offset == 9 * 3600 })
        #expect(recs.last?.second == 19 * 3600 + 43 * 60 + 58)
        // Not a zone: a sign without four digits after it, or followed by more text in the column.
        #expect(try read("Error\t12:00:00 -01\tProc\tmessage\n").allSatisfy { $0.offset == nil })
        #expect(try read("Error\t12:00:00 +0100x\tProc\tmessage\n").allSatisfy { $0.offset == nil })
    }
}

/// Hands out its bytes `chunk` at a time.
final class ChunkedSource: ByteSource {
    private let bytes: [UInt8]
    private let chunk: Int
    private var position = 0
    init(_ bytes: [UInt8], chunk: Int) { (self.bytes, self.chunk) = (bytes, chunk) }
    var consumedOffset: UInt64 { UInt64(position) }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(chunk, buffer.count, bytes.count - position)
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + position, byteCount: n) }
        position += n
        return n
    }
}

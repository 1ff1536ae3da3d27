import Foundation
import Testing

@testable import CastscopeKit

/// A hostile-input review (session 64).
@Suite("hostile round 64")
struct HostileRound64Tests {
    /// A tar whose member header has a size field libarchive refuses (base-256 all ones: -1),
    /// the checksum right: libarchive stops the archive there ("Tar entry has negative size"),
    /// and every member after it was lost with one error for the archive; GNU tar skips to the
    /// next header.
    static func tarWithBadSizes(_ entries: [(String, [UInt8])], bad: Set<String>, kind: ArchiveKind = .tar) -> (tar: [UInt8], at: [String: Int]) {
        var tar = makeArchive(.tar, entries)
        var at: [String: Int] = [:]
        var k = 0
        while k + 512 <= tar.count {
            let nameEnd = tar[k..<k + 100].firstIndex(of: 0) ?? k + 100
            let name = String(decoding: tar[k..<nameEnd], as: UTF8.self)
            if bad.contains(name), tar[k + 156] == UInt8(ascii: "0") || tar[k + 156] == 0 {
                at[name] = k
                for j in 124..<136 { tar[k + j] = 0xFF }
                for j in 148..<156 { tar[k + j] = 0x20 }
                let sum = tar[k..<k + 512].reduce(0) { $0 + Int($1) }
                let field = Array(String(format: "%06o", sum).utf8) + [0, 0x20]
                for j in 0..<8 { tar[k + 148 + j] = field[j] }
            }
            k += 512
        }
        return (tar, at)
    }

    @Test("a tar member header with a size libarchive refuses: named with its byte, the members after it read from the next header (they were all lost)")
    func tarReadOnPastABadSize() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let device = try [UInt8](Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt")))
        let storm = try [UInt8](Data(contentsOf: packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt")))
        let junk = [UInt8](repeating: UInt8(ascii: "y"), count: 3000)
        // In the middle, first, two in a row, and last (nothing after it).
        let cases: [(entries: [(String, [UInt8])], bad: Set<String>, sessions: Int, errors: Int, resumes: Bool)] = [
            ([("first.log", device), ("bad.log", junk), ("ok.log", storm)], ["bad.log"], 2, 1, true),
            ([("bad.log", junk), ("first.log", device), ("ok.log", storm)], ["bad.log"], 2, 1, true),
            ([("first.log", device), ("bad.log", junk), ("bad2.log", [UInt8]("z\n".utf8)), ("ok.log", storm)], ["bad.log", "bad2.log"], 2, 2, true),
            ([("first.log", device), ("ok.log", storm), ("bad.log", junk)], ["bad.log"], 2, 1, false),
        ]
        for (n, c) in cases.enumerated() {
            let (tar, at) = Self.tarWithBadSizes(c.entries, bad: c.bad)
            let path = dir.appendingPathComponent("bundle\(n).tar")
            try Data(tar).write(to: path)
            for file in [path.path] + (n == 2 ? [try gzipped(tar, dir, "bundle\(n).tar.gz")] : []) {
                let r = try castscope(["analyze", "--json", file])
                #expect(r.status == 1, "\(n): \(r.stderr)")
                let errors = r.stderr.split(separator: "\n").filter { $0.contains("damaged") }
                #expect(errors.count == c.errors, "\(n): \(r.stderr)")
                let first = at[c.entries.first { c.bad.contains($0.0) }!.0]!
                #expect(r.stderr.contains("at byte \(first): damaged member header (Tar entry has negative size): "
                    + (c.resumes ? "read on from the next member header, at byte" : "no member header follows it")), "\(n): \(r.stderr)")
                let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
                #expect((json["sessions"] as! [Any]).count == c.sessions, "\(n): \(r.stderr)")
            }
        }
    }

    @Test("two tars joined, a zeroed block between two members, a .tar.gz whose gzip CRC fails: every member read and the damage said (members lost, or a flipped byte unsaid, with exit 0)")
    func tarEndIsNotTheFilesEnd() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let device = try [UInt8](Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt")))
        let host = try [UInt8](Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/host-app-xcode.txt")))
        let a = makeArchive(.tar, [("device.log", device)]), b = makeArchive(.tar, [("host.log", host)])
        let both = makeArchive(.tar, [("device.log", device), ("host.log", host)])
        // (the second member's header: after the first's, a pax tar's extended header first)
        var second = 0
        while second + 512 <= both.count, !(both[second..<second + 8].elementsEqual("host.log".utf8) && both[second + 156] == UInt8(ascii: "0")) { second += 512 }
        var zeroed = both
        zeroed.insert(contentsOf: [UInt8](repeating: 0, count: 512), at: second - (both[second - 512 + 156] == UInt8(ascii: "x") ? 1024 : 0))
        // (its trailer's CRC-32 flipped: the data no longer checks, as a flipped data byte)
        var gz = makeArchive(.gz, [("x", both)])
        gz[gz.count - 8] ^= 0xFF
        // (what follows a tar's end and holds no header is passed over unsaid, as tar does: a
        // newline, zeros, text; a valid tar was "damaged" with these)
        for (name, tail) in [("newline.tar", [UInt8(0x0A)]), ("zeros.tar", [UInt8](repeating: 0, count: 100)),
                             ("text.tar", Array(String(repeating: "not a header\n", count: 300).utf8))] {
            let path = dir.appendingPathComponent(name)
            try Data(a + tail).write(to: path)
            let r = try castscope(["analyze", "--no-color", path.path])
            #expect(r.status == 0 && r.stderr.isEmpty, "\(name): \(r.stderr)")
        }
        for (name, bytes, status, says) in [("joined.tar", a + b, Int32(0), nil), ("zeroed.tar", zeroed, 0, nil),
                                             ("flipped.tar.gz", gz, 1, "gzip: incorrect data check")] as [(String, [UInt8], Int32, String?)] {
            let path = dir.appendingPathComponent(name)
            try Data(bytes).write(to: path)
            let r = try castscope(["analyze", "--no-color", path.path])
            #expect(r.status == status, "\(name): \(r.stderr)")
            #expect(r.stdout.contains("\(name)!host.log  xcode  3 records, 3 recognized"), "\(name): \(r.stdout)")
            if let says { #expect(r.stderr.contains(says), "\(name): \(r.stderr)") }
        }
    }

    @Test("a recognized line of a megabyte: its event keeps 16 KB of it and says how much more (a session of 1,000 such lines held them whole, and every one's bytes as a cache key: 1 GB)")
    func longRecognizedLines() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var log = ""
        log += "Mar 12 11:02:09 iPhone BroadcastExtension(ReplayKit)[915] <Notice>: broadcastStartedWithSetupInfo\n"
        for i in 0..<3 {
            log += "Mar 12 11:02:1\(i) iPhone BroadcastExtension[915] <Notice>: client stream error occurred: Error \(i) é" + String(repeating: "x", count: 1_000_000) + "\n"
        }
        let path = dir.appendingPathComponent("device.log")
        try Data(log.utf8).write(to: path)
        let r = try castscope(["analyze", "--json", path.path])
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let timeline = ((json["sessions"] as! [[String: Any]]).first?["timeline"] as? [[String: Any]]) ?? []
        let long = timeline.compactMap { $0["message"] as? String }.filter { $0.contains("stream error") }
        #expect(!long.isEmpty, "\(r.stdout.prefix(2000))")
        for m in long {
            #expect(m.utf8.count < Event.maxTextBytes + 64 && m.contains(" bytes more)"), "\(m.utf8.count) \(m.suffix(80))")
        }
    }

    @Test("a zero-filled block of a megabyte or more before a line (a crash's zeroed pages, a sparse file's hole): passed over and said, the line after it read (it was lost as a line over the limit)")
    func longNULBlocks() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let device = try [UInt8](Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt")))
        let lines = device.split(separator: 0x0A, omittingEmptySubsequences: false)
        let head = Array(lines[..<100].joined(separator: [0x0A])) + [0x0A], rest = Array(lines[100...].joined(separator: [0x0A]))
        for n in [1 << 20 + 1, 3 << 20] {
            let path = dir.appendingPathComponent("z\(n).log")
            try Data(head + [UInt8](repeating: 0, count: n) + rest).write(to: path)
            let r = try castscope(["analyze", "--no-color", path.path])
            #expect(r.status == 1, "\(r.stderr)")
            #expect(r.stderr.contains("z\(n).log:101: \(n) NUL bytes passed over (a zero-filled block in the file)"), "\(r.stderr)")
            #expect(!r.stderr.contains("longer than"), "\(r.stderr)")
            #expect(r.stdout.contains("209 records, 207 recognized"), "\(r.stdout)")
        }
        // (in plain text too, each block with its own count: the plain reader kept the NULs in
        // its record, unsaid, and a count passed over was carried to a later line's)
        let plain = dir.appendingPathComponent("plain.txt")
        // (after the first 4 KB: a NUL there makes plain text a binary file)
        try Data(Array(String(repeating: "A sentence line of plain text\n", count: 300).utf8) + [UInt8](repeating: 0, count: 2 << 20) + Array("after the block\n".utf8)
                 + [UInt8](repeating: 0, count: 10) + Array("ten NULs before this\n".utf8)).write(to: plain)
        let p = try castscope(["show", plain.path])
        #expect(p.stderr.contains("plain.txt:301: \(2 << 20) NUL bytes passed over") && p.stderr.contains("plain.txt:302: 10 NUL bytes passed over"), "\(p.stderr)")
        #expect(p.stdout.contains("after the block") && !p.stdout.contains("\\x00"), "\(p.stdout.prefix(600))")
        // (at the file's end: the block said as such, no line over the limit)
        let tail = dir.appendingPathComponent("tail.log")
        try Data(device + [UInt8](repeating: 0, count: 2 << 20)).write(to: tail)
        let t = try castscope(["analyze", "--no-color", tail.path])
        #expect(t.stderr.contains("\(2 << 20) NUL bytes passed over"), "\(t.stderr)")
    }

    @Test("a tar or zip cut inside a member's header: said as the cut it is, with the byte and what was read (it was \"damaged archive: Truncated tar archive\")")
    func cutInsideAHeader() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let device = try [UInt8](Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt")))
        for kind in [ArchiveKind.tar, .zip] {
            let whole = makeArchive(kind, [("a.log", device), ("b.log", [UInt8]("short\n".utf8))])
            // (the second member's header, cut after 20 of its bytes)
            let name = Array("b.log".utf8)
            var at = 0
            while at + name.count <= whole.count, !whole[at..<at + name.count].elementsEqual(name) { at += 1 }
            let headerStart = kind == .tar ? at : at - 30
            let cut = Array(whole[..<(headerStart + 20)])
            let path = dir.appendingPathComponent(kind == .tar ? "cut.tar" : "cut.zip")
            try Data(cut).write(to: path)
            let r = try castscope(["analyze", "--no-color", path.path])
            #expect(r.status == 1, "\(r.stderr)")
            #expect(r.stderr.contains("at byte \(cut.count): cut short: the archive ends inside the header of its member 2: the member before it was read"), "\(kind): \(r.stderr)")
            #expect(r.stdout.contains("a.log"), "\(r.stdout)")
        }
    }

    /// A log archive of the reference tracev3 files (`Special/…0f85`, `Persist/…0030`) and timesync.
    static func logArchive(_ at: URL) throws {
        let fm = FileManager.default
        let unified = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/reference/unified-logging")
        for sub in ["Special", "Persist"] { try fm.createDirectory(at: at.appendingPathComponent(sub), withIntermediateDirectories: true) }
        try fm.copyItem(at: unified.appendingPathComponent("timesync"), to: at.appendingPathComponent("timesync"))
        try fm.copyItem(at: unified.appendingPathComponent("0000000000000f85.tracev3"), to: at.appendingPathComponent("Special/0000000000000f85.tracev3"))
        try fm.copyItem(at: unified.appendingPathComponent("0000000000000030.tracev3"), to: at.appendingPathComponent("Persist/0000000000000030.tracev3"))
    }

    static func patch(_ file: URL, at offset: Int, _ value: UInt32) throws {
        var d = try [UInt8](Data(contentsOf: file))
        for k in 0..<4 { d[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(k))) }
        try Data(d).write(to: file)
    }

    static func records(_ r: RunResult) -> Int { r.stdout.split(separator: "\n").count }

    @Test("a tracev3 chunk whose tag is damaged, a header timebase of no clock, a tracev3 reached twice, a log put in the archive's folder: each said or read (chunks lost, times wrong, entries doubled, the log passed over, all without a word)")
    func appleArchiveDamage() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("good.logarchive")
        try Self.logArchive(good)
        let whole = try castscope(["show", "--style", "ndjson", good.path])
        #expect(whole.status == 0, "\(whole.stderr)")
        // The third chunkset's tag (0x600d at byte 19136) with one bit flipped.
        let tag = dir.appendingPathComponent("tag.logarchive")
        try Self.logArchive(tag)
        let special = tag.appendingPathComponent("Special/0000000000000f85.tracev3")
        #expect(try [UInt8](Data(contentsOf: special))[19136] == 0x0D)
        try Self.patch(special, at: 19136, 0x600F)
        let t = try castscope(["show", "--style", "ndjson", tag.path])
        #expect(t.status == 1 && t.stderr.contains("0000000000000f85.tracev3: at byte 19136: chunk of unknown tag 0x600f"), "\(t.stderr)")
        #expect(Self.records(t) < Self.records(whole))
        // The same chunkset's size damaged (2^48 − 1): the chunks after it read from the next chunkset.
        let size = dir.appendingPathComponent("size.logarchive")
        try Self.logArchive(size)
        let sized = size.appendingPathComponent("Special/0000000000000f85.tracev3")
        try Self.patch(sized, at: 19136 + 8, 0xFFFF_FFFF)
        try Self.patch(sized, at: 19136 + 12, 0xFFFF)
        let z = try castscope(["show", "--style", "ndjson", size.path])
        #expect(z.stderr.contains("at byte 19136: chunk 0x600d of 281474976710655 bytes runs past the end of the file (a damaged size): read on from the next chunkset, at byte"), "\(z.stderr)")
        #expect(Self.records(z) == Self.records(t), "\(Self.records(z)) for \(Self.records(t))")
        // The header's timebase numerator zeroed.
        let clock = dir.appendingPathComponent("clock.logarchive")
        try Self.logArchive(clock)
        try Self.patch(clock.appendingPathComponent("Special/0000000000000f85.tracev3"), at: 16, 0)
        let c = try castscope(["show", "--style", "ndjson", clock.path])
        #expect(c.stderr.contains("at byte 16: the header's timebase 0/3 is no clock's"), "\(c.stderr)")
        // A tracev3 linked in twice, and a text log beside the parts.
        let twice = dir.appendingPathComponent("twice.logarchive")
        try Self.logArchive(twice)
        try FileManager.default.createSymbolicLink(at: twice.appendingPathComponent("Persist/0000000000000031.tracev3"),
                                                   withDestinationURL: twice.appendingPathComponent("Persist/0000000000000030.tracev3"))
        let w = try castscope(["show", "--style", "ndjson", twice.path])
        #expect(Self.records(w) == Self.records(whole), "\(Self.records(w)) of \(Self.records(whole))")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"),
                                         to: twice.appendingPathComponent("device-syslog.txt"))
        let a = try castscope(["analyze", "--no-color", twice.path])
        #expect(a.stdout.contains("twice.logarchive/device-syslog.txt") && a.stdout.contains("stopped-by-host"), "\(a.stdout.suffix(800))")
    }

    @Test("an .ips whose header says JetsamEvent (bug_type 298) over a crash report's body: read by its body (the kill that decides the session was lost without a word)")
    func ipsHeaderOverAnotherBody() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let header = #"{"bug_type":"298","timestamp":"2026-03-12 23:59:54.10 +0100","os_version":"iPhone OS 17.4 (21E219)"}"#
        let body = #"{"procName" : "BroadcastExtension", "pid" : 2210, "captureTime" : "2026-03-12 23:59:54.1234 +0100", "exception" : {"type" : "EXC_CRASH", "signal" : "SIGKILL"}, "termination" : {"namespace" : "RUNNINGBOARD", "code" : "0xdead10cc", "indicator" : "Killed: 9"}}"#
        let ips = dir.appendingPathComponent("BroadcastExtension-2026-03-12-235954.ips")
        try Data((header + "\n" + body + "\n").utf8).write(to: ips)
        let r = try castscope(["analyze", "--oneline", ips.path, packageRoot.appendingPathComponent("samples/jetsam-kill/host-app-log-show.txt").path])
        #expect(r.stdout.contains("1 killed (S1)") && r.stdout.contains("extension-killed"), "\(r.stdout) \(r.stderr)")
    }

    @Test("U+2028 and U+2029 in a line are escaped in the text, Markdown and show outputs, as U+0085 is; a refused --perfetto or --html names its own option in the example")
    func separatorsAndHints() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("device.log")
        try Data("Mar 12 11:02:09 iPhone BroadcastExtension[915] <Notice>: client stream error occurred: A\u{2028}B\u{2029}C\u{85}D\n".utf8).write(to: log)
        for args in [["analyze"], ["analyze", "--markdown"], ["show"]] {
            let r = try castscope(args + [log.path])
            #expect(!r.stdout.contains("\u{2028}") && !r.stdout.contains("\u{2029}") && r.stdout.contains("\\u{2028}"), "\(args): \(r.stdout)")
        }
        for option in ["--perfetto", "--html"] {
            let r = try castscope(["analyze", option, log.path, log.path])
            #expect(r.status == 2 && r.stderr.contains("(e.g. \(option) report."), "\(r.stderr)")
        }
    }

    private func gzipped(_ bytes: [UInt8], _ dir: URL, _ name: String) throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data(makeArchive(.gz, [("x", bytes)])).write(to: url)
        return url.path
    }
}

/// `tail`'s cursor after a journal was rolled back, and with other matches (session 64).
@Suite("hostile round 64: tail's saved cursor", .serialized,
       .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote), "needs systemd-journal-remote (make test installs it)"))
struct HostileRound64TailTests {
    static let binary = packageRoot.appendingPathComponent(".build/debug/castscope").path

    /// Export text of relay entries `from..<from + n` (session k: accepted then closed), k
    /// seconds after a base, and worker heartbeats between when `others`.
    static func entries(_ from: Int, _ n: Int, others: Bool = false) -> Data {
        let t0: Int64 = 1_773_306_904_000_000
        var text = ""
        for k in from..<(from + n) {
            let t = t0 + Int64(k) * 1_000_000
            let sid = String(format: "%08x-1b7e-4f0e-9a51-2f1d3c4b5a69", k)
            for (dt, msg) in [(0, "session \(sid) accepted peer=iPhone14,2 room=r"), (500_000, "session \(sid) closed reason=peer-eof frames=10 duration=0.5s")] {
                text += "__REALTIME_TIMESTAMP=\(t + Int64(dt))\n_PID=811\n_HOSTNAME=relay1\nSYSLOG_IDENTIFIER=broadcast-relay\nMESSAGE=\(msg)\n\n"
            }
            if others { text += "__REALTIME_TIMESTAMP=\(t + 700_000)\n_PID=812\n_HOSTNAME=relay1\nSYSLOG_IDENTIFIER=other\nMESSAGE=worker heartbeat \(k)\n\n" }
        }
        return Data(text.utf8)
    }

    static func tail(_ args: [String]) throws -> (out: String, err: String) {
        let out = try temporaryDirectory().appendingPathComponent("out")
        defer { try? FileManager.default.removeItem(at: out.deletingLastPathComponent()) }
        let r = try runShell("out=$1; shift; exec timeout 5 \"$0\" tail \"$@\" < /dev/null > \"$out\"", [binary, out.path] + args)
        return ((try? String(contentsOf: out, encoding: .utf8)) ?? "", r.stderr)
    }

    static func relayLines(_ out: String) -> Int { out.split(separator: "\n").filter { $0.contains("\"type\":\"relay\"") }.count }

    @Test("a second tail on a cursor file another tail follows with: refused, exit 2, naming the lock (the two printed each other's entries)")
    func oneTailPerCursor() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journal = dir.appendingPathComponent("j.journal")
        let cursor = dir.appendingPathComponent("cur").path
        try makeJournal(Self.entries(0, 20), at: journal)
        let first = Process()
        first.executableURL = URL(fileURLWithPath: Self.binary)
        first.arguments = ["tail", "--file", journal.path, "--from-start", "--cursor-file", cursor, "--json"]
        first.standardOutput = FileHandle.nullDevice
        first.standardError = FileHandle.nullDevice
        first.standardInput = FileHandle.nullDevice
        try first.run()
        defer { first.terminate(); first.waitUntilExit() }
        // (until the first holds the lock: its cursor saved)
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: cursor) { usleep(50_000) }
        let second = try runShell("exec timeout 10 \"$0\" tail --file \"$1\" --cursor-file \"$2\" < /dev/null > /dev/null", [Self.binary, journal.path, cursor])
        #expect(second.status == 2, "\(second.stderr)")
        #expect(second.stderr.contains("another castscope tail is following with it (it holds \(cursor).lock)"), "\(second.stderr)")
    }

    @Test("tail --file on a text log, a gzipped journal, an empty file: what each is, exit 4; beside a journal, that one followed (sd-journal's errno alone, and nothing followed)")
    func notJournals() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journal = dir.appendingPathComponent("j.journal")
        try makeJournal(Self.entries(0, 5), at: journal)
        let text = dir.appendingPathComponent("text.journal"), gz = dir.appendingPathComponent("relay.journal.gz"), empty = dir.appendingPathComponent("empty.journal")
        try Data("Mar 12 10:15:04 relay1 broadcast-relay[811]: hello\n".utf8).write(to: text)
        try Data(makeArchive(.gz, [("j", try [UInt8](Data(contentsOf: journal)))])).write(to: gz)
        try Data().write(to: empty)
        for (file, says) in [(text, "not a journal file (no journal header)"), (gz, "compressed data, not a journal file"), (empty, "an empty file, no journal")] {
            let r = try runShell("exec timeout 10 \"$0\" tail --file \"$1\" < /dev/null > /dev/null", [Self.binary, file.path])
            #expect(r.status == 4 && r.stderr.contains("--file \(file.path): \(says)"), "\(r.status) \(r.stderr)")
        }
        let both = try Self.tail(["--file", journal.path, "--file", text.path, "--from-start", "--json"])
        #expect(Self.relayLines(both.out) == 10 && both.err.contains("--file \(text.path): not a journal file"), "\(both.err)")
    }

    @Test("tail --no-journal --cursor-file: said to be unused, and no file made (it was taken without a word)")
    func cursorWithoutJournal() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cursor = dir.appendingPathComponent("cur").path
        let r = try castscope(["tail", "--no-journal", "--cursor-file", cursor, "-"], stdin: Data("hello\n".utf8))
        #expect(r.status == 0 && r.stderr.contains("--cursor-file is not used with --no-journal"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    @Test("a journal cut short while tail follows it: said (tail went quiet for ever), and on a restart the cut, not 'damaged'")
    func cutWhileFollowed() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journal = dir.appendingPathComponent("big.journal")
        try makeJournal(Self.entries(0, 2000), at: journal)
        let size = try FileManager.default.attributesOfItem(atPath: journal.path)[.size] as! Int
        let r = try runShell("\"$0\" tail --file \"$1\" --from-start < /dev/null > /dev/null 2> \"$1.err\" & pid=$!; sleep 1; truncate -s \"$2\" \"$1\"; sleep 7; kill $pid; wait $pid; cat \"$1.err\" >&2",
                             [Self.binary, journal.path, String(size / 3)])
        #expect(r.stderr.contains("\(journal.path) became shorter while followed (\(size) → \(size / 3) bytes)"), "\(r.stderr)")
        let again = try runShell("exec timeout 5 \"$0\" tail --file \"$1\" < /dev/null > /dev/null", [Self.binary, journal.path])
        #expect(again.stderr.contains("the file is cut short: its header says"), "\(again.stderr)")
    }

    @Test("tail --file --from-start on a journal damaged in its middle (64 KB zeroed): the entries it cannot read said, as analyze says them (passed over without a word)")
    func damagedInItsMiddle() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journal = dir.appendingPathComponent("cj.journal")
        try makeJournal(Self.entries(0, 4000, others: true), at: journal)
        var d = try [UInt8](Data(contentsOf: journal))
        var used = d.count
        while used > 0 && d[used - 1] == 0 { used -= 1 }
        for k in (used / 2)..<(used / 2 + 65536) { d[k] = 0 }
        try Data(d).write(to: journal)
        let analyzed = try castscope(["analyze", "--oneline", journal.path])
        #expect(analyzed.stderr.contains("journal file damaged: the header promised"), "\(analyzed.stderr)")
        let r = try Self.tail(["--file", journal.path, "--from-start", "--json"])
        #expect(r.err.contains("cj.journal: journal file damaged: its header promised 12000 entries"), "\(r.err)")
    }

    @Test("a journal rolled back to an older copy and written again: the entries written since are followed, the gap said (none were shown: 'resuming after the saved cursor')")
    func rolledBack() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journal = dir.appendingPathComponent("rb.journal"), snapshot = dir.appendingPathComponent("snap.journal")
        let cursor = dir.appendingPathComponent("cur").path
        try makeJournal(Self.entries(0, 250), at: journal)
        try FileManager.default.copyItem(at: journal, to: snapshot)
        try makeJournal(Self.entries(250, 250), at: journal)
        _ = try Self.tail(["--file", journal.path, "--from-start", "--cursor-file", cursor, "--json"])
        #expect(FileManager.default.fileExists(atPath: cursor))
        try FileManager.default.removeItem(at: journal)
        try FileManager.default.copyItem(at: snapshot, to: journal)
        try makeJournal(Self.entries(1000, 30), at: journal)
        let r = try Self.tail(["--file", journal.path, "--cursor-file", cursor, "--json"])
        #expect(Self.relayLines(r.out) == 60, "\(r.err)")
        #expect(r.err.contains("the saved cursor's entry is not in this journal (rolled back to an older copy"), "\(r.err)")
    }

    @Test("a cursor saved on an entry another run's matches took, followed with other matches: resumed after it, no gap said (two false gaps)")
    func otherMatches() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journal = dir.appendingPathComponent("two.journal")
        let cursor = dir.appendingPathComponent("cur").path
        try makeJournal(Self.entries(0, 20, others: true), at: journal)
        _ = try Self.tail(["--file", journal.path, "--from-start", "--cursor-file", cursor, "--json", "-t", "other"])
        let quiet = try Self.tail(["--file", journal.path, "--cursor-file", cursor, "--json", "-t", "broadcast-relay"])
        #expect(!quiet.err.contains("cursor is ahead") && !quiet.err.contains("not in this journal") && !quiet.out.contains("\"type\":\"gap\""), "\(quiet.err)")
        try makeJournal(Self.entries(20, 10, others: true), at: journal)
        let more = try Self.tail(["--file", journal.path, "--cursor-file", cursor, "--json", "-t", "broadcast-relay"])
        #expect(!more.err.contains("not in this journal") && !more.out.contains("\"type\":\"gap\""), "\(more.err)")
        #expect(Self.relayLines(more.out) == 20, "\(more.err)")
    }
}

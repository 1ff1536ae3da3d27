import Foundation
import Testing

@testable import CastscopeKit

@Suite("hostile round 14: files that change while read")
struct HostileRound14GrowingTests {
    /// A log its daemon writes faster than castscope reads (`castscope analyze
    /// /var/log/relay.log` on a busy host; a debug build reads a few MB/s) was read for as long
    /// as the daemon wrote: `analyze` never ended (a file grown by 10 MB/s was still being read
    /// 40 s after a start at 2 MB). The parallel ranges of a big file already stopped at the size
    /// they were cut from; a file read whole now stops where it ended when it was opened, and
    /// the input says that it grew. Deterministic: the file grows inside the reader's visit.
    @Test("a file that grows while it is read is read as it was when opened, and a note says so")
    func growingFileIsReadAsOpened() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("relay.log")
        let first = Array(String(repeating: "2026-03-12 10:20:01.5 open socket connection\n", count: 2000).utf8)
        try Data(first).write(to: file)
        let more = Data(String(repeating: "2026-03-12 10:20:02.5 written later\n", count: 4000).utf8)

        // The source alone: bytes past its size when opened are not handed over.
        let source = try FileSource(path: file.path)
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: more)
        #expect(try drain(source) == first)

        // Through the walk: the visit sees what the file held when opened, and the note names
        // both sizes.
        try Data(first).write(to: file)
        var seen: [UInt8] = []
        var notes: [String] = []
        var errors: [String] = []
        var walker = BundleWalker(visit: { _, source in
            try handle.seek(toOffset: UInt64(first.count))
            try handle.write(contentsOf: more)
            seen = try drain(source)
        }, report: { errors.append($0.description) })
        walker.note = { path, note in notes.append("\(path): \(note)") }
        walker.walk([file.path])
        try handle.close()
        #expect(errors == [])
        #expect(seen == first)
        #expect(notes == ["\(file.path): the file grew while it was read (from \(first.count) to \(first.count + more.count) bytes: still being written?): read as it was when castscope began to read it; what was written since is not in this report"])

        // A file that did not grow gets no note, and a /proc file (0 bytes by its size) is read
        // to its end.
        notes = []
        walker.visit = { _, source in seen = try drain(source) }
        walker.walk([file.path])
        #expect(notes == [] && seen.count == first.count + more.count)
        let proc = try FileSource(path: "/proc/self/status")
        #expect(try drain(proc).count > 0)
    }
}

@Suite("hostile round 14: tail's cursor file")
struct HostileRound14CursorTests {
    /// `/proc/version` is one short line of text, so it passed for a cursor file; its folder
    /// takes no new file, and the refusal read "its folder cannot be written: No such file or
    /// directory" of a folder that exists (round 13 left it).
    @Test("tail --cursor-file in /proc or /sys is refused as a file the kernel makes, exit 2")
    func cursorInProc() throws {
        for (path, mount) in [("/proc/version", "/proc"), ("/proc/no-such-cursor", "/proc"), ("/sys/kernel/no-such-cursor", "/sys")] {
            let r = try castscope(["tail", "--file", relayJournal.path, "--from-start", "--cursor-file", path])
            #expect(r.status == 2, "\(path): \(r.status) \(r.stderr)")
            #expect(r.stderr == "castscope: error: --cursor-file \(path): it is in \(mount), a file system the kernel makes, not a file castscope can save: name a file on disk\n",
                    "\(path): \(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
    }
}

/// One ustar member (header and data padded to 512 bytes) of `type` ("0" a file, "3" a
/// character device, "4" a block device, "6" a FIFO), written by hand: the test archive
/// writer makes files only.
func ustarMember(_ name: String, type: Character, data: [UInt8] = []) -> [UInt8] {
    var h = [UInt8](repeating: 0, count: 512)
    func put(_ s: String, at offset: Int) { for (i, b) in s.utf8.enumerated() { h[offset + i] = b } }
    put(name, at: 0)
    put("0000644", at: 100)
    put("0000000", at: 108)
    put("0000000", at: 116)
    put(String(format: "%011o", data.count), at: 124)
    put("00000000000", at: 136)
    put("        ", at: 148)
    h[156] = type.asciiValue!
    put("ustar", at: 257)
    put("00", at: 263)
    let sum = h.reduce(0) { $0 + Int($1) }
    put(String(format: "%06o", sum), at: 148)
    h[154] = 0
    return h + data + [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
}

/// The local headers and data of a zip's stored members, without the central directory
/// after them (a zip whose download stopped there).
func storedZipMembers(_ members: [(String, [UInt8])]) -> [UInt8] {
    func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    func crc32(_ data: [UInt8]) -> Int {
        var c: UInt32 = 0xFFFF_FFFF
        for b in data {
            c ^= UInt32(b)
            for _ in 0..<8 { c = c & 1 == 1 ? (c >> 1) ^ 0xEDB8_8320 : c >> 1 }
        }
        return Int(c ^ 0xFFFF_FFFF)
    }
    var out: [UInt8] = []
    for (name, data) in members {
        out += [0x50, 0x4B, 3, 4] + le(10, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0x21, 2)
        out += le(crc32(data), 4) + le(data.count, 4) + le(data.count, 4) + le(name.utf8.count, 2) + le(0, 2)
        out += Array(name.utf8) + data
    }
    return out
}

@Suite("hostile round 14: archive members")
struct HostileRound14ArchiveTests {
    /// A tar's FIFOs, devices and sockets were passed over without a word (round 6 left it),
    /// where a folder on disk names each; a tar holding only a FIFO then said "links not
    /// followed" of links it did not have.
    @Test("FIFO and device members of a tar are noted on the archive, not read; a tar of nothing else says so")
    func specialMembersAreNoted() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = Array(try Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt")))
        let end = [UInt8](repeating: 0, count: 1024)
        let specials = [("pipe", Character("6")), ("null\u{1b}[2J", Character("3")), ("sda", Character("4"))]
        let tar = dir.appendingPathComponent("devs.tar")
        try Data(specials.flatMap { ustarMember($0.0, type: $0.1) } + ustarMember("device.log", type: "0", data: log) + end).write(to: tar)
        let r = try castscope(["analyze", "--json", tar.path])
        #expect(r.status == 0, "\(r.stderr)")
        let inputs = try #require(r.json?["inputs"] as? [[String: Any]])
        let archive = inputs.first { $0["path"] as? String == tar.path }
        #expect(archive?["notes"] as? [String] == ["pipe: a FIFO, no file: not read", "null\\x1b[2J: a character device, no file: not read",
                                                   "sda: a block device, no file: not read"], "\(inputs)")
        #expect(inputs.contains { $0["path"] as? String == tar.path + "!device.log" && ($0["records"] as? Int ?? 0) > 100 })

        // Six or more: the first five by name, then a count.
        let many = dir.appendingPathComponent("many.tar")
        try Data((0..<8).flatMap { ustarMember("p\($0)", type: "6") } + end).write(to: many)
        let m = try castscope(["analyze", "--json", many.path])
        #expect(m.status == 4, "\(m.stderr)")
        #expect(m.stderr.contains("no files in \(many.path) (hidden files are skipped, links not followed, FIFOs and devices not read: see the notes)"), "\(m.stderr)")
        let text = try castscope(["analyze", many.path])
        #expect(text.stdout.contains("note: p4: a FIFO, no file: not read\n") && text.stdout.contains("note: 3 more members are FIFOs, devices or sockets, not read\n"),
                "\(text.stdout)")
    }

    /// A zip whose download stopped right after its last member's data, before the central
    /// directory: every member was read, but the error was "damaged archive: unknown
    /// libarchive error", with no byte and no word that the members before were read.
    @Test("a zip cut right before its central directory names the byte and says the members before were read")
    func zipCutBeforeItsDirectory() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = Array(try Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt")))
        // Stored members with their sizes in the local headers (as Python's zipfile and most
        // tools write a file on disk); the test writer's zips put them after the data.
        let zip = storedZipMembers([("a.log", log), ("b/c.log", log)])
        let directory = zip.count
        let cut = dir.appendingPathComponent("cut.zip")
        try Data(zip.prefix(directory)).write(to: cut)
        let r = try castscope(["analyze", "--json", cut.path])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr == "castscope: error: \(cut.path): at byte \(directory): the archive ends after member 2, where another member or its directory should follow (cut short?): the members before were read\n",
                "\(r.stderr)")
        let inputs = try #require(r.json?["inputs"] as? [[String: Any]])
        #expect(inputs.filter { ($0["records"] as? Int ?? 0) > 100 }.count == 2, "\(inputs)")
    }
}

@Suite("hostile round 14: names on disk")
struct HostileRound14NameTests {
    /// A bundle from Windows unpacked by a tool that kept its code page's bytes holds names that
    /// are not UTF-8. A String cannot hold them: they were repaired to U+FFFD, and every such
    /// file (and everything in such a folder) was "cannot open: No such file or directory" of
    /// a file that is there (round 4 left it).
    @Test("files and folders in an input folder whose names are not UTF-8 are read, named with \\xHH for the bad bytes")
    func namesThatAreNotUTF8() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = try Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"))
        func raw(_ parts: [UInt8]) -> [CChar] { (Array(dir.path.utf8) + [0x2F] + parts + [0]).map { CChar(bitPattern: $0) } }
        let file = raw(Array("caf".utf8) + [0xE9] + Array(".log".utf8))
        let folder = raw(Array("sub".utf8) + [0xFF])
        let inner = raw(Array("sub".utf8) + [0xFF, 0x2F] + Array("x".utf8) + [0xE9, 0x1B] + Array("[2J.log".utf8))
        #expect(mkdir(folder, 0o755) == 0)
        for name in [file, inner] {
            let fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            #expect(fd >= 0)
            _ = log.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
            close(fd)
        }
        let r = try castscope(["analyze", "--json", dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        let inputs = try #require(r.json?["inputs"] as? [[String: Any]])
        let read = Dictionary(uniqueKeysWithValues: inputs.map { ($0["path"] as? String ?? "", $0["records"] as? Int ?? 0) })
        #expect(read.keys.sorted() == ["\(dir.path)/caf\\xe9.log", "\(dir.path)/sub\\xff/x\\xe9\\x1b[2J.log"], "\(inputs)")
        #expect(read.values.allSatisfy { $0 > 100 }, "\(read)")

        // The same names given on the command line (`castscope analyze ~/Downloads/*`): Swift's
        // argument list repairs them, and they were not found either. (Through a shell's
        // printf: the test's own arguments are Strings.)
        let binary = packageRoot.appendingPathComponent(".build/debug/castscope").path
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", #""$0" analyze --json "$(printf 'caf\351.log')" "$(printf 'sub\377')" > out.json 2> err.txt"#, binary]
        shell.currentDirectoryURL = dir
        try shell.run()
        shell.waitUntilExit()
        let err = try String(contentsOf: dir.appendingPathComponent("err.txt"), encoding: .utf8)
        #expect(shell.terminationStatus == 0, "\(err)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("out.json"))) as? [String: Any]
        let given = (json?["inputs"] as? [[String: Any]] ?? []).map { ($0["path"] as? String ?? "", $0["records"] as? Int ?? 0) }
        #expect(given.map(\.0) == ["caf\\xe9.log", "sub\\xff/x\\xe9\\x1b[2J.log"], "\(given) \(err)")
        #expect(given.allSatisfy { $0.1 > 100 }, "\(given)")
    }
}

@Suite("hostile round 14: budgets",
       .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote), "needs systemd-journal-remote (make test installs it)"))
struct HostileRound14BudgetTests {
    /// `--max-events` bounded a text file's recognized lines only: a journal's entries were all
    /// held whatever the limit (round 13 left it). Past the limit the read stops at the next
    /// entry with a message, named in one error line (a budget line, always shown), on disk and
    /// inside an archive alike.
    @Test("--max-events bounds a journal file's recognized entries, and names the entry where reading stopped")
    func maxEventsBoundsJournals() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tar = dir.appendingPathComponent("relay.tar")
        try Data(makeArchive(.tar, [("relay.journal", Array(try Data(contentsOf: relayJournal)))])).write(to: tar)
        let whole = try castscope(["analyze", "--json", relayJournal.path])
        let wholeEvents = (whole.json?["inputs"] as? [[String: Any]])?.first?["events"] as? Int ?? 0
        #expect(whole.status == 0 && wholeEvents > 40, "\(whole.stderr)")
        for (input, display) in [(relayJournal.path, relayJournal.path), (tar.path, tar.path + "!relay.journal")] {
            let r = try castscope(["analyze", "--max-events", "20", "--json", input])
            #expect(r.status == 1, "\(input): \(r.stderr)")
            #expect(r.stderr == "castscope: error: \(display): memory budget: 20 recognized entries of this journal file analyzed (--max-events); entry 21 and the rest of it are not analyzed\n",
                    "\(input): \(r.stderr)")
            let summary = (r.json?["inputs"] as? [[String: Any]])?.first { $0["path"] as? String == display }
            #expect(summary?["events"] as? Int == 20, "\(input): \(String(describing: summary))")
        }
    }
}

@Suite("hostile round 14: deep folders")
struct HostileRound14DeepTests {
    /// The walk recurses once a folder: a tree 2,000 folders deep (a tarball made to hurt,
    /// unpacked; names that are not UTF-8 make it deeper than PATH_MAX allows) overflowed the
    /// stack of the debug build at about 1,700 (SIGSEGV, every input lost, the log beside it too).
    @Test("folders nested 2,000 deep: one error at the depth limit, the rest of the bundle read")
    func deepFolders() throws {
        let dir = try temporaryDirectory()
        let log = try Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"))
        try log.write(to: dir.appendingPathComponent("device.log"))
        let depth = 2000
        var fd = open(dir.path, O_RDONLY | O_DIRECTORY)
        for _ in 0..<depth {
            #expect(mkdirat(fd, "a", 0o755) == 0)
            let next = openat(fd, "a", O_RDONLY | O_DIRECTORY)
            close(fd)
            fd = next
        }
        close(fd)
        defer {
            // (from the bottom up: each path is under PATH_MAX)
            for level in stride(from: depth, through: 1, by: -1) {
                rmdir(dir.path + String(repeating: "/a", count: level))
            }
            try? FileManager.default.removeItem(at: dir)
        }
        let r = try castscope(["analyze", "--json", dir.path])
        #expect(r.status == 1, "\(r.status) \(r.stderr.prefix(300))")
        let limitPath = dir.path + String(repeating: "/a", count: 256)
        #expect(r.stderr == "castscope: error: \(limitPath): folders nested more than 256 deep: this one and what is under it not read\n",
                "\(r.stderr.prefix(300))")
        let inputs = r.json?["inputs"] as? [[String: Any]] ?? []
        #expect(inputs.contains { $0["path"] as? String == dir.path + "/device.log" && ($0["records"] as? Int ?? 0) > 100 })
    }
}

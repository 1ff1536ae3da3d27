import Foundation
import Testing

@testable import CastscopeKit

@Suite("hostile round 13: journals cut short",
       .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote), "needs systemd-journal-remote (make test installs it)"))
struct HostileRound13JournalTests {
    /// The relay journal cut among its entries (as `JournalTests.cutAmongEntries` cuts it).
    static func cutJournal(in dir: URL) throws -> URL {
        let good = [UInt8](try Data(contentsOf: relayJournal))
        let tail = (0..<8).reduce(0) { $0 | Int(good[136 + $1]) << (8 * $1) }
        let cut = dir.appendingPathComponent("relay.journal")
        try Data(good.prefix(tail - 30_000)).write(to: cut)
        return cut
    }

    /// A journal cut short is read from a private copy in TMPDIR. When that copy could not be
    /// made (TMPDIR missing, full), the error said "sd-journal and journalctl read no entry of
    /// such a file", as if the file held nothing before its cut: the user had no hint that a
    /// working TMPDIR would read its entries.
    @Test("a cut journal whose private copy cannot be made says why, not that the file holds nothing")
    func cutJournalWithoutTemporaryFolder() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cut = try Self.cutJournal(in: dir)
        let missing = dir.appendingPathComponent("no-such-folder").path
        for command in ["analyze", "show"] {
            let r = try castscope([command, cut.path], env: ["TMPDIR": missing])
            #expect(r.status == 4, "\(command): \(r.status) \(r.stderr)")
            let first = r.stderr.split(separator: "\n").first.map(String.init) ?? ""
            #expect(first.hasPrefix("castscope: error: \(cut.path): the file is cut short: "), "\(command): \(first)")
            #expect(first.contains("its entries before the cut could not be read: \(missing): cannot create a private temporary directory: No such file or directory"),
                    "\(command): \(first)")
            #expect(!first.contains("read no entry of such a file"), "\(command): \(first)")
        }
        // With a TMPDIR that works, the entries before the cut are read.
        let ok = try castscope(["analyze", "--json", cut.path], env: ["TMPDIR": dir.path])
        #expect(ok.status == 1 && ok.stderr.contains("the entries before the cut were read"), "\(ok.stderr)")
    }

    /// Session 52 read a journal file on disk cut short; one cut inside an archive or a
    /// compressed file (a ticket's size limit cut the `.tar.gz` it came in) failed as its
    /// member was copied out, and none of its entries was read: 0 recognized lines, where a
    /// text member keeps its lines before such a cut.
    @Test("a journal cut where its .tar, .tar.gz or .journal.gz ends: the entries before the cut are read, and the archive's damage is said")
    func journalCutInsideArchive() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = [UInt8](try Data(contentsOf: relayJournal))
        let tail = (0..<8).reduce(0) { $0 | Int(good[136 + $1]) << (8 * $1) }
        let cutAt = tail - 30_000
        // A gzip stream whose deflate data is whole but whose trailer is missing: it ends
        // right after the bytes given.
        func gzipCut(_ bytes: [UInt8]) -> [UInt8] { Array(makeArchive(.gz, [("x", bytes)]).dropLast(8)) }
        let tarCut = Array(makeArchive(.tar, [("relay.journal", good)]).prefix(512 + cutAt))
        let cases: [(String, [UInt8], String)] = [
            ("cut.tar", tarCut, "cut.tar!relay.journal"),
            ("cut.tar.gz", gzipCut(tarCut), "cut.tar.gz!relay.journal"),
            ("relay.journal.gz", gzipCut(Array(good.prefix(cutAt))), "relay.journal.gz"),
        ]
        let whole = try #require(try castscope(["analyze", "--json", relayJournal.path]).json)
        let wholeShown = try castscope(["show", relayJournal.path]).stdout.split(separator: "\n")
        let wholeRecords = try #require((whole["inputs"] as? [[String: Any]])?.first?["records"] as? Int)
        for (name, bytes, display) in cases {
            let file = dir.appendingPathComponent(name)
            try Data(bytes).write(to: file)
            let r = try castscope(["analyze", "--json", file.path])
            #expect(r.status == 1, "\(name): \(r.stderr)")
            #expect(r.stderr.contains("castscope: error: \(dir.path)/\(display): the file is cut short: its header says \(good.count) bytes, it has \(cutAt) "),
                    "\(name): \(r.stderr)")
            #expect(r.stderr.contains("the entries before the cut were read"), "\(name): \(r.stderr)")
            // the archive's own damage is still said, on a line of its own
            // (since round 15 in words that say the file was cut: "cut short")
            #expect(r.stderr.split(separator: "\n").contains { $0.contains("cut short: the archive ends inside this member") || $0.contains("gzip data cut short") }, "\(name): \(r.stderr)")
            let input = (r.json?["inputs"] as? [[String: Any]])?.first { $0["path"] as? String == "\(dir.path)/\(display)" }
            let records = input?["records"] as? Int ?? 0
            #expect(records > 10 && records < wholeRecords, "\(name): \(String(describing: input))")
            // show reads it too (a journal in an archive was "not shown (extract it first)"):
            // the whole file's first entries, and the cut said.
            let shown = try castscope(["show", file.path])
            #expect(shown.stderr.contains("\(display): the file is cut short"), "\(name): \(shown.stderr)")
            let lines = shown.stdout.split(separator: "\n")
            #expect(lines.count > 10 && Array(wholeShown.prefix(lines.count)) == lines, "\(name): \(lines.count) lines")
        }
        // A whole journal in an archive and on standard input: shown as the file is.
        let tar = dir.appendingPathComponent("whole.tar")
        try Data(makeArchive(.tar, [("relay.journal", good)])).write(to: tar)
        #expect(try castscope(["show", tar.path]).stdout.split(separator: "\n") == wholeShown)
        #expect(try castscope(["show", "-"], stdin: Data(good)).stdout.split(separator: "\n") == wholeShown)
    }

    /// tail follows the file itself, which sd-journal refuses whole: it said that neither
    /// sd-journal nor journalctl reads any entry of it, with no word that analyze and show
    /// (since session 52) read those before the cut.
    @Test("tail --file on a cut journal says that analyze and show read the entries before the cut")
    func tailOnCutJournal() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cut = try Self.cutJournal(in: dir)
        let r = try castscope(["tail", "--from-start", "--file", cut.path])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.hasSuffix("read no entry of such a file (castscope analyze and show read the entries before the cut)\n"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
    }
}

@Suite("hostile round 13: options")
struct HostileRound13OptionTests {
    static let bundle = packageRoot.appendingPathComponent("samples/stopped-10001").path

    /// An empty file name is what an unset shell variable gives (`--html "$OUT"`). `-o ""` was
    /// a usage error already; the others were not: `--html ""` read the whole bundle and ended
    /// with `: cannot write: No such file or directory`, exit 5; `--config ""` and `--parsers ""`
    /// named no option (`: cannot open`, `: not a directory`); tail's `--cursor-file ""`
    /// followed the journal and failed at its first batch (`: cannot save the cursor`, exit 1).
    @Test("an empty file name for --html, --perfetto, --config, --parsers or --cursor-file is one usage line naming the option, exit 2")
    func emptyFileNames() throws {
        let cases: [([String], String)] = [
            (["analyze", "--html", "", Self.bundle], "--html needs a file name ('-' for standard output) (see 'castscope analyze --help')"),
            (["analyze", "--perfetto", "", Self.bundle], "--perfetto needs a file name ('-' for standard output) (see 'castscope analyze --help')"),
            (["analyze", "--config", "", Self.bundle], "--config needs a file name (see 'castscope analyze --help')"),
            (["analyze", "--parsers", "", Self.bundle], "--parsers needs a directory (see 'castscope analyze --help')"),
            (["show", "--parsers", "", Self.bundle], "--parsers needs a directory (see 'castscope show --help')"),
            (["tail", "--no-journal", "--config", "", "-"], "--config needs a file name (see 'castscope tail --help')"),
            (["tail", "--no-journal", "--cursor-file", "", "-"], "--cursor-file needs a file name (see 'castscope tail --help')"),
        ]
        for (args, said) in cases {
            let r = try castscope(args, stdin: Data())
            #expect(r.status == 2, "\(args): \(r.status) \(r.stderr)")
            #expect(r.stderr == "castscope: error: \(said)\n", "\(args)")
            #expect(r.stdout.isEmpty, "\(args): \(r.stdout)")
        }
    }
}

extension HostileRound13OptionTests {
    /// `-D FILE` was a usage error naming --file; `--file FOLDER` went on to sd-journal and
    /// ended with `FOLDER: sd_journal_open_files: Is a directory`, exit 1, after tail began.
    @Test("tail --file with a folder is a usage error naming -D, exit 2")
    func tailFileThatIsAFolder() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try castscope(["tail", "--file", dir.path])
        #expect(r.status == 2, "\(r.status) \(r.stderr)")
        #expect(r.stderr == "castscope: error: --file \(dir.path): a directory (use -D to follow the journal files in a folder)\n")
        #expect(r.stdout.isEmpty, "\(r.stdout)")
    }

    /// `--since -1h` is the README's own example. ArgumentParser takes `-1h` as its value, but
    /// when an option group's check failed it looked through the arguments for a request for
    /// help first, read `-h` inside `-1h`, and printed the whole help to standard output, exit
    /// 0: the error was lost, and a script saw success.
    @Test("a usage error beside a relative time such as --since -1h is said, exit 2, not the help with exit 0")
    func relativeTimeBesideAnError() throws {
        let cases: [([String], String)] = [
            (["analyze", "--since", "-9999999h", Self.bundle], "--since: cannot read '-9999999h' (YYYY-MM-DD[ HH:MM[:SS]][zone], HH:MM, today, yesterday, -1h, '2 hours ago') (see 'castscope analyze --help')"),
            (["analyze", "-S", "-1h", "--match", "bogus", Self.bundle], "--match takes FIELD=value, got 'bogus' (see 'castscope analyze --help')"),
            // (the option last in a cluster of flags: found by a review in session 58)
            (["analyze", "-qS", "-1h", "--match", "bogus", Self.bundle], "--match takes FIELD=value, got 'bogus' (see 'castscope analyze --help')"),
            (["analyze", "--until", "-1h", "--max-bytes", "0x", Self.bundle], "--max-bytes must be a number of bytes above 0 (e.g. 500M, 4G), got '0x' (see 'castscope analyze --help')"),
            (["sessions", "--since", "-1h", "--threads", "0", Self.bundle], "--threads must be at least 1, got 0 (see 'castscope sessions --help')"),
            (["show", "--start", "-1h", "--parsers", "", Self.bundle], "--parsers needs a directory (see 'castscope show --help')"),
        ]
        for (args, said) in cases {
            let r = try castscope(args)
            #expect(r.status == 2, "\(args): \(r.status) \(r.stderr)")
            #expect(r.stderr == "castscope: error: \(said)\n", "\(args)")
            #expect(r.stdout.isEmpty, "\(args): \(r.stdout.prefix(200))")
        }
        // Typed by its alias (`analyse`), the error points to the command's help, not the
        // tool's (it said "see 'castscope --help'").
        let alias = try castscope(["analyse", "--since", "-1h", "--threads", "0", Self.bundle])
        #expect(alias.status == 2 && alias.stderr == "castscope: error: --threads must be at least 1, got 0 (see 'castscope analyze --help')\n", "\(alias.stderr)")
        // The window itself still works, and -h beside it still asks for the help.
        let ok = try castscope(["analyze", "-q", "--no-pager", "--since", "-1h", Self.bundle])
        #expect(ok.status == 0 && ok.stdout.contains("outside --since/--until"), "\(ok.stdout)\(ok.stderr)")
        let help = try castscope(["analyze", "--since", "-1h", "-h"])
        #expect(help.status == 0 && help.stdout.hasPrefix("OVERVIEW: "), "\(help.stderr)")
    }
}

@Suite("hostile round 13: tail's folder",
       .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote), "needs systemd-journal-remote (make test installs it)"))
struct HostileRound13TailTests {
    /// sd-journal watches the folder it opened: once `-D`'s folder was removed (a ticket's
    /// extracted bundle cleaned up, a journal folder moved), tail waited on it for good without
    /// a word, also when a new folder came under its name. It is said once, as a `--file`
    /// rotated away is.
    @Test("tail -D says when the folder it follows is removed or replaced")
    func folderRemoved() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for replaced in [false, true] {
            let folder = dir.appendingPathComponent(replaced ? "replaced" : "removed")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: relayJournal, to: folder.appendingPathComponent("relay.journal"))
            let p = Process()
            p.executableURL = packageRoot.appendingPathComponent(".build/debug/castscope")
            p.arguments = ["tail", "-D", folder.path, "--from-start", "--no-color"]
            let output = Pipe(), errors = Pipe()
            p.standardOutput = output
            p.standardError = errors
            let out = LineCollector(output.fileHandleForReading)
            let err = LineCollector(errors.fileHandleForReading)
            try p.run()
            defer { if p.isRunning { p.terminate() } }
            #expect(err.waitFor(timeout: 20) { $0.contains { $0.0.contains("following") } })
            try FileManager.default.removeItem(at: folder)
            if replaced {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: relayJournal, to: folder.appendingPathComponent("relay.journal"))
            }
            let said = err.waitFor(timeout: 30) {
                $0.contains { $0.0 == "castscope tail: \(folder.path) was \(replaced ? "replaced by another folder" : "removed"): the folder opened gets no more entries; start tail again to follow \(replaced ? "the new one" : "it once it is back")" }
            }
            #expect(said, "\(err.all.map(\.0))")
            p.terminate()
            p.waitUntilExit()
            // (what was read before is kept: the relay sessions were printed)
            #expect(out.all.contains { $0.0.contains("relay") }, "\(out.all.map(\.0))")
        }
    }

    /// sd-journal passes over a file shorter than its header says: among `-D`'s files, its
    /// entries were missing from what tail followed without a word (beside a good file), or
    /// tail said only "no entries yet".
    @Test("tail -D names a journal file cut short among its files, which sd-journal passes over")
    func cutFileInFolder() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let machine = dir.appendingPathComponent("0123456789abcdef0123456789abcdef")
        try FileManager.default.createDirectory(at: machine, withIntermediateDirectories: true)
        let cut = try HostileRound13JournalTests.cutJournal(in: machine)
        try FileManager.default.copyItem(at: relayJournal, to: dir.appendingPathComponent("good.journal"))
        let p = Process()
        p.executableURL = packageRoot.appendingPathComponent(".build/debug/castscope")
        p.arguments = ["tail", "-D", dir.path, "--from-start", "--no-color"]
        let output = Pipe(), errors = Pipe()
        p.standardOutput = output
        p.standardError = errors
        let out = LineCollector(output.fileHandleForReading)
        let err = LineCollector(errors.fileHandleForReading)
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: cut.path)[.size] as? Int)
        let declared = try Data(contentsOf: relayJournal).count
        let said = err.waitFor(timeout: 20) {
            $0.contains { $0.0 == "castscope tail: \(cut.path) is cut short (its header says \(declared) bytes, it has \(size)): sd-journal passes over it, so none of its entries is followed; castscope analyze reads those before the cut" }
        }
        #expect(said, "\(err.all.map(\.0))")
        // The good file's entries are followed.
        #expect(out.waitFor(timeout: 20) { $0.contains { $0.0.contains("relay") } }, "\(out.all.map(\.0))")
        p.terminate()
        p.waitUntilExit()
    }
}

@Suite("hostile round 13: Apple's logs cut inside their archive")
struct HostileRound13UnifiedLogTests {
    static let tracev3 = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/reference/unified-logging/0000000000000f85.tracev3")

    /// A sysdiagnose cut at a ticket's size limit ends inside a tracev3. The file cut so on disk
    /// is read up to the cut; inside the archive the member's copy failed and the whole of it
    /// was dropped (a log archive's member was unlinked, a lone one never read): nothing shown,
    /// "nothing read from it". Its chunks before the cut are read now, and both damages said.
    @Test("a tracev3 where its tar ends (alone or in a .logarchive): its chunks before the cut are read by analyze and show")
    func tracev3CutInsideArchive() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bytes = [UInt8](try Data(contentsOf: Self.tracev3))
        let cutAt = 400_000
        let onDisk = dir.appendingPathComponent("cut.tracev3")
        try Data(bytes.prefix(cutAt)).write(to: onDisk)
        let shownOnDisk = try castscope(["show", onDisk.path]).stdout.split(separator: "\n").count
        #expect(shownOnDisk > 1000)
        for (name, member) in [("lone.tar", "lone.tracev3"), ("sys.tar", "system_logs.logarchive/Persist/0000000000000f85.tracev3")] {
            let whole = makeArchive(.tar, [(member, bytes)])
            let file = dir.appendingPathComponent(name)
            // (the member's data begins after one 512-byte header, or a pax header and it)
            let start = whole.count - 1024 - ((bytes.count + 511) / 512 * 512)
            try Data(whole.prefix(start + cutAt)).write(to: file)
            let show = try castscope(["show", file.path])
            #expect(show.status == 1, "\(name): \(show.stderr)")
            #expect(show.stdout.split(separator: "\n").count == shownOnDisk, "\(name): \(show.stderr)")
            #expect(show.stderr.contains("\(file.path)!\(member): at byte \(cutAt): cut short: the archive ends inside this member (at byte \(start + cutAt) of the archive): its \(cutAt) bytes before the cut are read"), "\(name): \(show.stderr)")
            #expect(show.stderr.contains("\(file.path)!\(member): at byte ") && show.stderr.contains("runs past the end of the file (truncated)"), "\(name): \(show.stderr)")
            let analyze = try castscope(["analyze", "--json", file.path])
            let inputs = analyze.json?["inputs"] as? [[String: Any]] ?? []
            #expect(inputs.contains { ($0["records"] as? Int ?? 0) > 1000 }, "\(name): \(inputs) \(analyze.stderr)")
        }
    }
}

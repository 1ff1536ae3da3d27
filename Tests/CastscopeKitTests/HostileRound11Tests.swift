import CCastscopeArchive
import Foundation
import Testing

@testable import CastscopeKit

@Suite("hostile round 11: links inside input folders, ClickHouse DDL names, damaged members and journals")
struct HostileRound11Tests {
    static let log = """
        2026-03-12 10:20:00.492204+0100  localhost BroadcastExtension[1204]: (ReplayKit) [com.apple.ReplayKit:RPBroadcastExtension] extension started
        2026-03-12 10:20:00.514204+0100  localhost BroadcastExtension[1204]: [io.livekit.example.flutter:Broadcast] open socket connection
        2026-03-12 10:20:00.514514+0100  localhost BroadcastExtension[1204]: [io.livekit.example.flutter:Broadcast] failure: socket file missing

        """

    /// The folder walk follows links, so what a link inside an input folder leads to is an
    /// input: `--force -o outside.txt logs/` with `logs/l.txt -> ../outside.txt` replaced the
    /// log by the report; `-o elsewhere/r.txt logs/` with `logs/sub -> ../elsewhere` wrote into
    /// a folder being read (the next run read its own report).
    @Test("a file or folder reached through a link in an input folder is an input: never written")
    func linksInsideInputFolders() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let outside = dir.appendingPathComponent("outside.txt")
        try Self.log.write(to: outside, atomically: true, encoding: .utf8)
        let logs = dir.appendingPathComponent("logs")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: logs.appendingPathComponent("l.txt").path, withDestinationPath: "../outside.txt")
        // It is read through the link.
        let read = try castscope(["analyze", "--no-pager", "-q", logs.path])
        #expect(read.status == 0 && read.stdout.contains("1 session"), "\(read.stderr)")
        for option in ["-o", "--html", "--perfetto"] {
            let r = try castscope(["analyze", "--no-pager", "--force", option, outside.path, logs.path])
            #expect(r.status == 2 && r.stderr.contains("through the link"), "\(option): \(r.stderr)")
            #expect(try String(contentsOf: outside, encoding: .utf8) == Self.log, "\(option): the input kept")
        }
        // A link to a folder: nothing is written into that folder, not even a new file.
        let elsewhere = dir.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try Self.log.write(to: elsewhere.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
        let logs2 = dir.appendingPathComponent("logs2")
        try FileManager.default.createDirectory(at: logs2.appendingPathComponent("deep"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: logs2.appendingPathComponent("deep/sub").path, withDestinationPath: elsewhere.path)
        let report = elsewhere.appendingPathComponent("r.txt")
        let w = try castscope(["analyze", "--no-pager", "-o", report.path, logs2.path])
        #expect(w.status == 2 && w.stderr.contains("the link") && w.stderr.contains("deep/sub"), "\(w.stderr)")
        #expect(!FileManager.default.fileExists(atPath: report.path))
        let ch = try castscope(["analyze", "--no-pager", "-q", "--clickhouse", "file://" + elsewhere.path, logs2.path])
        #expect(ch.status == 2, "\(ch.stderr)")
        #expect(!FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent("castscope_sessions.jsonl").path))
        // A report beside the folder, not reached by any link, is written as before; a loop of
        // links (`a -> .`) ends.
        try FileManager.default.createSymbolicLink(atPath: logs2.appendingPathComponent("deep/loop").path, withDestinationPath: "..")
        let ok = try castscope(["analyze", "--no-pager", "-o", dir.appendingPathComponent("r.txt").path, logs2.path])
        #expect(ok.status == 0 || ok.status == 1, "\(ok.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("r.txt").path))
    }

    /// ClickHouse reads a backslash inside a quoted name as an escape: `--database 'a\`; DROP
    /// TABLE x; --'` was quoted by doubling the backquote alone, so the name ended early and
    /// the rest was SQL (`--apply` runs it); a newline in a name split the DDL into statements
    /// at the wrong place. `--ttl-days 0` wrote a TTL that deletes every row as it is
    /// inserted, and a TTL past 2106 wraps ClickHouse's `DateTime`.
    @Test("DDL names are escaped as ClickHouse reads them; --ttl-days within DateTime's range")
    func clickHouseSchemaNames() throws {
        let evil = "a\\`; DROP TABLE castscope_events; --"
        let r = try castscope(["clickhouse", "schema", "--cluster", evil, "--database", "x\ny\n;\n"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("ON CLUSTER `a\\\\\\`; DROP TABLE castscope_events; --`"), "\(r.stdout.prefix(300))")
        #expect(r.stdout.contains("Distributed(`a\\\\\\`; DROP TABLE castscope_events; --`, 'x\\x0Ay\\x0A;\\x0A',"), "\(r.stdout)")
        #expect(!r.stdout.contains("x\ny"))
        // Each statement is whole: as many as the plain DDL has.
        #expect(ClickHouseSchema.statements(r.stdout).count == ClickHouseSchema.statements(ClickHouseSchema.ddl(cluster: "c", database: "d")).count)
        // A name that begins with a digit is quoted (plain, ClickHouse reads it as a number).
        #expect(ClickHouseSchema.quoteIdentifier("2fleet") == "`2fleet`" && ClickHouseSchema.quoteIdentifier("fleet_2") == "fleet_2")
        for days in ["0", "-1", "99999999999999"] {
            let t = try castscope(["clickhouse", "schema", "--ttl-days", days])
            #expect(t.status == 2 && t.stderr.contains("--ttl-days must be 1 to"), "\(days): \(t.stderr)")
            #expect(t.stdout.isEmpty)
        }
        let ok = try castscope(["clickhouse", "schema", "--ttl-days", "30"])
        #expect(ok.status == 0 && ok.stdout.contains("TTL Timestamp + INTERVAL 30 DAY"))
    }

    /// A journal file cut short (a copy that stopped when the stick filled, an attachment cut
    /// at a ticket's size limit): sd-journal refuses it whole, as journalctl does, and the
    /// error said only `sd_journal_open_files: No data available`.
    @Test("a journal file shorter than its header says is said to be cut short, with both sizes")
    func journalCutShort() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let whole = try Data(contentsOf: relayJournal)
        let cut = dir.appendingPathComponent("relay.journal")
        try whole.prefix(whole.count / 2).write(to: cut)
        let log = dir.appendingPathComponent("device.txt")
        try Self.log.write(to: log, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--no-pager", "-q", cut.path, log.path])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("relay.journal: the file is cut short: its header says \(whole.count) bytes, it has \(whole.count / 2)"), "\(r.stderr)")
        #expect(!r.stderr.contains("No data available"))
        // (half of the sample is past its last object: every entry lies before the cut)
        #expect(r.stderr.contains("the entries before the cut were read (journalctl reads none of such a file); the header promised 117 entries, 117 were read"), "\(r.stderr)")
        #expect(r.stdout.contains("1 session"))
        let t = try castscope(["tail", "--file", cut.path, "--from-start"])
        #expect(t.stderr.contains("the file is cut short"), "\(t.stderr)")
    }

    /// A zip member written with a password (ZipCrypto, as `zip -P` and Windows write it) was
    /// `damaged archive member: Passphrase required for this entry` at byte 0: not damage.
    @Test("an encrypted zip member is said to be encrypted, not damaged; the others are read")
    func encryptedZipMember() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bytes = makeArchive(.zip, [("secret.txt", Array(Self.log.utf8))], passphrase: "pw")
        let zip = dir.appendingPathComponent("bundle.zip")
        try Data(bytes).write(to: zip)
        let log = dir.appendingPathComponent("device.txt")
        try Self.log.write(to: log, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--no-pager", "-q", zip.path, log.path])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("bundle.zip!secret.txt: encrypted member (the zip was made with a password): not read"), "\(r.stderr)")
        #expect(!r.stderr.contains("damaged"))
        #expect(r.stdout.contains("1 session"), "\(r.stdout)")
    }

    /// An `.ips` saved as UTF-16 (Notepad's "Unicode", PowerShell's `>`) was read as plain
    /// text: the JetsamEvent's kill lost (session 44's left item).
    @Test("an .ips report in UTF-16 (with or without a byte-order mark, or renamed) is read as a report")
    func utf16Report() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cases: [(String, Data)] = [
            ("le.ips", Data([0xFF, 0xFE]) + jetsamIPS.data(using: .utf16LittleEndian)!),
            ("be.ips", jetsamIPS.data(using: .utf16BigEndian)!),
            ("attachment.txt", Data([0xFF, 0xFE]) + jetsamIPS.data(using: .utf16LittleEndian)!),
        ]
        for (name, bytes) in cases {
            let path = dir.appendingPathComponent(name)
            try bytes.write(to: path)
            let r = try castscope(["analyze", "--json", path.path])
            let input = (r.json?["inputs"] as? [[String: Any]])?.first
            #expect(input?["format"] as? String == "ips (JetsamEvent, bug_type 298)", "\(name): \(input ?? [:]) \(r.stderr)")
            let s = try castscope(["show", path.path])
            #expect(s.stdout.contains("JetsamEvent: BroadcastExtension[2210] killed: per-process-limit"), "\(name): \(s.stdout)")
        }
    }

    /// The folder walk passes over FIFOs and devices, but a log archive's own reader opened its
    /// tracev3, timesync, uuidtext and dsc files by name: a FIFO there blocked `analyze` and
    /// `show` for ever, a link to `/dev/zero` as a timesync file was read without end.
    @Test("a FIFO or a device inside a .logarchive is named and passed over; the archive is read")
    func logArchiveFIFO() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tracev3 = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/reference/unified-logging/0000000000000f85.tracev3")
        let archive = dir.appendingPathComponent("system_logs.logarchive")
        for sub in ["Persist", "timesync"] {
            try FileManager.default.createDirectory(at: archive.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(at: tracev3, to: archive.appendingPathComponent("Persist/0000000000000f85.tracev3"))
        let odd = [
            ("timesync/0000000000000001.timesync", "mkfifo"),
            ("timesync/0000000000000001.timesync", "/dev/zero"),
            ("Persist/0000000000000002.tracev3", "mkfifo"),
        ]
        for (name, kind) in odd {
            let path = archive.appendingPathComponent(name).path
            if kind == "mkfifo" { #expect(mkfifo(path, 0o644) == 0) } else { try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: kind) }
            defer { try? FileManager.default.removeItem(atPath: path) }
            for command in ["analyze -q", "show"] {
                let r = try runShell("timeout 60 \"$0\" \(command) \"$1\"", [Self.binary, archive.path])
                #expect(r.status != 124, "\(name) (\(kind)), \(command): still blocked after 60 s")
                #expect(r.stderr.contains("\(name): not a regular file (a FIFO, a device or a socket): not read"), "\(command): \(r.stderr)")
                // (the tracev3 read: its records counted, none of them a screen-sharing line)
                if command == "analyze -q" { #expect(r.stderr.contains("8654 records"), "\(r.stderr)") }
            }
        }
    }

    /// A pager the shell cannot run (`PAGER=most` where it is not installed, a typo in
    /// `$CASTSCOPE_PAGER`) took the report with it: on the terminal only the shell's `not
    /// found`, exit 0.
    @Test("a pager that cannot be run: said, and the report is printed without it")
    func pagerNotFound() throws {
        for pager in ["/nonexistent/pager", "/etc/hostname"] {
            let shown = try onTerminal("'\(Self.binary)' analyze -q --color never samples/retry-storm", env: ["CASTSCOPE_PAGER": pager])
            #expect(shown.contains("castscope: 1 file, 74 recognized lines, 1 session (1 failed-to-connect)"), "\(pager): \(shown)")
            #expect(shown.contains("castscope: warning: the pager '\(pager)' could not be run"), "\(pager): \(shown)")
        }
        // A pager that runs is used as before (here `cat -n`, which numbers the report's lines).
        let paged = try onTerminal("'\(Self.binary)' analyze -q --color never samples/retry-storm", env: ["CASTSCOPE_PAGER": "cat -n"])
        #expect(paged.contains("     1\tcastscope: 1 file") && !paged.contains("castscope: warning"), "\(paged)")
    }

    /// `--match` with a field sd-journal refuses was an error for every journal file, the rest
    /// analyzed (exit 1); a filter that kept no entry said the journal "is empty".
    @Test("--match with a field sd-journal refuses is a usage error; a filter that keeps nothing says so")
    func journalMatches() throws {
        for m in ["a b=c", "message=x", "__CURSOR=x"] {
            let r = try castscope(["analyze", "--no-pager", "-q", "--match", m, relayJournal.path])
            #expect(r.status == 2 && r.stderr.contains("is not a field sd-journal matches"), "\(m): \(r.stderr)")
            #expect(!r.stderr.contains("sd_journal_add_match"))
        }
        let none = try castscope(["analyze", "--no-pager", "-q", "--match", "MESSAGE=", relayJournal.path])
        #expect(none.status == 4 && none.stderr.contains("no entry matches -u, -t or --match"), "\(none.stderr)")
        #expect(!none.stderr.contains("is empty"))
        let ok = try castscope(["analyze", "--no-pager", "-q", "--match", "SYSLOG_IDENTIFIER=broadcast-relay", "--match", "_PID=811", relayJournal.path])
        #expect(ok.status == 0 && ok.stdout.contains("117 recognized lines"), "\(ok.stdout) \(ok.stderr)")
    }

    static let binary = packageRoot.appendingPathComponent(".build/debug/castscope").path
}

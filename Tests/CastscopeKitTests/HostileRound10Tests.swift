import Foundation
import Testing

@testable import CastscopeKit

/// `count` short sessions one after another in `log show`'s layout, each its own pid, ten
/// seconds apart (from 2026-03-12 10:00:00 +01:00).
func shortSessionsLog(_ count: Int) -> String {
    var text = "Timestamp                       Thread     Type        Activity             PID    TTL  \n"
    let messages = ["broadcast started", "Open socket connection", "client stream open completed",
                    "video sample processed successfully", "video sample processed successfully"]
    for s in 0..<count {
        for (k, m) in messages.enumerated() {
            let t = s * 10 + k
            let stamp = String(format: "2026-03-12 %02d:%02d:%02d.000000+0100", 10 + t / 3600, t / 60 % 60, t % 60)
            text += "\(stamp) 0x2f1c4    Default     0x0                  \(1000 + s)    0    BroadcastExtension: \(m)\n"
        }
    }
    return text
}

@Suite("hostile round 10: closed standard descriptors, DST windows, member names, staged tables")
struct HostileRound10Tests {
    static let binary = packageRoot.appendingPathComponent(".build/debug/castscope").path

    /// `analyze --html r.html big.log >&-`: the first file opened took descriptor 1 (the page's
    /// temporary file) and the text report went into the page, exit 0; without `--html` into a
    /// spill file, lost without a word.
    @Test("a closed standard output is never another file: exit 5, the page whole")
    func closedStandardOutput() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("sessions.log")
        try Data(shortSessionsLog(500).utf8).write(to: log)
        let page = dir.appendingPathComponent("r.html")
        let r = try runShell("exec \"$0\" analyze --no-pager --html \"$1\" \"$2\" >&-", [Self.binary, page.path, log.path])
        #expect(r.status == 5, "\(r.stderr)")
        #expect(errorLines(r.stderr) == ["castscope: error: standard output: cannot write: Bad file descriptor"], "\(r.stderr)")
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(!html.contains("━━ S"), "the text report was written into the page")
        #expect(html.hasSuffix("</html>\n"))
        // The text report alone: it went into a spill, exit 0.
        let alone = try runShell("exec \"$0\" analyze --no-pager \"$1\" >&-", [Self.binary, log.path])
        #expect(alone.status == 5, "\(alone.stderr)")
        // A descriptor named that was closed is still not open; /dev/null is written as asked.
        let named = try runShell("exec \"$0\" analyze --no-pager -o /dev/null \"$1\" >&-", [Self.binary, log.path])
        #expect(named.status == 0, "\(named.stderr)")
    }

    /// castscope's own `--clickhouse file://` export in the bundle (attached beside the logs,
    /// or a folder holding an earlier export) was read as a `plain` log: its event rows made
    /// three sessions of their own, a socket-error among them.
    @Test("the rows of a file:// export in a bundle are castscope's, not a log: listed, not read")
    func ownTablesNotRead() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bundle = dir.appendingPathComponent("bundle")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        for name in ["retry-storm/log-stream-debug.txt", "stopped-10001/device-syslog.txt", "stopped-10001/host-app-xcode.txt"] {
            let from = packageRoot.appendingPathComponent("samples/" + name)
            try FileManager.default.copyItem(at: from, to: bundle.appendingPathComponent(from.lastPathComponent))
        }
        let tables = dir.appendingPathComponent("ch")
        let export = try castscope(["analyze", "--no-pager", "-q", "--clickhouse", "file://" + tables.path, bundle.path])
        #expect(export.status == 0, "\(export.stderr)")
        let alone = try #require(try castscope(["analyze", "--json", bundle.path]).json)
        let both = try castscope(["analyze", "--json", bundle.path, tables.path])
        let json = try #require(both.json, "\(both.stderr)")
        let sessions = { (j: [String: Any]) in (j["sessions"] as? [[String: Any]])?.count }
        #expect(sessions(json) == sessions(alone) && sessions(alone) == 2)
        let inputs = try #require(json["inputs"] as? [[String: Any]])
        let rows = inputs.filter { ($0["path"] as? String)?.contains("castscope_") == true }
        #expect(rows.count == 4)
        #expect(rows.allSatisfy { ($0["format"] == nil || $0["format"] is NSNull) && ($0["notes"] as? [String])?.contains(OwnReports.note) == true }, "\(rows)")
    }

    /// A FIFO named `*.json` in the definitions folder (or `$CASTSCOPE_PARSERS`, read by every
    /// command) blocked the run for ever on its open.
    @Test("a pipe or a device in the --parsers folder is named, not opened")
    func parsersFolderPipe() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(mkfifo(dir.appendingPathComponent("x.json").path, 0o644) == 0)
        let storm = packageRoot.appendingPathComponent("samples/retry-storm").path
        let r = try runShell("exec timeout -s KILL 20 \"$0\" analyze --no-pager -q --parsers \"$1\" \"$2\" < /dev/null", [Self.binary, dir.path, storm])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(errorLines(r.stderr) == ["castscope: error: \(dir.path)/x.json: not a regular file (a pipe, a device or a socket): not a definition"], "\(r.stderr)")
    }

    /// Two sessions on the night Europe/Berlin leaves summer time (2026-10-25): S1 at 01:00 +02:00,
    /// S2 at 09:15 +01:00, ten lines a second apart each.
    static let dstNight: String = {
        var text = "Timestamp                       Thread     Type        Activity             PID    TTL  \n"
        let messages = ["broadcast started", "Open socket connection", "client stream open completed"]
            + Array(repeating: "video sample processed successfully", count: 7)
        for (clock, offset, pid) in [("01:00", "+0200", 812), ("09:15", "+0100", 915)] {
            for (k, m) in messages.enumerated() {
                text += "2026-10-25 \(clock):0\(k).100000\(offset) 0x2f1c4    Default     0x0                  \(pid)    0    BroadcastExtension: \(m)\n"
            }
        }
        return text
    }()

    /// A time without a zone was read at one offset for the whole bundle (the phone's commonest;
    /// with `--timezone NAME` the first line's), though the report shows each line at the
    /// offset in force: across a DST change `-S` was an hour off.
    @Test("--since/--until without a zone across a DST change: the offset in force at that time",
          arguments: [false, true])
    func windowAcrossDST(held: Bool) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("log-show.txt")
        try Data(Self.dstNight.utf8).write(to: log)
        let registry = try ParserRegistry.builtin()
        func pids(since: String?, until: String? = nil, zone: String? = nil) throws -> [Int] {
            var options = AnalyzeOptions()
            options.now = 1_800_000_000_000_000
            options.sinceSpec = since.flatMap(TimeSpec.parse)
            options.untilSpec = until.flatMap(TimeSpec.parse)
            options.displayZone = zone.flatMap(DisplayZone.parse)
            let a = try Analyzer(registry: registry, options: options)
            var handed: [Int] = []
            a.onSession = { s, _ in handed.append(s.pid ?? -1) }
            if held { HeldEventsTests.held(parallel: false)(a) } else { a.holdsEventsAfter = 0 }
            let r = a.analyze([log.path])
            return (handed + r.sessions.map { $0.pid ?? -1 }).sorted()
        }
        // The report shows S1 at 01:00+02:00: 00:50 is before it, 01:00:05 inside it.
        #expect(try pids(since: "2026-10-25 00:50") == [812, 915])
        #expect(try pids(since: nil, until: "2026-10-25 01:00:05") == [812])
        #expect(try pids(since: "2026-10-25 09:20") == [])
        // --timezone Europe/Berlin: 09:20 is +01:00 that day, after S2's last line (09:15:09).
        #expect(try pids(since: "2026-10-25 09:20", zone: "Europe/Berlin") == [])
        #expect(try pids(since: "2026-10-25 09:10", zone: "Europe/Berlin") == [915])
        #expect(try pids(since: "2026-10-25 00:50", until: "2026-10-25 01:30", zone: "Europe/Berlin") == [812])
        // A zone given is taken as given.
        #expect(try pids(since: "2026-10-25 00:50+01:00") == [915])
    }

    /// A tar holding two members of one name (`tar -rf` appends a newer copy): both were named
    /// `dup.tar!device.log` everywhere, and the ClickHouse export gave them one input id and,
    /// line by line, one event id (FINAL kept one row of each pair: 74 events, one input).
    @Test("two archive members of one name are named apart: every id of the export its own")
    func membersOfOneName() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for (folder, sample) in [("a", "retry-storm/log-stream-debug.txt"), ("b", "stopped-10001/device-syslog.txt")] {
            let d = dir.appendingPathComponent(folder)
            try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("samples/" + sample), to: d.appendingPathComponent("device.log"))
        }
        let tar = dir.appendingPathComponent("dup.tar").path
        let made = try runShell("cd \"$0\"/a && tar cf \"$1\" device.log && cd ../b && tar rf \"$1\" device.log", [dir.path, tar])
        #expect(made.status == 0, "\(made.stderr)")
        let tables = dir.appendingPathComponent("ch")
        let r = try castscope(["analyze", "--json", "--clickhouse", "file://" + tables.path, tar])
        let json = try #require(r.json, "\(r.stderr)")
        let paths = (json["inputs"] as? [[String: Any]])?.compactMap { $0["path"] as? String }
        #expect(paths == [tar + "!device.log", tar + "!device (2).log"])
        #expect((json["sessions"] as? [[String: Any]])?.count == 2)
        func ids(_ table: String, _ column: String) throws -> (rows: Int, distinct: Int) {
            let text = try String(contentsOf: tables.appendingPathComponent(table + ".jsonl"), encoding: .utf8)
            let values = text.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?[column] as? String
            }
            return (values.count, Set(values).count)
        }
        let events = try ids("castscope_events", "RecordId")
        #expect(events.rows == 281 && events.distinct == 281)
        let inputs = try ids("castscope_inputs", "InputId")
        #expect(inputs.rows == 2 && inputs.distinct == 2)
        // A third copy, a name a member already has, a name that ends in `/`.
        var names: Set<String> = ["b.tar!logs/sys.log", "b.tar!logs/sys (2).log", "b.tar!x.tar.gz", "b.tar!d/"]
        #expect(BundleWalker.another("b.tar!logs/sys.log", names: &names) == "b.tar!logs/sys (3).log")
        #expect(BundleWalker.another("b.tar!x.tar.gz", names: &names) == "b.tar!x (2).tar.gz")
        #expect(BundleWalker.another("b.tar!d/", names: &names) == "b.tar!d/ (2)")
        #expect(BundleWalker.another("b.tar!syslog", names: &names) == "b.tar!syslog (2)")
    }

    /// SIGTERM (or Ctrl-C, SIGHUP) while `analyze --clickhouse file://DIR` wrote its tables: the
    /// report's temporary file went, the staged tables (`.TABLE.jsonl.castscope-partial`) stayed.
    @Test("a signal during a file:// export removes its staged tables")
    func stagedTablesOnSignal() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("sessions.log")
        try Data(shortSessionsLog(20_000).utf8).write(to: log)
        let tables = dir.appendingPathComponent("ch")
        // (spawned with no signal blocked: Foundation's Process hands its children the test
        // thread's mask, and a blocked SIGTERM only waited for the run to end)
        let args = [Self.binary, "analyze", "--no-pager", "-q", "--clickhouse", "file://" + tables.path, log.path]
        let (rc, child) = spawnWithDefaultSignals(Self.binary, args)
        #expect(rc == 0)
        let staged = tables.appendingPathComponent(".castscope_events.jsonl.castscope-partial").path
        var status: Int32 = 0
        var ended = false
        let deadline = Date().addingTimeInterval(120)
        while !FileManager.default.fileExists(atPath: staged) && Date() < deadline {
            if waitpid(child, &status, WNOHANG) == child {
                ended = true
                break
            }
            usleep(5_000)
        }
        #expect(!ended, "the export ended before its staged file was seen")
        kill(child, SIGTERM)
        if !ended { waitpid(child, &status, 0) }
        // (killed by SIGTERM: the staged tables went with it)
        #expect(status & 0x7F == SIGTERM, "status \(status)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: tables.path)) ?? []
        #expect(left.filter { $0.hasSuffix(".castscope-partial") } == [], "\(left)")
    }

    /// `show` of an empty folder exited 0 without a word and `show - < folder` 1, where analyze
    /// exits 4 ("nothing recognized"); tail named its standard input twice in an error.
    @Test("show with no record read exits 4 with one line; tail names standard input once")
    func nothingToShow() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = try runShell("exec \"$0\" show \"$1\" < /dev/null", [Self.binary, dir.path])
        #expect(empty.status == 4 && errorLines(empty.stderr) == ["castscope: error: nothing to show: no records in \(dir.path) (hidden files are skipped)"], "\(empty.stderr)")
        let folder = try runShell("exec \"$0\" show - < \"$1\"", [Self.binary, dir.path])
        #expect(folder.status == 4, "\(folder.stderr)")
        #expect(errorLines(folder.stderr).last == "castscope: error: nothing to show: no records in standard input (errors above)", "\(folder.stderr)")
        // Records all filtered out: shown nothing, as log show, exit 0.
        let storm = packageRoot.appendingPathComponent("samples/retry-storm").path
        let none = try runShell("exec \"$0\" show --grep no-such-text \"$1\" < /dev/null", [Self.binary, storm])
        #expect(none.status == 0 && errorLines(none.stderr).isEmpty, "\(none.stderr)")
        let tail = try runShell("exec timeout -s KILL 20 \"$0\" tail --no-journal - < \"$1\"", [Self.binary, dir.path])
        #expect(tail.status == 1 && errorLines(tail.stderr) == ["castscope: error: <stdin>: at byte 0: read failed: Is a directory"], "\(tail.stderr)")
    }

    /// tail's help listed -S/--since and -U/--until ("Only events at or after this time"), which
    /// tail refuses.
    @Test("tail's help lists no time window; -S still says why")
    func tailHelpHasNoWindow() throws {
        let help = try castscope(["tail", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--match") && help.stdout.contains("-u, --unit"))
        #expect(!help.stdout.contains("--since") && !help.stdout.contains("--until"), "\(help.stdout)")
        let s = try castscope(["tail", "--no-journal", "-S", "today", "-"], stdin: Data())
        #expect(s.status == 2 && s.stderr.contains("--since/--until are for analyze"), "\(s.stderr)")
        let analyze = try castscope(["analyze", "--help"])
        #expect(analyze.stdout.contains("-S, --since") && analyze.stdout.contains("-U, --until") && analyze.stdout.contains("--match"))
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// Debian's clickhouse-server (18.16), installed by `make deps`.
let clickHouseServerBinary = ["/usr/bin/clickhouse-server", "/usr/sbin/clickhouse-server"]
    .first { FileManager.default.isExecutableFile(atPath: $0) }

/// A port nothing listens on right now (bound to 0, read back, closed).
func freeLoopbackPort() -> Int {
    let (fd, port) = boundLoopbackSocket()
    close(fd)
    return port
}

/// Starts `binary` with `args` (its first is the program's name) with every signal at its
/// default and none blocked (Foundation's Process hands its children the test thread's mask:
/// a blocked SIGTERM only waited for the run to end), standard streams on /dev/null. Returns
/// posix_spawn's result and the child's pid.
func spawnWithDefaultSignals(_ binary: String, _ args: [String]) -> (rc: Int32, pid: pid_t) {
    var attr = posix_spawnattr_t()
    posix_spawnattr_init(&attr)
    defer { posix_spawnattr_destroy(&attr) }
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attr, &none)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigdefault(&attr, &all)
    posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
    var cargs = args.map { strdup($0) } + [nil]
    defer { for a in cargs { free(a) } }
    var child: pid_t = 0
    let rc = posix_spawn(&child, binary, &actions, &attr, &cargs, environ)
    return (rc, child)
}

/// A TCP socket bound to a free port of 127.0.0.1 (its descriptor and the port), not listening.
func boundLoopbackSocket() -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    addr.sin_port = 0
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
    _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
    return (fd, Int(UInt16(bigEndian: addr.sin_port)))
}

/// A real clickhouse-server on 127.0.0.1 with its own config and data directory, started and
/// stopped by the test (by its own pid).
final class ClickHouseTestServer {
    let dir: URL
    let httpPort = freeLoopbackPort()
    let tcpPort = freeLoopbackPort()
    /// The server's pid (spawned directly: Foundation's Process hands its children the test
    /// thread's blocked signal mask, so the server would never see SIGTERM, and its child
    /// monitor blocks in waitpid on a long-running child).
    private var pid: pid_t?

    init(scratch: URL, name: String) throws {
        dir = scratch.appendingPathComponent(name)
        for sub in ["data", "tmp", "log"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(atPath: "/etc/clickhouse-server/users.xml", toPath: dir.appendingPathComponent("users.xml").path)
    }

    var url: String { "http://127.0.0.1:\(httpPort)/" }

    /// Writes the config (with a cluster of `shards`' TCP ports when given) and starts it.
    func start(cluster shards: [Int] = []) throws {
        let d = dir.path
        var remote = ""
        if !shards.isEmpty {
            remote = "<remote_servers><castscope_test>"
                + shards.map { "<shard><replica><host>127.0.0.1</host><port>\($0)</port></replica></shard>" }.joined()
                + "</castscope_test></remote_servers>"
        }
        let config = """
            <?xml version="1.0"?>
            <yandex>
              <logger><level>warning</level><log>\(d)/log/s.log</log><errorlog>\(d)/log/e.log</errorlog></logger>
              <http_port>\(httpPort)</http_port><tcp_port>\(tcpPort)</tcp_port><listen_host>127.0.0.1</listen_host>
              <path>\(d)/data/</path><tmp_path>\(d)/tmp/</tmp_path>
              <users_config>\(d)/users.xml</users_config>
              <default_profile>default</default_profile><default_database>default</default_database>
              <mark_cache_size>536870912</mark_cache_size>
              \(remote)
            </yandex>
            """
        try config.write(to: dir.appendingPathComponent("config.xml"), atomically: true, encoding: .utf8)
        try restart()
    }

    /// Starts it again with the same config, data and ports.
    func restart() throws {
        let binary = try #require(clickHouseServerBinary)
        let args = [binary, "--config-file=" + dir.appendingPathComponent("config.xml").path]
        let (rc, child) = spawnWithDefaultSignals(binary, args)
        guard rc == 0 else { throw ClickHouseError(description: "posix_spawn \(binary): \(rc)", retryable: false) }
        pid = child
        let end = Date().addingTimeInterval(30)
        while Date() < end {
            if (try? query("SELECT 1")) == "1\n" { return }
            if !isRunning { break }
            usleep(100_000)
        }
        stop()
        let log = (try? String(contentsOf: dir.appendingPathComponent("log/e.log"), encoding: .utf8)) ?? ""
        throw ClickHouseError(description: "clickhouse-server did not come up on \(httpPort): \(log.suffix(800))", retryable: false)
    }

    private var exited = false

    /// Reaps the child when it has exited.
    var isRunning: Bool {
        guard let pid, !exited else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exited = true }
        return !exited
    }

    func stop() {
        guard let p = pid else { return }
        if isRunning { kill(p, SIGTERM) }
        let end = Date().addingTimeInterval(15)
        while isRunning && Date() < end { usleep(50_000) }
        if isRunning {
            kill(p, SIGKILL)
            var status: Int32 = 0
            waitpid(p, &status, 0)
        }
        pid = nil
        exited = false
    }

    @discardableResult
    func query(_ sql: String) throws -> String {
        try ClickHouseClient(endpoint: try ClickHouseEndpoint(url: url)).execute(sql)
    }

    func number(_ sql: String) throws -> Int { Int(try query(sql).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 }

    deinit { stop() }
}

/// `castscope tail --clickhouse` on a journal directory, stderr kept in a file.
final class ClickHouseTail {
    let process = Process()
    let errURL: URL

    /// `appendingTo`: standard output appended to that file (as `>> file`), else discarded.
    init(directory: URL, cursor: URL, url: String, scratch: URL, extra: [String] = [], appendingTo output: URL? = nil) throws {
        process.executableURL = packageRoot.appendingPathComponent(".build/debug/castscope")
        process.arguments = ["tail", "--directory", directory.path, "--cursor-file", cursor.path, "--json", "--clickhouse", url] + extra
        errURL = scratch.appendingPathComponent("tail-\(UUID().uuidString).err")
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errURL)
        if let output {
            if !FileManager.default.fileExists(atPath: output.path) { FileManager.default.createFile(atPath: output.path, contents: nil) }
            let h = try FileHandle(forWritingTo: output)
            h.seekToEndOfFile()
            process.standardOutput = h
        } else {
            process.standardOutput = FileHandle.nullDevice
        }
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    func wait(_ seconds: Double, until condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }

    func stop(_ signal: Int32 = SIGTERM) {
        if process.isRunning { kill(process.processIdentifier, signal) }
        _ = wait(10) { !process.isRunning }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

extension ClickHouseTestServer {
    /// One server, started, with castscope's tables (the DDL applied by the CLI).
    static func withSchema(scratch: URL) throws -> ClickHouseTestServer {
        let server = try ClickHouseTestServer(scratch: scratch, name: "server")
        do { try server.start() } catch {
            server.stop()
            throw error
        }
        let ddl = try castscope(["clickhouse", "schema", "--apply", server.url])
        #expect(ddl.status == 0, "\(ddl.stderr)")
        return server
    }
}

@Suite("ClickHouse: real clickhouse-server processes on 127.0.0.1", .serialized,
       .enabled(if: clickHouseServerBinary != nil, "needs clickhouse-server (make deps installs it)"))
struct ClickHouseTests {
    @Test("samples into a two-shard cluster: one logical row per session/event/finding/input, twice analyzed, and every fleet query's numbers")
    func samplesIntoTwoShards() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = try ClickHouseTestServer(scratch: dir, name: "shard1")
        let b = try ClickHouseTestServer(scratch: dir, name: "shard2")
        defer { a.stop(); b.stop() }
        try a.start(cluster: [a.tcpPort, b.tcpPort])
        try b.start(cluster: [a.tcpPort, b.tcpPort])

        let ddl = try castscope(["clickhouse", "schema", "--cluster", "castscope_test", "--no-on-cluster", "--apply", a.url, "--apply", b.url])
        #expect(ddl.status == 0, "\(ddl.stderr)")
        let report = try #require(try castscope(["analyze", "--json", "samples/"]).json)
        let summary = try #require(report["summary"] as? [String: Any])
        let relays = try #require(report["relaySessions"] as? [[String: Any]])
        let expected = [
            "castscope_sessions": (summary["sessions"] as! Int) + relays.filter { $0["deviceSession"] is NSNull }.count,
            "castscope_events": summary["events"] as! Int,
            "castscope_findings": (report["findings"] as! [Any]).count,
            "castscope_inputs": (report["inputs"] as! [Any]).count,
        ]
        for round in 1...2 {
            let r = try castscope(["analyze", "samples/", "--clickhouse", a.url])
            #expect(r.status == 0, "round \(round): \(r.stderr)")
            for (table, n) in expected {
                #expect(try a.number("SELECT count() FROM \(table) FINAL") == n, "\(table) after analysis \(round)")
                // Written twice, kept once: the raw rows are there `round` times.
                #expect(try a.number("SELECT count() FROM \(table)") == n * round, "\(table) raw rows after analysis \(round)")
            }
        }
        // Sharded by session: every row is on the shard its key names (hash % 2: a is the
        // first shard, b the second). Whether both shards get rows depends on the ids, which
        // depend on the bundle's digest (the generated relay journal differs per build): not
        // checked, as 7 sessions all hash to one shard one time in 64.
        for (index, server) in [a, b].enumerated() {
            #expect(try server.number("SELECT count() FROM castscope_sessions_local WHERE cityHash64(SessionId) % 2 != \(index)") == 0)
            #expect(try server.number("SELECT count() FROM castscope_events_local WHERE cityHash64(if(SessionId = '', RecordId, SessionId)) % 2 != \(index)") == 0)
        }
        #expect(try a.number("SELECT count() FROM castscope_sessions_local") + b.number("SELECT count() FROM castscope_sessions_local")
                == expected["castscope_sessions"]! * 2)
        // Every query of `castscope clickhouse queries` against numbers computed from the report.
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        check.arguments = ["python3", "scripts/clickhouse-check.py", "--no-chdb", "--server", a.url]
        check.currentDirectoryURL = packageRoot
        let out = Pipe()
        check.standardOutput = out
        check.standardError = out
        try check.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        check.waitUntilExit()
        #expect(check.terminationStatus == 0, "\(text)")
        #expect(text.contains("session-funnel: 4 rows  ok"), "\(text)")

        // ClickHouse gone: analyze says which tables were not written, and exits 5 (an output not written).
        a.stop()
        b.stop()
        let down = try castscope(["analyze", "samples/healthy-jitsi", "--clickhouse", a.url, "--clickhouse-retries", "2"])
        #expect(down.status == 5)
        #expect(down.stderr.contains("tables not (completely) written: castscope_sessions, castscope_events, castscope_inputs"), "\(down.stderr)")
    }

    @Test("analyze --clickhouse of a big log, its sessions handed on while it is read: the rows of a whole read, nothing twice; a read that gives up half-way and starts over sends nothing of its first go")
    func readAsItGoesIntoServer() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ClickHouseTestServer.withSchema(scratch: dir)
        defer { server.stop() }
        // Over 32 MB: three ranges of 16 MB at most, so that the third meets lines of the first
        // two already fed.
        let dense = try denseBenchLog(megabytes: 34, in: dir)
        // A line from the file's start copied to its end: earlier than lines already fed, so
        // the analyzer gives up after handing on hundreds of sessions, and reads again.
        let late = dir.appendingPathComponent("late.log")
        var text = try String(contentsOf: dense, encoding: .utf8)
        text += text.split(separator: "\n").first { $0.contains("[SBCBroadcast]") }! + "\n"
        try text.write(to: late, atomically: true, encoding: .utf8)
        // A relay daemon's line at its end: given up too, and read again for the relay join
        // (the sessions are kept, and the whole report exported).
        let relay = dir.appendingPathComponent("relay.log")
        let dense34 = try String(contentsOf: dense, encoding: .utf8)
        try (dense34 + "2026-03-12 12:00:00.000000+0100 0x3fb13    Default     0x0                  811    0    broadcast-relay: "
            + "session 0b7f3c1e-5d2a-4e8b-9c61-7a2e4f9d1b03 accepted peer=iPhone14,2 room=standup\n").write(to: relay, atomically: true, encoding: .utf8)
        let tables = ["castscope_sessions", "castscope_events", "castscope_findings", "castscope_inputs"]
        // A first analysis, so that what the server adds once (one row the first time) is not counted below.
        #expect(try castscope(["analyze", "samples/healthy-jitsi", "--clickhouse", server.url]).status == 0)
        for (input, gaveUp) in [(dense, ""), (late, "a line earlier"), (relay, "relay lines")] {
            for t in tables { _ = try server.query("TRUNCATE TABLE \(t)") }
            // The rows of the whole read (one thread), as files.
            let files = dir.appendingPathComponent("rows-" + input.lastPathComponent)
            let whole = try castscope(["analyze", "--threads", "1", "--clickhouse", "file://" + files.path, input.path])
            #expect(whole.status == 0, "\(whole.stderr)")
            // Rows the server took, counted by the server (merges cannot hide a row sent twice).
            let inserted = "SELECT value FROM system.events WHERE event = 'InsertedRows'"
            let before = try server.number(inserted)
            let r = try castscope(["analyze", "--threads", "2", "--clickhouse", server.url, input.path], env: ["CASTSCOPE_STAGES": "1"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.contains("given up: " + gaveUp) == !gaveUp.isEmpty, "\(r.stderr)")
            // Read as it went: no whole-bundle steps (unless it started over).
            #expect(r.stderr.contains("times, zone, dedupe") == !gaveUp.isEmpty, "\(r.stderr)")
            var all = 0
            for t in tables {
                let lines = try String(contentsOf: files.appendingPathComponent(t + ".jsonl"), encoding: .utf8)
                    .split(separator: "\n").count
                all += lines
                // Raw rows, not FINAL: none left from the first go.
                #expect(try server.number("SELECT count() FROM \(t)") == lines, "\(input.lastPathComponent): \(t)")
            }
            // Each sent once.
            let took = try server.number(inserted) - before
            #expect(took == all, "\(input.lastPathComponent): \(took) rows inserted, \(all) made")
            #expect(try server.number("SELECT count() FROM castscope_sessions") > 300, "hundreds of sessions")
            let ids = try String(contentsOf: files.appendingPathComponent("castscope_sessions.jsonl"), encoding: .utf8)
                .split(separator: "\n").compactMap { line -> String? in
                    guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
                    return o["SessionId"] as? String
                }.sorted()
            let stored = try server.query("SELECT SessionId FROM castscope_sessions ORDER BY SessionId").split(separator: "\n").map(String.init)
            #expect(stored == ids, "\(input.lastPathComponent): the same sessions")
        }
    }

    @Test("tail --clickhouse writes the findings it prints into castscope_findings, keyed by session, rule, time and message: a second tail of the same stream replaces them")
    func tailFindings() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ClickHouseTestServer.withSchema(scratch: dir)
        defer { server.stop() }
        let stream = try Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"))
        var printed: [String] = []
        for round in 1...2 {
            let r = try castscope(["tail", "--no-journal", "--json", "--clickhouse", server.url, "-"], stdin: stream)
            #expect(r.status == 0, "round \(round): \(r.stderr)")
            let kinds = r.stdout.split(separator: "\n").compactMap { line -> String? in
                guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      o["type"] as? String == "finding" else { return nil }
                return o["kind"] as? String
            }
            if round == 1 { printed = kinds.sorted() } else { #expect(kinds.sorted() == printed) }
            #expect(try server.number("SELECT count() FROM castscope_findings") == printed.count * round)
        }
        #expect(!printed.isEmpty)
        let stored = try server.query("SELECT Kind FROM castscope_findings FINAL ORDER BY Kind")
        #expect(stored.split(separator: "\n").map(String.init) == printed)
        // Each finding names a session tail wrote.
        #expect(try server.number("SELECT count() FROM castscope_findings FINAL WHERE SessionId NOT IN (SELECT SessionId FROM castscope_sessions)") == 0)
    }

    @Test("tail --clickhouse: killed with SIGKILL mid-stream and restarted, then the server stopped and started: every relay entry exactly once",
          .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote), "needs systemd-journal-remote"))
    func tailKilledAndServerOutage() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ClickHouseTestServer.withSchema(scratch: dir)
        defer { server.stop() }
        let journals = dir.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journals, withIntermediateDirectories: true)
        let cursor = dir.appendingPathComponent("cursor")
        let writer = try JournalFeeder(output: journals.appendingPathComponent("live.journal"),
                                       session: "5b0c9e1a-7d3f-4c2e-8a61-0f2e3d4c5b6a", hostname: "relay-ch")
        defer { try? writer.finish() }
        let stats = "SELECT uniqExact(RecordId) FROM castscope_events FINAL WHERE EventName = 'relay.stats'"

        // A stream in bursts; SIGKILL while it flows.
        let tail1 = try ClickHouseTail(directory: journals, cursor: cursor, url: server.url, scratch: dir, extra: ["--from-start"])
        writer.accept()
        for k in 0..<5 {
            writer.write(k * 30..<(k + 1) * 30)
            usleep(30_000)
        }
        #expect(tail1.wait(15) { (try? server.number(stats)) ?? 0 >= 60 }, "\(tail1.stderr)")
        tail1.stop(SIGKILL)
        // The stream goes on while no tail runs.
        writer.write(150..<300)

        // --from-start as well: it applies only when no cursor was saved yet (the kill may come
        // between the first acknowledged insert and the first saved cursor).
        let tail2 = try ClickHouseTail(directory: journals, cursor: cursor, url: server.url, scratch: dir, extra: ["--from-start"])
        defer { tail2.stop() }
        writer.write(300..<400)
        #expect(tail2.wait(15) { (try? server.number(stats)) ?? 0 == 400 }, "\(tail2.stderr)")

        // The server stops while tail runs: tail holds the rows, retries, says so, and catches up.
        server.stop()
        writer.write(400..<500)
        #expect(tail2.wait(15) { tail2.stderr.contains("ClickHouse is not taking rows") }, "\(tail2.stderr)")
        try server.restart()
        #expect(tail2.wait(20) { tail2.stderr.contains("ClickHouse is taking rows again") }, "\(tail2.stderr)")
        writer.write(500..<550)
        #expect(tail2.wait(15) { (try? server.number(stats)) ?? 0 == 550 }, "\(tail2.stderr)")
        tail2.stop()
        #expect(tail2.process.terminationStatus == 0, "\(tail2.stderr)")

        // Exactly once: 550 entries, each frame count once, as logical rows.
        let bodies = try server.query("SELECT Body FROM castscope_events FINAL WHERE EventName = 'relay.stats'")
        let seqs = bodies.split(separator: "\n").compactMap { line -> Int? in
            guard let r = line.range(of: "frames=") else { return nil }
            return Int(line[r.upperBound...].prefix(while: \.isNumber))
        }
        #expect(seqs.count == 550)
        let missing = Set(0..<550).subtracting(seqs).sorted()
        #expect(missing.isEmpty, "missing: \(missing.prefix(20))")
        // The relay session's row: one logical row, replaced as it changed.
        #expect(try server.number("SELECT count() FROM castscope_sessions FINAL WHERE ReportId = '\(writer.session)'") == 1)
    }

    @Test("tail --clickhouse with its output appended to a file, stopped while the server is down: the restart sends the batch the output shows (its growth does not mean ClickHouse took the rows)",
          .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote), "needs systemd-journal-remote"))
    func tailStoppedDuringOutageWithOutputAppended() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ClickHouseTestServer.withSchema(scratch: dir)
        defer { server.stop() }
        let journals = dir.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journals, withIntermediateDirectories: true)
        let cursor = dir.appendingPathComponent("cursor")
        let output = dir.appendingPathComponent("tail.out")
        let writer = try JournalFeeder(output: journals.appendingPathComponent("live.journal"),
                                       session: "6c1d0f2b-8e4a-4d3f-9b72-1a3f4e5d6c7b", hostname: "relay-ch2")
        defer { try? writer.finish() }
        writer.accept()
        writer.write(0..<40)
        server.stop()
        let tail1 = try ClickHouseTail(directory: journals, cursor: cursor, url: server.url, scratch: dir, extra: ["--from-start"],
                                       appendingTo: output)
        #expect(tail1.wait(15) { tail1.stderr.contains("ClickHouse is not taking rows") }, "\(tail1.stderr)")
        tail1.stop()
        #expect(tail1.stderr.contains("the cursor was not advanced"), "\(tail1.stderr)")
        let printed = (try? Data(contentsOf: output).count) ?? 0
        #expect(printed > 0, "the entries were printed while ClickHouse was down")

        try server.restart()
        // (--from-start again: no cursor was committed yet, only the batch pending)
        let tail2 = try ClickHouseTail(directory: journals, cursor: cursor, url: server.url, scratch: dir, extra: ["--from-start"],
                                       appendingTo: output)
        defer { tail2.stop() }
        let stats = "SELECT uniqExact(RecordId) FROM castscope_events FINAL WHERE EventName = 'relay.stats'"
        #expect(tail2.wait(20) { (try? server.number(stats)) ?? 0 == 40 }, "\(tail2.stderr)")
        tail2.stop()
        #expect(tail2.process.terminationStatus == 0, "\(tail2.stderr)")
    }
}

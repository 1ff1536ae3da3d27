import ArgumentParser
import CastscopeKit

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `--clickhouse URL` for `analyze` and `tail`.
struct ClickHouseOptions: ParsableArguments {
    @Option(name: .customLong("clickhouse"), help: ArgumentHelp(
        "Also write sessions, events, findings and inputs to ClickHouse: http://[user[:password]@]host[:port]/?database=db (user/password also from CLICKHOUSE_USER/CLICKHOUSE_PASSWORD), or file:///dir for JSONEachRow files. See `castscope clickhouse schema`.",
        valueName: "url"))
    var url: String?

    @Option(name: .customLong("clickhouse-retries"), help: ArgumentHelp(
        "analyze: attempts per insert before a table counts as not written (backoff 0.2 s, doubling to 5 s). tail retries until ClickHouse is back.",
        valueName: "n"))
    var retries = 6

    @Option(name: .customLong("clickhouse-timeout"), help: ArgumentHelp(
        "Seconds a connect, send or answer from ClickHouse may take before the attempt counts as failed (and is retried).",
        valueName: "seconds"))
    var timeout = 60

    func validate() throws {
        if timeout < 1 { throw ValidationError("--clickhouse-timeout must be at least 1 second, got \(timeout)") }
    }

    func target() -> ClickHouseTarget? {
        guard let url else { return nil }
        do {
            let target = try ClickHouseTarget.parse(url)
            guard case .server(var client) = target else { return target }
            client.timeoutSeconds = timeout
            return .server(client)
        } catch {
            printError("\(error)")
            Glibc.exit(2)
        }
    }

    /// Why `file:///dir` must not be written with these inputs (its table files are appended
    /// to: one of them an input, or the folder inside an input folder), or nil.
    /// A table file there that castscope did not write (its rows name their `BundleId`) is
    /// not replaced without `force`, as `-o` does not replace one.
    func refusal(inputs: [String], force: Bool = false) -> String? {
        guard case .directory(let dir)? = target() else { return nil }
        for path in [dir] + ClickHouseSchema.tables.map({ dir + "/" + $0 + ".jsonl" }) {
            if let why = OutputWriter.inputConflict(path, option: "--clickhouse", inputs: inputs, example: "choose another folder") {
                return why
            }
        }
        for path in ClickHouseSchema.tables.map({ dir + "/" + $0 + ".jsonl" }) where !force {
            guard let f = fopen(path, "rb") else { continue }
            defer { fclose(f) }
            var head = [UInt8](repeating: 0, count: 4096)
            let n = fread(&head, 1, head.count, f)
            guard n > 0 else { continue }
            let firstLine = head[0..<n].prefix { $0 != 0x0A }
            let ours = firstLine.first == UInt8(ascii: "{") && firstLine.withUnsafeBytes { findBytes($0, Array("\"BundleId\":".utf8), from: 0) != nil }
            if !ours { return "--clickhouse \(path) exists and was not written by castscope: pass --force to replace it" }
        }
        return nil
    }

    /// Why a `file://` table and another output (`(option, path)`; `-` for standard output)
    /// are one file, or nil: both were written there, the rows last (`-o ch/castscope_sessions.jsonl`
    /// lost the report; a cursor file renamed over the events table replaced its rows).
    func sharedFile(_ outputs: [(option: String, path: String)]) -> String? {
        guard case .directory(let dir)? = target() else { return nil }
        for table in ClickHouseSchema.tables {
            let path = dir + "/" + table + ".jsonl"
            for (option, other) in outputs {
                let same = other == "-" ? OutputWriter.standardStream(path) == 1 : OutputWriter.sameFile(path, other)
                if same {
                    let what = other == "-" ? "standard output (\(option)) is redirected to" : "\(option) \(other) is"
                    return "\(what) the --clickhouse table \(path): give each output its own file"
                }
            }
        }
        return nil
    }

    /// The tail's sink, named for this machine (its rows' BundleId is a digest of the host name).
    func live(stop: @escaping @Sendable () -> Bool) -> ClickHouseLive? {
        guard let target = target() else { return nil }
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, 255)
        return ClickHouseLive(target: target, streamId: String(cString: name), shouldStop: stop)
    }
}

/// Exit code when ClickHouse did not acknowledge every row: an output that could not be
/// written (documented in the README).
let clickHouseExitCode: Int32 = Exit.writeFailed

enum ClickHouseAnalyzeExport {
    /// Writes the report; on failure names the tables not written and returns false.
    /// The inputs' content digest, computed on another thread while `analyze` reads them
    /// (files only; standard input's part needs the report).
    static func startDigest(_ options: ClickHouseOptions, paths: [String]) -> Worker<String>? {
        guard options.url != nil, !paths.contains("-") else { return nil }
        return Worker { BundleDigest.of(paths: paths, fallback: { "" }) }
    }

    static func export(_ options: ClickHouseOptions, _ target: ClickHouseTarget) -> ClickHouseExport {
        var export = ClickHouseExport(target: target)
        export.retry = RetryPolicy(attempts: max(1, options.retries))
        // (the server's answer is shown escaped: a broken proxy's bytes reached the terminal raw)
        export.onRetry = { fputs("castscope: clickhouse: \(Sanitize.line($0))\n", stderr) }
        return export
    }

    /// For sessions handed on as they end: rows made and sent as each session comes (nil
    /// without `--clickhouse`, or when the bundle id needs the report: standard input).
    /// `holds`: the analysis may still start over (the export then keeps its batches to the end).
    static func stream(_ options: ClickHouseOptions, digest: Worker<String>?) -> ((_ holds: Bool) -> ClickHouseStreamExport)? {
        guard let target = options.target(), let digest else { return nil }
        return { holds in
            ClickHouseStreamExport(export(options, target), bundleIdIfKnown: digest.poll, waitForBundleId: digest.join, holds: holds)
        }
    }

    static func run(_ options: ClickHouseOptions, report: AnalysisReport, paths: [String], digest: Worker<String>? = nil,
                    streamed: ClickHouseStreamExport? = nil) -> Bool
    {
        guard let target = options.target() else { return true }
        let result: ClickHouseExport.Result
        if let streamed {
            result = streamed.finish(report)
        } else {
            let bundleId = digest?.join() ?? BundleDigest.of(paths: paths) {
                var d = Digest128()
                for s in report.sessions { d.updateLines(of: s) }
                for e in report.unattached { d.update(e.source.description); d.update(e.message) }
                return d.hex()
            }
            Stages.mark("clickhouse: bundle digest")
            result = export(options, target).write(report, bundleId: bundleId)
        }
        if result.failed.isEmpty { return true }
        for (table, error) in result.failed { printError("clickhouse: \(table) not written: \(error)") }
        fputs("castscope: error: clickhouse: tables not (completely) written: \(result.failed.map(\.table).joined(separator: ", ")); analyzing again writes them (rows are replaced, not added)\n", stderr)
        return false
    }
}

struct ClickHouseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clickhouse",
        abstract: "The ClickHouse tables castscope writes (--clickhouse) and fleet queries over them.",
        subcommands: [Schema.self, Queries.self])

    struct Schema: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "schema",
            abstract: "Print the DDL (ReplacingMergeTree tables; with --cluster, local tables plus Distributed tables).")

        @Option(name: .long, help: ArgumentHelp("A cluster from the servers' remote_servers: <table>_local ON CLUSTER and Distributed <table>, sharded by session.", valueName: "name"))
        var cluster: String?

        @Option(name: .long, help: ArgumentHelp("Qualify the tables with this database.", valueName: "db"))
        var database: String?

        @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Add a TTL of this many days (ClickHouse 19.6 or later).", valueName: "days"))
        var ttlDays: Int?

        @Flag(name: .long, help: "Without ON CLUSTER (a cluster without distributed DDL/Keeper): run the DDL on every server.")
        var noOnCluster = false

        @Option(name: .long, help: ArgumentHelp("Run the DDL on these servers (http://…, repeatable) instead of printing it.", valueName: "url"))
        var apply: [String] = []

        func validate() throws {
            // A TTL of 0 days deletes every row as it is inserted; one past DateTime's end wraps.
            if let ttlDays, !(1...ClickHouseSchema.maxTTLDays).contains(ttlDays) {
                throw ValidationError("--ttl-days must be 1 to \(ClickHouseSchema.maxTTLDays) (ClickHouse's DateTime ends in 2106; 0 would delete every row as it is inserted), got \(ttlDays)")
            }
            for (option, value) in [("--cluster", cluster), ("--database", database)] where value?.isEmpty == true {
                throw ValidationError("\(option) is empty")
            }
        }

        func run() throws {
            let ddl = ClickHouseSchema.ddl(cluster: cluster, database: database, ttlDays: ttlDays, onCluster: !noOnCluster)
            if apply.isEmpty { print(ddl, terminator: ""); return }
            for url in apply {
            let client: ClickHouseClient
            do { client = ClickHouseClient(endpoint: try ClickHouseEndpoint(url: url)) } catch {
                printError("\(error)")
                Glibc.exit(2)
            }
            for statement in ClickHouseSchema.statements(ddl) {
                do {
                    try RetryPolicy(attempts: 6).run { try client.execute(statement) }
                } catch {
                    printError("clickhouse: \(error)")
                    Glibc.exit(clickHouseExitCode)
                }
            }
            }
        }
    }

    struct Queries: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "queries",
            abstract: "Print the fleet queries (failure rate by SDK and day, time to connect, top findings, session funnel, relay hosts).")

        @Option(name: .customLong("run"), help: ArgumentHelp("Run them on this server (http://…) and print the results (TSV with names).", valueName: "url"))
        var server: String?

        func run() throws {
            guard let url = server else { print(ClickHouseSchema.queriesText(), terminator: ""); return }
            let client: ClickHouseClient
            do { client = ClickHouseClient(endpoint: try ClickHouseEndpoint(url: url)) } catch {
                printError("\(error)")
                Glibc.exit(2)
            }
            for q in ClickHouseSchema.queries {
                do {
                    let out = try client.execute(q.sql + "\nFORMAT TabSeparatedWithNames")
                    print("-- \(q.name)")
                    print(out, terminator: out.hasSuffix("\n") ? "" : "\n")
                } catch {
                    printError("clickhouse: \(q.name): \(error)")
                    Glibc.exit(clickHouseExitCode)
                }
            }
        }
    }
}

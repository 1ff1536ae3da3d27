import ArgumentParser
import CastscopeKit

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct Castscope: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "castscope",
        abstract: "Reconstructs iOS screen-sharing (Broadcast Upload Extension) sessions from log bundles.",
        discussion: """
            Exit codes: 0 analyzed; 1 analyzed, but some input could not be read (named on \
            stderr); 2 usage error; 3 a finding at or above --fail-on.
            """,
        version: "0.1.0",
        subcommands: [Analyze.self, Tail.self, Parsers.self]
    )

    /// ArgumentParser exits 64 on usage errors; castscope promises 2.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                fputs(fullMessage(for: error) + "\n", stderr)
                Glibc.exit(2)
            }
            exit(withError: error)
        }
    }
}

/// Options every command that reads definitions shares.
struct ParserOptions: ParsableArguments {
    @Option(name: .customLong("parsers"), help: ArgumentHelp(
        "A directory of extra or overriding format and vocabulary definitions (*.json); also $CASTSCOPE_PARSERS.",
        valueName: "dir"))
    var directory: String?

    func registry() throws -> ParserRegistry {
        var r = try ParserRegistry.builtin()
        if let dir = directory ?? ProcessInfoLite.environment("CASTSCOPE_PARSERS") {
            try r.load(directory: dir)
        }
        return r
    }

    /// The registry, or a one-line error and exit 2 (a broken definition is a usage error).
    func registryOrExit() -> ParserRegistry {
        do { return try registry() } catch {
            fputs("castscope: error: \(error)\n", stderr)
            Glibc.exit(2)
        }
    }
}

enum ProcessInfoLite {
    static func environment(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }
}

/// journalctl's filters, for journal sources (journal files, export and JSON text).
struct JournalOptions: ParsableArguments {
    @Option(name: [.customShort("u"), .long], help: ArgumentHelp("Only this systemd unit's entries (journal sources).", valueName: "unit"))
    var unit: [String] = []

    @Option(name: [.customShort("t"), .long], help: ArgumentHelp("Only entries with this SYSLOG_IDENTIFIER (journal sources).", valueName: "id"))
    var identifier: [String] = []

    @Option(name: .customLong("match"), help: ArgumentHelp("A journal field match FIELD=value (repeatable; same field ORed, different fields ANDed), e.g. RELAY_SESSION=….", valueName: "FIELD=value"))
    var matches: [String] = []

    @Option(name: [.customShort("S"), .long], help: ArgumentHelp("Only events at or after this time: YYYY-MM-DD[ HH:MM[:SS[.ffffff]]][±HH:MM|Z] (UTC when no zone).", valueName: "time"))
    var since: String?

    @Option(name: [.customShort("U"), .long], help: ArgumentHelp("Only events at or before this time (same forms as --since).", valueName: "time"))
    var until: String?

    var filter: JournalFilter {
        JournalFilter(matches: unit.map { "_SYSTEMD_UNIT=" + ($0.contains(".") ? $0 : $0 + ".service") }
            + identifier.map { "SYSLOG_IDENTIFIER=" + $0 } + matches)
    }

    func validate() throws {
        for m in matches where !m.contains("=") || m.hasPrefix("=") {
            throw ValidationError("--match takes FIELD=value, got '\(m)'")
        }
        for (name, value) in [("--since", since), ("--until", until)] {
            if let value, TimeArgument.parse(value) == nil {
                throw ValidationError("\(name): cannot read '\(value)' as YYYY-MM-DD[ HH:MM[:SS]][zone]")
            }
        }
    }
}

enum FailOn: String, ExpressibleByArgument, CaseIterable {
    case warning, error
    var severity: Severity { self == .warning ? .warning : .error }
}

/// The finding rules' thresholds: defaults, then a config file, then these options.
struct ThresholdOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("A JSON config file: {\"thresholds\": {\"min-fps\": 8, …}} (the names of the options below).", valueName: "file"))
    var config: String?

    @Option(name: .long, help: "connect-retry-storm: more connect attempts than this. (default: \(Thresholds().retryStormAttempts))")
    var retryStormAttempts: Int?

    @Option(name: .long, help: "connect-retry-storm: connecting takes longer than this, in seconds. (default: \(Thresholds().retryStormSeconds))")
    var retryStormSeconds: Double?

    @Option(name: .long, help: "socket-file-missing in a session that connected: ENOENT for at least this long, in seconds. (default: \(Thresholds().socketMissingSeconds))")
    var socketMissingSeconds: Double?

    @Option(name: .long, help: "slow-start: start → first frame (or connected) slower than this, in seconds. (default: \(Thresholds().slowStartSeconds))")
    var slowStartSeconds: Double?

    @Option(name: .long, help: "frame-stall: no frames for longer than this while streaming, in seconds. (default: \(Thresholds().stallSeconds))")
    var stallSeconds: Double?

    @Option(name: .long, help: "low-frame-rate: below this many frames per second. (default: \(Thresholds().minFps))")
    var minFps: Double?

    @Option(name: .long, help: "clock-skew: relay and phone clocks further apart than this, in seconds. (default: \(Thresholds().clockSkewSeconds))")
    var clockSkewSeconds: Double?

    func resolve() throws -> Thresholds {
        var t = Thresholds()
        if let config {
            do { try t.load(file: config) } catch let e as InputError {
                throw ValidationError("\(e)")
            } catch {
                throw ValidationError("\(config): \(error)")
            }
        }
        if let v = retryStormAttempts { t.retryStormAttempts = v }
        if let v = retryStormSeconds { t.retryStormSeconds = v }
        if let v = socketMissingSeconds { t.socketMissingSeconds = v }
        if let v = slowStartSeconds { t.slowStartSeconds = v }
        if let v = stallSeconds { t.stallSeconds = v }
        if let v = minFps { t.minFps = v }
        if let v = clockSkewSeconds { t.clockSkewSeconds = v }
        return t
    }
}

struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Analyze log files, folders and archives (.gz, .tar, .tar.gz, .zip, nested; '-' for stdin).")

    @Argument(help: ArgumentHelp("Files, folders or archives; '-' reads standard input.", valueName: "path"))
    var paths: [String]

    @Flag(name: .long, help: "Write one JSON document (schema castscope.report/1) instead of the terminal report.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Read every file as this format instead of detecting it (see `castscope parsers`).", valueName: "name"))
    var format: String?

    @Option(name: .long, help: ArgumentHelp("The date (YYYY-MM-DD) for logs whose lines carry no date or year (Console.app copy, idevicesyslog).", valueName: "date"))
    var date: String?

    @Flag(name: .long, help: "No colours, even on a terminal (also NO_COLOR).")
    var noColor = false

    @Option(name: .long, help: ArgumentHelp("Read big files with this many threads (default: the number of cores).", valueName: "n"))
    var threads: Int?

    @Flag(name: .long, help: "Write a Markdown report (to paste into a ticket) instead of the terminal report.")
    var markdown = false

    @Option(name: .long, help: ArgumentHelp("Also write a self-contained HTML report (SVG timelines) to this file.", valueName: "file"))
    var html: String?

    @Option(name: .long, help: ArgumentHelp("Also write a Chrome trace-event JSON (ui.perfetto.dev) to this file.", valueName: "file"))
    var perfetto: String?

    @Option(name: .long, help: ArgumentHelp("Exit 3 when a finding of this severity or worse exists (warning or error).", valueName: "severity"))
    var failOn: FailOn?

    @OptionGroup var thresholds: ThresholdOptions

    @OptionGroup var journal: JournalOptions

    @Option(name: .long, help: ArgumentHelp("Relay clock minus device clock in seconds (e.g. 2.35 or -0.8), instead of estimating it.", valueName: "seconds"))
    var clockOffset: Double?

    @OptionGroup var parsers: ParserOptions

    @OptionGroup(title: "Budgets (hostile input)") var budget: BudgetOptions

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give at least one path") }
        if let date, parseDate(date) == nil { throw ValidationError("--date must be YYYY-MM-DD, got '\(date)'") }
        try journal.validate()
    }

    func parseDate(_ s: String) -> (year: Int, month: Int, day: Int)? {
        let parts = s.split(separator: "-")
        guard parts.count == 3, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
            (1...12).contains(m), (1...31).contains(d)
        else { return nil }
        return (y, m, d)
    }

    func run() throws {
        let registry = parsers.registryOrExit()
        var options = AnalyzeOptions()
        options.forcedFormat = format
        options.date = date.flatMap(parseDate)
        options.filter = journal.filter
        options.since = journal.since.flatMap(TimeArgument.parse)
        options.until = journal.until.flatMap(TimeArgument.parse)
        options.clockOffset = clockOffset.map { Int64(($0 * 1e6).rounded()) }
        options.budget = budget.resolve()
        do { options.thresholds = try thresholds.resolve() } catch {
            fputs("castscope: error: \(error)\n", stderr)
            Glibc.exit(2)
        }
        let analyzer: Analyzer
        do { analyzer = try Analyzer(registry: registry, options: options) } catch {
            fputs("castscope: error: \(error)\n", stderr)
            Glibc.exit(2)
        }
        if let threads { analyzer.parallelism = max(1, threads) }
        let showProgress = isatty(2) != 0 && ProcessInfoLite.environment("CI") == nil
        var started = timespec()
        clock_gettime(CLOCK_MONOTONIC, &started)
        if showProgress {
            analyzer.progress = { files, bytes in
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                let secs = max(0.001, Double(now.tv_sec - started.tv_sec) + Double(now.tv_nsec - started.tv_nsec) / 1e9)
                let mb = Double(bytes) / 1e6
                fputs("\r\u{1B}[Kreading: \(files) file\(files == 1 ? "" : "s"), \(Fmt.decimal(mb, 1)) MB, \(Fmt.decimal(mb / secs, 0)) MB/s", stderr)
            }
        }
        let report = analyzer.analyze(paths)
        if showProgress { fputs("\r\u{1B}[K", stderr) }
        for (path, text) in [(html, { HTMLReport.render(report) }), (perfetto, { PerfettoReport.render(report) })] as [(String?, () -> String)] {
            guard let path else { continue }
            guard let f = fopen(path, "w") else {
                fputs("castscope: error: \(path): cannot write: \(String(cString: strerror(errno)))\n", stderr)
                Glibc.exit(2)
            }
            fputs(text(), f)
            fclose(f)
        }
        let output: String
        if json {
            output = JSONReport.render(report)
        } else if markdown {
            output = Sanitize.terminal(MarkdownReport.render(report))
        } else {
            let color = !noColor && isatty(1) != 0 && ProcessInfoLite.environment("NO_COLOR") == nil
            output = Sanitize.terminal(TextReport(color: color).render(report), styles: color)
        }
        fputs(output, stdout)
        fflush(stdout)
        for e in report.errors { fputs("castscope: error: \(Sanitize.line(e.description))\n", stderr) }
        if let failOn, report.findings.contains(where: { $0.severity >= failOn.severity }) { Glibc.exit(3) }
        if !report.errors.isEmpty { Glibc.exit(1) }
        // Everything is written and flushed: leave without the exit-time teardown, which
        // measured ~2.5 ms after a big file (`make bench`).
        fflush(nil)
        _exit(0)
    }
}

struct Parsers: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parsers",
        abstract: "List the formats and vocabularies in force, and check their sample lines.")

    @Flag(name: .long, help: "Run every definition's sample lines and report the ones that do not parse as declared.")
    var check = false

    @OptionGroup var parsers: ParserOptions

    func run() throws {
        let registry = parsers.registryOrExit()
        if check {
            let failures = SampleCheck.run(registry)
            for f in failures { print("castscope: error: \(f)") }
            print("\(SampleCheck.count(registry) - failures.count) passed, \(failures.count) failed")
            if !failures.isEmpty { Glibc.exit(1) }
            return
        }
        print("Formats:")
        for f in registry.formats { print("  \(f.name.padding(22))\(f.title)  [\(f.origin)]") }
        print("Vocabularies:")
        for v in registry.vocabularies { print("  \(v.name.padding(22))\(v.rules.count) rules, \(v.title)  [\(v.origin)]") }
    }
}

extension String {
    func padding(_ n: Int) -> String { count >= n ? self + " " : self + String(repeating: " ", count: n - count) }
}

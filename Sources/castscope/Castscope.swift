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
            Exit codes:
              0  analyzed
              1  analyzed, but some input could not be read (each named on stderr)
              2  usage error; also an output naming an input, or replacing a file
                 castscope did not write (without --force)
              3  a finding at or above --fail-on (named on stderr)
              4  nothing in the inputs was recognized, or an input path does not
                 exist (one line on stderr; --fail-on cannot pass on nothing, nor
                 on a --since/--until that kept nothing)
              5  an output could not be written (the other outputs were)
            When several apply: 5, then 4, 3, 1. Standard output closed by its reader
            (`| head`) ends castscope by SIGPIPE as it ends grep and cat: 141 in a shell.
            """,
        version: "0.1.0",
        subcommands: [Analyze.self, SessionsCommand.self, Show.self, Tail.self, Parsers.self, ClickHouseCommand.self]
    )

    /// ArgumentParser exits 64 on usage errors; castscope promises 2.
    static func main() {
        // (before anything is opened: a closed standard descriptor is held, never reused)
        StandardDescriptors.holdClosed()
        // Tests make a long session's columns spill at a few bytes (reports must not change).
        SpillBlocks.useBlockBytesFromEnvironment()
        LinesOutside.useChunkSizeFromEnvironment()
        SessionStream.useSleepAfterFromEnvironment()
        // A file size limit (`ulimit -f`, systemd's LimitFSIZE) is an output that cannot be
        // written (EFBIG: exit 5, its temporary file removed), not a silent SIGXFSZ death.
        signal(SIGXFSZ, SIG_IGN)
        // `castscope -v` and `castscope version`, as users of other tools type them.
        let args = BundleWalker.useArgumentsNotUTF8()
        if args == ["-v"] || args == ["version"] || args == ["-V"] {
            print(configuration.version)
            Glibc.exit(0)
        }
        // The commands that read the built-in definitions have them compiled on a second
        // thread while the command line is parsed: both are start-up costs every run pays
        // (~16M and ~28M instructions; a run over 256 MB takes 80 ms, its start ~10 of them).
        if let first = args.first, ["analyze", "sessions", "show", "tail"].contains(first) {
            BuiltinDefinitions.compileEarly()
        }
        do {
            var command = try analyzeAsRoot(args) ?? parseAsRoot(joiningDashValues(args))
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                // One style for every error: one line, castscope's prefix, where to read more.
                var message = message(for: error).split(separator: "\n").first.map(String.init) ?? "usage error"
                if message.hasPrefix("Error: ") { message.removeFirst(7) }
                // A mistyped command: name the nearest one.
                if let first = args.first, !first.hasPrefix("-"), subcommand(named: first) == nil {
                    let names = configuration.subcommands.compactMap { $0.configuration.commandName }
                    if let near = names.min(by: { editDistance($0, first) < editDistance($1, first) }), editDistance(near, first) <= 3 {
                        message = "unknown command '\(first)'; did you mean '\(near)'?"
                    } else {
                        message = "unknown command '\(first)' (commands: \(names.joined(separator: ", ")))"
                    }
                }
                let sub = CommandLine.arguments.dropFirst().first { !$0.hasPrefix("-") }.flatMap(subcommand(named:))
                let help = sub.map { "castscope \($0.configuration.commandName ?? "") --help" } ?? "castscope --help"
                // (an argument's control characters escaped, as in every other error line)
                printError("\(message) (see '\(help)')")
                Glibc.exit(2)
            }
            exit(withError: error)
        }
    }

    /// `castscope analyze …` parsed by `Analyze` alone, as its own root: ArgumentParser reflects
    /// over the commands' options several times before it parses (completion requests, pass-
    /// through and unrecognized arguments, then the values), ~3 ms of a run's ~14 ms start;
    /// the root's passes, skipped here, ~1 ms of them (a 256 MB log is read in ~90 ms). Nil for anything that does not
    /// parse so — help, a completion script, an error, a value the joining above would change —
    /// which then goes the whole way, so that what it prints is as before.
    static func analyzeAsRoot(_ args: [String]) -> ParsableCommand? {
        // (a request for help, `--help`, `-qh`, `--help-hidden`, parses to a help command drawn
        // for `analyze` alone, and a completion script's or the help dump's ends the parse:
        // only an `Analyze` is taken)
        guard args.first == "analyze", joiningDashValues(args) == args,
            let command = try? Analyze.parseAsRoot(Array(args.dropFirst())), command is Analyze
        else { return nil }
        return command
    }

    /// The subcommand `name` names: its name or an alias (`analyse`).
    static func subcommand(named name: String) -> ParsableCommand.Type? {
        configuration.subcommands.first { $0.configuration.commandName == name || $0.configuration.aliases.contains(name) }
    }
}

/// The command line with each value that begins with `-` and holds an `h` joined to its option
/// (`--since -1h` → `--since=-1h`), for the options that take such a value (`parsing:
/// .unconditional`). ArgumentParser takes the value, but when an option group's check fails
/// (`--since -1h --match bogus`, `--since -9999999h`) it looks through the arguments for a
/// request for help before it says the error, finds `-h` inside `-1h`, and printed the whole
/// help, exit 0: the error was lost and a script saw success. Joined, the value is one
/// argument it does not read as flags. The options are read from the commands' own
/// description, only when such a value is there.
func joiningDashValues(_ args: [String]) -> [String] {
    func suspect(_ a: String) -> Bool { a.count > 2 && a.hasPrefix("-") && !a.hasPrefix("--") && a.contains("h") }
    guard args.indices.dropFirst().contains(where: { suspect(args[$0]) && args[$0 - 1].hasPrefix("-") }),
        let typed = args.first(where: { !$0.hasPrefix("-") }),
        // (an alias, `analyse`, by its command's name)
        let command = Castscope.subcommand(named: typed)?.configuration.commandName,
        let tool = try? JSONValue.parse(Castscope._dumpHelp()),
        let info = tool["command"]?["subcommands"]?.arrayValue?.first(where: { $0["commandName"]?.stringValue == command })
    else { return args }
    // option name as typed (`-S`, `--since`) → its long name
    var takes: [String: String] = [:]
    for argument in info["arguments"]?.arrayValue ?? [] where argument["parsingStrategy"]?.stringValue == "unconditional" {
        let names = argument["names"]?.arrayValue ?? []
        guard let long = names.first(where: { $0["kind"]?.stringValue == "long" })?["name"]?.stringValue else { continue }
        for n in names {
            guard let name = n["name"]?.stringValue else { continue }
            takes[(n["kind"]?.stringValue == "short" ? "-" : "--") + name] = long
        }
    }
    var out: [String] = []
    var i = 0
    while i < args.count {
        if args[i] == "--" { out += args[i...]; break }
        if let long = takes[args[i]], i + 1 < args.count, suspect(args[i + 1]) {
            out.append("--\(long)=\(args[i + 1])")
            i += 2
            continue
        }
        // The same option last in a cluster of short flags (`-qS -1h`): the flags stay, the
        // option takes its value joined.
        let a = args[i]
        if a.count > 2, a.hasPrefix("-"), !a.hasPrefix("--"), a.dropFirst().allSatisfy({ $0.isASCII && $0.isLetter }),
            let long = takes["-" + String(a.last!)], i + 1 < args.count, suspect(args[i + 1])
        {
            out.append(String(a.dropLast()))
            out.append("--\(long)=\(args[i + 1])")
            i += 2
            continue
        }
        out.append(args[i])
        i += 1
    }
    return out
}

/// Levenshtein distance, for "did you mean".
func editDistance(_ a: String, _ b: String) -> Int {
    let x = Array(a), y = Array(b)
    var row = Array(0...y.count)
    for i in 1...max(1, x.count) where !x.isEmpty {
        var previous = row[0]
        row[0] = i
        for j in 1...max(1, y.count) where !y.isEmpty {
            let old = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (x[i - 1] == y[j - 1] ? 0 : 1))
            previous = old
        }
    }
    return x.isEmpty ? y.count : row[y.count]
}

/// Names for shell completion of --format / --input-format.
let builtinFormatNames = ParserRegistry.builtinFormatNames

/// Options every command that reads definitions shares.
struct ParserOptions: ParsableArguments {
    @Option(name: .customLong("parsers"), help: ArgumentHelp(
        "A directory of extra or overriding format and vocabulary definitions (*.json); also $CASTSCOPE_PARSERS.",
        valueName: "dir"))
    var directory: String?

    /// The definitions folder read (--parsers, else $CASTSCOPE_PARSERS): an input, which no
    /// output may be written into (a report there was loaded as a broken definition by every
    /// later run; `-o pdir/apple-default.json --force` replaced the user's definition).
    var readPaths: [String] { (directory ?? ProcessInfoLite.environment("CASTSCOPE_PARSERS")).map { [$0] } ?? [] }

    /// An empty name (`--parsers "$DIR"` with DIR unset) is a usage error naming the option
    /// (it was `: not a directory`).
    func validate() throws {
        if directory?.isEmpty == true { throw ValidationError("--parsers needs a directory") }
    }

    /// `samples`: with the definitions' samples (`parsers --check`); the other commands do
    /// not read them.
    func registry(samples: Bool = false) throws -> ParserRegistry {
        var r = try samples ? ParserRegistry.builtin(samples: true) : BuiltinDefinitions.compiled()
        if let dir = directory ?? ProcessInfoLite.environment("CASTSCOPE_PARSERS") {
            // (a folder named by the environment, not the command line, is said to be so)
            if directory == nil, !FileManagerLite.isDirectory(dir) {
                throw ValidationError("\(dir): not a directory ($CASTSCOPE_PARSERS)")
            }
            // (a user's definitions with their samples: one without any is refused, as before)
            try r.load(directory: dir)
        }
        return r
    }

    /// The registry, or a one-line error and exit 2 (a broken definition is a usage error).
    func registryOrExit(samples: Bool = false) -> ParserRegistry {
        do { return try registry(samples: samples) } catch {
            printError("\(error)")
            Glibc.exit(2)
        }
    }
}

/// The built-in definitions without their samples, compiled once: on a thread started before
/// the command line is parsed (`compileEarly`), or when first asked for.
enum BuiltinDefinitions {
    nonisolated(unsafe) private static var early: Worker<Result<ParserRegistry, Error>>?

    static func compileEarly() {
        early = Worker { Result { try ParserRegistry.builtin(samples: false) } }
    }

    static func compiled() throws -> ParserRegistry {
        guard let early else { return try ParserRegistry.builtin(samples: false) }
        Self.early = nil
        return try early.join().get()
    }
}

enum FileManagerLite {
    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }
}

enum ProcessInfoLite {
    static func environment(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }
}

/// journalctl's filters, for journal sources (journal files, export and JSON text): analyze's
/// and tail's.
struct JournalFilters: ParsableArguments {
    @Option(name: [.customShort("u"), .long], help: ArgumentHelp("Only this systemd unit's entries (journal sources).", valueName: "unit"))
    var unit: [String] = []

    @Option(name: [.customShort("t"), .long], help: ArgumentHelp("Only entries with this SYSLOG_IDENTIFIER (journal sources).", valueName: "id"))
    var identifier: [String] = []

    @Option(name: .customLong("match"), help: ArgumentHelp("A journal field match FIELD=value (repeatable; same field ORed, different fields ANDed), e.g. RELAY_SESSION=….", valueName: "FIELD=value"))
    var matches: [String] = []

    var filter: JournalFilter {
        JournalFilter(matches: unit.map { "_SYSTEMD_UNIT=" + ($0.contains(".") ? $0 : $0 + ".service") }
            + identifier.map { "SYSLOG_IDENTIFIER=" + $0 } + matches)
    }

    func validate() throws {
        for m in matches where !m.contains("=") || m.hasPrefix("=") {
            throw ValidationError("--match takes FIELD=value, got '\(m)'")
        }
        // A field name sd-journal refuses (`--match 'a b=c'`, `--match message=x`) was an
        // error for every journal file ("sd-journal refused the file: sd_journal_add_match(…):
        // Invalid argument") and the bundle analyzed without them: a usage error, as journalctl
        // refuses it. sd-journal's rule for a match: A-Z, 0-9 and _, not beginning with `__`.
        for m in matches {
            let field = m.prefix { $0 != "=" }
            let valid = !field.hasPrefix("__")
                && field.allSatisfy { ($0 >= "A" && $0 <= "Z") || ($0 >= "0" && $0 <= "9") || $0 == "_" }
            if !valid {
                throw ValidationError("--match: '\(field)' is not a field sd-journal matches (capital letters, digits and _, not beginning with __), in '\(m)'")
            }
        }
    }
}

/// journalctl's filters and its time window (analyze; tail follows from now, and its help
/// listed -S/-U, which it refuses).
struct JournalOptions: ParsableArguments {
    @OptionGroup var filters: JournalFilters

    @Option(name: [.customShort("S"), .long], parsing: .unconditional, help: ArgumentHelp("Only events at or after this time, as journalctl takes it: 'YYYY-MM-DD[ HH:MM[:SS[.ffffff]]][±HH:MM|Z]' (also with T, as the report prints times), 'HH:MM[:SS]' (today), today, yesterday, now, -1h, '1 hour ago'. Without a zone: the logs' zone, as the report shows it.", valueName: "time"))
    var since: String?

    @Option(name: [.customShort("U"), .long], parsing: .unconditional, help: ArgumentHelp("Only events at or before this time (same forms as --since).", valueName: "time"))
    var until: String?

    var sinceSpec: TimeSpec? { since.flatMap(TimeSpec.parse) }
    var untilSpec: TimeSpec? { until.flatMap(TimeSpec.parse) }

    var filter: JournalFilter { filters.filter }

    func validate() throws {
        try filters.validate()
        for (name, value) in [("--since", since), ("--until", until)] {
            if let value, TimeSpec.parse(value) == nil {
                throw ValidationError("\(name): cannot read '\(value)' (YYYY-MM-DD[ HH:MM[:SS]][zone], HH:MM, today, yesterday, -1h, '2 hours ago')")
            }
        }
    }

    /// `--since` after `--until` (checked in run(): ArgumentParser reads `-2h` in an error
    /// path as a request for help).
    func checkOrder() throws {
        if let s = sinceSpec, let u = untilSpec {
            // Either zone gives the same order unless exactly one of them names its zone.
            let now = currentMicros()
            let a = s.resolve(zone: 0, now: now), b = u.resolve(zone: 0, now: now)
            if a > b + (s.hasZone == u.hasZone ? 0 : 18 * 3_600_000_000) {
                throw ValidationError("--since \(s.text) is after --until \(u.text)")
            }
        }
    }
}

enum FailOn: String, ExpressibleByArgument, CaseIterable {
    case info, warning, error
    var severity: Severity {
        switch self {
        case .info: return .info
        case .warning: return .warning
        case .error: return .error
        }
    }
}

/// The finding rules' thresholds: defaults, then a config file, then these options.
struct ThresholdOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("A JSON config file: {\"thresholds\": {\"min-fps\": 8, …}} (the names of the options below).", valueName: "file"))
    var config: String?

    /// The config file read: an input, never written over (`-o cfg.json --force` replaced it,
    /// and every later run stopped at "unknown key 'schema'").
    var readPaths: [String] { config.map { [$0] } ?? [] }

    /// (`--config "$CFG"` with CFG unset: `: cannot open` named no file and no option)
    func validate() throws {
        if config?.isEmpty == true { throw ValidationError("--config needs a file name") }
    }

    @Option(name: .long, parsing: .unconditional, help: "connect-retry-storm: more connect attempts than this. (default: \(Thresholds().retryStormAttempts))")
    var retryStormAttempts: Int?

    @Option(name: .long, parsing: .unconditional, help: "connect-retry-storm: connecting takes longer than this, in seconds. (default: \(Thresholds().retryStormSeconds))")
    var retryStormSeconds: Double?

    @Option(name: .long, parsing: .unconditional, help: "socket-file-missing in a session that connected: ENOENT for at least this long, in seconds. (default: \(Thresholds().socketMissingSeconds))")
    var socketMissingSeconds: Double?

    @Option(name: .long, parsing: .unconditional, help: "slow-start: start → first frame (or connected) slower than this, in seconds. (default: \(Thresholds().slowStartSeconds))")
    var slowStartSeconds: Double?

    @Option(name: .long, parsing: .unconditional, help: "frame-stall: no frames for longer than this while streaming, in seconds. (default: \(Thresholds().stallSeconds))")
    var stallSeconds: Double?

    @Option(name: .long, parsing: .unconditional, help: "low-frame-rate: below this many frames per second. (default: \(Thresholds().minFps))")
    var minFps: Double?

    @Option(name: .long, parsing: .unconditional, help: "clock-skew: relay and phone clocks further apart than this, in seconds. (default: \(Thresholds().clockSkewSeconds))")
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
        // Through `set`, as the config file's values: the same checks (finite, in range).
        let given: [(String, Double?)] = [
            ("retry-storm-attempts", retryStormAttempts.map(Double.init)), ("retry-storm-seconds", retryStormSeconds),
            ("socket-missing-seconds", socketMissingSeconds), ("slow-start-seconds", slowStartSeconds),
            ("stall-seconds", stallSeconds), ("min-fps", minFps), ("clock-skew-seconds", clockSkewSeconds),
        ]
        for case let (name, v?) in given {
            do { try t.set(name, "\(v)") } catch { throw ValidationError("--\(name): \(error)") }
        }
        return t
    }
}

struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Analyze log files, folders and archives (.gz, .tar, .tar.gz, .zip, nested; '-' for stdin).",
        aliases: ["analyse"])

    @Argument(help: ArgumentHelp("Files, folders or archives; '-' reads standard input.", valueName: "path"))
    var paths: [String]

    @Flag(name: .long, help: "Write one JSON document (schema castscope.report/2, see schema/) instead of the terminal report (same as --format json).")
    var json = false

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Write the report to this file instead of standard output ('-': standard output). Its format is --format, else the file's extension (.json .md .html .perfetto.json .txt), else text. Never an input, never a file castscope did not write (unless --force); written to a temporary file beside it, then renamed.", valueName: "file"))
    var output: String?

    @Option(name: .long, help: ArgumentHelp("The report's format: text, json, markdown, html or perfetto. (A parser name here, as in earlier versions, means --input-format.)", valueName: "format"),
            completion: .list(ReportFormat.allCases.map(\.rawValue)))
    var format: String?

    @Option(name: .long, help: ArgumentHelp("Read every file as this format instead of detecting it (see `castscope parsers`).", valueName: "name"),
            completion: .list(builtinFormatNames))
    var inputFormat: String?

    @Flag(name: .long, help: "Replace an existing output file even when castscope did not write it (never an input).")
    var force = false

    @Option(name: .long, help: dateHelp)
    var date: String?

    @OptionGroup(title: "Colour") var colors: ColorOptions

    @OptionGroup(title: "Navigation (the header always sums up the whole bundle)") var navigation: NavigationOptions

    @Flag(name: .long, help: "Show every time in UTC (…Z+00:00) instead of the phone's zone.")
    var utc = false

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Show every time in this zone: ±HH:MM or a tz name (Europe/Berlin). Default: the phone's zone as its logs give it; lines without a zone are shown as the phone's local time.", valueName: "zone"))
    var timezone: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Read big files with this many threads (default: the number of cores; at most 64).", valueName: "n"))
    var threads: Int?

    @Flag(name: .long, help: "Write a Markdown report (to paste into a ticket; fits 65,536 characters) instead of the terminal report.")
    var markdown = false

    @Flag(name: .long, help: "Like --markdown, with every session in full (no size limit).")
    var markdownFull = false

    @Option(name: .long, help: ArgumentHelp("Also write a self-contained HTML report (SVG timelines) to this file ('-': standard output, instead of the terminal report). Same protections as --output.", valueName: "file"))
    var html: String?

    @Option(name: .long, help: ArgumentHelp("Also write a Chrome trace-event JSON (ui.perfetto.dev) to this file ('-': standard output). Same protections as --output.", valueName: "file"))
    var perfetto: String?

    @Option(name: .long, help: ArgumentHelp("Exit 3 when a finding of this severity or worse exists (info, warning or error), naming them on stderr; nothing recognized exits 4.", valueName: "severity"))
    var failOn: FailOn?

    @OptionGroup var thresholds: ThresholdOptions

    @OptionGroup var journal: JournalOptions

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Relay clock minus device clock in seconds (e.g. 2.35 or -0.8), instead of estimating it.", valueName: "seconds"))
    var clockOffset: Double?

    @OptionGroup var parsers: ParserOptions

    /// The report's format when --format names one (else --format is the input format).
    var outputFormat: ReportFormat? { format.flatMap(ReportFormat.init(rawValue:)) }

    /// Where each report goes. Throws on two reports for one place or two formats for one report.
    func targets() throws -> [OutputTarget] {
        var chosen: [(String, ReportFormat)] = []
        if json { chosen.append(("--json", .json)) }
        if markdown || markdownFull { chosen.append((markdownFull ? "--markdown-full" : "--markdown", .markdown)) }
        if let f = outputFormat { chosen.append(("--format \(f.rawValue)", f)) }
        if chosen.count > 1 {
            throw ValidationError("\(chosen.map(\.0).joined(separator: " and ")) each choose the report's format: give one (add --html FILE or --perfetto FILE for more reports)")
        }
        // (a path that is standard output, `/dev/stdout`, is `-`: `--html /dev/stdout` wrote the
        // text report and the page on it together)
        // (a name that is not UTF-8 reached by its bytes: `BundleWalker.reachedByBytes`)
        func std(_ p: String) -> String {
            let p = BundleWalker.reachedByBytes(p)
            return OutputWriter.standardStream(p) == 1 ? "-" : p
        }
        var main = OutputTarget(path: output.map(std) ?? "-", format: chosen.first?.1 ?? .text, option: output == nil ? "standard output" : "--output")
        if let output, chosen.isEmpty, let guessed = ReportFormat.guess(path: output) { main.format = guessed }
        var extra: [OutputTarget] = []
        if let html { extra.append(OutputTarget(path: std(html), format: .html, option: "--html")) }
        if let perfetto { extra.append(OutputTarget(path: std(perfetto), format: .perfetto, option: "--perfetto")) }
        // A file that standard output is also redirected to (`--html r.html > r.html`), while the
        // report goes to standard output: two reports for one file (exit 0, one of them lost).
        for (option, path) in [("--html", html), ("--perfetto", perfetto)] {
            guard let path, main.isStdout, OutputWriter.namedDescriptor(path) == nil, OutputWriter.standardStream(path) == 1 else { continue }
            throw ValidationError("\(option) \(path): standard output is redirected there and already gets the report: give one (\(option) - writes it to standard output)")
        }
        var all = [main]
        for t in extra {
            if t.isStdout && main.isStdout && output == nil && chosen.isEmpty && all[0].format == .text {
                all[0] = t  // `--html -`: the HTML is the report on standard output (one of them).
                continue
            }
            if let clash = all.first(where: { $0.path == t.path || (!t.isStdout && !$0.isStdout && OutputWriter.realBytes(BytePath.of($0.path)) == OutputWriter.realBytes(BytePath.of(t.path))) }) {
                throw ValidationError("\(t.option) \(t.path): \(clash.option == "standard output" ? "standard output" : clash.option) already writes \(t.isStdout ? "standard output" : "there")")
            }
            all.append(t)
        }
        return all
    }

    @OptionGroup var clickhouse: ClickHouseOptions

    @OptionGroup(title: "Budgets (hostile input)") var budget: BudgetOptions

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give at least one path") }
        // (an unset shell variable: `: cannot write`, exit 5, after the whole bundle was read)
        for (option, path) in [("--output", output), ("--html", html), ("--perfetto", perfetto)] where path?.isEmpty == true {
            throw ValidationError("\(option) needs a file name ('-' for standard output)")
        }
        if let inputFormat, let format, outputFormat == nil {
            throw ValidationError("--format \(format) and --input-format \(inputFormat): give the input format once")
        }
        let all = try targets()
        if navigation.shapesText, all[0].format != .text {
            throw ValidationError("-q, --oneline and --list shape the text report, not \(all[0].format.rawValue)")
        }
        try validateDate(date)
        if utc && timezone != nil { throw ValidationError("--utc and --timezone: give one") }
        if let timezone, DisplayZone.parse(timezone) == nil {
            throw ValidationError("--timezone: '\(timezone)' is neither ±HH:MM nor a zone in \(DisplayZone.zoneDirectory)")
        }
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1, got \(threads)") }
        if let c = clockOffset, !(c.isFinite && abs(c) <= 366 * 86_400) {
            throw ValidationError("--clock-offset needs seconds within a year (relay time - phone time), got \(c)")
        }
        try journal.validate()
    }

    /// Why a report is empty, in one line.
    static func whyNothing(_ r: AnalysisReport, paths: [String], filtered: Bool = false) -> String {
        if r.inputs.isEmpty { return "no files in \(paths.joined(separator: ", ")) (hidden files are skipped)" }
        // (an archive holding only links: its notes say them, and no file was read)
        if r.inputs.allSatisfy({ $0.format == nil && $0.errors.isEmpty && !$0.notes.isEmpty && !$0.notes.contains(OwnReports.note) }) {
            let specials = r.inputs.contains { $0.notes.contains { $0.hasSuffix(", no file: not read") || $0.hasSuffix("devices or sockets, not read") } }
            return "no files in \(paths.joined(separator: ", ")) (hidden files are skipped, links not followed\(specials ? ", FIFOs and devices not read" : ""): see the notes)"
        }
        let readable = r.inputs.filter { $0.format != nil }
        // castscope's own reports are listed, not read.
        let reports = r.inputs.filter { $0.format == nil && $0.notes.contains(OwnReports.note) }
        if readable.isEmpty, !reports.isEmpty, reports.count == r.inputs.count {
            return reports.count == 1 ? "\(reports[0].path) is a castscope report, not a log (analyze the logs it was made from)"
                : "the \(reports.count) files are castscope reports, not logs (analyze the logs they were made from)"
        }
        if readable.isEmpty {
            return "none of the \(r.inputs.count) file\(r.inputs.count == 1 ? "" : "s") could be read (errors above)"
        }
        var formats: [String: Int] = [:]
        for i in readable { formats[i.format!, default: 0] += 1 }
        let list = formats.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { $0.value > 1 ? "\($0.key) ×\($0.value)" : $0.key }
        let records = readable.reduce(0) { $0 + $1.stats.records }
        if records == 0 {
            let which = readable.count == 1 ? readable[0].path : "the \(readable.count) files read"
            let unparsed = readable.reduce(0) { $0 + $1.stats.unparsed }
            if unparsed > 0 {
                // Lines, none in the format: not an empty file.
                return "\(which) (\(list.joined(separator: ", "))): no records, \(unparsed) line\(unparsed == 1 ? "" : "s") not in that format"
            }
            if readable.contains(where: { !$0.errors.isEmpty }) { return "\(which): no records before the damage named above" }
            let lines = readable.reduce(0) { $0 + $1.stats.lines }
            if lines > 0 {
                // Lines, none of them a record: header lines only, or what journalctl-style
                // filters left out.
                return "\(which): \(lines) line\(lines == 1 ? "" : "s"), none a record (headers, skipped lines, or entries the filters left out)"
            }
            // (an .ips read whole that names no killed process is not an empty file)
            if readable.allSatisfy({ $0.format?.hasPrefix("ips (JetsamEvent") == true }) {
                return "\(which): no killed process with a name and a reason in \(readable.count == 1 ? "its" : "their") process list"
            }
            // (a journal inside an archive that could not be copied out, TMPDIR unwritable: not empty)
            if !r.errors.isEmpty { return "\(which): nothing read from \(readable.count == 1 ? "it" : "them") (errors above)" }
            // (a journal read through -u, -t or --match hands over only the entries they keep:
            // `--match MESSAGE=` on a journal of 117 entries said it "is empty")
            if filtered { return "\(which): no entry matches -u, -t or --match (the filters left nothing)" }
            return "\(which) \(readable.count == 1 ? "is" : "are") empty"
        }
        return "\(readable.count) file\(readable.count == 1 ? "" : "s") read (\(list.joined(separator: ", "))), \(records) records, "
            + "none from a screen-sharing extension, its host app or the relay (see `castscope parsers`; --parsers DIR adds your own)"
    }

    func run() throws {
        let registry = parsers.registryOrExit()
        // Every output is checked before anything is read: an input is never written over.
        let outputs: [OutputTarget]
        // (the definitions and the config are read too: inputs for every output's checks)
        let read = paths + parsers.readPaths + thresholds.readPaths
        do { outputs = try targets() } catch {
            printError("\(error)")
            Glibc.exit(Exit.usage)
        }
        for t in outputs {
            if let why = OutputWriter.refusal(t, inputs: read, force: force) {
                printError("\(why)")
                Glibc.exit(Exit.usage)
            }
        }
        if let why = clickhouse.refusal(inputs: read, force: force) {
            printError("\(why)")
            Glibc.exit(Exit.usage)
        }
        if let why = clickhouse.sharedFile(outputs.map { ($0.option, $0.path) }) {
            printError("\(why)")
            Glibc.exit(Exit.usage)
        }
        // (not on a terminal: a pager may take the report there, and quitting it early is no error)
        if isatty(1) == 0, outputs.contains(where: \.isStdout) && (outputs.contains { !$0.isStdout } || clickhouse.url != nil) {
            OutputWriter.mayOutliveStdout()
        }
        do { try journal.checkOrder() } catch {
            printError("\(error)")
            Glibc.exit(Exit.usage)
        }
        var options = AnalyzeOptions()
        options.forcedFormat = inputFormat ?? (outputFormat == nil ? format : nil)
        options.date = date.flatMap(parseDay)
        options.filter = journal.filter
        options.sinceSpec = journal.sinceSpec
        options.untilSpec = journal.untilSpec
        options.displayZone = utc ? .fixed(0) : timezone.flatMap(DisplayZone.parse)
        options.clockOffset = clockOffset.map { Int64(($0 * 1e6).rounded()) }
        options.budget = budget.resolve()
        do { options.thresholds = try thresholds.resolve() } catch {
            printError("\(error)")
            Glibc.exit(Exit.usage)
        }
        let analyzer: Analyzer
        do { analyzer = try Analyzer(registry: registry, options: options) } catch {
            printError("\(error)")
            Glibc.exit(Exit.usage)
        }
        // (a thread a range: 100,000 of them made the read 3–4× slower, not faster)
        if let threads { analyzer.parallelism = min(max(1, threads), 64) }
        // A test knob, as CASTSCOPE_SLEEP_AFTER: files of this many bytes or more are read in
        // ranges (and streamed in ranges) this big, so that a differential run puts range edges
        // inside small logs (the paths are otherwise taken only from 4 MB and 32 MB up).
        if let v = ProcessInfoLite.environment("CASTSCOPE_RANGE_BYTES").flatMap({ UInt64($0) }), v >= 512 {
            analyzer.parallelThreshold = v
            analyzer.minimumRange = v
            analyzer.minimumStreamedRange = v
            analyzer.maximumStreamedRange = v
        }
        let showProgress = isatty(2) != 0 && ProcessInfoLite.environment("CI") == nil
            && ProcessInfoLite.environment("TERM") != "dumb"
        var started = timespec()
        clock_gettime(CLOCK_MONOTONIC, &started)
        if showProgress {
            let total = bytesOnDisk(paths)
            analyzer.progress = { files, bytes in
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                let secs = max(0.001, Double(now.tv_sec - started.tv_sec) + Double(now.tv_nsec - started.tv_nsec) / 1e9)
                let mb = Double(bytes) / 1e6
                // Bytes as stored (compressed for .gz and archives), against the inputs' size on disk.
                var amount = "\(Fmt.decimal(mb, 1)) MB"
                if let total, total > 0 {
                    let pct = min(100, Int(Double(bytes) * 100 / Double(total)))
                    amount = "\(Fmt.decimal(mb, 1)) of \(Fmt.decimal(Double(total) / 1e6, 1)) MB (\(pct)%)"
                }
                fputs("\r\u{1B}[Kreading: \(files) file\(files == 1 ? "" : "s"), \(amount), \(Fmt.decimal(mb / secs, 0)) MB/s", stderr)
            }
        }
        if paths.contains("-") && isatty(0) != 0 {
            fputs("castscope: reading standard input from the terminal (paste the log, then Ctrl-D; or pipe it: idevicesyslog | castscope analyze -)\n", stderr)
        }
        let digest = ClickHouseAnalyzeExport.startDigest(clickhouse, paths: paths)
        // Reports of the whole bundle (every format) are written as sessions end, so that the
        // sessions need not all be held (when the bundle has relay lines, the analyzer keeps
        // them all for the join; the report is then written from the whole at the end).
        let selection = navigation.selection
        let textOnStdout = outputs.contains { $0.isStdout && $0.format == .text }
        let streamable = !outputs.isEmpty && selection.isEmpty
            && !(textOnStdout && !navigation.oneline && Pager.command(enabled: navigation.pager) != nil)
        // ClickHouse rows are made as sessions end too (the bundle's id is its files' digest,
        // ready by then); from standard input the id needs the whole report.
        let clickhouseStream = ClickHouseAnalyzeExport.stream(clickhouse, digest: digest)
        let streamsAll = streamable && (clickhouse.url == nil || clickhouseStream != nil)
        var streamed: [StreamedReport] = []
        var rowStream: ClickHouseStreamExport?
        if streamsAll {
            // The findings of sessions handed on go out with them (JSON: into their own part;
            // ClickHouse: rows with their session's) and only their counts stay, unless
            // --fail-on (which names every session) needs them.
            analyzer.keepsSessionFindings = failOn != nil
            let spillsFindings = !analyzer.keepsSessionFindings
            streamed = outputs.map { t in
                switch t.format {
                case .perfetto: return StreamedReport(target: t, text: nil, document: StreamedPerfetto())
                case .html: return StreamedReport(target: t, text: nil, document: StreamedHTML())
                case .markdown:
                    return StreamedReport(target: t, text: nil, document: StreamedMarkdown(limit: markdownFull ? nil : MarkdownReport.defaultLimit))
                case .text, .json: break
                }
                guard t.format == .text else { return StreamedReport(target: t, text: nil, spillsFindings: spillsFindings) }
                var r = TextReport(color: t.isStdout && colors.enabled())
                if t.isStdout { r.width = navigation.columns() }
                // --list, --oneline, -q: the text's other shapes (as the whole-report path makes them).
                if navigation.oneline {
                    return StreamedReport(target: t, text: nil, document: StreamedTextShape(.oneline(label: paths.map { BundleWalker.argumentNames[$0] ?? Sanitize.line($0) }.joined(separator: " ")), report: r))
                }
                if navigation.list { return StreamedReport(target: t, text: nil, document: StreamedTextShape(.list, report: r)) }
                if navigation.quiet {
                    r.headerOnly = true
                    return StreamedReport(target: t, text: nil, document: StreamedTextShape(.quiet, report: r))
                }
                return StreamedReport(target: t, text: r)
            }
            // Rows sent to ClickHouse cannot be taken back if the analyzer starts over: while it
            // may, the export compresses and keeps its batches (sent when the analysis is final).
            analyzer.willStreamSessions = { [unowned analyzer] partial in
                for s in streamed { s.begin(partial) }
                rowStream?.abandon()
                rowStream = clickhouseStream?(analyzer.readingAsItGoes)
                rowStream?.clock = partial.clock
            }
            // Each session's report bytes are made on the threads that finish sessions, two
            // at once; they are written, and its rows made, in session order.
            analyzer.sessionSink = SessionSink(prepare: { session, findings in
                streamed.map { $0.prepare(session, findings) }
            }, take: { session, findings, prepared in
                let parts = prepared as! [SessionPart]
                for (s, b) in zip(streamed, parts) { s.take(b, findings, session: session) }
                rowStream?.add(session, findings)
            })
        }
        let report = analyzer.analyze(paths)
        if showProgress { fputs("\r\u{1B}[K", stderr) }
        // Every output is attempted: one that cannot be written loses nothing of the others.
        var writeFailed = false
        let chosen = selection.isEmpty ? nil : selection.apply(report)
        let shown = chosen.map { selection.filtered(report, $0) } ?? report
        for s in streamed {
            // Sessions handed on as they ended, or (relay lines: kept for the join) the whole
            // report, written a session at a time.
            if let error = report.streamed != nil ? s.finish(report) : s.writeWhole(report) {
                printError("\(error)")
                writeFailed = true
            }
        }
        for t in outputs where report.streamed == nil && streamed.isEmpty {
            let text: String
            switch t.format {
            case .json:
                if let error = JSONReport.renderBuffer(shown).withUnsafeBytes({ OutputWriter.write(UnsafeRawBufferPointer($0), to: t) }) {
                    printError("\(error)")
                    writeFailed = true
                }
                continue
            case .markdown: text = Sanitize.terminal(MarkdownReport.render(shown, limit: markdownFull ? nil : MarkdownReport.defaultLimit))
            case .html: text = HTMLReport.render(shown)
            case .perfetto: text = PerfettoReport.render(shown)
            case .text:
                var r = TextReport(color: t.isStdout && colors.enabled())
                r.selection = chosen
                r.headerOnly = navigation.quiet
                if t.isStdout { r.width = navigation.columns() }
                let plain: String
                if navigation.oneline {
                    plain = r.oneline(report, label: paths.joined(separator: " "))
                } else if navigation.list {
                    plain = r.sessionList(report)
                } else {
                    plain = r.render(report)
                }
                // Control characters from the logs are shown escaped; only the report's own
                // colours stay escape sequences.
                text = Sanitize.terminal(plain, styles: r.color)
            }
            if t.isStdout && t.format == .text && !navigation.oneline, let pager = Pager.command(enabled: navigation.pager),
                Pager.write(text, through: pager)
            {
                continue
            }
            if let error = OutputWriter.write(text, to: t) {
                printError("\(error)")
                writeFailed = true
            }
        }
        Stages.mark("outputs")
        // One line per error, the same line once (a missing $TMPDIR failed every log-archive
        // member with one sentence, eight times over), with how many times it came.
        var counts: [String: Int] = [:]
        for e in report.errors { counts[e.description, default: 0] += 1 }
        for e in report.errors {
            guard let n = counts.removeValue(forKey: e.description) else { continue }
            fputs("castscope: error: \(Sanitize.line(e.description))\(n > 1 ? " (\(n) times)" : "")\n", stderr)
        }
        for w in report.warnings { fputs("castscope: warning: \(Sanitize.line(w))\n", stderr) }
        if let w = SpillTrouble.take() { fputs("castscope: warning: \(Sanitize.line(w))\n", stderr) }
        // A named path that does not exist, or nothing recognized at all: exit 4.
        var st = stat()
        let missing = paths.filter { $0 != "-" && lstat($0, &st) != 0 && !BundleWalker.wasNotHeld($0) }
        let nothing = report.eventCount == 0 && report.filteredOut == 0 && report.tally.count == 0
            && report.relaySessions.isEmpty
        if nothing { printError("nothing recognized: \(Self.whyNothing(report, paths: paths, filtered: !journal.filter.isEmpty))") }
        if report.filteredOut > 0 && report.eventCount == 0 && !textOnStdout, let span = report.span {
            let z = report.displayOffset ?? 0
            fputs("castscope: note: --since/--until kept none of the \(report.filteredOut) recognized lines: the logs span \(Fmt.rfc3339(span.lowerBound, offset: z)) to \(Fmt.rfc3339(span.upperBound, offset: z))\n", stderr)
        }
        // ClickHouse is an output too: rows it did not take are named on stderr, exit 5.
        // (Read again the whole way and kept for the relay join: the first go's export, which
        // kept its batches, is joined and dropped before the whole report's export begins.)
        if report.streamed == nil { rowStream?.abandon() }
        if !ClickHouseAnalyzeExport.run(clickhouse, report: report, paths: paths, digest: digest,
                                        streamed: report.streamed != nil ? rowStream : nil)
        {
            writeFailed = true
        }
        if writeFailed { Glibc.exit(Exit.writeFailed) }
        OutputWriter.endIfStdoutGone()
        if nothing || !missing.isEmpty { Glibc.exit(Exit.nothingRecognized) }
        // (a window that kept nothing is nothing to pass a gate on: CI went green on it)
        if failOn != nil, report.filteredOut > 0, report.eventCount == 0, report.tally.count == 0, report.relaySessions.isEmpty {
            fputs("castscope: error: --fail-on: --since/--until kept nothing to judge\n", stderr)
            Glibc.exit(Exit.nothingRecognized)
        }
        if let failOn {
            // Counted as they are read (a relay fleet's bundle has a finding per orphan session).
            var tripped = 0
            var kinds: [String] = []
            var sessionsOf: [String: Set<String>] = [:]
            for f in report.findings where f.severity >= failOn.severity {
                tripped += 1
                if !kinds.contains(f.kind) { kinds.append(f.kind) }
                if let s = f.session { sessionsOf[f.kind, default: []].insert(s) }
            }
            if tripped > 0 {
                let named = kinds.prefix(5).map { k in
                    let sessions = sessionsOf[k] ?? []
                    return sessions.isEmpty ? k : "\(k) (\(sessions.sorted().joined(separator: ", ")))"
                }
                fputs("castscope: --fail-on \(failOn.rawValue): \(tripped) finding\(tripped == 1 ? "" : "s") at or above \(failOn.rawValue): \(named.joined(separator: ", "))\(kinds.count > 5 ? ", …" : "")\n", stderr)
                Glibc.exit(Exit.failOn)
            }
        }
        if !report.errors.isEmpty { Glibc.exit(Exit.inputErrors) }
        // Everything is written and flushed: leave without the exit-time teardown, which
        // measured ~2.5 ms after a big file (`make bench`).
        fflush(nil)
        _exit(0)
    }
}

/// `castscope sessions …`: `analyze --list`, one line per session.
struct SessionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "One line per session: id, start, duration, outcome, process, findings (analyze --list; same options).")

    @OptionGroup var analyze: Analyze

    func run() throws {
        var a = analyze
        a.navigation.list = true
        try a.run()
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
        let registry = parsers.registryOrExit(samples: check)
        if check {
            let failures = SampleCheck.run(registry)
            for f in failures { print("castscope: error: \(f)") }
            print("\(SampleCheck.count(registry) - failures.count) passed, \(failures.count) failed")
            if !failures.isEmpty { Glibc.exit(1) }
            return
        }
        // Built-in definitions are compiled in: their origin is a file of castscope's source,
        // not a path on this machine.
        let builtin = (try? ParserRegistry.builtin(samples: false)).map { Set($0.formats.map(\.origin) + $0.vocabularies.map(\.origin)) } ?? []
        func origin(_ o: String) -> String { builtin.contains(o) ? "built in, from castscope's \(o)" : o }
        print("Formats:")
        for f in registry.formats { print("  \(f.name.padding(22))\(f.title)  [\(origin(f.origin))]") }
        print("Vocabularies:")
        for v in registry.vocabularies { print("  \(v.name.padding(22))\(v.rules.count) rules, \(v.title)  [\(origin(v.origin))]") }
    }
}

/// `--date`: a real day as YYYY-MM-DD (analyze and show).
func parseDay(_ s: String) -> (year: Int, month: Int, day: Int)? {
    let parts = s.split(separator: "-")
    guard parts.count == 3, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
        parts[0].count == 4, parts[1].count == 2, parts[2].count == 2, isRealDate(y, m, d)
    else { return nil }
    return (y, m, d)
}

func validateDate(_ date: String?) throws {
    if let date, parseDay(date) == nil { throw ValidationError("--date must be a real day as YYYY-MM-DD, got '\(date)'") }
}

/// `--date`'s help (analyze and show).
let dateHelp = ArgumentHelp("The date (YYYY-MM-DD) for logs whose lines carry no date or year (Console.app copy, idevicesyslog).", valueName: "date")

extension String {
    func padding(_ n: Int) -> String { count >= n ? self + " " : self + String(repeating: " ", count: n - count) }
}

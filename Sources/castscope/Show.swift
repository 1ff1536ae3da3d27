import ArgumentParser
import CastscopeKit

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `castscope show`: Apple's `log show` on Linux, for log archives and every other input.
struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print every record of the inputs (.logarchive, tracev3, sysdiagnose, text logs, journals), time-merged, as Apple's `log show` prints them.",
        discussion: "Times are printed in UTC. Exit codes as for analyze: 1 when some input could not be read (named on stderr).")

    @Argument(help: ArgumentHelp("Files, folders or archives.", valueName: "path"))
    var paths: [String]

    @Option(name: .long, help: ArgumentHelp("default, ndjson or json (the field names of `log show --style`).", valueName: "style"))
    var style: String = "default"

    @Option(name: .long, help: ArgumentHelp("Only this process (name or image path; repeatable).", valueName: "name"))
    var process: [String] = []

    @Option(name: .long, parsing: .unconditionalSingleValue, help: ArgumentHelp("Only this pid (repeatable).", valueName: "pid"))
    var pid: [Int] = []

    @Option(name: .long, help: ArgumentHelp("Only subsystems starting with this (repeatable).", valueName: "subsystem"))
    var subsystem: [String] = []

    @Option(name: .long, help: ArgumentHelp("Only this category (repeatable).", valueName: "category"))
    var category: [String] = []

    @Option(name: .long, help: ArgumentHelp("Only messages containing this text.", valueName: "text"))
    var grep: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Only records at or after this time: the same forms as analyze --since (YYYY-MM-DD[ HH:MM[:SS]][zone], HH:MM, today, yesterday, -1h, '1 hour ago'); without a zone, this machine's local time (as log show and journalctl read it).", valueName: "time"))
    var start: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Only records at or before this time (same forms as --start).", valueName: "time"))
    var end: String?

    @Option(name: .long, help: dateHelp)
    var date: String?

    @OptionGroup var parsers: ParserOptions

    func validate() throws {
        try validateDate(date)
        guard LogShowOptions.Style(rawValue: style) != nil else { throw ValidationError("--style must be default, ndjson or json") }
        for (name, value) in [("--start", start), ("--end", end)] {
            if let value, TimeSpec.parse(value) == nil { throw ValidationError("\(name): cannot read the time '\(value)'") }
        }
        if let s = start.flatMap(TimeSpec.parse), let e = end.flatMap(TimeSpec.parse), Self.instant(s) > Self.instant(e) {
            throw ValidationError("--start \(s.text) is after --end \(e.text)")
        }
    }

    /// A --start/--end time as an instant (µs): a time without a zone is this machine's local time.
    static func instant(_ spec: TimeSpec) -> Int64 {
        let now = currentMicros()
        return spec.resolve(zone: DisplayZone.local.offset(at: now), now: now)
    }

    func run() throws {
        var options = LogShowOptions()
        options.style = LogShowOptions.Style(rawValue: style)!
        options.processes = process
        options.pids = pid
        options.subsystems = subsystem
        options.categories = category
        options.messageContains = grep
        options.date = date.flatMap(parseDay)
        options.start = start.flatMap(TimeSpec.parse).map { LogShow.nanos(Self.instant($0)) }
        options.end = end.flatMap(TimeSpec.parse).map { LogShow.nanos(Self.instant($0)) }
        if let why = OutputWriter.stdoutConflict(inputs: paths + parsers.readPaths) {
            printError(why)
            throw ExitCode(Exit.usage)
        }
        let show = LogShow(registry: parsers.registryOrExit(), options: options)
        // (a full disk or a closed output stops the writing: said, and exit 5)
        var writeError: Int32 = 0
        show.run(paths) { b in
            guard OutputWriter.writeAll(b, to: stdout) else { writeError = errno; return false }
            return true
        }
        if fflush(stdout) != 0 && writeError == 0 { writeError = errno }
        for e in show.errors { fputs("castscope: error: " + Sanitize.line(e.description) + "\n", stderr) }
        if writeError != 0 { fputs("castscope: error: standard output: cannot write: \(String(cString: strerror(writeError)))\n", stderr) }
        // Exit codes as analyze's: 5 an output not written, 4 a path that does not exist, 1 an
        // input (part) not read. (All were 1 before session 43.)
        var st = stat()
        if writeError != 0 { throw ExitCode(Exit.writeFailed) }
        if paths.contains(where: { $0 != "-" && lstat($0, &st) != 0 }) { throw ExitCode(Exit.nothingRecognized) }
        if show.recordsRead == 0 {
            let shown = paths.map { $0 == "-" ? "standard input" : $0 }.joined(separator: ", ")
            var dir = stat()
            let folder = paths.contains { stat($0, &dir) == 0 && (dir.st_mode & S_IFMT) == S_IFDIR }
            printError("nothing to show: no records in \(shown)\(!show.errors.isEmpty ? " (errors above)" : folder ? " (hidden files are skipped)" : "")")
            throw ExitCode(Exit.nothingRecognized)
        }
        if !show.errors.isEmpty { throw ExitCode(Exit.inputErrors) }
    }
}

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

    @Option(name: .long, help: ArgumentHelp("Only this pid (repeatable).", valueName: "pid"))
    var pid: [Int] = []

    @Option(name: .long, help: ArgumentHelp("Only subsystems starting with this (repeatable).", valueName: "subsystem"))
    var subsystem: [String] = []

    @Option(name: .long, help: ArgumentHelp("Only this category (repeatable).", valueName: "category"))
    var category: [String] = []

    @Option(name: .long, help: ArgumentHelp("Only messages containing this text.", valueName: "text"))
    var grep: String?

    @Option(name: .long, help: ArgumentHelp("Only records at or after this time (YYYY-MM-DD[ HH:MM[:SS]][±HHMM], UTC when no zone).", valueName: "time"))
    var start: String?

    @Option(name: .long, help: ArgumentHelp("Only records at or before this time.", valueName: "time"))
    var end: String?

    @OptionGroup var parsers: ParserOptions

    func validate() throws {
        guard LogShowOptions.Style(rawValue: style) != nil else { throw ValidationError("--style must be default, ndjson or json") }
        for (name, value) in [("--start", start), ("--end", end)] {
            if let value, TimeArgument.parse(value) == nil { throw ValidationError("\(name): cannot read the time '\(value)'") }
        }
    }

    func run() throws {
        var options = LogShowOptions()
        options.style = LogShowOptions.Style(rawValue: style)!
        options.processes = process
        options.pids = pid
        options.subsystems = subsystem
        options.categories = category
        options.messageContains = grep
        options.start = start.flatMap(TimeArgument.parse).map { $0 * 1000 }
        options.end = end.flatMap(TimeArgument.parse).map { $0 * 1000 }
        let show = LogShow(registry: parsers.registryOrExit(), options: options)
        show.run(paths) { text in fputs(text, stdout) }
        fflush(stdout)
        for e in show.errors { fputs("castscope: \(e.description)\n", stderr) }
        if !show.errors.isEmpty { throw ExitCode(1) }
    }
}

import ArgumentParser
import CastscopeKit
import Synchronization

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

struct Tail: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Follow the relay's journal (and text streams on stdin) and show sessions as they happen.",
        discussion: """
            By default follows the local system journal from now on. With --cursor-file the \
            position is saved after the entries before it were printed, and a restart resumes \
            right after it; if that entry was rotated or vacuumed away, the gap is reported with \
            its time span. Ctrl-C prints a summary of the sessions seen.
            """)

    @Argument(help: ArgumentHelp("'-' also reads a text stream on standard input (idevicesyslog, log stream --style ndjson, …).", valueName: "-"))
    var inputs: [String] = []

    @Option(name: [.customShort("D"), .long], help: ArgumentHelp("Follow the journal files in this directory (new and rotated files are picked up).", valueName: "dir"))
    var directory: String?

    @Option(name: .long, help: ArgumentHelp("Follow these journal files (repeatable); prefer --directory, which sees rotation.", valueName: "file"))
    var file: [String] = []

    @Flag(name: .long, help: "Do not read any journal: only standard input.")
    var noJournal = false

    @Option(name: .long, help: ArgumentHelp("Save the position here after printing, and resume after it.", valueName: "file"))
    var cursorFile: String?

    @Flag(name: .long, help: "Start at the oldest entry instead of now (when there is no saved cursor).")
    var fromStart = false

    @Flag(name: .long, help: "Ignore (and replace) a saved --cursor-file, e.g. an empty or garbled one.")
    var cursorReset = false

    @Flag(name: .long, help: "Also print every recognized line, not only session changes.")
    var events = false

    @Flag(name: .long, help: "One JSON object per line (types: event, session, relay, gap, summary).")
    var json = false

    @Option(name: .long, help: ArgumentHelp("The format of standard input instead of detecting it.", valueName: "name"))
    var format: String?

    @Flag(name: .long, help: "No colours, even on a terminal (also NO_COLOR).")
    var noColor = false

    @OptionGroup var journalOptions: JournalOptions
    @OptionGroup var parsers: ParserOptions

    func validate() throws {
        for i in inputs where i != "-" { throw ValidationError("tail reads journals (--directory, --file) and '-' only, got '\(i)'") }
        if noJournal && !inputs.contains("-") { throw ValidationError("--no-journal needs '-' (standard input)") }
        try journalOptions.validate()
    }

    func run() throws {
        let registry = parsers.registryOrExit()
        if let format, registry.format(named: format) == nil {
            fputs("castscope: error: --format: unknown format '\(format)'\n", stderr)
            Glibc.exit(2)
        }
        // A parent may have left SIGINT/SIGTERM blocked (threads inherit the mask): unblock them
        // before any thread starts, so that Ctrl-C and `kill` reach the handler below.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        let color = !noColor && !json && isatty(1) != 0 && ProcessInfoLite.environment("NO_COLOR") == nil
        let engine = TailEngine(factory: EventFactory(registry: registry), json: json, events: events, color: color,
                                status: color)
        // Lines reach stdout only when a batch is flushed, in one write, so that the cursor
        // file can commit the batch against it (exactly once across SIGKILL; see JournalFollower).
        if isatty(1) == 0 { setvbuf(stdout, UnsafeMutablePointer<CChar>.allocate(capacity: 4 << 20), _IOFBF, 4 << 20) }
        if cursorReset, let cursorFile { unlink(cursorFile) }
        let journalDone = StopFlag()
        let stdinDone = StopFlag()
        let stop = StopFlag()
        if !noJournal {
            let source: JournalFollower.Source =
                directory.map { .directory($0) } ?? (file.isEmpty ? .system : .files(file))
            let follower = JournalFollower(source: source, filter: journalOptions.filter, cursorFile: cursorFile,
                                           fromStart: fromStart, exportFormat: registry.format(named: "journal-export")!,
                                           engine: engine, stop: stop)
            startThread {
                follower.run()
                journalDone.set()
            }
        }
        if inputs.contains("-") {
            let formatName = format
            startThread {
                StdinFollower(registry: registry, forced: formatName, engine: engine).run()
                stdinDone.set()
            }
        }
        // Ctrl-C / SIGTERM: stop the followers, print the summary. The handler only stores
        // the signal number (async-signal-safe); this thread polls it.
        signal(SIGINT, { tailSignal.store($0, ordering: .relaxed) })
        signal(SIGTERM, { tailSignal.store($0, ordering: .relaxed) })
        let readsStdin = inputs.contains("-")
        func finished() -> Bool { (noJournal || journalDone.isSet) && (!readsStdin || stdinDone.isSet) }
        while tailSignal.load(ordering: .relaxed) == 0 && !finished() { usleep(20_000) }
        stop.set()
        // The journal thread checks the flag at least every 250 ms and saves its cursor.
        for _ in 0..<150 where !noJournal && !journalDone.isSet { usleep(20_000) }
        engine.summary()
        Glibc.exit(engine.failed ? 1 : 0)
    }
}

/// The signal that asked tail to stop (0 while none did).
let tailSignal = Atomic<Int32>(0)

final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// Everything the followers share: the live sessions and the output, behind one lock so that
/// lines from the journal and from stdin never interleave mid-line.
final class TailEngine: @unchecked Sendable {
    private let lock = NSLockLite()
    private let live = LiveSessions()
    private let factory: EventFactory
    private let json: Bool
    private let showEvents: Bool
    private let color: Bool
    private let showStatus: Bool
    private var order = 0
    private var statusOnScreen = false
    private(set) var failed = false
    private let format: LiveReport

    init(factory: EventFactory, json: Bool, events: Bool, color: Bool, status: Bool) {
        self.factory = factory
        self.json = json
        showEvents = events
        self.color = color
        showStatus = status
        format = LiveReport(json: json, color: color)
    }

    static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    /// One record from a follower; `cursor` for journal entries.
    func handle(_ rec: RawRecord, path: String, fileIndex: Int, cursor: String?) {
        lock.locked {
            guard var e = factory.event(from: rec, path: path, order: order + 1, fileIndex: fileIndex) else { return }
            order += 1
            e.resolveNow(Self.now())
            if showEvents { printEvent(e, cursor: cursor) }
            for change in live.feed(e) { printChange(change) }
        }
    }

    func tick() {
        lock.locked {
            for change in live.tick(now: Self.now()) { printChange(change) }
            drawStatus()
            fflush(stdout)
        }
    }

    func flush() {
        lock.locked { _ = fflush(stdout) }
    }

    func note(_ text: String) {
        lock.locked {
            clearStatus()
            fputs("castscope tail: \(Sanitize.line(text))\n", stderr)
        }
    }

    func error(_ text: String) {
        lock.locked {
            clearStatus()
            fputs("castscope: error: \(Sanitize.line(text))\n", stderr)
            failed = true
        }
    }

    func gap(from: Int64?, to: Int64?, _ text: String) {
        lock.locked {
            emit(format.gap(from: from, to: to, text))
            fputs("castscope tail: \(Sanitize.line(text))\n", stderr)
        }
    }

    // MARK: output

    private func paint(_ s: String, _ code: String) -> String { color ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }

    private func emit(_ line: String) {
        clearStatus()
        fputs((json ? line : Sanitize.terminal(line, oneLine: true, styles: color)) + "\n", stdout)
    }

    private func clearStatus() {
        if statusOnScreen {
            fputs("\r\u{1B}[K", stdout)
            statusOnScreen = false
        }
    }

    private func drawStatus() {
        guard showStatus else { return }
        clearStatus()
        let now = Self.now()
        var parts: [String] = []
        for s in live.open {
            var p = "● \(s.id) "
            if s.connectedAt == nil { p += "connecting (\(s.attempts.count) attempts)" } else { p += s.frames > 0 ? "streaming" : "connected" }
            if let start = s.start { p += " \(Fmt.duration(now - start))" }
            if s.frames > 0 { p += ", \(s.frames) frames" }
            parts.append(p)
        }
        for id in live.relayOrder {
            guard let r = live.relay[id], r.closed == nil else { continue }
            let fps = r.stats.last.map { " \(Fmt.decimal($0.fps, 1)) fps" } ?? ""
            parts.append("● relay \(id.prefix(8))\(fps)")
        }
        guard !parts.isEmpty else { return }
        fputs(Sanitize.terminal(paint(parts.joined(separator: "  "), "2"), oneLine: true, styles: color), stdout)
        statusOnScreen = true
    }

    private func printEvent(_ e: Event, cursor: String?) { emit(format.event(e, cursor: cursor)) }
    private func printChange(_ change: LiveSessions.Change) { emit(format.change(change)) }

    func summary() {
        lock.locked {
            clearStatus()
            emit(format.summary(live.sessions, relaySessions: live.relayOrder.count))
            fflush(stdout)
        }
    }
}


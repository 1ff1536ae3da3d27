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

    @Option(name: .long, help: ArgumentHelp("The format of standard input instead of detecting it.", valueName: "name"),
            completion: .list(builtinFormatNames))
    var format: String?

    @OptionGroup(title: "Colour") var colors: ColorOptions

    @Flag(name: .long, help: "Show every time in UTC instead of the phone's zone.")
    var utc = false

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Show every time in this zone: ±HH:MM or a tz name. Default: the phone's zone as its lines give it (journal times too); lines without a zone are its local time.", valueName: "zone"))
    var timezone: String?

    @OptionGroup var thresholds: ThresholdOptions

    @OptionGroup var journalOptions: JournalFilters

    // (analyze's window: taken only to say why tail has none; not in tail's help, which listed
    // them as if tail filtered by time)
    @Option(name: [.customShort("S"), .long], parsing: .unconditional, help: .hidden)
    var since: String?

    @Option(name: [.customShort("U"), .long], parsing: .unconditional, help: .hidden)
    var until: String?

    @OptionGroup var parsers: ParserOptions
    @OptionGroup var clickhouse: ClickHouseOptions

    func validate() throws {
        for i in inputs where i != "-" { throw ValidationError("tail reads journals (--directory, --file) and '-' only, got '\(i)'") }
        if noJournal && !inputs.contains("-") { throw ValidationError("--no-journal needs '-' (standard input)") }
        // (an unset shell variable: `--cursor-file ""` followed the journal, then failed at the
        // first batch with `: cannot save the cursor`)
        if cursorFile?.isEmpty == true { throw ValidationError("--cursor-file needs a file name") }

        try journalOptions.validate()
        if since != nil || until != nil {
            throw ValidationError("tail follows from now (or --from-start, --cursor-file); --since/--until are for analyze")
        }
        if utc && timezone != nil { throw ValidationError("--utc and --timezone: give one") }
        if let timezone, DisplayZone.parse(timezone) == nil {
            throw ValidationError("--timezone: '\(timezone)' is neither ±HH:MM nor a zone in \(DisplayZone.zoneDirectory)")
        }
    }

    /// What a regular file given to `--file` is when it is no journal file (nil for one, or
    /// when it cannot be read: sd-journal says why then).
    static func notAJournal(_ path: String, size: Int) -> String? {
        if size == 0 { return "an empty file, no journal (journald writes a header first): nothing to follow" }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 64)
        let n = head.withUnsafeMutableBytes { read(fd, $0.baseAddress!, 64) }
        guard n > 0 else { return nil }
        // (what the bundle walker takes a file's first bytes for)
        switch sniffContent(Array(head[..<n])) {
        case .journal: return nil
        case .gzip, .compressed: return "compressed data, not a journal file: decompress it first (castscope analyze reads it as it is)"
        default: break
        }
        return "not a journal file (no journal header): a text log is followed as standard input (castscope tail - < FILE), or read whole by castscope analyze"
    }

    /// Why `path`, when it exists, is not a cursor file `--cursor-reset` may remove (one line of
    /// at most 4 KB: what castscope writes, or a write of it that never finished). Nil when it
    /// is one, or there is no such file.
    static func notACursor(_ path: String) -> String? {
        var st = stat()
        // (through a symlink, as the cursor is read and saved)
        guard stat(path, &st) == 0 else { return nil }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return "not a regular file" }
        guard st.st_size <= 4096 else { return "\(st.st_size) bytes, not a cursor" }
        guard let source = try? FileSource(path: path), let bytes = try? readUpTo(4097, from: source) else { return "cannot be read" }
        // (a byte order mark before it and CRLF after it, as an editor saves it, are a cursor's too)
        var body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
        if body.last == 0x0A { body = body.dropLast() }
        if body.last == 0x0D { body = body.dropLast() }
        if body.contains(0x0A) { return "more than one line, not a cursor" }
        if body.contains(where: { $0 < 0x20 || $0 > 0x7E }) { return "not text, not a cursor" }
        return nil
    }

    /// Why the cursor cannot be saved at `path` (its temporary file cannot be written beside
    /// it, a cursor's worth of bytes), or nil.
    static func cursorFolderRefusal(_ path: String) -> String? {
        // A file the kernel makes (`/proc/version`, a sysfs attribute) is one short line, so it
        // passes for a cursor; its folder takes no new file, with an errno that misleads
        // ("its folder cannot be written: No such file or directory" of a folder that exists).
        if let kind = kernelFileSystem(of: path) {
            return "it is in \(kind), a file system the kernel makes, not a file castscope can save: name a file on disk"
        }
        let tmp = path + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return "its folder cannot be written: \(String(cString: strerror(errno)))" }
        let line = [UInt8](repeating: 0x2D, count: 511) + [0x0A]
        let ok = line.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) } == line.count
        let e = errno
        close(fd)
        unlink(tmp)
        return ok ? nil : "its folder cannot be written: \(String(cString: strerror(e)))"
    }

    /// `/proc` or `/sys` when `path` (or, when it does not exist, its folder) is on the file
    /// system mounted there (the same device), else nil.
    static func kernelFileSystem(of path: String) -> String? {
        var st = stat()
        let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        guard stat(path, &st) == 0 || stat(folder.isEmpty ? "/" : folder, &st) == 0 else { return nil }
        for mount in ["/proc", "/sys"] {
            var m = stat()
            if stat(mount, &m) == 0, m.st_dev == st.st_dev, (m.st_mode & S_IFMT) == S_IFDIR { return mount }
        }
        return nil
    }

    func run() throws {
        let registry = parsers.registryOrExit()
        if let format, registry.format(named: format) == nil {
            printError("--format: unknown format '\(format)'")
            Glibc.exit(2)
        }
        // A parent may have left SIGINT/SIGTERM blocked (threads inherit the mask): unblock them
        // before any thread starts, so that Ctrl-C and `kill` reach the handler below.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        // sd-journal keeps every journal file of a folder open: as journalctl does, the soft
        // open-file limit is raised to the hard one (a folder of more files than the usual 1024
        // failed with "sd_journal_get_fd: Too many open files"). castscope polls, never select().
        var files = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0, files.rlim_cur < files.rlim_max {
            files.rlim_cur = files.rlim_max
            _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files)
        }
        // The same error handling as analyze: a journal path that does not exist is one line, exit 4.
        var st = stat()
        var notJournals: [(path: String, what: String)] = []
        for (option, path) in (directory.map { [("-D", $0)] } ?? []) + file.map({ ("--file", $0) }) where !noJournal {
            if stat(path, &st) != 0 {
                printError("\(option) \(path): \(String(cString: strerror(errno)))")
                Glibc.exit(Exit.nothingRecognized)
            }
            if option == "-D" && (st.st_mode & S_IFMT) != S_IFDIR {
                printError("-D \(path): not a directory (use --file for one journal file)")
                Glibc.exit(Exit.usage)
            }
            // (it was `cdj: sd_journal_open_files: Is a directory`, exit 1, after tail began)
            if option == "--file" && (st.st_mode & S_IFMT) == S_IFDIR {
                printError("--file \(path): a directory (use -D to follow the journal files in a folder)")
                Glibc.exit(Exit.usage)
            }
            // A file that is no journal: sd-journal's errno alone (`sd_journal_open_files: Bad
            // message`, `No data available`) said neither what it is nor what to do, and the
            // journal files named with it were not followed either. Said, and the others followed.
            // (said once the outputs are known not to write over an input: that refusal first)
            if option == "--file" && (st.st_mode & S_IFMT) == S_IFREG, let what = Self.notAJournal(path, size: Int(st.st_size)) {
                notJournals.append((path, what))
            }
        }
        // Standard output onto a journal it follows, or a file in the folder it follows (`tail
        // --file x >> x` appended its summary to x), is refused as analyze refuses it.
        if let why = OutputWriter.stdoutConflict(inputs: noJournal ? [] : (directory.map { [$0] } ?? []) + file) {
            printError(why)
            Glibc.exit(Exit.usage)
        }
        // A FIFO given to `--file` is no journal (sd-journal maps its files): tail waited in its
        // open(2) without a word, and read nothing once a writer came. Its lines are read as they
        // come, as `tail -` reads standard input, after saying once that it waits for a writer.
        let fifos = noJournal ? [] : file.filter { path in
            var st = stat()
            return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO
        }
        let journalFiles = file.filter { path in !fifos.contains(path) && !notJournals.contains { $0.path == path } }
        let followsJournal = !noJournal && !(directory == nil && !file.isEmpty && journalFiles.isEmpty)
        let limits: Thresholds
        do { limits = try thresholds.resolve() } catch {
            printError("\(error)")
            Glibc.exit(Exit.usage)
        }
        let color = !json && colors.enabled()
        let zone: DisplayZone? = utc ? .fixed(0) : timezone.flatMap(DisplayZone.parse)
        let engine = TailEngine(factory: EventFactory(registry: registry), json: json, events: events, color: color,
                                status: color, zone: zone, thresholds: limits)
        // Lines reach stdout only when a batch is flushed, in one write, so that the cursor
        // file can commit the batch against it (exactly once across SIGKILL; see JournalFollower).
        if isatty(1) == 0 { setvbuf(stdout, UnsafeMutablePointer<CChar>.allocate(capacity: 4 << 20), _IOFBF, 4 << 20) }
        // The cursor file is written and removed: never a followed journal, nor inside their folder.
        let given = (directory.map { [$0] } ?? []) + file
        let followed = noJournal ? [] : given.isEmpty ? ["/var/log/journal", "/run/log/journal"] : given
        // (the definitions folder and the config file are read too: inputs, never written)
        let read = followed + parsers.readPaths + thresholds.readPaths
        // (standard input too: `--cursor-file F - < F` would replace the text being read)
        // The cursor is saved by renaming a new file over it: through a symlink, over the file it
        // names (not the link: `--cursor-file /dev/stdout` replaced /dev/stdout itself, as root),
        // and never over anything but a regular file.
        var cursorFile = self.cursorFile
        if let path = cursorFile {
            var link = stat(), st = stat()
            if lstat(path, &link) == 0 {
                guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, OutputWriter.standardStream(path) == nil else {
                    printError("--cursor-file \(path): not a regular file (a device, a pipe, standard output, a dangling link): name a file")
                    Glibc.exit(Exit.usage)
                }
                if (link.st_mode & S_IFMT) == S_IFLNK, let real = OutputWriter.realPath(path) { cursorFile = real }
            } else if OutputWriter.realPath(path) == nil {
                // (found when the first batch was saved: printed, then exit 1, and printed again by the next run)
                printError("--cursor-file \(path): its folder does not exist")
                Glibc.exit(Exit.usage)
            }
        }
        if let cursorFile, let why = OutputWriter.inputConflict(cursorFile, option: "--cursor-file", inputs: read + inputs.filter { $0 == "-" }) {
            printError("\(why)")
            Glibc.exit(Exit.usage)
        }
        if let why = clickhouse.refusal(inputs: read) {
            printError("\(why)")
            Glibc.exit(Exit.usage)
        }
        if let why = clickhouse.sharedFile([("standard output", "-")] + (cursorFile.map { [("--cursor-file", $0)] } ?? [])) {
            printError("\(why)")
            Glibc.exit(Exit.usage)
        }
        // The cursor is saved through `FILE.tmp` beside it: a folder that cannot take it
        // (read-only, full, another user's) is said now, as a missing one is (after the checks
        // above: never a file made in an input folder). It failed at the first save: a batch
        // printed, exit 1, and under Restart=always the same batch again at every start.
        if let cursorFile, let why = Self.cursorFolderRefusal(cursorFile) {
            printError("--cursor-file \(self.cursorFile ?? cursorFile): \(why)")
            Glibc.exit(Exit.usage)
        }
        if cursorReset, let cursorFile {
            // Only a cursor is removed: a mistyped path (a log, someone's notes) is not.
            if let why = Self.notACursor(cursorFile) {
                printError("--cursor-file \(cursorFile): \(why): --cursor-reset removes only a cursor file (one short line); name another file")
                Glibc.exit(Exit.usage)
            }
            unlink(cursorFile)
        }
        // One tail per cursor: two runs on one cursor file (a unit started twice, a shell's
        // run beside the service's) each printed what the other had, up to 562 entries twice,
        // and one ended on "cannot save the cursor". The cursor is replaced at every save, so
        // the lock is on a file beside it, held for the run.
        if let cursorFile, followsJournal {
            let lock = cursorFile + ".lock"
            let fd = open(lock, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0o644)
            if fd >= 0, flock(fd, LOCK_EX | LOCK_NB) != 0, errno == EWOULDBLOCK {
                printError("--cursor-file \(self.cursorFile ?? cursorFile): another castscope tail is following with it (it holds \(lock)): one tail per cursor file")
                Glibc.exit(Exit.usage)
            }
            // (held open, and locked, until the process ends; a lock file that cannot be made,
            // a read-only folder, leaves the cursor as it was: its own save says why)
        }
        for (path, what) in notJournals { printError("--file \(path): \(what)") }
        if !notJournals.isEmpty, directory == nil, file.allSatisfy({ path in notJournals.contains { $0.path == path } }), !inputs.contains("-") {
            Glibc.exit(Exit.nothingRecognized)
        }
        // (it was taken and never read nor written, without a word: two runs each printed
        // everything)
        if noJournal, cursorFile != nil, !cursorReset {
            fputs("castscope tail: --cursor-file is not used with --no-journal: it saves a journal's position, and standard input cannot be resumed\n", stderr)
        }
        if inputs.contains("-") && isatty(0) != 0 {
            fputs("castscope tail: reading standard input from the terminal (paste lines, Ctrl-D to end)\n", stderr)
        }
        let journalDone = StopFlag()
        let stdinDone = StopFlag()
        let stop = StopFlag()
        engine.clickhouse = clickhouse.live(stop: { stop.isSet })
        let fifosDone = Atomic<Int>(0)
        for (k, path) in fifos.enumerated() {
            let formatName = format
            startThread {
                defer { fifosDone.add(1, ordering: .relaxed) }
                let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
                guard fd >= 0 else { return engine.error("--file \(path): \(String(cString: strerror(errno)))") }
                defer { close(fd) }
                // (a FIFO no writer has opened yet reports nothing to poll(2): not its end)
                var said = false
                while true {
                    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    let ready = poll(&p, 1, 500)
                    if ready > 0 || (ready < 0 && errno != EINTR) { break }
                    if stop.isSet { return }
                    if ready == 0 && !said {
                        engine.note("--file \(path) is a FIFO, not a journal file, and no one writes to it yet: waiting for a writer (its lines are read as they come, as tail - reads them)")
                        said = true
                    }
                }
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
                var follower = StdinFollower(registry: registry, forced: formatName, engine: engine)
                follower.fd = fd
                follower.path = path
                follower.what = path
                follower.fileIndex = 2 + k
                follower.run()
            }
        }
        if followsJournal {
            let source: JournalFollower.Source =
                directory.map { .directory($0) } ?? (file.isEmpty ? .system : .files(journalFiles))
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
                // (the phone's lines ended: the relay's side need not wait for them any more)
                engine.phoneSideEnded()
                stdinDone.set()
            }
        }
        // Ctrl-C / SIGTERM: stop the followers, print the summary. The handler only stores
        // the signal number (async-signal-safe); this thread polls it.
        signal(SIGINT, { tailSignal.store($0, ordering: .relaxed) })
        signal(SIGTERM, { tailSignal.store($0, ordering: .relaxed) })
        // (a closed terminal or a service manager's reload: the summary and the cursor too)
        signal(SIGHUP, { tailSignal.store($0, ordering: .relaxed) })
        let readsStdin = inputs.contains("-")
        func finished() -> Bool {
            (!followsJournal || journalDone.isSet) && (!readsStdin || stdinDone.isSet) && fifosDone.load(ordering: .relaxed) == fifos.count
        }
        var waited = 0
        while tailSignal.load(ordering: .relaxed) == 0 && !finished() && !engine.outputFailed {
            usleep(20_000)
            waited += 1
            // Without a journal nobody else ticks: a phone log piped in alone never stalled.
            if !followsJournal && waited % 25 == 0 { engine.tick() }
            // An empty journal is not a hang: say what is being waited for, once.
            if waited == 150 && followsJournal && engine.handled == 0 {
                let what = directory.map { "the journal files in \($0)" } ?? (file.isEmpty ? "the system journal" : journalFiles.joined(separator: ", "))
                engine.note("no entries yet from \(what)\(fromStart ? "" : " since it started") (\(journalOptions.filter.isEmpty ? "no filter" : "filtered")); waiting, Ctrl-C to stop")
            }
        }
        stop.set()
        // The journal thread checks the flag at least every 250 ms and saves its cursor.
        for _ in 0..<150 where followsJournal && !journalDone.isSet { usleep(20_000) }
        if !engine.outputFailed { engine.summary() }
        // Standard output could not be written: one line, exit 5, as analyze ends (the cursor
        // stays at the last batch written whole, and the restart prints the rest).
        if let why = engine.outputFailure {
            printError(why)
            Glibc.exit(Exit.writeFailed)
        }
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
    /// Records handled so far (read by the main thread for the "waiting" note).
    private let handledCount = Atomic<Int>(0)
    var handled: Int { handledCount.load(ordering: .relaxed) }
    /// --utc / --timezone; else the phone's offset once a line gives it.
    private let zone: DisplayZone?
    let factory: EventFactory
    /// What the vocabulary made of each message already seen (a retry storm's two lines
    /// matched once, not per line), as `analyze`'s readers keep it; used under `lock`. Small:
    /// a relay's journal, whose every message names its session, fills it with messages never
    /// seen again (8,192 of them held 6 MB more of a tail that follows for days).
    private let interner = Interner(capacity: 512)
    private let json: Bool
    private let showEvents: Bool
    private let color: Bool
    private let showStatus: Bool
    private var order = 0
    private var statusOnScreen = false
    private(set) var failed = false
    /// Why standard output could not be written (set once; tail then stops, exit 5).
    private var writeFailure: String?
    private let writeFailed = Atomic<Bool>(false)
    var outputFailed: Bool { writeFailed.load(ordering: .acquiring) }
    var outputFailure: String? { lock.locked { writeFailure } }
    private var format: LiveReport
    /// `--clickhouse`: rows sent at each flush, acknowledged before the cursor is saved.
    var clickhouse: ClickHouseLive?

    init(factory: EventFactory, json: Bool, events: Bool, color: Bool, status: Bool, zone: DisplayZone? = nil,
         thresholds: Thresholds = Thresholds()) {
        self.zone = zone
        live.thresholds = thresholds
        self.factory = factory
        self.json = json
        showEvents = events
        self.color = color
        showStatus = status
        format = LiveReport(json: json, color: color)
        if let zone { format.zone = zone }
    }

    static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    /// One record from a follower; `cursor` for journal entries.
    func handle(_ rec: RawRecord, path: String, fileIndex: Int, cursor: String?) {
        lock.locked {
            guard var e = factory.event(from: rec, path: path, order: order + 1, fileIndex: fileIndex, interner: interner) else { return }
            order += 1
            handledCount.add(1, ordering: .relaxed)
            let wall = Self.now()
            e.resolveLive(now: wall)
            // One zone for every line: --utc/--timezone, else the phone's (journal times too).
            if let zone, let t = e.time {
                e.displayOffset = zone.offset(at: t)
            } else if e.timeFromJournal, let t = e.time {
                e.displayOffset = format.zone.offset(at: t)
            } else if e.time != nil, e.displayOffset != Fmt.unzoned, case .local = format.zone {
                format.zone = .fixed(e.displayOffset)
            }
            clickhouse?.event(e, cursor: cursor)
            if showEvents { printEvent(e, cursor: cursor) }
            for change in live.feed(e, wall: wall) { printChange(change) }
        }
    }

    func tick() {
        lock.locked {
            for change in live.tick(now: Self.now()) { printChange(change) }
            clickhouse?.tick()
            drawStatus()
            _ = flushOutput()
        }
    }

    /// Thrown by `flush` when standard output could not be written.
    struct OutputFailed: Error {}

    /// Flushes standard output (then the ClickHouse rows); throws when what was printed did not
    /// all reach it, so that the cursor is not saved past it. (fflush's result was ignored: a
    /// tail into a full disk or /dev/full saved its cursor past 39,915 lost entries and went on.)
    func flush() throws {
        let written = lock.locked { () -> Bool in
            guard flushOutput() else { return false }
            clickhouse?.flush()
            return true
        }
        if !written { throw OutputFailed() }
    }

    /// Flushes standard output under `lock`; false (and the failure kept) when a write failed.
    private func flushOutput() -> Bool {
        guard writeFailure == nil else { return false }
        if fflush(stdout) == 0 && ferror(stdout) == 0 { return true }
        outputWriteFailed(errno)
        return false
    }

    private func outputWriteFailed(_ code: Int32) {
        guard writeFailure == nil else { return }
        // (SIGPIPE ignored, as systemd units have it, and the reader gone: EPIPE, as analyze says it)
        writeFailure = "standard output: cannot write: \(String(cString: strerror(code == 0 ? EIO : code)))"
        writeFailed.store(true, ordering: .releasing)
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
        guard writeFailure == nil else { return }
        if fputs((json ? line : Sanitize.terminal(line, oneLine: true, styles: color)) + "\n", stdout) == EOF { outputWriteFailed(errno) }
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
            guard let r = live.relay[id], r.closed == nil, !live.relayNoEnd.contains(id) else { continue }
            let fps = r.stats.last.map { " \(Fmt.decimal($0.fps, 1)) fps" } ?? ""
            parts.append("● relay \(id.prefix(8))\(fps)")
        }
        guard !parts.isEmpty else { return }
        fputs(Sanitize.terminal(paint(parts.joined(separator: "  "), "2"), oneLine: true, styles: color), stdout)
        statusOnScreen = true
    }

    private func printEvent(_ e: Event, cursor: String?) { emit(format.event(e, cursor: cursor)) }
    private func printChange(_ change: LiveSessions.Change) {
        // (relay times on the phone's clock, as the latest estimate has it)
        if let c = live.clock { format.relayShift = c.offset }
        clickhouse?.change(change)
        emit(format.change(change))
    }

    /// Standard input (a phone's log) ended.
    func phoneSideEnded() { lock.locked { live.phoneSideEnded = true } }

    func summary() {
        lock.locked {
            clearStatus()
            // (sessions that ended waiting for their relay session: their findings without it)
            for change in live.finishFindings() { printChange(change) }
            emit(format.summary(live.outcomes, relaySessions: live.relaySessions, relayNoEnd: live.relayNoEndSeen, retired: live.retiredSessions, retiredOutcomes: live.retiredOutcomes))
            _ = flushOutput()
            clickhouse?.finish()
        }
    }
}


#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// Options of one analysis.
public struct AnalyzeOptions: Sendable {
    /// Read every file with this format instead of detecting one.
    public var forcedFormat: String?
    /// The date (year, month, day) for files whose lines carry no date or no year.
    public var date: (year: Int, month: Int, day: Int)?
    public var maxLineLength = 1 << 20
    /// journalctl-style matches for journal sources (`_SYSTEMD_UNIT=…`, `SYSLOG_IDENTIFIER=…`, …).
    public var filter = JournalFilter()
    /// Only events at or after / before this instant (µs since the epoch).
    public var since: Int64?
    public var until: Int64?
    /// Relay clock minus device clock (µs), instead of estimating it.
    public var clockOffset: Int64?
    public var thresholds = Thresholds()
    /// `--since` / `--until` as typed: resolved in the logs' zone once it is known (these win
    /// over `since` / `until`).
    public var sinceSpec: TimeSpec?
    public var untilSpec: TimeSpec?
    /// Render every time in this zone (`--utc`, `--timezone`) instead of the phone's.
    public var displayZone: DisplayZone?
    /// Now (µs), for logs without a year or a date and for relative `--since`; the clock by default.
    public var now: Int64?
    /// Limits on bytes, members, nesting and expansion of the bundle (hostile input).
    public var budget = Budget()

    public init() {}
}

/// What was read from one file of the bundle.
public struct InputSummary: Sendable {
    public var path: String
    public var format: String?
    public var stats = ReadStats()
    public var events = 0
    public var errors: [String] = []
    public var notes: [String] = []
    /// Lines of input `segmentOf` (its index) in another format than that file's head, read
    /// in theirs (`ForeignLines`): not a file of its own.
    public var segmentOf: Int?
}

/// The result of `castscope analyze`: inputs, sessions, and recognized lines outside them.
public struct AnalysisReport: Sendable {
    public var inputs: [InputSummary] = []
    /// The files read (an input that is a segment of a file is not one more).
    public var fileCount: Int { inputs.reduce(0) { $0 + ($1.segmentOf == nil ? 1 : 0) } }
    public var errors: [InputError] = []
    public var sessions: [Session] = []
    public var unattached = LinesOutside()
    public var eventCount = 0
    /// Every relay session; those joined to a device session also appear under it.
    public var relaySessions: RelaySessionList = []
    /// Relay clock minus device clock, when relay and device sessions could be paired.
    public var clock: ClockEstimate?
    /// Device sessions that connected but have no relay session (only when relay logs exist).
    public var orphanDeviceSessions: [String] = []
    /// What went wrong, with evidence (filled by `Findings.run`).
    public var findings: FindingList = []
    /// When the findings of sessions handed on went out with them and were not kept
    /// (`Analyzer.keepsSessionFindings` off): their counts; `findings` then holds the bundle's own.
    public var handedOnFindings: FindingTally?
    /// The zone the report is shown in (seconds east of UTC, or `Fmt.unzoned`), nil when no
    /// line had a time.
    public var displayOffset: Int?
    /// What the time model assumed (a year, a date, no zone), for the report's header.
    public var timeNotes: [String] = []
    /// The first and last event time before `--since` / `--until`, and how many recognized
    /// lines those filters removed.
    public var span: ClosedRange<Int64>?
    public var filteredOut = 0
    /// Problems that lose nothing outright but change what the report can say (a file with
    /// times read as plain text), one line each, naming the file.
    public var warnings: [String] = []
    /// When sessions were handed to a sink as they ended (`Analyzer.sessionSink`) instead of
    /// kept in `sessions`: what the report's header needs of them.
    public var streamed: SessionTally?

    /// How many sessions the bundle has (`tally.count`, without counting outcomes).
    public var sessionCount: Int { streamed?.count ?? sessions.count }

    /// How many sessions of each outcome, kept or handed on.
    public var tally: SessionTally {
        if let streamed { return streamed }
        var t = SessionTally()
        for s in sessions { t.add(s) }
        return t
    }
}

/// Per-session counters for the bundle summary: all that stays in memory of a session that
/// was handed on.
public struct SessionTally: Sendable {
    public var count = 0
    public var outcomes: [Outcome: Int] = [:]
    /// Some session has a line whose time was taken from a neighbour (Xcode print()).
    public var anyInferredTime = false
    /// Some session's extension connected (bundle rules ask this of sessions handed on).
    public var anyConnected = false
    /// What the bundle's rules read of the sessions' lines, kept for sessions handed on: the
    /// processes they hold lines of (`app-crashed`: a crash report of the host app), and the
    /// daemon deaths that fell within one (`daemon-died`). A set of names and a few lines,
    /// not the sessions: before session 43 a sysdiagnose's host-app crash report was no
    /// finding in the report written as sessions ended (the default), only with `--session`.
    public var processes: Set<String> = []
    public var daemonDeaths: [Event] = []

    public init() {}

    public mutating func add(_ s: Session) {
        count += 1
        outcomes[s.outcome, default: 0] += 1
        if !anyInferredTime, s.events.contains(where: \.timeInferred) { anyInferredTime = true }
        if s.connected { anyConnected = true }
        s.forEachProcess { processes.insert($0) }
        s.forEachLine(DaemonDiedRule.lineKinds) { daemonDeaths.append($0) }
    }
}

extension Session {
    /// The session's process and each process its lines name, as often as named (the caller
    /// keeps a set).
    func forEachProcess(_ body: (String) -> Void) {
        if let p = process { body(p) }
        var last: String?
        for i in events.indices {
            guard let p = events[i].process, p != last else { continue }
            body(p)
            last = p
        }
    }

    /// Each of its lines of the kinds `codes`, in order (one pass for all of them).
    func forEachLine(_ codes: KindSet, _ body: (Event) -> Void) {
        for i in events.indices where codes.contains(events[i].code) { body(events[i]) }
    }
}

/// The whole pipeline: input → records → events → sessions.
public final class Analyzer {
    public let registry: ParserRegistry
    public let options: AnalyzeOptions
    let matcher: EventMatcher
    let detector: FormatDetector
    let prefilter: Prefilter
    /// Called now and then while reading: files finished, bytes read so far (for a progress line).
    public var progress: ((Int, UInt64) -> Void)?
    /// Text files on disk at least this big are read in ranges, `parallelism` at once.
    public var parallelThreshold: UInt64 = 32 << 20
    /// Ranges per thread (each at least `minimumRange` bytes): threads that finish early take
    /// the next range, so one core slowed by its neighbours does not hold up the whole file,
    /// and the last range to finish is short.
    public var rangesPerThread = 16
    public var minimumRange: UInt64 = 8 << 20
    /// A file streamed while it is read (`StreamedRead`) is cut in ranges at most this big;
    /// one read by a single reader (gzip) hands its events on this many at a time.
    public var maximumStreamedRange: UInt64 = 16 << 20
    /// ... and smaller where its recognized lines are dense: about this many events a range
    /// (a range's events are what waits while sessions are built; `rangeBytes`). Half as
    /// many made a dense bundle's ranges twice as many, for 0.8 % more instructions.
    public var streamedRangeEvents = 8_192
    /// Nor smaller than this. Up to seven ranges are read or waiting at once (four read ahead,
    /// two in the pipe, one being built): with a megabyte at least, a log of nothing but
    /// extension lines (11,000 events a megabyte) held 16 MB of them (5,000 sessions open at
    /// once, `make-shape-input.py churn`).
    public var minimumStreamedRange: UInt64 = 256 << 10
    public var streamedBatchEvents = 16_384
    /// The bytes of ranges read ahead of the one to hand on: as many of the largest range as
    /// this holds (but two a thread at most, and one a thread at least).
    public var aheadBytes: UInt64 = 16 << 20
    /// Lines a streamed read holds for earlier ones before it gives up (`StreamedRead.mostHeld`).
    public var streamedMostHeld = 1 << 17
    public var parallelism = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    /// Inputs held in memory, by the name they are given as paths (fuzzing, tests).
    public var memoryInputs: [String: [UInt8]] = [:]
    /// Receives each session with its findings as soon as it is complete, in id order, when
    /// the bundle has no relay lines (the join needs every session): the report then keeps
    /// only `streamed` counters and the findings, not the sessions.
    public var sessionSink: SessionSink?
    /// A `sessionSink` that takes each session as it is (nothing prepared).
    public var onSession: ((Session, [Finding]) -> Void)? {
        get { sessionSink.map { sink in { s, f in sink.take(s, f, nil) } } }
        set { sessionSink = newValue.map { body in SessionSink(take: { s, f, _ in body(s, f) }) } }
    }
    /// Threads that finish the sessions handed on (`SessionSink.prepare`), several at once.
    public lazy var sessionFinishers = min(2, parallelism)
    /// Called before the first session is handed to the sink, with the report so far
    /// (inputs, errors, zone).
    public var willStreamSessions: ((AnalysisReport) -> Void)?
    /// With a sink for the sessions (and not streamed while read), the bundle's events are
    /// written out of memory (`HeldEvents`) once this many are held (0: never), and from then
    /// on every `heldBatchEvents`. Below it a bundle stays in memory, which is faster (a
    /// dense 256 MB log holds about 120,000 events, 25 MB).
    public var holdsEventsAfter = 1 << 17
    var heldBatchEvents = 1 << 15
    /// Or earlier (and between those batches), once the process is past this many megabytes
    /// resident: looked at every `heldBatchEvents` lines read.
    var holdsPastMegabytes = 40
    /// Events per chunk and per run block of those held (`HeldEvents`).
    var heldChunkEvents = 1 << 13
    var heldBlockEvents = 1 << 10
    /// Runs of held events merged at once (more are merged in groups first).
    var heldFanIn = 32
    /// Log time after which a silent, superseded open session is closed (`SessionStream.idleHorizon`).
    public var idleHorizon: Int64 = 60_000_000
    /// Sessions waiting for the thread that finishes them (findings, report bytes).
    public var sessionPipeCapacity = 64
    /// Whether the findings of sessions handed to `sessionSink` are kept in the report too; off,
    /// only their counts are (`AnalysisReport.handedOnFindings`), and the sink must write them.
    public var keepsSessionFindings = true

    public init(registry: ParserRegistry, options: AnalyzeOptions = AnalyzeOptions()) throws {
        if let name = options.forcedFormat, registry.format(named: name) == nil {
            throw LogFormat.DefinitionError(
                origin: "--format", message: "unknown format '\(name)' (known: \(registry.formats.map(\.name).joined(separator: ", ")))")
        }
        self.registry = registry
        self.options = options
        matcher = EventMatcher(vocabularies: registry.vocabularies)
        detector = FormatDetector(formats: registry.formats)
        prefilter = matcher.prefilter
    }

    /// Per-file facts the time resolution needs.
    struct FileTimes {
        var firstComplete: ParsedTime?
        var eventRange: Range<Int>
        /// Files of one family (journald renderings, or Apple's) come from one machine: a file
        /// without a zone or year takes them from its own family first.
        var family = "apple"
    }

    /// How the last `analyze` read its bundle.
    public enum ReadMode: Equatable, Sendable {
        /// Every line read first, then sessions built.
        case whole
        /// Sessions built while the one big file was read (`StreamedRead`).
        case streamed
        /// Tried, given up for this reason, and read again the whole way.
        case readAgain(String)
    }
    public private(set) var lastReadMode = ReadMode.whole
    /// How many of the last analysis's events were held on disk (`holdsEventsAfter`).
    public private(set) var lastHeldEvents = 0
    /// The most events the last analysis kept in memory after a text file's part was taken
    /// (`holdIfMany(keeping:)`, while reading): what its held lines' memory follows.
    public private(set) var lastMostEventsKept = 0
    /// Big text files of the last analysis read by one reader where ranges would have been
    /// slower (`readsWhole`).
    public private(set) var lastReadByOneReader: [String] = []
    /// Journal files of the last analysis read as stretches on parallel threads, and those
    /// read again by one reader after a stretch met damage.
    public private(set) var journalsInStretches = (read: 0, readAgain: 0)
    /// Whether a bundle that is one big text file may be streamed while it is read (when
    /// sessions are handed on; `readsAsItGoes`); it is read a second time when that fails, so
    /// a sink must accept `willStreamSessions` again, as a new start.
    public var streamsWhileReading = true
    /// True while sessions are handed on from a read that may still give up and start over
    /// (`willStreamSessions` is then called again): a sink that cannot take back what it
    /// wrote (ClickHouse) keeps it until the analysis is final.
    public private(set) var readingAsItGoes = false
    /// Whether relay lines go to their sessions as they are read and leave memory when those
    /// close (`RelayStage`); off, they are held to the end as the phone's are (tests compare).
    public var spillsRelayLines = true
    /// Journal files read again by one reader after a stretch met damage (`run` is then done
    /// again when the relay stage had taken their lines).
    private var readByOneReader = Set<String>()

    public func analyze(_ paths: [String]) -> AnalysisReport {
        lastReadMode = .whole
        journalsInStretches = (0, 0)
        if readsAsItGoes(paths) {
            let streamed = StreamedRead(
                stage: SessionStage(idleHorizon: idleHorizon, thresholds: options.thresholds, capacity: sessionPipeCapacity,
                                    sink: sessionSink, finishers: sessionFinishers, keepsFindings: keepsSessionFindings),
                date: options.date, today: today, zone: options.displayZone
            ) { [willStreamSessions] path in
                var partial = AnalysisReport()
                partial.inputs = [InputSummary(path: path)]
                willStreamSessions?(partial)
            }
            streamed.mostHeld = streamedMostHeld
            readingAsItGoes = true
            let made = run(paths, streamed: streamed)
            readingAsItGoes = false
            if let report = made {
                lastReadMode = .streamed
                return report
            }
            lastReadMode = .readAgain(streamed.abandoned ?? "")
            Stages.mark("given up: \(streamed.abandoned ?? "")")
        }
        readByOneReader = []
        while true {
            if let report = run(paths, streamed: nil) { return report }
            Stages.mark("read again: a journal read in stretches was damaged")
            journalsInStretches.read = 0
        }
    }

    /// A bundle that is one file on disk of 4 MB or more (or a folder holding only it) whose
    /// first bytes say text or gzip of text, with a sink for its sessions, two threads or more,
    /// and no time window (the window needs the report's zone).
    func readsAsItGoes(_ paths: [String]) -> Bool {
        guard streamsWhileReading, sessionSink != nil, paths.count == 1, paths[0] != "-", memoryInputs.isEmpty,
            parallelism > 1, options.since == nil, options.until == nil, options.sinceSpec == nil, options.untilSpec == nil
        else { return false }
        // A folder holding just that file (a ticket's folder with its one log) is the same.
        let path = Self.onlyFile(in: paths[0]) ?? paths[0]
        guard let size = fileSize(path), size >= min(parallelThreshold, 4 << 20), !path.hasSuffix(".ips") else { return false }
        // Text, or gzip of text; not an archive or a journal (those are read another way:
        // trying would only cost a second read).
        guard let source = try? RangeFileSource(path: path, from: 0, to: size),
            let head = try? readUpTo(BundleWalker.headBytes, from: source)
        else { return false }
        // (docker compose output and Markdown notes are read by one reader, through their own source)
        switch sniff(head) {
        case .text: return !BundleWalker.readsThroughOwnSource(path: path, head: head)
        case .gzip:
            guard let inflated = try? GzipSource(input: PrefixedSource(prefix: head, rest: source), path: path),
                let inner = try? readUpTo(BundleWalker.headBytes, from: inflated)
            else { return false }
            return sniff(inner) == .text && !BundleWalker.readsThroughOwnSource(path: path, head: inner)
        default: return false
        }
    }

    /// The one file a folder holds (names starting with a dot are not read), or nil: a folder
    /// with anything else in it, or an Apple log archive.
    static func onlyFile(in folder: String) -> String? {
        var st = stat()
        guard stat(folder, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, !isLogArchiveFolder(folder),
            let dir = opendir(folder)
        else { return nil }
        defer { closedir(dir) }
        var found: String?
        while let ent = readdir(dir) {
            let name = withUnsafeBytes(of: ent.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name.hasPrefix(".") { continue }
            guard found == nil else { return nil }
            found = folder.hasSuffix("/") ? folder + name : folder + "/" + name
        }
        return found
    }

    /// A relay `stats` line the relay stage takes as it is read (its time complete: year and
    /// zone) counts for this much of an event in the samples: in a range it folds into its
    /// session's run (its time, line and counts, ~24 bytes, against ~200 for an event). A 16 KB
    /// sample of a relay with thousands of sessions open has each of its lines from another
    /// session, so it folds nothing there; counted whole, such a relay was read in
    /// ranges of 870 KB (5,000 open), each holding one or two lines of every open session:
    /// every line was an event of its own in its range, made whole (text, attributes) and
    /// folded only when the ranges were joined, on one thread, and two threads took twice the
    /// time of one (issue 15).
    static let relayStatsShare = 8

    /// Sixteen 16 KB samples spread over the file (a log's busy hours may be anywhere): what each
    /// would hold in a range (its events, a relay `stats` line `1 / relayStatsShare` of one),
    /// and whether any held relay lines. Empty for a file too small to sample.
    func sampled(_ context: ReadContext, diskPath: String, path: String, size: UInt64, format: LogFormat) -> Sampled {
        let window = Self.sampleWindow, samples = UInt64(Self.samples)
        var s = Sampled()
        guard size > samples * window else { return s }
        for k in 0..<samples {
            let from = (size - window) / (samples - 1) * k
            guard let source = try? RangeFileSource(path: diskPath, from: from, to: from + window) else {
                s.held.append(0)
                continue
            }
            let sample = context.read(source, path: path, format: format, adapts: false, onRecord: nil)
            var stats = 0
            /// Lines of each session's held `stats` runs in this sample (a run breaks where
            /// another line of its session comes between: counted by session, not by run).
            var perSession: [String: Int] = [:]
            for i in sample.events.indices {
                s.lines += sample.events[i].count
                guard sample.events[i].side == .relay else { continue }
                s.relay = true
                guard sample.events[i].code == .relayStats else { continue }
                // (taken by the relay stage as they are read: a year-less line is held with the
                // bundle's lines to the end, and bigger ranges held more of them: 64 -> 70-83 MB
                // for `journalctl -o short-precise` of 5,000 sessions open, 256 MB)
                if spillsRelayLines && RelayStage.takes(sample.events[i]) {
                    stats += 1
                } else {
                    s.heldStatsLines += sample.events[i].count
                    perSession[sample.events[i].attr("session") ?? "", default: 0] += sample.events[i].count
                }
            }
            for (_, c) in perSession { s.heldStatsSquares += c * c }
            s.held.append(sample.events.count - stats + (stats + Self.relayStatsShare - 1) / Self.relayStatsShare)
        }
        return s
    }

    /// What the samples of a big text file hold (`sampled`).
    struct Sampled {
        /// Each sample's events as a range holds them (a stats line taken as it is read a share of one).
        var held: [Int] = []
        /// Any relay line.
        var relay = false
        /// Lines of the samples' events (a folded run counts its lines).
        var lines = 0
        /// Relay `stats` lines held with the bundle's lines (not taken by the relay stage:
        /// year-less), and the sum over the samples of each session's lines there, squared.
        var heldStatsLines = 0, heldStatsSquares = 0

        /// About how many relay sessions are open at once, from how seldom two `stats` lines of
        /// a sample were one session's: n lines spread over m open sessions meet one of them
        /// twice about n²/2m times. Nil without such lines.
        var openRelaySessions: Int? {
            guard heldStatsLines > 0 else { return nil }
            // pairs of lines of one session in one sample: Σ c(c−1)/2
            // (none seen counts as one: a few lines a sample that never meet are no evidence of
            // thousands open, a relay host's journal with one session's line now and then)
            let pairs = max(1, (heldStatsSquares - heldStatsLines) / 2)
            // Σ n²/2 over the samples is about (Σ n)² / 2 / samples when they are alike.
            let n = Double(heldStatsLines) / Double(max(1, held.count))
            return Int(min(Double(Int.max / 2), n * n / 2 * Double(held.count) / Double(pairs)))
        }
    }
    static let sampleWindow: UInt64 = 16 << 10
    static let samples = 16

    /// Whether a big file is better read by one reader than in ranges: most of its lines are
    /// relay `stats` lines held with the bundle's (year-less) and so many sessions are open that
    /// a range would hold fewer than four lines of each. Each range then starts a piece of
    /// every open session's run, and the pieces are joined on one thread as the ranges are
    /// taken: `journalctl -o short-precise` of a relay with 5,000 sessions open (64 MB) took
    /// 2.0 s and 2.9 s of CPU on two threads, 1.5 s and 1.4 s on one, and 5 MB less memory.
    /// With 500 open, two threads are faster (0.75 s against 1.0 s), and so they stay.
    func readsWhole(_ s: Sampled) -> Bool {
        guard 2 * s.heldStatsLines >= s.lines, let open = s.openRelaySessions else { return false }
        // Lines in a range: `streamedRangeEvents` events, each of these lines one of them.
        let heldEvents = max(1, s.held.reduce(0, +))
        let rangeLines = streamedRangeEvents * s.lines / heldEvents
        if Stages.enabled {
            Stages.mark("samples: \(s.heldStatsLines) of \(s.lines) lines held relay stats, ~\(open) sessions open, \(rangeLines) lines a range")
        }
        return open >= rangeLines / 4
    }

    /// The bytes of a range that holds about `streamedRangeEvents` where a sample's window
    /// holds `held` events: `maximumStreamedRange`, or less where recognized lines are dense
    /// (the ranges read and waiting are what is held: a log of nothing but extension lines,
    /// 600,000 sessions in 293 MB, peaked at 144 MB with 16 MB ranges, 59 MB so).
    func rangeBytes(held: Int) -> UInt64 {
        guard held > 0 else { return maximumStreamedRange }
        let bytes = UInt64(streamedRangeEvents) * Self.sampleWindow / UInt64(held)
        return min(maximumStreamedRange, max(minimumStreamedRange, bytes))
    }

    /// Where a big file streamed or held on disk is cut (the offsets the ranges after the first
    /// start near): each range as big as the densest of the two samples around where it starts
    /// allows (`rangeBytes`), so that a burst (a relay restarted, thousands of sessions accepted
    /// at once in its first megabytes) gets small ranges and the rest of the file ranges as big
    /// as its own density allows, none bigger than `most` (the threads' share). (Sized by the
    /// densest sample of the file, a relay log with 5,000 sessions open was cut in 870 KB ranges
    /// for its first 4 MB of accepts.)
    func rangeTargets(held: [Int], size: UInt64, most: UInt64 = .max) -> [UInt64] {
        guard held.count > 1, size > Self.sampleWindow * UInt64(held.count) else { return [] }
        let step = (size - Self.sampleWindow) / UInt64(held.count - 1)
        var targets: [UInt64] = []
        var at: UInt64 = 0
        while true {
            let k = min(held.count - 2, Int(at / step))
            at += max(1, min(most, rangeBytes(held: max(held[k], held[k + 1]))))
            guard at < size else { return targets }
            targets.append(at)
        }
    }

    /// How many parts a big file on disk is read in (text ranges, journal stretches): at least
    /// one per thread, up to `rangesPerThread` per thread, each at least `minimumRange` bytes.
    func parts(ofFileSized size: UInt64) -> Int {
        max(parallelism, min(parallelism * rangesPerThread, Int(size / minimumRange)))
    }

    /// One read of the bundle; nil when `streamed` gave up.
    private func run(_ paths: [String], streamed: StreamedRead?) -> AnalysisReport? {
        var report = AnalysisReport()
        var events: [Event] = []
        var files: [FileTimes] = []
        var order = 0
        /// Events taken by `absorbPart`, counted one by one (`Repeats.readSeq`).
        var eventsRead = 0
        var bytesDone: UInt64 = 0
        var recordCount = 0
        let progress = self.progress
        let factory = EventFactory(matcher: matcher)
        /// A record the vocabulary recognizes becomes an event.
        var journalCompactor = EventCompactor()
        let journalInterner = Interner()
        // Relay lines whose times need nothing from the bundle go to their sessions as they are
        // read, and leave memory as those close (not when streaming: that gives up on them).
        let relayStage = streamed == nil && spillsRelayLines
            ? RelayStage(windowed: options.since != nil || options.until != nil || options.sinceSpec != nil || options.untilSpec != nil)
            : nil
        /// A journal read in stretches met damage after the relay stage took its lines: this
        /// read is dropped and the bundle read again, that file by one reader.
        var readAgainWhole = false
        // A big bundle whose sessions go to a sink is held on disk as it is read, a chunk of
        // events at a time (`HeldEvents`), instead of in `events`; positions in the bundle's
        // events (`FileTimes.eventRange`) count those written out (`heldCount`) first.
        var heldEvents: HeldEvents?
        var mayHold = streamed == nil && sessionSink != nil && holdsEventsAfter > 0
        /// While a journal is read in stretches (its events may be taken back).
        var holdPaused = false
        var mostEventsKept = 0
        lastReadByOneReader = []
        /// A line with a time was written out by `holdIfMany(keeping:)`.
        var timedHeld = false
        var residentCheckedAt = 0
        /// Lines the events read so far stand for (a folded run counts its lines).
        var linesTaken = 0
        var heldCount: Int { heldEvents?.count ?? 0 }
        var position: Int { heldCount + events.count }
        /// Writes the events read so far out of memory once there are enough of them; called
        /// where no compactor points into `events`.
        func holdIfMany() {
            guard holdsNow(events.count) else { return }
            heldEvents!.write(events)
            events = []
        }
        /// Whether the first `n` events are to be written out now (the held file is then open).
        func holdsNow(_ n: Int) -> Bool {
            guard mayHold, !holdPaused else { return false }
            if n < (heldEvents == nil ? holdsEventsAfter : heldBatchEvents) {
                // Events that each carry a text of their own (a counter in every line, a relay's
                // attributes) weigh ~500 bytes to 1 KB, not ~200, and a folded run (a relay
                // session's stats lines, their times and numbers) one line's worth each: held
                // early, and between batches, once the process is past `holdsPastMegabytes`
                // resident, looked at once per `heldBatchEvents` lines. (Counted in events and
                // only before the first batch, a year-less relay text's 30,000 runs of 20 MB
                // stayed in memory, 62 MB, and 100 MB of it peaked at 79 MB, 256 MB at 87–141.)
                guard linesTaken >= residentCheckedAt + heldBatchEvents else { return false }
                residentCheckedAt = linesTaken
                guard let mb = Resident.megabytes(), mb > holdsPastMegabytes else { return false }
            }
            if heldEvents == nil {
                heldEvents = HeldEvents(chunkSize: heldChunkEvents, blockSize: heldBlockEvents, fanIn: heldFanIn)
                if heldEvents == nil { mayHold = false; return false }
            }
            return true
        }
        /// The same while relay stats runs of the file being read are open (`runs` points into
        /// `events`): the events before the first line an open run holds are written out, the
        /// rest stay, and the runs are moved to their new places. (A relay's year-less text, held
        /// with the phone's lines, always has a run open: every line of 100 MB of
        /// `journalctl -o short-precise` stayed in memory, 337 MB, until the file ended.)
        ///
        /// The oldest open run kept every line after it: a relay's year-less text with 5,000
        /// sessions open held the lines of the sessions closed since it began as well, ~30,000
        /// events where the open runs are ~5,000 (74 MB resident at 64 MB, 79 at 256, where the
        /// same text with a year is 60). When the open runs are fewer than the lines after the
        /// first of them, they are moved behind those lines (`EventCompactor.moveOpenRunsBack`),
        /// and all before them written out; not while no line with a time went before the first
        /// (the first timed line in reading order decides the report's zone).
        func holdIfMany(keeping runs: inout EventCompactor) {
            guard let first = runs.firstOpen else { return holdIfMany() }
            var cut = first
            let open = events.count - first
            if open > 2 * runs.openCount, runs.openCount <= EventCompactor.maxMovedRuns,
                holdsNow(events.count - runs.openCount),
                timedHeld || events[..<first].contains(where: { $0.parsedTime != nil })
            {
                cut = runs.moveOpenRunsBack(in: &events) ?? first
            }
            guard cut > first || holdsNow(first) else { return }
            if cut > 0 && !timedHeld { timedHeld = events[..<cut].contains(where: { $0.parsedTime != nil }) }
            heldEvents!.write(Array(events[..<cut]))
            events.removeFirst(cut)
            runs.moveBack(by: cut)
        }
        func recognize(_ rec: inout RawRecord, _ path: String, _ fileIndex: Int) {
            let before = events.count
            if factory.add(&rec, path: path, order: order + 1, fileIndex: fileIndex, interner: journalInterner,
                           compactor: &journalCompactor, to: &events)
            {
                order += 1
                linesTaken += 1
                if let relayStage, events.count > before, RelayStage.takes(events[before]) {
                    let e = events.removeLast()
                    journalCompactor.taken(session: e.attr("session")!)
                    relayStage.add(e)
                }
            }
        }
        /// Adds what the readers of one file found (one reader, or one per range in order).
        /// One text file's results, taken part by part in file order (a big file's ranges are
        /// taken as they finish, so that only the ranges still being read are held apart).
        struct FileAbsorb {
            var summary: InputSummary
            var first: Int
            var lineOffset = 0
            var firstComplete: ParsedTime?
            /// Lines its events stand for.
            var lines = 0
            /// Relay `stats` runs open at the end of the parts taken so far.
            var runs = EventCompactor()
            /// Its recognized lines are counted against the budget here, part by part in file
            /// order (ranges read in parallel only stop once it is spent; one reader stops within
            /// 1,024 lines past it).
            var budget: EventBudget?
            /// Its parts are ranges read on several threads, each its own lines' counts: a
            /// range past the budget is read only until its reader notices.
            var rangesReadAhead = false
            /// Lines of another format met so far, to be read in theirs after the file.
            var foreign: ForeignLines?
            /// A segment (lines of another format set aside while a file was read): where its
            /// lines are in the file.
            var segment: ForeignLines?
            /// The file's line number of a line of these parts.
            func fileLine(_ line: Int) -> Int { segment.map { $0.fileLine(line + lineOffset) } ?? line + lineOffset }
            /// `order` as the file began: its events' places are this plus their line numbers.
            var orderBase = 0
        }
        func beginFile(path: String, format: LogFormat) -> FileAbsorb {
            var summary = InputSummary(path: path)
            summary.format = format.name
            var f = FileAbsorb(summary: summary, first: position)
            f.orderBase = order
            return f
        }
        func absorbPart(_ part: consuming TextResult, fileIndex: Int, into f: inout FileAbsorb) {
            f.firstComplete = f.firstComplete ?? part.firstComplete
            let lineOffset = f.lineOffset
            var mine: [Event] = []
            swap(&mine, &part.events)
            // Updated in place and moved over (`for e in` would copy each event).
            let segment = f.segment
            for i in mine.indices {
                mine[i].fileIndex = fileIndex
                if let segment {
                    mine[i].line = segment.fileLine(mine[i].line)
                    if let r = mine[i].repeats { r.lines.update { Int32(segment.fileLine(Int($0))) } }
                } else {
                    mine[i].line += lineOffset
                    if let r = mine[i].repeats, lineOffset != 0 { r.lines.update { $0 + Int32(lineOffset) } }
                }
                // A place in reading order that follows the line numbers (one more than the
                // last where they do not: lines set aside and read after the file): a run
                // folded as its session is built then keeps no place per line
                // (`Repeats.orders`), however many unrecognized or reader-folded lines lie
                // between its lines. Its count of events read tells runs the reader's parts
                // cut whether nothing was read between them (`SessionBuilder.joinCutRun`).
                order = max(order + 1, f.orderBase + mine[i].line)
                mine[i].order = order
                eventsRead += 1
                mine[i].repeats?.readSeq = eventsRead
            }
            /// The whole range lies past the budget's last line: what its reader saw before it
            /// noticed (its records, lines, problems, lines of another format) is not counted
            /// either. (It depends on when the reader looked: 512 MB of extension lines over the
            /// budget said 4,006,140 to 4,012,345 records from one run to the next.) One
            /// reader's parts are not so: its last carries the whole file's counts.
            let pastBudget = f.rangesReadAhead && f.budget?.spent == true
            if let other = part.foreign, !pastBudget {
                if f.foreign == nil && f.segment == nil && lineOffset == 0 {
                    f.foreign = other
                } else {
                    if f.foreign == nil { f.foreign = ForeignLines() }
                    f.foreign!.append(other) { [f] in f.fileLine($0) }
                }
            }
            if let budget = f.budget {
                // Past the budget, in file order: one error at the first line not analyzed, and
                // nothing after it (the ranges still being read are later in the file).
                if budget.spent {
                    mine = []
                } else {
                    var leftOut: Int?
                    let room = budget.limit - f.lines
                    if Self.lineCount(mine) > room {
                        // The first line left out is the part's (room + 1)-th line in file order:
                        // a relay `stats` run takes its session's later lines past other events,
                        // so the list's order is not the file's.
                        var numbers: [Int] = []
                        for i in mine.indices {
                            Event.forEachTimeAndLine(repeats: mine[i].repeats, time: nil, line: mine[i].line) { _, l in numbers.append(l) }
                        }
                        numbers.sort()
                        let first = numbers[max(0, room)]
                        leftOut = first
                        // What is before it stays (a run, its lines before it: they ascend).
                        var kept: [Event] = []
                        for i in mine.indices where mine[i].line < first {
                            var before = 0
                            Event.forEachTimeAndLine(repeats: mine[i].repeats, time: nil, line: mine[i].line) { _, l in
                                if l < first { before += 1 }
                            }
                            kept.append(before < mine[i].count ? mine[i].keepingFirst(before) : mine[i])
                        }
                        mine = kept
                    }
                    if let leftOut {
                        let e = budget.error(path: f.summary.path, line: leftOut)
                        f.summary.errors.append(e.description)
                        report.errors.append(e)
                        budget.spend()
                    }
                }
            }
            let lines = Self.lineCount(mine)
            f.lines += lines
            linesTaken += lines
            if let streamed {
                // Moved into the batch: the thread that takes it would otherwise find the list
                // shared (until `mine` here is let go) and copy every event of it to change it.
                streamed.put(StreamedRead.Batch(events: consume mine, firstComplete: part.firstComplete, fileIndex: fileIndex,
                                                path: f.summary.path))
            } else if f.runs.isEmpty && !mine.contains(where: { $0.side == .relay }) {
                if events.isEmpty { events = mine } else { events.append(contentsOf: mine) }
            } else {
                // A relay stats run cut by the parts' bounds is joined again.
                mine.drain { e in
                    if let relayStage, RelayStage.takes(e) { relayStage.add(e) } else { f.runs.absorb(e, into: &events) }
                }
                // A relay's thousands of open sessions grow and free their runs' columns on
                // every thread: the freed blocks' pages go back once the process is past 32 MB
                // (a year-less relay log with 5,000 open, read in ranges of megabytes, kept 14 MB
                // more of them).
                FreedMemory.watch()
            }
            mine = []
            bytesDone += part.consumed
            if pastBudget { return }
            let st = part.stats
            f.summary.stats.lines += st.lines
            f.summary.stats.records += st.records
            f.summary.stats.unparsed += st.unparsed
            f.summary.stats.skipped += st.skipped
            f.summary.stats.inferredTimes += st.inferredTimes
            f.summary.stats.swappedDayMonth += st.swappedDayMonth
            f.summary.stats.invalidUTF8Lines += st.invalidUTF8Lines
            for l in st.firstUnparsed where f.summary.stats.firstUnparsed.count < 5 { f.summary.stats.firstUnparsed.append(f.fileLine(l)) }
            if f.summary.stats.firstInvalidUTF8 == nil, let l = st.firstInvalidUTF8 { f.summary.stats.firstInvalidUTF8 = f.fileLine(l) }
            for var p in part.problems {
                p.line = p.line.map { [f] in f.fileLine($0) }
                f.summary.errors.append(p.description)
                report.errors.append(p)
            }
            f.lineOffset += part.lineCount
            holdIfMany(keeping: &f.runs)
            mostEventsKept = max(mostEventsKept, events.count)
        }
        func finishFile(_ f: FileAbsorb, path: String, format: LogFormat, fileIndex: Int) {
            var summary = f.summary
            let first = f.first
            let firstComplete = f.firstComplete
            if let e = summary.stats.invalidUTF8Error(path: path) {
                summary.errors.append(e.description)
                report.errors.append(e)
            }
            if let note = plainNotes[fileIndex] {
                summary.notes.append(note)
                report.warnings.append("\(path): \(note)")
            }
            if summary.stats.swappedDayMonth > 0 {
                let n = summary.stats.swappedDayMonth
                summary.notes.append(n == 1 ? "1 timestamp written yyyy-dd-MM was read with day and month swapped"
                                     : "\(n) timestamps written yyyy-dd-MM were read with day and month swapped")
            }
            summary.events = f.lines
            report.inputs.append(summary)
            files.append(FileTimes(firstComplete: firstComplete, eventRange: first..<position,
                                   family: format.name.hasPrefix("journal") ? "journal" : "apple"))
            progress?(report.inputs.count, bytesDone)
            holdIfMany()
        }

        /// The format of a file from its first bytes, or an error already recorded.
        /// Files read as `plain` although most of their lines start with a timestamp; files whose
        /// long lines a pager cut (`ChoppedLines`).
        var plainNotes: [Int: String] = [:]
        func formatOf(_ head: [UInt8], path: String, fileIndex: Int) -> LogFormat? {
            // (detected once: a second detection for the note was half of a small file's cost,
            // 10,000 files took 31 times the same bytes in one)
            var detectedFormat: LogFormat?
            defer {
                if self.options.forcedFormat == nil, detectedFormat?.kind == .plain,
                    let note = head.withUnsafeBytes({ FormatDetector.plainFallbackNote(head: $0) })
                {
                    plainNotes[fileIndex] = note
                } else if let note = head.withUnsafeBytes({ ChoppedLines.note(head: $0) }) {
                    plainNotes[fileIndex] = note
                }
            }
            if self.options.forcedFormat == nil, OwnReports.begins(head) {
                var summary = InputSummary(path: path)
                summary.notes.append(OwnReports.note)
                report.inputs.append(summary)
                files.append(FileTimes(firstComplete: nil, eventRange: position..<position))
                return nil
            }
            let format: LogFormat
            if let forced = self.options.forcedFormat {
                format = self.registry.format(named: forced)!
            } else {
                guard let detected = head.withUnsafeBytes({ self.detector.detect(head: $0) }) else { return nil }
                format = detected.format
                detectedFormat = format
            }
            // NUL bytes mean a binary file, except in the export format's binary-safe fields; a
            // stray one in lines of a log format (a crash's zero-filled block) does not.
            if format.kind != .journalExport, let nul = FormatDetector.binaryAt(head, format: format) {
                let e = InputError(path: path, offset: UInt64(nul), "binary file (NUL byte), not a log: skipped")
                var summary = InputSummary(path: path)
                summary.errors.append(e.message)
                report.errors.append(e)
                report.inputs.append(summary)
                files.append(FileTimes(firstComplete: nil, eventRange: position..<position))
                return nil
            }
            return format
        }

        let context = ReadContext(factory: factory, prefilter: prefilter, filter: options.filter,
                                  maxLineLength: options.maxLineLength,
                                  foreign: options.forcedFormat == nil ? ForeignFormats(registry.formats) : nil)
        /// Reads one text stream with `format` as the next input: a file, or the segment of a
        /// file whose lines `segment` set aside. The lines of yet another format it meets.
        func readText(_ source: ByteSource, path: String, format: LogFormat, adapts: Bool, segment: ForeignLines? = nil,
                      context: ReadContext) -> ForeignLines?
        {
            let fileIndex = report.inputs.count
            // Streamed, the events are taken a batch at a time as they are read.
            var file = beginFile(path: path, format: format)
            file.segment = segment
            // The reader stops within 1,024 lines past the budget; its parts are cut at the
            // budget's line here, as a file read in ranges is.
            file.budget = EventBudget(limit: self.options.budget.maxEventsPerFile)
            let result = context.read(source, path: path, format: format, adapts: adapts,
                                      budget: file.budget,
                                      cutEvery: streamed == nil && !mayHold ? 0 : self.streamedBatchEvents,
                                      onPart: { absorbPart($0, fileIndex: fileIndex, into: &file) },
                                      // Streaming gave up (relay lines): it is read again.
                                      stops: { streamed?.abandoned != nil }) {
                recordCount += 1
                if recordCount & 0x3FFF == 0, let progress { progress(report.inputs.count, bytesDone) }
            }
            absorbPart(consume result, fileIndex: fileIndex, into: &file)
            let foreign = file.foreign
            file.foreign = nil
            finishFile(file, path: path, format: format, fileIndex: fileIndex)
            return foreign
        }
        /// Lines of other formats set aside while input `fileIndex` (in `format`) was read: read
        /// again in the format they show, each as an input of its own after it (a segment of the
        /// same file, its lines numbered as in the file), up to three formats deep; lines no
        /// other format reads are the file's unparsed lines after all.
        func readSegments(_ foreign: ForeignLines?, of fileIndex: Int, format: LogFormat) {
            var next = foreign.map { ($0, fileIndex, format) }
            var depth = 0
            while let (lines, parent, parentFormat) = next, lines.lineCount > 0 {
                next = nil
                depth += 1
                let path = report.inputs[parent].path
                let detected = lines.head(64 * 1024).withUnsafeBytes { self.detector.detect(head: $0) }?.format
                let which = lines.described
                let are = lines.lineCount == 1 ? "is" : "are"
                guard let detected, detected.kind != .plain, detected.kind != .journalExport, detected.name != parentFormat.name else {
                    report.inputs[parent].stats.unparsed += lines.lineCount
                    report.inputs[parent].notes.append("\(which) \(are) like another format's lines but none reads them: counted unparsed")
                    break
                }
                if let streamed {
                    // One text file streamed: a second input cannot join it; read again whole.
                    streamed.giveUp("lines of another format in the file")
                    return
                }
                let segmentIndex = report.inputs.count
                report.inputs[parent].notes.append("\(which) \(are) \(detected.name), not \(parentFormat.name): read as such (input \(segmentIndex + 1))")
                var inner = context
                if depth >= 3 { inner.foreign = nil }
                let deeper = readText(lines.source(), path: path, format: detected, adapts: false, segment: lines, context: inner)
                report.inputs[segmentIndex].segmentOf = parent
                report.inputs[segmentIndex].notes.insert("\(which) of input \(parent + 1), in another format than its head's", at: 0)
                next = deeper.map { ($0, segmentIndex, detected) }
            }
        }
        var walker = BundleWalker(
            visit: { path, source in
                let fileIndex = report.inputs.count
                let (head, whole) = try CROnlyLines.readHead(64 * 1024, from: source)
                guard let format = formatOf(head, path: path, fileIndex: fileIndex) else { return }
                // Files that fit in the head are too small for an adaptive prefilter to pay off.
                let foreign = readText(whole, path: path, format: format, adapts: head.count >= 64 * 1024, context: context)
                readSegments(foreign, of: fileIndex, format: format)
            },
            report: { error in
                report.errors.append(error)
                if let i = report.inputs.firstIndex(where: { $0.path == error.path }) {
                    report.inputs[i].errors.append(error.description)
                } else {
                    var s = InputSummary(path: error.path)
                    s.errors.append(error.message)
                    report.inputs.append(s)
                    files.append(FileTimes(firstComplete: nil, eventRange: position..<position))
                }
            })
        walker.note = { path, note in
            if let i = report.inputs.lastIndex(where: { $0.path == path }) {
                report.inputs[i].notes.append(note)
            } else {
                var s = InputSummary(path: path)
                s.notes.append(note)
                report.inputs.append(s)
                files.append(FileTimes(firstComplete: nil, eventRange: position..<position))
            }
        }
        // Big text files on disk are read as parallel ranges split at record starts.
        walker.visitFile = { path, diskPath in
            guard let size = fileSize(diskPath), size >= self.parallelThreshold, self.parallelism > 1 else { return false }
            let head = try readUpTo(64 * 1024, from: RangeFileSource(path: diskPath, from: 0, to: min(size, 64 * 1024)))
            // Lines ended by CR alone are read by one reader that sees them as lines.
            if CROnlyLines.endLines(head) { return false }
            let fileIndex = report.inputs.count
            guard let format = formatOf(head, path: path, fileIndex: fileIndex) else { return true }
            let parts = self.parts(ofFileSized: size)
            var targets = ReadContext.equalCuts(size: size, parts: parts)
            // Streamed or held on disk, a range's lines are what is held: ranges stay small
            // however big the file.
            if streamed != nil || mayHold {
                let sampled = self.sampled(context, diskPath: diskPath, path: path, size: size, format: format)
                // Relay lines in the samples: streaming would give up at its first batch (the
                // join needs every session), after the ranges in flight were read, lines of
                // which fold into few events (the first 16 MB of a relay log with 50 sessions
                // open). It gives up now, before anything is read.
                if let streamed, sampled.relay {
                    streamed.giveUp(StreamedRead.relayLines)
                    return true
                }
                if streamed == nil, self.readsWhole(sampled) {
                    self.lastReadByOneReader.append(path)
                    return false
                }
                // (no range bigger than the equal cuts': a dense stretch keeps its small ranges
                // however few the density asks for elsewhere)
                let cuts = self.rangeTargets(held: sampled.held, size: size, most: size / UInt64(parts))
                if !cuts.isEmpty { targets = cuts }
            }
            let ranges = try context.splitPoints(diskPath, size: size, format: format, targets: targets)
            guard ranges.count > 1 else { return false }
            // Two ranges a thread read ahead at most, fewer where they are big: as many of the
            // largest as `aheadBytes` holds, but one a thread (ranges of a busy relay's text are
            // megabytes, and their runs waited for the relay stage, slower than the readers).
            let largest = max(1, ranges.lazy.map { $0.upperBound - $0.lowerBound }.max() ?? 1)
            let results = ResultSlots(count: ranges.count,
                                      ahead: max(self.parallelism, min(2 * self.parallelism, Int(self.aheadBytes / largest))))
            let budget = EventBudget(limit: self.options.budget.maxEventsPerFile)
            var file = beginFile(path: path, format: format)
            file.budget = budget
            file.rangesReadAhead = true
            // Each range's result is taken in file order as soon as the ranges before it are
            // (by whichever thread finished it, under the slots' lock): the events are moved
            // into the bundle's list while later ranges are still read.
            let taker = ResultTaker { absorbPart($0, fileIndex: fileIndex, into: &file) }
            DispatchQueue.concurrentPerform(iterations: ranges.count) { k in
                results.waitTurn(k)
                var r = TextResult()
                // Streaming gave up: the bundle is read again, the rest of this read is waste.
                if let streamed, streamed.abandoned != nil { return results.set(k, &r, take: taker.take) }
                // The budget is spent at an earlier line: nothing here is analyzed.
                if budget.spent { return results.set(k, &r, take: taker.take) }
                do {
                    let source = try RangeFileSource(path: diskPath, from: ranges[k].lowerBound, to: ranges[k].upperBound)
                    r = context.read(source, path: path, format: format, adapts: true, pool: results, budget: budget,
                                     budgetInFileOrder: false, stops: { streamed?.abandoned != nil }, onRecord: nil)
                } catch let e as InputError {
                    r.problems = [e]
                } catch {}
                results.set(k, &r, take: taker.take)
            }
            let foreign = file.foreign
            file.foreign = nil
            finishFile(file, path: path, format: format, fileIndex: fileIndex)
            // (the ranges end where the file ended when they were cut, as a file read whole
            // ends where it ended when it was opened: `FileSource.grew`)
            if let now = fileSize(diskPath), now > size, let i = report.inputs.lastIndex(where: { $0.path == path }) {
                report.inputs[i].notes.append(FileSource.grewNote(from: size, to: now))
            }
            readSegments(foreign, of: fileIndex, format: format)
            return true
        }
        /// A big journal file on disk, read as stretches on parallel threads (`JournalCut`),
        /// taken in file order as they finish. False, with nothing kept, when it was not cut or a
        /// stretch met anything but a clean read: the file is then read by one reader, which
        /// words the damage as it always has.
        func readJournalInParts(display: String, path: String) -> Bool {
            guard streamed == nil, self.parallelism > 1, self.options.filter.isEmpty, !self.readByOneReader.contains(path),
                let size = fileSize(path),
                size >= self.parallelThreshold,
                let promised = JournalHeader.read(path: path)?.entries,
                // (one reader counts a file's recognized entries against `--max-events`)
                promised <= UInt64(self.options.budget.maxEventsPerFile),
                let cuts = JournalCut.cuts(path: path, parts: self.parts(ofFileSized: size)),
                !cuts.isEmpty
            else { return false }
            let fileIndex = report.inputs.count
            let format = self.registry.format(named: "journal-export")!
            let (firstEvent, firstOrder, firstErrors) = (events.count, order, report.errors.count)
            holdPaused = true
            defer { holdPaused = false }
            let firstTaken = relayStage?.taken ?? 0
            var file = beginFile(path: display, format: format)
            file.summary.format = "journal"
            let bounds: [String?] = [nil] + cuts
            let results = ResultSlots(count: bounds.count)
            let taker = ResultTaker { absorbPart($0, fileIndex: fileIndex, into: &file) }
            let outcome = JournalPartsOutcome()
            let (factory, prefilter, filter) = (factory, self.prefilter, self.options.filter)
            DispatchQueue.concurrentPerform(iterations: bounds.count) { k in
                var part = TextResult()
                if !outcome.failed {
                    let reader = JournalReader(format: format, filter: filter, prefilter: prefilter)
                    let interner = Interner()
                    var compactor = EventCompactor()
                    var order = 0
                    let r = reader.read(path: path, from: bounds[k], until: k + 1 < bounds.count ? bounds[k + 1] : nil) { rec in
                        if part.firstComplete == nil { part.firstComplete = rec.time }
                        if factory.add(&rec, path: display, order: order + 1, fileIndex: 0, interner: interner,
                                       compactor: &compactor, to: &part.events)
                        {
                            order += 1
                        }
                    }
                    part.stats = r.stats
                    part.lineCount = r.read
                    outcome.add(read: r.read, clean: r.error == nil && r.damaged == 0)
                }
                results.set(k, &part, take: taker.take)
            }
            guard !outcome.failed, UInt64(outcome.read) == promised else {
                if let relayStage, relayStage.taken != firstTaken {
                    // Its relay lines are in their sessions already: read the bundle again.
                    self.readByOneReader.insert(path)
                    readAgainWhole = true
                }
                events.removeSubrange(firstEvent...)
                order = firstOrder
                report.errors.removeSubrange(firstErrors...)
                self.journalsInStretches.readAgain += 1
                Stages.mark("journal \(display) read again by one reader")
                return false
            }
            self.journalsInStretches.read += 1
            bytesDone += size
            finishFile(file, path: display, format: format, fileIndex: fileIndex)
            return true
        }
        walker.journal = { display, diskPath, source in
            if let diskPath, readJournalInParts(display: display, path: diskPath) {
                // (Holding waited while its stretches might be taken back.)
                holdIfMany()
                return
            }
            let fileIndex = report.inputs.count
            var summary = InputSummary(path: display)
            summary.format = "journal"
            let first = position
            let firstTaken = relayStage?.taken ?? 0
            var firstComplete: ParsedTime?
            defer {
                summary.events = Self.lineCount(events, from: first - heldCount) + (relayStage?.taken ?? 0) - firstTaken
                // The progress line counts a journal file once it is read.
                if let diskPath, let size = fileSize(diskPath) { bytesDone += size }
                report.inputs.append(summary)
                files.append(FileTimes(firstComplete: firstComplete, eventRange: first..<position, family: "journal"))
                progress?(report.inputs.count, bytesDone)
                holdIfMany()
            }
            // Members of archives (and stdin) go to a private temporary file for sd-journal.
            let file = try FileToRead(diskPath: diskPath) { try $0.writeJournal(source, display: display) }
            defer { withExtendedLifetime(file) {} }
            let path = file.path
            let reader = JournalReader(format: self.registry.format(named: "journal-export")!, filter: self.options.filter,
                                       prefilter: self.prefilter)
            // `--max-events` bounds a journal's recognized entries as a text file's lines (a
            // journal of millions of relay entries was held whole): past the limit the read
            // stops at the next entry with a message, which the error names.
            let limit = self.options.budget.maxEventsPerFile
            var recognized = 0
            let result = reader.read(path: path) { rec in
                if recognized >= limit {
                    throw JournalReader.Stop("memory budget: \(limit) recognized entries of this journal file analyzed (--max-events); entry \(rec.line) and the rest of it are not analyzed")
                }
                if firstComplete == nil { firstComplete = rec.time }
                let before = linesTaken
                recognize(&rec, display, fileIndex)
                if linesTaken > before { recognized += 1 }
            }
            journalCompactor = EventCompactor()
            summary.stats = result.stats
            let promised = result.promised.map { "; the header promised \($0) entries, \(result.read) were read" } ?? ""
            var problem: String?
            if let stopped = result.stopped {
                problem = stopped
            } else if let cut = result.cutShortProblem {
                problem = cut + promised
            } else if let error = result.error {
                problem = error + promised
            } else if let p = result.promised, UInt64(result.read) < p, self.options.filter.isEmpty {
                problem = "journal file damaged: the header promised \(p) entries, \(result.read) were read"
            } else if result.damaged > 0 {
                problem = "journal file damaged: \(result.damaged) of \(result.read) entries have an unreadable MESSAGE"
            }
            if let problem {
                let e = InputError(path: display, problem)
                summary.errors.append(e.description)
                report.errors.append(e)
            }
            if let endedInside = file.endedInside { throw endedInside }
        }
        // Apple Unified Logging (Records/UnifiedLog): log archives and lone tracev3 files.
        func absorbUnifiedLog(_ r: ULAnalysis) {
            let first = position
            for var e in r.events {
                order += 1
                e.order = order
                e.fileIndex = report.inputs.count
                events.append(e)
            }
            report.errors.append(contentsOf: r.errors)
            report.inputs.append(r.summary)
            files.append(FileTimes(firstComplete: nil, eventRange: first..<position, family: "apple"))
            progress?(report.inputs.count, bytesDone)
            holdIfMany()
        }
        walker.logArchive = { display, dir in
            let prefix = dir.hasSuffix("/") ? dir : dir + "/"
            let found = tracev3Files(under: dir) { folder, why in
                let e = InputError(path: display + (folder.hasPrefix(prefix) ? "/" + folder.dropFirst(prefix.count) : ""), "cannot read folder: \(why)")
                report.errors.append(e)
            }
            let list = found.map { (display + "/" + String($0.dropFirst(prefix.count)), $0) }
            absorbUnifiedLog(self.readUnifiedLog(display: display, root: dir, files: list))
        }
        walker.unifiedLog = { display, diskPath, source in
            // (the archive ends inside the tracev3, a ticket's size limit: its chunks before the
            // cut are read, and the archive's damage is said after them; none was read)
            let file = try FileToRead(diskPath: diskPath) { try $0.writeMember(source, name: "member.tracev3", display: display) }
            defer { withExtendedLifetime(file) {} }
            absorbUnifiedLog(self.readUnifiedLog(display: display, root: logArchiveRoot(of: diskPath), files: [(display, file.path)]))
            if let endedInside = file.endedInside { throw endedInside }
        }
        walker.ips = { display, source in
            let fileIndex = report.inputs.count
            var summary = InputSummary(path: display)
            let first = position
            let firstTaken = relayStage?.taken ?? 0
            do {
                let text = try readIPSText(source, path: display)
                let (reports, unread) = try IPSReport.parseAll(text, path: display, fileBytes: ipsFileBytes(source, text))
                let kinds = reports.map { "\($0.kind.rawValue)\($0.bugType.map { ", bug_type \($0)" } ?? "")" }
                summary.format = reports.count == 1 ? "ips (\(kinds[0]))" : "ips (\(reports.count) reports: \(kinds.joined(separator: "; ")))"
                var k = 0
                for parsed in reports {
                    for r in parsed.records {
                        k += 1
                        var rec = RawRecord()
                        rec.reset(line: k)
                        rec.time = r.time
                        rec.set(.process, bytes: Array(r.process.utf8))
                        if let pid = r.pid { rec.set(.pid, bytes: Array(String(pid).utf8)) }
                        rec.set(.message, bytes: Array(r.message.utf8))
                        summary.stats.records += 1
                        recognize(&rec, display, fileIndex)
                    }
                    journalCompactor = EventCompactor()
                }
                for note in reports.compactMap(\.impossibleDate) where !summary.notes.contains(note) { summary.notes.append(note) }
                for e in reports.compactMap(\.cut) + unread {
                    summary.errors.append(e.description)
                    report.errors.append(e)
                }
            } catch let e as InputError {
                summary.errors.append(e.description)
                report.errors.append(e)
            }
            summary.events = Self.lineCount(events, from: first - heldCount) + (relayStage?.taken ?? 0) - firstTaken
            report.inputs.append(summary)
            files.append(FileTimes(firstComplete: nil, eventRange: first..<position, family: "apple"))
            holdIfMany()
        }
        walker.budget = options.budget
        walker.memory = memoryInputs
        walker.recognition = detector.bestScore(of:)
        walker.timedRecognition = detector.bestTimedScore(of:)
        Stages.mark("start")
        walker.walk(paths)
        Stages.mark("read")
        lastHeldEvents = heldCount
        lastMostEventsKept = mostEventsKept
        if let streamed {
            // Anything but one text file's ranges (a journal, an archive) is read the whole way.
            if !events.isEmpty || report.inputs.count != 1 { streamed.giveUp("not one text file") }
            guard streamed.finish(into: &report) else { return nil }
            if !streamed.started { willStreamSessions?(report) }
            let resolver = streamed.resolver!
            report.inputs[0].notes.append(contentsOf: resolver.notes)
            report.timeNotes = FileTimeResolver.reportNotes(resolver.headerNotes, sawUnzoned: streamed.sawUnzoned)
            report.displayOffset = streamed.zone.zone
            report.span = streamed.span.range
            report.eventCount = streamed.lines
            Stages.mark("sessions")
            report.findings = Findings.run(report, options.thresholds)
            if !streamed.stage.findings.isEmpty { report.findings = streamed.stage.findings + report.findings }
            Stages.mark("findings")
            return report
        }
        if readAgainWhole { return nil }
        // The lines read and spilled were freed by the threads that read them: their pages go
        // back now, so that what stays counts what is held (malloc keeps them otherwise).
        if relayStage.map({ $0.taken > 0 }) ?? false { releaseFreedMemory() }
        let built: BuiltSessions
        if let heldEvents, heldEvents.count > 0 {
            // Part of the bundle went to disk while it was read: the rest follows, and the
            // sessions are built from there, a chunk at a time.
            heldEvents.write(events)
            events = []
            built = sessionsFromHeld(heldEvents, files: files, report: &report, relayStage: relayStage)
        } else {
            built = sessionsInMemory(&events, files: files, report: &report, relayStage: relayStage)
        }
        let stage = built.stage, relayTaken = built.relayTaken, relayDisplay = built.relayDisplay
        let (since, until) = built.window
        var relayEvents = built.relayEvents, heldRelay = built.heldRelay, span = built.span
        Stages.mark("sessions")
        // The relay side: its sessions, the clock offset, and the join.
        let joiner = RelayJoiner()
        var relay = RelaySessionList(joiner.group(taking: &relayEvents))
        if let relayStage, relayTaken {
            // (`relayEvents` held only relay lines that name no session: no session of their own.)
            let made = relayStage.finish(held: &heldRelay, window: (since, until), display: relayDisplay)
            relay = made.sessions
            span.merge(made.span)
            report.span = span.range
            report.eventCount += made.lines
            report.filteredOut += made.filteredOut
            releaseFreedMemory()
            Stages.mark("relay sessions")
        }
        // What the estimate and the join read of the device sessions: kept beside those written
        // to disk for the join, else read off the sessions in memory (no sink).
        var pairs: [(d: Int, r: Int)] = []
        if !relay.isEmpty {
            let facts = stage.held?.facts ?? report.sessions.map(DeviceJoinFacts.init)
            if let forced = options.clockOffset {
                report.clock = ClockEstimate(offset: forced, uncertainty: nil, pairs: 0, forced: true)
            } else {
                report.clock = joiner.estimate(facts, relay)
                if report.clock == nil, let hours = joiner.wholeHoursApart(facts, relay) {
                    let hint = "no relay session is within 15 minutes of a phone session, but they line up \(abs(hours)) h apart (the relay's clock \(hours > 0 ? "ahead" : "behind"), or its zone read wrong): pass --clock-offset \(hours * 3600) to join them"
                    // (in the report's times line, and on stderr for a JSON reader)
                    report.timeNotes.append(hint)
                    report.warnings.append(hint)
                }
            }
            Stages.mark("clock")
            if let clock = report.clock { pairs = joiner.pair(facts, &relay, offset: clock.offset) }
            var joined = [Bool](repeating: false, count: facts.count)
            for p in pairs { joined[p.d] = true }
            report.orphanDeviceSessions = facts.indices.filter { facts[$0].connectedAt != nil && !joined[$0] }.map { facts[$0].id }
            // Sessions in memory take their relay sessions now; those on disk as they are read back.
            if stage.held == nil, let clock = report.clock {
                for p in pairs { RelayJoiner.attach(relay[p.r], to: &report.sessions[p.d], offset: clock.offset) }
            }
        }
        report.relaySessions = relay
        Stages.mark("relay")
        var finisher = stage
        if let held = stage.held {
            finisher = handOnJoined(held, pairs: pairs, relay: relay, offset: report.clock?.offset ?? 0, report: &report)
            Stages.mark("sessions handed on")
        }
        // Sessions handed on had their findings made as they ended; the bundle's own come last.
        report.findings = Findings.run(report, options.thresholds)
        if !finisher.findings.isEmpty { report.findings = finisher.findings + report.findings }
        Stages.mark("findings")
        return report
    }

    /// Turns parsed times into instants, file by file (`FileTimeResolver`): a file without a
    /// zone or year takes them from its own family first, then from any file of the bundle.
    @discardableResult
    func resolveTimes(_ events: inout [Event], files: [FileTimes], inputs: inout [InputSummary]) -> [String] {
        var resolvers = timeResolvers(files)
        for (fileIndex, file) in files.enumerated() { resolvers[fileIndex].resolve(&events, file.eventRange) }
        return FileTimeResolver.reportNotes(noteResolved(resolvers, inputs: &inputs),
                                            sawUnzoned: events.contains { $0.displayOffset == Fmt.unzoned })
    }

    /// One resolver per file, in file order.
    func timeResolvers(_ files: [FileTimes]) -> [FileTimeResolver] {
        let anyIndex = files.firstIndex { $0.firstComplete != nil }
        return files.indices.map { k in
            let from = files.firstIndex { $0.family == files[k].family && $0.firstComplete != nil } ?? anyIndex
            var reference = from.flatMap { files[$0].firstComplete }
            // A journal header bounds its own file's lines only: another file takes its date as
            // the nearest.
            if from != k {
                reference?.isFloor = false
                reference?.isCeiling = false
            }
            return FileTimeResolver(reference: reference, date: options.date, today: today)
        }
    }

    /// What the resolvers noted, on each file's summary; returns the report's header notes.
    func noteResolved(_ resolvers: [FileTimeResolver], inputs: inout [InputSummary]) -> [String] {
        var headerNotes: [String] = []
        for (fileIndex, resolver) in resolvers.enumerated() {
            inputs[fileIndex].notes.append(contentsOf: resolver.notes)
            headerNotes.append(contentsOf: resolver.headerNotes)
        }
        return headerNotes
    }

    /// Without a complete time anywhere in the bundle: today (µs → its date at UTC, as `tail`).
    var today: (Int, Int, Int) { civilFromDays(Int((options.now ?? currentMicros()).floorDiv(86_400_000_000))) }

    /// One zone per report (`DisplayZoneChoice`); relay (journal) lines are shown in the
    /// phone's. Returns the report's zone.
    /// `relayFirst`: the first timed line the `RelayStage` took, which counts as a line of the
    /// bundle read at its place; the second result is the zone of the lines it took.
    func applyDisplayZone(_ events: inout [Event], relayFirst: (order: Int, time: Int64, offset: Int)? = nil)
        -> (Int?, RelayDisplay, DisplayZoneChoice)
    {
        var choice = DisplayZoneChoice(option: options.displayZone)
        choice.see(&events, events.indices)
        let (zone, relayDisplay) = decideZone(choice, firstTimedOrder: events.first(where: { $0.time != nil })?.order,
                                              relayFirst: relayFirst)
        if case .phone(let phone) = relayDisplay {
            for i in events.indices where events[i].side == .relay { events[i].displayOffset = phone }
        }
        return (zone, relayDisplay, choice)
    }

    /// The report's zone from every line seen, and how relay lines are shown: in the phone's
    /// zone (`.phone`: the caller sets it on them), the option's, or their own.
    /// `firstTimedOrder`: the reading order of the bundle's first timed line.
    func decideZone(_ choice: DisplayZoneChoice, firstTimedOrder: Int?,
                    relayFirst: (order: Int, time: Int64, offset: Int)?) -> (Int?, RelayDisplay)
    {
        var choice = choice
        if let r = relayFirst, firstTimedOrder.map({ r.order < $0 }) ?? true {
            choice.firstTimed = options.displayZone?.offset(at: r.time) ?? r.offset
        }
        let zone = choice.zone
        if let option = options.displayZone { return (zone, .option(option)) }
        if let phone = zone, phone != Fmt.unzoned, !choice.counts.isEmpty { return (zone, .phone(phone)) }
        return (zone, .own)
    }

    /// The earliest time of the lines and the latest, gathered a stretch of lines at a time.
    /// A folded run counts every line's time, not its first and last: its lines can be out of
    /// order (a zone-less log's clock set back; exports that interleave), and a held bundle
    /// may cover the run in parts, where another line is a part's first or last.
    struct TimeSpan {
        var lo: Int64?
        var hi: Int64?

        mutating func cover(_ events: [Event], _ range: Range<Int>) {
            for i in range {
                guard let (a, b) = Self.bounds(events, i) else { continue }
                lo = min(lo ?? a, a)
                hi = max(hi ?? b, b)
            }
        }

        /// The earliest and latest time of the lines event `i` stands for (nil: untimed): every
        /// line of a folded run, whose lines need not be in order (`Dedupe` covers files so too).
        static func bounds(_ events: [Event], _ i: Int) -> (lo: Int64, hi: Int64)? {
            guard let t = events[i].time else { return nil }
            guard let (a, b) = events[i].repeats?.times.bounds else { return (t, t) }
            return (min(t, a), max(t, b))
        }

        mutating func merge(_ other: TimeSpan) {
            if let l = other.lo { lo = min(lo ?? l, l) }
            if let h = other.hi { hi = max(hi ?? h, h) }
        }

        /// A run whose lines went back in time can leave its last line before every first.
        var range: ClosedRange<Int64>? { lo.map { lo in lo...max(lo, hi ?? lo) } }
    }

    /// The lines the events stand for (a folded run counts each of its lines).
    static func lineCount(_ events: [Event], from first: Int = 0) -> Int {
        var n = 0
        for i in first..<events.count { n += events[i].count }
        return n
    }

    /// The same line seen in two exports of one bundle counts once (a folded run of frame
    /// lines line by line; a relay `stats` run by its first line only, as its lines' texts are
    /// not kept). The bundle's lines, in reading order, and one relay session's lines, in time
    /// order (`RelayStage`): either way the copy of the file read first is kept.
    static func dedupe(_ events: inout [Event]) {
        var d = Dedupe()
        d.see(events)
        d.apply(&events)
    }

    /// `dedupe` in two steps, so that a bundle held on disk can be deduped a chunk at a time:
    /// `see` every line first (in reading order), then `apply` to them in the same order.
    struct Dedupe {
        /// Each file's span of timed lines.
        var spans: [Int: ClosedRange<Int64>] = [:]
        var firstFile: Int?
        var manyFiles = false
        /// How many files' spans cover each stretch of time: `coverage[k]` from `coverFrom[k]`
        /// to the next (a look-up per line by halving, where a scan of every file's span per
        /// line took 21 s for a folder of 20,000 one-session files).
        private var coverFrom: [Int64]?
        private var coverage: [Int] = []
        private struct Key: Hashable { var time: Int64; var pid: Int?; var message: String }
        private var seen: [Key: Int] = [:]

        /// Adds what another saw of the lines after those this one saw.
        mutating func merge(_ other: Dedupe) {
            if let f = other.firstFile {
                if firstFile == nil { firstFile = f } else if f != firstFile { manyFiles = true }
            }
            manyFiles = manyFiles || other.manyFiles
            spans.merge(other.spans) { min($0.lowerBound, $1.lowerBound)...max($0.upperBound, $1.upperBound) }
            covers.merge(other.covers) { min($0.lowerBound, $1.lowerBound)...max($0.upperBound, $1.upperBound) }
        }

        mutating func see(_ events: [Event]) {
            // Only at a time two files both cover can a line be a duplicate: a line outside
            // every other file's span is kept without a look-up (rotated journal files, a
            // device log and a relay log of different hours: no line needs remembering).
            // A file's lines come one after another: its span and cover are gathered here and
            // added to the tables when the file changes, not looked up per line.
            var file: Int?
            var span: ClosedRange<Int64>?, cover: ClosedRange<Int64>?
            func flush() {
                guard let f = file else { return }
                if let s = span { spans[f] = spans[f].map { min($0.lowerBound, s.lowerBound)...max($0.upperBound, s.upperBound) } ?? s }
                if let c = cover { covers[f] = covers[f].map { min($0.lowerBound, c.lowerBound)...max($0.upperBound, c.upperBound) } ?? c }
                span = nil
                cover = nil
            }
            for i in events.indices {
                let f = events[i].fileIndex
                if f != file {
                    flush()
                    file = f
                    if firstFile == nil { firstFile = f } else if f != firstFile { manyFiles = true }
                }
                // (a line whose time is its neighbour's counts: a console capture's print()
                // lines may be all its recognized lines)
                guard let t = events[i].time, let (lo, hi) = TimeSpan.bounds(events, i) else { continue }
                span = span.map { min($0.lowerBound, t)...max($0.upperBound, t) } ?? t...t
                cover = cover.map { min($0.lowerBound, lo)...max($0.upperBound, hi) } ?? lo...hi
            }
            flush()
        }

        /// Whether a line of `file` at `t` is new (and remembers it when it is contested).
        private mutating func firstSeen(_ t: Int64, _ file: Int, pid: Int?, message: String) -> Bool {
            guard filesCovering(t) - (spans[file].map { $0.contains(t) ? 1 : 0 } ?? 0) > 0 else { return true }
            let key = Key(time: t, pid: pid, message: message)
            if let seenIn = seen[key] { return seenIn == file }
            seen[key] = file
            return true
        }

        /// The stretches of time between the files' spans' ends, and how many spans cover each.
        private mutating func buildCoverage() {
            var steps: [(Int64, Int)] = []
            steps.reserveCapacity(spans.count * 2)
            for s in spans.values {
                steps.append((s.lowerBound, 1))
                // Closed spans: a span stops covering just after its last time.
                if s.upperBound < Int64.max { steps.append((s.upperBound + 1, -1)) }
            }
            steps.sort { $0.0 < $1.0 }
            var from: [Int64] = [], count: [Int] = []
            var n = 0
            for (t, d) in steps {
                n += d
                if let last = from.last, last == t { count[count.count - 1] = n } else {
                    from.append(t)
                    count.append(n)
                }
            }
            coverFrom = from
            coverage = count
        }

        /// How many files' spans hold time `t`.
        private func filesCovering(_ t: Int64) -> Int {
            guard let from = coverFrom else { return 0 }
            // The last stretch starting at or before `t`.
            let after = from.partitionPoint { $0 <= t }
            return after == 0 ? 0 : coverage[after - 1]
        }

        /// Each file's times, a folded run's every line's included (a line at a time only
        /// another file's span covers is looked up too).
        var covers: [Int: ClosedRange<Int64>] = [:]

        /// Whether `apply` may drop or remember any of lines of `file` whose times (a folded
        /// run's every line's included) lie in `times`: whether another file's span meets them.
        func contests(_ times: ClosedRange<Int64>, of file: Int) -> Bool {
            manyFiles && spans.contains { $0.key != file && $0.value.overlaps(times) }
        }

        /// Whether two files' times meet: only then can `apply` drop anything.
        var overlaps: Bool {
            guard manyFiles else { return false }
            let s = covers.values.sorted { $0.lowerBound < $1.lowerBound }
            return s.indices.dropFirst().contains { s[$0].lowerBound <= s[$0 - 1].upperBound }
        }

        mutating func apply(_ events: inout [Event]) {
            // Only lines of different files can be duplicates: one file (a big export) has none.
            guard manyFiles else { return }
            if coverFrom == nil { buildCoverage() }
            // Compacted in place (kept lines keep their order): no second array of every event.
            var kept = 0
            for i in events.indices {
                var keep = true
                // (Before sessions: no run here is a connect run folded as a session is built,
                // whose times as parsed are not kept.)
                if let r = events[i].repeats, r.frames.isEmpty, r.naive.count == r.lines.count, !events[i].timeInferred {
                    // A folded run of frame lines (one message): line by line, as the other file
                    // may hold only some of them, or hold them unfolded.
                    let file = events[i].fileIndex, pid = events[i].pid, message = events[i].message
                    // (A flag a line, the times read in order: a long run's may be on disk.)
                    var kept: [Bool] = []
                    kept.reserveCapacity(r.lines.count)
                    var keptCount = 0
                    let head = events[i].time
                    Event.forEachTimeAndLine(repeats: r, time: head, line: events[i].line) { t, _ in
                        let k = t.map { firstSeen($0, file, pid: pid, message: message) } ?? true
                        kept.append(k)
                        if k { keptCount += 1 }
                    }
                    if keptCount == 0 {
                        keep = false
                    } else if keptCount < r.lines.count {
                        let fewer = r.selecting(kept)
                        let first = kept.firstIndex(of: true)!
                        if first < r.times.count { events[i].time = r.times[first] }
                        events[i].line = Int(r.lines[first])
                        events[i].repeats = keptCount > 1 ? fewer : nil
                    }
                } else if let t = events[i].time {
                    // (a line whose time is its neighbour's, an Xcode console's print(), too: a
                    // console capture read twice made a second, truncated session of the copy)
                    keep = firstSeen(t, events[i].fileIndex, pid: events[i].pid, message: events[i].message)
                }
                guard keep else { continue }
                if kept != i { events.swapAt(kept, i) }
                kept += 1
            }
            events.removeLast(events.count - kept)
        }
    }
}

func formatDate(_ d: (Int, Int, Int)) -> String {
    "\(Fmt.pad(d.0, 4))-\(Fmt.pad(d.1, 2))-\(Fmt.pad(d.2, 2))"
}

extension Int64 {
    func floorDiv(_ d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}

/// What one reader (a whole file, or one range of a big one) found.
struct TextResult: Sendable {
    var events: [Event] = []
    var stats = ReadStats()
    var problems: [InputError] = []
    var firstComplete: ParsedTime?
    /// Lines read, to number the lines of the next range.
    var lineCount = 0
    var consumed: UInt64 = 0
    /// Lines of another format than the file's, set aside to be read in theirs.
    var foreign: ForeignLines?
}

/// Results of parallel readers, written once per slot; and the adaptive prefilters of
/// finished ranges, for the next ranges of the same input (one per thread gets made: they
/// start from what was learned, without new tables).
final class ResultSlots: @unchecked Sendable {
    private var slots: [TextResult?]
    /// The next range to hand on: every one before it was.
    private var next = 0
    private var idle: [Prefilter] = []
    private let lock = NSLockLite()
    /// Ranges at most read past the next one to hand on (`waitTurn`).
    private let ahead: Int
    private let handedOn = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    init(count: Int, ahead: Int = Int.max) {
        slots = Array(repeating: nil, count: count)
        self.ahead = max(1, ahead)
        pthread_cond_init(handedOn, nil)
    }
    deinit {
        pthread_cond_destroy(handedOn)
        handedOn.deallocate()
    }
    /// Waits until range `k` is fewer than `ahead` past the next one to hand on: a reader does
    /// not read on while the one that holds the next range is slow (descheduled on a busy host,
    /// or taking a range that had many relay sessions to make); the results waiting were held in
    /// memory, and RSS followed the file (relay text, 256 MB: 100 to 390 MB from run to run).
    func waitTurn(_ k: Int) {
        guard ahead < slots.count else { return }
        lock.locked { while k - next >= ahead { lock.wait(handedOn) } }
    }
    /// Stores range `k`'s result, then hands on (in range order, under the lock) every result
    /// whose ranges before it were handed on; each is let go once handed on.
    /// (`r` is moved out, left empty: the one who is handed it holds the only reference to its
    /// events, and changes them in place instead of copying every one of them.)
    func set(_ k: Int, _ r: inout TextResult, take: (consuming TextResult) -> Void) {
        var mine: TextResult? = r
        r = TextResult()
        lock.locked {
            slots[k] = mine.take()
            let before = next
            // Taken out of its slot and handed on as it is: a copy bound here kept a second
            // reference to the range's events until `take` returned, so the taker, changing them
            // in place, copied every one of them (a retry storm's 144,000 lines, once each).
            while next < slots.count, slots[next] != nil {
                let ready = slots[next].take()!
                next += 1
                take(consume ready)
            }
            if next != before { pthread_cond_broadcast(handedOn) }
        }
    }
    /// An idle adaptive prefilter, or a new one from `shared`.
    func take(from shared: Prefilter) -> Prefilter { lock.locked { idle.popLast() } ?? shared.adaptive() }
    func giveBack(_ p: Prefilter) { lock.locked { idle.append(p) } }
}

/// How the stretches of a journal file read in parallel went.
final class JournalPartsOutcome: @unchecked Sendable {
    private let lock = NSLockLite()
    private var _read = 0
    private var _failed = false
    var read: Int { lock.locked { _read } }
    var failed: Bool { lock.locked { _failed } }
    func add(read n: Int, clean: Bool) {
        lock.locked {
            _read += n
            if !clean { _failed = true }
        }
    }
}

/// What takes a big file's range results in order (`ResultSlots.set`): called by the reading
/// threads one at a time, under the slots' lock, which is what makes it safe to share.
final class ResultTaker: @unchecked Sendable {
    let take: (consuming TextResult) -> Void
    init(_ take: @escaping (consuming TextResult) -> Void) { self.take = take }
}

/// A pthread mutex (the library does not use Foundation; nor does the CLI on Linux).
public final class NSLockLite: @unchecked Sendable {
    private let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    public init() { pthread_mutex_init(m, nil) }
    deinit { pthread_mutex_destroy(m); m.deallocate() }
    public func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        return body()
    }
    /// Waits on `c` (called while this lock is held, inside `locked`).
    func wait(_ c: UnsafeMutablePointer<pthread_cond_t>) { pthread_cond_wait(c, m) }
}

/// Thrown inside `ReadContext.read` when the reading is called off (`stops`).
private struct StopReading: Error {}

/// Everything a text reader needs, shareable between threads (all read-only).
struct ReadContext: Sendable {
    let factory: EventFactory
    let prefilter: Prefilter
    let filter: JournalFilter
    let maxLineLength: Int
    /// The formats a line of another layout than its file's is looked for in (nil: not
    /// looked for, as when the user names the format).
    var foreign: ForeignFormats?

    /// Reads a text stream with `format`, turning recognized records into events. With
    /// `adapts`, the reader has its own copy of the prefilter, which adapts to the words common
    /// in its input (a few hundred KB of tables: for big inputs); the per-line scan goes through
    /// plain pointers (`PrefilterScanner`) either way.
    /// With `cutEvery`, the events are handed to `onPart` that many at a time as they are read
    /// (a file read by one reader, streamed while read); the result then holds the rest, and
    /// the whole file's counts; when `stops` says so after a part, the rest is not read.
    func read(_ source: ByteSource, path: String, format: LogFormat, adapts: Bool, pool: ResultSlots? = nil,
              budget: EventBudget? = nil, budgetInFileOrder: Bool = true, cutEvery: Int = 0,
              onPart: (consuming TextResult) -> Void = { _ in },
              stops: () -> Bool = { false }, onRecord: (() -> Void)?) -> TextResult
    {
        var result = TextResult()
        let lines = LineReader(source: source, path: path, maxLineLength: maxLineLength)
        let own = adapts ? pool?.take(from: prefilter) ?? prefilter.adaptive() : prefilter
        defer { if let pool, adapts { pool.giveBack(own) } }
        let reader = RecordReader(format: format, lines: lines, filter: filter, prefilter: own, foreign: foreign)
        var order = 0
        let interner = Interner()
        var compactor = EventCompactor()
        // A local: the closure would otherwise copy the whole context (and retain its
        // members) for every record. Likewise a plain closure, not an optional one, which
        // is copied (retained) at every call.
        let factory = self.factory
        let tick = onRecord ?? {}
        // A crash report pasted as text: its header lines become one event; a JetsamEvent's
        // process entries pasted as JSON, their kills.
        var crashReport = CrashReportText()
        // A death line whose stack follows it (a Go panic, gdb's signal): its first frames.
        var frames: DeathFrames?
        /// `frames`' death line while it is looked at, else `Int.max`: one compare per record (an
        /// optional struct of a few strings is tested by an outlined call, +0.05 % instructions
        /// on the dense bench slice once the JVM's report gave it four more).
        var framesLine = Int.max
        var cuts = 0
        /// `order` at the last cut: a part is also cut when it stands for `cutEvery` × 8 lines,
        /// however few events hold them (a relay's `stats` lines fold into one event per
        /// session: with 50 sessions open, 64 MB of relay text was one part, held whole).
        var cutAt = 0
        /// After each event added: the budget (memory follows recognized lines, ~36 bytes each:
        /// bounded per file), and a part handed on when `cutEvery` are held.
        func added(line: Int) throws {
            order += 1
            // The reader only stops: `absorbPart` cuts at the budget's line and says so. One
            // reader stops within 1,024 lines past it; a parallel range once the parts before it,
            // taken in file order, spent it.
            if order & 1023 == 0 {
                if let budget, budgetInFileOrder ? !budget.take(1024) : budget.spent { throw StopReading() }
                // Called off (streaming gave up at a relay line): every 1,024 lines, not only
                // after a part, whose turn comes after half a 26 MB relay log was read.
                if stops() { throw StopReading() }
            }
            if cutEvery > 0, result.events.count > (cuts == 0 ? min(cutEvery, 2048) : cutEvery) || order - cutAt > cutEvery &* 8 {
                // The first part small: what it holds (relay lines) may call the reading off.
                cuts += 1
                cutAt = order
                // The last event stays: a frame run may go on in it.
                var part = TextResult()
                part.firstComplete = result.firstComplete
                let last = result.events.removeLast()
                // A part cut full is most often followed by another: its list is made as large
                // as a full part at once (grown from one event by doubling, each part's events
                // were copied once more on the way, and a full part's list was twice its size).
                let full = result.events.count >= cutEvery
                swap(&part.events, &result.events)
                if full { result.events.reserveCapacity(cutEvery + 2) }
                result.events.append(last)
                compactor.forgetOpenRuns()
                onPart(consume part)
                if stops() { throw StopReading() }
            }
        }
        do {
            try reader.run { rec in
                if result.firstComplete == nil { result.firstComplete = MessageLead.fileReference(rec, header: reader.stats.headerTime) }
                if rec.line > framesLine {
                    Self.see(rec, frames: &frames, in: &result.events)
                    framesLine = frames?.line ?? Int.max
                }
                // (one look at the message's first byte: a header's `Hardware Model:`, an entry's `{`)
                let mayConcern = CrashReportText.mayConcern(rec)
                if crashReport.isOpen || mayConcern {
                    let reports = crashReport.see(rec) { before, body in
                        lines.precedingLines { number, bytes in
                            number >= before || body(String(decoding: bytes, as: UTF8.self))
                        }
                    }
                    let fragment = reports.isEmpty ? JetsamFragmentText.records(in: rec) { result.problems.append(InputError(path: path, line: rec.line, $0)) } : []
                    for report in (reports.isEmpty ? fragment : reports)
                    where factory.add(report, path: path, order: order + 1, fileIndex: 0, interner: interner, compactor: &compactor,
                                      to: &result.events)
                    {
                        try added(line: rec.line)
                    }
                }
                // (a header's uncaught exception line is its report's, not a line of its own)
                if !crashReport.tookLast,
                    factory.add(&rec, path: path, order: order + 1, fileIndex: 0, interner: interner, compactor: &compactor,
                                to: &result.events),
                    // (a crash report's first line only opens it)
                    !mayConcern || result.events.last?.kind != CrashReportText.kind || { result.events.removeLast(); return false }()
                {
                    if result.events.last?.code == .daemonDied, result.events.last!.line == rec.line {
                        frames = DeathFrames(after: result.events.last!)
                        if let found = frames?.attrs, !found.isEmpty {
                            result.events[result.events.count - 1].attrs = DeathFrames.replacing(result.events[result.events.count - 1].attrs, with: found)
                        }
                        if frames?.done == true { frames = nil }
                        framesLine = frames?.line ?? Int.max
                    }
                    try added(line: rec.line)
                }
                tick()
            }
            for report in crashReport.finish()
            where factory.add(report, path: path, order: order + 1, fileIndex: 0, interner: interner, compactor: &compactor,
                              to: &result.events)
            {
                try added(line: report.line)
            }
        } catch let e as InputError {
            result.problems.append(e)
        } catch is StopReading {
        } catch {
            result.problems.append(InputError(path: path, "\(error)"))
        }
        result.stats = reader.stats
        result.problems.append(contentsOf: reader.problems)
        result.lineCount = lines.lineNumber
        result.consumed = lines.consumedOffset
        result.foreign = reader.foreign
        return result
    }

    /// `rec`, a line after a death whose stack is looked for: a frame found is the death's
    /// event's (among the last few events: a part handed on keeps only the last).
    static func see(_ rec: RawRecord, frames: inout DeathFrames?, in events: inout [Event]) {
        guard var f = frames else { return }
        let before = f.attrs.count
        for text in (rec.withMessage { String(decoding: $0, as: UTF8.self) } ?? "").split(separator: "\n", omittingEmptySubsequences: false)
        where !f.done {
            f.see(text)
        }
        if f.attrs.count != before,
            let k = events.indices.reversed().prefix(4).first(where: { events[$0].line == f.line && events[$0].code == .daemonDied })
        {
            // (only the attributes found replace the event's own: the JVM's report found its
            // frame, its event keeps the pid it had)
            events[k].attrs = DeathFrames.replacing(events[k].attrs, with: f.attrs)
        }
        frames = f.done ? nil : f
    }

    static let cursorField = Array("__CURSOR=".utf8)
    static let realtimeField = Array("__REALTIME_TIMESTAMP=".utf8)

    /// Byte ranges of a file that start at record starts, so that each can be read on its own
    /// (no record spans two). Formats whose lines depend on earlier ones (Xcode print() lines,
    /// JSON arrays) are not split; export entries are split where journalctl starts one.
    func splitPoints(_ path: String, size: UInt64, format: LogFormat, parts: Int) throws -> [Range<UInt64>] {
        try splitPoints(path, size: size, format: format, targets: Self.equalCuts(size: size, parts: parts))
    }

    /// Where `parts` equal ranges of `size` bytes start, after the first.
    static func equalCuts(size: UInt64, parts: Int) -> [UInt64] {
        parts > 1 ? (1..<parts).map { size * UInt64($0) / UInt64(parts) } : []
    }

    /// The ranges a file is cut in, each after the first starting at the first record start
    /// past one of `targets` (ascending).
    func splitPoints(_ path: String, size: UInt64, format: LogFormat, targets: [UInt64]) throws -> [Range<UInt64>] {
        let splittable: Bool
        switch format.kind {
        case .plain, .jsonLines, .journalExport: splittable = true
        case .lines:
            if case .unknown = format.startProbe { splittable = false } else { splittable = format.continuation != .print }
        default: splittable = false
        }
        guard splittable, !targets.isEmpty else { return [0..<size] }
        /// Whether a whole line starts a record (a range may begin there). `before` is the line
        /// before it when the window holds it whole, and `window[end...]` what follows it.
        func startsRecord(_ line: ArraySlice<UInt8>, after before: ArraySlice<UInt8>?, in window: [UInt8], end: Int) -> Bool {
            if format.kind == .journalExport {
                // An export entry as journalctl writes it: after the blank line that ends the
                // entry before it, its cursor, then its time. (Only a binary field's bytes could
                // look like that as well; an export without cursors is read by one reader.)
                return before?.isEmpty == true && line.starts(with: Self.cursorField)
                    && window[min(end + 1, window.count)...].starts(with: Self.realtimeField)
            }
            return line.withUnsafeBytes { line in
                switch format.kind {
                case .plain: return true
                case .jsonLines: return line.first == UInt8(ascii: "{")
                default: return format.startProbe.test(line) ?? false
                }
            }
        }
        var bounds: [UInt64] = [0]
        for target in targets {
            // The first line start after `target` that starts a record: looked for in a small
            // window first (records are short), then a wider one.
            var found: UInt64?
            for span in [16 * 1024, 256 * 1024] where found == nil {
                let window = try readUpTo(span, from: RangeFileSource(path: path, from: target, to: min(size, target + UInt64(span))))
                var i = window.firstIndex(of: 0x0A).map { $0 + 1 }
                var before: ArraySlice<UInt8>?  // the line cut by the window's start: not whole
                while let start = i, start < window.count {
                    // A line cut by the window's end is not judged.
                    guard let end = window[start...].firstIndex(of: 0x0A) else { break }
                    if startsRecord(window[start..<end], after: before, in: window, end: end) { found = target + UInt64(start); break }
                    before = window[start..<end]
                    i = end + 1
                }
                if target + UInt64(span) >= size { break }
            }
            // Not inside a pasted crash report's header: its lines are read whole after its
            // `Hardware Model:` line, by one reader (`CrashReportText`).
            // (again from where it lands: another header may be open there; at most 64 times,
            // or a file of nothing but such lines would be read again for every range)
            var shifts = 0
            while shifts < 64, var f = found, let past = try afterCrashHeader(path, at: f, size: size), past > f {
                shifts += 1
                found = nil
                let window = try readUpTo(64 * 1024, from: RangeFileSource(path: path, from: past, to: min(size, past + 64 * 1024)))
                var i = 0
                var before: ArraySlice<UInt8>?
                while i < window.count, found == nil {
                    guard let end = window[i...].firstIndex(of: 0x0A) else { break }
                    if startsRecord(window[i..<end], after: before, in: window, end: end) { f = past + UInt64(i); found = f }
                    before = window[i..<end]
                    i = end + 1
                }
            }
            if let f = found, f > bounds.last! { bounds.append(f) }
        }
        bounds.append(size)
        return zip(bounds, bounds.dropFirst()).map { $0..<$1 }
    }

    /// When the line at `offset` (a line start) is among the lines a pasted crash report's
    /// `Hardware Model:` line has the reader parse whole, the offset of the first line after them.
    func afterCrashHeader(_ path: String, at offset: UInt64, size: UInt64) throws -> UInt64? {
        let back = min(offset, 16 * 1024)
        let before = try readUpTo(Int(back), from: RangeFileSource(path: path, from: offset - back, to: offset))
        // The line starts before `offset`, the nearest last.
        var starts: [Int] = []
        var i = before.count
        while starts.count <= RecordReader.crashReportHeaderLines, i > 0 {
            var j = i - 1
            while j > 0, before[j - 1] != 0x0A { j -= 1 }
            if j == 0 && offset - back > 0 { break }  // a line cut by the window: not judged
            starts.append(j)
            i = j
        }
        guard let k = starts.firstIndex(where: { j in
            before[j...].withUnsafeBytes { RecordReader.opensCrashReport(UnsafeRawBufferPointer(rebasing: $0[..<min($0.count, 128)])) }
        }) else { return nil }
        // Line `k + 1` before the offset opened a header: skip what is left of its lines.
        let left = RecordReader.crashReportHeaderLines - k
        let ahead = try readUpTo(256 * 1024, from: RangeFileSource(path: path, from: offset, to: min(size, offset + 256 * 1024)))
        var skipped = 0
        var p = 0
        while skipped < left {
            guard let nl = ahead[p...].firstIndex(of: 0x0A) else { return nil }
            p = nl + 1
            skipped += 1
        }
        return offset + UInt64(p)
    }
}

/// Hands the pages of freed memory back to the system (glibc keeps them in its arenas).
func releaseFreedMemory() {
    #if canImport(Glibc)
    _ = glibcMallocTrim(0)
    #endif
}

#if canImport(Glibc)
/// `malloc_trim(3)` (declared in <malloc.h>, which the Glibc module does not bring in).
@_silgen_name("malloc_trim") private func glibcMallocTrim(_ pad: Int) -> Int32
#endif

/// Where the sessions go as they end (`Analyzer.sessionSink`).
public struct SessionSink {
    /// What `take` needs of a session that does not depend on the sessions before it (the
    /// report's bytes for it), made on one of the threads that finish sessions: several
    /// sessions at once, in no order. It must not change what another call reads.
    public var prepare: ((Session, [Finding]) -> Any?)?
    /// Each session with its findings and what `prepare` made of it, in id order, one at a
    /// time.
    public var take: (Session, [Finding], Any?) -> Void

    public init(prepare: ((Session, [Finding]) -> Any?)? = nil, take: @escaping (Session, [Finding], Any?) -> Void) {
        self.prepare = prepare
        self.take = take
    }
}

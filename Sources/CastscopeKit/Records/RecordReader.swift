#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts kept per input file.
public struct ReadStats: Sendable {
    public var lines = 0
    public var records = 0
    public var unparsed = 0
    public var skipped = 0
    /// The first few unparsed line numbers, to show where to look.
    public var firstUnparsed: [Int] = []
    public var invalidUTF8Lines = 0
    public var firstInvalidUTF8: Int?
    public var inferredTimes = 0
    public var swappedDayMonth = 0
    /// The last entry's time in journalctl's header (`-- Logs begin at …, end at Thu
    /// 2017-12-28 06:43:00 CET. --`): the year, and the zone when begin and end share one, of
    /// `-o short` lines that have neither.
    public var headerTime: ParsedTime?
}

extension ReadStats {
    /// The error naming the first line that was not UTF-8, and how many were not (`scope`:
    /// what the lines were read from, as the line says it).
    public func invalidUTF8Error(path: String, scope: String = "file") -> InputError? {
        guard let line = firstInvalidUTF8 else { return nil }
        let n = invalidUTF8Lines
        return InputError(path: path, line: line, "invalid UTF-8 (\(n) line\(n == 1 ? "" : "s") in this \(scope); bytes replaced with U+FFFD)")
    }
}

/// Turns the lines (or bytes) of one file into records of one format.
public final class RecordReader {
    public let format: LogFormat
    let lines: LineReader
    public internal(set) var stats = ReadStats()
    public internal(set) var problems: [InputError] = []

    private var pending = RawRecord()
    private var hasPending = false
    private var matches: [PatternMatch]
    /// The format's pattern programs and each capture slot's field, this reader's own and
    /// walked without reference counting: `textLine` copied each `Pattern` per pattern per
    /// line (five references taken and given back, on objects every reading thread shares;
    /// the sparse bench input read 3 % faster without). The programs stay alive with `format`.
    private let programs: UnsafeMutableBufferPointer<Unmanaged<PatternProgram>>
    private let slotFields: [[RecordField?]]
    /// Each pattern's slot of the message (-1: none), for `stackFollows`.
    private let messageSlots: [Int]
    private let swapsDayMonth: [Bool]
    /// `format.javaStacks`, for the per-line path.
    private let javaStacks: Bool
    private var skipPrefixes: [[UInt8]]
    /// First bytes of the skip prefixes: most lines are rejected on their first byte. (A raw
    /// table: no reference counting on the per-line path.)
    private let skipFirstBytes: UnsafeMutablePointer<Bool>
    private let probe: RecordStartProbe
    /// The probe's kind without its payload, for the per-line path (nil: ask `probe`).
    private let cheapProbe: Int
    // For `print` continuation: the last timestamped record's time, process and pid.
    private var lastTime: ParsedTime?
    /// The last timed record's time, for other programs' untimed records (`otherRecords`).
    private var lastRecordTime: ParsedTime?
    /// How many of the patterns tried are the format's own (the rest: `otherRecords`).
    private let ownPatterns: Int
    private var lastProcess: [UInt8]?
    private var lastPid: [UInt8]?
    private var waiting: [RawRecord] = []
    /// `print` formats: brackets the pending NSLog message left open (`{`, `[`, `(`), so the
    /// lines of a dictionary dump, a JS array or a call stack continue it; and how many lines
    /// it has taken (bounded, so one unbalanced bracket cannot swallow the rest).
    private var pendingDepth = 0
    private var pendingJoined = 0
    static let maxJoinedLines = 200
    /// Lines still to parse whole, whatever the prefilter says: a crash report's header after
    /// the line that opens it, whose keys (`Process:`, `Date/Time:`, `Termination Reason:`) are
    /// no vocabulary's words (`CrashReportText` reads them).
    private var wholeLinesLeft = 0
    /// The lines that open a pasted crash report's header: its `Hardware Model:` (every layout
    /// has one before `Process:`), and `Exception Type:`, where a
    /// paste of only the part that matters begins (`Exception Type: EXC_RESOURCE`, its subtype
    /// and `(Limit 50 MB)` message, `Termination Reason:`), or the first line after a paste's
    /// `Process:` and `Date/Time:` that the prefilter lets through (`CrashReportText` looks back
    /// for them: `Process:` itself is no anchor, it would slow every noisy log by a fifth).
    /// They start with different bytes.
    /// (`Exception type:`: the crash summary TestFlight feedback and Xcode's Organizer give,
    /// `Date: 6/24/20, 12:54 AM` / `Process: X` / `Exception type: …` / `Triggered by thread: 0`)
    public static let crashReportOpeners = ["Hardware Model:", "Exception Type:", "Exception type:"].map { Array($0.utf8) }
    public static let crashReportHeaderLines = 60
    private var scratch: [UInt8] = []
    private let keyTable: [(key: [UInt8], field: RecordField?, rank: Int)]
    /// The quoted JSON keys that give a record its message.
    private let messageKeys: [[UInt8]]
    /// journalctl-style matches, applied to journal renderings (export, JSON).
    private let filter: JournalFilter
    let filterKeys: [[UInt8]]

    /// Lines the prefilter rejects are never parsed (only counted, and closing the record before).
    private let prefilter: Prefilter?
    /// The record being built is one the prefilter rejected: its continuation lines are skipped.
    private var pendingIrrelevant = false

    /// Runs of irrelevant lines go through `Skimmer` (false: every line through the full path,
    /// which a test compares against).
    private let skims: Bool
    /// A paste's code span opened on a line before and not closed yet (`CodeMarks`).
    var codeSpanOpen = false
    /// Lines the skimmer consumed (for tests: that it ran at all).
    private(set) var skimmedLines = 0

    /// Tells lines of another format (nil: not looked for: a format given by the user, the
    /// `show` and `tail` readers); `foreign` holds those set aside, to be read in theirs.
    private let foreignTest: ForeignLineTest?
    public private(set) var foreign: ForeignLines?
    /// The last line read was set aside: the lines after it that this format does not read
    /// (continuations, print() lines) go with it.
    private var inForeign = false

    public init(format: LogFormat, lines: LineReader, filter: JournalFilter = JournalFilter(), prefilter: Prefilter? = nil,
                skims: Bool = true, foreign: ForeignFormats? = nil) {
        self.skims = skims
        foreignTest = foreign.flatMap { ForeignLineTest($0, besides: format) }
        self.format = format
        self.lines = lines
        self.prefilter = prefilter?.isUseful == true ? prefilter : nil
        self.filter = format.isJournal ? filter : JournalFilter()
        filterKeys = self.filter.groups.map { Array($0.0.utf8) }
        // (the format's patterns, then those of other programs' lines among its: `otherRecords`)
        let readPatterns = format.patterns + format.otherPatterns
        ownPatterns = format.patterns.count
        matches = readPatterns.map { PatternMatch(slots: $0.names.count) }
        programs = .allocate(capacity: readPatterns.count)
        _ = programs.initialize(from: readPatterns.map { Unmanaged.passUnretained($0.program) })
        slotFields = format.slotFields.map { $0.map { $0 } }
        messageSlots = slotFields.map { $0.firstIndex(of: .message) ?? -1 }
        swapsDayMonth = readPatterns.indices.map { format.swapDayMonth.contains($0) }
        javaStacks = format.javaStacks
        skipPrefixes = (format.skip + format.headers).map { Array($0.utf8) }
        skipFirstBytes = .allocate(capacity: 256)
        skipFirstBytes.initialize(repeating: false, count: 256)
        for p in skipPrefixes where !p.isEmpty { skipFirstBytes[Int(p[0])] = true }
        // A code fence or span's backtick, a fence's tilde: the full path looks (`CodeMarks`).
        skipFirstBytes[Int(CodeMarks.tick)] = true
        skipFirstBytes[Int(CodeMarks.tilde)] = true
        skipFirstBytes[Int(CodeMarks.quote)] = true
        // (plain text's `#` lines: a Crashlytics export's header, `crashlyticsLine`)
        if format.kind == .plain { skipFirstBytes[Int(UInt8(ascii: "#"))] = true }
        probe = format.startProbe
        cheapProbe = format.startProbe.cheapCode
        var table: [(key: [UInt8], field: RecordField?, rank: Int)] = []
        for (rank, k) in format.jsonTimeKeys.enumerated() { table.append((Array(k.utf8), nil, rank)) }
        for (field, keys) in format.jsonFields {
            for (rank, k) in keys.enumerated() { table.append((Array(k.utf8), field, rank)) }
        }
        keyTable = table
        messageKeys = table.filter { $0.field == .message }.map { [UInt8(ascii: "\"")] + $0.key + [UInt8(ascii: "\"")] }
    }

    deinit {
        skipFirstBytes.deallocate()
        programs.deallocate()
    }

    /// Reads to the end, calling `sink` for every record in file order.
    public func run(_ sink: (inout RawRecord) throws -> Void) throws {
        try withoutActuallyEscaping(sink) { sink in
            liveSink = sink
            defer { liveSink = nil }
            do {
                switch format.kind {
                case .lines, .plain: try runLines(sink)
                case .jsonLines: try runJSONLines(sink)
                case .jsonArray: try runJSONArray(sink)
                case .journalExport: try runExport(sink)
                case .journalVerbose: try runVerbose(sink)
                }
            } catch {
                // The input broke off (a gzip or an archive cut short, a budget spent): the
                // record being read when it did is handed on as at its end, then the error (it
                // was lost: the last whole line of a cut .gz was one record short).
                if lines.sourceFailed, format.kind == .lines || format.kind == .plain { try? finishLines(sink) }
                throw error
            }
        }
        problems.append(contentsOf: lines.problems)
    }

    /// `run`'s sink while it runs, for `streamWentQuiet`.
    private var liveSink: ((inout RawRecord) throws -> Void)?

    /// A live stream went quiet while `run` waits for its next bytes (`QuietSource`): the
    /// record held until the next line shows it ended is handed on now, unless a dump it
    /// opened (`{`, `[`) is still open.
    public func streamWentQuiet() throws {
        guard let liveSink, hasPending, pendingDepth == 0 else { return }
        try emitPending(liveSink)
    }

    // MARK: text lines

    func checkUTF8(_ line: UnsafeRawBufferPointer) {
        if !isASCII(line) && !isValidUTF8(line) {
            stats.invalidUTF8Lines += 1
            if stats.firstInvalidUTF8 == nil { stats.firstInvalidUTF8 = lines.lineNumber }
        }
    }

    /// `systemctl status`'s head above the entries: its unit, and when it shows the unit failed
    /// (`Active: failed (Result: exit-code) since …`), that line is a record of the unit's at that
    /// time (the entries below it may not hold the death: janus#2859, coturn#118).
    private var statusUnit: [UInt8]?
    private func statusHead(_ line: UnsafeRawBufferPointer, _ sink: (inout RawRecord) throws -> Void) throws {
        if let unit = JournalTextHeader.statusUnit(line) {
            statusUnit = unit
            return
        }
        guard let unit = statusUnit, let (time, from) = JournalTextHeader.failedSince(line) else { return }
        var rec = RawRecord()
        rec.reset(line: lines.lineNumber)
        rec.set(.message, UnsafeRawBufferPointer(rebasing: line[from...]))
        rec.set(.process, bytes: unit)
        rec.time = time
        stats.records += 1
        headRecords += 1
        try sink(&rec)
    }
    /// `systemctl status` pasted with no entries below it (read as plain text: jitsi/jibri#279):
    /// its unit line is remembered, and its `Active: failed (Result: …) since …` line is given
    /// the unit and that time, as the head above a journal's entries is (`statusHead`). True
    /// when `pending` was set so.
    private func plainStatus(_ line: UnsafeRawBufferPointer) -> Bool {
        if let unit = JournalTextHeader.statusUnit(line) {
            statusUnit = unit
            return false
        }
        guard let unit = statusUnit, let (time, from) = JournalTextHeader.failedSince(line) else { return false }
        pending.set(.message, UnsafeRawBufferPointer(rebasing: line[from...]))
        pending.set(.process, bytes: unit)
        pending.time = time
        return true
    }
    /// Firebase Crashlytics' stack trace export, pasted (amazon-chime-sdk-ios#548): its header
    /// (`# Crashlytics - Stack trace`, `# Application: MyApp`, `# Date: Fri Nov 25 2022
    /// 13:57:44 GMT+0100 (…)`) is remembered, and its crashed thread's `Crashed: <queue>` line
    /// is given that time and the application (unless redacted, `***`). True when `line` was
    /// the header's or `pending` was set so.
    private var crashlytics: (time: ParsedTime?, app: [UInt8]?)?
    private func crashlyticsLine(_ line: UnsafeRawBufferPointer) -> Bool {
        if line.first == UInt8(ascii: "#") {
            if line.starts(with: Self.crashlyticsOpener) {
                crashlytics = (nil, nil)
            } else if crashlytics != nil, line.starts(with: Self.crashlyticsDate) {
                var t = ParsedTime()
                if TimeScan.jsDate(line, Self.crashlyticsDate.count, into: &t) != nil { crashlytics!.time = t }
            } else if crashlytics != nil, line.starts(with: Self.crashlyticsApp) {
                let name = line[Self.crashlyticsApp.count...].filter { $0 != 0x0D }
                crashlytics!.app = name.isEmpty || name.allSatisfy({ $0 == UInt8(ascii: "*") }) || name.contains(0x20) ? nil : Array(name)
            }
            return false
        }
        guard let c = crashlytics, line.starts(with: Self.crashlyticsCrashed) else { return false }
        crashlytics = nil
        pending.set(.message, line)
        if let app = c.app { pending.set(.process, bytes: app) }
        if let t = c.time { pending.time = t }
        return true
    }
    private static let crashlyticsOpener = Array("# Crashlytics - ".utf8)
    private static let crashlyticsDate = Array("# Date: ".utf8)
    private static let crashlyticsApp = Array("# Application: ".utf8)
    private static let crashlyticsCrashed = Array("Crashed: ".utf8)

    /// Records made of the head (the rest of the head is still the head's).
    private var headRecords = 0

    /// Counts a skipped line; journalctl's header gives the time its entries end at.
    func skipped(_ line: UnsafeRawBufferPointer) {
        stats.skipped += 1
        if stats.headerTime == nil, line.count > 30, line[0] == UInt8(ascii: "-") || line[0] == 0x20 || line[0] == UInt8(ascii: "A") {
            stats.headerTime = JournalTextHeader.time(line)
        }
    }

    func isSkippable(_ line: UnsafeRawBufferPointer) -> Bool {
        var allBlank = true
        for b in line where b != 0x20 && b != 0x09 { allBlank = false; break }
        if allBlank { return true }
        // Leading spaces before a footer (one real `log show` paste has one).
        var start = 0
        while start < line.count, line[start] == 0x20 { start += 1 }
        if start < line.count && !skipFirstBytes[Int(line[start])] { return false }
        // A paste's code fence (`CodeMarks`).
        if CodeMarks.isFence(line) { return true }
        for prefix in skipPrefixes where line.count - start >= prefix.count {
            var same = true
            for k in 0..<prefix.count where line[start + k] != prefix[k] { same = false; break }
            if same { return true }
        }
        return false
    }

    private func emitPending(_ sink: (inout RawRecord) throws -> Void) throws {
        guard hasPending else { return }
        hasPending = false
        if pending.timeInferred {
            // An untimed record before any timestamped line waits for one, as print() lines do.
            guard pending.time != nil else { return waiting.append(pending) }
            stats.inferredTimes += 1
        }
        stats.records += 1
        if pending.time?.swappedDayMonth == true { stats.swappedDayMonth += 1 }
        if pending.cutLines > 0 {
            problems.append(InputError(path: lines.path, line: pending.line,
                                       "record longer than \(RawRecord.maxJoinedBytes >> 20) MB with the lines joined to it: its last \(pending.cutLines) lines are not kept"))
        }
        try sink(&pending)
    }

    private func runLines(_ sink: (inout RawRecord) throws -> Void) throws {
        // Locals, not properties, in the loop: no reference counting per line on objects the
        // parallel readers share.
        let lines = self.lines
        let scanner = prefilter?.scanner
        let filtering = scanner != nil
        let skimmer = scanner.flatMap { makeSkimmer($0) }
        // The next line is one the skimmer stopped at for an anchor the block scan verified.
        var anchored = false
        while true {
            // (not while a paste's code span is open: the line that closes it is the full path's)
            if let skimmer, stats.records > 0, pendingDepth == 0, wholeLinesLeft == 0, !codeSpanOpen {
                // A record that matters may be pending: the skimmer then takes no continuation
                // line (those belong to it), and the first record start it takes ends it.
                let hadPending = hasPending
                var progress = Skimmer.Progress(pendingIrrelevant: !hadPending && pendingIrrelevant)
                let consumedAll = try lines.skim { region in
                    progress = skimmer.run(region, pendingIrrelevant: progress.pendingIrrelevant)
                    return (progress.bytes, progress.lines)
                }
                if hadPending && progress.records > 0 { try emitPending(sink) }
                if progress.records > 0 { inForeign = false }
                stats.lines += progress.lines
                skimmedLines += progress.lines
                stats.records += progress.records
                stats.skipped += progress.skipped
                pendingIrrelevant = progress.pendingIrrelevant
                if consumedAll { continue }
                anchored = progress.stoppedAtAnchor
            }
            guard var line = try lines.nextLine() else { break }
            stats.lines += 1
            if line.isEmpty && wholeLinesLeft == 0 {
                // An empty line is skipped whatever comes before it, and so are those after it
                // (counted in one pass).
                let more = lines.skipEmptyLines()
                stats.lines += more
                stats.skipped += more + 1
                anchored = false
                continue
            }
            checkUTF8(line)
            // (in every format, before the line is looked at: plain text kept a block in its
            // record, and a line no rule wants after one was passed over with it unsaid)
            if line.first == 0 {
                guard let rest = passNULs(line) else { continue }
                line = rest
            }
            // A paste's code span or fence around the log's text comes off (`CodeMarks`).
            if CodeMarks.marked(line) { line = CodeMarks.unmarked(line, spanOpen: &codeSpanOpen, first: stats.records == 0 && !hasPending) }
            // A line the skimmer stopped at for an anchor is not scanned for one again.
            let scan = !anchored && wholeLinesLeft == 0
            anchored = false
            if wholeLinesLeft > 0 { wholeLinesLeft -= 1 }
            if filtering, stats.records > 0, scan, !scanner.unsafelyUnwrapped.mayMatch(line), try irrelevant(line, sink) { continue }
            if isSkippable(line) { skipped(line); continue }
            if Self.opensCrashReport(line) { wholeLinesLeft = Self.crashReportHeaderLines }
            pendingIrrelevant = false
            if format.kind == .plain {
                // (a Crashlytics export's header line: before it may be set aside for its time)
                if line.first == UInt8(ascii: "#") { _ = crashlyticsLine(line) }
                // (In plain text only the lines that show another format are set aside: no
                // line of plain text ends their run.)
                if foreignTest != nil, pendingDepth == 0, foreignTest!.starts(line) {
                    try setAside(line, sink)
                    inForeign = false
                    continue
                }
                if hasPending && pendingDepth > 0 && pendingJoined < Self.maxJoinedLines {
                    // A dump (dictionary, array, call stack) continues the message that opened it.
                    pending.appendToMessage(line)
                    pendingJoined += 1
                    pendingDepth = Self.bracketDepth(line, from: pendingDepth)
                    continue
                }
                try emitPending(sink)
                pending.reset(line: lines.lineNumber)
                if !plainStatus(line), line.first == UInt8(ascii: "#") || !crashlyticsLine(line) { pending.set(.message, line) }
                hasPending = true
                stackFollows(line)
                pendingDepth = Self.opensBlock(line) ? Self.bracketDepth(line, from: 0) : 0
                pendingJoined = 0
                continue
            }
            var rest = line
            while true {
                // A paste that lost its line breaks: the text before an embedded record is a
                // line of its own.
                var piece = rest
                var next: UnsafeRawBufferPointer?
                if let k = format.collapsedRecordStart(rest, &matches) {
                    piece = UnsafeRawBufferPointer(rebasing: rest[..<(k - 1)])
                    next = UnsafeRawBufferPointer(rebasing: rest[k...])
                    // A Markdown quote (`> 2022-04-28 08:33:02.467842+0200 Runner[…] …`, a
                    // log quoted in an issue) is no line of its own.
                    if piece.allSatisfy({ $0 == UInt8(ascii: ">") || $0 == 0x20 }) {
                        rest = next!
                        continue
                    }
                }
                try textLine(piece, sink)
                guard let n = next else { break }
                rest = n
            }
        }
        try finishLines(sink)
    }

    /// The end of a text input: the record held for its continuation lines, the unparsed lines
    /// held, the print() lines waiting for a time.
    private func finishLines(_ sink: (inout RawRecord) throws -> Void) throws {
        try emitPending(sink)
        if held.count > 0 { countHeld() }
        // print() lines with no timestamped line anywhere: records without a time.
        for var rec in waiting {
            stats.records += 1
            try sink(&rec)
        }
        waiting = []
    }

    /// A record's message that a stack follows (a Go panic, gdb's signal: `DeathFrames.opens`):
    /// the lines after it are parsed whole, not skimmed, for the frames that name the daemon
    /// and the function (they hold no vocabulary's words).
    @inline(__always) private func stackFollows(_ message: UnsafeRawBufferPointer) {
        if DeathFrames.opens(message) { wholeLinesLeft = max(wholeLinesLeft, DeathFrames.window) }
    }

    /// The fast path for irrelevant lines, when the format's record starts can be told cheaply.
    private func makeSkimmer(_ scanner: PrefilterScanner) -> Skimmer? {
        guard skims else { return nil }
        let probeKind: Int
        if format.kind == .plain {
            probeKind = 0
        } else {
            guard (1...5).contains(cheapProbe) else { return nil }
            switch format.continuation {
            case .print, .none: return nil
            default: probeKind = cheapProbe
            }
        }
        return Skimmer(scanner: scanner, skipFirstBytes: UnsafePointer(skipFirstBytes), probe: probeKind,
                       skipsContinuations: format.kind != .plain && format.continuation == .join,
                       stopsAtDumps: format.dumps, maxLineLength: lines.maxLineLength)
    }

    /// A line the prefilter rejected: no recognized message can be in it. Returns false when
    /// it must be parsed anyway (an Xcode timestamp that print() lines after it will need, or
    /// a line the format cannot classify cheaply).
    private func irrelevant(_ line: UnsafeRawBufferPointer, _ sink: (inout RawRecord) throws -> Void) throws -> Bool {
        if isSkippable(line) {
            skipped(line)
            return true
        }
        if format.kind == .plain {
            // A dump's lines, and the line that opens one, are read in full (joined whatever
            // the vocabulary thinks of them).
            if hasPending && pendingDepth > 0 { return false }
            if Self.opensBlock(line) { return false }
            // (a status's unit line, for its `Active: failed` line below: `plainStatus`; a
            // Crashlytics export's header, for its `Crashed:` line: `crashlyticsLine`)
            if let unit = JournalTextHeader.statusUnit(line) { statusUnit = unit }
            if line.first == UInt8(ascii: "#") { _ = crashlyticsLine(line) }
            stats.records += 1
            return true
        }
        let starts: Bool
        switch cheapProbe {
        case 1: starts = RecordStartProbe.isoDate.test(line)!
        case 2: starts = RecordStartProbe.bsdDate.test(line)!
        case 3: starts = RecordStartProbe.clock.test(line)!
        case 4: starts = RecordStartProbe.wordThenTab.test(line)!
        case 5: starts = RecordStartProbe.isoAnyDate.test(line)!
        default:
            guard let s = probe.test(line) else { return false }
            starts = s
        }
        if starts {
            if format.continuation == .print { return false }
            // (a row that opens a dump is read, so that the dump's lines go with it: `textLine`)
            if format.dumps, Self.opensBlock(line) { return false }
            inForeign = false
            try emitPending(sink)
            pendingIrrelevant = true
            // (a dump the record before left open ends with it)
            pendingDepth = 0
            pendingJoined = 0
            stats.records += 1
            return true
        }
        switch format.continuation {
        case .print:
            // Continues a multi-line NSLog record.
            if hasPending && (pendingDepth > 0 || (pendingJoined == 0 && (Self.isLoneOpener(line) || opensIndentedDump(line)))
                || continuesWrappedSelector(line)) {
                return false
            }
            stats.records += 1  // a print() line with nothing recognizable
            pendingJoined = Self.maxJoinedLines  // the pending record is no longer the line before
            return true
        case .none:
            return false
        default:
            // (A column-0 dump goes on to its closing bracket, whatever the record.)
            if hasPending && !pendingIrrelevant || pendingDepth > 0 { return false }  // continues a record that matters
            guard pendingIrrelevant else { return false }
            // Only a line that can continue a record is skipped with the record: in a tab or
            // indented format, an indented line or a column-0 dump's bracket. Another line is the
            // full path's to judge (unparsed), not lost uncounted (a paste of `journalctl -o
            // short` then `-o short-iso` lost the second).
            if format.continuation == .join { return true }
            if let first = line.first, first == 0x20 || first == 0x09 { return true }
            if format.continuation == .indented, Self.isGoFrame(line) || javaStacks && Self.isJavaThrowable(line) { return true }
            // A fallback file's line without its time is a record of its own (`textLine`); one
            // no anchor is in is counted here (through the full path, a tenth of such lines
            // made a docker log half again as slow), unless another format's line begins there.
            if format.fallback || format.otherLinesAreRecords, pendingDepth == 0, !inForeign, !(foreignTest?.starts(line) ?? false), !Self.isLoneOpener(line) {
                stats.records += 1
                return true
            }
            return Self.isLoneOpener(line) || Self.isLoneCloser(line)
        }
    }

    /// How a fallback file's first record writes its time (`textLine`).
    private var fileTimeShape: TimeShape?
    struct TimeShape: Equatable {
        var first: Int
        var second: Int
        var fifth: UInt8
    }
    /// The lengths of a line's first two words and its fifth byte (`2026-03-12T09:15:04.1Z` and
    /// `2026-03-12 10:15:02.104211+0100`, `2022/02/10 14:04:47` and `2020-09-03 11:03:56,515`).
    static func timeShape(_ line: UnsafeRawBufferPointer) -> TimeShape {
        var i = 0
        while i < line.count, line[i] != 0x20 { i += 1 }
        var j = i + 1
        while j < line.count, line[j] != 0x20 { j += 1 }
        return TimeShape(first: i, second: max(0, j - i - 1), fifth: line.count > 4 ? line[4] : 0)
    }

    /// One text line (or one piece of a collapsed line) of a `lines` format.
    /// A block of NUL bytes before the line (a page zeroed by a crash, a sparse file's hole,
    /// with those `LineReader` passed over already): said, and the line after it, nil when
    /// there is none (it was lost with the block).
    private func passNULs(_ line: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let n = line.firstIndex { $0 != 0 } ?? line.count
        damaged("\(n + lines.takeCollapsedNULs()) NUL bytes passed over (a zero-filled block in the file)")
        return n < line.count ? UnsafeRawBufferPointer(rebasing: line[n...]) : nil
    }

    private func textLine(_ line: UnsafeRawBufferPointer, _ sink: (inout RawRecord) throws -> Void) throws {
        // A fallback format (`timestamped`: a time, then anything) would read another
        // format's line too, its process and pid lost: the others are asked first, for a line
        // whose time is written otherwise than the file's first record's (asked per line, the
        // relay's own lines cost 40 % more). Not while a line of theirs was last: the file's
        // own line after a pasted section is its own.
        if format.fallback, foreignTest != nil, pendingDepth == 0, Self.timeShape(line) != fileTimeShape, foreignTest!.starts(line) {
            return try setAside(line, sink)
        }
        if format.fallback, fileTimeShape == nil { fileTimeShape = Self.timeShape(line) }
        var matched = false
        for i in programs.indices where programs[i]._withUnsafeGuaranteedRef({ $0.match(line, into: &matches[i]) }) {
            try emitPending(sink)
            pending.reset(line: lines.lineNumber)
            // The line is stored once; the fields are its captured ranges.
            pending.setLine(line)
            for (slot, field) in slotFields[i].enumerated() {
                if let field, let r = matches[i].range(slot) { pending.setRange(field, r) }
            }
            // NUL bytes in the process's name are damage (a block zeroed in the file), not
            // another process: read so, the line made a session of its own with its findings.
            // (the line is searched first, by memchr: a field's bytes one by one cost 0.7 % of
            // the dense bench's instructions)
            if let base = line.baseAddress, memchr(base, 0, line.count) != nil,
                pending.withBytes(.process, { p in p.baseAddress.map { memchr($0, 0, p.count) != nil } ?? false }) == true
            {
                damaged("NUL bytes in the line's process name: the line is damaged, not read")
                countUnparsed(lines.lineNumber)
                hasPending = false
                inForeign = false
                return
            }
            if let level = format.levelInMessage, let s = pending.range(.subsystem), let m = pending.range(.message), s.lowerBound < m.lowerBound,
                pending.withBytes(.level, { $0.elementsEqual(level) }) == true
            {
                pending.setRange(.message, s.lowerBound..<m.upperBound)
            }
            if messageSlots[i] >= 0, let r = matches[i].range(messageSlots[i]) { stackFollows(UnsafeRawBufferPointer(rebasing: line[r])) }
            if matches[i].hasTime {
                pending.time = matches[i].time
                if swapsDayMonth[i] { pending.time?.swapDayMonth() }
                lastRecordTime = pending.time
            } else if i >= ownPatterns {
                // (another program's untimed line among the format's: the time of the record
                // before it; before any, none, in its place)
                if let time = lastRecordTime {
                    pending.time = time
                    pending.timeInferred = true
                }
            } else if format.continuation == .print {
                // An NSLog line whose timestamp was cut off: its own process and pid, and the
                // time of the nearest timestamped line, as a print() line gets.
                pending.timeInferred = true
                pending.time = lastTime
            }
            hasPending = true
            matched = true
            pendingDepth = 0
            pendingJoined = 0
            if format.continuation == .print {
                pendingDepth = pending.withBytes(.message) { Self.opensBlock($0) ? Self.bracketDepth($0, from: 0) : 0 } ?? 0
                pendingJoined = 0
                if matches[i].hasTime { try timestamped(sink) }
            } else if format.dumps, Self.opensBlock(line) {
                // A row whose message opens a dump (`… Stop apps {`, a Console copy): its lines go
                // on to the closing bracket, column-0 `}` included, as in an Xcode console.
                pendingDepth = pending.withBytes(.message) { Self.bracketDepth($0, from: 0) } ?? 0
            }
            break
        }
        if matched {
            inForeign = false
            return
        }
        if line.first == 0 {
            // (a code span's line that begins with them, once its backtick is off)
            guard let rest = passNULs(line) else { return }
            return try textLine(rest, sink)
        }
        if foreignTest != nil, pendingDepth == 0, inForeign || foreignTest!.starts(line) { return try setAside(line, sink) }
        switch format.continuation {
        case .join where hasPending:
            pending.appendToMessage(line)
        case .tab where hasPending && line.first == 0x09 && pendingDepth == 0,
            .indented where hasPending && (line.first == 0x09 || line.first == 0x20 || Self.isGoFrame(line)
                || javaStacks && Self.isJavaThrowable(line)) && pendingDepth == 0:
            pending.appendToMessage(line)
        case .tab where hasPending && pendingJoined < Self.maxJoinedLines && (pendingDepth > 0 || Self.isLoneOpener(line)),
            .indented where hasPending && pendingJoined < Self.maxJoinedLines && (pendingDepth > 0 || Self.isLoneOpener(line)):
            // An NSLog dictionary or array printed from column 0 (`{`, its indented lines, `}`)
            // in a Console copy: the message it follows goes on to its closing bracket.
            pending.appendToMessage(line)
            pendingJoined += 1
            // (at the bound the dump is given up: the lines after are judged as lines again)
            pendingDepth = pendingJoined < Self.maxJoinedLines ? Self.bracketDepth(line, from: pendingDepth) : 0
        case .print where hasPending && continuesWrappedSelector(line):
            pending.appendToMessage(line, wrapped: true)
            pendingJoined += 1
            pendingDepth = pending.withBytes(.message) { Self.opensBlock($0) ? Self.bracketDepth($0, from: 0) : 0 } ?? 0
        case .print where hasPending && pendingJoined < Self.maxJoinedLines
            && (pendingDepth > 0 || (pendingJoined == 0 && (Self.isLoneOpener(line) || opensIndentedDump(line)))):
            pending.appendToMessage(line)
            pendingJoined += 1
            pendingDepth = Self.bracketDepth(line, from: pendingDepth)
        case .print:
            try emitPending(sink)
            pendingDepth = 0
            var rec = RawRecord()
            rec.reset(line: lines.lineNumber)
            rec.set(.message, line)
            rec.timeInferred = true
            if lastTime != nil {
                try emitInferred(&rec, sink)
            } else {
                waiting.append(rec)
            }
        default:
            if JournalTextHeader.isJobFailure(line) {
                // systemctl's own report above a pasted status or journal (`Job for janus.service
                // failed because the control process exited with error code.`, nextcloud-hpb
                // #172): a record of `systemctl`'s, untimed, that leaves the head after it a head.
                let beforeRecords = !hasPending && stats.records == headRecords
                try emitPending(sink)
                var rec = RawRecord()
                rec.reset(line: lines.lineNumber)
                rec.set(.message, line)
                rec.set(.process, bytes: JournalTextHeader.systemctl)
                stats.records += 1
                if beforeRecords { headRecords += 1 }
                try sink(&rec)
                return
            }
            if JournalTextHeader.isAside(line, beforeRecords: !hasPending && stats.records == headRecords) {
                skipped(line)
                try statusHead(line, sink)
                return
            }
            if format.otherLinesAreRecords && !format.fallback {
                // Another program's line among the format's records (`otherLines`): a record of
                // its own, with the time of the record before it (marked inferred), which its
                // indented lines continue (a Node error's dump: `{ Error: spawn …`, its `at …`).
                let time = hasPending ? pending.time : nil
                try emitPending(sink)
                pending.reset(line: lines.lineNumber)
                pending.set(.message, line)
                if let time {
                    pending.time = time
                    pending.timeInferred = true
                }
                hasPending = true
                pendingDepth = 0
                pendingJoined = 0
                return
            }
            if format.fallback {
                // A fallback reads a time and anything: a line without the time is a record of
                // its own, as plain text would read it (a program's print() among its log lines,
                // a systemd line or a ReplayKit error pasted between them, a ticket's sentence),
                // with the time of the record before it when that one was read (marked
                // inferred; a record the skimmer passed over gives none, as plain text has
                // none). Counted unparsed, the vocabulary never saw it: a ticket's -5808 between
                // upload lines was lost.
                let time = hasPending ? pending.time : stats.records == fallbackTimeAt ? fallbackTime : nil
                try emitPending(sink)
                fallbackTime = time
                fallbackTimeAt = stats.records + 1
                var rec = RawRecord()
                rec.reset(line: lines.lineNumber)
                rec.set(.message, line)
                if let time {
                    rec.time = time
                    rec.timeInferred = true
                    stats.inferredTimes += 1
                }
                stats.records += 1
                try sink(&rec)
                return
            }
            if foreignTest != nil { return holdUnparsed(line) }
            countUnparsed(lines.lineNumber)
        }
    }

    /// The time the last untimed line of a fallback file took, and the record count after it:
    /// the next such line takes it too when no record came between.
    private var fallbackTime: ParsedTime?
    private var fallbackTimeAt = -1

    /// Damage met in a line, said once per file part for each of its first few lines.
    private func damaged(_ what: String) {
        damages += 1
        if damages <= 3 { problems.append(InputError(path: lines.path, line: lines.lineNumber, what)) }
    }
    private var damages = 0

    private func countUnparsed(_ line: Int) {
        stats.unparsed += 1
        if stats.firstUnparsed.count < 5 { stats.firstUnparsed.append(line) }
    }

    /// An unparsed line is held while the lines after it are unparsed too: when a line of
    /// another format follows them, they go with it (an Xcode console's print() lines before
    /// its first NSLog line); otherwise they are counted.
    private func holdUnparsed(_ line: UnsafeRawBufferPointer) {
        let number = lines.lineNumber
        if held.count > 0 && (held.first + held.count != number || held.count >= Self.maxHeldUnparsed
            || held.bytes.count >= Self.maxHeldUnparsedBytes)
        {
            countHeld()
        }
        if held.count == 0 { held.first = number }
        held.count += 1
        held.bytes.append(contentsOf: line)
        held.bytes.append(0x0A)
    }

    private func countHeld() {
        for k in 0..<held.count { countUnparsed(held.first + k) }
        held = (0, 0, [])
    }

    /// Unparsed lines held (`holdUnparsed`): the first's number, how many, their bytes.
    private var held: (first: Int, count: Int, bytes: [UInt8]) = (0, 0, [])
    static let maxHeldUnparsed = 256
    static let maxHeldUnparsedBytes = 1 << 20

    /// A text line a JSON reader cannot read: set aside when it (or the line before it) shows
    /// another format, else held as unparsed.
    private func setAsideOrHold(_ line: UnsafeRawBufferPointer, _ sink: (inout RawRecord) throws -> Void) throws {
        if inForeign || foreignTest!.starts(line) { try setAside(line, sink) } else { holdUnparsed(line) }
    }

    /// Sets a line of another format aside (`ForeignLines`); the record before it ends.
    private func setAside(_ line: UnsafeRawBufferPointer, _ sink: (inout RawRecord) throws -> Void) throws {
        try emitPending(sink)
        pendingIrrelevant = false
        pendingJoined = 0
        if foreign == nil { foreign = ForeignLines() }
        if held.count > 0 {
            if held.first + held.count == lines.lineNumber {
                var k = held.first
                held.bytes.withUnsafeBytes { all in
                    var start = 0
                    for i in all.indices where all[i] == 0x0A {
                        foreign!.append(UnsafeRawBufferPointer(rebasing: all[start..<i]), number: k)
                        k += 1
                        start = i + 1
                    }
                }
                held = (0, 0, [])
            } else {
                countHeld()
            }
        }
        foreign!.append(line, number: lines.lineNumber)
        inForeign = true
    }

    /// The message ends with an opening bracket: a dump follows on the next lines.
    static func opensBlock(_ text: UnsafeRawBufferPointer) -> Bool {
        var e = text.count
        if e > 0, text[e - 1] == 0x0D { e -= 1 }  // (the skimmer looks at the same last byte)
        // (and past Markdown's two trailing spaces: a JetsamEvent entry pasted with them on every
        // line was a record a line, its kill unread; the skimmer hands such lines on too)
        while e > 0, text[e - 1] == 0x20 || text[e - 1] == 0x09 { e -= 1 }
        guard e > 0 else { return false }
        let b = text[e - 1]
        return b == UInt8(ascii: "{") || b == UInt8(ascii: "[") || b == UInt8(ascii: "(")
    }

    /// `line` is indented and the pending message left a bracket open before its end (a JS
    /// object dump: `Available devices:  [ { groupId: '',`): the dump continues it. Sets the
    /// depth the message left.
    private func opensIndentedDump(_ line: UnsafeRawBufferPointer) -> Bool {
        guard let first = line.first, first == 0x20 || first == 0x09 else { return false }
        let depth = pending.withBytes(.message) { Self.bracketDepth($0, from: 0) } ?? 0
        guard depth > 0 else { return false }
        pendingDepth = depth
        return true
    }

    /// The pending NSLog message was cut inside an Objective-C method name (`… -[RPScreenRecorder `:
    /// a paste wrapped at its width) and `line` completes the name (`startCaptureWithHandler:…]…`):
    /// the two are one line. Only the first line after the record, so a print() line that
    /// happens to hold a `]` is not taken otherwise.
    private func continuesWrappedSelector(_ line: UnsafeRawBufferPointer) -> Bool {
        guard pendingJoined == 0, let first = line.first, Self.isSelectorByte(first) else { return false }
        var i = 0
        while i < line.count, i < 256, Self.isSelectorByte(line[i]) { i += 1 }
        guard i < line.count, line[i] == UInt8(ascii: "]") else { return false }
        return pending.withBytes(.message) { Self.endsInOpenSelector($0) } ?? false
    }

    /// `text` ends inside `-[Class selector…` or `+[Class …` (no `]` after it yet).
    static func endsInOpenSelector(_ text: UnsafeRawBufferPointer) -> Bool {
        var k = text.count
        var spaces = 0
        while k > 0 {
            let b = text[k - 1]
            if b == UInt8(ascii: "[") {
                return k >= 2 && (text[k - 2] == UInt8(ascii: "-") || text[k - 2] == UInt8(ascii: "+"))
                    && k < text.count && text[k] != 0x20 && spaces <= 1
            }
            if b == 0x20 {
                spaces += 1
            } else if !isSelectorByte(b) {
                return false
            }
            if text.count - k > 128 { return false }
            k -= 1
        }
        return false
    }

    @inline(__always) static func isSelectorByte(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
            || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "_") || b == UInt8(ascii: ":")
    }

    /// `line` opens a crash report's header (one of `crashReportOpeners`, after any indent).
    @inline(__always) static func opensCrashReport(_ line: UnsafeRawBufferPointer) -> Bool {
        let i = indentEnd(line)
        guard i < line.count else { return false }
        let first = line[i]
        guard first == UInt8(ascii: "H") || first == UInt8(ascii: "E") else { return false }
        opener: for opener in crashReportOpeners where opener[0] == first && line.count - i >= opener.count {
            for k in opener.indices where line[i + k] != opener[k] { continue opener }
            return true
        }
        return false
    }

    /// Where `text`'s leading spaces and TABs end.
    @inline(__always) static func indentEnd(_ text: UnsafeRawBufferPointer) -> Int {
        var i = 0
        while i < text.count, text[i] == 0x20 || text[i] == 0x09 { i += 1 }
        return i
    }

    /// `}`, `};`, `),`, `]`: the line that closes a column-0 dump.
    static func isLoneCloser(_ line: UnsafeRawBufferPointer) -> Bool {
        var k = 0
        while k < line.count, line[k] == 0x20 || line[k] == 0x09 { k += 1 }
        guard k < line.count, line[k] == UInt8(ascii: "}") || line[k] == UInt8(ascii: "]") || line[k] == UInt8(ascii: ")") else { return false }
        for b in line[(k + 1)...] where !(b == 0x20 || b == 0x0D || b == UInt8(ascii: ";") || b == UInt8(ascii: ",")) { return false }
        return true
    }

    /// A Go stack trace's line at column 0, whose `file:line` comes indented after it: a
    /// function (`github.com/livekit/livekit-server/pkg/rtc.(*ParticipantImpl).Close`, with
    /// its arguments in a panic's dump: `main.main()`, `net/http.(*conn).serve(0xc0001b4000)`),
    /// `created by …`, or `goroutine 7 [running]:`. zap writes its `stacktrace` so after an
    /// error's line; the functions were counted unparsed and lost, their files kept.
    static func isGoFrame(_ line: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let n = line.count
        func starts(_ prefix: [UInt8]) -> Bool { n >= prefix.count && line.prefix(prefix.count).elementsEqual(prefix) }
        guard n >= 3 else { return false }
        if starts(Self.goroutine) {
            // `goroutine 7 [running]:`
            i = 10
            let digits = i
            while i < n, line[i] >= 0x30, line[i] <= 0x39 { i += 1 }
            return i > digits && i + 1 < n && line[i] == 0x20 && line[i + 1] == UInt8(ascii: "[") && line[n - 1] == UInt8(ascii: ":")
        }
        let created = starts(Self.createdBy)
        if created { i = 11 }
        guard i < n else { return false }
        // The function's name up to its arguments: no white space, a `.` followed by a name.
        let first = line[i]
        guard (first | 0x20) >= UInt8(ascii: "a") && (first | 0x20) <= UInt8(ascii: "z") || first == UInt8(ascii: "_") else { return false }
        var dotThenName = false
        var afterDot = false
        while i < n {
            let b = line[i]
            if b == UInt8(ascii: "(") && !(i + 1 < n && line[i + 1] == UInt8(ascii: "*")) || b == 0x20 && created { break }
            if b == 0x20 || b == 0x09 || b == UInt8(ascii: ":") || b == UInt8(ascii: "=") || b == UInt8(ascii: "[") { return false }
            if afterDot, (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") || b == UInt8(ascii: "_") || b == UInt8(ascii: "(") {
                dotThenName = true
            }
            afterDot = b == UInt8(ascii: ".")
            i += 1
        }
        guard dotThenName else { return false }
        // (a panic's frame ends with its arguments; `created by` names the goroutine after them)
        if i == n { return true }
        if line[n - 1] == UInt8(ascii: ")") { return true }
        // (`created by main.main in goroutine 1`, Go 1.21 on)
        return created && line[i...].starts(with: Self.inGoroutine)
    }
    private static let goroutine = Array("goroutine ".utf8)

    /// A Java stack trace's column-0 line (the frames after it are indented): the throwable
    /// (`java.lang.NullPointerException`, `org.ice4j.StunException: timeout`: a dotted class
    /// name ending in `Exception`, `Error` or `Throwable`, alone or before `: `), `Caused by: …`
    /// or `Exception in thread "main" …`.
    static func isJavaThrowable(_ line: UnsafeRawBufferPointer) -> Bool {
        if line.starts(with: causedBy) || line.starts(with: inThread) { return true }
        var i = 0
        var dot = false
        while i < line.count {
            let b = line[i]
            if b == UInt8(ascii: ".") { dot = true } else if !(isLetter(b) || isDigit(b) || b == UInt8(ascii: "_") || b == UInt8(ascii: "$")) { break }
            i += 1
        }
        guard dot, i == line.count || line[i] == UInt8(ascii: ":") || line[i] == 0x0D else { return false }
        let name = UnsafeRawBufferPointer(rebasing: line[..<i])
        return throwableEnds.contains { name.count > $0.count && name.suffix($0.count).elementsEqual($0) }
    }
    private static let causedBy = Array("Caused by: ".utf8)
    private static let inThread = Array("Exception in thread \"".utf8)
    private static let throwableEnds = ["Exception", "Error", "Throwable"].map { Array($0.utf8) }
    private static let createdBy = Array("created by ".utf8)
    private static let inGoroutine = Array(" in goroutine ".utf8)

    /// A line that is only an opening bracket (the `(` a call stack starts with).
    static func isLoneOpener(_ line: UnsafeRawBufferPointer) -> Bool {
        var found: UInt8 = 0
        for b in line where b != 0x20 && b != 0x09 && b != 0x0D {
            guard found == 0 else { return false }
            found = b
        }
        return found == UInt8(ascii: "{") || found == UInt8(ascii: "[") || found == UInt8(ascii: "(")
    }

    /// Open brackets after `text`, starting from `depth` (quoted text not counted; never
    /// below zero).
    static func bracketDepth(_ text: UnsafeRawBufferPointer, from depth: Int) -> Int {
        var d = depth
        var quoted = false
        for b in text {
            if b == UInt8(ascii: "\"") { quoted.toggle(); continue }
            if quoted { continue }
            switch b {
            case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "("): d += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ")"): d = max(0, d - 1)
            default: break
            }
        }
        return d
    }

    /// A timestamped record arrived: remember it for later print() lines and give its time
    /// to the print() lines that came before any timestamp.
    private func timestamped(_ sink: (inout RawRecord) throws -> Void) throws {
        lastTime = pending.time
        if pending.withBytes(.process, { _ in true }) == nil {
            // A timed line of the app's own logger that names no process (React Native's
            // RCTLog): the nearest NSLog line's, as a print() line takes it.
            if let lastProcess { pending.set(.process, bytes: lastProcess) }
            if let lastPid { pending.set(.pid, bytes: lastPid) }
        } else {
            lastProcess = pending.withBytes(.process) { Array($0) }
            lastPid = pending.withBytes(.pid) { Array($0) }
        }
        guard !waiting.isEmpty else { return }
        for var rec in waiting { try emitInferred(&rec, sink) }
        waiting = []
    }

    /// A print() line: the time, process and pid of the nearest timestamped line.
    private func emitInferred(_ rec: inout RawRecord, _ sink: (inout RawRecord) throws -> Void) throws {
        rec.time = lastTime
        // (A record with its own process, an NSLog line without its timestamp, keeps it.)
        if rec.withBytes(.process, { _ in true }) == nil {
            if let lastProcess { rec.set(.process, bytes: lastProcess) }
            if let lastPid { rec.set(.pid, bytes: lastPid) }
        }
        stats.records += 1
        stats.inferredTimes += 1
        try sink(&rec)
    }

    // MARK: JSON

    /// Unwraps the envelopes JSON lines arrive in: RFC 7464 record separators, server-sent
    /// events, and Python bytes reprs (`b'{...}\n'`) from tools that printed raw lines.
    private func unwrap(_ line: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        scratch.removeAll(keepingCapacity: true)
        var p = line
        while let f = p.first, f == 0x1E || f == 0x20 || f == 0x09 { p = UnsafeRawBufferPointer(rebasing: p[1...]) }
        if p.starts(with: "data: ".utf8) { p = UnsafeRawBufferPointer(rebasing: p[6...]) }
        if p.count >= 3, p[0] == UInt8(ascii: "b"), p[1] == UInt8(ascii: "'") || p[1] == UInt8(ascii: "\"") {
            let quote = p[1]
            var end = p.count
            while end > 2, p[end - 1] != quote { end -= 1 }
            guard end > 2 else { return nil }
            var i = 2
            while i < end - 1 {
                let b = p[i]
                if b == UInt8(ascii: "\\"), i + 1 < end - 1 {
                    let e = p[i + 1]
                    switch e {
                    case UInt8(ascii: "n"): scratch.append(0x0A); i += 2; continue
                    case UInt8(ascii: "t"): scratch.append(0x09); i += 2; continue
                    case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""): scratch.append(e); i += 2; continue
                    case UInt8(ascii: "x") where i + 3 < end:
                        if let v = UInt8(String(decoding: [p[i + 2], p[i + 3]], as: UTF8.self), radix: 16) {
                            scratch.append(v)
                            i += 4
                            continue
                        }
                    default: break
                    }
                }
                scratch.append(b)
                i += 1
            }
            return nil  // caller reads `scratch`
        }
        return p
    }

    private func runJSONLines(_ sink: (inout RawRecord) throws -> Void) throws {
        let lines = self.lines
        let scanner = prefilter?.scanner
        while let line = try lines.nextLine() {
            stats.lines += 1
            checkUTF8(line)
            // (Apple's closing `{"count":N,"finished":1}` is no record: it takes the slow path.)
            if let scanner, stats.records > 0, line.first == UInt8(ascii: "{"), !line.starts(with: #"{"count":"#.utf8),
                !scanner.mayMatch(line), passesOver(valueStart: messageValueStart(line))
            {
                stats.records += 1  // cannot hold a recognized message: not parsed
                continue
            }
            if isSkippable(line) { skipped(line); continue }
            let p = unwrap(line)
            // A text line of another format (not an object): set aside, with the lines after it
            // up to the next object (and the unparsed lines just before it).
            if foreignTest != nil, p?.first != UInt8(ascii: "{"), scratch.isEmpty {
                try setAsideOrHold(line, sink)
                continue
            }
            inForeign = false
            if let p {
                try object(p, sink)
            } else if !scratch.isEmpty {
                let copy = scratch
                try copy.withUnsafeBytes { try object($0, sink) }
            } else {
                unparsed()
            }
        }
        if held.count > 0 { countHeld() }
    }

    /// The first byte of the value of `p`'s message member (after its quoted key, `:` and white
    /// space), or nil when it has none.
    func messageValueStart(_ p: UnsafeRawBufferPointer) -> UInt8? {
        @inline(__always) func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
        for key in messageKeys {
            var i = 0
            while let at = findBytes(p, key, from: i) {
                var j = at + key.count
                while j < p.count, isSpace(p[j]) { j += 1 }
                if j < p.count, p[j] == UInt8(ascii: ":") {
                    j += 1
                    while j < p.count, isSpace(p[j]) { j += 1 }
                    if j < p.count { return p[j] }
                }
                i = at + 1
            }
        }
        return nil
    }

    /// Whether a JSON text without an anchor in its raw bytes may be passed over unparsed: not
    /// when it is a journal's whose message is an array, as journalctl writes a MESSAGE with a
    /// control byte (a colour code) or invalid UTF-8: its bytes' values (`"MESSAGE":[115,101,…]`),
    /// which the prefilter cannot read. (Escapes hide no anchor: anchors hold no byte a JSON
    /// writer escapes, `Pattern.anchor`.) `valueStart` is `messageValueStart`'s answer.
    func passesOver(valueStart: @autoclosure () -> UInt8?) -> Bool {
        !format.isJournal || valueStart() != UInt8(ascii: "[")
    }

    func unparsed() { countUnparsed(lines.lineNumber) }

    /// Apple's `--style json`: one array of pretty-printed objects. A streaming byte-level
    /// reader: it tracks strings, escapes and nesting depth, so nested objects (every current
    /// record's `backtrace`, `source`) whose braces sit on their own lines stay inside their
    /// record, and objects may share lines (`},{`, a minified array on one line). Lines outside
    /// any object that are not JSON punctuation are preamble (skipped) or counted unparsed.
    private func runJSONArray(_ sink: (inout RawRecord) throws -> Void) throws {
        var cutStringSeen = false
        var text: [UInt8] = []
        var depth = 0
        var inString = false
        var escaped = false
        var startLine = 0
        let scanner = prefilter?.scanner
        while let line = try lines.nextLine() {
            stats.lines += 1
            checkUTF8(line)
            if depth == 0 {
                let trimmed = trim(line)
                guard let first = trimmed.first else { stats.skipped += 1; continue }
                let structural = first == UInt8(ascii: "[") || first == UInt8(ascii: "{") || first == UInt8(ascii: "]")
                    || first == UInt8(ascii: ",") || first == UInt8(ascii: "}")
                if !structural {
                    if isSkippable(line) {
                        skipped(line)
                    } else if foreignTest != nil {
                        // (another paste after the array, or before it)
                        try setAsideOrHold(line, sink)
                    } else {
                        unparsed()
                    }
                    continue
                }
                inForeign = false
            }
            var stray = false
            var objects = 0
            // The object's bytes on this line start here; they are appended a run at a time.
            var from = 0
            let n = line.count
            var i = 0
            while i < n {
                let b = line[i]
                if depth == 0 {
                    switch b {
                    case UInt8(ascii: "{"):
                        depth = 1
                        inString = false
                        escaped = false
                        text.removeAll(keepingCapacity: true)
                        from = i
                        startLine = lines.lineNumber
                    case UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: ","), 0x20, 0x09, 0x0D:
                        break
                    default:
                        stray = true
                    }
                    i += 1
                    continue
                }
                if inString {
                    if escaped {
                        escaped = false
                    } else if b == UInt8(ascii: "\\") {
                        escaped = true
                    } else if b == UInt8(ascii: "\"") {
                        inString = false
                    } else {
                        // The rest of a string's plain bytes in one step.
                        var j = i + 1
                        while j < n, line[j] != UInt8(ascii: "\""), line[j] != UInt8(ascii: "\\") { j += 1 }
                        i = j
                        continue
                    }
                    i += 1
                    continue
                }
                switch b {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        objects += 1
                        text.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[from...i]))
                        try text.withUnsafeBytes { p in
                            // Like an `--style ndjson` line: an object with a message whose bytes
                            // hold no vocabulary anchor is a record nothing can come of. (An
                            // object without a message is skipped, not counted as a record: it
                            // is read.)
                            if let scanner, stats.records > 0, filterKeys.isEmpty, !scanner.mayMatch(p),
                                let start = messageValueStart(p), passesOver(valueStart: start)
                            {
                                stats.records += 1
                            } else {
                                try object(p, sink, line: startLine)
                            }
                        }
                    }
                default: break
                }
                i += 1
            }
            if depth > 0 {
                text.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[from..<n]))
                if inString {
                    // A string open at its line's end: no JSON writer breaks one (a newline in it
                    // is `\n`), so a pager or a paste cut the line (`"__CURSOR" : "s=…;t=6395>`).
                    // The string ends there, with a comma (a comma before the `}` is read): the
                    // member keeps what it had (a cut MESSAGE is most of one), and the objects
                    // after it are not read as its text and lost (all but 3 of 117 entries
                    // were); said once per file.
                    text.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ",")])
                    inString = false
                    escaped = false
                    recordCut = true
                    if !cutStringSeen {
                        cutStringSeen = true
                        problems.append(InputError(path: lines.path, line: lines.lineNumber,
                                                   "a JSON string cut at its line's end (a pager's or a paste's cut): read as far as it goes"))
                    }
                }
                text.append(0x0A)
            }
            // A stray `}` or text outside any object, with no object on the line: not JSON.
            if stray && objects == 0 && depth == 0 { unparsed() }
        }
        if held.count > 0 { countHeld() }
        if depth > 0 {
            problems.append(InputError(path: lines.path, line: startLine, "JSON array ends inside a record (truncated export)"))
        }
    }

    private func trim(_ p: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var s = 0
        var e = p.count
        while s < e, p[s] == 0x20 || p[s] == 0x09 { s += 1 }
        while e > s, p[e - 1] == 0x20 || p[e - 1] == 0x09 { e -= 1 }
        return UnsafeRawBufferPointer(rebasing: p[s..<e])
    }

    func lookup(_ key: UnsafeRawBufferPointer) -> Int? {
        for (i, entry) in keyTable.enumerated() where entry.key.count == key.count {
            if entry.key.withUnsafeBytes({ memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0 }) { return i }
        }
        return nil
    }

    /// Reads one JSON object into a record. Objects without a message are skipped
    /// (Apple's closing `{"count":N,"finished":1}`).
    private func object(_ p: UnsafeRawBufferPointer, _ sink: (inout RawRecord) throws -> Void, line: Int? = nil) throws {
        var best = [Int](repeating: -1, count: keyTable.count)
        var ranges = [Range<Int>](repeating: 0..<0, count: keyTable.count)
        var filterValues: [(Int, String)] = []
        // (`"timeInferred":true`: a time a source took from a neighbouring entry, `XcodeMetadataSource`)
        var inferred = false
        let ok = JSONScan.forEachMember(p) { key, range in
            if key.count == 12, key.elementsEqual(Self.timeInferredKey) { inferred = true }
            if !filterKeys.isEmpty, let f = filterKeys.firstIndex(where: { $0.elementsEqual(key) }) {
                var v: [UInt8] = []
                JSONScan.appendValue(p, range, into: &v)
                filterValues.append((f, String(decoding: v, as: UTF8.self)))
            }
            guard key.count > 0, let i = lookup(key) else { return }
            best[i] = 1
            ranges[i] = range
        }
        // (a record a pager or paste cut is said as such: its fields are not said again)
        let cut = recordCut
        recordCut = false
        guard ok else { unparsed(); return }
        if !filterKeys.isEmpty && !passes(filterValues) { stats.skipped += 1; return }
        pending.reset(line: line ?? lines.lineNumber)
        var timeChosen = Int.max
        var fieldRank = [Int](repeating: Int.max, count: RecordField.allCases.count)
        var chosen = [Int](repeating: -1, count: RecordField.allCases.count)
        for (i, entry) in keyTable.enumerated() where best[i] >= 0 {
            if let f = entry.field {
                if entry.rank < fieldRank[f.rawValue] { fieldRank[f.rawValue] = entry.rank; chosen[f.rawValue] = i }
            } else if entry.rank < timeChosen {
                timeChosen = entry.rank
                var value: [UInt8] = []
                JSONScan.appendValue(p, ranges[i], into: &value)
                pending.time = parseTimeValue(value)
            }
        }
        guard chosen[RecordField.message.rawValue] >= 0 else { stats.skipped += 1; return }
        var value: [UInt8] = []
        // A process image path that is no string (`"processImagePath": 7`, `null`): its JSON.
        var badProcess: UnsafeRawBufferPointer?
        for f in RecordField.allCases where f != .message && chosen[f.rawValue] >= 0 {
            value.removeAll(keepingCapacity: true)
            JSONScan.appendValue(p, ranges[chosen[f.rawValue]], into: &value)
            if f == .process && format.processIsPath {
                if let slash = value.lastIndex(of: UInt8(ascii: "/")) {
                    value.removeSubrange(...slash)
                } else if !cut, case let r = ranges[chosen[f.rawValue]], r.isEmpty || p[r.lowerBound] != UInt8(ascii: "\"") {
                    // (no slash: never a good record's path, so its first byte is looked at
                    // only then; it named a process `7`, or none without a word)
                    badProcess = UnsafeRawBufferPointer(rebasing: p[r])
                    continue
                }
            }
            if f == .pid && !cut {
                if value.isEmpty {
                    // (`"processID": null` was no pid without a word; `""` is left as it was)
                    let r = ranges[chosen[f.rawValue]]
                    if !r.isEmpty && p[r.lowerBound] == UInt8(ascii: "n") { pidDamaged(UnsafeRawBufferPointer(rebasing: p[r])); continue }
                } else if !pidField(value) {
                    continue
                }
            }
            pending.set(f, bytes: value)
        }
        if let badProcess { processDamaged(badProcess) }
        value.removeAll(keepingCapacity: true)
        JSONScan.appendValue(p, ranges[chosen[RecordField.message.rawValue]], into: &value)
        // (docker's json-file keeps each line's own line break in `log`: no part of the message)
        while let last = value.last, last == 0x0A || last == 0x0D { value.removeLast() }
        pending.set(.message, bytes: value)
        if timeChosen != Int.max && !cut {
            if pending.time == nil { jsonTimeDamaged() } else { lastJSONTime = pending.time }
        }
        if inferred && pending.time != nil { pending.timeInferred = true }
        hasPending = true
        try emitPending(sink)
    }

    static let timeInferredKey = Array("timeInferred".utf8)

    /// JSON records' last pid per process (its last `maxPidsKept` names), and the last time
    /// read: a record whose pid or time is damaged (`"processID": 1e308`, `-5`, `"abc"`, a
    /// time that is no time) takes them, said, instead of opening a process of its own.
    private var pidByProcess: [[UInt8]: [UInt8]] = [:]
    /// The last few records' processes and their good pids (`pidField`'s common case: a log
    /// alternates between a handful of processes, the app, its extension and their daemons).
    private var recentGood: [(process: [UInt8], pid: [UInt8])] = []
    static let recentGoodKept = 4
    private var lastJSONTime: ParsedTime?
    static let maxPidsKept = 512
    private var fieldDamages = 0
    /// The JSON text of the record being gathered had a string cut at a line's end.
    private var recordCut = false

    /// Whether a JSON record's pid value (unquoted) is a pid: digits, at most pid_t's
    /// largest. Otherwise the damage is said and the pid the process last had in this file
    /// is set, or none when it had none (the record keeps its message either way).
    private func pidField(_ value: [UInt8]) -> Bool {
        var v = 0
        var good = value.count <= 10
        if good {
            for b in value {
                guard b >= 0x30 && b <= 0x39 else { good = false; break }
                v = v * 10 + Int(b - 0x30)
            }
            good = good && v <= Int(Int32.max)
        }
        if good {
            // (a process and pid among the last few records', most records: no name copied and
            // no lookup, which cost ~1,400 instructions a record, +1.7 % on an ndjson log)
            let known = pending.withBytes(.process) { name -> Bool in
                for r in recentGood where r.pid == value && r.process.count == name.count {
                    if name.isEmpty { return true }
                    if r.process.withUnsafeBytes({ memcmp($0.baseAddress!, name.baseAddress!, name.count) == 0 }) {
                        return true
                    }
                }
                return false
            }
            guard let known else { return true }
            if known { return true }
            guard let process = pending.withBytes(.process, { Array($0) }) else { return true }
            if pidByProcess[process] != value, pidByProcess.count < Self.maxPidsKept || pidByProcess[process] != nil {
                pidByProcess[process] = value
            }
            if let i = recentGood.firstIndex(where: { $0.process == process }) {
                recentGood[i].pid = value
            } else {
                if recentGood.count == Self.recentGoodKept { recentGood.removeFirst() }
                recentGood.append((process, value))
            }
            return true
        }
        value.withUnsafeBytes { pidDamaged($0) }
        return false
    }

    /// A pid value (its JSON, or its text unquoted) that is no pid: the pid its process last
    /// had in this file is set, or none, and the damage said.
    private func pidDamaged(_ value: UnsafeRawBufferPointer) {
        let process = pending.withBytes(.process) { Array($0) }
        let shown = String(decoding: value.prefix(40), as: UTF8.self)
        var what = "pid '\(shown)' is no pid: "
        if let process, let known = pidByProcess[process] {
            pending.set(.pid, bytes: known)
            what += "the record is read as \(String(decoding: process, as: UTF8.self))[\(String(decoding: known, as: UTF8.self))]'s, the pid it last had"
        } else {
            what += "the record is read without one"
        }
        fieldDamage(what)
    }

    /// A process image path that is no string (`7`, `null`, an object; its JSON): the record
    /// is read as the process that last had its pid in this file (a lost process name no
    /// longer opens a process `7` of its own), or without a process when no process had it;
    /// said either way.
    private func processDamaged(_ json: UnsafeRawBufferPointer) {
        let shown = String(decoding: json.prefix(40), as: UTF8.self)
        var what = "process '\(shown)' is no process image path: "
        var process: [UInt8]?
        if let pid = pending.withBytes(.pid, { Array($0) }) {
            // (the latest of the last few records' processes with that pid first)
            if let recent = recentGood.last(where: { $0.pid == pid }) {
                process = recent.process
            } else {
                // (only for a damaged record: at most `maxPidsKept` entries)
                process = pidByProcess.first { $0.value == pid }?.key
            }
            if let process {
                pending.set(.process, bytes: process)
                what += "the record is read as \(String(decoding: process, as: UTF8.self))[\(String(decoding: pid, as: UTF8.self))]'s, the process that last had its pid"
            }
        }
        if process == nil { what += "the record is read without one" }
        fieldDamage(what)
    }

    /// A JSON record's time field that is no time: the record takes the time of the record
    /// before it (counted as inferred), or has none when it is the first.
    private func jsonTimeDamaged() {
        if let lastJSONTime {
            pending.time = lastJSONTime
            pending.timeInferred = true
            fieldDamage("time is no time: the record takes the time of the one before it")
        } else {
            fieldDamage("time is no time, and no record before it has one: the record is read untimed")
        }
    }

    /// Damage in a record's field, said for the file's first few records that have it.
    private func fieldDamage(_ what: String) {
        fieldDamages += 1
        if fieldDamages <= 3 { problems.append(InputError(path: lines.path, line: pending.line, what)) }
        if fieldDamages == 4 { problems.append(InputError(path: lines.path, line: pending.line, "more records with damaged fields: not said one by one")) }
    }

    private func passes(_ values: [(Int, String)]) -> Bool {
        let groups = filter.groups
        return filter.accepts { field in
            guard let k = groups.firstIndex(where: { $0.0 == field }) else { return [] }
            return values.filter { $0.0 == k }.map(\.1)
        }
    }

    /// A time since 1970 in a unit its size gives (`"timeFormat": "auto"`): up to 11 digits
    /// before a point are seconds (to the year 5138), up to 14 milliseconds, up to 17
    /// microseconds, more nanoseconds; digits after a point are fractions of that unit. Nil for
    /// anything else (an exponent, a sign, a second point, past 9999).
    static func epochAnyUnit(_ value: [UInt8]) -> ParsedTime? {
        var whole: Int64 = 0
        var digits = 0
        var k = 0
        while k < value.count, isDigit(value[k]) {
            guard digits < 19 else { return nil }
            whole = whole * 10 + Int64(value[k] - 0x30)
            digits += 1
            k += 1
        }
        // Fraction digits, scaled to the unit's micro part (nanoseconds have none).
        var fraction: Int64 = 0
        var scale: Int64 = 1
        if k < value.count, value[k] == UInt8(ascii: ".") {
            k += 1
            var seen = 0
            while k < value.count, isDigit(value[k]) {
                if seen < 9 { fraction = fraction * 10 + Int64(value[k] - 0x30); scale *= 10 }
                seen += 1
                k += 1
            }
            guard seen > 0 else { return nil }
        }
        guard k == value.count, digits > 0 else { return nil }
        let micros: Int64
        switch digits {
        case ...11: micros = whole * 1_000_000 + fraction * 1_000_000 / scale
        case 12...14: micros = whole * 1_000 + fraction * 1_000 / scale
        case 15...17: micros = whole
        default: micros = whole / 1_000
        }
        guard micros <= latestEpochMicros else { return nil }
        return .epoch(micros: micros)
    }

    /// 9999-12-31T23:59:59.999999Z.
    static let latestEpochMicros: Int64 = 253_402_300_799_999_999

    private func parseTimeValue(_ value: [UInt8]) -> ParsedTime? {
        if format.jsonTimeIsEpochMicros {
            // (past 9999-12-31 is no time either: it was clamped to 9999 without a word)
            guard !value.isEmpty, value.allSatisfy(isDigit), let v = Int64(String(decoding: value, as: UTF8.self)), v <= Self.latestEpochMicros else {
                return nil
            }
            return .epoch(micros: v)
        }
        if format.jsonTimeIsAuto, let t = Self.epochAnyUnit(value) { return t }
        return value.withUnsafeBytes { p in
            var t = ParsedTime()
            return TimeScan.iso(p, 0, into: &t) != nil ? t : nil
        }
    }

    /// Turns one journal entry's fields (those the format reads, by key-table index) into a
    /// record, honouring the keys' priorities, and empties them: export and verbose text.
    /// `headerTime` is the entry's time when no field gives one (verbose's entry header).
    func emitJournalEntry(_ fields: inout [(Int, [UInt8])], _ filterValues: inout [(Int, String)], line: Int,
                          headerTime: ParsedTime? = nil, _ sink: (inout RawRecord) throws -> Void) throws {
        defer { fields.removeAll(keepingCapacity: true); filterValues.removeAll() }
        guard !fields.isEmpty else { return }
        if !filterKeys.isEmpty && !passes(filterValues) { stats.skipped += 1; return }
        pending.reset(line: line)
        var timeRank = Int.max
        var fieldRank = [Int](repeating: Int.max, count: RecordField.allCases.count)
        var chosen = [[UInt8]?](repeating: nil, count: RecordField.allCases.count)
        /// The time field's value when it is no time (`__REALTIME_TIMESTAMP=-1773306904673211`).
        var unreadTime: [UInt8]?
        for (i, value) in fields {
            let entry = keyTable[i]
            if let f = entry.field {
                if entry.rank < fieldRank[f.rawValue] { fieldRank[f.rawValue] = entry.rank; chosen[f.rawValue] = value }
            } else if entry.rank < timeRank {
                // (a better-ranked time that is no time does not undo one read: journalctl
                // falls back to `__REALTIME_TIMESTAMP` likewise)
                if let t = parseTimeValue(value) {
                    timeRank = entry.rank
                    pending.time = t
                    unreadTime = nil
                } else if pending.time == nil {
                    unreadTime = value
                }
            }
        }
        if pending.time == nil { pending.time = headerTime }
        // (said, as the JSON readers say it: every time of an export made null, without a word)
        if pending.time == nil, let bad = unreadTime {
            fieldDamage("time \(Sanitize.line(String(decoding: bad.prefix(40), as: UTF8.self))) is no time: the entry is read untimed")
        }
        guard let message = chosen[RecordField.message.rawValue] else { stats.skipped += 1; return }
        for f in RecordField.allCases where f != .message {
            if let v = chosen[f.rawValue] { pending.set(f, bytes: v) }
        }
        pending.set(.message, bytes: message)
        hasPending = true
        try emitPending(sink)
    }

    // MARK: journal export

    private func runExport(_ sink: (inout RawRecord) throws -> Void) throws {
        var fields: [(Int, [UInt8])] = []
        var filterValues: [(Int, String)] = []
        var entryLine = 0
        var inEntry = false
        // After a malformed binary field the rest of that entry is skipped up to the blank line
        // that ends it, and reading goes on with the next entry (it used to stop the file).
        var skippingEntry = false
        func finish() throws {
            defer { inEntry = false }
            try emitJournalEntry(&fields, &filterValues, line: entryLine, sink)
        }
        while let line = try lines.nextLine() {
            stats.lines += 1
            if line.isEmpty {
                if skippingEntry {
                    skippingEntry = false
                    fields.removeAll(keepingCapacity: true)
                    filterValues.removeAll()
                    inEntry = false
                    stats.skipped += 1
                    continue
                }
                try finish()
                continue
            }
            if skippingEntry { continue }
            if !inEntry { entryLine = lines.lineNumber; inEntry = true }
            if let eq = line.firstIndex(of: UInt8(ascii: "=")) {
                let key = UnsafeRawBufferPointer(rebasing: line[..<eq])
                if let i = lookup(key) { fields.append((i, Array(line[(eq + 1)...]))) }
                if !filterKeys.isEmpty, let f = filterKeys.firstIndex(where: { $0.elementsEqual(key) }) {
                    filterValues.append((f, String(decoding: line[(eq + 1)...], as: UTF8.self)))
                }
                continue
            }
            // A line that cannot be a field's name (journald's are A–Z, 0–9 and `_`): the shell
            // prompt a paste starts with (`user@host:~$ journalctl -o export`), not a binary
            // field whose "size" would swallow the entry after it.
            if !line.allSatisfy(JournalVerbose.isNameByte) {
                // (a paste's code fence before or after the entries: passed over)
                if fields.isEmpty && CodeMarks.isFence(line) {
                    stats.skipped += 1
                    inEntry = false
                    continue
                }
                unparsed()
                if fields.isEmpty { inEntry = false }
                continue
            }
            // Binary-safe field: NAME\n, 64-bit little-endian size, data, \n.
            let name = Array(line)
            guard var sizeBytes = try lines.readExact(8) else {
                problems.append(InputError(path: lines.path, line: lines.lineNumber, "export entry ends inside binary field \(String(decoding: name, as: UTF8.self))"))
                return
            }
            // Pasted from a terminal, the size's bytes show as `^G^@^@^@^@^@^@^@` (caret
            // notation: victoriametrics#7105, systemd#16202): read back, the value follows.
            // (a size's high bytes are zeros, `^@`; its low byte may be printable: `7^@^@…` is 55)
            var caret = false
            if sizeBytes.indices.dropLast().contains(where: { sizeBytes[$0] == UInt8(ascii: "^") && sizeBytes[$0 + 1] == UInt8(ascii: "@") }),
                let decoded = try Self.caretSize(sizeBytes, lines)
            {
                sizeBytes = decoded
                caret = true
            }
            var size: UInt64 = 0
            for (k, b) in sizeBytes.enumerated() { size |= UInt64(b) << (8 * UInt64(k)) }
            // A field's value is kept up to the line limit (a MESSAGE longer than a line is of
            // no use whole, and a hostile 1 GB field must not be held): the rest is passed over.
            // (A pasted value is a paste's size: a garbage caret size must not swallow the file.)
            guard size < 1 << 30, !caret || size <= UInt64(lines.maxLineLength),
                let (data, newlines) = try lines.readExact(Int(size), keeping: lines.maxLineLength),
                let nl = try lines.readExact(1), nl == [0x0A]
            else {
                problems.append(InputError(path: lines.path, line: lines.lineNumber, "malformed binary field \(String(decoding: name, as: UTF8.self)) in export entry (entry skipped)"))
                skippingEntry = true
                continue
            }
            lines.advanceLineCount(by: sizeBytes.filter { $0 == 0x0A }.count + newlines + 1)
            if let i = name.withUnsafeBytes({ lookup($0) }) { fields.append((i, data)) }
            if let f = filterKeys.firstIndex(of: name) { filterValues.append((f, String(decoding: data, as: UTF8.self))) }
        }
        try finish()
    }
}

extension RecordReader {
    /// Eight bytes in caret notation (`^@` 0, `^G` 7, `^?` 127, a printable byte as itself),
    /// starting with the `read` bytes and reading on as far as they need (up to 16); nil when they
    /// are not that (the bytes read stay read: the field is then malformed either way).
    static func caretSize(_ read: [UInt8], _ lines: LineReader) throws -> [UInt8]? {
        var text = read
        var out: [UInt8] = []
        var i = 0
        while out.count < 8 {
            while i + 1 >= text.count, text.count < 16 {
                guard let more = try lines.readExact(1) else { return nil }
                text.append(contentsOf: more)
            }
            guard i < text.count else { return nil }
            let b = text[i]
            if b == UInt8(ascii: "^"), i + 1 < text.count {
                let c = text[i + 1]
                if c == UInt8(ascii: "?") { out.append(0x7F) } else if c >= 0x40 && c <= 0x5F { out.append(c - 0x40) } else { return nil }
                i += 2
            } else if b >= 0x20 && b < 0x7F {
                out.append(b)
                i += 1
            } else {
                return nil
            }
        }
        // (the bytes read past the size are the value's first)
        return i == text.count ? out : nil
    }
}

// MARK: UTF-8

func isASCII(_ p: UnsafeRawBufferPointer) -> Bool {
    guard let base = p.baseAddress else { return true }
    let n = p.count
    var i = 0
    var acc: UInt64 = 0
    while i &+ 8 <= n {
        acc |= base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        i &+= 8
    }
    var tail: UInt8 = 0
    while i < n {
        tail |= base.load(fromByteOffset: i, as: UInt8.self)
        i &+= 1
    }
    return acc & 0x8080_8080_8080_8080 == 0 && tail < 0x80
}

func isValidUTF8(_ p: UnsafeRawBufferPointer) -> Bool {
    var i = 0
    let n = p.count
    while i < n {
        let b = p[i]
        if b < 0x80 { i += 1; continue }
        let len: Int
        if b & 0xE0 == 0xC0 { len = 2; if b < 0xC2 { return false } } else if b & 0xF0 == 0xE0 { len = 3 } else if b & 0xF8 == 0xF0, b <= 0xF4 {
            len = 4
        } else { return false }
        guard i + len <= n else { return false }
        for k in 1..<len where p[i + k] & 0xC0 != 0x80 { return false }
        if len == 3 {
            let c = p[i + 1]
            if b == 0xE0 && c < 0xA0 { return false }
            if b == 0xED && c >= 0xA0 { return false }
        }
        if len == 4 {
            let c = p[i + 1]
            if b == 0xF0 && c < 0x90 { return false }
            if b == 0xF4 && c >= 0x90 { return false }
        }
        i += len
    }
    return true
}

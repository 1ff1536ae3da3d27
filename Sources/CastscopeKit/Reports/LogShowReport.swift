#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `castscope show`: every record of the inputs (log archives, tracev3 files, text logs,
/// journal files), time-merged, printed as Apple's `log show` prints them.
public struct LogShowOptions: Sendable {
    public enum Style: String, Sendable, CaseIterable { case `default`, ndjson, json }
    public var style = Style.default
    /// Process names (or image paths) to keep; empty keeps all.
    public var processes: [String] = []
    public var pids: [Int] = []
    /// Subsystems to keep (a prefix match, like `subsystem BEGINSWITH`).
    public var subsystems: [String] = []
    public var categories: [String] = []
    /// Messages containing this text.
    public var messageContains: String?
    /// Only records at or after / before these instants (ns since the epoch).
    public var start: Int64?
    public var end: Int64?
    /// The day lines without a date are on, and the year lines without one are near
    /// (`--date`); nil: today. (Every such line is on that one day: `analyze` also moves on to
    /// the next day when the times run back past midnight.)
    public var date: (year: Int, month: Int, day: Int)?
    public init() {}
}

/// One record as `log show` describes it.
public struct LogShowRecord: Sendable {
    public var wallNanos: Int64?
    /// The line carried no zone: `wallNanos` is its time as written (shown without an offset,
    /// merged as if UTC), not an instant.
    public var zoneless = false
    public var machTimestamp: UInt64?
    public var processID: Int?
    public var threadID: UInt64?
    public var messageType = "Default"
    public var eventType = "logEvent"
    public var subsystem = ""
    public var category = ""
    public var eventMessage = ""
    public var formatString: String?
    public var processImagePath = ""
    public var senderImagePath = ""
    public var bootUUID: String?
    public var source: String
}

public final class LogShow {
    public let registry: ParserRegistry
    public let options: LogShowOptions
    public private(set) var errors: [InputError] = []
    /// Records read from the inputs (before the filters): none is `show`'s exit 4, as analyze's
    /// "nothing recognized" (an empty folder exited 0 without a word).
    public private(set) var recordsRead = 0
    /// Today (UTC) as the run started: the year or day a line without them is given.
    private let today = civilFromDays(Int(currentMicros().floorDiv(86_400_000_000)))

    public init(registry: ParserRegistry, options: LogShowOptions) {
        self.registry = registry
        self.options = options
    }

    func keep(_ r: LogShowRecord) -> Bool {
        if !options.processes.isEmpty {
            let name = r.processImagePath.split(separator: "/").last.map(String.init) ?? r.processImagePath
            guard options.processes.contains(where: { $0 == name || $0 == r.processImagePath }) else { return false }
        }
        if !options.pids.isEmpty { guard let p = r.processID, options.pids.contains(p) else { return false } }
        if !options.subsystems.isEmpty { guard options.subsystems.contains(where: { r.subsystem.hasPrefix($0) }) else { return false } }
        if !options.categories.isEmpty { guard options.categories.contains(r.category) else { return false } }
        if let m = options.messageContains, !r.eventMessage.contains(m) { return false }
        if let s = options.start, let t = r.wallNanos, t < s { return false }
        if let e = options.end, let t = r.wallNanos, t > e { return false }
        return true
    }

    /// Records held in memory before a sorted run of them goes to a temporary file, and the
    /// directory of that file (nil: `TMPDIR`, else /tmp).
    var runBytes = 16 << 20
    var temporaryDirectory: String?
    /// Records that went through a temporary file (a test's check that the runs were used).
    private(set) var spilledRecords = 0

    /// Reads every input and writes the records in time order through `write` (a megabyte at
    /// a time; false from it stops the writing). Each record is formatted as it is read and
    /// kept as bytes, in runs sorted by time (`LogShowRuns`).
    public func run(_ paths: [String], write: (UnsafeRawBufferPointer) -> Bool) {
        let runs = LogShowRuns(runBytes: runBytes, directory: temporaryDirectory)
        let style = options.style
        func add(_ r: LogShowRecord) {
            recordsRead += 1
            guard keep(r) else { return }
            runs.add(time: r.wallNanos) { b in
                if style == .default { defaultLine(r, into: &b) } else { jsonObject(r, into: &b) }
            }
        }
        let detector = FormatDetector(formats: registry.formats)
        var walker = BundleWalker(
            visit: { [self] path, source in
                let (head, whole) = try CROnlyLines.readHead(64 * 1024, from: source)
                guard let detected = head.withUnsafeBytes({ detector.detect(head: $0) }) else { return }
                if detected.format.kind != .journalExport, let nul = FormatDetector.binaryAt(head, format: detected.format) {
                    errors.append(InputError(path: path, offset: UInt64(nul), "binary file (NUL byte), not a log: skipped"))
                    return
                }
                let lines = LineReader(source: whole, path: path)
                let reader = RecordReader(format: detected.format, lines: lines)
                // (`log stream --style compact` writes its threads in hex without `0x`; Xcode in decimal)
                let hexThreads = detected.format.name == "apple-compact"
                // The zone the file's own lines last gave: a line without one takes it (Xcode's
                // NSLog lines carry it, HaishinKit's Logboard lines among them do not; merged as
                // if UTC, they were hours away from their neighbours, as `analyze` does not put them).
                // Lines before the first zoned one take its zone (from the file's first 64 KB).
                var fileZone: Int?
                // What dates the file's year-less lines, as `analyze` finds it (`MessageLead.fileReference`:
                // a journal header, or a daemon's dated time inside the first lines; a year-less
                // journal line of 2024 was shown in today's year, and `--start` in 2024 found nothing).
                var reference: ParsedTime?
                let ahead = RecordReader(format: detected.format, lines: LineReader(source: MemorySource(head), path: path))
                try? ahead.run { rec in
                    if fileZone == nil, let z = rec.time?.offset { fileZone = z }
                    if reference == nil { reference = MessageLead.fileReference(rec, header: ahead.stats.headerTime) }
                }
                try reader.run { rec in
                    if let z = rec.time?.offset { fileZone = z }
                    // (journalctl's header, read before the entries, dates them as `analyze` does)
                    let r = textRecord(rec, path: path, header: reader.stats.headerTime ?? reference, fileZone: fileZone, hexThreads: hexThreads)
                    add(r)
                }
                errors.append(contentsOf: reader.problems)
            },
            report: { [self] e in errors.append(e) })
        walker.recognition = detector.bestScore(of:)
        walker.timedRecognition = detector.bestTimedScore(of:)
        walker.ips = { display, source in
            let text = try readIPSText(source, path: display)
            let (reports, unread) = try IPSReport.parseAll(text, path: display, fileBytes: ipsFileBytes(source, text))
            self.errors.append(contentsOf: reports.compactMap(\.cut) + unread)
            for rec in reports.flatMap(\.records) {
                var r = LogShowRecord(source: display)
                r.wallNanos = rec.time.map { Self.nanos($0.instant(defaultYear: 1970, defaultMonth: 1, defaultDay: 1, defaultOffset: 0)) }
                r.processID = rec.pid
                r.messageType = "Fault"
                r.eventMessage = rec.message
                r.processImagePath = rec.process
                r.senderImagePath = display
                add(r)
            }
        }
        walker.journal = { [self] display, diskPath, source in
            // Members of archives (and standard input) go to a private temporary file for
            // sd-journal, as `analyze` reads them (they were "not shown (extract it first)").
            let file = try FileToRead(diskPath: diskPath) { try $0.writeJournal(source, display: display) }
            defer { withExtendedLifetime(file) {} }
            let reader = JournalReader(format: registry.format(named: "journal-export")!, filter: JournalFilter())
            let result = reader.read(path: file.path) { rec in
                let r = textRecord(rec, path: display)
                add(r)
            }
            if let e = result.cutShortProblem ?? result.error { errors.append(InputError(path: display, e)) }
            if let endedInside = file.endedInside { throw endedInside }
        }
        func archive(_ display: String, _ root: String?, _ files: [(String, String)]) {
            let reader = UnifiedLogReader(root: root)
            for (fileDisplay, path) in files {
                do {
                    let mapped = try MappedFile(path: path)
                    let boot = TraceV3Reader.header(of: mapped.bytes)?.bootUUID.description
                    let summary = reader.read(mapped.bytes, mapped: true) { u in
                        var r = LogShowRecord(source: fileDisplay)
                        r.wallNanos = u.wallNanos
                        r.machTimestamp = u.entry.continuousTime
                        r.processID = Int(u.pid)
                        r.threadID = u.entry.threadID
                        r.messageType = String(describing: ulMessageType(u.entry))
                        switch u.entry.kind {
                        case .log, .simpledump: r.eventType = "logEvent"
                        case .statedump: r.eventType = "stateEvent"
                        case .activity: r.eventType = "activityCreateEvent"
                        case .signpost: r.eventType = "signpostEvent"
                        case .loss: r.eventType = "lossEvent"
                        case .trace: r.eventType = "traceEvent"
                        }
                        if u.entry.kind == .log || u.entry.kind == .simpledump {
                            r.messageType = String(describing: ulMessageType(u.entry))
                        } else {
                            r.messageType = ""
                        }
                        r.subsystem = String(decoding: u.subsystem, as: UTF8.self)
                        r.category = String(decoding: u.category, as: UTF8.self)
                        r.eventMessage = String(decoding: u.message, as: UTF8.self)
                        r.formatString = u.format.map { String(decoding: $0, as: UTF8.self) }
                        r.processImagePath = u.processPath ?? ""
                        r.senderImagePath = u.senderPath ?? ""
                        r.bootUUID = boot
                        add(r)
                    }
                    for p in summary.problems {
                        errors.append(InputError(path: fileDisplay, offset: p.offset > 0 ? UInt64(p.offset) : nil, p.message))
                    }
                    if mapped.shrank { errors.append(mapped.shrankError(display: fileDisplay)) }
                } catch let e as InputError {
                    errors.append(e.named(under: root, as: display))
                } catch {}
            }
            errors.append(contentsOf: (reader.strings.problems + reader.timesync.problems).map { $0.named(under: root, as: display) })
        }
        walker.logArchive = { display, dir in
            let prefix = dir.hasSuffix("/") ? dir : dir + "/"
            let found = tracev3Files(under: dir) { folder, why in
                self.errors.append(InputError(path: display + (folder.hasPrefix(prefix) ? "/" + folder.dropFirst(prefix.count) : ""), "cannot read folder: \(why)"))
            }
            archive(display, dir, found.map { (display + "/" + String($0.dropFirst(prefix.count)), $0) })
        }
        walker.unifiedLog = { display, diskPath, source in
            // (the archive ends inside it: its chunks before the cut are shown, as analyze reads them)
            let file = try FileToRead(diskPath: diskPath) { try $0.writeMember(source, name: "member.tracev3", display: display) }
            defer { withExtendedLifetime(file) {} }
            archive(display, logArchiveRoot(of: diskPath), [(display, file.path)])
            if let endedInside = file.endedInside { throw endedInside }
        }
        walker.walk(paths)
        // Time-merged; records without a time keep their place at the start, in input order.
        var out = OutputBuffer(capacity: (1 << 20) + 4096)
        var writing = true
        func put() {
            if writing && !out.isEmpty { writing = out.withUnsafeBytes { write(UnsafeRawBufferPointer($0)) } }
            out.removeAll()
        }
        var first = true
        var line: [UInt8] = []  // (a default-style line, sanitized: one array for them all)
        switch style {
        case .default: out.append("Timestamp                       Thread     Type        Activity             PID    TTL  \n")
        case .json: out.byte(UInt8(ascii: "["))
        case .ndjson: break
        }
        let complete = runs.finish { record in
            switch style {
            case .default:
                // A log's bytes never reach the terminal as control sequences (as in every report).
                line.removeAll(keepingCapacity: true)
                Sanitize.terminal(record.bindMemory(to: UInt8.self), into: &line)
                out.append(contentsOf: line)
                out.byte(0x0A)
            case .ndjson:
                out.append(record)
                out.byte(0x0A)
            case .json:
                out.append(first ? "\n" : ",\n")
                out.append(record)
            }
            first = false
            if out.count >= 1 << 20 { put() }
            return writing
        }
        if style == .json { out.append("\n]\n") }
        put()
        spilledRecords = runs.spilled
        if !complete && writing {
            errors.append(InputError(path: "(temporary file)", "the records kept on disk for the time merge could not be read back"))
        }
    }

    private func textRecord(_ rec: RawRecord, path: String, header: ParsedTime? = nil, fileZone: Int? = nil, hexThreads: Bool = false) -> LogShowRecord {
        var r = LogShowRecord(source: path)
        if let t = rec.time {
            if t.epochMicros != nil || (t.hasYear && t.hasDate && t.offset != nil) {
                r.wallNanos = Self.nanos(t.instant(defaultYear: 1970, defaultMonth: 1, defaultDay: 1, defaultOffset: 0))
            } else {
                // syslog, idevicesyslog, journalctl's short format, Xcode without a zone: the
                // time as written, in the year (or on the day) `analyze` would assume.
                // A line without a date is on that day, in its year (a month and day of 0
                // made the year after today's).
                // (the file's journalctl header, when it has one, before today)
                let fromHeader = options.date == nil ? header.map { ($0.year, $0.month, $0.day) } : nil
                let day = options.date.map { ($0.year, $0.month, $0.day) } ?? fromHeader ?? today
                let year = t.hasYear ? t.year
                    : t.hasDate ? FileTimeResolver.year(month: t.month, day: t.day, reference: day,
                                                        isToday: options.date == nil && (fromHeader == nil || header?.isCeiling == true),
                                                        floor: fromHeader != nil && header?.isFloor == true) : day.0
                let offset = t.offset ?? (options.date == nil ? header?.offset : nil) ?? fileZone
                r.wallNanos = Self.nanos(t.instant(defaultYear: year, defaultMonth: day.1, defaultDay: day.2, defaultOffset: offset ?? 0))
                r.zoneless = offset == nil
            }
        }
        r.processID = rec.pid
        // (`log stream --style compact` writes its thread in hex without `0x`: `[59318:22c78e]`)
        r.threadID = rec.string(.tid).flatMap { s in s.hasPrefix("0x") ? UInt64(s.dropFirst(2), radix: 16) : UInt64(s, radix: hexThreads ? 16 : 10) }
        // (a coloured level, zap's `ESC[31mERROR ESC[0m`, is its word)
        if let l = rec.string(.level) { r.messageType = appleType(EscapedColours.uncoloured(l)) }
        r.subsystem = rec.string(.subsystem) ?? ""
        r.category = rec.string(.category) ?? ""
        // (without its colour codes; another escape sequence is shown escaped)
        r.eventMessage = rec.withBytes(.message) { b in
            EscapedColours.present(b) ? String(decoding: EscapedColours.uncoloured(b), as: UTF8.self) : String(decoding: b, as: UTF8.self)
        } ?? ""
        r.processImagePath = rec.string(.process) ?? ""
        r.senderImagePath = rec.string(.library) ?? ""
        return r
    }

    private func appleType(_ level: String) -> String {
        let lower = level.lowercased()
        if let java = Self.localizedJavaLevels[lower] { return java }
        switch lower {
        // (and Java's levels: a Jitsi service's FINE, SEVERE)
        // (and `log stream --style compact`'s letters: `E`, `I`, `Db`, `Fa`, `Df`)
        case "info", "6", "i": return "Info"
        case "debug", "fine", "finer", "finest", "trace", "7", "db": return "Debug"
        case "error", "err", "severe", "3", "e": return "Error"
        case "fault", "crit", "critical", "alert", "emerg", "0", "1", "2", "fa": return "Fault"
        // (`log show`'s own Activity rows, as it writes them)
        case "activity": return "Activity"
        default: return "Default"
        }
    }

    /// java.util.logging's level names as the JDK translates them (`sun.util.logging.resources.logging_xx`,
    /// upper-cased as `Level.getLocalizedLevelName` prints them) for a JVM under another locale:
    /// jicofo#161's French `INFOS`/`GRAVE`/`AVERTISSEMENT` were all `Default`. SEVERE's are
    /// Error, INFO's Info, FINE/FINER/FINEST's Debug; WARNING's and CONFIG's stay `Default`, as
    /// the English `WARNING` and `CONFIG` do. Keys lower-cased.
    static let localizedJavaLevels: [String: String] = {
        var t: [String: String] = [:]
        let severe = ["schwerwiegend", "grave", "allvarlig", "重大", "심각", "严重", "嚴重"]
        let info = ["information", "información", "infos", "informazioni", "informações", "情報", "정보", "信息", "資訊"]
        // (`AM FEINSTEN` before noon: the time reads its `AM` as a 12-hour clock's, which
        // leaves the level `FEINSTEN`)
        let fine = ["fein", "feiner", "am feinsten", "feinsten",
                    "detallado", "muy detallado", "más detallado",
                    "précis", "plus précis", "le plus précis",
                    "buono", "migliore", "ottimale",
                    "detalhado", "mais detalhado", "o mais detalhado",
                    "fin", "finare", "finaste",
                    "詳細レベル(低)", "詳細レベル(中)", "詳細レベル(高)",
                    "미세", "보다 미세", "가장 미세",
                    "详细", "较详细", "非常详细", "細緻", "較細緻", "最細緻"]
        for name in severe { t[name] = "Error" }
        for name in info { t[name] = "Info" }
        for name in fine { t[name] = "Debug" }
        return t
    }()

    /// µs as ns, held to what 64 bits of ns hold (1677 to 2262): a line dated outside is shown
    /// at the nearest end, not a crash.
    public static func nanos(_ micros: Int64) -> Int64 {
        let (ns, overflow) = micros.multipliedReportingOverflow(by: 1000)
        return overflow ? (micros < 0 ? Int64.min : Int64.max) : ns
    }

    /// `2022-04-13 13:14:30.123456+0000` (UTC: this machine is not the device); without the
    /// offset for a line that carried no zone.
    static func timestamp(_ ns: Int64?, zoneless: Bool, into b: inout OutputBuffer) {
        guard let ns else { return }
        // Floor division (no step that can overflow at the ends of the range: 1677 to 2262).
        var rem = ns % 1_000_000_000
        var secs = ns / 1_000_000_000
        if rem < 0 { rem += 1_000_000_000; secs -= 1 }
        var days = secs / 86_400
        var sod = secs % 86_400
        if sod < 0 { sod += 86_400; days -= 1 }
        let (y, m, d) = civilFromDays(Int(days))
        b.padded(y, 4)
        b.byte(UInt8(ascii: "-"))
        b.padded(m, 2)
        b.byte(UInt8(ascii: "-"))
        b.padded(d, 2)
        b.byte(0x20)
        b.padded(Int(sod / 3600), 2)
        b.byte(UInt8(ascii: ":"))
        b.padded(Int(sod / 60 % 60), 2)
        b.byte(UInt8(ascii: ":"))
        b.padded(Int(sod % 60), 2)
        b.byte(UInt8(ascii: "."))
        b.padded(Int(rem / 1000), 6)
        if !zoneless { b.append("+0000") }
    }

    /// Spaces after a field `written` bytes long (ASCII) to fill `n` columns, then the separating space.
    private static func pad(from start: Int, _ n: Int, _ b: inout OutputBuffer) {
        b.repeating(0x20, count: max(0, n - (b.count - start)) + 1)
    }

    /// The last part of a path (`a/b` → `b`; nil for one with none: empty, or only slashes).
    private static func lastComponent(_ path: String) -> Substring? { path.split(separator: "/").last }

    func defaultLine(_ r: LogShowRecord, into b: inout OutputBuffer) {
        var start = b.count
        Self.timestamp(r.wallNanos, zoneless: r.zoneless, into: &b)
        Self.pad(from: start, 31, &b)
        start = b.count
        if let t = r.threadID {
            b.append("0x")
            Self.hex(t, into: &b)
        }
        Self.pad(from: start, 10, &b)
        start = b.count
        b.append(r.messageType.isEmpty ? r.eventType : r.messageType)
        Self.pad(from: start, 11, &b)
        b.append("0x0                  ")
        start = b.count
        if let p = r.processID { b.int(p) }
        Self.pad(from: start, 6, &b)
        b.append("0    ")
        let process = Self.lastComponent(r.processImagePath)
        if let process { b.append(String(process)) } else { b.append("<unknown>") }
        b.byte(UInt8(ascii: ":"))
        if let sender = Self.lastComponent(r.senderImagePath), sender != (process ?? "<unknown>") {
            b.append(" (")
            b.append(String(sender))
            b.byte(UInt8(ascii: ")"))
        }
        if !r.subsystem.isEmpty || !r.category.isEmpty {
            b.append(" [")
            b.append(r.subsystem)
            b.byte(UInt8(ascii: ":"))
            b.append(r.category)
            b.byte(UInt8(ascii: "]"))
        }
        b.byte(0x20)
        b.append(r.eventMessage)
    }

    private static func hex(_ v: UInt64, into b: inout OutputBuffer) {
        var digits = 1
        while digits < 16 && v >> (4 * UInt64(digits)) != 0 { digits += 1 }
        for i in stride(from: digits - 1, through: 0, by: -1) { b.byte(OutputBuffer.hex[Int(v >> (4 * UInt64(i)) & 0xF)]) }
    }

    func jsonObject(_ r: LogShowRecord, into b: inout OutputBuffer) {
        b.append("{\"timestamp\":\"")
        Self.timestamp(r.wallNanos, zoneless: r.zoneless, into: &b)
        b.byte(UInt8(ascii: "\""))
        if let m = r.machTimestamp {
            b.append(",\"machTimestamp\":")
            b.unsigned(UInt(m))
        }
        b.append(",\"processID\":")
        b.int(r.processID ?? 0)
        b.append(",\"threadID\":")
        b.unsigned(UInt(r.threadID ?? 0))
        b.append(",\"eventType\":")
        b.jsonString(r.eventType)
        b.append(",\"messageType\":")
        b.jsonString(r.messageType)
        b.append(",\"subsystem\":")
        b.jsonString(r.subsystem)
        b.append(",\"category\":")
        b.jsonString(r.category)
        b.append(",\"eventMessage\":")
        b.jsonString(r.eventMessage)
        b.append(",\"formatString\":")
        b.jsonString(r.formatString ?? "")
        b.append(",\"processImagePath\":")
        b.jsonString(r.processImagePath)
        b.append(",\"senderImagePath\":")
        b.jsonString(r.senderImagePath)
        if let boot = r.bootUUID {
            b.append(",\"bootUUID\":")
            b.jsonString(boot)
        }
        b.append(",\"timezoneName\":\"\",\"source\":null}")
    }
}

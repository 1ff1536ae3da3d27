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

    /// Reads every input and writes the records in time order through `write`.
    public func run(_ paths: [String], write: (String) -> Void) {
        var records: [LogShowRecord] = []
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
                try reader.run { rec in
                    let r = textRecord(rec, path: path)
                    if keep(r) { records.append(r) }
                }
                errors.append(contentsOf: reader.problems)
            },
            report: { [self] e in errors.append(e) })
        walker.ips = { [self] display, source in
            let parsed = try IPSReport.parse(try readIPSText(source, path: display), path: display)
            for rec in parsed.records {
                var r = LogShowRecord(source: display)
                r.wallNanos = rec.time.map { Self.nanos($0.instant(defaultYear: 1970, defaultMonth: 1, defaultDay: 1, defaultOffset: 0)) }
                r.processID = rec.pid
                r.messageType = "Fault"
                r.eventMessage = rec.message
                r.processImagePath = rec.process
                r.senderImagePath = display
                if keep(r) { records.append(r) }
            }
        }
        walker.journal = { [self] display, diskPath, _ in
            guard let diskPath else {
                errors.append(InputError(path: display, "journal files inside archives are not shown (extract it first)"))
                return
            }
            let reader = JournalReader(format: registry.format(named: "journal-export")!, filter: JournalFilter())
            let result = reader.read(path: diskPath) { rec in
                let r = textRecord(rec, path: display)
                if keep(r) { records.append(r) }
            }
            if let e = result.error { errors.append(InputError(path: display, e)) }
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
                        if keep(r) { records.append(r) }
                    }
                    for p in summary.problems {
                        errors.append(InputError(path: fileDisplay, offset: p.offset > 0 ? UInt64(p.offset) : nil, p.message))
                    }
                } catch let e as InputError {
                    errors.append(e)
                } catch {}
            }
            errors.append(contentsOf: reader.strings.problems)
        }
        walker.logArchive = { display, dir in
            let prefix = dir.hasSuffix("/") ? dir : dir + "/"
            archive(display, dir, tracev3Files(under: dir).map { (display + "/" + String($0.dropFirst(prefix.count)), $0) })
        }
        walker.unifiedLog = { display, diskPath, source in
            var temporary: PrivateTemporaryDirectory?
            defer { temporary = nil }
            let path: String
            if let diskPath { path = diskPath } else {
                temporary = try PrivateTemporaryDirectory()
                path = try temporary!.write(source, name: "member.tracev3")
            }
            archive(display, logArchiveRoot(of: diskPath), [(display, path)])
        }
        walker.walk(paths)
        // Time-merged; records without a time keep their place at the start, in input order.
        let order = records.indices.sorted {
            let a = records[$0].wallNanos ?? Int64.min
            let b = records[$1].wallNanos ?? Int64.min
            return a != b ? a < b : $0 < $1
        }
        switch options.style {
        case .default:
            write("Timestamp                       Thread     Type        Activity             PID    TTL  \n")
            // A log's bytes never reach the terminal as control sequences (as in every report).
            for i in order { write(Sanitize.terminal(defaultLine(records[i])) + "\n") }
        case .ndjson:
            for i in order { write(jsonObject(records[i]) + "\n") }
        case .json:
            write("[")
            var first = true
            for i in order {
                write((first ? "" : ",") + "\n" + jsonObject(records[i]))
                first = false
            }
            write("\n]\n")
        }
    }

    private func textRecord(_ rec: RawRecord, path: String) -> LogShowRecord {
        var r = LogShowRecord(source: path)
        if let t = rec.time {
            if t.epochMicros != nil || (t.hasYear && t.hasDate && t.offset != nil) {
                r.wallNanos = Self.nanos(t.instant(defaultYear: 1970, defaultMonth: 1, defaultDay: 1, defaultOffset: 0))
            } else {
                // syslog, idevicesyslog, journalctl's short format, Xcode without a zone: the
                // time as written, in the year (or on the day) `analyze` would assume.
                let year = t.hasYear ? t.year : FileTimeResolver.year(month: t.month, day: t.day, reference: today, isToday: true)
                r.wallNanos = Self.nanos(t.instant(defaultYear: year, defaultMonth: today.1, defaultDay: today.2, defaultOffset: 0))
                r.zoneless = t.offset == nil
            }
        }
        r.processID = rec.pid
        r.threadID = rec.string(.tid).flatMap { s in s.hasPrefix("0x") ? UInt64(s.dropFirst(2), radix: 16) : UInt64(s) }
        if let l = rec.string(.level) { r.messageType = appleType(l) }
        r.subsystem = rec.string(.subsystem) ?? ""
        r.category = rec.string(.category) ?? ""
        r.eventMessage = rec.string(.message) ?? ""
        r.processImagePath = rec.string(.process) ?? ""
        r.senderImagePath = rec.string(.library) ?? ""
        return r
    }

    private func appleType(_ level: String) -> String {
        switch level.lowercased() {
        case "info", "6": return "Info"
        case "debug", "7": return "Debug"
        case "error", "err", "3": return "Error"
        case "fault", "crit", "critical", "alert", "emerg", "0", "1", "2": return "Fault"
        default: return "Default"
        }
    }

    /// µs as ns, held to what 64 bits of ns hold (1677 to 2262): a line dated outside is shown
    /// at the nearest end, not a crash.
    public static func nanos(_ micros: Int64) -> Int64 {
        let (ns, overflow) = micros.multipliedReportingOverflow(by: 1000)
        return overflow ? (micros < 0 ? Int64.min : Int64.max) : ns
    }

    /// `2022-04-13 13:14:30.123456+0000` (UTC: this machine is not the device); without the
    /// offset for a line that carried no zone.
    static func timestamp(_ ns: Int64?, zoneless: Bool = false) -> String {
        guard let ns else { return "" }
        // Floor division by remainder (no step that can overflow at the ends of the range).
        var rem = ns % 1_000_000_000
        var secs = time_t(ns / 1_000_000_000)
        if rem < 0 { rem += 1_000_000_000; secs -= 1 }
        let micros = Int(rem / 1000)
        var tm = tm()
        gmtime_r(&secs, &tm)
        var buf = [CChar](repeating: 0, count: 32)
        let n = strftime(&buf, 32, "%Y-%m-%d %H:%M:%S", &tm)
        let us = String(micros)
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) + "."
            + String(repeating: "0", count: 6 - us.count) + us + (zoneless ? "" : "+0000")
    }

    /// The field left-aligned in `n` columns, then the separating space.
    private func pad(_ s: String, _ n: Int) -> String { (s.count >= n ? s : s + String(repeating: " ", count: n - s.count)) + " " }

    func defaultLine(_ r: LogShowRecord) -> String {
        var line = pad(Self.timestamp(r.wallNanos, zoneless: r.zoneless), 31)
        line += pad(r.threadID.map { "0x" + String($0, radix: 16) } ?? "", 10)
        line += pad(r.messageType.isEmpty ? r.eventType : r.messageType, 11)
        line += pad("0x0", 20)
        line += pad(r.processID.map(String.init) ?? "", 6)
        line += pad("0", 4)
        let process = r.processImagePath.split(separator: "/").last.map(String.init) ?? "<unknown>"
        line += process + ":"
        if let sender = r.senderImagePath.split(separator: "/").last, String(sender) != process { line += " (\(sender))" }
        if !r.subsystem.isEmpty || !r.category.isEmpty { line += " [\(r.subsystem):\(r.category)]" }
        line += " " + r.eventMessage
        return line
    }

    func jsonObject(_ r: LogShowRecord) -> String {
        func q(_ s: String) -> String { JSONWriter.quote(s) }
        var parts: [String] = []
        parts.append("\"timestamp\":" + q(Self.timestamp(r.wallNanos, zoneless: r.zoneless)))
        if let m = r.machTimestamp { parts.append("\"machTimestamp\":\(m)") }
        parts.append("\"processID\":" + (r.processID.map(String.init) ?? "0"))
        parts.append("\"threadID\":" + (r.threadID.map(String.init) ?? "0"))
        parts.append("\"eventType\":" + q(r.eventType))
        parts.append("\"messageType\":" + q(r.messageType))
        parts.append("\"subsystem\":" + q(r.subsystem))
        parts.append("\"category\":" + q(r.category))
        parts.append("\"eventMessage\":" + q(r.eventMessage))
        parts.append("\"formatString\":" + q(r.formatString ?? ""))
        parts.append("\"processImagePath\":" + q(r.processImagePath))
        parts.append("\"senderImagePath\":" + q(r.senderImagePath))
        if let b = r.bootUUID { parts.append("\"bootUUID\":" + q(b)) }
        parts.append("\"timezoneName\":\"\"")
        parts.append("\"source\":null")
        return "{" + parts.joined(separator: ",") + "}"
    }
}

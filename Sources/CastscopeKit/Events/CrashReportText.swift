/// A crash report pasted as text (Xcode's and the device's rendering of an `.ips`:
/// `Hardware Model:`, `Process:  ScreenShareExt [482]`, `Date/Time:`, `Exception Type:
/// EXC_CRASH (SIGKILL)`, `Termination Reason: RUNNINGBOARD 0xd00d2bad`) is one event, as the
/// `.ips` file itself gives (`IPSReport.crash(text:)`): the process it names killed or crashed,
/// at the report's time.
///
/// The header's `Hardware Model:` line (a `crash.header` in `apple-reports`; every layout has it
/// before `Process:`) passes the prefilter, and the reader then parses the next lines in full
/// (`RecordReader.crashReportHeaderLines`): their words are no vocabulary's (an anchor on
/// "Process" or "Incident Identifier" would slow every log that names FrontBoard's processes
/// or bundle identifiers). They come here as records; the report's event is made at its
/// termination reason, or at its first thread (a report without one), on that line.
struct CrashReportText {
    static let kind = "crash.header"
    static let opener = String(decoding: RecordReader.crashReportOpener, as: UTF8.self)
    /// Lines after the opener a header may take (the reader parses that many whole).
    static let span = RecordReader.crashReportHeaderLines
    static let keys = ["Process:", "Date/Time:", "Exception Type:", "Exception Subtype:", "Exception Message:", "Exception Note:",
                       "Termination Reason:", "Termination Description:"]

    private var opened: Int?
    private var lines: [String] = []
    var isOpen: Bool { opened != nil }

    /// Whether `rec` may open a header (`Hardware Model:`) or be a JetsamEvent entry (`{`): its
    /// message's first byte, so that every other record costs one look.
    static func mayConcern(_ rec: RawRecord) -> Bool {
        rec.withBytes(.message) { bytes in
            let i = RecordReader.indentEnd(bytes)
            return i < bytes.count && (bytes[i] == UInt8(ascii: "H") || bytes[i] == UInt8(ascii: "{"))
        } ?? false
    }

    /// One record of the file, in order; returns a report's record when this line ends a header.
    mutating func see(_ rec: RawRecord) -> RawRecord? {
        guard opened != nil || rec.withBytes(.message, { RecordReader.opensCrashReport($0) }) == true else { return nil }
        guard let message = rec.string(.message) else { return nil }
        let text = message.trimmingSpaces()
        if text.hasPrefix(Self.opener) {
            opened = rec.line
            lines = []
            return nil
        }
        guard let start = opened, rec.line - start <= Self.span else {
            opened = nil
            return nil
        }
        if Self.keys.contains(where: { text.hasPrefix($0) }) { lines.append(text) }
        if text.hasPrefix("Termination Reason:") || text.hasPrefix("Triggered by Thread:") || text.hasPrefix("Thread 0") {
            opened = nil
            return record(line: rec.line)
        }
        return nil
    }

    private func record(line: Int) -> RawRecord? {
        guard lines.contains(where: { $0.hasPrefix("Process:") }), lines.contains(where: { $0.hasPrefix("Exception Type:") }),
            let r = IPSReport.crash(text: lines.joined(separator: "\n")).records.first
        else { return nil }
        var rec = RawRecord()
        rec.reset(line: line)
        rec.set(.message, bytes: Array(r.message.utf8))
        rec.time = r.time
        return rec
    }
}

/// A JetsamEvent's process entries pasted as JSON (`{ "uuid" : …, "rpages" : 3300, "reason" :
/// "per-process-limit", "pid" : 4624, "name" : "BroadcastUploadExtension", … }`: a fragment of
/// the `.ips`, which a reader folds into one record per object) are the kills the whole report
/// gives (`IPSReport.jetsam`, 16 KB pages: the fragment has no page size).
enum JetsamFragmentText {
    static let maxObjects = 64

    /// The kill records of the objects in `message` that have a `reason` and a `name`.
    static func records(in rec: RawRecord) -> [RawRecord] {
        guard rec.withBytes(.message, { bytes in
            let i = RecordReader.indentEnd(bytes)
            return i < bytes.count && bytes[i] == UInt8(ascii: "{") && bytes.count > 40
        }) == true, let message = rec.string(.message), message.contains("\"reason\"") else { return [] }
        let bytes = Array(message.utf8)
        var objects: [String] = []
        var depth = 0
        var start = -1
        var quoted = false
        var escaped = false
        scan: for (i, b) in bytes.enumerated() {
            if quoted {
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { quoted = false }
                continue
            }
            switch b {
            case UInt8(ascii: "\""): quoted = true
            case UInt8(ascii: "{"):
                if depth == 0 { start = i }
                depth += 1
            case UInt8(ascii: "}"):
                guard depth > 0 else { continue }
                depth -= 1
                guard depth == 0, start >= 0 else { continue }
                // A process entry has its resident pages (a JSON log line with a `reason` and a
                // `name` is no kill); at most `maxObjects` per record.
                let object = String(decoding: bytes[start...i], as: UTF8.self)
                if object.contains("\"rpages\""), object.contains("\"reason\""), object.contains("\"name\"") {
                    objects.append(object)
                    if objects.count == maxObjects { break scan }
                }
            default: break
            }
        }
        guard !objects.isEmpty, let body = try? JSONValue.parse("{\"processes\": [" + objects.joined(separator: ",") + "]}") else { return [] }
        return IPSReport.jetsam(body, bug: nil, time: nil).records.map { r in
            var out = RawRecord()
            out.reset(line: rec.line)
            out.set(.message, bytes: Array(r.message.utf8))
            // (the line's own time, when the fragment sits in a timed log line)
            out.time = rec.time
            out.timeInferred = rec.timeInferred
            return out
        }
    }
}


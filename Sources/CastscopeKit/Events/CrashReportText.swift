/// A crash report pasted as text (Xcode's and the device's rendering of an `.ips`:
/// `Hardware Model:`, `Process:  ScreenShareExt [482]`, `Date/Time:`, `Exception Type:
/// EXC_CRASH (SIGKILL)`, `Termination Reason: RUNNINGBOARD 0xd00d2bad`) is one event, as the
/// `.ips` file itself gives (`IPSReport.crash(text:)`): the process it names killed or crashed,
/// at the report's time. A paste of only its exception part (from `Exception Type:` on, as
/// people paste it into an issue) is one too; without `Process:` it names no process, and is a
/// crash (`app-crashed`) rather than an extension's kill.
///
/// The lines that open a header (`RecordReader.crashReportOpeners`: `Hardware Model:`,
/// `Exception Type:  EXC_…`; each a `crash.header` in `apple-reports`) pass the
/// prefilter, and the reader then parses the next lines in full
/// (`RecordReader.crashReportHeaderLines`): their words are no vocabulary's (an anchor on
/// "Process:" slowed a noisy 256 MB log by a fifth). A paste that begins at `Process:` is
/// opened at its `Exception Type:`, and its `Process:` and `Date/Time:` are looked back for in
/// the lines the reader still holds.
/// They come here as records; the report's event is made at its termination reason, or at its
/// first thread (a report without one), on that line.
struct CrashReportText {
    static let kind = "crash.header"
    static let openers = RecordReader.crashReportOpeners.map { String(decoding: $0, as: UTF8.self) }
    /// The opener that is also a key: it opens a header only where none is open.
    static let keyOpeners: Set<String> = ["Exception Type:", "Exception type:"]
    /// Keys looked back for from that opener, and how many lines back (a header's `Process:` is
    /// about 15 lines before its `Exception Type:`).
    static let lookedBack = ["Process:", "Path:", "Date/Time:", "Date:", "Crashed Thread:"]
    static let lookBack = 30
    /// Lines after the opener a header may take (the reader parses that many whole).
    static let span = RecordReader.crashReportHeaderLines
    static let keys = ["Process:", "Path:", "Date/Time:", "Exception Type:", "Exception Subtype:", "Exception Message:", "Exception Note:",
                       "Termination Reason:", "Termination Description:", "Exception type:", "Exception subtype:",
                       "Crashed Thread:", "Triggered by Thread:", "Triggered by thread:"]

    private var opened: Int?
    private var lines: [String] = []
    /// The open header's `Exception Type:` line, once seen: a paste cut before the header's end
    /// (after `Exception Codes:` or `VM Region Info:`, as issues quote it) is made there.
    private var exceptionLine: Int?
    /// The header's `Application Specific Information:` line `*** Terminating app due to
    /// uncaught exception …`: the report's own exception, one crash with it, not a second one
    /// of no process and no time (KSCrash#143's paste gave two). Held while the header is open,
    /// and given back as a line of its own when the header ends without a report.
    static let uncaughtPrefix = "*** Terminating app due to uncaught exception"
    private var heldUncaught: RawRecord?
    private var released: [RawRecord] = []
    /// The last record `see` was given is part of the header (the caller does not read it).
    private(set) var tookLast = false
    /// A report that names no process, held until the file shows whether a whole report of the
    /// same crash follows (a forum post quotes the exception, then attaches the report): then it
    /// is that report's, and only the named one is kept. With its reason.
    private var unnamed: (record: RawRecord, reason: String)?
    /// A report made at its `Termination Reason:` or `Triggered by Thread:`, held for the few
    /// lines after it: today's layouts (macOS 12 and later, iOS 15's translated `.ips`) write
    /// `Application Specific Information:` and the uncaught exception there, after the header,
    /// which gave a second crash of no process and no time. The exception is taken into the
    /// report; the report is given at its own line once the uncaught exception, a thread, a new
    /// report or `afterSpan` lines show it is complete.
    private var pending: (made: RawRecord, line: Int, lines: [String], asi: Bool, crashed: Bool)? {
        didSet { hasPending = pending != nil }
    }
    /// Whether `pending` holds a report: `isOpen` is asked per line, and `pending != nil` copied
    /// the pending report (a record and more, 242 bytes) to the stack first.
    private var hasPending = false
    static let afterSpan = 10
    var isOpen: Bool { opened != nil || hasPending }

    /// Whether `rec` may open a header (an opener's first byte) or be a JetsamEvent entry (`{`):
    /// its message's first byte, so that every other record costs one look (`"`: a JetsamEvent
    /// paste that begins at its `"processes" : [`).
    static func mayConcern(_ rec: RawRecord) -> Bool {
        rec.withBytes(.message) { bytes in
            let i = RecordReader.indentEnd(bytes)
            guard i < bytes.count else { return false }
            let b = bytes[i]
            return b == UInt8(ascii: "H") || b == UInt8(ascii: "E") || b == UInt8(ascii: "{") || b == UInt8(ascii: "\"")
                || collapsedHeader(bytes, from: i)
        } ?? false
    }

    /// A whole header collapsed into one paragraph (a forum or a chat turned its line breaks
    /// into spaces: `Process: MyApp [1159] Path: … Exception Type: EXC_BAD_ACCESS (SIGSEGV)
    /// Exception Codes: … Termination Reason: …`): it begins with a key (a capital) and holds
    /// `Exception Type:` further on. Only a long record whose first words end in a colon is
    /// looked into.
    static func collapsedHeader(_ bytes: UnsafeRawBufferPointer, from i: Int) -> Bool {
        guard bytes.count - i >= collapsedMinimum, bytes[i] >= UInt8(ascii: "A"), bytes[i] <= UInt8(ascii: "Z") else { return false }
        // (a key's colon within its first words: `Process:`, `OS Version:`, `Date/Time:`)
        var k = i + 1
        while k < i + 24, bytes[k] != UInt8(ascii: ":") { k += 1 }
        guard k < i + 24 else { return false }
        return findBytes(bytes, collapsedOpener, from: i + 1) != nil || findBytes(bytes, collapsedOpenerLower, from: i + 1) != nil
    }
    static let collapsedMinimum = 160
    private static let collapsedOpener = Array(" Exception Type:".utf8)
    private static let collapsedOpenerLower = Array(" Exception type:".utf8)

    /// Keys a collapsed header is cut at (after a space): each begins a line of the header.
    static let collapsedKeys = ["Process:", "Path:", "Identifier:", "Date/Time:", "OS Version:", "Exception Type:", "Exception type:",
                                "Exception Codes:", "Exception Subtype:", "Exception subtype:", "Exception Message:", "Exception Note:",
                                "Termination Reason:", "Termination Description:", "Terminating Process:", "Crashed Thread:",
                                "Triggered by Thread:", "Triggered by thread:", "Application Specific Information:", "Thread 0 Crashed:",
                                uncaughtPrefix]
    /// Words before `Process:` that make it another key (`Parent Process:`, `Responsible Process:`).
    static let processQualifiers = ["Parent", "Responsible", "Terminating", "Coalition"]

    /// The header lines of a collapsed paragraph, cut at its keys.
    static func collapsedLines(_ text: String) -> [String] {
        var cuts: [String.Index] = [text.startIndex]
        for key in collapsedKeys {
            var from = text.startIndex
            while let r = text[from...].firstRange(of: " " + key) {
                from = r.upperBound
                let keyStart = text.index(after: r.lowerBound)
                if key == "Process:" {
                    let before = text[..<r.lowerBound]
                    if processQualifiers.contains(where: { before.hasSuffix($0) }) { continue }
                }
                cuts.append(keyStart)
            }
        }
        // (and at each thread's own line run on into it, ` Thread 0 name:  Dispatch queue: …`,
        // ` Thread 0:`, ` Thread 5 Crashed:`: the `Triggered by Thread:` value before them took
        // the main thread's queue, and the whole paragraph after it, as the crashed thread's)
        var from = text.startIndex
        while let r = text[from...].firstRange(of: " Thread ") {
            from = r.upperBound
            let digits = text[r.upperBound...].prefix { $0.isNumber }
            guard !digits.isEmpty else { continue }
            let after = text[digits.endIndex...]
            if after.hasPrefix(":") || after.hasPrefix(" name:") || after.hasPrefix(" Crashed:") { cuts.append(text.index(after: r.lowerBound)) }
        }
        cuts.sort()
        var lines: [String] = []
        for (k, start) in cuts.enumerated() {
            let end = k + 1 < cuts.count ? cuts[k + 1] : text.endIndex
            guard start < end else { continue }
            lines.append(keyText(String(text[start..<end])))
        }
        return lines
    }

    /// The report of a header collapsed into `rec` alone, when it is one.
    private mutating func collapsed(_ rec: RawRecord) -> RawRecord? {
        guard opened == nil, pending == nil,
            rec.withBytes(.message, { Self.collapsedHeader($0, from: RecordReader.indentEnd($0)) }) == true,
            let message = rec.string(.message)
        else { return nil }
        let all = Self.collapsedLines(Self.keyText(message))
        let kept = all.filter { line in
            Self.keys.contains(where: { line.hasPrefix($0) }) || line.hasPrefix(Self.uncaughtPrefix)
                || line.hasPrefix("Thread ") && (line.contains(" name:") || line.contains(" Crashed:"))
        }
        // (a sentence that names the key is no header: two more keys must be there)
        guard all.count >= 3, kept.contains(where: { $0.hasPrefix("Exception Type:") || $0.hasPrefix("Exception type:") }) else { return nil }
        lines = kept
        defer { lines = [] }
        return record(line: rec.line)
    }

    /// One record of the file, in order; returns the reports' records this line ends (a header,
    /// and an earlier report that names no process, once it is known to be no other's).
    /// `earlier` gives the lines before a line that the reader still holds, the last first (a
    /// paste's `Process:` and `Date/Time:` before its `Exception Type:`).
    mutating func see(_ rec: RawRecord, earlier: (Int, (String) -> Bool) -> Void) -> [RawRecord] {
        tookLast = false
        var out: [RawRecord] = []
        if let made = settle(rec) { out = accept(made) }
        if !tookLast, let made = collapsed(rec) {
            // (the paragraph is the report: none of its words read again as a line of their own)
            tookLast = true
            out += accept(made)
        }
        if !tookLast, let made = header(rec, earlier: earlier) { out += accept(made) }
        defer { released = [] }
        return released + out
    }

    /// A report made: given now when it names its process (with an earlier unnamed one that
    /// is not the same crash), else held as `unnamed`.
    private mutating func accept(_ made: RawRecord) -> [RawRecord] {
        let reason = Self.reason(made)
        let held = unnamed
        unnamed = nil
        if reason.named {
            // (the same crash whether or not one of them says where: a quoted exception without
            // its threads, then the whole report)
            return (held.map { Self.withoutWhere($0.reason) == Self.withoutWhere(reason.text) ? [] : [$0.record] } ?? []) + [made]
        }
        unnamed = (made, reason.text)
        return held.map { [$0.record] } ?? []
    }

    /// The pending report, once `rec` shows it complete: with `rec`'s uncaught exception
    /// (`rec` then taken), or as it was (`rec` read as usual).
    private mutating func settle(_ rec: RawRecord) -> RawRecord? {
        guard let p = pending else { return nil }
        let text = Self.keyText(rec.string(.message) ?? "")
        let within = rec.line - p.line <= Self.afterSpan
        // (only under the report's `Application Specific Information:`: an uncaught exception
        // line of its own, another process's, after a report is not taken)
        if within, text.hasPrefix("Application Specific Information") {
            pending?.asi = true
            return nil
        }
        // (the crashed thread after the termination reason, `Triggered by Thread:  5`, and its
        // queue on the thread's own first line: `Thread 5 name:  Dispatch queue: …`, `Thread 5
        // Crashed:: Dispatch queue: …`; the report is then made again with them)
        if within, text.hasPrefix("Triggered by Thread:") || text.hasPrefix("Triggered by thread:") {
            pending?.lines.append(text)
            return nil
        }
        if within, text.hasPrefix("Thread "), text.contains(" name:") || text.contains(" Crashed:") {
            pending?.lines.append(text)
            if text.contains(" Crashed:") { pending?.crashed = true }
            return nil
        }
        if within, p.crashed, let library = Self.topFrameLibrary(text) {
            // (its first frame: `0   libsystem_platform.dylib  0x… _platform_memmove + 88`)
            pending = nil
            lines = p.lines + ["Top frame: " + library]
            return record(line: p.line) ?? p.made
        }
        if within, p.asi, text.hasPrefix(Self.uncaughtPrefix) {
            pending = nil
            lines = p.lines + [text]
            tookLast = true
            return record(line: p.line) ?? p.made
        }
        if within, !text.hasPrefix("Thread "), !text.hasPrefix("Last Exception Backtrace"), !text.hasPrefix("Binary Images"),
            !text.hasPrefix(Self.uncaughtPrefix), !Self.openers.contains(where: { text.hasPrefix($0) })
        {
            return nil
        }
        pending = nil
        lines = p.lines
        return record(line: p.line) ?? p.made
    }

    /// The library of a thread's first frame line (`0   libsystem_platform.dylib      0x00000001f0d1a3a8 …`).
    static func topFrameLibrary(_ text: String) -> String? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard words.count >= 3, words[0] == "0", words[2].hasPrefix("0x") else { return nil }
        return String(words[1])
    }

    /// At the end of the file: a report that names no process, still held (and a header's
    /// uncaught exception line, when the file ends inside it).
    mutating func finish() -> [RawRecord] {
        var out: [RawRecord] = []
        if let p = pending {
            pending = nil
            lines = p.lines
            out = accept(record(line: p.line) ?? p.made)
        }
        if let made = cutShort() { out += accept(made) }
        defer { unnamed = nil }
        releaseUncaught()
        defer { released = [] }
        return released + out + (unnamed.map { [$0.record] } ?? [])
    }

    /// The header ends without a report: its uncaught exception line is a line of its own.
    private mutating func releaseUncaught() {
        if let r = heldUncaught { released.append(r) }
        heldUncaught = nil
    }

    /// What a report's record says ended the process, and whether it names the process.
    private static func reason(_ rec: RawRecord) -> (text: String, named: Bool) {
        let m = rec.string(.message) ?? ""
        if let r = m.firstRange(of: IPSReport.unnamedCrashPrefix) { return (String(m[r.upperBound...]), false) }
        if let r = m.firstRange(of: "] terminated: ") { return (String(m[r.upperBound...]), true) }
        return (m, true)
    }

    /// A reason without the thread, queue and library `IPSReport.crashRecord` ends it with.
    static func withoutWhere(_ reason: String) -> String {
        for marker in ["; thread ", "; queue ", "; top frame in "] {
            if let r = reason.ranges(of: marker).last { return String(reason[..<r.lowerBound]) }
        }
        return reason
    }

    /// A header's record when `rec` ends one.
    private mutating func header(_ rec: RawRecord, earlier: (Int, (String) -> Bool) -> Void) -> RawRecord? {
        guard opened != nil || rec.withBytes(.message, { RecordReader.opensCrashReport($0) }) == true else { return nil }
        guard let message = rec.string(.message) else { return nil }
        let text = Self.keyText(message)
        if let opener = Self.openers.first(where: { text.hasPrefix($0) }), opened == nil || !Self.keyOpeners.contains(opener) {
            // A new report (its model line: nothing kept comes before it), or the part of one a
            // paste begins with. (One still open was cut short: made at its exception.)
            let cut = cutShort()
            opened = rec.line
            lines = []
            exceptionLine = nil
            if Self.keyOpeners.contains(opener) {
                exceptionLine = rec.line
                // The lines the prefilter passed over before it (up to `lookBack`, back to
                // the nearest `Process:`): its `Process:` and `Date/Time:`.
                var seen = 0
                var process = false
                earlier(rec.line) { line in
                    seen += 1
                    let t = Self.keyText(line)
                    if Self.lookedBack.contains(where: { t.hasPrefix($0) }) { lines.insert(t, at: 0) }
                    if t.hasPrefix("Process:") { process = true }
                    // (back to the nearest `Process:`, and past it to a date when none came yet:
                    // a crash summary writes `Date:` first)
                    let dated = lines.contains { $0.hasPrefix("Date/Time:") || $0.hasPrefix("Date:") }
                    return seen < Self.lookBack && !(process && dated)
                }
                lines.append(text)
            }
            return cut
        }
        guard let start = opened, rec.line - start <= Self.span else { return cutShort() }
        if Self.keys.contains(where: { text.hasPrefix($0) }) {
            lines.append(text)
            if exceptionLine == nil, text.hasPrefix("Exception Type:") || text.hasPrefix("Exception type:") { exceptionLine = rec.line }
        }
        if text.hasPrefix(Self.uncaughtPrefix), heldUncaught == nil {
            lines.append(text)
            heldUncaught = rec
            tookLast = true
            return nil
        }
        if text.hasPrefix("Termination Reason:") || text.hasPrefix("Triggered by Thread:") || text.hasPrefix("Thread 0")
            || text.hasPrefix("Triggered by thread:") || Self.threadCrashed(text)
        {
            // (the crashed thread's line ending the header names its queue: `Thread 0 name:
            // Dispatch queue: com.apple.main-thread`, `Thread 13 Crashed:: Dispatch queue: X`)
            if text.hasPrefix("Thread ") { lines.append(text) }
            opened = nil
            exceptionLine = nil
            let made = record(line: rec.line)
            if made == nil { releaseUncaught() }
            if let made, heldUncaught == nil, !text.hasPrefix("Thread ") {
                // (the uncaught exception may follow: today's layouts)
                pending = (made, rec.line, lines, false, false)
                return nil
            }
            heldUncaught = nil
            return made
        }
        return nil
    }

    /// The open header ends with no termination reason and no thread (its span passed, or the
    /// file ended): a paste cut after its exception. Its report is made at the exception's line
    /// when it has one; else its held uncaught exception line is a line of its own.
    private mutating func cutShort() -> RawRecord? {
        defer {
            opened = nil
            exceptionLine = nil
        }
        guard opened != nil, let line = exceptionLine, let made = record(line: line) else {
            releaseUncaught()
            return nil
        }
        heldUncaught = nil
        return made
    }

    /// A line's text as its key is looked for: without the spaces around it, nor a backtick
    /// before it (a whole report pasted inside one pair of single backticks, iCloud-Control#14:
    /// its `Process:` was lost).
    static func keyText(_ line: String) -> String {
        let t = line.trimmingSpaces()
        guard t.hasPrefix("`") else { return t }
        return String(t.drop { $0 == "`" }).trimmingSpaces()
    }

    /// `Thread 7 Crashed:` (a paste that begins after the `Triggered by Thread:` line).
    static func threadCrashed(_ text: String) -> Bool {
        text.hasPrefix("Thread ") && text.hasSuffix(" Crashed:")
    }

    private func record(line: Int) -> RawRecord? {
        guard lines.contains(where: { $0.hasPrefix("Exception Type:") || $0.hasPrefix("Exception type:") }),
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
    private static let reasonKey = Array("\"reason\"".utf8)
    private static let rpagesKey = Array("\"rpages\"".utf8)
    private static let nameKey = Array("\"name\"".utf8)
    private static let processesKey = Array("\"processes\"".utf8)

    /// The kill records of the objects in `message` that have a `reason` and a `name`.
    ///
    /// Each entry is parsed on its own: one that is not JSON (a number typed over, `"pid" :
    /// 48x1`) is left out and said through `damaged` (its place in the list and why); the
    /// others are read (one `try?` over the whole list dropped every kill in it).
    static func records(in rec: RawRecord, damaged: (String) -> Void = { _ in }) -> [RawRecord] {
        // (bytes compared, not `String.contains`, which compares characters: a JSON dump read
        // as plain text is one record per object, and comes here whole)
        guard let bytes = rec.withBytes(.message, { bytes -> [UInt8]? in
            let i = RecordReader.indentEnd(bytes)
            // (or a paste that begins at the report's `"processes" : [`, its entries joined to it)
            guard i < bytes.count && bytes.count > 40,
                bytes[i] == UInt8(ascii: "{") || bytes[i...].starts(with: processesKey),
                findBytes(bytes, reasonKey, from: i) != nil
            else { return nil }
            return Array(bytes)
        }) ?? nil else { return [] }
        var objects: [String] = []
        // Where each open object starts, and the objects closed inside it (their spans): a
        // process entry is an object whose own keys, outside the objects in it, hold its
        // resident pages, reason and name, at any depth (iOS 14 and later put a
        // `"physicalPages": {…}` in every entry, which an "object with no object in it" test
        // dropped; a paste that elides the report's middle with `...` never closes the
        // report's own object).
        var starts: [(at: Int, inner: [Range<Int>])] = []
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
                starts.append((i, []))
            case UInt8(ascii: "}"):
                guard let open = starts.popLast() else { continue }
                if !starts.isEmpty { starts[starts.count - 1].inner.append(open.at..<i + 1) }
                // Its own bytes, the objects inside it left out (a JSON log line with a
                // `reason` and a `name` is no kill: an entry has its resident pages).
                var own: [UInt8] = []
                var from = open.at
                for r in open.inner {
                    own.append(contentsOf: bytes[from..<r.lowerBound])
                    from = r.upperBound
                }
                own.append(contentsOf: bytes[from...i])
                let has = { (key: [UInt8]) in own.withUnsafeBytes { findBytes($0, key, from: 0) != nil } }
                if has(rpagesKey), has(reasonKey), has(nameKey) {
                    objects.append(String(decoding: bytes[open.at...i], as: UTF8.self))
                    if objects.count == maxObjects { break scan }
                }
            default: break
            }
        }
        var entries: [JSONValue] = []
        var bad = 0
        for (k, object) in objects.enumerated() {
            do { entries.append(try JSONValue.parse(object)) } catch {
                bad += 1
                if bad <= 3 { damaged("process entry \(k + 1) of the pasted list is not JSON (\(error)): left out, the others read") }
            }
        }
        if bad > 3 { damaged("\(bad - 3) more process entries of the pasted list are not JSON: left out") }
        guard !entries.isEmpty else { return [] }
        return IPSReport.jetsam(.object([("processes", .array(entries))]), bug: nil, time: nil).records.map { r in
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


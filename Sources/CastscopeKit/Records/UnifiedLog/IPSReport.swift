/// Apple diagnostic reports (`.ips`, under a sysdiagnose's `crashes_and_spins/`): JetsamEvent
/// (bug_type 298), crash reports (309, and the older text form). Each becomes records in the
/// words the `apple-reports` vocabulary knows, so that the evidence decides a session's outcome
/// like a kernel line would.
public struct IPSReport: Sendable {
    public enum Kind: String, Sendable { case jetsam = "JetsamEvent", crash = "crash report" }
    public struct Record: Sendable, Equatable {
        public var time: ParsedTime?
        public var process: String
        public var pid: Int?
        public var message: String
    }
    public var kind: Kind
    public var bugType: String?
    public var records: [Record] = []
    /// A body cut short (a report pasted past an issue's or a forum's length limit: a crash
    /// report's threads and images come last): what came before the cut was read, and this
    /// says so.
    public var cut: InputError?
    /// Read from a report's text (the older layouts), not its JSON.
    public var fromText = false
    /// The report's date could be no date (month 13, 30 February, year 0001 or 9999): said,
    /// and its records have no time (they were placed at a nonsense time, or a day shifted).
    public var impossibleDate: String?

    /// Why a report's date is no date a device wrote, or nil: an ISO date read with day and
    /// month swapped (month 13), a day its month has not, a year no iPhone ran in.
    static func impossible(_ t: ParsedTime) -> String? {
        guard t.month != 0 else { return nil }  // (an epoch time: no calendar date)
        var month = t.month, day = t.day
        if t.swappedDayMonth { swap(&month, &day) }
        if !(1...12).contains(month) { return "month \(month)" }
        // (400 years on: the same leap years, and year 0001 or 0000 is then a year
        // `isRealDate` takes, to be said as a year below, not as a day)
        if !isRealDate(t.year + 400, month, day) { return "day \(day) of month \(month)" }
        if !(2007...2099).contains(t.year) { return "year \(String(String(t.year + 10000).dropFirst()))" }
        return nil
    }

    /// Takes the time off records whose date is impossible, and says so once.
    mutating func dropImpossibleTimes(path: String) {
        for i in records.indices {
            guard let t = records[i].time, let why = Self.impossible(t) else { continue }
            records[i].time = nil
            if impossibleDate == nil {
                impossibleDate = "the report's date is impossible (\(why)): its \(kind == .jetsam ? "kills are" : "crash is") not placed on the timeline"
            }
        }
    }

    /// Reads a report's text; throws a one-line reason when it is none of the known kinds.
    /// Whether `head` begins with an `.ips` report's header line: one JSON object on the first
    /// line that names its `bug_type` (`{"bug_type":"298","timestamp":…}`).
    static func opensReport(_ head: [UInt8]) -> Bool {
        var i = 0
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        while i < head.count, head[i] == 0x20 || head[i] == 0x09 { i += 1 }
        guard i < head.count, head[i] == UInt8(ascii: "{"), let nl = head[i...].firstIndex(of: 0x0A) else { return false }
        var end = nl
        while end > i, head[end - 1] == 0x20 || head[end - 1] == 0x0D || head[end - 1] == 0x09 { end -= 1 }
        guard end > i, head[end - 1] == UInt8(ascii: "}") else { return false }
        return head[i..<end].withUnsafeBytes { findBytes($0, Array("\"bug_type\"".utf8), from: 0) != nil }
    }

    /// The `bug_type` its header line names (`opensReport`), when the line is JSON.
    static func headerBugType(_ head: [UInt8]) -> String? {
        guard opensReport(head) else { return nil }
        let line = head.prefix { $0 != 0x0A }
        return (try? JSONValue.parse(String(decoding: line, as: UTF8.self)))?["bug_type"]?.stringValue
    }

    /// Every report of a text that may hold several: a file of reports joined one after
    /// another (`cat *.ips`, a ticket's paste of two), each beginning with its header line. One
    /// that cannot be read is said (its line) and the others read; it throws only when none is.
    /// `fileBytes`: the file's byte of a byte of `text`, when the two differ (a report saved as
    /// UTF-16, `UTF16Source.fileByte`): its JSON errors name the file's byte.
    public static func parseAll(_ text: String, path: String, fileBytes: ((Int) -> Int)? = nil) throws -> (reports: [IPSReport], errors: [InputError]) {
        let starts = reportStarts(text)
        guard starts.count > 1 else { return ([try parse(text, path: path, fileBytes: fileBytes)], []) }
        var reports: [IPSReport] = []
        var errors: [InputError] = []
        for ((line, part), start) in zip(split(text, starts), starts) {
            let partBytes = fileBytes.map { f in { (k: Int) in f(start.offset + k) } }
            do { reports.append(try parse(part, path: path, fileBytes: partBytes)) } catch let e as InputError {
                var e = e
                e.message = "the report from line \(line): " + e.message
                errors.append(e)
            }
        }
        if reports.isEmpty, let first = errors.first { throw first }
        return (reports, errors)
    }

    /// `text` cut before each later line that opens a report (`opensReport`: a one-line JSON
    /// object at the line's start naming its `bug_type`), with the line each part begins at.
    static func split(_ text: String) -> [(line: Int, text: String)] { split(text, reportStarts(text)) }

    static func split(_ text: String, _ starts: [(offset: Int, line: Int)]) -> [(line: Int, text: String)] {
        let utf8 = text.utf8
        return starts.indices.map { k in
            let from = utf8.index(utf8.startIndex, offsetBy: starts[k].offset)
            let end = k + 1 < starts.count ? utf8.index(utf8.startIndex, offsetBy: starts[k + 1].offset) : utf8.endIndex
            return (starts[k].line, String(text[from..<end]))
        }
    }

    /// Where each report of `text` begins (`split`): its byte offset and line. Read in place (a
    /// copy of a 16 MB report's bytes, and of its one part, were 32 MB more at its peak).
    static func reportStarts(_ text: String) -> [(offset: Int, line: Int)] {
        var text = text
        return text.withUTF8 { p in
            let bytes = UnsafeRawBufferPointer(p)
            var starts: [(offset: Int, line: Int)] = [(0, 1)]
            var line = 1
            var i = 0
            while let nl = bytes[i...].firstIndex(of: 0x0A) {
                line += 1
                i = nl + 1
                guard i < bytes.count, bytes[i] == UInt8(ascii: "{"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "\"") else { continue }
                // (only a line after some text of the report before: not its own first lines)
                if starts.last!.offset < i,
                    opensReport(Array(bytes[i..<(bytes[i...].firstIndex(of: 0x0A).map { $0 + 1 } ?? bytes.count)])),
                    line > starts.last!.line + 1
                {
                    starts.append((i, line))
                }
            }
            return starts
        }
    }

    public static func parse(_ text: String, path: String, fileBytes: ((Int) -> Int)? = nil) throws -> IPSReport {
        var cut: InputError?
        let original = text
        // (CRLF, from Windows, a mail or a ticket system: "\r\n" is one Character, and the
        // header's end was not found)
        let stripped = text.utf8.contains(0x0D)
        let text: String = stripped ? String(decoding: text.utf8.filter { $0 != 0x0D }, as: UTF8.self) : text
        // A JSON error in `part` of `text`: at its byte in the file when that is another than
        // its byte in the text (a UTF-16 file: it named the UTF-8 byte of the decoded text).
        func jsonError(_ error: Error, in part: Substring) -> String {
            guard let fileBytes, let e = error as? JSONValue.ParseError else { return "\(error)" }
            var k = text.utf8.distance(from: text.utf8.startIndex, to: part.startIndex) + e.offset
            if stripped { k = Self.offset(ofKept: k, in: original) }
            return "invalid JSON at byte \(fileBytes(k)) of the file: \(e.message)"
        }
        let trimmed = text.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\u{FEFF}" }
        if trimmed.hasPrefix("{") {
            // A one-line JSON header, then the body (a JSON document); older reports are one document.
            var header: JSONValue?
            var body: JSONValue
            let firstLine = trimmed.firstIndex(of: "\n")
            let afterHeader: Substring = firstLine.map { trimmed[trimmed.index(after: $0)...].drop { $0 == " " || $0 == "\n" || $0 == "\t" } } ?? ""
            if let nl = firstLine, textReport(afterHeader), let h = try? JSONValue.parse(String(trimmed[..<nl])) {
                let rest = afterHeader
                // iOS 14 and earlier: the JSON header, then the report as text.
                var r = crash(text: String(rest))
                r.bugType = h["bug_type"]?.stringValue
                r.fromText = true
                return r
            } else if let nl = firstLine, let h = try? JSONValue.parse(String(trimmed[..<nl])) {
                // The header read: what is wrong is the body's, and said of the body (reparsed
                // whole, every bad body was "invalid JSON at byte 126", the header's end).
                let rest = trimmed[trimmed.index(after: nl)...]
                let kind = h["bug_type"]?.stringValue.map { " (bug_type \($0))" } ?? ""
                if rest.allSatisfy({ $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }) {
                    throw InputError(path: path, line: 1, ".ips report: a header\(kind) and no report after it (cut short?)")
                }
                do { body = try JSONValue.parse(rest, keep: Self.read)! } catch {
                    let failed = InputError(path: path, ".ips report\(kind): its body (from line 2): \(jsonError(error, in: rest))")
                    guard let partial = try? JSONValue.parse(rest, keep: Self.read, lenient: true) else { throw failed }
                    body = partial
                    cut = failed
                }
                header = h
            } else {
                do { body = try JSONValue.parse(trimmed, keep: Self.read)! } catch {
                    let failed = InputError(path: path, ".ips report: \(jsonError(error, in: trimmed))")
                    guard let partial = try? JSONValue.parse(trimmed, keep: Self.read, lenient: true) else { throw failed }
                    body = partial
                    cut = failed
                }
                header = body
            }
            let bug = header?["bug_type"]?.stringValue ?? body["bug_type"]?.stringValue
            let time = (header?["timestamp"]?.stringValue ?? body["captureTime"]?.stringValue).flatMap(reportTime)
            var report: IPSReport
            // (by the body when it says another kind than the header: a crash report's body under
            // a JetsamEvent header, renamed or joined by a tool, was read as a kill list of
            // nothing and its crash lost without a word)
            let crashBody = body["processes"] == nil && (body["exception"] != nil || body["termination"] != nil)
            if bug == "298" && !crashBody || body["processes"] != nil && body["largestProcess"] != nil {
                report = jetsam(body, bug: bug, time: time)
            } else if bug == "309" || body["exception"] != nil || body["termination"] != nil {
                // (a body of `null`, or with neither: a kill of nothing said was made of it)
                if cut == nil, body["exception"] == nil && body["termination"] == nil {
                    throw InputError(path: path, ".ips crash report\(bug.map { " (bug_type \($0))" } ?? ""): no exception or termination in its body: nothing to read")
                }
                // (cut before its exception and termination: nothing to tell)
                if let cut, body["exception"]?["type"] == nil && body["termination"] == nil {
                    throw InputError(path: path, cut.message + ": the report is cut short before its exception and termination")
                }
                report = crash(json: body, header: header, bug: bug, time: time)
            } else {
                throw cut ?? InputError(path: path, ".ips report of bug_type \(bug ?? "?") is not read (JetsamEvent 298 and crash reports 309 are)")
            }
            if let cut {
                if report.records.isEmpty { throw cut }
                report.cut = InputError(path: path, cut.message + ": the report is cut short; what came before the cut was read")
            }
            report.dropImpossibleTimes(path: path)
            return report
        }
        if textReport(trimmed) {
            var r = crash(text: String(trimmed))
            r.fromText = true
            r.dropImpossibleTimes(path: path)
            return r
        }
        throw InputError(path: path, "not an .ips report castscope reads (neither JSON nor a crash report's text)")
    }

    /// The byte of `text` that is the `k`th byte of it without its CRs (`parse` reads a CRLF
    /// report without them).
    static func offset(ofKept k: Int, in text: String) -> Int {
        var kept = 0
        var i = 0
        for b in text.utf8 {
            if b != 0x0D {
                if kept == k { return i }
                kept += 1
            }
            i += 1
        }
        return i
    }

    /// What the readers below use of a report's JSON (its header's fields too, for a report of
    /// one document): the rest is checked, not kept. A body is mostly threads, images and
    /// process states; built whole, a 16 MB body of 7.9 M numbers took 524 MB and one of
    /// 160,000 processes 184 MB. A JetsamEvent's processes without a `reason` (not killed)
    /// are left out as they are read.
    static let read: JSONValue.Keep = .object([
        "bug_type": .scalar, "timestamp": .scalar, "app_name": .scalar, "captureTime": .scalar,
        "pageSize": .scalar, "memoryStatus": .object(["pageSize": .scalar]), "largestProcess": .scalar,
        "processes": .array(.object(["reason": .scalar, "name": .scalar, "pid": .scalar, "rpages": .scalar], requires: "reason")),
        "procName": .scalar, "procPath": .scalar, "pid": .scalar,
        "exception": .object(["type": .scalar, "signal": .scalar, "subtype": .scalar, "message": .scalar]),
        "termination": .object(["namespace": .scalar, "code": .scalar, "indicator": .scalar, "reasons": .array(.scalar)]),
        "asi": .members(.array(.scalar)),
        // (the crashed thread's queue and top frame's image: `crash`)
        "faultingThread": .scalar,
        "threads": .array(.object(["queue": .scalar, "frames": .first(.object(["imageIndex": .scalar]))])),
        "usedImages": .array(.object(["name": .scalar])),
    ])

    /// Whether a file named `.ips` may be a report (JSON, or a crash report's text): else it is
    /// read as the text log it is (a log export renamed was "not an .ips report castscope
    /// reads", its lines lost).
    static func mayBeReport(_ head: [UInt8]) -> Bool {
        var i = 0
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        while i < head.count, head[i] == 0x20 || head[i] == 0x09 || head[i] == 0x0A || head[i] == 0x0D { i += 1 }
        guard i < head.count else { return true }
        if head[i] == UInt8(ascii: "{") { return true }
        return textReport(Substring(String(decoding: head[i...], as: UTF8.self)))
    }

    /// A crash report's text (the older `.ips`, or its body under a JSON header).
    static func textReport(_ text: Substring) -> Bool {
        text.hasPrefix("Incident Identifier:") || text.hasPrefix("Hardware Model:") || text.contains("\nException Type:")
    }

    /// `2026-03-12 23:59:52.00 +0100` → parsed (the zone's space dropped): the wall clock and
    /// its zone as the report writes them, as a log line's are, so that a bundle whose only times
    /// are a report's is shown in the phone's zone; without a zone, the instant `-S` would take.
    static func reportTime(_ s: String) -> ParsedTime? {
        var t = s.trimmingSpaces()
        if let sp = t.lastIndex(of: " "), let sign = t[t.index(after: sp)...].first, sign == "+" || sign == "-" {
            t.remove(at: sp)
        }
        var parsed = ParsedTime()
        var text = t
        let end = text.withUTF8 { TimeScan.iso(UnsafeRawBufferPointer($0), 0, into: &parsed) }
        if end == t.utf8.count, parsed.offset != nil { return parsed }
        guard let micros = TimeArgument.parse(t) else { return nil }
        return .epoch(micros: micros)
    }

    /// A crash summary's `Date: 6/24/20, 12:54 AM` (TestFlight feedback, the Organizer: the
    /// US form, the tester's local time, no zone).
    static func summaryTime(_ s: String) -> ParsedTime? {
        let parts = s.split(whereSeparator: { $0 == "," || $0 == " " })
        guard parts.count >= 2 else { return nil }
        let date = parts[0].split(separator: "/").compactMap { Int($0) }
        let clock = parts[1].split(separator: ":").compactMap { Int($0) }
        guard date.count == 3, clock.count >= 2, (1...12).contains(date[0]), (1...31).contains(date[1]), (0...23).contains(clock[0]),
            (0...59).contains(clock[1])
        else { return nil }
        var hour = clock[0]
        if parts.count >= 3 {
            let meridiem = parts[2].uppercased()
            guard hour >= 1 && hour <= 12, meridiem == "AM" || meridiem == "PM" else { return nil }
            hour = TimeScan.hour(hour, pm: meridiem == "PM")
        }
        var t = ParsedTime()
        t.year = date[2] < 100 ? 2000 + date[2] : date[2]
        t.month = date[0]
        t.day = date[1]
        t.hasYear = true
        t.hasDate = true
        t.secondOfDay = hour * 3600 + clock[1] * 60 + (clock.count > 2 ? clock[2] : 0)
        return t
    }

    static func jetsam(_ body: JSONValue, bug: String?, time: ParsedTime?) -> IPSReport {
        var r = IPSReport(kind: .jetsam, bugType: bug)
        let pageSize = count(body["pageSize"] ?? body["memoryStatus"]?["pageSize"]).flatMap { $0 > 0 ? $0 : nil } ?? 16384
        let largest = body["largestProcess"]?.stringValue
        for p in body["processes"]?.arrayValue ?? [] {
            guard let reason = p["reason"]?.stringValue, let name = p["name"]?.stringValue else { continue }
            let pid = Int(p["pid"]?.stringValue ?? "")
            let who = "\(name)[\(pid.map(String.init) ?? "?")] killed: \(reason)"
            // A damaged report's numbers can be anything: the product saturates; a count that
            // is no count (negative, not a number) is no footprint (a float is rounded).
            let after = largest.map { "; largest process \($0)" }
            let m: String
            if let pages = count(p["rpages"]) {
                let (product, overflow) = pages.multipliedReportingOverflow(by: pageSize)
                m = "JetsamEvent: \(who), footprint \((overflow ? Int.max : product) / (1024 * 1024)) MB (\(pages) pages)" + (after ?? "")
            } else {
                // (the marker first: the words the readers look for on every line stay rare;
                // the rule's word for the reason ends at the `;`)
                m = "JetsamEvent (no footprint): \(who)" + (after ?? ";")
            }
            r.records.append(Record(time: time, process: "kernel", pid: 0, message: m))
        }
        return r
    }

    /// A JSON number that counts something: whole and not negative (a float rounded).
    static func count(_ v: JSONValue?) -> Int? {
        guard let s = v?.stringValue else { return nil }
        if let n = Int(s) { return n >= 0 ? n : nil }
        guard let d = Double(s), d.isFinite, d >= 0, d < 9e18 else { return nil }
        return Int(d.rounded())
    }

    struct Crash {
        var process = "?"
        var pid: Int?
        var type = ""
        var signal = ""
        var subtype = ""
        var message = ""
        var termination = ""
        /// The termination says in words why (its `reasons`, a `Termination Description:`):
        /// its code is not explained again.
        var explained = false
        /// Its path (`Path:`, `procPath`) is an app's, not an extension's (`….app/Name`,
        /// `….app/Contents/MacOS/Name`, no `.appex/`): a host app named `ScreenShareDemo` is
        /// not the broadcast extension its name's words would make it.
        var app = false

        mutating func take(path: String) {
            app = path.contains(".app/") && !path.contains(".appex/")
        }
        /// `*** Terminating app due to uncaught exception 'X', reason: 'Y'` (its Application
        /// Specific Information): `uncaught exception 'X', reason: 'Y'`.
        var uncaught = ""
        var time: ParsedTime?
        /// The thread that crashed (`Crashed Thread:`, `Triggered by Thread:`, `faultingThread`),
        /// its dispatch queue (`Dispatch queue: EncoderQueue`) and the library of its top frame
        /// (an `.ips`'s `usedImages`), when the report gives them.
        var thread = ""
        var queue = ""
        var library = ""

        /// `13  Dispatch queue: EncoderQueue` (a `Crashed Thread:` value), `2`. Only a queue
        /// right after the number is this thread's (a paragraph a forum collapsed goes on with
        /// `Thread 0 name:  Dispatch queue: com.apple.main-thread`, another thread's).
        mutating func take(thread value: String) {
            let digits = value.prefix { $0.isNumber }
            if !digits.isEmpty { thread = String(digits) }
            let rest = value.dropFirst(digits.count).drop { $0 == " " || $0 == "\t" }
            if rest.hasPrefix("Dispatch queue:") { take(queueIn: String(rest)) }
        }

        /// The queue a `… Dispatch queue: X` text names (up to a next thread's line, when a
        /// collapsed paragraph goes on: `… Dispatch queue: X Thread 0: 0 libsystem_kernel…`).
        mutating func take(queueIn value: String) {
            guard queue.isEmpty, let r = value.firstRange(of: "Dispatch queue:") else { return }
            var q = value[r.upperBound...]
            if let next = Self.nextThread(in: q) { q = q[..<next] }
            queue = q.trimmingCharacters(in: " ")
        }

        /// Where ` Thread N` (a thread's own line, run on in a paragraph) begins in `text`.
        static func nextThread(in text: Substring) -> String.Index? {
            var from = text.startIndex
            while let r = text[from...].firstRange(of: " Thread ") {
                if text[r.upperBound...].first?.isNumber == true { return r.lowerBound }
                from = r.upperBound
            }
            return nil
        }

        mutating func take(applicationSpecific line: String) {
            guard uncaught.isEmpty, let r = line.firstRange(of: "uncaught exception") else { return }
            uncaught = String(line[r.lowerBound...]).trimmingSpaces()
        }
    }

    /// How a crash report that names no process is worded (`apple-reports`' `app.crashed`).
    static let unnamedCrashPrefix = "Crash report of a process the report does not name: "

    static func crashRecord(_ c: Crash) -> Record {
        var c = c
        if c.process == "?", let (name, pid) = terminatedApp(c.termination) {
            // (the termination's context names it: `app<com.example.app(UUID)>:1029`)
            c.process = name
            c.pid = pid
            c.app = true
        }
        let who = "\(c.process)[\(c.pid.map(String.init) ?? "?")]"
        let all = c.subtype + " " + c.message
        // `EXC_CRASH (SIGKILL), subtype, message; termination …`
        var detail = c.type
        if !c.signal.isEmpty { detail += " (\(c.signal))" }
        for part in [c.subtype, c.message] where !part.isEmpty { detail += ", \(part)" }
        if !c.termination.isEmpty { detail += "; termination \(c.termination)" + (c.explained ? "" : terminationMeaning(c.termination).map { " (\($0))" } ?? "") }
        if !c.uncaught.isEmpty { detail += "; \(c.uncaught)" }
        // Where it crashed, when the report says (not for a kill: SIGKILL stops every thread
        // wherever it is).
        if c.signal != "SIGKILL", !c.thread.isEmpty || !c.queue.isEmpty || !c.library.isEmpty {
            var at: [String] = []
            if !c.thread.isEmpty { at.append("thread \(c.thread)") }
            if !c.queue.isEmpty { at.append("queue \(c.queue)") }
            if !c.library.isEmpty { at.append("top frame in \(c.library)") }
            detail += "; " + at.joined(separator: ", ")
        }
        if c.process == "?" {
            // (a paste of the exception part only: a crash, but whose is not said)
            return Record(time: c.time, process: "?", pid: nil, message: unnamedCrashPrefix + detail)
        }
        if c.type.hasPrefix("EXC_RESOURCE"), all.uppercased().contains("MEMORY"), let mb = limitMB(all) {
            let kind = ["ActiveHard", "ActiveSoft", "InactiveHard", "InactiveSoft"].first { all.contains($0) } ?? "Limit"
            return Record(time: c.time, process: c.process, pid: c.pid,
                          message: "EXC_RESOURCE -> \(who) exceeded mem limit: \(kind) \(mb) MB (crash report)")
        }
        return Record(time: c.time, process: c.process, pid: c.pid, message: "Crash report\(c.app ? " (app)" : ""): \(who) terminated: \(detail)")
    }

    /// A crash report's record (`crashRecord`) of a crash, not a kill: a signal other than
    /// SIGKILL (`EXC_BAD_ACCESS (SIGSEGV)`, `EXC_CRASH (SIGABRT)`). An extension's such report
    /// was said to be its kill ("the extension was killed (… SIGSEGV …)").
    static func isCrash(_ message: String) -> Bool {
        guard message.hasPrefix("Crash report"), let r = message.firstRange(of: "] terminated: ") else { return false }
        let detail = message[r.upperBound...]
        let head = detail.prefix { $0 != ";" }
        // (`EXC_CRASH (SIGKILL (Code Signature Invalid))` is a kill too)
        return head.contains("(SIG") && !head.contains("(SIGKILL")
    }

    /// The app a RunningBoard termination context names (`app<com.example.app(UUID)>:1029`,
    /// `application<com.example.app>:62816`), and its pid.
    static func terminatedApp(_ termination: String) -> (String, Int?)? {
        for opener in ["application<", "app<"] {
            guard let r = termination.firstRange(of: opener) else { continue }
            let rest = termination[r.upperBound...]
            guard let close = rest.firstIndex(of: ">") else { continue }
            var name = rest[..<close]
            if let paren = name.firstIndex(of: "(") { name = name[..<paren] }
            guard !name.isEmpty, !name.contains(" ") else { continue }
            let after = rest[rest.index(after: close)...]
            let pid = after.hasPrefix(":") ? Int(after.dropFirst().prefix { $0.isNumber }) : nil
            return (String(name), pid)
        }
        return nil
    }

    /// What a termination reason's code means (`parsers/tables/termination-codes.json`:
    /// `0x8badf00d` the watchdog, `0xdead10cc` a lock held while suspended, …).
    static func terminationMeaning(_ termination: String) -> String? {
        let lower = termination.lowercased()
        return terminationCodes.first { lower.contains($0.code) }?.meaning
    }

    static let terminationCodes: [(code: String, meaning: String)] = {
        guard let json = BuiltinParsers.table("termination-codes") else { return [] }
        return (json["codes"]?.arrayValue ?? []).compactMap { row in
            guard let c = row["code"]?.stringValue, let m = row["meaning"]?.stringValue else { return nil }
            return (c.lowercased(), m)
        }
    }()

    /// `… 50 MB …` in an exception's subtype or message.
    static func limitMB(_ s: String) -> Int? {
        let words = s.split(whereSeparator: { $0 == " " || $0 == "(" || $0 == ")" || $0 == "," || $0 == ":" })
        for (i, w) in words.enumerated() where i + 1 < words.count && words[i + 1] == "MB" {
            if let v = Int(w) { return v }
        }
        return nil
    }

    static func crash(json body: JSONValue, header: JSONValue?, bug: String?, time: ParsedTime?) -> IPSReport {
        var c = Crash()
        c.process = body["procName"]?.stringValue ?? header?["app_name"]?.stringValue ?? "?"
        if let path = body["procPath"]?.stringValue { c.take(path: path) }
        c.pid = Int(body["pid"]?.stringValue ?? "")
        c.time = body["captureTime"]?.stringValue.flatMap(reportTime) ?? time
        if let e = body["exception"] {
            c.type = e["type"]?.stringValue ?? ""
            c.signal = e["signal"]?.stringValue ?? ""
            c.subtype = e["subtype"]?.stringValue ?? ""
            c.message = e["message"]?.stringValue ?? ""
        }
        if let t = body["termination"] {
            var parts: [String] = []
            if let ns = t["namespace"]?.stringValue { parts.append(ns) }
            if let code = t["code"]?.stringValue {
                // (`2343432205` in the JSON is `0x8badf00d` as every text and document writes it)
                parts.append("code " + (UInt64(code).map { $0 > 0xFFFF ? "0x" + String($0, radix: 16) : code } ?? code))
            }
            if let ind = t["indicator"]?.stringValue { parts.append(ind) }
            for reason in t["reasons"]?.arrayValue ?? [] { if let s = reason.stringValue { parts.append(s); c.explained = true } }
            c.termination = parts.joined(separator: " ")
        }
        // The crashed thread (`faultingThread`), its queue, and its top frame's image.
        if let ft = body["faultingThread"]?.stringValue.flatMap({ Int($0) }) {
            c.thread = String(ft)
            if let threads = body["threads"]?.arrayValue, threads.indices.contains(ft) {
                c.queue = threads[ft]["queue"]?.stringValue ?? ""
                if let image = threads[ft]["frames"]?.arrayValue?.first?["imageIndex"]?.stringValue.flatMap({ Int($0) }),
                    let images = body["usedImages"]?.arrayValue, images.indices.contains(image)
                {
                    c.library = images[image]["name"]?.stringValue ?? ""
                }
            }
        }
        // `"asi" : {"CoreFoundation" : ["*** Terminating app due to uncaught exception …"]}`
        if let asi = body["asi"]?.objectValue {
            for (_, v) in asi { for line in v.arrayValue ?? [] { if let t = line.stringValue { c.take(applicationSpecific: t) } } }
        }
        var r = IPSReport(kind: .crash, bugType: bug)
        r.records.append(crashRecord(c))
        return r
    }

    /// Keys a forum or a chat puts on one line with the key before (Apple's forums collapse a
    /// report's header into one paragraph: `Exception Type: EXC_CRASH (SIGKILL) Exception
    /// Codes: … Termination Reason: FRONTBOARD …`, read as one exception, a SIGKILL a crash).
    static let collapsedKeys = [" Exception Codes:", " Exception Subtype:", " Exception Message:", " Exception Note:",
                                " Termination Reason:", " Termination Description:", " Triggered by Thread:"]

    static func crash(text: String) -> IPSReport {
        var c = Crash()
        var termination: [String] = []
        /// `Thread N name:` lines, for the crashed thread's queue once it is known.
        var named: [(thread: String, line: String)] = []
        var text = text
        // (`replacingOccurrences` returns the text as it is when the key is not in it)
        for key in collapsedKeys { text = text.replacingOccurrences(key, "\n" + key.dropFirst()) }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(CrashReportText.uncaughtPrefix) {
                c.take(applicationSpecific: String(line))
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: " ")
            let value = line[line.index(after: colon)...].trimmingCharacters(in: " ")
            switch key {
            case "Process":
                // `BroadcastExtension [2210]`
                if let open = value.lastIndex(of: "["), let close = value.lastIndex(of: "]"), open < close {
                    c.process = value[..<open].trimmingCharacters(in: " ")
                    c.pid = Int(value[value.index(after: open)..<close])
                } else {
                    c.process = value
                }
            case "Path": c.take(path: value)
            case "Date/Time": c.time = reportTime(value)
            case "Date": if c.time == nil { c.time = summaryTime(value) }
            case "Exception Type", "Exception type":
                // `EXC_RESOURCE (SIGKILL)`
                if let open = value.firstIndex(of: "(") {
                    c.type = value[..<open].trimmingCharacters(in: " ")
                    c.signal = value[value.index(after: open)...].trimmingCharacters(in: ")")
                } else {
                    c.type = value
                }
            case "Exception Subtype", "Exception subtype": c.subtype = value
            case "Crashed Thread", "Triggered by Thread", "Triggered by thread": c.take(thread: value)
            case "Top frame": c.library = value
            case "Exception Message", "Exception Note": if c.message.isEmpty { c.message = value }
            case "Termination Reason", "Termination Description":
                termination.append(value)
                if key == "Termination Description" { c.explained = true }
            default:
                // `Thread 13 Crashed:: Dispatch queue: EncoderQueue`, `Thread 0 name:  Dispatch
                // queue: com.apple.main-thread`: a queue, the crashed thread's only when that
                // thread is the one that crashed (a `name:` line comes before the thread's
                // `Crashed:`; `Thread 0 name:` above `Thread 0:` is the main thread's queue in
                // a report whose thread 5 crashed, which Xcode shows as thread 5's, not 0's)
                if key.hasPrefix("Thread "), key.hasSuffix(" Crashed") || key.hasSuffix(" name") {
                    let n = String(key.dropFirst(7).prefix { $0.isNumber })
                    if key.hasSuffix(" name") {
                        named.append((n, String(line)))
                    } else {
                        if c.thread.isEmpty { c.thread = n }
                        if c.thread == n { c.take(queueIn: String(line)) }
                    }
                }
            }
            if key == "Thread 0" || key.hasPrefix("Thread 0 ") && !key.hasSuffix(" name") { break }
        }
        if !c.thread.isEmpty, let name = named.first(where: { $0.thread == c.thread }) { c.take(queueIn: name.line) }
        c.termination = termination.joined(separator: "; ")
        var r = IPSReport(kind: .crash, bugType: nil)
        r.records.append(crashRecord(c))
        return r
    }
}

/// An .ips report's text (reports are small; more than 16 MB is not a report).
func readIPSText(_ source: ByteSource, path: String) throws -> String {
    let limit = 16 << 20
    let bytes = try readUpTo(limit + 1, from: source)
    // (cut silently at 16 MB, a valid report was then "invalid JSON")
    guard bytes.count <= limit else { throw InputError(path: path, ".ips report larger than 16 MB: not read (reports are well under 1 MB)") }
    return String(decoding: bytes, as: UTF8.self)
}

/// For a report read through a UTF-16 decoder: its file's byte of a byte of the decoded text
/// (`readIPSText`'s), for its JSON errors; nil for a report read as it is in the file.
func ipsFileBytes(_ source: ByteSource, _ text: String) -> ((Int) -> Int)? {
    guard let utf16 = source.utf16Origin else { return nil }
    return { utf16.fileByte(ofDecoded: $0, in: text) }
}

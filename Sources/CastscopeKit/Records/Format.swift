#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The record fields castscope keeps from any format.
public enum RecordField: Int, CaseIterable, Sendable {
    case process, pid, tid, level, subsystem, category, library, host, device, message

    static func named(_ name: String) -> RecordField? {
        switch name {
        case "process", "ident", "identifier": return .process
        case "pid": return .pid
        case "tid", "thread": return .tid
        case "level", "type": return .level
        case "subsystem": return .subsystem
        case "category": return .category
        case "library": return .library
        case "host": return .host
        case "device": return .device
        case "message": return .message
        default: return nil
        }
    }

    var name: String { String(describing: self) }
}

/// One log format, loaded from a `parsers/formats/*.json` definition.
public struct LogFormat: Sendable {
    public enum Kind: String, Sendable {
        /// Text lines described by layout patterns.
        case lines
        /// One JSON object per line (Apple ndjson, journalctl -o json).
        case jsonLines = "json-lines"
        /// Apple's pretty-printed JSON array (`log show --style json`).
        case jsonArray = "json-array"
        /// Journal Export Format (`journalctl -o export`), binary-safe.
        case journalExport = "journal-export"
        /// journalctl -o verbose: an entry header, then its fields indented (`JournalVerbose`).
        case journalVerbose = "journal-verbose"
        /// Message-only lines (Xcode's structured console copy, pasted snippets).
        case plain
    }

    /// What a line that fits no pattern means.
    public enum Continuation: String, Sendable {
        /// Part of the previous record's message (multi-line messages).
        case join
        /// Part of the previous record when it starts with a TAB (Console.app copy).
        case tab
        /// Part of the previous record when it starts with white space.
        case indented
        /// A record of its own with the time of the nearest timestamped line (Xcode `print()`).
        case print
        /// Not a record: counted as unparsed.
        case none
    }

    public struct Sample: Sendable {
        public var lines: [String]
        public var expect: [(String, String)]
    }

    public var name: String
    public var title: String
    public var kind: Kind
    public var patterns: [Pattern]
    /// For each pattern, the record field of each capture slot.
    var slotFields: [[RecordField?]]
    public var headers: [String]
    public var skip: [String]
    public var continuation: Continuation
    public var priority: Int
    /// Taken only where no other format reads the lines and four in five begin with a time it
    /// reads (`FormatDetector.detect`: instead of `plain`, whose times are lost).
    public var fallback = false
    /// JSON kinds: the keys to read each field from, first present wins.
    public var jsonFields: [(RecordField, [String])]
    public var jsonTimeKeys: [String]
    public var jsonTimeIsEpochMicros: Bool
    /// `"timeFormat": "auto"`: a number (or a string of digits) is seconds, milliseconds,
    /// microseconds or nanoseconds since 1970 by its size (zap's `ts`, pino's `time`), anything
    /// else RFC 3339: the structured loggers' JSON lines (`json-logger`).
    public var jsonTimeIsAuto = false
    /// JSON kinds: keys whose presence identifies this format during detection.
    public var detectKeys: [String]
    public var processIsPath: Bool
    /// Lines may hold several records whose line breaks were lost in a paste: a record is
    /// also looked for after a space inside a line.
    public var splitCollapsed: Bool
    /// A journald rendering whose entries carry fields: journalctl filters apply to it.
    public var isJournal: Bool
    /// Its lines are looked for inside another format's file (`ForeignFormats`); false for a
    /// layout so loose that an app's printed lines would be taken for it.
    public var segments: Bool
    /// A row whose message ends in an opening bracket opens a dump whose lines, column 0
    /// included, continue it to the closing bracket (Console copies: `Stop apps {`).
    public var dumps: Bool
    /// An indented format whose records a Java stack trace may follow: its column-0 lines
    /// (`java.lang.NullPointerException: …`, `Caused by: …`, `Exception in thread "…" …`)
    /// continue the record as its indented frames do (`RecordReader.isJavaThrowable`).
    public var javaStacks: Bool
    /// A record of this level keeps its subsystem and level in its message, from the
    /// subsystem's first byte (`"levelInMessage": "ERROR"`): GLib's g_error, which ends the
    /// process, is `GLib-ERROR **: …` to the vocabulary in a GLib or Janus file as in any other
    /// layout (janus-gateway#3079's `(janus:2858): GLib-ERROR **: 13:33:30.247: Creating pipes
    /// for GWakeup: Too many open files` was "nothing recognized").
    public var levelInMessage: [UInt8]?
    /// A line that is none of its records nor continues one is a record of its own, with the
    /// time of the record before (marked inferred), as a fallback format's is: other programs'
    /// lines among a Java service's two-line records (docker compose's `… exited with code 1`,
    /// s6's) were unparsed, never seen by the vocabulary (`"otherLines": "records"`).
    public var otherLinesAreRecords: Bool
    /// Another program's untimed lines among the format's, read in their own layout after the
    /// format's patterns failed (`"otherRecords"`): records of their own with the time of the
    /// timed record before them, marked inferred. Not the format's own: no part of detection,
    /// of the start tests or of another file's segments. (Prosody's console before 2023 among
    /// docker-jitsi-meet's Java services, docker-jitsi-meet#413: joined to a Jicofo record.)
    public var otherPatterns: [Pattern] = []
    /// Patterns (indices) whose dates are always written `yyyy-dd-MM` (HaishinKit's Logboard),
    /// not only when the middle field is above 12.
    public var swapDayMonth: Set<Int> = []
    public var samples: [Sample]
    let startProbe: RecordStartProbe
    /// Each pattern's own cheap start test (`.unknown` where it has none).
    let patternProbes: [RecordStartProbe]
    /// The first bytes a record of this format may start with, for `collapsedRecordStart`: a
    /// digit (a time first), or a pattern's leading literal's (Console's `default 14:29:55…`).
    let collapsedStarts: [Bool]
    /// Some pattern starts with a word (`collapsedRecordStart` then compares rows' shapes).
    let collapsedWords: Bool
    /// Every pattern starts with a word: a line that does not is none of its rows.
    let collapsedOnlyWords: Bool
    /// Where the definition came from (built-in or a user file).
    public var origin: String

    public struct DefinitionError: Error, CustomStringConvertible {
        public var origin: String
        public var message: String
        public var description: String { "\(origin): \(message)" }
    }

    /// `samples`: the definition was read with its samples (`ParserRegistry.builtin(samples:)`),
    /// which it must then have.
    public init(json: JSONValue, origin: String, samples withSamples: Bool = true) throws {
        func fail(_ m: String) -> DefinitionError { DefinitionError(origin: origin, message: m) }
        guard let name = json["name"]?.stringValue else { throw fail("missing \"name\"") }
        self.name = name
        self.origin = origin
        title = json["title"]?.stringValue ?? name
        guard let kind = Kind(rawValue: json["kind"]?.stringValue ?? "lines") else {
            throw fail("unknown kind \(json["kind"]?.stringValue ?? "")")
        }
        self.kind = kind
        var patterns: [Pattern] = []
        var slotFields: [[RecordField?]] = []
        for p in json["patterns"]?.arrayValue ?? [] {
            guard let text = p.stringValue else { throw fail("a pattern is not a string") }
            do {
                let pattern = try Pattern(text)
                patterns.append(pattern)
                slotFields.append(pattern.names.map { name in
                    name == "time" ? nil : RecordField.named(name)
                })
            } catch {
                throw fail("\(error)")
            }
        }
        if kind == .lines && patterns.isEmpty { throw fail("a \"lines\" format needs at least one pattern") }
        self.patterns = patterns
        for p in json["otherRecords"]?.arrayValue ?? [] {
            guard let text = p.stringValue else { throw fail("an otherRecords pattern is not a string") }
            do {
                let pattern = try Pattern(text)
                guard !pattern.names.contains("time") else { throw fail("an otherRecords pattern has a time: make it one of \"patterns\"") }
                otherPatterns.append(pattern)
                slotFields.append(pattern.names.map { RecordField.named($0) })
            } catch let e as DefinitionError {
                throw e
            } catch {
                throw fail("\(error)")
            }
        }
        self.slotFields = slotFields
        headers = (json["headers"]?.arrayValue ?? []).compactMap(\.stringValue)
        skip = (json["skip"]?.arrayValue ?? []).compactMap(\.stringValue)
        guard let cont = Continuation(rawValue: json["continuation"]?.stringValue ?? "none") else {
            throw fail("unknown continuation \(json["continuation"]?.stringValue ?? "")")
        }
        continuation = cont
        priority = Int(json["priority"]?.stringValue ?? "0") ?? 0
        fallback = json["fallback"]?.stringValue == "true"
        var jsonFields: [(RecordField, [String])] = []
        var timeKeys: [String] = []
        var epoch = false
        var auto = false
        if let fields = json["fields"]?.objectValue {
            for (key, value) in fields {
                let keys = value.arrayValue?.compactMap(\.stringValue) ?? value.stringValue.map { [$0] } ?? []
                if key == "time" { timeKeys = keys; continue }
                if key == "timeFormat" {
                    switch value.stringValue {
                    case "epoch-us": epoch = true
                    case "auto": auto = true
                    case "rfc3339": break
                    default: throw fail("unknown timeFormat \(value.stringValue.map { "\"\($0)\"" } ?? "") (epoch-us, auto or rfc3339)")
                    }
                    continue
                }
                guard let f = RecordField.named(key) else { throw fail("unknown field \"\(key)\"") }
                jsonFields.append((f, keys))
            }
        }
        self.jsonFields = jsonFields
        jsonTimeKeys = timeKeys
        jsonTimeIsEpochMicros = epoch
        jsonTimeIsAuto = auto
        detectKeys = (json["detectKeys"]?.arrayValue ?? []).compactMap(\.stringValue)
        processIsPath = json["processIsPath"] == .bool(true)
        splitCollapsed = json["splitCollapsed"] == .bool(true)
        isJournal = json["journal"] == .bool(true)
        segments = json["segments"] != .bool(false)
        dumps = json["dumps"] == .bool(true)
        javaStacks = json["javaStacks"] == .bool(true)
        levelInMessage = json["levelInMessage"]?.stringValue.map { Array($0.utf8) }
        otherLinesAreRecords = json["otherLines"]?.stringValue == "records"
        for v in json["swapDayMonth"]?.arrayValue ?? [] {
            guard let i = Int(v.stringValue ?? ""), patterns.indices.contains(i) else { throw fail("swapDayMonth: not a pattern index") }
            swapDayMonth.insert(i)
        }
        var samples: [Sample] = []
        for s in json["samples"]?.arrayValue ?? [] {
            let lines: [String]
            if let l = s["line"]?.stringValue { lines = [l] } else {
                lines = (s["lines"]?.arrayValue ?? []).compactMap(\.stringValue)
            }
            let expect = (s["expect"]?.objectValue ?? []).compactMap { k, v in v.stringValue.map { (k, $0) } }
            samples.append(Sample(lines: lines, expect: expect))
        }
        if withSamples, samples.isEmpty { throw fail("no samples: every format carries sample lines that a test runs") }
        self.samples = samples
        // The cheap record-start test holds only when every pattern starts the same way.
        let probes = patterns.map { RecordStartProbe($0) }
        patternProbes = probes
        var starts = [Bool](repeating: false, count: 256)
        for d in 0x30...0x39 { starts[d] = true }
        // (letters only: xcode-untimed's leading space and backtick are no row's start)
        for case .literal(let l)? in patterns.map(\.ops.first) where !l.isEmpty && isLetter(l[0]) { starts[Int(l[0])] = true }
        collapsedStarts = starts
        collapsedWords = starts.indices.contains { starts[$0] && isLetter(UInt8($0)) }
        collapsedOnlyWords = patterns.allSatisfy { p in
            if case .literal(let l)? = p.ops.first, let b = l.first { return isLetter(b) }
            return false
        }
        startProbe = probes.dropFirst().allSatisfy({ $0.sameTest(as: probes[0]) }) ? RecordStartProbe(patterns.first) : .unknown
    }
}

/// One offset per `RecordField` (-1: none), held inline.
struct FieldMarks {
    private var v: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) = (-1, -1, -1, -1, -1, -1, -1, -1, -1, -1)
    static let count = 10

    var count: Int { Self.count }

    subscript(i: Int) -> Int {
        @inline(__always) get {
            precondition(UInt(bitPattern: i) < UInt(Self.count))
            return withUnsafeBytes(of: v) { $0.load(fromByteOffset: i &* MemoryLayout<Int>.stride, as: Int.self) }
        }
        @inline(__always) set {
            precondition(UInt(bitPattern: i) < UInt(Self.count))
            withUnsafeMutableBytes(of: &v) { $0.storeBytes(of: newValue, toByteOffset: i &* MemoryLayout<Int>.stride, as: Int.self) }
        }
    }
}

/// A record as read from a file: field ranges into its own byte storage, so that nothing is
/// turned into a `String` unless the record matters.
public struct RawRecord {
    public var storage: [UInt8] = []
    /// (Held in the record, not in lists: each field set wrote a list, a uniqueness check per
    /// write, 15 a storm line, and a copy of the record took a reference to each list.)
    var starts = FieldMarks()
    var ends = FieldMarks()
    public var time: ParsedTime?
    public var timeInferred = false
    public var line = 0
    /// Lines not joined to the message because it was already `maxJoinedBytes` long.
    public var cutLines = 0
    /// A record's lines joined (a backtrace, a dump) up to this: a gzip of one line and three
    /// million continuation lines held 438 MB in one record.
    static let maxJoinedBytes = 1 << 20

    public init() {
        precondition(RecordField.allCases.count == FieldMarks.count)
        storage.reserveCapacity(512)
    }

    mutating func reset(line: Int) {
        storage.removeAll(keepingCapacity: true)
        starts = FieldMarks()
        time = nil
        timeInferred = false
        self.line = line
        cutLines = 0
    }

    mutating func set(_ f: RecordField, _ bytes: UnsafeRawBufferPointer) {
        starts[f.rawValue] = storage.count
        storage.append(contentsOf: bytes)
        ends[f.rawValue] = storage.count
    }

    /// Stores a whole line (right after `reset`), for fields set by range (`setRange`).
    mutating func setLine(_ line: UnsafeRawBufferPointer) {
        storage.append(contentsOf: line)
    }

    /// A field's range of the stored bytes, nil when it is not set.
    func range(_ f: RecordField) -> Range<Int>? {
        starts[f.rawValue] >= 0 ? starts[f.rawValue]..<ends[f.rawValue] : nil
    }

    /// A field as a range of the stored line (`setLine`).
    mutating func setRange(_ f: RecordField, _ r: Range<Int>) {
        starts[f.rawValue] = r.lowerBound
        ends[f.rawValue] = r.upperBound
    }

    mutating func set(_ f: RecordField, bytes: [UInt8]) {
        starts[f.rawValue] = storage.count
        storage.append(contentsOf: bytes)
        ends[f.rawValue] = storage.count
    }

    /// Appends a continuation line to the message (which is always stored last), after a line
    /// break; `wrapped`: with nothing between (the line is the rest of one the paste wrapped).
    mutating func appendToMessage(_ line: UnsafeRawBufferPointer, wrapped: Bool = false) {
        guard storage.count + line.count < Self.maxJoinedBytes else {
            cutLines += 1
            return
        }
        let m = RecordField.message.rawValue
        if starts[m] < 0 || ends[m] != storage.count {
            if starts[m] >= 0 {
                let old = Array(storage[starts[m]..<ends[m]])
                starts[m] = storage.count
                storage.append(contentsOf: old)
            } else {
                starts[m] = storage.count
            }
        } else if ends[m] > starts[m] && !wrapped {
            storage.append(0x0A)
        }
        storage.append(contentsOf: line)
        ends[m] = storage.count
    }

    public func has(_ f: RecordField) -> Bool { starts[f.rawValue] >= 0 }

    public func string(_ f: RecordField) -> String? {
        guard starts[f.rawValue] >= 0 else { return nil }
        return String(decoding: storage[starts[f.rawValue]..<ends[f.rawValue]], as: UTF8.self)
    }

    public func withBytes<R>(_ f: RecordField, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        guard starts[f.rawValue] >= 0 else { return nil }
        let r = starts[f.rawValue]..<ends[f.rawValue]
        return storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[r])) }
    }

    /// The message's bytes, a terminal's escape sequences taken out when it has any (a service
    /// logging in colour stores them in its journal entries; `journalctl` colours warnings in
    /// its text; a coloured line past a file's first bytes is not stripped by its source), and
    /// colour codes written out (rsyslog's `#033[33m`, `^[[33m`: `EscapedColours`).
    public func withMessage<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R? {
        withMessageAndCategory { message, _ in body(message) }
    }

    /// `withMessage`, with the category field's bytes (nil: none) lent alongside.
    @inline(__always) func withMessageAndCategory<R>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer?) -> R) -> R? {
        let m = RecordField.message.rawValue, c = RecordField.category.rawValue
        guard starts[m] >= 0 else { return nil }
        let r = starts[m]..<ends[m]
        let cr = starts[c] >= 0 ? starts[c]..<ends[c] : nil
        return storage.withUnsafeBytes { all -> R in
            let bytes = UnsafeRawBufferPointer(rebasing: all[r])
            let category = cr.map { UnsafeRawBufferPointer(rebasing: all[$0]) }
            guard EscapedColours.present(bytes) else { return body(bytes, category) }
            return EscapedColours.stripped(bytes).withUnsafeBytes { body($0, category) }
        }
    }

    /// The pid field as a number (as `Int(String)` reads it), without making a `String`.
    public var pid: Int? {
        withBytes(.pid) { b -> Int? in
            var i = 0
            var negative = false
            if let sign = b.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
                negative = sign == UInt8(ascii: "-")
                i = 1
            }
            guard i < b.count else { return nil }
            var v = 0
            while i < b.count {
                let d = b[i] &- 0x30
                guard d < 10 else { return nil }
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (n, o2) = negative ? m.subtractingReportingOverflow(Int(d)) : m.addingReportingOverflow(Int(d))
                guard !o1, !o2 else { return nil }
                v = n
                i += 1
            }
            return v
        } ?? nil
    }
}

extension LogFormat {
    /// Where, after position 0, a record of this format starts inside `line` (after a space),
    /// for pastes that lost their line breaks.
    func collapsedRecordStart(_ line: UnsafeRawBufferPointer, _ matches: inout [PatternMatch]) -> Int? {
        guard splitCollapsed, line.count > 1, let base = line.baseAddress else { return nil }
        let n = line.count
        // A row that starts with a word (Console's `default 14:29:55.265590-0400 …`) was
        // collapsed only if one space follows that word, and a row run into it has the same
        // shape: its word, one space, a time as long. (A message's `error 14:29:55.9 server …`
        // is no row; a row whose columns kept their runs of spaces was not collapsed.)
        let own = collapsedWords ? Self.leadShape(line, 0) : (word: 0, spaces: 0, time: 0)
        if own.word > 0 && own.spaces != 1 || collapsedOnlyWords && own.word == 0 { return nil }
        var from = 0
        // Each space with a digit (or a pattern's first literal byte) after it.
        while from < n - 1, let hit = memchr(base + from, 0x20, n - 1 - from) {
            let i = base.distance(to: UnsafeRawPointer(hit)) + 1
            from = i
            let b = line[i]
            guard isDigit(b) ? !collapsedOnlyWords : collapsedWords && collapsedStarts[Int(b)] else { continue }
            if own.word > 0 {
                let shape = Self.leadShape(line, i)
                guard shape.spaces == 1, shape.time == own.time else { continue }
            }
            let rest = UnsafeRawBufferPointer(rebasing: line[i...])
            // The cheap test first, each pattern's own: most digits after a space are no
            // timestamp (Xcode's patterns do not all start alike, so the format has no one test).
            for k in patterns.indices where patternProbes[k].test(rest) != false && patterns[k].match(rest, into: &matches[k]) {
                return i
            }
        }
        return nil
    }
}

extension LogFormat {
    /// At `i`: the letters of a leading word, the spaces after them, and the run of time bytes
    /// (digits, `:`, `.`, `+`, `-`) after those.
    static func leadShape(_ line: UnsafeRawBufferPointer, _ i: Int) -> (word: Int, spaces: Int, time: Int) {
        var k = i
        while k < line.count, isLetter(line[k]) { k += 1 }
        let word = k - i
        let s = k
        while k < line.count, line[k] == 0x20 { k += 1 }
        let spaces = k - s
        let t = k
        while k < line.count, isDigit(line[k]) || line[k] == UInt8(ascii: ":") || line[k] == UInt8(ascii: ".")
            || line[k] == UInt8(ascii: "+") || line[k] == UInt8(ascii: "-") { k += 1 }
        return (word, spaces, k - t)
    }
}

/// A cheap test of whether a line starts a record, from the first element of the format's
/// first pattern: used for lines the prefilter already knows are irrelevant, which need no
/// parsing beyond "does this end the previous record".
enum RecordStartProbe: Sendable {
    case isoDate, bsdDate, clock, wordThenTab, isoAnyDate, literal([UInt8]), unknown

    init(_ pattern: Pattern?) {
        guard let pattern else { self = .unknown; return }
        switch pattern.ops.first {
        case .field(_, let type)?:
            switch type {
            case .iso, .isotz, .isolocal: self = .isoDate
            case .isoany: self = .isoAnyDate
            case .bsd: self = .bsdDate
            case .clock: self = .clock
            case .word:
                if pattern.ops.count > 1, case .literal(let l) = pattern.ops[1], l.first == 0x09 { self = .wordThenTab } else {
                    self = .unknown
                }
            default: self = .unknown
            }
        case .literal(let l)?: self = .literal(l)
        default: self = .unknown
        }
    }

    /// The probe as a small number for per-line code (1 ISO date, 2 BSD date, 3 time of day,
    /// 4 word then TAB: the `Skimmer`'s probe kinds; 0 for the others).
    var cheapCode: Int {
        switch self {
        case .isoDate: return 1
        case .bsdDate: return 2
        case .clock: return 3
        case .wordThenTab: return 4
        case .isoAnyDate: return 5
        default: return 0
        }
    }

    func sameTest(as other: RecordStartProbe) -> Bool {
        switch (self, other) {
        case (.isoDate, .isoDate), (.bsdDate, .bsdDate), (.clock, .clock), (.wordThenTab, .wordThenTab), (.isoAnyDate, .isoAnyDate): return true
        case (.literal(let a), .literal(let b)): return a == b
        default: return false
        }
    }

    /// nil when it cannot tell cheaply.
    func test(_ p: UnsafeRawBufferPointer) -> Bool? {
        // The tests themselves are the skimmer's (`LineStart`), so both paths agree.
        switch self {
        case .isoDate: return p.baseAddress.map { ISODate.starts($0, p.count) } ?? false
        case .isoAnyDate: return p.baseAddress.map { ISOAnyDate.starts($0, p.count) } ?? false
        case .bsdDate: return p.baseAddress.map { BSDDate.starts($0, p.count) } ?? false
        case .clock: return p.baseAddress.map { Clock.starts($0, p.count) } ?? false
        case .wordThenTab:
            guard let first = p.first, first != 0x09, first != 0x20 else { return false }
            return WordThenTab.starts(p.baseAddress!, p.count)
        case .literal(let l):
            return p.count >= l.count && p.starts(with: l)
        case .unknown:
            return nil
        }
    }
}

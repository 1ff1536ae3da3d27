/// replaykit-error: ReplayKit reported an error (`RPRecordingErrorDomain` code, with its meaning
/// from the complete `RPRecordingErrorCode` table, `parsers/tables/replaykit-errors.json`).
/// One error echoed on the next lines (a plugin repeating the native error, the description
/// printed after the code) is one finding with all its lines as evidence.
struct ReplayKitErrorRule: FindingRule {
    let kind = "replaykit-error"

    /// An echo: the same code (or a line without one) within this many µs of the first.
    static let echoWindow: Int64 = 2_000_000

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        var out: [Finding] = []
        func group(_ events: [Event]) -> [[Event]] {
            var groups: [[Event]] = []
            for i in events.indices where events[i].code == .replaykitError {
                let e = events[i]
                let code = Self.code(of: e)
                if var last = groups.last, let first = last.first,
                    Self.near(first, e), code == nil || Self.code(of: first) == nil || Self.code(of: first) == code
                {
                    last.append(e)
                    groups[groups.count - 1] = last
                } else {
                    groups.append([e])
                }
            }
            // (a code on a line of its own, `- code: 18446744073709545809` in Swift's `dump()`
            // of an NSError, is ReplayKit's only next to its domain's line)
            return groups.filter { g in g.contains { $0.attr("needs") == nil } }
        }
        func make(_ g: [Event], _ session: Session?) -> Finding {
            let code = g.lazy.compactMap { Self.code(of: $0) }.first
            let text = g.lazy.compactMap { $0.attr("text") }.first
            var m = Self.describe(code: code, text: text, message: g[0].message)
            if code == nil, let cause = g.lazy.compactMap({ $0.attr("cause") }).first { m += ": \(cause)" }
            let evidence = g.map(\.source)
            let e = g[0]
            if let session { return session.finding(kind, .error, at: e.time, m, evidence) }
            return Finding(kind: kind, severity: .error, time: e.time, displayOffset: e.displayOffset, session: nil, message: m,
                           evidence: evidence)
        }
        r.sessions.borrowingForEach { s in for g in group(s.events) { out.append(make(g, copy s)) } }
        for g in group(Array(r.unattached.matching(KindSet([.replaykitError])))) { out.append(make(g, nil)) }
        return out
    }

    /// Two lines close enough to be one error told twice: within the window when both have
    /// times, next to each other in one file when either has none.
    static func near(_ a: Event, _ b: Event) -> Bool {
        if let ta = a.time, let tb = b.time { return abs(tb - ta) <= echoWindow }
        return a.source.path == b.source.path && abs(b.source.line - a.source.line) <= 2
    }

    /// The code on the event (`code`), or one written in its text (`Code=-5807`), or the one a
    /// known English description stands for.
    static func code(of e: Event) -> String? {
        if let c = e.attr("code") { return normalized(c) }
        if let head = e.attr("code_head"), let tail = e.attr("code_tail") { return normalized(head + tail) }
        for text in [e.attr("detail"), e.attr("text"), Optional(e.message)].compactMap({ $0 }) {
            let bytes = Array(text.utf8)
            if let at = bytes.withUnsafeBytes({ findBytes($0, Array("Code=".utf8), from: 0) }) {
                let digits = bytes[(at + 5)...].prefix { $0 == UInt8(ascii: "-") || isDigit($0) }
                if !digits.isEmpty { return normalized(String(decoding: digits, as: UTF8.self)) }
            }
            let lower = text.lowercased()
            for (phrase, c) in descriptions where lower.hasBytes(phrase) { return c }
        }
        return nil
    }

    /// Swift's `dump()` of an NSError prints the code unsigned (18446744073709545809 = -5807),
    /// and so do Swift's `UInt(bitPattern:)` and platform channels; as 32 bits, 4294961489.
    /// (ReplayKit's codes are small negative numbers: none lies between 2^31 and 2^32.)
    static func normalized(_ code: String) -> String {
        if let u = UInt64(code), u > UInt64(Int64.max) { return String(Int64(bitPattern: u)) }
        if let u = UInt64(code), u > UInt64(Int32.max), u <= UInt64(UInt32.max) { return String(Int32(bitPattern: UInt32(u))) }
        return code
    }

    /// English descriptions ReplayKit puts in `NSLocalizedDescription`, for lines that carry
    /// only the text.
    static let descriptions: [(String, String)] = [
        // (lowercase, compared with the text lowercased; without "content resizing": users type
        // it, and the alert's capitals, every way)
        ("interrupted by multitasking and ", "-5807"),
        ("invalid broadcast session", "-5808"),
    ]

    static func describe(code: String?, text: String?, message: String) -> String {
        guard let code else {
            return "ReplayKit failed: \(message)"
        }
        guard let entry = table[code] else {
            return "ReplayKit error \(code): unknown code \(code)" + (text.map { " (\"\($0)\")" } ?? "")
        }
        return "ReplayKit error \(code) (\(entry.case)): \(entry.meaning)"
    }

    struct Entry { var `case`: String; var meaning: String }

    /// The table, read once from the definition compiled in from `parsers/`.
    static let table: [String: Entry] = {
        var t: [String: Entry] = [:]
        guard let json = BuiltinParsers.table("replaykit-errors") else { return t }
        for row in json["codes"]?.arrayValue ?? [] {
            guard let c = row["code"]?.stringValue, let k = row["case"]?.stringValue, let m = row["meaning"]?.stringValue else { continue }
            t[c] = Entry(case: k, meaning: m)
        }
        return t
    }()
}

/// ReplayKit's error codes as logs write them (`Code=-5807`, an unsigned `dump()`, an English
/// description alone) and what each means, from the complete `RPRecordingErrorCode` table
/// (`parsers/tables/replaykit-errors.json`): read by the sessions (why an in-app capture
/// failed) and by `replaykit-error`.
enum ReplayKitErrors {
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

/// Data tables the timestamp scanners read (`parsers/tables/`), each read once.

/// The zone abbreviations journalctl prints after a time (`-o short-full`, `with-unit`, the
/// entry header of `-o verbose`), read once from `parsers/tables/time-zone-abbreviations.json`.
/// An abbreviation tzdata gives to zones of different offsets (`CST`, `IST`, `PST`) is not in it:
/// such a time is read without a zone, as `-o short`'s is.
enum ZoneAbbreviations {
    static let offsets: [[UInt8]: Int] = {
        var table: [[UInt8]: Int] = [:]
        guard let json = BuiltinParsers.table("time-zone-abbreviations") else { return table }
        for row in json["zones"]?.arrayValue ?? [] {
            guard let name = row["abbreviation"]?.stringValue, let text = row["offset"]?.stringValue else { continue }
            let bytes = Array(text.utf8)
            var t = ParsedTime()
            let end = bytes.withUnsafeBytes { TimeScan.zone($0, 0, into: &t) }
            guard end == bytes.count, let offset = t.offset else { continue }
            table[Array(name.utf8)] = offset
        }
        return table
    }()

    /// `p[range]` is a log level's word (any case), not a zone's name.
    static func isLevel(_ p: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        levels.contains(p[range].map { $0 & 0xDF })
    }
    static let levels: Set<[UInt8]> = Set(["INFO", "INF", "WARN", "WRN", "ERROR", "ERR", "DEBUG", "DBG", "TRACE", "FATAL",
        "NOTICE", "CRIT", "SEVERE", "FINE", "FINER", "FINEST", "ALERT", "EMERG", "PANIC"].map { Array($0.utf8) })

    /// Seconds east of UTC for the abbreviation in `p[range]`, nil when ambiguous or unknown.
    static func offset(_ p: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        offsets[Array(p[range])]
    }
}

/// Month abbreviations of non-English locales (`parsers/tables/month-names.json`), and the
/// English ones in lower, upper and title case.
enum MonthNames {
    static let months: [[UInt8]: Int] = {
        var table: [[UInt8]: Int] = [:]
        for (k, name) in TimeScan.months.enumerated() {
            table[Array(name.lowercased().utf8)] = k + 1
            table[Array(name.uppercased().utf8)] = k + 1
        }
        guard let json = BuiltinParsers.table("month-names") else { return table }
        for row in json["months"]?.arrayValue ?? [] {
            guard let m = row["month"]?.stringValue.flatMap({ Int($0) }) else { continue }
            for name in row["names"]?.arrayValue ?? [] {
                guard let n = name.stringValue, !n.isEmpty else { continue }
                table[Array(n.utf8)] = m
            }
        }
        // Also capitalized, where glibc once wrote them so (pt_BR's `Out 23 16:48:59`, `Fev`,
        // `Set`) and the table has them in lower case; never over another month's name.
        for (name, m) in table where name.first.map({ $0 >= 0x61 && $0 <= 0x7A }) == true {
            var title = name
            title[0] -= 0x20
            if table[title] == nil { table[title] = m }
        }
        return table
    }()

    /// Longer than any name (the table's longest are 8 bytes: `de febr.`, `gruod.`).
    static let longest = 12

    static func month(_ name: UnsafeRawBufferPointer) -> Int? {
        if name.count == 3, let k = TimeScan.months.firstIndex(where: { $0.utf8.elementsEqual(name) }) { return k + 1 }
        return months[Array(name)]
    }
}

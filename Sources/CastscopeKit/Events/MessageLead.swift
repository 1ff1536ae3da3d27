/// What a daemon's own logger writes before its message, inside the journal's (or syslog's)
/// line: a time (Go's `log` package: `2026/03/12 10:15:04 `; ISO 8601 with or without a zone;
/// a clock; any of them in brackets) and a level (`INFO`, `[WARN]`, `error:`), either or both.
/// A relay rule that must cover the whole message (`anchored`) is tried again after it (only
/// the relay's: on the phone, `DEBUG: no data to send` from another process is no Jitsi line): a relay writing through such a logger was "nothing recognized" (fvtt-avclient-
/// livekit#27 shows livekit-server's own time inside each journal line).
enum MessageLead {
    static let levels: [[UInt8]] = ["TRACE", "DEBUG", "DBG", "INFO", "INF", "NOTICE", "WARN", "WARNING", "WRN", "ERROR", "ERR", "CRIT",
                                    "FATAL"].map { Array($0.utf8) }

    /// Where the message after the lead begins, or nil when it has none (or nothing after it).
    static func end(_ p: UnsafeRawBufferPointer) -> Int? {
        var i = 0
        var found = false
        if let t = time(p, 0) {
            i = t
            found = true
            guard i < p.count, p[i] == 0x20 || p[i] == 0x09 else { return nil }
            while i < p.count, p[i] == 0x20 || p[i] == 0x09 { i += 1 }
        }
        if let l = level(p, i) {
            i = l
            found = true
            guard i < p.count, p[i] == 0x20 || p[i] == 0x09 else { return nil }
            while i < p.count, p[i] == 0x20 || p[i] == 0x09 { i += 1 }
        }
        return found && i < p.count ? i : nil
    }

    /// What dates a file's year-less lines, if `rec` gives it (`analyze` and `show` alike, from
    /// the first record that does): its own complete time; journalctl's header above it (`-o
    /// short` lines: its year and zone); else a daemon's own dated time its message begins with
    /// (its year; its zone only when its clock reads as the line's: a logger in UTC inside a
    /// CET journal is an hour off the line's clock).
    static func fileReference(_ rec: RawRecord, header: ParsedTime?) -> ParsedTime? {
        if let t = rec.time, t.hasYear, t.hasDate, t.offset != nil { return t }
        if let header { return header }
        guard let outer = rec.time, var inner = rec.withBytes(.message, { datedTime($0) }) ?? nil else { return nil }
        // (only a time of the line's own day, a zone either way: a JSON object's time of
        // something else, a job's, gave every line its year)
        if outer.hasDate, abs(daysFromCivil(2000, inner.month, inner.day) - daysFromCivil(2000, outer.month, outer.day)) > 1 { return nil }
        if abs(inner.secondOfDay - outer.secondOfDay) > 1 { inner.offset = nil }
        return inner
    }

    /// The dated time a message begins with (`2022-08-21T13:53:12.701+0200 INFO …` inside a
    /// journal line whose own time has no year or zone, fvtt-avclient-livekit#27; Go's
    /// `2026/03/12 10:15:04`), when it has a year: the file's reference for the lines that lack
    /// one, as a journal header is.
    static func datedTime(_ p: UnsafeRawBufferPointer) -> ParsedTime? {
        // (a JSON logger's object, pino's or bunyan's: its time key, `{"level":"info",
        // "time":"2018-04-21T03:26:41Z",…}` inside a journal line, mediasoup#200, was read as
        // 2026)
        if p.first == UInt8(ascii: "{") { return jsonTime(p) }
        guard let first = p.first, isDigit(first) || first == UInt8(ascii: "[") else { return nil }
        var t = ParsedTime()
        guard time(p, 0, into: &t) != nil, t.hasYear, t.hasDate else { return nil }
        return t
    }

    /// The dated time of a JSON object's own `time`, `timestamp`, `@timestamp` or `ts` key (not
    /// a key of an object inside it), looked for in its first 512 bytes: an ISO string, or since
    /// session 65 a number of seconds, milliseconds, … since 1970 (zap's `ts`, pino's `time`:
    /// `RecordReader.epochAnyUnit`).
    static func jsonTime(_ p: UnsafeRawBufferPointer) -> ParsedTime? {
        let head = UnsafeRawBufferPointer(rebasing: p[..<min(p.count, 512)])
        var found: ParsedTime?
        JSONScan.forEachMember(head) { key, value in
            guard found == nil, !value.isEmpty, jsonTimeKeys.contains(where: { $0.elementsEqual(key) }) else { return }
            if head[value.lowerBound] == UInt8(ascii: "\"") {
                var t = ParsedTime()
                if TimeScan.iso(head, value.lowerBound + 1, into: &t) != nil, t.hasYear, t.hasDate { found = t }
            } else if isDigit(head[value.lowerBound]) {
                var end = value.lowerBound
                while end < value.upperBound, isDigit(head[end]) || head[end] == UInt8(ascii: ".") { end += 1 }
                found = RecordReader.epochAnyUnit(Array(head[value.lowerBound..<end]))
            }
        }
        return found
    }

    private static let jsonTimeKeys: [[UInt8]] = ["time", "timestamp", "@timestamp", "ts"].map { Array($0.utf8) }

    static func time(_ p: UnsafeRawBufferPointer, _ i0: Int) -> Int? {
        var t = ParsedTime()
        return time(p, i0, into: &t)
    }

    /// A time at `i` (optionally in brackets): the index after it.
    static func time(_ p: UnsafeRawBufferPointer, _ i0: Int, into t: inout ParsedTime) -> Int? {
        var i = i0
        let bracket = i < p.count && p[i] == UInt8(ascii: "[")
        if bracket { i += 1 }
        var end: Int?
        if let e = TimeScan.iso(p, i, into: &t) {
            end = e
        } else if i + 19 <= p.count, let year = TimeScan.digits(p, i, 4), p[i + 4] == UInt8(ascii: "/"),
            let month = TimeScan.digits(p, i + 5, 2), p[i + 7] == UInt8(ascii: "/"), let day = TimeScan.digits(p, i + 8, 2),
            p[i + 10] == 0x20, let e = TimeScan.clock(p, i + 11, into: &t)
        {
            // Go's `log`: `2026/03/12 10:15:04[.000000]`
            (t.year, t.month, t.day) = (year, month, day)
            t.hasYear = (1...12).contains(month) && (1...31).contains(day)
            t.hasDate = t.hasYear
            end = e
        } else if let e = TimeScan.clock(p, i, into: &t) {
            end = TimeScan.zone(p, e, into: &t)
        }
        guard var e = end else { return nil }
        if bracket {
            guard e < p.count, p[e] == UInt8(ascii: "]") else { return nil }
            e += 1
        }
        return e
    }

    /// A level word at `i` (any case; in brackets, or followed by `:`): the index after it.
    static func level(_ p: UnsafeRawBufferPointer, _ i0: Int) -> Int? {
        var i = i0
        let bracket = i < p.count && p[i] == UInt8(ascii: "[")
        if bracket { i += 1 }
        var e = i
        while e < p.count, e - i < 8, isLetter(p[e]) { e += 1 }
        guard e > i else { return nil }
        let word = UnsafeRawBufferPointer(rebasing: p[i..<e])
        guard levels.contains(where: { $0.count == word.count && zip($0, word).allSatisfy { $0 == ($1 & 0xDF) } }) else { return nil }
        if bracket {
            guard e < p.count, p[e] == UInt8(ascii: "]") else { return nil }
            e += 1
        } else if e < p.count, p[e] == UInt8(ascii: ":") {
            e += 1
        }
        return e
    }
}

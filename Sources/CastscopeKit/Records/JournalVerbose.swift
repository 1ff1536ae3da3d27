/// journalctl `-o verbose`, as support engineers paste it: an entry is a header line, its time
/// and cursor (`Thu 2026-03-12 09:15:04.673211 UTC [s=…;i=…;b=…;m=…;t=…;x=…]`), then its
/// fields one per line, indented by four spaces (`    MESSAGE=…`), the further lines of a
/// multi-line value indented past its `=`; no blank line between entries. The fields read are
/// the format's (the `journal-export` mapping); the time is a field's when the format reads one
/// (`_SOURCE_REALTIME_TIMESTAMP`), else the cursor's `t=` (µs since the epoch, exact), else the
/// header's own (a pager cuts lines at the screen's width, and the cursor with them). A binary
/// value journalctl shows as `[17B blob data]` is kept as that text, as `-o short` shows it.
enum JournalVerbose {
    /// The entry time of a header line, or nil when the line is not one.
    /// (Also a header a pager or a document cut before its cursor: `Thu 2019-02-21
    /// 18:31:14.509128 +07... `, or with nothing after its zone.)
    static func header(_ line: UnsafeRawBufferPointer) -> ParsedTime? {
        var t = ParsedTime()
        guard let first = line.first, first >= 0x41 || isDigit(first) else { return nil }
        // (`[s=`: the cursor, or what is left of it cut or redacted: `[`, `[s`, `[…]`, `[...]`;
        // `2022-02-10 14:04:47 INF [RTMP] …` is a logger's line, its level no zone)
        if let end = TimeScan.full(line, 0, into: &t), end + 2 <= line.count, line[end] == 0x20, line[end + 1] == UInt8(ascii: "["),
            Self.cursorLike(UnsafeRawBufferPointer(rebasing: line[(end + 2)...]))
        {
            if let micros = cursorTime(UnsafeRawBufferPointer(rebasing: line[(end + 2)...])) { return .epoch(micros: micros) }
            return t
        }
        // Cut: the line ends after the zone, bar spaces and an ellipsis.
        var e = line.count
        while e > 0, line[e - 1] == 0x20 { e -= 1 }
        if e >= 3, line[e - 1] == 0x2E, line[e - 2] == 0x2E, line[e - 3] == 0x2E {
            e -= 3
        } else if e >= 3, line[e - 3] == 0xE2, line[e - 2] == 0x80, line[e - 1] == 0xA6 {
            e -= 3
        }
        t = ParsedTime()
        let cut = UnsafeRawBufferPointer(rebasing: line[..<e])
        guard e > 20, TimeScan.full(cut, 0, into: &t) == e, t.hasDate, t.hasYear else { return nil }
        return t
    }

    /// What follows a header's `[`: its cursor (`s=…`), or what a pager or a redaction left of it.
    static func cursorLike(_ rest: UnsafeRawBufferPointer) -> Bool {
        var e = rest.count
        while e > 0, rest[e - 1] == 0x20 || rest[e - 1] == 0x0D { e -= 1 }
        let r = UnsafeRawBufferPointer(rebasing: rest[..<e])
        // (a bare `[` is no cursor: a logger's `… INFO [` opens a JSON list)
        if r.elementsEqual("s".utf8) || r.starts(with: "s=".utf8) || r.starts(with: "s…".utf8) || r.starts(with: "s...".utf8) { return true }
        return r.elementsEqual("…]".utf8) || r.elementsEqual("...]".utf8) || r.elementsEqual("…".utf8) || r.elementsEqual("...".utf8)
            || r.elementsEqual("REDACTED]".utf8)
    }

    /// The `t=` part of a cursor (hex µs), when it is there whole (followed by `;` or `]`).
    static func cursorTime(_ cursor: UnsafeRawBufferPointer) -> Int64? {
        var i = 0
        while i + 2 < cursor.count {
            if (i == 0 || cursor[i - 1] == UInt8(ascii: ";")) && cursor[i] == UInt8(ascii: "t") && cursor[i + 1] == UInt8(ascii: "=") {
                var j = i + 2
                var v: UInt64 = 0
                while j < cursor.count, j - i < 18, let d = hexValue(cursor[j]) {
                    v = v << 4 | UInt64(d)
                    j += 1
                }
                guard j > i + 2, j < cursor.count, cursor[j] == UInt8(ascii: ";") || cursor[j] == UInt8(ascii: "]"),
                    v <= UInt64(ParsedTime.epochRange.upperBound)
                else { return nil }
                return Int64(v)
            }
            i += 1
        }
        return nil
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        if isDigit(b) { return b &- 0x30 }
        let l = b | 0x20
        return l >= 0x61 && l <= 0x66 ? l - 0x61 + 10 : nil
    }

    /// A field line: four spaces (or a tab, as a page or an editor turned them), a field name
    /// (journald's are A–Z, 0–9 and `_`), `=`. Returns where the name starts and the index of the `=`.
    static func field(_ line: UnsafeRawBufferPointer) -> (name: Int, eq: Int)? {
        let name: Int
        if line.count > 5, line[0] == 0x20, line[1] == 0x20, line[2] == 0x20, line[3] == 0x20 {
            name = 4
        } else if line.count > 2, line[0] == 0x09 {
            name = 1
        } else {
            return nil
        }
        guard isNameByte(line[name]), !isDigit(line[name]) else { return nil }
        var k = name + 1
        while k < line.count, k < name + 64, isNameByte(line[k]) { k += 1 }
        return k < line.count && line[k] == UInt8(ascii: "=") ? (name, k) : nil
    }

    /// A byte of a journald field name (A–Z, 0–9, `_`): verbose's field lines, export's binary
    /// field names.
    @inline(__always) static func isNameByte(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || isDigit(b) || b == 0x5F
    }

    /// Detection: three for each header, one for each field line once a header was seen.
    static func score(_ lines: [UnsafeRawBufferPointer]) -> Int {
        var headers = 0
        var fields = 0
        for line in lines {
            if header(line) != nil { headers += 1 } else if headers > 0, field(line) != nil { fields += 1 }
        }
        return headers * 3 + fields
    }
}

extension RecordReader {
    /// Reads `-o verbose` text (see `JournalVerbose`). Lines outside any entry (a shell prompt)
    /// and lines no entry explains are counted unparsed; the format's skip lines (`-- Boot …`)
    /// are skipped.
    func runVerbose(_ sink: (inout RawRecord) throws -> Void) throws {
        var fields: [(Int, [UInt8])] = []
        var filterValues: [(Int, String)] = []
        var entryLine = 0
        var headerTime: ParsedTime?
        var inEntry = false
        // The value the next more-indented lines continue (indices), and the indent they have.
        var lastField: Int?
        var lastFilter: Int?
        var valueIndent = 0
        let limit = lines.maxLineLength
        while var line = try lines.nextLine() {
            stats.lines += 1
            checkUTF8(line)
            // A paste's code span or fence around the entries (`CodeMarks`), as the detector reads them.
            if CodeMarks.marked(line) { line = CodeMarks.unmarked(line, spanOpen: &codeSpanOpen) }
            if let t = JournalVerbose.header(line) {
                if inEntry { try emitJournalEntry(&fields, &filterValues, line: entryLine, headerTime: headerTime, sink) }
                inEntry = true
                entryLine = lines.lineNumber
                headerTime = t
                lastField = nil
                lastFilter = nil
                valueIndent = 0
                continue
            }
            if inEntry, let (name, eq) = JournalVerbose.field(line) {
                let key = UnsafeRawBufferPointer(rebasing: line[name..<eq])
                let value = line[(eq + 1)...]
                lastField = nil
                lastFilter = nil
                if let i = lookup(key) {
                    fields.append((i, Array(value.prefix(limit))))
                    lastField = fields.count - 1
                }
                if !filterKeys.isEmpty, let f = filterKeys.firstIndex(where: { $0.elementsEqual(key) }) {
                    filterValues.append((f, String(decoding: value, as: UTF8.self)))
                    lastFilter = filterValues.count - 1
                }
                valueIndent = eq + 1
                continue
            }
            if inEntry, valueIndent > 0, line.count > 4, line[0] == 0x20 {
                // A further line of the last value: journalctl indents it to just past the `=`.
                var spaces = 0
                while spaces < line.count, spaces < valueIndent, line[spaces] == 0x20 { spaces += 1 }
                if spaces > 4 {
                    let rest = line[spaces...]
                    if let f = lastField, fields[f].1.count < limit {
                        fields[f].1.append(0x0A)
                        fields[f].1.append(contentsOf: rest.prefix(limit - fields[f].1.count))
                    }
                    if let f = lastFilter { filterValues[f].1 += "\n" + String(decoding: rest, as: UTF8.self) }
                    continue
                }
            }
            if isSkippable(line) { stats.skipped += 1; continue }
            unparsed()
        }
        if inEntry { try emitJournalEntry(&fields, &filterValues, line: entryLine, headerTime: headerTime, sink) }
    }
}

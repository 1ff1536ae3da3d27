/// The Markdown a log pasted into an issue or a chat carries on its own lines: a fence on a
/// line of its own (```` ``` ````, ```` ```log ````, `~~~`) is no line of the log, and a code
/// span or fence opened or closed on a log line itself (`` `Jan 29 10:52:15 Kpwn SpringBoard… ``
/// on the first line, `` …bundleID=<private>` `` on the last; ```` ```2024-05-02 10:00:01 … ````)
/// is no part of it. Read with them, the first line of such a paste was unparsed (its record
/// lost) and the last one's message ended in a backtick.
enum CodeMarks {
    static let tick = UInt8(ascii: "`")
    static let tilde = UInt8(ascii: "~")
    static let quote = UInt8(ascii: ">")

    /// A fence alone on its line, with at most an info word (`log`, `swift`, `objective-c`):
    /// three or more backticks or tildes after up to three spaces. A log line after a fence
    /// has a space in it; an info word has none.
    static func isFence(_ line: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        while i < line.count, i < 3, line[i] == 0x20 { i += 1 }
        guard i < line.count, line[i] == tick || line[i] == tilde else { return false }
        let mark = line[i]
        var run = 0
        while i < line.count, line[i] == mark { i += 1; run += 1 }
        guard run >= 3 else { return false }
        var end = line.count
        while end > i, line[end - 1] == 0x20 || line[end - 1] == 0x09 { end -= 1 }
        guard end - i <= 32 else { return false }
        for k in i..<end where line[k] == 0x20 || line[k] == 0x09 || line[k] == tick { return false }
        return true
    }

    /// `line` without a code span's or fence's backticks at its start (one to four, followed
    /// by the text itself; a fence alone on its line stays as it is) and at its end (a fence's
    /// three or more; a single one when it closes a span: one this line opened, or one an
    /// earlier line opened, `spanOpen`, with no other backtick between). A lone backtick at a
    /// message's end is otherwise the message's (`quote char is \``). Callers look at the first
    /// and last bytes first: most lines have neither.
    static func unmarked(_ line: UnsafeRawBufferPointer, spanOpen: inout Bool, first: Bool = false) -> UnsafeRawBufferPointer {
        // A quote's `>` on the first log line's start (`>2017-02-08 16:31:37.802 App[2370:742930]
        // …`: Markdown quotes the lines after it lazily, so only the first carries it). Not on
        // later lines: `>5 retries` is a message's.
        if line.first == quote {
            guard first else { return line }
            var k = 1
            if k < line.count, line[k] == 0x20 { k += 1 }
            return k < line.count && isDigit(line[k]) ? UnsafeRawBufferPointer(rebasing: line[k...]) : line
        }
        // (a fence alone stays one, for the reader to pass over)
        if isFence(line) { return line }
        var start = 0
        var end = line.count
        while start < end, start < 4, line[start] == tick { start += 1 }
        if start > 0, start == end || line[start] == 0x20 || line[start] == 0x09 || line[start] == tick { start = 0 }
        var run = 0
        while end - run > start, line[end - run - 1] == tick { run += 1 }
        let others = run > 0 && line[start..<(end - run)].contains(tick)
        if run >= 3 {
            end -= run
            spanOpen = false
        } else if run == 1 && !others && (start > 0 || spanOpen) {
            end -= 1
            spanOpen = false
        } else if start == 1 && run == 0 && !line[start...].contains(tick) {
            // A span opened here and closed on a later line (yalu102#197's paste).
            spanOpen = true
        }
        while end > start, start > 0 || run > 0, line[end - 1] == 0x20 { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: line[start..<end])
    }

    /// Whether `unmarked` may change `line` (its first or last byte a backtick, its first a `>`).
    @inline(__always) static func marked(_ line: UnsafeRawBufferPointer) -> Bool {
        guard let first = line.first else { return false }
        return first == tick || first == quote || line[line.count - 1] == tick
    }
}

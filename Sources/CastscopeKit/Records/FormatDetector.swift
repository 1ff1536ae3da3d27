/// Picks the format of a file from its first lines: every format scores the lines it
/// recognizes (header lines count more), the highest score wins, `priority` breaks ties,
/// and a file nothing recognizes is read as message-only text (`plain`).
public struct FormatDetector {
    public let formats: [LogFormat]
    public var maxLines = 200
    /// The format the last file detected in full took, scored first next time: the formats
    /// that cannot beat it then stop at their first lines (`score`'s `mustReach`). A folder of
    /// 10,000 small logs spent 45 % of its run scoring every format over every file's lines.
    /// Which format wins does not depend on it (`better`).
    private let hint = FormatHint()

    public init(formats: [LogFormat]) { self.formats = formats }

    public func detect(head: UnsafeRawBufferPointer) -> (format: LogFormat, score: Int)? {
        // An empty file is plain text, as scoring every format on no lines found (that scoring
        // was a third of the ~0.3 ms each empty file of a folder cost).
        if head.isEmpty { return formats.first(where: { $0.kind == .plain }).map { ($0, 0) } }
        let lines = self.lines(head)
        // The first lines decide when one format clearly wins there (every start of a
        // program pays for detection); otherwise all of them are scored.
        let first = Array(lines.prefix(Self.quickLines))
        if lines.count > first.count, let quick = best(first), quick.score * 5 >= first.count * 4,
            quick.runnerUp * 2 < quick.score
        {
            return (quick.format, quick.score)
        }
        if let all = best(lines, runnerUp: false), !Self.fewLines(all.format, all.score, lines) { return (all.format, all.score) }
        if let taken = fallback(lines) { return taken }
        return formats.first(where: { $0.kind == .plain }).map { ($0, 0) }
    }

    /// `format` reads too few of `lines` to be the file's: fewer than one in five of those that
    /// are not indented, where each of the others would be an unparsed line (a format whose
    /// other lines are records or continue one loses nothing). A container's output mixing
    /// three programs (nextcloud/all-in-one#797: coturn, a Go log, Janus) had two lines another
    /// layout would read, and 20 of its 27 lines were unparsed; as plain text every line is a
    /// record, and such a format's own lines are still read as it (a segment of the file).
    static func fewLines(_ format: LogFormat, _ score: Int, _ lines: [UnsafeRawBufferPointer]) -> Bool {
        guard format.kind == .lines, format.continuation == .indented || format.continuation == .tab || format.continuation == .none,
            format.headers.isEmpty || score < 3
        else { return false }
        let skip = format.skip.map { Array($0.utf8) }
        let unindented = lines.reduce(0) { n, line in
            guard let f = line.first, f != 0x20, f != 0x09, !CodeMarks.isFence(line) else { return n }
            // (journalctl's and systemctl's own lines around the entries, `-x`'s catalog text,
            // the format's skipped lines: no one's records)
            if JournalTextHeader.isAside(line, beforeRecords: true) || skip.contains(where: { line.starts(with: $0) }) { return n }
            // (a Java stack trace's throwable and `Caused by:` continue a record of such a format)
            if format.javaStacks, RecordReader.isJavaThrowable(line) { return n }
            return n + 1
        }
        return score * 5 < unindented
    }

    /// A format that reads only a time and a message (`timestamped`: docker logs -t, Go's
    /// `log`, nginx's error log), where no other format reads the lines and four in five of
    /// those not indented (a stack trace's frames continue a record) begin with its time.
    private func fallback(_ lines: [UnsafeRawBufferPointer]) -> (format: LogFormat, score: Int)? {
        let records = lines.filter { line in
            guard let f = line.first else { return false }
            // (a Markdown fence around the paste is no record)
            return f != 0x20 && f != 0x09 && !CodeMarks.isFence(line)
        }
        guard !records.isEmpty else { return nil }
        // A ticket's sentences around a short block ("Here are the error logs from Nginx:",
        // "How can I solve this issue?": kaltura#168) begin with a letter, have a space and no
        // digit in their first 20 bytes: not counted against the four in five, as long as the
        // timed lines are half of all (a dump's `}` between a Go log's lines still counts).
        // (and a Markdown list item's words after its marker, `1. SRS的日志如下(Log):`, an
        // issue template's: two of them above four SRS lines made the file plain, times lost)
        let sentences = records.reduce(0) { n, line in
            let text = UnsafeRawBufferPointer(rebasing: line[Self.listMarker(line)...])
            guard let f = text.first, isLetter(f), line.contains(0x20), !text.prefix(20).contains(where: isDigit) else { return n }
            return n + 1
        }
        for i in formats.indices where formats[i].fallback {
            let s = score(formats[i], records)
            if s > 0, s * 5 >= (records.count - sentences) * 4, s * 2 >= records.count { return (formats[i], s) }
        }
        return nil
    }

    /// The length of a Markdown list item's marker at `line`'s start (`1. `, `12) `, `- `,
    /// `* `), 0 for none.
    static func listMarker(_ line: UnsafeRawBufferPointer) -> Int {
        var k = 0
        while k < line.count, k < 3, line[k] &- 0x30 < 10 { k += 1 }
        if k > 0 {
            return k + 1 < line.count && (line[k] == 0x2E || line[k] == 0x29) && line[k + 1] == 0x20 ? k + 2 : 0
        }
        return line.count > 2 && (line[0] == 0x2D || line[0] == 0x2A) && line[1] == 0x20 ? 2 : 0
    }

    /// How well the best format recognizes `head`'s lines (0: none does): a paste's common
    /// lead comes off a file's lines only when they score higher without it.
    public func bestScore(head: UnsafeRawBufferPointer) -> Int {
        let lines = self.lines(head)
        // (a fallback's too: a ticket's sentence above an indented docker log comes off only
        // when the lines then read better, and they read only as `timestamped`)
        return best(lines, runnerUp: false)?.score ?? fallback(lines)?.score ?? 0
    }

    /// The same for a head in an array (`BundleWalker.recognition`).
    public func bestScore(of head: [UInt8]) -> Int { head.withUnsafeBytes { bestScore(head: $0) } }

    /// How many of `head`'s lines the best format reads with a time (`BundleWalker.timedRecognition`):
    /// a tool's time before every line comes off only when the lines keep times without it
    /// (Xcode's lines read as well without their own time by its untimed layout).
    public func bestTimedScore(of head: [UInt8]) -> Int {
        head.withUnsafeBytes { raw in
            let lines = self.lines(raw)
            return formats.indices.reduce(0) { max($0, score(formats[$1], lines, timedOnly: true)) }
        }
    }

    /// The first `maxLines` lines of `head` (without their CR).
    private func lines(_ head: UnsafeRawBufferPointer) -> [UnsafeRawBufferPointer] {
        var lines: [UnsafeRawBufferPointer] = []
        var start = 0
        for i in 0..<head.count where head[i] == 0x0A {
            var e = i
            if e > start && head[e - 1] == 0x0D { e -= 1 }
            lines.append(UnsafeRawBufferPointer(rebasing: head[start..<e]))
            start = i + 1
            if lines.count >= maxLines { break }
        }
        if lines.count < maxLines && start < head.count {
            lines.append(UnsafeRawBufferPointer(rebasing: head[start...]))
        }
        // As the reader reads them: a paste's code span or fence off (`CodeMarks`).
        var spanOpen = false
        let firstLine = lines.firstIndex { !$0.isEmpty }
        for k in lines.indices where CodeMarks.marked(lines[k]) { lines[k] = CodeMarks.unmarked(lines[k], spanOpen: &spanOpen, first: k == firstLine) }
        return lines
    }

    /// Lines scored first (see `detect`).
    static let quickLines = 40

    /// The best-scoring format (ties to `priority`) and the best score of any other format.
    private func best(_ lines: [UnsafeRawBufferPointer], runnerUp needed: Bool = true) -> (format: LogFormat, score: Int, runnerUp: Int)? {
        guard needed else { return bestAlone(lines) }
        // (by index: a copy of each format, all its fields retained, per file was a tenth of
        // detecting a small file's format)
        var best: (index: Int, score: Int)?
        var runnerUp = 0
        for i in formats.indices where !formats[i].fallback {
            let s = score(formats[i], lines)
            guard s > 0 else { continue }
            if let b = best, !better(i, s, than: b) {
                runnerUp = max(runnerUp, s)
                continue
            }
            runnerUp = max(runnerUp, best?.score ?? 0)
            best = (i, s)
        }
        return best.map { (formats[$0.index], $0.score, runnerUp) }
    }

    /// Format `i` scoring `s` beats `b`: a higher score, then a higher priority, then the
    /// earlier format.
    private func better(_ i: Int, _ s: Int, than b: (index: Int, score: Int)) -> Bool {
        if s != b.score { return s > b.score }
        if formats[i].priority != formats[b.index].priority { return formats[i].priority > formats[b.index].priority }
        return i < b.index
    }

    /// What `best` chooses, the runner-up's score not needed: the highest score, then the higher
    /// priority, then the earlier format (`better`), whatever order they are scored in; the
    /// last winner first, and a format that can no longer beat the best so far stops scoring.
    private func bestAlone(_ lines: [UnsafeRawBufferPointer]) -> (format: LogFormat, score: Int, runnerUp: Int)? {
        var best: (index: Int, score: Int)?
        func consider(_ i: Int) {
            guard !formats[i].fallback else { return }
            // (the least score that would beat the best so far)
            let need = best.map { b in better(i, b.score, than: b) ? b.score : b.score + 1 }
            let s = score(formats[i], lines, mustReach: need)
            guard s > 0 else { return }
            if let b = best, !better(i, s, than: b) { return }
            best = (i, s)
        }
        let first = hint.index
        if first >= 0 && first < formats.count { consider(first) }
        for i in formats.indices where i != first { consider(i) }
        if let b = best { hint.index = b.index }
        return best.map { (formats[$0.index], $0.score, 0) }
    }

    /// How many of `lines` `format` recognizes (header lines count 3). With `mustReach`, a
    /// format of lines stops once even every line left could not reach it (and returns less).
    func score(_ format: LogFormat, _ lines: [UnsafeRawBufferPointer], mustReach: Int? = nil, timedOnly: Bool = false) -> Int {
        var total = 0
        switch format.kind {
        case .plain:
            return 0
        case .lines:
            // (per file, every format over up to 200 lines: the patterns and their cheap
            // record-start tests taken out once, not looked up through the format per line)
            let patterns = format.patterns, probes = format.patternProbes
            var matches = patterns.map { PatternMatch(slots: $0.names.count) }
            let headers = format.headers.map { Array($0.utf8) }
            let most = headers.isEmpty ? 1 : 3
            // Other programs' lines the format reads among its own (`otherRecords`: Prosody's
            // among docker-jitsi-meet's Java services) count where its own lines are: a file of
            // Prosody's alone is Prosody's, one of both the Java services' (their lines set aside
            // as Prosody's segment, `show` lost them).
            let others = timedOnly ? [] : format.otherPatterns
            var otherMatches = others.map { PatternMatch(slots: $0.names.count) }
            var otherHits = 0
            for (n, line) in lines.enumerated() {
                if let mustReach, total + otherHits + (lines.count - n) * most < mustReach { return total + (total > 0 ? otherHits : 0) }
                if !headers.isEmpty, headers.contains(where: { h in line.starts(with: h) }) { total += 3; continue }
                var hit = false
                for k in patterns.indices where probes[k].test(line) != false && patterns[k].match(line, into: &matches[k]) {
                    // (with `timedOnly`, a line read without a time does not count)
                    hit = !timedOnly || matches[k].hasTime
                    break
                }
                if hit || !timedOnly && format.collapsedRecordStart(line, &matches) != nil {
                    total += 1
                } else if others.indices.contains(where: { others[$0].match(line, into: &otherMatches[$0]) }) {
                    otherHits += 1
                }
            }
            if total > 0 { total += otherHits }
        case .jsonLines:
            let keys = format.detectKeys.map { Array("\"\($0)\":".utf8) }
            for line in lines {
                guard let brace = line.firstIndex(of: UInt8(ascii: "{")), brace < 8 else { continue }
                // An array minified onto one line (`jq -c`) is a JSON array, not an object a line.
                if line[..<brace].contains(UInt8(ascii: "[")) { continue }
                if keys.contains(where: { contains(line, $0) }) { total += 1 }
            }
        case .jsonArray:
            // `log show`'s `"key" : value`, and the same array written again by jq or a
            // script (`"key": value`), a member on a line of its own (not an object per line).
            let keys = format.detectKeys.flatMap { [Array("\"\($0)\" : ".utf8), Array("\"\($0)\": ".utf8)] }
            let minified = format.detectKeys.map { Array("\"\($0)\":".utf8) }
            for line in lines {
                if line.elementsEqual("[{".utf8) { total += 3; continue }
                // The whole array minified onto one line (`jq -c`, a script's `json.dumps`).
                let i = RecordReader.indentEnd(line)
                if line[i...].starts(with: "[{".utf8), minified.contains(where: { contains(line, $0) }) {
                    total += 3
                    continue
                }
                guard i < line.count, line[i] == UInt8(ascii: "\"") else { continue }
                if keys.contains(where: { line[i...].starts(with: $0) }) { total += 1 }
            }
        case .journalExport:
            for line in lines where line.starts(with: "__CURSOR=".utf8) || line.starts(with: "__REALTIME_TIMESTAMP=".utf8) {
                total += 3
            }
        case .journalVerbose:
            total = JournalVerbose.score(lines)
        }
        return total
    }
}

extension FormatDetector {
    /// Where a file's first 4 KB show it is binary, not a log: a NUL byte in a file no log
    /// format recognized, or NULs in more than one byte of 64 (a stray NUL among lines a format
    /// recognized is damage in a log, not a binary file). Nil for a log.
    public static func binaryAt(_ head: [UInt8], format: LogFormat) -> Int? {
        let window = head.prefix(4096)
        guard let first = window.firstIndex(of: 0) else { return nil }
        if format.kind == .plain { return first }
        // One block of NULs after whole lines (a page a crash left zeroed) is damage too.
        var runEnd = first
        while runEnd < window.endIndex, window[runEnd] == 0 { runEnd += 1 }
        let lines = window[..<first].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        let nuls = window.reduce(0) { $0 + ($1 == 0 ? 1 : 0) } - (lines >= 2 ? runEnd - first : 0)
        guard nuls * 64 > window.count else { return nil }
        // The NULs in a line or two among lines of the format's text (a UTF-16 line pasted into
        // a UTF-8 log, as Windows tools write one: every other line of the file was lost as
        // "binary"): damage of those lines, read as the rest are. A binary file's NULs are
        // spread over most of its "lines", and its header (a magic number, `Bud1`) is its first.
        guard let firstLF = window.firstIndex(of: 0x0A), firstLF < first else { return first }
        var clean = 0, dirty = 0, start = window.startIndex
        for k in window.indices where window[k] == 0x0A {
            if window[start..<k].contains(0) { dirty += 1 } else if k > start { clean += 1 }
            start = k + 1
        }
        return clean >= 4 && clean >= 4 * dirty ? nil : first
    }

    /// A note when a file falls back to `plain` although most of its first lines begin with
    /// a timestamp (a layout no format knows yet: its times are lost, which the reader must
    /// be told). nil otherwise.
    static func plainFallbackNote(head: UnsafeRawBufferPointer) -> String? {
        var lines = 0
        var timed = 0
        var afterWord = 0
        var start = 0
        func startsTimed(_ text: UnsafeRawBufferPointer) -> Bool {
            var line = text
            while let f = line.first, f == UInt8(ascii: "`") || f == 0x20 || f == UInt8(ascii: "[") { line = UnsafeRawBufferPointer(rebasing: line[1...]) }
            guard let base = line.baseAddress else { return false }
            // (a clock with its minutes: coturn's uptime counter, `33: session …`, is no time,
            // and the note sent the reader looking for a layout that would keep one)
            return ISODate.starts(base, line.count) || BSDDate.starts(base, line.count)
                || (Clock.starts(base, line.count) && isDigit(line[3]) && isDigit(line[4]) && line[5] == UInt8(ascii: ":"))
                || (line.count > 10 && line[0..<4].allSatisfy(isDigit) && !isDigit(line[4]) && isDigit(line[5]) && isDigit(line[6]))
                || dayMonthYear(line)
        }
        /// `30/Apr/2020:03:42:24` (the Common Log Format's: nginx-rtmp's access log, nginx#1515)
        /// and `23-Mar-2021 16:45:25` (PHP's error_log), day first, the month a word.
        func dayMonthYear(_ l: UnsafeRawBufferPointer) -> Bool {
            guard l.count > 11, isDigit(l[0]), isDigit(l[1]), l[2] == UInt8(ascii: "/") || l[2] == UInt8(ascii: "-"), l[6] == l[2] else { return false }
            let isLetter = { (b: UInt8) in (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
            return isLetter(l[3]) && isLetter(l[4]) && isLetter(l[5]) && l[7...10].allSatisfy(isDigit)
        }
        for i in 0..<head.count where head[i] == 0x0A {
            let line = UnsafeRawBufferPointer(rebasing: head[start..<i])
            start = i + 1
            guard let first = line.first else { continue }
            // The time after a short first word (docker compose's `relay_1  | `, `JVB `) counts too.
            var timedHere = startsTimed(line)
            if !timedHere, let word = line.prefix(40).firstIndex(of: 0x20) {
                var k = word
                while k < line.count, line[k] == 0x20 || line[k] == UInt8(ascii: "|") { k += 1 }
                if k < line.count { timedHere = startsTimed(UnsafeRawBufferPointer(rebasing: line[k...])) }
                if timedHere { afterWord += 1 }
            }
            // An untimed line that is indented or part of a JSON dump continues a record: not counted.
            if !timedHere, first == 0x20 || first == 0x09 || first == UInt8(ascii: "{") || first == UInt8(ascii: "}")
                || first == UInt8(ascii: "]") || first == UInt8(ascii: "\"")
            {
                continue
            }
            lines += 1
            if timedHere { timed += 1 }
            if lines >= 200 { break }
        }
        guard lines >= 2, timed * 2 > lines else { return nil }
        return "read as plain text (times lost) although \(timed) of the first \(lines) lines begin with a timestamp\(afterWord > 0 ? " (\(afterWord) after a first word, such as a container's name)" : ""): a layout castscope does not know yet (see `castscope parsers`; --input-format NAME, or --parsers DIR with your own format)"
    }
}

func contains(_ hay: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
    guard needle.count <= hay.count, let first = needle.first else { return needle.isEmpty }
    var i = 0
    let last = hay.count - needle.count
    while i <= last {
        if hay[i] == first {
            var k = 1
            while k < needle.count && hay[i + k] == needle[k] { k += 1 }
            if k == needle.count { return true }
        }
        i += 1
    }
    return false
}

/// The last format a detector chose in full (`FormatDetector.bestAlone`), shared by its copies
/// and threads (a hint: any value gives the same choice).
final class FormatHint: @unchecked Sendable {
    private let lock = NSLockLite()
    private var value = -1
    var index: Int {
        get { lock.locked { value } }
        set { lock.locked { value = newValue } }
    }
}

/// A log pasted with every line indented or quoted: four spaces or a tab (a code block on
/// Stack Overflow, a wiki, an issue's raw text), `> ` (an e-mail reply, a quote in a ticket),
/// `> > ` (a reply to one). No format begins its lines so, so none was detected: the file was
/// read as plain text with its times lost. This source takes the common prefix off each line
/// that has it (lines without it pass unchanged; a line that is only part of it, a quote's
/// empty `>`, becomes empty), so that the lines are read as the tool wrote them; line numbers
/// stay the file's. Streaming: the prefix is known from the file's first bytes.
public final class QuotedLinesSource: ByteSource {
    private let source: ByteSource
    private let prefix: [UInt8]
    private var input = [UInt8](repeating: 0, count: 64 << 10)
    private var out: [UInt8] = []
    private var outPos = 0
    /// Bytes of the prefix matched at the start of the current line (-1: past the prefix).
    private var matched = 0
    private var eof = false
    /// A read ended in a CR right after a line's (partial) prefix: whether the line is only
    /// that (CR LF) is known from the next read's first byte.
    private var heldCR = false

    public init(_ source: ByteSource, prefix: [UInt8]) {
        self.source = source
        self.prefix = prefix
    }

    public var consumedOffset: UInt64 { source.consumedOffset }

    @inline(__always) static func isLead(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == UInt8(ascii: ">") }

    /// The prefix every line of `head` carries, or nil: the first line that is not blank has a
    /// lead of spaces, tabs and `>` (a quote's `>` then its space), and at least four in five
    /// lines that are not blank share it. The prefix is the longest lead they all start with;
    /// deeper indentation (a message's continuation) stays.
    public static func detect(_ head: [UInt8]) -> [UInt8]? { detectPastLeadIn(head).prefix }

    /// `detect`, and whether it needed the lines before the block passed over: the walker then
    /// takes the prefix off only when the lines are recognized better without it, as a log's
    /// own tab-indented frames after an `Exception in thread …` line are not.
    public static func detectPastLeadIn(_ head: [UInt8]) -> (prefix: [UInt8]?, passedLeadIn: Bool) {
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        for i in head.indices where head[i] == 0x0A {
            lines.append(head[start..<i])
            start = i + 1
        }
        // The line the head ends in may be cut: counted when its lead is whole (a byte after
        // it): a log of long lines (ndjson, a 1 KB message) has few whole lines in a head.
        if start < head.count { lines.append(head[start...]) }
        func lead(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
            var end = line.startIndex
            while end < line.endIndex, isLead(line[end]) { end += 1 }
            return line[line.startIndex..<end]
        }
        var nonBlank = lines.map { $0.last == 0x0D ? $0.dropLast() : $0 }.filter { line in line.contains { !isLead($0) } }
        // A ticket's sentence above the block (`Logs:`, `ログ：`, `Here is what Console shows:`):
        // up to three lines with no lead and no digit in their first 20 bytes (no time: not a
        // record of the log) pass unchanged, and the prefix is the block's after them.
        var head = 0
        while head < min(3, nonBlank.count), lead(nonBlank[head]).isEmpty, !nonBlank[head].prefix(20).contains(where: isDigit) {
            head += 1
        }
        let passed = head > 0 && head < nonBlank.count && !lead(nonBlank[head]).isEmpty
        if passed { nonBlank.removeFirst(head) }
        guard nonBlank.count >= 2 else { return (nil, false) }
        var common = Array(lead(nonBlank[0]))
        guard !common.isEmpty else { return (nil, false) }
        var sharing = 0
        for line in nonBlank {
            let l = lead(line)
            guard !l.isEmpty else { continue }
            var n = 0
            while n < common.count, n < l.count, l[l.startIndex + n] == common[n] { n += 1 }
            guard n > 0 else { continue }
            if n < common.count { common.removeLast(common.count - n) }
            sharing += 1
        }
        guard sharing * 5 >= nonBlank.count * 4 else { return (nil, false) }
        // A quote's `>` keeps one space after it in the prefix at most; spaces and tabs alone
        // are an indentation of at least two (one space is a layout's own).
        if common.contains(UInt8(ascii: ">")) {
            while let last = common.last, last != UInt8(ascii: ">"), common.count >= 2, common[common.count - 2] != UInt8(ascii: ">") {
                common.removeLast()
            }
            return (common, passed)
        }
        return (common.count >= 2 || common == [0x09] ? common : nil, passed)
    }

    /// A tool's tag before every line (Appium's `info: [IOS_SYSLOG_ROW ] ` before each line of
    /// a device's syslog): the longest start of the first line that is not blank, ending in a
    /// space within its first 48 bytes, holding no digit (a time is the log's own), a mark
    /// (`:`, `[`, `|`: a month's name or a word alone is text) and at least four bytes, that
    /// four lines in five that are not blank share. Whether it comes
    /// off is the walker's to decide (`BundleWalker.quotePrefix`: only when the lines are then
    /// recognized better), so this is cheap and loose.
    public static func toolPrefix(_ head: [UInt8]) -> [UInt8]? {
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        for i in head.indices where head[i] == 0x0A {
            let line = head[start..<i]
            start = i + 1
            if line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) { lines.append(line) }
        }
        guard lines.count >= 2, let first = lines.first else { return nil }
        var best: ArraySlice<UInt8>?
        var k = first.startIndex
        let stop = min(first.endIndex, first.startIndex + 48)
        func isMark(_ b: UInt8) -> Bool { b > 0x20 && b < 0x7F && !isDigit(b) && !isLetter(b) }
        // Whether the word ending at `k` has a mark, and where it began.
        var wordStart = k
        while k < stop {
            let b = first[k]
            if isDigit(b) { break }
            if b == 0x20 {
                let word = first[wordStart..<k]
                wordStart = k + 1
                // (two spaces: no word between them)
                if word.isEmpty { k += 1; continue }
                // The tag ends with a marked word: a word without one may be inside it
                // (`[worker] app | `) but does not end it (`SYSLOG: Jun  8 20:55:52 …` with every
                // line in June: the month is the log's own).
                if !word.contains(where: isMark) {
                    k += 1
                    continue
                }
                if k - first.startIndex >= 3 {
                    let candidate = first[first.startIndex...k]
                    let sharing = lines.reduce(0) { $0 + ($1.starts(with: candidate) ? 1 : 0) }
                    guard sharing * 5 >= lines.count * 4 else { break }
                    best = candidate
                }
            }
            k += 1
        }
        return best.map { Array($0) }
    }

    /// `head` as this source hands it out.
    public static func stripped(_ head: [UInt8], prefix: [UInt8]) -> [UInt8] {
        drained(QuotedLinesSource(MemorySource(head), prefix: prefix))
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while outPos == out.count {
            out.removeAll(keepingCapacity: true)
            outPos = 0
            if eof { return 0 }
            let n = try input.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 {
                eof = true
                // A line that ended inside a prefix it only began: what was held comes out.
                if matched > 0 { out.append(contentsOf: prefix[0..<matched]) }
                if heldCR { out.append(0x0D) }
                heldCR = false
                matched = -1
                continue
            }
            strip(n)
        }
        return handOut(out, from: &outPos, into: buffer)
    }

    /// Copies `input[0..<n]` to `out` without the prefix at each line's start.
    private func strip(_ n: Int) {
        var i = 0
        if heldCR {
            // CR LF after nothing but (part of) the prefix: an empty line; else the CR is text.
            heldCR = false
            if input[0] != 0x0A { out.append(contentsOf: prefix[0..<matched]) }
            out.append(0x0D)
            matched = -1
        }
        while i < n {
            if matched >= 0 {
                let b = input[i]
                if matched < prefix.count, b == prefix[matched] {
                    matched += 1
                    i += 1
                    if matched == prefix.count { matched = -1 }
                    continue
                }
                // Not (all of) the prefix: a line that is only its start is an empty line;
                // any other keeps the bytes matched.
                if b == 0x0D && i + 1 == n {
                    heldCR = true
                    return
                }
                if b != 0x0A && !(b == 0x0D && i + 1 < n && input[i + 1] == 0x0A) { out.append(contentsOf: prefix[0..<matched]) }
                matched = -1
            }
            // The rest of the line, through its newline.
            if copyRestOfLine(input, from: &i, to: n, into: &out) { matched = 0 }
        }
    }
}

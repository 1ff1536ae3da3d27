#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A log whose every line another tool put its own time or line number before: GitHub
/// Actions' `2026-03-12T09:15:30.1001700Z `, `docker logs -t` and `kubectl logs --timestamps`,
/// a CI console's clock (`21:31:50 `, `[13:40:01] `), moreutils' `ts` (`Nov 30 13:40:01 `), a
/// log viewer's column (`2026-06-30 15:29:19.476 | `), `cat -n`'s gutter (`     1<TAB>`).
/// Read as they were, the capture times passed for the events' (a `log show` export behind
/// GitHub's times became a 7 ms session at 5,882 frames/s, its process lost), or the file was
/// plain text with every time lost. This source takes that lead off each line that has it
/// (lines without it pass unchanged: a stack trace's lines, as a tool printed them), so that
/// the log is read with its own times; line numbers stay the file's. Streaming: the lead's
/// shape is known from the file's first bytes.
public final class TimeLeadSource: RewritingSource {
    /// The shape of a lead: what it begins with, and how it ends.
    public struct Lead: Equatable, Sendable {
        public enum Kind: Sendable { case iso, clock, bsd, gutter, grep, pod }
        public var kind: Kind
        /// In brackets: `[13:40:01] `.
        public var bracketed = false
        /// Ends in ` | ` (a log viewer's column), not one space.
        public var bar = false
    }

    private let source: ByteSource
    private let lead: Lead
    private var input = [UInt8](repeating: 0, count: 64 << 10)
    /// The start of a line not yet long enough to judge (held to the next read).
    private var carry: [UInt8] = []
    var out: [UInt8] = []
    var outPos = 0
    /// Inside a line whose lead was already taken off (or that had none).
    private var midLine = false
    private(set) var eof = false
    /// The most bytes a lead takes (a line start shorter than this without its newline waits).
    static let window = 256

    public init(_ source: ByteSource, lead: Lead) {
        self.source = source
        self.lead = lead
    }

    public var consumedOffset: UInt64 { source.consumedOffset }

    /// The lead `line` begins with, of any shape, and its length.
    static func measure(_ p: UnsafeRawBufferPointer) -> (lead: Lead, length: Int)? {
        guard p.count >= 3 else { return nil }
        // `cat -n`, `nl`: spaces, the number, a TAB.
        var g = 0
        while g < p.count, p[g] == 0x20 { g += 1 }
        let digits = g
        while g < p.count, isDigit(p[g]) { g += 1 }
        if g > digits, g - digits <= 9, g < p.count, p[g] == 0x09 { return (Lead(kind: .gutter), g + 1) }
        let bracketed = p[0] == UInt8(ascii: "[")
        let at = bracketed ? 1 : 0
        var t = ParsedTime()
        var kind = Lead.Kind.iso
        var end: Int
        if let e = TimeScan.iso(p, at, into: &t) {
            end = e
        } else if let e = TimeScan.clock(p, at, into: &t) {
            (kind, end) = (.clock, e)
        } else if let e = TimeScan.bsd(p, at, into: &t) {
            (kind, end) = (.bsd, e)
        } else {
            return toolLead(p)
        }
        if bracketed {
            guard end < p.count, p[end] == UInt8(ascii: "]") else { return nil }
            end += 1
        }
        guard end < p.count, p[end] == 0x20 else { return nil }
        if end + 2 < p.count, p[end + 1] == UInt8(ascii: "|"), p[end + 2] == 0x20 || p[end + 2] == 0x09 {
            return (Lead(kind: kind, bracketed: bracketed, bar: true), end + 3)
        }
        return (Lead(kind: kind, bracketed: bracketed), end + 1)
    }

    /// A search's or a cluster tool's lead, no time in it: grep's `-n` line number
    /// (`1234:`, `1234-` before a context line), `-H`'s file name (`logs/device.log:`, a name
    /// with a `/` or a `.` in it, no space), both (`logs/device.log:1234:`), and `kubectl logs
    /// --prefix`'s `[pod/relay-7d9f/relay] `. (Each is another tool's only before a time of
    /// the log's own: `detectCounting`.)
    static func toolLead(_ p: UnsafeRawBufferPointer) -> (lead: Lead, length: Int)? {
        if p[0] == UInt8(ascii: "[") {
            var i = 1
            var slash = false
            while i < min(p.count, 254), p[i] != UInt8(ascii: "]"), p[i] != 0x20, p[i] != 0x09 {
                if p[i] == UInt8(ascii: "/") { slash = true }
                i += 1
            }
            guard slash, i + 1 < p.count, p[i] == UInt8(ascii: "]"), p[i + 1] == 0x20, p[1] != UInt8(ascii: "/") else { return nil }
            return (Lead(kind: .pod), i + 2)
        }
        // The line number, alone or after the file's name and its colon.
        func number(_ from: Int) -> Int? {
            var g = from
            while g < p.count, g - from < 10, isDigit(p[g]) { g += 1 }
            guard g > from, g < p.count, p[g] == UInt8(ascii: ":") || p[g] == UInt8(ascii: "-") else { return nil }
            return g + 1
        }
        if isDigit(p[0]) { return number(0).map { (Lead(kind: .grep), $0) } }
        var i = 0
        var named = false
        while i < min(p.count, 254), p[i] != UInt8(ascii: ":"), p[i] > 0x20 {
            if p[i] == UInt8(ascii: "/") || p[i] == UInt8(ascii: ".") { named = true }
            i += 1
        }
        guard named, i > 1, i < p.count, p[i] == UInt8(ascii: ":"), i + 1 < p.count, p[i + 1] != 0x20, p[i + 1] != UInt8(ascii: "/") else { return nil }
        // `-H` alone (grep's default over several files): what follows the name may be the
        // line's own time, whose first digits are no line number (`relay.log:2026-03-12 …`,
        // `device.log:09:15:30 …` lost every time); a number with a time after it is one.
        func timeAt(_ k: Int) -> Bool {
            var t = ParsedTime()
            return TimeScan.iso(p, k, into: &t) != nil || TimeScan.clock(p, k, into: &t) != nil || TimeScan.bsd(p, k, into: &t) != nil
        }
        if let n = number(i + 1), n < p.count, timeAt(n) { return (Lead(kind: .grep), n) }
        if timeAt(i + 1) { return (Lead(kind: .grep), i + 1) }
        return (Lead(kind: .grep), number(i + 1) ?? i + 1)
    }

    /// The length of `lead` at the start of `p`, or 0.
    static func length(_ p: UnsafeRawBufferPointer, _ lead: Lead) -> Int {
        guard let (found, n) = measure(p), found == lead else { return 0 }
        return n
    }

    /// Whether the rest of a line after its lead begins with a time of its own, at once or
    /// after a first word (`JVB 2016-03-28 21:31:50.687 …`).
    static func hasOwnTime(_ p: UnsafeRawBufferPointer) -> Bool {
        func timeAt(_ i: Int) -> Bool {
            var t = ParsedTime()
            return TimeScan.iso(p, i, into: &t) != nil || TimeScan.bsd(p, i, into: &t) != nil || TimeScan.clock(p, i, into: &t) != nil
        }
        if timeAt(0) { return true }
        // (a structured logger's JSON object with a time of its own: `kubectl logs --timestamps`
        // or `docker logs -t` of a service logging JSON lines, `json-logger`)
        if p.first == UInt8(ascii: "{"), MessageLead.jsonTime(p) != nil { return true }
        var i = 0
        while i < min(p.count, 24), p[i] != 0x20 { i += 1 }
        return i > 0 && i < min(p.count, 24) && timeAt(i + 1)
    }

    /// The lead most of `head`'s lines carry, when it is another tool's: four lines in five
    /// that are not blank begin with it (the first of them within the first three), and a line
    /// goes on with a time of its own after it. Whether it comes off is the walker's to decide
    /// (`BundleWalker.withoutTimeLead`: when a layout reads the lines about as well without it).
    public static func detect(_ head: [UInt8]) -> Lead? { detectCounting(head)?.lead }

    /// Whether a big file's lines are worth reading through this source (`BundleWalker
    /// .readsThroughOwnSource`: no ranges read in parallel then): a lead, and a quarter of the
    /// lines with it going on with a time of their own (an Xcode console whose one message
    /// begins with a clock is its own times' log).
    public static func likely(_ head: [UInt8]) -> Bool {
        guard let (_, ownTimes, leading) = detectCounting(head) else { return false }
        return ownTimes * 4 >= leading
    }

    /// The head's whole lines that are not blank (without their CR), for the detectors.
    static func nonBlankLines(_ raw: UnsafeRawBufferPointer) -> [UnsafeRawBufferPointer] {
        var lines: [UnsafeRawBufferPointer] = []
        var start = 0
        for i in 0..<raw.count where raw[i] == 0x0A {
            var end = i
            if end > start, raw[end - 1] == 0x0D { end -= 1 }
            let line = UnsafeRawBufferPointer(rebasing: raw[start..<end])
            if line.contains(where: { $0 != 0x20 && $0 != 0x09 }) { lines.append(line) }
            start = i + 1
        }
        return lines
    }

    /// `detect`, how many of the lines go on with a time of their own, and how many carry the lead.
    public static func detectCounting(_ head: [UInt8]) -> (lead: Lead, ownTimes: Int, leading: Int)? {
        head.withUnsafeBytes { raw -> (lead: Lead, ownTimes: Int, leading: Int)? in
            let lines = nonBlankLines(raw)
            guard lines.count >= 2, let lead = lines.prefix(3).lazy.compactMap({ measure($0)?.lead }).first else { return nil }
            var leading = 0
            var ownTimes = 0
            for line in lines {
                let n = length(line, lead)
                guard n > 0 else { continue }
                leading += 1
                if hasOwnTime(UnsafeRawBufferPointer(rebasing: line[n...])) { ownTimes += 1 }
            }
            return ownTimes > 0 && leading * 5 >= lines.count * 4 ? (lead, ownTimes, leading) : nil
        }
    }

    /// The lead of `kubectl logs --prefix` (`[pod/livekit-7c9f/livekit] `) or of `grep -n`
    /// (`1234:`, rising from line to line) before lines with no time of their own (a Go panic, a
    /// crash report, gdb's output): `detectCounting` wants a time behind a lead, and so a panic
    /// behind kubectl's prefix was "nothing recognized", a crash report behind grep's numbers
    /// lost its header (`Process:`, `Exception Type:`). Either shape is a tool's, not a log's:
    /// four lines in five that are not blank carry it (at least three), grep's numbers rise.
    public static func untimedLead(_ head: [UInt8]) -> Lead? {
        head.withUnsafeBytes { raw -> Lead? in
            let lines = nonBlankLines(raw)
            guard lines.count >= 3, let lead = lines.prefix(3).lazy.compactMap({ measure($0)?.lead }).first,
                lead.kind == .pod || lead.kind == .grep
            else { return nil }
            var leading = 0
            var spaced = 0
            var last = -1
            for line in lines {
                let length = length(line, lead)
                guard length > 0 else { continue }
                if lead.kind == .pod {
                    guard line.starts(with: podOpener) else { return nil }
                } else {
                    // (grep's own line numbers, not a `-H` file's name, nor a clock's hour)
                    var n = 0
                    var g = 0
                    while g < line.count, g < 10, isDigit(line[g]) { n = n * 10 + Int(line[g] - 0x30); g += 1 }
                    guard g > 0, n > last else { return nil }
                    last = n
                    // (grep writes the line right after its number; coturn's uptime, `7: session …`,
                    // has a space)
                    if length < line.count, line[length] == 0x20 { spaced += 1 }
                }
                leading += 1
            }
            return leading >= 3 && leading * 5 >= lines.count * 4 && spaced * 5 < leading ? lead : nil
        }
    }
    private static let podOpener = Array("[pod/".utf8)

    /// `head` as this source hands it out.
    public static func stripped(_ head: [UInt8], lead: Lead) -> [UInt8] {
        drained(TimeLeadSource(MemorySource(head), lead: lead))
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try readMade(into: buffer) }

    /// Takes the next read's bytes.
    func step() throws {
        let n = try input.withUnsafeMutableBytes { try source.read(into: $0) }
        if n == 0 {
            eof = true
            if !carry.isEmpty {
                let rest = carry
                carry = []
                strip(rest, rest.count, final: true)
            }
            return
        }
        if carry.isEmpty {
            strip(input, n, final: false)
        } else {
            let joined = carry + input[0..<n]
            carry = []
            strip(joined, joined.count, final: false)
        }
    }

    /// Copies `data[0..<n]` to `out` without the lead at each line's start; a line start too
    /// short to judge is carried to the next read (unless `final`).
    private func strip(_ data: [UInt8], _ n: Int, final: Bool) {
        var i = 0
        while i < n {
            if midLine {
                if copyRestOfLine(data, from: &i, to: n, into: &out) { midLine = false }
                continue
            }
            let look = min(n, i + Self.window)
            let newline = data[i..<look].firstIndex(of: 0x0A)
            if newline == nil, look == n, n - i < Self.window, !final {
                carry = Array(data[i..<n])
                return
            }
            let skip = data.withUnsafeBytes { Self.length(UnsafeRawBufferPointer(rebasing: $0[i..<(newline ?? look)]), lead) }
            i += skip
            midLine = true
        }
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A layout pattern, the small language `parsers/` files use to describe a line or a message:
///
/// - text stands for itself; `{{` and `}}` are literal braces;
/// - `{sp}` is a run of one or more spaces;
/// - `{name}` captures as little text as lets the rest match (the whole rest when last);
/// - `{name:type}` captures a typed value: `word` (no spaces), `int`, `hex` (`0x` optional),
///   `iso`, `isotz` (with a zone), `isolocal` (without), `bsd`, `clock`, `full` (weekday, date,
///   time and zone name), `epoch` (seconds since 1970), `mono` (`[ seconds since boot]`),
///   `bsdlocal` (`bsd` with a month name of any locale; timestamps, see `TimeScan`), `label`
///   (spaces allowed, no `[`, `]`, `:` or TAB), `ctime` (`Tue May 21 12:00:09 2024`), `isoany`
///   (`iso`, or `2022/02/10 14:04:47`), `code` (a word of one or two characters: `Df`, `E`),
///   `host` (a word with a letter or digit in it: a journal line's host name), `jul`
///   (java.util.logging's `Jun 02, 2020 1:48:49 PM`), `uptime` (a raw `dmesg` line's rest, its
///   `[  870.644237]` stamp kept: not a time), `utc` (JavaScript's `toUTCString()`),
///   `caps` (two or more capital letters: `ERROR`), `since` (Node `debug`'s `+12ms` at a line's end),
///   `level` (a level's name in any case: `info`, `WARN`, `error`), `mdy` (a US date, month
///   first, and a time: `7/5/2023 16:13:31`);
/// - `{?...}` is an optional group, tried first and skipped if the rest then fails.
///
/// Matching works on bytes and backtracks only over `{name}` fields, whose end positions are
/// limited to the places where the next literal starts.
public struct Pattern: Sendable {
    public enum FieldType: String, Sendable, CaseIterable {
        case any, word, int, hex, iso, isotz, isolocal, bsd, clock, full, epoch, mono, bsdlocal
        /// A name that may hold spaces but no `[`, `]`, `:` or TAB (journald's identifier as
        /// set: `container target1[3470]: …`; it cannot reach past the first `[pid]:`).
        case label
        /// C's `ctime`: `Tue May 21 12:00:09 2024` (Janus's log lines).
        case ctime
        /// `iso`, or its date written with slashes (`2022/02/10 14:04:47`: Go's `log`, nginx).
        case isoany
        /// A word of one or two characters: `log --style compact`'s type column (`Df`, `E`),
        /// which a process name's first word (Xcode's `Mapbox GL[20870:4777188]`) is not.
        case code
        /// A word with a letter or a digit in it: a journal line's host (`relay1`, `(none)`).
        /// Go's log with a level letter, `2022-06-07 12:27:17.183734 I | main.go:200: …`, read
        /// as `-o short-full` with the zone `I`, the host `|` and the unit `main.go:200`.
        case host
        /// java.util.logging's `SimpleFormatter` date and time (`Jun 02, 2020 1:48:49 PM`,
        /// `24.10.2012 20:33:26`: `TimeScan.jul`), no zone.
        case jul
        /// The rest of a line that begins with the kernel's `[  870.644237] ` stamp (seconds since
        /// boot: raw `dmesg`), captured with the stamp: no time (a wall clock is not invented).
        /// Last in a pattern only.
        case uptime
        /// JavaScript's `toUTCString()`, `Mon, 16 Oct 2017 01:34:45 GMT` (Node's `debug` before 3.0).
        case utc
        /// Two or more capital letters (A to Z), all of them: a level written in a name
        /// (mediasoup's `mediasoup:ERROR:Worker`; not `Channel[pid` of `mediasoup:Channel[pid:34]`).
        case caps
        /// The time since a namespace's line before that Node's `debug` module writes after a
        /// line on a terminal: `+`, digits, then `ms`, `s`, `m`, `h` or `d` (`+0ms`, `+3s`); last
        /// in a pattern only. (Not `+0700",` at a JSON member's end.)
        case since
        /// A log level's name, in any case (`debug`, `info`, `warn`, `WARNING`, `error`: the
        /// names `ZoneAbbreviations.levels` knows, and `WARNING`), all the letters there are: Prosody's
        /// level column (`Nov 29 20:27:05 mod_bosh\tinfo\tNew BOSH session, …`), which a word
        /// would also take from a syslog line's program or the first word of a sentence.
        case level
        /// A US date, month first, then a time (`7/5/2023 16:13:31`, `12/9/2025, 4:13:31 PM`):
        /// Node's `toLocaleDateString()` in `en-US` (Node-Media-Server's lines; `TimeScan.jul`).
        case mdy
    }

    enum Op: Sendable {
        case literal([UInt8])
        case spaces
        case field(slot: Int, type: FieldType)
        case optional(skipTo: Int, firstSlot: Int, lastSlot: Int)
        case end
    }

    public let source: String
    let ops: [Op]
    /// `ops` compiled to plain memory, which is what matching walks.
    let program: PatternProgram
    /// Capture names by slot.
    public let names: [String]
    /// The longest run of a literal of the pattern without a byte JSON writers escape (`"`,
    /// `\`, `/`, `<`, `>`, `&`), for `contains` prefiltering: it is found in a JSON export's
    /// raw bytes as well (Apple writes `/` as `\/`, Go `<` as `\u003c`).
    public let anchor: [UInt8]

    public struct CompileError: Error, CustomStringConvertible {
        public var description: String
    }

    public init(_ text: String) throws {
        source = text
        var ops: [Op] = []
        var names: [String] = []
        let bytes = Array(text.utf8)
        var i = 0
        var lit: [UInt8] = []
        var openGroups: [(opIndex: Int, firstSlot: Int)] = []
        func flush() {
            if !lit.isEmpty { ops.append(.literal(lit)); lit = [] }
        }
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "{") && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "{") {
                lit.append(b); i += 2; continue
            }
            if b == UInt8(ascii: "}") {
                if i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "}") { lit.append(b); i += 2; continue }
                guard let g = openGroups.popLast() else {
                    throw CompileError(description: "unbalanced '}' at \(i) in pattern \"\(text)\"")
                }
                flush()
                ops[g.opIndex] = .optional(skipTo: ops.count, firstSlot: g.firstSlot, lastSlot: names.count)
                i += 1
                continue
            }
            if b == UInt8(ascii: "{") {
                flush()
                if i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "?") {
                    openGroups.append((ops.count, names.count))
                    ops.append(.end)  // placeholder, patched at the closing brace
                    i += 2
                    continue
                }
                guard let close = bytes[i...].firstIndex(of: UInt8(ascii: "}")) else {
                    throw CompileError(description: "unclosed '{' at \(i) in pattern \"\(text)\"")
                }
                let spec = String(decoding: bytes[(i + 1)..<close], as: UTF8.self)
                i = close + 1
                if spec == "sp" { ops.append(.spaces); continue }
                // (`{:int}` is a field without a name, not one named `int`)
                let parts = spec.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                guard let name = parts.first, !name.isEmpty else {
                    throw CompileError(description: "empty field name in pattern \"\(text)\"")
                }
                let type: FieldType
                if parts.count == 2 {
                    guard let t = FieldType(rawValue: parts[1]) else {
                        throw CompileError(description: "unknown field type '\(parts[1])' in pattern \"\(text)\"")
                    }
                    type = t
                } else {
                    type = .any
                }
                ops.append(.field(slot: names.count, type: type))
                names.append(name)
                continue
            }
            lit.append(b)
            i += 1
        }
        flush()
        guard openGroups.isEmpty else { throw CompileError(description: "unclosed '{?' in pattern \"\(text)\"") }
        ops.append(.end)
        self.ops = ops
        self.names = names
        program = PatternProgram(ops)
        var best: ArraySlice<UInt8> = []
        for op in ops {
            guard case .literal(let l) = op else { continue }
            for run in l.split(whereSeparator: { Pattern.jsonEscaped.contains($0) }) where run.count > best.count { best = run }
        }
        anchor = Array(best)
    }

    public func slot(_ name: String) -> Int? { names.firstIndex(of: name) }

    /// Bytes a JSON writer may write as an escape (see `anchor`).
    static let jsonEscaped: Set<UInt8> = Set("\"\\/<>&".utf8)
}

/// Reusable match state: capture ranges by slot, and the timestamp if the pattern has one.
public struct PatternMatch {
    public var starts: [Int]
    public var ends: [Int]
    public var time = ParsedTime()
    public var hasTime = false
    public var end = 0

    public init(slots: Int) {
        starts = Array(repeating: -1, count: slots)
        ends = Array(repeating: -1, count: slots)
    }

    public func range(_ slot: Int) -> Range<Int>? {
        starts[slot] >= 0 ? starts[slot]..<ends[slot] : nil
    }
}

extension Pattern {
    static let maxFieldLength = 1024

    /// Matches at `start` (anchored). On success `m` holds the captures.
    public func match(_ p: UnsafeRawBufferPointer, from start: Int = 0, into m: inout PatternMatch) -> Bool {
        program.match(p, from: start, into: &m)
    }

    /// Finds the pattern anywhere in `p` (first match). Cheap when the anchor literal is absent.
    public func search(_ p: UnsafeRawBufferPointer, into m: inout PatternMatch) -> Bool {
        guard p.count > 0 else { return match(p, into: &m) }
        if anchor.isEmpty { return match(p, into: &m) }
        // The pattern can only start where its first literal occurs, or anywhere when it
        // starts with a field; in both cases the anchor must occur somewhere.
        guard findBytes(p, anchor, from: 0) != nil else { return false }
        // (the tries of every start share one bound, which grows with the line: linear work
        // is never cut, a line of thousands of starts that backtrack at each is)
        var tries = -8 * p.count
        if case .literal(let first) = ops[0] {
            var from = 0
            while from + first.count <= p.count, tries <= PatternProgram.maxTries {
                guard let at = findBytes(p, first, from: from) else { return false }
                if program.match(p, from: at, into: &m, tries: &tries) { return true }
                from = at + 1
            }
            return false
        }
        for at in 0..<p.count where tries <= PatternProgram.maxTries {
            if program.match(p, from: at, into: &m, tries: &tries) { return true }
        }
        return false
    }
}

/// A pattern's ops as plain memory: steps with their literals in one pool, so a match walks
/// pointers without copying (and reference counting) enum payloads at every step.
final class PatternProgram: @unchecked Sendable {
    struct Step {
        /// 0 end, 1 literal, 2 spaces, 3 field, 4 optional group.
        var kind: UInt8 = 0
        /// For fields: the type's index in `FieldType.allCases` (0 any, 1 word, 2 int, 3 hex,
        /// 4 iso, 5 isotz, 6 isolocal, 7 bsd, 8 clock, 9 full, 10 epoch, 11 mono, 12 bsdlocal,
        /// 13 label, 14 ctime, 15 isoany, 16 code, 17 host, 18 jul, 19 uptime, 20 utc, 21 caps, 22 since, 23 level, 24 mdy).
        var type: UInt8 = 0
        /// For `any`/`word` fields: the first byte the next step needs (-1: none), or -2 when
        /// the field is last.
        var next: Int16 = -1
        /// Before an optional group: `next` is the group's first byte, and this the first byte
        /// of what follows the group (both known, or `next` is -1); -1 otherwise.
        var next2: Int16 = -1
        var slot: Int32 = 0
        /// Literal: pool offset and length. Optional group: the step after it, and its slots.
        var a: Int32 = 0
        var b: Int32 = 0
        var c: Int32 = 0
    }

    struct State {
        var time = ParsedTime()
        var hasTime = false
        var end = 0
        /// Candidate ends tried (each a nested run): bounded, so that no line can make a
        /// pattern backtrack for long (`[RPScreenRecorder {method}]{gap} failed{detail}` on a
        /// line of thousands of `]` and ` failed` took a second a megabyte; a user's pattern of
        /// eight `{name}` fields, minutes a line). Past `maxTries`, no match.
        var tries = 0
    }

    static let maxTries = 20_000

    let steps: UnsafeMutablePointer<Step>
    let pool: UnsafeMutablePointer<UInt8>

    init(_ ops: [Pattern.Op]) {
        var pool: [UInt8] = []
        var steps: [Step] = []
        for (k, op) in ops.enumerated() {
            var step = Step()
            switch op {
            case .end: step.kind = 0
            case .literal(let l):
                step.kind = 1
                step.a = Int32(pool.count)
                step.b = Int32(l.count)
                pool.append(contentsOf: l)
            case .spaces: step.kind = 2
            case .field(let slot, let type):
                step.kind = 3
                step.slot = Int32(slot)
                step.type = UInt8(Pattern.FieldType.allCases.firstIndex(of: type)!)
                /// The byte an op needs first, when it needs a given one.
                func firstByte(_ op: Pattern.Op) -> UInt8? {
                    switch op {
                    case .literal(let l): return l.first
                    case .spaces: return 0x20
                    default: return nil
                    }
                }
                switch ops[k + 1] {
                case .end: step.next = -2
                case .literal(let l): step.next = Int16(l[0])
                case .spaces: step.next = 0x20
                case .optional(let skipTo, _, _):
                    // (`{ident:word}{?[{pid:int}]}: `: the word ends before `[` or `:`)
                    if let inGroup = firstByte(ops[k + 2]), let after = firstByte(ops[skipTo]) {
                        step.next = Int16(inGroup)
                        step.next2 = Int16(after)
                    }
                default: step.next = -1
                }
            case .optional(let skipTo, let firstSlot, let lastSlot):
                step.kind = 4
                step.a = Int32(skipTo)
                step.b = Int32(firstSlot)
                step.c = Int32(lastSlot)
            }
            steps.append(step)
        }
        self.steps = .allocate(capacity: steps.count)
        self.steps.initialize(from: steps, count: steps.count)
        self.pool = .allocate(capacity: max(1, pool.count))
        self.pool.initialize(from: pool, count: pool.count)
    }

    deinit {
        steps.deallocate()
        pool.deallocate()
    }

    /// A `host` field's candidate `from..<to` has a letter or a digit (or a non-ASCII byte).
    static func named(_ base: UnsafeRawPointer, _ from: Int, _ to: Int) -> Bool {
        var k = from
        while k < to {
            let b = base.load(fromByteOffset: k, as: UInt8.self)
            if isDigit(b) || isLetter(b) || b >= 0x80 { return true }
            k += 1
        }
        return false
    }

    /// `from..<to` is a level's name in any case (`ZoneAbbreviations.levels`, or `WARNING`).
    static func isLevel(_ base: UnsafeRawPointer, _ from: Int, _ to: Int) -> Bool {
        let upper = (from..<to).map { base.load(fromByteOffset: $0, as: UInt8.self) & 0xDF }
        return ZoneAbbreviations.levels.contains(upper) || upper == Self.warning
    }
    static let warning = Array("WARNING".utf8)

    /// The high bit of each byte of `w` that equals `b` (exact for the lowest such byte; bytes
    /// above it may be marked falsely, which only the lowest is used for).
    @inline(__always) static func anyByte(_ w: UInt64, _ b: UInt8) -> UInt64 {
        let x = w ^ (0x0101_0101_0101_0101 &* UInt64(b))
        return (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
    }

    /// A byte a `label` field cannot hold.
    @inline(__always) static func endsLabel(_ b: UInt8) -> Bool {
        b == UInt8(ascii: "[") || b == UInt8(ascii: "]") || b == UInt8(ascii: ":") || b == 0x09
    }

    func run(_ pc0: Int, _ pos0: Int, _ p: UnsafeRawBufferPointer, _ starts: UnsafeMutablePointer<Int>?,
             _ ends: UnsafeMutablePointer<Int>?, _ st: inout State) -> Bool
    {
        var pc = pc0
        var pos = pos0
        let n = p.count
        guard let base = p.baseAddress else {
            // Empty input: only a pattern that needs nothing matches.
            return steps[pc].kind == 0 ? { st.end = 0; return true }() : false
        }
        @inline(__always) func byte(_ i: Int) -> UInt8 { base.load(fromByteOffset: i, as: UInt8.self) }
        while true {
            let step = steps[pc]
            switch step.kind {
            case 0:
                st.end = pos
                return true
            case 1:
                // Literals are short (": ", " [", "<"): compared in place, no memcmp call.
                let length = Int(step.b)
                guard pos + length <= n else { return false }
                let literal = pool + Int(step.a)
                var k = 0
                // (eight bytes a step where the literal is long: ` stats frames=`, a layout's
                // separators and words)
                while k &+ 8 <= length {
                    guard base.loadUnaligned(fromByteOffset: pos &+ k, as: UInt64.self)
                        == UnsafeRawPointer(literal + k).loadUnaligned(as: UInt64.self) else { return false }
                    k &+= 8
                }
                while k < length, byte(pos + k) == literal[k] { k += 1 }
                guard k == length else { return false }
                pos += length
                pc += 1
            case 2:
                guard pos < n, byte(pos) == 0x20 else { return false }
                pos += 1
                // `log show` pads its columns with dozens of spaces: eight bytes a step, the
                // first other byte found from the XOR's low zero bytes.
                while pos + 8 <= n {
                    let x = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: pos, as: UInt64.self)) ^ 0x2020_2020_2020_2020
                    if x != 0 {
                        pos += x.trailingZeroBitCount >> 3
                        break
                    }
                    pos += 8
                }
                while pos < n, byte(pos) == 0x20 { pos += 1 }
                pc += 1
            case 4:
                st.tries &+= 1
                if st.tries > Self.maxTries { return false }
                if run(pc + 1, pos, p, starts, ends, &st) { return true }
                for k in Int(step.b)..<Int(step.c) { starts![k] = -1 }
                pc = Int(step.a)
            default:
                let slot = Int(step.slot)
                switch step.type {
                case 2, 3:
                    let hex = step.type == 3
                    var j = pos
                    if hex, j + 1 < n, byte(j) == UInt8(ascii: "0"), byte(j + 1) == UInt8(ascii: "x") { j += 2 }
                    if !hex, j + 1 < n, byte(j) == UInt8(ascii: "-"), isDigit(byte(j + 1)) { j += 1 }
                    let digitsStart = j
                    while j < n, isDigit(byte(j)) || (hex && isHexLetter(byte(j))) { j += 1 }
                    guard j > digitsStart else { return false }
                    starts![slot] = pos
                    ends![slot] = j
                    pos = j
                    pc += 1
                case 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 18, 20, 24:
                    var t = ParsedTime()
                    var end: Int?
                    switch step.type {
                    case 4: end = TimeScan.iso(p, pos, into: &t)
                    case 5:
                        end = TimeScan.iso(p, pos, into: &t)
                        if t.offset == nil { end = nil }
                    case 6:
                        end = TimeScan.iso(p, pos, into: &t)
                        if t.offset != nil { end = nil }
                    case 7: end = TimeScan.bsd(p, pos, into: &t)
                    case 9: end = TimeScan.full(p, pos, into: &t)
                    case 10: end = TimeScan.epoch(p, pos, into: &t)
                    case 11: end = TimeScan.mono(p, pos, into: &t)
                    case 12: end = TimeScan.bsdLocalized(p, pos, into: &t)
                    case 14: end = TimeScan.ctime(p, pos, into: &t)
                    case 15: end = TimeScan.iso(p, pos, into: &t, slashes: true)
                    case 18: end = TimeScan.jul(p, pos, into: &t)
                    case 20: end = TimeScan.utc(p, pos, into: &t)
                    case 24: end = TimeScan.jul(p, pos, into: &t, monthFirst: true)
                    default: end = TimeScan.timeOfDay(p, pos, into: &t)
                    }
                    guard let end else { return false }
                    st.time = t
                    st.hasTime = true
                    starts![slot] = pos
                    ends![slot] = end
                    pos = end
                    pc += 1
                case 19:
                    var t = ParsedTime()
                    guard step.next == -2, let e = TimeScan.mono(p, pos, into: &t), e + 1 < n, byte(e) == 0x20 else { return false }
                    starts![slot] = pos
                    ends![slot] = n
                    st.end = n
                    return true
                case 21, 23:
                    // (the run of capitals, or of letters for a level, is the only candidate)
                    var e = pos
                    if step.type == 21 {
                        while e < n, byte(e) &- UInt8(ascii: "A") < 26 { e += 1 }
                        guard e - pos >= 2 else { return false }
                    } else {
                        while e < n, isLetter(byte(e)) { e += 1 }
                        guard e > pos, e - pos <= 8, Self.isLevel(base, pos, e) else { return false }
                    }
                    starts![slot] = pos
                    ends![slot] = e
                    if step.next == -2 {
                        guard e == n else { return false }
                        st.end = n
                        return true
                    }
                    pos = e
                    pc += 1
                case 22:
                    guard step.next == -2, pos + 3 <= n, byte(pos) == UInt8(ascii: "+") else { return false }
                    var e = pos + 1
                    while e < n, isDigit(byte(e)) { e += 1 }
                    guard e > pos + 1, e < n else { return false }
                    let unit = n - e
                    guard unit == 1 && (byte(e) == UInt8(ascii: "s") || byte(e) == UInt8(ascii: "m") || byte(e) == UInt8(ascii: "h") || byte(e) == UInt8(ascii: "d"))
                        || unit == 2 && byte(e) == UInt8(ascii: "m") && byte(e + 1) == UInt8(ascii: "s") else { return false }
                    starts![slot] = pos
                    ends![slot] = n
                    st.end = n
                    return true
                default:
                    let code = step.type == 16
                    let host = step.type == 17
                    let word = step.type == 1 || code || host
                    let label = step.type == 13
                    if label, pos >= n || Self.endsLabel(byte(pos)) { return false }
                    if step.next == -2 {
                        // Last element: the rest of the input.
                        if word {
                            var j = pos
                            while j < n, byte(j) != 0x20, byte(j) != 0x09 { j += 1 }
                            guard j > pos, j == n, !code || j - pos <= 2, !host || Self.named(base, pos, j) else { return false }
                        }
                        if label {
                            var j = pos
                            while j < n, !Self.endsLabel(byte(j)) { j += 1 }
                            guard j == n else { return false }
                        }
                        starts![slot] = pos
                        ends![slot] = n
                        st.end = n
                        return true
                    }
                    if word && step.next == 0x20 && step.next2 < 0 {
                        // A word before a space ends at its first space or tab: the only
                        // candidate, so the rest is matched here, not tried in a nested run.
                        // (Eight bytes a step: a session's UUID, a host, a process name.)
                        var e = pos
                        while e &+ 8 <= n {
                            let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: e, as: UInt64.self))
                            let found = Self.anyByte(w, 0x20) | Self.anyByte(w, 0x09)
                            if found != 0 {
                                e &+= found.trailingZeroBitCount >> 3
                                break
                            }
                            e &+= 8
                        }
                        while e < n, byte(e) != 0x20, byte(e) != 0x09 { e += 1 }
                        guard e > pos, e < n, byte(e) == 0x20, e - pos <= (code ? 2 : Pattern.maxFieldLength), !host || Self.named(base, pos, e) else { return false }
                        starts![slot] = pos
                        ends![slot] = e
                        pos = e
                        pc += 1
                        continue
                    }
                    let limit = min(n, pos + (code ? 2 : Pattern.maxFieldLength))
                    if !word && !label && step.next >= 0 && step.next2 < 0 {
                        // Any text up to a byte the next step needs: each occurrence is a
                        // candidate end, found with memchr.
                        var e = pos
                        let last = min(limit, n - 1)
                        while e <= last {
                            guard let hit = memchr(base + e, Int32(step.next), last - e + 1) else { return false }
                            e = base.distance(to: UnsafeRawPointer(hit))
                            starts![slot] = pos
                            ends![slot] = e
                            st.tries &+= 1
                            if st.tries > Self.maxTries { return false }
                            if run(pc + 1, e, p, starts, ends, &st) { return true }
                            e += 1
                        }
                        return false
                    }
                    if word, pos >= n || byte(pos) == 0x20 || byte(pos) == 0x09 { return false }
                    if word && step.next >= 0 {
                        // A word before a byte the next step needs (`[{subsystem:word}:`): each
                        // such byte before the first space or tab is a candidate end, found in
                        // one pass (a space or tab ends the word's candidates).
                        let next = UInt8(step.next)
                        let next2 = step.next2 < 0 ? next : UInt8(truncatingIfNeeded: step.next2)
                        var e = pos + 1
                        // Bytes that are none of the four are passed over eight at a time (a
                        // subsystem such as `com.apple.ReplayKit` is ~25 bytes on every line of an
                        // Apple layout, which went byte by byte).
                        let stop = min(limit + 1, n)
                        while e <= limit {
                            while e &+ 8 <= stop {
                                let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: e, as: UInt64.self))
                                let found = Self.anyByte(w, next) | Self.anyByte(w, next2) | Self.anyByte(w, 0x20) | Self.anyByte(w, 0x09)
                                if found != 0 {
                                    e &+= found.trailingZeroBitCount >> 3
                                    break
                                }
                                e &+= 8
                            }
                            guard e <= limit, e < n else { return false }
                            let b = byte(e)
                            if b == next || b == next2, !host || Self.named(base, pos, e) {
                                starts![slot] = pos
                                ends![slot] = e
                                st.tries &+= 1
                                if st.tries > Self.maxTries { return false }
                                if run(pc + 1, e, p, starts, ends, &st) { return true }
                            }
                            if b == 0x20 || b == 0x09 { return false }
                            e += 1
                        }
                        return false
                    }
                    var e = word || label ? pos + 1 : pos
                    while e <= limit {
                        if word, e > pos, byte(e - 1) == 0x20 || byte(e - 1) == 0x09 { return false }
                        if label, e > pos, Self.endsLabel(byte(e - 1)) { return false }
                        if step.next >= 0 {
                            guard e < n else { return false }
                            let b = byte(e)
                            if b != UInt8(step.next) && (step.next2 < 0 || b != UInt8(truncatingIfNeeded: step.next2)) {
                                e += 1
                                continue
                            }
                        }
                        if host, !Self.named(base, pos, e) {
                            e += 1
                            continue
                        }
                        starts![slot] = pos
                        ends![slot] = e
                        st.tries &+= 1
                        if st.tries > Self.maxTries { return false }
                        if run(pc + 1, e, p, starts, ends, &st) { return true }
                        e += 1
                    }
                    return false
                }
            }
        }
    }
}

@inline(__always) func isHexLetter(_ b: UInt8) -> Bool {
    (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "f")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "F"))
}

/// The index of the first occurrence of `needle` in `hay` at or after `from` (memchr for the
/// first byte, then memcmp).
public func findBytes(_ hay: UnsafeRawBufferPointer, _ needle: [UInt8], from: Int) -> Int? {
    needle.withUnsafeBytes { findBytes(hay, $0, from: from) }
}

/// The same with the needle's bytes lent (a string's UTF-8 in place: no array made per search).
func findBytes(_ hay: UnsafeRawBufferPointer, _ needle: UnsafeRawBufferPointer, from: Int) -> Int? {
    guard let base = hay.baseAddress, let n = needle.baseAddress, !needle.isEmpty else { return needle.isEmpty ? from : nil }
    let first = needle[0]
    var i = from
    let last = hay.count - needle.count
    while i <= last {
        guard let hit = memchr(base + i, Int32(first), last - i + 1) else { return nil }
        let at = base.distance(to: UnsafeRawPointer(hit))
        if memcmp(base + at, n, needle.count) == 0 { return at }
        i = at + 1
    }
    return nil
}

extension PatternProgram {
    /// Matches at `start` (anchored). On success `m` holds the captures.
    func match(_ p: UnsafeRawBufferPointer, from start: Int = 0, into m: inout PatternMatch) -> Bool {
        var tries = 0
        return match(p, from: start, into: &m, tries: &tries)
    }

    /// The same, counting its tries on to `tries` (a search's starts share one bound).
    func match(_ p: UnsafeRawBufferPointer, from start: Int = 0, into m: inout PatternMatch, tries: inout Int) -> Bool {
        var state = State()
        state.tries = tries
        defer { tries = state.tries + 1 }
        let ok = m.starts.withUnsafeMutableBufferPointer { starts in
            m.ends.withUnsafeMutableBufferPointer { ends in
                starts.update(repeating: -1)
                return run(0, start, p, starts.baseAddress, ends.baseAddress, &state)
            }
        }
        m.hasTime = state.hasTime
        if state.hasTime { m.time = state.time }
        m.end = state.end
        return ok
    }
}

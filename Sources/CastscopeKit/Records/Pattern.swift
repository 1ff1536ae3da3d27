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
///   `iso`, `isotz` (with a zone), `isolocal` (without), `bsd`, `clock` (timestamps, see
///   `TimeScan`);
/// - `{?...}` is an optional group, tried first and skipped if the rest then fails.
///
/// Matching works on bytes and backtracks only over `{name}` fields, whose end positions are
/// limited to the places where the next literal starts.
public struct Pattern: Sendable {
    public enum FieldType: String, Sendable {
        case any, word, int, hex, iso, isotz, isolocal, bsd, clock
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
    /// Capture names by slot.
    public let names: [String]
    /// The longest literal of the pattern, for `contains` prefiltering.
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
                let parts = spec.split(separator: ":", maxSplits: 1).map(String.init)
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
        var best: [UInt8] = []
        for op in ops { if case .literal(let l) = op, l.count > best.count { best = l } }
        anchor = best
    }

    public func slot(_ name: String) -> Int? { names.firstIndex(of: name) }
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
        for k in 0..<m.starts.count { m.starts[k] = -1 }
        m.hasTime = false
        return run(0, start, p, &m)
    }

    /// Finds the pattern anywhere in `p` (first match). Cheap when the anchor literal is absent.
    public func search(_ p: UnsafeRawBufferPointer, into m: inout PatternMatch) -> Bool {
        guard p.count > 0 else { return match(p, into: &m) }
        if anchor.isEmpty { return match(p, into: &m) }
        // The pattern can only start where its first literal occurs, or anywhere when it
        // starts with a field; in both cases the anchor must occur somewhere.
        guard findBytes(p, anchor, from: 0) != nil else { return false }
        if case .literal(let first) = ops[0] {
            var from = 0
            while from + first.count <= p.count {
                guard let at = findBytes(p, first, from: from) else { return false }
                if match(p, from: at, into: &m) { return true }
                from = at + 1
            }
            return false
        }
        for at in 0..<p.count where match(p, from: at, into: &m) { return true }
        return false
    }

    private func run(_ pc0: Int, _ pos0: Int, _ p: UnsafeRawBufferPointer, _ m: inout PatternMatch) -> Bool {
        var pc = pc0
        var pos = pos0
        let n = p.count
        while true {
            switch ops[pc] {
            case .end:
                m.end = pos
                return true
            case .literal(let l):
                guard pos + l.count <= n else { return false }
                for k in 0..<l.count where p[pos + k] != l[k] { return false }
                pos += l.count
                pc += 1
            case .spaces:
                guard pos < n, p[pos] == 0x20 else { return false }
                while pos < n, p[pos] == 0x20 { pos += 1 }
                pc += 1
            case .optional(let skipTo, let firstSlot, let lastSlot):
                if run(pc + 1, pos, p, &m) { return true }
                for k in firstSlot..<lastSlot { m.starts[k] = -1 }
                pc = skipTo
            case .field(let slot, let type):
                switch type {
                case .int, .hex:
                    var j = pos
                    if type == .hex, j + 1 < n, p[j] == UInt8(ascii: "0"), p[j + 1] == UInt8(ascii: "x") { j += 2 }
                    if type == .int, j + 1 < n, p[j] == UInt8(ascii: "-"), isDigit(p[j + 1]) { j += 1 }
                    let digitsStart = j
                    while j < n, isDigit(p[j]) || (type == .hex && isHexLetter(p[j])) { j += 1 }
                    guard j > digitsStart else { return false }
                    m.starts[slot] = pos
                    m.ends[slot] = j
                    pos = j
                    pc += 1
                case .iso, .isotz, .isolocal, .bsd, .clock:
                    var t = ParsedTime()
                    var end: Int?
                    switch type {
                    case .iso: end = TimeScan.iso(p, pos, into: &t)
                    case .isotz:
                        end = TimeScan.iso(p, pos, into: &t)
                        if t.offset == nil { end = nil }
                    case .isolocal:
                        end = TimeScan.iso(p, pos, into: &t)
                        if t.offset != nil { end = nil }
                    case .bsd: end = TimeScan.bsd(p, pos, into: &t)
                    default: end = TimeScan.timeOfDay(p, pos, into: &t)
                    }
                    guard let end else { return false }
                    m.time = t
                    m.hasTime = true
                    m.starts[slot] = pos
                    m.ends[slot] = end
                    pos = end
                    pc += 1
                case .any, .word:
                    if case .end = ops[pc + 1] {
                        // Last element: the rest of the input.
                        if type == .word {
                            var j = pos
                            while j < n, p[j] != 0x20, p[j] != 0x09 { j += 1 }
                            guard j > pos, j == n else { return false }
                        }
                        m.starts[slot] = pos
                        m.ends[slot] = n
                        m.end = n
                        return true
                    }
                    var firstByte: UInt8? = nil
                    switch ops[pc + 1] {
                    case .literal(let l): firstByte = l[0]
                    case .spaces: firstByte = 0x20
                    default: break
                    }
                    let limit = min(n, pos + Pattern.maxFieldLength)
                    var e = type == .word ? pos + 1 : pos
                    if type == .word, pos >= n || p[pos] == 0x20 || p[pos] == 0x09 { return false }
                    while e <= limit {
                        if type == .word, e > pos, p[e - 1] == 0x20 || p[e - 1] == 0x09 { return false }
                        if let fb = firstByte {
                            guard e < n else { return false }
                            if p[e] != fb { e += 1; continue }
                        }
                        m.starts[slot] = pos
                        m.ends[slot] = e
                        if run(pc + 1, e, p, &m) { return true }
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
func findBytes(_ hay: UnsafeRawBufferPointer, _ needle: [UInt8], from: Int) -> Int? {
    guard let base = hay.baseAddress, let first = needle.first else { return needle.isEmpty ? from : nil }
    var i = from
    let last = hay.count - needle.count
    return needle.withUnsafeBytes { n in
        while i <= last {
            guard let hit = memchr(base + i, Int32(first), last - i + 1) else { return nil }
            let at = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + at, n.baseAddress!, needle.count) == 0 { return at }
            i = at + 1
        }
        return nil
    }
}

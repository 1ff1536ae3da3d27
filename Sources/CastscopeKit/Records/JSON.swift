#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A parsed JSON document, for `parsers/` definitions and small inputs. Log records use the
/// allocation-free member scanner below instead.
public indirect enum JSONValue: Sendable, Equatable {
    case string(String)
    case number(String)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.null, .null): return true
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members.first(where: { $0.0 == key })?.1 }
        return nil
    }

    public var stringValue: String? {
        switch self {
        case .string(let s): return s
        case .number(let s): return s
        case .bool(let b): return b ? "true" : "false"
        default: return nil
        }
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var objectValue: [(String, JSONValue)]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// What of a document to build (`parse(_:keep:)`): the rest is read and checked as JSON,
    /// as the whole document is, but not built. A report of which a reader uses a few fields
    /// (an `.ips`) costs what those hold, not the document's size in values: a 16 MB `.ips`
    /// body of 7.9 M numbers built whole took 524 MB.
    public indirect enum Keep: Sendable {
        /// Every value in it.
        case all
        /// A string, number, bool or null; an object or array here is kept empty.
        case scalar
        /// An object's named members, each by its own `Keep` (others left out); with
        /// `requires`, an object without that member is left out of the array holding it.
        case object([String: Keep], requires: String? = nil)
        /// An object's every member by one `Keep`.
        case members(Keep)
        /// An array's items, each by one `Keep`.
        case array(Keep)
        /// An array's first item by this `Keep` (the others checked, not built: a crash
        /// report's top frame of a thread, not its thousands).
        case first(Keep)
    }

    public struct ParseError: Error, CustomStringConvertible {
        public var offset: Int
        public var message: String
        public var description: String { "invalid JSON at byte \(offset): \(message)" }
    }

    /// Arrays and objects nested deeper than this are refused (each level is a frame of the
    /// recursive parser: a hostile file must not exhaust the stack).
    static let maxDepth = 512

    /// `omitting`: a member of the top-level object left out unparsed (the samples of a
    /// parser definition, half its text, which only `castscope parsers --check` and the tests
    /// read: parsed at every start they were a third of an empty run's instructions).
    public static func parse(_ text: String, omitting: String? = nil) throws -> JSONValue {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBytes { p in
            var i = 0
            var cut = false
            let v = try parseValue(p, &i, depth: 0, lenient: false, omitting: omitting, cut: &cut)!
            skipSpace(p, &i)
            if i != p.count { throw ParseError(offset: i, message: "trailing characters") }
            return v
        }
    }

    /// `text` parsed whole but built only as far as `keep` says (`Keep`); the errors are the
    /// whole parse's. `lenient`: a document cut short gives what came before the cut (as
    /// `parseCut`; nil when it is not one cut short).
    public static func parse(_ text: Substring, keep: Keep, lenient: Bool = false) throws -> JSONValue? {
        func run(_ p: UnsafeRawBufferPointer) throws -> JSONValue? {
            var i = 0
            var cut = false
            if lenient {
                guard let v = try? parseValue(p, &i, depth: 0, lenient: true, keep: keep, cut: &cut), cut else { return nil }
                return v
            }
            let v = try parseValue(p, &i, depth: 0, lenient: false, keep: keep, cut: &cut)!
            skipSpace(p, &i)
            if i != p.count { throw ParseError(offset: i, message: "trailing characters") }
            return v
        }
        // (the text's own bytes: a copy of a 16 MB body was another 16 MB)
        if let v = try text.utf8.withContiguousStorageIfAvailable({ try run(UnsafeRawBufferPointer($0)) }) { return v }
        return try Array(text.utf8).withUnsafeBytes { try run($0) }
    }

    static func skipSpace(_ p: UnsafeRawBufferPointer, _ i: inout Int) {
        while i < p.count, p[i] == 0x20 || p[i] == 0x0A || p[i] == 0x0D || p[i] == 0x09 { i += 1 }
    }

    static func parseValue(_ p: UnsafeRawBufferPointer, _ i: inout Int, depth: Int) throws -> JSONValue {
        var cut = false
        return try parseValue(p, &i, depth: depth, lenient: false, omitting: nil, cut: &cut)!
    }

    /// The value of a document cut short (an `.ips` report pasted past an issue's length
    /// limit): the members and items complete before the cut, the containers open there
    /// closed. Nil when the text is not a document cut short (complete, or wrong before its end).
    public static func parseCut(_ text: String) -> JSONValue? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { p in
            var i = 0
            var cut = false
            guard let v = try? parseValue(p, &i, depth: 0, lenient: true, omitting: nil, cut: &cut), cut else { return nil }
            return v
        }
    }

    /// `lenient`: the end of the text inside a value sets `cut` and ends every open container
    /// with what it holds; a value the end cut into is left out (nil when it is the top one).
    /// `keep`: what to build of it (nil: all; `Keep`); `skip`: nothing (checked only, `.null`
    /// returned).
    static func parseValue(_ p: UnsafeRawBufferPointer, _ i: inout Int, depth: Int, lenient: Bool, omitting: String? = nil,
                           keep: Keep? = nil, skip: Bool = false, cut: inout Bool) throws -> JSONValue?
    {
        /// The end of the text where more must come: cut (lenient), else an error.
        func ended() throws {
            guard lenient else { throw ParseError(offset: i, message: "unexpected end") }
            cut = true
        }
        skipSpace(p, &i)
        guard i < p.count else { try ended(); return nil }
        if depth >= maxDepth, p[i] == UInt8(ascii: "{") || p[i] == UInt8(ascii: "[") {
            throw ParseError(offset: i, message: "nested deeper than \(maxDepth) levels")
        }
        switch p[i] {
        case UInt8(ascii: "{"):
            i += 1
            var members: [(String, JSONValue)] = []
            // (what its members are built by: a scalar expected here keeps it empty)
            var named: [String: Keep]?
            var every: Keep? = nil
            var skipAll = skip
            switch keep {
            case nil, .all?: every = keep
            case .scalar?, .array?, .first?: skipAll = true
            case .object(let m, _)?: named = m
            case .members(let k)?: every = k
            }
            skipSpace(p, &i)
            if i < p.count, p[i] == UInt8(ascii: "}") { i += 1; return skip ? .null : .object(members) }
            while true {
                skipSpace(p, &i)
                guard i < p.count else { try ended(); return .object(members) }
                guard p[i] == UInt8(ascii: "\"") else { throw ParseError(offset: i, message: "expected a key") }
                let end = JSONScan.skipString(p, i)
                guard end > i else {
                    guard lenient else { throw ParseError(offset: i, message: "unterminated string") }
                    cut = true
                    return .object(members)
                }
                // (a member not kept: its key is not made either)
                let memberKeep: Keep?
                let skipMember: Bool
                var key = ""
                if skipAll {
                    (memberKeep, skipMember) = (nil, true)
                } else if let named {
                    key = JSONScan.string(p, i..<end)
                    memberKeep = named[key]
                    skipMember = memberKeep == nil
                } else {
                    key = JSONScan.string(p, i..<end)
                    (memberKeep, skipMember) = (every, false)
                }
                i = end
                skipSpace(p, &i)
                guard i < p.count else { try ended(); return .object(members) }
                guard p[i] == UInt8(ascii: ":") else { throw ParseError(offset: i, message: "expected ':'") }
                i += 1
                if depth == 0, key == omitting {
                    skipSpace(p, &i)
                    let end = JSONScan.skipValue(p, i)
                    guard end > i else { throw ParseError(offset: i, message: "expected a value") }
                    i = end
                } else {
                    guard let value = try parseValue(p, &i, depth: depth + 1, lenient: lenient, keep: memberKeep, skip: skipMember, cut: &cut)
                    else { return skip ? .null : .object(members) }
                    if !skipMember { members.append((key, value)) }
                }
                if cut { return skip ? .null : .object(members) }
                skipSpace(p, &i)
                guard i < p.count else { try ended(); return .object(members) }
                if p[i] == UInt8(ascii: ",") { i += 1; continue }
                if p[i] == UInt8(ascii: "}") { i += 1; return skip ? .null : .object(members) }
                throw ParseError(offset: i, message: "expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            i += 1
            var items: [JSONValue] = []
            var itemKeep: Keep? = nil
            var skipItems = skip
            var firstOnly = false
            switch keep {
            case nil, .all?: itemKeep = keep
            case .array(let k)?: itemKeep = k
            case .first(let k)?: itemKeep = k; firstOnly = true
            default: skipItems = true
            }
            // (an object item lacking the member its keep requires is left out)
            var required: String?
            if case .object(_, let r)? = itemKeep { required = r }
            skipSpace(p, &i)
            if i < p.count, p[i] == UInt8(ascii: "]") { i += 1; return skip ? .null : .array(items) }
            while true {
                guard let item = try parseValue(p, &i, depth: depth + 1, lenient: lenient, keep: itemKeep, skip: skipItems, cut: &cut)
                else { return skip ? .null : .array(items) }
                if !skipItems, required.map({ r in item.objectValue.map { o in !o.contains { $0.0 == r } } ?? false }) != true {
                    items.append(item)
                }
                if firstOnly && !items.isEmpty { skipItems = true }
                if cut { return skip ? .null : .array(items) }
                skipSpace(p, &i)
                guard i < p.count else { try ended(); return skip ? .null : .array(items) }
                if p[i] == UInt8(ascii: ",") { i += 1; continue }
                if p[i] == UInt8(ascii: "]") { i += 1; return skip ? .null : .array(items) }
                throw ParseError(offset: i, message: "expected ',' or ']'")
            }
        case UInt8(ascii: "\""):
            let end = JSONScan.skipString(p, i)
            guard end > i else {
                guard lenient else { throw ParseError(offset: i, message: "unterminated string") }
                cut = true
                return nil
            }
            if skip {
                i = end
                return .null
            }
            let s = JSONScan.string(p, i..<end)
            i = end
            return .string(s)
        default:
            let start = i
            let end = JSONScan.skipValue(p, i)
            guard end > start else { throw ParseError(offset: i, message: "unexpected character") }
            // (a number or word the end cut into may be incomplete: with only white space
            // after it, it may have been cut too)
            if lenient {
                var j = end
                skipSpace(p, &j)
                if j == p.count { cut = true; return nil }
            }
            i = end
            // A number is checked against JSON's grammar wherever it is, built or passed over
            // (only its first byte was looked at: `12x00` or `1.2.3` in a part of an `.ips` the
            // reader does not keep was taken silently, and in a kept one it became no number).
            if isNumberLead(p[start]) {
                guard isNumber(p, start, end) else {
                    let token = String(decoding: UnsafeRawBufferPointer(rebasing: p[start..<min(end, start + 41)]), as: UTF8.self)
                    throw ParseError(offset: start, message: "malformed number '\(end - start > 40 ? String(token.prefix(40)) + "…" : token)'")
                }
                return skip ? .null : .number(String(decoding: UnsafeRawBufferPointer(rebasing: p[start..<end]), as: UTF8.self))
            }
            // (skipped: a word checked on its bytes, the common case made no string)
            if skip, words.contains(where: { w in w.count == end - start && w.elementsEqual(p[start..<end]) }) {
                return .null
            }
            let word = String(decoding: UnsafeRawBufferPointer(rebasing: p[start..<end]), as: UTF8.self)
            switch word {
            case "true": return .bool(true)
            case "false": return .bool(false)
            case "null": return .null
            default:
                // (the token cut short: 10 MB of junk in an .ips body was one 42 MB error line)
                let shown = word.count > 40 ? String(word.prefix(40)) + "…" : word
                throw ParseError(offset: start, message: "unexpected '\(shown)'")
            }
        }
    }

    /// Whether `p[start..<end]` is a JSON number: `-`, then `0` or digits not led by `0`, then
    /// `.` and digits, then `e` or `E`, a sign and digits (RFC 8259 §6).
    static func isNumber(_ p: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Bool {
        func digit(_ k: Int) -> Bool { k < end && p[k] >= 0x30 && p[k] <= 0x39 }
        var k = start
        if p[k] == UInt8(ascii: "-") { k += 1 }
        guard digit(k) else { return false }
        if p[k] == 0x30 { k += 1 } else { while digit(k) { k += 1 } }
        if k < end, p[k] == UInt8(ascii: ".") {
            k += 1
            guard digit(k) else { return false }
            while digit(k) { k += 1 }
        }
        if k < end, p[k] == UInt8(ascii: "e") || p[k] == UInt8(ascii: "E") {
            k += 1
            if k < end, p[k] == UInt8(ascii: "+") || p[k] == UInt8(ascii: "-") { k += 1 }
            guard digit(k) else { return false }
            while digit(k) { k += 1 }
        }
        return k == end
    }

    static let words: [[UInt8]] = [Array("true".utf8), Array("false".utf8), Array("null".utf8)]
    static func isNumberLead(_ b: UInt8) -> Bool { b == UInt8(ascii: "-") || (b >= 0x30 && b <= 0x39) }
}

/// Byte-level JSON helpers for log records: walk an object's members without building values.
public enum JSONScan {
    /// Index just past the string starting at `i` (which holds `"`), or `i` if unterminated.
    static func skipString(_ p: UnsafeRawBufferPointer, _ i: Int) -> Int {
        var j = i + 1
        while j < p.count {
            let b = p[j]
            if b == UInt8(ascii: "\\") { j += 2; continue }
            if b == UInt8(ascii: "\"") { return j + 1 }
            j += 1
        }
        return i
    }

    /// Index just past the value starting at `i`, or `i` if it is malformed.
    static func skipValue(_ p: UnsafeRawBufferPointer, _ i: Int) -> Int {
        guard i < p.count else { return i }
        let b = p[i]
        if b == UInt8(ascii: "\"") { return skipString(p, i) }
        if b == UInt8(ascii: "{") || b == UInt8(ascii: "[") {
            var depth = 0
            var j = i
            while j < p.count {
                let c = p[j]
                if c == UInt8(ascii: "\"") {
                    let e = skipString(p, j)
                    if e == j { return i }
                    j = e
                    continue
                }
                if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") { depth += 1 }
                if c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                    depth -= 1
                    if depth == 0 { return j + 1 }
                }
                j += 1
            }
            return i
        }
        var j = i
        while j < p.count {
            let c = p[j]
            if c == UInt8(ascii: ",") || c == UInt8(ascii: "}") || c == UInt8(ascii: "]") || c == 0x20 || c == 0x0A
                || c == 0x0D || c == 0x09
            {
                break
            }
            j += 1
        }
        return j
    }

    /// Calls `body(key, valueRange)` for each member of the object starting at `i0`.
    /// Returns false when the text is not a well-formed object.
    @discardableResult
    public static func forEachMember(
        _ p: UnsafeRawBufferPointer, from i0: Int = 0,
        _ body: (UnsafeRawBufferPointer, Range<Int>) -> Void
    ) -> Bool {
        var i = i0
        JSONValue.skipSpace(p, &i)
        guard i < p.count, p[i] == UInt8(ascii: "{") else { return false }
        i += 1
        while true {
            JSONValue.skipSpace(p, &i)
            guard i < p.count else { return false }
            if p[i] == UInt8(ascii: "}") { return true }
            guard p[i] == UInt8(ascii: "\"") else { return false }
            let keyEnd = skipString(p, i)
            guard keyEnd > i else { return false }
            let key = UnsafeRawBufferPointer(rebasing: p[(i + 1)..<(keyEnd - 1)])
            i = keyEnd
            JSONValue.skipSpace(p, &i)
            guard i < p.count, p[i] == UInt8(ascii: ":") else { return false }
            i += 1
            JSONValue.skipSpace(p, &i)
            let vEnd = skipValue(p, i)
            guard vEnd > i else { return false }
            body(key, i..<vEnd)
            i = vEnd
            JSONValue.skipSpace(p, &i)
            guard i < p.count else { return false }
            if p[i] == UInt8(ascii: ",") { i += 1; continue }
            if p[i] == UInt8(ascii: "}") { return true }
            return false
        }
    }

    /// The string value of the quoted string at `r`: straight from the bytes when it has no
    /// escape (most do), else decoded.
    static func string(_ p: UnsafeRawBufferPointer, _ r: Range<Int>) -> String {
        let inner = UnsafeRawBufferPointer(rebasing: p[(r.lowerBound + 1)..<(r.upperBound - 1)])
        if inner.isEmpty || memchr(inner.baseAddress!, 0x5C, inner.count) == nil { return String(decoding: inner, as: UTF8.self) }
        return String(decoding: decodeString(p, r), as: UTF8.self)
    }

    /// The bytes of a JSON string literal (with quotes) after unescaping.
    static func decodeString(_ p: UnsafeRawBufferPointer, _ r: Range<Int>) -> [UInt8] {
        var out: [UInt8] = []
        appendString(p, r, into: &out)
        return out
    }

    static func appendString(_ p: UnsafeRawBufferPointer, _ r: Range<Int>, into out: inout [UInt8]) {
        var j = r.lowerBound + 1
        let end = r.upperBound - 1
        while j < end {
            let b = p[j]
            if b != UInt8(ascii: "\\") { out.append(b); j += 1; continue }
            j += 1
            guard j < end else { break }
            let e = p[j]
            j += 1
            switch e {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                guard var cp = hex4(p, j, end) else { break }
                j += 4
                if cp >= 0xD800 && cp < 0xDC00, j + 6 <= end, p[j] == UInt8(ascii: "\\"), p[j + 1] == UInt8(ascii: "u"),
                    let lo = hex4(p, j + 2, end), lo >= 0xDC00 && lo < 0xE000
                {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                    j += 6
                }
                appendUTF8(UInt32(cp), into: &out)
            default: out.append(e)
            }
        }
    }

    static func hex4(_ p: UnsafeRawBufferPointer, _ j: Int, _ end: Int) -> Int? {
        guard j + 4 <= end else { return nil }
        var v = 0
        for k in j..<(j + 4) {
            let c = p[k]
            let d: Int
            if isDigit(c) { d = Int(c - 48) } else if c >= 97 && c <= 102 { d = Int(c - 87) } else if c >= 65 && c <= 70 {
                d = Int(c - 55)
            } else { return nil }
            v = v * 16 + d
        }
        return v
    }

    static func appendUTF8(_ cp: UInt32, into out: inout [UInt8]) {
        let scalar = Unicode.Scalar(cp) ?? "\u{FFFD}"
        out.append(contentsOf: Array(String(Character(scalar)).utf8))
    }

    /// Appends a field value as text: strings unescaped, numbers as written, byte arrays
    /// (journald's form for binary data) as their bytes, arrays by their first element.
    static func appendValue(_ p: UnsafeRawBufferPointer, _ r: Range<Int>, into out: inout [UInt8]) {
        guard !r.isEmpty else { return }
        let b = p[r.lowerBound]
        if b == UInt8(ascii: "\"") { appendString(p, r, into: &out); return }
        if b == UInt8(ascii: "[") {
            // An array's first element, through any arrays nested in it (a loop: a hostile
            // line of 100,000 `[` must not recurse or skip its rest once per level).
            var i = r.lowerBound + 1
            while true {
                JSONValue.skipSpace(p, &i)
                guard i < r.upperBound - 1 else { return }
                guard p[i] == UInt8(ascii: "[") else { break }
                i += 1
            }
            if isDigit(p[i]) {
                // byte array
                var v = 0
                var any = false
                while i < r.upperBound {
                    let c = p[i]
                    // (a byte: anything past 255 is damage, kept from overflowing)
                    if isDigit(c) { v = min(v, 1 << 20) * 10 + Int(c - 48); any = true } else if c == UInt8(ascii: ",") || c == UInt8(ascii: "]") {
                        if any { out.append(UInt8(truncatingIfNeeded: v)) }
                        v = 0
                        any = false
                        if c == UInt8(ascii: "]") { return }
                    }
                    i += 1
                }
                return
            }
            let e = skipValue(p, i)
            if e > i, e <= r.upperBound { appendValue(p, i..<e, into: &out) }
            return
        }
        if b == UInt8(ascii: "n") { return }  // null
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: p[r]))
    }
}

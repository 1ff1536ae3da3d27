#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The os_log printf dialect, rendered into a reused byte buffer: `%{public}@`, `%{private}s`
// (→ `<private>` as Apple prints it), `%{bool}d`, `%{BOOL}d`, `%{errno}d`, `%{time_t}d`,
// widths, precisions (also `*` from a precision item), length modifiers, `%%`.

/// One argument of an entry (a firehose data item).
public enum ULArgument {
    case int(UInt64, size: Int)
    case string(UnsafeRawBufferPointer)
    case bytes(UnsafeRawBufferPointer)
    case privateValue
    case null
    case precision(Int)
}

/// The data items of an entry as arguments.
public func ulArguments(_ e: TraceV3Entry, into out: inout [ULArgument]) {
    out.removeAll(keepingCapacity: true)
    guard let items = e.items.baseAddress else { return }
    let n = e.items.count
    var o = 0
    for _ in 0..<e.itemCount {
        guard o + 2 <= n else { break }
        let type = ulU8(items, o)
        let size = Int(ulU8(items, o + 1))
        let d = items + o + 2
        guard o + 2 + size <= n else { break }
        o += 2 + size
        func range(_ buf: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
            guard size >= 4, let b = buf.baseAddress else { return nil }
            let off = Int(ulU16(d, 0))
            let len = Int(ulU16(d, 2))
            guard off + len <= buf.count else { return nil }
            return UnsafeRawBufferPointer(start: b + off, count: len)
        }
        func trimmed(_ r: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
            var k = r.count
            while k > 0 && r[k - 1] == 0 { k -= 1 }
            return UnsafeRawBufferPointer(rebasing: r[0..<k])
        }
        switch type {
        case 0x00, 0x02:
            var v: UInt64 = 0
            switch size {
            case 1: v = UInt64(ulU8(d, 0))
            case 2: v = UInt64(ulU16(d, 0))
            case 4: v = UInt64(ulU32(d, 0))
            case 8: v = ulU64(d, 0)
            default: break
            }
            out.append(.int(v, size: size))
        case 0x10, 0x12:
            out.append(.precision(size >= 4 ? Int(Int32(bitPattern: ulU32(d, 0))) : 0))
        case 0x20, 0x22, 0x40, 0x42:
            if size >= 4 && ulU16(d, 2) == 0 { out.append(.null) } else if let r = range(e.values) { out.append(.string(trimmed(r))) } else {
                out.append(.null)
            }
        case 0x21, 0x41:
            if let r = range(e.privateData), r.count > 0 { out.append(.string(trimmed(r))) } else { out.append(.privateValue) }
        case 0x30, 0x32, 0xF2:
            if let r = range(e.values) { out.append(.bytes(r)) } else { out.append(.null) }
        case 0x31:
            if let r = range(e.privateData), r.count > 0 { out.append(.bytes(r)) } else { out.append(.privateValue) }
        case 0x01, 0x25, 0x35, 0x45:
            out.append(.privateValue)
        default:
            out.append(.privateValue)
        }
    }
}

extension Array where Element == UInt8 {
    @inline(__always) mutating func appendASCII(_ s: StaticString) {
        s.withUTF8Buffer { append(contentsOf: $0) }
    }
    mutating func appendDecimal(_ v: UInt64, negative: Bool = false) {
        if negative { append(UInt8(ascii: "-")) }
        var digits = 1
        var t = v
        while t >= 10 { t /= 10; digits += 1 }
        let start = count
        append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        var x = v
        withUnsafeMutableBufferPointer { b in
            var i = start + digits - 1
            repeat {
                b[i] = UInt8(48 + x % 10)
                x /= 10
                i -= 1
            } while x > 0
        }
    }
}

/// What widths and precisions may add to one message, in bytes: a format string comes from the
/// device's uuidtext files and a `*` width from the entry's data, so `%99999999999999999999d`,
/// `%{public}900000000s` or a width item of 2^31 − 1 are possible, and a message is at most a
/// line (1 MB) everywhere else in castscope.
let ulMaxPadding = 1 << 20

/// Renders `format` with `args` into `out` (appending).
public func ulRender(format: UnsafeRawBufferPointer, args: [ULArgument], into out: inout [UInt8]) {
    guard let f = format.baseAddress else { return }
    let n = format.count
    // Widths and precisions share one allowance per message (digits saturate at it, padding
    // stops at it), so neither a number past 64 bits nor thousands of huge widths can trap or
    // grow the message past it.
    let padEnd = out.count + ulMaxPadding
    func allowance() -> Int { max(0, padEnd - out.count) }
    var i = 0
    var next = 0
    var pendingPrecision: Int?
    func take() -> ULArgument? {
        while next < args.count {
            let a = args[next]
            next += 1
            if case .precision(let p) = a { pendingPrecision = p; continue }
            return a
        }
        return nil
    }
    while i < n {
        let c = f.load(fromByteOffset: i, as: UInt8.self)
        if c != UInt8(ascii: "%") {
            out.append(c)
            i += 1
            continue
        }
        i += 1
        guard i < n else { out.append(c); break }
        if f.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: "%") {
            out.append(c)
            i += 1
            continue
        }
        let specStart = i - 1
        // {decoder, privacy, …}
        var annotation = UnsafeRawBufferPointer(start: nil, count: 0)
        if f.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: "{") {
            let s = i + 1
            while i < n && f.load(fromByteOffset: i, as: UInt8.self) != UInt8(ascii: "}") { i += 1 }
            annotation = UnsafeRawBufferPointer(start: f + s, count: max(0, i - s))
            i += 1
        }
        var flags: [UInt8] = []
        while i < n, let ch = Optional(f.load(fromByteOffset: i, as: UInt8.self)),
            ch == UInt8(ascii: "-") || ch == UInt8(ascii: "+") || ch == UInt8(ascii: " ") || ch == UInt8(ascii: "#")
                || ch == UInt8(ascii: "0") || ch == UInt8(ascii: "'")
        {
            flags.append(ch)
            i += 1
        }
        var width: Int?
        var precision: Int?
        var starWidth = false
        var starPrecision = false
        if i < n && f.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: "*") { starWidth = true; i += 1 }
        while i < n, case let ch = f.load(fromByteOffset: i, as: UInt8.self), ch >= 48 && ch <= 57 {
            width = min((width ?? 0) * 10 + Int(ch - 48), ulMaxPadding)
            i += 1
        }
        if i < n && f.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: ".") {
            i += 1
            precision = 0
            if i < n && f.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: "*") { starPrecision = true; i += 1 }
            while i < n, case let ch = f.load(fromByteOffset: i, as: UInt8.self), ch >= 48 && ch <= 57 {
                precision = min(precision! * 10 + Int(ch - 48), ulMaxPadding)
                i += 1
            }
        }
        while i < n, case let ch = f.load(fromByteOffset: i, as: UInt8.self),
            ch == UInt8(ascii: "l") || ch == UInt8(ascii: "h") || ch == UInt8(ascii: "q") || ch == UInt8(ascii: "j")
                || ch == UInt8(ascii: "z") || ch == UInt8(ascii: "t") || ch == UInt8(ascii: "L")
        {
            i += 1
        }
        guard i < n else {
            out.append(contentsOf: UnsafeRawBufferPointer(start: f + specStart, count: n - specStart))
            break
        }
        let conv = f.load(fromByteOffset: i, as: UInt8.self)
        i += 1
        if starWidth, case .int(let w, _)? = take() {
            // As printf takes a `*` width: a negative one is the `-` flag and its magnitude.
            let v = Int(Int32(truncatingIfNeeded: Int64(bitPattern: w)))
            if v < 0 { flags.append(UInt8(ascii: "-")) }
            width = Int(min(v.magnitude, UInt(ulMaxPadding)))
        }
        pendingPrecision = nil
        guard let arg = take() else {
            out.appendASCII("<decode: missing data>")
            continue
        }
        if starPrecision || (precision != nil && pendingPrecision != nil) { precision = pendingPrecision ?? precision }
        // A negative precision (from the entry's precision item) is taken as if omitted, as
        // printf takes it. A width, and a number's precision (its leading zeros), may not reach
        // past what the message may still grow by; a string's precision only cuts it.
        if let p = precision, p < 0 { precision = nil }
        if let w = width { width = min(w, allowance()) }
        let numberPrecision = precision.map { min($0, allowance()) }
        let decoder = ulDecoder(annotation)
        let start = out.count
        switch arg {
        case .privateValue:
            out.appendASCII("<private>")
        case .null:
            out.appendASCII("(null)")
        case .precision:
            break
        case .bytes(let b):
            if decoder == .none && (conv == UInt8(ascii: "s") || conv == UInt8(ascii: "@")) {
                out.append(contentsOf: b)
            } else {
                for byte in b.prefix(precision ?? b.count) {
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 15)])
                }
            }
        case .string(let s):
            if let p = precision, p < s.count { out.append(contentsOf: s[0..<p]) } else { out.append(contentsOf: s) }
        case .int(let v, let size):
            let signed: Int64 = size == 1 ? Int64(Int8(truncatingIfNeeded: v)) : size == 2 ? Int64(Int16(truncatingIfNeeded: v))
                : size == 4 ? Int64(Int32(truncatingIfNeeded: v)) : Int64(bitPattern: v)
            switch decoder {
            case .bool: if v == 0 { out.appendASCII("false") } else { out.appendASCII("true") }
            case .BOOL: if v == 0 { out.appendASCII("NO") } else { out.appendASCII("YES") }
            case .errno:
                out.appendASCII("[")
                out.appendDecimal(signed.magnitude, negative: signed < 0)
                out.appendASCII(": ")
                if let m = strerror(Int32(truncatingIfNeeded: signed)) { out.append(contentsOf: UnsafeRawBufferPointer(start: m, count: strlen(m))) }
                out.appendASCII("]")
            case .time_t:
                var t = time_t(signed)
                var tm = tm()
                gmtime_r(&t, &tm)
                var buf = [CChar](repeating: 0, count: 64)
                let k = strftime(&buf, 64, "%Y-%m-%d %H:%M:%S%z", &tm)
                out.append(contentsOf: buf[0..<k].map { UInt8(bitPattern: $0) })
            default:
                switch conv {
                case UInt8(ascii: "d"), UInt8(ascii: "i"):
                    if flags.isEmpty && width == nil && precision == nil {
                        out.appendDecimal(signed.magnitude, negative: signed < 0)
                    } else {
                        cFormat(flags, width, numberPrecision, "lld", signed, &out)
                    }
                case UInt8(ascii: "u"):
                    let u = size == 8 ? v : size == 4 ? UInt64(UInt32(truncatingIfNeeded: v)) : v
                    if flags.isEmpty && width == nil && precision == nil { out.appendDecimal(u) } else {
                        cFormat(flags, width, numberPrecision, "llu", Int64(bitPattern: u), &out)
                    }
                case UInt8(ascii: "x"), UInt8(ascii: "X"), UInt8(ascii: "o"):
                    let spec = conv == UInt8(ascii: "x") ? "llx" : conv == UInt8(ascii: "X") ? "llX" : "llo"
                    cFormat(flags, width, numberPrecision, spec, Int64(bitPattern: v), &out)
                case UInt8(ascii: "p"):
                    out.appendASCII("0x")
                    cFormat([], nil, nil, "llx", Int64(bitPattern: v), &out)
                case UInt8(ascii: "c"):
                    out.append(UInt8(truncatingIfNeeded: v))
                case UInt8(ascii: "f"), UInt8(ascii: "F"), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "g"), UInt8(ascii: "G"):
                    let d = size == 4 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: v))) : Double(bitPattern: v)
                    // (with room for the widest double: 309 digits before the point)
                    cFormat(flags, width, numberPrecision, String(UnicodeScalar(conv)), d, &out, digits: 320)
                default:
                    out.appendDecimal(signed.magnitude, negative: signed < 0)
                }
            }
        }
        // Width for strings (and padded decoders): spaces, left or right.
        if let width, case .int = arg {} else if let width, out.count - start < width {
            let pad = width - (out.count - start)
            if flags.contains(UInt8(ascii: "-")) {
                out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: pad))
            } else {
                out.insert(contentsOf: repeatElement(UInt8(ascii: " "), count: pad), at: start)
            }
        }
    }
}

private func cFormat(_ flags: [UInt8], _ width: Int?, _ precision: Int?, _ conv: String, _ v: some CVarArg, _ out: inout [UInt8],
                     digits: Int = 0) {
    var spec = "%" + String(decoding: flags.filter { $0 != UInt8(ascii: "'") }, as: UTF8.self)
    if let width { spec += String(width) }
    if let precision { spec += "." + String(precision) }
    spec += conv
    // Room for the width and precision asked for (already within the message's allowance), and
    // `digits` more beside the precision: a `%300d` is 300 bytes, not its first 127 (which were
    // all spaces), and a double is never cut off.
    let room = 128 + max(width ?? 0, (precision ?? 0) + digits)
    var buf = [CChar](repeating: 0, count: room)
    let k = withVaList([v]) { vsnprintf(&buf, room, spec, $0) }
    out.append(contentsOf: buf[0..<Int(max(0, min(Int(k), room - 1)))].map { UInt8(bitPattern: $0) })
}

/// A message without its format string: the arguments, space-separated (what can still be
/// matched when an archive lacks its UUIDText).
public func ulRenderArguments(_ args: [ULArgument], into out: inout [UInt8]) {
    var first = true
    for a in args {
        if case .precision = a { continue }
        if !first { out.append(UInt8(ascii: " ")) }
        first = false
        switch a {
        case .int(let v, let size):
            let s: Int64 = size == 4 ? Int64(Int32(truncatingIfNeeded: v)) : Int64(bitPattern: v)
            out.appendDecimal(s.magnitude, negative: s < 0)
        case .string(let s): out.append(contentsOf: s)
        case .bytes(let b): out.appendASCII("<"); out.appendDecimal(UInt64(b.count)); out.appendASCII(" bytes>")
        case .privateValue: out.appendASCII("<private>")
        case .null: out.appendASCII("(null)")
        case .precision: break
        }
    }
}

/// The value decoders castscope renders itself; others print the plain value.
enum ULDecoder { case none, bool, BOOL, errno, time_t }

/// The decoder named in a `{…}` annotation (privacy words and names ignored), from bytes.
func ulDecoder(_ a: UnsafeRawBufferPointer) -> ULDecoder {
    guard a.count > 0 else { return .none }
    var i = 0
    while i < a.count {
        while i < a.count && (a[i] == UInt8(ascii: " ") || a[i] == UInt8(ascii: ",")) { i += 1 }
        let s = i
        while i < a.count && a[i] != UInt8(ascii: ",") { i += 1 }
        var e = i
        while e > s && a[e - 1] == UInt8(ascii: " ") { e -= 1 }
        let token = UnsafeRawBufferPointer(rebasing: a[s..<e])
        func eq(_ word: StaticString) -> Bool {
            word.utf8CodeUnitCount == token.count && word.withUTF8Buffer { w in w.elementsEqual(token) }
        }
        if eq("bool") { return .bool }
        if eq("BOOL") { return .BOOL }
        if eq("errno") || eq("darwin.errno") { return .errno }
        if eq("time_t") { return .time_t }
    }
    return .none
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        var s = self[...]
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}

/// The bytes of a report as it is written: every writer appends here instead of building
/// `String`s piece by piece (a `String` append validates and may re-encode; these are plain
/// byte copies). ASCII and UTF-8 text goes in as it is; escaping for JSON is a table lookup
/// per byte; numbers and times are formatted straight into the buffer.
public struct OutputBuffer: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    public var count: Int { bytes.count }
    public var isEmpty: Bool { bytes.isEmpty }
    /// The text (one UTF-8 validation of the whole buffer).
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func removeAll(keepingCapacity: Bool = true) { bytes.removeAll(keepingCapacity: keepingCapacity) }

    @inline(__always) public mutating func byte(_ b: UInt8) { bytes.append(b) }

    /// A literal or any string's UTF-8 bytes (a native string's are contiguous: one copy).
    @inline(__always) public mutating func append(_ s: String) {
        var s = s
        s.withUTF8 { bytes.append(contentsOf: $0) }
    }

    public mutating func append(_ b: UnsafeRawBufferPointer) { bytes.append(contentsOf: b) }
    public mutating func append<S: Sequence>(contentsOf s: S) where S.Element == UInt8 { bytes.append(contentsOf: s) }

    public mutating func repeating(_ b: UInt8, count: Int) {
        guard count > 0 else { return }
        // One copy from a run of spaces (indentation, padding: nearly every call), not a
        // generic append of a repeated element.
        if b == 0x20 && count <= OutputBuffer.spaces.count {
            OutputBuffer.spaces.withUnsafeBytes { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            return
        }
        bytes.append(contentsOf: repeatElement(b, count: count))
    }

    private static let spaces = [UInt8](repeating: 0x20, count: 128)

    // MARK: numbers

    /// A decimal integer.
    public mutating func int(_ v: Int) {
        if v < 0 {
            byte(UInt8(ascii: "-"))
            // -Int.min does not fit: its magnitude as UInt.
            unsigned(UInt(bitPattern: v).magnitudeOfNegative)
        } else {
            unsigned(UInt(v))
        }
    }

    public mutating func unsigned(_ v: UInt) {
        if v < 10 { byte(0x30 + UInt8(v)); return }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: enough for 20 digits
        var n = v
        var k = 0
        withUnsafeMutableBytes(of: &digits) { d in
            while n > 0 {
                d[23 - k] = 0x30 + UInt8(n % 10)
                n /= 10
                k += 1
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: d[(24 - k)...]))
        }
    }

    /// `v` with at least `width` digits, zero-padded (non-negative values).
    public mutating func padded(_ v: Int, _ width: Int) {
        var digits = 1
        var p = 10
        while v >= p && digits < 19 { digits += 1; p = p &* 10 }
        if width > digits { repeating(0x30, count: width - digits) }
        unsigned(UInt(max(0, v)))
    }

    /// A fixed-point decimal, as `Fmt.decimal` writes it.
    public mutating func decimal(_ v: Double, _ places: Int) {
        // Values read from a log can be anything (`fps=inf`, `1e300`): Int(_:) would trap.
        guard v.isFinite else { append(v.isNaN ? "nan" : (v < 0 ? "-inf" : "inf")); return }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let r = (abs(v) * scale).rounded()
        guard r < 9e15 else { append("\(v)"); return }
        let whole = Int(r / scale)
        let frac = Int(r - Double(whole) * scale)
        if v < 0 && r != 0 { byte(UInt8(ascii: "-")) }
        int(whole)
        if places > 0 {
            byte(UInt8(ascii: "."))
            padded(frac, places)
        }
    }

    /// A duration as people read it: `850 µs`, `120 ms`, `3.9 s`, `2 m 5.0 s`, `1 h 04 m`
    /// (`Fmt.duration`).
    public mutating func duration(_ micros: Int64) {
        let us = micros == .min ? .max : abs(micros)
        if micros < 0 { byte(UInt8(ascii: "-")) }
        if us < 1_000 {
            int(Int(us))
            append(" µs")
        } else if us < 1_000_000 {
            int(Int(us / 1_000))
            append(" ms")
        } else if us < 60_000_000 {
            decimal(Double(us) / 1e6, 1)
            append(" s")
        } else if us / 1_000_000 < 3600 {
            int(Int(us / 60_000_000))
            append(" m ")
            decimal(Double(us % 60_000_000) / 1e6, 1)
            append(" s")
        } else {
            let s = us / 1_000_000
            int(Int(s / 3600))
            append(" h ")
            padded(Int(s / 60 % 60), 2)
            append(" m")
        }
    }

    /// `2021-12-23T02:56:59.980625+05:30`, as `Fmt.rfc3339` writes it; without the offset
    /// for `Fmt.unzoned` (a phone's local time whose zone nothing in the bundle gives).
    public mutating func rfc3339(_ micros: Int64, offset givenOffset: Int) {
        let unzoned = givenOffset == Fmt.unzoned
        let offset = unzoned ? 0 : givenOffset
        let local = micros + Int64(offset) * 1_000_000
        let secs = local.floorDiv(1_000_000)
        let us = Int(local - secs * 1_000_000)
        let days = Int(secs.floorDiv(86_400))
        let sod = Int(secs - Int64(days) * 86_400)
        let (y, m, d) = civilFromDays(days)
        if y < 0 { byte(UInt8(ascii: "-")) }
        padded(abs(y), 4)
        byte(UInt8(ascii: "-")); padded(m, 2)
        byte(UInt8(ascii: "-")); padded(d, 2)
        byte(UInt8(ascii: "T")); padded(sod / 3600, 2)
        byte(UInt8(ascii: ":")); padded(sod / 60 % 60, 2)
        byte(UInt8(ascii: ":")); padded(sod % 60, 2)
        byte(UInt8(ascii: ".")); padded(us, 6)
        if unzoned { return }
        byte(offset < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
        let ao = abs(offset)
        padded(ao / 3600, 2)
        byte(UInt8(ascii: ":")); padded(ao / 60 % 60, 2)
    }

    // MARK: escaping

    /// `s` as a JSON string literal, quotes included: `"`, `\` and control characters escaped
    /// (by a table: most bytes are copied in runs); other UTF-8 as it is.
    public mutating func jsonString(_ s: String) {
        var s = s
        s.withUTF8 { jsonString(UnsafeRawBufferPointer($0)) }
    }

    public mutating func jsonString(_ u: UnsafeRawBufferPointer) {
        // The table in hand for the loop (a static's accessor per byte otherwise).
        OutputBuffer.jsonEscape.withUnsafeBufferPointer { table in jsonString(u, table) }
    }

    private mutating func jsonString(_ u: UnsafeRawBufferPointer, _ table: UnsafeBufferPointer<UInt8>) {
        byte(UInt8(ascii: "\""))
        var runStart = 0
        var i = 0
        let n = u.count
        while i < n {
            let b = u[i]
            if table[Int(b)] == 0 { i += 1; continue }
            if i > runStart { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: u[runStart..<i])) }
            switch b {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            default:
                append("\\u00")
                byte(OutputBuffer.hex[Int(b >> 4)])
                byte(OutputBuffer.hex[Int(b & 0xF)])
            }
            i += 1
            runStart = i
        }
        if n > runStart { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: u[runStart..<n])) }
        byte(UInt8(ascii: "\""))
    }

    static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// 1 for the bytes a JSON string must escape: `"`, `\`, C0 controls and DEL.
    static let jsonEscape: [UInt8] = (0..<256).map { b in
        b < 0x20 || b == 0x22 || b == 0x5C || b == 0x7F ? 1 : 0
    }
}

extension UInt {
    /// The magnitude of a negative `Int` stored in this bit pattern.
    fileprivate var magnitudeOfNegative: UInt { ~self &+ 1 }
}

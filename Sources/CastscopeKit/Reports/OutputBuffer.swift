/// The bytes of a report as it is written: every writer appends here instead of building
/// `String`s piece by piece (a `String` append validates and may re-encode; these are plain
/// byte copies). ASCII and UTF-8 text goes in as it is; escaping for JSON is a table lookup
/// per byte; numbers and times are formatted straight into the buffer.
public struct OutputBuffer: Sendable {
    /// The bytes, in memory the buffer owns: an append is a bounds check and a copy (an
    /// `Array`'s `append(contentsOf:)` went through its generic path, ~100 instructions a call,
    /// and a report makes one per field). Copies of a buffer share it until one of them
    /// writes (`isKnownUniquelyReferenced`), as an array's do.
    final class Storage: @unchecked Sendable {
        var base: UnsafeMutablePointer<UInt8>
        var count = 0
        var capacity: Int

        init(capacity: Int) {
            self.capacity = max(capacity, 16)
            base = .allocate(capacity: self.capacity)
        }

        deinit { base.deallocate() }

        func copy(minimumCapacity: Int) -> Storage {
            let s = Storage(capacity: max(minimumCapacity, capacity))
            s.base.update(from: base, count: count)
            s.count = count
            return s
        }

        func grow(to needed: Int) {
            var c = capacity * 2
            while c < needed { c *= 2 }
            let b = UnsafeMutablePointer<UInt8>.allocate(capacity: c)
            b.update(from: base, count: count)
            base.deallocate()
            base = b
            capacity = c
        }
    }
    private var storage: Storage

    public init(capacity: Int = 0) { storage = Storage(capacity: capacity) }

    /// A copy of the bytes (`withUnsafeBytes` lends them without one).
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
    public var count: Int { storage.count }
    /// The bytes it has room for.
    var capacity: Int { storage.capacity }
    public var isEmpty: Bool { storage.count == 0 }
    /// The text (one UTF-8 validation of the whole buffer).
    public var string: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    public func withUnsafeBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: storage.base, count: storage.count))
    }

    public mutating func removeAll(keepingCapacity: Bool = true) {
        if keepingCapacity && isKnownUniquelyReferenced(&storage) {
            storage.count = 0
        } else {
            storage = Storage(capacity: keepingCapacity ? storage.capacity : 0)
        }
    }

    /// Room for `n` more bytes, written by the caller at the returned place (then `count`
    /// is moved on by `n`).
    @inline(__always) private mutating func room(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy(minimumCapacity: storage.count + n)
        } else if storage.count + n > storage.capacity {
            storage.grow(to: storage.count + n)
        }
        return storage.base + storage.count
    }

    /// `v`'s bytes as they lie in memory (the spill's fields, `SpillWriter`): one store, no
    /// array append.
    @inline(__always) mutating func rawValue<T: BitwiseCopyable>(_ v: T) {
        let n = MemoryLayout<T>.size
        UnsafeMutableRawPointer(room(n)).storeBytes(of: v, as: T.self)
        storage.count += n
    }

    /// Drops the first `n` bytes (what a file took before it took no more, `EventSpill`).
    mutating func removeFirst(_ n: Int) {
        let rest = withUnsafeBytes { OutputBuffer.copying(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer($0)[n...])) }
        self = rest
    }

    static func copying(_ b: UnsafeRawBufferPointer) -> OutputBuffer {
        var o = OutputBuffer(capacity: b.count)
        o.append(b)
        return o
    }

    /// Takes back the last byte written (there must be one).
    public mutating func dropLast() {
        precondition(storage.count > 0, "dropLast on an empty buffer")
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy(minimumCapacity: storage.count) }
        storage.count -= 1
    }

    @inline(__always) public mutating func byte(_ b: UInt8) {
        room(1).pointee = b
        storage.count += 1
    }

    /// A literal or any string's UTF-8 bytes (a native string's are contiguous: one copy).
    @inline(__always) public mutating func append(_ s: String) {
        var s = s
        s.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    public mutating func append(_ b: UnsafeRawBufferPointer) {
        let n = b.count
        guard n > 0, let from = b.baseAddress else { return }
        room(n).update(from: from.assumingMemoryBound(to: UInt8.self), count: n)
        storage.count += n
    }

    public mutating func append(_ s: StaticString) {
        s.withUTF8Buffer { append(UnsafeRawBufferPointer($0)) }
    }

    /// Another buffer's bytes.
    public mutating func append(_ other: OutputBuffer) {
        other.withUnsafeBytes { append(UnsafeRawBufferPointer($0)) }
    }

    /// The bytes of `u` in `range`.
    @inline(__always) mutating func append(_ u: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
        append(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: u[range])))
    }

    public mutating func append<S: Sequence>(contentsOf s: S) where S.Element == UInt8 {
        if let done: Void = s.withContiguousStorageIfAvailable({ append(UnsafeRawBufferPointer($0)) }) { return done }
        for b in s { byte(b) }
    }

    /// `,"k":` (without the comma before a container's first member) in one step: a key that
    /// needs no escaping (a literal of castscope's own; a byte at a time was five appends).
    public mutating func jsonKey(_ k: StaticString, comma: Bool) {
        k.withUTF8Buffer { key in
            let n = key.count, c = comma ? 1 : 0
            let p = room(n + 3 + c)
            if comma { p[0] = UInt8(ascii: ",") }
            p[c] = UInt8(ascii: "\"")
            if let from = key.baseAddress { (p + c + 1).update(from: from, count: n) }
            p[c + 1 + n] = UInt8(ascii: "\"")
            p[c + 2 + n] = UInt8(ascii: ":")
            storage.count += n + 3 + c
        }
    }

    /// What comes before a value in a pretty-printed JSON container: `,` (after a sibling), a
    /// newline and `indent` spaces, then `"key": ` for an object's member. In one step when the
    /// key needs no escaping (nearly always: the writers' own names); else the key is escaped.
    public mutating func jsonMemberPrefix(comma: Bool, newline: Bool, indent: Int, key: String?) {
        let lead = (comma ? 1 : 0) + (newline ? 1 : 0) + indent
        func writeLead(_ p: UnsafeMutablePointer<UInt8>) {
            var i = 0
            if comma { p[i] = UInt8(ascii: ","); i += 1 }
            if newline { p[i] = 0x0A; i += 1 }
            if indent > 0 { (p + i).update(repeating: 0x20, count: indent) }
        }
        guard var key else {
            if lead > 0 {
                writeLead(room(lead))
                storage.count += lead
            }
            return
        }
        key.withUTF8 { u in
            // Tested byte by byte, not looked up in `jsonEscape`: a key is a few bytes, and
            // reaching the table (a lazy global) cost more than the test, per member.
            guard !u.contains(where: Self.jsonEscapes) else {
                writeLead(room(lead))
                storage.count += lead
                jsonString(UnsafeRawBufferPointer(u))
                byte(UInt8(ascii: ":"))
                byte(0x20)
                return
            }
            let n = u.count
            let p = room(lead + n + 4)
            writeLead(p)
            p[lead] = UInt8(ascii: "\"")
            if n > 0, let from = u.baseAddress { (p + lead + 1).update(from: from, count: n) }
            p[lead + n + 1] = UInt8(ascii: "\"")
            p[lead + n + 2] = UInt8(ascii: ":")
            p[lead + n + 3] = 0x20
            storage.count += lead + n + 4
        }
    }

    public mutating func repeating(_ b: UInt8, count: Int) {
        guard count > 0 else { return }
        room(count).update(repeating: b, count: count)
        storage.count += count
    }

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
        // The digits counted first, then written in place from the last one.
        var len = 1
        var p: UInt = 10
        while len < 20 && v >= p {
            len += 1
            if len < 20 { p = p &* 10 }
        }
        let to = room(len)
        var n = v
        var i = len
        while i > 0 {
            i -= 1
            to[i] = 0x30 + UInt8(n % 10)
            n /= 10
        }
        storage.count += len
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
        } else if case let tenths = us / 100_000 + (us % 100_000 >= 50_000 ? 1 : 0), tenths < 36_000 {
            // (rounded to the tenth first: 599.994 s is 10 m 0.0 s, not 9 m 60.0 s)
            if tenths >= 600 {
                int(Int(tenths / 600))
                append(" m ")
            }
            int(Int(tenths % 600 / 10))
            byte(UInt8(ascii: "."))
            byte(UInt8(ascii: "0") + UInt8(tenths % 10))
            append(" s")
        } else {
            let s = max(us / 1_000_000, 3600)
            int(Int(s / 3600))
            append(" h ")
            padded(Int(s / 60 % 60), 2)
            append(" m")
        }
    }

    /// Seconds from a session's start, signed, to the millisecond: `+3.912` (`Fmt.relative`).
    public mutating func relative(_ micros: Int64) {
        byte(micros < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
        decimal(Double(micros.magnitude) / 1e6, 3)
    }

    /// `1 session`, `2 sessions`: a count and its noun, plural but for one.
    public mutating func counted(_ n: Int, _ noun: StaticString) {
        int(n)
        byte(0x20)
        append(noun)
        if n != 1 { byte(UInt8(ascii: "s")) }
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
        let ao = abs(offset)
        if (0...9999).contains(y) && ao / 3600 <= 99 {
            // Every field its fixed width: written in place, in one step (a JSON report has a
            // time per line).
            let len = unzoned ? 26 : 32
            let p = room(len)
            @inline(__always) func two(_ at: Int, _ v: Int) {
                p[at] = 0x30 + UInt8(v / 10)
                p[at + 1] = 0x30 + UInt8(v % 10)
            }
            two(0, y / 100); two(2, y % 100); p[4] = UInt8(ascii: "-")
            two(5, m); p[7] = UInt8(ascii: "-")
            two(8, d); p[10] = UInt8(ascii: "T")
            two(11, sod / 3600); p[13] = UInt8(ascii: ":")
            two(14, sod / 60 % 60); p[16] = UInt8(ascii: ":")
            two(17, sod % 60); p[19] = UInt8(ascii: ".")
            two(20, us / 10_000); two(22, us / 100 % 100); two(24, us % 100)
            if !unzoned {
                p[26] = offset < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+")
                two(27, ao / 3600); p[29] = UInt8(ascii: ":")
                two(30, ao / 60 % 60)
            }
            storage.count += len
            return
        }
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
        padded(ao / 3600, 2)
        byte(UInt8(ascii: ":")); padded(ao / 60 % 60, 2)
    }

    // MARK: escaping

    /// `s` as a JSON string, in a buffer of its own (written once, appended often).
    public static func jsonQuoted(_ s: String) -> OutputBuffer {
        var b = OutputBuffer()
        b.jsonString(s)
        return b
    }

    /// The same without its closing quote (what follows goes inside it: `path:line`).
    public static func jsonOpened(_ s: String) -> OutputBuffer {
        var b = jsonQuoted(s)
        b.dropLast()
        return b
    }

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
        // Nothing to escape (nearly every string): quotes and the bytes in one step.
        if Self.jsonClean(u, table) {
            let n = u.count
            let to = room(n + 2)
            to[0] = UInt8(ascii: "\"")
            if n > 0, let from = u.baseAddress { (to + 1).update(from: from.assumingMemoryBound(to: UInt8.self), count: n) }
            to[n + 1] = UInt8(ascii: "\"")
            storage.count += n + 2
            return
        }
        byte(UInt8(ascii: "\""))
        jsonEscaped(u, table)
        byte(UInt8(ascii: "\""))
    }

    /// `s` escaped as in a JSON string, without its quotes (a string written in pieces).
    public mutating func jsonStringBody(_ s: String) {
        var s = s
        s.withUTF8 { u in
            OutputBuffer.jsonEscape.withUnsafeBufferPointer { table in jsonEscaped(UnsafeRawBufferPointer(u), table) }
        }
    }

    private mutating func jsonEscaped(_ u: UnsafeRawBufferPointer, _ table: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        var i = 0
        let n = u.count
        while i < n {
            let b = u[i]
            if table[Int(b)] == 0 { i += 1; continue }
            if i > runStart { append(UnsafeRawBufferPointer(rebasing: u[runStart..<i])) }
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
        if n > runStart { append(UnsafeRawBufferPointer(rebasing: u[runStart..<n])) }
    }

    static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Whether `u` holds no byte a JSON string escapes (`table` is `jsonEscape`).
    @inline(__always) static func jsonClean(_ u: UnsafeRawBufferPointer, _ table: UnsafeBufferPointer<UInt8>) -> Bool {
        for b in u where table[Int(b)] != 0 { return false }
        return true
    }

    /// Whether a JSON string must escape `b`: `"`, `\`, C0 controls and DEL.
    @inline(__always) static func jsonEscapes(_ b: UInt8) -> Bool { b < 0x20 || b == 0x22 || b == 0x5C || b == 0x7F }

    /// `jsonEscapes` as a table: 1 for the bytes a JSON string must escape.
    static let jsonEscape: [UInt8] = (0...255).map { jsonEscapes(UInt8($0)) ? 1 : 0 }
}

extension UInt {
    /// The magnitude of a negative `Int` stored in this bit pattern.
    fileprivate var magnitudeOfNegative: UInt { ~self &+ 1 }
}

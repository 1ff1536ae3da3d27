/// Control-character hygiene for everything castscope writes to a terminal (or to a file a
/// terminal will `cat`): the text and Markdown reports, `tail`'s lines, and the error lines on
/// stderr. A log message or a file name is input; it may hold `ESC ] 0 ; title BEL`, `ESC [ 2 J`,
/// an OSC-8 link, a DCS query, a backspace or a carriage return that would rewrite what the
/// reader sees. Each such character is shown escaped instead, as a C programmer would write it:
/// `\x1b`, `\r`, `\b`; C1 controls and the bidirectional overrides (which reorder the text shown
/// around them, "Trojan Source") as `\u{9b}`, `\u{202e}`.
///
/// Works on the UTF-8 bytes; a string with nothing to escape (nearly all of them) is returned
/// as it is after one pass over its bytes.
public enum Sanitize {
    /// `s` with every control character escaped; newlines and tabs are kept unless `oneLine`.
    /// With `styles`, the colour sequences the reports write themselves (SGR: `ESC [` digits and
    /// `;` `m`, with the harmless parameters only, and `ESC [ K`) are kept, so that a coloured
    /// report can be sanitized as a whole; anything else that starts with ESC is escaped.
    public static func terminal(_ s: String, oneLine: Bool = false, styles: Bool = false) -> String {
        var s = s
        return s.withUTF8 { bytes in
            guard needsEscaping(bytes, oneLine: oneLine) else { return nil }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + 16)
            escape(bytes, oneLine: oneLine, styles: styles, into: &out)
            return String(decoding: out, as: UTF8.self)
        } ?? s
    }

    /// The same on bytes, appended to `out` (a report written as bytes is sanitized on its way
    /// into the output, without a `String`).
    public static func terminal(_ bytes: UnsafeBufferPointer<UInt8>, oneLine: Bool = false, styles: Bool = false,
                                into out: inout [UInt8])
    {
        guard needsEscaping(bytes, oneLine: oneLine) else { out.append(contentsOf: bytes); return }
        escape(bytes, oneLine: oneLine, styles: styles, into: &out)
    }

    /// One line (for stderr, and names): `\n` is escaped too.
    public static func line(_ s: String) -> String { terminal(s, oneLine: true) }

    /// Whether `escape` would change anything: exactly its tests, so that text with `–`, `━`
    /// or `…` in it (E2 lead bytes that are not bidirectional controls: every session block)
    /// is copied as it is instead of going through `escape` byte by byte.
    static func needsEscaping(_ b: UnsafeBufferPointer<UInt8>, oneLine: Bool) -> Bool {
        let n = b.count
        guard let base = UnsafeRawPointer(b.baseAddress) else { return false }
        var i = 0
        while i < n {
            // Eight printable ASCII bytes at a time (no byte under 0x20, none 0x7F or over).
            if i &+ 8 <= n {
                let w = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
                let under20 = (w &- ones &* 0x20) & ~w & highs
                let x7F = w ^ (ones &* 0x7F)
                let is7F = (x7F &- ones) & ~x7F & highs
                if (w & highs) | under20 | is7F == 0 {
                    i &+= 8
                    continue
                }
            }
            let c = b[i]
            i += 1
            if c < 0x20 {
                if c == 0x09 || (c == 0x0A && !oneLine) { continue }
                return true
            }
            if c == 0x7F || hiddenControl(b, at: i - 1) != nil { return true }
        }
        return false
    }

    /// The C1 control or bidirectional control that starts at `i` (its scalar and length in
    /// bytes), if one does: C1 controls are U+0080–U+009F (UTF-8 C2 80–C2 9F); U+2028 and
    /// U+2029, the line and paragraph separators; bidirectional
    /// embeddings, overrides and isolates U+202A–U+202E (E2 80 AA–AE) and U+2066–U+2069
    /// (E2 81 A6–A9).
    @inline(__always)
    static func hiddenControl(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> (scalar: UInt32, length: Int)? {
        let c = b[i], n = b.count
        if c == 0xC2, i + 1 < n, b[i + 1] >= 0x80, b[i + 1] <= 0x9F { return (UInt32(b[i + 1]), 2) }
        if c == 0xE2, i + 2 < n {
            let c1 = b[i + 1], c2 = b[i + 2]
            // (and the line and paragraph separators, U+2028 and U+2029 (E2 80 A8–A9), which some
            // terminals and every Markdown viewer break a line at, as NEL beside them was)
            if (c1 == 0x80 && c2 >= 0xA8 && c2 <= 0xAE) || (c1 == 0x81 && c2 >= 0xA6 && c2 <= 0xA9) {
                return (0x2000 | (UInt32(c1 & 0x0F) << 6) | UInt32(c2 & 0x3F), 3)
            }
        }
        return nil
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    static func escape(_ b: UnsafeBufferPointer<UInt8>, oneLine: Bool, styles: Bool, into out: inout [UInt8]) {
        func byteEscape(_ c: UInt8) {
            switch c {
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x08: out += [0x5C, UInt8(ascii: "b")]
            default: out += [0x5C, UInt8(ascii: "x"), hex[Int(c >> 4)], hex[Int(c & 15)]]
            }
        }
        func unicodeEscape(_ scalar: UInt32) {
            out += Array("\\u{\(String(scalar, radix: 16))}".utf8)
        }
        var i = 0
        let n = b.count
        while i < n {
            let c = b[i]
            if c == 0x1B, styles, let len = ownStyleLength(b, at: i) {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: b[i..<(i + len)]))
                i += len
                continue
            }
            if c < 0x20 {
                if c == 0x09 || (c == 0x0A && !oneLine) { out.append(c) } else { byteEscape(c) }
                i += 1
                continue
            }
            if c == 0x7F { byteEscape(c); i += 1; continue }
            if let hidden = hiddenControl(b, at: i) {
                unicodeEscape(hidden.scalar)
                i += hidden.length
                continue
            }
            // Plain bytes: copied in runs up to the next byte that may need escaping.
            var j = i + 1
            while j < n {
                let d = b[j]
                if d < 0x20 || d == 0x7F || d == 0xC2 || d == 0xE2 { break }
                j += 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[i..<j]))
            i = j
        }
    }

    /// The length of the sequence at `i` when it is one the reports write themselves: `ESC [ K`,
    /// or SGR (`ESC [ p ; p m`) whose parameters are all plain styles and colours (reset, bold,
    /// dim, italic, underline, normal intensity, foreground colours): never conceal, blink,
    /// reverse, or anything that is not SGR.
    static func ownStyleLength(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> Int? {
        guard i + 2 < b.count, b[i + 1] == UInt8(ascii: "[") else { return nil }
        if b[i + 2] == UInt8(ascii: "K") { return 3 }
        var j = i + 2
        var param = 0
        var digits = 0
        func allowed(_ p: Int) -> Bool {
            p <= 4 || p == 22 || p == 23 || p == 24 || p == 39 || (30...37).contains(p) || (90...97).contains(p)
        }
        while j < b.count, j - i < 24 {
            let c = b[j]
            if c >= 0x30 && c <= 0x39 {
                param = param * 10 + Int(c - 0x30)
                digits += 1
                if digits > 3 { return nil }
            } else if c == UInt8(ascii: ";") || c == UInt8(ascii: "m") {
                guard digits > 0, allowed(param) else { return nil }
                if c == UInt8(ascii: "m") { return j - i + 1 }
                param = 0
                digits = 0
            } else {
                return nil
            }
            j += 1
        }
        return nil
    }
}

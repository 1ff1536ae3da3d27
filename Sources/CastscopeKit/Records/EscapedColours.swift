#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A terminal's colour codes kept in a message: raw (`ESC[33m`, a service logging in colour
/// into its journal or `docker logs`), or as rsyslog escapes control characters in what it
/// stores (`#033[33m[WARN]#033[0m HTTPS webserver disabled`, janus-gateway#304). Matching and
/// `show` see the message without them, and a coloured level (zap's `CapitalColorLevelEncoder`:
/// `ESC[31mERROR ESC[0m`) is read as its word. (`cat -v`'s caret form `^[[33m` is not looked
/// for: a second scan of every message for a form no real paste showed.)
enum EscapedColours {
    /// Whether `bytes` holds a raw escape or a written-out colour code.
    static func present(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
        if memchr(base, 0x1B, bytes.count) != nil { return true }
        return written(bytes)
    }

    /// A written-out code is in `bytes` (at a `#`).
    private static func written(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let base = bytes.baseAddress!
        var from = 0
        while from < bytes.count, let hit = memchr(base + from, Int32(UInt8(ascii: "#")), bytes.count - from) {
            let i = base.distance(to: UnsafeRawPointer(hit))
            if writtenLength(bytes, at: i) != nil { return true }
            from = i + 1
        }
        return false
    }

    /// The length of rsyslog's `#033[…m` at `i` (SGR only: digits and `;` before the `m`).
    static func writtenLength(_ p: UnsafeRawBufferPointer, at i: Int) -> Int? {
        let n = p.count
        var k: Int
        if p[i] == UInt8(ascii: "#"), i + 4 < n, p[i + 1] == UInt8(ascii: "0"), p[i + 2] == UInt8(ascii: "3"), p[i + 3] == UInt8(ascii: "3"),
            p[i + 4] == UInt8(ascii: "[")
        {
            k = i + 5
        } else {
            return nil
        }
        while k < n, k - i < 32, p[k] >= 0x30 && p[k] <= 0x39 || p[k] == UInt8(ascii: ";") { k += 1 }
        guard k < n, p[k] == UInt8(ascii: "m") else { return nil }
        return k + 1 - i
    }

    /// `bytes` without its escape sequences and written-out colour codes.
    static func stripped(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        let raw = bytes.baseAddress.map { memchr($0, 0x1B, bytes.count) != nil } ?? false
        let text = raw ? TerminalEscapeSource.stripped(Array(bytes)) : Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        text.withUnsafeBytes { p in
            var i = 0
            while i < p.count {
                if p[i] == UInt8(ascii: "#"), let n = writtenLength(p, at: i) {
                    i += n
                    continue
                }
                out.append(p[i])
                i += 1
            }
        }
        return out
    }

    /// `bytes` without its colour codes only (SGR: `ESC[…m` and rsyslog's `#033[…m`), for
    /// `show`: any other escape sequence stays, for the report's own escaping to show (a
    /// hostile title-setting OSC is shown escaped, not hidden).
    static func uncoloured(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            if b == 0x1B, i + 1 < n, bytes[i + 1] == UInt8(ascii: "[") {
                var k = i + 2
                while k < n, k - i < 32, bytes[k] >= 0x30 && bytes[k] <= 0x39 || bytes[k] == UInt8(ascii: ";") { k += 1 }
                if k < n, bytes[k] == UInt8(ascii: "m") {
                    i = k + 1
                    continue
                }
            } else if b == UInt8(ascii: "#"), let len = writtenLength(bytes, at: i) {
                i += len
                continue
            }
            out.append(b)
            i += 1
        }
        return out
    }

    /// `text` without its colour codes (`uncoloured`), as a string.
    static func uncoloured(_ text: String) -> String {
        var t = text
        return t.withUTF8 { u in
            let p = UnsafeRawBufferPointer(u)
            return present(p) ? String(decoding: uncoloured(p), as: UTF8.self) : text
        }
    }

    /// `text` without them, as a string.
    static func stripped(_ text: String) -> String {
        var t = text
        return t.withUTF8 { u in
            let p = UnsafeRawBufferPointer(u)
            return present(p) ? String(decoding: stripped(p), as: UTF8.self) : text
        }
    }
}

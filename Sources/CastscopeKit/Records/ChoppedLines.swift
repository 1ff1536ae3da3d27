#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A paste from a pager that cut its long lines at the screen's edge instead of wrapping them:
/// `less -S`, which `journalctl` and `systemctl status` page through, ends each cut line with
/// `>` at the last column (`… session 0b7f… accepted peer=iPhone14,2 room>`; livekit#3076's
/// `systemctl status`). What followed is lost — a relay line's frames or close reason — so the
/// reader is told, once per file, with the way to get whole lines.
enum ChoppedLines {
    /// The note for a file whose first lines show it, or nil: at least three lines end in `>`
    /// at one column (60 to 400: a terminal's width), with different texts, and that column is
    /// the widest any line reaches.
    static func note(head: UnsafeRawBufferPointer) -> String? {
        // (first the cheap count: three lines ending in `>`, or no column is looked at)
        var ending = 0
        if let base = head.baseAddress {
            var at = 0
            while at < head.count, let hit = memchr(base + at, 0x0A, head.count - at) {
                var e = base.distance(to: UnsafeRawPointer(hit))
                at = e + 1
                if e > 0, head[e - 1] == 0x0D { e -= 1 }
                if e > 0, head[e - 1] == UInt8(ascii: ">") { ending += 1 }
            }
        }
        guard ending >= 3 else { return nil }
        var cut = 0
        var width = 0
        var widest = 0
        var lines = 0
        var ends = Set<[UInt8]>()
        var start = 0
        for i in 0..<head.count where head[i] == 0x0A {
            var e = i
            if e > start, head[e - 1] == 0x0D { e -= 1 }
            let line = UnsafeRawBufferPointer(rebasing: head[start..<e])
            start = i + 1
            lines += 1
            let w = HardWrapSource.columns(line)
            widest = max(widest, w)
            guard w >= 60, w <= 400, line.last == UInt8(ascii: ">") else { continue }
            if width == 0 { width = w }
            guard w == width else { continue }
            cut += 1
            if ends.count < 4 { ends.insert(Array(line.suffix(12))) }
        }
        guard cut >= 3, ends.count >= 2, widest == width else { return nil }
        return "\(cut) of the first \(lines) lines end in `>` at column \(width): a pager cut them there (less -S, as journalctl and systemctl page their output) and what followed is lost; pass --no-pager (or -o export, -o json) for whole lines"
    }
}

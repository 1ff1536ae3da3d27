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
        guard let base = head.baseAddress else { return nil }
        // The lines, as ranges, without their CR: one pass with memchr. (Apple's lines often
        // end in `<private>`: the columns are measured only for lines ending in `>`, and a
        // line's columns only when its bytes could pass the candidate column.)
        var ranges: [Range<Int>] = []
        var at = 0
        while at < head.count, let hit = memchr(base + at, 0x0A, head.count - at) {
            var e = base.distance(to: UnsafeRawPointer(hit))
            let s = at
            at = e + 1
            if e > s, head[e - 1] == 0x0D { e -= 1 }
            ranges.append(s..<e)
        }
        var byWidth: [Int: (count: Int, ends: Set<[UInt8]>)] = [:]
        for r in ranges where r.count >= 60 && head[r.upperBound - 1] == UInt8(ascii: ">") {
            let w = HardWrapSource.columns(UnsafeRawBufferPointer(rebasing: head[r]))
            guard w >= 60, w <= 400 else { continue }
            var entry = byWidth[w] ?? (0, [])
            entry.count += 1
            if entry.ends.count < 4 { entry.ends.insert(Array(head[r].suffix(12))) }
            byWidth[w] = entry
        }
        // The column most cut lines end at; no line reaches past it.
        guard let (width, entry) = byWidth.max(by: { $0.value.count < $1.value.count }), entry.count >= 3, entry.ends.count >= 2,
            !ranges.contains(where: { $0.count > width && HardWrapSource.columns(UnsafeRawBufferPointer(rebasing: head[$0])) > width })
        else { return nil }
        let cut = entry.count
        let lines = ranges.count
        return "\(cut) of the first \(lines) lines end in `>` at column \(width): a pager cut them there (less -S, as journalctl and systemctl page their output) and what followed is lost; pass --no-pager (or -o export, -o json) for whole lines"
    }
}

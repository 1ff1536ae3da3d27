/// A timestamp as written in a log line: parts may be missing (no year, no date, no zone).
/// Parsed by hand from bytes; turned into an instant by `FileTimeResolver` once the bundle says
/// which date and zone to assume.
public struct ParsedTime: Sendable, Hashable {
    // Stored compactly (32 bytes instead of 80: every recognized line carries one until its
    // time is resolved); the parts read and write as `Int`, clamped to what the fields hold.
    // (The widest first and the bytes last: 27 bytes, so that an optional one is 28, not 33.)
    private var epoch: Int64 = 0
    private var y: Int32 = 0
    private var sod: Int32 = 0
    private var us: Int32 = 0
    private var off: Int32 = 0
    private var mo: UInt8 = 0
    private var d: UInt8 = 0
    private var flags: UInt8 = 0

    private static let yearFlag: UInt8 = 1, dateFlag: UInt8 = 2, offsetFlag: UInt8 = 4, swappedFlag: UInt8 = 8,
        epochFlag: UInt8 = 16, sinceBootFlag: UInt8 = 32, floorFlag: UInt8 = 64, ceilingFlag: UInt8 = 128

    private func flag(_ f: UInt8) -> Bool { flags & f != 0 }
    private mutating func set(_ f: UInt8, _ on: Bool) { flags = on ? flags | f : flags & ~f }

    /// A whole date read (year, month and day): the three ISO readers' one way to say so.
    @inline(__always)
    mutating func setDate(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
        hasYear = true
        hasDate = true
    }

    public var year: Int { get { Int(y) } set { y = Int32(clamping: newValue) } }
    public var month: Int { get { Int(mo) } set { mo = UInt8(clamping: newValue) } }
    public var day: Int { get { Int(d) } set { d = UInt8(clamping: newValue) } }
    public var hasYear: Bool { get { flag(Self.yearFlag) } set { set(Self.yearFlag, newValue) } }
    public var hasDate: Bool { get { flag(Self.dateFlag) } set { set(Self.dateFlag, newValue) } }
    /// Seconds since midnight and the sub-second part in microseconds.
    public var secondOfDay: Int { get { Int(sod) } set { sod = Int32(clamping: newValue) } }
    public var micro: Int { get { Int(us) } set { us = Int32(clamping: newValue) } }
    /// Seconds east of UTC, when the line says.
    public var offset: Int? {
        get { flag(Self.offsetFlag) ? Int(off) : nil }
        set {
            off = Int32(clamping: newValue ?? 0)
            set(Self.offsetFlag, newValue != nil)
        }
    }
    /// Set when the line had day and month swapped (`yyyy-dd-MM`, seen in HaishinKit's logger).
    public var swappedDayMonth: Bool { get { flag(Self.swappedFlag) } set { set(Self.swappedFlag, newValue) } }
    /// Seconds since boot, not a time of day (journalctl `-o short-monotonic`): kept in
    /// `secondOfDay` (which may then pass a day) and placed like a time without a date.
    public var sinceBoot: Bool { get { flag(Self.sinceBootFlag) } set { set(Self.sinceBootFlag, newValue) } }
    /// A time that bounds the lines it dates, not one of them: from below (where a journal
    /// begins, `systemctl status`'s `Active: … since`) or from above (where it ends). A year-less
    /// line takes the earliest year not before a floor, the latest not after a ceiling.
    public var isFloor: Bool { get { flag(Self.floorFlag) } set { set(Self.floorFlag, newValue) } }
    public var isCeiling: Bool { get { flag(Self.ceilingFlag) } set { set(Self.ceilingFlag, newValue) } }
    /// A complete instant (µs since the epoch) given directly (journald timestamps).
    public var epochMicros: Int64? {
        get { flag(Self.epochFlag) ? epoch : nil }
        set {
            epoch = newValue ?? 0
            set(Self.epochFlag, newValue != nil)
        }
    }

    public init() {}

    /// A date from a writer that always puts the day first (`yyyy-dd-MM`): swapped back unless
    /// the scan already did (the middle field was above 12) or the result would be no date.
    mutating func swapDayMonth() {
        guard hasDate, !swappedDayMonth, day <= 12 else { return }
        // 12-12 reads the same either way: nothing was swapped, nothing to note.
        guard d != mo else { return }
        (mo, d) = (d, mo)
        swappedDayMonth = true
    }

    /// The instants a timestamp can name: years 0000 to 9999, as a written date can. A damaged
    /// journal's or JSON line's number is held to them, so that zones, clock offsets and
    /// differences added to it cannot overflow.
    static let epochRange: ClosedRange<Int64> = -62_167_219_200_000_000...253_402_300_799_999_999

    public static func epoch(micros: Int64) -> ParsedTime {
        var t = ParsedTime()
        t.epochMicros = min(max(micros, epochRange.lowerBound), epochRange.upperBound)
        t.hasYear = true
        t.hasDate = true
        t.offset = 0
        return t
    }

    /// The instant, given the date and zone to assume for the parts the line lacks.
    public func instant(defaultYear: Int, defaultMonth: Int, defaultDay: Int, defaultOffset: Int) -> Int64 {
        if let epochMicros { return epochMicros }
        let y = hasYear ? year : defaultYear
        let m = hasDate ? month : defaultMonth
        let d = hasDate ? day : defaultDay
        let days = Int64(daysFromCivil(y, m, d))
        let seconds = days * 86_400 + Int64(secondOfDay) - Int64(offset ?? defaultOffset)
        return seconds * 1_000_000 + Int64(micro)
    }
}

/// Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's algorithm).
public func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
    let y = m <= 2 ? y0 - 1 : y0
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let mp = (m + 9) % 12
    let doy = (153 * mp + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
}

/// (year, month, day) for days since 1970-01-01.
public func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
    let z = z0 + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
    let y = yoe + era * 400
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (m <= 2 ? y + 1 : y, m, d)
}

@inline(__always) func isDigit(_ b: UInt8) -> Bool { b &- 0x30 < 10 }
@inline(__always) func isLetter(_ b: UInt8) -> Bool { (b | 0x20) &- 0x61 < 26 }

/// Hand scanners over bytes. Each returns the index just past the timestamp, or nil.
enum TimeScan {
    @inline(__always)
    static func digits(_ p: UnsafeRawBufferPointer, _ i: Int, _ n: Int) -> Int? {
        guard i + n <= p.count else { return nil }
        var v = 0
        for k in i..<(i + n) {
            let b = p[k]
            guard isDigit(b) else { return nil }
            v = v * 10 + Int(b &- 0x30)
        }
        return v
    }

    /// `.ffffff` fraction → microseconds; returns new index.
    static func fraction(_ p: UnsafeRawBufferPointer, _ i0: Int, into t: inout ParsedTime) -> Int {
        var i = i0
        guard i < p.count, p[i] == UInt8(ascii: ".") || p[i] == UInt8(ascii: ",") else { return i }
        i += 1
        var micro = 0
        var n = 0
        while i < p.count, isDigit(p[i]) {
            if n < 6 { micro = micro * 10 + Int(p[i] &- 0x30) }
            n += 1
            i += 1
        }
        if n == 0 { return i0 }
        var k = n
        while k < 6 { micro *= 10; k += 1 }
        t.micro = micro
        return i
    }

    /// `Z`, `+HHMM`, `+HH:MM`, `-HH` after a time; returns new index.
    static func zone(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime) -> Int {
        guard i < p.count else { return i }
        if p[i] == UInt8(ascii: "Z") { t.offset = 0; return i + 1 }
        guard p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-") else { return i }
        let sign = p[i] == UInt8(ascii: "-") ? -1 : 1
        guard let hh = digits(p, i + 1, 2) else { return i }
        var j = i + 3
        var mm = 0
        if j < p.count, p[j] == UInt8(ascii: ":"), let m = digits(p, j + 1, 2) {
            mm = m
            j += 3
        } else if let m = digits(p, j, 2) {
            mm = m
            j += 2
        }
        // No zone is further than 14 hours from UTC (ISO 8601 allows 18): `+9999` is not one.
        guard hh <= 18, mm <= 59 else { return i }
        t.offset = sign * (hh * 3600 + mm * 60)
        return j
    }

    static func clock(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime) -> Int? {
        guard let h = digits(p, i, 2), i + 2 < p.count, p[i + 2] == UInt8(ascii: ":"),
            let m = digits(p, i + 3, 2), i + 5 < p.count, p[i + 5] == UInt8(ascii: ":"),
            let s = digits(p, i + 6, 2), h < 24, m < 60, s < 61
        else { return nil }
        t.secondOfDay = h * 3600 + m * 60 + s
        return fraction(p, i + 8, into: &t)
    }

    /// `YYYY-MM-DD[ T]HH:MM:SS[.f][Z|±HH[:]MM]`; with `slashes`, also `YYYY/MM/DD …` (Go's
    /// `log`, nginx's error log: the `isoany` field only, as a weekday-less `-o verbose` header
    /// would otherwise read `2022/02/10 14:04:47 INF [RTMP]` as a date, a time and a zone).
    static func iso(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime, slashes: Bool = false) -> Int? {
        if let end = isoCommon(p, i, into: &t) { return end }
        return isoGeneral(p, i, into: &t, slashes: slashes)
    }

    /// `iso` part by part: every form it reads.
    static func isoGeneral(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime, slashes: Bool = false) -> Int? {
        guard let y = digits(p, i, 4), i + 10 < p.count,
            p[i + 4] == UInt8(ascii: "-") || (slashes && p[i + 4] == UInt8(ascii: "/")),
            let mo = digits(p, i + 5, 2), p[i + 7] == p[i + 4], let d = digits(p, i + 8, 2),
            p[i + 10] == UInt8(ascii: " ") || p[i + 10] == UInt8(ascii: "T")
        else { return nil }
        var month = mo
        var day = d
        if month > 12 && day <= 12 && month <= 31 {
            swap(&month, &day)
            t.swappedDayMonth = true
        }
        guard month >= 1, month <= 12, day >= 1, day <= 31 else { return nil }
        t.setDate(year: y, month: month, day: day)
        let twoDigits = clock(p, i + 11, into: &t)
        guard var j = twoDigits ?? shortHourClock(p, i + 11, into: &t) else { return nil }
        // A 12-hour clock's ` AM`/` PM` after the time: HaishinKit's Logboard formats its time
        // in the phone's locale, and an iPhone set to 12-hour time (the US default) writes
        // `2021-04-02 3:17:46.675 PM` (HaishinKit#823: every time was lost). The one-digit hour
        // is read only with it.
        // (after a 24-hour time, `AM`/`PM` is the message's: left alone)
        let hour = t.secondOfDay / 3600
        if j + 2 < p.count, p[j] == 0x20, p[j + 1] == UInt8(ascii: "A") || p[j + 1] == UInt8(ascii: "P"), p[j + 2] == UInt8(ascii: "M"),
            j + 3 == p.count || p[j + 3] == 0x20, hour >= 1, hour <= 12
        {
            t.secondOfDay = Self.hour(hour, pm: p[j + 1] == UInt8(ascii: "P")) * 3600 + t.secondOfDay % 3600
            j += 3
        } else if twoDigits == nil {
            return nil
        }
        return zone(p, j, into: &t)
    }

    /// `iso`'s usual case in one pass, `YYYY-MM-DD HH:MM:SS` (or `T`) with its month and day in
    /// order, then `.f` and a zone: the date's and the clock's bytes tested as two eight-byte
    /// words, no call per part (every line of an Apple layout has one: ~580 instructions a line
    /// went there). Anything else (a swapped day and month, a one-digit hour, ` AM`/` PM` after
    /// the clock, slashes) is nil here and read by `iso`'s general path; `t` is then as it was.
    @inline(__always)
    static func isoCommon(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime) -> Int? {
        let n = p.count
        guard i >= 0, i + 19 <= n, let base = p.baseAddress else { return nil }
        @inline(__always) func byte(_ k: Int) -> UInt8 { base.load(fromByteOffset: k, as: UInt8.self) }
        // Bytes 0–7 `YYYY-MM-` and 11–18 `HH:MM:SS`, little-endian: byte k in bits 8k…8k+7.
        let a = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        let c = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i + 11, as: UInt64.self))
        let d1 = byte(i + 8) &- 0x30, d2 = byte(i + 9) &- 0x30, sep = byte(i + 10)
        guard a & 0xFF00_00FF_0000_0000 == 0x2D00_002D_0000_0000, c & 0x0000_FF00_00FF_0000 == 0x0000_3A00_003A_0000,
            Self.digitBytes(a, 0x00FF_FF00_FFFF_FFFF), Self.digitBytes(c, 0xFFFF_00FF_FF00_FFFF),
            d1 < 10, d2 < 10, sep == 0x20 || sep == UInt8(ascii: "T")
        else { return nil }
        @inline(__always) func digit(_ w: UInt64, _ k: Int) -> Int { Int(truncatingIfNeeded: (w >> UInt64(8 * k)) & 0x0F) }
        let year = digit(a, 0) * 1000 + digit(a, 1) * 100 + digit(a, 2) * 10 + digit(a, 3)
        let month = digit(a, 5) * 10 + digit(a, 6)
        let day = Int(d1) * 10 + Int(d2)
        let hour = digit(c, 0) * 10 + digit(c, 1)
        let minute = digit(c, 3) * 10 + digit(c, 4)
        let second = digit(c, 6) * 10 + digit(c, 7)
        guard month >= 1, month <= 12, day >= 1, day <= 31, hour < 24, minute < 60, second < 61 else { return nil }
        // The fraction as `fraction` reads it: its first six digits, the rest passed over.
        var j = i + 19
        var micro = -1
        if j < n, byte(j) == UInt8(ascii: ".") || byte(j) == UInt8(ascii: ",") {
            var k = j + 1
            var v = 0
            var count = 0
            while k < n {
                let b = byte(k) &- 0x30
                guard b < 10 else { break }
                if count < 6 { v = v * 10 + Int(b) }
                count += 1
                k += 1
            }
            if count > 0 {
                while count < 6 { v *= 10; count += 1 }
                micro = v
                j = k
            }
        }
        // ` AM`/` PM` after a clock that could be a 12-hour one: the general path's.
        if j + 2 < n, hour >= 1, hour <= 12, byte(j) == 0x20, byte(j + 1) == UInt8(ascii: "A") || byte(j + 1) == UInt8(ascii: "P"),
            byte(j + 2) == UInt8(ascii: "M")
        {
            return nil
        }
        t.setDate(year: year, month: month, day: day)
        t.secondOfDay = hour * 3600 + minute * 60 + second
        if micro >= 0 { t.micro = micro }
        return zone(p, j, into: &t)
    }

    /// Whether every byte of `w` that `mask` selects is an ASCII digit.
    @inline(__always) private static func digitBytes(_ w: UInt64, _ mask: UInt64) -> Bool {
        // The high nibble 3, and the low one below 10 (adding 6 to it carries out of it from 10).
        let m = w & mask
        guard m & 0xF0F0_F0F0_F0F0_F0F0 == 0x3030_3030_3030_3030 & mask else { return false }
        return ((m & 0x0F0F_0F0F_0F0F_0F0F) &+ (0x0606_0606_0606_0606 & mask)) & 0xF0F0_F0F0_F0F0_F0F0 == 0
    }

    /// A 12-hour clock's hour (1–12) with its AM or PM, on a 24-hour clock.
    static func hour(_ h: Int, pm: Bool) -> Int { h % 12 + (pm ? 12 : 0) }

    /// `H:MM:SS[.f]` with a one-digit hour (a 12-hour clock's).
    private static func shortHourClock(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime) -> Int? {
        guard let h = digits(p, i, 1), i + 1 < p.count, p[i + 1] == UInt8(ascii: ":"),
            let m = digits(p, i + 2, 2), i + 4 < p.count, p[i + 4] == UInt8(ascii: ":"),
            let s = digits(p, i + 5, 2), m < 60, s < 61
        else { return nil }
        t.secondOfDay = h * 3600 + m * 60 + s
        return fraction(p, i + 7, into: &t)
    }

    static let months: [String] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    /// Each month's three bytes as one number (`month(_:_:_:)`, the skimmer's probe).
    static let monthCodes: [UInt32] = months.map { m in
        let b = Array(m.utf8)
        return UInt32(b[0]) << 16 | UInt32(b[1]) << 8 | UInt32(b[2])
    }

    /// The month (1–12) English abbreviates as these three bytes, or 0.
    @inline(__always) static func month(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8) -> Int {
        let v = UInt32(b0) << 16 | UInt32(b1) << 8 | UInt32(b2)
        return (monthCodes.firstIndex(of: v) ?? -1) + 1
    }

    /// `Mmm dd HH:MM:SS[.f]` with the day padded by a space or a zero (syslog, journalctl short).
    static func bsd(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime) -> Int? {
        guard i + 15 <= p.count, p[i + 3] == UInt8(ascii: " ") else { return nil }
        let month = month(p[i], p[i + 1], p[i + 2])
        guard month > 0 else { return nil }
        return dayAndClock(p, i + 3, month: month, into: &t)
    }

    /// ` dd HH:MM:SS[.f]` after a month's name that ends at `m`; also ` d HH:MM:SS`, the day's
    /// padding space lost (a web page or forum collapses runs of spaces: `Apr 3 07:46:43 iPhone …`).
    private static func dayAndClock(_ p: UnsafeRawBufferPointer, _ m: Int, month: Int, into t: inout ParsedTime) -> Int? {
        if m + 11 <= p.count, p[m] == 0x20, isDigit(p[m + 1]), p[m + 1] != UInt8(ascii: "0"), p[m + 2] == 0x20, isDigit(p[m + 3]) {
            t.month = month
            t.day = Int(p[m + 1] &- 0x30)
            t.hasDate = true
            return clock(p, m + 3, into: &t)
        }
        guard m + 12 <= p.count, p[m] == 0x20 else { return nil }
        let d1 = p[m + 1]
        let d2 = p[m + 2]
        guard isDigit(d2), d1 == UInt8(ascii: " ") || isDigit(d1), p[m + 3] == UInt8(ascii: " ") else {
            return nil
        }
        let day = (d1 == UInt8(ascii: " ") ? 0 : Int(d1 &- 0x30)) * 10 + Int(d2 &- 0x30)
        guard day >= 1, day <= 31 else { return nil }
        t.month = month
        t.day = day
        t.hasDate = true
        return clock(p, m + 4, into: &t)
    }

    /// C's `ctime`, `Www Mmm dd HH:MM:SS YYYY` (the day padded by a space or not): Janus's
    /// `[Tue May 21 12:00:09 2024]`.
    static func ctime(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime) -> Int? {
        guard i + 24 <= p.count, isLetter(p[i]), isLetter(p[i + 1]), isLetter(p[i + 2]), p[i + 3] == 0x20,
            let e = bsd(p, i + 4, into: &t), e + 5 <= p.count, p[e] == 0x20, let y = digits(p, e + 1, 4)
        else { return nil }
        t.year = y
        t.hasYear = true
        return e + 5
    }

    /// java.util.logging's `SimpleFormatter` date and time, as the JDK writes them in its
    /// locale's medium style: `Jun 02, 2020 1:48:49 PM` (since Java 7 in every locale, the month
    /// in the locale's words: `déc. 04, 2019 …`, `Nov. 30, 2026 …`), and before Java 7, or with
    /// a 24-hour format set, `24.10.2012 20:33:26` (de, ru), `24/10/2012 20:33:26`, `24-Oct-2012
    /// 20:33:26` (en_GB, es, nl), `24 oct. 2012 20:33:26` (fr), `2012-10-24 20:33:26` and
    /// `2012/10/24 20:33:26` (zh, ja); also log4j's `2020.12.23 05:01:23` (Openfire's layout). A 12-hour clock's marker after the time (`AM`, `PM`,
    /// `a.m.`, `vorm.`/`nachm.`, `午前`/`午後`, `上午`/`下午`, `오전`/`오후`) makes it a 24-hour time; no
    /// zone (the host's local time).
    static func jul(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime, monthFirst: Bool = false) -> Int? {
        let n = p.count
        guard i + 14 <= n else { return nil }
        // A number of one to four digits at `k`: (value, end).
        func number(_ k: Int, _ most: Int) -> (Int, Int)? {
            var e = k
            var v = 0
            while e < n, e - k < most, isDigit(p[e]) { v = v * 10 + Int(p[e] &- 0x30); e += 1 }
            return e > k ? (v, e) : nil
        }
        // A month's name from `k` up to a byte in `ends` (English, any letter case, or a name
        // of `parsers/tables/month-names.json`; a trailing dot, `Nov.`, taken off if need be).
        func monthName(_ k: Int, until end: UInt8) -> (Int, Int)? {
            var e = k
            while e < n, e - k <= MonthNames.longest, p[e] != end, !isDigit(p[e]) { e += 1 }
            guard e > k, e < n, p[e] == end else { return nil }
            let name = UnsafeRawBufferPointer(rebasing: p[k..<e])
            if let m = MonthNames.month(name) ?? MonthNames.month(UnsafeRawBufferPointer(rebasing: name.prefix(3))).flatMap({ m in
                // (`Nov.`, `Sept`: the English name's first three letters, then letters or a dot)
                name.count > 3 && name.dropFirst(3).allSatisfy { isLetter($0) || $0 == UInt8(ascii: ".") } ? m : nil
            }) { return (m, e) }
            return nil
        }
        var year = 0, month = 0, day = 0
        var k: Int
        if isLetter(p[i]) || p[i] >= 0x80 {
            // `Jun 02, 2020`
            guard let (m, e) = monthName(i, until: 0x20), let (d, e2) = number(e + 1, 2), e2 + 2 < n, p[e2] == UInt8(ascii: ","),
                p[e2 + 1] == 0x20, let (y, e3) = number(e2 + 2, 4), e3 - e2 - 2 == 4 else { return nil }
            (year, month, day, k) = (y, m, d, e3)
        } else {
            guard let (a, e) = number(i, 4), e < n else { return nil }
            let sep = p[e]
            if e - i == 4 {
                // `2012-10-24`, `2012/10/24`, `2012.10.24` (Openfire's log4j layout; also Node's
                // `toLocaleDateString()` in a locale that writes the year first, `2018-11-3`)
                guard sep == UInt8(ascii: "-") || sep == UInt8(ascii: "/") || sep == UInt8(ascii: "."), let (m, e2) = number(e + 1, 2), e2 < n, p[e2] == sep,
                    let (d, e3) = number(e2 + 1, 2) else { return nil }
                (year, month, day, k) = (a, m, d, e3)
            } else if e - i <= 2, sep == UInt8(ascii: ".") || sep == UInt8(ascii: "/") {
                // `24.10.2012`, `24/10/2012` (day first); `7/5/2023` month first (`mdy`)
                guard let (m, e2) = number(e + 1, 2), e2 < n, p[e2] == sep, let (y, e3) = number(e2 + 1, 4), e3 - e2 - 1 == 4 else { return nil }
                (year, month, day, k) = monthFirst ? (y, a, m, e3) : (y, m, a, e3)
                // (`toLocaleString()`'s comma between date and time)
                if monthFirst, k + 1 < n, p[k] == UInt8(ascii: ","), p[k + 1] == 0x20 { k += 1 }
            } else if e - i <= 2, sep == UInt8(ascii: "-") || sep == 0x20 {
                // `24-Oct-2012`, `24 oct. 2012`
                guard let (m, e2) = monthName(e + 1, until: sep), let (y, e3) = number(e2 + 1, 4), e3 - e2 - 1 == 4 else { return nil }
                (year, month, day, k) = (y, m, a, e3)
            } else {
                return nil
            }
        }
        guard month >= 1, month <= 12, day >= 1, day <= 31, k + 6 < n, p[k] == 0x20 else { return nil }
        // `1:48:49`, `20:33:26`
        guard let (h, c1) = number(k + 1, 2), c1 < n, p[c1] == UInt8(ascii: ":"), let (mi, c2) = number(c1 + 1, 2), c2 - c1 == 3,
            c2 < n, p[c2] == UInt8(ascii: ":"), let (s, c3) = number(c2 + 1, 2), c3 - c2 == 3, h < 24, mi < 60, s < 61 else { return nil }
        var j = fraction(p, c3, into: &t)
        var hour = h
        if j + 1 < n, p[j] == 0x20, let (pm, e) = dayHalf(p, j + 1) {
            guard h >= 1, h <= 12 else { return nil }
            hour = Self.hour(h, pm: pm)
            j = e
        }
        t.setDate(year: year, month: month, day: day)
        t.secondOfDay = hour * 3600 + mi * 60 + s
        return j
    }

    /// JavaScript's `Date.prototype.toUTCString()` (RFC 7231's date), `Mon, 16 Oct 2017 01:34:45
    /// GMT`: what Node's `debug` module wrote before every line without a TTY until version 3.
    static func utc(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime) -> Int? {
        guard i + 29 <= p.count, isLetter(p[i]), isLetter(p[i + 1]), isLetter(p[i + 2]), p[i + 3] == UInt8(ascii: ","),
            p[i + 4] == 0x20, let d = digits(p, i + 5, 2), p[i + 7] == 0x20, p[i + 11] == 0x20
        else { return nil }
        let m = month(p[i + 8], p[i + 9], p[i + 10])
        guard m > 0, d >= 1, d <= 31, let y = digits(p, i + 12, 4), p[i + 16] == 0x20, let e = clock(p, i + 17, into: &t),
            e + 4 <= p.count, p[e] == 0x20, p[e + 1] == UInt8(ascii: "G"), p[e + 2] == UInt8(ascii: "M"), p[e + 3] == UInt8(ascii: "T")
        else { return nil }
        t.year = y
        t.month = m
        t.day = d
        t.hasYear = true
        t.hasDate = true
        t.offset = 0
        return e + 4
    }

    /// JavaScript's `Date.prototype.toString()`, `Fri Nov 25 2022 13:57:44 GMT+0100 (Central
    /// European Standard Time)`: what Firebase Crashlytics' console writes as a stack trace
    /// export's `# Date:` (the zone's name after it is not read).
    static func jsDate(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime) -> Int? {
        guard i + 33 <= p.count, isLetter(p[i]), isLetter(p[i + 1]), isLetter(p[i + 2]), p[i + 3] == 0x20, p[i + 7] == 0x20,
            let d = digits(p, i + 8, 2), p[i + 10] == 0x20, let y = digits(p, i + 11, 4), p[i + 15] == 0x20
        else { return nil }
        let m = month(p[i + 4], p[i + 5], p[i + 6])
        guard m > 0, d >= 1, d <= 31, let e = clock(p, i + 16, into: &t), e + 9 <= p.count, p[e] == 0x20,
            p[e + 1] == UInt8(ascii: "G"), p[e + 2] == UInt8(ascii: "M"), p[e + 3] == UInt8(ascii: "T"),
            p[e + 4] == UInt8(ascii: "+") || p[e + 4] == UInt8(ascii: "-"), let hh = digits(p, e + 5, 2), let mm = digits(p, e + 7, 2),
            hh <= 14, mm < 60
        else { return nil }
        t.setDate(year: y, month: m, day: d)
        t.offset = (p[e + 4] == UInt8(ascii: "-") ? -1 : 1) * (hh * 3600 + mm * 60)
        return e + 9
    }

    /// A 12-hour clock's marker at `i` (then a space or the end): whether it is the afternoon's,
    /// and where it ends.
    private static func dayHalf(_ p: UnsafeRawBufferPointer, _ i: Int) -> (Bool, Int)? {
        for (marker, pm) in dayHalves where i + marker.count <= p.count {
            var k = 0
            while k < marker.count, (p[i + k] >= 0x80 ? p[i + k] : p[i + k] | 0x20) == marker[k] { k += 1 }
            if k == marker.count, i + k == p.count || p[i + k] == 0x20 || p[i + k] == 0x09 { return (pm, i + k) }
        }
        return nil
    }
    /// (lower case; compared with ASCII letters lowered)
    private static let dayHalves: [([UInt8], Bool)] = [("am", false), ("pm", true), ("a.m.", false), ("p.m.", true),
        ("vorm.", false), ("nachm.", true), ("午前", false), ("午後", true), ("上午", false), ("下午", true), ("오전", false), ("오후", true)]
        .map { (Array($0.0.utf8), $0.1) }

    /// `bsd` with the month named as journalctl `-o short` names it under a non-English LC_TIME
    /// (`marras 24 17:50:27`, `Mär 14 …`, `jun 21 …`): English in any letter case, or a name from
    /// `parsers/tables/month-names.json`.
    static func bsdLocalized(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime) -> Int? {
        // The day and time decide where the name ends (a name may hold a space: `Thg 1`); the
        // table is consulted only for a line of that shape.
        var m = i + 1
        while m < p.count, m - i <= MonthNames.longest {
            if p[m] == 0x20, m + 12 <= p.count, p[m + 3] == 0x20, p[m + 6] == UInt8(ascii: ":"), isDigit(p[m + 2]) {
                let name = UnsafeRawBufferPointer(rebasing: p[i..<m])
                if let month = MonthNames.month(name), let end = dayAndClock(p, m, month: month, into: &t) { return end }
            }
            m += 1
        }
        return nil
    }

    /// `[Www ]YYYY-MM-DD HH:MM:SS[.f] ZONE` (journalctl `-o short-full`, `with-unit`, the entry
    /// header of `-o verbose`): the zone an abbreviation (`ZoneAbbreviations`; an ambiguous or
    /// unknown one leaves the time without a zone) or numeric (`+03`, `-0330`, tzdata's for zones
    /// without an abbreviation).
    static func full(_ p: UnsafeRawBufferPointer, _ i0: Int, into t: inout ParsedTime) -> Int? {
        var i = i0
        // The weekday, in English or (journalctl before 2017 used the locale's) another
        // language: `Thu`, `Do`, `jeu.`, `Пт`: letters, a dot, UTF-8, then a space and the year.
        var w = i
        while w < p.count, w - i < 12, isLetter(p[w]) || p[w] == UInt8(ascii: ".") || p[w] >= 0x80 { w += 1 }
        if w > i, w + 1 < p.count, p[w] == 0x20, isDigit(p[w + 1]) { i = w + 1 }
        guard i + 10 < p.count, p[i + 10] == 0x20, let k = iso(p, i, into: &t) else { return nil }
        if t.offset != nil { return k }
        guard k + 1 < p.count, p[k] == 0x20 else { return nil }
        let z = k + 1
        if p[z] == UInt8(ascii: "+") || p[z] == UInt8(ascii: "-") {
            let e = zone(p, z, into: &t)
            return e > z && (e == p.count || !isDigit(p[e])) ? e : nil
        }
        var e = z
        while e < p.count, e - z < 6, isLetter(p[e]) { e += 1 }
        guard e > z, e == p.count || p[e] == 0x20 || p[e] == 0x09 else { return nil }
        t.offset = ZoneAbbreviations.offset(p, z..<e)
        // A log level where an unknown zone name would be is none: Go's log with a level letter
        // (`2022-06-07 12:27:17.183734 I | main.go:200: …`), supervisord's and log4j's
        // (`2024-03-12 10:15:04,221 INFO exited: janus …`), which passed for journal lines.
        if t.offset == nil, e - z == 1 || ZoneAbbreviations.isLevel(p, z..<e) { return nil }
        return e
    }

    /// `1773306904.673211`: seconds since the epoch and a fraction (journalctl `-o short-unix`);
    /// nine to eleven digits (2001 to 5138), the fraction required.
    static func epoch(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime) -> Int? {
        var j = i
        var seconds: Int64 = 0
        while j < p.count, j - i < 12, isDigit(p[j]) {
            seconds = seconds * 10 + Int64(p[j] &- 0x30)
            j += 1
        }
        guard j - i >= 9, j - i <= 11, j < p.count, p[j] == UInt8(ascii: ".") else { return nil }
        var f = ParsedTime()
        let e = fraction(p, j, into: &f)
        guard e > j else { return nil }
        t = .epoch(micros: seconds * 1_000_000 + Int64(f.micro))
        return e
    }

    /// `[ 1000.001000]` (journalctl `-o short-monotonic`: seconds since boot), also with the
    /// step from the line before (`[ 1000.002000 <    0.001000 >]`, `-o short-delta`).
    static func mono(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime) -> Int? {
        guard i < p.count, p[i] == UInt8(ascii: "[") else { return nil }
        var j = i + 1
        func seconds(_ into: inout ParsedTime) -> Int? {
            while j < p.count, p[j] == 0x20 { j += 1 }
            let start = j
            var v = 0
            while j < p.count, j - start < 10, isDigit(p[j]) { v = v * 10 + Int(p[j] &- 0x30); j += 1 }
            guard j > start else { return nil }
            let e = fraction(p, j, into: &into)
            guard e > j else { return nil }
            j = e
            while j < p.count, p[j] == 0x20 { j += 1 }
            return v
        }
        guard let s = seconds(&t) else { return nil }
        if j < p.count, p[j] == UInt8(ascii: "<") {
            j += 1
            var delta = ParsedTime()
            guard seconds(&delta) != nil, j < p.count, p[j] == UInt8(ascii: ">") else { return nil }
            j += 1
        }
        guard j < p.count, p[j] == UInt8(ascii: "]") else { return nil }
        t.secondOfDay = s
        t.sinceBoot = true
        return j + 1
    }

    /// `HH:MM:SS[.f][±HHMM]` (Console.app copy: no date).
    static func timeOfDay(_ p: UnsafeRawBufferPointer, _ i: Int, into t: inout ParsedTime) -> Int? {
        guard let j = clock(p, i, into: &t) else { return nil }
        let k = zone(p, j, into: &t)
        // Console.app with its time-zone column shown writes a space before the zone
        // (`19:43:57.810276 +0900`): taken when four digits follow the sign and a TAB, a space or
        // the line's end follows them.
        if k == j, j + 6 <= p.count, p[j] == 0x20, p[j + 1] == UInt8(ascii: "+") || p[j + 1] == UInt8(ascii: "-"),
            digits(p, j + 2, 4) != nil, j + 6 == p.count || p[j + 6] == 0x09 || p[j + 6] == 0x20
        {
            return zone(p, j + 1, into: &t)
        }
        return k
    }
}

/// A time written out as text — `YYYY-MM-DD`, optionally with ` HH:MM[:SS[.f]]` (or `T`) and a
/// zone — as command-line options (`--since`, `--start`) and `.ips` report headers give it.
public enum TimeArgument {
    /// Its parts (no zone: `offset` nil), or nil when the whole text is not such a time.
    public static func parts(_ text: String) -> ParsedTime? {
        var s = text.trimmingSpaces()
        if s.count == 10 { s += " 00:00:00" }
        // HH:MM without seconds.
        let bytes = Array(s.utf8)
        if bytes.count >= 16, bytes.count == 16 || !isDigit(bytes[16]) && bytes[16] != UInt8(ascii: ":") {
            s = String(s.prefix(16)) + ":00" + String(s.dropFirst(16))
        }
        var t = ParsedTime()
        let b = Array(s.utf8)
        guard let end = b.withUnsafeBytes({ TimeScan.iso($0, 0, into: &t) }), end == b.count else { return nil }
        return t
    }

    /// The instant, UTC when the text names no zone.
    public static func parse(_ text: String) -> Int64? {
        parts(text)?.instant(defaultYear: 1970, defaultMonth: 1, defaultDay: 1, defaultOffset: 0)
    }
}

extension String {
    /// Without leading and trailing spaces and newlines.
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\n" { s = s.dropFirst() }
        while s.last == " " || s.last == "\n" { s = s.dropLast() }
        return String(s)
    }
}

extension ParsedTime {
    /// Its stored parts, for `EventSpill`.
    func spill(into w: inout SpillWriter) {
        w.i32(y)
        w.u8(mo)
        w.u8(d)
        w.u8(flags)
        w.i32(sod)
        w.i32(us)
        w.i32(off)
        w.i64(epoch)
    }

    init(spilled r: inout SpillReader) {
        self.init()
        y = r.i32()
        mo = r.u8()
        d = r.u8()
        flags = r.u8()
        sod = r.i32()
        us = r.i32()
        off = r.i32()
        epoch = r.i64()
    }

    /// Its instant needs nothing from the file or the bundle (no year, date or zone to assume),
    /// so that it can be resolved apart from the lines around it.
    var isSelfContained: Bool { epochMicros != nil || (hasYear && hasDate && offset != nil) }
}

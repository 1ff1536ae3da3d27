#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One time model for `analyze` and `tail`: zone-less times are the phone's local time (shown
/// without an offset), a missing year or date is taken from the bundle, else from today; the
/// report is rendered in one zone (`--utc`, `--timezone`, else the phone's).

/// Now, in µs since the epoch.
public func currentMicros() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}

/// Whether (y, m, d) is a real calendar day (`2026-02-30` is not).
public func isRealDate(_ y: Int, _ m: Int, _ d: Int) -> Bool {
    guard (1...12).contains(m), d >= 1, y >= 1 else { return false }
    let (y2, m2, d2) = civilFromDays(daysFromCivil(y, m, d))
    return (y2, m2, d2) == (y, m, d)
}

/// The zone a report is rendered in.
public enum DisplayZone: Sendable, Equatable {
    /// Seconds east of UTC.
    case fixed(Int)
    /// A tz database name (`Europe/Berlin`): the offset in force at each instant.
    case named(String)
    /// This machine's zone (TZ, /etc/localtime), as journalctl shows journal times.
    case local

    /// `UTC`, `Z`, `±HH:MM`, `±HHMM`, `±HH`, or a tz database name that exists on this machine.
    public static func parse(_ text: String) -> DisplayZone? {
        if text == "UTC" || text == "Z" || text == "utc" || text == "GMT" { return .fixed(0) }
        let b = Array(text.utf8)
        if let sign = b.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            let digits = b.dropFirst().filter { $0 != UInt8(ascii: ":") }
            guard digits.count == 2 || digits.count == 4, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            let n = digits.map { Int($0 - 0x30) }
            let h = n[0] * 10 + n[1]
            let m = digits.count == 4 ? n[2] * 10 + n[3] : 0
            guard h <= 18, m < 60 else { return nil }
            let secs = h * 3600 + m * 60
            return .fixed(sign == UInt8(ascii: "-") ? -secs : secs)
        }
        guard !text.isEmpty, !text.contains(".."), !text.hasPrefix("/") else { return nil }
        guard access(zoneDirectory + "/" + text, R_OK) == 0 else { return nil }
        return .named(text)
    }

    /// Where named zones are looked up: `TZDIR`, as the C library takes it, else the system's.
    public static var zoneDirectory: String { ProcessEnvironment.value("TZDIR") ?? "/usr/share/zoneinfo" }

    /// The offset (seconds east of UTC) at an instant.
    public func offset(at micros: Int64) -> Int {
        switch self {
        case .fixed(let o): return o
        case .named(let name): return ZoneTable.shared.offset(name, at: micros)
        case .local: return ZoneTable.shared.offset(nil, at: micros)
        }
    }
}

enum ProcessEnvironment {
    static func value(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }
}

/// Offsets of a named zone from the C library (TZ set once, then localtime_r).
final class ZoneTable: @unchecked Sendable {
    static let shared = ZoneTable()
    /// TZ as the process started (nil: unset, the machine's /etc/localtime): this machine's zone.
    let originalTZ: String?
    /// What TZ is set to now.
    private var current: String?
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    init() {
        pthread_mutex_init(lock, nil)
        originalTZ = ProcessEnvironment.value("TZ")
        current = originalTZ
    }

    /// `name` nil: this machine's zone (TZ put back as it was, after a named zone was asked).
    func offset(_ name: String?, at micros: Int64) -> Int {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        let wanted = name ?? originalTZ
        if current != wanted {
            if let wanted { setenv("TZ", wanted, 1) } else { unsetenv("TZ") }
            tzset()
            current = wanted
        }
        var t = time_t(micros.floorDiv(1_000_000))
        var tmv = tm()
        localtime_r(&t, &tmv)
        return Int(tmv.tm_gmtoff)
    }
}

/// A time on the command line (`--since`, `--until`), in the forms journalctl takes:
/// `2026-03-12 10:20[:00[.514204]][±HH:MM|Z]` (also with `T`, as the report prints it),
/// `10:20[:00]` (today), `today`, `yesterday`, `tomorrow`, `now`, `-1h`, `+30min`,
/// `1 hour ago`, `2d ago`. A time without a zone is in the logs' zone (the report's).
public struct TimeSpec: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case instant(Int64)
        /// Wall-clock µs since 1970-01-01 00:00 in the logs' zone.
        case wallClock(Int64)
        /// Time of day (µs since midnight) today, in the logs' zone.
        case timeOfDay(Int64)
        /// Midnight, days from today, in the logs' zone.
        case dayStart(Int)
        /// µs from now.
        case relative(Int64)
    }

    let kind: Kind
    public let text: String

    /// Whether the text named its zone (or is relative to now, which needs none).
    public var hasZone: Bool {
        switch kind {
        case .instant, .relative: return true
        default: return false
        }
    }

    /// The instant, given the logs' zone (seconds east of UTC; `Fmt.unzoned` counts as 0) and now.
    public func resolve(zone: Int, now: Int64) -> Int64 {
        let z = Int64(zone == Fmt.unzoned ? 0 : zone) * 1_000_000
        let today = (now + z).floorDiv(86_400_000_000)
        switch kind {
        case .instant(let t): return t
        case .wallClock(let w): return w - z
        case .timeOfDay(let us): return today * 86_400_000_000 + us - z
        case .dayStart(let d): return (today + Int64(d)) * 86_400_000_000 - z
        case .relative(let d): return now + d
        }
    }

    /// The instant, a time without a zone read at the offset `offsetAtWall` gives for its wall
    /// clock (`DisplayZoneChoice.offset(atWall:fallback:)`: across a DST change, the offset in
    /// force at that time); `zone` gives today.
    public func resolve(zone: Int, now: Int64, offsetAtWall: (Int64) -> Int) -> Int64 {
        func instant(_ wall: Int64) -> Int64 {
            let o = offsetAtWall(wall)
            return wall - Int64(o == Fmt.unzoned ? 0 : o) * 1_000_000
        }
        let z = Int64(zone == Fmt.unzoned ? 0 : zone) * 1_000_000
        let today = (now + z).floorDiv(86_400_000_000)
        switch kind {
        case .instant, .relative: return resolve(zone: zone, now: now)
        case .wallClock(let w): return instant(w)
        case .timeOfDay(let us): return instant(today * 86_400_000_000 + us)
        case .dayStart(let d): return instant((today + Int64(d)) * 86_400_000_000)
        }
    }

    public static func parse(_ raw: String) -> TimeSpec? {
        let s = raw.trimmingSpaces()
        guard let kind = parseKind(s) else { return nil }
        return TimeSpec(kind: kind, text: s)
    }

    static func parseKind(_ s: String) -> Kind? {
        switch s.lowercased() {
        case "now": return .relative(0)
        case "today": return .dayStart(0)
        case "yesterday": return .dayStart(-1)
        case "tomorrow": return .dayStart(1)
        default: break
        }
        if let r = relative(s) { return .relative(r) }
        if let t = timeOfDay(s) { return .timeOfDay(t) }
        // `@1773309730` (journalctl's seconds since 1970, a fraction allowed)
        if s.hasPrefix("@"), let seconds = Double(s.dropFirst()), seconds.isFinite, abs(seconds) < 253_402_300_800 {
            return .instant(Int64((seconds * 1_000_000).rounded()))
        }
        return absolute(s)
    }

    static let units: [(String, Int64)] = [
        ("us", 1), ("usec", 1), ("ms", 1000), ("msec", 1000),
        ("s", 1_000_000), ("sec", 1_000_000), ("second", 1_000_000), ("seconds", 1_000_000),
        ("m", 60_000_000), ("min", 60_000_000), ("minute", 60_000_000), ("minutes", 60_000_000),
        ("h", 3_600_000_000), ("hr", 3_600_000_000), ("hour", 3_600_000_000), ("hours", 3_600_000_000),
        ("d", 86_400_000_000), ("day", 86_400_000_000), ("days", 86_400_000_000),
        ("w", 604_800_000_000), ("week", 604_800_000_000), ("weeks", 604_800_000_000),
        // (journalctl's: a month of 30.44 days, a year of 365.25)
        ("month", 2_629_800_000_000), ("months", 2_629_800_000_000),
        ("y", 31_557_600_000_000), ("year", 31_557_600_000_000), ("years", 31_557_600_000_000),
    ]

    /// `-1h`, `+30min`, `-1h30m`, `1 hour ago`, `2d ago`, `90 s ago`: µs from now.
    static func relative(_ s: String) -> Int64? {
        // (journalctl's `M` is a month, its `m` a minute: the one capital told before the rest
        // is read in lower case)
        var text = s.hasSuffix("M") && !s.hasSuffix("AM") && !s.hasSuffix("PM") ? String(s.dropLast()).lowercased() + "month" : s.lowercased()
        var sign: Int64 = 0
        if text.hasSuffix(" ago") {
            text.removeLast(4)
            sign = -1
        } else if text.hasPrefix("-") {
            text.removeFirst()
            sign = -1
        } else if text.hasPrefix("+") {
            text.removeFirst()
            sign = 1
        }
        guard sign != 0 else { return nil }
        // Number-unit pairs, spaces allowed between and inside them.
        let b = Array(text.utf8)
        var i = 0
        var total: Int64 = 0
        var pairs = 0
        func skipSpaces() { while i < b.count && b[i] == 0x20 { i += 1 } }
        skipSpaces()
        while i < b.count {
            var n: Int64 = 0
            var digits = 0
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39, digits < 12 {
                n = n * 10 + Int64(b[i] - 0x30)
                i += 1
                digits += 1
            }
            guard digits > 0 else { return nil }
            skipSpaces()
            var u = ""
            while i < b.count, (b[i] >= 0x61 && b[i] <= 0x7A) {
                u.append(Character(UnicodeScalar(b[i])))
                i += 1
            }
            guard let unit = units.first(where: { $0.0 == u })?.1 else { return nil }
            // (a number no log's span comes near: refused, not overflowed)
            let (part, o1) = n.multipliedReportingOverflow(by: unit)
            let (sum, o2) = total.addingReportingOverflow(part)
            guard !o1, !o2, sum <= 1_000 * 366 * 86_400_000_000 else { return nil }
            total = sum
            pairs += 1
            skipSpaces()
        }
        return pairs > 0 ? sign * total : nil
    }

    /// `HH:MM[:SS[.f]]`: µs since midnight.
    static func timeOfDay(_ s: String) -> Int64? {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, parts[0].count == 2, parts[1].count == 2,
            let h = Int(parts[0]), let m = Int(parts[1]), h < 24, m < 60 else { return nil }
        var us: Int64 = 0
        if parts.count == 3 {
            let sec = parts[2].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            guard sec[0].count == 2, let sv = Int(sec[0]), sv < 61 else { return nil }
            us = Int64(sv) * 1_000_000
            if sec.count == 2 {
                guard !sec[1].isEmpty, sec[1].count <= 6, let f = Int(sec[1]), !sec[1].contains("-") else { return nil }
                var frac = Int64(f)
                for _ in sec[1].count..<6 { frac *= 10 }
                us += frac
            }
        }
        return (Int64(h) * 3600 + Int64(m) * 60) * 1_000_000 + us
    }

    /// `YYYY-MM-DD[( |T)HH:MM[:SS[.f]]][zone]`.
    static func absolute(_ text: String) -> Kind? {
        guard let t = TimeArgument.parts(text), !t.swappedDayMonth, isRealDate(t.year, t.month, t.day) else { return nil }
        if t.offset != nil { return .instant(t.instant(defaultYear: 1970, defaultMonth: 1, defaultDay: 1, defaultOffset: 0)) }
        return .wallClock(t.instant(defaultYear: 1970, defaultMonth: 1, defaultDay: 1, defaultOffset: 0))
    }
}

extension Event {
    /// `tail`'s half of the time model: a missing year or date is today's (as `analyze` takes
    /// it when the bundle gives none), and a line without a zone is the phone's local time.
    public mutating func resolveLive(now: Int64) {
        resolveNow(now)
        guard let t = parsedTime, t.epochMicros == nil else { return }
        // As analyze: a date ahead of today belongs to the year before.
        let today = civilFromDays(Int(now.floorDiv(86_400_000_000)))
        if t.hasDate, !t.hasYear {
            let y = FileTimeResolver.year(month: t.month, day: t.day, reference: today, isToday: true)
            if y != today.0 { time = t.instant(defaultYear: y, defaultMonth: 1, defaultDay: 1, defaultOffset: t.offset ?? 0) }
        }
        if t.offset == nil { displayOffset = Fmt.unzoned }
    }
}

extension Event {
    /// Whether the time is a journal's real instant (not a line's written time).
    public var timeFromJournal: Bool { parsedTime?.epochMicros != nil }
}

/// Turns one file's parsed times into instants, in file order, a stretch at a time (the whole
/// file at once, or a big file's ranges as they are read): a file without a year or a date
/// takes them from `--date`, else from `reference` (the first complete time of its family in
/// the bundle), else today; times of day that run backwards by more than 12 hours have
/// crossed midnight.
struct FileTimeResolver {
    let today: (Int, Int, Int)
    let refDate: (Int, Int, Int)
    let refOffset: Int
    /// A line without a zone in a bundle that gives none: the phone's local time.
    let zoneless: Bool
    let assumedToday: Bool
    let dateGiven: Bool
    /// The reference bounds the lines (a journal's beginning, its end), not one of them.
    let floor: Bool
    let ceiling: Bool
    var previousSecond: Int?
    var dayShift = 0
    var noted = false
    /// Notes for the file's summary, and for the report's header.
    var ownNotes: [String] = []
    var headerNotes: [String] = []
    /// The time of the file's last line placed, across calls (`placeOutliers`).
    var lastPlaced: Int64?
    /// Lines dated far from the lines around them, placed at the line before's time; the first.
    var outliers = 0
    var firstOutlier: (line: Int, time: Int64, offset: Int)?

    /// The file's notes: the resolver's own, then the lines it placed (`placeOutliers`).
    var notes: [String] {
        guard let first = firstOutlier else { return ownNotes }
        let when = Fmt.rfc3339(first.time, offset: first.offset)
        return ownNotes + [outliers == 1
            ? "line \(first.line) is dated \(when), far from the lines around it (a clock that jumped for one line, or damage): placed at the time of the line before it"
            : "\(outliers) lines are dated far from the lines around them (a clock that jumped for one line, or damage; the first line \(first.line), \(when)): each placed at the time of the line before it"]
    }

    /// A line more than a week from the line before, whose next line is back within a day of
    /// that one (or two or three such lines in a row: `outlierRun`), is a clock that jumped for one line (a phone's log with one line of 1970 or
    /// of year 9999 in it): one such line gave its session a frame stall of 69,889,872 hours
    /// and 0.0 fps, and a duration to the end of the day. It is placed at the time of the line
    /// before it and marked ~ (timeInferred). Judged within what one call hands in, the first
    /// line against the last placed before: a line at the end of a call is left as read.
    static let outlierJump: Int64 = 7 * 86_400_000_000
    static let outlierReturn: Int64 = 86_400_000_000

    /// The same within a run of lines folded into one event: its times pass through with one
    /// held back while it is suspect (the run's column may be on disk: no second pass).
    struct RunOutliers {
        var last: Int64?
        /// The suspect times held back (up to `outlierRun` in a row).
        var held: [Int64] = []
        var index = 0
        var count = 0
        var first: (index: Int, time: Int64)?

        mutating func push(_ x: Int64, into column: inout TimeColumn) {
            if !held.isEmpty, let a = last {
                if abs(x - a) <= FileTimeResolver.outlierReturn {
                    // (back: the held lines jumped, placed at the line before them)
                    count += held.count
                    if first == nil { first = (index - held.count, held[0]) }
                    for _ in held { column.append(a) }
                    held.removeAll()
                } else if abs(x - a) > FileTimeResolver.outlierJump, held.count < FileTimeResolver.outlierRun {
                    held.append(x)
                    index += 1
                    return
                } else {
                    for b in held { column.append(b) }
                    last = held.last
                    held.removeAll()
                }
            }
            if let a = last, abs(x - a) > FileTimeResolver.outlierJump {
                held = [x]
            } else {
                column.append(x)
                last = x
            }
            index += 1
        }

        mutating func finish(into column: inout TimeColumn) {
            for b in held { column.append(b) }
            held.removeAll()
        }
    }

    /// Counts what a run's `RunOutliers` placed.
    mutating func notePlaced(_ filter: RunOutliers, _ run: Repeats, offset: Int) {
        guard let first = filter.first else { return }
        outliers += filter.count
        if firstOutlier == nil, first.index < run.lines.count { firstOutlier = (Int(run.lines[first.index]), first.time, offset) }
    }

    /// The most lines in a row that jumped together and are placed so (two lines of year
    /// 9999 side by side gave a frame stall of 69,896,928 h, one alone was placed).
    static let outlierRun = 3

    mutating func placeOutliers(_ events: inout [Event], _ range: Range<Int>) {
        var previous = lastPlaced
        var i = range.lowerBound
        /// The next timed event after `j` (or the range's end).
        func nextTimed(_ j: Int) -> Int {
            var k = j + 1
            while k < range.upperBound, events[k].time == nil { k += 1 }
            return k
        }
        while i < range.upperBound {
            guard let b = events[i].time else { i += 1; continue }
            var k = nextTimed(i)
            if let a = previous, events[i].repeats == nil, abs(b - a) > Self.outlierJump {
                // The lines far from the line before, up to `outlierRun` of them, then one back
                // within a day of it.
                var far = [i]
                while far.count < Self.outlierRun, k < range.upperBound, let t = events[k].time, events[k].repeats == nil, abs(t - a) > Self.outlierJump {
                    far.append(k)
                    k = nextTimed(k)
                }
                if k < range.upperBound, let c = events[k].time, abs(c - a) <= Self.outlierReturn {
                    for j in far {
                        outliers += 1
                        if firstOutlier == nil, let t = events[j].time {
                            firstOutlier = (events[j].line, t, events[j].displayOffset == Fmt.unzoned ? refOffset : events[j].displayOffset)
                        }
                        events[j].time = a
                        events[j].timeInferred = true
                    }
                    i = k
                    continue
                }
                k = nextTimed(i)
            }
            previous = b
            i = k
        }
        lastPlaced = previous
    }

    init(reference: ParsedTime?, date: (year: Int, month: Int, day: Int)?, today: (Int, Int, Int)) {
        self.today = today
        var refDate: (Int, Int, Int)?
        var refOffset = reference?.offset ?? 0
        zoneless = reference?.offset == nil
        if let r = reference {
            let local = r.instant(defaultYear: 0, defaultMonth: 0, defaultDay: 0, defaultOffset: 0) / 1_000_000
                + Int64(r.offset ?? 0)
            refDate = civilFromDays(Int(local.floorDiv(86_400)))
            refOffset = r.offset ?? 0
        }
        if let d = date { refDate = (d.year, d.month, d.day) }
        // (a journal header's bound, unless --date gives the day)
        floor = date == nil && reference?.isFloor == true
        ceiling = date == nil && reference?.isCeiling == true
        assumedToday = refDate == nil
        dateGiven = date != nil
        self.refDate = refDate ?? today
        self.refOffset = refOffset
    }

    mutating func resolve(_ events: inout [Event], _ range: Range<Int>) {
        for i in range {
            guard let t = events[i].parsedTime else { continue }
            var (y, m, d) = refDate
            if !t.hasDate {
                if let p = previousSecond, t.secondOfDay < p - 43_200 { dayShift += 1 }
                previousSecond = t.secondOfDay
                (y, m, d) = civilFromDays(daysFromCivil(y, m, d) + dayShift)
                events[i].timeInferred = events[i].timeInferred || assumedToday || t.sinceBoot
            } else if !t.hasYear {
                y = Self.year(month: t.month, day: t.day, reference: refDate, isToday: assumedToday || ceiling, floor: floor)
            }
            if !noted && (!t.hasDate || !t.hasYear) { note(hasDate: t.hasDate, sinceBoot: t.sinceBoot) }
            events[i].time = t.instant(defaultYear: y, defaultMonth: m, defaultDay: d, defaultOffset: refOffset)
            events[i].displayOffset = t.offset ?? (zoneless ? Fmt.unzoned : refOffset)
            if let r = events[i].repeats, let head = events[i].time {
                // The run's lines keep their spacing; a step back of over 12 h is midnight.
                var times = TimeColumn()
                times.reserveCapacity(r.naive.count)
                var previous: (naive: Int64, time: Int64)?
                if t.hasDate && !t.hasYear && t.epochMicros == nil {
                    // A date without a year: each line's month and day are placed in the year
                    // the run is in (the naive times' year 2000 put a 29 February between
                    // 28 February and 1 March of 2026, an invented day without frames, and
                    // 1 January a year before 31 December).
                    var calendar = RunCalendar(year: y, offset: t.offset)
                    var first: Int64?
                    var placed = RunOutliers()
                    for n in r.naive {
                        let c = calendar.instant(naive: n)
                        placed.push(head + c - (first ?? c), into: &times)
                        if first == nil { first = c }
                    }
                    placed.finish(into: &times)
                    notePlaced(placed, r, offset: events[i].displayOffset == Fmt.unzoned ? refOffset : events[i].displayOffset)
                    if times.isEmpty { times.append(head) }
                    r.times = times
                    continue
                }
                var placed = RunOutliers()
                for n in r.naive {
                    guard let p = previous else {
                        placed.push(head, into: &times)
                        previous = (n, head)
                        continue
                    }
                    var step = n - p.naive
                    // (a step back of more than a day is no midnight: a line of another year
                    // came back a day late)
                    if step < -43_200_000_000 && step >= -86_400_000_000 { step += 86_400_000_000; dayShift += t.hasDate ? 0 : 1 }
                    previous = (n, p.time + step)
                    placed.push(p.time + step, into: &times)
                }
                placed.finish(into: &times)
                notePlaced(placed, r, offset: events[i].displayOffset == Fmt.unzoned ? refOffset : events[i].displayOffset)
                if times.isEmpty { times.append(head) }
                r.times = times
                if !t.hasDate, let last = r.lastSecondOfDay { previousSecond = last }
            }
        }
        placeOutliers(&events, range)
    }

    /// The year of a date written without one (syslog, idevicesyslog, journalctl's short
    /// format). Against today (the bundle gives no year): the latest year that does not put it
    /// more than two days ahead (a log is not from the future; two days cover the zones).
    /// Against a date of the bundle or `--date`: the year that puts it nearest, at most half a
    /// year either way (a phone's log from late December beside a relay journal of early
    /// January).
    /// Against a floor (where a journal begins): the earliest year not over two days before it.
    static func year(month: Int, day: Int, reference: (Int, Int, Int), isToday: Bool, floor: Bool = false) -> Int {
        let (y, m, d) = reference
        let ref = daysFromCivil(y, m, d)
        let same = daysFromCivil(y, month, day)
        if floor && !isToday {
            if daysFromCivil(y - 1, month, day) >= ref - 2 { return y - 1 }
            return same < ref - 2 ? y + 1 : y
        }
        if isToday {
            // The latest year that is not over two days ahead (1 January seen on 31 December).
            if daysFromCivil(y + 1, month, day) <= ref + 2 { return y + 1 }
            return same > ref + 2 ? y - 1 : y
        }
        if same - ref > 183 { return y - 1 }
        if ref - same > 183 { return y + 1 }
        return y
    }

    private mutating func note(hasDate: Bool, sinceBoot: Bool) {
        noted = true
        if sinceBoot {
            // No wall clock at all: every time is marked ~, and the header says so.
            let day = formatDate(refDate)
            let source = dateGiven ? "--date" : assumedToday ? "today, pass --date" : "the bundle"
            ownNotes.append("lines carry seconds since boot, no wall clock (journalctl -o short-monotonic): counted from 00:00 of \(day) (\(source))")
            headerNotes.append("seconds since boot in the lines, no wall clock: counted from 00:00 of \(day) (\(source)), times marked ~")
            return
        }
        let what = !hasDate ? "date" : "year"
        if !assumedToday {
            let source = dateGiven ? "--date" : "the bundle"
            ownNotes.append("lines carry no \(what): taken from \(source) (\(formatDate(refDate)))")
        } else if !hasDate {
            ownNotes.append("lines carry no date and the bundle gives none: today (\(formatDate(today))) assumed (pass --date)")
            headerNotes.append("\(Self.noDateNote) today (\(formatDate(today))) assumed, pass --date")
        } else {
            ownNotes.append("lines carry no year and the bundle gives none: the current year (\(today.0)) assumed, \(today.0 - 1) for a date after today (pass --date)")
            headerNotes.append("no year in the lines: \(today.0) assumed (\(today.0 - 1) for a date after today), pass --date")
        }
    }

    /// How the report's header note begins when lines had no date and today was assumed.
    static let noDateNote = "no date in the lines:"

    /// The report's header notes from every file's resolver.
    static func reportNotes(_ headerNotes: [String], sawUnzoned: Bool) -> [String] {
        var seen = Set<String>()
        var notes = headerNotes.filter { seen.insert($0).inserted }
        // (a relay's journal or a kernel's syslog is no phone's: "the phone's lines" misled on
        // a bundle of only those)
        if sawUnzoned { notes.append("lines carry no zone: shown in the local time of the phone or host that wrote them") }
        return notes
    }
}

/// The zone a report is shown in, from its lines as they come: `--utc` / `--timezone` sets
/// every line's offset; else the phone's (the commonest offset of its lines), in which relay
/// (journal) times are shown too.
struct DisplayZoneChoice {
    let option: DisplayZone?
    var counts: [Int: Int] = [:]
    /// The offset of the first timed line (after `option`), for a bundle without phone lines.
    var firstTimed: Int?

    init(option: DisplayZone?) { self.option = option }

    /// The instants the phone's lines of each offset span (a bundle across a DST change has
    /// two offsets, each over its side of the change): the offset a time without a zone on the
    /// command line is read in (`offset(atWall:fallback:)`).
    var spans: [Int: ClosedRange<Int64>] = [:]

    mutating func see(_ events: inout [Event], _ range: Range<Int>) {
        // Counted by runs of one offset (a log's lines nearly all have one): the table is
        // written once per run, not hashed per line.
        var offset = 0, run = 0
        var lo = Int64.max, hi = Int64.min
        for i in range {
            guard let t = events[i].time else { continue }
            if let option { events[i].displayOffset = option.offset(at: t) }
            if firstTimed == nil { firstTimed = events[i].displayOffset }
            if option == nil && events[i].side != .relay {
                if run > 0 && events[i].displayOffset != offset {
                    record(offset, run, lo, hi)
                    run = 0
                    lo = .max
                    hi = .min
                }
                offset = events[i].displayOffset
                run += 1
                lo = min(lo, t)
                hi = max(hi, events[i].lastTime ?? t)
            }
        }
        if run > 0 { record(offset, run, lo, hi) }
    }

    private mutating func record(_ offset: Int, _ run: Int, _ lo: Int64, _ hi: Int64) {
        counts[offset, default: 0] += run
        guard offset != Fmt.unzoned, lo <= hi else { return }
        spans[offset] = spans[offset].map { min($0.lowerBound, lo)...max($0.upperBound, hi) } ?? lo...hi
    }

    /// The offset (seconds) a wall-clock time without a zone (µs since 1970 as if at UTC) is
    /// read in: with `--utc`/`--timezone`, the offset that zone has then; else, when the
    /// phone's lines carry more than one offset (a DST change), the one whose lines lie
    /// around it (the nearest; `fallback`, the report's zone, when its own lines do); else
    /// `fallback`. (Every such time was read at one offset: across a DST change an hour off,
    /// a session the report shows at 01:00+02:00 dropped by `-S 00:50`; hostile round 10.)
    func offset(atWall wall: Int64, fallback: Int) -> Int {
        if let option {
            return option.offset(at: wall.saturatingSince(Int64(option.offset(at: wall)) * 1_000_000))
        }
        guard spans.count > 1 else { return fallback }
        func distance(_ o: Int) -> Int64 {
            guard let s = spans[o] else { return .max }
            let t = wall.saturatingSince(Int64(o) * 1_000_000)
            return t < s.lowerBound ? s.lowerBound.saturatingSince(t) : t > s.upperBound ? t.saturatingSince(s.upperBound) : 0
        }
        if distance(fallback) == 0 { return fallback }
        return spans.keys.min { (distance($0), -(counts[$0] ?? 0), $0) < (distance($1), -(counts[$1] ?? 0), $1) } ?? fallback
    }

    /// The report's zone.
    var zone: Int? {
        if option != nil { return firstTimed }
        return counts.max(by: { ($0.value, $1.key) < ($1.value, $0.key) })?.key ?? firstTimed
    }
}

extension Int64 {
    /// `self - earlier` (µs of log time), held at the ends of `Int64`: a hostile line's time,
    /// or `.min` for "never", must not trap or wrap (the horizons `tail`, retiring and
    /// `daemon-died` measure).
    func saturatingSince(_ earlier: Int64) -> Int64 {
        let (d, overflow) = subtractingReportingOverflow(earlier)
        return overflow ? (earlier < 0 ? .max : .min) : d
    }
}

/// The lines of a folded run dated without a year (`FileTimeResolver`): each line's month, day
/// and time, as its naive time (year 2000) gives them, in the run's own year, which goes on to
/// the next at a new year (a month over half a year back) and back at one the other way.
struct RunCalendar {
    var year: Int
    /// The lines' own UTC offset (seconds), when they carry one; their naive times are UTC then.
    let offset: Int?
    private var lastMonth: Int?
    private static let day: Int64 = 86_400_000_000

    init(year: Int, offset: Int?) {
        self.year = year
        self.offset = offset
    }

    /// The instant of the line whose naive time is `naive`, with the zone it was written in
    /// (or UTC): only differences between two lines of the run are meant.
    mutating func instant(naive: Int64) -> Int64 {
        let off = Int64(offset ?? 0) * 1_000_000
        let wall = naive + off
        let k = wall.floorDiv(Self.day)
        let (_, m, d) = civilFromDays(Int(k))
        if let lm = lastMonth {
            if m + 6 <= lm { year += 1 } else if lm + 6 <= m { year -= 1 }
        }
        lastMonth = m
        return Int64(daysFromCivil(year, m, d)) * Self.day + (wall - k * Self.day) - off
    }
}

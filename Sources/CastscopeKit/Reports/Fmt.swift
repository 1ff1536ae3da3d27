/// Text helpers shared by the reports: RFC 3339 times, durations, counts.
public enum Fmt {
    static func pad(_ v: Int, _ n: Int) -> String {
        let s = String(v)
        return s.count >= n ? s : String(repeating: "0", count: n - s.count) + s
    }

    /// The display offset of a time whose line carried no zone and whose bundle gives none:
    /// the phone's local wall-clock time, printed without an offset (never a fake `+00:00`).
    public static let unzoned = -1_000_000_000

    /// `2021-12-23T02:56:59.980625+05:30`: microseconds and the offset the line was written in
    /// (`2021-12-23T02:56:59.980625` for `unzoned`).
    public static func rfc3339(_ micros: Int64, offset: Int) -> String {
        var b = OutputBuffer(capacity: 32)
        b.rfc3339(micros, offset: offset)
        return b.string
    }

    /// `3.9 s`, `104 ms`, `4 m 12.3 s`, `1 h 02 m`.
    public static func duration(_ micros: Int64) -> String {
        var b = OutputBuffer(capacity: 16)
        b.duration(micros)
        return b.string
    }

    /// A fixed-point decimal without Foundation.
    public static func decimal(_ v: Double, _ places: Int) -> String {
        var b = OutputBuffer(capacity: 24)
        b.decimal(v, places)
        return b.string
    }

    /// Seconds from the session start: `+3.912`.
    public static func relative(_ micros: Int64) -> String {
        var b = OutputBuffer(capacity: 16)
        b.relative(micros)
        return b.string
    }
}

/// Text helpers shared by the reports: RFC 3339 times, durations, counts.
public enum Fmt {
    static func pad(_ v: Int, _ n: Int) -> String {
        let s = String(v)
        return s.count >= n ? s : String(repeating: "0", count: n - s.count) + s
    }

    /// `2021-12-23T02:56:59.980625+05:30`: microseconds and the offset the line was written in.
    public static func rfc3339(_ micros: Int64, offset: Int) -> String {
        let local = micros + Int64(offset) * 1_000_000
        let secs = local.floorDiv(1_000_000)
        let us = Int(local - secs * 1_000_000)
        let days = Int(secs.floorDiv(86_400))
        let sod = Int(secs - Int64(days) * 86_400)
        let (y, m, d) = civilFromDays(days)
        let sign = offset < 0 ? "-" : "+"
        let ao = abs(offset)
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(sod / 3600, 2)):\(pad(sod / 60 % 60, 2)):\(pad(sod % 60, 2))."
            + "\(pad(us, 6))\(sign)\(pad(ao / 3600, 2)):\(pad(ao / 60 % 60, 2))"
    }

    /// `3.9 s`, `104 ms`, `4 m 12.3 s`, `1 h 02 m`.
    public static func duration(_ micros: Int64) -> String {
        let us = micros == .min ? .max : abs(micros)
        let sign = micros < 0 ? "-" : ""
        if us < 1_000 { return "\(sign)\(us) µs" }
        if us < 1_000_000 { return "\(sign)\(us / 1_000) ms" }
        if us < 60_000_000 { return "\(sign)\(decimal(Double(us) / 1e6, 1)) s" }
        let s = us / 1_000_000
        if s < 3600 { return "\(sign)\(s / 60) m \(decimal(Double(us % 60_000_000) / 1e6, 1)) s" }
        return "\(sign)\(s / 3600) h \(pad(Int(s / 60 % 60), 2)) m"
    }

    /// A fixed-point decimal without Foundation.
    public static func decimal(_ v: Double, _ places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        // Values read from a log can be anything (`fps=inf`, `1e300`): Int(_:) would trap.
        guard v.isFinite else { return v.isNaN ? "nan" : v < 0 ? "-inf" : "inf" }
        guard abs(v) * scale < 9e15 else { return "\(v)" }
        let r = (abs(v) * scale).rounded()
        let whole = Int(r / scale)
        let frac = Int(r - Double(whole) * scale)
        let sign = v < 0 && r != 0 ? "-" : ""
        return places == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(pad(frac, places))"
    }

    /// Seconds from the session start: `+3.912`.
    public static func relative(_ micros: Int64) -> String {
        (micros < 0 ? "-" : "+") + decimal(Double(micros.magnitude) / 1e6, 3)
    }
}

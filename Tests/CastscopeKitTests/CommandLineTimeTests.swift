import Foundation
import Testing

/// Issue 11 items 2 and 3: one time model for analyze and tail, and time filters in the logs' zone.
@Suite struct CommandLineTimeTests {
    /// idevicesyslog: no year, no zone.
    let syslog = packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt")
    /// log stream: complete times at +01:00.
    let zoned = "samples/retry-storm/log-stream-debug.txt"

    func currentYear() -> Int { Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: Date()).year! }
    /// The year a date without one is given: this year, unless that is over two days ahead of today.
    func assumedYear(month: Int, day: Int) -> Int {
        let cal = Calendar(identifier: .gregorian)
        let utc = TimeZone(identifier: "UTC")!
        let date = cal.date(from: DateComponents(timeZone: utc, year: currentYear(), month: month, day: day))!
        return date.timeIntervalSinceNow > 2 * 86_400 ? currentYear() - 1 : currentYear()
    }

    func sessions(_ r: RunResult) -> [[String: Any]] { (r.json?["sessions"] as? [[String: Any]]) ?? [] }

    @Test("the same zone-less stream gives the same dates in analyze - and tail -, in the current year, without a fake offset")
    func analyzeAndTailAgree() throws {
        let stream = try Data(contentsOf: syslog)
        let analyzed = try castscope(["analyze", "--json", "-"], stdin: stream)
        #expect(analyzed.status == 0)
        let start = try #require(sessions(analyzed).first?["start"] as? String)
        #expect(start == "\(assumedYear(month: 3, day: 12))-03-12T11:02:07.000000")
        let tailed = try castscope(["tail", "--json", "--no-journal", "-"], stdin: stream)
        let started = tailed.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.first { $0["change"] as? String == "started" }
        #expect(started?["time"] as? String == start)
        // The text report says what it assumed, at the top, and prints no zone.
        let text = try castscope(["analyze", "-"], stdin: stream)
        let header = text.stdout.split(separator: "\n").prefix(4).joined(separator: "\n")
        #expect(header.contains("times: no year in the lines: \(currentYear()) assumed (\(currentYear() - 1) for a date after today), pass --date"))
        #expect(header.contains("carry no zone: shown in the local time of the phone or host that wrote them"))
        #expect(!text.stdout.contains("1970"))
        #expect(text.stdout.contains("   \(assumedYear(month: 3, day: 12))-03-12T11:02:07.000000  lasted"))
    }

    @Test("a folded frame run dated without a year across 28 February -> 1 March of a common year, or across New Year, keeps its spacing (no invented day without frames)",
          arguments: [("2026-02-28", "2026-03-01"), ("2025-12-31", "2026-12-31")])
    func foldedRunAcrossCalendarEdges(start: String, date: String) throws {
        // The sample's session moved so that its frames cross midnight of that day.
        let utc = TimeZone(identifier: "UTC")!
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = utc
        let parse = DateFormatter()
        parse.locale = Locale(identifier: "en_US_POSIX")
        parse.timeZone = utc
        parse.dateFormat = "yyyy MMM d HH:mm:ss"
        let print = DateFormatter()
        print.locale = parse.locale
        print.timeZone = utc
        print.dateFormat = "MMM d HH:mm:ss"
        let base = parse.date(from: "2026 Mar 12 11:02:07")!
        let target = ISO8601DateFormatter().date(from: start + "T23:59:55Z")!
        let shift = target.timeIntervalSince(base)
        let lines = try String(contentsOf: syslog, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
            guard parts.count == 4, let t = parse.date(from: "2026 \(parts[0]) \(parts[1]) \(parts[2])") else { return String(line) }
            let moved = print.string(from: t.addingTimeInterval(shift))
            return moved + " " + parts[3]
        }
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("device-syslog.txt")
        try lines.joined(separator: "\n").write(to: input, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", "--date", date, input.path])
        let s = try #require(sessions(r).first)
        let frames = try #require(s["frames"] as? [String: Any])
        #expect(frames["count"] as? Int == 200)
        #expect(((frames["perSecond"] as? Double) ?? 0) > 5, "\(frames)")
        let findings = (r.json?["findings"] as? [[String: Any]]) ?? []
        #expect(!findings.contains { $0["kind"] as? String == "frame-stall" }, "\(findings.map { $0["kind"] ?? "" })")
    }

    @Test("a date without a year is never ahead of today: a syslog line from next month is last year's", arguments: [40, -40, 1])
    func yearIsNotInTheFuture(daysFromNow: Int) throws {
        let utc = TimeZone(identifier: "UTC")!
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = utc
        let when = Date().addingTimeInterval(Double(daysFromNow) * 86_400)
        let c = cal.dateComponents([.year, .month, .day], from: when)
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let stamp = "\(months[c.month! - 1]) \(c.day! < 10 ? " " : "")\(c.day!) 16:14:25"
        let log = "\(stamp) kernel[0] <Notice>: EXC_RESOURCE -> Connect[9546] exceeded mem limit: ActiveHard 50 MB (fatal)\n"
        let r = try castscope(["analyze", "--json", "-"], stdin: Data(log.utf8))
        let start = try #require(sessions(r).first?["start"] as? String)
        // Ahead by more than two days: the year before; else the year it is (a day ahead: zones).
        let year = daysFromNow > 2 ? c.year! - 1 : c.year!
        #expect(start.hasPrefix(String(format: "%04d-%02d-%02d", year, c.month!, c.day!)), "\(start)")
        let shown = try castscope(["show", "-"], stdin: Data(log.utf8))
        #expect(shown.stdout.contains(String(format: "%04d-%02d-%02d 16:14:25.000000 ", year, c.month!, c.day!)), "\(shown.stdout)")
    }

    @Test("--date: only real days; it dates a file without a year")
    func dateOption() throws {
        for bad in ["2026-02-30", "2026-13-01", "2025-02-29", "26-03-12"] {
            let r = try castscope(["analyze", "--date", bad, syslog.path])
            #expect(r.status == 2, "\(bad)")
            #expect(r.stderr.hasPrefix("castscope: error: --date must be a real day"))
        }
        let r = try castscope(["analyze", "--json", "--date", "2024-02-29", syslog.path])
        #expect(sessions(r).first?["start"] as? String == "2024-03-12T11:02:07.000000")
    }

    @Test("show dates a line without a date today (this year), or on --date's day; a month and day without a year near --date")
    func showDatesUndatedLines() throws {
        // Console.app's copy: a time of day, no date (show printed next year's today for it).
        let copy = Data("default\t11:35:41.452038+0100\trunningboardd\tAcquiring assertion\n".utf8)
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC")!
        func today() -> String {
            let c = cal.dateComponents([.year, .month, .day], from: Date())
            return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
        }
        let before = today()
        let shown = try castscope(["show", "-"], stdin: copy)
        // (either side of midnight UTC while it ran)
        #expect([before, today()].contains { shown.stdout.contains("\($0) 10:35:41.452038+0000") }, "\(shown.stdout)")
        let dated = try castscope(["show", "--date", "2026-03-12", "-"], stdin: copy)
        #expect(dated.stdout.contains("2026-03-12 10:35:41.452038+0000"), "\(dated.stdout)")
        // A syslog line's month and day: the year within half a year of --date.
        let syslogLine = Data("Mar 12 11:02:07 iPhone BroadcastExtension[915] <Notice>: broadcast started\n".utf8)
        #expect(try castscope(["show", "--date", "2025-01-05", "-"], stdin: syslogLine).stdout.contains("2025-03-12 11:02:07.000000 "))
        #expect(try castscope(["show", "--date", "2026-13-12", "-"], stdin: copy).status == 2)
    }

    @Test("--utc and --timezone render every time in one zone")
    func renderingZones() throws {
        let utc = try castscope(["analyze", "--json", "--utc", zoned])
        #expect(sessions(utc).first?["start"] as? String == "2026-03-12T09:20:00.514204+00:00")
        let india = try castscope(["analyze", "--json", "--timezone", "+05:30", zoned])
        #expect(sessions(india).first?["start"] as? String == "2026-03-12T14:50:00.514204+05:30")
        let berlin = try castscope(["analyze", "--timezone", "America/New_York", zoned])
        #expect(berlin.stdout.contains("2026-03-12T05:20:00.514204-04:00"))  // EDT from 8 March
        #expect(try castscope(["analyze", "--timezone", "Mars/Olympus", zoned]).status == 2)
        // The folder zones are looked up in is named: TZDIR when it is set (a zone missing
        // there was said to be missing from /usr/share/zoneinfo).
        let elsewhere = try castscope(["analyze", "--timezone", "Europe/Paris", zoned], env: ["TZDIR": "/nonexistent/zones"])
        #expect(elsewhere.status == 2 && elsewhere.stderr.contains("nor a zone in /nonexistent/zones"), "\(elsewhere.stderr)")
        #expect(try castscope(["analyze", "--utc", "--timezone", "+01:00", zoned]).status == 2)
    }

    @Test("-S/-U read a time without a zone in the logs' zone: a time copied from the report keeps that session")
    func sinceInTheLogsZone() throws {
        // The report prints 2026-03-12T10:20:00.514204+01:00; a user types what they see.
        for since in ["2026-03-12 10:20", "2026-03-12T10:20:00.514204", "2026-03-12T10:20:00.514204+01:00", "2026-03-12"] {
            let r = try castscope(["analyze", "--json", "-S", since, zoned])
            #expect(sessions(r).count == 1, "\(since)")
        }
        let r = try castscope(["analyze", "-U", "2026-03-12 10:19", zoned])
        #expect(r.stdout.hasPrefix("castscope: 1 file, 0 recognized lines, 74 more outside --since/--until, 0 sessions\n"))
        #expect(r.stdout.contains("filter: --since/--until kept nothing; the logs span 2026-03-12T10:20:00.514204+01:00 to 2026-03-12T10:20:04.264514+01:00\n"))
        // In JSON the same is a note on stderr.
        let j = try castscope(["analyze", "--json", "-U", "2026-03-12 10:19", zoned])
        #expect(j.stderr.hasPrefix("castscope: note: --since/--until kept none of the 74 recognized lines: the logs span 2026-03-12T10:20:00.514204+01:00"))
    }

    @Test("-S/-U take journalctl's forms and refuse since > until")
    func journalctlForms() throws {
        for since in ["-1h", "1 hour ago", "1h ago", "yesterday", "today", "now", "-2d", "10:20", "+1h30min"] {
            let r = try castscope(["analyze", "-S", since, zoned])
            #expect(r.status == 0, "\(since): \(r.stderr)")
            #expect(r.stdout.contains("0 recognized lines, 74 more outside"), "\(since)")  // the sample is from March 2026
        }
        for until in ["-1h", "yesterday", "1 week ago"] {
            #expect(sessions(try castscope(["analyze", "--json", "-S", "2026-01-01", "-U", until, zoned])).count == 1, "\(until)")
        }
        let reversed = try castscope(["analyze", "-S", "2026-03-13", "-U", "2026-03-12 10:00", zoned])
        #expect(reversed.status == 2)
        #expect(reversed.stderr.hasPrefix("castscope: error: --since 2026-03-13 is after --until 2026-03-12 10:00"))
        #expect(try castscope(["analyze", "-S", "-1h", "-U", "-2h", zoned]).status == 2)
        #expect(try castscope(["analyze", "-S", "last tuesday", zoned]).status == 2)
    }
}

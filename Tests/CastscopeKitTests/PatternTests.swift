import Testing

@testable import CastscopeKit

func fields(_ pattern: String, _ text: String, search: Bool = false) throws -> [String: String]? {
    let p = try Pattern(pattern)
    var m = PatternMatch(slots: p.names.count)
    let bytes = Array(text.utf8)
    let ok = bytes.withUnsafeBytes { search ? p.search($0, into: &m) : p.match($0, into: &m) }
    guard ok else { return nil }
    var out: [String: String] = [:]
    for (slot, name) in p.names.enumerated() {
        if let r = m.range(slot) { out[name] = String(decoding: bytes[r], as: UTF8.self) }
    }
    return out
}

@Suite("layout patterns")
struct PatternTests {
    @Test func lazyFieldStopsAtTheFirstPlaceTheRestMatches() throws {
        #expect(try fields("{process}: {message}", "sudo: nicscott : TTY=ttys001") == ["process": "sudo", "message": "nicscott : TTY=ttys001"])
    }

    @Test func optionalGroupIsTriedThenSkipped() throws {
        let p = "{host:word} {ident:word}{?[{pid:int}]}: {message}"
        #expect(try fields(p, "tarta fan.sh[20911]: hot") == ["host": "tarta", "ident": "fan.sh", "pid": "20911", "message": "hot"])
        #expect(try fields(p, "localhost kernel: x86/PAT: cfg") == ["host": "localhost", "ident": "kernel", "message": "x86/PAT: cfg"])
    }

    /// A word before an optional group ends only where the group or what follows it can
    /// begin (its two first bytes); the match is the one trying every end gave.
    @Test("a field before an optional group: the ends tried are those where the group or the rest begins")
    func fieldBeforeOptionalGroup() throws {
        let p = "{ident:word}{?[{pid:int}]}: {message}"
        #expect(try fields(p, "a[b]c[12]: m") == ["ident": "a[b]c", "pid": "12", "message": "m"])
        #expect(try fields(p, "a:b: m") == ["ident": "a:b", "message": "m"])
        #expect(try fields(p, "x[1]: [2]: m") == ["ident": "x", "pid": "1", "message": "[2]: m"])
        #expect(try fields(p, "x[y]: m") == ["ident": "x[y]", "message": "m"])
        #expect(try fields(p, "x[1] m") == nil)
        #expect(try fields("{a}{?<{b:int}>} {c}", "p<q> <3> r") == ["a": "p<q>", "c": "<3> r"])
        #expect(try fields("{a}{?<{b:int}>} {c}", "p<3> r") == ["a": "p", "b": "3", "c": "r"])
        #expect(try fields("{a}{?<{b:int}>} {c}", "p q") == ["a": "p", "c": "q"])
    }

    @Test("a pattern's anchor holds no byte a JSON writer escapes, so it is found in a JSON export's raw bytes")
    func anchorsAvoidJSONEscapes() throws {
        #expect(try Pattern("didTimeout() > connection timedout").anchor == Array(" connection timedout".utf8))
        #expect(try Pattern(#"x {a} Name(rawValue: "ioError") y"#).anchor == Array(" Name(rawValue: ".utf8))
        #expect(try Pattern("open /tmp/{f}").anchor == Array("open ".utf8))
        for vocabulary in try ParserRegistry.builtin().vocabularies {
            for rule in vocabulary.rules {
                #expect(!rule.pattern.anchor.contains { Pattern.jsonEscaped.contains($0) }, "\(rule.pattern.source)")
            }
        }
    }

    /// A journal line's host has a letter or digit (`(none)` in an initramfs too); Go's log
    /// with a level letter, `… I | main.go:200: …`, gave `-o short-full` the zone `I`, the host `|`.
    @Test("a host field is a word with a letter or digit in it, wherever it ends")
    func hostHasALetterOrDigit() throws {
        let p = "{host:host} {ident:word}{?[{pid:int}]}: {message}"
        #expect(try fields(p, "relay1 broadcast-relay[811]: up") == ["host": "relay1", "ident": "broadcast-relay", "pid": "811", "message": "up"])
        #expect(try fields(p, "(none) kernel: x") == ["host": "(none)", "ident": "kernel", "message": "x"])
        #expect(try fields(p, "| main.go:200: Could not initialize") == nil)
        #expect(try fields(p, "-- main: x") == nil)
        #expect(try fields("{a:word}:{host:host}", "x:--") == nil)
        #expect(try fields("{a:word}:{host:host}", "x:-a") == ["a": "x", "host": "-a"])
        #expect(try fields("{host:host}:{b}", "--:--:x") == nil)
        #expect(try fields("{host:host}:{b}", "-:a:x") == ["host": "-:a", "b": "x"])
    }

    /// A level where `{time:full}`'s zone name would be is no zone: supervisord's
    /// `2024-03-12 10:15:04,221 INFO exited: janus …` passed for `journalctl --no-hostname`,
    /// Go's `… I | main.go:200: …` for `-o short-full`; a zone name the table lacks still reads.
    @Test("a log level or one letter after the time is no zone name")
    func levelIsNoZone() throws {
        let p = "{time:full} {ident:word}{?[{pid:int}]}: {message}"
        #expect(try fields(p, "2024-03-12 10:15:04,221 INFO exited: janus (exit status 1; not expected)") == nil)
        #expect(try fields(p, "2024-03-12 10:15:04.221 warn main: x") == nil)
        #expect(try fields(p, "2022-06-07 12:27:17.183734 I main.go:200: x") == nil)
        #expect(try fields(p, "Thu 2026-03-12 10:15:04 HST broadcast-relay[811]: up")?["ident"] == "broadcast-relay")
        #expect(try fields(p, "2026-03-12 10:15:04 Z broadcast-relay[811]: up")?["ident"] == "broadcast-relay")
    }

    @Test func wordNeverSpansSpaces() throws {
        #expect(try fields("[{subsystem:word}:{category}] {message}", "[R26089->Q10431] Question for <mask.hash: 'x'>") == nil)
        #expect(try fields("[{subsystem:word}:{category}] {message}", "[system:] Setting") == ["subsystem": "system", "category": "", "message": "Setting"])
    }

    @Test func spacesRunAndTypedFields() throws {
        let got = try fields("{thread:hex}{sp}{pid:int} {message}", "0x1e2cd      4004 hi")
        #expect(got == ["thread": "0x1e2cd", "pid": "4004", "message": "hi"])
        #expect(try fields("failure: {status:int}", "failure: -1") == ["status": "-1"])
        #expect(try fields("failure: {status:int}", "failure: socket binding") == nil)
    }

    @Test("a run of spaces of every length, at the end of the line or not, eight bytes a step or one")
    func spacesRunOfEveryLength() throws {
        for k in 1...40 {
            let gap = String(repeating: " ", count: k)
            #expect(try fields("{a:word}{sp}{b:word} {message}", "x\(gap)y z") == ["a": "x", "b": "y", "message": "z"], "\(k) spaces")
            // Nothing after the spaces: `{sp}` takes them all, then the literal has no room.
            #expect(try fields("{a:word}{sp}{message}", "x\(gap)") == ["a": "x", "message": ""], "\(k) spaces at the end")
            #expect(try fields("{a:word}{sp}|", "x\(gap)") == nil, "\(k) spaces, no bar")
            // A tab ends the run.
            #expect(try fields("{a:word}{sp}\t{message}", "x\(gap)\tq") == ["a": "x", "message": "q"], "\(k) spaces, a tab")
        }
    }

    @Test func searchFindsThePatternAnywhere() throws {
        #expect(try fields("open socket connection", "[Broadcast] open socket connection", search: true) == [:])
        #expect(try fields("EXC_RESOURCE -> {target}[{pid:int}] exceeded", "kernel: EXC_RESOURCE -> Ext[9] exceeded mem", search: true)
            == ["target": "Ext", "pid": "9"])
        #expect(try fields("open socket connection", "nothing here", search: true) == nil)
    }

    @Test func literalBracesAndErrors() throws {
        #expect(try fields("{{{message}}}", "{x}") == ["message": "x"])
        #expect(throws: Pattern.CompileError.self) { try Pattern("{?unclosed") }
        #expect(throws: Pattern.CompileError.self) { try Pattern("a}") }
    }
}

@Suite("timestamps")
struct TimestampTests {
    func iso(_ s: String) -> ParsedTime? {
        var t = ParsedTime()
        return Array(s.utf8).withUnsafeBytes { TimeScan.iso($0, 0, into: &t) } != nil ? t : nil
    }

    func render(_ t: ParsedTime?) -> String? {
        t.map { Fmt.rfc3339($0.instant(defaultYear: 2000, defaultMonth: 1, defaultDay: 1, defaultOffset: 0), offset: $0.offset ?? 0) }
    }

    @Test func isoVariants() {
        #expect(render(iso("2023-10-14 17:53:54.688700+0800")) == "2023-10-14T17:53:54.688700+08:00")
        #expect(render(iso("2023-09-08T17:20:30+02:00")) == "2023-09-08T17:20:30.000000+02:00")
        #expect(render(iso("2021-03-11 21:07:27.279229-0800")) == "2021-03-11T21:07:27.279229-08:00")
        #expect(render(iso("2022-11-14 13:21:14.972")) == "2022-11-14T13:21:14.972000+00:00")
        #expect(render(iso("2025-01-02T03:04:05.123456789Z")) == "2025-01-02T03:04:05.123456+00:00")
        #expect(iso("2022-11-14 13:21:14.972")?.offset == nil)
        #expect(iso("2023-13-40 00:00:00") == nil)
    }

    @Test func swappedDayAndMonthAreRepaired() {
        let t = iso("2025-26-09 13:04:04.774")
        #expect(t?.swappedDayMonth == true)
        #expect(render(t) == "2025-09-26T13:04:04.774000+00:00")
        // A day-first writer's 12-12 (or 03-03) reads the same both ways: not counted as swapped,
        // so no note says it was (HaishinKit #945's paste got one).
        for same in ["2021-12-12 10:13:52.856", "2021-03-03 10:13:52.856"] {
            var u = iso(same)
            u?.swapDayMonth()
            #expect(u?.swappedDayMonth == false)
        }
        var v = iso("2021-03-12 10:13:52.856")
        v?.swapDayMonth()
        #expect(v?.swappedDayMonth == true && render(v) == "2021-12-03T10:13:52.856000+00:00")
    }

    @Test func bsdAndClock() {
        var t = ParsedTime()
        #expect(Array("Aug  2 14:36:36 x".utf8).withUnsafeBytes { TimeScan.bsd($0, 0, into: &t) } == 15)
        #expect(t.month == 8 && t.day == 2 && !t.hasYear && t.secondOfDay == 14 * 3600 + 36 * 60 + 36)
        var c = ParsedTime()
        #expect(Array("11:35:41.417649+0100".utf8).withUnsafeBytes { TimeScan.timeOfDay($0, 0, into: &c) } == 20)
        #expect(c.offset == 3600 && c.micro == 417_649 && !c.hasDate)
    }

    @Test func calendarRoundTrip() {
        for days in [-1, 0, 59, 60, 365, 11_016, 20_524, 47_482] {
            let (y, m, d) = civilFromDays(days)
            #expect(daysFromCivil(y, m, d) == days)
        }
        #expect(Fmt.rfc3339(-1, offset: 0) == "1969-12-31T23:59:59.999999+00:00")
        #expect(Fmt.rfc3339(0, offset: -(5 * 3600 + 30 * 60)) == "1969-12-31T18:30:00.000000-05:30")
    }
}

@Suite("JSON")
struct JSONTests {
    @Test func scannerDecodesEscapesByteArraysAndArrays() {
        let text = #"{"a":"x\ny \u00e9\ud83d\ude00 \/","b":[104,105],"c":["first","second"],"d":null,"e":{"n":[1,{"x":"}"}]},"f":12}"#
        var got: [String: String] = [:]
        let ok = Array(text.utf8).withUnsafeBytes { p in
            JSONScan.forEachMember(p) { key, range in
                var v: [UInt8] = []
                JSONScan.appendValue(p, range, into: &v)
                got[String(decoding: key, as: UTF8.self)] = String(decoding: v, as: UTF8.self)
            }
        }
        #expect(ok)
        #expect(got == ["a": "x\ny é😀 /", "b": "hi", "c": "first", "d": "", "e": #"{"n":[1,{"x":"}"}]}"#, "f": "12"])
        #expect(!Array("{\"a\":".utf8).withUnsafeBytes { JSONScan.forEachMember($0) { _, _ in } })
    }

    @Test func parser() throws {
        let v = try JSONValue.parse(#"{"k": [1, true, null, "s"], "o": {}}"#)
        #expect(v["k"] == .array([.number("1"), .bool(true), .null, .string("s")]))
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse("{\"k\": }") }
    }

    @Test func writerEscapes() {
        var w = JSONWriter()
        w.open()
        w.string("m", "a\"b\\c\n\u{1}")
        w.close()
        #expect(w.text == "{\n  \"m\": \"a\\\"b\\\\c\\n\\u0001\"\n}")
    }
}

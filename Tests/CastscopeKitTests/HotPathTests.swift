import Foundation
import Testing

@testable import CastscopeKit

/// The shortcuts the per-line paths take (issue 15) say exactly what the slow forms say.
@Suite("Per-line shortcuts")
struct HotPathTests {
    @Test("a kind code stands for its kind: every code's name, every vocabulary kind, a kind changed later")
    func kindCodes() throws {
        for code in KindCode.allCases.dropFirst() {
            #expect(KindCode(code.name) == code)
            #expect(KindSet([code]).contains(code))
            #expect(!KindSet([code]).contains(.other))
        }
        #expect(KindCode("no.such_kind") == .other)
        #expect(Set(KindCode.allCases.map(\.name)).count == KindCode.allCases.count)
        // Each code names a kind the vocabulary makes (a renamed kind would leave its code
        // unused and its tests silently false).
        // (`broadcast.stopped_10001` is documented in parsers/README.md for vocabularies of one's own.)
        let kinds = Set(try ParserRegistry.builtin().vocabularies.flatMap { $0.rules.map(\.event) }).union(["broadcast.stopped_10001"])
        for code in KindCode.allCases.dropFirst() {
            #expect(kinds.contains(code.name), "\(code.name) is not a kind of the built-in vocabulary")
        }
        var e = Event(kind: "frame.sent", sdk: "jitsi", side: .extension, time: 1, process: "P", pid: 1, message: "m", attrs: [],
                      source: SourceRef(path: "a", line: 1), order: 0, parsedTime: nil, fileIndex: 0)
        #expect(e.code == .frameSent)
        e.kind = "socket.closed"
        #expect(e.code == .socketClosed)
        e.message = "other"
        #expect(e.code == .socketClosed)
        e.kind = "app.anything"
        #expect(e.code == .other)
    }

    @Test("a timeline message written as bytes is the message as oneLine cuts it: ASCII, UTF-8, newlines, at and around the limit")
    func oneLineBytes() {
        let report = TextReport(color: false)
        let limit = report.maxMessage
        var texts: [String] = []
        for n in [0, 1, limit - 2, limit - 1, limit, limit + 1, limit + 2, 3 * limit] {
            texts.append(String(repeating: "a", count: n))
            texts.append(String(repeating: "é", count: n))
            texts.append(String(repeating: "a", count: max(0, n - 1)) + "–")
            texts.append("x\n" + String(repeating: "b", count: n))
            texts.append(String(repeating: "c", count: n) + "\r")
            texts.append(String(repeating: "d", count: n) + "\r\n")
        }
        // Characters, not bytes or scalars: combining marks and CR LF are one character each.
        for n in [limit - 1, limit, limit + 1, 2 * limit] {
            texts.append(String(repeating: "e\u{301}", count: n))
            texts.append(String(repeating: "f", count: n - 1) + "\r\n" + "g")
        }
        for t in texts {
            var out = OutputBuffer()
            report.oneLine(t, into: &out)
            #expect(out.string == report.oneLine(t), "\(t.utf8.count) bytes")
            // What `oneLine` promises, said the slow way: newlines shown, more than `limit`
            // characters cut to `limit - 1` and an ellipsis.
            let shown = t.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: " ⏎ ")
            let expected = shown.count > limit ? String(shown.prefix(limit - 1)) + "…" : shown
            #expect(report.oneLine(t) == expected, "\(t.utf8.count) bytes")
        }
    }

    @Test("a finding's lines: tag, message, dimmed evidence, with and without colour")
    func findingBytes() {
        let two = [SourceRef(path: "a.log", line: 3), SourceRef(path: "b/é.log", line: 40)]
        let cases: [(Bool, Severity, [SourceRef], String)] = [
            (false, .info, [], "   info: [socket-error] the socket – closed ×2\n"),
            (false, .warning, [two[0]], "   warning: [socket-error] the socket – closed ×2\n      a.log:3\n"),
            (false, .error, two, "   error: [socket-error] the socket – closed ×2\n      a.log:3, b/é.log:40\n"),
            (true, .info, [], "   \u{1B}[36;1minfo: [socket-error]\u{1B}[0m the socket – closed ×2\n"),
            (true, .warning, [two[0]], "   \u{1B}[33;1mwarning: [socket-error]\u{1B}[0m the socket – closed ×2\n\u{1B}[2m      a.log:3\u{1B}[0m\n"),
            (true, .error, two,
             "   \u{1B}[31;1merror: [socket-error]\u{1B}[0m the socket – closed ×2\n\u{1B}[2m      a.log:3, b/é.log:40\u{1B}[0m\n"),
        ]
        for (color, severity, evidence, text) in cases {
            let f = Finding(kind: "socket-error", severity: severity, time: 1, session: "S1", message: "the socket – closed ×2",
                            evidence: evidence)
            #expect(TextReport(color: color).findingLines(f) == text)
        }
        #expect(SessionBuilder.streamKey(process: "Broadcast Ext", pid: 2107, path: "x") == "Broadcast Ext[2107]")
        #expect(SessionBuilder.streamKey(process: nil, pid: -1, path: "x") == "?[-1]")
        #expect(SessionBuilder.streamKey(process: "P", pid: nil, path: "dir/é.log") == "file:dir/é.log")
    }

    @Test("durations written as bytes read as before: each unit, its boundaries, negative, the extremes")
    func durations() {
        let expected: [(Int64, String)] = [
            (0, "0 µs"), (999, "999 µs"), (1_000, "1 ms"), (999_999, "999 ms"), (1_000_000, "1.0 s"), (3_912_000, "3.9 s"),
            (59_949_999, "59.9 s"), (59_999_999, "1 m 0.0 s"), (60_000_000, "1 m 0.0 s"), (252_300_000, "4 m 12.3 s"),
            (599_994_000, "10 m 0.0 s"), (3_599_900_000, "59 m 59.9 s"), (3_599_999_999, "1 h 00 m"),
            (3_600_000_000, "1 h 00 m"), (3_720_000_000, "1 h 02 m"), (-104_000, "-104 ms"), (-5, "-5 µs"),
            (Int64.max, "2562047788 h 00 m"), (Int64.min, "-2562047788 h 00 m"),
        ]
        for (us, text) in expected { #expect(Fmt.duration(us) == text, "\(us)") }
    }
}

/// `OutputBuffer` owns its bytes: copies share them until one writes, and every way of
/// appending gives what an array of the same appends holds.
@Suite("Output buffer")
struct OutputBufferTests {
    @Test("copies are values: writing one leaves the other as it was")
    func copiesAreValues() {
        var a = OutputBuffer(capacity: 4)
        a.append("abc")
        let b = a
        var c = a
        a.append("def")
        c.byte(UInt8(ascii: "!"))
        #expect(a.string == "abcdef")
        #expect(b.string == "abc")
        #expect(c.string == "abc!")
        var d = a
        d.removeAll()
        #expect(d.isEmpty && a.string == "abcdef")
        d.append("x")
        #expect(d.string == "x" && a.string == "abcdef")
    }

    @Test("a line's source as a JSON string: escaped as the whole `path:line` string would be")
    func sourceReference() {
        for path in ["a.log", "dir/with \"quote\".log", "back\\slash\u{1}\u{7F}.log", "ünï ✓.log", ""] {
            var w = JSONWriter(nestedAt: 0, first: true)
            w.source(nil, SourceRef(path: path, line: 42))
            #expect(w.text == JSONWriter.quote(path + ":42"), "\(path)")
        }
    }

    @Test("appends of every kind and size, past many growths, match an array's", arguments: [0, 1, 16, 1000])
    func appendsMatchAnArray(capacity: Int) {
        var rng = SystemRandomNumberGenerator()
        var b = OutputBuffer(capacity: capacity)
        var expected: [UInt8] = []
        for _ in 0..<3000 {
            switch Int.random(in: 0..<6, using: &rng) {
            case 0:
                let x = UInt8.random(in: 0...255, using: &rng)
                b.byte(x)
                expected.append(x)
            case 1:
                let s = String(repeating: "é", count: Int.random(in: 0..<40, using: &rng))
                b.append(s)
                expected += Array(s.utf8)
            case 2:
                let n = Int.random(in: 0..<300, using: &rng)
                b.repeating(0x20, count: n)
                expected += [UInt8](repeating: 0x20, count: n)
            case 3:
                let v = Int.random(in: Int.min...Int.max, using: &rng)
                b.int(v)
                expected += Array(String(v).utf8)
            case 4:
                let raw = (0..<Int.random(in: 0..<5000, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                raw.withUnsafeBytes { b.append($0) }
                expected += raw
            default:
                let seq = (0..<Int.random(in: 0..<20, using: &rng)).lazy.map { UInt8($0) }
                b.append(contentsOf: seq)
                expected += Array(seq)
            }
        }
        #expect(b.count == expected.count)
        #expect(b.bytes == expected)
        b.withUnsafeBytes { #expect(Array($0) == expected) }
    }
}

/// `OutputBuffer.rfc3339` writes the common case (years 0–9999, offsets under 100 hours) in
/// place, field by field; every time, against `gmtime_r` and plain string padding.
@Suite("RFC 3339 times")
struct RFC3339Tests {
    static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    static func reference(_ micros: Int64, offset: Int) -> String {
        let unzoned = offset == Fmt.unzoned
        let local = micros + Int64(unzoned ? 0 : offset) * 1_000_000
        var secs = local / 1_000_000, us = local % 1_000_000
        if us < 0 { us += 1_000_000; secs -= 1 }
        var t = time_t(secs)
        var parts = tm()
        gmtime_r(&t, &parts)
        let y = Int(parts.tm_year) + 1900
        var s = (y < 0 ? "-" : "") + pad(abs(y), 4) + "-" + pad(Int(parts.tm_mon) + 1, 2) + "-" + pad(Int(parts.tm_mday), 2)
        s += "T" + pad(Int(parts.tm_hour), 2) + ":" + pad(Int(parts.tm_min), 2) + ":" + pad(Int(parts.tm_sec), 2) + "." + pad(Int(us), 6)
        if !unzoned { s += (offset < 0 ? "-" : "+") + pad(abs(offset) / 3600, 2) + ":" + pad(abs(offset) / 60 % 60, 2) }
        return s
    }

    @Test("random instants from 5000 BC to AD 15000, offsets up to ±120 h, and unzoned")
    func againstGmtime() {
        var rng = SystemRandomNumberGenerator()
        let year: Int64 = 31_556_952_000_000
        var cases: [(Int64, Int)] = [(0, 0), (-1, 0), (1_773_306_000_171_905, 3600), (253_402_300_799_999_999, -(9 * 3600 + 30 * 60)),
                                     (-62_135_596_800_000_000, 0), (-62_135_596_800_000_001, 0), (1_773_306_000_000_000, Fmt.unzoned)]
        for _ in 0..<20_000 {
            let micros = Int64.random(in: (-7000 * year)...(13_000 * year), using: &rng)
            let offset = Int.random(in: 0..<10, using: &rng) == 0 ? Fmt.unzoned : Int.random(in: -432_000...432_000, using: &rng) / 60 * 60
            cases.append((micros, offset))
        }
        for (micros, offset) in cases {
            #expect(Fmt.rfc3339(micros, offset: offset) == Self.reference(micros, offset: offset), "\(micros) \(offset)")
        }
    }
}

extension HotPathTests {
    @Test("lines of one message and process from different hosts keep their own host (texts are shared per host)")
    func hostsKeepTheirOwn() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("device-syslog.txt")
        var text = "Timestamp                       (process)[PID]\n"
        var hostOfLine: [Int: String] = [:]
        for i in 0..<60 {
            // Two devices' syslogs merged, and one line with no host name at all.
            let host = i % 3 == 0 ? "Johns-iPhone" : "localhost"
            let second = String(format: "%02d", i)
            text += "2026-03-12 10:20:\(second).514204+0100  \(host) BroadcastExtension[1204]: [io.livekit.example.flutter:Broadcast] open socket connection\n"
            hostOfLine[i + 2] = host
        }
        try text.write(to: file, atomically: true, encoding: .utf8)
        let report = try Analyzer(registry: try ParserRegistry.builtin()).analyze([file.path])
        let events = report.sessions.flatMap(\.events).filter { $0.kind == "socket.connect_attempt" }
        // Repeated lines of one host are folded into one event (`SessionBuilder.foldConnectLine`):
        // every line it stands for is of its host.
        #expect(events.reduce(0) { $0 + $1.count } == 60)
        for e in events { e.forEachTimeAndLine { _, line in #expect(e.attr("host") == hostOfLine[line], "line \(line)") } }
        #expect(Set(events.compactMap { $0.attr("host") }) == ["Johns-iPhone", "localhost"])
    }
}

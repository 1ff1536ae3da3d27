import Foundation
import Testing

@testable import CastscopeKit

/// Field shapes read wrong until session 47, each around its real lines: zap's stack trace
/// (livekit/livekit#1694), a Go panic's dump after a journal line, another tool's time or line
/// number before every line (GitHub Actions, `docker logs -t`, a CI clock, `ts`, a log
/// viewer's column, `cat -n`; libjitsi#120, fvtt-livekit#106, CAAL#23).
@Suite("hunt round 7: Go stack traces after a record, a tool's time before every line")
struct HuntRound7Tests {
    func analyze(_ text: String, name: String = "paste.txt") throws -> (json: [String: Any], text: String) {
        try analyzePaste(text, name: name)
    }

    func input(_ r: [String: Any]) -> [String: Any] { (r["inputs"] as? [[String: Any]])?.first ?? [:] }

    @Test("zap's stacktrace keeps its function lines with the record (they were unparsed and lost, their files kept)")
    func zapStackTraceKeepsFunctions() throws {
        let zap = """
            2023-05-08T02:40:38.347Z\tERROR\tlivekit\tsupervisor/participant_supervisor.go:142\tsupervisor error on publication\t{"room": "room1", "error": "publish time out"}
            github.com/livekit/livekit-server/pkg/rtc/supervisor.(*ParticipantSupervisor).checkPublications
            \t/workspace/pkg/rtc/supervisor/participant_supervisor.go:142
            github.com/livekit/livekit-server/pkg/rtc/supervisor.(*ParticipantSupervisor).checkState
            \t/workspace/pkg/rtc/supervisor/participant_supervisor.go:131
            2023-05-08T02:40:39.001Z\tINFO\tlivekit\trtc/participant.go:700\tparticipant closing\t{"room": "room1"}

            """
        let r = try analyze(zap)
        #expect(input(r.json)["format"] as? String == "zap-console", "\(input(r.json))")
        #expect(input(r.json)["records"] as? Int == 2, "\(input(r.json))")
        #expect(input(r.json)["unparsed"] as? Int == 0, "\(input(r.json))")
        #expect(r.text.contains("supervisor.(*ParticipantSupervisor).checkPublications\n"), "\(r.text)")
        #expect(r.text.contains("(*ParticipantSupervisor).checkState\n\t/workspace"), "\(r.text)")
    }

    @Test("a Go panic's dump after a journal line stays with it; a sentence or a bare word after a record does not")
    func goPanicDumpInJournalText() throws {
        let journal = """
            2024-03-01T10:00:00+0000 relay1 broadcast-relay[811]: session 0b7f3c1e accepted peer=iPhone14,2
            goroutine 7 [running]:
            main.(*Relay).serve(0xc0001b4000, {0x7f1c, 0x2})
            \t/src/relay/main.go:88 +0x1d
            created by main.main in goroutine 1
            \t/src/relay/main.go:40 +0x65
            This is a sentence.
            Done.
            2024-03-01T10:00:01+0000 relay1 broadcast-relay[811]: session 0b7f3c1e closed reason=eof

            """
        let r = try analyze(journal)
        #expect(input(r.json)["format"] as? String == "journal-short-iso", "\(input(r.json))")
        #expect(r.text.contains("peer=iPhone14,2\ngoroutine 7 [running]:\nmain.(*Relay).serve(0xc0001b4000, {0x7f1c, 0x2})\n"), "\(r.text)")
        #expect(r.text.contains("created by main.main in goroutine 1\n\t/src/relay/main.go:40"), "\(r.text)")
        // (neither a sentence nor a lone word is a frame: still unparsed, as before)
        #expect(input(r.json)["unparsed"] as? Int == 2, "\(input(r.json))")
    }

    static let healthy = try! String(contentsOf: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt"), encoding: .utf8)

    /// The sample with `lead(n)` before its n-th line.
    static func prefixed(_ lead: (Int) -> String) -> String {
        var out = ""
        for (n, line) in healthy.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() { out += lead(n + 1) + line + "\n" }
        return out
    }

    @Test("a tool's time or line number before every line of a log show export comes off: the session is the one without it",
          arguments: [
            "github-actions", "docker", "ci-clock", "bracket-clock", "ts", "viewer-bar", "cat-n",
          ])
    func leadOffLogShow(_ tool: String) throws {
        let lead: (Int) -> String = switch tool {
        case "github-actions": { n in "2026-11-30T13:40:\(String(format: "%02d", n % 60)).1001700Z " }
        case "docker": { n in "2026-11-30T13:40:01.\(String(format: "%09d", n))Z " }
        case "ci-clock": { n in "21:31:\(String(format: "%02d", n % 60)) " }
        case "bracket-clock": { _ in "[13:40:01] " }
        case "ts": { n in "Nov 30 13:40:\(String(format: "%02d", n % 60)) " }
        case "viewer-bar": { _ in "2026-11-30 05:40:01.576 | " }
        default: { n in String(repeating: " ", count: 6 - String(n).count) + "\(n)\t" }
        }
        let plain = try analyze(Self.healthy)
        let r = try analyze(Self.prefixed(lead))
        #expect(input(r.json)["format"] as? String == "apple-default", "\(input(r.json))")
        #expect((input(plain.json)["events"] as? Int ?? 0) > 40)
        #expect(input(r.json)["events"] as? Int == input(plain.json)["events"] as? Int, "\(input(r.json))")
        let sessions = { (j: [String: Any]) in (j["sessions"] as? [[String: Any]])?.map { s in
            [s["process"], s["start"], s["end"], s["outcome"], (s["frames"] as? [String: Any])?["count"]].map { "\($0 ?? "-")" }.joined(separator: " ") } }
        #expect(sessions(r.json) == sessions(plain.json), "\(r.json["sessions"] ?? [])")
        #expect(sessions(r.json)?.first?.contains("BroadcastExtension") == true, "\(sessions(r.json) ?? [])")
    }

    @Test("the CI clock before JVB's lines (libjitsi#120) and a compose service's log viewer column before zap's (CAAL#23) come off")
    func leadOffRelayLines() throws {
        let jvb = try analyze("""
            21:31:50 JVB 2016-03-28 21:31:50.687 WARNING: [51] org.jitsi.videobridge.Conference.warn() Failed to close an IceUdpTransportManager of conference c8c2854fc6074e59!
            21:31:50 java.lang.NullPointerException
            21:31:50   at java.util.concurrent.ConcurrentHashMap.putVal(ConcurrentHashMap.java:1011)
            21:31:50   at org.jitsi.videobridge.Channel.expire(Channel.java:366)

            """)
        #expect(input(jvb.json)["format"] as? String == "jitsi-java", "\(input(jvb.json))")
        #expect(input(jvb.json)["records"] as? Int == 1, "\(input(jvb.json))")
        #expect(jvb.text.contains("2016-03-28 21:31:50.687"), "\(jvb.text)")
        #expect(jvb.text.contains("java.lang.NullPointerException\n  at java.util"), "\(jvb.text)")
        let zap = try analyze("""
            livekit  | 2026-01-17 21:24:07.575 | main.main
            livekit  | 2026-01-17 21:24:07.575 | \t/workspace/cmd/server/main.go:189
            livekit  | 2026-01-17 21:24:07.576 | 2026-01-18T04:24:07.576Z\tINFO\tlivekit\trouting/interfaces.go:180\tusing single-node routing
            livekit  | 2026-01-17 21:24:07.580 | 2026-01-18T04:24:07.580Z\tINFO\tlivekit\tservice/server.go:264\tstarting LiveKit server\t{"portHttp": 7880}
            livekit  | 2026-01-17 21:24:24.756 | 2026-01-18T04:24:24.756Z\tINFO\tlivekit.agents\tservice/agentservice.go:298\tworker registered\t{"jobType": "JT_ROOM"}

            """)
        #expect(input(zap.json)["format"] as? String == "zap-console", "\(input(zap.json))")
        // (the record's own time with its zone, not the viewer's local one)
        #expect(zap.text.contains("2026-01-18 04:24:24.756000+0000"), "\(zap.text)")
        #expect(!zap.text.contains("| 2026"), "\(zap.text)")
    }

    @Test("logs whose own lines begin with a time keep them: no lead is seen in them")
    func ownTimesAreNoLead() throws {
        #expect(TimeLeadSource.detect(Array(Self.healthy.utf8.prefix(4096))) == nil)
        for own in [
            "2024-03-01T10:00:00+0000 relay1 broadcast-relay[811]: session 0b7f3c1e accepted peer=iPhone14,2\n2024-03-01T10:00:01+0000 relay1 broadcast-relay[811]: session 0b7f3c1e closed\n",
            "Mar  1 10:00:00 relay1 janus[900]: [WARN] slow link\nMar  1 10:00:02 relay1 janus[900]: [WARN] slow link\n",
            "2021-12-23 02:56:59.980625+0530 ClientMobile[12778:1168260] server stream open completed\n2021-12-23 02:57:05.193274+0530 ClientMobile[12778:1167792] [connection] nw_socket_handle_socket_event\n",
            "16:12:49.226 [main] INFO  Relay - started\n16:12:50.001 [main] INFO  Relay - listening\n",
        ] {
            #expect(TimeLeadSource.detect(Array(own.utf8)) == nil, "\(own)")
        }
    }

    @Test("an Xcode console whose one message begins with a clock keeps its own times (its lines read as well by the untimed layout)")
    func xcodeMessageWithAClockIsNoLead() throws {
        var text = ""
        for n in 0..<12 { text += "2026-03-12 09:15:\(String(format: "%02d", 30 + n)).100000+0000 Demo[812:9001] frame \(n) sent\n" }
        text += "2026-03-12 09:15:59.100000+0000 Demo[812:9001] 12:00:01 server said hello\n"
        let r = try analyze(text)
        #expect(r.text.contains("2026-03-12 09:15:30.100000+0000"), "\(r.text)")
        #expect(r.text.contains("2026-03-12 09:15:59.100000+0000"), "\(r.text)")
        #expect(!TimeLeadSource.likely(Array(text.utf8)))
    }

    @Test("the lead comes off every line however the reads cut the lines, CR LF kept")
    func leadOffAcrossReads() throws {
        var text = ""
        for n in 0..<400 { text += "2026-11-30T13:40:01.\(String(format: "%07d", n))Z 2026-03-12 10:15:01.\(String(format: "%06d", n))+0100 line \(n)\r\n" }
        text += "2026-11-30T13:40:02.0000000Z "  // the last line only the lead, no newline
        let lead = try #require(TimeLeadSource.detect(Array(text.utf8.prefix(4096))))
        var expected = ""
        for n in 0..<400 { expected += "2026-03-12 10:15:01.\(String(format: "%06d", n))+0100 line \(n)\r\n" }
        for chunk in [1, 7, 47, 48, 49, 4096] {
            let got = drained(TimeLeadSource(ChunkedSource(Array(text.utf8), chunk: chunk), lead: lead))
            #expect(String(decoding: got, as: UTF8.self) == expected, "chunk \(chunk)")
        }
    }

    /// `text` as JSON string literals, one a line (`jq` without `-r`).
    static func literals(_ text: String, separator: String = "", comma: Bool = false) -> String {
        text.split(separator: "\n").map { line -> String in
            var q = "\""
            for u in line.unicodeScalars {
                switch u {
                case "\"": q += "\\\""
                case "\\": q += "\\\\"
                case "\t": q += "\\t"
                default: q += u.isASCII ? String(u) : String(format: "\\u%04x", u.value)
                }
            }
            return q + "\\n\"" + (comma ? "," : "")
        }.joined(separator: "\n" + separator)
    }

    @Test("log lines pasted as JSON string literals (jq without -r, an array of lines, grep -C's --) are read unquoted",
          arguments: ["jq", "array", "grep-c"])
    func stringLiteralLines(_ shape: String) throws {
        let quoted = switch shape {
        case "jq": Self.literals(Self.healthy) + "\n"
        case "array": "[\n" + Self.literals(Self.healthy, comma: true).split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n]\n"
        default: Self.literals(Self.healthy, separator: "--\n") + "\n"
        }
        let plain = try analyze(Self.healthy)
        let r = try analyze(quoted)
        #expect(input(r.json)["format"] as? String == "apple-default", "\(input(r.json))")
        #expect((input(plain.json)["events"] as? Int ?? 0) > 40)
        #expect(input(r.json)["events"] as? Int == input(plain.json)["events"] as? Int, "\(input(r.json))")
        let ends = { (j: [String: Any]) in (j["sessions"] as? [[String: Any]])?.map { "\($0["process"] ?? "") \($0["start"] ?? "") \($0["end"] ?? "") \($0["outcome"] ?? "")" } }
        #expect(ends(r.json) == ends(plain.json), "\(r.json["sessions"] ?? [])")
    }

    @Test("a JSON string literal's escapes are undone; a line of two literals, an object or a quoted sentence among lines is none")
    func unquoting() throws {
        let u = { (s: String) in StringLiteralLinesSource.unquoted(Array(s.utf8)[...]).map { String(decoding: $0, as: UTF8.self) } }
        #expect(u(#""a\tb \"c\" \\ \/ caf\u00e9 \ud83d\ude00\n","#) == "a\tb \"c\" \\ / café 😀")
        #expect(u(#""first\nsecond\n""#) == "first\nsecond")
        #expect(u(#""a", "b""#) == nil)
        #expect(u(#"{"a": "b"}"#) == nil)
        #expect(u(#""bad \x escape""#) == nil)
        #expect(!StringLiteralLinesSource.detect(Array("{\"a\": \"b\"}\n{\"a\": \"c\"}\n".utf8)))
        #expect(!StringLiteralLinesSource.detect(Array("He said \"hi\"\n\"quoted\"\nplain line\nanother\n".utf8)))
    }
}

import Foundation
import Testing

/// Field shapes left by the sixth hunt and read wrong until session 47, each around its real
/// lines: zap's stack trace (livekit/livekit#1694), a Go panic's dump after a journal line.
@Suite("hunt round 7: Go stack traces after a record")
struct HuntRound7Tests {
    func analyze(_ text: String, name: String = "paste.txt") throws -> (json: [String: Any], text: String) {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        let j = try castscope(["analyze", "--json", url.path])
        let t = try castscope(["show", url.path])
        return (j.json ?? [:], t.stdout)
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
}

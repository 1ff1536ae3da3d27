import Foundation
import Testing

@testable import CastscopeKit

/// The small items session 49's reviews left: damaged fields in `log show` JSON, impossible
/// `.ips` dates, a journal cut mid-object, `tail` on a FIFO with no writer, zip symlinks,
/// many empty files, UTF-16 `.ips` offsets, the pager's fallback, concatenated pastes' frame
/// runs, `tail -` and java.util.logging, a crash report's process list with a bad number.
@Suite("the reviews' low items, second round")
struct ReviewLows2Tests {
    static let sendbird = packageRoot.appendingPathComponent("samples/sendbird-call-ended/log-show.ndjson")

    /// The Sendbird sample with the pid of some lines replaced (line number: the JSON value).
    static func sendbirdWithPids(_ pids: [Int: String]) throws -> String {
        let lines = try String(contentsOf: sendbird, encoding: .utf8).components(separatedBy: "\n")
        return lines.enumerated().map { i, line -> String in
            guard let v = pids[i + 1], let r = line.range(of: #""processID":[0-9]+"#, options: .regularExpression) else { return line }
            return line.replacingCharacters(in: r, with: "\"processID\":\(v)")
        }.joined(separator: "\n")
    }

    @Test("an ndjson record whose pid is damaged (1e308, -5, 3.5, a word, past pid_t) keeps its message in its process's session, said with its line")
    func damagedPids() throws {
        let text = try Self.sendbirdWithPids([5: "1e308", 8: "-5", 13: "3.5", 14: "\"abc\"", 18: "99999999999999999999"])
        let r = try analyzePaste(text, name: "damaged.ndjson")
        let sessions = r.json["sessions"] as? [[String: Any]] ?? []
        #expect(sessions.count == 1, "\(sessions.map { $0["process"] ?? "" })")
        #expect(sessions.first?["pid"] as? Int == 1533)
        let input = (r.json["inputs"] as? [[String: Any]])?.first ?? [:]
        let errors = (input["errors"] as? [Any] ?? []).map { "\($0)" }
        #expect(errors.count == 4, "\(errors)")
        #expect(errors.first?.hasSuffix("damaged.ndjson:5: pid '1e308' is no pid: the record is read as BroadcastExt[1533]'s, the pid it last had") == true, "\(errors)")
        #expect(errors.contains { $0.hasSuffix(":8: pid '-5' is no pid: the record is read as BroadcastExt[1533]'s, the pid it last had") }, "\(errors)")
        // Every message is still there, in the one session.
        #expect(input["events"] as? Int == 21, "\(input)")
        // A quoted pid of digits (journald's JSON writes every field as a string) is a pid.
        let quoted = try analyzePaste(try Self.sendbirdWithPids([14: "\"1533\""]), name: "quoted.ndjson")
        let qi = (quoted.json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect((qi["errors"] as? [Any] ?? []).isEmpty, "\(qi)")
        #expect((quoted.json["sessions"] as? [Any])?.count == 1)
    }

    @Test("an ndjson record whose time is damaged takes the time of the record before it, said; it opens no session of its own")
    func damagedTime() throws {
        var lines = try String(contentsOf: Self.sendbird, encoding: .utf8).components(separatedBy: "\n")
        for n in [5, 14] {
            let r = lines[n - 1].range(of: #""timestamp":"[^"]*""#, options: .regularExpression)!
            lines[n - 1].replaceSubrange(r, with: n == 5 ? "\"timestamp\":12" : "\"timestamp\":\"2026-13-45 99:99:99.000+0100\"")
        }
        let r = try analyzePaste(lines.joined(separator: "\n"), name: "times.ndjson")
        let sessions = r.json["sessions"] as? [[String: Any]] ?? []
        #expect(sessions.count == 1, "\(sessions.map { $0["status"] ?? "" })")
        let input = (r.json["inputs"] as? [[String: Any]])?.first ?? [:]
        let errors = (input["errors"] as? [Any] ?? []).map { "\($0)" }
        #expect(errors.contains { $0.hasSuffix("times.ndjson:5: time is no time: the record takes the time of the one before it") }, "\(errors)")
        #expect(errors.contains { $0.hasSuffix("times.ndjson:14: time is no time: the record takes the time of the one before it") }, "\(errors)")
    }

    static var bin: String { packageRoot.appendingPathComponent(".build/debug/castscope").path }

    @Test("the report is on the terminal exactly once when the pager is not there or exits 127 after reading part of it")
    func pagerFallbackOnce() throws {
        func count(_ pager: String) throws -> (Int, String) {
            let out = try onTerminal("'\(Self.bin)' analyze samples/retry-storm", env: ["PAGER": pager])
            return (out.components(separatedBy: "74 recognized lines").count - 1, out)
        }
        // (not there: the shell's 127 before it read anything; there, but exiting 127 or 126
        // before or after reading part of the report)
        for pager in ["/nonexistent", "no-such-pager-castscope -R", "sh -c 'exit 127'", "sh -c 'head -n 3; exit 127'", "sh -c 'cat; exit 126'"] {
            let (n, out) = try count(pager)
            #expect(n == 1, "\(pager): \(out)")
            #expect(out.contains("castscope: warning: the pager"), "\(pager): \(out)")
        }
        // A report larger than the pipe holds, to a pager that reads none of it or part of it.
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let many = dir.appendingPathComponent("many.txt")
        // (300 sessions: a report of ~120 KB, past the pipe's 64 KB)
        let lines = (0..<300).flatMap { s -> [String] in
            let t = String(format: "10:%02d:%02d", s * 10 / 60 % 60, s * 10 % 60)
            return ["2026-03-12 \(t).000000+0000 0x1  Default  0x0  \(1000 + s)  0  BroadcastExt: [SBCBroadcast] broadcastStarted - appGroup=group.x",
                    "2026-03-12 \(t).500000+0000 0x1  Default  0x0  \(1000 + s)  0  BroadcastExt: [SBCBroadcast] broadcastFinished"]
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: many)
        for pager in ["sh -c 'exit 127'", "sh -c 'head -c 100000 >/dev/null; exit 127'"] {
            let out = try onTerminal("'\(Self.bin)' analyze '\(many.path)'", env: ["PAGER": pager])
            #expect(out.components(separatedBy: "castscope: warning: the pager").count == 2, "\(pager)")
            let shown = out.components(separatedBy: "recognized lines").count - 1
            #expect(shown == (pager.contains("head") ? 0 : 1), "\(pager): \(out.prefix(300))")
        }
    }

    @Test("tail --file on a FIFO with no writer says once that it waits for one, then reads the writer's lines as they come")
    func tailFifo() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // (tail ends when the writer closes the FIFO: its end of stream)
        let script = """
            cd "$2" && mkfifo f && ("$1" tail --file "$2/f" > out 2> err &
            echo $! > pid) || exit 2
            # (waits for the note, up to 30 s on a loaded host, rather than a fixed time)
            i=0; while [ $i -lt 150 ] && ! grep -q "waiting for a writer" err 2>/dev/null; do i=$((i+1)); sleep 0.2; done
            cp err err-before && cat "$3" > f
            i=0; while [ $i -lt 60 ]; do kill -0 $(cat pid) 2>/dev/null || exit 0; i=$((i+1)); sleep 0.5; done; kill $(cat pid); exit 1
            """
        let sample = packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt").path
        let r = try runShell(script, ["sh", Self.bin, dir.path, sample])
        #expect(r.status == 0, "tail did not end with its writer: \(r.stderr)")
        let before = try String(contentsOf: dir.appendingPathComponent("err-before"), encoding: .utf8)
        let err = try String(contentsOf: dir.appendingPathComponent("err"), encoding: .utf8)
        let out = try String(contentsOf: dir.appendingPathComponent("out"), encoding: .utf8)
        #expect(before == "castscope tail: --file \(dir.path)/f is a FIFO, not a journal file, and no one writes to it yet: waiting for a writer (its lines are read as they come, as tail - reads them)\n", "\(before)")
        #expect(err.components(separatedBy: "waiting for a writer").count == 2, "\(err)")
        #expect(out.contains("S1 started    jitsi BroadcastExtension[1204]"), "\(out)\n\(err)")
    }

    @Test("tail - reads java.util.logging's two-line records as analyze does: the time and level of the first line, the message of the second")
    func tailJUL() throws {
        let text = "Mar 12, 2026 10:15:04 AM org.example.relay.Relay accept\nINFO: session 7c1e accepted peer=iPhone14,2 room=standup\n"
            + "Mar 12, 2026 10:15:09 AM org.example.relay.Relay fail\nSEVERE: session 7c1e error: socket closed\n"
        let r = try castscope(["tail", "--no-journal", "--events", "-"], stdin: Data(text.utf8))
        #expect(r.stderr.contains("castscope tail: reading standard input as java-logging"), "\(r.stderr)")
        #expect(r.stdout.contains("10:15:04.000  relay.accepted  session 7c1e accepted peer=iPhone14,2 room=standup  <stdin>:1"), "\(r.stdout)")
        #expect(r.stdout.contains("10:15:09.000  relay.error  session 7c1e error: socket closed  <stdin>:3"), "\(r.stdout)")
    }

    @Test("a pasted JetsamEvent process list with one entry's number typed over keeps the other entries' kills, and says which entry was left out")
    func processListBadNumber() throws {
        func entry(_ name: String, _ pid: String, _ rpages: Int, _ reason: String) -> [String] {
            ["{", "    \"uuid\" : \"14350be0-e8a2-3419-b7fa-42ae204997e5\",", "    \"rpages\" : \(rpages),", "    \"reason\" : \"\(reason)\",",
             "    \"pid\" : \(pid),", "    \"name\" : \"\(name)\",", "    \"cpuTime\" : 1.5", "},"]
        }
        let lines = ["\"processes\" : ["] + entry("BroadcastUploadExtension", "4624", 960, "per-process-limit")
            + entry("MobileSafari", "48x1", 2000, "vm-pageshortage") + ["]"]
        let r = try analyzePaste(lines.joined(separator: "\n") + "\n", name: "procs.txt")
        let findings = r.json["findings"] as? [[String: Any]] ?? []
        #expect(findings.contains { $0["kind"] as? String == "extension-killed" }, "\(findings)")
        let input = (r.json["inputs"] as? [[String: Any]])?.first ?? [:]
        let errors = (input["errors"] as? [Any] ?? []).map { "\($0)" }
        #expect(errors.count == 1 && errors[0].hasSuffix("procs.txt:1: process entry 2 of the pasted list is not JSON (invalid JSON at byte 122: malformed number '48x1'): left out, the others read"), "\(errors)")
    }

    @Test(".ips reports whose date is impossible (month 13, 30 February, year 0001 or 9999) say so and place their crash at no time")
    func impossibleIPSDates() throws {
        for (date, why) in [("2026-13-12", "month 13"), ("2026-02-30", "day 30 of month 2"), ("0001-03-12", "year 0001"), ("9999-03-12", "year 9999")] {
            let text = crashIPS.replacingOccurrences(of: "2026-03-12", with: date)
            let r = try analyzePaste(text, name: "crash.ips")
            let input = (r.json["inputs"] as? [[String: Any]])?.first ?? [:]
            #expect((input["notes"] as? [String] ?? []).contains("the report's date is impossible (\(why)): its crash is not placed on the timeline"), "\(date): \(input)")
            let session = (r.json["sessions"] as? [[String: Any]])?.first ?? [:]
            #expect(session["start"] == nil || session["start"] is NSNull, "\(date): \(session["start"] ?? "")")
        }
        // A possible date is kept (29 February of a leap year).
        let leap = try analyzePaste(crashIPS.replacingOccurrences(of: "2026-03-12", with: "2024-02-29"), name: "crash.ips")
        let input = (leap.json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect(input["notes"] == nil, "\(input)")
    }
}


import Foundation
import Testing

@testable import CastscopeKit

/// The small items session 48's review left: a java.util.logging record joined past the line
/// limit, the crashed thread's queue in a text crash report, numbers in the parts of an `.ips`
/// the lazy parse passes over, a quiet relay session `tail` counted twice.
@Suite("the review's low items: a JUL record past 1 MB, a crashed thread's queue, skipped .ips numbers, tail's quiet sessions")
struct ReviewLowsTests {
    func input(_ r: [String: Any]) -> [String: Any] { (r["inputs"] as? [[String: Any]])?.first ?? [:] }

    @Test("a java.util.logging record whose message makes the joined pair longer than 1 MB keeps its time, level and stack trace, and says it was cut")
    func julRecordPastTheLimit() throws {
        let first = "Jun 02, 2020 1:48:48 PM org.ice4j.stack.NetAccessManager start\nINFO: started\n"
        let big = "Jun 02, 2020 1:48:49 PM org.ice4j.stack.NetAccessManager handleFatalError\nSEVERE: Unexpected Error! "
        let after = "\n\tat org.ice4j.socket.MergingDatagramSocket.initializeActive(MergingDatagramSocket.java:577)\n"
            + "Jun 02, 2020 1:48:50 PM org.ice4j.stack.NetAccessManager other\nINFO: next one\n"
        // (a message just under the limit, one over it, one of 3 MB: the joined line is over)
        for size in [(1 << 20) - 90, (1 << 20) + 100, 3 << 20] {
            let r = try analyzePaste(first + big + String(repeating: "x", count: size) + after)
            #expect(input(r.json)["format"] as? String == "java-logging", "\(input(r.json))")
            // (the record of line 3 with its time and level; the stack trace stays with it, not
            // with the record before)
            #expect(r.text.contains("2020-06-02 13:48:49.000000                 Error       0x0                         0    <unknown>: [org.ice4j.stack.NetAccessManager:handleFatalError] Unexpected Error! xxxx"),
                    "\(size)")
            #expect(!r.text.contains("started\n\tat org.ice4j"), "\(size)")
            let errors = (input(r.json)["errors"] as? [Any] ?? []).map { "\($0)" }.joined()
            #expect(errors.contains(":3: record longer than 1 MB with the lines joined to it"), "\(size): \(errors)")
            #expect(!errors.contains("skipped"), "\(size): \(errors)")
            #expect(r.text.contains("[org.ice4j.stack.NetAccessManager:other] next one"), "\(size)")
        }
        // The source: the joined line is cut at the limit (not inside a character), the rest of
        // its message the continuation line where the second line was.
        // (a second line under the limit, the pair over it)
        let message = String(repeating: "é", count: (1 << 19) - 20)
        let text = "Jun 02, 2020 1:48:49 PM org.ice4j.Foo bar\nSEVERE: " + message + "\n"
        let out = drained(JavaLoggingSource(MemorySource(Array(text.utf8))))
        let lines = out.split(separator: 0x0A, omittingEmptySubsequences: false)
        #expect(lines.count == 3, "\(lines.map(\.count))")
        #expect(lines[0].count <= 1 << 20 && lines[0].count > (1 << 20) - 2, "\(lines[0].count)")
        #expect(lines[1].first == 0x09, "\(lines[1].prefix(4))")
        let whole = String(decoding: lines[0] + lines[1].dropFirst(), as: UTF8.self)
        #expect(whole == "Jun 02, 2020 1:48:49 PM org.ice4j.Foo bar\tSEVERE: " + message, "\(whole.utf8.count)")
    }

    static func crashFinding(_ r: (json: [String: Any], text: String)) -> String {
        ((r.json["findings"] as? [[String: Any]])?.first { ["extension-killed", "app-crashed"].contains($0["kind"] as? String) }?["message"] as? String) ?? ""
    }

    /// A report whose thread 5 crashed: the main thread's name line comes first, as Xcode and
    /// the device write every thread in order.
    static let thread5 = """
        Incident Identifier: 8C5A2E39-1111-2222-3333-444455556666
        Hardware Model:      iPhone12,1
        Process:             BroadcastExt [1234]
        Path:                /private/var/containers/Bundle/Application/AAAA/App.app/PlugIns/BroadcastExt.appex/BroadcastExt
        Date/Time:           2026-03-12 10:00:00.000 +0100

        Exception Type:  EXC_BAD_ACCESS (SIGSEGV)
        Exception Subtype: KERN_INVALID_ADDRESS at 0x0000000000000010
        Termination Reason: SIGNAL 11 Segmentation fault: 11
        Terminating Process: exc handler [1234]

        Triggered by Thread:  5

        Thread 0 name:  Dispatch queue: com.apple.main-thread
        Thread 0:
        0   libsystem_kernel.dylib        \t0x00000001d8f0ea6c mach_msg_trap + 8

        Thread 5 name:  Dispatch queue: org.jitsi.SampleUploader
        Thread 5 Crashed:
        0   libsystem_platform.dylib      \t0x00000001f0d1a3a8 _platform_memmove + 88

        """

    @Test("a text crash report whose crashed thread is not 0: never the main thread's queue, nor the lines after it, as the crashed thread's")
    func crashedThreadQueue() throws {
        // Without `Triggered by Thread:` (an older paste, or one cut there), with and without
        // the termination reason: thread 0's name line gave its queue to the crash.
        for cut in ["Triggered by Thread:  5\n", "Termination Reason: SIGNAL 11 Segmentation fault: 11\nTerminating Process: exc handler [1234]\n"] {
            let text = Self.thread5.replacingOccurrences(of: "Triggered by Thread:  5\n", with: "").replacingOccurrences(of: cut, with: "")
            let m = Self.crashFinding(try analyzePaste(text))
            #expect(m.contains("EXC_BAD_ACCESS (SIGSEGV)"), "\(m)")
            #expect(!m.contains("com.apple.main-thread"), "\(m)")
        }
        // The whole report collapsed into one paragraph (a forum's): thread 5, its own queue,
        // no other thread's lines in the finding.
        let collapsed = Self.thread5.split(separator: "\n").joined(separator: " ") + "\n"
        let c = Self.crashFinding(try analyzePaste(collapsed))
        #expect(c.contains("; thread 5, queue org.jitsi.SampleUploader)"), "\(c)")
        #expect(!c.contains("Thread 0"), "\(c)")
        // (thread 5's queue when it is given right after its number, as before)
        let r = IPSReport.crash(text: "Exception Type: EXC_BAD_ACCESS (SIGSEGV)\nCrashed Thread:  13  Dispatch queue: EncoderQueue\n").records.first?.message ?? ""
        #expect(r.hasSuffix("; thread 13, queue EncoderQueue"), "\(r)")
        // (a name line then its own `Crashed:` line: that thread's queue)
        let own = IPSReport.crash(text: "Exception Type: EXC_BAD_ACCESS (SIGSEGV)\nThread 3 name:  Dispatch queue: Q3\nThread 3 Crashed:\n").records.first?.message ?? ""
        #expect(own.hasSuffix("; thread 3, queue Q3"), "\(own)")
    }

    static func ips(uptime: String, pid: String) -> String {
        """
        {"bug_type":"309","timestamp":"2026-03-12 10:15:04.00 +0100","name":"BroadcastUploadExtension"}
        {
          "uptime" : \(uptime),
          "procName" : "BroadcastUploadExtension",
          "pid" : \(pid),
          "captureTime" : "2026-03-12 10:15:04.1234 +0100",
          "exception" : {"type":"EXC_BAD_ACCESS","signal":"SIGSEGV"}
        }

        """
    }

    @Test("a malformed number in an .ips is an error at its byte, in a part the reader passes over (uptime) as in one it keeps (pid)")
    func ipsNumbersChecked() throws {
        for bad in ["12x00", "1.2.3", "01", "-", "1e", "2.", "-Infinity"] {
            for (uptime, pid, at) in [(bad, "2210", 15), ("1200", bad, 74)] {
                let r = try analyzePaste(Self.ips(uptime: uptime, pid: pid), name: "r.ips")
                let errors = (input(r.json)["errors"] as? [Any] ?? []).map { "\($0)" }.joined()
                #expect(errors.contains("its body (from line 2): invalid JSON at byte \(at): malformed number '\(bad)'"), "\(bad): \(errors)")
            }
        }
        // (every number JSON allows, kept as written)
        for good in ["0", "-0", "2210", "-12.5", "1e3", "1E+3", "6.02e-23", "-0.0E0"] {
            let v = try JSONValue.parse("{\"a\": \(good), \"b\": [\(good)]}", keep: .object(["a": .scalar]))
            #expect(v?["a"]?.stringValue == good, "\(good)")
            let r = try analyzePaste(Self.ips(uptime: good, pid: "2210"), name: "r.ips")
            #expect((input(r.json)["errors"] as? [Any] ?? []).isEmpty, "\(good): \(input(r.json))")
        }
    }

    /// A relay session quiet for 40 minutes that then closes, beside one that closes in time.
    static let quietThenClosed = """
        2026-03-12T10:00:00.000+0100 broadcast-relay[812]: session aaa accepted peer=iPhone14,2 room=standup
        2026-03-12T10:00:01.000+0100 broadcast-relay[812]: session aaa stats frames=10 bytes=281133 fps=10.0 dropped=0
        2026-03-12T10:05:00.000+0100 broadcast-relay[812]: session bbb accepted peer=iPhone14,2 room=standup
        2026-03-12T10:40:00.000+0100 broadcast-relay[812]: session bbb stats frames=10 bytes=281133 fps=10.0 dropped=0
        2026-03-12T10:41:00.000+0100 broadcast-relay[812]: session aaa closed reason=peer frames=10 duration=2460s
        2026-03-12T10:42:00.000+0100 broadcast-relay[812]: session bbb closed reason=peer frames=10 duration=2220s

        """

    @Test("tail: a relay session said ended unseen after 30 quiet minutes whose closed line comes later is one session, and not ended unseen")
    func tailQuietRelayThenClosed() throws {
        let r = try castscope(["tail", "--no-journal", "--no-color", "-"], stdin: Data(Self.quietThenClosed.utf8))
        // (said when it was: no line for 30 minutes; then its close)
        #expect(r.stdout.contains("relay aaa no end "), "\(r.stdout)")
        #expect(r.stdout.contains("relay aaa closed    reason=peer, 10 frames"), "\(r.stdout)")
        #expect(r.stdout.hasSuffix("castscope tail: 0 sessions seen; 2 relay sessions\n"), "\(r.stdout)")
        let j = try castscope(["tail", "--no-journal", "--json", "-"], stdin: Data(Self.quietThenClosed.utf8))
        #expect(j.stdout.hasSuffix("{\"type\":\"summary\",\"sessions\":[],\"relaySessions\":2}\n"), "\(j.stdout)")
        // A session a minute, each closed 40 minutes after it was accepted (others' lines in
        // between: each but the first, whose close is the first line after its silence, is said
        // ended unseen, then closes): 20 sessions, none ended unseen.
        var lines: [(Int, String)] = []
        for k in 0..<20 {
            lines.append((k * 60, "session s\(k) accepted peer=iPhone14,2 room=r"))
            lines.append((k * 60 + 2400, "session s\(k) closed reason=peer frames=1 duration=2400s"))
        }
        let text = lines.sorted { $0.0 < $1.0 }.map { t, m in
            String(format: "2026-03-12T%02d:%02d:%02d.000+0100 broadcast-relay[812]: ", t / 3600, t / 60 % 60, t % 60) + m + "\n"
        }.joined()
        let many = try castscope(["tail", "--no-journal", "--no-color", "-"], stdin: Data(text.utf8))
        #expect(many.stdout.components(separatedBy: " no end ").count == 20, "\(many.stdout)")
        #expect(many.stdout.hasSuffix("castscope tail: 0 sessions seen; 20 relay sessions\n"), "\(many.stdout)")
    }

    @Test("tail beside a phone: a quiet relay session held for the join, then its closed line, is one session and not ended unseen; quiet again, it is")
    func liveQuietRelayHeld() {
        let live = LiveSessions()
        var order = 0
        func relay(_ kind: String, _ id: String, _ minutes: Int64, _ extra: [(String, String)] = []) -> [LiveSessions.Change] {
            order += 1
            return live.feed(Event(kind: kind, sdk: "relay", side: .relay, time: minutes * 60_000_000, process: "broadcast-relay", pid: 811,
                                   message: "session \(id) \(kind)", attrs: [("session", id)] + extra,
                                   source: SourceRef(path: "relay.journal", line: order), order: order, parsedTime: nil, fileIndex: 0))
        }
        func phone(_ kind: String, _ minutes: Int64) {
            order += 1
            _ = live.feed(Event(kind: kind, sdk: "jitsi", side: .extension, time: minutes * 60_000_000, process: "BroadcastExtension", pid: 900,
                                message: kind, attrs: [], source: SourceRef(path: "device.log", line: order), order: order,
                                parsedTime: nil, fileIndex: 0))
        }
        // (a phone session connected: the relay's sessions are held for the join)
        phone("broadcast.started", 0)
        phone("socket.connected", 0)
        _ = relay("relay.accepted", "aaa", 0)
        _ = relay("relay.accepted", "bbb", 5)
        let said = relay("relay.stats", "bbb", 40, [("frames", "10")])
        #expect(said.contains { if case .relayNoEnd(let r, _) = $0 { r.id == "aaa" } else { false } }, "\(said)")
        #expect(live.relayNoEndSeen == 1)
        _ = relay("relay.closed", "aaa", 41, [("reason", "peer")])
        #expect(live.relaySessions == 2 && live.relayNoEndSeen == 0, "\(live.relaySessions) \(live.relayNoEndSeen)")
        // bbb quiet past 30 minutes: ended unseen, once; a line of it, then quiet again: once more.
        _ = relay("relay.accepted", "ccc", 75)
        #expect(live.relayNoEndSeen == 1, "\(live.relayNoEndSeen)")
        _ = relay("relay.stats", "bbb", 76, [("frames", "10")])
        #expect(live.relayNoEndSeen == 0, "\(live.relayNoEndSeen)")
        _ = relay("relay.accepted", "ddd", 110)
        #expect(live.relaySessions == 4, "\(live.relaySessions)")
        #expect(live.relayNoEndSeen == 2, "bbb and ccc: \(live.relayNoEndSeen)")
    }

    @Test("tail --json: a relay session ended unseen is `\"change\":\"no-end\"`, one word, as a session's and as the README writes it")
    func tailRelayNoEndJSON() throws {
        let j = try castscope(["tail", "--no-journal", "--json", "-"], stdin: Data(Self.quietThenClosed.utf8))
        #expect(j.stdout.contains("{\"type\":\"relay\",\"change\":\"no-end\",\"id\":\"aaa\""), "\(j.stdout)")
        #expect(!j.stdout.contains("\"no end\""), "\(j.stdout)")
    }
}

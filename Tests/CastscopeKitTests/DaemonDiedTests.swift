import Foundation
import Testing

/// A daemon's death as systemd and the kernel log it: the relay's open sessions stop with it
/// (no `closed` line), which the finding names; another unit's death is a warning. The
/// relay's lines are the contract's, the death lines as in jicofo#1145, janus#2840 and
/// jibri#6768 (constructed around them).
@Suite("daemon-died: the relay (or an SFU) killed, crashed, or restarted until systemd gave up")
struct DaemonDiedTests {
    static let relayKilled = """
        -- Logs begin at Thu 2026-03-12 10:00:00 CET, end at Thu 2026-03-12 10:20:00 CET. --
        Mar 12 10:15:04 relay1 broadcast-relay[811]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=standup
        Mar 12 10:15:04 relay1 broadcast-relay[811]: session 0b7f1a2c-0000-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone15,3 room=demo
        Mar 12 10:15:05 relay1 broadcast-relay[811]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 stats frames=10 bytes=281133 fps=10.0 dropped=0
        Mar 12 10:15:05 relay1 broadcast-relay[811]: session 0b7f1a2c-0000-4f0e-9a51-2f1d3c4b5a69 closed reason=peer-eof frames=10 duration=1.0s
        Mar 12 10:15:06 relay1 broadcast-relay[811]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 stats frames=10 bytes=281133 fps=10.0 dropped=0
        Mar 12 10:15:07 relay1 kernel: Out of memory: Killed process 811 (broadcast-relay) total-vm:2345678kB, anon-rss:1234567kB
        Mar 12 10:15:07 relay1 systemd[1]: broadcast-relay.service: A process of this unit has been killed by the OOM killer.
        Mar 12 10:15:07 relay1 systemd[1]: broadcast-relay.service: Main process exited, code=killed, status=9/KILL
        Mar 12 10:15:07 relay1 systemd[1]: broadcast-relay.service: Failed with result 'oom-kill'.
        Mar 12 10:15:12 relay1 systemd[1]: broadcast-relay.service: Scheduled restart job, restart counter is at 1.
        Mar 12 10:40:00 relay1 systemd[1]: jibri.service: Main process exited, code=exited, status=143/n/a
        Mar 12 10:41:00 relay1 systemd[1]: jibri.service: Start request repeated too quickly.
        Mar 12 11:00:00 relay1 broadcast-relay[977]: session 5e6f7a8b-0000-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=later
        Mar 12 11:00:01 relay1 broadcast-relay[977]: session 5e6f7a8b-0000-4f0e-9a51-2f1d3c4b5a69 stats frames=10 bytes=281133 fps=10.0 dropped=0
        Mar 12 11:00:02 relay1 systemd[1]: snapd.service: Main process exited, code=dumped, status=6/ABRT
        Mar 12 11:00:03 relay1 broadcast-relay[977]: session 5e6f7a8b-0000-4f0e-9a51-2f1d3c4b5a69 closed reason=peer-eof frames=10 duration=3.0s
        Mar 12 11:10:00 relay1 systemd[1]: node-exporter.service: Main process exited, code=killed, status=9/KILL
        Mar 12 11:20:00 relay1 systemd[1]: node-exporter.service: Main process exited, code=killed, status=9/KILL
        Mar 12 11:30:00 relay1 systemd[1]: node-exporter.service: Main process exited, code=killed, status=9/KILL

        """

    @Test("the relay killed by the OOM killer: one error naming the session it was serving; a restart loop of another unit: a warning")
    func relayKilled() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("relay.txt")
        try Self.relayKilled.write(to: path, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", path.path])
        let findings = (r.json?["findings"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "daemon-died" }
        // The relay's death (an error), then one warning per other unit: jibri, snapd (which
        // names no relay session though one was open: another process), the exporter ×3.
        #expect(findings.count == 4, "\(findings)")
        let snapd = try #require(findings.first { ($0["message"] as? String)?.hasPrefix("snapd") == true })
        #expect(snapd["severity"] as? String == "warning")
        let exporter = try #require(findings.first { ($0["message"] as? String)?.hasPrefix("node-exporter") == true })
        #expect((exporter["message"] as? String)?.contains("3 times") == true, "\(exporter)")
        #expect((exporter["evidence"] as? [Any])?.count == 1)
        let relay = try #require(findings.first { ($0["message"] as? String)?.hasPrefix("broadcast-relay") == true })
        #expect(relay["severity"] as? String == "error")
        let text = relay["message"] as? String ?? ""
        #expect(text.contains("7c1e0d52") && !text.contains("0b7f1a2c"), "\(text)")
        #expect(text.hasPrefix("broadcast-relay: the kernel's OOM killer killed it (status=9/KILL)"), "\(text)")
        #expect((relay["evidence"] as? [Any])?.count == 3, "the kernel's line, systemd's and the exit: one death")
        let jibri = try #require(findings.first { ($0["message"] as? String)?.hasPrefix("jibri") == true })
        #expect(jibri["severity"] as? String == "warning")
        #expect((jibri["message"] as? String)?.contains("stopped restarting") == true)
    }

    /// The relay crashing inside libc (the common case), a TURN server jumping to an address no
    /// file maps (the kernel then writes no ` in …[…]`: coturn#790), and a paste whose dates the
    /// reporter cut (coturn#1590): each names its daemon.
    static let segfaults = """
        Mar 12 10:15:04 relay1 broadcast-relay[811]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=standup
        Mar 12 10:15:05 relay1 broadcast-relay[811]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 stats frames=10 bytes=281133 fps=10.0 dropped=0
        Mar 12 10:15:06 relay1 kernel: [ 4380.535280] broadcast-relay[811]: segfault at ffffffff00000000 ip 00007fa181796d31 sp 00007fa17dd76c80 error 5 in libc.so.6[7fa181694000+1cd000]
        Mar 12 10:20:00 relay1 kernel: [ 4674.809235] turnserver[32028]: segfault at 7f4e5c0008d0 ip 00007f4e5c0008d0 sp 00007f4e63a7b8d8 error 15
        Mar 12 10:30:00 relay1 kernel: [ 5274.809235] turnserver[32100]: segfault at 7f4e5c0008d0 ip 00007f4e5c0008d0 sp 00007f4e63a7b8d8 error 15

        """

    @Test("a segfault names the task when it happened in a library or at an unmapped address; a cut date keeps the unit")
    func segfaults() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("relay.txt")
        try Self.segfaults.write(to: path, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", path.path])
        let findings = (r.json?["findings"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "daemon-died" }
        #expect(findings.count == 2, "\(findings)")
        let relay = try #require(findings.first { ($0["message"] as? String)?.hasPrefix("broadcast-relay: it crashed (segfault in libc.so.6)") == true })
        #expect(relay["severity"] as? String == "error")
        #expect((relay["message"] as? String)?.contains("7c1e0d52") == true, "\(relay)")
        let turn = try #require(findings.first { ($0["message"] as? String)?.hasPrefix("turnserver: it crashed (segfault)") == true })
        #expect(turn["severity"] as? String == "warning")
        #expect((turn["message"] as? String)?.contains("2 times") == true, "\(turn)")

        // One library crash the kernel tells once per faulting thread, each under the thread's
        // name (`hloop 12345`: digits are no name), then systemd's exit line: one death, the unit's.
        let threads = dir.appendingPathComponent("threads.txt")
        try """
            Mar  3 10:00:01 relay1 kernel: [12345.678901] Chrome_IOThread[2211]: segfault at 0 ip 00007fa181796d31 sp 00007fa17dd76c80 error 4 in libc.so.6[7fa181694000+1cd000]
            Mar  3 10:00:01 relay1 kernel: [12345.678911] Chrome_ChildIOT[2214]: segfault at 0 ip 00007fa181796d31 sp 00007fa17dd76c80 error 4 in libc.so.6[7fa181694000+1cd000]
            Mar  3 10:00:01 relay1 kernel: [12345.678921] hloop 12345[2215]: segfault at 0 ip 00007fa181796d31 sp 00007fa17dd76c80 error e in libc.so.6[7fa181694000+1cd000]
            Mar  3 10:00:02 relay1 systemd[1]: janus.service: Main process exited, code=dumped, status=11/SEGV

            """.write(to: threads, atomically: true, encoding: .utf8)
        let t = try castscope(["analyze", "--json", threads.path])
        let one = (t.json?["findings"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "daemon-died" }
        #expect(one.count == 1 && (one.first?["message"] as? String)?.hasPrefix("janus: its main process crashed (core dumped) (after a segfault in libc.so.6)") == true, "\(one)")
        #expect((one.first?["evidence"] as? [Any])?.count == 4, "\(one)")
        // The CPU's traps are crashes too (janus#2477-style GPF in libc).
        let traps = dir.appendingPathComponent("traps.txt")
        try """
            Mar  3 14:00:01 relay1 kernel: [52345.678901] traps: janus[5700] general protection fault ip:7f2b0c1d sp:7ffd1234 error:0 in libc-2.31.so[7f2b0c000000+178000]

            """.write(to: traps, atomically: true, encoding: .utf8)
        let gp = try castscope(["analyze", "--json", traps.path])
        let gpf = (gp.json?["findings"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "daemon-died" }
        #expect(gpf.first?["message"] as? String == "janus: it crashed (general protection fault in libc-2.31.so)", "\(gpf)")
        // A systemd unit's name is whole: broadcast-relay's death is not broadcast-relay-edge's.
        let edge = dir.appendingPathComponent("edge.txt")
        try """
            2026-03-12T10:02:09+0000 relay1 broadcast-relay-edge[811]: session 6a1d9e27-3c4b-4f58-8e02-b5d7c9a1e364 accepted peer=iPhone14,2 room=support
            2026-03-12T10:02:10+0000 relay1 broadcast-relay-edge[811]: session 6a1d9e27-3c4b-4f58-8e02-b5d7c9a1e364 stats frames=10 bytes=281534 fps=10.0 dropped=0
            2026-03-12T10:02:11+0000 relay1 systemd[1]: broadcast-relay.service: Main process exited, code=killed, status=9/KILL

            """.write(to: edge, atomically: true, encoding: .utf8)
        let g = try castscope(["analyze", "--json", edge.path])
        let other = (g.json?["findings"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "daemon-died" }
        #expect(other.count == 1 && other.first?["severity"] as? String == "warning", "\(other)")

        let cut = dir.appendingPathComponent("cut.txt")
        try """
            hostname turnserver[21891]: *** buffer overflow detected ***: terminated
            hostname systemd[1]: coturn.service: Main process exited, code=dumped, status=6/ABRT
            hostname systemd[1]: coturn.service: Failed with result 'core-dump'.

            """.write(to: cut, atomically: true, encoding: .utf8)
        let c = try castscope(["analyze", "--json", cut.path])
        let died = (c.json?["findings"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "daemon-died" }
        #expect(died.count == 1 && (died.first?["message"] as? String)?.hasPrefix("coturn: its main process crashed") == true, "\(died)")
    }

    /// Deaths in other words (hunt round 4, session 45): an older kernel's OOM killer
    /// (`Kill process … or sacrifice child`, Kurento#313; `Killed process N, UID U, (comm)`,
    /// cPanel's 2.6 kernels), mediasoup's worker (mediasoup#923), AddressSanitizer's report
    /// under a supervisor's prefix (reticulum#77).
    @Test("an older kernel's OOM killer, mediasoup's worker, AddressSanitizer: deaths")
    func otherWords() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("relay.txt")
        try """
            Mar 12 10:15:04 relay1 broadcast-relay[811]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=standup
            Mar 12 10:15:05 relay1 broadcast-relay[811]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 stats frames=10 bytes=281133 fps=10.0 dropped=0
            Mar 12 10:15:07 relay1 kernel: [2858609.598568] Out of memory: Kill process 811 (broadcast-relay) score 765 or sacrifice child
            Mar 12 10:15:07 relay1 kernel: [2858609.598600] Killed process 811 (broadcast-relay) total-vm:5213636kB, anon-rss:3057868kB, file-rss:0kB
            Mar 12 10:20:00 relay1 kernel: [2858909.598568] Killed process 11726, UID 498, (mysqld) total-vm:7823732kB, anon-rss:2539268kB, file-rss:768kB
            Mar 12 10:30:00 relay1 node[4021]: 2026-03-12T10:30:00.633Z mediasoup:ERROR:Worker worker process died unexpectedly [pid:34, code:null, signal:SIGABRT]
            Mar 12 10:40:00 relay1 bash[1392]: janus-gateway.default@mozillareality(O): ==9536==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000018 (pc 0x7f1458a2e831 bp 0x7f14416781b0 sp 0x7f1441678180 T122)

            """.write(to: path, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", path.path])
        let findings = (r.json?["findings"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "daemon-died" }
        let messages = findings.compactMap { $0["message"] as? String }
        #expect(findings.count == 4, "\(messages)")
        let relay = try #require(findings.first { ($0["message"] as? String)?.hasPrefix("broadcast-relay: the kernel's OOM killer killed it") == true }, "\(messages)")
        #expect(relay["severity"] as? String == "error")
        #expect((relay["message"] as? String)?.contains("7c1e0d52") == true)
        #expect((relay["evidence"] as? [Any])?.count == 2, "the OOM killer's two lines: one death")
        #expect(messages.contains("mysqld: the kernel's OOM killer killed it"), "\(messages)")
        #expect(messages.contains("mediasoup-worker: it died unexpectedly (SIGABRT)"), "\(messages)")
        #expect(messages.contains("janus-gateway: it crashed (AddressSanitizer: SEGV on unknown address 0x000000000018)"), "\(messages)")
    }

    /// systemd's restart counter says how often a unit died before the paste began
    /// (bbb-install#577: `coturn.service: Scheduled restart job, restart counter is at 75`).
    @Test("the restart counter: how often it died; restarts with no death line are a warning of their own")
    func restartCounter() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("coturn.txt")
        try """
            -- Logs begin at Mon 2022-11-21 15:49:47 UTC. --
            Nov 22 16:10:14 turnserver-room systemd[1]: coturn.service: Scheduled restart job, restart counter is at 74.
            Nov 22 16:10:14 turnserver-room systemd[1]: Stopped coTURN STUN/TURN Server.
            Nov 22 16:10:16 turnserver-room systemd[1]: Started coTURN STUN/TURN Server.
            Nov 22 16:11:14 turnserver-room systemd[1]: coturn.service: Main process exited, code=exited, status=255/EXCEPTION
            Nov 22 16:11:14 turnserver-room systemd[1]: coturn.service: Failed with result 'exit-code'.
            Nov 22 16:11:14 turnserver-room systemd[1]: coturn.service: Scheduled restart job, restart counter is at 75.
            Nov 22 16:12:00 turnserver-room systemd[1]: jicofo.service: Scheduled restart job, restart counter is at 3.

            """.write(to: path, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", path.path])
        let messages = (r.json?["findings"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "daemon-died" }.compactMap { $0["message"] as? String }
        #expect(messages == [
            "coturn: its main process exited with an error (status=255/EXCEPTION); systemd's restart counter for it reached 75",
            "jicofo: it keeps exiting: systemd restarted it (restart counter at 3)",
        ], "\(messages)")
    }

    /// `systemctl status` pasted: its head says the unit failed, and when, though the entries
    /// below it (the last few) may not hold the death (janus#2859, quoted; coturn#118).
    @Test("systemctl status's 'Active: failed (Result: …) since …' is the unit's death at that time")
    func statusHead() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("status.txt")
        try """
            > root@host:~# service janus status
            > ● janus.service - Janus WebRTC Server
            >      Loaded: loaded (/etc/systemd/system/janus.service; disabled; vendor preset: enabled)
            >      Active: failed (Result: exit-code) since Sat 2022-01-22 02:05:20 UTC; 22min ago
            >    Main PID: 64436 (code=exited, status=1/FAILURE)
            >
            > Jan 22 02:05:20 host.worklx.com systemd[1]: Started Janus WebRTC Server.
            > Jan 22 02:05:20 host.worklx.com sudo[64453]: Error opening log file /var/log/janus/janus.log

            """.write(to: path, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", path.path])
        let died = (r.json?["findings"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "daemon-died" }
        #expect(died.count == 1, "\(died)")
        #expect(died.first?["message"] as? String == "janus: systemctl status shows it failed (Result: exit-code)")
        #expect((died.first?["time"] as? String)?.hasPrefix("2022-01-22T02:05:20") == true, "\(died)")
        // A running unit's head is no death.
        let running = dir.appendingPathComponent("running.txt")
        try """
            ● broadcast-relay.service - Broadcast relay
                 Active: active (running) since Tue 2024-03-12 09:00:01 UTC; 2h ago
            Mar 12 10:15:04 relay1 broadcast-relay[811]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=standup

            """.write(to: running, atomically: true, encoding: .utf8)
        let ok = try castscope(["analyze", "--json", running.path])
        #expect(!(ok.json?["findings"] as? [[String: Any]] ?? []).contains { $0["kind"] as? String == "daemon-died" })
        // A second unit's head after the first one's entries folds into the entry before it:
        // its `Active: failed` is not the first unit's death (the review: "janus … failed").
        let two = dir.appendingPathComponent("two.txt")
        try ("""
            ● janus.service - Janus WebRTC Server
                 Active: active (running) since Thu 2024-03-12 10:00:00 UTC; 22min ago
            Mar 12 10:05:19 host janus[1234]: [INFO] New session

            """ + """
            ● coturn.service - coTURN STUN/TURN Server
                 Active: failed (Result: signal) since Thu 2024-03-12 10:16:00 UTC; 16min ago

            """).write(to: two, atomically: true, encoding: .utf8)
        let t = try castscope(["analyze", "--json", two.path])
        let wrong = (t.json?["findings"] as? [[String: Any]] ?? []).filter { ($0["message"] as? String)?.hasPrefix("janus") == true }
        #expect(wrong.isEmpty, "\(wrong)")
    }
}

import Foundation
import Testing

/// What the sixth hunt for real pastes found read wrong, each around its real lines: Go's log
/// with a level letter taken for `journalctl -o short-full` (nextcloud/all-in-one#797),
/// java.util.logging's levels under a French locale (jicofo#161), daemons dying in their own
/// words or systemctl's (janus-gateway#987, #2382, pikvm#564, nextcloud-hpb-setup#172), one
/// OOM death told twice (docker/for-linux#1001), a ReplayKit code printed unsigned.
@Suite("hunt round 6: Go's level letter, localized JUL levels, daemon deaths in other words")
struct HuntRound6Tests {
    func analyze(_ text: String, name: String = "paste.txt", _ extra: [String] = []) throws -> (json: [String: Any], text: String) {
        try analyzePaste(text, name: name, extra)
    }

    func input(_ r: [String: Any]) -> [String: Any] { (r["inputs"] as? [[String: Any]])?.first ?? [:] }

    static let goLines = """
        2022-06-07 12:27:17.183734 I | main.go:200: Could not initialize janus MCU (dial tcp 127.0.0.1:8188: connect: connection refused) will retry in 2s
        2022-06-07 12:27:19.185350 I | main.go:200: Could not initialize janus MCU (dial tcp 127.0.0.1:8188: connect: connection refused) will retry in 4s

        """

    @Test("Go's log with a level letter (… I | main.go:200: …) is no short-full journal line: its file keeps every line")
    func goLevelLetterIsNoJournal() throws {
        let two = try analyze(Self.goLines)
        #expect(input(two.json)["format"] as? String == "timestamped", "\(input(two.json))")
        #expect(two.text.contains("2022-06-07 12:27:19.185350"), "\(two.text)")
        // A level word (`INFO |`) would have been the zone as well.
        let word = try analyze(Self.goLines.replacingOccurrences(of: " I | ", with: " INFO | "))
        #expect(input(word.json)["format"] as? String == "timestamped", "\(input(word.json))")
        // The docker logs the two lines came in (coturn, the signaling server, Janus): every line
        // a record, none unparsed (2 records and 20 unparsed lines as journal-short-full).
        let mixed = try analyze("""
            0: IO method (general relay thread): epoll (with changelist)
            0: turn server id=28 created
            \(Self.goLines)0: turn server[FATAL] [ice.c:janus_ice_test_stun_server:1009] No response to our STUN BINDING test
            [FATAL] [janus.c:main:4823] Invalid STUN address 127.0.0.1:3478
            Error launching Janus (error code 1), check the logs for more details
            Janus commit: not-a-git-repo

            Running Janus as a daemon
            Logger plugins folder: /usr/lib/x86_64-linux-gnu/janus/loggers

            """)
        #expect(input(mixed.json)["format"] as? String != "journal-short-full", "\(input(mixed.json))")
        #expect(input(mixed.json)["unparsed"] as? Int == 0, "\(input(mixed.json))")
        #expect(mixed.text.contains("Invalid STUN address"), "\(mixed.text)")
        // A short-full line with its host still reads so.
        let journal = try analyze("""
            Tue 2022-06-07 12:27:17 UTC relay1 broadcast-relay[811]: session 0b7f3c1e accepted peer=iPhone14,2
            Tue 2022-06-07 12:27:19 UTC relay1 janus[900]: [WARN] slow link

            """)
        #expect(input(journal.json)["format"] as? String == "journal-short-full", "\(input(journal.json))")
    }

    /// The type column `show` gives each line of `text` (its records in order).
    func types(_ text: String) throws -> [String] {
        try analyze(text).text.split(separator: "\n").dropFirst().compactMap { line in
            line.split(separator: " ", omittingEmptySubsequences: true).first { ["Default", "Info", "Debug", "Error", "Fault"].contains(String($0)) }.map(String.init)
        }
    }

    @Test("java.util.logging's levels as the JDK translates them: SEVERE's are Error, INFO's Info, FINE's Debug, WARNING's Default as WARNING is")
    func localizedJavaLevels() throws {
        // jicofo#161, under fr_FR: all three were Default.
        #expect(try types("""
            Jicofo 2017-01-27 18:41:58.015 AVERTISSEMENT: [98] org.jitsi.jicofo.JvbDoctor.log() Health check failed on: videobridge.jabberfr.org
            Jicofo 2017-01-27 18:41:58.015 INFOS: [38] org.jitsi.jicofo.BridgeSelector.removeJvbAddress().192 Removing JVB: videobridge.jabberfr.org
            Jicofo 2017-01-27 18:41:58.016 GRAVE: [38] org.jitsi.jicofo.JvbDoctor.log() Stopping health-check task for: videobridge.jabberfr.org
            Jicofo 2017-01-27 18:41:58.017 PLUS PRÉCIS: [38] org.jitsi.jicofo.JvbDoctor.log() next

            """) == ["Default", "Info", "Error", "Debug"])
        // German, Spanish, Italian, Brazilian Portuguese, Swedish, Japanese.
        #expect(try types("""
            JVB 2024-09-02 09:08:16.652 INFORMATION: [1] MainKt.main#77: Starting jitsi-videobridge version 2.3.1
            JVB 2024-09-02 09:08:16.653 SCHWERWIEGEND: [1] MainKt.main#78: failed
            JVB 2024-09-02 09:08:16.654 WARNUNG: [1] MainKt.main#79: warned
            JVB 2024-09-02 09:08:16.655 INFORMACIÓN: [1] MainKt.main#80: es
            JVB 2024-09-02 09:08:16.656 INFORMAZIONI: [1] MainKt.main#81: it
            JVB 2024-09-02 09:08:16.657 INFORMAÇÕES: [1] MainKt.main#82: pt
            JVB 2024-09-02 09:08:16.658 ALLVARLIG: [1] MainKt.main#83: sv
            JVB 2024-09-02 09:08:16.659 AM FEINSTEN: [1] MainKt.main#84: de
            JVB 2024-09-02 09:08:16.660 重大: [1] MainKt.main#85: ja

            """) == ["Info", "Error", "Default", "Info", "Info", "Info", "Error", "Debug", "Error"])
    }

    func daemonDied(_ text: String, _ extra: [String] = ["--date", "2025-09-25"]) throws -> [String] {
        let findings = try analyze(text, extra).json["findings"] as? [[String: Any]] ?? []
        return findings.filter { $0["kind"] as? String == "daemon-died" }.compactMap { $0["message"] as? String }
    }

    @Test("Janus's own fatal exit, a supervisor's and systemctl's words for a death, and glibc's abort as its cause")
    func daemonDeathsInOtherWords() throws {
        // janus-gateway#987: Janus's fatal error in main, under snap.
        #expect(try daemonDied("""
            Aug 29 10:46:42 loop-box snap[3904]: [ERR] [ice.c:janus_ice_set_stun_server:759] Could not resolve numb.viagenie.ca...
            Aug 29 10:46:42 loop-box snap[3904]: [FATAL] [janus.c:main:3725] Invalid STUN address numb.viagenie.ca:0

            """) == ["janus: it exited on a fatal error (Invalid STUN address numb.viagenie.ca:0)"])
        // The same in a container's output, untimed, with `Error launching Janus` on the next line: one death.
        #expect(try daemonDied("""
            0: turn server id=28 created
            [FATAL] [janus.c:main:4823] Invalid STUN address 127.0.0.1:3478
            Error launching Janus (error code 1), check the logs for more details
            Janus commit: not-a-git-repo

            """) == ["janus: it exited on a fatal error (Invalid STUN address 127.0.0.1:3478)"])
        // With systemd's exit line, systemd tells how it ended and Janus's words why.
        #expect(try daemonDied("""
            Sep 25 07:32:37 h janus[7510]: [FATAL] [janus.c:main:3725] Invalid STUN address numb.viagenie.ca:0
            Sep 25 07:32:38 h systemd[1]: janus.service: Main process exited, code=exited, status=1/FAILURE

            """) == ["janus: its main process exited with an error (status=1/FAILURE) after a fatal error (Invalid STUN address numb.viagenie.ca:0)"])
        // pikvm#564: the supervisor's exception, twice, and Janus's fatal line it quotes: one death.
        let pikvm = try daemonDied("""
            Dec 12 18:21:48 pi kvmd-janus[498]: kvmd.apps.janus.runner            INFO --- => [FATAL] [janus.c:main:5557] No Janus API transport is available... enable at least one and restart Janus
            Dec 12 18:21:48 pi kvmd-janus[498]: kvmd.apps.janus.runner           ERROR --- Unexpected Janus error: pid=914
            Dec 12 18:21:48 pi kvmd-janus[498]: RuntimeError: Janus unexpectedly died
            Dec 12 18:21:48 pi kvmd-janus[498]: RuntimeError: Janus unexpectedly died

            """)
        #expect(pikvm.count == 1 && pikvm[0].hasPrefix("janus: it exited on a fatal error (No Janus API transport"), "\(pikvm)")
        #expect(try daemonDied("Dec 12 18:21:48 pi kvmd-janus[498]: RuntimeError: Janus unexpectedly died\n") == ["janus: its supervisor says it died unexpectedly"])
        // nextcloud-hpb-setup#172: systemctl's report above the status it asks for (unparsed before).
        let job = try daemonDied("""
            root@hpb:~# sudo systemctl restart janus
            Job for janus.service failed because the control process exited with error code.
            See "systemctl status janus.service" and "journalctl -xeu janus.service" for details.
            root@hpb:~# systemctl status janus.service
            ● janus.service - Janus WebRTC gateway
                 Loaded: loaded (/lib/systemd/system/janus.service; enabled; preset: enabled)
                 Active: activating (start) since Wed 2025-03-26 21:08:22 EDT; 1s ago
              Cntrl PID: 30329 (janus)

            Mar 26 21:08:22 hpb janus[30330]: Debug/log colors are disabled
            Mar 26 21:08:22 hpb janus[30330]: [Wed Mar 26 21:08:22 2025] Using 173.254.217.115 as local IP...

            """, [])
        #expect(job == ["janus: systemctl says its job failed (the control process exited with error code)"], "\(job)")
        // supervisord's words.
        #expect(try daemonDied("""
            2024-03-12 10:15:04,221 INFO exited: janus (terminated by SIGSEGV (core dumped); not expected)
            2024-03-12 10:15:09,001 INFO exited: jvb (exit status 0; expected)

            """) == ["janus: supervisord says it was killed (SIGSEGV (core dumped))"])
        // janus-gateway#2382: glibc's abort on the line before systemd's ABRT is its cause.
        #expect(try daemonDied("""
            Sep 25 07:32:37 janus07 janus[7510]: [5413101387322121] Sending event to transport...; 0x7f53ec370500
            Sep 25 07:32:37 janus07 janus[7510]: free(): corrupted unsorted chunks
            Sep 25 07:32:38 janus07 systemd[1]: janus.service: Main process exited, code=killed, status=6/ABRT
            Sep 25 07:32:38 janus07 systemd[1]: janus.service: Failed with result 'signal'.
            Sep 25 07:32:38 janus07 systemd[1]: janus.service: Scheduled restart job, restart counter is at 19.

            """) == ["janus: its main process was killed (status=6/ABRT) after an abort (free(): corrupted unsorted chunks); systemd's restart counter for it reached 19"])
        // Alone, the abort is the death; older glibc names the program.
        #expect(try daemonDied("Sep 25 07:32:37 relay1 coturn[811]: double free or corruption (out)\n") == ["coturn: it aborted (double free or corruption (out))"])
        #expect(try daemonDied("*** Error in `/usr/bin/janus': double free or corruption (fasttop): 0x00007f3c38000b20 ***\n")
            == ["janus: it aborted (double free or corruption (fasttop): 0x00007f3c38000b20)"])
        #expect(try daemonDied("*** stack smashing detected ***: terminated\n") == ["a process the paste does not name aborted (stack smashing detected: terminated)"])
        // Not deaths: another file's fatal error, an expected exit, a connection's words.
        #expect(try daemonDied("""
            [FATAL] [ice.c:janus_ice_test_stun_server:1009] No response to our STUN BINDING test
            Connection died unexpectedly
            the connection to the host app died unexpectedly, retrying

            """).isEmpty)
    }

    @Test("a watchdog's or RunningBoard's kill of an app reads the same as a full report, a forum-collapsed paragraph or an excerpt of its termination context: host-app-terminated, not a crash or nothing",
          arguments: [
              // Apple forum 747763: the header collapsed into one paragraph (it was an error `app-crashed` of an unnamed process).
              "Exception Type: EXC_CRASH (SIGKILL) Exception Codes: 0x0000000000000000, 0x0000000000000000 Termination Reason: FRONTBOARD 2343432205 <RBSTerminateContext| domain:10 code:0x8BADF00D explanation:scene-create watchdog transgression: app<com.bcad.blu.uat(EABDB60C-B43B-40F0-B9B8-EEA50D7818DA)>:1029 exhausted CPU time allowance of 9.52 seconds ProcessVisibility: Background ProcessState: Running reportType:CrashLog maxTerminationResistance:Interactive>\n\nTriggered by Thread: 0\n",
              // Apple forum 725476: the excerpt without its exception type (it was "nothing recognized").
              "Exception Codes: 0x0000000000000000, 0x0000000000000000\nTermination Reason: FRONTBOARD 2343432205 \n<RBSTerminateContext| domain:10 code:0x8BADF00D explanation:scene-create watchdog transgression: application<net.company.dev.myApp>:62816 exhausted real (wall clock) time allowance of 19.96 seconds\nProcessVisibility: Foreground\n",
              // Apple forum 751737: a full report's header (it was no finding).
              "Incident Identifier: 5CE05737-666A-4AD8-9BC5-D3ECD4CE2F71\nHardware Model:      iPhone14,2\nProcess:             App [482]\nPath:                /private/var/containers/Bundle/Application/B0D2B0B9-831F-401F-B00D-E733A35D72BD/App.app/App\nIdentifier:          uk.co.example.app\nDate/Time:           2024-05-01 16:47:45.5386 +0100\nOS Version:          iPhone OS 17.4.1 (21E236)\nReport Version:      104\n\nException Type:  EXC_CRASH (SIGKILL)\nException Codes: 0x0000000000000000, 0x0000000000000000\nTermination Reason: RUNNINGBOARD 0xd00d2bad \n\nTriggered by Thread:  0\n",
          ])
    func systemKillsOfAnApp(paste: String) throws {
        let r = try analyze(paste)
        let kinds = ((r.json["findings"] as? [[String: Any]]) ?? []).compactMap { $0["kind"] as? String }
        #expect(kinds == ["host-app-terminated"], "\(r.json["findings"] ?? [])")
    }

    static let coturnStatus = """
            [root@localhost ~]# systemctl restart turnserver.service
            Job for turnserver.service failed because a configured resource limit was exceeded. See "systemctl status turnserver.service" and "journalctl -xe" for details.
            [root@localhost ~]# systemctl status turnserver.service
            ● turnserver.service - coturn
               Loaded: loaded (/usr/lib/systemd/system/turnserver.service; disabled; vendor preset: disabled)
               Active: failed (Result: resources) since Wed 2017-04-05 08:50:26 CEST; 15s ago
                 Docs: man:coturn(1)

            Apr 05 08:50:25 localhost.localdomain turnserver[2465]: 0: Trying to bind fd 18 to <127.0.0.1:80>: errno=13

            """

    @Test("systemctl's untimed 'Job for … failed' and the 'Active: failed … since' of the status asked for next are one death, not two")
    func jobForAndStatusAreOneDeath() throws {
        // coturn/coturn#118, as pasted from a shell.
        let r = try analyze(Self.coturnStatus)
        let deaths = ((r.json["findings"] as? [[String: Any]]) ?? []).filter { $0["kind"] as? String == "daemon-died" }
        #expect(deaths.count == 1, "\(deaths)")
        let message = deaths.first?["message"] as? String ?? ""
        #expect(message.contains("turnserver") && !message.contains("2 times"), "\(message)")
        // Beside another file whose untimed line tells another unit's death (a review's case:
        // untimed lines sort first, and the other unit's came between).
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = dir.appendingPathComponent("a.txt"), b = dir.appendingPathComponent("b.txt")
        try Data(Self.coturnStatus.utf8).write(to: a)
        try Data("Traceback (most recent call last):\nRuntimeError: Janus unexpectedly died\n".utf8).write(to: b)
        let both = try castscope(["analyze", "--json", a.path, b.path])
        let told = ((both.json?["findings"] as? [[String: Any]]) ?? []).compactMap { $0["message"] as? String }
        #expect(told.filter { $0.contains("turnserver") }.count == 1, "\(told)")
        #expect(!told.contains { $0.contains("turnserver") && $0.contains("2 times") }, "\(told)")
    }

    @Test("one OOM death the kernel tells by 15 bytes of the name and systemd by the unit's whole name is one; a counter of 1 is no loop")
    func oomDeathOnce() throws {
        // docker/for-linux#1001: systemd's lines forwarded through kmsg; journald killed and restarted.
        let journald = try daemonDied("""
            May 15 23:09:30 ubuntu-s-1vcpu-2gb-ams3-01 systemd[1]: networkd-dispatcher.service: Main process exited, code=killed, status=9/KILL
            May 15 23:09:30 ubuntu-s-1vcpu-2gb-ams3-01 systemd[1]: networkd-dispatcher.service: Failed with result 'signal'.
            May 15 23:09:30 ubuntu-s-1vcpu-2gb-ams3-01 kernel: [  517.923918] Out of memory: Killed process 401 (systemd-journal) total-vm:32724kB, anon-rss:1112kB, file-rss:8888kB, shmem-rss:4kB
            May 15 23:09:30 ubuntu-s-1vcpu-2gb-ams3-01 kernel: [  517.928447] systemd[1]: systemd-journald.service: Service has no hold-off time (RestartSec=0), scheduling restart.
            May 15 23:09:30 ubuntu-s-1vcpu-2gb-ams3-01 kernel: [  517.928483] systemd[1]: systemd-journald.service: Scheduled restart job, restart counter is at 1.
            May 15 23:09:30 ubuntu-s-1vcpu-2gb-ams3-01 kernel: [  517.929161] systemd[1]: Stopped Journal Service.

            """)
        #expect(journald == ["networkd-dispatcher: its main process was killed (status=9/KILL)",
                             "systemd-journald: the kernel's OOM killer killed it; systemd restarted it"], "\(journald)")
        // A unit longer than 15 bytes: the kernel's line and systemd's of one death are one.
        #expect(try daemonDied("""
            Mar 12 10:15:07 sfu1 kernel: [ 9021.112233] Out of memory: Killed process 3386 (kurento-media-s) total-vm:5213636kB, anon-rss:3057868kB, file-rss:0kB, shmem-rss:0kB
            Mar 12 10:15:07 sfu1 systemd[1]: kurento-media-server.service: A process of this unit has been killed by the OOM killer.
            Mar 12 10:15:07 sfu1 systemd[1]: kurento-media-server.service: Main process exited, code=killed, status=9/KILL
            Mar 12 10:15:08 sfu1 systemd[1]: kurento-media-server.service: Scheduled restart job, restart counter is at 4.
            Mar 12 11:00:00 sfu1 systemd[1]: coturn.service: Scheduled restart job, restart counter is at 1.
            Mar 12 11:30:00 sfu1 systemd[1]: jicofo.service: Scheduled restart job, restart counter is at 3.

            """) == ["kurento-media-server: the kernel's OOM killer killed it (status=9/KILL); systemd's restart counter for it reached 4",
                     "coturn: it exited and systemd restarted it (restart counter at 1)",
                     "jicofo: it keeps exiting: systemd restarted it (restart counter at 3)"])
        // The kernel's 15 bytes of a relay's longer name blame its open session.
        let relay = try analyze("""
            Mar 12 10:15:04 relay1 broadcast-relay-eu[811]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=standup
            Mar 12 10:15:05 relay1 broadcast-relay-eu[811]: session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 stats frames=10 bytes=281133 fps=10.0 dropped=0
            Mar 12 10:15:07 relay1 kernel: Out of memory: Killed process 811 (broadcast-relay) total-vm:2345678kB, anon-rss:1234567kB

            """, ["--date", "2026-03-12"]).json["findings"] as? [[String: Any]] ?? []
        let died = try #require(relay.first { $0["kind"] as? String == "daemon-died" })
        #expect(died["severity"] as? String == "error" && (died["message"] as? String)?.contains("7c1e0d52") == true, "\(died)")
    }

    func replayKit(_ text: String) throws -> [String] {
        let findings = try analyze(text).json["findings"] as? [[String: Any]] ?? []
        return findings.filter { $0["kind"] as? String == "replaykit-error" }.compactMap { $0["message"] as? String }
    }

    @Test("a ReplayKit code printed unsigned (64 or 32 bits), on the domain's line or the line next to it, is the negative code")
    func unsignedReplayKitCode() throws {
        let contentResize = "ReplayKit error -5807 (contentResize): interrupted by multitasking and content resizing (e.g. the app went to the background / split view)"
        // Swift's dump() of the NSError, the code on a line of its own (victorchee/ReplayKitDemo#2).
        #expect(try replayKit("""
            - code: 18446744073709545809
            domain: "com.apple.ReplayKit.RPRecordingErrorDomain"

            """) == [contentResize])
        #expect(try replayKit("error: code: 4294961489, domain: com.apple.ReplayKit.RPRecordingErrorDomain\n") == [contentResize])
        #expect(try replayKit("flutter: PlatformException(18446744073709545809, The operation couldn’t be completed., com.apple.ReplayKit.RPRecordingErrorDomain, null)\n") == [contentResize])
        // NSError's own description of it.
        #expect(try replayKit("Error: The operation couldn’t be completed. (com.apple.ReplayKit.RPRecordingErrorDomain error -5808.)\n").first?.hasPrefix("ReplayKit error -5808") == true)
        // The code alone, far from any domain, is a number.
        #expect(try replayKit("""
            - code: 18446744073709545809
            - userInfo: 0 key/value pairs
            - note: nothing else
            - more: lines

            """).isEmpty)
    }

    @Test("a layout that reads fewer than one in five of a file's lines, the others unparsed, does not decide the file: plain text, its lines a segment")
    func fewLinesDoNotDecide() throws {
        let r = try analyze("""
            Hi, the relay keeps dying, here is what I see:
            0: turn server id=28 created
            0: turn server id=29 created
            Running Janus as a daemon
            Logger plugins folder: /usr/lib/x86_64-linux-gnu/janus/loggers
            Loading logger plugin 'libjanus_jsonlog.so'...
            Adding 1 external loggers
            Checking command line arguments...
            Debug/log level is 4
            Mar 12 10:15:07 relay1 systemd[1]: janus.service: Main process exited, code=killed, status=9/KILL
            Using 172.17.0.4 as local IP...
            Token based authentication disabled

            """, ["--date", "2026-03-12"])
        let inputs = (r.json["inputs"] as? [[String: Any]]) ?? []
        #expect(inputs.map { $0["format"] as? String } == ["plain", "journal-short-precise"], "\(inputs)")
        #expect(inputs.allSatisfy { $0["unparsed"] as? Int == 0 }, "\(inputs)")
        let findings = (r.json["findings"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        #expect(findings == ["janus: its main process was killed (status=9/KILL)"], "\(findings)")
        // One in five or more: the journal's, its other lines unparsed as before (a shell prompt).
        let journal = try analyze("""
            $ journalctl -u janus.service --no-pager
            Sep 25 15:54:11 tinypilot systemd[1]: Started Janus WebRTC gateway.
            Sep 25 15:54:12 tinypilot systemd[1]: janus.service: Main process exited, code=exited, status=1/FAILURE
            ░░ Subject: Unit process exited
            ░░ Defined-By: systemd
            ...

            """, ["--date", "2026-03-12"])
        #expect((journal.json["inputs"] as? [[String: Any]])?.first?["format"] as? String == "journal-short-precise")
    }
}

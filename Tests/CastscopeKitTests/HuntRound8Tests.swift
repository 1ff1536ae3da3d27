import Foundation
import Testing

@testable import CastscopeKit

/// Shapes a real paste takes on its way to a support engineer, read wrong until session 48:
/// a log quoted in a Markdown note (GitHub's "Quote reply", an e-mail reply), Markdown's two
/// trailing spaces, grep's and kubectl's leads before every line. Each around real lines.
/// A hunt round whose tests read a paste's JSON report as a `HuntRound8Tests.Summary` (rounds 8
/// to 10 share it).
protocol PasteSummarySuite {}

extension PasteSummarySuite {
    func analyze(_ text: String, name: String = "paste.txt") throws -> HuntRound8Tests.Summary {
        HuntRound8Tests.Summary(json: try analyzePaste(text, name: name).json)
    }
}

@Suite("hunt round 8: a log quoted in Markdown, trailing white space, grep's and kubectl's leads")
struct HuntRound8Tests: PasteSummarySuite {
    struct Summary {
        let json: [String: Any]
        var input: [String: Any] { (json["inputs"] as? [[String: Any]])?.first ?? [:] }
        var findings: [[String: Any]] { json["findings"] as? [[String: Any]] ?? [] }
        var kinds: [String] { findings.compactMap { $0["kind"] as? String } }
        func messages(_ kind: String) -> [String] { findings.filter { $0["kind"] as? String == kind }.compactMap { $0["message"] as? String } }
        func times(_ kind: String) -> [String?] { findings.filter { $0["kind"] as? String == kind }.map { $0["time"] as? String } }
    }

    /// 1panel#223 (https://github.com/1Panel-dev/1Panel/issues/223): a Go daemon's exit, as
    /// `journalctl -xe` showed it.
    static let journal = """
        Mar 15 08:47:50 sehnsucht 1panel[18078]: [2023-03-15 08:47:50] [INFO] init session successfully
        Mar 15 08:47:50 sehnsucht 1panel[18078]: [2023-03-15 08:47:50] [INFO] sync app start...
        Mar 15 08:47:50 sehnsucht systemd[1]: 1panel.service: Main process exited, code=exited, status=2/INVALIDARGUMENT
        Mar 15 08:47:55 sehnsucht systemd[1]: 1panel.service: Scheduled restart job, restart counter is at 169.
        """

    @Test("a Markdown note's quote is read without its markers: a quoted code block's lines keep their times, its prose is skipped")
    func markdownQuotes() throws {
        // GitHub's "Quote reply" of a comment with a fenced log, saved with the ticket as .md:
        // the markers stayed on every line, the lines were plain text and the death lost its time.
        let lines = Self.journal.split(separator: "\n")
        let reply = "> The service keeps failing:\n> \n> ```\n" + lines.map { "> \($0)\n" }.joined() + "> ```\n\nSame for me since the update.\n"
        let r = try analyze(reply, name: "ticket.md")
        #expect(r.input["format"] as? String == "journal-short-precise", "\(r.input)")
        #expect(r.input["records"] as? Int == 4, "\(r.input)")
        #expect(r.kinds == ["daemon-died"], "\(r.kinds)")
        #expect(r.times("daemon-died") == ["2023-03-15T08:47:50.000000"], "\(r.findings)")
        // A quote without a fence is a quoted log: all its lines, without the markers, nested
        // or not (an e-mail's `> > `), beside a fenced block elsewhere in the note.
        let nested = "Notes\n\n```\nnot the log\n```\n\n" + lines.map { "> > \($0)\n" }.joined()
        let n = try analyze(nested, name: "notes.markdown")
        #expect(n.input["format"] as? String == "journal-short-precise", "\(n.input)")
        #expect(n.times("daemon-died") == ["2023-03-15T08:47:50.000000"], "\(n.findings)")
        // AdguardForiOS#1585's TestFlight crash summary, quoted under a sentence: its crash
        // (nothing was found with the markers on).
        let summary = """
            Crash from TestFlight:

            > Date: 6/24/20, 12:54 AM
            > Process: AdGuardProTodayExtension
            > Bundle id: com.adguard.AdguardPro.todayExtension
            > Device: iPhone 7, iOS 13.5
            > Bundle version: 4.0.1
            >
            > Exception type: EXC_BAD_ACCESS (SIGSEGV)
            > Exception subtype: KERN_INVALID_ADDRESS: 0x0
            > Exception codes: 0x0000000000000001, 0x0000000000000000
            > Culprit: Unknown
            > VM Protection: 0x0 is not in any region.
            >
            > Triggered by thread: 0
            > Thread name: Dispatch queue: com.apple.main-thread
            > Call stack:
            > 0   libsystem_kernel.dylib        \t0x000000019686d198 0x196869000 + 16792      \t// mach_msg_trap

            """
        let s = try analyze(summary, name: "crash.md")
        #expect(s.kinds == ["app-crashed"], "\(s.kinds)")
        #expect(s.messages("app-crashed").first?.hasPrefix("AdGuardProTodayExtension crashed (EXC_BAD_ACCESS (SIGSEGV)") == true, "\(s.findings)")
    }

    @Test("white space at a message's end (Markdown's line break, a mail's copy) does not hide a death, a crash, nor split one crash in two")
    func trailingWhiteSpace() throws {
        // Markdown's two spaces of a line break on every line of 1panel#223's journal: the
        // exit was no death (the rule's last word ran to the end of the line).
        let r = try analyze(Self.journal.split(separator: "\n").map { "\($0)  \n" }.joined())
        #expect(r.kinds == ["daemon-died"], "\(r.kinds)")
        #expect(r.messages("daemon-died").first?.hasPrefix("1panel: its main process exited with an error (status=2/INVALIDARGUMENT)") == true, "\(r.findings)")
        // Agora-Flutter-SDK#700's Crashlytics copy: its exception was no crash.
        let crashlytics = try analyze("Fatal Exception: NSInternalInconsistencyException  \n0  CoreFoundation                 0x99288 __exceptionPreprocess  \n1  libobjc.A.dylib                0x16744 objc_exception_throw  \n")
        #expect(crashlytics.kinds == ["app-crashed"], "\(crashlytics.kinds)")
        #expect(crashlytics.messages("app-crashed").first?.contains("uncaught exception NSInternalInconsistencyException)") == true, "\(crashlytics.findings)")
        // flutter-webrtc#765: the debugger's SIGABRT after the uncaught exception is the same
        // crash; with `SIGABRT  ` captured it was a second one.
        let lldb = """
            *** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: '-[RTCI420Buffer pixelBuffer]: unrecognized selector sent to instance 0x283c56c30'  
            *** First throw call stack:  
            libc++abi: terminating with uncaught exception of type NSException  
            * thread #7, queue = 'IncomingVideoStream', stop reason = signal SIGABRT  
                frame #0: 0x00000001cf8b27b0 libsystem_kernel.dylib`__pthread_kill + 8  

            """
        let l = try analyze(lldb)
        #expect(l.kinds == ["app-crashed"], "\(l.kinds) \(l.findings)")
    }

    @Test("grep's line numbers and file names, and kubectl's --prefix, before every line come off: the lines keep their times")
    func searchAndClusterLeads() throws {
        let lines = Self.journal.split(separator: "\n")
        let leads: [(String, (Int) -> String)] = [
            ("grep -n", { "\($0 + 1):" }),
            ("grep -H", { _ in "/var/log/syslog:" }),
            ("grep -Hn", { "logs/relay.log:\($0 + 1):" }),
            ("kubectl logs --prefix", { _ in "[pod/onepanel-7d9f4c6b8-x2x9k/onepanel] " }),
        ]
        for (tool, lead) in leads {
            let text = lines.enumerated().map { "\(lead($0.offset))\($0.element)\n" }.joined()
            let r = try analyze(text)
            #expect(r.input["format"] as? String == "journal-short-precise", "\(tool): \(r.input)")
            #expect(r.times("daemon-died") == ["2023-03-15T08:47:50.000000"], "\(tool): \(r.findings)")
        }
        // A context line of `grep -n -C` (`12-`) is one, and an uptime before a daemon's own
        // words (coturn's `268: session …`, no time after it) is no tool's lead.
        let context = lines.enumerated().map { "\($0.offset + 10)\($0.offset == 2 ? ":" : "-")\($0.element)\n" }.joined()
        #expect(try analyze(context).times("daemon-died") == ["2023-03-15T08:47:50.000000"])
        #expect(TimeLeadSource.detect(Array("268: session 002000000000000001: TCP socket closed remotely 192.168.43.187:51048\n270: session 001000000000000001: refreshed, realm=<mycompany.org>\n".utf8)) == nil)
        // `-H` alone before a log whose lines begin with their date or clock (grep's default over
        // several files): the date's or clock's first digits are no line number (the review's
        // case: every time was lost).
        let iso = """
            relay.log:2026-03-12T09:15:30+0000 relay1 systemd[1]: relay.service: Main process exited, code=exited, status=2/INVALIDARGUMENT
            relay.log:2026-03-12T09:15:31+0000 relay1 systemd[1]: relay.service: Failed with result 'exit-code'.
            relay.log:2026-03-12T09:15:32+0000 relay1 systemd[1]: relay.service: Scheduled restart job, restart counter is at 3.

            """
        let h = try analyze(iso)
        #expect(h.input["format"] as? String == "journal-short-iso", "\(h.input)")
        #expect(h.times("daemon-died").first??.hasPrefix("2026-03-12T09:15:30") == true, "\(h.findings)")
    }

    @Test("Crashlytics' stack-trace copy names its crashed queue twice: one crash")
    func crashlyticsCrashedTwice() throws {
        // AgoraRtcEngine_iOS#26 (https://github.com/AgoraIO/AgoraRtcEngine_iOS/issues/26): the
        // issue's `Crashed:` over its exception, then the crashed thread's over its frames.
        let r = try analyze("""
            Crashed: ahpl_main
            EXC_BAD_ACCESS KERN_INVALID_ADDRESS 0x000000000000001d


            Crashed: ahpl_main
            0  AgoraRtcKit                    0x34c06c (Missing UUID e18e97fdcb2835b9b2c6dc2918fe37cf)
            1  AgoraRtcKit                    0x4b6a78 agora::rtc::IMediaRecorder::getMediaRecorder(agora::rtc::IRtcEngine*, agora::rtc::IMediaRecorderObserver*) + 586060

            """)
        #expect(r.kinds == ["app-crashed"], "\(r.findings)")
        #expect((r.findings.first?["evidence"] as? [String])?.count == 2, "\(r.findings)")
        // Two crashes on the main thread pasted one after the other are two (the review's case).
        let separate = try analyze("""
            Crash 1 (build 41):
            Crashed: com.apple.main-thread
            0  MyApp                          0x0000000100a1b2c4 closure #1 in Encoder.push(_:) + 120
            1  libdispatch.dylib              0x00000001b2c1d3e8 _dispatch_call_block_and_release + 32

            Crash 2 (build 42), a different bug:
            Crashed: com.apple.main-thread
            0  libswiftCore.dylib             0x00000001a0b0c0d0 _assertionFailure(_:_:file:line:flags:) + 1440
            1  MyApp                          0x0000000100c0ffee Uploader.start() + 64

            """)
        #expect(separate.kinds == ["app-crashed", "app-crashed"], "\(separate.findings)")
        // Two crashes of different queues stay two.
        let two = try analyze("Crashed: ahpl_main\n0  AgoraRtcKit 0x34c06c\nCrashed: com.apple.main-thread\n0  UIKitCore 0x1a0b5c38c\n")
        #expect(two.kinds == ["app-crashed", "app-crashed"], "\(two.findings)")
    }

    @Test("a one-line paste in a terminal's colours (grep --color) is read without them")
    func oneColouredLine() throws {
        // theos-sdks#25's line as `grep --color=always` prints it: its date highlighted.
        let r = try analyze("\u{1B}[01;31m\u{1B}[K2019-04-23\u{1B}[m\u{1B}[K 19:09:38.168930+0800 JAXAPP[358:13321] Error Domain=com.apple.ReplayKit.RPRecordingErrorDomain Code=-5815 \"(null)\"\n")
        #expect(r.input["format"] as? String == "xcode", "\(r.input)")
        #expect(r.times("replaykit-error") == ["2019-04-23T19:09:38.168930+08:00"], "\(r.findings)")
    }
}

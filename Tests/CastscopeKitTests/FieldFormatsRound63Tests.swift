import Foundation
import Testing

@testable import CastscopeKit

/// Real pastes from public issues that castscope misread (session 63): a text crash report cut
/// after its exception (amazon-chime-sdk-react-native#174), a report of a kill with no header
/// (Apple forums 663128), a cut `.ips` saved under another name (Apple forums 718102), Janus
/// behind its `log_prefix` (janus-gateway-snap#36), and `systemctl status` pasted with no
/// journal lines below it (jitsi/jibri#279, coturn#118).
@Suite("field formats, session 63: cut crash reports, a headerless kill, a cut .ips by content, Janus's log prefix, a status alone")
struct FieldFormatsRound63Tests {
    func input(_ r: [String: Any]) -> [String: Any] { (r["inputs"] as? [[String: Any]])?.first ?? [:] }
    func findings(_ r: [String: Any]) -> [[String: Any]] { r["findings"] as? [[String: Any]] ?? [] }

    /// amazon-chime-sdk-react-native#174: the report's header, its exception, and the paste ends
    /// inside `VM Region Info:` (no termination reason, no thread).
    static let cutCrash = #"""
        Incident Identifier: 9DD08A81-771B-4EAC-A345-ED083A0A021B
        Hardware Model:      iPhone14,3
        Process:             MeetingApp [3529]
        Path:                /private/var/containers/Bundle/Application/2579E1E0-F2F6-4D78-9FED-04C87633F9C6/MeetingApp.app/MeetingApp
        Identifier:          null
        Version:             1.4.0 (135)
        AppStoreTools:       14C17
        AppVariant:          1:iPhone14,3:16
        Beta:                YES
        Code Type:           ARM-64 (Native)
        Role:                Foreground
        Parent Process:      launchd [1]
        Coalition:          null

        Date/Time:           2023-02-01 12:29:06.0496 +0000
        Launch Time:         2023-02-01 12:28:42.3043 +0000
        OS Version:          iPhone OS 16.2 (20C65)
        Release Type:        User
        Baseband Version:    2.21.00
        Report Version:      104

        Exception Type:  EXC_BAD_ACCESS (SIGSEGV)
        Exception Subtype: KERN_INVALID_ADDRESS at 0x0000000000000000
        Exception Codes: 0x0000000000000001, 0x0000000000000000
        VM Region Info: 0 is not in any region.  Bytes before following region: 4306403328
              REGION TYPE                 START - END      [ VSIZE] PRT/MAX SHRMOD  REGION DETAIL
              UNUSED SPACE AT START
        --->  
              __TEXT                   100ae8000-100af0000 [   32K] r-x/r-x SM=COW  ...iteLiveMobile

        """#

    @Test("a text crash report cut after its exception: the crash of the process it names, at its time")
    func cutAfterException() throws {
        let r = try analyzePaste(Self.cutCrash)
        let f = findings(r.json)
        #expect(f.map { $0["kind"] as? String } == ["app-crashed"], "\(f)")
        #expect((f.first?["message"] as? String)?.hasPrefix("MeetingApp[3529] crashed (EXC_BAD_ACCESS (SIGSEGV), KERN_INVALID_ADDRESS at 0x0000000000000000)") == true, "\(f)")
        #expect(f.first?["time"] as? String == "2023-02-01T12:29:06.049600+00:00", "\(f)")
        // (cut anywhere after its exception line: the same crash)
        let lines = Self.cutCrash.split(separator: "\n", omittingEmptySubsequences: false)
        let exception = try #require(lines.firstIndex { $0.hasPrefix("Exception Type:") })
        for end in [exception + 1, exception + 2, exception + 4] {
            let cut = try analyzePaste(lines[..<end].joined(separator: "\n") + "\n")
            #expect(findings(cut.json).compactMap { $0["message"] as? String }.first?.hasPrefix("MeetingApp[3529] crashed (EXC_BAD_ACCESS (SIGSEGV)") == true,
                    "cut at line \(end): \(findings(cut.json))")
        }
        // (cut before it: no crash is made up)
        let header = try analyzePaste(lines[..<exception].joined(separator: "\n") + "\n")
        #expect(findings(header.json).isEmpty, "\(findings(header.json))")
    }

    /// (the app's next crash, so that both are the app's: a report of another process would
    /// open an extension's session, and a crash outside every session is no finding then)
    @Test("a report cut after its exception, then a whole one: both crashes")
    func cutThenWhole() throws {
        let whole = """
            Hardware Model:      iPhone14,2
            Process:             MeetingApp [3600]
            Date/Time:           2023-02-01 12:40:00.0000 +0000

            Exception Type:  EXC_CRASH (SIGABRT)
            Exception Codes: 0x0000000000000000, 0x0000000000000000
            Triggered by Thread:  0

            """
        let r = try analyzePaste(Self.cutCrash + "\n" + whole)
        let messages = findings(r.json).compactMap { $0["message"] as? String }
        #expect(messages.count == 2, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("MeetingApp[3529] crashed (EXC_BAD_ACCESS (SIGSEGV)") }, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("MeetingApp[3600] crashed (EXC_CRASH (SIGABRT)") }, "\(messages)")
    }

    /// Apple forums 663128: an extension's report from its exception on, killed by RunningBoard.
    static let headerlessKill = #"""
        Exception Type: EXC_CRASH (SIGKILL)
        Exception Codes: 0x0000000000000000, 0x0000000000000000
        Exception Note: EXC_CORPSE_NOTIFY
        Termination Reason: Namespace RUNNINGBOARD, Code 0xdead10cc
        Triggered by Thread: 0
        Thread 0 name:
        Thread 0 Crashed:
        0 libsystem_kernel.dylib 0x00000001bf38bdd0 mach_msg_trap + 8
        1 libsystem_kernel.dylib 0x00000001bf38b184 mach_msg + 76 (mach_msg.c:103)
        2 CoreFoundation 0x00000001933facf8 CFRunLoopServiceMachPort + 380 (CFRunLoop.c:2641)
        3 CoreFoundation 0x00000001933f4ea8 CFRunLoopRun + 1216 (CFRunLoop.c:2974)
        4 CoreFoundation 0x00000001933f44bc CFRunLoopRunSpecific + 600 (CFRunLoop.c:3242)
        5 Foundation 0x0000000194671e30 -[NSRunLoop(NSRunLoop) runMode:beforeDate:] + 232 (NSRunLoop.m:374)
        6 Foundation 0x00000001946a479c -[NSRunLoop(NSRunLoop) run] + 92 (NSRunLoop.m:399)
        7 libxpc.dylib 0x00000001daa06428 _xpc_objc_main + 688 (main.m:265)
        8 libxpc.dylib 0x00000001daa08700 xpc_main + 180 (init.c:1198)
        9 Foundation 0x00000001946a6aa8 -[NSXPCListener resume] + 316 (NSXPCListener.m:448)
        10 PlugInKit 0x00000001c1b37564 -[PKService run] + 424 (PKService.m:186)

        """#

    @Test("a report with no header of a SIGKILL: a kill (a warning), its termination explained, not a crash")
    func headerlessKillIsAKill() throws {
        let r = try analyzePaste(Self.headerlessKill)
        let f = findings(r.json)
        #expect(f.map { $0["severity"] as? String } == ["warning"], "\(f)")
        let message = f.first?["message"] as? String ?? ""
        #expect(message.hasPrefix("a process the pasted crash report does not name was killed (EXC_CRASH (SIGKILL)"), "\(message)")
        #expect(message.contains("0xdead10cc (it held a file lock or a database open while suspended)"), "\(message)")
        #expect(!message.contains(" crashed ("), "\(message)")
    }

    /// Apple forums 718102: a two-part `.ips` whose body the post cut after `procName`.
    static let cutIPS = #"""
        {"app_name":"ServiceExtension","timestamp":"2022-10-11 01:01:33.00 -0500","app_version":"3.12.0","slice_uuid":"d232b48f-7906-30e1-8b47-19075e8b88bf","build_version":"3.12.0.3536","platform":2,"bundleID":"com.vocera.vcs.ServiceExtension","share_with_app_devs":0,"is_first_party":1,"bug_type":"309","os_version":"iPhone OS 16.0.2 (20A380)","roots_installed":0,"name":"ServiceExtension","incident_id":"92623797-3571-43EC-9F76-0A597E7D96DA"}
        {
          "uptime" : 460000,
          "procRole" : "Unspecified",
          "version" : 2,
          "userID" : 501,
          "deployVersion" : 210,
          "modelCode" : "iPhone15,2",
          "coalitionID" : 9631,
          "osVersion" : {
            "isEmbedded" : true,
            "train" : "iPhone OS 16.0.2",
            "releaseType" : "User",
            "build" : "20A380"
          },
          "captureTime" : "2022-10-11 01:01:33.3725 -0500",
          "incident" : "92623797-3571-43EC-9F76-0A597E7D96DA",
          "pid" : 23733,
          "cpuType" : "ARM-64",
          "roots_installed" : 0,
          "bug_type" : "309",
          "procLaunch" : "2022-10-10 20:12:27.8132 -0500",
          "procStartAbsTime" : 10817558550868,
          "procExitAbsTime" : 11150569912891,
          "procName" : "ServiceExtension",

        """#

    @Test("a cut .ips under another name is said as an .ips is, not read as text and dropped")
    func cutIPSByContent() throws {
        for name in ["report.log", "report.txt", "report.ips"] {
            let r = try analyzePaste(Self.cutIPS, name: name)
            let errors = input(r.json)["errors"] as? [String] ?? []
            #expect(errors.count == 1 && errors[0].contains(".ips report (bug_type 309): its body (from line 2): invalid JSON at byte"), "\(name): \(errors)")
            #expect(errors.first?.hasSuffix("the report is cut short before its exception and termination") == true, "\(name): \(errors)")
        }
    }

    /// janus-gateway-snap#36: Janus's startup lines, then its log lines behind the snap's
    /// `log_prefix` (`[janus] `).
    static let janus = #"""
        Checking command line arguments...
        Debug/log level is 4
        Debug/log timestamps are enabled
        Debug/log colors are disabled
        [janus] [Mon Oct 21 18:36:16 2024] Adding 'vmnet' to the ICE ignore list...
        [janus] [Mon Oct 21 18:36:16 2024] Using 10.123.20.23 as local IP...
        [janus] [Mon Oct 21 18:36:16 2024] Token based authentication disabled
        [janus] [Mon Oct 21 18:36:16 2024] Initializing recorder code
        [janus] [Mon Oct 21 18:36:16 2024] Initializing ICE stuff (Full mode, ICE-TCP candidates disabled, full-trickle, IPv6 support disabled)
        [janus] [Mon Oct 21 18:36:16 2024] TURN REST API backend: (disabled)
        [janus] [Mon Oct 21 18:36:16 2024] [WARN] Janus is deployed on a private address (10.123.20.23) but you didn't specify any STUN server! Expect trouble if this is supposed to work over the internet and not just in a LAN...
        [janus] [Mon Oct 21 18:36:16 2024] Crypto: OpenSSL >= 1.1.0
        [janus] [Mon Oct 21 18:36:16 2024] Fingerprint of our certificate: A0:83:EB:10:D7:66:50:17:18:4D:9E:0A:0A:3E:8D:0F:4E:DC:AE:71:5F:00:BD:34:0E:D1:F9:4D:2B:CB:53:53
        [janus] [Mon Oct 21 18:36:16 2024] Sessions watchdog started
        [janus] [Mon Oct 21 18:36:16 2024] Joining Janus requests handler thread
        [janus] [Mon Oct 21 18:36:16 2024] Event handlers support disabled
        [janus] [Mon Oct 21 18:36:16 2024] Plugins folder: /opt/janus/lib/janus/plugins

        """#

    @Test("Janus's lines behind its log prefix: the janus format, each line's ctime with its own year")
    func janusLogPrefix() throws {
        let r = try analyzePaste(Self.janus)
        #expect(input(r.json)["format"] as? String == "janus", "\(input(r.json))")
        #expect(input(r.json)["records"] as? Int == 13, "\(input(r.json))")
        #expect(r.text.contains("2024-10-21 18:36:16"), "\(r.text)")
        #expect(!r.text.contains("2024] "), "\(r.text)")
        // (its tagged lines alone: the tag comes off at its `]`, not with the time's weekday,
        // which left the time without its year: 2026, and `2024] ` in every message)
        let tagged = Self.janus.split(separator: "\n").filter { $0.hasPrefix("[janus] ") }.joined(separator: "\n") + "\n"
        let t = try analyzePaste(tagged)
        #expect(input(t.json)["format"] as? String == "janus", "\(input(t.json))")
        #expect(t.text.contains("2024-10-21 18:36:16") && !t.text.contains("2024] "), "\(t.text)")
        #expect(QuotedLinesSource.toolPrefix(Array(tagged.utf8)) == Array("[janus] ".utf8))
        // (Appium's tag still ends at its own `]`)
        let appium = "info: [IOS_SYSLOG_ROW ] Mar 12 10:00:01 iPhone a[1] <Notice>: x\ninfo: [IOS_SYSLOG_ROW ] Mar 12 10:00:02 iPhone a[1] <Notice>: y\n"
        #expect(QuotedLinesSource.toolPrefix(Array(appium.utf8)) == Array("info: [IOS_SYSLOG_ROW ] ".utf8))
    }

    /// jitsi/jibri#279: `systemctl status` alone, its bullet as a Latin-1 terminal copied it.
    static let jibri = #"""
        root@jitsi:~# systemctl status jibri
        â jibri.service - Jibri Process
           Loaded: loaded (/etc/systemd/system/jibri.service; disabled; vendor preset: enabled)
           Active: failed (Result: exit-code) since Wed 2020-04-22 19:11:52 +07; 4s ago
          Process: 5585 ExecStop=/opt/jitsi/jibri/graceful_shutdown.sh (code=exited, status=7)
          Process: 5536 ExecStart=/opt/jitsi/jibri/launch.sh (code=exited, status=143)
         Main PID: 5536 (code=exited, status=143)

        """#

    @Test("systemctl status pasted alone: the unit's failure at the time its Active line gives")
    func statusAlone() throws {
        for text in [Self.jibri, Self.jibri.replacingOccurrences(of: "\u{E2} jibri", with: "● jibri")] {
            let r = try analyzePaste(text)
            let f = findings(r.json)
            #expect(f.map { $0["kind"] as? String } == ["daemon-died"], "\(f)")
            #expect((f.first?["message"] as? String)?.hasPrefix("jibri: systemctl status shows it failed (Result: exit-code)") == true, "\(f)")
            #expect(f.first?["time"] as? String == "2020-04-22T19:11:52.000000+07:00", "\(f)")
        }
        // (running: nothing failed)
        let running = try analyzePaste(Self.jibri.replacingOccurrences(of: "failed (Result: exit-code)", with: "active (running)"))
        #expect(findings(running.json).isEmpty, "\(findings(running.json))")
    }

    /// coturn#118: systemctl's `Job for … failed` (no time), then the status and the journal.
    static let coturn = #"""
        [root@localhost ~]# systemctl restart turnserver.service
        Job for turnserver.service failed because a configured resource limit was exceeded. See "systemctl status turnserver.service" and "journalctl -xe" for details.
        [root@localhost ~]# systemctl status turnserver.service
        ● turnserver.service - coturn
           Loaded: loaded (/usr/lib/systemd/system/turnserver.service; disabled; vendor preset: disabled)
           Active: failed (Result: resources) since Wed 2017-04-05 08:50:26 CEST; 15s ago
             Docs: man:coturn(1)
                   man:turnadmin(1)
                   man:turnserver(1)
          Process: 2460 ExecStart=/usr/bin/turnserver -o -c /etc/turnserver/turnserver.conf $EXTRA_OPTIONS (code=exited, status=0/SUCCESS)

        Apr 05 08:50:25 localhost.localdomain turnserver[2465]: 0: Trying to bind fd 18 to <127.0.0.1:80>: errno=13
        Apr 05 08:50:25 localhost.localdomain turnserver[2465]: 0: Cannot bind TLS/TCP listener socket to addr 127.0.0.1:80
        Apr 05 08:50:25 localhost.localdomain turnserver[2465]: 0: Trying to bind TLS/TCP listener socket to addr 127.0.0.1:80, again...

        """#

    @Test("a death told first by a line with no time: the finding at its first timed line")
    func deathAtItsFirstTimedLine() throws {
        let r = try analyzePaste(Self.coturn)
        let f = findings(r.json)
        #expect(f.map { $0["kind"] as? String } == ["daemon-died"], "\(f)")
        #expect(f.first?["time"] as? String == "2017-04-05T08:50:26.000000+02:00", "\(f)")
        // (`Docs:`'s further lines, `man:turnadmin(1)`, are the status's as `Docs:` is; the
        // shell's prompt lines are what is left unread)
        #expect(input(r.json)["firstUnparsedLines"] as? [Int] == [1, 3], "\(input(r.json))")
    }

    /// amazon-chime-sdk-ios#548: Firebase Crashlytics' stack trace export, its header and the
    /// main thread (the paste goes on; its crashed thread is constructed here, in the shape
    /// Crashlytics writes it: amazon-chime-sdk-ios#275's `Crashed: pc_network_thread`).
    static let crashlytics = #"""
        # Crashlytics - Stack trace
        # Application: ***
        # Platform: apple
        # Version: 1.0 (273)
        # Issue: 624a12c4e0b16bb0ba8865a30faa835a
        # Session: 5d721e12d67844a58df119524e33892c_DNE_0_v2
        # Date: Fri Nov 25 2022 13:57:44 GMT+0100 (Central European Standard Time)

        com.apple.main-thread
        0  libsystem_kernel.dylib         0xb48 mach_msg2_trap + 8
        1  libsystem_kernel.dylib         0x13008 mach_msg2_internal + 80
        2  libsystem_kernel.dylib         0x13248 mach_msg_overwrite + 388
        3  libsystem_kernel.dylib         0x108c mach_msg + 24
        4  CoreFoundation                 0x7aaf0 __CFRunLoopServiceMachPort + 160
        5  CoreFoundation                 0x7bd34 __CFRunLoopRun + 1232
        6  CoreFoundation                 0x80ed4 CFRunLoopRunSpecific + 612
        7  GraphicsServices               0x1368 GSEventRunModal + 164
        8  UIKitCore                      0x3a23d0 -[UIApplication _run] + 888
        9  UIKitCore                      0x3a2034 UIApplicationMain + 340
        10 SwiftUI                        0x1d1014 OUTLINED_FUNCTION_895 + 2420
        11 SwiftUI                        0x13216c block_copy_helper.1 + 388
        12 SwiftUI                        0x11b4bc OUTLINED_FUNCTION_901 + 2868

        Crashed: pc_network_thread
        0  libsystem_pthread.dylib        0x1f77e739c pthread_rwlock_wrlock + 158
        1  AmazonChimeSDKMedia            0x105e94860 (Missing)

        """#

    @Test("a Crashlytics export: its crash at the header's date, of the application it names unless redacted")
    func crashlyticsExport() throws {
        for (text, app) in [(Self.crashlytics, nil), (Self.crashlytics.replacingOccurrences(of: "# Application: ***", with: "# Application: MeetingDemo"), "MeetingDemo")] {
            let r = try analyzePaste(text)
            let f = findings(r.json)
            #expect(f.map { $0["kind"] as? String } == ["app-crashed"], "\(f)")
            #expect(f.first?["time"] as? String == "2022-11-25T13:57:44.000000+01:00", "\(f)")
            let message = f.first?["message"] as? String ?? ""
            #expect(message.hasPrefix("\(app ?? "the app Crashlytics reported") crashed (on pc_network_thread)"), "\(message)")
        }
        // (no export's header: the `Crashed:` line alone, as before, untimed)
        let bare = try analyzePaste(Self.crashlytics.replacingOccurrences(of: "# Crashlytics - Stack trace\n", with: ""))
        #expect(findings(bare.json).first?["time"] is NSNull, "\(findings(bare.json))")
    }

    /// muxinc/examples#118: HaishinKit's RTMP connect, closed by the server three times before
    /// any handshake (the app's own prints between); HaishinKit#368: the socket closed by the
    /// server right after the start (its close, then its status line).
    static let rtmpClosedThrice = #"""
        Calling connect()
        RTMP Status Handler called.
        Calling publish()
        2022-23-11 14:54:12.924 [Warn] [com.haishinkit.HaishinKit] [RTMPConnection.swift:382] on(status:) > 
        RTMP Status Handler called.
        RTMP Connection was not successful.
        Calling connect()
        RTMP Status Handler called.
        Calling publish()
        2022-23-11 14:54:14.844 [Warn] [com.haishinkit.HaishinKit] [RTMPConnection.swift:382] on(status:) > 
        RTMP Status Handler called.
        RTMP Connection was not successful.
        Calling connect()
        RTMP Status Handler called.
        Calling publish()
        2022-23-11 14:54:18.331 [Warn] [com.haishinkit.HaishinKit] [RTMPConnection.swift:382] on(status:) > 
        RTMP Status Handler called.

        """#
    static let rtmpClosedOnce = #"""
        2018-02-07 10:57:38.349045+0530 Pod_testing[5299:3015700] [MC] Reading from public effective user settings.
        2018-07-02 10:57:38.344 [Info] [com.haishinkit.HaishinKit] [AACEncoder.swift:80] inSourceFormat > nil

        rtmp://www.reelover.com:19350/live/8fdcda563b?publishertoken=gle-41894e63-6d4a-4890-955b-f68cbf0c69c8

        2018-07-02 10:57:38.388 [Info] [com.haishinkit.HaishinKit] [VideoIOComponent.swift:35] fps > (fps: 30.0, duration: __C.CMTime(value: 100, timescale: 3000, flags: __C.CMTimeFlags(rawValue: 1), epoch: 0))
        2018-07-02 10:57:38.628 [Trace] [com.haishinkit.HaishinKit] [NetSocket.swift:91] close(isDisconnected:) > isDisconnected: true
        2018-07-02 10:57:38.628 [Warn] [com.haishinkit.HaishinKit] [RTMPConnection.swift:359] on(status:) > 

        """#

    @Test("the RTMP server closing before any connection: failed connect attempts and never-connected, not a session cut off")
    func closedBeforeConnecting() throws {
        let thrice = try analyzePaste(Self.rtmpClosedThrice)
        let s = try #require((thrice.json["sessions"] as? [[String: Any]])?.first)
        #expect(s["outcome"] as? String == "failed-to-connect", "\(s)")
        #expect((s["reason"] as? String)?.hasPrefix("never connected: the log ends after 3 failed connect attempts over 5.4 s") == true, "\(s)")
        let kinds = findings(thrice.json).compactMap { $0["kind"] as? String }
        #expect(kinds.contains("never-connected") && !kinds.contains("abrupt-end"), "\(kinds)")
        // (a close and its status line, together: one failed attempt, the server's close named)
        let once = try analyzePaste(Self.rtmpClosedOnce)
        let o = try #require((once.json["sessions"] as? [[String: Any]])?.first)
        #expect(o["outcome"] as? String == "failed-to-connect", "\(o)")
        #expect(o["reason"] as? String == "never connected: the log ends after 1 failed connect attempt", "\(o)")
        #expect((o["connect"] as? [String: Any])?["failures"] as? [String: Int] == ["the RTMP server closed the socket": 1], "\(o)")
        // (after a handshake, the server's close still ends the session as it did: cut off)
        let connected = try analyzePaste(Self.rtmpClosedOnce.replacingOccurrences(
            of: "2018-07-02 10:57:38.628 [Trace]", with: "2018-07-02 10:57:38.500 [Info] [com.haishinkit.HaishinKit] [RTMPConnection.swift:300] didSetReadyState(_:) > handshakeDone\n2018-07-02 10:57:38.628 [Trace]"))
        let c = try #require((connected.json["sessions"] as? [[String: Any]])?.first)
        #expect(c["outcome"] as? String == "truncated", "\(c)")
    }

    /// livekit/client-sdk-swift#836: LiveKit 2.x names the source `screenShareVideo`.
    static let livekitPublish = #"""
        2025-11-08T17:09:10+0800 info LiveKitSDK : [LiveKitClient] LocalParticipant._publish(track:options:) [publish] success LocalTrackPublication(sid: TR_VSZsiQvKZ3Jkxa, kind: Kind(rawValue: 1), source: screenShareVideo)

        """#

    @Test("LiveKit 2.x's screen-share publish (source: screenShareVideo) is the host app's event, as 1.x's Source(rawValue: 3) was")
    func livekitScreenShareVideo() throws {
        let r = try analyzePaste(Self.livekitPublish)
        let events = r.json["unattached"] as? [[String: Any]] ?? []
        #expect(events.map { $0["event"] as? String } == ["app.screenshare_published"], "\(events)")
        #expect(events.first?["time"] as? String == "2025-11-08T17:09:10.000000+08:00", "\(events)")
        let camera = try analyzePaste(Self.livekitPublish.replacingOccurrences(of: "source: screenShareVideo", with: "source: camera"))
        #expect(input(camera.json)["events"] as? Int ?? 0 == 0, "\(input(camera.json))")
    }

    /// flutter-webrtc#936: in-app capture declined, ReplayKit's line in Dutch and the plugin's echo.
    static let declinedDutch = #"""
        [ERROR] -[RPScreenRecorder startCaptureWithHandler:completionHandler:]_block_invoke_2:482 failed to start due to error: Error Domain=com.apple.ReplayKit.RPRecordingErrorDomain Code=-5801 "De gebruiker heeft de opname van de app afgewezen" UserInfo={NSLocalizedDescription=De gebruiker heeft de opname van de app afgewezen}
        !!! startCaptureWithHandler/completionHandler Error Domain=com.apple.ReplayKit.RPRecordingErrorDomain Code=-5801 "De gebruiker heeft de opname van de app afgewezen" UserInfo={NSLocalizedDescription=De gebruiker heeft de opname van de app afgewezen} !!!

        """#

    @Test("an in-app capture's ReplayKit error: the session's why says the code's meaning, not the whole localized line")
    func inAppWhyByCode() throws {
        let r = try analyzePaste(Self.declinedDutch)
        let s = try #require((r.json["sessions"] as? [[String: Any]])?.first)
        #expect(s["reason"] as? String == "in-app capture failed with ReplayKit error -5801 (userDeclined): the user declined recording (permission prompt)", "\(s)")
    }
}

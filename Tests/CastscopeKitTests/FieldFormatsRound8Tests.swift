import Foundation
import Testing

@testable import CastscopeKit

/// Field formats earlier rounds found and left (session 48), each around its real lines:
/// java.util.logging's two-line default (jitsi-videobridge#1289, docker-jitsi-meet#304, #992),
/// raw `dmesg` (an OOM kill's ring buffer), Node's `debug` module's older and terminal layouts
/// (mediasoup#152, mediasoup-sample-app#2), and where a crash report says the crash happened
/// (livekit/client-sdk-swift#266's `Crashed Thread: 13  Dispatch queue: EncoderQueue`).
@Suite("field formats, round 8: java.util.logging's two lines, raw dmesg, Node's debug, crashed threads")
struct FieldFormatsRound8Tests {
    func analyze(_ text: String, name: String = "paste.txt") throws -> (json: [String: Any], text: String) {
        try analyzePaste(text, name: name)
    }

    func input(_ r: [String: Any]) -> [String: Any] { (r["inputs"] as? [[String: Any]])?.first ?? [:] }

    /// jitsi-videobridge#1289's record (shortened stack).
    static let ice4j = """
        Jun 02, 2020 1:48:49 PM org.ice4j.stack.NetAccessManager handleFatalError
        SEVERE: Unexpected Error!
        java.lang.NullPointerException
        \tat org.ice4j.socket.MergingDatagramSocket.initializeActive(MergingDatagramSocket.java:577)
        \tat org.ice4j.ice.ComponentSocket.propertyChange(ComponentSocket.java:174)
        Caused by: java.lang.IllegalStateException: closed
        \t... 2 more
        Jun 02, 2020 1:48:50 PM org.jitsi.videobridge.Videobridge
        INFO: Health check passed.

        """

    @Test("java.util.logging's two lines are one record: its time, its level from the second line, its stack trace with it")
    func julTwoLines() throws {
        let r = try analyze(Self.ice4j)
        #expect(input(r.json)["format"] as? String == "java-logging", "\(input(r.json))")
        #expect(input(r.json)["records"] as? Int == 2, "\(input(r.json))")
        #expect(input(r.json)["unparsed"] as? Int ?? 0 == 0, "\(input(r.json))")
        // (the time 1:48:49 PM, the level SEVERE as Error, the class and method)
        #expect(r.text.contains("2020-06-02 13:48:49.000000 "), "\(r.text)")
        #expect(r.text.contains("Error       0x0                         0    <unknown>: [org.ice4j.stack.NetAccessManager:handleFatalError] Unexpected Error!\njava.lang.NullPointerException\n\tat org.ice4j.socket"), "\(r.text)")
        #expect(r.text.contains("Caused by: java.lang.IllegalStateException: closed\n\t... 2 more\n"), "\(r.text)")
        #expect(r.text.contains("2020-06-02 13:48:50.000000                 Info        0x0                         0    <unknown>: [org.jitsi.videobridge.Videobridge:] Health check passed."), "\(r.text)")
    }

    @Test("a JVM under a 24-hour locale before Java 7 (`24.10.2012 20:33:26`, `SCHWERWIEGEND:`), and a lower-case month with a dot")
    func julLocales() throws {
        let de = """
            24.10.2012 20:33:26 com.engine.Engine evalExpression
            SCHWERWIEGEND: engine error err:ReferenceError: "xxx" is not defined.
            trace:        at :0
            Jun 17, 2019 1:12:13 AM org.zumult.backend.implementations.DGD2Oracle getAnnotationBlockID4TokenID
            SCHWERWIEGEND: null
            déc. 04, 2019 12:00:01 AM org.jitsi.jicofo.FocusManager conferenceRequest
            INFOS: Created new focus for x@conference.meet.jitsi

            """
        let r = try analyze(de)
        #expect(input(r.json)["format"] as? String == "java-logging", "\(input(r.json))")
        #expect(r.text.contains("2012-10-24 20:33:26.000000                 Error "), "\(r.text)")
        #expect(r.text.contains("2019-06-17 01:12:13.000000                 Error "), "\(r.text)")
        #expect(r.text.contains("2019-12-04 00:00:01.000000                 Info "), "\(r.text)")
    }

    @Test("java.util.logging behind docker compose's prefixes, among other services' lines: each kept, the containers' deaths found")
    func julInCompose() throws {
        let compose = """
            prosody_1  | [s6-finish] sending all processes the TERM signal.
            jicofo_1   | [s6-finish] sending all processes the KILL signal and exiting.
            docker-jitsi-meet_jicofo_1 exited with code 1
            jvb_1      | Apr 12, 2021 7:07:32 PM org.jitsi.utils.logging2.LoggerImpl log
            jvb_1      | WARNING: Cannot set presence extension: not connected.
            docker-jitsi-meet_prosody_1 exited with code 1
            jvb_1      | Apr 12, 2021 7:07:37 PM org.jitsi.utils.logging2.LoggerImpl log
            jvb_1      | INFO: Performed a successful health check in PT0S. Sticky failure: false

            """
        let r = try analyze(compose)
        #expect(input(r.json)["format"] as? String == "java-logging", "\(input(r.json))")
        #expect(input(r.json)["records"] as? Int == 6, "\(input(r.json))")
        #expect(input(r.json)["unparsed"] as? Int ?? 0 == 0, "\(input(r.json))")
        let findings = (r.json["findings"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(findings.filter { $0 == "daemon-died" }.count == 2, "\(r.json["findings"] ?? "")")
        #expect(r.text.contains("2021-04-12 19:07:32.000000                 Default     0x0                         0    <unknown>: [org.jitsi.utils.logging2.LoggerImpl:log] Cannot set presence extension: not connected."), "\(r.text)")
    }

    @Test("a time and words alone, or a level line without one before it, are no java.util.logging record (other layouts keep their files)")
    func julDoesNotSteal() throws {
        // An Xcode console whose message is a time and a word, then `ERROR: …` indented or not.
        let xcode = """
            2024-05-01 10:00:00.123456+0200 Broadcast[811:9000] Jun 02, 2020 1:48:49 PM start
            ERROR: not a JUL record
            2024-05-01 10:00:01.000000+0200 Broadcast[811:9000] done

            """
        let x = try analyze(xcode)
        #expect(input(x.json)["format"] as? String == "xcode", "\(input(x.json))")
        // A JUL-looking time line followed by a message line in lower case is no pair.
        let loose = """
            Jun 02, 2020 1:48:49 PM org.ice4j.Foo bar
            Caused by: something
            Jun 02, 2020 1:48:50 PM org.ice4j.Foo bar
            severe: lower case is no level

            """
        let l = try analyze(loose)
        #expect(input(l.json)["format"] as? String != "java-logging", "\(input(l.json))")
        #expect(!JavaLoggingSource.detect(Array(loose.utf8)))
        #expect(JavaLoggingSource.detect(Array(Self.ice4j.utf8)))
        // A dated line of two words and Node's heap death after it (the review's case): the
        // log kept its layout, its times and its death (it was java-logging, nothing found).
        let node = """
            2026-03-12 09:15:30 relay listening on 8443
            2026-03-12 09:15:31 node started
            FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory
            2026-03-12 09:15:32 relay listening on 8443 again

            """
        #expect(!JavaLoggingSource.detect(Array(node.utf8)))
        let n = try analyze(node)
        #expect(input(n.json)["format"] as? String != "java-logging", "\(input(n.json))")
        let kinds = (n.json["findings"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(kinds.contains("daemon-died"), "\(kinds)")
    }

    @Test("a line over the 1 MB limit among java.util.logging's records is still skipped with its error (the source cut it to the limit, read as whole)")
    func julLongLine() throws {
        let text = "Jun 02, 2020 1:48:48 PM org.ice4j.Foo bar\nSEVERE: before\n\tat " + String(repeating: "x", count: 3_000_000) + "\nJun 02, 2020 1:48:50 PM org.ice4j.Foo bar\nINFO: after\n"
        let r = try analyze(text)
        #expect(input(r.json)["format"] as? String == "java-logging", "\(input(r.json))")
        let errors = (input(r.json)["errors"] as? [Any] ?? []).map { "\($0)" }.joined()
        #expect(errors.contains(":3: line of "), "\(errors)")
        #expect(r.text.contains("[org.ice4j.Foo:bar] after"), "\(r.text)")
    }

    @Test("the source keeps every line's place: a pair is one line and an empty one, other lines pass as they are")
    func julSourceKeepsLines() throws {
        let text = "Jun 02, 2020 1:48:49 PM org.ice4j.Foo bar\r\nSEVERE:\r\nplain line\nNov 30, 2026 13:02:03 org.x.Y\nnot a level\n"
        let out = drained(JavaLoggingSource(MemorySource(Array(text.utf8))))
        #expect(String(decoding: out, as: UTF8.self)
            == "Jun 02, 2020 1:48:49 PM org.ice4j.Foo bar\tSEVERE: \n\nplain line\nNov 30, 2026 13:02:03 org.x.Y\nnot a level\n")
    }

    /// docker-dst-server's OOM kill as `dmesg` printed it (the task table shortened).
    static let dmesg = """
        [  870.644176] [   3207]     0  3207    74457     1431   163840        0             0 packagekitd
        [  870.644191] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/docker/c8d1828156e3,task=broadcast-relay,pid=2866,uid=1000
        [  870.644237] Out of memory: Killed process 2866 (broadcast-relay) total-vm:740852kB, anon-rss:512000kB
        [  912.100001] broadcast-relay[2901]: segfault at 0 ip 00005619fda729e8 sp 00007f0d5f6f5750 error 4 in broadcast-relay[5619fda24000+b8000]

        """

    @Test("raw dmesg is the kernel's lines: no date invented (the stamp stays in the message, in file order), its OOM kill and segfault are deaths")
    func rawDmesg() throws {
        let r = try analyze(Self.dmesg)
        #expect(input(r.json)["format"] as? String == "dmesg", "\(input(r.json))")
        #expect(input(r.json)["records"] as? Int == 4, "\(input(r.json))")
        let findings = r.json["findings"] as? [[String: Any]] ?? []
        #expect(findings.filter { $0["kind"] as? String == "daemon-died" }.count == 1, "\(findings)")
        // (no time: `show` prints none, and the header notes no assumed date)
        #expect(!r.text.contains("2026-"), "\(r.text)")
        // (the OOM kill and the segfault of one daemon: one death, both lines its evidence)
        #expect((findings.first?["evidence"] as? [String])?.count == 2, "\(findings)")
        #expect(r.text.contains("[  870.644237] Out of memory: Killed process 2866 (broadcast-relay)"), "\(r.text)")
        let notes = (input(r.json)["notes"] as? [String] ?? []).joined()
        #expect(!notes.contains("since boot"), "\(notes)")
        // `dmesg -r`'s priority is the line's level.
        let raw = try analyze("<3>[  870.644237] Out of memory: Killed process 2866 (broadcast-relay) total-vm:740852kB\n<6>[  870.700000] eth0: link up\n")
        #expect(input(raw.json)["format"] as? String == "dmesg", "\(input(raw.json))")
        #expect(raw.text.contains("Error "), "\(raw.text)")
    }

    @Test("Node's debug before 3.0 (`Mon, 16 Oct 2017 01:34:45 GMT mediasoup:ERROR:Worker …`) keeps its time, namespace and level; the worker that cannot start is a death")
    func nodeDebugUTCString() throws {
        let compose = """
            ozvc_1  | Mon, 16 Oct 2017 01:34:45 GMT mediasoup mediasoup version 1.2.8
            ozvc_1  | Mon, 16 Oct 2017 01:34:45 GMT mediasoup:Worker constructor() [id:gyksgjse#1, parameters:"--rtcMinPort=10000 --rtcMaxPort=34999"]
            ozvc_1  | Mon, 16 Oct 2017 01:34:45 GMT mediasoup:Channel constructor()
            ozvc_1  | Mon, 16 Oct 2017 01:34:46 GMT mediasoup:ERROR:Worker child process error [id:gyksgjse#1, error:Error: spawn /ozvc/src/server/node_modules/mediasoup/worker/out/Release/mediasoup-worker ENOENT]
            ozvc_1  | Mon, 16 Oct 2017 01:34:46 GMT mediasoup:Channel close()

            """
        let r = try analyze(compose)
        #expect(input(r.json)["format"] as? String == "node-debug-utc", "\(input(r.json))")
        #expect(input(r.json)["records"] as? Int == 5, "\(input(r.json))")
        #expect(r.text.contains("2017-10-16 01:34:46.000000+0000            Error       0x0                         0    <unknown>: [mediasoup:Worker] child process error [id:gyksgjse#1"), "\(r.text)")
        #expect(r.text.contains("2017-10-16 01:34:45.000000+0000            Default     0x0                         0    <unknown>: [mediasoup:] mediasoup version 1.2.8"), "\(r.text)")
        let findings = r.json["findings"] as? [[String: Any]] ?? []
        #expect(findings.map { $0["kind"] as? String } == ["daemon-died"], "\(findings)")
        #expect(findings.first?["time"] as? String == "2017-10-16T01:34:46.000000+00:00", "\(findings)")
    }

    @Test("Node's debug on a terminal (`  mediasoup:ERROR:Worker … +0ms`, coloured): its namespace and level, the step left out and no time made from it, a Node error's dump one record")
    func nodeDebugTTY() throws {
        let esc = "\u{1B}"
        let tty = """
              \(esc)[36;1mmediasoup \(esc)[0mcreateWorker() \(esc)[36m+0ms\(esc)[0m
              \(esc)[35;1mmediasoup:Worker \(esc)[0mconstructor() \(esc)[35m+0ms\(esc)[0m
              \(esc)[34;1mmediasoup:Channel[pid:undefined] \(esc)[0mconstructor() \(esc)[34m+0ms\(esc)[0m
              \(esc)[35;1mmediasoup:Worker \(esc)[0mclose() \(esc)[35m+8ms\(esc)[0m
              \(esc)[31;1mmediasoup:ERROR:Worker \(esc)[0mworker process failed [pid:undefined]: spawn /app/node_modules/mediasoup/worker/out/Release/mediasoup-worker ENOENT \(esc)[31m+0ms\(esc)[0m
            { Error: spawn /app/node_modules/mediasoup/worker/out/Release/mediasoup-worker ENOENT
                at _errnoException (util.js:1022:11)
                at Process.ChildProcess._handle.onexit (internal/child_process.js:190:19)
              errno: 'ENOENT',
              code: 'ENOENT' }

            """
        let r = try analyze(tty)
        #expect(input(r.json)["format"] as? String == "node-debug-tty", "\(input(r.json))")
        #expect(input(r.json)["records"] as? Int == 6, "\(input(r.json))")
        #expect(input(r.json)["unparsed"] as? Int ?? 0 == 0, "\(input(r.json))")
        #expect(r.text.contains("Error       0x0                         0    <unknown>: [mediasoup:Worker] worker process failed [pid:undefined]: spawn /app/node_modules/mediasoup/worker/out/Release/mediasoup-worker ENOENT\n"), "\(r.text)")
        #expect(r.text.contains("<unknown>: [mediasoup:Channel[pid:undefined]] constructor()\n"), "\(r.text)")
        #expect(r.text.contains("{ Error: spawn /app/node_modules/mediasoup/worker/out/Release/mediasoup-worker ENOENT\n    at _errnoException"), "\(r.text)")
        #expect(!r.text.contains("+0ms"), "\(r.text)")
        // (an .ips body's members ending in a zone, `"captureTime" : "… +0700",`, are none of its lines)
        let ips = try analyze("  \"captureTime\" : \"2024-06-16 13:00:26.6442 +0700\",\n  \"procLaunch\" : \"2024-06-16 13:00:24.8984 +0700\",\n  \"pid\" : 3225,\n")
        #expect(input(ips.json)["format"] as? String != "node-debug-tty", "\(input(ips.json))")
        let findings = r.json["findings"] as? [[String: Any]] ?? []
        #expect(findings.map { $0["kind"] as? String } == ["daemon-died"], "\(findings)")
    }

    static func extensionFinding(_ r: (json: [String: Any], text: String)) -> String {
        ((r.json["findings"] as? [[String: Any]])?.first { $0["kind"] as? String == "extension-killed" }?["message"] as? String) ?? ""
    }

    @Test("a broadcast extension's crash report as text: it crashed (not was killed), on which thread, in which queue, its top frame's library")
    func extensionCrashText() throws {
        let report = """
            Incident Identifier: 6A1C3F2E-1B2C-4D5E-8F90-1234567890AB
            Hardware Model:      iPhone14,2
            Process:             BroadcastUploadExtension [2210]
            Path:                /private/var/containers/Bundle/Application/1A2B/Meet.app/PlugIns/BroadcastUploadExtension.appex/BroadcastUploadExtension
            Date/Time:           2026-03-12 10:15:04.1234 +0100

            Exception Type:  EXC_BAD_ACCESS (SIGSEGV)
            Exception Subtype: KERN_INVALID_ADDRESS at 0x0000000000000010
            Termination Reason: SIGNAL 11 Segmentation fault: 11
            Terminating Process: exc handler [2210]

            Triggered by Thread:  5

            Thread 5 name:  Dispatch queue: org.jitsi.SampleUploader
            Thread 5 Crashed:
            0   libsystem_platform.dylib      \t0x00000001f0d1a3a8 _platform_memmove + 88
            1   BroadcastUploadExtension      \t0x0000000102a4c120 SampleUploader.send(_:) + 300

            """
        let m = Self.extensionFinding(try analyze(report))
        #expect(m.hasPrefix("the extension BroadcastUploadExtension[2210] crashed (Crash report: "), "\(m)")
        #expect(m.hasSuffix("; thread 5, queue org.jitsi.SampleUploader, top frame in libsystem_platform.dylib)"), "\(m)")
        // The older layout's header line (livekit/client-sdk-swift#266, macOS): its queue.
        let header = """
            Process:               MyApp [1159]
            Path:                  /Applications/MyApp
            Date/Time:             2023-11-10 12:28:12.4786 +0100
            Crashed Thread:        13  Dispatch queue: EncoderQueue

            Exception Type:        EXC_BAD_ACCESS (SIGSEGV)
            Exception Codes:       KERN_INVALID_ADDRESS at 0x000000013fbac000

            Termination Reason:    Namespace SIGNAL, Code 11 Segmentation fault: 11
            Terminating Process:   exc handler [1159]

            """
        let r = try analyze(header)
        let crashed = (r.json["findings"] as? [[String: Any]])?.first?["message"] as? String ?? ""
        #expect(crashed.contains("; thread 13, queue EncoderQueue)"), "\(crashed)")
        // A kill is told as before: where SIGKILL found it says nothing.
        let kill = report.replacingOccurrences(of: "EXC_BAD_ACCESS (SIGSEGV)", with: "EXC_CRASH (SIGKILL)")
        let k = Self.extensionFinding(try analyze(kill))
        #expect(k.hasPrefix("the extension BroadcastUploadExtension[2210] was killed (Crash report: "), "\(k)")
        #expect(!k.contains("queue"), "\(k)")
    }

    @Test("a broadcast extension's .ips: the faulting thread, its queue and its top frame's image from usedImages")
    func extensionCrashIPS() throws {
        let ips = """
            {"app_name":"BroadcastUploadExtension","timestamp":"2026-03-12 10:15:04.00 +0100","app_version":"1.0","slice_uuid":"00000000-0000-0000-0000-000000000000","build_version":"1","platform":2,"bundleID":"org.jitsi.meet.broadcast.extension","share_with_app_devs":0,"is_first_party":0,"bug_type":"309","os_version":"iPhone OS 17.3 (21D50)","incident_id":"6A1C3F2E-1B2C-4D5E-8F90-1234567890AB","name":"BroadcastUploadExtension"}
            {
              "uptime" : 1200,
              "procName" : "BroadcastUploadExtension",
              "procPath" : "\\/private\\/var\\/containers\\/Bundle\\/Application\\/1A2B\\/Meet.app\\/PlugIns\\/BroadcastUploadExtension.appex\\/BroadcastUploadExtension",
              "pid" : 2210,
              "captureTime" : "2026-03-12 10:15:04.1234 +0100",
              "exception" : {"codes":"0x0000000000000001, 0x0000000000000010","rawCodes":[1,16],"type":"EXC_BAD_ACCESS","signal":"SIGSEGV","subtype":"KERN_INVALID_ADDRESS at 0x0000000000000010"},
              "termination" : {"flags":0,"code":11,"namespace":"SIGNAL","indicator":"Segmentation fault: 11","byProc":"exc handler","byPid":2210},
              "faultingThread" : 1,
              "threads" : [
                {"id":100,"queue":"com.apple.main-thread","frames":[{"imageOffset":5000,"symbol":"mach_msg2_trap","imageIndex":1}]},
                {"triggered":true,"id":101,"queue":"org.jitsi.SampleUploader","frames":[{"imageOffset":9128,"symbol":"_platform_memmove","imageIndex":2},{"imageOffset":300,"imageIndex":0}]}
              ],
              "usedImages" : [
                {"source":"P","arch":"arm64","base":4339826688,"name":"BroadcastUploadExtension"},
                {"source":"P","arch":"arm64e","base":7000000000,"name":"libsystem_kernel.dylib"},
                {"source":"P","arch":"arm64e","base":8000000000,"name":"libsystem_platform.dylib"}
              ]
            }

            """
        let m = Self.extensionFinding(try analyze(ips, name: "BroadcastUploadExtension-2026-03-12-101504.ips"))
        #expect(m.hasPrefix("the extension BroadcastUploadExtension[2210] crashed (Crash report: "), "\(m)")
        #expect(m.hasSuffix("; thread 1, queue org.jitsi.SampleUploader, top frame in libsystem_platform.dylib)"), "\(m)")
    }
}

extension FieldFormatsRound8Tests {
    @Test("a crash report of a SIGKILL, with its reason in brackets too, is a kill, not a crash (the review's case)")
    func sigkillWithReasonIsNoCrash() {
        #expect(IPSReport.isCrash("Crash report: BroadcastUploadExtension[2210] terminated: EXC_BAD_ACCESS (SIGSEGV); thread 1"))
        #expect(!IPSReport.isCrash("Crash report: BroadcastUploadExtension[2210] terminated: EXC_CRASH (SIGKILL)"))
        #expect(!IPSReport.isCrash("Crash report: BroadcastUploadExtension[2210] terminated: EXC_CRASH (SIGKILL (Code Signature Invalid))"))
    }
}

import Foundation
import Testing

@testable import CastscopeKit

// Constructed .ips reports in the shapes iOS writes (no real report is in the reference set).
let jetsamIPS = """
{"bug_type":"298","timestamp":"2026-03-12 23:59:54.10 +0100","os_version":"iPhone OS 17.4 (21E219)","incident_id":"9C1F0D2E-5B7A-4C3E-8D21-7A1B2C3D4E5F"}
{
  "crashReporterKey" : "c0ffee",
  "product" : "iPhone15,2",
  "date" : "2026-03-12 23:59:54.10 +0100",
  "memoryStatus" : {"compressorSize" : 19012, "pageSize" : 16384, "memoryPages" : {"active" : 51234, "free" : 1203}},
  "largestProcess" : "BroadcastExtension",
  "processes" : [
    {"uuid" : "0A1B2C3D-0000-0000-0000-000000000001", "states" : ["daemon"], "rpages" : 3301, "priority" : 0, "reason" : "per-process-limit", "pid" : 2210, "name" : "BroadcastExtension", "lifetimeMax" : 3301},
    {"uuid" : "0A1B2C3D-0000-0000-0000-000000000002", "states" : ["frontmost"], "rpages" : 5120, "priority" : 10, "pid" : 640, "name" : "JitsiDemo"}
  ]
}
"""

let crashIPS = """
{"app_name":"BroadcastExtension","timestamp":"2026-03-12 23:59:54.00 +0100","app_version":"1.0","bug_type":"309","os_version":"iPhone OS 17.4 (21E219)","name":"BroadcastExtension"}
{
  "procName" : "BroadcastExtension",
  "pid" : 2210,
  "captureTime" : "2026-03-12 23:59:54.1234 +0100",
  "exception" : {"codes" : "0x0000000000000000, 0x0000000000000000", "type" : "EXC_CRASH", "signal" : "SIGKILL"},
  "termination" : {"namespace" : "RUNNINGBOARD", "code" : "0xdead10cc", "indicator" : "Killed: 9", "reasons" : ["process held a file lock while suspended"]}
}
"""

let oldTextCrash = """
Incident Identifier: 6B0F1E2D-AAAA-BBBB-CCCC-123456789ABC
Hardware Model:      iPhone12,1
Process:             BroadcastExtension [2210]
Path:                /private/var/containers/Bundle/Application/X/JitsiDemo.app/PlugIns/BroadcastExtension.appex/BroadcastExtension
Date/Time:           2026-03-12 23:59:54.123 +0100
OS Version:          iPhone OS 14.8 (18H17)

Exception Type:  EXC_RESOURCE
Exception Subtype: MEMORY
Exception Message: (Limit 50 MB) Crashed due to memory limit
Exception Note:  EXC_CORPSE_NOTIFY
Termination Reason: Namespace SIGNAL, Code 0x9

Thread 0 name:  Dispatch queue: com.apple.main-thread
Thread 0 Crashed:
0   libsystem_kernel.dylib        \t0x00000001b7b5e414 0x1b7b37000 + 160788
"""

@Suite struct IPSReportTests {
    @Test func jetsamEventNamesTheKilledProcessAndFootprint() throws {
        let r = try IPSReport.parse(jetsamIPS, path: "JetsamEvent.ips")
        #expect(r.kind == .jetsam && r.bugType == "298")
        #expect(r.records.map(\.message) == ["JetsamEvent: BroadcastExtension[2210] killed: per-process-limit, footprint 51 MB (3301 pages); largest process BroadcastExtension"])
        // The report's wall clock and zone (`2026-03-12 23:59:54.10 +0100`), as written.
        let t = try #require(r.records.first?.time)
        #expect(t.instant(defaultYear: 0, defaultMonth: 1, defaultDay: 1, defaultOffset: 0) == 1_773_356_394_100_000)
        #expect(t.offset == 3600 && t.secondOfDay == 23 * 3600 + 59 * 60 + 54 && t.day == 12, "\(t)")
    }

    @Test func crashReportsJSONAndText() throws {
        let j = try IPSReport.parse(crashIPS, path: "c.ips")
        #expect(j.kind == .crash && j.bugType == "309")
        #expect(j.records.first?.message == "Crash report: BroadcastExtension[2210] terminated: EXC_CRASH (SIGKILL); termination RUNNINGBOARD code 0xdead10cc Killed: 9 process held a file lock while suspended")
        let t = try IPSReport.parse(oldTextCrash, path: "old.ips")
        #expect(t.records.first?.message == "EXC_RESOURCE -> BroadcastExtension[2210] exceeded mem limit: Limit 50 MB (crash report)")
        #expect(t.records.first?.pid == 2210)
        #expect(throws: InputError.self) { try IPSReport.parse("{\"bug_type\":\"210\"}\n{}", path: "x.ips") }
        #expect(throws: InputError.self) { try IPSReport.parse("hello", path: "x.ips") }
    }

    @Test func sysdiagnoseSessionIsDecidedByTheJetsamReport() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sd = dir.appendingPathComponent("sysdiagnose_2026.03.12_23-59-40+0100_iPhone-OS_iPhone_23E224")
        var story = jetsamStory()
        story.messages.removeLast()  // no kernel line: the .ips is the only evidence
        try story.write(to: sd.appendingPathComponent("system_logs.logarchive"))
        let crashes = sd.appendingPathComponent("crashes_and_spins")
        try FileManager.default.createDirectory(at: crashes, withIntermediateDirectories: true)
        try jetsamIPS.write(to: crashes.appendingPathComponent("JetsamEvent-2026-03-12-235954.ips"), atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("samples/jetsam-kill/host-app-log-show.txt"),
                                         to: sd.appendingPathComponent("host-app-log-show.txt"))
        try runTar(["czf", "sysdiagnose.tar.gz", sd.lastPathComponent], cwd: dir)
        let r = try castscope(["analyze", "--json", dir.appendingPathComponent("sysdiagnose.tar.gz").path])
        let json = try #require(r.json, "\(r.stderr)")
        let s = try #require((json["sessions"] as? [[String: Any]])?.first)
        #expect(s["outcome"] as? String == "killed")
        #expect((s["reason"] as? String)?.contains("per-process-limit 51 MB") == true)
        let inputs = try #require(json["inputs"] as? [[String: Any]])
        #expect(inputs.contains { ($0["format"] as? String) == "ips (JetsamEvent, bug_type 298)" })
        #expect((json["inputErrors"] as? [Any])?.isEmpty == true)
        // castscope show puts the report's line among the archive's, in time order.
        let shown = try castscope(["show", "--style", "ndjson", dir.appendingPathComponent("sysdiagnose.tar.gz").path])
        let lines = shown.stdout.split(separator: "\n")
        #expect(lines.count == 46)  // 43 from the archive, the report's, 2 from the host app's text log
        #expect(lines[44].contains("JetsamEvent: BroadcastExtension[2210] killed: per-process-limit"))
        #expect(lines[45].contains("server stream end encountered"))
    }
}

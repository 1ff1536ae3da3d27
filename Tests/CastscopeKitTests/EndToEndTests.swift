import Foundation
import Testing

@testable import CastscopeKit

let sampleScenarios: [(name: String, outcomes: [String])] = [
    ("healthy-jitsi", ["completed"]),
    ("retry-storm", ["failed-to-connect"]),
    ("stopped-10001", ["stopped-by-host"]),
    ("jetsam-kill", ["killed"]),
    ("sendbird-call-ended", ["stopped-by-host"]),
    ("mixed-bundle", ["completed", "stopped-by-host"]),
    ("relay", []),
]

/// Every (event, source) the report recognized: single timeline rows, folded rows' first
/// line, decided-by lines and unattached lines.
func recognized(_ json: [String: Any]) -> [(String, String)] {
    var out: [(String, String)] = []
    for s in json["sessions"] as? [[String: Any]] ?? [] {
        for t in s["timeline"] as? [[String: Any]] ?? [] {
            out.append((t["event"] as? String ?? "", t["source"] as? String ?? ""))
        }
    }
    for e in json["unattached"] as? [[String: Any]] ?? [] {
        out.append((e["event"] as? String ?? "", e["source"] as? String ?? ""))
    }
    return out
}

@Suite("castscope analyze on samples/")
struct SampleTests {
    @Test("each scenario's JSON report equals its samples/<name>/.expected.json", arguments: sampleScenarios)
    func expectedReport(_ scenario: (name: String, outcomes: [String])) throws {
        // A fixed generation time (as `make expected` uses), so the report is reproducible.
        let r = try castscope(["analyze", "--json", "samples/\(scenario.name)"], env: ["SOURCE_DATE_EPOCH": "0"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(r.json)
        #expect(json["schema"] as? String == "castscope.report/2")
        let outcomes = (json["sessions"] as? [[String: Any]] ?? []).map { $0["outcome"] as? String ?? "" }
        #expect(outcomes == scenario.outcomes)
        let expectedURL = packageRoot.appendingPathComponent("samples/\(scenario.name)/.expected.json")
        let expected = try JSONSerialization.jsonObject(with: Data(contentsOf: expectedURL)) as? NSDictionary
        #expect(NSDictionary(dictionary: json) == expected, "report differs from \(expectedURL.path): run `make expected` and review the diff")
    }

    @Test("make run: every sample in one call, terminal report, exit 0")
    func wholeSamplesFolder() throws {
        let r = try castscope(["analyze", "samples/"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("castscope: 21 files,"))
        #expect(r.stdout.contains("7 sessions (2 completed, 3 stopped-by-host, 1 failed-to-connect, 1 killed)"))
        #expect(!r.stdout.contains("\u{1B}["), "no colour when piped")
        #expect(r.stdout.contains("open socket connection ×37 over 3.8 s, every 103 ms; failure: socket file missing ×37"))
        #expect(r.stdout.contains("connect: 37 attempts, 37 failed (socket file missing ×37), every 103 ms (max 112 ms); never connected"))
        #expect(r.stdout.contains("why: the extension was killed for exceeding its memory limit (ActiveHard 50 MB)"))
    }

    @Test("a zip inside a tar.gz with every format: one call, each line named by its path inside the bundle")
    func mixedBundleProvenance() throws {
        let r = try castscope(["analyze", "--json", "samples/mixed-bundle"])
        let json = try #require(r.json)
        let inputs = try #require(json["inputs"] as? [[String: Any]])
        var formats: [String: String] = [:]
        for i in inputs { formats[i["path"] as! String] = i["format"] as? String }
        let b = "samples/mixed-bundle/support-bundle.tar.gz!support-bundle/"
        #expect(formats == [
            b + "device/host-compact.txt": "apple-compact",
            b + "device/livekit-log-show.ndjson": "apple-ndjson",
            b + "device/more-logs.zip!console-copy.txt": "console-copy",
            b + "device/more-logs.zip!idevicesyslog.txt": "idevicesyslog",
            b + "device/more-logs.zip!log-show-default.txt": "apple-default",
            b + "device/more-logs.zip!log-stream-syslog.txt": "apple-syslog",
            b + "device/system-log-show.json.gz": "apple-json",
            b + "device/xcode-extension-console.txt": "xcode",
            b + "relay/relay-short-iso.txt": "journal-short-iso",
            b + "relay/relay-short-precise.txt": "journal-short-precise",
            b + "relay/relay.export": "journal-export",
            b + "relay/relay.json": "journal-json",
        ])
        for i in inputs where (i["path"] as! String).contains("relay/") {
            // The export carries a sixth entry whose MESSAGE is a binary-safe field.
            #expect(i["records"] as? Int == ((i["path"] as! String).hasSuffix(".export") ? 6 : 5))
        }
        let sources = recognized(json).map(\.1)
        #expect(sources.contains(b + "device/more-logs.zip!log-stream-syslog.txt:2"))
        #expect(sources.contains(b + "device/xcode-extension-console.txt:8"))
        #expect(sources.contains(b + "device/livekit-log-show.ndjson:5"))
    }

    @Test("a bundle re-packed as .tar.xz, .tar.bz2 or .tar.zst reads as its folder does")
    func otherCompressedBundles() throws {
        let folder = packageRoot.appendingPathComponent("samples/stopped-10001")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
        let entries = try names.map { ("stopped-10001/" + $0, Array(try Data(contentsOf: folder.appendingPathComponent($0)))) }
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let plain = try #require(try castscope(["analyze", "--json", "samples/stopped-10001"]).json)
        for (kind, ext) in [(ArchiveKind.tarXz, "tar.xz"), (.tarBz2, "tar.bz2"), (.tarZst, "tar.zst")] {
            let path = dir.appendingPathComponent("bundle.\(ext)").path
            try Data(makeArchive(kind, entries)).write(to: URL(fileURLWithPath: path))
            let r = try castscope(["analyze", "--json", path])
            #expect(r.status == 0, "\(ext): \(r.stderr)")
            let json = try #require(r.json)
            #expect((json["sessions"] as? [[String: Any]])?.map { $0["outcome"] as? String } == ["stopped-by-host"], "\(ext)")
            #expect(recognized(json).map(\.0) == recognized(plain).map(\.0), "\(ext)")
            #expect(recognized(json).map(\.1).allSatisfy { $0.hasPrefix(path + "!stopped-10001/") }, "\(ext)")
        }
    }

    @Test("standard input is read with '-'")
    func stdin() throws {
        let data = try Data(contentsOf: packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt"))
        let r = try castscope(["analyze", "--json", "-"], stdin: data)
        let json = try #require(r.json)
        let inputs = try #require(json["inputs"] as? [[String: Any]])
        #expect(inputs.map { $0["path"] as? String } == ["<stdin>"])
        #expect((json["sessions"] as? [[String: Any]])?.first?["outcome"] as? String == "failed-to-connect")
    }
}

@Suite("castscope analyze on ../shared/reference/real-logs")
struct RealLogTests {
    /// What each real log shows: its format, how many records, and recognized lines.
    static let cases: [(file: String, format: String, records: Int, events: [(String, Int)])] = [
        ("apprtcmobile-10-user-alert-invalid-broadcast-session.txt", "plain", 4,
         [("replaykit.error", 3), ("broadcast.stopped_alert", 5)]),
        ("capacitor-jitsi-meet-101-ios-sdk-console-rejoin.txt", "plain", 15, []),
        ("formats-consoleapp-copy-livekit-swift-510.txt", "console-copy", 10, []),
        ("formats-journalctl-json-sentinel-linux.txt", "journal-json", 4, []),
        ("formats-journalctl-short-iso-offset-without-colon-systemd-29134.txt", "journal-short-iso", 11, []),
        ("formats-journalctl-short-precise-bottlerocket-2900.txt", "journal-short-precise", 4, []),
        ("formats-logshow-default-header-footer-simoncblyth-env.txt", "apple-default", 4, []),
        ("formats-logstream-default-pymobiledevice3-remotexpc.txt", "apple-default", 3, []),
        ("formats-logstream-syslog-style-hacktricks.txt", "apple-syslog", 3, []),
        ("haishinkit-1791-broadcast-ext-rtmp-yyyy-dd-mm-timestamps.txt", "haishinkit", 11, []),
        ("jitsi-meet-15969-start-broadcast-app-group-not-entitled.txt", "plain", 9,
         [("app.screenshare_requested", 10), ("app_group.not_entitled", 11)]),
        ("jitsi-sdk-samples-147-app-group-not-entitled.txt", "xcode", 5,
         [("app.screenshare_requested", 4), ("app_group.not_entitled", 5)]),
        ("livekit-swift-510-host-app-suspended-runningboardd.txt", "console-copy", 2, [("app.suspended", 3)]),
        ("nativescript-webrtc-16-rpdaemonproxy-pause-on-background.txt", "plain", 7, [("capture.interrupted", 6)]),
        ("rnwebrtc-1071-app-server-stream-open-then-econnrefused.txt", "xcode", 7,
         [("server.client_connected", 3), ("server.client_connected", 4), ("socket.so_error", 5)]),
        ("rnwebrtc-1106-econnrefused-collapsed-onto-one-line.txt", "xcode", 5, [("socket.so_error", 3)]),
    ]

    @Test("every real log is covered by this table")
    func allFilesCovered() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: realLogs.path).sorted()
        #expect(files == Self.cases.map(\.file).sorted())
    }

    @Test("format recognized, records read, events found", arguments: cases.map(\.file))
    func realLog(_ file: String) throws {
        let c = try #require(Self.cases.first(where: { $0.file == file }))
        let path = realLogs.appendingPathComponent(file).path
        let r = try castscope(["analyze", "--json", path])
        // Issue 11: a log with no screen-sharing line in it exits 4 ("nothing recognized").
        #expect(r.status == 0 || (c.events.isEmpty && r.status == 4), "\(r.stderr)")
        let json = try #require(r.json)
        let input = try #require((json["inputs"] as? [[String: Any]])?.first)
        #expect(input["format"] as? String == c.format)
        #expect(input["records"] as? Int == c.records)
        let found = recognized(json)
        for (event, line) in c.events {
            #expect(found.contains(where: { $0.0 == event && $0.1 == "\(path):\(line)" }), "\(event) at line \(line) not found in \(found)")
        }
    }

    @Test("yyyy-dd-MM dates are repaired and said so")
    func haishinkitSwappedDates() throws {
        let r = try castscope(["analyze", "--json", realLogs.appendingPathComponent("haishinkit-1791-broadcast-ext-rtmp-yyyy-dd-mm-timestamps.txt").path])
        let notes = ((r.json?["inputs"] as? [[String: Any]])?.first?["notes"] as? [String]) ?? []
        #expect(notes.contains("6 timestamps written yyyy-dd-MM were read with day and month swapped"))
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// Session 65's field round: relay logs as log tooling hands them over.
@Suite("field formats, round 65: structured loggers' JSON lines")
struct FieldFormatsRound65Tests {
    func analyze(_ name: String, _ text: String, _ args: [String] = []) throws -> RunResult {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: path)
        return try castscope(["analyze", "--no-color"] + args + [path.path])
    }

    @Test("a relay logging through pino (Node) or zap (Go) as JSON lines: its records keep their times (milliseconds or seconds since 1970) and make a relay session; read as plain before, times lost")
    func pinoAndZap() throws {
        let pino = """
            {"level":30,"time":1710234000123,"pid":4242,"hostname":"relay-1","msg":"session s1 accepted peer=10.0.0.7:51234 room=demo"}
            {"level":30,"time":1710234001123,"pid":4242,"hostname":"relay-1","msg":"session s1 stats frames=30 bytes=120000 fps=30.0 dropped=0"}
            {"level":50,"time":1710234003123,"pid":4242,"hostname":"relay-1","msg":"session s1 closed reason=peer-eof frames=30 duration=3.0s"}

            """
        let r = try analyze("relay.log", pino)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("relay session s1 (10.0.0.7:51234, room demo) at 2024-03-12T09:00:00.123000+00:00 has no device session in these logs; lasted 3.0 s, closed: peer-eof"), "\(r.stdout)")
        #expect(r.stdout.contains("json-logger  3 records, 3 recognized"), "\(r.stdout)")
        let zap = pino.replacingOccurrences(of: "\"level\":30,\"time\":1710234000123", with: "\"level\":\"info\",\"ts\":1710234000.123")
            .replacingOccurrences(of: "\"level\":30,\"time\":1710234001123", with: "\"level\":\"info\",\"ts\":1710234001.123")
            .replacingOccurrences(of: "\"level\":50,\"time\":1710234003123", with: "\"level\":\"error\",\"ts\":1710234003.123")
        let z = try analyze("relay.log", zap)
        #expect(z.stdout.contains("at 2024-03-12T09:00:00.123000+00:00 has no device session in these logs; lasted 3.0 s, closed: peer-eof"), "\(z.stdout)")
    }

    @Test("docker's json-file log of a mediamtx container (`/var/lib/docker/containers/ID/ID-json.log`): each line's `log`, its line break off, at docker's time")
    func dockerJSONFile() throws {
        let log = #"""
            {"log":"2024/03/12 09:00:00 INF [RTMP] [conn 10.0.0.7:51234] opened\n","stream":"stderr","time":"2024-03-12T09:00:00.000123456Z"}
            {"log":"2024/03/12 09:00:00 INF [RTMP] [conn 10.0.0.7:51234] is publishing to path 'live/demo', 1 track (H264)\n","stream":"stderr","time":"2024-03-12T09:00:00.200123456Z"}
            {"log":"2024/03/12 09:00:42 INF [RTMP] [conn 10.0.0.7:51234] closed: EOF\n","stream":"stderr","time":"2024-03-12T09:00:42.000123456Z"}

            """#
        let r = try analyze("abc-json.log", log)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("relay session 10.0.0.7:51234 (?, room live/demo) at 2024-03-12T09:00:00.200123+00:00 has no device session in these logs; lasted 41.8 s, closed: EOF"), "\(r.stdout)")
    }

    @Test("epoch times of every size: seconds with a fraction, milliseconds, microseconds, nanoseconds; anything else is no epoch")
    func epochUnits() {
        func micros(_ s: String) -> Int64? {
            RecordReader.epochAnyUnit(Array(s.utf8))?.epochMicros
        }
        #expect(micros("1700000000.1234") == 1_700_000_000_123_400)
        #expect(micros("1700000000") == 1_700_000_000_000_000)
        #expect(micros("1700000000123") == 1_700_000_000_123_000)
        #expect(micros("1700000000123456") == 1_700_000_000_123_456)
        #expect(micros("1700000000123456789") == 1_700_000_000_123_456)
        #expect(micros("1.7e9") == nil)
        #expect(micros("-5") == nil)
        #expect(micros("2024-03-12") == nil)
        #expect(micros("17000000001234567890") == nil)
    }

    @Test("Node-Media-Server's lines (illuspas/Node-Media-Server#597): the US date Node writes, month first, its pid and level; a publish and its close make a relay session (plain before: times lost, nothing recognized)")
    func nodeMediaServer() throws {
        let log = """
            12/19/2025 11:07:40 74341 [INFO] Node Media Rtmp Server started on port: 1935
            12/19/2025 11:07:45 74341 [INFO] [rtmp connect] id=QJ4MR2YV ip=::ffff:192.168.65.20 app=live args={"app":"live"}
            [NodeEvent on prePublish] id=QJ4MR2YV StreamPath=/live/jobs_test args={}
            12/19/2025 11:07:45 74341 [INFO] [rtmp publish] New stream. id=QJ4MR2YV streamPath=/live/jobs_test streamId=1
            12/19/2025 11:08:31 74341 [INFO] [rtmp publish] Close stream. id=QJ4MR2YV streamPath=/live/jobs_test streamId=1

            """
        let r = try analyze("nms.log", log)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("relay session QJ4MR2YV (?, room /live/jobs_test) at 2025-12-19T11:07:45.000000 has no device session in these logs; lasted 46.0 s, closed: unpublish"), "\(r.stdout)")
        #expect(r.stdout.contains("node-media-server  5 records, 2 recognized"), "\(r.stdout)")
    }

    @Test("`kubectl logs --timestamps` (or `docker logs -t`) of a relay logging JSON lines: the tool's time comes off and each object is read with its own (taken for Node debug's namespace before: nothing recognized)")
    func kubectlTimestampsBeforeJSON() throws {
        let log = """
            2024-03-12T09:00:00.200456789Z {"level":30,"time":1710234000123,"pid":1,"hostname":"relay-7c9f","msg":"session s1 accepted peer=10.0.0.7:51234 room=demo"}
            2024-03-12T09:00:01.200456789Z {"level":30,"time":1710234001123,"pid":1,"hostname":"relay-7c9f","msg":"session s1 stats frames=30 bytes=120000 fps=30.0 dropped=0"}
            2024-03-12T09:00:03.200456789Z {"level":50,"time":1710234003123,"pid":1,"hostname":"relay-7c9f","msg":"session s1 closed reason=peer-eof frames=30 duration=3.0s"}

            """
        let r = try analyze("relay-pod.log", log)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("relay session s1 (10.0.0.7:51234, room demo) at 2024-03-12T09:00:00.123000+00:00 has no device session in these logs; lasted 3.0 s, closed: peer-eof"), "\(r.stdout)")
        #expect(r.stdout.contains("json-logger  3 records, 3 recognized"), "\(r.stdout)")
    }
}

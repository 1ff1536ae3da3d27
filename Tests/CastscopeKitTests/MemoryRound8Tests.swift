import Foundation
import Testing

@testable import CastscopeKit

/// Issue 15's memory round 8: structures that grew with the input (sessions seen, lines read,
/// a report's numbers) instead of with what is open.
@Suite("memory round 8: bounded by what is open")
struct MemoryRound8Tests {
    func relayLine(_ kind: String, _ id: String, _ t: Int64, _ order: Int, _ extra: [(String, String)] = []) -> Event {
        Event(kind: kind, sdk: "relay", side: .relay, time: t, process: "broadcast-relay", pid: 811, message: "session \(id) \(kind)",
              attrs: [("session", id)] + extra, source: SourceRef(path: "relay.journal", line: order), order: order,
              parsedTime: nil, fileIndex: 0)
    }

    @Test("tail: relay sessions that never close end unseen after half an hour of silence, are said, and go")
    func relayNeverClosed() {
        let live = LiveSessions()
        var order = 0
        var noEnd: [String] = []
        func feed(_ e: Event) {
            for c in live.feed(e) { if case .relayNoEnd(let r, let last) = c { noEnd.append(r.id); #expect(last == r.end) } }
        }
        // A session accepted every 10 s for 5 hours, two stats lines each, none ever closed (the
        // relay restarted, or a build that logs no close); and one long session with a stats
        // line every 20 minutes, alive throughout.
        for k in 0..<1800 {
            let id = String(format: "%08x-0000", k), t = Int64(k) * 10_000_000
            for (kind, dt) in [("relay.accepted", 0), ("relay.stats", 2), ("relay.stats", 4)] {
                order += 1
                feed(relayLine(kind, id, t + Int64(dt) * 1_000_000, order, kind == "relay.stats" ? [("frames", "10")] : []))
            }
            if k % 120 == 0 {
                order += 1
                feed(relayLine("relay.stats", "long", t + 1, order, [("frames", "10")]))
            }
        }
        #expect(live.relaySeen == 1801)
        // Held: the last half hour's (180) and the long one; every older one said once, in order.
        #expect(live.relay.count >= 180 && live.relay.count <= 183, "\(live.relay.count) relay sessions held")
        #expect(live.relay["long"] != nil && !noEnd.contains("long"))
        #expect(noEnd.count == live.relayNoEndSeen && noEnd.count >= 1617 && noEnd.count <= 1620, "\(noEnd.count)")
        #expect(noEnd.prefix(3) == ["00000000-0000", "00000001-0000", "00000002-0000"])
        #expect(Set(noEnd).count == noEnd.count, "each said once")
        #expect(live.silentRelay.count <= 200 && live.acceptedTimes.count <= 200 && live.relayOrder.count <= 2 * 1024 + 200,
                "\(live.silentRelay.count) \(live.acceptedTimes.count) \(live.relayOrder.count)")
        // A line of one said ended starts it afresh.
        order += 1
        feed(relayLine("relay.stats", "00000000-0000", 18_000_000_000, order, [("frames", "10")]))
        #expect(live.relay["00000000-0000"]?.events.count == 1)
        // The summary says how many ended unseen.
        let summary = LiveReport(json: false, color: false).summary([], relaySessions: live.relaySeen, relayNoEnd: live.relayNoEndSeen)
        #expect(summary.contains("(\(noEnd.count) ended with no end seen: no line for 30 min and no closed line)"), "\(summary)")
        let json = LiveReport(json: true, color: false).summary([], relaySessions: live.relaySeen, relayNoEnd: live.relayNoEndSeen)
        #expect(json.contains("\"relayNoEnd\":\(noEnd.count)"))
    }

    @Test("tail: a relay that goes quiet (killed) ends its open sessions by its live clock")
    func relayKilledQuiet() {
        let live = LiveSessions()
        // Read as they are written (wall = line time): 50 sessions, then nothing.
        for k in 0..<50 {
            let t = Int64(k) * 1_000_000
            _ = live.feed(relayLine("relay.accepted", "s\(k)", t, k + 1), wall: t)
        }
        #expect(live.tick(now: 49_000_000 + 29 * 60_000_000).allSatisfy { if case .relayNoEnd = $0 { false } else { true } })
        let changes = live.tick(now: 49_000_000 + 31 * 60_000_000)
        let said = changes.compactMap { c -> String? in if case .relayNoEnd(let r, _) = c { r.id } else { nil } }
        #expect(said.count == 50 && live.relay.isEmpty, "\(said.count) said, \(live.relay.count) held")
    }

    @Test("a relay session closed before it was accepted (clock set back) says so and has no negative duration")
    func relayEndBeforeStart() throws {
        let text = """
            2026-03-12T09:15:04.000000+00:00 relay1 broadcast-relay[811]: session 6a1d9e27-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=r1
            2026-03-12T09:15:05.000000+00:00 relay1 broadcast-relay[811]: session 6a1d9e27-1b7e-4f0e-9a51-2f1d3c4b5a69 stats frames=10 bytes=281000 fps=10.0 dropped=0
            2026-03-12T09:14:10.000000+00:00 relay1 broadcast-relay[811]: session 6a1d9e27-1b7e-4f0e-9a51-2f1d3c4b5a69 closed reason=peer-eof frames=10 duration=1.0s
            2026-03-12T09:16:00.000000+00:00 relay1 broadcast-relay[811]: session 7b2e0f38-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=r2
            2026-03-12T09:16:09.000000+00:00 relay1 broadcast-relay[811]: session 7b2e0f38-1b7e-4f0e-9a51-2f1d3c4b5a69 closed reason=peer-eof frames=90 duration=9.0s

            """
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("relay.txt")
        try Data(text.utf8).write(to: log)
        let said = "its closed line is timed 54.0 s before its accepted line (the relay's clock set back, or two hosts' lines under one id): no duration"
        let t = try castscope(["analyze", "--no-color", log.path])
        #expect(t.stdout.contains("has no device session in these logs; " + said), "\(t.stdout)")
        let j = try castscope(["analyze", "--json", log.path]).json ?? [:]
        let relay = j["relaySessions"] as? [[String: Any]] ?? []
        #expect(relay.count == 2)
        #expect(relay.first { $0["id"] as? String == "6a1d9e27-1b7e-4f0e-9a51-2f1d3c4b5a69" }?["note"] as? String == said)
        #expect(relay.first { $0["id"] as? String == "7b2e0f38-1b7e-4f0e-9a51-2f1d3c4b5a69" }?["note"] == nil, "only where it applies")
        // ClickHouse rows: no negative duration; the reason says why there is none.
        let ch = dir.appendingPathComponent("ch")
        _ = try castscope(["analyze", "-q", "--clickhouse", "file://" + ch.path, log.path])
        let rows = try String(contentsOf: ch.appendingPathComponent("castscope_sessions.jsonl"), encoding: .utf8)
            .split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let back = rows.first { $0["ReportId"] as? String == "6a1d9e27-1b7e-4f0e-9a51-2f1d3c4b5a69" }
        #expect(back != nil && back?["DurationSeconds"] is NSNull, "\(String(describing: back?["DurationSeconds"]))")
        #expect((back?["Reason"] as? String)?.hasSuffix("; " + said) == true)
        #expect(rows.first { $0["ReportId"] as? String == "7b2e0f38-1b7e-4f0e-9a51-2f1d3c4b5a69" }?["DurationSeconds"] as? Double == 9)
    }

    /// Values in a parsed document (itself and every one inside).
    func values(_ v: JSONValue) -> Int {
        switch v {
        case .array(let a): return 1 + a.reduce(0) { $0 + values($1) }
        case .object(let o): return 1 + o.reduce(0) { $0 + values($1.1) }
        default: return 1
        }
    }

    @Test(".ips: the body is built only as far as the readers use it; the same records and errors as the whole parse")
    func ipsBodyBounded() throws {
        // A JetsamEvent of 20,000 processes (one in 500 killed) and 200,000 numbers of junk.
        var procs: [String] = []
        for i in 0..<20_000 {
            let reason = i % 500 == 0 ? ",\"reason\":\"per-process-limit\"" : ""
            procs.append("{\"uuid\":\"4044151C\",\"states\":[\"idle\",\"daemon\"],\"rpages\":\(100 + i),\"name\":\"proc\(i)\",\"pid\":\(1000 + i)\(reason)}")
        }
        let junk = Array(repeating: "0", count: 200_000).joined(separator: ",")
        let header = "{\"bug_type\":\"298\",\"timestamp\":\"2026-03-12 10:20:05.00 +0100\"}\n"
        let body = "{\"largestProcess\":\"proc1\",\"memoryStatus\":{\"pageSize\":16384},\"processes\":[\(procs.joined(separator: ","))],\"junk\":[\(junk)]}"
        let kept = try #require(try JSONValue.parse(Substring(body), keep: IPSReport.read))
        let whole = try JSONValue.parse(body)
        #expect(values(whole) > 300_000)
        #expect(values(kept) < 300, "\(values(kept)) values kept")
        #expect(kept["processes"]?.arrayValue?.count == 40)
        let report = try IPSReport.parse(header + body, path: "big.ips")
        #expect(report.records.count == 40)
        #expect(report.records.first?.message == "JetsamEvent: proc0[1000] killed: per-process-limit, footprint 1 MB (100 pages); largest process proc1")
        // What is not kept is still read as JSON: the same error, at the same byte.
        for bad in ["{\"junk\":[1,2,NaN]}", "{\"junk\":{\"a\" 1}}", "{\"processes\":[{\"name\":\"x\",}]}", "{\"junk\":[\"open"] {
            var wholeError = "", keptError = ""
            do { _ = try JSONValue.parse(bad) } catch { wholeError = "\(error)" }
            do { _ = try JSONValue.parse(Substring(bad), keep: IPSReport.read) } catch { keptError = "\(error)" }
            #expect(!wholeError.isEmpty && wholeError == keptError, "\(bad): \(wholeError) / \(keptError)")
        }
        // A body cut short: what came before the cut, as the whole lenient parse reads it.
        let cut = String(body.prefix(body.count / 2))
        let lenient = try JSONValue.parse(Substring(cut), keep: IPSReport.read, lenient: true)
        #expect(lenient?["processes"]?.arrayValue?.count == JSONValue.parseCut(cut)?["processes"]?.arrayValue?.filter { $0["reason"] != nil }.count)
        // A crash's threads keep their queue and top frame only (the crash line names them):
        // a thread of 100,000 frames is one frame.
        let frames = (0..<100_000).map { "{\"imageIndex\":\($0 % 3),\"symbol\":\"f\($0)\"}" }.joined(separator: ",")
        let crash = "{\"faultingThread\":0,\"threads\":[{\"queue\":\"q\",\"frames\":[\(frames)]}],\"usedImages\":[{\"name\":\"a\"},{\"name\":\"b\"}]}"
        let crashKept = try #require(try JSONValue.parse(Substring(crash), keep: IPSReport.read))
        #expect(values(crashKept) < 20, "\(values(crashKept)) values kept")
        #expect(crashKept["threads"]?.arrayValue?.first?["frames"]?.arrayValue?.count == 1)
        #expect(crashKept["threads"]?.arrayValue?.first?["queue"]?.stringValue == "q")
    }

    @Test("year-less relay text: its folded stats runs go to disk once memory is past the mark, looked at by lines read")
    func yearlessRelayHeldByLines() throws {
        // 40 relay sessions, 1,000 stats lines each, interleaved, as `journalctl -o short-precise`
        // writes them (no year): 40,080 lines, 120 events (each session's stats one run).
        var text = ""
        let base = 9 * 3600 + 15 * 60
        for r in 0...1001 {
            for k in 0..<40 {
                let t = base + r, id = String(format: "%08x-1b7e-4f0e-9a51-2f1d3c4b5a69", k)
                let clock = String(format: "%02d:%02d:%02d.%06d", t / 3600, t / 60 % 60, t % 60, k * 1000)
                let m = r == 0 ? "accepted peer=iPhone14,2 room=r\(k)" : r == 1001 ? "closed reason=peer-eof frames=10000 duration=1000.0s"
                    : "stats frames=10 bytes=\(281000 + r) fps=10.0 dropped=0"
                text += "Mar 12 \(clock) relay1 broadcast-relay[811]: session \(id) \(m)\n"
            }
        }
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("relay.txt")
        try Data(text.utf8).write(to: log)
        let registry = try ParserRegistry.builtin()
        func run(pastMegabytes: Int) throws -> (AnalysisReport, Int) {
            var options = AnalyzeOptions()
            options.now = 1_773_306_000_000_000
            let a = try Analyzer(registry: registry, options: options)
            a.onSession = { _, _ in }
            // (any resident size is past 0 MB: what is looked at, and when, decides)
            a.holdsPastMegabytes = pastMegabytes
            let r = a.analyze([log.path])
            return (r, a.lastHeldEvents)
        }
        let (held, heldEvents) = try run(pastMegabytes: 0)
        let (inMemory, none) = try run(pastMegabytes: 1 << 30)
        #expect(heldEvents > 0, "the runs stood for 40,080 lines: memory was looked at, and they were held")
        #expect(none == 0)
        #expect(held.relaySessions.count == 40 && inMemory.relaySessions.count == 40)
        #expect(held.eventCount == inMemory.eventCount && held.eventCount == 40_080)
        #expect((0..<40).allSatisfy { held.relaySessions[$0].frames == inMemory.relaySessions[$0].frames })
    }
}

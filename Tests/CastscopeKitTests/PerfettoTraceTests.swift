import Foundation
import Testing

@testable import CastscopeKit

/// Perfetto's own Python trace processor (PyPI `perfetto`) downloads its `trace_processor_shell`
/// binary from get.perfetto.dev when first used: there is no network here, so the trace is
/// checked structurally, event by event, against the JSON report of the same run.
@Suite("Perfetto trace: every timeline line on its side's track, the deciding lines marked, wall-clock timestamps")
struct PerfettoTraceTests {
    @Test(arguments: ["samples/", "samples/relay"])
    func everyLine(_ input: String) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let trace = dir.appendingPathComponent("t.json")
        let r = try castscope(["analyze", "--json", "--perfetto", trace.path, input])
        #expect(r.status == 0, "\(r.stderr)")
        let report = try #require(r.json)
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: trace)) as? [String: Any])
        let other = try #require(doc["otherData"] as? [String: Any])
        #expect((other["timestamps"] as? String)?.hasPrefix("microseconds since 1970-01-01T00:00:00Z") == true)
        #expect(other["version"] as? String == Provenance.toolVersion)
        let events = try #require(doc["traceEvents"] as? [[String: Any]])
        // Thread names per (pid, tid).
        var threads: [String: String] = [:]
        for e in events where e["name"] as? String == "thread_name" {
            let key = "\(e["pid"]!)/\(e["tid"]!)"
            #expect(threads[key] == nil, "one name per track")
            threads[key] = (e["args"] as? [String: Any])?["name"] as? String
        }
        // Absolute: every timestamp is wall-clock µs (after 2020-01-01).
        for e in events where e["ph"] as? String != "M" {
            let ts = try #require(e["ts"] as? Int64 ?? (e["ts"] as? NSNumber)?.int64Value)
            #expect(ts > 1_577_836_800_000_000, "\(e)")
        }
        let lines = events.filter { $0["cat"] as? String == "line" }
        let sideNames = ["extension": "extension", "app": "host app", "system": "system", "relay": "relay"]
        var expected = 0
        for s in report["sessions"] as? [[String: Any]] ?? [] {
            let id = s["id"] as? String ?? ""
            for t in s["timeline"] as? [[String: Any]] ?? [] where t["time"] is String {
                expected += 1
                let match = lines.first { e in
                    let a = e["args"] as? [String: Any] ?? [:]
                    return a["source"] as? String == t["source"] as? String && a["time"] as? String == t["time"] as? String
                        && e["name"] as? String == t["message"] as? String
                }
                let m = try #require(match, "\(id): \(t)")
                #expect(threads["\(m["pid"]!)/\(m["tid"]!)"] == "\(id) · \(sideNames[t["side"] as? String ?? ""] ?? "?")", "on its side's track")
                #expect((m["args"] as? [String: Any])?["count"] as? Int == t["count"] as? Int)
            }
            for d in s["decidedBy"] as? [[String: Any]] ?? [] {
                let decided = events.contains { e in
                    e["cat"] as? String == "decided" && (e["args"] as? [String: Any])?["source"] as? String == d["source"] as? String
                        && (e["name"] as? String)?.hasSuffix(d["message"] as? String ?? "\u{0}") == true
                }
                #expect(decided, "\(id): deciding line \(d) marked")
            }
        }
        #expect(lines.count == expected, "one instant per timeline line")
        // Relay slices are named by their session (and the device session they belong to).
        for rs in report["relaySessions"] as? [[String: Any]] ?? [] {
            let id = rs["id"] as? String ?? ""
            #expect(events.contains { $0["cat"] as? String == "relay" && ($0["name"] as? String)?.hasPrefix("relay \(id)") == true }, "\(id)")
        }
        if input == "samples/" { #expect(expected > 50 && events.contains { $0["cat"] as? String == "decided" }) }
    }
}

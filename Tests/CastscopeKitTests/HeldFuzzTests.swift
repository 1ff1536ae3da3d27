import Foundation
import Testing

@testable import CastscopeKit

/// Random bundles (written by a reviewer of the held path): sessions of reused pids in several
/// layouts (log show, syslog, console copy, untimed), overlapping copies with a line out of
/// order, relay text lines with and without a year, nights across midnight, windows, one
/// reader and parallel ranges: the held report must be the in-memory one. `FUZZ_N` bundles.
@Suite("held fuzz")
struct HeldFuzzTests {
    struct Line { var t: Int64; var pid: Int; var proc: String; var msg: String }

    static func timeline(_ rng: inout some RandomNumberGenerator, relay: inout [Line]) -> [Line] {
        var out: [Line] = []
        var t: Int64 = Bool.random(using: &rng) ? 1_773_306_000_000_000 - 3_600_000_000 : 1_773_356_340_000_000 // µs (10:00 or 23:59 +0100)
        for _ in 0..<Int.random(in: 2...6, using: &rng) {
            let pid = [812, 915, 1204, 2210].randomElement(using: &rng)!
            let proc = ["BroadcastExtension", "BroadcastUpload"].randomElement(using: &rng)!
            t += Int64.random(in: 1_000_000...30_000_000, using: &rng)
            out.append(Line(t: t, pid: pid, proc: proc, msg: "broadcast started"))
            t += 3000; out.append(Line(t: t, pid: pid, proc: proc, msg: "Open socket connection"))
            t += 3000; out.append(Line(t: t, pid: pid, proc: proc, msg: "client stream open completed"))
            for _ in 0..<Int.random(in: 0...25, using: &rng) {
                t += Int64.random(in: 20_000...40_000, using: &rng)
                out.append(Line(t: t, pid: pid, proc: proc, msg: "video sample processed successfully"))
            }
            let sid = UUID().uuidString.lowercased()
            let rs = out.last!.t
            relay.append(Line(t: rs - 50_000, pid: 811, proc: "broadcast-relay", msg: "session \(sid) accepted peer=iPhone14,2 room=standup"))
            var rt = rs - 50_000
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                rt += Int64.random(in: 10_000...400_000, using: &rng)
                relay.append(Line(t: rt, pid: 811, proc: "broadcast-relay", msg: "session \(sid) stats frames=10 bytes=281150 fps=10.0 dropped=0"))
            }
            if Bool.random(using: &rng) {
                relay.append(Line(t: rt + 1000, pid: 811, proc: "broadcast-relay", msg: "session \(sid) closed reason=peer-eof frames=948 duration=95.0s"))
            }
            t += 5000
            switch Int.random(in: 0...2, using: &rng) {
            case 0:
                out.append(Line(t: t, pid: 0, proc: "kernel", msg: "memorystatus: killing_specific_process pid \(pid) [\(proc)] (per-process-limit 10) 51200KB - memorystatus_available_pages: 41522"))
            case 1:
                out.append(Line(t: t, pid: pid, proc: proc, msg: "server socket closed"))
            default: break
            }
        }
        return out
    }

    static func fmtTime(_ t: Int64, _ style: Int) -> String {
        let secs = t / 1_000_000 + 3600  // +0100
        let us = t % 1_000_000
        let d = Date(timeIntervalSince1970: TimeInterval(secs))
        var c = Calendar(identifier: .gregorian); c.timeZone = TimeZone(secondsFromGMT: 0)!
        let p = c.dateComponents([.year, .month, .day, .hour, .minute, .second], from: d)
        let hms = String(format: "%02d:%02d:%02d", p.hour!, p.minute!, p.second!)
        switch style {
        case 0: return String(format: "%04d-%02d-%02d ", p.year!, p.month!, p.day!) + hms + String(format: ".%06d+0100", us)
        case 1: return "Mar \(String(format: "%2d", p.day!)) " + hms
        default: return hms + String(format: ".%06d+0100", us)
        }
    }

    static func render(_ lines: [Line], style: Int) -> String {
        var s = ""
        switch style {
        case 0:
            s += "Timestamp                       Thread     Type        Activity             PID    TTL  \n"
            for l in lines {
                s += fmtTime(l.t, 0) + " 0x2f1c4    Default     0x0                  \(String(l.pid).padding(toLength: 7, withPad: " ", startingAt: 0))0    \(l.proc): \(l.msg)\n"
            }
        case 1:
            for l in lines { s += fmtTime(l.t, 1) + " \(l.proc)[\(l.pid)] <Notice>: \(l.msg)\n" }
        case 2:
            for l in lines { s += "default\t" + fmtTime(l.t, 2) + "\t\(l.proc)\t\(l.msg)\n" }
        default:
            for l in lines { s += "\(l.proc)[\(l.pid)]: \(l.msg)\n" }
        }
        return s
    }

    /// The text report written from the sessions handed on, the JSON report, and whether any
    /// line was held; `tune` last.
    static func run(_ paths: [String], held: Bool, window: (Int64?, Int64?), parallel: Bool,
                    tune: (Analyzer) -> Void = { _ in }) throws -> String {
        var options = AnalyzeOptions()
        options.now = 1_773_306_000_000_000
        options.since = window.0
        options.until = window.1
        let a = try Analyzer(registry: try ParserRegistry.builtin(), options: options)
        let text = TextReport(color: false)
        var writer = text
        var parts = ""
        a.willStreamSessions = { writer = text.prepared(inputs: $0.inputs); parts = "" }
        a.onSession = { s, f in parts += writer.sessionBlock(s, findings: f) }
        if held { HeldEventsTests.held(parallel: parallel)(a) } else { a.holdsEventsAfter = 0 }
        if parallel && !held { a.parallelThreshold = 0; a.parallelism = 2; a.minimumRange = 4096; a.streamsWhileReading = false }
        tune(a)
        let r = a.analyze(paths)
        let json = String(decoding: JSONReport.renderBytes(r, provenance: Provenance(commandLine: [], generatedAt: 0)), as: UTF8.self)
        return writer.head(r) + parts + writer.tail(r) + "\n---\n" + json + "\nheld \(a.lastHeldEvents > 0)"
    }

    /// Found by `fuzz`: a frame run whose first lines `--since` cuts, left alone past its block's
    /// last line, went on ahead of the next block's earlier lines instead of waiting for them
    /// (the held bundle fed "×12 over -35 ms" where the in-memory one fed the run in order).
    @Test func aRunCutBySinceWaitsForEarlierLines() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var untimed = ""
        for _ in 0..<18 { untimed += "BroadcastUpload[915]: video sample processed successfully\n" }
        untimed += "BroadcastUpload[915]: server socket closed\nBroadcastExtension[812]: broadcast started\n"
        untimed += "BroadcastExtension[812]: Open socket connection\nBroadcastExtension[812]: client stream open completed\n"
        for _ in 0..<17 { untimed += "BroadcastExtension[812]: video sample processed successfully\n" }
        var seconds = ""
        for _ in 0..<4 { seconds += "Mar 12 23:59:27 BroadcastUpload[915] <Notice>: video sample processed successfully\n" }
        seconds += "Mar 12 23:59:27 BroadcastUpload[915] <Notice>: server socket closed\n"
        for m in ["broadcast started", "Open socket connection", "client stream open completed"] { seconds += "Mar 12 23:59:49 BroadcastExtension[812] <Notice>: \(m)\n" }
        for _ in 0..<16 { seconds += "Mar 12 23:59:49 BroadcastExtension[812] <Notice>: video sample processed successfully\n" }
        for _ in 0..<3 { seconds += "Mar 12 23:59:50 BroadcastExtension[812] <Notice>: video sample processed successfully\n" }
        seconds += "Mar 12 23:59:50 BroadcastExtension[812] <Notice>: server socket closed\n"
        for m in ["broadcast started", "Open socket connection", "client stream open completed"] { seconds += "Mar 13 00:00:10 BroadcastUpload[812] <Notice>: \(m)\n" }
        for _ in 0..<4 { seconds += "Mar 13 00:00:10 BroadcastUpload[812] <Notice>: video sample processed successfully\n" }
        seconds += "Mar 13 00:00:10 BroadcastUpload[812] <Notice>: server socket closed\n"
        var micro = "Timestamp                       Thread     Type        Activity             PID    TTL  \n"
        for us in ["735537", "767796", "789926", "828800", "853556", "877294", "900631", "934286", "964728"] {
            micro += "2026-03-12 23:59:49.\(us)+0100 0x2f1c4    Default     0x0                  812    0    BroadcastExtension: video sample processed successfully\n"
        }
        try untimed.write(to: dir.appendingPathComponent("f0.txt"), atomically: true, encoding: .utf8)
        try seconds.write(to: dir.appendingPathComponent("f1.txt"), atomically: true, encoding: .utf8)
        try micro.write(to: dir.appendingPathComponent("f2.txt"), atomically: true, encoding: .utf8)
        let window: (Int64?, Int64?) = (1_773_356_389_229_394, nil)
        let m = try Self.run([dir.path], held: false, window: window, parallel: true)
        let h = try Self.run([dir.path], held: true, window: window, parallel: true)
        #expect(h.hasSuffix("held true"))
        #expect(m.replacingOccurrences(of: "\nheld false", with: "") == h.replacingOccurrences(of: "\nheld true", with: ""))
        #expect(!h.contains("over -"), "\(h)")
    }

    /// Found by `fuzz` (session 61's CI): a frame run with a line out of order (…16.909,
    /// …16.956, …16.932) and a window that keeps nothing. The span the report names must end
    /// at the run's latest line both ways; the in-memory read ended it at the run's last line.
    /// The bundle is kept in `scripts/repro/held-span-midnight/`.
    @Test(arguments: [false, true]) func aSpanEndsAtARunsLatestLine(parallel: Bool) throws {
        let dir = packageRoot.appendingPathComponent("scripts/repro/held-span-midnight")
        let paths = ["f0.txt", "f1.txt", "f2.txt"].map { dir.appendingPathComponent($0).path }
        let window: (Int64?, Int64?) = (nil, 1_773_356_393_540_803)
        let m = try Self.run(paths, held: false, window: window, parallel: parallel)
        let h = try Self.run(paths, held: true, window: window, parallel: parallel)
        #expect(m.replacingOccurrences(of: "\nheld false", with: "") == h.replacingOccurrences(of: "\nheld true", with: "").replacingOccurrences(of: "\nheld false", with: ""))
        #expect(m.contains("00:00:16.956"), "\(m)")
    }

    @Test func fuzz() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var rng = SystemRandomNumberGenerator()
        var failures = 0
        var heldCount = 0
        let iterations = Int(ProcessInfo.processInfo.environment["FUZZ_N"] ?? "60")!
        for n in 0..<iterations {
            let sub = dir.appendingPathComponent("b\(n)")
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
            var relayLines: [Line] = []
            let tl = Self.timeline(&rng, relay: &relayLines)
            relayLines.sort { $0.t < $1.t }
            for f in 0..<Int.random(in: 2...4, using: &rng) {
                let a = Int.random(in: 0..<tl.count, using: &rng)
                let b = Int.random(in: a..<tl.count, using: &rng)
                var lines = Array(tl[a...b])
                if Bool.random(using: &rng), lines.count > 4 {
                    let i = Int.random(in: 1..<lines.count, using: &rng); lines.swapAt(i, i - 1)
                }
                let style = Int.random(in: 0...3, using: &rng)
                try Self.render(lines, style: style).write(to: sub.appendingPathComponent("f\(f).txt"), atomically: true, encoding: .utf8)
            }
            for f in 0..<Int.random(in: 0...2, using: &rng) where !relayLines.isEmpty {
                let a = Int.random(in: 0..<relayLines.count, using: &rng)
                let b = Int.random(in: a..<relayLines.count, using: &rng)
                var text = ""
                let iso = Bool.random(using: &rng)
                for l in relayLines[a...b] {
                    let secs = l.t / 1_000_000, us = l.t % 1_000_000
                    let d = Date(timeIntervalSince1970: TimeInterval(secs))
                    var c = Calendar(identifier: .gregorian); c.timeZone = TimeZone(secondsFromGMT: 0)!
                    let p = c.dateComponents([.year, .month, .day, .hour, .minute, .second], from: d)
                    let hms = String(format: "%02d:%02d:%02d.%06d", p.hour!, p.minute!, p.second!, us)
                    let ts = iso ? String(format: "%04d-%02d-%02dT", p.year!, p.month!, p.day!) + hms + "+00:00" : "Mar \(String(format: "%2d", p.day!)) " + hms
                    text += ts + " relay1 broadcast-relay[811]: \(l.msg)\n"
                }
                try text.write(to: sub.appendingPathComponent("relay\(f).txt"), atomically: true, encoding: .utf8)
            }
            let span = (tl.first!.t, tl.last!.t)
            let third = (span.1 - span.0) / 3
            for w in [(nil, nil), (span.0 + third, nil), (nil, span.1 - third)] as [(Int64?, Int64?)] {
                for parallel in [false, true] {
                    let m = try Self.run([sub.path], held: false, window: w, parallel: parallel)
                    let h = try Self.run([sub.path], held: true, window: w, parallel: parallel)
                    let mm = m.replacingOccurrences(of: "\nheld false", with: "").replacingOccurrences(of: "\nheld true", with: ""), hh = h.replacingOccurrences(of: "\nheld true", with: "").replacingOccurrences(of: "\nheld false", with: "")
                    if h.hasSuffix("held true") { heldCount += 1 }
                    if mm != hh {
                        failures += 1
                        let keep = dir.deletingLastPathComponent().appendingPathComponent("fuzz-fail-\(UUID().uuidString.prefix(6))")
                        try? FileManager.default.copyItem(at: sub, to: keep)
                        try? m.write(to: keep.appendingPathComponent("mem.out"), atomically: true, encoding: .utf8)
                        try? h.write(to: keep.appendingPathComponent("held.out"), atomically: true, encoding: .utf8)
                        Issue.record("mismatch \(keep.path) window \(w) parallel \(parallel)")
                    }
                }
            }
        }
        #expect(heldCount > 0, "some bundles were held")
        #expect(failures == 0)
    }
}

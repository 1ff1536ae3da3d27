import Foundation
import Testing

@testable import CastscopeKit

/// The sixth hostile review (session 44): backtracking patterns, a parsers folder that loops, a
/// time window that cut runs by their first line, config typos and exit codes.
@Suite("hostile input, sixth review: backtracking, a looping parsers folder, windows over runs, config keys, exit codes")
struct HostileRound6Tests {
    /// Runs `body` and says how long it took.
    func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = Date()
        try body()
        return Date().timeIntervalSince(start)
    }

    @Test("a pattern gives up past a bound of tries: a line of thousands of '[RPScreenRecorder ]' (a built-in rule) or a user rule of eight fields, in milliseconds")
    func backtrackingIsBounded() throws {
        // The built-in rule on 1 MB of `[RPScreenRecorder  ] ] ] …` took seconds a line.
        let unit = "[RPScreenRecorder " + String(repeating: " ]", count: 9)
        let line = String(repeating: unit, count: 1_000_000 / unit.count)
        var m = PatternMatch(slots: 3)
        let rule = try Pattern("[RPScreenRecorder {method}]{gap} failed{detail}")
        // (unbounded, a second a megabyte at each of the line's 90,000 starts: hours; bounded,
        // about a second in a debug build, up to six on a loaded two-core host: the bound is
        // far from both)
        let builtIn = seconds { _ = line.utf8.withContiguousStorageIfAvailable { rule.search(UnsafeRawBufferPointer($0), into: &m) } }
        #expect(builtIn < 30, "\(builtIn) s")
        // Eight fields then a literal that never comes, against forty words.
        let user = try Pattern("{f0} {f1} {f2} {f3} {f4} {f5} {f6} {f7} QZQ")
        var m8 = PatternMatch(slots: 8)
        let words = (0..<40).map { "w\($0)" }.joined(separator: " ")
        let eight = seconds { _ = words.utf8.withContiguousStorageIfAvailable { user.search(UnsafeRawBufferPointer($0), into: &m8) } }
        #expect(eight < 30, "\(eight) s")
        // What matches still matches.
        let ok = "-[RPScreenRecorder stopCaptureWithHandler:]_block_invoke:1231 failed with error: Attempted to stop a non-recording"
        #expect(ok.utf8.withContiguousStorageIfAvailable { rule.search(UnsafeRawBufferPointer($0), into: &m) } == true)
    }

    @Test("a --parsers folder that loops through symlinks is walked once; a definition over 4 MB is named as too big, not as invalid JSON")
    func parsersFolderLoopAndSize() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let loop = dir.appendingPathComponent("loop")
        try FileManager.default.createDirectory(at: loop, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: loop.appendingPathComponent("a").path, withDestinationPath: ".")
        try FileManager.default.createSymbolicLink(atPath: loop.appendingPathComponent("b").path, withDestinationPath: ".")
        let log = packageRoot.appendingPathComponent("samples/retry-storm").path
        var r: RunResult?
        let took = try seconds { r = try castscope(["analyze", "--oneline", "--parsers", loop.path, log]) }
        #expect(r?.status == 0 && took < 30, "\(took) s, \(r?.stderr ?? "")")
        let big = dir.appendingPathComponent("big")
        try FileManager.default.createDirectory(at: big, withIntermediateDirectories: true)
        try Data(("{\"name\": \"x\", \"title\": \"" + String(repeating: "x", count: 5 << 20) + "\"}").utf8).write(to: big.appendingPathComponent("x.json"))
        let tooBig = try castscope(["analyze", "--oneline", "--parsers", big.path, log])
        #expect(tooBig.status == 2 && tooBig.stderr.contains("larger than 4 MB"), "\(tooBig.stderr)")
    }

    @Test("--since and --until cut a run of frames by each line's time, not its first's")
    func windowCutsRunsByLine() throws {
        let log = packageRoot.appendingPathComponent("samples/stopped-10001").path
        func frames(_ args: [String]) throws -> (Int, String, String) {
            let r = try castscope(["analyze", "--json"] + args + [log])
            let s = try #require((r.json?["sessions"] as? [[String: Any]])?.first, "\(r.stderr)")
            return ((s["frames"] as? [String: Any])?["count"] as? Int ?? -1, s["start"] as? String ?? "", s["end"] as? String ?? "")
        }
        let all = try frames([])
        #expect(all.0 == 200, "\(all)")
        // Half a second after the first frame: the run's other frames stay.
        let later = try frames(["-S", "2026-03-12 11:02:10"])
        #expect(later.0 > 150 && later.0 < 200, "\(later)")
        // An until inside the run ends the session there.
        let until = try frames(["-U", "2026-03-12 11:02:15"])
        #expect(until.0 > 0 && until.0 < 200 && until.2.hasPrefix("2026-03-12T11:02:15"), "\(until)")
    }

    @Test("a config file's unknown key or a byte order mark; --fail-on when the window kept nothing; --session values that name no session")
    func configAndExitCodes() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = packageRoot.appendingPathComponent("samples/retry-storm").path
        let typo = dir.appendingPathComponent("typo.json")
        try Data("{\"threshold\": {\"min-fps\": 8}}".utf8).write(to: typo)
        let t = try castscope(["analyze", "--oneline", "--config", typo.path, log])
        #expect(t.status == 2 && t.stderr.contains("unknown key 'threshold'"), "\(t.stderr)")
        let bom = dir.appendingPathComponent("bom.json")
        try Data([0xEF, 0xBB, 0xBF] + Array("{\"thresholds\": {\"min-fps\": 8}}".utf8)).write(to: bom)
        #expect(try castscope(["analyze", "--oneline", "--config", bom.path, log]).status == 0)
        let gate = try castscope(["analyze", "--oneline", "--fail-on", "error", "-S", "2027-01-01", log])
        #expect(gate.status == 4 && gate.stderr.contains("kept nothing"), "\(gate.status) \(gate.stderr)")
        // journalctl's forms: years and months, and seconds since 1970 after `@`.
        #expect(TimeSpec.parse("-100y") != nil && TimeSpec.parse("-2 months") != nil)
        #expect(TimeSpec.parse("-1M")?.kind == .relative(-2_629_800_000_000) && TimeSpec.parse("-1m")?.kind == .relative(-60_000_000))
        #expect(TimeSpec.parse("@1773309730")?.kind == .instant(1_773_309_730_000_000))
        for id in ["", "pid:abc", "S"] {
            let r = try castscope(["analyze", "--oneline", "--session", id, log])
            #expect(r.status == 2, "'\(id)': \(r.status) \(r.stderr)")
        }
    }

    @Test("user definitions: a match with no text of its own (it matched every line), a field without a name, a missing $CASTSCOPE_PARSERS folder named as the variable's")
    func userDefinitionSlips() throws {
        #expect(throws: Pattern.CompileError.self) { try Pattern("x {:int} y") }
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("{\"name\":\"e\",\"rules\":[{\"event\":\"broadcast.started\",\"match\":\"{x}\"}],\"samples\":[{\"message\":\"a\"}]}".utf8)
            .write(to: dir.appendingPathComponent("e.json"))
        let log = packageRoot.appendingPathComponent("samples/relay").path
        let empty = try castscope(["analyze", "--oneline", "--parsers", dir.path, log])
        #expect(empty.status == 2 && empty.stderr.contains("has no text of its own"), "\(empty.stderr)")
        let missing = try castscope(["analyze", "--oneline", log], env: ["CASTSCOPE_PARSERS": dir.path + "/none"])
        #expect(missing.status == 2 && missing.stderr.contains("$CASTSCOPE_PARSERS"), "\(missing.stderr)")
    }

    @Test("the second review: another unit's Stopping line hides no death; a cut run of frames stays one run; --session takes pid=N and spaces")
    func secondReviewSlips() throws {
        let exit = "2026-03-12T11:00:30+0000 relayhost systemd[1]: broadcast-relay.service: Main process exited, code=exited, status=1/FAILURE\n"
        for stop in ["Stopping session-5.scope - Session 5 of User root...", "Stopping foo.service - Foo..."] {
            let r = try castscope(["analyze", "--json", "-"], stdin: Data(("2026-03-12T11:00:00+0000 relayhost systemd[1]: \(stop)\n" + exit).utf8))
            let kinds = ((r.json?["findings"] as? [[String: Any]]) ?? []).compactMap { $0["kind"] as? String }
            #expect(kinds.contains("daemon-died"), "\(stop): \(kinds)")
        }
        // A run cut by the window is one event of the lines kept, not an event a line.
        var frames = ""
        for k in 0..<200 { frames += String(format: "2026-03-12 10:00:%02d.%03d000+0100  localhost BroadcastExtension[7]: video sample processed successfully\n", 10 + k / 10, k % 10 * 100) }
        let all = "2026-03-12 10:00:09.000000+0100  localhost BroadcastExtension[7]: broadcast started\n" + frames
        let r = try castscope(["analyze", "--json", "-S", "2026-03-12 10:00:20", "-"], stdin: Data(all.utf8))
        let session = try #require((r.json?["sessions"] as? [[String: Any]])?.first, "\(r.stderr)")
        #expect((session["frames"] as? [String: Any])?["count"] as? Int == 100, "\(session["frames"] ?? "")")
        let frameRows = ((session["timeline"] as? [[String: Any]]) ?? []).filter { ($0["message"] as? String)?.contains("video sample") == true }
        #expect(frameRows.count == 1, "\(frameRows.count) rows")
        for id in ["pid=7", "PID:7", "S1, S2", "S1,"] {
            #expect(try castscope(["analyze", "--oneline", "--session", id, "-"], stdin: Data(all.utf8)).status == 0, "\(id)")
        }
    }
}

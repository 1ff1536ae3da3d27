import Foundation
import Testing

@testable import CastscopeKit

/// Issue 15: a big bundle of several files (a folder, an archive) whose sessions are handed on
/// is held on disk while it is read (`HeldEvents`) and its sessions built from there, a chunk
/// at a time. The report must be the one built in memory, byte for byte: on every sample and
/// real paste, on bundles whose files overlap (duplicates dropped across chunks), and with
/// files read in parallel ranges, held between ranges.
@Suite("a bundle held on disk")
struct HeldEventsTests {
    /// Tiny chunks, runs and blocks, so that files, folded runs, sessions and duplicates
    /// straddle every bound.
    static func held(parallel: Bool) -> (Analyzer) -> Void {
        { a in
            a.streamsWhileReading = false
            a.holdsEventsAfter = 5
            a.heldBatchEvents = 1
            a.heldChunkEvents = 7
            a.heldBlockEvents = 3
            a.heldFanIn = 2
            a.streamedBatchEvents = 16
            if parallel {
                a.parallelThreshold = 0
                a.parallelism = 2
                a.minimumRange = 4096
            }
        }
    }

    /// Bundles of several files, some of whose lines are in two of them.
    static func overlapping(in dir: URL) throws -> [(String, [String])] {
        let samples = packageRoot.appendingPathComponent("samples")
        let export = try String(contentsOf: samples.appendingPathComponent("healthy-jitsi/sysdiagnose-log-show.txt"), encoding: .utf8)
        let lines = export.split(separator: "\n", omittingEmptySubsequences: false)
        let half = (lines.prefix(2) + lines.dropFirst(lines.count / 2)).joined(separator: "\n")
        let other = try String(contentsOf: samples.appendingPathComponent("retry-storm/log-stream-debug.txt"), encoding: .utf8)
        let dense = try String(contentsOf: try denseBenchLog(megabytes: 1, in: dir), encoding: .utf8)
        var out: [(String, [String])] = []
        for (name, files) in [
            ("two exports of one hour", [("a.txt", export), ("b.txt", half)]),
            ("one export twice and another", [("a.txt", half), ("b.txt", export), ("z.txt", other)]),
            ("a dense log, half of it again, and a sample", [
                ("dense.log", dense), ("dense-again.log", String(dense.dropFirst(dense.count / 2).drop { $0 != "\n" }.dropFirst())),
                ("sample.txt", export),
            ]),
        ] {
            let sub = dir.appendingPathComponent(name.replacingOccurrences(of: " ", with: "-"))
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
            for (file, body) in files { try body.write(to: sub.appendingPathComponent(file), atomically: true, encoding: .utf8) }
            out.append((name, [sub.path]))
        }
        // Every sample at once, and an archive of a dense log beside a sample's folder.
        let all = try FileManager.default.contentsOfDirectory(atPath: samples.path).sorted().filter { !$0.hasPrefix(".") }
        out.append(("every sample", all.map { samples.appendingPathComponent($0).path }))
        let gz = dir.appendingPathComponent("dense.log.gz")
        try Data(makeArchive(.gz, [("dense.log", Array(dense.utf8))])).write(to: gz)
        out.append(("dense .gz and a sample", [gz.path, samples.appendingPathComponent("jetsam-kill").path]))
        return out
    }

    @Test func sameBytesAsInMemory() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var held: [String] = []
        for (name, paths) in try StreamedReportTests.inputs(in: dir) + Self.overlapping(in: dir) {
            for parallel in [false, true] {
                var analyzer: Analyzer?
                _ = try StreamedReportTests.streamedMatchesWhole(name + (parallel ? " (ranges)" : ""), paths) { a in
                    Self.held(parallel: parallel)(a)
                    analyzer = a
                }
                if analyzer!.lastHeldEvents > 0 { held.append(name) }
            }
        }
        // Every bundle with lines is held (a bundle with relay lines too: its sessions are
        // kept in the end, but that is known only once it is read).
        #expect(held.contains("two exports of one hour"))
        #expect(held.contains("every sample"))
        #expect(held.contains("dense .gz and a sample"))
        #expect(held.count > 20, "\(held)")
    }
}

/// What the session stage learns of a held bundle is gathered chunk by chunk in reading order
/// (`StreamLearning`), not from the lines in time order as `SessionStream.learn` sees them:
/// pids and process names reused by other streams, in several files, pid-less lines named by
/// file, in any order and cut anywhere, must give what `learn` gives.
@Suite("stream learning in any order")
struct StreamLearningTests {
    static func events() -> [Event] {
        var out: [Event] = []
        var rng = SystemRandomNumberGenerator()
        for n in 0..<600 {
            let pid: Int? = n % 7 == 0 ? nil : Int.random(in: 1...6, using: &rng)
            let process: String? = n % 11 == 0 ? nil : ["Ext", "Broadcast", "Upload"].randomElement(using: &rng)!
            let file = Int.random(in: 0...2, using: &rng)
            let side: Side = n % 5 == 0 ? .app : .extension
            let time: Int64? = n % 13 == 0 ? nil : Int64.random(in: 0...50, using: &rng)
            out.append(Event(kind: "socket.connect_attempt", sdk: "jitsi", side: side, time: time, process: process, pid: pid,
                             message: "m", attrs: [], source: SourceRef(path: "f\(file).log", line: n + 1), order: n,
                             parsedTime: nil, fileIndex: file))
        }
        return out
    }

    @Test func sameAsLearningInTimeOrder() {
        for _ in 0..<20 {
            let reading = Self.events()
            var inOrder = SessionStream()
            inOrder.learn(reading.sorted(by: Analyzer.sortsBefore))
            var gathered = StreamLearning()
            var start = 0
            while start < reading.count {
                let end = min(reading.count, start + Int.random(in: 1...40))
                gathered.see(Array(reading[start..<end]))
                start = end
            }
            var fromGathered = SessionStream()
            fromGathered.learnsWholeBundle = true
            inOrder.learnsWholeBundle = true
            gathered.take(into: &fromGathered)
            #expect(fromGathered.extensionKeys == inOrder.extensionKeys)
            #expect(fromGathered.keyByPid == inOrder.keyByPid)
            #expect(fromGathered.keyByProcess == inOrder.keyByProcess)
            // When each stream's last line is (the places may differ: compared by key).
            func lastLines(_ s: SessionStream) -> [String: Int64] {
                s.lastLineAt.compactMapValues { s.lastLines[$0] }
            }
            #expect(lastLines(fromGathered) == lastLines(inOrder))
        }
    }
}

extension HeldEventsTests {
    /// With `--since`/`--until` the window is applied as the runs are merged (and what the
    /// stage learns is learned there): the sessions, counts and findings are those of the
    /// bundle in memory, for windows that cut sessions and files.
    @Test func aTimeWindow() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let registry = try ParserRegistry.builtin()
        let bundles = try Self.overlapping(in: dir)
        func run(_ paths: [String], _ since: Int64?, _ until: Int64?, held: Bool) throws -> (String, Int) {
            var options = AnalyzeOptions()
            options.now = 1_773_306_000_000_000
            options.since = since
            options.until = until
            let a = try Analyzer(registry: registry, options: options)
            var handed: [String] = []
            a.onSession = { s, findings in
                handed.append("\(s.id) \(s.outcome) \(s.events.count) \(findings.map(\.message))")
            }
            if held { Self.held(parallel: false)(a) } else { a.holdsEventsAfter = 0 }
            let r = a.analyze(paths)
            let text = "\(r.eventCount) \(r.filteredOut) \(r.span.map { "\($0)" } ?? "-") \(r.findings.map(\.message))\n"
                + handed.joined(separator: "\n") + r.sessions.map { "\($0.id) \($0.outcome) \($0.events.count)" }.joined(separator: "\n")
            return (text, a.lastHeldEvents)
        }
        var heldSome = false
        for (name, paths) in bundles {
            let whole = try Analyzer(registry: registry).analyze(paths)
            guard let span = whole.span, span.upperBound > span.lowerBound else { continue }
            let third = (span.upperBound - span.lowerBound) / 3
            for (since, until) in [(span.lowerBound + third, nil), (nil, span.upperBound - third), (span.lowerBound + third, span.upperBound - third)] {
                let inMemory = try run(paths, since, until, held: false)
                let onDisk = try run(paths, since, until, held: true)
                #expect(inMemory.1 == 0)
                heldSome = heldSome || onDisk.1 > 0
                #expect(onDisk.0 == inMemory.0, "\(name) \(String(describing: since)) \(String(describing: until))")
            }
        }
        #expect(heldSome)
    }
}

/// `HeldEvents` on its own: chunks written sorted (some continuing the run before, some not:
/// lines out of order, untimed lines) and merged with small fan-ins must come back as one
/// sorted list; with chunks rewritten (lines dropped from some, the others kept as written).
@Suite("held events: runs and their merge")
struct HeldRunsTests {
    static func event(_ t: Int64?, order: Int, file: Int) -> Event {
        Event(kind: "frame.sent", sdk: "jitsi", side: .extension, time: t, process: "P", pid: 1, message: "m\(order)", attrs: [],
              source: SourceRef(path: "f\(file)", line: order), order: order, parsedTime: nil, fileIndex: file)
    }

    @Test func mergedInOrder() throws {
        var rng = SystemRandomNumberGenerator()
        var manyRuns = false
        for round in 0..<60 {
            let fanIn = Int.random(in: 2...5, using: &rng)
            let held = try #require(HeldEvents(chunkSize: 5, blockSize: Int.random(in: 1...4, using: &rng), fanIn: fanIn))
            var chunks: [[Event]] = []
            var order = 0
            var t: Int64 = 0
            for _ in 0..<Int.random(in: 1...30, using: &rng) {
                var chunk: [Event] = []
                for _ in 0..<Int.random(in: 1...9, using: &rng) {
                    order += 1
                    // Mostly forward in time; in some rounds back too; sometimes untimed.
                    t += Int64.random(in: round % 2 == 0 ? -5...20 : 0...20, using: &rng)
                    let time: Int64? = Int.random(in: 0..<10, using: &rng) == 0 ? nil : t
                    chunk.append(Self.event(time, order: order, file: Int.random(in: 0...2, using: &rng)))
                }
                chunk.sort(by: Analyzer.sortsBefore)
                chunks.append(chunk)
                held.writeSorted(chunk, by: Analyzer.sortsBefore)
            }
            manyRuns = manyRuns || held.runs.count > fanIn
            let rewrites = round % 3 == 0
            if rewrites {
                held.rewriteSorted(keeping: { $0 % 2 == 0 }, change: { chunk in chunk = chunk.filter { $0.order % 3 != 0 } },
                                   by: Analyzer.sortsBefore)
            }
            var merged: [Event] = []
            held.merge(by: Analyzer.sortsBefore) { merged += $0 }
            var expected: [Event] = []
            for (k, c) in chunks.enumerated() { expected += rewrites && k % 2 == 1 ? c.filter { $0.order % 3 != 0 } : c }
            expected.sort(by: Analyzer.sortsBefore)
            #expect(merged.map(\.order) == expected.map(\.order), "round \(round)")
        }
        #expect(manyRuns, "some rounds had more runs than the fan-in (merged in groups first)")
    }
}

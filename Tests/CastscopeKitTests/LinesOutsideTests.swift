import Foundation
import Testing

@testable import CastscopeKit

/// Lines outside any session go to disk a chunk at a time (`LinesOutside`); what reads them
/// (reports, rules, the timeline) must see what the lines held in memory gave.
@Suite("lines outside any session, a chunk at a time")
struct LinesOutsideTests {
    static func event(_ i: Int, _ kind: String, _ message: String, side: Side = .app, ms: Int64? = nil) -> Event {
        Event(kind: kind, sdk: "jitsi", side: side, time: (ms ?? Int64(i)) * 1000, process: side == .app ? "App" : "Ext",
              pid: side == .app ? 1 : 9, message: message, attrs: [],
              source: SourceRef(path: "t.log", line: i + 1), order: i, parsedTime: nil, fileIndex: 0)
    }

    @Test func chunksGiveTheLinesBack() {
        var lines = LinesOutside(chunkSize: 3)
        var all: [Event] = []
        for i in 0..<10 {
            let e = i == 4 ? Self.event(i, "app.suspended", "suspended")
                : i == 7 ? Self.event(i, "socket.so_error", "so_error 61") : Self.event(i, "server.client_connected", "connected \(i)")
            lines.append(e)
            all.append(e)
        }
        #expect(lines.spilled)
        #expect(lines.count == 10)
        #expect(lines.map(\.message) == all.map(\.message))
        var chunks: [(Int, Bool)] = []
        lines.forEachChunk { c, last in chunks.append((c.count, last)) }
        #expect(chunks.map(\.0) == [3, 3, 3, 1] && chunks.map(\.1) == [false, false, false, true])
        #expect(Array(lines.matching(KindSet([.appSuspended]))).map(\.message) == ["suspended"])
        var named: [Int] = []
        lines.forEach(named: "socket.so_error") { named.append($0.source.line) }
        #expect(named == [8])
        #expect(lines.has(kind: "server.client_connected") && !lines.has(kind: "relay.note"))
        var empty = LinesOutside(chunkSize: 2)
        #expect(empty.isEmpty && Array(empty).isEmpty)
        empty.append(Self.event(0, "x", "y"))
        empty.append(Self.event(1, "x", "z"))
        #expect(empty.spilled && Array(empty).map(\.message) == ["y", "z"])
    }

    /// The timeline of the lines read a chunk at a time is the timeline of them all, whatever
    /// the chunk size (runs that cross a chunk's end are carried into the next).
    @Test func timelineAcrossChunks() {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<60 {
            var events: [Event] = []
            var ms: Int64 = 0
            let n = Int.random(in: 1...400, using: &rng)
            for i in 0..<n {
                ms += Int64.random(in: 0...300, using: &rng)
                let side: Side = Bool.random(using: &rng) ? .app : .extension
                let e: Event
                switch Int.random(in: 0..<7, using: &rng) {
                case 0: e = Self.event(i, "socket.connect_attempt", "open socket connection (attempt \(i))", side: side, ms: ms)
                case 1: e = Self.event(i, "socket.connect_failed", "failure: socket file missing", side: side, ms: ms)
                case 2: e = Self.event(i, "frame.sent", "video sample processed successfully", side: side, ms: ms)
                case 3: e = Self.event(i, "relay.note", "queue depth \(i % 5)", side: side, ms: ms)
                case 4: e = Self.event(i, "relay.note", "write \(Int.random(in: 0...1, using: &rng))", side: side, ms: ms)
                default: e = Self.event(i, "server.client_connected", "client connected", side: side, ms: ms)
                }
                // Runs of one kind, as logs have them.
                let repeats = Int.random(in: 0...3, using: &rng) == 0 ? Int.random(in: 1...30, using: &rng) : 1
                for _ in 0..<repeats {
                    var copy = e
                    copy.order = events.count
                    events.append(copy)
                }
            }
            let whole = ConnectFoldTests.rows(Timeline.entries(events))
            let size = [1, 2, 7, 64, 1000][round % 5]
            let lines = LinesOutside(chunkSize: size, events)
            var chunked: [TimelineEntry] = []
            Timeline.entries(lines) { chunked.append($0) }
            #expect(ConnectFoldTests.rows(chunked) == whole, "round \(round), chunks of \(size)")
            // A run longer than the lines carried is cut, and no line is lost.
            var cut: [TimelineEntry] = []
            Timeline.entries(lines, carryLimit: 5) { cut.append($0) }
            #expect(cut.reduce(0) { $0 + $1.count } == chunked.reduce(0) { $0 + $1.count })
        }
    }

    /// A day of replayd's writeback overflows outside any session: one finding that counts
    /// them and cites the first three (it cited every line, on one line of the report), and
    /// the rules read them from disk without holding them.
    @Test func manyOverflowLinesOneFinding() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("replayd.log")
        var text = "Timestamp                       (process)[PID]\n"
        for i in 0..<3000 {
            let stamp = String(format: "2026-03-12 10:%02d:%02d.%06d+0100", i / 600, (i / 10) % 60, (i % 10) * 100_000)
            text += "\(stamp)  localhost replayd[120]: <<<< FigVirtualDisplayProcessor >>>> writebackCacheAllocateBuffer: writeback pool capacity exceeded\n"
        }
        try text.write(to: log, atomically: true, encoding: .utf8)
        for env in [["SOURCE_DATE_EPOCH": "0"], ["SOURCE_DATE_EPOCH": "0", "CASTSCOPE_OUTSIDE_CHUNK_LINES": "7"]] {
            let r = try castscope(["analyze", "--json", log.path], env: env)
            let doc = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
            let findings = (doc["findings"] as? [[String: Any]]) ?? []
            let overflow = findings.filter { ($0["kind"] as? String) == "replayd-writeback-overflow" }
            #expect(overflow.count == 1, "\(findings.map { $0["kind"] ?? "" })")
            #expect((overflow.first?["message"] as? String)?.contains("3000 lines") == true)
            #expect((overflow.first?["evidence"] as? [Any])?.count == 3)
        }
    }

    /// Every report of a log of host-app lines with no extension's is the same with its lines
    /// on disk three at a time.
    @Test func reportsAreTheSame() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("host.log")
        var text = "Timestamp                       (process)[PID]\n"
        let messages = ["SocketServer: client connected", "Extension connected to server", "Extension disconnected",
                        "Server started, awaiting extension connection"]
        for i in 0..<500 {
            let stamp = String(format: "2026-03-12 10:%02d:%02d.%06d+0100", i / 600, (i / 10) % 60, (i % 10) * 100_000)
            text += "\(stamp)  localhost CallsApp[500]: [SBCBroadcast] \(messages[i % 4])\n"
            if i % 50 == 7 {
                text += "\(stamp)  localhost CallsApp[500]: [SBCBroadcast] SocketServer: heartbeat \(i)\n"
            }
        }
        try text.write(to: log, atomically: true, encoding: .utf8)
        try expectSameReports([log.path, "samples"],
                              formats: [[], ["--json"], ["--markdown-full"], ["--format", "html"], ["--format", "perfetto"]],
                              with: ["CASTSCOPE_OUTSIDE_CHUNK_LINES": "3"])
    }
}

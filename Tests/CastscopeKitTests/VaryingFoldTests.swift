import Testing

@testable import CastscopeKit

/// Frame lines that carry a length or a counter (`client stream writeToStream 10240`) fold into
/// one event as the session is built, each line's message and attributes kept as bytes
/// (`LineTexts`); an in-app capture's frame lines fold the same line into the same line. The
/// reports must be what the lines one by one give, and each line must still be itself.
@Suite("frame lines that differ, folded as the session is built")
struct VaryingFoldTests {
    typealias Row = ConnectFoldTests.Row

    static func written(_ ms: Int64, _ length: Int) -> Row {
        (ms, .extension, "frame.chunk_written", "client stream writeToStream \(length)", [("length", "\(length)")])
    }

    /// Each line's (number, message, attributes) as the session's events give them.
    static func lineTexts(_ s: Session) -> [(Int, String, [String])] {
        var out: [(Int, String, [String])] = []
        for e in s.events {
            var lines: [Int] = []
            e.forEachTimeAndLine { _, line in lines.append(line) }
            var k = 0
            let texts = e.lineTexts()
            while let t = texts.next() {
                out.append((lines[k], t.message, t.attrs.map { "\($0.0)=\($0.1)" }))
                k += 1
            }
            #expect(k == lines.count, "a text for every line")
            var messages: [String] = []
            e.forEachLineWithMessage { _, _, m in messages.append(m) }
            #expect(messages == out.suffix(k).map(\.1))
        }
        return out.sorted { $0.0 < $1.0 }
    }

    static func expected(_ rows: [Row]) -> [(Int, String, [String])] {
        rows.enumerated().map { i, r in (i + 1, r.3, r.4.map { "\($0.0)=\($0.1)" }) }
    }

    static func same(_ a: [(Int, String, [String])], _ b: [(Int, String, [String])]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 && $0.2 == $1.2 }
    }

    @Test func chunkLengthsFoldIntoAFewEvents() {
        var rows: [Row] = [(0, .extension, "broadcast.started", "broadcast started", []),
                           (10, .extension, "socket.connected", "client stream open completed", [])]
        var rng = SplitMix(seed: 36)
        for k in 0..<3_000 { rows.append(Self.written(20 + Int64(k) * 33, 20_000 + Int(rng.next() % 70_000))) }
        rows.append((200_000, .extension, "socket.closed_by_peer", "server socket closed", []))
        let s = ConnectFoldTests().check(rows, maxEvents: 4 + SessionBuilder.foldFrom)
        #expect(s.events.contains { $0.linesDiffer })
        #expect(Self.same(Self.lineTexts(s), Self.expected(rows)))
        // The row shows the lengths' range, as the lines one by one do.
        let row = try! #require(Timeline.entries(s.events).first { $0.kind == "frame.chunk_written" })
        #expect(row.count == 3_000 && row.text.hasPrefix("client stream writeToStream 2") && row.text.contains("×3000"))
    }

    @Test func theRemaindersBetweenFullChunksFold() {
        // LiveKit's earlier design: a writable note, then a chunk of at most 10240 bytes, the
        // frame's last chunk shorter: the full chunks are the run's own text, kept as a mark.
        var rows: [Row] = [(0, .extension, "broadcast.started", "broadcast started", [])]
        var rng = SplitMix(seed: 37)
        var ms: Int64 = 10
        for _ in 0..<600 {
            var size = 40_000 + Int(rng.next() % 50_000)
            while size > 0 {
                let n = min(10_240, size)
                size -= n
                rows.append((ms, .extension, "frame.chunk_writable", "client stream hasSpaceAvailable", []))
                rows.append(Self.written(ms, n))
                ms += 1
            }
            ms += 100
        }
        let s = ConnectFoldTests().check(rows, maxEvents: 4 + 2 * SessionBuilder.foldFrom)
        #expect(Self.same(Self.lineTexts(s), Self.expected(rows)))
    }

    @Test func randomVaryingFrameRunsGiveTheSameTimelines() {
        // Chunk lengths from a few values or many, counters, notes, connect lines and other
        // lines in random order and spacing, timed or not: the same rows, the same lines.
        var rng = SplitMix(seed: 38)
        func pick(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        for round in 0..<150 {
            let lengths = [2, 8, 9, 40, 10_000][round % 5]
            let rows = ConnectFoldTests.randomRows(start: [(0, .extension, "broadcast.started", "broadcast started", [])], most: 400,
                                                   gaps: [0, 1, 33, 100, 100, 104, 250], pick: pick) { ms in
                switch pick(24) {
                case 0..<12: Self.written(ms, 1 + pick(lengths))
                case 12..<15: ConnectFoldTests.writable(ms)
                case 15..<17: ConnectFoldTests.frame(ms)
                case 17: (ms, .extension, "frame.sent", "video frame \(pick(1_000)) sent", [])
                case 18: pick(2) == 0 ? ConnectFoldTests.attempt(ms)
                    : (ms, .extension, "socket.connect_attempt", "open socket connection (attempt \(pick(lengths)))", [])
                case 19: (ms, .extension, "frame.dropped", "image buffer not available", [])
                default: (ms, .extension, "extension.note", "memory \(pick(3))", [])
                }
            }
            let s = ConnectFoldTests().check(rows, timed: pick(4) != 0, maxEvents: rows.count)
            #expect(Self.same(Self.lineTexts(s), Self.expected(rows)))
            // Each line where it stood (the ClickHouse rows' order, the digest of standard input).
            var places: [(Int64, Int, Int, Int)] = []
            for e in s.events { e.forEachLinePlace { _, line, p in places.append((p.time, p.order, p.k, line)) } }
            #expect(places.sorted { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }.map(\.3) == Array(1...rows.count))
        }
    }

    @Test func aStormWithACounterInEachAttemptFolds() {
        // Two hours of retrying, each attempt and failure numbered: a few events, the rows,
        // attempts and causes the lines one by one give.
        var rows: [Row] = [(0, .extension, "broadcast.started", "broadcast started", [])]
        var rng = SplitMix(seed: 41)
        for k in 0..<5_000 {
            rows.append((100 + Int64(k) * 100, .extension, "socket.connect_attempt", "open socket connection (attempt \(k + 1))", []))
            let conn = String(rng.next() % 0xffff_ffff, radix: 16)
            rows.append((101 + Int64(k) * 100, .extension, "socket.connect_failed", "failure: socket file missing (connection \(conn))",
                         [("cause_text", "socket file missing")]))
        }
        let s = ConnectFoldTests().check(rows, maxEvents: 4 + SessionBuilder.foldFrom)
        #expect(s.attempts.count == 5_000 && s.attempts.failedCount == 5_000)
        #expect(s.failureCauses.map(\.0) == ["socket file missing"] && s.failureCauses.map(\.1) == [5_000])
        #expect(Self.same(Self.lineTexts(s), Self.expected(rows)))
        // Decided by the last failure line, which lies inside a folded run: its own text.
        #expect(s.deciding.map(\.source.line) == [rows.count] && s.deciding.first?.message == rows.last!.3)
    }

    @Test func aLineOfTheRunLooksItselfUp() {
        var rows: [Row] = [(0, .extension, "broadcast.started", "broadcast started", [])]
        for k in 0..<200 { rows.append(Self.written(10 + Int64(k) * 33, 1_000 + k)) }
        let s = ConnectFoldTests().check(rows, maxEvents: 3 + SessionBuilder.foldFrom)
        let run = try! #require(s.events.first { $0.linesDiffer })
        for line in [30, 77, 150, 199] {
            let e = try! #require(run.line(at: SourceRef(path: "t.log", line: line)))
            #expect(e.message == rows[line - 1].3 && e.attr("length") == rows[line - 1].4[0].1 && e.repeats == nil)
        }
        // Cut in two (a line of the session's side placed inside it): each part keeps its texts.
        let (before, after) = run.cut(at: (run.time! + 50 * 33_000, Int.max))
        let after2 = try! #require(after)
        for part in [before, after2] {
            var lines: [Int] = []
            part.forEachTimeAndLine { _, line in lines.append(line) }
            var messages: [String] = []
            part.forEachLineWithMessage { _, _, m in messages.append(m) }
            #expect(messages == lines.map { rows[$0 - 1].3 })
            #expect(part.message == rows[lines[0] - 1].3, "the part's own text is its first line's")
        }
        // Its first lines (a budget ending inside the run).
        let first = run.keepingFirst(10)
        var messages: [String] = [], lines: [Int] = []
        first.forEachLineWithMessage { _, line, m in
            messages.append(m)
            lines.append(line)
        }
        var all: [Int] = []
        run.forEachTimeAndLine { _, line in all.append(line) }
        #expect(lines == Array(all.prefix(10)) && messages == lines.map { rows[$0 - 1].3 })
    }

    @Test func aParkedSessionKeepsItsLinesTexts() {
        var rows: [Row] = [(0, .extension, "broadcast.started", "broadcast started", [])]
        for k in 0..<500 { rows.append(Self.written(10 + Int64(k) * 33, k % 3 == 0 ? 10_240 : 1_000 + k)) }
        let s = ConnectFoldTests().check(rows, maxEvents: 3 + SessionBuilder.foldFrom)
        let spill = try! #require(EventSpill())
        let back = spill.readSession(spill.write(session: s))
        #expect(Self.same(Self.lineTexts(back), Self.expected(rows)))
        #expect(ConnectFoldTests.rows(Timeline.entries(back.events)) == ConnectFoldTests.rows(Timeline.entries(s.events)))
    }

    @Test func textsOnDiskComeBackInOrder() {
        // Blocks of 64 bytes: records cut by a block's end, and marks of the run's own text.
        let head = Event.Text(kind: "frame.chunk_written", sdk: "jitsi", process: "Ext", message: "client stream writeToStream 10240",
                              attrs: [("length", "10240"), ("host", "localhost")], path: "t.log")
        let t = LineTexts(blockBytes: 64)
        var expected: [(String, [String])] = []
        var rng = SplitMix(seed: 39)
        for k in 0..<2_000 {
            if rng.next() % 3 == 0 {
                t.append(head, head: head)
                expected.append((head.message, ["10240", "localhost"]))
            } else {
                let n = "\(k)é\(rng.next() % 100_000)"
                t.append(head.with(message: "client stream writeToStream \(n)", attrs: [("length", n), ("host", "localhost")]), head: head)
                expected.append(("client stream writeToStream \(n)", [n, "localhost"]))
            }
        }
        #expect(t.spilled)
        var seen: [(String, [String])] = []
        t.forEach(like: head) { seen.append(($0.message, $0.attrs.map(\.1))) }
        #expect(seen.count == expected.count && zip(seen, expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 })
        var messages: [String] = []
        t.forEachMessage(like: head) { messages.append($0) }
        #expect(messages == expected.map(\.0))
        let it = t.makeIterator(like: head)
        var k = 0
        while let x = it.next() {
            #expect(x.message == expected[k].0 && x.attrs.map(\.1) == expected[k].1)
            k += 1
        }
        #expect(k == expected.count)
        for i in [0, 1, 7, 999, 1_999] { #expect(t.text(i, like: head).message == expected[i].0) }
    }

    /// Events of an extension (pid 9) and its host app (pid 1, lines joined to the session by
    /// time) from rows, in order.
    static func events(_ rows: [Row], timed: Bool = true) -> [Event] {
        rows.enumerated().map { i, r in
            Event(kind: r.2, sdk: "jitsi", side: r.1, time: timed ? r.0 * 1000 : nil, process: r.1 == .extension ? "Ext" : "App",
                  pid: r.1 == .extension ? 9 : 1, message: r.3, attrs: r.4,
                  source: SourceRef(path: "t.log", line: i + 1), order: i, parsedTime: nil, fileIndex: 0)
        }
    }

    @Test func aHostLineForEveryFrameFolds() {
        // The host app's read error for every frame of a broken stream, joined to the
        // extension's session: a few events, the rows the lines one by one give.
        var rows: [Row] = [(0, .extension, "broadcast.started", "broadcast started", []),
                           (5, .extension, "socket.connected", "client stream open completed", [])]
        for k in 0..<3_000 {
            rows.append(ConnectFoldTests.frame(10 + Int64(k) * 100))
            rows.append((15 + Int64(k) * 100, .app, k < 2_000 ? "server.read_error" : "frame.decode_failed",
                         k < 2_000 ? "error reading bytes from stream" : "CVPixelBufferCreate failed", []))
        }
        rows.append((400_000, .extension, "socket.closed_by_peer", "server socket closed", []))
        let events = Self.events(rows)
        let s = try! #require(SessionBuilder().build(events).sessions.first)
        #expect(s.events.count <= 8 + 3 * SessionBuilder.foldFrom, "\(s.events.count) events for \(rows.count) lines")
        #expect(ConnectFoldTests.rows(Timeline.entries(s.events)) == ConnectFoldTests.rows(Timeline.entries(events)))
        #expect(s.events.reduce(0) { $0 + $1.count } == rows.count)
    }

    @Test func randomRepeatedLinesGiveTheSameTimelines() {
        // Lines of the host app and of the extension that repeat, or carry a counter, or are
        // read one by one (the host seeing the extension go), among frames, in random order.
        var rng = SplitMix(seed: 40)
        func pick(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        var foldedRounds = 0, varyingRounds = 0
        for _ in 0..<150 {
            var rows: [Row] = [(0, .extension, "broadcast.started", "broadcast started", [])]
            var ms: Int64 = 0
            let same = 1 + pick(60)
            // Some rounds mostly the one host line (long runs of it), or mostly one with a
            // counter (a storm), others mixed.
            let mode = pick(3)
            for _ in 0..<(20 + pick(500)) {
                ms += [0, 1, 33, 100, 100, 250][pick(6)]
                switch mode != 0 && pick(4) != 0 ? (mode == 1 ? 17 : 12) : pick(20) {
                case 0..<6: rows.append(ConnectFoldTests.frame(ms))
                case 6..<12: rows.append((ms, .app, "server.read_error", "error reading bytes from stream", []))
                case 12: rows.append((ms, .app, "track.ended", "[TrackCapturerEventsEmitter] ended event for track \(pick(same))", []))
                case 13..<15: rows.append((ms, .extension, "broadcast.handler", "payload of \(1 + pick(2)) buffers", []))
                case 15: rows.append((ms, .app, "server.client_connected", "server stream open completed", []))
                case 16: rows.append((ms, .extension, "frame.chunk_written", "client stream writeToStream \(pick(same))", []))
                default: rows.append((ms, .app, "server.read_error", "error reading bytes from stream", []))
                }
            }
            let timed = pick(4) != 0
            let events = Self.events(rows, timed: timed)
            let sessions = SessionBuilder().build(events).sessions
            let all = sessions.flatMap(\.events)
            #expect(all.reduce(0) { $0 + $1.count } <= rows.count)
            if all.contains(where: { $0.foldsLines && $0.side == .app }) { foldedRounds += 1 }
            if all.contains(where: { $0.linesDiffer && $0.side == .app }) { varyingRounds += 1 }
            for s in sessions {
                // The session's lines one by one, as the events of their own they were.
                var one: [Event] = []
                for e in s.events { e.forEachLinePlace { _, line, _ in one.append(events[line - 1]) } }
                one.sort { ($0.time ?? Int64.min, $0.order) < ($1.time ?? Int64.min, $1.order) }
                #expect(ConnectFoldTests.rows(Timeline.entries(s.events)) == ConnectFoldTests.rows(Timeline.entries(one)))
            }
        }
        #expect(foldedRounds > 20 && varyingRounds > 10, "host lines folded in \(foldedRounds) rounds, \(varyingRounds) with counters")
    }

    @Test func captureFramesFoldInTheirSession() {
        var rows: [Row] = [(0, .app, "capture.started", "RPScreenRecorder.shared().startCapture", [])]
        for k in 0..<2_000 { rows.append((10 + Int64(k) * 33, .app, "capture.frame", "RPDaemonProxy: captureHandlerWithSample:", [])) }
        rows.append((70_000, .app, "capture.stopped", "RPScreenRecorder.shared().stopCapture", []))
        let events = rows.enumerated().map { i, r in
            Event(kind: r.2, sdk: "ios", side: r.1, time: r.0 * 1000, process: "App", pid: 7, message: r.3, attrs: r.4,
                  source: SourceRef(path: "t.log", line: i + 1), order: i, parsedTime: nil, fileIndex: 0)
        }
        let r = SessionBuilder().build(events)
        let s = try! #require(r.sessions.first)
        #expect(s.capture == "in-app" && s.frames == 2_000)
        #expect(s.events.count <= 3 + SessionBuilder.foldFrom, "\(s.events.count) events for \(rows.count) lines")
        #expect(ConnectFoldTests.rows(Timeline.entries(s.events)) == ConnectFoldTests.rows(Timeline.entries(events)))
    }
}

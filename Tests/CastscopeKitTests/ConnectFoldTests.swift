import Testing

@testable import CastscopeKit

/// A retry storm's connect lines are folded into a few events as the session is built
/// (`SessionBuilder.foldConnectLine`), and its attempts are held as columns
/// (`ConnectAttempts`): what the reports show must be what the lines one by one give.
@Suite("connect lines folded as the session is built")
struct ConnectFoldTests {
    typealias Row = (Int64, Side, String, String, [(String, String)])

    static func attempt(_ ms: Int64) -> Row { (ms, .extension, "socket.connect_attempt", "open socket connection", []) }
    static func missing(_ ms: Int64) -> Row {
        (ms, .extension, "socket.connect_failed", "failure: socket file missing", [("cause_text", "socket file missing")])
    }
    static func refused(_ ms: Int64) -> Row {
        (ms, .extension, "socket.connect_failed", "failure: socket connect (61)", [("cause_text", "errno=61 (Connection refused)")])
    }

    /// The events the rows make, one per line, as `sessions(_:)` makes them.
    static func lines(_ rows: [Row], pid: Int = 9, timed: Bool = true) -> [Event] {
        rows.enumerated().map { i, r in
            Event(kind: r.2, sdk: "jitsi", side: r.1, time: timed ? r.0 * 1000 : nil, process: r.1 == .extension ? "Ext" : "App",
                  pid: r.1 == .extension ? pid : 1, message: r.3, attrs: r.4,
                  source: SourceRef(path: "t.log", line: i + 1), order: i, parsedTime: nil, fileIndex: 0)
        }
    }

    static func rows(_ r: [TimelineEntry]) -> [String] {
        r.map { "\($0.time ?? -1) \($0.side) \($0.kind) \($0.count) \($0.first) \($0.last) \($0.text)" }
    }

    /// `start`, then 20 + `pick(most)` rows, each made by `row` at a time a gap from `gaps`
    /// after the last (the random runs below).
    static func randomRows(start: [Row] = [], most: Int, gaps: [Int64], pick: (Int) -> Int, _ row: (Int64) -> Row) -> [Row] {
        var rows = start
        var ms: Int64 = 0
        for _ in 0..<(20 + pick(most)) {
            ms += gaps[pick(gaps.count)]
            rows.append(row(ms))
        }
        return rows
    }

    /// Session timelines equal to the timeline of the same lines unfolded (one row per line
    /// folded by `Timeline` alone), and the session's events few.
    func check(_ rows: [Row], timed: Bool = true, maxEvents: Int) -> Session {
        let events = Self.lines(rows, timed: timed)
        let r = SessionBuilder().build(events)
        #expect(r.sessions.count == 1)
        let s = r.sessions[0]
        #expect(s.events.count <= maxEvents, "\(s.events.count) events held for \(rows.count) lines")
        #expect(s.events.reduce(0) { $0 + $1.count } == rows.count, "every line is still counted")
        #expect(Self.rows(Timeline.entries(s.events)) == Self.rows(Timeline.entries(events)))
        // The last line stays an event of its own: the session's end and last line are its.
        #expect(s.events.last?.line == rows.count && s.events.last?.repeats == nil)
        // Every line's time and number, in order within each folded event.
        var seen: [Int] = []
        for e in s.events { e.forEachTimeAndLine { t, line in
            seen.append(line)
            if timed { #expect(t == rows[line - 1].0 * 1000) } else { #expect(t == nil) }
        } }
        #expect(seen.sorted() == Array(1...rows.count))
        return s
    }

    @Test func aStormFoldsIntoAFewEvents() {
        var rows: [Row] = [(0, .extension, "broadcast.started", "broadcast started", [])]
        for k in 0..<5_000 { rows += [Self.attempt(100 + Int64(k) * 100), Self.missing(101 + Int64(k) * 100)] }
        let s = check(rows, maxEvents: 4 + SessionBuilder.foldFrom)
        #expect(s.attempts.count == 5_000 && s.attempts.failedCount == 5_000)
        #expect(s.failureCauses.map(\.0) == ["socket file missing"] && s.failureCauses.map(\.1) == [5_000])
        #expect(s.attemptCadence?.median == 100_000)
        #expect(s.outcome == .failedToConnect)
        // Decided by the last failure line, which lies inside a folded run.
        #expect(s.deciding.map(\.source.line) == [rows.count])
        #expect(s.deciding.first?.repeats == nil && s.deciding.first?.time == rows.last!.0 * 1000)
        #expect(s.end == rows.last!.0 * 1000)
    }

    @Test func aStormThatEndsWithAnAttempt() {
        var rows: [Row] = []
        for k in 0..<300 { rows += [Self.attempt(Int64(k) * 100), Self.missing(Int64(k) * 100 + 3)] }
        rows.append(Self.attempt(30_000))
        let s = check(rows, maxEvents: 3 + SessionBuilder.foldFrom)
        #expect(s.attempts.count == 301 && s.attempts.failedCount == 300)
        #expect(s.end == 30_000_000, "the session ends at its last line, the attempt")
        // The last attempt decides (it did not fail: its own line).
        #expect(s.deciding.map(\.source.line) == [rows.count])
    }

    @Test func causesThatDifferAreKeptApart() {
        var rows: [Row] = []
        for k in 0..<200 {
            rows.append(Self.attempt(Int64(k) * 100))
            rows.append(k % 3 == 0 ? Self.refused(Int64(k) * 100 + 2) : Self.missing(Int64(k) * 100 + 2))
        }
        rows.append((20_050, .extension, "socket.connected", "client stream open completed", []))
        rows.append((20_100, .extension, "frame.sent", "video sample processed successfully", []))
        let s = check(rows, maxEvents: 6 + SessionBuilder.foldFrom)
        #expect(s.failureCauses.map(\.0) == ["errno=61 (Connection refused)", "socket file missing"])
        #expect(s.failureCauses.map(\.1) == [67, 133])
        #expect(s.connected)
    }

    @Test func untimedLinesFoldToo() {
        var rows: [Row] = []
        for k in 0..<50 { rows += [Self.attempt(Int64(k)), Self.missing(Int64(k))] }
        let s = check(rows, timed: false, maxEvents: 3 + SessionBuilder.foldFrom)
        #expect(s.attempts.count == 50 && s.attemptCadence == nil)
    }

    @Test func anotherLineEndsTheRun() {
        // A line of the extension that is not a connect line ends the run: lines after it
        // are not folded into the events before it.
        var rows: [Row] = []
        for k in 0..<40 { rows += [Self.attempt(Int64(k) * 100), Self.missing(Int64(k) * 100 + 1)] }
        rows.append((4_000, .extension, "socket.init", "socket init", []))
        for k in 41..<80 { rows += [Self.attempt(Int64(k) * 100), Self.missing(Int64(k) * 100 + 1)] }
        // Each run's last line stays an event of its own (the timeline row cites it).
        let s = check(rows, maxEvents: 7 + 2 * SessionBuilder.foldFrom)
        let split = s.events.firstIndex { $0.kind == "socket.init" }!
        func lines(_ events: ArraySlice<Event>) -> [Int] {
            var out: [Int] = []
            for e in events { e.forEachTimeAndLine { _, line in out.append(line) } }
            return out.sorted()
        }
        #expect(lines(s.events[..<split]) == Array(1...80) && lines(s.events[(split + 1)...]) == Array(82...159))
    }

    @Test func aHealthyStartIsNotFolded() {
        // A few attempts before connecting: every line stays an event of its own.
        var rows: [Row] = []
        for k in 0..<5 { rows += [Self.attempt(Int64(k) * 100), Self.missing(Int64(k) * 100 + 1)] }
        rows.append((600, .extension, "socket.connected", "client stream open completed", []))
        let s = check(rows, maxEvents: rows.count)
        #expect(s.events.count == rows.count && s.events.allSatisfy { $0.repeats == nil })
    }

    @Test func randomConnectRunsGiveTheSameTimelines() {
        // Runs of attempts, failures of three causes, retry notes and other lines of the
        // extension in random order, lengths and spacing (times that tie included), timed or
        // not: the folded session tells what its lines tell one by one.
        var rng = SplitMix(seed: 30)
        func pick(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        for _ in 0..<120 {
            let rows = Self.randomRows(most: 300, gaps: [0, 1, 3, 100, 100, 100, 104, 250], pick: pick) { ms in
                switch pick(20) {
                case 0..<8: Self.attempt(ms)
                case 8..<14: Self.missing(ms)
                case 14..<16: Self.refused(ms)
                case 16: (ms, .extension, "socket.connect_failed", "failure: -1", [("status", "-1")])
                case 17: (ms, .extension, "socket.connect_retry", "retrying in 0.3 s", [])
                default: (ms, .extension, "extension.note", "memory \(pick(3))", [])
                }
            }
            let timed = pick(4) != 0
            let s = check(rows, timed: timed, maxEvents: rows.count)
            // The attempts as the lines make them: an attempt line opens one, a failure closes
            // the open one or stands for one of its own.
            var expected: [(line: Int, failureLine: Int?)] = []
            for (i, r) in rows.enumerated() {
                if r.2 == "socket.connect_attempt" {
                    expected.append((i + 1, nil))
                } else if r.2 == "socket.connect_failed" {
                    if let last = expected.indices.last, expected[last].failureLine == nil {
                        expected[last].failureLine = i + 1
                    } else {
                        expected.append((i + 1, i + 1))
                    }
                }
            }
            #expect(s.attempts.map(\.source.line) == expected.map(\.line))
            #expect(s.attempts.map(\.failureSource?.line) == expected.map(\.failureLine))
        }
    }

    static func frame(_ ms: Int64) -> Row { (ms, .extension, "frame.sent", "video sample processed successfully", []) }
    static func writable(_ ms: Int64) -> Row { (ms, .extension, "frame.chunk_writable", "client stream has space available", []) }

    /// Frame lines that did not follow each other in the file (several extensions logging at
    /// once) reach their session one event a line: they fold there, as connect lines do.
    @Test func interleavedFramesFoldInTheirSession() {
        var rows: [Row] = [(0, .extension, "broadcast.started", "broadcast started", []), Self.attempt(50),
                           (60, .extension, "socket.connected", "client stream open completed", [])]
        for k in 0..<3_000 {
            rows.append(Self.frame(100 + Int64(k) * 100))
            if k % 40 == 7 { rows.append(Self.writable(150 + Int64(k) * 100)) }
        }
        rows.append((400_000, .extension, "socket.closed_by_peer", "server socket closed", []))
        let s = check(rows, maxEvents: 8 + SessionBuilder.foldFrom)
        #expect(s.frames == 3_000)
    }

    @Test func randomFrameRunsGiveTheSameTimelines() {
        // Frames, chunk notes, connect lines and other lines of the extension in random order,
        // lengths and spacing, timed or not: the folded session tells what the lines do.
        var rng = SplitMix(seed: 34)
        func pick(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        for _ in 0..<120 {
            let rows = Self.randomRows(start: [(0, .extension, "broadcast.started", "broadcast started", [])], most: 400,
                                       gaps: [0, 1, 33, 100, 100, 100, 104, 250], pick: pick) { ms in
                switch pick(24) {
                case 0..<14: Self.frame(ms)
                case 14..<17: Self.writable(ms)
                case 17: (ms, .extension, "frame.chunk_written", "client stream wrote \(pick(2)) chunks", [])
                case 18..<20: Self.attempt(ms)
                case 20: Self.missing(ms)
                default: (ms, .extension, "extension.note", "memory \(pick(3))", [])
                }
            }
            _ = check(rows, timed: pick(4) != 0, maxEvents: rows.count)
        }
    }

    @Test func anotherProcessLineInsideAFoldedRunCutsIt() {
        // pid 100 retries to the end; pid 200 logs one line (it opens no session) halfway, and
        // that line is placed in pid 100's session by time: two connect rows, as line by line.
        var events: [Event] = []
        var n = 0
        func add(_ ms: Int64, _ pid: Int, _ kind: String, _ message: String) {
            n += 1
            events.append(Event(kind: kind, sdk: "jitsi", side: .extension, time: ms * 1000, process: "Ext", pid: pid, message: message,
                                attrs: [], source: SourceRef(path: "t.log", line: n), order: n, parsedTime: nil, fileIndex: 0))
        }
        for k in 0..<100 {
            add(Int64(k) * 100, 100, "socket.connect_attempt", "open socket connection")
            add(Int64(k) * 100 + 3, 100, "socket.connect_failed", "failure: socket file missing")
            if k == 50 { add(Int64(k) * 100 + 5, 200, "extension.loaded", "LKSampleHandler created") }
        }
        let r = SessionBuilder().build(events)
        let s = try! #require(r.sessions.first { $0.pid == 100 })
        #expect(s.events.count < 60, "folded: \(s.events.count) events")
        #expect(Self.rows(Timeline.entries(s.events)) == Self.rows(Timeline.entries(events)))
        #expect(Timeline.entries(s.events).count == 3)
        // Each line where it stood: the ClickHouse rows' order and the digest of standard input.
        var places: [(Int64, Int, Int, Int)] = []
        for e in s.events { e.forEachLinePlace { _, line, p in places.append((p.time, p.order, p.k, line)) } }
        #expect(places.sorted { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }.map(\.3) == Array(1...n))
    }

    @Test func attemptsAsColumnsGiveTheAttemptsBack() {
        var list: [ConnectAttempt] = []
        for k in 0..<40 {
            let failure: String? = k % 4 == 3 ? nil : "cause \(k % 11)"
            list.append(ConnectAttempt(time: k % 5 == 0 ? nil : Int64(k) * 1000, source: SourceRef(path: k < 20 ? "a.log" : "b.log", line: k * 2 + 1),
                                       failure: failure, failureSource: failure == nil ? nil : SourceRef(path: "c.log", line: k * 2 + 2)))
        }
        let columns = ConnectAttempts(list)
        #expect(columns.count == list.count)
        for i in list.indices {
            #expect(columns[i].time == list[i].time && columns[i].source == list[i].source && columns[i].failure == list[i].failure
                    && columns[i].failureSource == list[i].failureSource)
        }
        // Causes counted in order of first appearance.
        var expected: [(String, Int)] = []
        for cause in list.compactMap(\.failure) {
            if let i = expected.firstIndex(where: { $0.0 == cause }) { expected[i].1 += 1 } else { expected.append((cause, 1)) }
        }
        #expect(columns.failureCounts.map(\.0) == expected.map(\.0) && columns.failureCounts.map(\.1) == expected.map(\.1))
        #expect(columns.failedCount == list.filter { $0.failure != nil }.count)
        // Each cause tested once, the attempts it names found in order.
        var asked: [String] = []
        let odd = columns.failing(first: 3) { cause in
            asked.append(cause)
            return cause.last.map { Int(String($0))! % 2 == 1 } ?? false
        }
        let expectedOdd = list.indices.filter { list[$0].failure.map { Int(String($0.last!))! % 2 == 1 } ?? false }
        #expect(odd.count == expectedOdd.count && odd.first == Array(expectedOdd.prefix(3)) && odd.last == expectedOdd.last)
        #expect(asked.count == Set(list.compactMap(\.failure)).count)
        var marked = columns
        marked.setFailure(3, cause: "late", source: SourceRef(path: "d.log", line: 99))
        #expect(marked[3].failure == "late" && marked[3].failureSource == SourceRef(path: "d.log", line: 99))
        #expect(columns[3].failure == nil, "a copy is a value")
    }
}

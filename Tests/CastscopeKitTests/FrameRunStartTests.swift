import Testing

@testable import CastscopeKit

/// A frame run folded as the session is built holds every line of its run, the first
/// `foldFrom` included: those stayed events of their own to the end of the session (issue 15:
/// 5,000 extension sessions open at once held ~4 KB each in those events and the list's room).
/// The reports must still be what the lines one by one give.
@Suite("a frame run folded whole as it begins")
struct FrameRunStartTests {
    typealias Row = ConnectFoldTests.Row

    static func frame(_ ms: Int64) -> Row { (ms, .extension, "frame.sent", "video sample processed successfully", []) }

    static func start(_ attempts: Int) -> [Row] {
        var rows: [Row] = [(0, .extension, "broadcast.started", "broadcast started", [])]
        for k in 0..<attempts { rows += [ConnectFoldTests.attempt(1 + Int64(k) * 10), ConnectFoldTests.missing(2 + Int64(k) * 10)] }
        rows += [ConnectFoldTests.attempt(100), (101, .extension, "socket.connected", "client stream open completed", []),
                 (102, .extension, "socket.connected", "client stream open completed", [])]
        return rows
    }

    @Test func aLongRunIsOneEvent() {
        var rows = Self.start(2)
        for k in 0..<200 { rows.append(Self.frame(200 + Int64(k) * 33)) }
        // broadcast started, five connect lines, two connected lines, the run, its last line
        let s = ConnectFoldTests().check(rows, maxEvents: 1 + 5 + 2 + 2)
        #expect(s.frames == 200)
        let run = try! #require(s.events.first { $0.code == .frameSent })
        #expect(run.count == 199 && run.line == 9, "the run begins at the first frame line")
        #expect(s.events.last?.repeats == nil && s.events.last?.line == rows.count)
        // The list's room follows the events, not the lines that were events for a while.
        #expect(s.events.capacity < 2 * s.events.count + 8, "\(s.events.capacity) places for \(s.events.count) events")
        #expect(s.end == rows.last!.0 * 1000 && s.firstFrameAt == 200_000)
        // Fewer than `foldFrom` + 1 frame lines: each stays an event of its own, as before.
        var short = Self.start(0)
        for k in 0..<SessionBuilder.foldFrom { short.append(Self.frame(200 + Int64(k) * 33)) }
        let few = ConnectFoldTests().check(short, maxEvents: short.count)
        #expect(few.events.count == short.count && few.events.allSatisfy { $0.repeats == nil })
    }

    @Test func onlyTheSameLineJoinsTheRun() {
        // A frame line of another message just before the run stays an event of its own, and
        // so does the end of the session after it.
        var rows = Self.start(1)
        rows.append((150, .extension, "frame.chunk_writable", "client stream hasSpaceAvailable", []))
        for k in 0..<60 { rows.append(Self.frame(200 + Int64(k) * 33)) }
        rows += [(5_000, .extension, "socket.closed", "client connection did close: (null)", [("error", "(null)")])]
        let s = ConnectFoldTests().check(rows, maxEvents: 1 + 3 + 2 + 1 + 2 + 1)
        #expect(s.events.contains { $0.kind == "frame.chunk_writable" && $0.repeats == nil })
        #expect(s.frames == 60 && s.outcome == .stoppedByHost)
    }

    @Test func interleavedSessionsFoldEachRun() {
        // Two extensions at once (a line of each in turn): each session's run is one event.
        var rows: [(Row, Int)] = []
        for pid in [21, 22] { for r in Self.start(1) { rows.append((r, pid)) } }
        for k in 0..<100 { for pid in [21, 22] { rows.append((Self.frame(300 + Int64(k) * 20 + Int64(pid)), pid)) } }
        let events = rows.enumerated().map { i, r in
            Event(kind: r.0.2, sdk: "jitsi", side: r.0.1, time: r.0.0 * 1000, process: "Ext", pid: r.1, message: r.0.3, attrs: r.0.4,
                  source: SourceRef(path: "t.log", line: i + 1), order: i, parsedTime: nil, fileIndex: 0)
        }.sorted { ($0.time!, $0.order) < ($1.time!, $1.order) }
        let built = SessionBuilder().build(events)
        #expect(built.sessions.count == 2)
        for s in built.sessions {
            #expect(s.frames == 100)
            #expect(s.events.filter { $0.code == .frameSent }.count == 2, "the run and its last line")
            let mine = events.filter { $0.pid == s.pid }
            #expect(ConnectFoldTests.rows(Timeline.entries(s.events)) == ConnectFoldTests.rows(Timeline.entries(mine)))
        }
    }

    @Test func aLongListIsNotCopiedAsEachRunBegins() {
        // One extension whose frame lines another of its lines cuts every 20 (each cut begins a
        // new run): a run that begins may make a short list fit its events, not copy a long one
        // (each run's copy of the whole list, then its growth at the next line, made such a
        // session quadratic in its lines).
        var rows = Self.start(0)
        var ms: Int64 = 200
        func cycles(_ n: Int) {
            for _ in 0..<n {
                for _ in 0..<20 { rows.append(Self.frame(ms)); ms += 33 }
                rows.append((ms, .extension, "socket.connected", "client stream open completed", []))
                ms += 33
            }
        }
        cycles(60)
        let head = rows.count
        cycles(40)
        let lines = ConnectFoldTests.lines(rows)
        var events: [Event] = []
        for e in lines[..<head] { events.append(e); SessionBuilder.foldLatest(&events, e.code) }
        #expect(events.count > SessionBuilder.refitBelow, "\(events.count) events")
        events.reserveCapacity(events.count + lines.count - head)
        let buffer = events.withUnsafeBufferPointer { $0.baseAddress }
        for e in lines[head...] { events.append(e); SessionBuilder.foldLatest(&events, e.code) }
        #expect(events.withUnsafeBufferPointer { $0.baseAddress } == buffer, "the list was copied")
        // Each cut run still folded as it began: its run, its last line, the cutting line.
        #expect(events.count <= 4 + 3 * 100, "\(events.count) events")
        #expect(events.reduce(0) { $0 + $1.count } == rows.count)
        #expect(ConnectFoldTests.rows(Timeline.entries(events)) == ConnectFoldTests.rows(Timeline.entries(lines)))
    }
}

import Testing

@testable import CastscopeKit

/// Host-app lines join sessions as `SessionStream` places them (once the logs have passed them
/// and every session that could claim them is decided) instead of by a scan of every session
/// per line. These tests hold the stream to the scan's rule on random bundles: overlapping
/// sessions, sessions cut off without an end line, equal starts, lines before any session.
@Suite("attaching host lines to sessions")
struct SessionSpansTests {
    /// The rule as it was written first: scan every (finished) session.
    static func linear(_ e: Event, _ sessions: [Session], before: Int64, after: Int64) -> Int? {
        guard let t = e.time else {
            return sessions.lastIndex(where: { $0.start == nil && $0.events.first?.source.path == e.source.path })
        }
        var inside: Int?
        var upcoming: Int?
        for (i, s) in sessions.enumerated() {
            guard let start = s.start else { continue }
            let end = s.end ?? s.events.last?.lastTime ?? start
            if t >= start && t <= end + after { inside = i }
            if t < start && t >= start - before && upcoming == nil { upcoming = i }
        }
        return inside ?? upcoming
    }

    static func event(_ kind: String, _ t: Int64, side: Side, pid: Int, order: Int) -> Event {
        Event(kind: kind, sdk: "jitsi", side: side, time: t, process: side == .app ? "App" : "Ext", pid: pid, message: kind,
              attrs: [], source: SourceRef(path: "a.log", line: order), order: order, parsedTime: nil, fileIndex: 0)
    }

    @Test func agreesWithTheScanOnRandomBundles() {
        var rng = SystemRandomNumberGenerator()
        let builder = SessionBuilder()
        for round in 0..<300 {
            var events: [Event] = []
            for k in 0..<Int.random(in: 0...30, using: &rng) {
                let start = Int64.random(in: 0...200, using: &rng) * 1_000_000 / Int64([1, 4].randomElement(using: &rng)!)
                events.append(Self.event("broadcast.started", start, side: .extension, pid: 100 + k, order: 0))
                let lines = Int.random(in: 0...4, using: &rng)
                var t = start
                for _ in 0..<lines {
                    t += Int64.random(in: 0...8_000_000, using: &rng)
                    events.append(Self.event("frame.sent", t, side: .extension, pid: 100 + k, order: 0))
                }
                // Most end with an end line; the rest are cut off (ended at their last line).
                if Int.random(in: 0..<5, using: &rng) != 0 {
                    events.append(Self.event("broadcast.finished", t + Int64.random(in: 0...20_000_000, using: &rng),
                                             side: .extension, pid: 100 + k, order: 0))
                }
            }
            for _ in 0..<60 {
                events.append(Self.event("app.x", Int64.random(in: -20...260, using: &rng) * 500_000, side: .app, pid: 1, order: 0))
            }
            events.sort { $0.time! < $1.time! }
            for i in events.indices {
                events[i].order = i + 1
                events[i].source.line = i + 1
            }
            let built = builder.build(events)
            // Where the stream put each host line, against the scan over the finished sessions
            // without their host lines.
            var placed: [Int: String] = [:]
            // (Each line of a run of the same host line folded as the session was built.)
            for s in built.sessions { for e in s.events where e.side == .app { e.forEachLinePlace { _, _, p in placed[p.order] = s.id } } }
            let own = built.sessions.map { s -> Session in
                var s = s
                s.events = s.events.filter { $0.side != .app }
                return s
            }
            for e in events where e.side == .app {
                let want = Self.linear(e, own, before: builder.attachBeforeMicros, after: builder.attachAfterMicros).map { own[$0].id }
                #expect(placed[e.order] == want, "round \(round), host line at \(e.time!)")
            }
            #expect(built.unattached.count == events.filter { $0.side == .app }.count - placed.count)
        }
    }

    /// A dense bundle: thousands of sessions and as many host lines still attach each line to
    /// its own session.
    @Test func thousandsOfSessions() {
        var events: [Event] = []
        var order = 0
        for k in 0..<3000 {
            let base = Int64(k) * 20_000_000
            for (dt, side, kind) in [(Int64(0), Side.extension, "broadcast.started"), (1_000, .app, "app.x"),
                                     (5_000_000, .extension, "broadcast.finished")]
            {
                order += 1
                events.append(Event(kind: kind, sdk: "jitsi", side: side, time: base + dt, process: side == .app ? "App" : "Ext",
                                    pid: side == .app ? 1 : 100 + k, message: kind, attrs: [],
                                    source: SourceRef(path: "a.log", line: order), order: order, parsedTime: nil, fileIndex: 0))
            }
        }
        let r = SessionBuilder().build(events)
        #expect(r.sessions.count == 3000)
        #expect(r.unattached.isEmpty)
        #expect(r.sessions.allSatisfy { s in s.events.count == 3 && s.events[1].side == .app && s.events[1].time == s.start! + 1_000 })
    }
}

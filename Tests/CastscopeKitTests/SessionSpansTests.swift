import Testing

@testable import CastscopeKit

/// Host-app lines join sessions through `SessionSpans` (binary search and a running maximum of
/// ends) instead of a scan of every session per line. These tests hold it to the scan's rule
/// on random bundles: overlapping sessions, open ones (no end), untimed ones, equal starts.
@Suite("attaching host lines to sessions")
struct SessionSpansTests {
    /// The rule as it was written first: scan every session.
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

    static func event(_ t: Int64?, path: String = "a.log", line: Int = 1) -> Event {
        Event(kind: "app.x", sdk: "jitsi", side: .app, time: t, process: "App", pid: 1, message: "m", attrs: [],
              source: SourceRef(path: path, line: line), order: line, parsedTime: nil, fileIndex: 0)
    }

    @Test func agreesWithTheScanOnRandomBundles() {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<300 {
            var sessions: [Session] = []
            let n = Int.random(in: 0...40, using: &rng)
            for k in 0..<n {
                var s = Session(id: "S\(k + 1)", sdk: "jitsi")
                let untimed = Int.random(in: 0..<10, using: &rng) == 0
                let path = ["a.log", "b.log"].randomElement(using: &rng)!
                if !untimed {
                    s.start = Int64.random(in: 0...200, using: &rng) * 1_000_000 / Int64([1, 4].randomElement(using: &rng)!)
                    if Int.random(in: 0..<6, using: &rng) != 0 {
                        s.end = s.start! + Int64.random(in: 0...30_000_000, using: &rng)
                    }
                }
                s.events = [Self.event(s.start, path: path, line: k)]
                if s.end == nil, let st = s.start, Bool.random(using: &rng) {
                    s.events.append(Self.event(st + Int64.random(in: 0...20_000_000, using: &rng), path: path, line: k))
                }
                sessions.append(s)
            }
            sessions.sort { ($0.start ?? Int64.min, $0.events.first?.order ?? 0) < ($1.start ?? Int64.min, $1.events.first?.order ?? 0) }
            // The scan and the index, each attaching to its own copy, must pick the same session
            // for every line (attaching moves the end of open sessions).
            var expected = sessions
            var actual = sessions
            let spans = SessionSpans(actual, before: 10_000_000, after: 2_000_000)
            var times: [Int64?] = (0..<60).map { _ in Int64.random(in: -20...260, using: &rng) * 500_000 }
            times.append(contentsOf: [nil, nil])
            times.sort { ($0 ?? Int64.min) < ($1 ?? Int64.min) }
            for (i, t) in times.enumerated() {
                let e = Self.event(t, path: ["a.log", "b.log", "c.log"].randomElement(using: &rng)!, line: 1000 + i)
                let want = Self.linear(e, expected, before: 10_000_000, after: 2_000_000)
                let got = spans.session(for: e, in: actual)
                #expect(got == want, "round \(round), line at \(t.map(String.init) ?? "no time")")
                if let want { expected[want].events.append(e) }
                if let got { actual[got].events.append(e) }
            }
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

/// `--perfetto FILE`: Chrome trace-event JSON that ui.perfetto.dev (and chrome://tracing) opens.
///
/// Timestamps are wall-clock microseconds since 1970-01-01T00:00:00Z on the device's clock
/// (relay times shifted by the estimated clock offset), so the UI's absolute time is the logs'
/// time. The device is one process: per session a `phases` track (the session, connecting and
/// streaming as slices, connect attempts and findings as instants) and one track per side
/// (extension, host app, system, relay) holding every line of the session's timeline as an
/// instant (repeated lines folded as in the text report, `count` in the args), the lines that
/// decided the outcome marked `decided`; frames per second is a counter. The relay is a second
/// process: one track per relay session, its slice named by the session and what it closed with.
public enum PerfettoReport {
    static let sideOrder: [(Side, String)] = [(.extension, "extension"), (.app, "host app"), (.system, "system"), (.relay, "relay")]

    static func obj(_ fields: [(String, String)]) -> String {
        "{" + fields.map { JSONWriter.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }
    static func q(_ s: String) -> String { JSONWriter.quote(s) }
    static let device = 1
    static let relay = 2
    /// Session i's tracks: tid 8i+8 its phases, then one per side.
    static func tid(_ i: Int, _ lane: Int) -> Int { 8 * (i + 1) + lane }
    static func thread(_ pid: Int, _ t: Int, _ name: String, into events: inout [String]) {
        events.append(obj([("ph", q("M")), ("name", q("thread_name")), ("pid", "\(pid)"), ("tid", "\(t)"), ("args", obj([("name", q(name))]))]))
        events.append(obj([("ph", q("M")), ("name", q("thread_sort_index")), ("pid", "\(pid)"), ("tid", "\(t)"), ("args", obj([("sort_index", "\(t)")]))]))
    }

    public static func render(_ r: AnalysisReport, provenance: Provenance = .current()) -> String {
        var events: [String] = []
        let offset = r.clock?.offset ?? 0
        var first: Int64?
        for (i, s) in r.sessions.enumerated() {
            events += sessionEvents(s, index: i)
            if let start = s.start { first = min(first ?? start, start) }
        }
        for (n, f) in r.findings.enumerated() {
            let i = f.session.flatMap { id in r.sessions.firstIndex(where: { $0.id == id }) }
            if let e = findingEvent(f, n: n, sessionIndex: i) { events.append(e) }
        }
        events += relayEvents(r, first: &first)
        return head(provenance: provenance, first: first, offset: offset) + events.map { ",\n" + $0 }.joined() + tail
    }

    /// The relay's sessions (the second process), each on its track; `first` takes their starts.
    public static func relayEvents(_ r: AnalysisReport, first: inout Int64?) -> [String] {
        var events: [String] = []
        let offset = r.clock?.offset ?? 0
        for (i, rs) in r.relaySessions.enumerated() {
            guard let start = rs.start else { continue }
            let t = i + 1
            let s = start - offset
            first = min(first ?? s, s)
            let e = max(s, (rs.end ?? start) - offset)
            let device = rs.deviceSession.map { " → \($0)" } ?? " (no device session)"
            thread(relay, t, "relay \(rs.id)\(device) \(rs.peer ?? "")", into: &events)
            events.append(obj([("ph", q("X")), ("name", q("relay \(rs.id)\(device): \(rs.reason ?? "not closed in these logs")")), ("cat", q("relay")),
                               ("pid", "\(relay)"), ("tid", "\(t)"), ("ts", "\(s)"), ("dur", "\(e - s)"),
                               ("args", obj([("session", q(rs.id)), ("device", rs.deviceSession.map(q) ?? "null"), ("peer", rs.peer.map(q) ?? "null"),
                                             ("room", rs.room.map(q) ?? "null"), ("frames", rs.frames.map { "\($0)" } ?? "null"),
                                             ("accepted", rs.accepted.map { q(Fmt.rfc3339($0, offset: 0)) } ?? "null")]))]))
        }
        return events
    }

    /// The document up to and including the processes' names (what follows is `,\n` and an
    /// event, for each event, then `tail`): `first` is the earliest session or relay start.
    public static func head(provenance: Provenance, first: Int64?, offset: Int64) -> String {
        var other: [(String, String)] = [("generator", q("castscope")), ("version", q(provenance.version)),
                                         ("commandLine", "[" + provenance.commandLine.map(q).joined(separator: ",") + "]"),
                                         ("generatedAt", q(provenance.generatedText)),
                                         ("timestamps", q("microseconds since 1970-01-01T00:00:00Z, on the device's clock (relay shifted by the clock estimate)"))]
        if let first { other.append(("firstTimestamp", q(Fmt.rfc3339(first, offset: 0)))) }
        other.append(("relayClockOffsetMicros", "\(offset)"))
        let names = [
            obj([("ph", q("M")), ("name", q("process_name")), ("pid", "\(device)"), ("args", obj([("name", q("device (phone)"))]))]),
            obj([("ph", q("M")), ("name", q("process_sort_index")), ("pid", "\(device)"), ("args", obj([("sort_index", "0")]))]),
            obj([("ph", q("M")), ("name", q("process_name")), ("pid", "\(relay)"), ("args", obj([("name", q("relay (server clock, shifted to the phone's)"))]))]),
            obj([("ph", q("M")), ("name", q("process_sort_index")), ("pid", "\(relay)"), ("args", obj([("sort_index", "1")]))]),
        ]
        return "{\"displayTimeUnit\":\"ms\",\"otherData\":\(obj(other)),\"traceEvents\":[\n" + names.joined(separator: ",\n")
    }

    public static let tail = "\n]}\n"

    /// A finding as an instant (on its session's phases track, `sessionIndex`; the bundle's
    /// otherwise); `n` is its place in the report's findings. Nil without a time.
    public static func findingEvent(_ f: Finding, n: Int, sessionIndex i: Int?) -> String? {
        guard let t = f.time else { return nil }
        return obj([("ph", q("i")), ("s", q(i == nil ? "p" : "t")), ("name", q("\(f.severity.rawValue): \(f.kind)")),
                    ("cat", q("finding")), ("pid", "\(device)"), ("tid", "\(i.map { tid($0, 0) } ?? 0)"), ("ts", "\(t)"),
                    ("args", obj([("message", q(f.message)), ("evidence", "[" + f.evidence.map { q($0.description) }.joined(separator: ",") + "]"), ("n", "\(n)")]))])
    }

    /// Session number `i`'s events (none without a start).
    public static func sessionEvents(_ s: Session, index i: Int) -> [String] {
        var events: [String] = []
        guard let start = s.start else { return events }
        let phases = tid(i, 0)
        let who = [s.id, s.sdk, s.process.map { p in s.pid.map { "\(p)[\($0)]" } ?? p }].compactMap { $0 }.joined(separator: " ")
        thread(device, phases, "\(who) · phases", into: &events)
        let end = max(start, s.end ?? s.events.compactMap(\.lastTime).max() ?? start)
        events.append(obj([("ph", q("X")), ("name", q("\(s.id) \(s.outcome.rawValue)")), ("cat", q("session")), ("pid", "\(device)"),
                           ("tid", "\(phases)"), ("ts", "\(start)"), ("dur", "\(end - start)"),
                           ("args", obj([("reason", q(s.reason)), ("start", q(Fmt.rfc3339(start, offset: s.displayOffset)))]))]))
        let connected = s.connectedAt.map { max(start, $0) }
        events.append(obj([("ph", q("X")), ("name", q("connecting")), ("cat", q("phase")), ("pid", "\(device)"), ("tid", "\(phases)"),
                           ("ts", "\(start)"), ("dur", "\((connected ?? end) - start)")]))
        if let c = connected {
            events.append(obj([("ph", q("X")), ("name", q(s.frames > 0 ? "streaming" : "connected")), ("cat", q("phase")),
                               ("pid", "\(device)"), ("tid", "\(phases)"), ("ts", "\(c)"), ("dur", "\(end - c)")]))
        }
        for a in s.attempts {
            guard let t = a.time else { continue }
            events.append(obj([("ph", q("i")), ("s", q("t")), ("name", q(a.failure.map { "attempt: \($0)" } ?? "attempt")),
                               ("cat", q("connect")), ("pid", "\(device)"), ("tid", "\(phases)"), ("ts", "\(t)"),
                               ("args", obj([("source", q(a.source.description))]))]))
        }
        // Every timeline line on its side's track.
        let entries = Timeline.entries(s.events)
        for (lane, (side, name)) in sideOrder.enumerated() where entries.contains(where: { $0.side == side }) {
            thread(device, tid(i, lane + 1), "\(s.id) · \(name)", into: &events)
        }
        for t in entries {
            guard let time = t.time, let lane = sideOrder.firstIndex(where: { $0.0 == t.side }) else { continue }
            var args: [(String, String)] = [("event", q(t.kind)), ("source", q(t.first.description)), ("count", "\(t.count)"),
                                            ("time", q(Fmt.rfc3339(time, offset: s.displayOffset)))]
            if t.count > 1 { args.append(("lastSource", q(t.last.description))) }
            events.append(obj([("ph", q("i")), ("s", q("t")), ("name", q(t.text)), ("cat", q("line")), ("pid", "\(device)"),
                               ("tid", "\(tid(i, lane + 1))"), ("ts", "\(time)"), ("args", obj(args))]))
        }
        // The lines that decided the outcome, marked on their side's track.
        for e in s.deciding {
            guard let time = e.time, let lane = sideOrder.firstIndex(where: { $0.0 == e.side }) else { continue }
            if !entries.contains(where: { $0.side == e.side }) { thread(device, tid(i, lane + 1), "\(s.id) · \(sideOrder[lane].1)", into: &events) }
            events.append(obj([("ph", q("i")), ("s", q("t")), ("name", q("decided \(s.outcome.rawValue): \(e.message)")), ("cat", q("decided")),
                               ("pid", "\(device)"), ("tid", "\(tid(i, lane + 1))"), ("ts", "\(time)"),
                               ("args", obj([("event", q(e.kind)), ("source", q(e.source.description)), ("outcome", q(s.outcome.rawValue))]))]))
        }
        // Frames per second: the device's frame lines per second, else the relay's stats.
        for (sec, n) in s.framesPerSecond {
            events.append(obj([("ph", q("C")), ("name", q("\(s.id) fps (device)")), ("pid", "\(device)"),
                               ("ts", "\(start + sec * 1_000_000)"), ("args", obj([("fps", "\(n)")]))]))
        }
        for e in s.events where e.kind == "relay.stats" {
            e.forEachStat { t, _, _, fps, _ in
                guard let t, fps.isFinite else { return }
                events.append(obj([("ph", q("C")), ("name", q("\(s.id) fps (relay)")), ("pid", "\(relay)"), ("ts", "\(t)"),
                                   ("args", obj([("fps", Fmt.decimal(fps, 2))]))]))
            }
        }
        return events
    }
}

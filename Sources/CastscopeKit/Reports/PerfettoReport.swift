/// `--perfetto FILE`: Chrome trace-event JSON that ui.perfetto.dev (and chrome://tracing) opens.
/// Device sessions and relay sessions are separate processes; phases are slices, connect
/// attempts and findings are instants, frames per second is a counter.
public enum PerfettoReport {
    public static func render(_ r: AnalysisReport) -> String {
        var events: [String] = []
        let times = r.sessions.compactMap(\.start) + r.relaySessions.compactMap(\.start)
        let origin = times.min() ?? 0
        func ts(_ t: Int64) -> String { String(t - origin) }
        func obj(_ fields: [(String, String)]) -> String {
            "{" + fields.map { JSONWriter.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
        }
        func q(_ s: String) -> String { JSONWriter.quote(s) }
        let device = 1
        let relay = 2
        events.append(obj([("ph", q("M")), ("name", q("process_name")), ("pid", "\(device)"), ("args", obj([("name", q("device (phone)"))]))]))
        events.append(obj([("ph", q("M")), ("name", q("process_name")), ("pid", "\(relay)"), ("args", obj([("name", q("relay (server clock, shifted to the phone's)"))]))]))
        let offset = r.clock?.offset ?? 0
        for (i, s) in r.sessions.enumerated() {
            guard let start = s.start else { continue }
            let tid = i + 1
            let who = [s.id, s.sdk, s.process.map { p in s.pid.map { "\(p)[\($0)]" } ?? p }].compactMap { $0 }.joined(separator: " ")
            events.append(obj([("ph", q("M")), ("name", q("thread_name")), ("pid", "\(device)"), ("tid", "\(tid)"), ("args", obj([("name", q(who))]))]))
            let end = max(start, s.end ?? s.events.last?.lastTime ?? start)
            events.append(obj([("ph", q("X")), ("name", q("\(s.id) \(s.outcome.rawValue)")), ("cat", q("session")), ("pid", "\(device)"),
                               ("tid", "\(tid)"), ("ts", ts(start)), ("dur", "\(end - start)"), ("args", obj([("reason", q(s.reason))]))]))
            let connected = s.connectedAt.map { max(start, $0) }
            events.append(obj([("ph", q("X")), ("name", q("connecting")), ("cat", q("phase")), ("pid", "\(device)"), ("tid", "\(tid)"),
                               ("ts", ts(start)), ("dur", "\((connected ?? end) - start)")]))
            if let c = connected {
                events.append(obj([("ph", q("X")), ("name", q(s.frames > 0 ? "streaming" : "connected")), ("cat", q("phase")),
                                   ("pid", "\(device)"), ("tid", "\(tid)"), ("ts", ts(c)), ("dur", "\(end - c)")]))
            }
            for a in s.attempts {
                guard let t = a.time else { continue }
                events.append(obj([("ph", q("i")), ("s", q("t")), ("name", q(a.failure.map { "attempt: \($0)" } ?? "attempt")),
                                   ("cat", q("connect")), ("pid", "\(device)"), ("tid", "\(tid)"), ("ts", ts(t)),
                                   ("args", obj([("source", q(a.source.description))]))]))
            }
            // Frames per second: the device's frame lines per second, else the relay's stats.
            for (sec, n) in s.framesPerSecond {
                events.append(obj([("ph", q("C")), ("name", q("\(s.id) fps (device)")), ("pid", "\(device)"),
                                   ("ts", ts(start + sec * 1_000_000)), ("args", obj([("fps", "\(n)")]))]))
            }
            for e in s.events where e.kind == "relay.stats" {
                e.forEachStat { t, _, _, fps, _ in
                    guard let t else { return }
                    events.append(obj([("ph", q("C")), ("name", q("\(s.id) fps (relay)")), ("pid", "\(relay)"), ("ts", ts(t)),
                                       ("args", obj([("fps", Fmt.decimal(fps, 2))]))]))
                }
            }
        }
        for (i, f) in r.findings.enumerated() {
            guard let t = f.time else { continue }
            let tid = f.session.flatMap { id in r.sessions.firstIndex(where: { $0.id == id }) }.map { $0 + 1 } ?? 0
            events.append(obj([("ph", q("i")), ("s", q(tid == 0 ? "p" : "t")), ("name", q("\(f.severity.rawValue): \(f.kind)")),
                               ("cat", q("finding")), ("pid", "\(device)"), ("tid", "\(tid)"), ("ts", ts(t)),
                               ("args", obj([("message", q(f.message)), ("evidence", "[" + f.evidence.map { q($0.description) }.joined(separator: ",") + "]"), ("n", "\(i)")]))]))
        }
        for (i, rs) in r.relaySessions.enumerated() {
            guard let start = rs.start else { continue }
            let tid = i + 1
            let s = start - offset
            let e = max(s, (rs.end ?? start) - offset)
            events.append(obj([("ph", q("M")), ("name", q("thread_name")), ("pid", "\(relay)"), ("tid", "\(tid)"),
                               ("args", obj([("name", q("relay \(rs.id.prefix(8)) \(rs.peer ?? "")"))]))]))
            events.append(obj([("ph", q("X")), ("name", q("relay \(rs.reason ?? "open")")), ("cat", q("relay")), ("pid", "\(relay)"),
                               ("tid", "\(tid)"), ("ts", ts(s)), ("dur", "\(e - s)"),
                               ("args", obj([("session", q(rs.id)), ("device", rs.deviceSession.map(q) ?? "null")]))]))
        }
        return "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"castscope\",\"originMicros\":\(origin)},\"traceEvents\":[\n"
            + events.joined(separator: ",\n") + "\n]}\n"
    }
}

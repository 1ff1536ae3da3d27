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
///
/// Written as bytes into an `OutputBuffer` (issue 15), every event after `,\n`: no `String`
/// per field or per event.
public enum PerfettoReport {
    static let sideOrder: [(Side, StaticString)] = [(.extension, "extension"), (.app, "host app"), (.system, "system"), (.relay, "relay")]
    static let device = 1
    static let relay = 2
    /// Session i's tracks: tid 8i+8 its phases, then one per side.
    static func tid(_ i: Int, _ lane: Int) -> Int { 8 * (i + 1) + lane }

    /// `,\n{"ph":"PH","name":` — the start of every event; the name follows.
    private static func event(_ ph: StaticString, into b: inout OutputBuffer) {
        b.append(",\n{\"ph\":\"")
        b.append(ph)
        b.append("\",\"name\":")
    }

    /// `,"pid":P,"tid":T`.
    private static func ids(_ pid: Int, _ tid: Int, into b: inout OutputBuffer) {
        b.jsonKey("pid", comma: true)
        b.int(pid)
        b.jsonKey("tid", comma: true)
        b.int(tid)
    }

    /// A track's name and sort index; `name` writes the name's text (escaped, without quotes).
    static func thread(_ pid: Int, _ t: Int, into b: inout OutputBuffer, name: (inout OutputBuffer) -> Void) {
        event("M", into: &b)
        b.append("\"thread_name\"")
        ids(pid, t, into: &b)
        b.append(",\"args\":{\"name\":\"")
        name(&b)
        b.append("\"}}")
        event("M", into: &b)
        b.append("\"thread_sort_index\"")
        ids(pid, t, into: &b)
        b.append(",\"args\":{\"sort_index\":")
        b.int(t)
        b.append("}}")
    }

    public static func render(_ r: AnalysisReport, provenance: Provenance = .current()) -> String {
        var events = OutputBuffer(capacity: 1 << 16)
        let offset = r.clock?.offset ?? 0
        var first: Int64?
        for (i, s) in r.sessions.enumerated() {
            sessionEvents(s, index: i, into: &events)
            if let start = s.start { first = min(first ?? start, start) }
        }
        for (n, f) in r.findings.enumerated() {
            let i = f.session.flatMap { id in r.sessions.firstIndex(where: { $0.id == id }) }
            findingEvent(f, n: n, sessionIndex: i, into: &events)
        }
        relayEvents(r, first: &first, into: &events)
        var b = OutputBuffer(capacity: events.count + 4096)
        head(provenance: provenance, first: first, offset: offset, into: &b)
        events.withUnsafeBytes { b.append(UnsafeRawBufferPointer($0)) }
        b.append(tail)
        return b.string
    }

    /// The relay's sessions (the second process), each on its track; `first` takes their starts.
    /// The earliest relay start on the device's clock (what `relayEvents` makes `first`),
    /// without reading a session back.
    public static func relayFirst(_ r: AnalysisReport) -> Int64? {
        let offset = r.clock?.offset ?? 0
        var first: Int64?
        for i in r.relaySessions.indices {
            guard let start = r.relaySessions.joinFacts(i).start else { continue }
            first = min(first ?? start - offset, start - offset)
        }
        return first
    }

    /// `flush`: called whenever `b` holds a megabyte, to write it out and empty it (false: stop,
    /// the output failed). A relay fleet's tens of thousands of sessions were a buffer of
    /// 100 MB otherwise.
    public static func relayEvents(_ r: AnalysisReport, first: inout Int64?, into b: inout OutputBuffer,
                                   flush: ((inout OutputBuffer) -> Bool)? = nil) {
        let offset = r.clock?.offset ?? 0
        for (i, rs) in r.relaySessions.enumerated() {
            if let flush, b.count >= 1 << 20, !flush(&b) { return }
            guard let start = rs.start else { continue }
            let t = i + 1
            let s = start - offset
            first = min(first ?? s, s)
            let e = max(s, (rs.end ?? start) - offset)
            // `relay ID → DEVICE` or `relay ID (no device session)`.
            func who(_ b: inout OutputBuffer) {
                b.append("relay ")
                b.jsonStringBody(rs.id)
                if let d = rs.deviceSession {
                    b.append(" → ")
                    b.jsonStringBody(d)
                } else {
                    b.append(" (no device session)")
                }
            }
            thread(relay, t, into: &b) { b in
                who(&b)
                b.byte(0x20)
                b.jsonStringBody(rs.peer ?? "")
            }
            event("X", into: &b)
            b.byte(UInt8(ascii: "\""))
            who(&b)
            b.append(": ")
            b.jsonStringBody(rs.reason ?? "not closed in these logs")
            b.append("\",\"cat\":\"relay\"")
            ids(relay, t, into: &b)
            b.jsonKey("ts", comma: true)
            b.int(Int(s))
            b.jsonKey("dur", comma: true)
            b.int(Int(e - s))
            b.append(",\"args\":{\"session\":")
            b.jsonString(rs.id)
            b.jsonKey("device", comma: true)
            stringOrNull(rs.deviceSession, into: &b)
            b.jsonKey("peer", comma: true)
            stringOrNull(rs.peer, into: &b)
            b.jsonKey("room", comma: true)
            stringOrNull(rs.room, into: &b)
            b.jsonKey("frames", comma: true)
            if let f = rs.frames { b.int(Int(f)) } else { b.append("null") }
            b.jsonKey("accepted", comma: true)
            if let a = rs.accepted {
                b.byte(UInt8(ascii: "\""))
                b.rfc3339(a, offset: 0)
                b.byte(UInt8(ascii: "\""))
            } else {
                b.append("null")
            }
            b.append("}}")
        }
    }

    private static func stringOrNull(_ s: String?, into b: inout OutputBuffer) {
        if let s { b.jsonString(s) } else { b.append("null") }
    }

    /// The document up to and including the processes' names (what follows is `,\n` and an
    /// event, for each event, then `tail`): `first` is the earliest session or relay start.
    public static func head(provenance: Provenance, first: Int64?, offset: Int64, into b: inout OutputBuffer) {
        b.append("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"castscope\",\"version\":")
        b.jsonString(provenance.version)
        b.append(",\"commandLine\":[")
        for (j, a) in provenance.commandLine.enumerated() {
            if j > 0 { b.byte(UInt8(ascii: ",")) }
            b.jsonString(a)
        }
        b.append("],\"generatedAt\":")
        b.jsonString(provenance.generatedText)
        b.append(",\"timestamps\":\"microseconds since 1970-01-01T00:00:00Z, on the device's clock (relay shifted by the clock estimate)\"")
        if let first {
            b.append(",\"firstTimestamp\":\"")
            b.rfc3339(first, offset: 0)
            b.byte(UInt8(ascii: "\""))
        }
        b.append(",\"relayClockOffsetMicros\":")
        b.int(Int(offset))
        b.append("},\"traceEvents\":[\n")
        b.append("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"device (phone)\"}},\n")
        b.append("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":1,\"args\":{\"sort_index\":0}},\n")
        b.append("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"args\":{\"name\":\"relay (server clock, shifted to the phone's)\"}},\n")
        b.append("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":2,\"args\":{\"sort_index\":1}}")
    }

    public static let tail = "\n]}\n"

    /// A finding as an instant (on its session's phases track, `sessionIndex`; the bundle's
    /// otherwise); `n` is its place in the report's findings. Nothing without a time.
    public static func findingEvent(_ f: Finding, n: Int, sessionIndex i: Int?, into b: inout OutputBuffer) {
        guard let t = f.time else { return }
        b.append(i == nil ? ",\n{\"ph\":\"i\",\"s\":\"p\",\"name\":\"" : ",\n{\"ph\":\"i\",\"s\":\"t\",\"name\":\"")
        b.append(f.severity.rawValue)
        b.append(": ")
        b.jsonStringBody(f.kind)
        b.append("\",\"cat\":\"finding\"")
        ids(device, i.map { tid($0, 0) } ?? 0, into: &b)
        b.jsonKey("ts", comma: true)
        b.int(Int(t))
        b.append(",\"args\":{\"message\":")
        b.jsonString(f.message)
        b.append(",\"evidence\":[")
        for (j, e) in f.evidence.enumerated() {
            if j > 0 { b.byte(UInt8(ascii: ",")) }
            e.json(into: &b)
        }
        b.append("],\"n\":")
        b.int(n)
        b.append("}}")
    }

    /// Session number `i`'s events (none without a start).
    public static func sessionEvents(_ s: Session, index i: Int, into b: inout OutputBuffer) {
        guard let start = s.start else { return }
        let phases = tid(i, 0)
        thread(device, phases, into: &b) { b in
            // `ID SDK PROCESS[PID] · phases`
            b.jsonStringBody(s.id)
            b.byte(0x20)
            b.jsonStringBody(s.sdk)
            if let p = s.process {
                b.byte(0x20)
                b.jsonStringBody(p)
                if let pid = s.pid {
                    b.byte(UInt8(ascii: "["))
                    b.int(Int(pid))
                    b.byte(UInt8(ascii: "]"))
                }
            }
            b.append(" · phases")
        }
        let end = max(start, s.end ?? s.events.compactMap(\.lastTime).max() ?? start)
        event("X", into: &b)
        b.byte(UInt8(ascii: "\""))
        b.jsonStringBody(s.id)
        b.byte(0x20)
        b.append(s.outcome.rawValue)
        b.append("\",\"cat\":\"session\"")
        ids(device, phases, into: &b)
        span(start, end, into: &b)
        b.append(",\"args\":{\"reason\":")
        b.jsonString(s.reason)
        b.append(",\"start\":\"")
        b.rfc3339(start, offset: s.displayOffset)
        b.append("\"}}")
        let connected = s.connectedAt.map { max(start, $0) }
        event("X", into: &b)
        b.append("\"connecting\",\"cat\":\"phase\"")
        ids(device, phases, into: &b)
        span(start, connected ?? end, into: &b)
        b.byte(UInt8(ascii: "}"))
        if let c = connected {
            event("X", into: &b)
            b.append(s.frames > 0 ? "\"streaming\"" : "\"connected\"")
            b.append(",\"cat\":\"phase\"")
            ids(device, phases, into: &b)
            span(c, end, into: &b)
            b.byte(UInt8(ascii: "}"))
        }
        for a in s.attempts {
            guard let t = a.time else { continue }
            instant(into: &b)
            if let failure = a.failure {
                b.append("\"attempt: ")
                b.jsonStringBody(failure)
                b.byte(UInt8(ascii: "\""))
            } else {
                b.append("\"attempt\"")
            }
            b.append(",\"cat\":\"connect\"")
            ids(device, phases, into: &b)
            b.jsonKey("ts", comma: true)
            b.int(Int(t))
            b.append(",\"args\":{\"source\":")
            a.source.json(into: &b)
            b.append("}}")
        }
        // Every timeline line on its side's track.
        let entries = Timeline.rows(s.events)
        var sidesShown = Set<Side>()
        for t in entries { sidesShown.insert(t.side) }
        for (lane, (side, name)) in sideOrder.enumerated() where sidesShown.contains(side) {
            sideTrack(s, i, lane: lane, name, into: &b)
        }
        for t in entries {
            guard let time = t.time, let lane = sideOrder.firstIndex(where: { $0.0 == t.side }) else { continue }
            instant(into: &b)
            b.jsonString(t.text)
            lineArgs("line", tid: tid(i, lane + 1), ts: time, event: t.kind, source: t.first, into: &b)
            b.append(",\"count\":")
            b.int(t.count)
            b.append(",\"time\":\"")
            b.rfc3339(time, offset: s.displayOffset)
            b.byte(UInt8(ascii: "\""))
            if t.count > 1 {
                b.append(",\"lastSource\":")
                t.last.json(into: &b)
            }
            b.append("}}")
        }
        // The lines that decided the outcome, marked on their side's track.
        for e in s.deciding {
            guard let time = e.time, let lane = sideOrder.firstIndex(where: { $0.0 == e.side }) else { continue }
            if !sidesShown.contains(e.side) { sideTrack(s, i, lane: lane, sideOrder[lane].1, into: &b) }
            instant(into: &b)
            b.append("\"decided ")
            b.append(s.outcome.rawValue)
            b.append(": ")
            b.jsonStringBody(e.message)
            b.byte(UInt8(ascii: "\""))
            lineArgs("decided", tid: tid(i, lane + 1), ts: time, event: e.kind, source: e.source, into: &b)
            b.append(",\"outcome\":\"")
            b.append(s.outcome.rawValue)
            b.append("\"}}")
        }
        // Frames per second: the device's frame lines per second, else the relay's stats.
        for (sec, n) in s.framesPerSecond {
            counter(s, "device", into: &b)
            b.jsonKey("pid", comma: true)
            b.int(device)
            b.jsonKey("ts", comma: true)
            b.int(Int(start + sec * 1_000_000))
            b.append(",\"args\":{\"fps\":")
            b.int(n)
            b.append("}}")
        }
        for e in s.events where e.kind == "relay.stats" {
            e.forEachStat { t, _, _, fps, _ in
                guard let t, fps.isFinite else { return }
                counter(s, "relay", into: &b)
                b.jsonKey("pid", comma: true)
                b.int(relay)
                b.jsonKey("ts", comma: true)
                b.int(Int(t))
                b.append(",\"args\":{\"fps\":")
                b.decimal(fps, 2)
                b.append("}}")
            }
        }
    }

    /// `,"cat":"CAT","pid":1,"tid":T,"ts":TS,"args":{"event":EVENT,"source":"path:line"` (a
    /// device line's instant; its args left open for more).
    private static func lineArgs(_ cat: StaticString, tid: Int, ts: Int64, event: String, source: SourceRef, into b: inout OutputBuffer) {
        b.append(",\"cat\":\"")
        b.append(cat)
        b.byte(UInt8(ascii: "\""))
        ids(device, tid, into: &b)
        b.jsonKey("ts", comma: true)
        b.int(Int(ts))
        b.append(",\"args\":{\"event\":")
        b.jsonString(event)
        b.append(",\"source\":")
        source.json(into: &b)
    }

    /// `,"ts":A,"dur":B-A`.
    private static func span(_ a: Int64, _ b: Int64, into out: inout OutputBuffer) {
        out.jsonKey("ts", comma: true)
        out.int(Int(a))
        out.jsonKey("dur", comma: true)
        out.int(Int(b - a))
    }

    /// `,\n{"ph":"i","s":"t","name":` (an instant on its track).
    private static func instant(into b: inout OutputBuffer) {
        b.append(",\n{\"ph\":\"i\",\"s\":\"t\",\"name\":")
    }

    /// `,\n{"ph":"C","name":"ID fps (SIDE)"`.
    private static func counter(_ s: Session, _ side: StaticString, into b: inout OutputBuffer) {
        event("C", into: &b)
        b.byte(UInt8(ascii: "\""))
        b.jsonStringBody(s.id)
        b.append(" fps (")
        b.append(side)
        b.append(")\"")
    }

    /// The track of a session's side: `ID · SIDE`.
    private static func sideTrack(_ s: Session, _ i: Int, lane: Int, _ name: StaticString, into b: inout OutputBuffer) {
        thread(device, tid(i, lane + 1), into: &b) { b in
            b.jsonStringBody(s.id)
            b.append(" · ")
            b.append(name)
        }
    }
}

extension SourceRef {
    /// `"path:line"` as a JSON string.
    func json(into b: inout OutputBuffer) {
        b.byte(UInt8(ascii: "\""))
        b.jsonStringBody(path)
        b.byte(UInt8(ascii: ":"))
        b.int(line)
        b.byte(UInt8(ascii: "\""))
    }
}

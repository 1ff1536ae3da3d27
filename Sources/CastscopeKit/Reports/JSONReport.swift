/// `castscope analyze --json`: one document, schema `castscope.report/2`, described by
/// `schema/castscope.report.schema.json` (and the README).
///
/// Version 2 (from 1): `summary.errors` is `summary.inputErrors` (it counts input errors, not
/// error findings) and the top-level `errors` list is `inputErrors`; `summary.severities` counts
/// findings per severity (every severity, zeros included) and `summary.findingCount` all of
/// them; `summary.generator` says which castscope made the report, from which command line
/// and when.
public enum JSONReport {
    public static let schema = "castscope.report/2"

    public static func render(_ r: AnalysisReport, provenance: Provenance = .current()) -> String {
        renderBuffer(r, provenance: provenance).string
    }

    /// The document as UTF-8 bytes.
    public static func renderBytes(_ r: AnalysisReport, provenance: Provenance = .current()) -> [UInt8] {
        renderBuffer(r, provenance: provenance).bytes
    }

    /// The document in the buffer it was written into (what the CLI writes: neither a
    /// `String` nor a second copy of the whole report).
    public static func renderBuffer(_ r: AnalysisReport, provenance: Provenance = .current()) -> OutputBuffer {
        var w = JSONWriter(capacity: 1 << 16)
        documentBody(&w, r, provenance: provenance, sessionsWrittenElsewhere: nil)
        return w.takeLine()
    }

    /// One session as an element of the document's `sessions` array (`first`: no comma
    /// before it), for writing sessions as they end; `write` then writes what goes around
    /// the elements.
    public static func sessionElement(_ s: Session, first: Bool) -> [UInt8] {
        var w = JSONWriter(nestedAt: 2, first: first)
        session(&w, s)
        return w.bytes
    }

    /// The same element written out as it is made: its bytes go to `sink` a megabyte at a
    /// time (a session retrying for hours lists hundreds of thousands of attempts, tens of
    /// megabytes), and once more at the end. False when a write failed.
    public static func writeSessionElement(_ s: Session, first: Bool, to sink: @escaping (ArraySlice<UInt8>) -> Bool) -> Bool {
        var w = JSONWriter(nestedAt: 2, first: first)
        w.sink = sink
        session(&w, s)
        return w.finish()
    }

    /// The document written out as it is made (`JSONWriter.sink`), with elements written
    /// elsewhere: `fill(k)` writes what goes in gap `k` — when the report did not keep the
    /// findings of the sessions handed on (`handedOnFindings`), first their elements
    /// (`findingElement`) at the start of the `findings` array; then the `sessions` array's
    /// elements (`sessionElement`, `count` of them). False when a write failed.
    public static func write(_ r: AnalysisReport, provenance: Provenance = .current(), sessionCount count: Int,
                             to sink: @escaping (ArraySlice<UInt8>) -> Bool, fill: @escaping (Int) -> Bool) -> Bool
    {
        var w = JSONWriter(capacity: 1 << 16)
        w.sink = sink
        w.fill = fill
        documentBody(&w, r, provenance: provenance, sessionsWrittenElsewhere: count)
        return w.finishLine()
    }

    /// One finding as an element of the document's `findings` array.
    public static func findingElement(_ f: Finding, first: Bool) -> [UInt8] {
        var w = JSONWriter(nestedAt: 2, first: first)
        finding(&w, f)
        return w.bytes
    }

    static func documentBody(_ w: inout JSONWriter, _ r: AnalysisReport, provenance: Provenance, sessionsWrittenElsewhere: Int?) {
        w.open()
        w.string("schema", schema)
        w.open("summary")
        w.open("generator")
        w.string("name", "castscope")
        w.string("version", provenance.version)
        w.open("commandLine", array: true)
        for a in provenance.commandLine { w.string(nil, a) }
        w.close(array: true)
        w.string("generatedAt", provenance.generatedText)
        w.close()
        w.int("files", r.fileCount)
        w.int("events", r.eventCount)
        let tally = r.tally
        w.int("sessions", tally.count)
        w.open("outcomes")
        for o in Outcome.allCases {
            let n = tally.outcomes[o] ?? 0
            if n > 0 { w.int(o.rawValue, n) }
        }
        w.close()
        w.int("inputErrors", r.errors.count)
        w.int("relaySessions", r.relaySessions.count)
        let findings = r.findingTally
        w.int("findingCount", findings.count)
        w.open("severities")
        for (sev, n) in findings.severityCounts { w.int(sev.rawValue, n) }
        w.close()
        w.open("findings")
        for k in findings.kinds { w.int(k.kind, k.count) }
        w.close()
        w.close()
        clock(&w, r.clock)
        w.open("inputs", array: true)
        for i in r.inputs {
            w.open()
            w.string("path", i.path)
            w.string("format", i.format)
            w.int("lines", i.stats.lines)
            w.int("records", i.stats.records)
            w.int("unparsed", i.stats.unparsed)
            w.int("skipped", i.stats.skipped)
            w.int("events", i.events)
            if !i.stats.firstUnparsed.isEmpty {
                w.open("firstUnparsedLines", array: true)
                for l in i.stats.firstUnparsed { w.int(nil, l) }
                w.close(array: true)
            }
            w.open("errors", array: true)
            for e in i.errors { w.string(nil, e) }
            w.close(array: true)
            if !i.notes.isEmpty {
                w.open("notes", array: true)
                for n in i.notes { w.string(nil, n) }
                w.close(array: true)
            }
            w.close()
        }
        w.close(array: true)
        w.open("inputErrors", array: true)
        for e in r.errors { w.string(nil, e.description) }
        w.close(array: true)
        w.open("findings", array: true)
        if let handedOn = r.handedOnFindings { w.gap(count: handedOn.count) }
        for f in r.findings {
            finding(&w, f)
            w.flushIfFull()
        }
        w.close(array: true)
        w.open("sessions", array: true)
        if let count = sessionsWrittenElsewhere {
            w.gap(count: count)
        } else {
            for s in r.sessions {
                session(&w, s)
                w.flushIfFull()
            }
        }
        w.close(array: true)
        w.open("unattached", array: true)
        for e in r.unattached {
            event(&w, e, start: nil)
            w.flushIfFull()
        }
        w.close(array: true)
        w.open("relaySessions", array: true)
        for rs in r.relaySessions {
            relay(&w, rs, offset: 0)
            w.flushIfFull()
        }
        w.close(array: true)
        w.open("orphans")
        w.open("relaySessions", array: true)
        for i in r.relaySessions.orphanIndices {
            w.string(nil, r.relaySessions.id(Int(i)))
            w.flushIfFull()
        }
        w.close(array: true)
        w.open("deviceSessions", array: true)
        for id in r.orphanDeviceSessions { w.string(nil, id) }
        w.close(array: true)
        w.close()
        w.close()
    }

    static func finding(_ w: inout JSONWriter, _ f: Finding) {
        w.open()
        w.string("kind", f.kind)
        w.string("severity", f.severity.rawValue)
        w.string("session", f.session)
        w.string("time", time(f.time, f.displayOffset))
        w.string("message", f.message)
        w.open("evidence", array: true)
        for e in f.evidence { w.string(nil, e.description) }
        w.close(array: true)
        w.close()
    }

    static func clock(_ w: inout JSONWriter, _ c: ClockEstimate?) {
        guard let c else { w.raw("clock", "null"); return }
        w.open("clock")
        w.number("offsetSeconds", Double(c.offset) / 1e6)
        w.number("uncertaintySeconds", c.uncertainty.map { Double($0) / 1e6 })
        w.int("pairs", c.pairs)
        w.bool("forced", c.forced)
        w.string("meaning", "relay clock minus device clock")
        w.open("evidence", array: true)
        for (device, relay, diff) in c.evidence {
            w.open()
            w.string("device", device.description)
            w.string("relay", relay.description)
            w.number("differenceSeconds", Double(diff) / 1e6)
            w.close()
        }
        w.close(array: true)
        w.close()
    }

    /// A relay session, its times as the relay wrote them (`offset` 0) or on the device's axis.
    static func relay(_ w: inout JSONWriter, _ r: RelaySession, offset: Int64, key: String? = nil) {
        w.open(key)
        w.string("id", r.id)
        w.string("host", r.host)
        w.string("peer", r.peer)
        w.string("room", r.room)
        w.string("accepted", time(r.accepted, 0))
        w.string("closed", time(r.closed, 0))
        w.string("reason", r.reason)
        w.int("frames", r.frames)
        w.number("meanFps", r.meanFps, places: 2)
        w.int("stalls", r.stalls.count)
        w.int("errors", r.errors.count)
        w.string("deviceSession", r.deviceSession)
        w.string("source", r.firstSource?.description)
        // (only when it applies: every other relay object as before)
        if let note = r.backwardsNote { w.string("note", note) }
        w.close()
    }

    static func time(_ t: Int64?, _ offset: Int) -> String? { t.map { Fmt.rfc3339($0, offset: offset) } }
    static func seconds(_ us: Int64?) -> Double? { us.map { Double($0) / 1e6 } }

    static func session(_ w: inout JSONWriter, _ s: Session) {
        w.open()
        w.string("id", s.id)
        w.string("sdk", s.sdk)
        w.string("capture", s.capture)
        w.string("process", s.process)
        w.int("pid", s.pid)
        w.time("start", s.start, offset: s.displayOffset)
        w.time("end", s.end, offset: s.displayOffset)
        w.number("durationSeconds", seconds(s.duration))
        w.bool("startInferred", s.startInferred)
        w.string("outcome", s.outcome.rawValue)
        w.string("reason", s.reason)
        w.open("connect")
        w.int("attempts", s.attempts.count)
        w.int("failed", s.attempts.failedCount)
        w.time("connectedAt", s.connectedAt, offset: s.displayOffset)
        w.number("secondsToConnect", seconds(s.connectedAt.flatMap { c in s.start.map { c - $0 } }))
        if let c = s.attemptCadence {
            w.open("intervalMs")
            w.number("median", Double(c.median) / 1000, places: 3)
            w.number("max", Double(c.max) / 1000, places: 3)
            w.close()
        } else {
            w.raw("intervalMs", "null")
        }
        w.open("failures")
        for (cause, n) in s.failureCauses { w.int(cause, n) }
        w.close()
        w.open("list", array: true)
        // In order: a long session's attempts are read back from disk a block at a time.
        // Each element's keys, and each file and cause as JSON, made once for the list.
        let shape = w.elementShape(keys: ["time", "failure", "source"])
        let (time, failure, source) = (shape[0], shape[1], shape[2])
        let names = s.attempts.namesUsed
        var quoted = [OutputBuffer?](repeating: nil, count: names.count)
        var opened = [OutputBuffer?](repeating: nil, count: names.count)
        s.attempts.forEachNamed { t, line, path, cause in
            w.open(shape)
            w.time(time, t, offset: s.displayOffset)
            if let cause {
                if quoted[cause] == nil { quoted[cause] = OutputBuffer.jsonQuoted(names[cause]) }
                w.raw(failure, quoted[cause]!)
            } else {
                w.raw(failure, nil)
            }
            if opened[path] == nil { opened[path] = OutputBuffer.jsonOpened(names[path]) }
            w.source(source, opened: opened[path]!, line: line)
            w.close(shape)
            w.flushIfFull()
        }
        w.close(array: true)
        w.close()
        w.open("frames")
        w.int("count", s.frames)
        w.time("first", s.firstFrameAt, offset: s.displayOffset)
        w.time("last", s.lastFrameAt, offset: s.displayOffset)
        if let a = s.firstFrameAt, let b = s.lastFrameAt, b > a, s.frames > 1 {
            w.number("perSecond", Double(s.frames - 1) / (Double(b - a) / 1e6), places: 2)
        } else {
            w.raw("perSecond", "null")
        }
        // The relay's frames per interval, on the device's time axis: the frame series when
        // the device logs none.
        w.string("seriesSource", s.relay.map { _ in "relay" })
        w.open("series", array: true)
        // By index and code: `for e in` copied every line, and compared its kind's string.
        for i in s.events.indices where s.events[i].code == .relayStats {
            s.events[i].forEachStat { t, _, frames, fps, dropped in
                w.open()
                w.time("time", t, offset: s.displayOffset)
                w.number("t", t.flatMap { tt in s.start.map { Double(tt - $0) / 1e6 } })
                w.int("frames", frames)
                w.number("fps", fps, places: 2)
                w.int("dropped", dropped)
                w.close()
                w.flushIfFull()
            }
        }
        w.close(array: true)
        w.close()
        if let r = s.relay { relay(&w, r, offset: 0, key: "relay") } else { w.raw("relay", "null") }
        w.open("decidedBy", array: true)
        for i in s.deciding.indices {
            w.open()
            w.source("source", s.deciding[i].source)
            w.string("event", s.deciding[i].kind)
            w.string("message", s.deciding[i].message)
            w.close()
        }
        w.close(array: true)
        w.open("timeline", array: true)
        let rows = Timeline.rows(s.events)
        let row = w.elementShape(keys: ["time", "t", "side", "event", "message", "count", "source", "lastSource", "timeInferred"])
        for t in rows {
            w.open(row)
            w.time(row[0], t.time, offset: s.displayOffset)
            w.number(row[1], t.time.flatMap { tt in s.start.map { Double(tt - $0) / 1e6 } })
            w.string(row[2], t.side.rawValue)
            w.string(row[3], t.kind)
            w.string(row[4], t.text)
            w.int(row[5], t.count)
            w.source(row[6], t.first)
            if t.count > 1 { w.source(row[7], t.last) }
            if t.timeInferred { w.bool(row[8], true) }
            w.close(row)
            w.flushIfFull()
        }
        w.close(array: true)
        w.close()
    }

    static func event(_ w: inout JSONWriter, _ e: Event, start: Int64?) {
        w.open()
        w.string("time", time(e.time, e.displayOffset))
        w.string("side", e.side.rawValue)
        w.string("sdk", e.sdk)
        w.string("event", e.kind)
        w.string("process", e.process)
        w.int("pid", e.pid)
        w.string("message", e.message)
        w.string("source", e.source.description)
        w.close()
    }
}

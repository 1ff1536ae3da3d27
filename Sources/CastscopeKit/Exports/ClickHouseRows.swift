/// Rows for ClickHouse's `JSONEachRow`, written as bytes: one object per line, columns as in
/// `ClickHouseSchema.columns`. Every id is stable (derived from the bundle's content digest and
/// where the line is), so writing the same analysis twice gives the same rows in the same order.
public struct ClickHouseRowBuffer: Sendable {
    /// Written through the reports' byte buffer (JSON escaping by table, numbers without `String`).
    private var out: OutputBuffer
    public private(set) var rows = 0
    private var first = true

    public init(capacity: Int = 1 << 16) { out = OutputBuffer(capacity: capacity) }

    /// The columns `body` writes, as bytes to put into rows with `part(_:)` (each column with
    /// its leading comma): the columns a run of rows shares are written once.
    public static func part(_ body: (inout ClickHouseRowBuffer) -> Void) -> [UInt8] {
        var b = ClickHouseRowBuffer(capacity: 256)
        b.first = false
        body(&b)
        return b.bytes
    }

    /// Columns made by `part(_:)`, after at least one column of this row.
    public mutating func part(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { out.append($0) }
        first = false
    }

    public var bytes: [UInt8] { out.bytes }
    public var byteCount: Int { out.count }
    /// The rows' bytes lent, without a copy.
    public func withUnsafeBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try out.withUnsafeBytes { try body(UnsafeRawBufferPointer($0)) }
    }
    public mutating func begin() { out.byte(UInt8(ascii: "{")); first = true }
    public mutating func end() { out.byte(UInt8(ascii: "}")); out.byte(0x0A); rows += 1 }
    /// Empties the buffer and keeps its memory (the next batch is written into the same pages).
    public mutating func removeAll() { out.removeAll(keepingCapacity: true); rows = 0 }

    private mutating func key(_ k: StaticString) {
        out.jsonKey(k, comma: !first)
        first = false
    }

    private mutating func null() { out.append("null") }

    public mutating func string(_ k: StaticString, _ v: String?) { key(k); out.jsonString(v ?? "") }
    /// An id: the digest's 32 hex digits, written without a `String`.
    public mutating func digest(_ k: StaticString, _ d: Digest128) {
        key(k)
        out.byte(UInt8(ascii: "\""))
        d.hex(into: &out)
        out.byte(UInt8(ascii: "\""))
    }
    public mutating func int(_ k: StaticString, _ v: Int64) { key(k); out.int(Int(v)) }
    public mutating func uint(_ k: StaticString, _ v: UInt64) { key(k); out.unsigned(UInt(v)) }
    public mutating func optionalInt(_ k: StaticString, _ v: Int64?) {
        key(k)
        if let v { out.int(Int(v)) } else { null() }
    }
    public mutating func double(_ k: StaticString, _ v: Double?) {
        key(k)
        guard let v, v.isFinite else { null(); return }
        out.decimal(v, 6)
    }
    public mutating func strings(_ k: StaticString, _ v: [String]) {
        key(k)
        out.byte(UInt8(ascii: "["))
        for (i, s) in v.enumerated() {
            if i > 0 { out.byte(UInt8(ascii: ",")) }
            out.jsonString(s)
        }
        out.byte(UInt8(ascii: "]"))
    }
    /// A `DateTime` from µs since the epoch: whole seconds as a number (read as UTC by every
    /// ClickHouse version, whatever the server's time zone), held to the type's range (1970 to
    /// 2106: a damaged line's year 9999 must not be a value the server refuses or wraps).
    public mutating func dateTime(_ k: StaticString, _ micros: Int64?) {
        key(k)
        let s = min(Int64(UInt32.max), max(0, (micros ?? 0).floorDiv(1_000_000)))
        out.int(Int(s))
    }
}

/// Turns an analysis into rows for the four tables.
public struct ClickHouseRows {
    /// The castscope version that wrote a row; rows of a newer version replace older ones.
    public static let castscopeVersion = "0.1.0"
    /// `Version` = version code × 10^13 + revision (ms; 0 for `analyze`, the update time for
    /// `tail`): a newer castscope always wins, and within one version the latest update wins.
    public static func version(revision: UInt64 = 0) -> UInt64 {
        let parts = castscopeVersion.split(separator: ".").map { UInt64($0) ?? 0 } + [0, 0, 0]
        let code = parts[0] * 1_000_000 + parts[1] * 1_000 + parts[2]
        return code * 10_000_000_000_000 + revision % 10_000_000_000_000
    }

    public let bundleId: String
    public let version: UInt64

    public init(bundleId: String, version: UInt64 = ClickHouseRows.version()) {
        self.bundleId = bundleId
        self.version = version
    }

    /// `severity(kind)` of a coded kind, worked out once per code (the string tests were ~700
    /// instructions a row).
    static let severityByCode: [(String, Int64)] = KindCode.allCases.map { severity($0.name) }

    /// An event's `severity(kind)`, by its kind's code when it has one.
    static func severity(_ e: Event) -> (String, Int64) {
        e.code == .other ? severity(e.kind) : severityByCode[Int(e.code.rawValue)]
    }

    /// Severity of a recognized line (OpenTelemetry's numbers: INFO 9, WARN 13, ERROR 17).
    public static func severity(_ kind: String) -> (String, Int64) {
        if kind.hasSuffix("error") || kind.hasSuffix("failed") || kind.hasPrefix("extension.killed") || kind.hasSuffix("gave_up") {
            return ("ERROR", 17)
        }
        if kind.hasSuffix("stalled") || kind.hasSuffix("dropped") || kind.hasSuffix("closed_by_peer") { return ("WARN", 13) }
        return ("INFO", 9)
    }

    public static func severity(_ s: Severity) -> (String, Int64) {
        switch s {
        case .info: return ("INFO", 9)
        case .warning: return ("WARN", 13)
        case .error: return ("ERROR", 17)
        }
    }

    public func sessionId(_ s: Session) -> String {
        let first = s.events.first.map { $0.source.description } ?? ""
        return Digest128.of(bundleId, "device", s.process ?? "", s.pid.map(String.init) ?? "", first)
    }

    public func relaySessionId(_ r: RelaySession) -> String { Digest128.of(bundleId, "relay", r.host ?? "", r.id) }

    /// The stable id of one log line: bundle digest + source file + line.
    public func recordId(path: String, line: Int) -> String { recordId(prefix: recordPrefix(path), line: line).hex() }

    /// The digest state after the bundle and the file: a line's id continues from it (the same
    /// digest as `recordId(path:line:)`, without hashing the path again for every line).
    func recordPrefix(_ path: String) -> Digest128 {
        var d = Digest128()
        d.update(bundleId)
        d.update(path)
        return d
    }

    func recordId(prefix: Digest128, line: Int) -> Digest128 {
        var d = prefix
        d.update(decimal: line)
        return d
    }

    /// `emit` is called whenever `b` holds at least `batchRows` rows (a relay fleet's bundle has
    /// tens of thousands of relay sessions), as for the events.
    public func sessions(_ r: AnalysisReport, into b: inout ClickHouseRowBuffer, sessionId: ((Session) -> String)? = nil,
                         batchRows: Int = .max, emit: (inout ClickHouseRowBuffer) -> Void = { _ in })
    {
        let sessionId = sessionId ?? self.sessionId
        let kinds = r.findingsBySession()
        for s in r.sessions {
            session(s, id: sessionId(s), clock: r.clock, findingKinds: (kinds[s.id] ?? []).map(\.kind), into: &b)
            if b.rows >= batchRows { emit(&b) }
        }
        for rs in r.relaySessions where rs.deviceSession == nil {
            relayOnly(rs, clock: r.clock, findings: [], into: &b)
            if b.rows >= batchRows { emit(&b) }
        }
    }

    /// One device session's row.
    public func session(_ s: Session, id: String, clock: ClockEstimate?, findingKinds: [String], into b: inout ClickHouseRowBuffer) {
        b.begin()
        b.string("SessionId", id)
        b.string("BundleId", bundleId)
        b.string("SessionKind", "device")
        b.string("ReportId", s.id)
        b.dateTime("Timestamp", s.start ?? s.events.first?.time)
        b.int("TimestampMicros", s.start ?? s.events.first?.time ?? 0)
        b.optionalInt("EndMicros", s.end)
        b.double("DurationSeconds", s.duration.map { Double($0) / 1e6 })
        b.string("ServiceName", s.process)
        b.string("Sdk", s.sdk)
        b.optionalInt("Pid", s.pid.map(Int64.init))
        b.string("DeviceId", s.relay?.peer)
        b.string("AppId", s.events.lazy.compactMap { $0.attr("bundle") }.first)
        b.string("ExtensionId", "\(s.process ?? "?")[\(s.pid.map(String.init) ?? "?")]")
        b.string("Outcome", s.outcome.rawValue)
        b.string("Reason", s.reason)
        b.int("StartInferred", s.startInferred ? 1 : 0)
        b.int("Attempts", Int64(s.attempts.count))
        b.int("FailedAttempts", Int64(s.attempts.failedCount))
        b.double("SecondsToConnect", s.connectedAt.flatMap { c in s.start.map { Double(c - $0) / 1e6 } })
        b.int("Frames", Int64(s.frames))
        var fps: Double?
        if let a = s.firstFrameAt, let z = s.lastFrameAt, z > a, s.frames > 1 { fps = Double(s.frames - 1) / (Double(z - a) / 1e6) }
        b.double("FramesPerSecond", fps)
        relayColumns(s.relay, into: &b)
        clockColumns(clock, joined: s.relay != nil, into: &b)
        closeSessionRow(findingKinds: findingKinds, first: s.events.first?.source, into: &b)
    }

    public func relayOnly(_ rs: RelaySession, clock: ClockEstimate?, findings: [String], into b: inout ClickHouseRowBuffer) {
        b.begin()
        b.string("SessionId", relaySessionId(rs))
        b.string("BundleId", bundleId)
        b.string("SessionKind", "relay")
        b.string("ReportId", rs.id)
        b.dateTime("Timestamp", rs.start)
        b.int("TimestampMicros", rs.start ?? 0)
        b.optionalInt("EndMicros", rs.end)
        b.double("DurationSeconds", rs.duration.map { Double($0) / 1e6 })
        b.string("ServiceName", rs.firstProcess)
        b.string("Sdk", "")
        b.optionalInt("Pid", rs.firstPid.map(Int64.init))
        b.string("DeviceId", rs.peer)
        b.string("AppId", "")
        b.string("ExtensionId", "")
        b.string("Outcome", rs.closed == nil ? "truncated" : "unknown")
        b.string("Reason", [rs.reason.map { "relay closed: \($0)" }, rs.backwardsNote].compactMap { $0 }.joined(separator: "; "))
        b.int("StartInferred", rs.accepted == nil ? 1 : 0)
        b.int("Attempts", 0)
        b.int("FailedAttempts", 0)
        b.double("SecondsToConnect", nil)
        b.int("Frames", Int64(rs.frames ?? 0))
        b.double("FramesPerSecond", nil)
        relayColumns(rs, into: &b)
        clockColumns(clock, joined: false, into: &b)
        closeSessionRow(findingKinds: findings, first: rs.firstSource, into: &b)
    }

    /// The columns a session row ends with, device or relay: its findings, its first line, the
    /// version that wrote it.
    func closeSessionRow(findingKinds: [String], first: SourceRef?, into b: inout ClickHouseRowBuffer) {
        b.strings("FindingKinds", findingKinds)
        b.string("SourceFile", first?.path)
        b.int("SourceLine", Int64(first?.line ?? 0))
        b.string("CastscopeVersion", Self.castscopeVersion)
        b.uint("Version", version)
        b.end()
    }

    func relayColumns(_ r: RelaySession?, into b: inout ClickHouseRowBuffer) {
        b.string("RelayHost", r?.host)
        b.string("RelaySessionId", r?.id)
        b.string("RelayRoom", r?.room)
        b.string("RelayReason", r?.reason)
        b.optionalInt("RelayFrames", r?.frames.map(Int64.init))
        b.double("RelayMeanFps", r?.meanFps)
        b.int("RelayStalls", Int64(r?.stalls.count ?? 0))
    }

    func clockColumns(_ c: ClockEstimate?, joined: Bool, into b: inout ClickHouseRowBuffer) {
        b.double("ClockOffsetSeconds", joined ? c.map { Double($0.offset) / 1e6 } : nil)
        b.double("ClockBoundSeconds", joined ? c?.uncertainty.map { Double($0) / 1e6 } : nil)
    }

    /// Every recognized line, one row each (a folded run of frame lines is one row per line).
    /// `emit` is called whenever `b` holds at least `batchRows` rows, so memory stays bounded.
    public func events(_ r: AnalysisReport, into b: inout ClickHouseRowBuffer, batchRows: Int = .max,
                       emit: (inout ClickHouseRowBuffer) -> Void = { _ in })
    {
        var ids = RecordIds()
        for s in r.sessions { events(of: s, shift: relayShift(r), ids: &ids, into: &b, batchRows: batchRows, emit: emit) }
        for e in r.unattached { event(e, sessionId: "", host: nil, shift: 0, ids: &ids, into: &b, batchRows: batchRows, emit: emit) }
        for rs in r.relaySessions where rs.deviceSession == nil {
            let sid = relaySessionId(rs)
            for e in rs.events { event(e, sessionId: sid, host: rs.host, shift: 0, ids: &ids, into: &b, batchRows: batchRows, emit: emit) }
        }
    }

    /// One device session's lines (`shift`: the relay clock's offset, for its relay lines).
    func events(of s: Session, shift: Int64, ids: inout RecordIds, into b: inout ClickHouseRowBuffer, batchRows: Int,
                emit: (inout ClickHouseRowBuffer) -> Void)
    {
        let sid = sessionId(s)
        let host = s.relay?.host
        // The session's lines in time order (a folded run's lines interleave with the
        // others), numbered: `SessionSeq` orders lines whose times tie (second-resolution
        // logs), which `windowFunnel` needs. Merged, not listed (`LineOrder`): a retry
        // storm's rows are hundreds of thousands of lines of one session.
        let events = s.events
        let folds = events.contains(where: \.foldsLines)
        typealias Line = (time: Int64, event: Int32, line: Int32)
        // The single lines in list order, and each run's lines.
        var cursors: [LineOrder.Cursor<Line>] = [{
            var i = 0
            return AnyIterator {
                while i < events.count, events[i].repeats != nil { i += 1 }
                guard i < events.count else { return nil }
                defer { i += 1 }
                let t = events[i].time ?? Int64.min
                // A line stands where it stood as an event of its own (`Event.forEachLinePlace`),
                // so that lines whose times tie keep their order (not every attempt before every
                // failure); without folded connect lines, by time, then list order.
                let key = folds ? LineKey(a: t, b: t, c: Int64(events[i].order), d: 0) : LineKey(a: t, b: Int64(i), c: 0, d: 0)
                return (key, (t, Int32(i), Int32(truncatingIfNeeded: events[i].line)))
            }
        }]
        for i in events.indices where events[i].repeats != nil {
            cursors.append {
                let places = events[i].linePlaces()
                var k = 0
                return AnyIterator {
                    guard let (time, line, place) = places.next() else { return nil }
                    defer { k += 1 }
                    let t = time ?? Int64.min
                    let key = folds ? LineKey(a: t, b: place.time, c: Int64(place.order), d: Int64(place.k))
                        : LineKey(a: t, b: Int64(i), c: Int64(k), d: 0)
                    return (key, (t, Int32(i), Int32(truncatingIfNeeded: line)))
                }
            }
        }
        let sessionPart = self.sessionPart(sid)
        var eventParts = [[UInt8]?](repeating: nil, count: s.events.count)
        // The texts of runs whose lines differ, a line at a time as the merge takes them.
        var lineTexts: [Int: AnyIterator<Event.Text>] = [:]
        for i in events.indices where events[i].linesDiffer { lineTexts[i] = events[i].lineTexts() }
        var seq = 0
        LineOrder.merge(cursors) { _, l in
            seq += 1
            let i = Int(l.event)
            let e = events[i]
            // Relay lines are shown on the device's clock in the session; the table keeps
            // the relay's own times (as `relaySessions` does in the JSON report).
            let relay = e.side == .relay
            let time: Int64? = l.time == Int64.min ? nil : l.time + (relay ? shift : 0)
            var part: [UInt8]
            if let texts = lineTexts[i] {
                let line = e.with(text: texts.next()!)
                part = eventPart(line, host: relay ? host : line.attr("host"))
            } else {
                if eventParts[i] == nil { eventParts[i] = eventPart(e, host: relay ? host : e.attr("host")) }
                part = eventParts[i]!
            }
            row(recordId: ids.id(self, e.sourcePath, Int(l.line)), session: sessionPart, seq: seq, time: time,
                event: part, line: Int(l.line), into: &b)
            if b.rows >= batchRows { emit(&b) }
        }
    }

    /// Record ids of lines in a run of the same file: the digest of the bundle and the path is
    /// computed once per file, each line's id continues from it.
    struct RecordIds {
        var path: String?
        var prefix = Digest128()
        mutating func id(_ rows: ClickHouseRows, _ p: String, _ line: Int) -> Digest128 {
            if path != p {
                path = p
                prefix = rows.recordPrefix(p)
            }
            return rows.recordId(prefix: prefix, line: line)
        }
    }

    /// Relay events inside a device session were moved by −offset onto the device's clock.
    func relayShift(_ r: AnalysisReport) -> Int64 { r.clock?.offset ?? 0 }

    /// One recognized line outside the analysis' loop (tail): `recordId` when it has a stable id
    /// of its own (a journal cursor's digest).
    public func event(_ e: Event, sessionId: String, host: String?, shift: Int64, recordId fixedId: Digest128? = nil,
                      into b: inout ClickHouseRowBuffer)
    {
        var ids = RecordIds()
        event(e, sessionId: sessionId, host: host, shift: shift, fixedId: fixedId, ids: &ids, into: &b)
    }

    func event(_ e: Event, sessionId: String, host: String?, shift: Int64, fixedId: Digest128? = nil, ids: inout RecordIds,
               into b: inout ClickHouseRowBuffer, batchRows: Int = .max, emit: (inout ClickHouseRowBuffer) -> Void = { _ in })
    {
        let sessionPart = self.sessionPart(sessionId)
        let eventPart = self.eventPart(e, host: host ?? e.attr("host"))
        let texts = e.linesDiffer ? e.lineTexts() : nil
        e.forEachTimeAndLine { t, line in
            let part = texts.map { self.eventPart(e.with(text: $0.next()!), host: host ?? e.attr("host")) } ?? eventPart
            row(recordId: fixedId ?? ids.id(self, e.sourcePath, line), session: sessionPart, seq: 0, time: t.map { $0 + shift },
                event: part, line: line, into: &b)
            if b.rows >= batchRows { emit(&b) }
        }
    }

    /// An event row's columns in order: the ones that differ per line are written here, the
    /// ones a session's rows share (`sessionPart`) and an event's lines share (`eventPart`)
    /// are copied in.
    func row(recordId: Digest128, session: [UInt8], seq: Int, time: Int64?, event: [UInt8], line: Int,
             into b: inout ClickHouseRowBuffer)
    {
        b.begin()
        b.digest("RecordId", recordId)
        b.part(session)
        b.int("SessionSeq", Int64(seq))
        b.dateTime("Timestamp", time)
        b.int("TimestampMicros", time ?? 0)
        b.part(event)
        b.int("SourceLine", Int64(line))
        b.uint("Version", version)
        b.end()
    }

    func sessionPart(_ sessionId: String) -> [UInt8] {
        ClickHouseRowBuffer.part {
            $0.string("BundleId", bundleId)
            $0.string("SessionId", sessionId)
        }
    }

    func eventPart(_ e: Event, host: String?) -> [UInt8] {
        let (sevText, sevNumber) = Self.severity(e)
        return ClickHouseRowBuffer.part { b in
            b.int("TimeInferred", e.timeInferred ? 1 : 0)
            b.string("SeverityText", sevText)
            b.int("SeverityNumber", sevNumber)
            b.string("ServiceName", e.process)
            b.string("Side", e.side.rawValue)
            b.string("Sdk", e.sdk)
            b.string("EventName", e.kind)
            b.string("Body", e.message)
            b.optionalInt("Pid", e.pid.map(Int64.init))
            b.string("HostName", host)
            b.string("SourceFile", e.sourcePath)
        }
    }

    public func findings(_ r: AnalysisReport, into b: inout ClickHouseRowBuffer, batchRows: Int = .max,
                         emit: (inout ClickHouseRowBuffer) -> Void = { _ in })
    {
        let byId = Dictionary(r.sessions.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var previous: Finding?
        for n in r.findings.indices {
            let (f, orphan) = r.findings.withRelaySession(n)
            let s = f.session.flatMap { byId[$0] }
            var sid = s.map(sessionId) ?? ""
            var host = s?.relay?.host
            // An orphan-relay-session finding is keyed by the relay session it is about.
            if let rs = orphan {
                sid = relaySessionId(rs)
                host = rs.host
            }
            finding(f, index: n, previous: previous, sessionId: sid, sdk: s?.sdk, host: host, into: &b)
            previous = f
            if b.rows >= batchRows { emit(&b) }
        }
    }

    /// A finding at `index` in the report's findings, after `previous`.
    public func finding(_ f: Finding, index n: Int, previous: Finding?, sessionId: String, sdk: String?, host: String?,
                        into b: inout ClickHouseRowBuffer)
    {
        let repeated = previous.map { $0.kind == f.kind && $0.evidence == f.evidence && $0.message == f.message } ?? false
        finding(f, sessionId: sessionId, sdk: sdk, host: host, repeated: repeated ? String(n) : "", into: &b)
    }

    /// One finding's row. Its id is made of what the finding is about, so that the same finding
    /// found again (a re-analysis, a restarted tail) replaces its row: evidence makes two
    /// findings of one kind in one session distinct; the finding's index only when a rule gave two findings
    /// with the very same evidence (`repeated`).
    /// `id` replaces that when the evidence's places are not stable (tail's line numbers
    /// count from its start).
    public func finding(_ f: Finding, sessionId sid: String, sdk: String?, host: String?, repeated: String = "",
                        id: String? = nil, into b: inout ClickHouseRowBuffer)
    {
        let (sevText, sevNumber) = Self.severity(f.severity)
        let evidence = f.evidence.map(\.description)
        b.begin()
        b.string("FindingId", id ?? Digest128.of(bundleId, f.kind, f.session ?? "", sid, evidence.joined(separator: " "),
                                                 evidence.isEmpty ? f.message : "", repeated))
        b.string("BundleId", bundleId)
        b.string("SessionId", sid)
        b.dateTime("Timestamp", f.time)
        b.int("TimestampMicros", f.time ?? 0)
        b.string("Kind", f.kind)
        b.string("SeverityText", sevText)
        b.int("SeverityNumber", sevNumber)
        b.string("Body", f.message)
        b.strings("Evidence", evidence)
        b.string("Sdk", sdk)
        b.string("RelayHost", host)
        b.uint("Version", version)
        b.end()
    }

    /// The earliest time in the bundle: the inputs' rows are partitioned by it (not by the time
    /// of the analysis, so that a re-analysis lands in the same partition and replaces them).
    public static func bundleTime(_ r: AnalysisReport) -> Int64? {
        let times = r.sessions.compactMap { $0.start ?? $0.events.first?.time } + r.unattached.compactMap(\.time)
            + [r.relaySessions.earliestStart].compactMap { $0 }
        return times.min()
    }

    /// `bundleTime`: the earliest time when the report no longer holds its sessions (they were
    /// handed on as they ended).
    public func inputs(_ r: AnalysisReport, bundleTime: Int64?? = nil, into b: inout ClickHouseRowBuffer) {
        let analyzedAt = bundleTime ?? Self.bundleTime(r)
        for i in r.inputs {
            b.begin()
            // A segment of a file (its lines in another format) has the file's path: its format
            // tells its row from the file's.
            b.string("InputId", i.segmentOf == nil ? Digest128.of(bundleId, i.path) : Digest128.of(bundleId, i.path, i.format ?? ""))
            b.string("BundleId", bundleId)
            b.dateTime("Timestamp", analyzedAt)
            b.string("Path", i.path)
            b.string("Format", i.format)
            b.int("Lines", Int64(i.stats.lines))
            b.int("Records", Int64(i.stats.records))
            b.int("Unparsed", Int64(i.stats.unparsed))
            b.int("Events", Int64(i.events))
            b.strings("Errors", i.errors)
            b.uint("Version", version)
            b.end()
        }
    }
}

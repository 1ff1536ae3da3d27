/// Rows for ClickHouse's `JSONEachRow`, written as bytes: one object per line, columns as in
/// `ClickHouseSchema.columns`. Every id is stable (derived from the bundle's content digest and
/// where the line is), so writing the same analysis twice gives the same rows in the same order.
public struct ClickHouseRowBuffer: Sendable {
    public private(set) var bytes: [UInt8] = []
    public private(set) var rows = 0
    private var first = true

    public init() { bytes.reserveCapacity(1 << 16) }

    public mutating func begin() { bytes.append(UInt8(ascii: "{")); first = true }
    public mutating func end() { bytes.append(UInt8(ascii: "}")); bytes.append(0x0A); rows += 1 }
    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true); rows = 0 }

    private mutating func key(_ k: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        k.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// A JSON string: runs of bytes that need no escape are appended whole.
    private mutating func quoted(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { u in
            var runStart = 0
            var i = 0
            let n = u.count
            while i < n {
                let b = u[i]
                if b >= 0x20 && b != UInt8(ascii: "\"") && b != UInt8(ascii: "\\") && b != 0x7F { i += 1; continue }
                if i > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[runStart..<i])) }
                switch b {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(b)
                case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
                default:
                    let hex: StaticString = "0123456789abcdef"
                    let h = hex.utf8Start
                    bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), 0x30, 0x30, h[Int(b >> 4)], h[Int(b & 15)]])
                }
                i += 1
                runStart = i
            }
            if n > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[runStart..<n])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func digits(_ v: Int64) {
        if v == 0 { bytes.append(0x30); return }
        var x = v.magnitude
        if v < 0 { bytes.append(UInt8(ascii: "-")) }
        var tmp: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &tmp) { t in
            while x > 0 { t[n] = UInt8(x % 10) + 0x30; x /= 10; n += 1 }
            for k in stride(from: n - 1, through: 0, by: -1) { bytes.append(t[k]) }
        }
    }

    private mutating func null() {
        let n: StaticString = "null"
        n.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func string(_ k: StaticString, _ v: String?) { key(k); quoted(v ?? "") }
    public mutating func int(_ k: StaticString, _ v: Int64) { key(k); digits(v) }
    public mutating func uint(_ k: StaticString, _ v: UInt64) { key(k); bytes.append(contentsOf: Array(String(v).utf8)) }
    public mutating func optionalInt(_ k: StaticString, _ v: Int64?) {
        key(k)
        if let v { digits(v) } else { null() }
    }
    public mutating func double(_ k: StaticString, _ v: Double?) {
        key(k)
        guard let v, v.isFinite else { null(); return }
        bytes.append(contentsOf: Array(Fmt.decimal(v, 6).utf8))
    }
    public mutating func strings(_ k: StaticString, _ v: [String]) {
        key(k)
        bytes.append(UInt8(ascii: "["))
        for (i, s) in v.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            quoted(s)
        }
        bytes.append(UInt8(ascii: "]"))
    }
    /// A `DateTime` from µs since the epoch: whole seconds as a number (read as UTC by every
    /// ClickHouse version, whatever the server's time zone).
    public mutating func dateTime(_ k: StaticString, _ micros: Int64?) {
        key(k)
        let s = max(0, (micros ?? 0) >= 0 ? (micros ?? 0) / 1_000_000 : ((micros ?? 0) - 999_999) / 1_000_000)
        digits(s)
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
    public func recordId(path: String, line: Int) -> String { Digest128.of(bundleId, path, String(line)) }

    public func sessions(_ r: AnalysisReport, into b: inout ClickHouseRowBuffer, sessionId: ((Session) -> String)? = nil) {
        let sessionId = sessionId ?? self.sessionId
        let kinds = Dictionary(grouping: r.findings.filter { $0.session != nil }, by: { $0.session! })
        for s in r.sessions {
            b.begin()
            b.string("SessionId", sessionId(s))
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
            b.int("FailedAttempts", Int64(s.attempts.filter { $0.failure != nil }.count))
            b.double("SecondsToConnect", s.connectedAt.flatMap { c in s.start.map { Double(c - $0) / 1e6 } })
            b.int("Frames", Int64(s.frames))
            var fps: Double?
            if let a = s.firstFrameAt, let z = s.lastFrameAt, z > a, s.frames > 1 { fps = Double(s.frames - 1) / (Double(z - a) / 1e6) }
            b.double("FramesPerSecond", fps)
            relayColumns(s.relay, into: &b)
            clockColumns(r.clock, joined: s.relay != nil, into: &b)
            b.strings("FindingKinds", (kinds[s.id] ?? []).map(\.kind))
            b.string("SourceFile", s.events.first?.source.path)
            b.int("SourceLine", Int64(s.events.first?.source.line ?? 0))
            b.string("CastscopeVersion", Self.castscopeVersion)
            b.uint("Version", version)
            b.end()
        }
        for rs in r.relaySessions where rs.deviceSession == nil {
            relayOnly(rs, clock: r.clock, findings: [], into: &b)
        }
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
        b.double("DurationSeconds", rs.start.flatMap { s in rs.end.map { Double($0 - s) / 1e6 } })
        b.string("ServiceName", rs.events.first?.process)
        b.string("Sdk", "")
        b.optionalInt("Pid", rs.events.first?.pid.map(Int64.init))
        b.string("DeviceId", rs.peer)
        b.string("AppId", "")
        b.string("ExtensionId", "")
        b.string("Outcome", rs.closed == nil ? "truncated" : "unknown")
        b.string("Reason", rs.reason.map { "relay closed: \($0)" } ?? "")
        b.int("StartInferred", rs.accepted == nil ? 1 : 0)
        b.int("Attempts", 0)
        b.int("FailedAttempts", 0)
        b.double("SecondsToConnect", nil)
        b.int("Frames", Int64(rs.frames ?? 0))
        b.double("FramesPerSecond", nil)
        relayColumns(rs, into: &b)
        clockColumns(clock, joined: false, into: &b)
        b.strings("FindingKinds", findings)
        b.string("SourceFile", rs.events.first?.source.path)
        b.int("SourceLine", Int64(rs.events.first?.source.line ?? 0))
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
        let fps = r?.stats.map(\.fps) ?? []
        b.double("RelayMeanFps", fps.isEmpty ? nil : fps.reduce(0, +) / Double(fps.count))
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
        for s in r.sessions {
            let sid = sessionId(s)
            let host = s.relay?.host
            // The session's lines in time order (a folded run's lines interleave with the
            // others), numbered: `SessionSeq` orders lines whose times tie (second-resolution
            // logs), which `windowFunnel` needs.
            var lines: [(time: Int64, event: Int32, k: Int32, line: Int32)] = []
            for (i, e) in s.events.enumerated() {
                var k: Int32 = 0
                e.forEachTimeAndLine { t, line in
                    lines.append((t ?? Int64.min, Int32(i), k, Int32(line)))
                    k += 1
                }
            }
            lines.sort { ($0.time, $0.event, $0.k) < ($1.time, $1.event, $1.k) }
            let shift = relayShift(r)
            for (seq, l) in lines.enumerated() {
                let e = s.events[Int(l.event)]
                // Relay lines are shown on the device's clock in the session; the table keeps
                // the relay's own times (as `relaySessions` does in the JSON report).
                let relay = e.side == .relay
                let time: Int64? = l.time == Int64.min ? nil : l.time + (relay ? shift : 0)
                row(e, time: time, line: Int(l.line), seq: seq + 1, sessionId: sid, host: relay ? host : e.attr("host"),
                    recordId: nil, into: &b)
                if b.rows >= batchRows { emit(&b) }
            }
        }
        for e in r.unattached { event(e, sessionId: "", host: nil, shift: 0, into: &b, batchRows: batchRows, emit: emit) }
        for rs in r.relaySessions where rs.deviceSession == nil {
            let sid = relaySessionId(rs)
            for e in rs.events { event(e, sessionId: sid, host: rs.host, shift: 0, into: &b, batchRows: batchRows, emit: emit) }
        }
    }

    /// Relay events inside a device session were moved by −offset onto the device's clock.
    func relayShift(_ r: AnalysisReport) -> Int64 { r.clock?.offset ?? 0 }

    public func event(_ e: Event, sessionId: String, host: String?, shift: Int64, recordId fixedId: String? = nil,
                      into b: inout ClickHouseRowBuffer,
                      batchRows: Int = .max, emit: (inout ClickHouseRowBuffer) -> Void = { _ in })
    {
        let hostName = host ?? e.attr("host")
        e.forEachTimeAndLine { t, line in
            row(e, time: t.map { $0 + shift }, line: line, seq: 0, sessionId: sessionId, host: hostName, recordId: fixedId, into: &b)
            if b.rows >= batchRows { emit(&b) }
        }
    }

    func row(_ e: Event, time: Int64?, line: Int, seq: Int, sessionId: String, host: String?, recordId fixedId: String?,
             into b: inout ClickHouseRowBuffer)
    {
        let (sevText, sevNumber) = Self.severity(e.kind)
        let path = e.source.path
        let hostName = host
        let pid = e.pid.map(Int64.init)
        do {
            b.begin()
            b.string("RecordId", fixedId ?? recordId(path: path, line: line))
            b.string("BundleId", bundleId)
            b.string("SessionId", sessionId)
            b.int("SessionSeq", Int64(seq))
            b.dateTime("Timestamp", time)
            b.int("TimestampMicros", time ?? 0)
            b.int("TimeInferred", e.timeInferred ? 1 : 0)
            b.string("SeverityText", sevText)
            b.int("SeverityNumber", sevNumber)
            b.string("ServiceName", e.process)
            b.string("Side", e.side.rawValue)
            b.string("Sdk", e.sdk)
            b.string("EventName", e.kind)
            b.string("Body", e.message)
            b.optionalInt("Pid", pid)
            b.string("HostName", hostName)
            b.string("SourceFile", path)
            b.int("SourceLine", Int64(line))
            b.uint("Version", version)
            b.end()
        }
    }

    public func findings(_ r: AnalysisReport, into b: inout ClickHouseRowBuffer) {
        let byId = Dictionary(r.sessions.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for (n, f) in r.findings.enumerated() {
            let s = f.session.flatMap { byId[$0] }
            var sid = s.map(sessionId) ?? ""
            var host = s?.relay?.host
            // Bundle-level findings about a relay session (orphan-relay-session) name it in
            // their evidence' lines; key them by the relay session when the message names one.
            if s == nil, let rs = r.relaySessions.first(where: { $0.deviceSession == nil && f.message.contains($0.id) }) {
                sid = relaySessionId(rs)
                host = rs.host
            }
            let repeated = n > 0 && r.findings[n - 1].kind == f.kind && r.findings[n - 1].evidence == f.evidence
                && r.findings[n - 1].message == f.message
            finding(f, sessionId: sid, sdk: s?.sdk, host: host, repeated: repeated ? String(n) : "", into: &b)
        }
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
            + r.relaySessions.compactMap(\.start)
        return times.min()
    }

    public func inputs(_ r: AnalysisReport, into b: inout ClickHouseRowBuffer) {
        let analyzedAt = Self.bundleTime(r)
        for i in r.inputs {
            b.begin()
            b.string("InputId", Digest128.of(bundleId, i.path))
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

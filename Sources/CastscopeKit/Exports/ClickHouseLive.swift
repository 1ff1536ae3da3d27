#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `castscope tail --clickhouse`: recognized lines, session changes and findings as rows, sent when the
/// follower flushes — and `flush` returns only once ClickHouse acknowledged them, so the
/// journal cursor (saved after the flush) never gets ahead of what is in ClickHouse. While
/// ClickHouse is unreachable it retries with backoff (the follower waits; the journal keeps
/// the entries), says so on stderr once, and says when it is back and caught up.
///
/// Ids: a journal entry's row id is the digest of its cursor, so an entry read again after a
/// crash (before its cursor was saved) replaces its row; sessions are keyed by what starts
/// them (process, pid and start time; the relay's host and session id).
public final class ClickHouseLive: @unchecked Sendable {
    let target: ClickHouseTarget
    let rows: ClickHouseRows
    var events = ClickHouseRowBuffer()
    var sessions = ClickHouseRowBuffer()
    var findings = ClickHouseRowBuffer()
    /// Rows from the journal are pending: the next flush must send them (a cursor follows it).
    var journalPending = false
    var oldestPending: Int64?
    var outageSince: Int64?
    var failedAttempts = 0
    public private(set) var written = 0
    /// Rows from standard input wait for this many rows or this long (µs) before a send.
    public var batchRows = 10_000
    public var batchMicros: Int64 = 1_000_000
    public var retry = RetryPolicy(attempts: nil, firstDelay: 0.25, maxDelay: 5)
    let shouldStop: () -> Bool
    let log: (String) -> Void

    /// `streamId` names the machine or relay the tail runs for (it takes a bundle's place).
    public init(target: ClickHouseTarget, streamId: String, shouldStop: @escaping () -> Bool,
                log: @escaping (String) -> Void = { fputs("castscope tail: \(Sanitize.line($0))\n", stderr) })
    {
        self.target = target
        rows = ClickHouseRows(bundleId: Digest128.of("tail", streamId))
        self.shouldStop = shouldStop
        self.log = log
    }

    static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    func relaySessionId(id: String, host: String?) -> String {
        var r = RelaySession(id: id)
        r.host = host
        return rows.relaySessionId(r)
    }

    func deviceSessionId(_ s: Session) -> String {
        Digest128.of(rows.bundleId, "device", s.process ?? "", s.pid.map(String.init) ?? "", s.start.map(String.init) ?? "")
    }

    /// One recognized line (`cursor` for journal entries).
    public func event(_ e: Event, cursor: String?) {
        let id = cursor.map { Digest128.digest("journal", $0) }
            ?? Digest128.digest(rows.bundleId, e.sourcePath, e.time.map(String.init) ?? "", e.message)
        let sid = e.side == .relay ? e.attr("session").map { relaySessionId(id: $0, host: e.attr("host")) } ?? "" : ""
        rows.event(e, sessionId: sid, host: e.attr("host"), shift: 0, recordId: id, into: &events)
        if cursor != nil { journalPending = true }
        if oldestPending == nil { oldestPending = Self.now() }
    }

    /// A session started, connected, stalled or ended: its row as it is now (a later version
    /// replaces it).
    public func change(_ c: LiveSessions.Change) {
        let revision = ClickHouseRows.version(revision: UInt64(Self.now() / 1000))
        let r = ClickHouseRows(bundleId: rows.bundleId, version: revision)
        switch c {
        case .started(let s), .connected(let s), .stalled(let s, _), .ended(let s), .joined(let s, _):
            var report = AnalysisReport()
            report.sessions = [s]
            r.sessions(report, into: &sessions, sessionId: { self.deviceSessionId($0) })
        case .relayAccepted(let rs), .relayStalled(let rs, _), .relayClosed(let rs), .relayNoEnd(let rs, _):
            r.relayOnly(rs, clock: nil, findings: [], into: &sessions)
        case .finding(let s, let f):
            // Keyed by the session, the rule, the time and the message: the evidence's line
            // numbers count from the tail's start, so they would differ after a restart.
            let sid = deviceSessionId(s)
            let id = Digest128.of(rows.bundleId, "finding", sid, f.kind, f.time.map(String.init) ?? "", f.message)
            r.finding(f, sessionId: sid, sdk: s.sdk, host: s.relay?.host, id: id, into: &findings)
        }
        if oldestPending == nil { oldestPending = Self.now() }
    }

    /// After a follower's batch, before its cursor is saved.
    public func flush() {
        if journalPending || due() { send() }
    }

    /// Now and then: sends rows from standard input that waited long enough.
    public func tick() { if due() { send() } }

    /// At the end: everything pending. False when ClickHouse did not take it.
    @discardableResult
    public func finish() -> Bool {
        send()
        return pendingRows == 0
    }

    var pendingRows: Int { events.rows + sessions.rows + findings.rows }

    func due() -> Bool {
        guard let t = oldestPending else { return false }
        return pendingRows >= batchRows || Self.now() - t >= batchMicros
    }

    func send() {
        guard pendingRows > 0 else { oldestPending = nil; return }
        let pending = pendingRows
        for (table, buffer) in [("castscope_events", events), ("castscope_sessions", sessions), ("castscope_findings", findings)]
        where buffer.rows > 0 {
            do {
                try retry.run({ try target.write(table: table, rows: buffer.bytes) },
                              onRetry: { e, attempt, delay in
                                  if self.outageSince == nil {
                                      self.outageSince = Self.now()
                                      self.log("ClickHouse is not taking rows (\(e)); holding \(pending) rows and retrying with backoff; the cursor stays before them")
                                  }
                                  self.failedAttempts += 1
                              },
                              shouldGiveUp: shouldStop)
            } catch {
                // Stopped while ClickHouse was down: the rows were not acknowledged, so the cursor must not be saved after them.
                log("stopped while ClickHouse was not taking rows: \(pending) rows not written (\(error)); the cursor was not advanced past them")
                fflush(stdout)
                _exit(5)  // an output not written (the CLI's Exit.writeFailed)
            }
            switch table {
            case "castscope_events": events.removeAll()
            case "castscope_sessions": sessions.removeAll()
            default: findings.removeAll()
            }
        }
        written += pending
        if let since = outageSince {
            log("ClickHouse is taking rows again after \(Fmt.decimal(Double(Self.now() - since) / 1e6, 1)) s and \(failedAttempts) failed attempts; caught up (\(pending) rows written)")
            outageSince = nil
            failedAttempts = 0
        }
        journalPending = false
        oldestPending = nil
    }
}

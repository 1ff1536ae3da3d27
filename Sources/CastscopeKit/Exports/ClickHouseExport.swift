#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How hard to try before giving up on one insert.
public struct RetryPolicy: Sendable {
    /// Attempts in all (nil: until it works, for `tail`).
    public var attempts: Int?
    public var firstDelay: Double = 0.2
    public var maxDelay: Double = 5
    public init(attempts: Int?, firstDelay: Double = 0.2, maxDelay: Double = 5) {
        self.attempts = attempts
        self.firstDelay = firstDelay
        self.maxDelay = maxDelay
    }

    /// Runs `body` until it succeeds, a permanent error, or the attempts run out (then
    /// rethrows the last error). `onRetry` hears each failure that will be retried, and
    /// `shouldGiveUp` can end the waiting early (tail being stopped).
    public func run(_ body: () throws -> Void, onRetry: (ClickHouseError, Int, Double) -> Void = { _, _, _ in },
                    shouldGiveUp: () -> Bool = { false }) throws
    {
        var delay = firstDelay
        var attempt = 0
        while true {
            attempt += 1
            do {
                try body()
                return
            } catch let e as ClickHouseError {
                if !e.retryable && attempts != nil { throw e }
                if let attempts, attempt >= attempts { throw e }
                if shouldGiveUp() { throw e }
                onRetry(e, attempt, delay)
                var left = delay
                while left > 0 {
                    if shouldGiveUp() { throw e }
                    let step = min(left, 0.1)
                    usleep(UInt32(step * 1e6))
                    left -= step
                }
                delay = min(maxDelay, delay * 2)
            }
        }
    }
}

/// Where rows go: a ClickHouse server (HTTP) or, for offline loading, a directory of
/// `<table>.jsonl` files (`file:///dir`).
public enum ClickHouseTarget: Sendable {
    case server(ClickHouseClient)
    case directory(String)

    public static func parse(_ url: String) throws -> ClickHouseTarget {
        if url.hasPrefix("file://") {
            // `file:///dir`, or `file://localhost/dir` (RFC 8089); another host, or a user and
            // password, is no directory of this machine (`file://localhost/x` was written to
            // `./localhost/x`, and a password in one was printed with every path).
            let rest = url.dropFirst(7)
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            let host = rest[..<slash]
            if host.contains("@") {
                throw ClickHouseEndpoint.Invalid(description: "--clickhouse: a file:// URL takes no user or password (file:///dir)")
            }
            guard host.isEmpty || host.lowercased() == "localhost" else {
                throw ClickHouseEndpoint.Invalid(description: "--clickhouse: file:// names a directory of this machine (file:///dir or file://localhost/dir), not of another host")
            }
            let dir = String(rest[slash...])
            guard !dir.isEmpty else { throw ClickHouseEndpoint.Invalid(description: "--clickhouse: file:// needs a directory") }
            return .directory(dir)
        }
        return .server(ClickHouseClient(endpoint: try ClickHouseEndpoint(url: url)))
    }

    /// Writes one batch; for a directory, appends to the table's file.
    public func write(table: String, rows: [UInt8]) throws {
        try rows.withUnsafeBytes { try write(table: table, raw: $0) }
    }

    /// `staged`: a directory's table is appended to beside its file (`stagedPath`), put in its
    /// place by `publish` once every table was written (`analyze`'s export; `tail` appends).
    func write(table: String, raw rows: UnsafeRawBufferPointer, staged: Bool = false) throws {
        switch self {
        case .server(let client):
            try client.insert(table: table, gzipped: try Gzip.compress(rows))
        case .directory(let dir):
            mkdir(dir, 0o755)
            let path = staged ? Self.stagedPath(dir, table) : dir + "/" + table + ".jsonl"
            let shown = dir + "/" + table + ".jsonl"
            // (read too: a torn last row is looked for before appending)
            var fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            if fd < 0 && errno == EACCES { fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) }
            guard fd >= 0 else {
                throw ClickHouseError(description: "\(shown): cannot write: \(String(cString: strerror(errno)))", retryable: false)
            }
            defer { close(fd) }
            // Rows are appended after whole rows only: a row torn by an earlier write (a full
            // disk, a kill) is cut back to the last newline, and a write that fails now takes
            // back what it wrote. The next append joined the torn row, one line holding two
            // half-rows that a JSONEachRow import refused (hostile round 9).
            let start = Self.wholeRowsEnd(fd)
            var done = 0
            while done < rows.count {
                let n = Glibc.write(fd, rows.baseAddress! + done, rows.count - done)
                // (a short write sets no errno: the one shown was an earlier call's, `File exists`)
                guard n > 0 else {
                    let why = n < 0 ? String(cString: strerror(errno)) : "the disk took no more"
                    if let start { _ = ftruncate(fd, start) }
                    throw ClickHouseError(description: "\(shown): cannot write: \(why)", retryable: false)
                }
                done += n
            }
        }
    }

    /// The end of the file's last whole row (just after its last newline), the file cut back to
    /// it when a torn row follows; nil when it cannot be read.
    static func wholeRowsEnd(_ fd: Int32) -> off_t? {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        var end = st.st_size
        guard end > 0 else { return 0 }
        var last: UInt8 = 0
        guard pread(fd, &last, 1, end - 1) == 1 else { return nil }
        if last == 0x0A { return end }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while end > 0 {
            let from = max(0, end - off_t(chunk.count))
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, Int(end - from), from) }
            guard n == Int(end - from) else { return nil }
            if let nl = chunk[0..<n].lastIndex(of: 0x0A) {
                end = from + off_t(nl) + 1
                break
            }
            end = from
        }
        guard ftruncate(fd, end) == 0 else { return nil }
        return end
    }

    static func stagedPath(_ dir: String, _ table: String) -> String { dir + "/." + table + ".jsonl.castscope-partial" }

    /// Readies the directory for an export: what an export that did not finish left is removed
    /// (the tables of the last one that did stay until `publish` replaces them: a full disk
    /// removed a good export and left a torn line; hostile round 8).
    public func prepare() {
        if case .directory(let dir) = self {
            for t in ClickHouseSchema.tables {
                unlink(Self.stagedPath(dir, t))
                // (Ctrl-C, SIGTERM or SIGHUP while they were written left them: hidden files of
                // hundreds of MB in the folder until the next export there; hostile round 10)
                TemporaryRoot.removeOnSignal(Self.stagedPath(dir, t))
            }
        }
    }

    /// After an export: every table written, its files take the place of the last export's (a
    /// table without rows leaves none); else they go, the last export's stay, and each failure
    /// says so.
    func publish(_ result: ClickHouseExport.Result) -> ClickHouseExport.Result {
        guard case .directory(let dir) = self else { return result }
        defer { for t in ClickHouseSchema.tables { TemporaryRoot.forgetOnSignal(Self.stagedPath(dir, t)) } }
        var result = result
        if result.failed.isEmpty {
            for t in ClickHouseSchema.tables {
                let real = dir + "/" + t + ".jsonl"
                if access(Self.stagedPath(dir, t), F_OK) == 0 {
                    if rename(Self.stagedPath(dir, t), real) != 0 {
                        result.failed.append((t, "\(real): cannot write: \(String(cString: strerror(errno)))"))
                    }
                } else {
                    unlink(real)
                }
            }
        }
        if !result.failed.isEmpty {
            for t in ClickHouseSchema.tables { unlink(Self.stagedPath(dir, t)) }
            for k in result.failed.indices { result.failed[k].error += " (the files of the last export in \(dir) are left as they were)" }
        }
        return result
    }
}

/// `castscope analyze --clickhouse`: the report's rows into the four tables, in batches of
/// `batchRows` (deterministic: the same analysis gives the same batches), each insert retried
/// with backoff on 429/5xx/refused connections.
public struct ClickHouseExport {
    public var target: ClickHouseTarget
    /// Rows per insert (the events' batches; about 5 MB of JSON, 10 k being the least the
    /// issue's 10 k–100 k allows: `inFlight` + 1 buffers of this size are all the export holds).
    public var batchRows = 10_000
    /// Event batches being compressed and sent at once (on their own threads).
    public var inFlight = 2
    public var retry = RetryPolicy(attempts: 6)
    /// Hears retries ("table: error; retrying in 0.4 s").
    public var onRetry: (String) -> Void = { _ in }

    public struct Result: Sendable {
        public var rows: [String: Int] = [:]
        /// Tables not (completely) written, with why.
        public var failed: [(table: String, error: String)] = []
    }

    public init(target: ClickHouseTarget) { self.target = target }

    public func write(_ report: AnalysisReport, bundleId: String) -> Result {
        target.prepare()
        let rows = ClickHouseRows(bundleId: bundleId)
        // The other tables go out on their own threads (each insert waits on the server) while
        // the events are built and sent, in batches too (a relay fleet's bundle has tens of
        // thousands of sessions and findings).
        var small: [BatchSender] = []
        let batch = batchRows
        let simple: [(String, (inout ClickHouseRowBuffer, (inout ClickHouseRowBuffer) -> Void) -> Void)] = [
            ("castscope_inputs", { b, _ in rows.inputs(report, into: &b) }),
            ("castscope_sessions", { b, emit in rows.sessions(report, into: &b, batchRows: batch, emit: emit) }),
            ("castscope_findings", { b, emit in rows.findings(report, into: &b, batchRows: batch, emit: emit) }),
        ]
        for (table, fill) in simple {
            var own = ClickHouseRowBuffer()
            let sender = BatchSender(self, table: table)
            fill(&own) { sender.launch(&$0) }
            sender.launch(&own)
            small.append(sender)
        }
        Stages.mark("clickhouse: small tables built")
        let events = BatchSender(self, table: "castscope_events")
        var b = ClickHouseRowBuffer()
        rows.events(report, into: &b, batchRows: batchRows) { buffer in
            Stages.mark("clickhouse: events batch built")
            events.launch(&buffer)
        }
        events.launch(&b)
        Stages.mark("clickhouse: events built")
        return target.publish(Self.result(small + [events]))
    }

    /// What the senders wrote, once each has finished.
    static func result(_ senders: [BatchSender]) -> Result {
        var result = Result()
        for sender in senders {
            sender.finish()
            if let e = sender.failure { result.failed.append((sender.table, e)) } else { result.rows[sender.table] = sender.written }
        }
        result.failed.sort { ClickHouseSchema.tables.firstIndex(of: $0.table)! < ClickHouseSchema.tables.firstIndex(of: $1.table)! }
        return result
    }

    /// One insert of a body compressed before (`HeldBatches`), with retries; nil when
    /// acknowledged, else the error.
    func send(_ table: String, gzipped: [UInt8]) -> String? {
        guard case .server(let client) = target else { return "a held batch for a target that is not a server" }
        do {
            try retry.run({ try client.insert(table: table, gzipped: gzipped) },
                          onRetry: { e, attempt, delay in onRetry("\(table): \(e) (attempt \(attempt)); retrying in \(Fmt.decimal(delay, 1)) s") })
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// One insert with retries; nil when acknowledged, else the error.
    func send(_ table: String, _ b: inout ClickHouseRowBuffer) -> String? {
        guard b.rows > 0 else { return nil }
        // From the batch's own buffer, not a copy of it (two batches in flight: 10 MB); a
        // server's body compressed once, not once per attempt.
        if case .server = target {
            do {
                return send(table, gzipped: try b.withUnsafeBytes { try Gzip.compress($0) })
            } catch {
                return "\(error)"
            }
        }
        do {
            try retry.run({ try b.withUnsafeBytes { try target.write(table: table, raw: $0, staged: true) } },
                          onRetry: { e, attempt, delay in onRetry("\(table): \(e) (attempt \(attempt)); retrying in \(Fmt.decimal(delay, 1)) s") })
            return nil
        } catch {
            return "\(error)"
        }
    }
}

/// One table's inserts: up to `inFlight` batches on their own threads (each compressed, then
/// sent and waited for) while the next is built, so that one compresses while the server parses
/// another. Buffers come back emptied and are written into again (memory already paged in). A
/// directory target takes one batch at a time, so that its file holds them in order.
final class BatchSender {
    let export: ClickHouseExport
    let table: String
    let slots: Int
    private var spare: [ClickHouseRowBuffer] = []
    /// A batch being sent: moved in (not copied), so that its buffer stays uniquely owned.
    /// While held: its compressed body, to be kept.
    final class Box: @unchecked Sendable {
        var batch = ClickHouseRowBuffer(capacity: 0)
        var compressed: [UInt8]?
    }
    private var inflight: [(Worker<String?>, Box, Int)] = []
    private(set) var failure: String?
    private(set) var written = 0
    /// Batches compressed and kept in order instead of sent (`hold`), or nil: sending.
    private var held: HeldBatches?

    init(_ export: ClickHouseExport, table: String) {
        self.export = export
        self.table = table
        if case .directory = export.target { slots = 1 } else { slots = max(1, export.inFlight) }
    }

    /// Sends `buffer`'s rows (when it has any) and leaves it empty, ready for the next batch.
    func launch(_ buffer: inout ClickHouseRowBuffer) {
        guard buffer.rows > 0 else { return }
        while inflight.count >= slots { settleOldest() }
        guard failure == nil else { buffer.removeAll(); return }
        // Moved into the box (not copied), so that the buffer stays uniquely owned and keeps
        // its memory when it comes back emptied.
        let box = Box()
        swap(&box.batch, &buffer)
        buffer = spare.popLast() ?? ClickHouseRowBuffer(capacity: box.batch.byteCount)
        let export = self.export, table = self.table
        if held != nil {
            // Compressed on the worker as a batch to send would be, and kept when settled
            // (in order): sent by `release`.
            inflight.append((Worker {
                do { box.compressed = try box.batch.withUnsafeBytes { try Gzip.compress($0) } } catch { return "\(error)" }
                return nil
            }, box, box.batch.rows))
            return
        }
        inflight.append((Worker { export.send(table, &box.batch) }, box, box.batch.rows))
    }

    private func settleOldest() {
        let (w, box, n) = inflight.removeFirst()
        if let e = w.join() {
            failure = failure ?? e
        } else if let body = box.compressed {
            box.compressed = nil
            if let held { held.append(body, rows: n) } else { written += n }
        } else {
            written += n
        }
        box.batch.removeAll()
        var back = ClickHouseRowBuffer(capacity: 0)
        swap(&back, &box.batch)
        spare.append(back)
    }

    /// From now on batches are compressed and kept, not sent, until `release` (a server: a
    /// directory's files are begun afresh by the export that replaces this one).
    func hold() {
        if case .server = export.target, held == nil { held = HeldBatches() }
    }

    /// Sends the batches kept by `hold`, in order, and sends from then on.
    func release() {
        guard held != nil else { return }
        while !inflight.isEmpty { settleOldest() }
        let kept = held!
        held = nil
        let export = self.export, table = self.table
        kept.forEach { body, rows in
            while inflight.count >= slots { settleOldest() }
            guard failure == nil else { return }
            guard let body else { failure = "a batch kept in a temporary file could not be read back"; return }
            let box = Box()
            box.compressed = body
            inflight.append((Worker { export.send(table, gzipped: body) }, box, rows))
        }
    }

    /// Waits for every batch sent.
    func finish() {
        while !inflight.isEmpty { settleOldest() }
    }
}

/// `analyze --clickhouse` when the sessions are handed on as they end (`Analyzer.sessionSink`):
/// each session's rows are made then and sent in batches, so that the export holds batches, not
/// the report. The rows, and the events' batches, are those of `ClickHouseExport.write` on the
/// whole report (`ClickHouseStreamTests` compares the files).
public final class ClickHouseStreamExport: @unchecked Sendable {
    let export: ClickHouseExport
    /// Made once the bundle's id is known.
    var rows: ClickHouseRows!
    /// The bundle's id, if known yet (its digest reads every input once more, on a thread of
    /// its own), and a wait for it.
    let bundleIdIfKnown: () -> String?
    let waitForBundleId: () -> String
    /// Sessions handed on before the id was known: their rows are made once it is (waiting
    /// for it held every session back, and with them the readers). At most `maxWaiting`; then
    /// the next session waits for the id.
    var waiting: [(Session, [Finding])] = []
    public var maxWaiting = 256
    let sessionsOut: BatchSender, eventsOut: BatchSender, findingsOut: BatchSender, inputsOut: BatchSender
    var sessions = ClickHouseRowBuffer()
    var events = ClickHouseRowBuffer()
    var findings = ClickHouseRowBuffer()
    var ids = ClickHouseRows.RecordIds()
    /// The findings written so far (a finding's id depends on its place in the report's list).
    var findingCount = 0
    var previous: Finding?
    /// The earliest time seen (the inputs' partition).
    var earliest: Int64?
    /// The relay clock's estimate, when the bundle has relay lines (its sessions are handed on
    /// after the join, the estimate made: `Analyzer.willStreamSessions`'s report has it).
    public var clock: ClockEstimate?

    public convenience init(_ export: ClickHouseExport, bundleId: String) {
        self.init(export, bundleIdIfKnown: { bundleId }, waitForBundleId: { bundleId })
    }

    /// `holds`: the analysis may still start over (`Analyzer.readingAsItGoes`): batches for a
    /// server are compressed and kept until `finish`, when the analysis is final.
    public init(_ export: ClickHouseExport, bundleIdIfKnown: @escaping () -> String?, waitForBundleId: @escaping () -> String,
                holds: Bool = false)
    {
        self.export = export
        self.bundleIdIfKnown = bundleIdIfKnown
        self.waitForBundleId = waitForBundleId
        export.target.prepare()
        sessionsOut = BatchSender(export, table: "castscope_sessions")
        eventsOut = BatchSender(export, table: "castscope_events")
        findingsOut = BatchSender(export, table: "castscope_findings")
        inputsOut = BatchSender(export, table: "castscope_inputs")
        if holds { for s in senders { s.hold() } }
    }

    var senders: [BatchSender] { [inputsOut, sessionsOut, findingsOut, eventsOut] }

    /// The analysis started over: waits for what is being written (a directory's files are
    /// begun afresh by the next export) and sends nothing of what was kept.
    public func abandon() {
        for s in senders { s.finish() }
    }

    func note(_ t: Int64?) {
        if let t { earliest = min(earliest ?? t, t) }
    }

    /// One session handed on, with its findings.
    public func add(_ s: Session, _ found: [Finding]) {
        if rows == nil {
            if let id = bundleIdIfKnown() ?? (waiting.count >= maxWaiting ? waitForBundleId() : nil) {
                start(bundleId: id)
            } else {
                waiting.append((s, found))
                return
            }
        }
        rowsOf(s, found)
    }

    /// The id is known: the rows of the sessions that waited for it, in order.
    func start(bundleId: String) {
        rows = ClickHouseRows(bundleId: bundleId)
        let before = waiting
        waiting = []
        for (s, found) in before { rowsOf(s, found) }
    }

    func rowsOf(_ s: Session, _ found: [Finding]) {
        let id = rows.sessionId(s)
        note(s.start ?? s.events.first?.time)
        rows.session(s, id: id, clock: clock, findingKinds: found.map(\.kind), into: &sessions)
        if sessions.rows >= export.batchRows { sessionsOut.launch(&sessions) }
        let batch = export.batchRows
        rows.events(of: s, shift: clock?.offset ?? 0, ids: &ids, into: &events, batchRows: batch) { eventsOut.launch(&$0) }
        for f in found { addFinding(f, sessionId: id, sdk: s.sdk, host: s.relay?.host) }
    }

    func addFinding(_ f: Finding, sessionId: String, sdk: String?, host: String?) {
        rows.finding(f, index: findingCount, previous: previous, sessionId: sessionId, sdk: sdk, host: host, into: &findings)
        previous = f
        findingCount += 1
        if findings.rows >= export.batchRows { findingsOut.launch(&findings) }
    }

    /// The rest (lines outside sessions, the bundle's findings, the inputs), then waits for
    /// every insert.
    public func finish(_ report: AnalysisReport) -> ClickHouseExport.Result {
        // The analysis is final: what was kept goes out first, in order.
        for s in senders { s.release() }
        if rows == nil { start(bundleId: waitForBundleId()) }
        let batch = export.batchRows
        for e in report.unattached {
            note(e.time)
            rows.event(e, sessionId: "", host: nil, shift: 0, ids: &ids, into: &events, batchRows: batch) { eventsOut.launch(&$0) }
        }
        // Relay sessions joined to no device session: their rows and lines, as the whole
        // report's export writes them after the device sessions'.
        note(report.relaySessions.earliestStart)
        for rs in report.relaySessions where rs.deviceSession == nil {
            rows.relayOnly(rs, clock: report.clock, findings: [], into: &sessions)
            if sessions.rows >= export.batchRows { sessionsOut.launch(&sessions) }
            let sid = rows.relaySessionId(rs)
            for e in rs.events { rows.event(e, sessionId: sid, host: rs.host, shift: 0, ids: &ids, into: &events, batchRows: batch) { eventsOut.launch(&$0) } }
        }
        // The bundle's own findings: all the report kept when the sessions' went out with them
        // (`handedOnFindings`), else those after the sessions'. An orphan relay session's is
        // keyed by that session.
        for n in report.findings.indices.dropFirst(report.handedOnFindings != nil ? 0 : findingCount) {
            let (f, orphan) = report.findings.withRelaySession(n)
            addFinding(f, sessionId: orphan.map(rows.relaySessionId) ?? "", sdk: nil, host: orphan?.host)
        }
        var inputs = ClickHouseRowBuffer()
        rows.inputs(report, bundleTime: .some(earliest), into: &inputs)
        inputsOut.launch(&inputs)
        sessionsOut.launch(&sessions)
        eventsOut.launch(&events)
        findingsOut.launch(&findings)
        return export.target.publish(ClickHouseExport.result(senders))
    }
}

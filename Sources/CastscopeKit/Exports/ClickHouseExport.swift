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
            let dir = String(url.dropFirst(7))
            guard !dir.isEmpty else { throw ClickHouseEndpoint.Invalid(description: "--clickhouse: file:// needs a directory") }
            return .directory(dir)
        }
        return .server(ClickHouseClient(endpoint: try ClickHouseEndpoint(url: url)))
    }

    /// Writes one batch; for a directory, appends to the table's file.
    public func write(table: String, rows: [UInt8]) throws {
        switch self {
        case .server(let client):
            try client.insert(table: table, rows: rows)
        case .directory(let dir):
            mkdir(dir, 0o755)
            let path = dir + "/" + table + ".jsonl"
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw ClickHouseError(description: "\(path): cannot write: \(String(cString: strerror(errno)))", retryable: false)
            }
            defer { close(fd) }
            let n = rows.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard n == rows.count else {
                throw ClickHouseError(description: "\(path): cannot write: \(String(cString: strerror(errno)))", retryable: false)
            }
        }
    }

    /// Starts the directory's files afresh (so that a second export does not append to the first).
    public func prepare() {
        if case .directory(let dir) = self {
            for t in ClickHouseSchema.tables { unlink(dir + "/" + t + ".jsonl") }
        }
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
        var result = Result()
        let rows = ClickHouseRows(bundleId: bundleId)
        var b = ClickHouseRowBuffer()
        let simple: [(String, (inout ClickHouseRowBuffer) -> Void)] = [
            ("castscope_inputs", { rows.inputs(report, into: &$0) }),
            ("castscope_sessions", { rows.sessions(report, into: &$0) }),
            ("castscope_findings", { rows.findings(report, into: &$0) }),
        ]
        // The small tables go out on their own threads (each insert waits on the server) while
        // the events are built and sent.
        var small: [(String, Int, Worker<String?>)] = []
        for (table, fill) in simple {
            var own = ClickHouseRowBuffer()
            fill(&own)
            let batch = own
            small.append((table, batch.rows, Worker { [self] in
                var mine = batch
                return send(table, &mine)
            }))
        }
        var failure: String?
        var written = 0
        // Up to `inFlight` batches on other threads (each compressed, then sent and waited for)
        // while the next is built: one compresses while the server parses another. Their
        // buffers come back emptied and are written into again (memory already paged in).
        var spare: [ClickHouseRowBuffer] = []
        var inflight: [(Worker<String?>, BatchBox, Int)] = []
        func settleOldest() {
            let (w, box, n) = inflight.removeFirst()
            if let e = w.join() { failure = failure ?? e } else { written += n }
            box.batch.removeAll()
            var back = ClickHouseRowBuffer(capacity: 0)
            swap(&back, &box.batch)
            spare.append(back)
        }
        func launch(_ buffer: inout ClickHouseRowBuffer) {
            while inflight.count >= max(1, inFlight) { settleOldest() }
            guard failure == nil else { buffer.removeAll(); return }
            // Moved into the box (not copied), so that the buffer stays uniquely owned and
            // keeps its memory when it comes back emptied.
            let box = BatchBox()
            swap(&box.batch, &buffer)
            buffer = spare.popLast() ?? ClickHouseRowBuffer(capacity: box.batch.bytes.count)
            inflight.append((Worker { [self] in send("castscope_events", &box.batch) }, box, box.batch.rows))
        }
        Stages.mark("clickhouse: small tables built")
        rows.events(report, into: &b, batchRows: batchRows) { buffer in
            Stages.mark("clickhouse: events batch built")
            launch(&buffer)
        }
        if b.rows > 0 { launch(&b) }
        while !inflight.isEmpty { settleOldest() }
        Stages.mark("clickhouse: events written")
        for (table, n, w) in small {
            if let e = w.join() { result.failed.append((table, e)) } else { result.rows[table] = n }
        }
        if let failure { result.failed.append(("castscope_events", failure)) } else { result.rows["castscope_events"] = written }
        result.failed.sort { ClickHouseSchema.tables.firstIndex(of: $0.table)! < ClickHouseSchema.tables.firstIndex(of: $1.table)! }
        return result
    }

    final class BatchBox: @unchecked Sendable { var batch = ClickHouseRowBuffer(capacity: 0) }

    /// One insert with retries; nil when acknowledged, else the error.
    private func send(_ table: String, _ b: inout ClickHouseRowBuffer) -> String? {
        guard b.rows > 0 else { return nil }
        let bytes = b.bytes
        do {
            try retry.run({ try target.write(table: table, rows: bytes) },
                          onRetry: { e, attempt, delay in onRetry("\(table): \(e) (attempt \(attempt)); retrying in \(Fmt.decimal(delay, 1)) s") })
            return nil
        } catch {
            return "\(error)"
        }
    }
}

/// The ClickHouse tables castscope writes, and the fleet queries it documents and tests.
///
/// Types are the ones both Debian's ClickHouse 18.16 and current releases accept: `DateTime`
/// plus an `Int64` microseconds column (no `DateTime64`), `String` (no `LowCardinality`, which
/// is experimental in 18.16), `Array(String)` (no `Map`), `Nullable` numbers. Every table is a
/// `ReplacingMergeTree(Version)` keyed by a stable id derived from the bundle's content digest,
/// so a re-analysis or a restarted `tail` replaces rows instead of adding them; read them with
/// `FINAL` (or `argMax(col, Version)` grouped by the id).
public enum ClickHouseSchema {
    public static let tables = ["castscope_sessions", "castscope_events", "castscope_findings", "castscope_inputs"]

    /// Column name and type per table (column names follow `otel_logs` where they mean the same:
    /// Timestamp, SeverityText, SeverityNumber, ServiceName, Body).
    public static let columns: [String: [(String, String)]] = [
        "castscope_sessions": [
            ("SessionId", "String"),            // stable: bundle digest + process/pid + first line
            ("BundleId", "String"),             // content digest of the inputs
            ("SessionKind", "String"),          // device | relay (a relay session joined to no device session)
            ("ReportId", "String"),             // S1, S2, … as the report names it
            ("Timestamp", "DateTime"),          // start, UTC
            ("TimestampMicros", "Int64"),       // start, µs since the epoch
            ("EndMicros", "Nullable(Int64)"),
            ("DurationSeconds", "Nullable(Float64)"),
            ("ServiceName", "String"),          // the extension's process name
            ("Sdk", "String"),
            ("Pid", "Nullable(Int64)"),
            ("DeviceId", "String"),             // the relay's peer (device model / id) when joined
            ("AppId", "String"),                // the host app's bundle id when a line names it
            ("ExtensionId", "String"),          // process[pid]
            ("Outcome", "String"),
            ("Reason", "String"),
            ("StartInferred", "UInt8"),
            ("Attempts", "UInt32"),
            ("FailedAttempts", "UInt32"),
            ("SecondsToConnect", "Nullable(Float64)"),
            ("Frames", "UInt64"),
            ("FramesPerSecond", "Nullable(Float64)"),
            ("RelayHost", "String"),
            ("RelaySessionId", "String"),
            ("RelayRoom", "String"),
            ("RelayReason", "String"),
            ("RelayFrames", "Nullable(Int64)"),
            ("RelayMeanFps", "Nullable(Float64)"),
            ("RelayStalls", "UInt32"),
            ("ClockOffsetSeconds", "Nullable(Float64)"),   // relay clock minus device clock
            ("ClockBoundSeconds", "Nullable(Float64)"),    // ± this
            ("FindingKinds", "Array(String)"),
            ("SourceFile", "String"),
            ("SourceLine", "UInt32"),
            ("CastscopeVersion", "String"),
            ("Version", "UInt64"),
        ],
        "castscope_events": [
            ("RecordId", "String"),             // stable: bundle digest + source file + line
            ("BundleId", "String"),
            ("SessionId", "String"),            // '' when the line belongs to no session
            ("SessionSeq", "UInt32"),           // the line's place in its session's time order (1, 2, …; 0 outside one)
            ("Timestamp", "DateTime"),
            ("TimestampMicros", "Int64"),
            ("TimeInferred", "UInt8"),
            ("SeverityText", "String"),
            ("SeverityNumber", "UInt8"),
            ("ServiceName", "String"),          // process (relay: the relay's host)
            ("Side", "String"),                 // extension | app | system | relay
            ("Sdk", "String"),
            ("EventName", "String"),            // normalized kind, e.g. socket.connect_attempt
            ("Body", "String"),
            ("Pid", "Nullable(Int64)"),
            ("HostName", "String"),
            ("SourceFile", "String"),
            ("SourceLine", "UInt32"),
            ("Version", "UInt64"),
        ],
        "castscope_findings": [
            ("FindingId", "String"),            // stable: bundle digest + kind + session + evidence
            ("BundleId", "String"),
            ("SessionId", "String"),
            ("Timestamp", "DateTime"),
            ("TimestampMicros", "Int64"),
            ("Kind", "String"),
            ("SeverityText", "String"),
            ("SeverityNumber", "UInt8"),
            ("Body", "String"),
            ("Evidence", "Array(String)"),
            ("Sdk", "String"),
            ("RelayHost", "String"),
            ("Version", "UInt64"),
        ],
        "castscope_inputs": [
            ("InputId", "String"),              // bundle digest + path
            ("BundleId", "String"),
            ("Timestamp", "DateTime"),          // the earliest time in the bundle
            ("Path", "String"),
            ("Format", "String"),
            ("Lines", "UInt64"),
            ("Records", "UInt64"),
            ("Unparsed", "UInt64"),
            ("Events", "UInt64"),
            ("Errors", "Array(String)"),
            ("Version", "UInt64"),
        ],
    ]

    /// The stable key of each table (ReplacingMergeTree replaces rows with equal keys).
    public static let keys = [
        "castscope_sessions": "SessionId", "castscope_events": "RecordId", "castscope_findings": "FindingId",
        "castscope_inputs": "InputId",
    ]

    /// How `Distributed` spreads each table over the shards: a session's rows on one shard.
    static let sharding = [
        "castscope_sessions": "cityHash64(SessionId)",
        "castscope_events": "cityHash64(if(SessionId = '', RecordId, SessionId))",
        "castscope_findings": "cityHash64(if(SessionId = '', FindingId, SessionId))",
        "castscope_inputs": "cityHash64(BundleId)",
    ]

    /// The DDL. Without a cluster: one table each. With one: `<table>_local` on every shard
    /// (`ON CLUSTER`) and `<table>` as the `Distributed` table to insert into and query.
    /// `ttlDays` adds a TTL (ClickHouse 19.6 and later; not 18.16).
    /// `onCluster: false` leaves out `ON CLUSTER` (which needs distributed DDL, i.e. ZooKeeper
    /// or Keeper): then run the DDL on every server yourself.
    public static func ddl(cluster: String? = nil, database: String? = nil, ttlDays: Int? = nil, onCluster useOnCluster: Bool = true) -> String {
        var out = ""
        let db = database.map { "\(quoteIdentifier($0))." } ?? ""
        let onCluster = useOnCluster ? cluster.map { " ON CLUSTER \(quoteIdentifier($0))" } ?? "" : ""
        for table in tables {
            let local = cluster == nil ? table : table + "_local"
            let cols = columns[table]!.map { "    \($0.0) \($0.1)" }.joined(separator: ",\n")
            out += "CREATE TABLE IF NOT EXISTS \(db)\(local)\(onCluster)\n(\n\(cols)\n)\n"
            out += "ENGINE = ReplacingMergeTree(Version)\n"
            out += "PARTITION BY toDate(Timestamp)\n"
            out += "ORDER BY \(keys[table]!)\n"
            if let ttlDays { out += "TTL Timestamp + INTERVAL \(ttlDays) DAY\n" }
            out += ";\n\n"
            if let cluster {
                let dbName = database.map(quoteString) ?? "currentDatabase()"
                out += "CREATE TABLE IF NOT EXISTS \(db)\(table)\(onCluster) AS \(db)\(local)\n"
                out += "ENGINE = Distributed(\(quoteIdentifier(cluster)), \(dbName), \(local), \(sharding[table]!))\n;\n\n"
            }
        }
        return out
    }

    /// The statements of `ddl`, one by one (the HTTP interface takes one per request).
    public static func statements(_ ddl: String) -> [String] {
        ddl.split(separator: "\n;\n").map { String($0).trimmingSpaces() }.filter { !$0.isEmpty && !$0.hasPrefix(";") }
    }

    /// A name as ClickHouse reads it: plain when it is a word, else in backquotes. Inside
    /// quotes ClickHouse takes a backslash as an escape (a doubled backquote alone let
    /// `--database 'a\`; DROP …'` end the name early: `\`` is a backquote, the next one closes
    /// it), so the backslash and the quote are escaped with one, and control characters as
    /// `\xHH` (a raw newline split `statements` at `\n;\n`).
    static func quoteIdentifier(_ s: String) -> String {
        let word = s.first.map { !$0.isNumber } == true && s.allSatisfy { ($0.isLetter || $0.isNumber || $0 == "_") && $0.isASCII }
        return word ? s : quoted(s, "`")
    }

    static func quoteString(_ s: String) -> String { quoted(s, "'") }

    private static func quoted(_ s: String, _ quote: Character) -> String {
        var out = String(quote)
        for c in s.unicodeScalars {
            if c == "\\" || Character(c) == quote {
                out += "\\" + String(c)
            } else if c.value < 0x20 || c.value == 0x7F {
                out += "\\x" + (c.value < 0x10 ? "0" : "") + String(c.value, radix: 16, uppercase: true)
            } else {
                out.unicodeScalars.append(c)
            }
        }
        out.append(quote)
        return out
    }

    /// The longest TTL `ddl` writes: `Timestamp + INTERVAL n DAY` is a `DateTime`, which ends in
    /// 2106 and wraps past it (a TTL of 99999999999999 days expired every row at once).
    public static let maxTTLDays = 24855

    /// The fleet queries: a name, what it answers, and the SQL (which reads the Distributed or
    /// single tables by their plain names, with FINAL so that replaced rows count once).
    public struct Query: Sendable {
        public var name: String
        public var question: String
        public var sql: String
    }

    public static let queries: [Query] = [
        Query(
            name: "failure-rate-by-sdk-day",
            question: "Which SDK fails most, per day: sessions, how many never connected, how many did not complete",
            sql: """
                SELECT toDate(Timestamp) AS Day, Sdk, count() AS Sessions,
                       countIf(Outcome = 'failed-to-connect') AS FailedToConnect,
                       countIf(Outcome != 'completed') AS NotCompleted,
                       round(countIf(Outcome = 'failed-to-connect') / count(), 4) AS FailedToConnectRate
                FROM castscope_sessions FINAL
                WHERE SessionKind = 'device'
                GROUP BY Day, Sdk
                ORDER BY Day, Sdk
                """),
        Query(
            name: "time-to-connect",
            question: "How long connecting takes per SDK: p50 and p95 of started → connected, in milliseconds",
            sql: """
                SELECT Sdk, count() AS Connected,
                       round(quantileExact(0.5)(assumeNotNull(SecondsToConnect)) * 1000, 1) AS P50Ms,
                       round(quantileExact(0.95)(assumeNotNull(SecondsToConnect)) * 1000, 1) AS P95Ms
                FROM castscope_sessions FINAL
                WHERE SessionKind = 'device' AND isNotNull(SecondsToConnect)
                GROUP BY Sdk
                ORDER BY Sdk
                """),
        Query(
            name: "top-findings",
            question: "The most frequent findings, with their severity and how many bundles show them",
            sql: """
                SELECT Kind, SeverityText, count() AS Findings, uniqExact(BundleId) AS Bundles
                FROM castscope_findings FINAL
                GROUP BY Kind, SeverityText
                ORDER BY Findings DESC, Kind, SeverityText
                LIMIT 20
                """),
        Query(
            name: "session-funnel",
            question: "How far sessions get: started → connected → frames → ended (windowFunnel over each session's lines in order: SessionSeq, since second-resolution logs tie)",
            sql: """
                SELECT Level, count() AS Sessions
                FROM
                (
                    SELECT SessionId,
                           windowFunnel(1000000000)(SessionSeq,
                               EventName = 'broadcast.started',
                               EventName IN ('socket.connected', 'server.client_connected'),
                               EventName IN ('frame.sent', 'relay.stats'),
                               EventName IN ('broadcast.finished', 'broadcast.stopped_by_app', 'socket.closed', 'socket.closed_by_peer', 'socket.error', 'extension.killed_memory', 'process.exited', 'relay.closed')) AS Level
                    FROM castscope_events FINAL
                    WHERE SessionId != '' AND Side != 'relay'
                    GROUP BY SessionId
                )
                GROUP BY Level
                ORDER BY Level
                """),
        Query(
            name: "relay-hosts",
            question: "Sessions per relay host: how many, how many closed for another reason than the peer's end, how many had no device session",
            sql: """
                SELECT RelayHost, count() AS RelaySessions,
                       countIf(RelayReason NOT IN ('peer-eof', 'shutdown')) AS Dropped,
                       countIf(SessionKind = 'relay') AS WithoutDevice,
                       sum(RelayStalls) AS Stalls
                FROM castscope_sessions FINAL
                WHERE RelayHost != ''
                GROUP BY RelayHost
                ORDER BY RelayHost
                """),
    ]

    /// `castscope clickhouse queries`: each query with its name and question as comments.
    public static func queriesText() -> String {
        queries.map { "-- name: \($0.name)\n-- \($0.question)\n\($0.sql)\n;\n" }.joined(separator: "\n")
    }
}

extension String {
    func replacingAll(_ a: String, _ b: String) -> String { contains(a) ? replacing(a, with: b) : self }
}

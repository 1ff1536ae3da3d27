#if canImport(Glibc)
import Glibc
#endif

/// Where a report came from: the tool's version, the command line that made it and when.
/// The HTML, Markdown and JSON reports print it, so a report pasted into a ticket can be
/// reproduced. `SOURCE_DATE_EPOCH` (seconds) fixes the generation time, for reproducible output.
public struct Provenance: Sendable {
    public static let toolVersion = "0.1.0"

    public var version: String
    public var commandLine: [String]
    /// Microseconds since the epoch.
    public var generatedAt: Int64

    public init(version: String = Provenance.toolVersion, commandLine: [String], generatedAt: Int64) {
        self.version = version
        self.commandLine = commandLine
        self.generatedAt = generatedAt
    }

    /// This process: its arguments (the program by its base name, not the machine's path) and
    /// the time of the first call, so every output of one run carries the same time.
    public static func current() -> Provenance { processProvenance }

    private static let processProvenance: Provenance = make()

    static func make() -> Provenance {
        var args = CommandLine.arguments
        if let first = args.first, let slash = first.lastIndex(of: "/") { args[0] = String(first[first.index(after: slash)...]) }
        // A report is pasted into tickets: `--clickhouse http://user:PASSWORD@…` is not copied
        // into it (as error lines do not print it).
        args = args.map { $0.contains("://") || $0.contains("password=") ? ClickHouseEndpoint.redact($0) : $0 }
        var now: Int64
        if let epoch = getenv("SOURCE_DATE_EPOCH").map({ String(cString: $0) }), let secs = Int64(epoch) {
            now = secs * 1_000_000
        } else {
            var ts = timespec()
            clock_gettime(CLOCK_REALTIME, &ts)
            now = Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1_000
        }
        return Provenance(commandLine: args, generatedAt: now)
    }

    /// The command line as one shell-quoted string.
    public var commandText: String {
        commandLine.map { a in
            let safe = !a.isEmpty && a.unicodeScalars.allSatisfy { c in
                (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") || "-_./=:,+@%".unicodeScalars.contains(c)
            }
            return safe ? a : "'" + a.replacingOccurrences("'", "'\\''") + "'"
        }.joined(separator: " ")
    }

    public var generatedText: String { Fmt.rfc3339(generatedAt, offset: 0) }
}

/// The per-session facts the terminal report prints (`connect:`, `relay:`, `frames:`), as
/// plain sentences for the HTML and Markdown reports.
public enum SessionFacts {
    public static func who(_ s: Session) -> String {
        [s.sdk, s.process.map { p in s.pid.map { "\(p)[\($0)]" } ?? p } ?? s.pid.map { "pid \($0)" }]
            .compactMap { $0 }.joined(separator: " · ")
    }

    /// `3 attempts, 2 failed (socket file missing ×2), every 104 ms (max 110 ms); connected after 212 ms`
    public static func connect(_ s: Session) -> String? {
        guard !s.attempts.isEmpty else { return nil }
        let failed = s.attempts.failedCount
        var c = "\(s.attempts.count) attempt\(s.attempts.count == 1 ? "" : "s")"
        if failed > 0 {
            c += ", \(failed) failed (" + s.failureCauses.map { "\($0.0) ×\($0.1)" }.joined(separator: ", ") + ")"
        }
        if let cad = s.attemptCadence { c += ", every \(Fmt.duration(cad.median)) (max \(Fmt.duration(cad.max)))" }
        if let at = s.connectedAt, let start = s.start {
            // Whole-second logs (idevicesyslog) cannot tell a connection within the second.
            let coarse = at == start && at % 1_000_000 == 0
            c += coarse ? "; connected within the same second" : "; connected after \(Fmt.duration(at - start))"
        } else if s.connectedAt == nil {
            c += "; never connected"
        }
        return c
    }

    public static func relay(_ s: Session) -> String? {
        guard let r = s.relay else { return nil }
        var line = "session \(r.id)"
        if let peer = r.peer { line += " (\(peer)" + (r.room.map { ", room \($0)" } ?? "") + ")" }
        if let f = r.frames { line += ", \(f) frames" }
        if let fps = r.meanFps { line += ", \(Fmt.decimal(fps, 1)) fps" }
        if !r.stalls.isEmpty { line += ", \(r.stalls.count) stall\(r.stalls.count == 1 ? "" : "s")" }
        line += r.reason.map { ", closed: \($0)" } ?? ", not closed in these logs"
        if let note = r.backwardsNote { line += "; " + note }
        return line
    }

    public static func frames(_ s: Session) -> String? {
        guard s.frames > 0 else { return nil }
        var f = "\(s.frames)"
        if let a = s.firstFrameAt, let b = s.lastFrameAt, b > a, s.frames > 1 {
            f += " (\(Fmt.decimal(Double(s.frames - 1) / (Double(b - a) / 1e6), 1))/s)"
        }
        return f
    }

    /// Whether a session counts as failing (every outcome but a clean completion).
    public static func failing(_ s: Session) -> Bool { s.outcome != .completed }
}

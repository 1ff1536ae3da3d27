/// Which sessions a report shows (`--session`, `--only-problems`, `--min-severity`, `-g`,
/// `-n`, `-r`): the whole bundle is still analyzed and summed up in the header; only the
/// session blocks are chosen.
public struct SessionSelection: Sendable {
    /// Session ids (`S3`, `s3`, `3`) or pids (`pid:915`, or a number no session id has).
    public var ids: [String] = []
    /// Only sessions that did not complete cleanly or have a warning or worse.
    public var onlyProblems = false
    /// Only sessions with a finding of this severity or worse.
    public var minSeverity: Severity?
    /// Only sessions with a line (message, process, reason or finding) this predicate accepts.
    public var matches: (@Sendable (String) -> Bool)?
    /// The N most recent sessions (after the other filters).
    public var last: Int?
    /// Newest first.
    public var reverse = false

    public init() {}

    public var isEmpty: Bool { ids.isEmpty && !onlyProblems && minSeverity == nil && matches == nil && last == nil && !reverse }

    /// What the selection kept, in display order, and a line saying so.
    public struct Result: Sendable {
        public var sessions: [Session]
        public var note: String?
        /// Findings without a session (bundle-wide) still shown.
        public var keepsBundleFindings: Bool
    }

    public func apply(_ r: AnalysisReport) -> Result {
        var kept = r.sessions
        var why: [String] = []
        let found = r.findingsBySession()
        let findings: (Session) -> [Finding] = { found[$0.id] ?? [] }
        if !ids.isEmpty {
            kept = kept.filter { s in ids.contains { Self.names($0, s, all: r.sessions) } }
            why.append("--session \(ids.joined(separator: ","))")
        }
        if onlyProblems {
            kept = kept.filter { s in
                s.outcome != .completed || findings(s).contains { $0.severity >= .warning }
            }
            why.append("--only-problems")
        }
        if let minSeverity {
            kept = kept.filter { s in findings(s).contains { $0.severity >= minSeverity } }
            why.append("--min-severity \(minSeverity.rawValue)")
        }
        if let matches {
            kept = kept.filter { s in
                matches(s.reason) || s.process.map(matches) == true || s.events.contains { $0.anyLineMessage(matches) }
                    || findings(s).contains { matches($0.message) || matches($0.kind) }
            }
            why.append("-g")
        }
        if let last, kept.count > last {
            kept = Array(kept.suffix(last))
            why.append("-n \(last)")
        }
        if reverse { kept.reverse() }
        let note = why.isEmpty ? nil : "\(kept.count) of \(r.sessions.count) session\(r.sessions.count == 1 ? "" : "s") (\(why.joined(separator: ", ")))"
        return Result(sessions: kept, note: note, keepsBundleFindings: ids.isEmpty && matches == nil)
    }

    /// Whether `key` names session `s`: its id (`S3`, `s3`, `3`), or its pid (`pid:915`, or
    /// a bare number that is no session's number).
    static func names(_ key: String, _ s: Session, all: [Session]) -> Bool {
        let k = key.lowercased()
        if k == s.id.lowercased() { return true }
        if k.hasPrefix("pid:") || k.hasPrefix("pid=") { return Int(k.dropFirst(4)) == s.pid }
        if let n = Int(k) {
            if all.contains(where: { $0.id.lowercased() == "s\(n)" }) { return s.id.lowercased() == "s\(n)" }
            return s.pid == n
        }
        return false
    }

    /// The report with only the kept sessions (and their findings), for the other formats.
    public func filtered(_ r: AnalysisReport, _ result: Result) -> AnalysisReport {
        var out = r
        let ids = Set(result.sessions.map(\.id))
        out.sessions = result.sessions
        out.findings = r.findings.filter(sessions: ids, bundle: result.keepsBundleFindings)
        if !result.keepsBundleFindings {
            out.relaySessions = r.relaySessions.joined(to: ids)
            out.unattached = []
        }
        return out
    }
}

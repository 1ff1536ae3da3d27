/// How bad a finding is.
public enum Severity: String, Sendable, Comparable, CaseIterable {
    case info, warning, error

    var rank: Int { Severity.allCases.firstIndex(of: self)! }
    public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
}

/// What a support engineer would tell the customer: what went wrong in which session, since
/// when, and the lines that prove it.
public struct Finding: Sendable {
    public var kind: String
    public var severity: Severity
    public var time: Int64?
    public var displayOffset: Int = 0
    /// The device session it is about (nil for bundle-level findings).
    public var session: String?
    /// One sentence.
    public var message: String {
        get { text.string }
        set { text = .literal(newValue) }
    }
    public var evidence: [SourceRef]
    /// The sentence, or the parts it is written from when read: a relay fleet's bundle has tens
    /// of thousands of `orphan-relay-session` findings, whose sentences differ only by an id
    /// the report holds anyway.
    private var text: Text

    enum Text: Sendable {
        case literal(String)
        /// A relay session (id, peer) that no device session accounts for.
        case relayWithoutDevice(String, String?)

        var string: String {
            switch self {
            case .literal(let s): return s
            case .relayWithoutDevice(let id, let peer):
                return "relay session \(id) (\(peer ?? "unknown peer")) has no device session in these logs"
            }
        }
    }

    public init(kind: String, severity: Severity, time: Int64?, displayOffset: Int = 0, session: String?, message: String,
                evidence: [SourceRef])
    {
        self.init(kind: kind, severity: severity, time: time, displayOffset: displayOffset, session: session,
                  text: .literal(message), evidence: evidence)
    }

    init(kind: String, severity: Severity, time: Int64?, displayOffset: Int = 0, session: String?, text: Text,
         evidence: [SourceRef])
    {
        self.kind = kind
        self.severity = severity
        self.time = time
        self.displayOffset = displayOffset
        self.session = session
        self.text = text
        self.evidence = evidence
    }
}

/// The thresholds the rules use; each can be set on the command line or in a config file.
public struct Thresholds: Sendable, Equatable {
    /// connect-retry-storm: more attempts than this…
    public var retryStormAttempts = 5
    /// …or connecting (or failing to) for longer than this (Sendbird: 5 × 0.3 s).
    public var retryStormSeconds = 1.5
    /// socket-file-missing in a session that did connect: ENOENT for at least this long.
    public var socketMissingSeconds = 1.5
    /// slow-start: started → first frame (or connected) slower than this.
    public var slowStartSeconds = 3.0
    /// frame-stall: no frames for longer than this while streaming.
    public var stallSeconds = 2.0
    /// low-frame-rate: below this many frames per second (every third frame of 30 is 10).
    public var minFps = 5.0
    /// clock-skew: relay and phone clocks further apart than this.
    public var clockSkewSeconds = 30.0

    public init() {}

    /// The names `set` and the config file take (the command-line options without `--`).
    public static let names = [
        "retry-storm-attempts", "retry-storm-seconds", "socket-missing-seconds", "slow-start-seconds", "stall-seconds",
        "min-fps", "clock-skew-seconds",
    ]

    public enum Error: Swift.Error, CustomStringConvertible {
        case unknown(String)
        case invalid(String, String)
        public var description: String {
            switch self {
            case .unknown(let k): return "unknown threshold '\(k)' (known: \(Thresholds.names.joined(separator: ", ")))"
            case .invalid(let k, let v): return "threshold '\(k)' needs a number from 0 to \(Int(Thresholds.maximum)), got '\(v)'"
            }
        }
    }

    /// The largest value a threshold takes (seconds become µs, counts an `Int`: no overflow).
    public static let maximum = 1_000_000_000.0

    public mutating func set(_ key: String, _ text: String) throws {
        guard let v = Double(text), v.isFinite, v >= 0, v <= Self.maximum else { throw Error.invalid(key, text) }
        switch key {
        case "retry-storm-attempts": retryStormAttempts = Int(v)
        case "retry-storm-seconds": retryStormSeconds = v
        case "socket-missing-seconds": socketMissingSeconds = v
        case "slow-start-seconds": slowStartSeconds = v
        case "stall-seconds": stallSeconds = v
        case "min-fps": minFps = v
        case "clock-skew-seconds": clockSkewSeconds = v
        default: throw Error.unknown(key)
        }
    }

    /// Reads a config file from disk (see `load(json:origin:)`).
    public mutating func load(file path: String) throws {
        let bytes = try readUpTo((1 << 20) + 1, from: FileSource(path: path))
        guard bytes.count <= 1 << 20 else { throw InputError(path: path, "a config file of over 1 MB is not one") }
        try load(json: String(decoding: bytes, as: UTF8.self), origin: path)
    }

    /// A config file: `{"thresholds": {"min-fps": 8, …}}`.
    public mutating func load(json text: String, origin: String) throws {
        // (a UTF-8 byte order mark, as some editors write one, is no part of the JSON)
        let json = try JSONValue.parse(text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text)
        guard let members = json.objectValue, json["thresholds"].map({ $0.objectValue != nil }) ?? true else {
            throw InputError(path: origin, "a config file is {\"thresholds\": {\"min-fps\": 8, …}}")
        }
        // (a mistyped key, `"threshold"`, left every default in place without a word)
        if let unknown = members.first(where: { $0.0 != "thresholds" }) {
            throw InputError(path: origin, "unknown key '\(Sanitize.line(unknown.0))': a config file is {\"thresholds\": {\"min-fps\": 8, …}}")
        }
        for (k, v) in json["thresholds"]?.objectValue ?? [] {
            guard let s = v.stringValue else { throw Error.invalid(k, v.arrayValue != nil ? "a list" : v.objectValue != nil ? "an object" : "\(v)") }
            try set(k, s)
        }
    }
}

/// One finding rule: small code over the session model.
public protocol FindingRule: Sendable {
    var kind: String { get }
    func findings(_ report: AnalysisReport, _ t: Thresholds) -> [Finding]
}

extension FindingRule {
    /// One finding per line `make` says something of (a message and a severity), in the line's
    /// session, or for the bundle for lines outside any; evidence: the line. A line
    /// `continues` says is more of the previous one's finding (same session, or both outside
    /// any) is added to that finding's evidence instead.
    /// `kinds`: the only kinds `make` says anything of; the other lines are passed over
    /// without being handed to it (a session's lines, once per rule).
    func perLine(_ r: AnalysisReport, kinds: KindSet? = nil, continues: ((_ previous: Event, _ line: Event) -> Bool)? = nil,
                 _ make: (Event) -> (Severity, String)?) -> [Finding] {
        var out: [Finding] = []
        var previous: Event?
        func take(_ e: Event, _ new: (Severity, String) -> Finding) {
            guard let (severity, m) = make(e) else { return }
            if let p = previous, let continues, continues(p, e), !out.isEmpty {
                out[out.count - 1].evidence.append(e.source)
            } else {
                out.append(new(severity, m))
            }
            previous = e
        }
        r.sessions.borrowingForEach { s in
            previous = nil
            for i in s.events.indices {
                if let kinds, !kinds.contains(s.events[i].code) { continue }
                take(s.events[i]) { s.finding(kind, $0, at: s.events[i].time, $1, [s.events[i].source]) }
            }
        }
        previous = nil
        // (Every session's own report has none: no iterator made for it, per rule.)
        if !r.unattached.isEmpty {
            for e in r.unattached.matching(kinds) {
                take(e) { Finding(kind: kind, severity: $0, time: e.time, displayOffset: e.displayOffset, session: nil, message: $1, evidence: [e.source]) }
            }
        }
        return out
    }
}

public enum Findings {
    /// Every rule, one file each in this folder.
    public static let rules: [any FindingRule] = [
        RetryStormRule(), SocketFileMissingRule(), AppGroupNotEntitledRule(), ConnectRefusedRule(), NeverConnectedRule(),
        SlowStartRule(), FrameStallRule(), LowFrameRateRule(), SocketErrorRule(), StoppedByHostRule(),
        ExtensionKilledRule(), AbruptEndRule(), HostAppSuspendedRule(), HostAppTerminatedRule(), HostAppBackgroundExpiringRule(), ReplayKitErrorRule(), OrphanRelaySessionRule(),
        OrphanDeviceSessionRule(), ClockSkewRule(), DuplicateSessionStartRule(), ReplaydKilledRule(), CaptureInterruptedRule(),
        AppCrashedRule(), WritebackOverflowRule(), ScreenShareFailedRule(), DaemonDiedRule(),
    ]

    /// Where `OrphanRelaySessionRule` stands in `rules` (its findings are a run: see `run`),
    /// found once: a type check per rule was a dynamic cast per rule and session.
    static let orphanRelayRuleAt = rules.firstIndex { $0 is OrphanRelaySessionRule } ?? -1

    /// The findings of one session, as `run` makes them for it in a whole report.
    /// (`run`'s order for one session is the rules' order, most severe first: no table of
    /// session places, no sort by them, no list to filter afterwards.)
    /// `orphan`: it connected, and the bundle's relay logs have no session for it.
    public static func forSession(_ s: Session, _ t: Thresholds, orphan: Bool = false) -> [Finding] {
        var one = AnalysisReport()
        one.sessions = [s]
        if orphan { one.orphanDeviceSessions = [s.id] }
        var found: [Finding] = []
        for at in rules.indices where at != orphanRelayRuleAt {
            for f in rules[at].findings(one, t) where f.session == s.id { found.append(f) }
        }
        guard found.indices.dropFirst().contains(where: { found[$0].severity > found[$0 - 1].severity }) else { return found }
        // Stable: by severity, then the rules' order.
        let ranks = found.map { -$0.severity.rank }
        return found.indices.sorted { (ranks[$0], $0) < (ranks[$1], $1) }.map { found[$0] }
    }

    /// All findings, most severe first within each session, sessions in order.
    public static func run(_ report: AnalysisReport, _ t: Thresholds) -> FindingList {
        let order = Dictionary(uniqueKeysWithValues: report.sessions.enumerated().map { ($1.id, $0) })
        var found: [Finding] = []
        // The orphan-relay-session findings are a run (`FindingList`): where it comes among the others.
        var orphans: (at: Int, positions: [Int32])?
        for (at, rule) in rules.enumerated() {
            if at == orphanRelayRuleAt {
                orphans = (found.count, report.relaySessions.orphanFindingIndices)
                continue
            }
            let more = rule.findings(report, t)
            if found.isEmpty { found = more } else { found += more }
        }
        // Sorted by keys (they are moved once, and not at all when they are in order already).
        let keys = found.map { (session: $0.session.flatMap { order[$0] } ?? Int.max, rank: -$0.severity.rank) }
        let before: (Int, Int) -> Bool = { a, b in
            (keys[a].session, keys[a].rank, a) < (keys[b].session, keys[b].rank, b)
        }
        let sorted = found.indices.dropFirst().contains(where: { before($0, $0 - 1) }) ? found.indices.sorted(by: before) : Array(found.indices)
        guard let orphans, !orphans.positions.isEmpty else { return FindingList(sorted.map { found[$0] }) }
        // The run's findings are about no session, warnings, made where the rule stands.
        let runKey = (Int.max, -OrphanRelaySessionRule.severity.rank, orphans.at)
        let split = sorted.partitionPoint { (keys[$0].session, keys[$0].rank, $0) < runKey }
        return FindingList(before: sorted[..<split].map { found[$0] }, orphansOf: report.relaySessions, at: orphans.positions,
                           after: sorted[split...].map { found[$0] })
    }
}

extension Session {
    func finding(_ kind: String, _ severity: Severity, at time: Int64?, _ message: String, _ evidence: [SourceRef]) -> Finding {
        Finding(kind: kind, severity: severity, time: time ?? start, displayOffset: displayOffset, session: id, message: message,
                evidence: evidence)
    }

    /// The span the session covers on its own clock.
    var span: ClosedRange<Int64>? {
        guard let s = start else { return nil }
        return s...max(s, end ?? events.last?.lastTime ?? s)
    }

    /// A failure cause that says the socket file was not there.
    static func isENOENT(_ failure: String) -> Bool {
        failure.hasBytes("socket file missing") || failure.hasPrefix("errno=2 ")
    }
}

extension String {
    /// Substring search on UTF-8 bytes (memchr + memcmp), without the generic string machinery.
    func hasBytes(_ needle: String) -> Bool {
        var copy = self
        var n = needle
        return copy.withUTF8 { h in n.withUTF8 { findBytes(UnsafeRawBufferPointer(h), UnsafeRawBufferPointer($0), from: 0) != nil } }
    }
}

extension AnalysisReport {
    /// Each session's findings in report order, in one pass: writers that go session by
    /// session look them up here instead of filtering every finding per session (thousands
    /// of each in a dense bundle).
    public func findingsBySession() -> [String: [Finding]] {
        var out: [String: [Finding]] = [:]
        for f in findings.made { if let s = f.session { out[s, default: []].append(f) } }
        return out
    }
}

/// The lines a finding is about, counted as they are read (a day of them may be on disk, a
/// chunk at a time): the first, how many, and the first three as evidence (not every line).
struct CountedLines {
    private(set) var first: Event?
    private(set) var count = 0
    private(set) var evidence: [SourceRef] = []

    mutating func add(_ e: Event) {
        if first == nil { first = e }
        count += 1
        if evidence.count < 3 { evidence.append(e.source) }
    }
}

extension Array {
    /// `compactMap` over elements lent in place: `compactMap` and `for x in list` copy each
    /// element (a session is a retain and a release per field, and every rule looks at every
    /// session), and so does handing `buf[i]` to a `borrowing` parameter. An `inout` lending of
    /// the element where it lies copies nothing; `body` only reads it (the list is not
    /// written: the pointer is made mutable for the lending alone).
    func borrowingCompactMap<T>(_ body: (inout Element) throws -> T?) rethrows -> [T] {
        try withUnsafeBufferPointer { buf in
            let lent = UnsafeMutableBufferPointer(mutating: buf)
            var out: [T] = []
            for i in lent.indices { if let v = try body(&lent[i]) { out.append(v) } }
            return out
        }
    }

    /// `forEach` over elements lent in place (see `borrowingCompactMap`).
    func borrowingForEach(_ body: (inout Element) throws -> Void) rethrows {
        try withUnsafeBufferPointer { buf in
            let lent = UnsafeMutableBufferPointer(mutating: buf)
            for i in lent.indices { try body(&lent[i]) }
        }
    }
}

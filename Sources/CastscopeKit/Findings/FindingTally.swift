/// What a report's header says of its findings — how many, of each severity, of each kind in
/// order of first appearance, and the first sessions of each kind — added up a finding at a
/// time: all that is kept of the findings of sessions handed on as they ended
/// (`AnalysisReport.handedOnFindings`), whose findings went out with them.
public struct FindingTally: Sendable {
    public private(set) var count = 0
    public private(set) var severities: [Severity: Int] = [:]
    /// Kinds in order of first appearance: how many, the first five distinct sessions, and how
    /// many are about the bundle (no session).
    public private(set) var kinds: [(kind: String, count: Int, sessions: [String], bundle: Int)] = []
    private var kindIndex: [String: Int] = [:]

    public init() {}

    public init(_ findings: [Finding]) {
        for f in findings { add(f) }
    }

    public mutating func add(_ f: Finding) {
        let k = counted(kind: f.kind, severity: f.severity, 1)
        // At most five ids are needed (four shown, and whether there are more).
        if let s = f.session {
            if kinds[k].sessions.count < 5, !kinds[k].sessions.contains(s) { kinds[k].sessions.append(s) }
        } else {
            kinds[k].bundle += 1
        }
    }

    /// `count` findings of one kind about no session.
    mutating func add(kind: String, severity: Severity, count n: Int) {
        let k = counted(kind: kind, severity: severity, n)
        kinds[k].bundle += n
    }

    /// Counts `n` findings of `kind`; returns the kind's place in `kinds`.
    @discardableResult
    private mutating func counted(kind: String, severity: Severity, _ n: Int) -> Int {
        count += n
        severities[severity, default: 0] += n
        let k: Int
        if let i = kindIndex[kind] {
            k = i
        } else {
            k = kinds.count
            kindIndex[kind] = k
            kinds.append((kind, 0, [], 0))
        }
        kinds[k].count += n
        return k
    }

    /// These findings, then `more` (a report's own, after those handed on).
    public func adding(_ more: [Finding]) -> FindingTally {
        var t = self
        for f in more { t.add(f) }
        return t
    }

    public func adding(_ more: FindingList) -> FindingTally {
        var t = self
        more.tally(into: &t)
        return t
    }

    public init(_ findings: FindingList) { findings.tally(into: &self) }

    /// Every severity, most severe first, zeros included.
    public var severityCounts: [(Severity, Int)] { Severity.allCases.reversed().map { ($0, severities[$0] ?? 0) } }
}

extension AnalysisReport {
    /// Every finding of the report, counted: those handed on with their sessions and the kept ones.
    public var findingTally: FindingTally { (handedOnFindings ?? FindingTally()).adding(findings) }
}

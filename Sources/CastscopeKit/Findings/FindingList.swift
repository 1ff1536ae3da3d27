/// A report's findings in report order: those the rules made, and among them (where their
/// order puts them) one `orphan-relay-session` finding per relay session joined to no device
/// session, made from the session when read. A relay fleet's journal has hundreds of thousands
/// of those; held, they were 176 bytes each (issue 15: memory follows open sessions).
public struct FindingList: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable {
    private var before: [Finding] = []
    /// The relay sessions, and the positions of those the run's findings are about.
    private var relay: RelaySessionList = []
    private var orphans: [Int32] = []
    private var after: [Finding] = []

    public init(_ findings: [Finding]) { before = findings }
    public init(arrayLiteral findings: Finding...) { before = findings }

    init(before: [Finding], orphansOf relay: RelaySessionList, at orphans: [Int32], after: [Finding]) {
        (self.before, self.relay, self.orphans, self.after) = (before, relay, orphans, after)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { before.count + orphans.count + after.count }

    public subscript(i: Int) -> Finding {
        if i < before.count { return before[i] }
        let j = i - before.count
        if j < orphans.count { return OrphanRelaySessionRule.finding(relay[Int(orphans[j])]) }
        return after[j - orphans.count]
    }

    /// How many are about no device session (the bundle's own), without making the run's.
    public var aboutNoSession: Int {
        orphans.count + before.reduce(0) { $0 + ($1.session == nil ? 1 : 0) } + after.reduce(0) { $0 + ($1.session == nil ? 1 : 0) }
    }

    /// The finding at `i`, and the relay session it is about when it is one of the orphan run
    /// (read back once for both).
    public func withRelaySession(_ i: Int) -> (Finding, RelaySession?) {
        let j = i - before.count
        guard j >= 0, j < orphans.count else { return (self[i], nil) }
        let rs = relay[Int(orphans[j])]
        return (OrphanRelaySessionRule.finding(rs), rs)
    }

    /// The findings a rule made (not those of the orphan run, which are about no device session).
    public var made: [Finding] { before + after }

    /// `first`, then these.
    func prepending(_ first: [Finding]) -> FindingList {
        var out = self
        out.before = first + before
        return out
    }

    /// Those of the kept sessions, and the bundle's own when `bundle`.
    func filter(sessions ids: Set<String>, bundle: Bool) -> FindingList {
        let keep: (Finding) -> Bool = { f in f.session.map(ids.contains) ?? bundle }
        var out = self
        out.before = before.filter(keep)
        out.after = after.filter(keep)
        if !bundle { out.orphans = [] }
        return out
    }

    /// Counted into `t`, in order (the run counted at once: its findings differ only by session).
    func tally(into t: inout FindingTally) {
        for f in before { t.add(f) }
        if !orphans.isEmpty { t.add(kind: OrphanRelaySessionRule.kind, severity: OrphanRelaySessionRule.severity, count: orphans.count) }
        for f in after { t.add(f) }
    }
}

/// `a`, then `b`.
public func + (a: [Finding], b: FindingList) -> FindingList { b.prepending(a) }

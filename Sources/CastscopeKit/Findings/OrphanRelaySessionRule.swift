/// orphan-relay-session: the relay received a broadcast that no device session in the bundle
/// accounts for (another phone, or device logs missing from the bundle).
///
/// A relay fleet's bundle has tens of thousands: `Findings.run` keeps them as a run of the
/// report's `FindingList`, each made from its relay session when read (`finding`).
struct OrphanRelaySessionRule: FindingRule {
    static let kind = "orphan-relay-session"
    static let severity = Severity.warning
    var kind: String { Self.kind }

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.relaySessions.orphanFindingIndices.map { Self.finding(r.relaySessions[Int($0)]) }
    }

    /// Its finding on `rs`.
    static func finding(_ rs: RelaySession) -> Finding {
        Finding(kind: kind, severity: severity, time: rs.start, session: nil, text: .relayWithoutDevice(rs.id, rs.peer),
                evidence: rs.firstSource.map { [$0] } ?? [])
    }
}

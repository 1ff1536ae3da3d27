/// orphan-relay-session: the relay received a broadcast that no device session in the bundle
/// accounts for (another phone, or device logs missing from the bundle).
struct OrphanRelaySessionRule: FindingRule {
    let kind = "orphan-relay-session"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        // Counted first: a relay fleet's bundle has tens of thousands, and a list grown by
        // doubling holds up to twice their room for a moment.
        var out: [Finding] = []
        out.reserveCapacity(r.relaySessions.reduce(0) { $0 + ($1.deviceSession == nil ? 1 : 0) })
        for rs in r.relaySessions where rs.deviceSession == nil {
            out.append(Finding(kind: kind, severity: .warning, time: rs.start, session: nil,
                               text: .relayWithoutDevice(rs.id, rs.peer),
                               evidence: rs.firstSource.map { [$0] } ?? []))
        }
        return out
    }
}

/// orphan-relay-session: the relay received a broadcast that no device session in the bundle
/// accounts for (another phone, or device logs missing from the bundle).
struct OrphanRelaySessionRule: FindingRule {
    let kind = "orphan-relay-session"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        Array(r.relaySessions.lazy.filter { $0.deviceSession == nil }.map { rs in
            Finding(kind: kind, severity: .warning, time: rs.start, session: nil,
                    message: "relay session \(rs.id) (\(rs.peer ?? "unknown peer")) has no device session in these logs",
                    evidence: rs.firstSource.map { [$0] } ?? [])
        })
    }
}

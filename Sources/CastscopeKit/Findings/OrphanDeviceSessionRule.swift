/// orphan-device-session: the phone connected to its host app but the relay logs show no session
/// for it (the media never reached the relay, or its logs are missing from the bundle).
struct OrphanDeviceSessionRule: FindingRule {
    let kind = "orphan-device-session"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.filter { r.orphanDeviceSessions.contains($0.id) }.map { s in
            let connected = s.events.first { $0.kind == "socket.connected" }
            return s.finding(kind, .warning, at: s.connectedAt, "the extension connected but the relay logs have no session for this broadcast",
                             connected.map { [$0.source] } ?? [])
        }
    }
}

/// orphan-relay-session: the relay received a broadcast that no device session in the bundle
/// accounts for (another phone, or device logs missing from the bundle).
struct OrphanRelaySessionRule: FindingRule {
    let kind = "orphan-relay-session"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.relaySessions.filter { $0.deviceSession == nil }.map { rs in
            Finding(kind: kind, severity: .warning, time: rs.start, session: nil,
                    message: "relay session \(rs.id) (\(rs.peer ?? "unknown peer")) has no device session in these logs",
                    evidence: rs.events.first.map { [$0.source] } ?? [])
        }
    }
}

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

/// clock-skew: the phone's and the relay server's clocks are far apart (check NTP): the offset
/// was corrected for, but times in other tools will not line up.
struct ClockSkewRule: FindingRule {
    let kind = "clock-skew"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        guard let c = r.clock, !c.forced, Double(abs(c.offset)) / 1e6 > t.clockSkewSeconds else { return [] }
        return [Finding(kind: kind, severity: .warning, time: nil, session: nil,
                        message: "the relay's clock is \(Fmt.duration(abs(c.offset))) \(c.offset > 0 ? "ahead of" : "behind") the phone's",
                        evidence: c.evidence.prefix(2).flatMap { [$0.0, $0.1] })]
    }
}

/// duplicate-session-start: a second broadcastStarted before the first session ended.
struct DuplicateSessionStartRule: FindingRule {
    let kind = "duplicate-session-start"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.compactMap { s in
            guard s.interruptedByNewStart, let e = s.deciding.first else { return nil }
            return s.finding(kind, .warning, at: e.time, "a second broadcastStarted arrived before this session ended", [e.source])
        }
    }
}

/// never-connected: the extension tried but never reached the host app (or, for an SDK whose
/// extension sends on its own, its server), so nothing was shared.
struct NeverConnectedRule: FindingRule {
    let kind = "never-connected"

    /// What the extension connects to: the host app, but for SDKs whose extension sends the
    /// stream itself (HaishinKit pushes RTMP; Twilio's extension joins the room).
    static func peer(sdk: String) -> String {
        switch sdk {
        case "haishinkit": return "the RTMP server"
        case "twilio": return "Twilio's servers"
        default: return "the host app"
        }
    }

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.borrowingCompactMap { s in
            guard !s.attempts.isEmpty, !s.connected else { return nil }
            let last = s.deciding.last?.source ?? s.attempts.last!.source
            // (HaishinKit's SRT module pushes SRT, not RTMP: SRTHaishinKit#16)
            let srt = s.sdk == "haishinkit" && s.attempts.contains { $0.failure == "SRT connection setup failure" }
            return s.finding(kind, .error, at: s.start,
                             "the extension never connected to \(srt ? "the SRT server" : Self.peer(sdk: s.sdk)) (\(s.attempts.count) attempt\(s.attempts.count == 1 ? "" : "s")): nothing was shared",
                             [s.attempts.first!.source, last])
        }
    }
}

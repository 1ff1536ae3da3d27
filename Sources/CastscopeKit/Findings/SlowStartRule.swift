/// slow-start: from broadcastStarted to the first frame (or to connected, when no frames are
/// logged) takes longer than the threshold: the viewer waits on a black screen.
struct SlowStartRule: FindingRule {
    let kind = "slow-start"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.borrowingCompactMap { s in
            guard let start = s.start, !s.startInferred, let ready = s.firstFrameAt ?? s.connectedAt else { return nil }
            let wait = ready - start
            guard Double(wait) / 1e6 > t.slowStartSeconds else { return nil }
            let what = s.firstFrameAt != nil ? "the first frame" : "the connection"
            let readyEvent = s.events.first { $0.time == ready && ($0.kind == "frame.sent" || $0.kind == "socket.connected") }
            return s.finding(kind, .warning, at: start, "\(what) came \(Fmt.duration(wait)) after the broadcast started",
                             [s.events.first!.source] + (readyEvent.map { [$0.source] } ?? []))
        }
    }
}

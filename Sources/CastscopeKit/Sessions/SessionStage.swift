/// The sessions stage of `analyze`: time-ordered device lines go through a `SessionStream`;
/// each session it lets go is either kept for the report, or (with a sink) finished on other
/// threads while the next ones are built, and then let go: its findings and the sink's
/// `prepare` (the report's bytes for it) on any of `finishers` threads, several sessions at
/// once; then the sink itself, in start order. Fed a whole bundle at once, or a big file's
/// lines as they are read.
final class SessionStage {
    /// What the finishing threads add up; read only after `finish` joined them.
    final class Finished: @unchecked Sendable {
        var tally = SessionTally()
        var findings: [Finding] = []
        /// Without `keepsFindings`: the findings' counts only.
        var findingTally: FindingTally?
    }

    var stream = SessionStream()
    private(set) var sessions: [Session] = []
    /// Sessions written to disk for the relay join instead of kept (`HeldDeviceSessions`).
    let held: HeldDeviceSessions?
    private let finished = Finished()
    private var pipe: SessionPipe?

    /// With a sink and without `keepsFindings`, a session's findings go out with it and only
    /// their counts stay. `holding`: sessions go there as they end, not into `sessions`.
    /// `joined`: the sessions come from the relay join (`handOn`), and one that connected
    /// with no relay session is an orphan.
    init(idleHorizon: Int64, thresholds: Thresholds, capacity: Int, sink: SessionSink?, finishers: Int = 1,
         keepsFindings: Bool = true, holding: HeldDeviceSessions? = nil, joined: Bool = false)
    {
        stream.idleHorizon = idleHorizon
        held = holding
        let finished = self.finished
        if !keepsFindings { finished.findingTally = FindingTally() }
        // Kept sessions stay in memory anyway: parking them would only cost a spill.
        if sink == nil && holding == nil { stream.parkAfter = Int.max }
        pipe = sink.map { sink in
            SessionPipe(capacity: capacity, workers: finishers, prepare: { s in
                let found = Findings.forSession(s, thresholds, orphan: joined && s.relay == nil && s.connectedAt != nil)
                return FinishedSession(session: s, findings: found, prepared: sink.prepare?(s, found))
            }, commit: { done in
                finished.tally.add(done.session)
                if finished.findingTally != nil {
                    for f in done.findings { finished.findingTally!.add(f) }
                } else {
                    finished.findings.append(contentsOf: done.findings)
                }
                sink.take(done.session, done.findings, done.prepared)
            })
        }
    }

    var handsOn: Bool { pipe != nil }

    /// Which streams are extension processes (before their lines are fed).
    func learn(_ events: [Event]) { stream.learn(events) }

    /// Feeds `events[range]` (in time order), each moved out of the array as it is fed: its
    /// strings are freed with the session that took it.
    func feed(_ events: inout [Event], _ range: Range<Int>) {
        events.drain(range) { stream.feed($0, emit: emit) }
    }

    private func emit(_ s: Session) {
        guard let pipe else {
            if let held { held.add(s) } else { sessions.append(s) }
            return
        }
        pipe.put(s)
    }

    /// A session built elsewhere (read back after the relay join), handed on as `emit` hands
    /// on those this stage builds.
    func handOn(_ s: Session) { emit(s) }

    /// After the last `handOn`: the sessions handed on are finished, and counted in `report`.
    func finishHandingOn(into report: inout AnalysisReport) {
        pipe?.finish()
        report.streamed = finished.tally
        report.handedOnFindings = finished.findingTally
    }

    /// The end of the lines: every session is closed and handed on (and finished).
    func finish(into report: inout AnalysisReport) {
        stream.finish(emit: emit)
        pipe?.finish()
        report.sessions = sessions
        sessions = []
        report.unattached = stream.unattached
        if pipe != nil {
            report.streamed = finished.tally
            report.handedOnFindings = finished.findingTally
        }
    }

    /// The sessions' findings, made as they ended (with a sink).
    var findings: [Finding] { finished.findings }

    /// Gives up: waits for the sessions already handed on, keeps nothing.
    func abandon() {
        pipe?.finish()
        sessions = []
    }
}

/// replaykit-error: ReplayKit reported an error (`RPRecordingErrorDomain` code, with its meaning).
struct ReplayKitErrorRule: FindingRule {
    let kind = "replaykit-error"

    static let meanings: [String: String] = [
        "-5801": "the user declined the recording",
        "-5802": "recording is disabled (parental controls or MDM)",
        "-5803": "recording failed to start",
        "-5804": "ReplayKit failed",
        "-5805": "insufficient storage",
        "-5806": "recording was interrupted",
        "-5807": "the content is protected (a FairPlay video is on screen)",
        "-5808": "the broadcast session is invalid (the extension failed to start)",
        "-5815": "the broadcast extension could not be found",
        "-5833": "audio or video capture failed to start",
    ]

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        var out: [Finding] = []
        func make(_ e: Event, _ session: Session?) -> Finding {
            let code = e.attr("code") ?? "?"
            let meaning = Self.meanings[code] ?? e.attr("text") ?? "unknown code"
            let m = "ReplayKit error \(code): \(meaning)"
            if let session { return session.finding(kind, .error, at: e.time, m, [e.source]) }
            return Finding(kind: kind, severity: .error, time: e.time, displayOffset: e.displayOffset, session: nil, message: m,
                           evidence: [e.source])
        }
        for s in r.sessions { for e in s.events where e.kind == "replaykit.error" { out.append(make(e, s)) } }
        for e in r.unattached where e.kind == "replaykit.error" { out.append(make(e, nil)) }
        return out
    }
}

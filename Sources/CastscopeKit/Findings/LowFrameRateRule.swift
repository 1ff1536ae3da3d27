/// low-frame-rate: frames arrive well below the expected rate (the Jitsi design sends every
/// third frame of 30, ≈10 fps): measured on the device's frame lines, else the relay's stats.
struct LowFrameRateRule: FindingRule {
    let kind = "low-frame-rate"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.borrowingCompactMap { s in
            var fps: Double?
            var evidence: [SourceRef] = []
            // The first and last frame lines (an extension's, or an in-app capture's: both are
            // counted in `frames`), found in place: a filtered list would copy them all.
            let isFrame: (Event) -> Bool = { $0.code == .frameSent || $0.code == .captureFrame }
            if s.frames >= 10, let a = s.firstFrameAt, let b = s.lastFrameAt, b > a,
                let first = s.events.firstIndex(where: isFrame), let last = s.events.lastIndex(where: isFrame)
            {
                fps = Double(s.frames - 1) / (Double(b - a) / 1e6)
                evidence = [s.events[first].source, s.events[last].lastSource]
            } else if let stats = s.relay?.stats, !stats.isEmpty {
                fps = stats.map(\.fps).reduce(0, +) / Double(stats.count)
                evidence = [stats.first!.source, stats.last!.source]
            }
            guard let fps, fps < t.minFps else { return nil }
            return s.finding(kind, .warning, at: s.firstFrameAt ?? s.connectedAt,
                             "frames arrive at \(Fmt.decimal(fps, 1)) fps, below \(Fmt.decimal(t.minFps, 1)) fps", evidence)
        }
    }
}

/// frame-stall: while streaming, no frames for longer than the threshold — on the device (gaps
/// between frame lines) or at the relay (its `no frames for N s` lines, within the session).
struct FrameStallRule: FindingRule {
    let kind = "frame-stall"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        var out: [Finding] = []
        let limit = Int64(t.stallSeconds * 1e6)
        r.sessions.borrowingForEach { s in
            guard let span = s.span else { return }
            // The previous frame line: its time, path and line number (references are built
            // only for a stall, not for each of tens of thousands of lines).
            var previous: (time: Int64, path: String, line: Int)?
            // By index: `for e in s.events` copies every event (a retain and release per string).
            for i in s.events.indices where s.events[i].code == .frameSent && s.events[i].side == .extension {
                let path = s.events[i].sourcePath
                s.events[i].forEachTimeAndLine { t, line in
                    guard let t else { return }
                    if let p = previous, t - p.time > limit {
                        out.append(s.finding(kind, .warning, at: p.time, "no frames for \(Fmt.duration(t - p.time)) while streaming (device)",
                                             [SourceRef(path: p.path, line: p.line), SourceRef(path: path, line: line)]))
                    }
                    previous = (t, path, line)
                }
            }
            for i in s.events.indices where s.events[i].code == .relayStalled {
                let e = s.events[i]
                guard let te = e.time, span.contains(te) else { continue }
                out.append(s.finding(kind, .warning, at: te, "the relay received no frames: \(e.message)", [e.source]))
            }
        }
        return out
    }
}

/// frame-stall: while streaming, no frames for longer than the threshold — on the device (gaps
/// between frame lines) or at the relay (its `no frames for N s` lines, within the session).
struct FrameStallRule: FindingRule {
    let kind = "frame-stall"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        var out: [Finding] = []
        let limit = Int64(t.stallSeconds * 1e6)
        for s in r.sessions {
            guard let span = s.span else { continue }
            let frames = s.events.filter { $0.kind == "frame.sent" && $0.side == .extension }
            for (a, b) in zip(frames, frames.dropFirst()) {
                guard let ta = a.time, let tb = b.time, tb - ta > limit else { continue }
                out.append(s.finding(kind, .warning, at: ta, "no frames for \(Fmt.duration(tb - ta)) while streaming (device)",
                                     [a.source, b.source]))
            }
            for e in s.events where e.kind == "relay.stalled" {
                guard let te = e.time, span.contains(te) else { continue }
                out.append(s.finding(kind, .warning, at: te, "the relay received no frames: \(e.message)", [e.source]))
            }
        }
        return out
    }
}

/// frame-stall: while streaming, no frames for longer than the threshold — on the device (gaps
/// between frame lines) or at the relay (its `no frames for N s` lines, within the session).
struct FrameStallRule: FindingRule {
    let kind = "frame-stall"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        var out: [Finding] = []
        let limit = Int64(t.stallSeconds * 1e6)
        for s in r.sessions {
            guard let span = s.span else { continue }
            var previous: (Int64, SourceRef)?
            for e in s.events where e.kind == "frame.sent" && e.side == .extension {
                e.forEachLine { t, source in
                    guard let t else { return }
                    if let (ta, sa) = previous, t - ta > limit {
                        out.append(s.finding(kind, .warning, at: ta, "no frames for \(Fmt.duration(t - ta)) while streaming (device)",
                                             [sa, source]))
                    }
                    previous = (t, source)
                }
            }
            for e in s.events where e.kind == "relay.stalled" {
                guard let te = e.time, span.contains(te) else { continue }
                out.append(s.finding(kind, .warning, at: te, "the relay received no frames: \(e.message)", [e.source]))
            }
        }
        return out
    }
}

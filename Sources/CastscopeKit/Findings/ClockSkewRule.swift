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

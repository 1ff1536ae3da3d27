/// capture-interrupted: an in-app capture (RPScreenRecorder.startCapture) stopped because the
/// app left the foreground — by design: in-app capture only records the app while it is
/// active; sharing beyond it needs a Broadcast Upload Extension.
struct CaptureInterruptedRule: FindingRule {
    let kind = "capture-interrupted"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.borrowingCompactMap { s in
            guard s.capture == "in-app", s.outcome == .interrupted, let e = s.deciding.first else { return nil }
            return s.finding(kind, .warning, at: e.time,
                             "in-app screen capture stopped when the app left the foreground (\(e.attr("cause") ?? e.message)): in-app capture records only the active app; share beyond it with a Broadcast Upload Extension",
                             s.deciding.map(\.source))
        }
    }
}

/// app-group-not-entitled: a process may not use the app group container, so the socket file
/// can never be created or found there (the app group IDs of the host app and the extension
/// must match and be in both entitlements).
struct AppGroupNotEntitledRule: FindingRule {
    let kind = "app-group-not-entitled"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        var out: [Finding] = []
        let message = "a process is not entitled to the app group: the shared container (and the socket file in it) cannot be used; check that the host app and the extension list the same app group"
        for s in r.sessions {
            for i in s.events.indices where s.events[i].kind == "app_group.not_entitled" {
                out.append(s.finding(kind, .error, at: s.events[i].time, message, [s.events[i].source]))
            }
        }
        for e in r.unattached where e.kind == "app_group.not_entitled" {
            out.append(Finding(kind: kind, severity: .error, time: e.time, displayOffset: e.displayOffset, session: nil,
                               message: message, evidence: [e.source]))
        }
        return out
    }
}

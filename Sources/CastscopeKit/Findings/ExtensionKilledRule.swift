/// extension-killed: the system killed the extension — jetsam at the extension memory limit
/// (`EXC_RESOURCE … exceeded mem limit: ActiveHard 50 MB`) or signal 9.
struct ExtensionKilledRule: FindingRule {
    let kind = "extension-killed"
    /// How long before the kill line a nameless `exceeded mem limit` line is its reason.
    static let exceededBeforeKill: Int64 = 2_000_000

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        r.sessions.borrowingCompactMap { s in
            guard s.outcome == .killed, let e = s.deciding.first else { return nil }
            var m = "the extension"
            if let p = e.attr("target") ?? s.process { m += " \(p)" }
            if let pid = e.attr("target_pid") ?? s.pid.map(String.init) { m += "[\(pid)]" }
            // The kernel's `exceeded mem limit` line names no process on some iOS versions (the
            // kill line after it does): the session's nameless one just before the kill says why.
            var limit = e
            var evidence = [e.source]
            if e.attr("limit_mb") == nil, let t = e.time,
               let exceeded = s.events.last(where: { x in
                   x.code == .extensionKilledMemory && x.attr("target") == nil && x.attr("limit_mb") != nil
                       && x.time.map { $0 <= t && t - $0 <= Self.exceededBeforeKill } ?? false
               })
            {
                limit = exceeded
                evidence.insert(exceeded.source, at: 0)
            }
            if let mb = limit.attr("limit_mb"), let n = Int(mb), n < 45 {
                m += " was killed by jetsam (\(limit.attr("limit_kind") ?? "limit")) at \(mb) MB, under the 50 MB broadcast extensions have: its limit was lowered, or memory ran short; frames must be encoded and sent without holding them"
            } else if let mb = limit.attr("limit_mb") {
                m += " was killed at its \(mb) MB memory limit (\(limit.attr("limit_kind") ?? "limit")): frames must be encoded and sent without holding them"
            } else if e.attr("reason") == "per-process-limit" {
                // (the kernel's `killing_specific_process … (per-process-limit …) 51200KB` or
                // osanalyticshelper's `killed by jetsam reason per-process-limit`: its own limit,
                // the footprint the kernel gives when it gives one)
                let kb = e.attr("footprint_kb").flatMap { Int($0) }
                m += " was killed by jetsam for exceeding its memory limit (per-process-limit" + (kb.map { ", footprint \($0 / 1024) MB" } ?? "")
                    + "): frames must be encoded and sent without holding them"
            } else {
                m += IPSReport.isCrash(e.message) ? " crashed (\(e.message))" : " was killed (\(e.message))"
            }
            return s.finding(kind, .error, at: e.time, m, evidence)
        }
    }
}

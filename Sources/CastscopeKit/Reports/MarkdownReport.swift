/// `--markdown`: a report to paste into a ticket.
public enum MarkdownReport {
    static func cell(_ s: String) -> String {
        s.replacingOccurrences("|", "\\|").replacingOccurrences("\n", " ")
    }

    static func code(_ s: String) -> String { "`" + s.replacingOccurrences("`", "'") + "`" }

    public static func render(_ r: AnalysisReport) -> String {
        var out = "# castscope report\n\n"
        var outcomes: [String] = []
        for o in Outcome.allCases {
            let n = r.sessions.filter { $0.outcome == o }.count
            if n > 0 { outcomes.append("\(n) \(o.rawValue)") }
        }
        out += "**\(r.sessions.count) session\(r.sessions.count == 1 ? "" : "s")**"
        if !outcomes.isEmpty { out += " (" + outcomes.joined(separator: ", ") + ")" }
        out += " from \(r.inputs.count) file\(r.inputs.count == 1 ? "" : "s")"
        if !r.findings.isEmpty {
            let kinds = JSONReport.findingCounts(r.findings).map { $0.1 > 1 ? "\(code($0.0)) ×\($0.1)" : code($0.0) }
            out += " · **findings**: " + kinds.joined(separator: ", ")
        }
        out += "\n\n"
        if let c = r.clock { out += "Clock: \(TextReport(color: false).clockLine(c)).\n\n" }
        if !r.sessions.isEmpty {
            out += "| Session | SDK | Process | Start | Duration | Outcome | Findings |\n|---|---|---|---|---|---|---|\n"
            for s in r.sessions {
                let who = s.process.map { p in s.pid.map { "\(p)[\($0)]" } ?? p } ?? "-"
                let start = s.start.map { Fmt.rfc3339($0, offset: s.displayOffset) } ?? "-"
                let kinds = r.findings.filter { $0.session == s.id }.map(\.kind)
                out += "| \(s.id) | \(s.sdk) | \(cell(who)) | \(start) | \(s.duration.map(Fmt.duration) ?? "-") | **\(s.outcome.rawValue)** | \(cell(kinds.joined(separator: ", "))) |\n"
            }
            out += "\n"
        }
        for s in r.sessions {
            let who = [s.sdk, s.process.map { p in s.pid.map { "\(p)[\($0)]" } ?? p }].compactMap { $0 }.joined(separator: " ")
            out += "## \(s.id) — \(who) — \(s.outcome.rawValue)\n\n"
            out += "- **Why**: \(s.reason)\n"
            if !s.attempts.isEmpty {
                var c = "- **Connect**: \(s.attempts.count) attempt\(s.attempts.count == 1 ? "" : "s")"
                if let cad = s.attemptCadence { c += ", every \(Fmt.duration(cad.median)) (max \(Fmt.duration(cad.max)))" }
                c += s.connectedAt.flatMap { at in s.start.map { "; connected after \(Fmt.duration(at - $0))" } } ?? "; never connected"
                out += c + "\n"
            }
            if let rs = s.relay {
                out += "- **Relay**: session \(code(rs.id)), \(rs.frames.map { "\($0) frames" } ?? "frames unknown"), closed: \(rs.reason ?? "not in these logs")\n"
            }
            let fs = r.findings.filter { $0.session == s.id }
            if !fs.isEmpty {
                out += "\n**Findings**\n\n"
                for f in fs { out += finding(f) }
            }
            out += "\n<details><summary>Timeline</summary>\n\n| t (s) | side | line | source |\n|---|---|---|---|\n"
            for t in Timeline.entries(s.events) {
                let rel = t.time.flatMap { tt in s.start.map { Fmt.relative(tt - $0) } } ?? ""
                out += "| \(rel) | \(TextReport.sideTag(t.side)) | \(cell(t.text)) | \(code(t.first.description)) |\n"
            }
            out += "\n</details>\n\n"
        }
        let general = r.findings.filter { $0.session == nil }
        if !general.isEmpty {
            out += "## Bundle findings\n\n"
            for f in general { out += finding(f) }
            out += "\n"
        }
        if !r.errors.isEmpty {
            out += "## Input errors\n\n"
            for e in r.errors { out += "- \(code(e.description))\n" }
        }
        return out
    }

    static func finding(_ f: Finding) -> String {
        "- **\(f.severity.rawValue)** \(code(f.kind)) — \(f.message)" + (f.evidence.isEmpty ? "" : " (" + f.evidence.map { code($0.description) }.joined(separator: ", ") + ")") + "\n"
    }
}

/// `--markdown`: a report to paste into a ticket (GitHub, GitLab, Jira's Markdown).
///
/// Every log message, path and id is a code span (fenced with more backticks than it holds,
/// `|` escaped in tables), so `<private>`, backticks and `**` arrive as written; castscope's
/// own sentences are escaped Markdown text. By default the report fits `defaultLimit`
/// characters (GitHub rejects issue bodies over 65,536): the summary table, the failing
/// sessions in full, the others as their one table row, and a closing line that says what
/// was left out. `limit: nil` (`--markdown-full`) writes everything.
public enum MarkdownReport {
    public static let defaultLimit = 65_536

    /// A code span that holds `s` exactly: fenced with one backtick more than its longest run.
    public static func code(_ s: String, inTable: Bool = false) -> String {
        var t = s.replacingOccurrences("\r\n", " ").replacingOccurrences("\n", " ").replacingOccurrences("\r", " ")
        if inTable { t = t.replacingOccurrences("|", "\\|") }
        if t.isEmpty { return "` `" }
        var longest = 0
        var run = 0
        for c in t.unicodeScalars {
            run = c == "`" ? run + 1 : 0
            longest = max(longest, run)
        }
        let fence = String(repeating: "`", count: longest + 1)
        // A span that starts or ends with a backtick (or a space) needs a space inside each fence.
        let pad = t.hasPrefix("`") || t.hasSuffix("`") || (t.hasPrefix(" ") && t.hasSuffix(" ")) ? " " : ""
        return fence + pad + t + pad + fence
    }

    /// Markdown text that shows `s` literally: punctuation that could start markup is escaped.
    public static func text(_ s: String, inTable: Bool = false) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "\\", "`", "*", "_", "[", "]", "<", ">", "~", "&", "|", "#":
                out += "\\"
                out.unicodeScalars.append(c)
            case "\n", "\r": out += " "
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    static func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

    public static func render(_ r: AnalysisReport, limit: Int? = defaultLimit, provenance: Provenance = .current()) -> String {
        let head = head(r, provenance: provenance)
        var (tail, leftOut) = tail(r, limit: limit)
        let bySession = r.findingsBySession()
        let sections = r.sessions.map { s in (s, bySession[s.id] ?? []) }
        let rows = sections.map { row($0.0, $0.1) }

        guard let limit else {
            var out = head
            if !r.sessions.isEmpty { out += tableHead + rows.joined() + "\n" }
            for (s, fs) in sections { out += section(s, fs, timeline: true) }
            return out + tail
        }
        var failing: [Int] = []
        var full: [String] = [], short: [String] = []
        for (k, (s, fs)) in sections.enumerated() where SessionFacts.failing(s) {
            failing.append(k)
            full.append(section(s, fs, timeline: true))
            short.append(section(s, fs, timeline: false))
        }
        let plan = Plan(limit: limit, head: size(head), tail: size(tail), rows: rows.map(size), failing: failing,
                        full: full.map(size), short: short.map(size))
        leftOut += plan.leftOut
        var out = head
        if !rows.isEmpty {
            out += tableHead
            for i in rows.indices where plan.keepRow[i] { out += rows[i] }
            out += "\n"
        }
        for j in failing.indices {
            switch plan.section[j] {
            case .full: out += full[j]
            case .short: out += short[j]
            case .none: break
            }
        }
        return out + tail + note(limit: limit, leftOut: leftOut, healthy: r.sessions.count - failing.count)
    }

    /// A Markdown report's size as `render` counts it (UTF-16 units, as GitHub counts characters).
    public static func size(_ s: String) -> Int { s.utf16.count }

    public static let tableHead = "| Session | SDK | Process | Start | Duration | Outcome | Findings |\n|---|---|---|---|---|---|---|\n"

    /// The title, the summary line (sessions, outcomes, findings: `tally` and `findingTally`,
    /// so that a report written as its sessions ended says the same), provenance and clock.
    public static func head(_ r: AnalysisReport, provenance: Provenance) -> String {
        var head = "# castscope report\n\n"
        var outcomes: [String] = []
        let tally = r.tally
        for o in Outcome.allCases {
            let n = tally.outcomes[o] ?? 0
            if n > 0 { outcomes.append("\(n) \(o.rawValue)") }
        }
        head += "**\(plural(tally.count, "session"))**"
        if !outcomes.isEmpty { head += " (" + outcomes.joined(separator: ", ") + ")" }
        head += " from \(plural(r.inputs.count, "file"))"
        if !r.errors.isEmpty { head += ", **\(plural(r.errors.count, "input error"))**" }
        let findings = r.findingTally
        if findings.count > 0 {
            let sev = findings.severityCounts.filter { $0.1 > 0 }.map { plural($0.1, $0.0.rawValue) }
            let kinds = findings.kinds.map { $0.count > 1 ? "\(code($0.kind)) ×\($0.count)" : code($0.kind) }
            head += " · **findings**: " + sev.joined(separator: ", ") + " — " + kinds.joined(separator: ", ")
        }
        head += "\n\n"
        head += "castscope \(text(provenance.version)) · generated \(provenance.generatedText) · \(code(provenance.commandText))\n\n"
        if let c = r.clock { head += "Clock: \(text(TextReport(color: false).clockLine(c))).\n\n" }
        return head
    }

    /// The bundle's findings, orphans and input errors, and what of them `limit` left out.
    public static func tail(_ r: AnalysisReport, limit: Int?) -> (String, [String]) {
        var tail = ""
        var leftOut: [String] = []
        // Bundle-wide lists are kept to their first 20 within the limit (a relay fleet's bundle
        // has tens of thousands of orphans); the JSON report has them all.
        let listMax = limit == nil ? Int.max : 20
        func capped(_ n: Int, _ what: String) {
            if n > listMax { leftOut.append(plural(n - listMax, what)) }
        }
        let general = r.findings.lazy.filter { $0.session == nil }
        if !general.isEmpty {
            tail += "## Bundle findings\n\n"
            for f in general.prefix(listMax) { tail += finding(f) }
            capped(r.findings.aboutNoSession, "bundle finding")
            tail += "\n"
        }
        let orphanRelay = r.relaySessions.orphanIndices
        if !orphanRelay.isEmpty || !r.orphanDeviceSessions.isEmpty {
            tail += "## Orphans\n\n"
            for rs in orphanRelay.prefix(listMax).lazy.map({ r.relaySessions[Int($0)] }) {
                tail += "- relay session \(code(rs.id)) (\(code(rs.peer ?? "?")), room \(code(rs.room ?? "?"))) has no device session in these logs"
                tail += (rs.firstSource.map { " (\(code($0.description)))" } ?? "") + "\n"
            }
            capped(orphanRelay.count, "orphan relay session")
            for id in r.orphanDeviceSessions.prefix(listMax) {
                tail += "- device session \(code(id)) connected but the relay logs have no session for it\n"
            }
            capped(r.orphanDeviceSessions.count, "orphan device session")
            tail += "\n"
        }
        var errorLines = r.errors.map { "- \(code($0.description))\n" }
        if limit != nil, errorLines.count > 20 {
            leftOut.append(plural(errorLines.count - 20, "input error"))
            errorLines = Array(errorLines.prefix(20))
        }
        if !errorLines.isEmpty { tail += "## Input errors\n\n" + errorLines.joined() + "\n" }
        return (tail, leftOut)
    }

    /// What a report within `limit` keeps, from sizes alone (so that a report written as its
    /// sessions ended, which holds each row and section on disk and only their sizes in memory,
    /// chooses as `render` does): the rows of failing sessions first, then the others, each
    /// while it fits (a row that does not is skipped, a later smaller one may still fit); then
    /// each failing session's section with its timeline if it fits, else without, else none.
    public struct Plan {
        public enum Section { case full, short, none }
        public var keepRow: [Bool]
        /// Per failing session, in session order.
        public var section: [Section]
        public var leftOut: [String] = []

        /// `rows`: every session's row size; `failing`: the failing sessions' indices (in
        /// order); `full`, `short`: their sections' sizes with and without the timeline.
        public init(limit: Int, head: Int, tail: Int, rows: [Int], failing: [Int], full: [Int], short: [Int]) {
            let reserve = 600  // the closing note
            var budget = limit - reserve - head - tail
            keepRow = [Bool](repeating: false, count: rows.count)
            if !rows.isEmpty { budget -= MarkdownReport.size(MarkdownReport.tableHead) + 1 }
            var isFailing = [Bool](repeating: false, count: rows.count)
            for i in failing { isFailing[i] = true }
            let order = failing + rows.indices.filter { !isFailing[$0] }
            let rowBudget = budget * 6 / 10
            var used = 0
            for i in order where used + rows[i] <= rowBudget {
                keepRow[i] = true
                used += rows[i]
            }
            budget -= used
            let droppedRows = keepRow.filter { !$0 }.count
            if droppedRows > 0 { leftOut.append("\(plural(droppedRows, "session")) from the table") }
            section = []
            var noTimeline = 0
            var noSection = 0
            for j in failing.indices {
                if full[j] <= budget {
                    section.append(.full)
                    budget -= full[j]
                } else if short[j] <= budget {
                    section.append(.short)
                    budget -= short[j]
                    noTimeline += 1
                } else {
                    section.append(.none)
                    noSection += 1
                }
            }
            if noTimeline > 0 { leftOut.append("the timelines of \(plural(noTimeline, "failing session"))") }
            if noSection > 0 { leftOut.append("the details of \(plural(noSection, "failing session"))") }
        }
    }

    /// The closing line: what was left out to fit `limit`.
    public static func note(limit: Int, leftOut: [String], healthy: Int) -> String {
        var note = "---\n\n"
        if !leftOut.isEmpty {
            note += "Left out to fit \(limit) characters: " + leftOut.joined(separator: "; ") + ". "
        }
        if healthy > 0 { note += "Completed sessions are summarized by their table row. " }
        note += "`castscope analyze --markdown-full` writes every session in full.\n"
        return note
    }

    /// One table row; `findings` are the session's own.
    public static func row(_ s: Session, _ findings: [Finding]) -> String {
        let who = s.process.map { p in s.pid.map { "\(p)[\($0)]" } ?? p } ?? "-"
        let start = s.start.map { Fmt.rfc3339($0, offset: s.displayOffset) } ?? "-"
        let kinds = findings.map(\.kind)
        return "| \(code(s.id, inTable: true)) | \(text(s.sdk, inTable: true)) | \(code(who, inTable: true)) | \(start) | "
            + "\(s.duration.map(Fmt.duration) ?? "-") | **\(s.outcome.rawValue)** | \(kinds.isEmpty ? "" : kinds.map { code($0, inTable: true) }.joined(separator: ", ")) |\n"
    }

    public static func section(_ s: Session, _ fs: [Finding], timeline: Bool) -> String {
        var out = "## \(text(s.id)) — \(text(SessionFacts.who(s))) — \(s.outcome.rawValue)\n\n"
        if let start = s.start {
            out += "- **When**: \(Fmt.rfc3339(start, offset: s.displayOffset))" + (s.duration.flatMap { $0 > 0 ? ", lasted \(Fmt.duration($0))" : nil } ?? "") + "\n"
        }
        out += "- **Why**: \(text(s.reason))\n"
        if let c = SessionFacts.connect(s) { out += "- **Connect**: \(text(c))\n" }
        if let rl = SessionFacts.relay(s) { out += "- **Relay**: \(text(rl))\n" }
        if let f = SessionFacts.frames(s) { out += "- **Frames**: \(text(f))\n" }
        if !s.deciding.isEmpty {
            out += "- **Decided by**: " + s.deciding.map { "\(code($0.message)) (\(code($0.source.description)))" }.joined(separator: ", ") + "\n"
        }
        if !fs.isEmpty {
            out += "\n**Findings**\n\n"
            for f in fs { out += finding(f) }
        }
        if timeline {
            let entries = Timeline.entries(s.events)
            out += "\n<details><summary>Timeline (\(plural(entries.count, "row")))</summary>\n\n| t (s) | side | line | source |\n|---|---|---|---|\n"
            for t in entries {
                let rel = t.time.flatMap { tt in s.start.map { Fmt.relative(tt - $0) } } ?? ""
                out += "| \(rel)\(t.timeInferred ? " ~" : "") | \(TextReport.sideTag(t.side)) | \(code(t.text, inTable: true)) | \(code(t.first.description, inTable: true)) |\n"
            }
            out += "\n</details>\n"
        }
        return out + "\n"
    }

    static func finding(_ f: Finding) -> String {
        "- **\(f.severity.rawValue)** \(code(f.kind)) — \(text(f.message))"
            + (f.evidence.isEmpty ? "" : " (" + f.evidence.map { code($0.description) }.joined(separator: ", ") + ")") + "\n"
    }
}

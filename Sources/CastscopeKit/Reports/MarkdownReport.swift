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
        var b = OutputBuffer(capacity: s.utf8.count + 4)
        code(s, inTable: inTable, into: &b)
        return b.string
    }

    public static func code(_ s: String, inTable: Bool = false, into b: inout OutputBuffer) {
        var s = s
        s.withUTF8 { code($0, inTable: inTable, into: &b) }
    }

    /// The code span of `u`'s bytes. Line breaks (`\r\n`, `\n`, `\r`) become a space each and,
    /// in a table, `|` is `\|`; the fence and the padding are decided on code points, as a
    /// Markdown parser reads them (a backtick followed by a combining mark is still a backtick).
    static func code(_ u: UnsafeBufferPointer<UInt8>, inTable: Bool, into b: inout OutputBuffer) {
        guard let first = u.first, let last = u.last else {
            b.append("` `")
            return
        }
        var longest = 0
        var run = 0
        for c in u {
            run = c == UInt8(ascii: "`") ? run + 1 : 0
            longest = max(longest, run)
        }
        // What the span's text starts and ends with once line breaks are spaces (`\|` ends in `|`).
        func shown(_ c: UInt8) -> UInt8 { c == 0x0A || c == 0x0D ? 0x20 : c }
        let (head, tail) = (shown(first) == UInt8(ascii: "|") && inTable ? UInt8(ascii: "\\") : shown(first), shown(last))
        let tick = UInt8(ascii: "`")
        let pad = head == tick || tail == tick || (head == 0x20 && tail == 0x20)
        b.repeating(tick, count: longest + 1)
        if pad { b.byte(0x20) }
        var from = 0
        var i = 0
        let n = u.count
        while i < n {
            let c = u[i]
            guard c == 0x0A || c == 0x0D || (c == UInt8(ascii: "|") && inTable) else {
                i += 1
                continue
            }
            if i > from { b.append(u, from..<i) }
            if c == UInt8(ascii: "|") {
                b.append("\\|")
            } else {
                b.byte(0x20)
                if c == 0x0D && i + 1 < n && u[i + 1] == 0x0A { i += 1 }
            }
            i += 1
            from = i
        }
        if n > from { b.append(u, from..<n) }
        if pad { b.byte(0x20) }
        b.repeating(tick, count: longest + 1)
    }

    /// Markdown text that shows `s` literally: punctuation that could start markup is escaped.
    public static func text(_ s: String, inTable: Bool = false) -> String {
        var b = OutputBuffer(capacity: s.utf8.count + 4)
        text(s, into: &b)
        return b.string
    }

    public static func text(_ s: String, into b: inout OutputBuffer) {
        var s = s
        s.withUTF8 { u in
            var from = 0
            for i in u.indices {
                let c = u[i]
                switch c {
                case UInt8(ascii: "\\"), UInt8(ascii: "`"), UInt8(ascii: "*"), UInt8(ascii: "_"), UInt8(ascii: "["), UInt8(ascii: "]"),
                    UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "~"), UInt8(ascii: "&"), UInt8(ascii: "|"), UInt8(ascii: "#"):
                    if i > from { b.append(u, from..<i) }
                    b.byte(UInt8(ascii: "\\"))
                    b.byte(c)
                case 0x0A, 0x0D:
                    if i > from { b.append(u, from..<i) }
                    b.byte(0x20)
                default: continue
                }
                from = i + 1
            }
            if u.count > from { b.append(u, from..<u.count) }
        }
    }

    static func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

    public static func render(_ r: AnalysisReport, limit: Int? = defaultLimit, provenance: Provenance = .current()) -> String {
        let head = head(r, provenance: provenance)
        var (tail, leftOut) = tail(r, limit: limit)
        let bySession = r.findingsBySession()
        let sections = r.sessions.map { s in (s, bySession[s.id] ?? []) }
        let rows = sections.map { s, fs in bytes { row(s, fs, into: &$0) } }
        var out = OutputBuffer(capacity: 1 << 16)
        out.append(head)
        guard let limit else {
            if !r.sessions.isEmpty {
                out.append(tableHead)
                for row in rows { out.append(row) }
                out.byte(0x0A)
            }
            for (s, fs) in sections { section(s, fs, timeline: true, into: &out) }
            out.append(tail)
            return out.string
        }
        var failing: [Int] = []
        var full: [OutputBuffer] = [], short: [OutputBuffer] = []
        for (k, (s, fs)) in sections.enumerated() where SessionFacts.failing(s) {
            failing.append(k)
            full.append(bytes { section(s, fs, timeline: true, into: &$0) })
            short.append(bytes { section(s, fs, timeline: false, into: &$0) })
        }
        let plan = Plan(limit: limit, head: size(head), tail: size(tail), rows: rows.map(size), failing: failing,
                        full: full.map(size), short: short.map(size))
        leftOut += plan.leftOut
        if !rows.isEmpty {
            out.append(tableHead)
            for i in rows.indices where plan.keepRow[i] { out.append(rows[i]) }
            out.byte(0x0A)
        }
        for j in failing.indices {
            switch plan.section[j] {
            case .full: out.append(full[j])
            case .short: out.append(short[j])
            case .none: break
            }
        }
        out.append(tail)
        out.append(note(limit: limit, leftOut: leftOut, healthy: r.sessions.count - failing.count))
        return out.string
    }

    /// What `write` writes, in a buffer of its own.
    public static func bytes(_ write: (inout OutputBuffer) -> Void) -> OutputBuffer {
        var b = OutputBuffer(capacity: 1024)
        write(&b)
        return b
    }

    /// A Markdown report's size as `render` counts it (UTF-16 units, as GitHub counts characters).
    public static func size(_ s: String) -> Int { s.utf16.count }

    /// The same of a report's bytes (valid UTF-8): a unit per character, two for one past U+FFFF
    /// (its four-byte form).
    public static func size(_ b: OutputBuffer) -> Int {
        b.withUnsafeBytes { u in
            var n = 0
            for c in u { n &+= (c & 0xC0 != 0x80 ? 1 : 0) &+ (c >= 0xF0 ? 1 : 0) }
            return n
        }
    }

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
        head += " from \(plural(r.fileCount, "file"))"
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
        var tail = OutputBuffer()
        var leftOut: [String] = []
        // Bundle-wide lists are kept to their first 20 within the limit (a relay fleet's bundle
        // has tens of thousands of orphans); the JSON report has them all.
        let listMax = limit == nil ? Int.max : 20
        func capped(_ n: Int, _ what: String) {
            if n > listMax { leftOut.append(plural(n - listMax, what)) }
        }
        let general = r.findings.lazy.filter { $0.session == nil }
        if !general.isEmpty {
            tail.append("## Bundle findings\n\n")
            for f in general.prefix(listMax) { finding(f, into: &tail) }
            capped(r.findings.aboutNoSession, "bundle finding")
            tail.byte(0x0A)
        }
        let orphanRelay = r.relaySessions.orphanIndices
        if !orphanRelay.isEmpty || !r.orphanDeviceSessions.isEmpty {
            tail.append("## Orphans\n\n")
            for rs in orphanRelay.prefix(listMax).lazy.map({ r.relaySessions[Int($0)] }) {
                tail.append("- relay session ")
                code(rs.id, into: &tail)
                tail.append(" (")
                code(rs.peer ?? "?", into: &tail)
                tail.append(", room ")
                code(rs.room ?? "?", into: &tail)
                tail.append(") has no device session in these logs")
                if let note = rs.backwardsNote {
                    tail.append("; ")
                    tail.append(note)
                }
                if let end = rs.endText {
                    tail.append("; ")
                    code(end, into: &tail)
                }
                if let source = rs.firstSource {
                    tail.append(" (")
                    code(source, into: &tail)
                    tail.byte(UInt8(ascii: ")"))
                }
                tail.byte(0x0A)
            }
            capped(orphanRelay.count, "orphan relay session")
            for id in r.orphanDeviceSessions.prefix(listMax) {
                tail.append("- device session ")
                code(id, into: &tail)
                tail.append(" connected but the relay logs have no session for it\n")
            }
            capped(r.orphanDeviceSessions.count, "orphan device session")
            tail.byte(0x0A)
        }
        var errors = r.errors[...]
        if limit != nil, errors.count > 20 {
            leftOut.append(plural(errors.count - 20, "input error"))
            errors = errors.prefix(20)
        }
        if !errors.isEmpty {
            tail.append("## Input errors\n\n")
            for e in errors {
                tail.append("- ")
                code(e.description, into: &tail)
                tail.byte(0x0A)
            }
            tail.byte(0x0A)
        }
        return (tail.string, leftOut)
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
    public static func row(_ s: Session, _ findings: [Finding], into b: inout OutputBuffer) {
        b.append("| ")
        code(s.id, inTable: true, into: &b)
        b.append(" | ")
        text(s.sdk, into: &b)
        b.append(" | ")
        if let p = s.process {
            var who = OutputBuffer(capacity: p.utf8.count + 12)
            who.append(p)
            if let pid = s.pid {
                who.byte(UInt8(ascii: "["))
                who.int(Int(pid))
                who.byte(UInt8(ascii: "]"))
            }
            who.withUnsafeBytes { code($0, inTable: true, into: &b) }
        } else {
            b.append("`-`")
        }
        b.append(" | ")
        if let start = s.start { b.rfc3339(start, offset: s.displayOffset) } else { b.byte(UInt8(ascii: "-")) }
        b.append(" | ")
        if let d = s.duration { b.duration(d) } else { b.byte(UInt8(ascii: "-")) }
        b.append(" | **")
        b.append(s.outcome.rawValue)
        b.append("** | ")
        for (j, f) in findings.enumerated() {
            if j > 0 { b.append(", ") }
            code(f.kind, inTable: true, into: &b)
        }
        b.append(" |\n")
    }

    /// `path:line` as a code span.
    static func code(_ source: SourceRef, inTable: Bool = false, into b: inout OutputBuffer) {
        var s = OutputBuffer(capacity: source.path.utf8.count + 12)
        s.append(source.path)
        s.byte(UInt8(ascii: ":"))
        s.int(source.line)
        s.withUnsafeBytes { code($0, inTable: inTable, into: &b) }
    }

    public static func section(_ s: Session, _ fs: [Finding], timeline: Bool, into b: inout OutputBuffer) {
        b.append("## ")
        text(s.id, into: &b)
        b.append(" — ")
        text(SessionFacts.who(s), into: &b)
        b.append(" — ")
        b.append(s.outcome.rawValue)
        b.append("\n\n")
        if let start = s.start {
            b.append("- **When**: ")
            b.rfc3339(start, offset: s.displayOffset)
            if let d = s.duration, d > 0 {
                b.append(", lasted ")
                b.duration(d)
            }
            b.byte(0x0A)
        }
        b.append("- **Why**: ")
        text(s.reason, into: &b)
        b.byte(0x0A)
        if let c = SessionFacts.connect(s) {
            b.append("- **Connect**: ")
            text(c, into: &b)
            b.byte(0x0A)
        }
        if let rl = SessionFacts.relay(s) {
            b.append("- **Relay**: ")
            text(rl, into: &b)
            b.byte(0x0A)
        }
        if let f = SessionFacts.frames(s) {
            b.append("- **Frames**: ")
            text(f, into: &b)
            b.byte(0x0A)
        }
        if !s.deciding.isEmpty {
            b.append("- **Decided by**: ")
            for (j, e) in s.deciding.enumerated() {
                if j > 0 { b.append(", ") }
                code(e.message, into: &b)
                b.append(" (")
                code(e.source, into: &b)
                b.byte(UInt8(ascii: ")"))
            }
            b.byte(0x0A)
        }
        if !fs.isEmpty {
            b.append("\n**Findings**\n\n")
            for f in fs { finding(f, into: &b) }
        }
        if timeline {
            let entries = Timeline.rows(s.events)
            b.append("\n<details><summary>Timeline (")
            b.counted(entries.count, "row")
            b.append(")</summary>\n\n| t (s) | side | line | source |\n|---|---|---|---|\n")
            for t in entries {
                b.append("| ")
                if let tt = t.time, let start = s.start { b.relative(tt - start) }
                if t.timeInferred { b.append(" ~") }
                b.append(" | ")
                b.append(TextReport.sideTag(t.side))
                b.append(" | ")
                code(t.text, inTable: true, into: &b)
                b.append(" | ")
                code(t.first, inTable: true, into: &b)
                b.append(" |\n")
            }
            b.append("\n</details>\n")
        }
        b.byte(0x0A)
    }

    static func finding(_ f: Finding, into b: inout OutputBuffer) {
        b.append("- **")
        b.append(f.severity.rawValue)
        b.append("** ")
        code(f.kind, into: &b)
        b.append(" — ")
        text(f.message, into: &b)
        if !f.evidence.isEmpty {
            b.append(" (")
            for (j, e) in f.evidence.enumerated() {
                if j > 0 { b.append(", ") }
                code(e, into: &b)
            }
            b.byte(UInt8(ascii: ")"))
        }
        b.byte(0x0A)
    }
}

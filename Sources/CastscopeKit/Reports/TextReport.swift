#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The terminal report: a bundle summary, one block per session (header, timeline with
/// repeated lines folded, the lines that decided the outcome), then the inputs and errors.
public struct TextReport {
    public var color: Bool
    public var maxMessage = 160
    /// The sessions to show (the header still sums up the whole bundle).
    public var selection: SessionSelection.Result?
    /// Only the header (`-q`).
    public var headerOnly = false
    /// The terminal's width: timeline rows are cut to it, other lines wrapped with their
    /// indentation. Nil: lines are only cut at `maxMessage` characters of message.
    public var width: Int?
    /// Timeline rows cite their file as `[n]:line` (the Inputs section is the legend).
    public var aliases = true
    /// Input path → its number in the Inputs section.
    var aliasOf: [String: Int] = [:] {
        didSet { aliasList = aliasOf.count <= 8 ? aliasOf.map { ($0.key, $0.value) } : nil }
    }
    /// The same, when there are few inputs (nearly always): a row's path is found by comparing
    /// strings (the same `String` as a rule: one word compared) instead of hashing it.
    private var aliasList: [(path: String, n: Int)]? = []

    func aliasNumber(of path: String) -> Int? {
        guard let list = aliasList else { return aliasOf[path] }
        for a in list where a.path == path { return a.n }
        return nil
    }

    public init(color: Bool) { self.color = color }

    func paint(_ s: String, _ code: String) -> String { color ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }

    /// Starts the colour `code` (SGR) when colouring; `paintOff` ends it. (A pair of calls,
    /// not a closure around the painted bytes: a closure's captures, the row or the session
    /// and this report, were copied per call, a retain and release for each of their strings.)
    func paintOn(_ out: inout OutputBuffer, _ code: StaticString) {
        guard color else { return }
        out.append("\u{1B}[")
        code.withUTF8Buffer { out.append(UnsafeRawBufferPointer($0)) }
        out.byte(UInt8(ascii: "m"))
    }
    func paintOff(_ out: inout OutputBuffer) {
        if color { out.append("\u{1B}[0m") }
    }
    func dim(_ s: String) -> String { paint(s, "2") }
    func bold(_ s: String) -> String { paint(s, "1") }

    func outcomeColor(_ o: Outcome) -> String {
        switch o {
        case .completed: return "32"
        case .stoppedByHost: return "33"
        case .truncated, .unknown: return "35"
        case .failedToConnect, .socketError, .killed: return "31"
        case .interrupted: return "33"
        case .failed: return "31"
        }
    }

    static func sideTag(_ s: Side) -> String {
        switch s {
        case .extension: return "ext"
        case .app: return "app"
        case .system: return "sys"
        case .relay: return "rly"
        }
    }

    func oneLine(_ s: String) -> String {
        var t = s.replacingOccurrences("\n", " ⏎ ")
        // `t.count > maxMessage`, then its first `maxMessage - 1` characters, walking no
        // further than that (a folded row's text can be kilobytes: counting all of it was
        // most of the cost of writing it).
        guard maxMessage > 0 else { return t }
        if let end = t.index(t.startIndex, offsetBy: maxMessage - 1, limitedBy: t.endIndex), end < t.endIndex,
            t.index(after: end) < t.endIndex
        {
            t = String(t[..<end]) + "…"
        }
        return t
    }

    /// `oneLine(s)` appended: a message of at most `maxMessage` bytes without a newline (nearly
    /// all) is copied as it is, no characters counted.
    func oneLine(_ s: String, into out: inout OutputBuffer) {
        var s = s
        let plain = s.withUTF8 { u in
            let raw = UnsafeRawBufferPointer(u)
            guard let base = raw.baseAddress else { return true }
            guard memchr(base, 0x0A, raw.count) == nil else { return false }
            if raw.count <= maxMessage {
                out.append(raw)
                return true
            }
            // Longer, without a newline: ASCII (one character a byte) is cut on bytes, as
            // `oneLine(_:)` cuts it on characters.
            guard maxMessage > 0, isASCII(raw) else { return false }
            out.append(UnsafeRawBufferPointer(rebasing: raw[..<(maxMessage - 1)]))
            out.append("…")
            return true
        }
        if !plain { out.append(oneLine(s)) }
    }

    func span(_ a: SourceRef, _ b: SourceRef) -> String {
        var out = OutputBuffer(capacity: 64)
        span(a, b, into: &out)
        return out.string
    }

    func span(_ a: SourceRef, _ b: SourceRef, into out: inout OutputBuffer) {
        out.append(a.path)
        out.byte(UInt8(ascii: ":"))
        out.int(a.line)
        if a == b { return }
        if a.path == b.path {
            out.append("–")
        } else {
            out.append(" – ")
            out.append(b.path)
            out.byte(UInt8(ascii: ":"))
        }
        out.int(b.line)
    }

    /// `[2]:77`, `[2]:6–205`: a timeline row's source by its file's number.
    func shortSpan(_ a: SourceRef, _ b: SourceRef) -> String {
        var out = OutputBuffer(capacity: 32)
        shortSpan(a, b, into: &out)
        return out.string
    }

    func shortSpan(_ a: SourceRef, _ b: SourceRef, into out: inout OutputBuffer) {
        guard aliases, let n = aliasNumber(of: a.path) else { span(a, b, into: &out); return }
        func alias(_ n: Int, _ line: Int) {
            out.byte(UInt8(ascii: "["))
            out.int(n)
            out.append("]:")
            out.int(line)
        }
        alias(n, a.line)
        if a.line == b.line && a.path == b.path { return }
        if a.path == b.path {
            out.append("–")
            out.int(b.line)
            return
        }
        out.append(" – ")
        if let m = aliasNumber(of: b.path) { alias(m, b.line) } else { span(b, b, into: &out) }
    }

    /// Cuts `s` to `n` visible characters (ANSI colour codes do not count), with `…`.
    static func cut(_ s: String, _ n: Int) -> String {
        guard visibleCount(s) > n else { return s }
        var out = ""
        var count = 0
        var inEscape = false
        for c in s {
            if c == "\u{1B}" { inEscape = true }
            if inEscape {
                out.append(c)
                if c.isLetter && c != "[" { inEscape = false }
                continue
            }
            if count == max(0, n - 1) { break }
            out.append(c)
            count += 1
        }
        return out + "…" + (s.contains("\u{1B}") ? "\u{1B}[0m" : "")
    }

    static func visibleCount(_ s: String) -> Int {
        var count = 0
        var inEscape = false
        for c in s {
            if c == "\u{1B}" { inEscape = true; continue }
            if inEscape { if c.isLetter && c != "[" { inEscape = false }; continue }
            count += 1
        }
        return count
    }

    /// Wraps every line longer than `width` at spaces; continuation lines are indented under
    /// the text after the line's label (`   why: `, `   error: [kind] `), or its indentation.
    public static func wrap(_ text: String, width: Int) -> String {
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let l = String(line)
            guard visibleCount(l) > width else { lines.append(l); continue }
            let lead = l.prefix { $0 == " " }.count
            var indent = lead + 2
            let plain = stripEscapes(l)
            if let colon = plain.dropFirst(lead).firstIndex(of: ":"),
                plain.distance(from: plain.startIndex, to: colon) < lead + 14,
                plain[plain.index(after: colon)...].hasPrefix(" ")
            {
                indent = plain.distance(from: plain.startIndex, to: colon) + 2
            }
            if indent > width / 2 { indent = min(lead + 2, width / 2) }
            var current = String(repeating: " ", count: lead)
            var count = lead
            var first = true
            for word in l.dropFirst(lead).split(separator: " ", omittingEmptySubsequences: false) {
                let w = String(word)
                let n = visibleCount(w)
                if w.isEmpty {
                    // Runs of spaces (column gaps) are kept within a line, dropped at a break.
                    if !first && count < width { current += " "; count += 1 }
                    continue
                }
                if !first && count + 1 + n > width {
                    lines.append(current)
                    current = String(repeating: " ", count: indent)
                    count = indent
                    first = true
                }
                if !first { current += " "; count += 1 }
                if n > width - count {
                    current += cut(w, max(1, width - count))
                    count = width
                } else {
                    current += w
                    count += n
                }
                first = false
            }
            lines.append(current)
        }
        return lines.joined(separator: "\n")
    }

    static func stripEscapes(_ s: String) -> String {
        var out = ""
        var inEscape = false
        for c in s {
            if c == "\u{1B}" { inEscape = true; continue }
            if inEscape { if c.isLetter && c != "[" { inEscape = false }; continue }
            out.append(c)
        }
        return out
    }

    public func render(_ r: AnalysisReport) -> String {
        let out = prepared(inputs: r.inputs).renderAll(r)
        guard let width else { return out }
        return Self.wrap(out, width: width)
    }

    func renderAll(_ r: AnalysisReport) -> String {
        var out = head(r)
        if headerOnly { return out }
        let bySession = r.findingsBySession()
        for s in selection?.sessions ?? r.sessions { out += sessionBlock(s, findings: bySession[s.id] ?? []) }
        return out + tail(r)
    }

    /// With the paths of the report's inputs (for `[n]:line` aliases): what `render` uses,
    /// for writing the report in parts (`head`, each `sessionBlock`, `tail`).
    public func prepared(inputs: [InputSummary]) -> TextReport {
        var me = self
        for (i, input) in inputs.enumerated() where me.aliasOf[input.path] == nil { me.aliasOf[input.path] = i + 1 }
        return me
    }

    /// One session as `render` writes it (a blank line, then the session).
    public func sessionBlock(_ s: Session, findings: [Finding]) -> String { "\n" + session(s, findings: findings) }

    /// The same, appended to `out`.
    public func sessionBlock(_ s: Session, findings: [Finding], into out: inout OutputBuffer) {
        out.byte(0x0A)
        session(s, findings: findings, into: &out)
    }

    /// What comes before the sessions: the summary lines.
    public func head(_ r: AnalysisReport) -> String {
        var out = ""
        var outcomes: [String] = []
        let tally = r.tally
        for o in Outcome.allCases {
            let n = tally.outcomes[o] ?? 0
            if n > 0 { outcomes.append("\(n) \(paint(o.rawValue, outcomeColor(o)))") }
        }
        let nFiles = r.fileCount
        out += bold("castscope") + ": \(nFiles) file\(nFiles == 1 ? "" : "s"), \(r.eventCount) recognized lines, "
        if r.filteredOut > 0 { out += "\(r.filteredOut) more outside --since/--until, " }
        out += "\(tally.count) session\(tally.count == 1 ? "" : "s")"
        if !outcomes.isEmpty { out += " (" + outcomes.joined(separator: ", ") + ")" }
        if !r.errors.isEmpty { out += ", " + paint("\(r.errors.count) input error\(r.errors.count == 1 ? "" : "s")", "31") }
        out += "\n"
        let findings = r.findingTally
        if findings.count > 0 {
            var bySeverity: [String] = []
            for (sev, n) in findings.severityCounts where n > 0 {
                bySeverity.append(paint("\(n) \(sev.rawValue)\(n == 1 ? "" : "s")", severityColor(sev)))
            }
            out += "findings: " + bySeverity.joined(separator: ", ") + " — " + Self.kindsWithSessions(findings) + "\n"
        }
        if let c = r.clock {
            out += "clock: " + clockLine(c) + "\n"
        }
        if !r.timeNotes.isEmpty { out += "times: " + r.timeNotes.joined(separator: "; ") + "\n" }
        if r.filteredOut > 0 && r.eventCount == 0, let span = r.span {
            let z = r.displayOffset ?? 0
            out += "filter: --since/--until kept nothing; the logs span \(Fmt.rfc3339(span.lowerBound, offset: z)) to \(Fmt.rfc3339(span.upperBound, offset: z))\n"
        }
        if let note = selection?.note { out += "shown: " + note + "\n" }
        if headerOnly, !r.errors.isEmpty { out += paint("errors:", "31") + " " + r.errors.map(\.description).joined(separator: "; ") + "\n" }
        return out
    }

    /// What comes after the sessions: bundle findings, orphans, lines outside sessions, inputs.
    public func tail(_ r: AnalysisReport) -> String {
        var out = ""
        _ = tail(r) { out += $0; return true }
        return out
    }

    /// The same, handed to `write` a few lines at a time (a relay fleet's tail lists tens of
    /// thousands of sessions and findings); stops at the first false.
    public func tail(_ r: AnalysisReport, _ write: (String) -> Bool) -> Bool {
        let general = r.findings.lazy.filter { $0.session == nil }
        if selection?.keepsBundleFindings != false, !general.isEmpty {
            guard write("\n" + bold("Bundle findings") + "\n") else { return false }
            for f in general { guard write(findingLines(f)) else { return false } }
        }
        let orphanRelay = r.relaySessions.orphans
        if !orphanRelay.isEmpty || !r.orphanDeviceSessions.isEmpty {
            guard write("\n" + bold("Orphans") + "\n") else { return false }
            for rs in orphanRelay {
                // (a session of which the log holds only its end, a player's or one begun
                // before the log: when it closed)
                let when = rs.accepted.map { "at " + Fmt.rfc3339($0, offset: r.displayOffset ?? 0) }
                    ?? rs.closed.map { "closed at " + Fmt.rfc3339($0, offset: r.displayOffset ?? 0) } ?? "at ?"
                var line = "  relay session \(rs.id) (\(rs.peer ?? "?"), room \(rs.room ?? "?")) \(when) has no device session in these logs"
                if let note = rs.backwardsNote { line += "; " + note }
                if let end = rs.endText { line += "; " + end }
                line += dim("  \(rs.firstSource?.description ?? "")") + "\n"
                guard write(line) else { return false }
            }
            for id in r.orphanDeviceSessions {
                guard write("  device session \(id) connected but the relay logs have no session for it\n") else { return false }
            }
        }
        var out = ""
        if !r.unattached.isEmpty {
            out += "\n" + bold("Outside any session") + "\n"
            // Written as it goes (the lines may be a day's, read back from disk a chunk at a time).
            var failed = false
            Timeline.entries(r.unattached) { t in
                guard !failed else { return }
                // Each in its own line's zone (they come from several files), `~` when borrowed.
                let when = t.time.map { Fmt.rfc3339($0, offset: t.displayOffset) } ?? "(no time)"
                out += "  \(dim(when))  \(Self.sideTag(t.side))  \(oneLine(t.text))\(t.timeInferred ? dim(" ~") : "")  \(dim(span(t.first, t.last)))\n"
                if out.utf8.count >= 1 << 16 {
                    failed = !write(out)
                    out = ""
                }
            }
            if failed { return false }
        }
        out += "\n" + bold("Inputs") + "\n"
        for (n, i) in r.inputs.enumerated() {
            var line = aliases ? "  [\(n + 1)] \(i.path)  \(i.format ?? "-")" : "  \(i.path)  \(i.format ?? "-")"
            line += dim("  \(i.stats.records) records, \(i.events) recognized")
            if i.stats.unparsed > 0 { line += dim(", \(i.stats.unparsed) unparsed (first at line \(i.stats.firstUnparsed.first ?? 0))") }
            out += line + "\n"
            for n in i.notes { out += dim("      note: \(n)") + "\n" }
        }
        if r.tally.anyInferredTime {
            // Lines with no date where the bundle gives none are marked too (their time of day
            // is theirs; the header's `times:` names the date assumed).
            let dateAssumed = r.timeNotes.contains { $0.hasPrefix(FileTimeResolver.noDateNote) }
            out += dim(dateAssumed
                ? "\n~ time not wholly the line's: its date assumed (see times: above), or taken from the nearest timestamped line (Xcode print() output)"
                : "\n~ time taken from the nearest timestamped line (Xcode print() output)") + "\n"
        }
        if !r.errors.isEmpty {
            out += "\n" + paint("Errors", "31;1") + "\n"
            for e in r.errors { out += "  \(e)\n" }
        }
        return write(out)
    }

    /// `never-connected ×3 (S1, S4, S9), slow-start (S2)`: which sessions have each kind; those
    /// about the bundle too, when some are a session's (`replaykit-error ×9 (S2, bundle ×8)`).
    static func kindsWithSessions(_ findings: FindingTally) -> String {
        findings.kinds.map { k in
            var t = k.count > 1 ? "\(k.kind) ×\(k.count)" : k.kind
            if !k.sessions.isEmpty {
                let bundle = k.bundle == 0 ? "" : k.bundle == 1 ? ", bundle" : ", bundle ×\(k.bundle)"
                t += " (" + k.sessions.prefix(4).joined(separator: ", ") + (k.sessions.count > 4 ? ", …" : "") + bundle + ")"
            }
            return t
        }.joined(separator: ", ")
    }

    /// One line per session: id, start, duration, outcome, who, findings.
    public func sessionList(_ r: AnalysisReport) -> String {
        let bySession = r.findingsBySession()
        var out = ""
        for s in selection?.sessions ?? r.sessions { out += sessionListLine(s, bySession[s.id] ?? []) }
        return out
    }

    /// A session's line of `sessionList`; `findings` are its own.
    public func sessionListLine(_ s: Session, _ findings: [Finding]) -> String {
        let start = s.start.map { Fmt.rfc3339($0, offset: s.displayOffset) } ?? "(no time)"
        let who = [s.sdk, s.process.map { p in s.pid.map { "\(p)[\($0)]" } ?? p }].compactMap { $0 }.joined(separator: " ")
        var kinds: [String] = []
        for f in findings.sorted(by: { $0.severity > $1.severity }) where !kinds.contains(f.kind) { kinds.append(f.kind) }
        let dur = s.duration.map { Fmt.duration($0) } ?? "-"
        var out = "\(bold(s.id.padding(4)))  \(dim(start))  \(dur.padding(9)) \(paint(s.outcome.rawValue.padding(18), outcomeColor(s.outcome)))  \(who)"
        if !kinds.isEmpty { out += "  " + kinds.joined(separator: ", ") }
        return out + "\n"
    }

    /// What `oneline` says of the sessions, added up a session at a time (a report written as
    /// its sessions end keeps this, not the sessions): per outcome, how many and the first four.
    public struct OnelineTally: Sendable {
        public private(set) var count = 0
        var outcomes: [Outcome: (count: Int, first: [String])] = [:]
        public init() {}
        public mutating func add(_ s: Session) {
            count += 1
            var o = outcomes[s.outcome] ?? (0, [])
            o.count += 1
            if o.first.count < 4 { o.first.append(s.id) }
            outcomes[s.outcome] = o
        }
    }

    /// One pasteable line for the whole bundle: what was read, the outcomes, the findings.
    public func oneline(_ r: AnalysisReport, label: String) -> String {
        var tally = OnelineTally()
        for s in r.sessions { tally.add(s) }
        return oneline(r, tally: tally, label: label)
    }

    public func oneline(_ r: AnalysisReport, tally: OnelineTally, label: String) -> String {
        var outcomes: [String] = []
        for o in Outcome.allCases {
            guard let (n, first) = tally.outcomes[o] else { continue }
            outcomes.append("\(n) \(o.rawValue)" + (o == .completed ? "" : " (" + first.joined(separator: ", ") + (n > 4 ? ", …" : "") + ")"))
        }
        var line = "\(label): \(tally.count) session\(tally.count == 1 ? "" : "s")"
        if !outcomes.isEmpty { line += " — " + outcomes.joined(separator: ", ") }
        let findings = r.findingTally
        if findings.count == 0 {
            line += "; no findings"
        } else {
            var bySeverity: [String] = []
            for (sev, n) in findings.severityCounts where n > 0 { bySeverity.append("\(n) \(sev.rawValue)\(n == 1 ? "" : "s")") }
            line += "; " + bySeverity.joined(separator: ", ") + ": " + Self.kindsWithSessions(findings)
        }
        if !r.errors.isEmpty { line += "; \(r.errors.count) input error\(r.errors.count == 1 ? "" : "s")" }
        return line + "\n"
    }

    func clockLine(_ c: ClockEstimate) -> String {
        let secs = Fmt.decimal(Double(abs(c.offset)) / 1e6, 3)
        let direction = c.offset >= 0 ? "ahead of" : "behind"
        if c.forced { return "relay clock taken as \(secs) s \(direction) the device's (--clock-offset)" }
        let bound = c.uncertainty.map { "±\(Fmt.decimal(Double($0) / 1e6, 3)) s" } ?? "bound unknown: one pair"
        return "the relay's clock is \(secs) s \(direction) the device's (\(bound), from \(c.pairs) paired event\(c.pairs == 1 ? "" : "s")); relay lines are shown on the device's clock"
    }

    func severityColor(_ s: Severity) -> String {
        switch s {
        case .error: return "31"
        case .warning: return "33"
        case .info: return "36"
        }
    }

    /// `   warning: [kind] message` and, dimmed, the evidence `path:line, …`.
    func findingLines(_ f: Finding, into out: inout OutputBuffer) {
        out.append("   ")
        if color {
            out.append("\u{1B}[")
            out.append(severityColor(f.severity))
            out.append(";1m")
        }
        out.append(f.severity.rawValue)
        out.append(": [")
        out.append(f.kind)
        out.byte(UInt8(ascii: "]"))
        paintOff(&out)
        out.byte(0x20)
        out.append(f.message)
        out.byte(0x0A)
        guard !f.evidence.isEmpty else { return }
        paintOn(&out, "2")
        out.append("      ")
        for (k, e) in f.evidence.enumerated() {
            if k > 0 { out.append(", ") }
            out.append(e.path)
            out.byte(UInt8(ascii: ":"))
            out.int(e.line)
        }
        paintOff(&out)
        out.byte(0x0A)
    }

    func findingLines(_ f: Finding) -> String {
        var out = OutputBuffer(capacity: 256)
        findingLines(f, into: &out)
        return out.string
    }

    func session(_ s: Session, findings: [Finding] = []) -> String {
        var out = OutputBuffer(capacity: 4096)
        session(s, findings: findings, into: &out)
        return out.string
    }

    /// One session written as bytes: the summary lines, the findings, the timeline rows and
    /// the lines that decided the outcome.
    public func session(_ s: Session, findings: [Finding] = [], into out: inout OutputBuffer) {
        paintOn(&out, "1")
        out.append("━━ ")
        out.append(s.id)
        paintOff(&out)
        out.append("  ")
        // Who: `sdk · process[pid]` (or `pid N` without a process name).
        out.append(s.sdk)
        if let p = s.process {
            out.append(" · ")
            out.append(p)
            if let pid = s.pid {
                out.byte(UInt8(ascii: "["))
                out.int(pid)
                out.byte(UInt8(ascii: "]"))
            }
        } else if let pid = s.pid {
            out.append(" · pid ")
            out.int(pid)
        }
        out.append("  ")
        out.append(paint(s.outcome.rawValue, outcomeColor(s.outcome) + ";1"))
        out.append("\n   ")
        if let start = s.start {
            out.rfc3339(start, offset: s.displayOffset)
            if let d = s.duration, d > 0 { out.append("  lasted "); out.duration(d) }
        } else {
            out.append("(no times in these lines)")
        }
        if s.startInferred {
            paintOn(&out, "2")
            out.append("  (no broadcastStarted line: starts at its first line)")
            paintOff(&out)
        }
        out.append("\n   why: ")
        out.append(s.reason)
        out.byte(0x0A)
        if !s.attempts.isEmpty {
            out.append("   connect: ")
            out.int(s.attempts.count)
            out.append(s.attempts.count == 1 ? " attempt" : " attempts")
            let failed = s.attempts.failedCount
            if failed > 0 {
                out.append(", ")
                out.int(failed)
                out.append(" failed (")
                for (k, cause) in s.failureCauses.enumerated() {
                    if k > 0 { out.append(", ") }
                    out.append(cause.0)
                    out.append(" ×")
                    out.int(cause.1)
                }
                out.byte(UInt8(ascii: ")"))
            }
            if let cad = s.attemptCadence {
                out.append(", every ")
                out.duration(cad.median)
                out.append(" (max ")
                out.duration(cad.max)
                out.byte(UInt8(ascii: ")"))
            }
            if let at = s.connectedAt, let start = s.start {
                // Whole-second logs (idevicesyslog) cannot tell a connection within the second.
                if at == start && at % 1_000_000 == 0 {
                    out.append("; connected within the same second")
                } else {
                    out.append("; connected after ")
                    out.duration(at - start)
                }
            } else if s.connectedAt == nil {
                out.append("; ")
                paintOn(&out, "31")
                out.append("never connected")
                paintOff(&out)
            }
            out.byte(0x0A)
        }
        if let r = s.relay {
            var line = "   relay: session \(r.id)"
            if let peer = r.peer { line += " (\(peer)" + (r.room.map { ", room \($0)" } ?? "") + ")" }
            if let f = r.frames { line += ", \(f) frames" }
            if let fps = r.meanFps { line += ", \(Fmt.decimal(fps, 1)) fps" }
            if !r.stalls.isEmpty { line += ", " + paint("\(r.stalls.count) stall\(r.stalls.count == 1 ? "" : "s")", "33") }
            line += r.reason.map { ", closed: \($0)" } ?? ", not closed in these logs"
            if let note = r.backwardsNote { line += "; " + paint(note, "33") }
            out.append(line)
            out.byte(0x0A)
        }
        if s.frames > 0 {
            out.append("   frames: ")
            out.int(s.frames)
            if let a = s.firstFrameAt, let b = s.lastFrameAt, b > a, s.frames > 1 {
                out.append(" (")
                out.decimal(Double(s.frames - 1) / (Double(b - a) / 1e6), 1)
                out.append("/s)")
            }
            out.byte(0x0A)
        }
        for f in findings { findingLines(f, into: &out) }
        out.byte(0x0A)
        // Each row made as it is written (`TimelineRows`: a session's rows are not all held).
        for row in Timeline.rows(s.events) { timelineRow(row, start: s.start, into: &out) }
        if !s.deciding.isEmpty {
            out.append("   decided by:\n")
            for e in s.deciding {
                out.append("     ")
                span(e.source, e.source, into: &out)
                out.append("  ")
                oneLine(e.message, into: &out)
                out.byte(0x0A)
            }
        }
    }

    /// `     +3.912     ext  message  [2]:77`: the time from the session's start (padded to
    /// 10), the side, the message (cut to the terminal when there is a width), the source.
    func timelineRow(_ row: borrowing TimelineEntry, start: Int64?, into out: inout OutputBuffer) {
        out.append("     ")
        paintOn(&out, "2")
        let before = out.count
        if let tt = row.time, let start { out.relative(tt - start) }
        let relCount = out.count - before  // ASCII: bytes are characters
        if relCount < 10 { out.repeating(0x20, count: 10 - relCount) }
        paintOff(&out)
        let tag = Self.sideTag(row.side)
        out.byte(0x20)
        out.append(tag)
        out.append("  ")
        if let width {
            // The row fits the terminal: the message is cut, the source stays whole.
            let source = shortSpan(row.first, row.last)
            let budget = width - (5 + max(10, relCount) + 1 + tag.count + 2) - (2 + source.count) - (row.timeInferred ? 2 : 0)
            out.append(Self.cut(row.text.replacingOccurrences("\n", " ⏎ "), max(12, budget)))
            if row.timeInferred { paintOn(&out, "2"); out.append(" ~"); paintOff(&out) }
            out.append("  ")
            paintOn(&out, "2")
            out.append(source)
            paintOff(&out)
        } else {
            oneLine(row.text, into: &out)
            if row.timeInferred { paintOn(&out, "2"); out.append(" ~"); paintOff(&out) }
            out.append("  ")
            paintOn(&out, "2")
            shortSpan(row.first, row.last, into: &out)
            paintOff(&out)
        }
        out.byte(0x0A)
    }
}

extension String {
    func padding(_ n: Int) -> String { count >= n ? self : self + String(repeating: " ", count: n - count) }

    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        // Fast path on bytes: most messages hold no occurrence.
        guard hasBytes(target) else { return self }
        // On bytes: `split(separator:)` searched for the target naively, character by character
        // (a bundle of 20-line JSON bodies spent half its text report there). What it matched
        // is matched: whole characters (an LF after a CR is part of the CRLF character).
        let t = Array(target.utf8), r = Array(replacement.utf8)
        guard let first = t.first else { return self }
        var s = self
        return s.withUTF8 { u in
            var out: [UInt8] = []
            out.reserveCapacity(u.count + 16)
            var i = 0
            while i < u.count {
                guard let base = u.baseAddress, let hit = memchr(base + i, Int32(first), u.count - i) else {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: u[i...]))
                    break
                }
                let at = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                out.append(contentsOf: UnsafeBufferPointer(rebasing: u[i..<at]))
                // (a CRLF is one character, as the report counts them: its LF is no newline of its own)
                if at + t.count <= u.count, t.indices.allSatisfy({ u[at + $0] == t[$0] }), !(first == 0x0A && at > 0 && u[at - 1] == 0x0D) {
                    out.append(contentsOf: r)
                    i = at + t.count
                } else {
                    out.append(u[at])
                    i = at + 1
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}

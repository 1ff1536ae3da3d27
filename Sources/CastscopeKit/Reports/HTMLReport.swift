#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--html FILE`: one self-contained investigation page (inline CSS and script, no network).
///
/// The page is written in two parts. The HTML itself carries everything a reader needs without
/// a script: provenance (version, command line, generation time, inputs), the bundle summary,
/// a legend, and per session the terminal report's facts (`connect:`, `relay:`, `frames:`,
/// decided by), its findings and its folded timeline as a table. A JSON block carries the
/// drawing data (folded timeline rows, attempts, frames per second, findings, times in µs
/// since the epoch), from which the inline script (`HTMLAssets.script`) draws the bundle
/// overview and each session's timeline lazily, when its card comes into view, with zoom, pan,
/// tap/hover details, filters, search and sorting. Every value is escaped; strings in the JSON
/// block have `<`, `>` and `&` as `\u` escapes so no message can close the script element.
///
/// Written as bytes into an `OutputBuffer` (issue 15): escaping is a table lookup per byte and
/// times and numbers are formatted in place, with no `String` per field (a page of 39,000
/// sessions took 31 s when it was built from `String` pieces).
public enum HTMLReport {
    public static func esc(_ s: String) -> String {
        var b = OutputBuffer(capacity: s.utf8.count)
        b.html(s)
        return b.string
    }

    /// A JSON string literal safe inside a `<script>` element.
    static func js(_ s: String?) -> String {
        var b = OutputBuffer()
        b.script(s)
        return b.string
    }

    /// The colour class of a line in the timeline: what kind of thing it says.
    public static func eventClass(_ kind: String) -> StaticString {
        var kind = kind
        return kind.withUTF8 { k in
            // Kinds are a vocabulary's ASCII names: compared as bytes. Anything else as text.
            let ascii = !k.contains { $0 >= 0x80 }
            func has(_ needle: StaticString) -> Bool {
                ascii ? contains(k, needle) : String(decoding: k, as: UTF8.self).contains(needle.description)
            }
            func starts(_ p: StaticString) -> Bool {
                ascii ? p.utf8CodeUnitCount <= k.count && memcmp(k.baseAddress!, p.utf8Start, p.utf8CodeUnitCount) == 0
                    : String(decoding: k, as: UTF8.self).hasPrefix(p.description)
            }
            if k.isEmpty { return "other" }
            if failing.contains(where: has) { return "fail" }
            if starts("frame.") || equal(k, "relay.stats") { return "frames" }
            if starts("socket.") || starts("server.") || starts("relay.") { return "conn" }
            if lifecycle.contains(where: starts) { return "life" }
            return "other"
        }
    }

    private static let failing: [StaticString] = ["error", "failed", "killed", "exited", "not_entitled", "too_long", "gave_up",
                                                  "suspended", "missing", "refused", "stalled", "closed_by_peer", "dropped"]
    private static let lifecycle: [StaticString] = ["broadcast.", "extension.", "replaykit.", "app.", "picker.", "track."]

    private static func contains(_ k: UnsafeBufferPointer<UInt8>, _ needle: StaticString) -> Bool {
        let n = needle.utf8CodeUnitCount
        guard n <= k.count, let base = k.baseAddress else { return false }
        let first = needle.utf8Start.pointee
        var i = 0
        while i + n <= k.count {
            if base[i] == first && memcmp(base + i, needle.utf8Start, n) == 0 { return true }
            i += 1
        }
        return false
    }

    private static func equal(_ k: UnsafeBufferPointer<UInt8>, _ s: StaticString) -> Bool {
        k.count == s.utf8CodeUnitCount && (k.isEmpty || memcmp(k.baseAddress!, s.utf8Start, k.count) == 0)
    }

    static let sides: [(Side, StaticString)] = [(.extension, "extension"), (.app, "host app"), (.relay, "relay"), (.system, "system")]

    static func sideName(_ s: Side) -> StaticString { sides.first { $0.0 == s }!.1 }

    static func pill(_ o: Outcome, into b: inout OutputBuffer) {
        b.append("<span class=\"pill o-")
        b.append(o.rawValue)
        b.append("\">")
        b.append(o.rawValue)
        b.append("</span>")
    }

    public static func render(_ r: AnalysisReport, provenance: Provenance = .current()) -> String {
        let bySession = r.findingsBySession()
        var summary = Summary()
        for s in r.sessions { summary.add(s) }
        var b = OutputBuffer(capacity: 1 << 16)
        prefix(r, provenance: provenance, summary: summary,
               sessionFindingKinds: FindingTally(FindingList(r.findings.made.filter { $0.session != nil })).kinds.map(\.kind), into: &b)
        for (i, s) in r.sessions.enumerated() { row(i, s, bySession[s.id] ?? [], into: &b) }
        tableEnd(r.sessions.count, into: &b)
        b.append("<main id=\"cards\">\n")
        for (i, s) in r.sessions.enumerated() {
            card(i, s, bySession[s.id] ?? [], entries: Timeline.rows(s.events), into: &b)
        }
        b.append("</main>\n")
        suffix(r, provenance: provenance, into: &b)
        for (i, s) in r.sessions.enumerated() {
            if i > 0 { b.append(",\n") }
            dataEntry(s, bySession[s.id] ?? [], entries: Timeline.rows(s.events), into: &b)
        }
        b.append(end)
        return b.string
    }

    /// What the page's head and toolbar say of the sessions, added up a session at a time (a
    /// page written as its sessions end keeps this, not the sessions).
    public struct Summary: Sendable {
        public var count = 0
        public var outcomes: [Outcome: Int] = [:]
        /// SDKs in order of first appearance.
        public var sdks: [String] = []
        private var seen = Set<String>()
        public init() {}
        public mutating func add(_ s: Session) {
            count += 1
            outcomes[s.outcome, default: 0] += 1
            if seen.insert(s.sdk).inserted { sdks.append(s.sdk) }
        }
    }

    /// The page up to the sessions' table rows (header, toolbar, legend, overview, the table's
    /// head); `sessionFindingKinds`: the kinds of the findings about a session, in order of
    /// first appearance (the toolbar's filter).
    public static func prefix(_ r: AnalysisReport, provenance: Provenance, summary: Summary, sessionFindingKinds: [String],
                              into b: inout OutputBuffer)
    {
        let count = summary.count
        b.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        b.append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        b.append("<meta name=\"color-scheme\" content=\"light dark\">")
        b.append("<meta name=\"generator\" content=\"castscope ")
        b.html(provenance.version)
        b.append("\"><title>castscope report: ")
        b.counted(count, "session")
        b.append("</title><style>")
        b.append(HTMLAssets.css)
        b.append("</style></head><body>\n<header><h1>castscope report</h1>\n<p class=\"prov muted\">castscope ")
        b.html(provenance.version)
        b.append(" · generated <time>")
        b.html(provenance.generatedText)
        b.append("</time> · <code class=\"cmd\">")
        b.html(provenance.commandText)
        b.append("</code></p>\n<p class=\"sum\">")
        b.counted(count, "session")
        b.append(" from ")
        b.counted(r.fileCount, "file")
        b.append(", ")
        b.int(r.eventCount)
        b.append(" recognized lines ")
        var firstPill = true
        for o in Outcome.allCases {
            let n = summary.outcomes[o] ?? 0
            guard n > 0 else { continue }
            if !firstPill { b.byte(0x20) }
            firstPill = false
            b.append("<span class=\"pill o-")
            b.append(o.rawValue)
            b.append("\">")
            b.int(n)
            b.byte(0x20)
            b.append(o.rawValue)
            b.append("</span>")
        }
        if !r.errors.isEmpty {
            b.append(" <span class=\"sev-error\">")
            b.counted(r.errors.count, "input error")
            b.append("</span>")
        }
        b.append("</p>\n")
        let findings = r.findingTally
        if findings.count > 0 {
            b.append("<p>Findings: ")
            var first = true
            for (severity, n) in findings.severityCounts where n > 0 {
                if !first { b.append(", ") }
                first = false
                b.append("<b class=\"sev-")
                b.append(severity.rawValue)
                b.append("\">")
                b.int(n)
                b.byte(0x20)
                b.append(severity.rawValue)
                if n != 1 { b.byte(UInt8(ascii: "s")) }
                b.append("</b>")
            }
            b.append(" — ")
            for (j, k) in findings.kinds.enumerated() {
                if j > 0 { b.append(", ") }
                b.append("<code>")
                b.html(k.kind)
                b.append("</code>")
                if k.count > 1 {
                    b.append(" ×")
                    b.int(k.count)
                }
            }
            b.append("</p>\n")
        }
        if let c = r.clock {
            b.append("<p class=\"muted\">Clock: ")
            b.html(TextReport(color: false).clockLine(c))
            b.append("</p>\n")
        }
        b.append("</header>\n")
        toolbar(summary, sessionFindingKinds: sessionFindingKinds, into: &b)
        b.append(HTMLAssets.legend)
        b.append("<section id=\"overview\" aria-label=\"bundle overview\"><h2>Overview</h2>")
        b.append("<p class=\"muted small\">Every session on one time axis, coloured by outcome; click one to jump to it.</p>")
        b.append("<div id=\"ov\"></div><noscript><p class=\"muted\">(the overview and the timelines are drawn by the page's script)</p></noscript></section>\n")
        if count > 0 {
            // A long table goes in a closed <details>: the overview is the map of a big bundle.
            b.append("<section id=\"table\"><h2>Sessions</h2>")
            if count > 40 {
                b.append("<details><summary>table of all ")
                b.int(count)
                b.append(" sessions</summary>")
            }
            b.append("<div class=\"scroll\"><table class=\"sessions\"><thead><tr><th>Session</th><th>SDK</th>")
            b.append("<th class=\"wide\">Process</th><th class=\"wide\">Start</th><th>Duration</th><th>Outcome</th><th>Findings</th></tr></thead><tbody>\n")
        }
    }

    /// Session number `i`'s row of the table.
    public static func row(_ i: Int, _ s: Session, _ findings: [Finding], into b: inout OutputBuffer) {
        b.append("<tr data-i=\"")
        b.int(i)
        b.append("\"><td><a href=\"#s-")
        b.int(i)
        b.append("\">")
        b.html(s.id)
        b.append("</a></td><td>")
        b.html(s.sdk)
        b.append("</td><td class=\"mono wide\">")
        if let p = s.process {
            b.html(p)
            if let pid = s.pid {
                b.byte(UInt8(ascii: "["))
                b.int(Int(pid))
                b.byte(UInt8(ascii: "]"))
            }
        } else {
            b.byte(UInt8(ascii: "-"))
        }
        b.append("</td><td class=\"mono wide\">")
        // (times and durations need no escaping)
        if let start = s.start { b.rfc3339(start, offset: s.displayOffset) } else { b.byte(UInt8(ascii: "-")) }
        b.append("</td><td>")
        if let d = s.duration { b.duration(d) } else { b.byte(UInt8(ascii: "-")) }
        b.append("</td><td>")
        pill(s.outcome, into: &b)
        b.append("</td><td>")
        for (j, f) in findings.enumerated() {
            if j > 0 { b.append(", ") }
            b.html(f.kind)
        }
        b.append("</td></tr>\n")
    }

    /// The table's end (nothing without sessions).
    public static func tableEnd(_ count: Int, into b: inout OutputBuffer) {
        guard count > 0 else { return }
        b.append("</tbody></table></div>")
        if count > 40 { b.append("</details>") }
        b.append("</section>\n")
    }

    /// After the cards: the bundle's findings, orphans, lines outside sessions, input errors,
    /// inputs, footer, and the start of the page's data (`dataEntry` per session, then `end`).
    /// `flush`: called whenever `b` holds a megabyte, to write it out and empty it (a relay
    /// fleet's tens of thousands of orphan relay sessions, each a finding and a list item, made
    /// a buffer of tens of megabytes otherwise); false when the output failed.
    @discardableResult
    public static func suffix(_ r: AnalysisReport, provenance: Provenance, into b: inout OutputBuffer,
                              flush: ((inout OutputBuffer) -> Bool)? = nil) -> Bool {
        var ok = true
        func full(_ b: inout OutputBuffer) -> Bool {
            if let flush, b.count >= 1 << 20, ok { ok = flush(&b) }
            return !ok
        }
        // (read as listed, not gathered: the orphan relay sessions' findings are made when read)
        let general = r.findings.lazy.filter { $0.session == nil }
        if r.findings.aboutNoSession > 0 {
            b.append("<section><h2>Bundle findings</h2>\n")
            findingList(general, into: &b, full: full)
            guard ok else { return false }
            b.append("</section>\n")
        }
        let orphanRelay = r.relaySessions.orphans
        if !orphanRelay.isEmpty || !r.orphanDeviceSessions.isEmpty {
            b.append("<section><h2>Orphans</h2><ul>\n")
            for rs in orphanRelay {
                if full(&b) { return false }
                b.append("<li>relay session <code>")
                b.html(rs.id)
                b.append("</code> (")
                b.html(rs.peer ?? "?")
                b.append(", room ")
                b.html(rs.room ?? "?")
                if let t = rs.accepted {
                    b.append(") at ")
                    b.rfc3339(t, offset: 0)
                } else if let t = rs.closed {
                    b.append(") closed at ")
                    b.rfc3339(t, offset: 0)
                } else {
                    b.append(") at ?")
                }
                b.append(" has no device session in these logs")
                if let note = rs.backwardsNote {
                    b.append("; ")
                    b.html(note)
                }
                if let end = rs.endText {
                    b.append("; ")
                    b.html(end)
                }
                b.append(" <span class=\"src\">")
                if let source = rs.firstSource { source.html(into: &b) }
                b.append("</span></li>\n")
            }
            for id in r.orphanDeviceSessions {
                if full(&b) { return false }
                b.append("<li>device session <code>")
                b.html(id)
                b.append("</code> connected but the relay logs have no session for it</li>\n")
            }
            b.append("</ul></section>\n")
        }
        if !r.unattached.isEmpty {
            b.append("<section><h2>Outside any session</h2><details><summary>")
            b.counted(r.unattached.count, "line")
            b.append("</summary><div class=\"scroll\"><table class=\"tl\">\n")
            Timeline.entries(r.unattached) { t in
                _ = full(&b)
                b.append("<tr><td class=\"mono\">")
                if let time = t.time {
                    b.rfc3339(time, offset: t.displayOffset)
                    if t.timeInferred { b.append(" ~") }
                } else {
                    b.append("(no time)")
                }
                timelineCells(t, into: &b)
            }
            b.append("</table></div></details></section>\n")
        }
        if !r.errors.isEmpty {
            b.append("<section><h2>Input errors</h2>\n<ul>")
            for e in r.errors {
                b.append("<li class=\"mono\">")
                b.html(e.description)
                b.append("</li>")
            }
            b.append("</ul></section>\n")
        }
        b.append("<section><h2>Inputs</h2><div class=\"scroll\"><table class=\"inputs\"><thead><tr><th>File</th><th>Format</th><th>Records</th><th>Recognized</th><th>Unparsed</th></tr></thead><tbody>\n")
        for i in r.inputs {
            b.append("<tr><td class=\"mono\">")
            b.html(i.path)
            b.append("</td><td>")
            b.html(i.format ?? "-")
            b.append("</td><td>")
            b.int(i.stats.records)
            b.append("</td><td>")
            b.int(i.events)
            b.append("</td><td>")
            b.int(i.stats.unparsed)
            if i.stats.unparsed > 0 {
                b.append(" (first at line ")
                b.int(i.stats.firstUnparsed.first ?? 0)
                b.byte(UInt8(ascii: ")"))
            }
            b.append("</td></tr>\n")
            for n in i.notes {
                b.append("<tr><td></td><td colspan=\"4\" class=\"muted\">note: ")
                b.html(n)
                b.append("</td></tr>\n")
            }
        }
        b.append("</tbody></table></div></section>\n<footer class=\"muted small\">castscope ")
        b.html(provenance.version)
        b.append(" · ")
        b.html(provenance.generatedText)
        b.append("</footer>\n<script type=\"application/json\" id=\"cs-data\">{\"sessions\":[")
        return ok
    }

    public static let end = "]}</script>\n<script>\(HTMLAssets.script)</script>\n</body></html>\n"

    static func toolbar(_ summary: Summary, sessionFindingKinds: [String], into b: inout OutputBuffer) {
        b.append("<nav id=\"tools\" aria-label=\"filter and search\">")
        b.append("<label>Outcome <select id=\"f-outcome\"><option value=\"\">all</option><option value=\"failing\">only failing</option>")
        for o in Outcome.allCases where (summary.outcomes[o] ?? 0) > 0 {
            b.append("<option value=\"")
            b.append(o.rawValue)
            b.append("\">")
            b.append(o.rawValue)
            b.append("</option>")
        }
        b.append("</select></label><label>Finding <select id=\"f-finding\"><option value=\"\">any</option>")
        for k in sessionFindingKinds {
            b.append("<option>")
            b.html(k)
            b.append("</option>")
        }
        b.append("</select></label><label>SDK <select id=\"f-sdk\"><option value=\"\">any</option>")
        for sdk in summary.sdks {
            b.append("<option>")
            b.html(sdk)
            b.append("</option>")
        }
        b.append("</select></label><label>Sort <select id=\"f-sort\"><option value=\"time\">by time</option><option value=\"outcome\">failing first</option>")
        b.append("<option value=\"findings\">most findings</option><option value=\"duration\">longest</option></select></label>")
        b.append("<label class=\"grow\">Search <input id=\"f-q\" type=\"search\" placeholder=\"id, process, message, file\" autocomplete=\"off\"></label>")
        b.append("<output id=\"f-count\" aria-live=\"polite\"></output></nav>\n")
    }

    static func findingList<S: Sequence<Finding>>(_ fs: S, into b: inout OutputBuffer, full: (inout OutputBuffer) -> Bool = { _ in false }) {
        b.append("<ul class=\"findings\">\n")
        for f in fs {
            if full(&b) { return }
            b.append("<li><b class=\"sev-")
            b.append(f.severity.rawValue)
            b.append("\">")
            b.append(f.severity.rawValue)
            b.append("</b> <code>")
            b.html(f.kind)
            b.append("</code> ")
            b.html(f.message)
            if let t = f.time {
                b.append(" <span class=\"muted mono\">")
                b.rfc3339(t, offset: f.displayOffset)
                b.append("</span>")
            }
            if !f.evidence.isEmpty {
                b.append("<br><span class=\"src\">")
                for (j, e) in f.evidence.enumerated() {
                    if j > 0 { b.append(", ") }
                    e.html(into: &b)
                }
                b.append("</span>")
            }
            b.append("</li>\n")
        }
        b.append("</ul>\n")
    }

    /// Session number `i`'s card; `entries`: its timeline's rows (`Timeline.entries`, made once
    /// for the card and the data entry).
    public static func card(_ i: Int, _ s: Session, _ findings: [Finding], entries: TimelineRows, into b: inout OutputBuffer) {
        b.append("<section class=\"card\" id=\"s-")
        b.int(i)
        b.append("\" data-i=\"")
        b.int(i)
        b.append("\" data-outcome=\"")
        b.append(s.outcome.rawValue)
        b.append("\" data-sdk=\"")
        b.html(s.sdk)
        b.append("\" data-kinds=\"")
        for (j, k) in Set(findings.map(\.kind)).sorted().enumerated() {
            if j > 0 { b.byte(0x20) }
            b.html(k)
        }
        b.append("\" data-start=\"")
        if let start = s.start { b.int(Int(start)) }
        b.append("\" data-dur=\"")
        b.int(Int(s.duration ?? 0))
        b.append("\" data-nf=\"")
        b.int(findings.count)
        b.append("\">\n<h2 tabindex=\"-1\">")
        b.html(s.id)
        b.append(" <span class=\"who\">")
        b.html(SessionFacts.who(s))
        b.append("</span> ")
        pill(s.outcome, into: &b)
        b.append("</h2>\n<dl class=\"facts\">")
        if let start = s.start {
            b.append("<dt>when</dt><dd class=\"mono\">")
            b.rfc3339(start, offset: s.displayOffset)
            if let d = s.duration, d > 0 {
                b.append(", lasted ")
                b.duration(d)
            }
            if s.startInferred { b.append(" <span class=\"muted\">(no broadcastStarted line: starts at its first line)</span>") }
            b.append("</dd>")
        } else {
            b.append("<dt>when</dt><dd class=\"muted\">no times in these lines</dd>")
        }
        b.append("<dt>why</dt><dd>")
        b.html(s.reason)
        b.append("</dd>")
        if let c = SessionFacts.connect(s) {
            b.append("<dt>connect</dt><dd>")
            b.html(c)
            b.append("</dd>")
        }
        if let rl = SessionFacts.relay(s) {
            b.append("<dt>relay</dt><dd>")
            b.html(rl)
            b.append("</dd>")
        }
        if let f = SessionFacts.frames(s) {
            b.append("<dt>frames</dt><dd>")
            b.html(f)
            b.append("</dd>")
        }
        if !s.deciding.isEmpty {
            b.append("<dt>decided by</dt><dd><ul class=\"decided\">")
            for e in s.deciding {
                b.append("<li><span class=\"msg\">")
                b.html(e.message)
                b.append("</span> <span class=\"src\">")
                e.source.html(into: &b)
                b.append("</span></li>")
            }
            b.append("</ul></dd>")
        }
        b.append("</dl>\n")
        if s.start != nil {
            b.append("<div class=\"tlbar\"><button type=\"button\" data-z=\"in\" aria-label=\"zoom in\">+</button><button type=\"button\" data-z=\"out\" aria-label=\"zoom out\">−</button>")
            b.append("<button type=\"button\" data-z=\"reset\">reset</button><span class=\"muted small\">drag to pan, Ctrl+wheel or pinch buttons to zoom</span></div>")
            b.append("<div class=\"chart\" id=\"tl-")
            b.int(i)
            b.append("\" style=\"min-height:")
            b.int(chartHeight(s))
            b.append("px\"></div><div class=\"detail\" id=\"dt-")
            b.int(i)
            b.append("\" aria-live=\"polite\">Hover or tap a mark for its time and source line.</div>\n")
        }
        if !findings.isEmpty { findingList(findings, into: &b) }
        b.append("<details><summary>Timeline (")
        b.counted(entries.count, "row")
        b.append(")</summary><div class=\"scroll\"><table class=\"tl\">\n")
        for t in entries {
            b.append("<tr class=\"c-")
            b.append(eventClass(t.kind))
            b.append("\"><td class=\"mono\">")
            // (`+3.912`: no escaping)
            if let tt = t.time, let start = s.start { b.relative(tt - start) }
            if t.timeInferred { b.append(" ~") }
            timelineCells(t, into: &b)
        }
        b.append("</table></div></details></section>\n")
    }

    /// The rest of a timeline row after its time: side, line and source, and the row's end.
    static func timelineCells(_ t: TimelineEntry, into b: inout OutputBuffer) {
        b.append("</td><td>")
        b.append(sideName(t.side))
        b.append("</td><td class=\"msg\">")
        b.html(t.text)
        b.append("</td><td class=\"src\">")
        t.first.html(into: &b)
        b.append("</td></tr>\n")
    }

    /// The height the script will draw the session's chart at (reserved, so that drawing the
    /// charts above a card does not move it): as `draw` in `HTMLAssets.script` computes it.
    static func chartHeight(_ s: Session) -> Int {
        var lanes: Set<Side> = [.extension]
        for e in s.events where e.time != nil { lanes.insert(e.side) }
        let fps = !s.framesPerSecond.isEmpty || s.events.contains { $0.kind == "relay.stats" && $0.time != nil }
        return 34 + lanes.count * 26 + (fps ? 56 : 0) + 8 + 2
    }

    /// A session's entry in the page's data (the script draws its timeline from it): one
    /// object per session, times in µs since the epoch.
    public static func dataEntry(_ s: Session, _ findings: [Finding], entries: TimelineRows, into b: inout OutputBuffer) {
        func num(_ v: Int64?) {
            if let v { b.int(Int(v)) } else { b.append("null") }
        }
        // An array's elements: `[` after a comma but before the first.
        var first = true
        func element(_ time: Int64) {
            if !first { b.byte(UInt8(ascii: ",")) }
            first = false
            b.byte(UInt8(ascii: "["))
            b.int(Int(time))
            b.byte(UInt8(ascii: ","))
        }
        b.append("{\"id\":")
        b.script(s.id)
        b.append(",\"o\":")
        b.script(s.outcome.rawValue)
        b.append(",\"sdk\":")
        b.script(s.sdk)
        b.append(",\"who\":")
        b.script(SessionFacts.who(s))
        b.append(",\"off\":")
        b.int(s.displayOffset)
        b.append(",\"s\":")
        num(s.start)
        b.append(",\"e\":")
        num(s.end ?? s.events.compactMap(\.lastTime).max())
        b.append(",\"c\":")
        num(s.connectedAt)
        b.append(",\"str\":")
        b.byte(s.frames > 0 ? UInt8(ascii: "1") : UInt8(ascii: "0"))
        b.append(",\"a\":[")
        for a in s.attempts {
            guard let t = a.time else { continue }
            element(t)
            b.append(a.failure == nil ? "0," : "1,")
            b.script(a.failure.map { "attempt: \($0)" } ?? "attempt")
            b.byte(UInt8(ascii: ","))
            (a.failureSource ?? a.source).script(into: &b)
            b.byte(UInt8(ascii: "]"))
        }
        b.append("],\"ev\":[")
        first = true
        for t in entries {
            guard let time = t.time else { continue }
            element(time)
            b.script(t.side.rawValue)
            b.append(",\"")
            b.append(eventClass(t.kind))
            b.append("\",")
            b.script(t.text)
            b.byte(UInt8(ascii: ","))
            t.first.script(into: &b)
            b.byte(UInt8(ascii: ","))
            b.int(t.count)
            b.byte(UInt8(ascii: "]"))
        }
        b.append("],\"d\":[")
        first = true
        for e in s.deciding {
            guard let time = e.time else { continue }
            element(time)
            b.script(e.side.rawValue)
            b.byte(UInt8(ascii: ","))
            b.script(e.message)
            b.byte(UInt8(ascii: ","))
            e.source.script(into: &b)
            b.byte(UInt8(ascii: "]"))
        }
        b.append("],\"fps\":[")
        first = true
        let perSecond = s.framesPerSecond
        if let start = s.start, !perSecond.isEmpty {
            for p in perSecond {
                element(start + p.second * 1_000_000 + 500_000)
                b.int(p.frames)
                b.byte(UInt8(ascii: "]"))
            }
        } else {
            for e in s.events where e.kind == "relay.stats" {
                e.forEachStat { t, _, _, fps, _ in
                    guard let t else { return }
                    element(t)
                    b.decimal(fps, 2)
                    b.byte(UInt8(ascii: "]"))
                }
            }
        }
        b.append("],\"fpsSrc\":")
        b.append(perSecond.isEmpty ? "\"relay\"" : "\"device\"")
        b.append(",\"f\":[")
        first = true
        for f in findings {
            guard let t = f.time else { continue }
            element(t)
            b.script(f.severity.rawValue)
            b.byte(UInt8(ascii: ","))
            b.script(f.kind)
            b.byte(UInt8(ascii: ","))
            b.script(f.message)
            b.byte(UInt8(ascii: ","))
            b.script(f.evidence.map(\.description).joined(separator: ", "))
            b.byte(UInt8(ascii: "]"))
        }
        b.append("]}")
    }
}

extension SourceRef {
    /// `path:line` as HTML text.
    func html(into b: inout OutputBuffer) {
        b.html(path)
        b.byte(UInt8(ascii: ":"))
        b.int(line)
    }

    /// `path:line` as a script-safe JSON string.
    func script(into b: inout OutputBuffer) {
        b.script(path)
        b.dropLast()
        b.byte(UInt8(ascii: ":"))
        b.int(line)
        b.byte(UInt8(ascii: "\""))
    }
}

extension OutputBuffer {
    /// `s` as HTML text (`HTMLReport.esc`): `&`, `<`, `>`, `"`, `'` as entities; control
    /// characters (but tab and newline), C1 controls and the bidirectional overrides as the
    /// terminal report shows them (`Sanitize.line`: `\x1b`, `\u{202e}`); the rest as it is.
    public mutating func html(_ s: String) {
        var s = s
        s.withUTF8 { u in
            HTMLEscapes.html.withUnsafeBufferPointer { table in html(u, table) }
        }
    }

    private mutating func html(_ u: UnsafeBufferPointer<UInt8>, _ table: UnsafeBufferPointer<UInt8>) {
        let n = u.count
        var run = 0
        var i = 0
        while i < n {
            let c = u[i]
            let what = table[Int(c)]
            if what == 0 {
                i += 1
                continue
            }
            // How many bytes the character takes, and its scalar when it is shown escaped.
            var width = 1
            var hidden: UInt32?
            switch what {
            case HTMLEscapes.entity: break
            case HTMLEscapes.control: hidden = UInt32(c)
            case HTMLEscapes.leadC2:
                // U+0080...U+009F: C2 80...C2 9F.
                guard i + 1 < n, (0x80...0x9F).contains(u[i + 1]) else { i += 1; continue }
                (width, hidden) = (2, UInt32(u[i + 1]))
            default:
                // U+202A...U+202E (E2 80 AA...AE) and U+2066...U+2069 (E2 81 A6...A9).
                guard i + 2 < n else { i += 1; continue }
                let (b1, b2) = (u[i + 1], u[i + 2])
                guard (b1 == 0x80 && (0xAA...0xAE).contains(b2)) || (b1 == 0x81 && (0xA6...0xA9).contains(b2)) else {
                    i += 1
                    continue
                }
                (width, hidden) = (3, 0x2000 | UInt32(b1 & 0x3F) << 6 | UInt32(b2 & 0x3F))
            }
            if i > run { append(u, run..<i) }
            if let hidden, let scalar = Unicode.Scalar(hidden) {
                append(Sanitize.line(String(scalar)))
            } else {
                switch c {
                case UInt8(ascii: "&"): append("&amp;" as StaticString)
                case UInt8(ascii: "<"): append("&lt;" as StaticString)
                case UInt8(ascii: ">"): append("&gt;" as StaticString)
                case UInt8(ascii: "\""): append("&quot;" as StaticString)
                default: append("&#39;" as StaticString)
                }
            }
            i += width
            run = i
        }
        if n > run { append(u, run..<n) }
    }

    /// `s` as a JSON string literal safe inside a `<script>` element (`null` for nil): JSON's
    /// escapes, and `<`, `>`, `&`, U+2028 and U+2029 as `\u` escapes. What the page's text
    /// shows escaped (`html`: control characters but tab and newline, C1 controls, the
    /// bidirectional overrides and isolates) is carried as that text (`\x1b`, `\u{202e}`): the
    /// page's script puts these strings into the page (a mark's detail, a bar's title), where a
    /// raw U+202E turned the rest of its line around.
    public mutating func script(_ s: String?) {
        guard var s else { append("null" as StaticString); return }
        s.withUTF8 { u in
            HTMLEscapes.script.withUnsafeBufferPointer { table in script(u, table) }
        }
    }

    private mutating func script(_ u: UnsafeBufferPointer<UInt8>, _ table: UnsafeBufferPointer<UInt8>) {
        byte(UInt8(ascii: "\""))
        let n = u.count
        var run = 0
        var i = 0
        while i < n {
            let c = u[i]
            if table[Int(c)] == 0 {
                i += 1
                continue
            }
            if c == 0xC2 {
                // U+0080...U+009F: C2 80...C2 9F, shown as the page's text shows them.
                guard i + 1 < n, (0x80...0x9F).contains(u[i + 1]) else { i += 1; continue }
                if i > run { append(u, run..<i) }
                shownEscaped(UInt32(u[i + 1]))
                i += 2
                run = i
                continue
            }
            if c == 0xE2 {
                // U+2028 and U+2029: E2 80 A8 and E2 80 A9; the bidirectional overrides and
                // isolates U+202A...U+202E (E2 80 AA...AE) and U+2066...U+2069 (E2 81 A6...A9).
                guard i + 2 < n else { i += 1; continue }
                let (b1, b2) = (u[i + 1], u[i + 2])
                if b1 == 0x80 && (b2 == 0xA8 || b2 == 0xA9) {
                    if i > run { append(u, run..<i) }
                    append(b2 == 0xA8 ? "\\u2028" as StaticString : "\\u2029")
                } else if (b1 == 0x80 && (0xAA...0xAE).contains(b2)) || (b1 == 0x81 && (0xA6...0xA9).contains(b2)) {
                    if i > run { append(u, run..<i) }
                    shownEscaped(0x2000 | UInt32(b1 & 0x3F) << 6 | UInt32(b2 & 0x3F))
                } else {
                    i += 1
                    continue
                }
                i += 3
                run = i
                continue
            }
            if i > run { append(u, run..<i) }
            switch c {
            case UInt8(ascii: "\""): append("\\\"" as StaticString)
            case UInt8(ascii: "\\"): append("\\\\" as StaticString)
            case 0x0A: append("\\n" as StaticString)
            case 0x09: append("\\t" as StaticString)
            case 0x00...0x1F, 0x7F: shownEscaped(UInt32(c))
            default:
                // Other controls, DEL, and `<`, `>`, `&`: `\u003c`.
                append("\\u00" as StaticString)
                byte(OutputBuffer.hex[Int(c >> 4)])
                byte(OutputBuffer.hex[Int(c & 0xF)])
            }
            i += 1
            run = i
        }
        if n > run { append(u, run..<n) }
        byte(UInt8(ascii: "\""))
    }

    /// A hidden character as the page's text shows it (`Sanitize.line`: ASCII, its backslash
    /// doubled for JSON).
    private mutating func shownEscaped(_ scalar: UInt32) {
        guard let sc = Unicode.Scalar(scalar) else { return }
        for c in Sanitize.line(String(sc)).utf8 {
            if c == UInt8(ascii: "\\") { byte(c) }
            byte(c)
        }
    }
}

/// The byte tables of `OutputBuffer.html` and `.script`.
enum HTMLEscapes {
    static let entity: UInt8 = 1, control: UInt8 = 2, leadC2: UInt8 = 3, leadE2: UInt8 = 4

    static let html: [UInt8] = (0...255).map { b -> UInt8 in
        switch UInt8(b) {
        case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""), UInt8(ascii: "'"): return entity
        case 0x09, 0x0A: return 0
        case 0x00...0x1F, 0x7F: return control
        case 0xC2: return leadC2
        case 0xE2: return leadE2
        default: return 0
        }
    }

    /// Nonzero for the bytes `script` escapes, and C2 and E2 (the lead bytes of the C1 controls,
    /// U+2028, U+2029 and the bidirectional controls).
    static let script: [UInt8] = (0...255).map { b -> UInt8 in
        let c = UInt8(b)
        return OutputBuffer.jsonEscapes(c) || c == UInt8(ascii: "<") || c == UInt8(ascii: ">") || c == UInt8(ascii: "&") || c == 0xC2
            || c == 0xE2 ? 1 : 0
    }
}

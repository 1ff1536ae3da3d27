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
public enum HTMLReport {
    public static func esc(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            // Control characters and bidi overrides from a log are shown escaped, as in the
            // text report (a NUL or C0 character is also an HTML parse error).
            case "\t", "\n": out.unicodeScalars.append(c)
            case "\u{0}"..."\u{1f}", "\u{7f}"..."\u{9f}", "\u{202a}"..."\u{202e}", "\u{2066}"..."\u{2069}":
                out += Sanitize.line(String(c))
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// A JSON string literal safe inside a `<script>` element.
    static func js(_ s: String?) -> String {
        guard let s else { return "null" }
        var out = ""
        for c in JSONWriter.quote(s).unicodeScalars {
            switch c {
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    static func num(_ v: Int64?) -> String { v.map { String($0) } ?? "null" }

    /// The colour class of a line in the timeline: what kind of thing it says.
    public static func eventClass(_ kind: String) -> String {
        let failing = ["error", "failed", "killed", "exited", "not_entitled", "too_long", "gave_up", "suspended", "missing",
                       "refused", "stalled", "closed_by_peer", "dropped"]
        if failing.contains(where: { kind.contains($0) }) { return "fail" }
        if kind.hasPrefix("frame.") || kind == "relay.stats" { return "frames" }
        if kind.hasPrefix("socket.") || kind.hasPrefix("server.") || kind.hasPrefix("relay.") { return "conn" }
        if kind.hasPrefix("broadcast.") || kind.hasPrefix("extension.") || kind.hasPrefix("replaykit.") || kind.hasPrefix("app.")
            || kind.hasPrefix("picker.") || kind.hasPrefix("track.")
        {
            return "life"
        }
        return "other"
    }

    static let sides: [(Side, String)] = [(.extension, "extension"), (.app, "host app"), (.relay, "relay"), (.system, "system")]

    static func sideName(_ s: Side) -> String { sides.first { $0.0 == s }!.1 }

    static func pill(_ o: Outcome) -> String { "<span class=\"pill o-\(o.rawValue)\">\(o.rawValue)</span>" }

    public static func render(_ r: AnalysisReport, provenance: Provenance = .current()) -> String {
        let bySession = r.findingsBySession()
        var summary = Summary()
        for s in r.sessions { summary.add(s) }
        var h = prefix(r, provenance: provenance, summary: summary,
                       sessionFindingKinds: FindingTally(FindingList(r.findings.made.filter { $0.session != nil })).kinds.map(\.kind))
        for (i, s) in r.sessions.enumerated() { h += row(i, s, bySession[s.id] ?? []) }
        h += tableEnd(r.sessions.count) + "<main id=\"cards\">\n"
        for (i, s) in r.sessions.enumerated() { h += card(i, s, bySession[s.id] ?? []) }
        h += "</main>\n" + suffix(r, provenance: provenance)
        for (i, s) in r.sessions.enumerated() { h += (i > 0 ? ",\n" : "") + dataEntry(s, bySession[s.id] ?? []) }
        return h + end
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
    public static func prefix(_ r: AnalysisReport, provenance: Provenance, summary: Summary, sessionFindingKinds: [String]) -> String {
        let count = summary.count
        var h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        h += "<meta name=\"color-scheme\" content=\"light dark\">"
        h += "<meta name=\"generator\" content=\"castscope \(esc(provenance.version))\">"
        h += "<title>castscope report: \(count) session\(count == 1 ? "" : "s")</title>"
        h += "<style>\(HTMLAssets.css)</style></head><body>\n"
        h += "<header><h1>castscope report</h1>\n"
        h += "<p class=\"prov muted\">castscope \(esc(provenance.version)) · generated <time>\(esc(provenance.generatedText))</time>"
        h += " · <code class=\"cmd\">\(esc(provenance.commandText))</code></p>\n"
        var outcomes: [String] = []
        for o in Outcome.allCases {
            let n = summary.outcomes[o] ?? 0
            if n > 0 { outcomes.append("<span class=\"pill o-\(o.rawValue)\">\(n) \(o.rawValue)</span>") }
        }
        h += "<p class=\"sum\">\(count) session\(count == 1 ? "" : "s") from \(r.inputs.count) file\(r.inputs.count == 1 ? "" : "s"), \(r.eventCount) recognized lines "
        h += outcomes.joined(separator: " ")
        if !r.errors.isEmpty { h += " <span class=\"sev-error\">\(r.errors.count) input error\(r.errors.count == 1 ? "" : "s")</span>" }
        h += "</p>\n"
        let findings = r.findingTally
        if findings.count > 0 {
            let sev = findings.severityCounts.filter { $0.1 > 0 }
                .map { "<b class=\"sev-\($0.0.rawValue)\">\($0.1) \($0.0.rawValue)\($0.1 == 1 ? "" : "s")</b>" }
            h += "<p>Findings: " + sev.joined(separator: ", ") + " — "
            h += findings.kinds.map { "<code>\(esc($0.kind))</code>" + ($0.count > 1 ? " ×\($0.count)" : "") }.joined(separator: ", ") + "</p>\n"
        }
        if let c = r.clock { h += "<p class=\"muted\">Clock: \(esc(TextReport(color: false).clockLine(c)))</p>\n" }
        h += "</header>\n"
        h += toolbar(summary, sessionFindingKinds: sessionFindingKinds)
        h += HTMLAssets.legend
        h += "<section id=\"overview\" aria-label=\"bundle overview\"><h2>Overview</h2>"
        h += "<p class=\"muted small\">Every session on one time axis, coloured by outcome; click one to jump to it.</p>"
        h += "<div id=\"ov\"></div><noscript><p class=\"muted\">(the overview and the timelines are drawn by the page's script)</p></noscript></section>\n"
        if count > 0 {
            // A long table goes in a closed <details>: the overview is the map of a big bundle.
            let fold = count > 40
            h += "<section id=\"table\"><h2>Sessions</h2>" + (fold ? "<details><summary>table of all \(count) sessions</summary>" : "")
            h += "<div class=\"scroll\"><table class=\"sessions\"><thead><tr><th>Session</th><th>SDK</th>"
            h += "<th class=\"wide\">Process</th><th class=\"wide\">Start</th><th>Duration</th><th>Outcome</th><th>Findings</th></tr></thead><tbody>\n"
        }
        return h
    }

    /// Session number `i`'s row of the table.
    public static func row(_ i: Int, _ s: Session, _ findings: [Finding]) -> String {
        let who = s.process.map { p in s.pid.map { "\(p)[\($0)]" } ?? p } ?? "-"
        var h = "<tr data-i=\"\(i)\"><td><a href=\"#s-\(i)\">\(esc(s.id))</a></td><td>\(esc(s.sdk))</td><td class=\"mono wide\">\(esc(who))</td>"
        h += "<td class=\"mono wide\">\(esc(s.start.map { Fmt.rfc3339($0, offset: s.displayOffset) } ?? "-"))</td>"
        h += "<td>\(esc(s.duration.map(Fmt.duration) ?? "-"))</td><td>\(pill(s.outcome))</td>"
        h += "<td>\(esc(findings.map(\.kind).joined(separator: ", ")))</td></tr>\n"
        return h
    }

    /// The table's end (nothing without sessions).
    public static func tableEnd(_ count: Int) -> String {
        count > 0 ? "</tbody></table></div>" + (count > 40 ? "</details>" : "") + "</section>\n" : ""
    }

    /// After the cards: the bundle's findings, orphans, lines outside sessions, input errors,
    /// inputs, footer, and the start of the page's data (`dataEntry` per session, then `end`).
    public static func suffix(_ r: AnalysisReport, provenance: Provenance) -> String {
        var h = ""
        let general = r.findings.filter { $0.session == nil }
        if !general.isEmpty { h += "<section><h2>Bundle findings</h2>\n" + findingList(general) + "</section>\n" }
        let orphanRelay = r.relaySessions.orphans
        if !orphanRelay.isEmpty || !r.orphanDeviceSessions.isEmpty {
            h += "<section><h2>Orphans</h2><ul>\n"
            for rs in orphanRelay {
                let when = rs.accepted.map { Fmt.rfc3339($0, offset: 0) } ?? "?"
                h += "<li>relay session <code>\(esc(rs.id))</code> (\(esc(rs.peer ?? "?")), room \(esc(rs.room ?? "?"))) at \(esc(when)) has no device session in these logs"
                h += " <span class=\"src\">\(esc(rs.firstSource?.description ?? ""))</span></li>\n"
            }
            for id in r.orphanDeviceSessions {
                h += "<li>device session <code>\(esc(id))</code> connected but the relay logs have no session for it</li>\n"
            }
            h += "</ul></section>\n"
        }
        if !r.unattached.isEmpty {
            h += "<section><h2>Outside any session</h2><details><summary>\(r.unattached.count) line\(r.unattached.count == 1 ? "" : "s")</summary><div class=\"scroll\"><table class=\"tl\">\n"
            for t in Timeline.entries(r.unattached) {
                let when = t.time.map { Fmt.rfc3339($0, offset: t.displayOffset) + (t.timeInferred ? " ~" : "") } ?? "(no time)"
                h += "<tr><td class=\"mono\">\(esc(when))</td><td>\(sideName(t.side))</td><td class=\"msg\">\(esc(t.text))</td><td class=\"src\">\(esc(t.first.description))</td></tr>\n"
            }
            h += "</table></div></details></section>\n"
        }
        if !r.errors.isEmpty {
            h += "<section><h2>Input errors</h2>\n<ul>" + r.errors.map { "<li class=\"mono\">\(esc($0.description))</li>" }.joined() + "</ul></section>\n"
        }
        h += "<section><h2>Inputs</h2><div class=\"scroll\"><table class=\"inputs\"><thead><tr><th>File</th><th>Format</th><th>Records</th><th>Recognized</th><th>Unparsed</th></tr></thead><tbody>\n"
        for i in r.inputs {
            h += "<tr><td class=\"mono\">\(esc(i.path))</td><td>\(esc(i.format ?? "-"))</td><td>\(i.stats.records)</td><td>\(i.events)</td>"
            h += "<td>\(i.stats.unparsed)\(i.stats.unparsed > 0 ? " (first at line \(i.stats.firstUnparsed.first ?? 0))" : "")</td></tr>\n"
            for n in i.notes { h += "<tr><td></td><td colspan=\"4\" class=\"muted\">note: \(esc(n))</td></tr>\n" }
        }
        h += "</tbody></table></div></section>\n"
        h += "<footer class=\"muted small\">castscope \(esc(provenance.version)) · \(esc(provenance.generatedText))</footer>\n"
        return h + "<script type=\"application/json\" id=\"cs-data\">{\"sessions\":["
    }

    public static let end = "]}</script>\n<script>\(HTMLAssets.script)</script>\n</body></html>\n"

    static func toolbar(_ summary: Summary, sessionFindingKinds: [String]) -> String {
        var h = "<nav id=\"tools\" aria-label=\"filter and search\">"
        h += "<label>Outcome <select id=\"f-outcome\"><option value=\"\">all</option><option value=\"failing\">only failing</option>"
        for o in Outcome.allCases where (summary.outcomes[o] ?? 0) > 0 {
            h += "<option value=\"\(o.rawValue)\">\(o.rawValue)</option>"
        }
        h += "</select></label><label>Finding <select id=\"f-finding\"><option value=\"\">any</option>"
        for k in sessionFindingKinds { h += "<option>\(esc(k))</option>" }
        h += "</select></label><label>SDK <select id=\"f-sdk\"><option value=\"\">any</option>"
        for sdk in summary.sdks { h += "<option>\(esc(sdk))</option>" }
        h += "</select></label><label>Sort <select id=\"f-sort\"><option value=\"time\">by time</option><option value=\"outcome\">failing first</option>"
        h += "<option value=\"findings\">most findings</option><option value=\"duration\">longest</option></select></label>"
        h += "<label class=\"grow\">Search <input id=\"f-q\" type=\"search\" placeholder=\"id, process, message, file\" autocomplete=\"off\"></label>"
        h += "<output id=\"f-count\" aria-live=\"polite\"></output></nav>\n"
        return h
    }

    static func findingList(_ fs: [Finding]) -> String {
        var h = "<ul class=\"findings\">\n"
        for f in fs {
            h += "<li><b class=\"sev-\(f.severity.rawValue)\">\(f.severity.rawValue)</b> <code>\(esc(f.kind))</code> \(esc(f.message))"
            if let t = f.time { h += " <span class=\"muted mono\">\(esc(Fmt.rfc3339(t, offset: f.displayOffset)))</span>" }
            if !f.evidence.isEmpty { h += "<br><span class=\"src\">" + f.evidence.map { esc($0.description) }.joined(separator: ", ") + "</span>" }
            h += "</li>\n"
        }
        return h + "</ul>\n"
    }

    public static func card(_ i: Int, _ s: Session, _ findings: [Finding]) -> String {
        let kinds = Set(findings.map(\.kind)).sorted().joined(separator: " ")
        var h = "<section class=\"card\" id=\"s-\(i)\" data-i=\"\(i)\" data-outcome=\"\(s.outcome.rawValue)\" data-sdk=\"\(esc(s.sdk))\""
        h += " data-kinds=\"\(esc(kinds))\" data-start=\"\(s.start.map(String.init) ?? "")\" data-dur=\"\(s.duration ?? 0)\" data-nf=\"\(findings.count)\">\n"
        h += "<h2 tabindex=\"-1\">\(esc(s.id)) <span class=\"who\">\(esc(SessionFacts.who(s)))</span> \(pill(s.outcome))</h2>\n<dl class=\"facts\">"
        if let start = s.start {
            var when = esc(Fmt.rfc3339(start, offset: s.displayOffset))
            if let d = s.duration, d > 0 { when += ", lasted \(esc(Fmt.duration(d)))" }
            if s.startInferred { when += " <span class=\"muted\">(no broadcastStarted line: starts at its first line)</span>" }
            h += "<dt>when</dt><dd class=\"mono\">\(when)</dd>"
        } else {
            h += "<dt>when</dt><dd class=\"muted\">no times in these lines</dd>"
        }
        h += "<dt>why</dt><dd>\(esc(s.reason))</dd>"
        if let c = SessionFacts.connect(s) { h += "<dt>connect</dt><dd>\(esc(c))</dd>" }
        if let rl = SessionFacts.relay(s) { h += "<dt>relay</dt><dd>\(esc(rl))</dd>" }
        if let f = SessionFacts.frames(s) { h += "<dt>frames</dt><dd>\(esc(f))</dd>" }
        if !s.deciding.isEmpty {
            h += "<dt>decided by</dt><dd><ul class=\"decided\">"
            for e in s.deciding { h += "<li><span class=\"msg\">\(esc(e.message))</span> <span class=\"src\">\(esc(e.source.description))</span></li>" }
            h += "</ul></dd>"
        }
        h += "</dl>\n"
        if s.start != nil {
            h += "<div class=\"tlbar\"><button type=\"button\" data-z=\"in\" aria-label=\"zoom in\">+</button><button type=\"button\" data-z=\"out\" aria-label=\"zoom out\">−</button>"
            h += "<button type=\"button\" data-z=\"reset\">reset</button><span class=\"muted small\">drag to pan, Ctrl+wheel or pinch buttons to zoom</span></div>"
            h += "<div class=\"chart\" id=\"tl-\(i)\" style=\"min-height:\(chartHeight(s))px\"></div><div class=\"detail\" id=\"dt-\(i)\" aria-live=\"polite\">Hover or tap a mark for its time and source line.</div>\n"
        }
        if !findings.isEmpty { h += findingList(findings) }
        let entries = Timeline.entries(s.events)
        h += "<details><summary>Timeline (\(entries.count) row\(entries.count == 1 ? "" : "s"))</summary><div class=\"scroll\"><table class=\"tl\">\n"
        for t in entries {
            let rel = t.time.flatMap { tt in s.start.map { Fmt.relative(tt - $0) } } ?? ""
            h += "<tr class=\"c-\(eventClass(t.kind))\"><td class=\"mono\">\(esc(rel))\(t.timeInferred ? " ~" : "")</td><td>\(sideName(t.side))</td>"
            h += "<td class=\"msg\">\(esc(t.text))</td><td class=\"src\">\(esc(t.first.description))</td></tr>\n"
        }
        return h + "</table></div></details></section>\n"
    }

    /// The height the script will draw the session's chart at (reserved, so that drawing the
    /// charts above a card does not move it): as `draw` in `HTMLAssets.script` computes it.
    static func chartHeight(_ s: Session) -> Int {
        var lanes: Set<Side> = [.extension]
        for e in s.events where e.time != nil { lanes.insert(e.side) }
        let fps = !s.framesPerSecond.isEmpty || s.events.contains { $0.kind == "relay.stats" && $0.time != nil }
        return 34 + lanes.count * 26 + (fps ? 56 : 0) + 8 + 2
    }

    /// The drawing data: one object per session, times in µs since the epoch.
    /// A session's entry in the page's data (the script draws its timeline from it).
    public static func dataEntry(_ s: Session, _ findings: [Finding]) -> String {
            var out = "{\"id\":\(js(s.id)),\"o\":\(js(s.outcome.rawValue)),\"sdk\":\(js(s.sdk)),\"who\":\(js(SessionFacts.who(s))),"
            out += "\"off\":\(s.displayOffset),\"s\":\(num(s.start)),\"e\":\(num(s.end ?? s.events.compactMap(\.lastTime).max())),"
            out += "\"c\":\(num(s.connectedAt)),\"str\":\(s.frames > 0 ? 1 : 0),\"a\":["
            out += s.attempts.compactMap { a in
                a.time.map { "[\($0),\(a.failure == nil ? 0 : 1),\(js(a.failure.map { "attempt: \($0)" } ?? "attempt")),\(js((a.failureSource ?? a.source).description))]" }
            }.joined(separator: ",")
            out += "],\"ev\":["
            out += Timeline.entries(s.events).compactMap { t in
                t.time.map { "[\($0),\(js(t.side.rawValue)),\(js(eventClass(t.kind))),\(js(t.text)),\(js(t.first.description)),\(t.count)]" }
            }.joined(separator: ",")
            out += "],\"d\":["
            out += s.deciding.compactMap { e in e.time.map { "[\($0),\(js(e.side.rawValue)),\(js(e.message)),\(js(e.source.description))]" } }
                .joined(separator: ",")
            var series: [String] = []
            let perSecond = s.framesPerSecond
            if let start = s.start, !perSecond.isEmpty {
                series = perSecond.map { "[\(start + $0.second * 1_000_000 + 500_000),\($0.frames)]" }
            } else {
                for e in s.events where e.kind == "relay.stats" {
                    e.forEachStat { t, _, _, fps, _ in if let t { series.append("[\(t),\(Fmt.decimal(fps, 2))]") } }
                }
            }
            out += "],\"fps\":[" + series.joined(separator: ",") + "],\"fpsSrc\":\(js(perSecond.isEmpty ? "relay" : "device")),\"f\":["
            out += findings.compactMap { f in
                f.time.map { "[\($0),\(js(f.severity.rawValue)),\(js(f.kind)),\(js(f.message)),\(js(f.evidence.map(\.description).joined(separator: ", ")))]" }
            }.joined(separator: ",")
            return out + "]}"
    }
}

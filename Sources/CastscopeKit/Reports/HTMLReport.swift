/// `--html FILE`: one self-contained page (no network, no scripts, no external fonts): the
/// bundle summary, and per session an SVG timeline — phases as bars, connect attempts as ticks,
/// frames per second as a small series, findings as markers (their text on hover and listed
/// below with the evidence) — and the folded timeline. Every value is escaped.
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
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    static let css = """
        body{font:14px/1.45 -apple-system,system-ui,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;margin:24px;color:#1d1f23;background:#fff}
        h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 6px;border-top:1px solid #ddd;padding-top:14px}
        .muted{color:#6b7078}.pill{display:inline-block;white-space:nowrap;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12px;color:#fff}
        .completed{background:#2e7d32}.stopped-by-host{background:#b26a00}.failed-to-connect,.socket-error,.killed{background:#c62828}
        .truncated,.unknown{background:#6a1b9a}.error{color:#c62828}.warning{color:#b26a00}.info{color:#1565c0}
        table{border-collapse:collapse;margin:8px 0}td,th{border-bottom:1px solid #eee;padding:3px 8px;text-align:left;vertical-align:top}
        code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
        svg{display:block;margin:8px 0;background:#fafbfc;border:1px solid #e3e5e8;border-radius:4px}
        details{margin:6px 0}
        """

    public static func render(_ r: AnalysisReport) -> String {
        var h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>castscope report</title>"
        h += "<style>\(css)</style></head><body>\n<h1>castscope report</h1>\n"
        var outcomes: [String] = []
        for o in Outcome.allCases {
            let n = r.sessions.filter { $0.outcome == o }.count
            if n > 0 { outcomes.append("<span class=\"pill \(o.rawValue)\">\(n) \(o.rawValue)</span>") }
        }
        h += "<p>\(r.sessions.count) session\(r.sessions.count == 1 ? "" : "s") from \(r.inputs.count) file\(r.inputs.count == 1 ? "" : "s") \(outcomes.joined(separator: " "))</p>\n"
        if !r.findings.isEmpty {
            h += "<p>Findings: " + JSONReport.findingCounts(r.findings).map { "<code>\(esc($0.0))</code>" + ($0.1 > 1 ? " ×\($0.1)" : "") }.joined(separator: ", ") + "</p>\n"
        }
        if let c = r.clock { h += "<p class=\"muted\">Clock: \(esc(TextReport(color: false).clockLine(c)))</p>\n" }
        if !r.sessions.isEmpty {
            h += "<table><tr><th>Session</th><th>SDK</th><th>Process</th><th>Start</th><th>Duration</th><th>Outcome</th><th>Findings</th></tr>\n"
            for s in r.sessions {
                let who = s.process.map { p in s.pid.map { "\(p)[\($0)]" } ?? p } ?? "-"
                h += "<tr><td><a href=\"#\(esc(s.id))\">\(esc(s.id))</a></td><td>\(esc(s.sdk))</td><td class=\"mono\">\(esc(who))</td>"
                h += "<td class=\"mono\">\(esc(s.start.map { Fmt.rfc3339($0, offset: s.displayOffset) } ?? "-"))</td>"
                h += "<td>\(esc(s.duration.map(Fmt.duration) ?? "-"))</td><td><span class=\"pill \(s.outcome.rawValue)\">\(s.outcome.rawValue)</span></td>"
                h += "<td>\(esc(r.findings.filter { $0.session == s.id }.map(\.kind).joined(separator: ", ")))</td></tr>\n"
            }
            h += "</table>\n"
        }
        for s in r.sessions { h += session(s, r.findings.filter { $0.session == s.id }) }
        let general = r.findings.filter { $0.session == nil }
        if !general.isEmpty {
            h += "<h2>Bundle findings</h2>\n" + findingList(general)
        }
        if !r.errors.isEmpty {
            h += "<h2>Input errors</h2>\n<ul>" + r.errors.map { "<li class=\"mono\">\(esc($0.description))</li>" }.joined() + "</ul>\n"
        }
        h += "<p class=\"muted\">Inputs: " + r.inputs.map { "<code>\(esc($0.path))</code> (\(esc($0.format ?? "-")))" }.joined(separator: ", ") + "</p>\n"
        return h + "</body></html>\n"
    }

    static func findingList(_ fs: [Finding]) -> String {
        var h = "<ul>\n"
        for f in fs {
            h += "<li><b class=\"\(f.severity.rawValue)\">\(f.severity.rawValue)</b> <code>\(esc(f.kind))</code> \(esc(f.message))"
            if !f.evidence.isEmpty { h += "<br><span class=\"mono muted\">" + f.evidence.map { esc($0.description) }.joined(separator: ", ") + "</span>" }
            h += "</li>\n"
        }
        return h + "</ul>\n"
    }

    static func session(_ s: Session, _ findings: [Finding]) -> String {
        let who = [s.sdk, s.process.map { p in s.pid.map { "\(p)[\($0)]" } ?? p }].compactMap { $0 }.joined(separator: " ")
        var h = "<h2 id=\"\(esc(s.id))\">\(esc(s.id)) · \(esc(who)) <span class=\"pill \(s.outcome.rawValue)\">\(s.outcome.rawValue)</span></h2>\n"
        h += "<p>\(esc(s.reason))</p>\n"
        h += svg(s, findings)
        if !findings.isEmpty { h += findingList(findings) }
        h += "<details><summary>Timeline</summary><table>\n"
        for t in Timeline.entries(s.events) {
            let rel = t.time.flatMap { tt in s.start.map { Fmt.relative(tt - $0) } } ?? ""
            h += "<tr><td class=\"mono\">\(esc(rel))</td><td>\(TextReport.sideTag(t.side))</td><td>\(esc(t.text))</td><td class=\"mono muted\">\(esc(t.first.description))</td></tr>\n"
        }
        return h + "</table></details>\n"
    }

    /// The session's SVG: lanes for the extension, the host app, the relay and the system.
    static func svg(_ s: Session, _ findings: [Finding]) -> String {
        guard let start = s.start else { return "<p class=\"muted\">(no times in these lines: no timeline drawn)</p>\n" }
        let times = s.events.compactMap(\.time) + [start]
        let t0 = min(start, times.min()!)
        let t1 = max(times.max()!, s.end ?? start, t0 + 1_000_000)
        let width = 960.0
        let left = 76.0
        let plot = width - left - 20
        func x(_ t: Int64) -> Double { left + plot * Double(t - t0) / Double(t1 - t0) }
        func f(_ v: Double) -> String { Fmt.decimal(v, 1) }
        let lanes: [(Side, String)] = [(.extension, "extension"), (.app, "host app"), (.relay, "relay"), (.system, "system")]
        let laneY = Dictionary(uniqueKeysWithValues: lanes.enumerated().map { ($1.0, 30.0 + Double($0) * 26) })
        let seriesTop = 30.0 + Double(lanes.count) * 26 + 6
        let height = seriesTop + 50
        var g = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"timeline of \(esc(s.id))\">\n"
        // Time axis.
        let span = t1 - t0
        let steps: [Int64] = [100_000, 250_000, 500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000, 30_000_000, 60_000_000, 300_000_000]
        let step: Int64 = steps.first { span / $0 <= 10 } ?? 600_000_000
        // Ticks at whole steps from the session start.
        var tick: Int64 = start - ((start - t0) / step) * step
        while tick <= t1 {
            g += "<line x1=\"\(f(x(tick)))\" y1=\"18\" x2=\"\(f(x(tick)))\" y2=\"\(f(height - 4))\" stroke=\"#eceef1\"/>"
            g += "<text x=\"\(f(x(tick)))\" y=\"12\" font-size=\"10\" text-anchor=\"middle\" fill=\"#6b7078\">\(esc(Fmt.relative(tick - start)))s</text>\n"
            tick += step
        }
        for (side, name) in lanes {
            g += "<text x=\"4\" y=\"\(f(laneY[side]! + 4))\" font-size=\"11\" fill=\"#444\">\(name)</text>\n"
        }
        // Phases: connecting, then connected/streaming, on the extension lane.
        let y = laneY[.extension]!
        let end = max(start, s.end ?? t1)
        let connected = s.connectedAt.map { max(start, $0) }
        g += "<rect x=\"\(f(x(start)))\" y=\"\(f(y - 7))\" width=\"\(f(max(1, x(connected ?? end) - x(start))))\" height=\"14\" fill=\"#f3c26b\"><title>connecting</title></rect>\n"
        if let c = connected {
            g += "<rect x=\"\(f(x(c)))\" y=\"\(f(y - 7))\" width=\"\(f(max(1, x(end) - x(c))))\" height=\"14\" fill=\"#7cc47f\"><title>\(s.frames > 0 ? "streaming" : "connected")</title></rect>\n"
        }
        for a in s.attempts {
            guard let t = a.time else { continue }
            let colour = a.failure == nil ? "#2e7d32" : "#c62828"
            g += "<line x1=\"\(f(x(t)))\" y1=\"\(f(y - 11))\" x2=\"\(f(x(t)))\" y2=\"\(f(y + 11))\" stroke=\"\(colour)\" stroke-width=\"1\"><title>\(esc(a.failure.map { "attempt: \($0)" } ?? "attempt")) (\(esc(a.source.description)))</title></line>\n"
        }
        // Other lanes: one dot per line (folded rows keep every dot).
        for e in s.events where e.side != .extension || !e.kind.hasPrefix("socket.connect") {
            guard let t = e.time, let ly = laneY[e.side] else { continue }
            g += "<circle cx=\"\(f(x(t)))\" cy=\"\(f(ly))\" r=\"2.2\" fill=\"#546e7a\"><title>\(esc(e.message)) (\(esc(e.source.description)))</title></circle>\n"
        }
        // Frames per second: the device's frame lines, else the relay's stats.
        var series: [(Int64, Double)] = []
        let perSecond = s.framesPerSecond
        if !perSecond.isEmpty {
            series = perSecond.map { (start + $0.second * 1_000_000 + 500_000, Double($0.frames)) }
        } else {
            for e in s.events where e.kind == "relay.stats" {
                e.forEachStat { t, _, _, fps, _ in if let t { series.append((t, fps)) } }
            }
        }
        if !series.isEmpty {
            let top = max(1, series.map(\.1).max()!)
            let pts = series.map { "\(f(x($0.0))),\(f(seriesTop + 40 - 36 * $0.1 / top))" }.joined(separator: " ")
            g += "<text x=\"4\" y=\"\(f(seriesTop + 24))\" font-size=\"11\" fill=\"#444\">fps ≤\(Int(top))</text>\n"
            g += "<polyline points=\"\(pts)\" fill=\"none\" stroke=\"#1565c0\" stroke-width=\"1.5\"><title>\(perSecond.isEmpty ? "relay" : "device") frames per second</title></polyline>\n"
        }
        // Findings as markers.
        for fd in findings {
            guard let t = fd.time else { continue }
            let colour = fd.severity == .error ? "#c62828" : fd.severity == .warning ? "#b26a00" : "#1565c0"
            let mx = x(min(max(t, t0), t1))
            g += "<path d=\"M\(f(mx)) 20 l5 -8 h-10 z\" fill=\"\(colour)\"><title>\(esc(fd.severity.rawValue)): \(esc(fd.kind)) — \(esc(fd.message)) [\(esc(fd.evidence.map(\.description).joined(separator: ", ")))]</title></path>\n"
        }
        return g + "</svg>\n"
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CastscopeKit

/// `--html FILE` written as sessions end (issue 15): each session's table row, card and data
/// entry go to three spills on disk in its turn (they are numbered by its place); what the
/// head and toolbar say of the sessions is counted (`HTMLReport.Summary`). At the end the page
/// is assembled: the head in front, then the spills in their places. The bytes are
/// `HTMLReport.render`'s (a test compares).
final class StreamedHTML: StreamedDocument, @unchecked Sendable {
    let rows = ByteSpill(), cards = ByteSpill(), data = ByteSpill()
    var summary = HTMLReport.Summary()
    /// The kinds of the findings about a session handed on, in order of first appearance.
    var kinds = FindingTally()
    /// A part's bytes as they are made (its capacity kept from part to part).
    var buffer = OutputBuffer(capacity: 1 << 16)

    func begin() {
        for s in [rows, cards, data] { s.reset() }
        summary = HTMLReport.Summary()
        kinds = FindingTally()
    }

    /// (Nothing before its turn: its parts are numbered by its place.)
    func prepare(_ s: Session, _ findings: [Finding], into part: SessionPart) {}

    func take(_ part: SessionPart, _ s: Session, _ found: [Finding]) {
        let i = summary.count
        buffer.removeAll()
        HTMLReport.row(i, s, found, into: &buffer)
        rows.append(buffer)
        // (the timeline's rows, made once for the card and the data)
        let entries = Timeline.rows(s.events)
        buffer.removeAll()
        HTMLReport.card(i, s, found, entries: entries, into: &buffer)
        cards.append(buffer)
        buffer.removeAll()
        if i > 0 { buffer.append(",\n") }
        HTMLReport.dataEntry(s, found, entries: entries, into: &buffer)
        data.append(buffer)
        for f in found where f.session != nil { kinds.add(f) }
        summary.add(s)
    }

    /// The page into `f`; `readBack` false when a spill could not be read back.
    func write(_ report: AnalysisReport, to f: UnsafeMutablePointer<FILE>) -> (ok: Bool, readBack: Bool) {
        // The findings about a session: those handed on, then the report's own; or, when the
        // report kept every finding (--fail-on), all of them from there.
        let own = report.findings.made.filter { $0.session != nil }
        let all = report.handedOnFindings != nil ? kinds.adding(own) : FindingTally(own)
        let provenance = Provenance.current()
        var b = OutputBuffer(capacity: 1 << 16)
        HTMLReport.prefix(report, provenance: provenance, summary: summary, sessionFindingKinds: all.kinds.map(\.kind), into: &b)
        guard OutputWriter.writeAll(b, to: f) else { return (false, true) }
        guard rows.copy(to: f) else { return (false, ferror(f) != 0) }
        b.removeAll()
        HTMLReport.tableEnd(summary.count, into: &b)
        b.append("<main id=\"cards\">\n")
        guard OutputWriter.writeAll(b, to: f) else { return (false, true) }
        guard cards.copy(to: f) else { return (false, ferror(f) != 0) }
        b.removeAll()
        b.append("</main>\n")
        let flushed = HTMLReport.suffix(report, provenance: provenance, into: &b) { b in
            defer { b.removeAll() }
            return OutputWriter.writeAll(b, to: f)
        }
        guard flushed, OutputWriter.writeAll(b, to: f) else { return (false, true) }
        guard data.copy(to: f) else { return (false, ferror(f) != 0) }
        return (OutputWriter.writeAll(HTMLReport.end, to: f), true)
    }
}

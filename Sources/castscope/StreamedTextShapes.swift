#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CastscopeKit

/// The text report's other shapes, `--list`, `--oneline` and `-q`, as sessions end (issue 15):
/// so that asking for a short terminal answer does not make `--html FILE`, `--json -o FILE` and
/// the others beside it keep every session (they are written as sessions end only when every
/// output is). The bytes are those of the whole-report path (`TextReport.sessionList`,
/// `.oneline`, `.render` with `headerOnly`), sanitized as it sanitizes them.
final class StreamedTextShape: StreamedDocument, @unchecked Sendable {
    enum Shape {
        /// A line per session, in its turn (kept in a spill until the end: an output that
        /// cannot be written would otherwise be found only half-way).
        case list
        /// One line for the bundle, with the label (the paths given).
        case oneline(label: String)
        /// The head only.
        case quiet
    }

    let shape: Shape
    let report: TextReport
    let lines = ByteSpill()
    var tally = TextReport.OnelineTally()

    init(_ shape: Shape, report: TextReport) {
        self.shape = shape
        self.report = report
    }

    func begin() {
        lines.reset()
        tally = TextReport.OnelineTally()
    }

    func prepare(_ s: Session, _ findings: [Finding], into part: SessionPart) {
        guard case .list = shape else { return }
        part.bytes = Array(Sanitize.terminal(report.sessionListLine(s, findings), styles: report.color).utf8)
    }

    func take(_ part: SessionPart, _ s: Session, _ findings: [Finding]) {
        switch shape {
        case .list: lines.append(part.bytes)
        case .oneline: tally.add(s)
        case .quiet: break
        }
    }

    func write(_ report: AnalysisReport, to f: UnsafeMutablePointer<FILE>) -> (ok: Bool, readBack: Bool) {
        switch shape {
        case .list:
            guard lines.copy(to: f) else { return (false, ferror(f) != 0) }
            return (true, true)
        case .oneline(let label):
            return (OutputWriter.writeAll(Sanitize.terminal(self.report.oneline(report, tally: tally, label: label), styles: self.report.color), to: f), true)
        case .quiet:
            return (OutputWriter.writeAll(render(report), to: f), true)
        }
    }

    /// The whole report's text in this shape (its sessions were kept for the relay join; with
    /// `-q`, also what `write` writes: the head counts the sessions handed on).
    func render(_ report: AnalysisReport) -> String {
        let text: String
        switch shape {
        case .list: text = self.report.sessionList(report)
        case .oneline(let label): text = self.report.oneline(report, label: label)
        case .quiet: text = self.report.render(report)
        }
        return Sanitize.terminal(text, styles: self.report.color)
    }
}

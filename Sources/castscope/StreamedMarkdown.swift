#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CastscopeKit

/// One session's Markdown as `StreamedMarkdown.prepare` made it (sanitized bytes, and the sizes
/// `MarkdownReport.Plan` counts, on the text before sanitizing, as `render` does).
struct MarkdownPiece: Sendable {
    var row: [UInt8]
    var rowSize: Int
    var failing: Bool
    /// Its section with the timeline (every session in full; a failing one within a limit) and
    /// without (a failing one within a limit).
    var full: [UInt8]?
    var fullSize = 0
    var short: [UInt8]?
    var shortSize = 0
}

/// `--markdown` and `--markdown-full` written as sessions end (issue 15): each session's table
/// row and sections go to spills on disk as it is handed on, and only their sizes stay in
/// memory; at the end the head (which counts sessions and findings) and the tail are made,
/// `MarkdownReport.Plan` chooses from the sizes what fits the limit, as `render` does, and the
/// chosen pieces are copied out of the spills in order. The bytes are `render`'s (a test
/// compares).
final class StreamedMarkdown: StreamedDocument, @unchecked Sendable {
    let limit: Int?
    let rows = ByteSpill(), fulls = ByteSpill(), shorts = ByteSpill()
    var rowSizes: [Int] = [], rowLengths: [Int] = []
    /// The failing sessions' places, and their sections' sizes and byte lengths.
    var failing: [Int] = []
    var fullSizes: [Int] = [], fullLengths: [Int] = []
    var shortSizes: [Int] = [], shortLengths: [Int] = []
    /// A piece could not be read back from its spill (the report is then incomplete).
    private var failedToRead = false

    init(limit: Int?) { self.limit = limit }

    func begin() {
        for s in [rows, fulls, shorts] { s.reset() }
        rowSizes = []; rowLengths = []; failing = []
        fullSizes = []; fullLengths = []; shortSizes = []; shortLengths = []
    }

    /// A piece's bytes as the report shows them (control characters escaped).
    static func sanitized(_ b: OutputBuffer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        b.withUnsafeBytes { Sanitize.terminal($0, into: &out) }
        return out
    }

    func prepare(_ s: Session, _ findings: [Finding], into part: SessionPart) {
        part.markdown = pieces(s, findings)
    }

    func take(_ part: SessionPart, _ s: Session, _ findings: [Finding]) {
        if let p = part.markdown { take(p) }
    }

    func write(_ report: AnalysisReport, to f: UnsafeMutablePointer<FILE>) -> (ok: Bool, readBack: Bool) {
        failedToRead = false
        let ok = writeDocument(report, to: f)
        return (ok, !failedToRead)
    }

    /// A session's pieces (any thread).
    func pieces(_ s: Session, _ findings: [Finding]) -> MarkdownPiece {
        var b = OutputBuffer(capacity: 4096)
        MarkdownReport.row(s, findings, into: &b)
        let failing = SessionFacts.failing(s)
        var p = MarkdownPiece(row: Self.sanitized(b), rowSize: MarkdownReport.size(b), failing: failing)
        if limit == nil || failing {
            b.removeAll()
            MarkdownReport.section(s, findings, timeline: true, into: &b)
            p.full = Self.sanitized(b)
            p.fullSize = MarkdownReport.size(b)
        }
        if limit != nil && failing {
            b.removeAll()
            MarkdownReport.section(s, findings, timeline: false, into: &b)
            p.short = Self.sanitized(b)
            p.shortSize = MarkdownReport.size(b)
        }
        return p
    }

    /// The session's pieces, in its turn.
    private func take(_ p: MarkdownPiece) {
        if p.failing { failing.append(rowSizes.count) }
        rows.append(p.row)
        rowSizes.append(p.rowSize)
        rowLengths.append(p.row.count)
        if let full = p.full {
            fulls.append(full)
            fullSizes.append(p.fullSize)
            fullLengths.append(full.count)
        }
        if let short = p.short {
            shorts.append(short)
            shortSizes.append(p.shortSize)
            shortLengths.append(short.count)
        }
    }

    /// Head, the table, the sections that fit, tail and the closing note, into `f`.
    private func writeDocument(_ report: AnalysisReport, to f: UnsafeMutablePointer<FILE>) -> Bool {
        let head = MarkdownReport.head(report, provenance: .current())
        var (tail, leftOut) = MarkdownReport.tail(report, limit: limit)
        func put(_ s: String) -> Bool { OutputWriter.writeAll(Sanitize.terminal(s), to: f) }
        guard put(head) else { return false }
        guard let limit else {
            if !rowSizes.isEmpty {
                guard put(MarkdownReport.tableHead) else { return false }
                guard rows.copy(to: f) else { failedToRead = ferror(f) == 0; return false }
                guard put("\n") else { return false }
            }
            guard fulls.copy(to: f) else { failedToRead = ferror(f) == 0; return false }
            return put(tail)
        }
        let plan = MarkdownReport.Plan(limit: limit, head: MarkdownReport.size(head), tail: MarkdownReport.size(tail),
                                       rows: rowSizes, failing: failing, full: fullSizes, short: shortSizes)
        leftOut += plan.leftOut
        if !rowSizes.isEmpty {
            guard put(MarkdownReport.tableHead) else { return false }
            let reader = ByteSpill.Reader(rows)
            for i in rowLengths.indices {
                guard let piece = reader.next(rowLengths[i]) else { failedToRead = true; return false }
                if plan.keepRow[i], !piece.withUnsafeBytes({ OutputWriter.writeAll($0, to: f) }) { return false }
            }
            guard put("\n") else { return false }
        }
        let full = ByteSpill.Reader(fulls), short = ByteSpill.Reader(shorts)
        for j in failing.indices {
            guard let a = full.next(fullLengths[j]), let b = short.next(shortLengths[j]) else { failedToRead = true; return false }
            switch plan.section[j] {
            case .full: guard a.withUnsafeBytes({ OutputWriter.writeAll($0, to: f) }) else { return false }
            case .short: guard b.withUnsafeBytes({ OutputWriter.writeAll($0, to: f) }) else { return false }
            case .none: break
            }
        }
        return put(tail) && put(MarkdownReport.note(limit: limit, leftOut: leftOut, healthy: rowSizes.count - failing.count))
    }
}

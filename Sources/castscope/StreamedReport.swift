#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CastscopeKit

/// One session's bytes as `StreamedReport.prepare` made them: in memory, or, past a megabyte
/// (a JSON session retrying for hours), in a `Spill` of their own, so that a session's report
/// is never held whole.
final class SessionPart: @unchecked Sendable {
    var bytes: [UInt8] = []
    var rest: ByteSpill?
    /// A Markdown report's pieces instead (`StreamedMarkdown`).
    var markdown: MarkdownPiece?

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// A part to be written through `sink`: the first chunk stays in `bytes`, a second one
    /// moves both into a spill.
    init() {}

    func add(_ chunk: ArraySlice<UInt8>) -> Bool {
        if let rest {
            chunk.withUnsafeBytes { rest.append($0) }
            return true
        }
        if bytes.isEmpty {
            bytes = Array(chunk)
            return true
        }
        let spill = ByteSpill()
        spill.append(bytes)
        bytes = []
        chunk.withUnsafeBytes { spill.append($0) }
        rest = spill
        return true
    }

    /// Appends the part to `spill` (false when the part's own spill could not be read back).
    func write(to spill: ByteSpill) -> Bool {
        guard let rest else {
            spill.append(bytes)
            return true
        }
        return spill.append(rest)
    }
}

/// A report format whose document is assembled at the end from each session's parts, kept on
/// disk as sessions end (Markdown, Perfetto, HTML): `StreamedReport` hands it the sessions.
protocol StreamedDocument: AnyObject {
    /// Forgets what it was given (the analyzer started over).
    func begin()
    /// What can be made of a session before its turn (any thread), into `part`.
    func prepare(_ s: Session, _ findings: [Finding], into part: SessionPart)
    /// The session, in its turn.
    func take(_ part: SessionPart, _ s: Session, _ findings: [Finding])
    /// The document into `f`; `readBack` false when a spilled piece could not be read back.
    func write(_ report: AnalysisReport, to f: UnsafeMutablePointer<FILE>) -> (ok: Bool, readBack: Bool)
}

/// Text and JSON reports written as sessions end (`Analyzer.sessionSink`): each session is
/// rendered when the analyzer hands it on (`prepare`, on the threads that finish sessions,
/// several at once), written in its turn (`take`) and then let go; the head (which counts
/// sessions and findings) and the tail are rendered at the end and written around them. The
/// bytes are those of the whole-report writers (`TextReport.render`, `JSONReport.renderBytes`).
final class StreamedReport {
    let target: OutputTarget
    var text: TextReport?
    /// The report as set up, before the inputs' aliases.
    let initial: TextReport?
    let spill = ByteSpill()
    var count = 0
    /// A session's own spill could not be read back: the report would miss its bytes.
    var lost = false
    /// JSON, when the report does not keep the findings of the sessions handed on
    /// (`Analyzer.keepsSessionFindings` off): their elements, for the `findings` array.
    let spillsFindings: Bool
    let findingSpill = ByteSpill()
    var findingCount = 0

    /// Markdown, Perfetto or HTML instead of text or JSON.
    let document: StreamedDocument?

    init(target: OutputTarget, text: TextReport?, spillsFindings: Bool = false, document: StreamedDocument? = nil) {
        self.target = target
        self.text = text
        initial = text
        self.document = document
        self.spillsFindings = spillsFindings && text == nil && document == nil
    }

    /// Before the first session: the inputs are known (for `[n]:line` aliases). Called again
    /// when the analyzer starts over (it gave up building sessions while reading): what was
    /// written so far is dropped.
    func begin(_ partial: AnalysisReport) {
        text = initial?.prepared(inputs: partial.inputs)
        document?.begin()
        spill.reset()
        count = 0
        lost = false
        findingSpill.reset()
        findingCount = 0
    }

    /// A session's bytes, as `take` writes them (any thread; reads only what `begin` set).
    func prepare(_ s: Session, _ findings: [Finding]) -> SessionPart {
        if let d = document {
            let part = SessionPart()
            d.prepare(s, findings, into: part)
            return part
        }
        if let r = text { return SessionPart(sessionBytes(r, s, findings)) }
        let part = SessionPart()
        _ = JSONReport.writeSessionElement(s, first: true) { part.add($0) }
        return part
    }

    /// The session `prepare` made `part` of, in its turn.
    func take(_ part: SessionPart, _ findings: [Finding], session: Session) {
        if let d = document {
            d.take(part, session, findings)
            count += 1
            return
        }
        // A JSON element made as the first of its array: the comma that follows the one before.
        if text == nil && count > 0 { spill.append([UInt8(ascii: ",")]) }
        if !part.write(to: spill) { lost = true }
        count += 1
        guard spillsFindings else { return }
        for f in findings {
            findingSpill.append(JSONReport.findingElement(f, first: findingCount == 0))
            findingCount += 1
        }
    }

    /// One session as the text report writes it, sanitized (JSON elements are written as they
    /// are made: `JSONReport.writeSessionElement`).
    private func sessionBytes(_ r: TextReport, _ s: Session, _ findings: [Finding]) -> [UInt8] {
        var block = OutputBuffer(capacity: 1 << 12)
        r.sessionBlock(s, findings: findings, into: &block)
        if r.width != nil { return Array(terminal(r, block.string).utf8) }
        var sanitized: [UInt8] = []
        sanitized.reserveCapacity(block.count + 64)
        block.withUnsafeBytes { Sanitize.terminal($0, styles: r.color, into: &sanitized) }
        return sanitized
    }

    /// A report that came back whole (the bundle had relay lines, so the analyzer kept its
    /// sessions for the join): written the same way, but straight into the output, as the head
    /// can go first; one session's bytes are held at a time, not the whole report's.
    func writeWhole(_ report: AnalysisReport) -> String? {
        let bySession = report.findingsBySession()
        if let d = document {
            // Through the same spills as sessions handed on: rendered whole, a relay fleet's
            // page was held three times over (5,000 broadcasts' Perfetto trace peaked at 381 MB).
            d.begin()
            for s in report.sessions {
                let found = bySession[s.id] ?? []
                let part = SessionPart()
                d.prepare(s, found, into: part)
                d.take(part, s, found)
            }
            return finish(report)
        }
        text = initial?.prepared(inputs: report.inputs)
        return OutputWriter.write(to: target) { f in
            func sessions() -> Bool {
                var ok = true
                for (i, s) in report.sessions.enumerated() where ok {
                    guard let r = text else {
                        // JSON: written as it is made (a session can be tens of megabytes).
                        ok = JSONReport.writeSessionElement(s, first: i == 0) { b in b.withUnsafeBytes { OutputWriter.writeAll($0, to: f) } }
                        continue
                    }
                    ok = sessionBytes(r, s, bySession[s.id] ?? []).withUnsafeBytes { OutputWriter.writeAll($0, to: f) }
                }
                return ok
            }
            if let r = text {
                return OutputWriter.writeAll(terminal(r, r.head(report)), to: f) && sessions()
                    && r.tail(report) { OutputWriter.writeAll(terminal(r, $0), to: f) }
            }
            // The document is written as it is made; its one gap is the sessions.
            return JSONReport.write(report, sessionCount: report.sessions.count,
                                    to: { bytes in bytes.withUnsafeBytes { OutputWriter.writeAll($0, to: f) } },
                                    fill: { _ in sessions() })
        }
    }

    /// The report's own text as the whole-report path leaves it: wrapped to the width, control
    /// characters from the logs escaped.
    func terminal(_ r: TextReport, _ part: String) -> String {
        Sanitize.terminal(r.width.map { TextReport.wrap(part, width: $0) } ?? part, styles: r.color)
    }

    /// A spilled part of the report could not be read back: the report would miss it.
    var readBackError: String {
        "\(target.isStdout ? "standard output" : target.path): a session's report could not be read back from its temporary file"
    }

    /// Writes head, sessions and tail; a one-line error, or nil. The tail (a relay fleet's can
    /// list tens of thousands of sessions) is written as it is made, not held whole.
    func finish(_ report: AnalysisReport) -> String? {
        if lost { return readBackError }
        if let d = document {
            var readBack = true
            let error = OutputWriter.write(to: target) { f in
                let (ok, read) = d.write(report, to: f)
                readBack = read
                return ok
            }
            return readBack ? error : readBackError
        }
        if let r = text {
            let head = terminal(r, r.head(report))
            return OutputWriter.write(to: target) { f in
                OutputWriter.writeAll(head, to: f) && spill.copy(to: f)
                    && r.tail(report) { OutputWriter.writeAll(terminal(r, $0), to: f) }
            }
        }
        // The parts written as sessions ended go in the document's gaps: the findings handed
        // on (when not kept), then the sessions.
        let parts = report.handedOnFindings != nil ? [findingSpill, spill] : [spill]
        return OutputWriter.write(to: target) { f in
            JSONReport.write(report, sessionCount: count,
                             to: { bytes in bytes.withUnsafeBytes { OutputWriter.writeAll($0, to: f) } },
                             fill: { k in k < parts.count && parts[k].copy(to: f) })
        }
    }
}

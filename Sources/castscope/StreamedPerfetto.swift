#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CastscopeKit

/// `--perfetto FILE` written as sessions end (issue 15): each session's trace events go to a
/// spill on disk in its turn (its tracks are numbered by its place), its findings' instants to
/// another; at the end the head (which names the earliest time) is written in front, then the
/// sessions' events, the findings' and the relay's. The bytes are `PerfettoReport.render`'s
/// (a test compares).
final class StreamedPerfetto: StreamedDocument, @unchecked Sendable {
    let events = ByteSpill(), findings = ByteSpill()
    var count = 0
    var findingCount = 0
    var first: Int64?
    /// Each session's place, for the bundle's findings that name one.
    var places: [String: Int] = [:]
    /// A part's bytes as they are made (its capacity kept from part to part).
    var buffer = OutputBuffer(capacity: 1 << 16)

    func begin() {
        events.reset()
        findings.reset()
        count = 0
        findingCount = 0
        first = nil
        places = [:]
    }

    /// (Nothing before its turn: its tracks are numbered by its place.)
    func prepare(_ s: Session, _ findings: [Finding], into part: SessionPart) {}

    /// The session and its findings, in its turn (in order: its tracks are numbered by it).
    func take(_ part: SessionPart, _ s: Session, _ found: [Finding]) {
        buffer.removeAll()
        PerfettoReport.sessionEvents(s, index: count, into: &buffer)
        events.append(buffer)
        if let start = s.start { first = min(first ?? start, start) }
        places[s.id] = count
        buffer.removeAll()
        for f in found {
            PerfettoReport.findingEvent(f, n: findingCount, sessionIndex: f.session.flatMap { places[$0] }, into: &buffer)
            findingCount += 1
        }
        findings.append(buffer)
        count += 1
    }

    func write(_ report: AnalysisReport, to f: UnsafeMutablePointer<FILE>) -> (ok: Bool, readBack: Bool) {
        var first = self.first
        if let r = PerfettoReport.relayFirst(report) { first = min(first ?? r, r) }
        var head = OutputBuffer()
        PerfettoReport.head(provenance: .current(), first: first, offset: report.clock?.offset ?? 0, into: &head)
        guard OutputWriter.writeAll(head, to: f) else { return (false, true) }
        guard events.copy(to: f) else { return (false, ferror(f) != 0) }
        // The findings handed on with their sessions, then the report's own; or, when the
        // report kept every finding (--fail-on), all of them from there.
        var n = 0
        var rest = OutputBuffer()
        if report.handedOnFindings != nil {
            guard findings.copy(to: f) else { return (false, ferror(f) != 0) }
            n = findingCount
        }
        for finding in report.findings {
            PerfettoReport.findingEvent(finding, n: n, sessionIndex: finding.session.flatMap { places[$0] }, into: &rest)
            n += 1
        }
        // The relay's sessions, written a megabyte at a time.
        var written = true
        PerfettoReport.relayEvents(report, first: &first, into: &rest) { b in
            written = OutputWriter.writeAll(b, to: f)
            b.removeAll()
            return written
        }
        guard written else { return (false, true) }
        rest.append(PerfettoReport.tail)
        return (OutputWriter.writeAll(rest, to: f), true)
    }
}

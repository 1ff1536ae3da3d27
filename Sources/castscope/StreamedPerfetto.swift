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
    let events = Spill(), findings = Spill()
    var count = 0
    var findingCount = 0
    var first: Int64?
    /// Each session's place, for the bundle's findings that name one.
    var places: [String: Int] = [:]

    func begin() {
        events.reset()
        findings.reset()
        count = 0
        findingCount = 0
        first = nil
        places = [:]
    }

    static func append(_ list: [String], to spill: Spill) {
        for e in list { spill.append(Array((",\n" + e).utf8)) }
    }

    /// (Nothing before its turn: its tracks are numbered by its place.)
    func prepare(_ s: Session, _ findings: [Finding], into part: SessionPart) {}

    func render(_ report: AnalysisReport) -> String { PerfettoReport.render(report) }

    /// The session and its findings, in its turn (in order: its tracks are numbered by it).
    func take(_ part: SessionPart, _ s: Session, _ found: [Finding]) {
        Self.append(PerfettoReport.sessionEvents(s, index: count), to: events)
        if let start = s.start { first = min(first ?? start, start) }
        places[s.id] = count
        for f in found {
            if let e = PerfettoReport.findingEvent(f, n: findingCount, sessionIndex: f.session.flatMap { places[$0] }) {
                Self.append([e], to: findings)
            }
            findingCount += 1
        }
        count += 1
    }

    func write(_ report: AnalysisReport, to f: UnsafeMutablePointer<FILE>) -> (ok: Bool, readBack: Bool) {
        var first = self.first
        let relay = PerfettoReport.relayEvents(report, first: &first)
        let head = PerfettoReport.head(provenance: .current(), first: first, offset: report.clock?.offset ?? 0)
        guard OutputWriter.writeAll(head, to: f) else { return (false, true) }
        guard events.copy(to: f) else { return (false, ferror(f) != 0) }
        // The findings handed on with their sessions, then the report's own; or, when the
        // report kept every finding (--fail-on), all of them from there.
        var n = 0
        var rest: [String] = []
        if report.handedOnFindings != nil {
            guard findings.copy(to: f) else { return (false, ferror(f) != 0) }
            n = findingCount
        }
        for finding in report.findings {
            if let e = PerfettoReport.findingEvent(finding, n: n, sessionIndex: finding.session.flatMap { places[$0] }) { rest.append(e) }
            n += 1
        }
        rest += relay
        return (OutputWriter.writeAll(rest.map { ",\n" + $0 }.joined() + PerfettoReport.tail, to: f), true)
    }
}

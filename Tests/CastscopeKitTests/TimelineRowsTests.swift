import Foundation
import Testing

@testable import CastscopeKit

/// A session's timeline rows are made as the report reads them (`TimelineRows`): a row of one
/// line is held as its event's index, so a session of tens of thousands of single-line rows (a
/// host app's lines between frame runs for the whole log, `make-shape-input.py mix`) does not
/// hold a row of strings per line while its report is written.
@Suite("timeline rows made as they are read")
struct TimelineRowsTests {
    static func event(_ i: Int, _ kind: String, _ message: String, ms: Int64, side: Side) -> Event {
        MessageShapeTests.event(i, kind, message, ms: ms, side: side)
    }

    @Test func singleLinesAreHeldAsIndices() {
        var events: [Event] = []
        // Distinct host-app lines (no fold), a run that folds, then more distinct lines.
        for n in 0..<2000 {
            let word = ["audio route changed", "participant joined", "bitrate update", "layer switched"][n % 4]
            events.append(Self.event(events.count, "app.line", "\(word) \(String(repeating: "x", count: n % 7))", ms: Int64(n) * 10, side: .app))
        }
        for n in 1...50 {
            events.append(Self.event(events.count, "socket.connect_attempt", "open socket connection (attempt \(n))", ms: 30_000 + Int64(n) * 100, side: .extension))
        }
        for n in 0..<500 {
            events.append(Self.event(events.count, "app.line", "track \(n % 2 == 0 ? "muted" : "unmuted") by user", ms: 40_000 + Int64(n) * 10, side: .app))
        }
        let rows = Timeline.rows(events)
        // Every row but the folded run's is one line held as its index.
        #expect(rows.made.count < 10, "rows made ahead: \(rows.made.count) of \(rows.count)")
        #expect(rows.count > 2000)
        // Read as rows, they are the rows: each single line its own event's text and source.
        var seen = 0
        for row in rows where row.count == 1 && row.kind == "app.line" {
            #expect(row.first.line == row.last.line)
            #expect(events[row.first.line - 1].message == row.text)
            #expect(events[row.first.line - 1].time == row.time)
            seen += 1
        }
        #expect(seen >= 2000)
        let folded = rows.filter { $0.count > 1 }
        #expect(folded.count == 1 && folded[0].count == 50 && folded[0].text.hasPrefix("open socket connection"))
        // The array form (tests, callers that keep the rows) is the same rows.
        let whole = Timeline.entries(events)
        #expect(whole.count == rows.count)
        #expect(zip(whole, rows).allSatisfy { $0.text == $1.text && $0.time == $1.time && $0.first.line == $1.first.line && $0.count == $1.count })
    }
}

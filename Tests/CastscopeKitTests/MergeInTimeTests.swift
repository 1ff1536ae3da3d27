import Foundation
import Testing

@testable import CastscopeKit

/// The host app's lines that joined a session are merged into its own at its end
/// (`SessionStream.mergeInTime`): the same list as appending them and a stable sort by time
/// and place gave, in lists already in order (merged) and out of order (sorted).
@Suite("a session's joined lines merged in time")
struct MergeInTimeTests {
    static func event(_ order: Int, ms: Int64?, _ tag: String) -> Event {
        Event(kind: "app.line", sdk: "jitsi", side: .app, time: ms.map { $0 * 1000 }, process: "App", pid: 1, message: tag, attrs: [],
              source: SourceRef(path: "t.log", line: order + 1), order: order, parsedTime: nil, fileIndex: 0)
    }

    static func reference(_ a: [Event], _ b: [Event]) -> [String] {
        (a + b).sorted { ($0.time ?? Int64.min, $0.order) < ($1.time ?? Int64.min, $1.order) }.map(\.message)
    }

    @Test func sameAsAStableSort() {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<300 {
            let n = Int.random(in: 0..<40, using: &rng), m = Int.random(in: 1..<40, using: &rng)
            // Few distinct times and places, so that ties (same time, same place) are common.
            func list(_ count: Int, _ side: String) -> [Event] {
                (0..<count).map { k in
                    Self.event(Int.random(in: 0..<8, using: &rng), ms: Int.random(in: 0..<6, using: &rng) == 0 ? nil : Int64.random(in: 0..<5, using: &rng), "\(side)\(k)")
                }
            }
            var a = list(n, "a"), b = list(m, "b")
            if round % 3 != 0 {
                // In order (the usual case): merged, not sorted.
                a.sort { ($0.time ?? Int64.min, $0.order) < ($1.time ?? Int64.min, $1.order) }
                b.sort { ($0.time ?? Int64.min, $0.order) < ($1.time ?? Int64.min, $1.order) }
            }
            let want = Self.reference(a, b)
            var got = a
            SessionStream.mergeInTime(&got, b)
            #expect(got.map(\.message) == want, "round \(round)")
        }
    }
}

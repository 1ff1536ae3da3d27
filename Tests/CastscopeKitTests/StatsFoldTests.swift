import Foundation
import Testing

@testable import CastscopeKit

/// A relay `stats` line that continues its session's run is folded in from the match itself
/// (`EventMatcher.Fold`), its numbers read from the captured bytes: the same numbers the
/// attributes' texts gave, and the same sessions as the lines made into events one by one.
@Suite("relay stats lines folded from the match")
struct StatsFoldTests {
    static func bytes<R>(_ text: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        var t = text
        return t.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    @Test func numbersReadFromBytesAsFromText() {
        var texts = ["0", "7", "29.97", "30.0", "0.1", "0.3", "1e3", "-1", "+5", "12.", ".5", "", "1.2.3", "nan", "inf",
                     "999999999", "2147483647", "2147483648", "99999999999", "007", "0.000000000000001", "123456789012345.6",
                     "1234567890123456", "3.4028235e38", "4e38", " 1", "1 ", "٣"]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let whole = Int.random(in: 0..<100_000, using: &rng), frac = Int.random(in: 0..<1_000_000, using: &rng)
            texts.append("\(whole).\(String(frac).prefix(Int.random(in: 1...6, using: &rng)))")
            texts.append(String(Int.random(in: 0..<2_000_000_000, using: &rng)))
        }
        for t in texts {
            Self.bytes(t) { b in
                #expect(Repeats.count(b) == Repeats.count(t), "count of \(t)")
                #expect(Repeats.rate(b).bitPattern == Repeats.rate(t).bitPattern, "rate of \(t)")
            }
        }
        #expect(Repeats.count(nil as UnsafeRawBufferPointer?) == Repeats.count(nil as String?))
        #expect(Repeats.rate(nil as UnsafeRawBufferPointer?) == Repeats.rate(nil as String?))
    }

    @Test func theVocabularysStatsRulesFold() throws {
        let matcher = EventMatcher(vocabularies: try ParserRegistry.builtin().vocabularies)
        let folding = matcher.rules.indices.filter { matcher.statsSlots($0) != nil }
        #expect(!folding.isEmpty, "no relay stats rule folds from its match")
        // What a fold is offered is what the hit says.
        let line = "session s-42 stats frames=1200 bytes=5000000 fps=29.97 dropped=3"
        var offered: (Int, [String])?
        let outcome = Self.bytes(line) { b in
            matcher.match(b, category: nil) { index, m, body in
                let s = matcher.statsSlots(index)!
                let words = [s.session, s.frames, s.fps, s.dropped].map { slot in
                    slot < 0 ? "" : m.range(slot).map { String(decoding: UnsafeRawBufferPointer(rebasing: body[$0]), as: UTF8.self) } ?? ""
                }
                offered = (index, words)
                return false
            }
        }
        guard case .hit(let hit) = outcome, let offered else {
            Issue.record("the stats line was not matched, or not offered")
            return
        }
        func attr(_ n: String) -> String { hit.attrs.first { $0.0 == n }?.1 ?? "" }
        #expect(offered.1 == [attr("session"), attr("frames"), attr("fps"), attr("dropped")])
        #expect(offered.1[0] == "s-42")
        // Taken: no hit.
        let taken = Self.bytes(line) { b in matcher.match(b, category: nil) { _, _, _ in true } }
        if case .folded = taken {} else { Issue.record("a stats line the fold took still made \(taken)") }
    }
}

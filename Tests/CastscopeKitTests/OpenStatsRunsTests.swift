import Foundation
import Testing

@testable import CastscopeKit

/// The relay `stats` runs open while a file is read (`OpenStatsRuns`, an open-addressing table
/// with back-shifted removals) answer as a dictionary does, through growth and thousands of
/// removals that leave probe chains to mend.
@Suite struct OpenStatsRunsTests {
    @Test func answersAsADictionaryThroughInsertsUpdatesAndRemovals() {
        // (seeded: a failure is the same one on the next run)
        var rng = SplitMix(seed: 59)
        // Ids as a relay writes them (UUIDs differing in a few bytes), a few longer than a key
        // holds in place, and short ones.
        func id(_ k: Int) -> String {
            switch k % 7 {
            case 0: return "s\(k)"
            case 1: return String(repeating: "x", count: 60) + "\(k)"
            default: return String(format: "%08x-1b7e-4f0e-9a51-2f1d3c4b5a69", k)
            }
        }
        var table = OpenStatsRuns()
        var plain: [String: Int] = [:]
        for step in 0..<60_000 {
            let k = Int.random(in: 0..<3_000, using: &rng)
            let key = StatsKey(id(k))
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5:
                table[key] = step
                plain[id(k)] = step
            case 5..<8:
                table[key] = nil
                plain[id(k)] = nil
            default:
                #expect(table[key] == plain[id(k)])
            }
            if step % 5_000 == 0 {
                #expect(table.count == plain.count)
                for (s, v) in plain { #expect(table[StatsKey(s)] == v) }
                #expect(table.firstPlace == plain.values.min())
            }
        }
        #expect(table.count == plain.count)
        #expect(Set(table.entries.map(\.at)) == Set(plain.values))
        table.updatePlaces { $0 + 7 }
        for (s, v) in plain { #expect(table[StatsKey(s)] == v + 7) }
        for s in plain.keys { table[StatsKey(s)] = nil }
        #expect(table.isEmpty && table.firstPlace == nil && table.entries.isEmpty)
        #expect(table[StatsKey(id(1))] == nil)
    }
}

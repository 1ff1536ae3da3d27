import Testing

@testable import CastscopeKit

/// Thousands of phones sharing at once beside one relay (a fleet's folder): every phone
/// session overlaps every relay session. The join weighs each phone session's best few
/// options only (`maxOptions` over all), which still pairs each with its own; the clock
/// estimate takes every k-th phone session when the pairs would pass `maxPairs` (4,000 of each
/// peaked at 1.1 GB). Shapes probe, session 45.
@Suite("a crowded join: bounded options, each phone session still paired with its own")
struct CrowdedJoinTests {
    @Test("with far fewer options than sessions squared, every session gets its own relay session")
    func boundedOptions() {
        var joiner = RelayJoiner()
        joiner.maxOptions = 2_000
        // 400 phone sessions 300 ms apart, each lasting 10 minutes (all overlapping); the relay's
        // own for each starts 2 s later on its clock (offset 2 s) and ends with it.
        let n = 400
        let device: [(start: Int64, end: Int64?)?] = (0..<n).map { k in
            let s = Int64(k) * 300_000
            return (s, s + 600_000_000)
        }
        let relay: [(start: Int64, end: Int64?)?] = (0..<n).reversed().map { k in
            let s = Int64(k) * 300_000 + 2_000_000
            return (s, s + 600_000_000)
        }
        let made = joiner.matches(device, relay, offset: 2_000_000)
        #expect(made.count == n)
        #expect(made.allSatisfy { $0.r == n - 1 - $0.d }, "\(made.prefix(5))")
    }
}

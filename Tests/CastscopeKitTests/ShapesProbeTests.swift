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
        // Phones alike (the same times): every best option is every session's, and the lists
        // cut short run out; each session left still gets one of the relay sessions left (the
        // review: 191 of 1,100 on each side were left orphans).
        let same: [(start: Int64, end: Int64?)?] = (0..<n).map { _ in (0, 600_000_000) }
        let sameRelay: [(start: Int64, end: Int64?)?] = (0..<n).map { _ in (2_000_000, 602_000_000) }
        let all = joiner.matches(same, sameRelay, offset: 2_000_000)
        #expect(all.count == n)
        #expect(Set(all.map(\.r)).count == n)
    }
}

/// The text report's newline marks are put in on bytes (a bundle of 20-line JSON bodies spent
/// half its text report in the naive substring search of `split(separator:)`).
@Suite("replacing a substring on bytes gives what splitting and joining gives")
struct ReplaceOnBytesTests {
    @Test func sameAsSplitAndJoin() {
        var rng = SystemRandomNumberGenerator()
        let pieces = ["a", "\n", "é", "⏎", "ab", "\n\n", " ", "日本", "\r\n"]
        for _ in 0..<500 {
            let s = (0..<Int.random(in: 0...30, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
            for (target, replacement) in [("\n", " ⏎ "), ("ab", ""), ("é", "e"), ("'", "'\\''")] {
                let expected = s.split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
                #expect(s.replacingOccurrences(target, replacement) == expected, "\(s.debugDescription) \(target.debugDescription)")
            }
        }
    }
}

/// A detector scores the last winner first and stops a format that can no longer beat the
/// best so far: what it chooses is what scoring every format in order chooses, whatever the
/// files before (a folder of 10,000 small logs spent 45 % of its run in detection).
@Suite("format detection with its hint chooses as without one")
struct DetectionHintTests {
    @Test func sameChoiceWhateverCameBefore() throws {
        let registry = try ParserRegistry.builtin()
        let samples = [
            "Mar 12 11:02:07 BroadcastExtension[915] <Notice>: broadcast started\n",
            "2026-03-12 10:15:04.673211+0100  localhost BroadcastExtension[812]: (ReplayKit) broadcast started\n",
            "Mar 12 10:15:04 relay1 broadcast-relay[811]: session 7c1e accepted peer=iPhone14,2 room=standup\n",
            "2026-03-12T10:15:04.673211+0100 relay1 broadcast-relay[811]: session 7c1e accepted peer=x\n",
            "[ERROR] 2020-10-01 11:11:54,001 [Timer-1319] a.b.C - two\n",
            "2021-12-23 02:56:59.980625+0530 App[12778:445] message\n",
            "hello world\nnothing here\n",
            "{\"timestamp\":\"2026-03-12 10:15:04.673211+0100\",\"eventMessage\":\"broadcast started\",\"processImagePath\":\"/x/BroadcastExtension\"}\n",
        ]
        let fresh = { FormatDetector(formats: registry.formats) }
        var rng = SystemRandomNumberGenerator()
        let shared = fresh()
        for _ in 0..<200 {
            // (a file of a few lines of one or two samples)
            let a = samples.randomElement(using: &rng)!, b = samples.randomElement(using: &rng)!
            let text = String(repeating: a, count: Int.random(in: 1...5, using: &rng)) + (Bool.random(using: &rng) ? b : "")
            let bytes = Array(text.utf8)
            let expected = bytes.withUnsafeBytes { fresh().detect(head: $0)?.format.name }
            let got = bytes.withUnsafeBytes { shared.detect(head: $0)?.format.name }
            #expect(got == expected, "\(text.debugDescription)")
        }
    }
}

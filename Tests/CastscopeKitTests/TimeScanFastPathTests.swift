import Testing

@testable import CastscopeKit

/// The one-pass ISO time (`TimeScan.isoCommon`, session 49) against the general path it
/// stands in front of: wherever the fast path answers, it answers as the general one does, and
/// where it does not answer it leaves the time untouched.
@Suite("ISO time: the one-pass form agrees with the general one")
struct TimeScanFastPathTests {
    struct Seeded: RandomNumberGenerator {
        var mix = SplitMix(seed: 0x49)
        mutating func next() -> UInt64 { mix.next() }
    }

    @Test("200,000 mutations of usual and unusual ISO times")
    func isoCommonAgreesWithGeneral() {
        var rng = Seeded()
        let templates = ["2026-03-12 10:20:00.592204+0100  x", "2026-03-12T23:59:60Z", "2021-04-02 03:17:46.675 PM", "2021-04-02 11:17:46 AM x",
                         "2021-13-02 11:17:46", "0000-00-00 00:00:00", "9999-12-31 23:59:59.1234567890-14:00", "2026-03-12 10:20:00,5 x",
                         "2026-03-12 10:20:00.", "2026-03-12 10:20:00", "2026-03-12 1:20:00 PM", "2026/03/12 10:20:00", "2026-03-12 24:00:00"]
        let alphabet = Array("0123456789 -:T.,+ZAPM/x\u{7F}".utf8) + [0x2F, 0x3A, 0x40, 0xFF, 0x00, 0x39, 0x30]
        var agreed = 0
        for round in 0..<200_000 {
            var b = Array(templates[round % templates.count].utf8)
            let edits = Int.random(in: 0...3, using: &rng)
            for _ in 0..<edits {
                switch Int.random(in: 0..<3, using: &rng) {
                case 0 where !b.isEmpty: b[Int.random(in: 0..<b.count, using: &rng)] = alphabet.randomElement(using: &rng)!
                case 1 where !b.isEmpty: b.remove(at: Int.random(in: 0..<b.count, using: &rng))
                default: b.insert(alphabet.randomElement(using: &rng)!, at: Int.random(in: 0...b.count, using: &rng))
                }
            }
            let start = b.count > 2 && round % 7 == 0 ? 1 : 0
            var seed = ParsedTime()
            if round % 3 == 0 { seed.micro = 77; seed.offset = 3600 }
            b.withUnsafeBytes { p in
                var fast = seed, slow = seed
                let f = TimeScan.isoCommon(p, start, into: &fast)
                let g = TimeScan.isoGeneral(p, start, into: &slow)
                if let f {
                    #expect(f == g && fast == slow, "\(String(decoding: b, as: UTF8.self))")
                    agreed += 1
                } else {
                    #expect(fast == seed, "\(String(decoding: b, as: UTF8.self))")
                }
            }
        }
        #expect(agreed > 25_000)
    }
}

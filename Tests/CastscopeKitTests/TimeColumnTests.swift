import Testing

@testable import CastscopeKit

/// A run's times held as 32-bit offsets from its first while they fit (`TimeColumn`), 64-bit
/// once one does not: every way a run's times are read gives the values appended, in memory and
/// with blocks on disk.
@Suite("a run's times as offsets from its first")
struct TimeColumnTests {
    /// Times a run may hold: steady frames, steps back, a jump past ±35 minutes, the extremes.
    static func values(_ seed: UInt64, count: Int, jumpAt: Int?) -> [Int64] {
        var g = SplitMix(seed: seed)
        var t: Int64 = 1_773_300_000_000_000 + Int64(g.next() % 1_000_000)
        var out: [Int64] = []
        for k in 0..<count {
            if k == jumpAt { t += 3 * 3_600_000_000 }
            switch g.next() % 10 {
            case 0: t -= Int64(g.next() % 5_000_000)  // a step back
            default: t += Int64(g.next() % 200_000)
            }
            out.append(t)
        }
        return out
    }

    static func check(_ c: TimeColumn, _ want: [Int64]) {
        #expect(c.count == want.count)
        #expect(Array(c) == want)
        #expect(c.last == want.last)
        for i in stride(from: 0, to: want.count, by: max(1, want.count / 17)) { #expect(c[i] == want[i]) }
        if let lo = want.min(), let hi = want.max() {
            #expect(c.bounds?.min == lo && c.bounds?.max == hi)
        } else {
            #expect(c.bounds == nil)
        }
        var seen: [Int64] = []
        let inMemory = c.withMemory(wide: { seen = Array($0) }, narrow: { base, offsets in seen = offsets.map { base &+ Int64($0) } })
        #expect(inMemory == !c.spilled)
        if inMemory { #expect(seen == want) }
    }

    @Test(arguments: [(0, nil), (1, 3), (300, nil), (300, 0), (300, 1), (300, 157), (5_000, 4_000)] as [(Int, Int?)])
    func readsBackWhatWasAppended(count: Int, jumpAt: Int?) {
        for blockBytes in [1 << 20, 64] {
            let want = Self.values(UInt64(count * 31 + (jumpAt ?? 7)), count: count, jumpAt: jumpAt)
            var c = TimeColumn(blockBytes: blockBytes)
            for v in want { c.append(v) }
            #expect(c.isWide == (jumpAt.map { $0 > 0 && $0 < count } ?? false), "\(count) \(String(describing: jumpAt))")
            Self.check(c, want)
            if count > 100 && blockBytes == 64 { #expect(c.spilled) }
            // Cut and joined as runs are (`Event.cut`, `keepingFirst`, `Repeats.append`).
            let flags = want.indices.map { $0 % 3 != 1 }
            Self.check(c.selecting(flags), want.indices.filter { flags[$0] }.map { want[$0] })
            Self.check(c.leading(want.count / 2), Array(want.prefix(want.count / 2)))
            var joined = c.leading(want.count / 2)
            joined += TimeColumn(want.dropFirst(want.count / 2))
            Self.check(joined, want)
            Self.check(TimeColumn(c.lazy.map { $0 + 5 }), want.map { $0 + 5 })
        }
    }

    @Test func theExtremesOfATime() {
        for want in [[Int64.max, Int64.min, 0], [Int64.min, Int64.min + 1], [0, Int64(Int32.max), Int64(Int32.min)],
                     [0, Int64(Int32.max) + 1], [-1, Int64(Int32.min) - 1]] {
            var c = TimeColumn()
            for v in want { c.append(v) }
            Self.check(c, want)
        }
    }

    /// The column as a spilled event carries it (`EventSpill`), with what joins the run to the
    /// next part's (`readSeq`, `joinedThrough`: a sleeping session's run is read back).
    @Test func aSpilledRunKeepsItsTimes() throws {
        let spill = try #require(EventSpill())
        var events: [Event] = []
        for (n, jump) in [(40, nil), (40, 20)] as [(Int, Int?)] {
            var e = SpillBufferTests.run(n, lines: 1)
            let r = Repeats()
            for (k, t) in Self.values(UInt64(n), count: n, jumpAt: jump).enumerated() {
                r.lines.append(Int32(k + 1))
                r.times.append(t)
            }
            // (what joins it to the next part's run: `SessionBuilder.joinCutRun`)
            r.readSeq = n * 3
            r.joinedThrough = jump.map { n * 5 + $0 }
            e.repeats = r
            events.append(e)
        }
        let back = spill.read(spill.write(events))
        for i in events.indices {
            #expect(Array(back[i].repeats!.times) == Array(events[i].repeats!.times))
            #expect(back[i].repeats!.times.isWide == events[i].repeats!.times.isWide)
            #expect(back[i].repeats!.readSeq == events[i].repeats!.readSeq)
            #expect(back[i].repeats!.joinedThrough == events[i].repeats!.joinedThrough)
        }
    }
}

/// What every held line costs: an event is 96 bytes (it was 120: two 64-bit fields that hold
/// 32-bit values, and an optional parsed time whose tag byte padded it by a word).
@Suite("the size of a held event")
struct EventLayoutTests {
    @Test func anEventIsNinetySixBytes() {
        #expect(MemoryLayout<ParsedTime?>.size == 28)
        #expect(MemoryLayout<Event>.stride == 96)
    }

    @Test func offsetsAndFileIndexesReadBackAsSet() {
        var e = SpillBufferTests.run(1, lines: 1)
        for v in [0, 3_600, -43_200, 50_400, Fmt.unzoned] {
            e.displayOffset = v
            #expect(e.displayOffset == v)
        }
        for v in [0, 1, 70_000] {
            e.fileIndex = v
            #expect(e.fileIndex == v)
        }
    }
}

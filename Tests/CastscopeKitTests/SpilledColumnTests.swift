import Foundation
import Testing

@testable import CastscopeKit

/// A long session's columns (times, line numbers, connect attempts, gaps) go to disk a block at
/// a time past their first block, and read back the same (`SpilledColumn`).
@Suite(.serialized) struct SpilledColumnTests {
    @Test func readsBackWhatWasAppendedWhateverTheBlock() {
        var rng = SystemRandomNumberGenerator()
        for blockBytes in [8, 24, 64, 256] {
            var column = SpilledColumn<Int64>(blockBytes: blockBytes)
            var plain: [Int64] = []
            for _ in 0..<(1000 + Int.random(in: 0..<100, using: &rng)) {
                let v = Int64.random(in: -1_000_000...1_000_000, using: &rng)
                column.append(v)
                plain.append(v)
                #expect(column.last == v)
            }
            #expect(column.spilled)
            #expect(column.count == plain.count)
            #expect(Array(column) == plain)
            for _ in 0..<50 {
                let i = Int.random(in: 0..<plain.count, using: &rng)
                #expect(column[i] == plain[i])
            }
            var chunks: [Int64] = []
            column.forEachChunk { chunks += $0 }
            #expect(chunks == plain)
            let bounds = column.bounds!
            #expect(bounds.min == plain.min()! && bounds.max == plain.max()!)
            let probe = plain[Int.random(in: 0..<plain.count, using: &rng)]
            #expect(column.lastIndex(of: probe) == plain.lastIndex(of: probe))
            #expect(column.lastIndex(of: 5_000_000) == nil)
            column.update { $0 &* 3 }
            #expect(Array(column) == plain.map { $0 &* 3 })
        }
    }

    /// A copy shares the blocks on disk; a change to one (in a block, in memory, or an append)
    /// is not seen by the other.
    @Test func copiesDoNotSeeEachOthersChanges() {
        var a = SpilledColumn<Int32>(blockBytes: 16)
        for k in 0..<100 { a.append(Int32(k)) }
        var b = a
        a[3] = -3
        b[97] = -97
        a.append(100)
        b.append(-100)
        var wantA: [Int32] = Array(0..<101)
        wantA[3] = -3
        var wantB: [Int32] = Array(0..<100)
        wantB[97] = -97
        wantB.append(-100)
        #expect(Array(a) == wantA)
        #expect(Array(b) == wantB)
    }

    /// Blocks no column holds any more are given back to the file (and used again).
    @Test func blocksLetGoOfAreFreed() {
        let before = SpillBlocks.shared.inUse
        do {
            var c = SpilledColumn<Int64>(blockBytes: 64)
            for k in 0..<800 { c.append(Int64(k)) }
            #expect(c.spilled)
            // Other tests may hold blocks of their own meanwhile: at least these 99.
            #expect(SpillBlocks.shared.inUse >= before + 99)
            var sum: Int64 = 0
            for v in c { sum += v }
            #expect(sum == Int64(799 * 800 / 2))
        }
        // (Other suites run at the same time: what is left is theirs, not a hundred of ours.)
        #expect(SpillBlocks.shared.inUse < before + 99)
    }

    /// The median and largest gap of a column on disk, selected in passes over it, equal the
    /// in-memory selection's, for odd and even counts, ties, zeros and gaps of days.
    @Test func gapsOnDiskGiveTheSameIntervals() {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<60 {
            let n = Int.random(in: 2...3000, using: &rng)
            var small = Gaps(blockBytes: 64), big = Gaps()
            var t: Int64 = Int64.random(in: 0...1_000_000_000_000, using: &rng)
            for _ in 0..<n {
                let step: Int64
                switch round % 4 {
                case 0: step = 100_000 + Int64.random(in: -300...300, using: &rng)
                case 1: step = Int64.random(in: 0...3, using: &rng)
                case 2: step = Int64.random(in: -50...86_400_000_000, using: &rng)  // steps back, and days
                default: step = Int64.random(in: 0...1, using: &rng) * 1_000_000
                }
                t += step
                small.add(t)
                big.add(t)
            }
            #expect(small.spilled || n < 10)
            #expect(!big.spilled)
            #expect(small.intervals?.median == big.intervals?.median)
            #expect(small.intervals?.max == big.intervals?.max)
            #expect(small.count == big.count && small.first == big.first && small.last == big.last)
        }
    }

    /// The binary with every column spilling at a few bytes writes the same reports: the retry
    /// storm, a two-process storm with causes that change, frames, and the samples.
    @Test func reportsAreTheSameWhenEveryColumnSpills() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let storm = dir.appendingPathComponent("storm.log")
        var text = "Timestamp                       (process)[PID]\n"
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss"
        for i in 1...3000 {
            for pid in [1204, 1300] {
                let us = 1_773_307_200_000_000 + Int64(i) * 100_000 + Int64(pid)
                let stamp = f.string(from: Date(timeIntervalSince1970: TimeInterval(us / 1_000_000)))
                let pre = "  localhost BroadcastExtension[\(pid)]: [io.livekit.example.flutter:Broadcast] "
                text += "\(stamp).\(String(format: "%06d", us % 1_000_000))+0000\(pre)open socket connection\n"
                text += "\(stamp).\(String(format: "%06d", (us + 310) % 1_000_000))+0000\(pre)"
                    + (i % 7 == 0 ? "failure: connection refused\n" : "failure: socket file missing\n")
            }
            if i == 2000 {
                text += "2026-03-12 09:23:20.500000+0000  localhost BroadcastExtension[1204]: [io.livekit.example.flutter:Broadcast] client stream open completed\n"
            }
        }
        try text.write(to: storm, atomically: true, encoding: .utf8)
        try expectSameReports([storm.path, "samples"], formats: [[], ["--json"], ["--markdown-full"], ["--list"]],
                              with: ["CASTSCOPE_SPILL_BLOCK_BYTES": "64"])
    }
}

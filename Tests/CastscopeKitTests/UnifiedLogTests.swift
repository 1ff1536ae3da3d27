import Foundation
import Testing

@testable import CastscopeKit

/// `../shared/reference/unified-logging`: real Apple files (see its README for the counts).
let unifiedLogging = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/reference/unified-logging")

struct TraceV3Walk {
    var reader = TraceV3Reader()
    var pids = Set<Int32>()
    var threads = Set<UInt64>()
    var subsystems = Set<String>()
    var minTime = UInt64.max
    var maxTime = UInt64(0)
    var firstTimes: [UInt64] = []

    init(_ name: String) throws {
        let data = try Data(contentsOf: unifiedLogging.appendingPathComponent(name))
        var r = TraceV3Reader()
        var pids = Set<Int32>(), threads = Set<UInt64>(), subsystems = Set<String>()
        var lo = UInt64.max, hi = UInt64(0)
        var first: [UInt64] = []
        data.withUnsafeBytes { bytes in
            r.read(bytes) { e, catalog in
                if e.process >= 0 { pids.insert(catalog.processes[e.process].pid) }
                if e.kind == .log {
                    threads.insert(e.threadID)
                    if e.subsystemID >= 0, let s = catalog.subsystem(process: e.process, id: UInt16(e.subsystemID)) {
                        subsystems.insert(s.0 + ":" + s.1)
                    }
                }
                lo = min(lo, e.continuousTime)
                hi = max(hi, e.continuousTime)
                if first.count < 3 { first.append(e.continuousTime) }
            }
        }
        reader = r
        self.pids = pids
        self.threads = threads
        self.subsystems = subsystems
        minTime = lo
        maxTime = hi
        firstTimes = first
    }
}

@Suite struct UnifiedLogTests {
    @Test func iOS15FileCountsAsTheReferenceStates() throws {
        let w = try TraceV3Walk("0000000000000f85.tracev3")
        let s = w.reader.stats
        #expect(w.reader.problems.map(\.message) == [])
        #expect(s.headerChunks == 1 && s.catalogChunks == 6 && s.chunksets == 47)
        #expect(s.lz4Blocks == 47 && s.storedBlocks == 0)
        #expect(s.compressedBytes == 698_902 && s.decompressedBytes == 2_857_136)
        #expect(s.firehoseChunks == 345 && s.oversizeChunks == 30 && s.statedumpChunks == 496 && s.simpledumpChunks == 0)
        #expect(s.count(.log) == 8_158 && s.count(.statedump) == 496)
        #expect(s.count(.activity) == 0 && s.count(.trace) == 0 && s.count(.signpost) == 0 && s.count(.loss) == 0)
        #expect(s.levels == [0x00: 7_187, 0x01: 368, 0x02: 485, 0x10: 92, 0x11: 26])
        #expect(s.withPrivateData == 0)
        #expect(s.catalogPIDs.count == 66)
        #expect(w.pids.count == 65)  // one catalog process has no entry in this file
        #expect(s.oversizeReferences == 28 && s.oversizeMissing == 1)
        #expect(s.sources[4, default: 0] + s.sources[12, default: 0] == 5_376)
        #expect(s.sources[2] == 2_757 && s.sources[10] == 25)
        let h = w.reader.header
        #expect(h.timebaseNumer == 125 && h.timebaseDenom == 3)
        #expect(h.build == "19D52")
        #expect(h.hardwareModel == "J96AP" && h.bootUUID.description == "A6EBC8E3-0A1C-40E8-93B9-DA3A7F671D19")
        #expect(h.continuousTime == 100_657_367_688_137 && h.wallSeconds == 1_649_855_670)
        // Not in time order: the first chunkset holds the newest entries.
        #expect(w.firstTimes[0] > w.minTime)
        #expect(w.minTime == 96_370_345_288_136 && w.maxTime == 100_663_944_771_801)
        // This reader's figures (not cross-checked by a second reader).
        #expect(w.threads.count == 278 && w.subsystems.count == 142)
    }

    @Test func macOS1014FileCountsAsTheReferenceStates() throws {
        let w = try TraceV3Walk("0000000000000030.tracev3")
        let s = w.reader.stats
        #expect(w.reader.problems.map(\.message) == [])
        #expect(s.headerChunks == 1 && s.catalogChunks == 1 && s.chunksets == 1 && s.firehoseChunks == 1)
        #expect(s.compressedBytes == 482 && s.decompressedBytes == 544)
        #expect(s.count(.log) == 5 && s.levels == [0x00: 3, 0x10: 2])
        #expect(w.pids == [14225])
        #expect(w.reader.header.timebaseNumer == 1 && w.reader.header.timebaseDenom == 1)
        #expect(w.threads == [28058, 28030])
        #expect(w.subsystems == ["com.apple.AssetCache:builtin"])
        #expect(w.minTime == 435_663_966_275 && w.maxTime == 435_760_861_359)
    }
}

@Suite struct UnifiedLogDamageTests {
    @Test func truncatedFileKeepsWhatCameBeforeAndSaysWhere() throws {
        let data = try Data(contentsOf: unifiedLogging.appendingPathComponent("0000000000000f85.tracev3"))
        let half = data.prefix(data.count / 2)
        var r = TraceV3Reader()
        var n = 0
        half.withUnsafeBytes { b in r.read(b) { _, _ in n += 1 } }
        #expect(n > 1_000 && n < 8_654)
        #expect(r.problems.count == 1)
        #expect(r.problems.first?.message.contains("runs past the end of the file (truncated)") == true)
        #expect(r.problems.first.map { $0.offset > 0 && $0.offset < half.count } == true)
    }

    @Test func unknownChunksetCompressionIsCountedNotGuessed() throws {
        // A constructed file whose chunkset carries LZBITMAP's magic (no real iOS 27 sample is at hand).
        var file = jetsamStory().tracev3()
        let marker = Data("bv4-".utf8)
        let at = try #require(file.range(of: marker))
        file.replaceSubrange(at, with: Data("ZBM\u{0C}".utf8))
        var r = TraceV3Reader()
        var n = 0
        file.withUnsafeBytes { b in r.read(b) { _, _ in n += 1 } }
        #expect(n == 0 && r.stats.skippedChunksets == 1)
        #expect(r.problems.map(\.message) == ["1 chunkset in LZBITMAP compression (iOS/macOS 27, magic ZBM\\x0c) not decoded: skipped"])
        var other = jetsamStory().tracev3()
        other.replaceSubrange(try #require(other.range(of: marker)), with: Data("bvxn".utf8))
        var r2 = TraceV3Reader()
        other.withUnsafeBytes { b in r2.read(b) { _, _ in } }
        #expect(r2.problems.map(\.message) == ["1 chunkset in an unknown compression (marker 'bvxn') not decoded: skipped"])
    }

    /// Found by `make fuzz` (tracev3 target): a chunkset ending in a block marker without room
    /// for its block header made the decompressor spin on that marker forever.
    @Test func blockMarkerCutOffAtTheEndOfAChunksetIsAProblemNotAHang() throws {
        let header = Array(try Data(contentsOf: unifiedLogging.appendingPathComponent("0000000000000030.tracev3")).prefix(224))
        for (marker, message) in [("bv41", "LZ4 block header cut off"), ("bv4-", "stored block header cut off")] {
            let payload = Array(marker.utf8) + [0, 0]
            var chunk: [UInt8] = [0x0D, 0x60, 0, 0, 0, 0, 0, 0]
            withUnsafeBytes(of: UInt64(payload.count).littleEndian) { chunk += $0 }
            var r = TraceV3Reader()
            (header + chunk + payload).withUnsafeBytes { b in r.read(b) { _, _ in } }
            #expect(r.problems.map(\.message).contains { $0.hasPrefix(message) }, "\(marker): \(r.problems.map(\.message))")
        }
    }

    /// Found by `make fuzz` (tracev3 target): a chunkset whose first block holds 0 bytes left the
    /// output buffer unallocated, and unwrapping it trapped.
    @Test func emptyFirstBlockOfAChunksetIsNotACrash() throws {
        func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        let header = Array(try Data(contentsOf: unifiedLogging.appendingPathComponent("0000000000000030.tracev3")).prefix(224))
        for block in [Array("bv41".utf8) + le(UInt32(0)) + le(UInt32(0)), Array("bv4-".utf8) + le(UInt32(0))] {
            let chunkset = block + Array("bv4$".utf8)
            let file = header + le(UInt32(0x600D)) + le(UInt32(0)) + le(UInt64(UInt64(chunkset.count))) + chunkset
            var r = TraceV3Reader()
            var n = 0
            file.withUnsafeBytes { b in r.read(b) { _, _ in n += 1 } }
            #expect(n == 0 && r.stats.chunksets == 1)
        }
    }

    /// Found by `make fuzz` (tracev3 target): loss records whose counts add past UInt64.max
    /// trapped (arithmetic overflow) instead of being counted.
    @Test func lossCountsThatOverflowSaturate() throws {
        func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        let header = Array(try Data(contentsOf: unifiedLogging.appendingPathComponent("0000000000000030.tracev3")).prefix(224))
        // A firehose chunk with two loss tracepoints (type 7), each claiming UInt64.max lost messages.
        var tracepoints: [UInt8] = []
        for _ in 0..<2 {
            tracepoints += [7, 0] + le(UInt16(0)) + le(UInt32(0)) + le(UInt64(1)) + le(UInt32(0)) + le(UInt16(0)) + le(UInt16(24))
            tracepoints += le(UInt64(0)) + le(UInt64(0)) + le(UInt64.max)
        }
        let firehose = le(UInt64(0)) + le(UInt32(0)) + le(UInt32(0)) + le(UInt16(UInt16(16 + tracepoints.count))) + le(UInt16(0x1000))
            + le(UInt32(0)) + le(UInt64(0)) + tracepoints
        let inner = le(UInt32(0x6001)) + le(UInt32(0)) + le(UInt64(UInt64(firehose.count))) + firehose
        let chunkset = Array("bv4-".utf8) + le(UInt32(UInt32(inner.count))) + inner + Array("bv4$".utf8)
        var file = header + le(UInt32(0x600D)) + le(UInt32(0)) + le(UInt64(UInt64(chunkset.count))) + chunkset
        while file.count % 8 != 0 { file.append(0) }
        var r = TraceV3Reader()
        file.withUnsafeBytes { b in r.read(b) { _, _ in } }
        #expect(r.stats.count(.loss) == 2)
        #expect(r.stats.lostMessages == UInt64.max)
    }

    /// Found by `make fuzz` (tracev3 target): a damaged header's wall clock, or a continuous
    /// time far from it, overflowed the nanosecond arithmetic and trapped.
    @Test func wallClockArithmeticOnDamagedHeadersDoesNotTrap() {
        for seconds in [Int64.max, Int64.min, Int64.max / 1_000_000_000] {
            var h = TraceV3Header()
            h.wallSeconds = seconds
            h.wallMicros = .max
            h.timebaseNumer = .max
            h.continuousTime = UInt64.max / 2
            let clock = ULClock(header: h, timesync: nil)
            for ct: UInt64 in [0, 1, UInt64.max / 2, .max] { _ = clock.wallNanos(ct) }
        }
    }

    @Test func notATracev3AndGarbageAreOneLineErrors() throws {
        var r = TraceV3Reader()
        Data("hello world, not a log archive".utf8).withUnsafeBytes { b in r.read(b) { _, _ in } }
        #expect(r.problems.count == 1 && r.problems[0].message.hasPrefix("not a tracev3 file"))
        // The real header followed by random bytes: no crash, one problem or none, no entries.
        let data = try Data(contentsOf: unifiedLogging.appendingPathComponent("0000000000000030.tracev3"))
        var g = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            var bytes = Array(data.prefix(224))
            bytes += (0..<Int.random(in: 0..<4096, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }
            var r2 = TraceV3Reader()
            bytes.withUnsafeBytes { b in r2.read(b) { _, _ in } }
            #expect(r2.problems.count <= 2)
        }
        // Bytes of the real files flipped anywhere (the LZ4 data included), rendered too: no crash.
        let reader = UnifiedLogReader(root: nil)
        for name in ["0000000000000030.tracev3", "0000000000000f85.tracev3"] {
            let real = Array(try Data(contentsOf: unifiedLogging.appendingPathComponent(name)))
            for _ in 0..<(name.hasPrefix("0000000000000030") ? 300 : 20) {
                var bytes = real
                for _ in 0..<4 { bytes[Int.random(in: 224..<bytes.count, using: &g)] = UInt8.random(in: 0...255, using: &g) }
                _ = bytes.withUnsafeBytes { b in reader.read(b) { _ in } }
            }
        }
        // Every prefix of the real macOS file: no crash.
        for k in stride(from: 0, through: data.count, by: 7) {
            var r3 = TraceV3Reader()
            data.prefix(k).withUnsafeBytes { b in r3.read(b) { _, _ in } }
        }
    }
}

@Suite struct UnifiedLogSplitTests {
    /// One file made of the real file's chunks three times, read whole and in parts (as a big
    /// file is read on several cores): the same entries, counts and oversize resolution.
    @Test func partsGiveTheSameEntriesAsTheWholeFile() throws {
        let real = Array(try Data(contentsOf: unifiedLogging.appendingPathComponent("0000000000000f85.tracev3")))
        let header = (16 + Int(real[8]) + Int(real[9]) << 8 + 7) & ~7
        let big = Array(real[0..<header]) + Array(real[header...]) + Array(real[header...]) + Array(real[header...])
        let reader = UnifiedLogReader(root: nil)
        var whole: [String] = []
        let all = big.withUnsafeBytes { b in
            reader.read(b) { r in whole.append("\(r.wallNanos) \(r.pid) \(String(decoding: r.message, as: UTF8.self))") }
        }
        var split: [String] = []
        var summaries: [ULFileSummary] = []
        let parts = try #require(big.withUnsafeBytes { TraceV3Reader.parts(of: $0, count: 5) })
        #expect(parts.count == 5)
        var stats = TraceV3Stats()
        for part in parts {
            let s = big.withUnsafeBytes { b in
                reader.read(b, part: part) { r in split.append("\(r.wallNanos) \(r.pid) \(String(decoding: r.message, as: UTF8.self))") }
            }
            stats.add(s.stats)
            summaries.append(s)
        }
        let (missing, _) = reader.readDeferred(summaries, header: all.header, wants: nil) { r in
            split.append("\(r.wallNanos) \(r.pid) \(String(decoding: r.message, as: UTF8.self))")
        }
        stats.oversizeMissing += missing
        #expect(whole.count == 3 * 8_654)
        #expect(whole.sorted() == split.sorted())
        #expect(stats == all.stats)
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// What the ninth hostile review found in reading (and what session 46 left of an `.ips`):
/// NUL bytes inside a line or a block of them between lines, the same bundle read twice, a text
/// file cut short while read, timesync numbers no clock has, two reports in one `.ips`.
@Suite("hostile round 9: NUL bytes, a bundle twice, a file cut while read, timesync damage, two reports in one .ips")
struct HostileRound9ReadTests {
    static let storm = try! Data(contentsOf: packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt"))

    /// The sample's lines (without newlines), as bytes.
    static var lines: [Data] { storm.split(separator: 0x0A, omittingEmptySubsequences: false).map { Data($0) } }

    func run(_ bytes: Data) throws -> (json: [String: Any], stderr: String, status: Int32) {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("damaged.log")
        try bytes.write(to: url)
        let r = try castscope(["analyze", "--json", url.path])
        return (r.json ?? [:], r.stderr, r.status)
    }

    func sessions(_ j: [String: Any]) -> [[String: Any]] { j["sessions"] as? [[String: Any]] ?? [] }
    func recognized(_ j: [String: Any]) -> Int { ((j["inputs"] as? [[String: Any]])?.first?["events"] as? Int) ?? -1 }

    @Test("NUL bytes inside a line's process name: the line is said to be damaged, and invents no session")
    func nulInProcessName() throws {
        var l = Self.lines
        l[30] = l[30].prefix(50) + Data([0, 0, 0]) + l[30].dropFirst(50)
        let r = try run(Data(l.joined(separator: Data([0x0A]))))
        let clean = try run(Self.storm)
        #expect(sessions(r.json).count == sessions(clean.json).count, "\(sessions(r.json).map { $0["process"] ?? "" })")
        #expect(r.stderr.contains("damaged.log:31: NUL bytes in the line's process name"), "\(r.stderr)")
        #expect(r.status == 1)
    }

    @Test("a block of NUL bytes between lines, short or long, is passed over and said: no line after it is lost, the file is no binary",
          arguments: [4096, 100_000])
    func nulBlockBetweenLines(_ n: Int) throws {
        let l = Self.lines
        let bytes = Data(l[..<30].joined(separator: Data([0x0A]))) + Data([0x0A]) + Data(count: n) + Data(l[30...].joined(separator: Data([0x0A])))
        let r = try run(bytes)
        let clean = try run(Self.storm)
        #expect(recognized(clean.json) > 70)
        #expect(recognized(r.json) == recognized(clean.json), "\(r.stderr)")
        #expect(r.stderr.contains("damaged.log:31: \(n) NUL bytes passed over"), "\(r.stderr)")
        #expect(!r.stderr.contains("binary file"), "\(r.stderr)")
        #expect(r.status == 1)
    }

    @Test("a bundle given twice (or downloaded twice into one folder) is the bundle once: its Xcode console's print() lines, timed by their neighbours, count once too")
    func bundleTwice() throws {
        let bundle = packageRoot.appendingPathComponent("samples/mixed-bundle/support-bundle.tar.gz").path
        let once = try castscope(["analyze", "--json", bundle]).json ?? [:]
        let twice = try castscope(["analyze", "--json", bundle, bundle]).json ?? [:]
        let outcomes = { (j: [String: Any]) in self.sessions(j).map { "\($0["process"] ?? "") \($0["outcome"] ?? "") \($0["start"] ?? "")" } }
        #expect(outcomes(once).count == 2)
        #expect(outcomes(twice) == outcomes(once), "\(outcomes(twice))")
    }

    @Test("a text file cut short while it is read (copytruncate) is said, by either reader, not passed over as its end")
    func fileCutWhileRead() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("rotating.log")
        try Data(repeating: 0x61, count: 100_000).write(to: url)
        let whole = try FileSource(path: url.path)
        let ranged = try RangeFileSource(path: url.path, from: 0, to: 100_000)
        var buffer = [UInt8](repeating: 0, count: 4096)
        _ = try buffer.withUnsafeMutableBytes { try whole.read(into: $0) }
        _ = try buffer.withUnsafeMutableBytes { try ranged.read(into: $0) }
        #expect(truncate(url.path, 10_000) == 0)
        for source in [whole, ranged] as [ByteSource] {
            var error: InputError?
            do { while try buffer.withUnsafeMutableBytes({ try source.read(into: $0) }) > 0 {} } catch let e as InputError { error = e }
            #expect(error?.message.contains("the file became shorter while it was read") == true, "\(String(describing: error))")
            #expect(error?.message.contains("at byte 10000 of 100000") == true, "\(String(describing: error))")
        }
        // A file read to its end as it was: no error.
        let intact = try FileSource(path: url.path)
        while try buffer.withUnsafeMutableBytes({ try intact.read(into: $0) }) > 0 {}
    }

    /// A timesync boot record (`0xBBB0`, 48 bytes) and sync points (`Ts`, 32 bytes).
    static func timesync(numer: UInt32, denom: UInt32, boot: Int64, points: [(UInt64, Int64)]) -> [UInt8] {
        func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        var b = le(UInt16(0xBBB0)) + le(UInt16(48)) + [UInt8](repeating: 0, count: 4) + [UInt8](repeating: 7, count: 16)
        b += le(numer) + le(denom) + le(boot) + [UInt8](repeating: 0, count: 8)
        for (ct, wall) in points { b += le(UInt16(0x7354)) + le(UInt16(32)) + [UInt8](repeating: 0, count: 4) + le(ct) + le(wall) + [UInt8](repeating: 0, count: 8) }
        return b
    }

    @Test("timesync numbers no clock has (a zero or absurd timebase, a boot or sync point before 1990 or after 2200) are said and not used")
    func timesyncDamage() throws {
        let good: Int64 = 1_649_855_670_000_000_000
        var t = ULTimesync()
        t.add(Self.timesync(numer: 125, denom: 3, boot: good, points: [(1000, good + 1000)]), path: "good.timesync")
        #expect(t.problems.isEmpty)
        #expect(t.boots.values.first?.syncs.count == 1)
        for (n, d, boot) in [(125, 0, good), (4_294_967_295, 1, good), (125, 3, Int64.min), (125, 3, Int64.max)] as [(UInt32, UInt32, Int64)] {
            var bad = ULTimesync()
            bad.add(Self.timesync(numer: n, denom: d, boot: boot, points: [(1000, good)]), path: "bad.timesync")
            #expect(bad.boots.isEmpty, "\(n)/\(d) \(boot)")
            #expect(bad.problems.first?.message.hasPrefix("timesync boot record with") == true, "\(bad.problems)")
        }
        var points = ULTimesync()
        points.add(Self.timesync(numer: 125, denom: 3, boot: good, points: [(1000, Int64.max), (UInt64.max, -5), (2000, good + 2000)]), path: "points.timesync")
        #expect(points.boots.values.first?.syncs.map(\.ct) == [2000])
        #expect(points.problems.count == 2)
    }

    @Test("an .ips file holding two reports (cat *.ips, a paste of two) reads both; a broken one among them is said and the other read")
    func twoReportsInOneFile() throws {
        let (both, none) = try IPSReport.parseAll(jetsamIPS + "\n" + crashIPS, path: "two.ips")
        #expect(none.isEmpty, "\(none)")
        #expect(both.map(\.kind) == [.jetsam, .crash])
        #expect(both.map(\.records.count) == [1, 1])
        let (one, broken) = try IPSReport.parseAll(crashIPS + "\n{\"bug_type\":\"298\",\"timestamp\":\"2026-03-12 23:59:54.10 +0100\"}\n{ not json\n", path: "two.ips")
        #expect(one.map(\.kind) == [.crash])
        #expect(broken.first?.message.hasPrefix("the report from line 9: ") == true, "\(broken)")
        // One report: as before.
        #expect(IPSReport.split(crashIPS).count == 1)
        // End to end: the extension's jetsam kill and its crash report, from one file.
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("joined.ips")
        try Data((jetsamIPS + "\n" + crashIPS).utf8).write(to: url)
        let r = try castscope(["analyze", "--json", url.path])
        let input = (r.json?["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect((input["format"] as? String)?.hasPrefix("ips (2 reports: JetsamEvent") == true, "\(input)")
        #expect(input["events"] as? Int == 2, "\(input)")
    }

    @Test("a chunkset's chunk of a tag no chunkset holds is said, not dropped without a word")
    func unknownChunkInAChunkset() throws {
        func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        let header = Array(try Data(contentsOf: unifiedLogging.appendingPathComponent("0000000000000030.tracev3")).prefix(224))
        let raw = le(UInt32(0x6099)) + le(UInt32(0)) + le(UInt64(8)) + [UInt8](repeating: 0, count: 8)
        let chunkset = Array("bv4-".utf8) + le(UInt32(raw.count)) + raw + Array("bv4$".utf8)
        let file = header + le(UInt32(0x600D)) + le(UInt32(0)) + le(UInt64(UInt64(chunkset.count))) + chunkset
        var r = TraceV3Reader()
        file.withUnsafeBytes { b in r.read(b) { _, _ in } }
        #expect(r.stats.unknownChunks == 1)
        #expect(r.problems.map(\.message).contains { $0.contains("chunk of unknown tag 0x6099") }, "\(r.problems.map(\.message))")
    }

    @Test("a tracev3 file whose header's wall clock is zeroed, with no timesync for its boot, says its times are wrong")
    func zeroedHeaderClock() throws {
        var bytes = Array(try Data(contentsOf: unifiedLogging.appendingPathComponent("0000000000000030.tracev3")))
        let intact = bytes.withUnsafeBytes { UnifiedLogReader(strings: ULStringStore(root: nil), timesync: ULTimesync()).read($0) { _ in } }
        #expect(!intact.problems.contains { $0.message.hasPrefix("the header's wall clock") }, "\(intact.problems)")
        // The header's wall clock: its 0x6100 sub-chunk's seconds and microseconds.
        let h = try #require(bytes.withUnsafeBytes { TraceV3Reader.header(of: $0) })
        #expect(h.wallSeconds != 0)
        var zeroed = 0
        for i in 0..<(224 - 8) where bytes[i..<(i + 8)].withUnsafeBytes({ $0.loadUnaligned(as: Int64.self) }) == h.wallSeconds {
            for k in i..<(i + 8) { bytes[k] = 0 }
            zeroed += 1
        }
        #expect(zeroed == 1)
        let r = bytes.withUnsafeBytes { UnifiedLogReader(strings: ULStringStore(root: nil), timesync: ULTimesync()).read($0) { _ in } }
        #expect(r.problems.contains { $0.message.hasPrefix("the header's wall clock is") }, "\(r.problems)")
    }
}

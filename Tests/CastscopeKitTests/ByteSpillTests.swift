#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@testable import CastscopeKit

/// The spill behind the streamed reports: what goes in comes out in order, whatever the sizes
/// of the pieces against its limit, and its buffer keeps the room it was made with (it used to
/// double at the first write to its file and stay so).
@Suite struct ByteSpillTests {
    /// Everything a spill holds, read back through a file.
    static func readBack(_ spill: ByteSpill) -> [UInt8] {
        guard let f = tmpfile() else { return [] }
        defer { fclose(f) }
        guard spill.copy(to: f) else { return [] }
        rewind(f)
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
            if n == 0 { break }
            out += chunk[..<n]
        }
        return out
    }

    /// The first `count` bytes a spill holds, read back 1 to 100 bytes at a time (the Markdown
    /// report's pieces), across the file's end; fewer when a read fails.
    static func readInPieces(_ spill: ByteSpill, count: Int, _ rng: inout SplitMix) -> [UInt8] {
        let reader = ByteSpill.Reader(spill)
        var pieces: [UInt8] = []
        while pieces.count < count {
            let n = min(Int.random(in: 1...100, using: &rng), count - pieces.count)
            guard let got = reader.next(n) else { break }
            pieces += got
        }
        return pieces
    }

    @Test("pieces smaller, as big as and bigger than the limit come out in order; the buffer never grows",
          arguments: [1 as UInt64, 2, 3, 4])
    func inOrderWithinItsRoom(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        let limit = 64
        let spill = ByteSpill(limit: limit)
        let room = spill.heldCapacity
        var expected: [UInt8] = []
        for k in 0..<2_000 {
            // Mostly small pieces, some exactly the limit or one either side, some several times it.
            let sizes = [0, 1, 7, limit - 1, limit, limit + 1, 3 * limit + 5]
            let n = Int.random(in: 0..<10, using: &rng) < 7 ? Int.random(in: 0...20, using: &rng)
                : sizes[Int.random(in: 0..<sizes.count, using: &rng)]
            let piece = (0..<n).map { UInt8(truncatingIfNeeded: k &* 31 &+ $0) }
            spill.append(piece)
            expected += piece
            #expect(spill.heldCapacity == room, "the buffer grew at piece \(k) (\(n) bytes)")
        }
        #expect(!spill.failed)
        #expect(Self.readBack(spill) == expected)
        // Read back a few bytes at a time (the Markdown report's pieces), across the file's end.
        #expect(Self.readInPieces(spill, count: expected.count, &rng) == expected)
        // One spill appended to another, and one forgotten.
        let other = ByteSpill(limit: 16)
        other.append([1, 2, 3])
        #expect(other.append(spill))
        #expect(Self.readBack(other) == [1, 2, 3] + expected)
        spill.reset()
        spill.append([9])
        #expect(Self.readBack(spill) == [9])
    }

    /// A full disk cuts a write short: part of the bytes reach the file, all of them stay in
    /// memory. Read back, nothing may come twice (it did: the file's part, then memory's whole).
    @Test("a write cut short by a full disk repeats nothing", arguments: [0, 1, 63, 64, 65, 100, 1_000, 5_000])
    func aFullDiskRepeatsNothing(room: Int) {
        var rng = SplitMix(seed: UInt64(room) &+ 7)
        let limit = 64
        let spill = ByteSpill(limit: limit, diskRoom: room)
        var expected: [UInt8] = []
        for k in 0..<300 {
            let n = Int.random(in: 0..<10, using: &rng) < 8 ? Int.random(in: 0...30, using: &rng) : Int.random(in: limit...(3 * limit), using: &rng)
            let piece = (0..<n).map { UInt8(truncatingIfNeeded: k &* 13 &+ $0) }
            spill.append(piece)
            expected += piece
        }
        #expect(spill.failed, "the disk's room was \(room) bytes of \(expected.count)")
        #expect(Self.readBack(spill) == expected)
        #expect(Self.readInPieces(spill, count: expected.count, &rng) == expected)
    }
}

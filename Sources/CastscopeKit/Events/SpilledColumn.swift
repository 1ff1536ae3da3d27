#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A column of plain values (times, line numbers, packed connect attempts) that one session can
/// grow for as long as its log goes on, held in bounded memory.
///
/// An extension that never reaches the host app retries every 100 ms for as long as the
/// broadcast runs; a broadcast that streams for a day folds a frame line per tenth of a second.
/// Each line keeps its time and number (`Repeats`), each attempt its 32 packed bytes
/// (`ConnectAttempts`): held as arrays, ten hours of retrying were 46 MB, a day over 100. Here a
/// column is an array until it holds `perBlock` values (1 MB); past that, each full megabyte is
/// written to a block of one unlinked temporary file (`SpillBlocks`) and only the values after
/// the last block stay in memory. A bundle of ordinary sessions never gets there.
///
/// Reading walks the blocks in order (`makeIterator`, `forEachChunk`: one block read at a time
/// into a buffer of the reader's own); an element looked up alone is read by itself. Blocks on
/// disk are never written again: a copy of the column shares them, and a block goes back to the
/// file's free list when no copy holds it. When no temporary file can be made or written (a
/// full disk), the column simply stays in memory.
struct SpilledColumn<T: BitwiseCopyable & Sendable>: RandomAccessCollection, Sendable {
    /// The values after those on disk.
    private(set) var memory: [T] = []
    /// The blocks on disk, `perBlock` values each, in order.
    private var blocks: [SpillBlock] = []
    /// Values in a block (fixed when the column is made: `SpillBlocks.blockBytes`).
    let perBlock: Int

    init() { self.init(blockBytes: SpillBlocks.blockBytes) }

    /// With blocks of `blockBytes` (tests).
    init(blockBytes: Int) { perBlock = Swift.max(1, blockBytes / MemoryLayout<T>.stride) }

    init<S: Sequence>(_ values: S) where S.Element == T {
        self.init()
        for v in values { append(v) }
    }

    /// Whether part of it is on disk.
    var spilled: Bool { !blocks.isEmpty }
    private var onDisk: Int { blocks.count &* perBlock }

    var startIndex: Int { 0 }
    var endIndex: Int { onDisk &+ memory.count }
    var count: Int { onDisk &+ memory.count }
    var isEmpty: Bool { blocks.isEmpty && memory.isEmpty }
    var last: T? { memory.last ?? (blocks.isEmpty ? nil : self[count - 1]) }

    subscript(i: Int) -> T {
        get {
            if blocks.isEmpty { return memory[i] }
            let d = onDisk
            if i >= d { return memory[i &- d] }
            precondition(i >= 0, "index out of range")
            return blocks[i / perBlock].read(T.self, at: i % perBlock)
        }
        set {
            let d = onDisk
            if i >= d { memory[i &- d] = newValue; return }
            // A block on disk is shared by every copy: a new one takes the change.
            let b = i / perBlock
            var values = blocks[b].readAll(T.self, count: perBlock)
            values[i % perBlock] = newValue
            if let block = SpillBlocks.shared.write(values) {
                blocks[b] = block
            } else {
                // No block could be written: the column comes back into memory.
                var all = Array(self)
                all[i] = newValue
                self = SpilledColumn()
                memory = all
                SpillBlocks.shared.giveUp()
            }
        }
    }

    mutating func append(_ v: T) {
        let n = memory.count
        if n >= 16, n == memory.capacity {
            // Full: grown by half, not doubled (thousands of open sessions' frame runs each
            // hold their columns' room: a run of 180 lines had room for 256), and to one value
            // past a block at most, not the doubling's second block, kept after a spill.
            memory.reserveCapacity(Swift.min(perBlock + 1, n + n / 2))
        }
        memory.append(v)
        if memory.count > perBlock { spill() }
    }

    mutating func append<S: Sequence>(contentsOf values: S) where S.Element == T {
        for v in values { append(v) }
    }

    /// Appends `values` in one copy (spilling each megabyte it fills).
    mutating func append(buffer values: UnsafeBufferPointer<T>) {
        var at = 0
        while at < values.count {
            // Up to one value past a block; all of them once a spill failed (a full disk: the
            // column stays in memory, and the room left would be none).
            let room = perBlock + 1 - memory.count
            let n = room > 0 ? Swift.min(values.count - at, room) : values.count - at
            memory.append(contentsOf: UnsafeBufferPointer(rebasing: values[at..<(at + n)]))
            at += n
            if memory.count > perBlock { spill() }
        }
    }

    static func += <S: Sequence>(column: inout SpilledColumn, values: S) where S.Element == T {
        column.append(contentsOf: values)
    }

    /// Another column's values, a buffer at a time (a run cut by a file's ranges is joined
    /// again for each of a relay's thousands of open sessions at every range's start: value
    /// by value through the generic sequence, that join was most of its cost).
    static func += (column: inout SpilledColumn, other: SpilledColumn) {
        other.forEachChunk { column.append(buffer: $0) }
    }

    /// Every value changed by `change` (in place while the column is in memory).
    mutating func update(_ change: (T) -> T) {
        guard spilled else {
            memory.withUnsafeMutableBufferPointer { b in
                for i in b.indices { b[i] = change(b[i]) }
            }
            return
        }
        self = SpilledColumn(lazy.map(change))
    }

    mutating func reserveCapacity(_ n: Int) { memory.reserveCapacity(Swift.min(n, perBlock + 1)) }

    /// Writes the first `perBlock` values in memory to a block (one value stays: `last` is
    /// asked of a growing column all the time).
    private mutating func spill() {
        guard SpillBlocks.shared.usable,
            let block = memory.withUnsafeBufferPointer({ SpillBlocks.shared.write(UnsafeBufferPointer(rebasing: $0[0..<perBlock])) })
        else { return }
        blocks.append(block)
        memory.removeSubrange(0..<perBlock)
    }

    /// Calls `body` with the values in order, a block at a time (the values in memory as they
    /// lie, those on disk read a block at a time into one buffer).
    func forEachChunk(_ body: (UnsafeBufferPointer<T>) -> Void) {
        if !blocks.isEmpty {
            var buffer = [T]()
            for block in blocks {
                block.read(into: &buffer, count: perBlock)
                buffer.withUnsafeBufferPointer(body)
            }
        }
        memory.withUnsafeBufferPointer(body)
    }

    func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<T>) throws -> R) rethrows -> R? {
        blocks.isEmpty ? try memory.withUnsafeBufferPointer(body) : nil
    }

    /// Reads the blocks on disk one at a time (not a read per value).
    struct Iterator: IteratorProtocol {
        let column: SpilledColumn
        var i = 0
        var buffer: [T] = []
        var bufferStart = -1

        mutating func next() -> T? {
            guard i < column.count else { return nil }
            defer { i &+= 1 }
            let d = column.onDisk
            if i >= d { return column.memory[i &- d] }
            let b = i / column.perBlock
            if bufferStart != b {
                column.blocks[b].read(into: &buffer, count: column.perBlock)
                bufferStart = b
            }
            return buffer[i % column.perBlock]
        }
    }

    func makeIterator() -> Iterator { Iterator(column: self) }

    /// The values a block at a time, in order (those on disk read into a buffer each).
    struct ChunkIterator {
        let column: SpilledColumn
        var block = 0
        var doneMemory = false
        mutating func next() -> [T]? {
            if block < column.blocks.count {
                defer { block += 1 }
                return column.blocks[block].readAll(T.self, count: column.perBlock)
            }
            guard !doneMemory else { return nil }
            doneMemory = true
            return column.memory
        }
    }

    func makeChunkIterator() -> ChunkIterator { ChunkIterator(column: self) }
}

/// A column a run's lines are cut and joined by (`SpilledColumn`, `TimeColumn`): read in order,
/// made anew by appending.
protocol RunColumn: Sequence {
    init()
    mutating func append(_ v: Element)
}

extension RunColumn {
    /// The values whose flag is set, in order (read a block at a time, not a read per value).
    func selecting(_ flags: [Bool]) -> Self {
        var out = Self()
        var k = 0
        for v in self {
            if k < flags.count, flags[k] { out.append(v) }
            k += 1
        }
        return out
    }

    /// Its first `n` values (read a block at a time).
    func leading(_ n: Int) -> Self {
        var out = Self()
        var k = 0
        for v in self {
            if k == n { break }
            out.append(v)
            k += 1
        }
        return out
    }
}

extension SpilledColumn: RunColumn {}

extension SpilledColumn where T: Equatable {
    /// The last index holding `v`, looking a block at a time from the end.
    func lastIndex(of v: T) -> Int? {
        if let k = memory.lastIndex(of: v) { return onDisk &+ k }
        var buffer = [T]()
        for b in blocks.indices.reversed() {
            blocks[b].read(into: &buffer, count: perBlock)
            if let k = buffer.lastIndex(of: v) { return b &* perBlock &+ k }
        }
        return nil
    }
}

extension SpilledColumn where T: Comparable {
    /// The smallest and largest value, a block at a time.
    var bounds: (min: T, max: T)? {
        if blocks.isEmpty {
            guard let a = memory.min(), let b = memory.max() else { return nil }
            return (a, b)
        }
        var out: (min: T, max: T)?
        forEachChunk { chunk in
            for v in chunk { out = out.map { (Swift.min($0.min, v), Swift.max($0.max, v)) } ?? (v, v) }
        }
        return out
    }
}

/// One block of a column on disk; it goes back to the free list when no column holds it.
final class SpillBlock: Sendable {
    let offset: Int64

    init(offset: Int64) { self.offset = offset }

    deinit { SpillBlocks.shared.free(offset) }

    func read<T: BitwiseCopyable>(_: T.Type, at k: Int) -> T {
        withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { p in
            SpillBlocks.shared.read(UnsafeMutableRawBufferPointer(p), at: offset + Int64(k * MemoryLayout<T>.stride))
            return p[0]
        }
    }

    func read<T: BitwiseCopyable>(into buffer: inout [T], count: Int) {
        if buffer.count != count {
            buffer = [T](unsafeUninitializedCapacity: count) { _, n in n = count }
        }
        buffer.withUnsafeMutableBytes { SpillBlocks.shared.read($0, at: offset) }
    }

    func readAll<T: BitwiseCopyable>(_: T.Type, count: Int) -> [T] {
        var out: [T] = []
        read(into: &out, count: count)
        return out
    }
}

/// The temporary file that spilled columns' blocks live in: one per process, made on the
/// first block (`unlinkedTemporaryFile`). Blocks let go of are used again.
public final class SpillBlocks: @unchecked Sendable {
    static let shared = SpillBlocks()
    /// The bytes of a block of the columns made from now on: a megabyte. Tests make it small
    /// so that every column of a small log spills (`castscope` takes
    /// `CASTSCOPE_SPILL_BLOCK_BYTES`, a multiple of 64, at its start: `useBlockBytesFromEnvironment`).
    nonisolated(unsafe) static var blockBytes = 1 << 20

    public static func useBlockBytesFromEnvironment() {
        if let v = getenv("CASTSCOPE_SPILL_BLOCK_BYTES").flatMap({ Int(String(cString: $0)) }), v >= 64, v % 64 == 0 {
            blockBytes = v
        }
    }

    private let lock = NSLockLite()
    private var fd: Int32 = -1
    private var end: Int64 = 0
    private var freed: [Int64] = []
    /// No file could be made, or a write failed: columns stay in memory from then on.
    private var failed = false
    /// Blocks written and in use, for tests.
    private(set) var inUse = 0

    /// Whether columns may still spill.
    var usable: Bool { lock.locked { !failed } }

    func giveUp() { lock.locked { failed = true } }

    /// Writes `values` (at most a block) to a free block: nil when that cannot be done.
    func write<T: BitwiseCopyable>(_ values: UnsafeBufferPointer<T>) -> SpillBlock? {
        precondition(values.count * MemoryLayout<T>.stride <= Self.blockBytes)
        guard let (fd, offset) = take() else { return nil }
        guard pwriteAll(fd, UnsafeRawBufferPointer(values), at: offset) else {
            lock.locked {
                freed.append(offset)
                inUse -= 1
                failed = true
            }
            return nil
        }
        return SpillBlock(offset: offset)
    }

    func write<T: BitwiseCopyable>(_ values: [T]) -> SpillBlock? {
        values.withUnsafeBufferPointer { write($0) }
    }

    func read(_ b: UnsafeMutableRawBufferPointer, at offset: Int64) {
        // A temporary file that cannot be read back is a broken machine, not a broken input.
        precondition(preadAll(lock.locked { fd }, b, at: offset) == b.count,
                     "castscope: a temporary file of a long session's lines could not be read back")
    }

    fileprivate func free(_ offset: Int64) {
        lock.locked {
            freed.append(offset)
            inUse -= 1
        }
    }

    private func take() -> (Int32, Int64)? {
        lock.locked {
            guard !failed else { return nil }
            if fd < 0 {
                fd = unlinkedTemporaryFile("columns")
                guard fd >= 0 else {
                    failed = true
                    return nil
                }
            }
            inUse += 1
            if let offset = freed.popLast() { return (fd, offset) }
            defer { end += Int64(Self.blockBytes) }
            return (fd, end)
        }
    }
}

/// The times of a run's lines (`Repeats.times`): 32-bit offsets from the run's first time while
/// every line lies within ±35 minutes of it (4 bytes a line), 64-bit times from the first line
/// that does not. Both go to disk past their first megabyte (`SpilledColumn`).
///
/// With thousands of extension sessions open at once (a relay's or a `log stream`'s churn),
/// each one's frame run is held until the session ends: its times were 8 of the 16 bytes each
/// frame line kept in memory. A run that goes on for more than half an hour turns wide once
/// and stays so; it is the same values either way. Cut and joined as `SpilledColumn` is
/// (`RunColumn`).
struct TimeColumn: RandomAccessCollection, RunColumn, Sendable {
    /// The first time; the narrow offsets are from it.
    private var base: Int64 = 0
    private var narrow = SpilledColumn<Int32>()
    /// Every time, once one did not fit an offset (nil until then).
    private var wide: SpilledColumn<Int64>?

    init() {}

    /// With columns in blocks of `blockBytes` (tests).
    init(blockBytes: Int) { narrow = SpilledColumn(blockBytes: blockBytes) }

    init<S: Sequence>(_ values: S) where S.Element == Int64 {
        for v in values { append(v) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }
    var count: Int { wide?.count ?? narrow.count }
    var isEmpty: Bool { count == 0 }
    /// Whether part of it is on disk.
    var spilled: Bool { wide?.spilled ?? narrow.spilled }
    /// Whether it holds 64-bit times (tests).
    var isWide: Bool { wide != nil }

    subscript(i: Int) -> Int64 {
        if let wide { return wide[i] }
        return base &+ Int64(narrow[i])
    }

    var last: Int64? {
        if let wide { return wide.last }
        return narrow.last.map { base &+ Int64($0) }
    }

    mutating func append(_ v: Int64) {
        if wide != nil {
            wide!.append(v)
            return
        }
        if narrow.isEmpty { base = v }
        let (d, overflow) = v.subtractingReportingOverflow(base)
        if !overflow, let n = Int32(exactly: d) {
            narrow.append(n)
            return
        }
        var all = SpilledColumn<Int64>(blockBytes: narrow.perBlock * MemoryLayout<Int32>.stride)
        all.reserveCapacity(narrow.count + 1)
        for n in narrow { all.append(base &+ Int64(n)) }
        all.append(v)
        narrow = SpilledColumn()
        wide = all
    }

    mutating func reserveCapacity(_ n: Int) {
        if wide != nil { wide!.reserveCapacity(n) } else { narrow.reserveCapacity(n) }
    }

    static func += (column: inout TimeColumn, other: TimeColumn) {
        // (narrow into narrow, the usual join of a run's parts: the other's offsets moved to
        // this base, a buffer at a time, when all of them fit)
        if column.wide == nil, other.wide == nil, !column.narrow.isEmpty, let b = other.narrow.bounds {
            let (delta, overflow) = other.base.subtractingReportingOverflow(column.base)
            if !overflow, let lo = Int32(exactly: Int64(b.min) + delta), let hi = Int32(exactly: Int64(b.max) + delta), lo <= hi {
                let d = Int32(truncatingIfNeeded: delta)
                if d == 0 {
                    column.narrow += other.narrow
                } else {
                    other.narrow.forEachChunk { chunk in
                        for v in chunk { column.narrow.append(v &+ d) }
                    }
                }
                return
            }
        }
        for v in other { column.append(v) }
    }

    /// The smallest and largest time, a block at a time.
    var bounds: (min: Int64, max: Int64)? {
        if let wide { return wide.bounds }
        return narrow.bounds.map { (base &+ Int64($0.min), base &+ Int64($0.max)) }
    }

    /// Calls `body` with the times in memory (nothing on disk) as they lie: 64-bit times, or
    /// the base and 32-bit offsets. False when part is on disk (read with an iterator then).
    func withMemory(wide onWide: (UnsafeBufferPointer<Int64>) -> Void, narrow onNarrow: (Int64, UnsafeBufferPointer<Int32>) -> Void) -> Bool {
        if let wide {
            guard !wide.spilled else { return false }
            wide.memory.withUnsafeBufferPointer(onWide)
            return true
        }
        guard !narrow.spilled else { return false }
        narrow.memory.withUnsafeBufferPointer { onNarrow(base, $0) }
        return true
    }

    /// Reads the blocks on disk one at a time.
    struct Iterator: IteratorProtocol {
        var narrow: SpilledColumn<Int32>.Iterator?
        var wide: SpilledColumn<Int64>.Iterator?
        let base: Int64
        mutating func next() -> Int64? {
            if wide != nil { return wide!.next() }
            return narrow!.next().map { base &+ Int64($0) }
        }
    }

    func makeIterator() -> Iterator {
        if let wide { return Iterator(narrow: nil, wide: wide.makeIterator(), base: 0) }
        return Iterator(narrow: narrow.makeIterator(), wide: nil, base: base)
    }
}

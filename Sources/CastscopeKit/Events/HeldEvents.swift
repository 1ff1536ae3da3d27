/// A bundle's events held on disk instead of in memory (issue 15: memory follows open sessions,
/// not the size of the input). Written in reading order while the bundle is read, in chunks
/// (`write`), read back a chunk at a time; or written as sorted runs (`writeSorted`), read back
/// merged into one sorted stream (`merge`), a block of each run in memory at a time.
final class HeldEvents {
    private var store: EventSpill?
    var spill: EventSpill { store! }
    /// The chunks written by `write`, in reading order.
    private(set) var chunks: [EventSpill.Chunk] = []
    /// What one `writeSorted` call wrote.
    struct Sorted {
        var blocks: [EventSpill.Chunk]
        var first: Event
        var last: Event
        var count: Int
    }
    /// What each `writeSorted` call wrote, in the order of the calls.
    private(set) var sortedChunks: [Sorted] = []
    /// Runs of those: a call whose first event is not before the last event of the call
    /// before continues its run (a file read in time order is one run, however long).
    private(set) var runs: [[EventSpill.Chunk]] = []
    private var lastSorted: Event?
    private(set) var count = 0
    /// Events per chunk written by `write` (what a pass over them holds at a time).
    let chunkSize: Int
    /// Events per block of a run (what the merge holds of each run).
    let blockSize: Int
    /// Runs merged at once; more are merged in groups first (a bundle of many files, a file
    /// far out of time order), so that the merge holds at most this many blocks.
    let fanIn: Int

    /// Nil when no temporary file can be made (the caller keeps the events in memory).
    init?(chunkSize: Int = 1 << 13, blockSize: Int = 1 << 10, fanIn: Int = 32) {
        guard let spill = EventSpill() else { return nil }
        store = spill
        self.chunkSize = max(1, chunkSize)
        self.blockSize = max(1, blockSize)
        self.fanIn = max(2, fanIn)
    }

    /// Lets the temporary file go (its space comes back now); nothing can be read after.
    func discard() {
        chunks = []
        sortedChunks = []
        runs = []
        store = nil
    }

    /// Appends `events` (in reading order), cut in chunks of at most `chunkSize`.
    func write(_ events: [Event]) {
        chunks.append(contentsOf: pieces(events, chunkSize))
        count += events.count
    }

    private func pieces(_ events: [Event], _ size: Int) -> [EventSpill.Chunk] {
        var out: [EventSpill.Chunk] = []
        var start = 0
        while start < events.count {
            let end = min(events.count, start + size)
            out.append(events.withUnsafeBufferPointer { spill.write(UnsafeBufferPointer(rebasing: $0[start..<end])) })
            start = end
        }
        return out
    }

    /// Every chunk written by `write`, in order, each handed over to be changed or emptied.
    func forEachChunk(_ body: (inout [Event]) -> Void) {
        for c in chunks {
            var events = spill.read(c)
            body(&events)
        }
    }

    /// Writes `events`, sorted by `before`, continuing the last run when they come after it.
    func writeSorted(_ events: [Event], by before: (Event, Event) -> Bool) {
        guard let first = events.first else { return }
        append(Sorted(blocks: pieces(events, blockSize), first: first, last: events[events.count - 1], count: events.count),
               by: before)
    }

    private func append(_ c: Sorted, by before: (Event, Event) -> Bool) {
        sortedChunks.append(c)
        if let last = lastSorted, !before(c.first, last), !runs.isEmpty {
            runs[runs.count - 1].append(contentsOf: c.blocks)
        } else {
            runs.append(c.blocks)
        }
        lastSorted = c.last
        count += c.count
    }

    /// Writes the runs again: each call of `writeSorted` (by its number) either kept as it was
    /// written, or read back, changed by `change` (which leaves it sorted by `before`) and
    /// written anew. The bytes of those changed stay in the file unread.
    func rewriteSorted(keeping keep: (Int) -> Bool, change: (inout [Event]) -> Void, by before: (Event, Event) -> Bool) {
        let old = sortedChunks
        sortedChunks = []
        runs = []
        lastSorted = nil
        count = 0
        for (k, c) in old.enumerated() {
            if keep(k) {
                append(c, by: before)
                continue
            }
            var events: [Event] = []
            events.reserveCapacity(c.count)
            for b in c.blocks { events.append(contentsOf: spill.read(b)) }
            change(&events)
            writeSorted(events, by: before)
        }
    }

    /// The events of every run in one order (`before`; ties go to the run written first), handed
    /// on `blockSize` at a time.
    func merge(by before: (Event, Event) -> Bool, _ body: (inout [Event]) -> Void) {
        // Too many runs: groups of them merged into one, each group written as a run.
        while runs.count > fanIn {
            var grouped: [[EventSpill.Chunk]] = []
            var start = 0
            while start < runs.count {
                let group = Array(runs[start..<min(runs.count, start + fanIn)])
                start += fanIn
                if group.count == 1 { grouped.append(group[0]); continue }
                var blocks: [EventSpill.Chunk] = []
                Self.merge(group, spill: spill, blockSize: blockSize, by: before) { blocks.append(contentsOf: pieces($0, blockSize)) }
                grouped.append(blocks)
            }
            runs = grouped
        }
        Self.merge(runs, spill: spill, blockSize: blockSize, by: before, body)
    }

    private static func merge(_ runs: [[EventSpill.Chunk]], spill: EventSpill, blockSize: Int, by before: (Event, Event) -> Bool,
                              _ body: (inout [Event]) -> Void)
    {
        // One run (a bundle read in time order): its blocks as they are.
        if runs.count == 1 {
            for b in runs[0] {
                var events = spill.read(b)
                body(&events)
            }
            return
        }
        struct Cursor {
            var run: Int
            var next = 0
            var block: [Event] = []
            var at = 0
        }
        var cursors: [Cursor] = []
        func refill(_ c: inout Cursor) -> Bool {
            guard c.next < runs[c.run].count else { return false }
            c.block = spill.read(runs[c.run][c.next])
            c.next += 1
            c.at = 0
            return true
        }
        for r in runs.indices {
            var c = Cursor(run: r)
            if refill(&c) { cursors.append(c) }
        }
        // A binary heap of cursor indices by their head event.
        var heap = Array(cursors.indices)
        func less(_ a: Int, _ b: Int) -> Bool {
            let x = cursors[a].block[cursors[a].at], y = cursors[b].block[cursors[b].at]
            if before(x, y) { return true }
            if before(y, x) { return false }
            return cursors[a].run < cursors[b].run
        }
        func down(_ i: Int) {
            var i = i
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count && less(heap[l], heap[m]) { m = l }
                if r < heap.count && less(heap[r], heap[m]) { m = r }
                if m == i { return }
                heap.swapAt(i, m)
                i = m
            }
        }
        for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { down(i) }
        var out: [Event] = []
        out.reserveCapacity(blockSize)
        while let top = heap.first {
            out.append(cursors[top].block[cursors[top].at])
            cursors[top].at += 1
            if cursors[top].at == cursors[top].block.count {
                cursors[top].block = []
                if !refill(&cursors[top]) {
                    heap.swapAt(0, heap.count - 1)
                    heap.removeLast()
                }
            }
            if !heap.isEmpty { down(0) }
            if out.count == blockSize {
                body(&out)
                out.removeAll(keepingCapacity: true)
            }
        }
        if !out.isEmpty { body(&out) }
    }
}

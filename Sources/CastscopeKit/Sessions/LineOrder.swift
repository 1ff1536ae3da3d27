/// A session's lines one by one in an order over all of them (time, then where each stood),
/// without a list of every line.
///
/// A folded run's lines interleave in time with the session's other lines, so putting every
/// line in order took a list of all of them, sorted: 40 bytes and more a line, 188 MB for the
/// ClickHouse rows of a 27-hour retry storm. Each run's lines, and the session's single lines,
/// are nearly always in that order already; then they are merged (a heap of one cursor per run,
/// memory for the runs, not the lines). Where one is not (a clock set back inside a run), the
/// lines are listed and sorted as before. The keys are unique, so both give the same order.
struct LineKey: Comparable {
    var a: Int64, b: Int64, c: Int64, d: Int64

    static func < (l: LineKey, r: LineKey) -> Bool {
        if l.a != r.a { return l.a < r.a }
        if l.b != r.b { return l.b < r.b }
        if l.c != r.c { return l.c < r.c }
        return l.d < r.d
    }
}

enum LineOrder {
    /// One sequence to merge: its items in order, made afresh at each call (read twice: once
    /// to see that it is in order, once to merge).
    typealias Cursor<Value> = () -> AnyIterator<(LineKey, Value)>

    /// Calls `body` with every item of every cursor in increasing key order.
    static func merge<Value>(_ cursors: [Cursor<Value>], _ body: (LineKey, Value) -> Void) {
        // In order each? (Keys are unique: a repeat is a step back too.)
        var ordered = true
        check: for make in cursors {
            var previous: LineKey?
            for (key, _) in IteratorSequence(make()) {
                if let p = previous, !(p < key) {
                    ordered = false
                    break check
                }
                previous = key
            }
        }
        guard ordered else {
            var all: [(LineKey, Value)] = []
            for make in cursors { all.append(contentsOf: IteratorSequence(make())) }
            all.sort { $0.0 < $1.0 }
            for (key, value) in all { body(key, value) }
            return
        }
        if cursors.count == 1 {
            for (key, value) in IteratorSequence(cursors[0]()) { body(key, value) }
            return
        }
        // A binary heap of the cursors by their next key.
        let iterators = cursors.map { $0() }
        var heads: [(LineKey, Value)?] = iterators.indices.map { iterators[$0].next() }
        var heap = heads.indices.filter { heads[$0] != nil }
        func less(_ x: Int, _ y: Int) -> Bool { heads[heap[x]]!.0 < heads[heap[y]]!.0 }
        func down(_ start: Int) {
            var i = start
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count, less(l, m) { m = l }
                if r < heap.count, less(r, m) { m = r }
                if m == i { return }
                heap.swapAt(i, m)
                i = m
            }
        }
        for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { down(i) }
        while let top = heap.first {
            let (key, value) = heads[top]!
            body(key, value)
            heads[top] = iterators[top].next()
            if heads[top] == nil {
                heap[0] = heap[heap.count - 1]
                heap.removeLast()
            }
            if !heap.isEmpty { down(0) }
        }
    }
}

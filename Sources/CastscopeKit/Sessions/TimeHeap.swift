/// Values by a time each, the earliest first: a binary min-heap (equal times in no particular
/// order). `tail`'s relay sessions by their last line (`LiveSessions.silentRelay`), the
/// streams `analyze` looks at again by the time of theirs (`SessionStream.retireLater`).
struct TimeHeap<Value> {
    private(set) var items: [(time: Int64, value: Value)] = []
    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    /// The earliest.
    var first: (time: Int64, value: Value)? { items.first }

    mutating func push(_ time: Int64, _ value: Value) {
        items.append((time, value))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].time < items[parent].time else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    /// Takes the earliest out.
    mutating func popFirst() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < items.count, items[l].time < items[m].time { m = l }
            if r < items.count, items[r].time < items[m].time { m = r }
            guard m != i else { return }
            items.swapAt(i, m)
            i = m
        }
    }

    /// Each value as `transform` gives it, those it gives nil for out (streams numbered again,
    /// `SessionStream.compactStreams`).
    mutating func compactMapValues(_ transform: (Value) -> Value?) {
        let old = items
        items = []
        for item in old { if let v = transform(item.value) { push(item.time, v) } }
    }
}

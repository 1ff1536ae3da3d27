/// The relay `stats` runs open in a list of events: each session's key beside the place of its
/// run, in an open-addressing table hashed by the key's own words.
///
/// Looked up for every `stats` line a relay writes (each session every few seconds, thousands
/// open at once). As a `[StatsKey: Int]` each look-up seeded, fed and finalized the standard
/// library's SipHash over the key's seven fields: a seventh of the instructions of a relay's
/// text with 5,000 sessions open. Removed entries are taken out by shifting the entries after
/// them back (no tombstones: a relay opens and closes runs all day).
struct OpenStatsRuns {
    private var keys: [StatsKey] = []
    private var places: [Int] = []
    /// Which slots hold an entry.
    private var used: [Bool] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    private var mask: Int { used.count - 1 }

    private func home(_ key: StatsKey) -> Int { Int(truncatingIfNeeded: key.mixed >> 20) & mask }

    /// The slot of `key`, or nil.
    private func find(_ key: StatsKey) -> Int? {
        guard count > 0 else { return nil }
        var i = home(key)
        while used[i] {
            if keys[i] == key { return i }
            i = (i &+ 1) & mask
        }
        return nil
    }

    subscript(_ key: StatsKey) -> Int? {
        get { find(key).map { places[$0] } }
        set {
            if let place = newValue {
                if let i = find(key) {
                    places[i] = place
                    return
                }
                if (count + 1) * 4 > used.count * 3 { grow() }
                var i = home(key)
                while used[i] { i = (i &+ 1) & mask }
                keys[i] = key
                places[i] = place
                used[i] = true
                count += 1
            } else if let i = find(key) {
                remove(at: i)
            }
        }
    }

    /// Empties slot `i`, moving back each entry after it that its probe would no longer reach.
    private mutating func remove(at slot: Int) {
        var i = slot
        var j = slot
        while true {
            j = (j &+ 1) & mask
            guard used[j] else { break }
            let h = home(keys[j])
            // Entry j stays unless its home lies cyclically in (i, j].
            let stays = i <= j ? (i < h && h <= j) : (i < h || h <= j)
            if stays { continue }
            keys[i] = keys[j]
            places[i] = places[j]
            i = j
        }
        used[i] = false
        keys[i] = StatsKey()
        count -= 1
    }

    private mutating func grow() {
        let old = (keys, places, used)
        let size = Swift.max(16, used.count * 2)
        keys = Array(repeating: StatsKey(), count: size)
        places = Array(repeating: 0, count: size)
        used = Array(repeating: false, count: size)
        count = 0
        for i in old.2.indices where old.2[i] { self[old.0[i]] = old.1[i] }
    }

    /// Every open run's key and place, in no particular order.
    var entries: [(id: StatsKey, at: Int)] {
        used.indices.compactMap { used[$0] ? (keys[$0], places[$0]) : nil }
    }

    /// The first place a run is at (nil: none is open).
    var firstPlace: Int? {
        var first: Int?
        for i in used.indices where used[i] { first = Swift.min(first ?? places[i], places[i]) }
        return first
    }

    /// Every run's place changed by `change`.
    mutating func updatePlaces(_ change: (Int) -> Int) {
        for i in used.indices where used[i] { places[i] = change(places[i]) }
    }
}

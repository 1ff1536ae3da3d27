/// The relay `stats` runs open in a list of events: each session's key beside the place of its
/// run, in an open-addressing table hashed by the key's own words.
///
/// Looked up for every `stats` line a relay writes (each session every few seconds, thousands
/// open at once). As a `[StatsKey: Int]` each look-up seeded, fed and finalized the standard
/// library's SipHash over the key's seven fields: a seventh of the instructions of a relay's
/// text with 5,000 sessions open. Removed entries are taken out by shifting the entries after
/// them back (no tombstones: a relay opens and closes runs all day).
struct OpenStatsRuns {
    /// A key beside its run's place, in one slot (a probe reads one place, as `PidSlots`'s);
    /// a place below zero marks the slot free (places in a list are never negative).
    private struct Slot {
        var key = StatsKey()
        var place = -1
        var used: Bool { place >= 0 }
    }
    private var slots: [Slot] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    private var mask: Int { slots.count - 1 }

    private func home(_ key: StatsKey) -> Int { Int(truncatingIfNeeded: key.mixed >> 20) & mask }

    /// The slot of `key`, or nil.
    private func find(_ key: StatsKey) -> Int? {
        guard count > 0 else { return nil }
        var i = home(key)
        while slots[i].used {
            if slots[i].key == key { return i }
            i = (i &+ 1) & mask
        }
        return nil
    }

    subscript(_ key: StatsKey) -> Int? {
        get { find(key).map { slots[$0].place } }
        set {
            if let place = newValue {
                precondition(place >= 0, "a run's place in its list")
                if let i = find(key) {
                    slots[i].place = place
                    return
                }
                if (count + 1) * 4 > slots.count * 3 { grow() }
                var i = home(key)
                while slots[i].used { i = (i &+ 1) & mask }
                slots[i] = Slot(key: key, place: place)
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
            guard slots[j].used else { break }
            let h = home(slots[j].key)
            // Entry j stays unless its home lies cyclically in (i, j].
            let stays = i <= j ? (i < h && h <= j) : (i < h || h <= j)
            if stays { continue }
            slots[i] = slots[j]
            i = j
        }
        slots[i] = Slot()
        count -= 1
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(), count: Swift.max(16, old.count * 2))
        count = 0
        for s in old where s.used { self[s.key] = s.place }
    }

    /// Every open run's key and place, in no particular order.
    var entries: [(id: StatsKey, at: Int)] {
        slots.compactMap { $0.used ? ($0.key, $0.place) : nil }
    }

    /// The first place a run is at (nil: none is open).
    var firstPlace: Int? {
        var first: Int?
        for s in slots where s.used { first = Swift.min(first ?? s.place, s.place) }
        return first
    }

    /// Every run's place changed by `change` (to a place in the list: not below zero).
    mutating func updatePlaces(_ change: (Int) -> Int) {
        for i in slots.indices where slots[i].used {
            slots[i].place = change(slots[i].place)
            precondition(slots[i].place >= 0, "a run's place in its list")
        }
    }
}

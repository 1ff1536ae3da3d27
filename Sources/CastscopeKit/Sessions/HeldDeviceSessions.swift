/// The device sessions of a bundle with relay lines, while the relay's sessions are made and
/// joined (issue 15: memory follows open sessions). The join needs every device session, so
/// before session 43 they were all held, lines and all, until the report was written: a
/// phone's 5,000 broadcasts beside their relay's journal took 68 MB for the sessions alone.
/// Each is now written to disk as it ends, and only what the join reads of it stays
/// (`DeviceJoinFacts`); once the clock offset and the pairs are known, they are read back one
/// at a time, in order, their relay sessions joined to them, and handed on as a bundle without
/// relay lines hands its sessions on. Held in memory when no temporary file can be made.
final class HeldDeviceSessions {
    private let spill = EventSpill()
    /// Where each session is: its record in the spill, or its place in `held`.
    private var places: [(chunk: EventSpill.Chunk?, held: Int)] = []
    private var held: [Session?] = []
    /// What the join reads of each, in the order they ended (the report's).
    private(set) var facts: [DeviceJoinFacts] = []
    /// A session of more lines and attempts than this stays in memory, as before: its record
    /// is encoded whole and read back whole, and a retry storm's 600,000 attempts made that
    /// twice the session's own memory (53 → 110 MB).
    static let heldAbove = 50_000

    var count: Int { facts.count }

    func add(_ s: Session) {
        facts.append(DeviceJoinFacts(s))
        if let spill, s.events.count + s.attempts.count <= Self.heldAbove {
            places.append((spill.write(session: s), -1))
        } else {
            places.append((nil, held.count))
            held.append(s)
        }
    }

    /// Session `i`, read back or handed over (each is asked for once).
    func take(_ i: Int) -> Session {
        if let chunk = places[i].chunk, let spill { return spill.readSession(chunk) }
        defer { held[places[i].held] = nil }
        return held[places[i].held]!
    }
}

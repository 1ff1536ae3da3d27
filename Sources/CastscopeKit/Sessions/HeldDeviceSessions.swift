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
    private var chunks: [EventSpill.Chunk] = []
    private var held: [Session] = []
    /// What the join reads of each, in the order they ended (the report's).
    private(set) var facts: [DeviceJoinFacts] = []

    var count: Int { facts.count }

    func add(_ s: Session) {
        facts.append(DeviceJoinFacts(s))
        if let spill { chunks.append(spill.write(session: s)) } else { held.append(s) }
    }

    /// Session `i`, read back (or handed over: each is asked for once).
    func take(_ i: Int) -> Session {
        guard let spill else { return held[i] }
        return spill.readSession(chunks[i])
    }
}

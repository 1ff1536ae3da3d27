/// Every relay session of a report, in the order of their first lines (issue 15: memory
/// follows open sessions). A relay fleet's journal has hundreds of thousands: those the relay
/// stage made are kept as where their record lies in its spill and the few facts the join
/// reads of every session (an `Entry`, 56 bytes), and read back one at a time when asked.
/// Sessions made in memory (`tail`, a machine with no temporary file, a test) are held.
public struct RelaySessionList: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable {
    /// A relay session written to the spill: where its record is, what the join and the order
    /// need of it.
    struct Entry: Sendable {
        /// Its record in `records`.
        var offset: Int64
        /// Its start and end (`RelaySession.start`, `.end`); `none` for nil.
        var start: Int64
        var end: Int64
        /// Its first line's place in the bundle's order (`RelayStage.Key`).
        var keyTime: Int64
        var keyOrder: Int64
        var length: Int32
        var keyFile: Int32
        /// The lines it stands for.
        var lines: Int32
        /// `startIsAccepted` … `hasClosedSource`.
        var flags: UInt8

        static let none = Int64.min
        static let startIsAccepted: UInt8 = 1, endIsClosed: UInt8 = 2, hasAcceptedSource: UInt8 = 4, hasClosedSource: UInt8 = 8
        /// `RelaySession.isServerCloseOnly`.
        static let serverCloseOnly: UInt8 = 16

        init(_ r: RelaySession, record: EventSpill.Chunk, key: RelayStage.Key, lines: Int) {
            offset = record.offset
            length = Int32(record.length)
            start = r.start ?? Self.none
            end = r.end ?? Self.none
            (keyTime, keyFile, keyOrder) = (key.time, Int32(truncatingIfNeeded: key.file), Int64(key.order))
            self.lines = Int32(clamping: lines)
            flags = (r.accepted != nil ? Self.startIsAccepted : 0) | (r.closed != nil ? Self.endIsClosed : 0)
                | (r.acceptedSource != nil ? Self.hasAcceptedSource : 0) | (r.closedSource != nil ? Self.hasClosedSource : 0)
                | (r.isServerCloseOnly ? Self.serverCloseOnly : 0)
        }

        var key: RelayStage.Key { RelayStage.Key(time: keyTime, file: Int(keyFile), order: Int(keyOrder)) }
        var record: EventSpill.Chunk { EventSpill.Chunk(offset: offset, length: Int(length), count: 0) }
    }

    /// What the join reads of a relay session (`RelayJoiner`), without reading it back.
    struct JoinFacts {
        var accepted: Int64?
        var closed: Int64?
        var start: Int64?
        var end: Int64?
        var hasAcceptedSource: Bool
        var hasClosedSource: Bool

        /// Its span as the join reads it (nil: no start).
        var span: (start: Int64, end: Int64?)? { start.map { ($0, end) } }
    }

    private var held: [RelaySession] = []
    private var entries: [Entry] = []
    /// Where the records and the lines are (nil: the sessions are held).
    private var spill: (records: EventSpill, lines: EventSpill)?
    /// The device session each joined one was joined to (by position; spilled sessions).
    private var deviceIds: [Int: String] = [:]
    /// The zone spilled sessions' lines are shown in.
    private var display = RelayDisplay.own

    public init(_ sessions: [RelaySession]) { held = sessions }
    public init(arrayLiteral sessions: RelaySession...) { held = sessions }

    init(entries: [Entry], records: EventSpill, lines: EventSpill, display: RelayDisplay) {
        self.entries = entries
        spill = (records, lines)
        self.display = display
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { spill == nil ? held.count : entries.count }

    public subscript(i: Int) -> RelaySession {
        guard let spill else { return held[i] }
        var r = RelaySession(record: entries[i].record, in: spill.records, lines: spill.lines)
        r.display = display
        r.applyDisplay()
        r.deviceSession = deviceIds[i]
        return r
    }

    /// The id of session `i` (read back alone).
    public func id(_ i: Int) -> String {
        guard let spill else { return held[i].id }
        return RelaySession.id(ofRecord: entries[i].record, in: spill.records)
    }

    /// The device session that session `i` was joined to (without reading it back).
    func deviceSession(at i: Int) -> String? { spill == nil ? held[i].deviceSession : deviceIds[i] }

    /// Whether session `i` was joined to a device session (without reading it back).
    public func isJoined(_ i: Int) -> Bool { deviceSession(at: i) != nil }

    /// The positions of the sessions joined to no device session, in order (4 bytes each: the
    /// orphan findings' run keeps them).
    public var orphanIndices: [Int32] { indices.compactMap { isJoined($0) ? nil : Int32($0) } }

    /// The orphans that are findings: not a streaming server's connection known only by its
    /// close (a player's, a reader's: mediamtx and nginx-rtmp close them with a publisher's
    /// words; one publish and one viewer made four warnings). They are still listed.
    public var orphanFindingIndices: [Int32] {
        orphanIndices.filter { i in !(spill == nil ? held[Int(i)].isServerCloseOnly : entries[Int(i)].flags & Entry.serverCloseOnly != 0) }
    }

    /// The sessions joined to no device session, read back one at a time.
    public var orphans: LazyMapSequence<[Int32], RelaySession> { orphanIndices.lazy.map { self[Int($0)] } }

    mutating func setDeviceSession(_ i: Int, _ id: String) {
        if spill == nil { held[i].deviceSession = id } else { deviceIds[i] = id }
    }

    func joinFacts(_ i: Int) -> JoinFacts {
        guard spill != nil else {
            let r = held[i]
            return JoinFacts(accepted: r.accepted, closed: r.closed, start: r.start, end: r.end,
                             hasAcceptedSource: r.acceptedSource != nil, hasClosedSource: r.closedSource != nil)
        }
        let e = entries[i]
        let start = e.start == Entry.none ? nil : e.start, end = e.end == Entry.none ? nil : e.end
        return JoinFacts(accepted: e.flags & Entry.startIsAccepted != 0 ? start : nil,
                         closed: e.flags & Entry.endIsClosed != 0 ? end : nil, start: start, end: end,
                         hasAcceptedSource: e.flags & Entry.hasAcceptedSource != 0,
                         hasClosedSource: e.flags & Entry.hasClosedSource != 0)
    }

    /// The earliest start of them all (without reading them back).
    var earliestStart: Int64? {
        var first: Int64?
        for i in indices { if let t = joinFacts(i).start { first = Swift.min(first ?? t, t) } }
        return first
    }

    /// Whether the sessions are held (false: read back from the spill one at a time).
    var holdsSessions: Bool { spill == nil }

    /// The sessions held (tail and tests, which join in memory).
    var heldSessions: [RelaySession] { spill == nil ? held : Array(self) }

    /// Only the sessions joined to a device session named in `ids`.
    func joined(to ids: Set<String>) -> RelaySessionList {
        let kept = indices.filter { deviceSession(at: $0).map(ids.contains) ?? false }
        var out = self
        if spill == nil {
            out.held = kept.map { held[$0] }
        } else {
            out.entries = kept.map { entries[$0] }
            out.deviceIds = [:]
            for (n, i) in kept.enumerated() { out.deviceIds[n] = deviceIds[i] }
        }
        return out
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lines outside any session (`AnalysisReport.unattached`), in time order. The first
/// `chunkSize` are held; past them, each full chunk is written to an unlinked temporary file
/// (`EventSpill`) and read back a chunk at a time by whatever reads them (the reports, the
/// rules, the ClickHouse rows), so that a day of host-app lines with no extension's among them
/// holds a chunk, not every line (issue 15: memory follows open sessions). A bundle with fewer
/// such lines (nearly all) never writes any.
public struct LinesOutside: Sequence, ExpressibleByArrayLiteral, Sendable {
    /// Tests make it small so that a small log's lines go to disk (`castscope` takes
    /// `CASTSCOPE_OUTSIDE_CHUNK_LINES` at its start: `useChunkSizeFromEnvironment`).
    nonisolated(unsafe) static var chunkSize = 4096

    public static func useChunkSizeFromEnvironment() {
        if let v = getenv("CASTSCOPE_OUTSIDE_CHUNK_LINES").flatMap({ Int(String(cString: $0)) }), v >= 1 { chunkSize = v }
    }
    /// What is on disk, and what is known of each chunk: made with the first chunk written
    /// (or the first line of a kind with no code), so that the empty list every session's own
    /// report carries is a few words.
    private final class Store: @unchecked Sendable {
        var spill: EventSpill?
        var spillFailed = false
        var chunks: [EventSpill.Chunk] = []
        /// The kinds in each chunk (`KindCode.bit`), so that a rule looking for a few kinds
        /// reads only the chunks that have them; and by name, for kinds with no code.
        var kindsIn: [UInt64] = []
        var namesIn: [Set<String>] = []
        var heldNames = Set<String>()
        var perChunk: Int
        init(perChunk: Int) { self.perChunk = perChunk }
        /// Another list's own (the spill file is shared: chunks are only ever added to it).
        func copy() -> Store {
            let c = Store(perChunk: perChunk)
            (c.spill, c.spillFailed, c.chunks, c.kindsIn, c.namesIn, c.heldNames) = (spill, spillFailed, chunks, kindsIn, namesIn, heldNames)
            return c
        }
    }
    private var store: Store?
    /// The lines not written out: all of them while they fit one chunk.
    private var held: [Event] = []
    private var heldKinds: UInt64 = 0
    public private(set) var count = 0

    public init() {}
    public init(arrayLiteral elements: Event...) { for e in elements { append(e) } }
    public init<S: Sequence>(_ events: S) where S.Element == Event { for e in events { append(e) } }
    init(chunkSize: Int) { store = Store(perChunk: Swift.max(1, chunkSize)) }
    init<S: Sequence>(chunkSize: Int, _ events: S) where S.Element == Event {
        self.init(chunkSize: chunkSize)
        for e in events { append(e) }
    }

    public var isEmpty: Bool { count == 0 }
    /// Whether some lines are on disk (tests).
    var spilled: Bool { !(store?.chunks.isEmpty ?? true) }
    private var chunks: [EventSpill.Chunk] { store?.chunks ?? [] }

    public mutating func append(_ e: Event) {
        if store != nil && !isKnownUniquelyReferenced(&store!) { store = store!.copy() }
        held.append(e)
        heldKinds |= e.code.bit
        count += 1
        if e.code == .other {
            if store == nil { store = Store(perChunk: Self.chunkSize) }
            store!.heldNames.insert(e.kind)
        }
        if held.count >= (store?.perChunk ?? Self.chunkSize) { writeOut() }
    }

    private mutating func writeOut() {
        if store == nil { store = Store(perChunk: Self.chunkSize) }
        let s = store!
        guard !s.spillFailed else { return }
        if s.spill == nil { s.spill = EventSpill() }
        guard let spill = s.spill else {
            // No temporary file: they stay in memory, as they always did.
            s.spillFailed = true
            return
        }
        s.chunks.append(spill.write(held))
        s.kindsIn.append(heldKinds)
        s.namesIn.append(s.heldNames)
        held.removeAll(keepingCapacity: true)
        heldKinds = 0
        s.heldNames = []
    }

    /// The lines a chunk at a time, in order, and whether it is the last.
    public func forEachChunk(_ body: ([Event], Bool) throws -> Void) rethrows {
        for (k, c) in chunks.enumerated() { try body(store!.spill!.read(c), k == chunks.count - 1 && held.isEmpty) }
        if !held.isEmpty || chunks.isEmpty { try body(held, true) }
    }

    /// Whether a line of kind `name` (one with no code) is among them; none is read.
    func has(kind name: String) -> Bool {
        assert(KindCode(name) == .other, "\(name) has a code: look it up by KindSet")
        guard let store else { return false }
        return store.heldNames.contains(name) || store.namesIn.contains { $0.contains(name) }
    }

    /// The lines of kind `name` (one with no code), in order; chunks without any are not read.
    func forEach(named name: String, _ body: (Event) throws -> Void) rethrows {
        assert(KindCode(name) == .other, "\(name) has a code: look it up by KindSet")
        guard let store else { return }
        for (k, c) in store.chunks.enumerated() where store.namesIn[k].contains(name) {
            for e in store.spill!.read(c) where e.kind == name { try body(e) }
        }
        if store.heldNames.contains(name) { for i in held.indices where held[i].kind == name { try body(held[i]) } }
    }

    public struct Iterator: IteratorProtocol {
        let lines: LinesOutside
        /// Only lines of these kinds (chunks without any are not read); nil: every line.
        let kinds: KindSet?
        var chunk = -1
        var current: [Event] = []
        var at = 0
        init(_ lines: LinesOutside, kinds: KindSet? = nil) {
            self.lines = lines
            self.kinds = kinds
        }
        /// Moves to the next chunk worth reading (the held lines last); false past them.
        private mutating func advance() -> Bool {
            let chunks = lines.chunks
            while chunk < chunks.count {
                chunk += 1
                at = 0
                if chunk < chunks.count {
                    if let kinds, lines.store!.kindsIn[chunk] & kinds.mask == 0 { continue }
                    current = lines.store!.spill!.read(chunks[chunk])
                } else {
                    if let kinds, lines.heldKinds & kinds.mask == 0 { return false }
                    current = lines.held
                }
                return true
            }
            return false
        }
        public mutating func next() -> Event? {
            while true {
                while at == current.count {
                    guard advance() else { return nil }
                }
                at += 1
                if let kinds, !kinds.contains(current[at - 1].code) { continue }
                return current[at - 1]
            }
        }
    }

    /// The lines of `kinds` (all when nil), in order, read as they are walked: chunks
    /// without any are not read (`first(where:)` reads up to the first).
    public struct Matching: Sequence {
        let lines: LinesOutside
        let kinds: KindSet?
        public func makeIterator() -> Iterator { Iterator(lines, kinds: kinds) }
    }

    func matching(_ kinds: KindSet?) -> Matching { Matching(lines: self, kinds: kinds) }

    public func makeIterator() -> Iterator { Iterator(self) }
    public var underestimatedCount: Int { count }
}

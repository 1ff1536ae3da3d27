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
    private var spill: EventSpill?
    private var spillFailed = false
    private var chunks: [EventSpill.Chunk] = []
    /// The kinds in each chunk (`KindCode.bit`), so that a rule looking for a few kinds reads
    /// only the chunks that have them; and in the lines held.
    private var kindsIn: [UInt64] = []
    private var heldKinds: UInt64 = 0
    /// The same by name, for kinds that have no code (`KindCode.other`).
    private var namesIn: [Set<String>] = []
    private var heldNames = Set<String>()
    /// The lines not written out: all of them while they fit one chunk.
    private var held: [Event] = []
    public private(set) var count = 0
    /// Lines per chunk written (tests make it small).
    private var perChunk = LinesOutside.chunkSize

    public init() {}
    public init(arrayLiteral elements: Event...) { for e in elements { append(e) } }
    public init<S: Sequence>(_ events: S) where S.Element == Event { for e in events { append(e) } }
    init(chunkSize: Int) { perChunk = Swift.max(1, chunkSize) }
    init<S: Sequence>(chunkSize: Int, _ events: S) where S.Element == Event {
        self.init(chunkSize: chunkSize)
        for e in events { append(e) }
    }

    public var isEmpty: Bool { count == 0 }
    /// Whether some lines are on disk (tests).
    var spilled: Bool { !chunks.isEmpty }

    public mutating func append(_ e: Event) {
        held.append(e)
        heldKinds |= e.code.bit
        if e.code == .other { heldNames.insert(e.kind) }
        count += 1
        if held.count >= perChunk && !spillFailed { writeOut() }
    }

    private mutating func writeOut() {
        if spill == nil { spill = EventSpill() }
        guard let spill else {
            // No temporary file: they stay in memory, as they always did.
            spillFailed = true
            return
        }
        chunks.append(spill.write(held))
        kindsIn.append(heldKinds)
        namesIn.append(heldNames)
        held.removeAll(keepingCapacity: true)
        heldKinds = 0
        heldNames = []
    }

    /// The lines a chunk at a time, in order, and whether it is the last.
    public func forEachChunk(_ body: ([Event], Bool) throws -> Void) rethrows {
        for (k, c) in chunks.enumerated() { try body(spill!.read(c), k == chunks.count - 1 && held.isEmpty) }
        if !held.isEmpty || chunks.isEmpty { try body(held, true) }
    }

    /// The lines of `kinds` (all lines when nil), in order; chunks without any are not read.
    func forEach(kinds: KindSet?, _ body: (Event) throws -> Void) rethrows {
        for (k, c) in chunks.enumerated() where kinds.map({ kindsIn[k] & $0.mask != 0 }) ?? true {
            for e in spill!.read(c) where kinds.map({ $0.contains(e.code) }) ?? true { try body(e) }
        }
        guard kinds.map({ heldKinds & $0.mask != 0 }) ?? true else { return }
        for i in held.indices where kinds.map({ $0.contains(held[i].code) }) ?? true { try body(held[i]) }
    }

    /// Whether a line of kind `name` (one with no code) is among them; none is read.
    func has(kind name: String) -> Bool {
        assert(KindCode(name) == .other, "\(name) has a code: look it up by KindSet")
        return heldNames.contains(name) || namesIn.contains { $0.contains(name) }
    }

    /// The lines of kind `name` (one with no code), in order.
    func lines(named name: String) -> [Event] {
        assert(KindCode(name) == .other, "\(name) has a code: look it up by KindSet")
        var out: [Event] = []
        for (k, c) in chunks.enumerated() where namesIn[k].contains(name) {
            for e in spill!.read(c) where e.kind == name { out.append(e) }
        }
        if heldNames.contains(name) { for i in held.indices where held[i].kind == name { out.append(held[i]) } }
        return out
    }

    /// The lines of `kinds`, in order.
    func lines(of kinds: KindSet) -> [Event] {
        var out: [Event] = []
        forEach(kinds: kinds) { out.append($0) }
        return out
    }

    public struct Iterator: IteratorProtocol {
        let lines: LinesOutside
        var chunk = 0
        var current: [Event]
        var at = 0
        init(_ lines: LinesOutside) {
            self.lines = lines
            current = lines.chunks.isEmpty ? lines.held : lines.spill!.read(lines.chunks[0])
        }
        public mutating func next() -> Event? {
            while at == current.count {
                guard chunk < lines.chunks.count else { return nil }
                chunk += 1
                at = 0
                current = chunk < lines.chunks.count ? lines.spill!.read(lines.chunks[chunk]) : lines.held
                if chunk == lines.chunks.count && current.isEmpty { return nil }
            }
            at += 1
            return current[at - 1]
        }
    }

    public func makeIterator() -> Iterator { Iterator(self) }
    public var underestimatedCount: Int { count }
}

import CCastscopeLZ4

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Apple Unified Logging tracev3 files, read from bytes: the header, catalogs (processes,
// subsystems), chunksets (LZ4 blocks) and the chunks inside them (firehose tracepoints,
// oversize, statedump, simpledump). Layout as described by libyal/dtformats' "Apple Unified
// Logging and Activity Tracing formats"; nothing here allocates per entry: an entry is handed
// to the caller as pointers into the decompressed chunkset, valid during the call.

@inline(__always) func ulU8(_ p: UnsafeRawPointer, _ o: Int) -> UInt8 { p.load(fromByteOffset: o, as: UInt8.self) }
@inline(__always) func ulU16(_ p: UnsafeRawPointer, _ o: Int) -> UInt16 {
    UInt16(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt16.self))
}
@inline(__always) func ulU32(_ p: UnsafeRawPointer, _ o: Int) -> UInt32 {
    UInt32(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt32.self))
}
@inline(__always) func ulU64(_ p: UnsafeRawPointer, _ o: Int) -> UInt64 {
    UInt64(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt64.self))
}
@inline(__always) func ulAlign8(_ n: Int) -> Int { (n + 7) & ~7 }

/// A UUID as stored (big-endian bytes), comparable and hashable without allocation.
public struct ULUUID: Hashable, Sendable, CustomStringConvertible {
    public var hi: UInt64
    public var lo: UInt64
    public init(hi: UInt64, lo: UInt64) { self.hi = hi; self.lo = lo }
    init(_ p: UnsafeRawPointer) {
        hi = UInt64(bigEndian: p.loadUnaligned(as: UInt64.self))
        lo = UInt64(bigEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }
    /// Parses 32 hex digits (dashes allowed), as uuidtext file names spell them.
    public init?(hex: String) {
        var v: [UInt64] = [0, 0]
        var n = 0
        for c in hex.utf8 where c != UInt8(ascii: "-") {
            let d: UInt8
            switch c {
            case 0x30...0x39: d = c - 0x30
            case 0x41...0x46: d = c - 0x37
            case 0x61...0x66: d = c - 0x57
            default: return nil
            }
            guard n < 32 else { return nil }
            v[n / 16] = v[n / 16] << 4 | UInt64(d)
            n += 1
        }
        guard n == 32 else { return nil }
        hi = v[0]
        lo = v[1]
    }
    /// Upper-case hex without dashes (the uuidtext file naming).
    public var hex: String {
        func h(_ x: UInt64) -> String {
            let s = String(x, radix: 16, uppercase: true)
            return String(repeating: "0", count: 16 - s.count) + s
        }
        return h(hi) + h(lo)
    }
    /// 8-4-4-4-12 form, as `log show` prints it.
    public var description: String {
        let s = Array(hex)
        return String(s[0..<8]) + "-" + String(s[8..<12]) + "-" + String(s[12..<16]) + "-" + String(s[16..<20]) + "-" + String(s[20..<32])
    }
    public static let zero = ULUUID(hi: 0, lo: 0)
}

/// The tracev3 file header (chunk 0x1000).
public struct TraceV3Header: Sendable {
    public var timebaseNumer: UInt32 = 1
    public var timebaseDenom: UInt32 = 1
    public var startTime: UInt64 = 0
    public var wallSeconds: Int64 = 0
    /// The field next to the wall-clock seconds, which holds its microseconds.
    public var wallMicros: UInt32 = 0
    public var timezoneMinutes: Int32 = 0
    public var dst: UInt32 = 0
    public var flags: UInt32 = 0
    /// The continuous time of the 0x6100 sub-chunk: the instant of the header's wall clock.
    public var continuousTime: UInt64 = 0
    public var build = ""
    public var hardwareModel = ""
    public var bootUUID = ULUUID.zero
    public var logdPID: UInt32 = 0
    public var timezonePath = ""
}

/// One process of a catalog: its ids, images and subsystems.
public struct ULProcess: Sendable {
    public var firstProcID: UInt64
    public var secondProcID: UInt32
    public var pid: Int32
    public var euid: UInt32
    public var mainUUID: ULUUID
    public var dscUUID: ULUUID?
    /// Images loaded in the process: UUID, load address, size (for absolute string references).
    public var images: [(uuid: ULUUID, load: UInt64, size: UInt32)] = []
    /// Subsystem id → (subsystem, category) offsets into the catalog's strings.
    public var subsystems: [(id: UInt16, subsystem: UInt16, category: UInt16)] = []
}

/// The catalog in force (a new catalog chunk replaces the previous one).
public final class TraceV3Catalog: @unchecked Sendable {
    public var uuids: [ULUUID] = []
    public var strings: [UInt8] = []
    public var processes: [ULProcess] = []
    var byProcID: [ProcKey: Int] = [:]

    struct ProcKey: Hashable {
        var first: UInt64
        var second: UInt32
    }

    func process(_ first: UInt64, _ second: UInt32) -> Int {
        byProcID[ProcKey(first: first, second: second)] ?? -1
    }

    /// The NUL-terminated string at `offset` of the subsystem strings.
    public func string(at offset: Int) -> String {
        guard offset >= 0, offset < strings.count else { return "" }
        var end = offset
        while end < strings.count && strings[end] != 0 { end += 1 }
        return String(decoding: strings[offset..<end], as: UTF8.self)
    }

    /// (subsystem, category) of a subsystem id in a process.
    public func subsystem(process: Int, id: UInt16) -> (String, String)? {
        guard process >= 0, process < processes.count,
            let s = processes[process].subsystems.first(where: { $0.id == id })
        else { return nil }
        return (string(at: Int(s.subsystem)), string(at: Int(s.category)))
    }

    init() {}

    /// Parses a catalog chunk's data; throws a message on a bound that does not hold.
    init(_ d: UnsafeRawPointer, _ n: Int) throws {
        guard n >= 24 else { throw TraceV3Problem(0, "catalog chunk of \(n) bytes is too short") }
        let stringsOff = Int(ulU16(d, 0))
        let procsOff = Int(ulU16(d, 2))
        let procCount = Int(ulU16(d, 4))
        let subchunksOff = Int(ulU16(d, 6))
        let base = 24
        guard stringsOff <= procsOff, procsOff <= subchunksOff, base + subchunksOff <= n else {
            throw TraceV3Problem(0, "catalog offsets out of bounds (strings \(stringsOff), processes \(procsOff), sub-chunks \(subchunksOff), size \(n))")
        }
        for i in 0..<(stringsOff / 16) { uuids.append(ULUUID(d + base + i * 16)) }
        strings = Array(UnsafeRawBufferPointer(start: d + base + stringsOff, count: procsOff - stringsOff))
        var p = base + procsOff
        let end = base + subchunksOff
        for _ in 0..<procCount {
            guard p + 48 <= end else { throw TraceV3Problem(p, "catalog process entry runs past the process section") }
            let mainIndex = Int(ulU16(d, p + 4))
            let dscIndex = Int(ulU16(d, p + 6))
            let uuidInfos = Int(ulU32(d, p + 32))
            var q = p + 40
            guard q + uuidInfos * 16 + 8 <= end else { throw TraceV3Problem(p, "catalog process entry's images run past the section") }
            var proc = ULProcess(
                firstProcID: ulU64(d, p + 8), secondProcID: ulU32(d, p + 16), pid: Int32(bitPattern: ulU32(d, p + 20)),
                euid: ulU32(d, p + 24), mainUUID: mainIndex < uuids.count ? uuids[mainIndex] : .zero,
                dscUUID: dscIndex != 0xFFFF && dscIndex < uuids.count ? uuids[dscIndex] : nil)
            for _ in 0..<uuidInfos {
                let idx = Int(ulU16(d, q + 8))
                let load = UInt64(ulU32(d, q + 10)) | UInt64(ulU16(d, q + 14)) << 32
                if idx < uuids.count { proc.images.append((uuids[idx], load, ulU32(d, q))) }
                q += 16
            }
            let subCount = Int(ulU32(d, q))
            q += 8
            guard q + subCount * 6 <= end else { throw TraceV3Problem(p, "catalog process entry's subsystems run past the section") }
            for _ in 0..<subCount {
                proc.subsystems.append((ulU16(d, q), ulU16(d, q + 2), ulU16(d, q + 4)))
                q += 6
            }
            q = p + ulAlign8(q - p)
            byProcID[ProcKey(first: proc.firstProcID, second: proc.secondProcID)] = processes.count
            processes.append(proc)
            p = q
        }
    }
}

/// A problem at a byte offset of the file (or of a decompressed chunkset, said in the text).
public struct TraceV3Problem: Error, CustomStringConvertible {
    public var offset: Int
    public var message: String
    public init(_ offset: Int, _ message: String) {
        self.offset = offset
        self.message = message
    }
    public var description: String { message }
}

/// One entry of a tracev3 file, as pointers into the current (decompressed) chunkset.
public struct TraceV3Entry {
    public enum Kind: UInt8, Sendable, CaseIterable {
        case log, activity, trace, signpost, loss, statedump, simpledump
    }
    /// How a tracepoint finds its format string (flags & 0x000E).
    public enum StringSource: UInt8, Sendable {
        case none = 0, mainExecutable = 2, sharedCache = 4, absolute = 8, uuidRelative = 10, largeSharedCache = 12
    }
    public var kind = Kind.log
    /// Apple's log type byte (0 default, 1 info, 2 debug, 0x10 error, 0x11 fault; signpost scopes).
    public var logType: UInt8 = 0
    public var flags: UInt16 = 0
    public var threadID: UInt64 = 0
    public var continuousTime: UInt64 = 0
    /// Index of the process in the catalog, -1 when the catalog has none for the chunk.
    public var process = -1
    public var formatLow: UInt32 = 0
    public var largeOffset: UInt16 = 0
    public var largeSharedCache: UInt16 = 0
    public var loadLow: UInt32 = 0
    public var loadHigh: UInt16 = 0
    public var uuidRelative: ULUUID?
    public var subsystemID: Int32 = -1
    public var activityID: UInt64 = 0
    public var signpostID: UInt64 = 0
    /// The data items (type, size, data…) and the values they point into.
    public var itemCount = 0
    public var items = UnsafeRawBufferPointer(start: nil, count: 0)
    public var values = UnsafeRawBufferPointer(start: nil, count: 0)
    public var privateData = UnsafeRawBufferPointer(start: nil, count: 0)
    /// Non-zero when the entry's data is in an oversize chunk.
    public var oversizeRef: UInt32 = 0
    /// The oversize chunk it references was not in the file.
    public var oversizeMissing = false
    /// Statedump title / simpledump message; statedump data (type 1 plist, 2 protobuf, 3 custom).
    public var text = UnsafeRawBufferPointer(start: nil, count: 0)
    public var subsystemText = UnsafeRawBufferPointer(start: nil, count: 0)
    public var stateData = UnsafeRawBufferPointer(start: nil, count: 0)
    public var stateType: UInt32 = 0
    public var senderUUID: ULUUID?
    public var lostCount: UInt64 = 0

    public var stringSource: StringSource { StringSource(rawValue: UInt8(flags & 0x0E)) ?? .none }
    /// The format string is "%s" with one dynamic argument.
    public var isDynamic: Bool { formatLow & 0x8000_0000 != 0 }
    /// The string reference, with its large-offset extension.
    public var formatReference: UInt64 {
        let low = UInt64(formatLow & 0x7FFF_FFFF)
        if largeSharedCache != 0 { return UInt64(largeSharedCache) << 31 | low }
        if largeOffset != 0 { return UInt64(largeOffset) << 31 | low }
        return low
    }
    /// The caller's address as the process knows it (for absolute references).
    public var loadAddress: UInt64 {
        stringSource == .absolute ? UInt64(loadHigh) << 32 | UInt64(loadLow) : UInt64(loadLow)
    }
}

/// What one pass over a tracev3 file saw.
public struct TraceV3Stats: Sendable, Equatable {
    public var headerChunks = 0
    public var catalogChunks = 0
    public var chunksets = 0
    public var lz4Blocks = 0
    public var storedBlocks = 0
    public var compressedBytes = 0
    public var decompressedBytes = 0
    public var firehoseChunks = 0
    public var oversizeChunks = 0
    public var statedumpChunks = 0
    public var simpledumpChunks = 0
    /// Chunksets not read (an unknown compression such as LZBITMAP), and the marker seen.
    public var skippedChunksets = 0
    public var skippedMarker: String?
    /// Chunks of a chunkset with a tag no chunkset holds (the first is said).
    public var unknownChunks = 0
    /// The skipped chunksets carry LZBITMAP's magic ("ZBM\x0c").
    public var skippedLZBitmap = false
    public var entries = [Int](repeating: 0, count: TraceV3Entry.Kind.allCases.count)
    /// Log entries by log type byte, and by string source (flags & 0x0E).
    var levelCounts = [Int](repeating: 0, count: 256)
    var sourceCounts = [Int](repeating: 0, count: 16)
    public var levels: [UInt8: Int] {
        var d: [UInt8: Int] = [:]
        for (i, n) in levelCounts.enumerated() where n > 0 { d[UInt8(i)] = n }
        return d
    }
    public var sources: [UInt8: Int] {
        var d: [UInt8: Int] = [:]
        for (i, n) in sourceCounts.enumerated() where n > 0 { d[UInt8(i)] = n }
        return d
    }
    public var oversizeReferences = 0
    public var oversizeMissing = 0
    public var lostMessages: UInt64 = 0
    public var withPrivateData = 0
    /// Every pid the file's catalogs name (some have no entry in the file).
    public var catalogPIDs = Set<Int32>()

    public func count(_ k: TraceV3Entry.Kind) -> Int { entries[Int(k.rawValue)] }

    /// Adds the counts of another part of the same file.
    public mutating func add(_ o: TraceV3Stats) {
        headerChunks += o.headerChunks
        catalogChunks += o.catalogChunks
        chunksets += o.chunksets
        lz4Blocks += o.lz4Blocks
        storedBlocks += o.storedBlocks
        compressedBytes += o.compressedBytes
        decompressedBytes += o.decompressedBytes
        firehoseChunks += o.firehoseChunks
        oversizeChunks += o.oversizeChunks
        statedumpChunks += o.statedumpChunks
        simpledumpChunks += o.simpledumpChunks
        skippedChunksets += o.skippedChunksets
        skippedMarker = skippedMarker ?? o.skippedMarker
        skippedLZBitmap = skippedLZBitmap || o.skippedLZBitmap
        for i in entries.indices { entries[i] += o.entries[i] }
        for i in levelCounts.indices { levelCounts[i] += o.levelCounts[i] }
        for i in sourceCounts.indices { sourceCounts[i] += o.sourceCounts[i] }
        oversizeReferences += o.oversizeReferences
        oversizeMissing += o.oversizeMissing
        lostMessages = TraceV3Reader.saturating(lostMessages, o.lostMessages)
        withPrivateData += o.withPrivateData
        catalogPIDs.formUnion(o.catalogPIDs)
    }
}

/// Reads one tracev3 file from memory.
public struct TraceV3Reader {
    public private(set) var header = TraceV3Header()
    public private(set) var stats = TraceV3Stats()
    public private(set) var problems: [TraceV3Problem] = []
    /// The catalog in force when the last entry was handed over.
    public private(set) var catalog = TraceV3Catalog()

    /// Set when the bytes are a read-only file mapping: the pages already read are released
    /// as the walk goes on, so a big file costs its chunkset buffer, not its size, in memory.
    public var releaseBehind = false

    public init() {}

    /// The header chunk alone (the first chunk of the file), when there is one.
    public static func header(of bytes: UnsafeRawBufferPointer) -> TraceV3Header? {
        guard let b = bytes.baseAddress, bytes.count >= 16, ulU32(b, 0) == 0x1000 else { return nil }
        let size = Int(min(ulU64(b, 8), UInt64(bytes.count - 16)))
        var r = TraceV3Reader()
        r.readHeader(b + 16, size)
        return r.header
    }

    /// Walks `bytes` (a whole tracev3 file), calling `body` for every entry.
    /// A stretch of a big file read on its own (by another core): chunks from `range`, with
    /// the catalog at `catalogOffset` in force at its start.
    public struct Part: Sendable {
        public var range: Range<Int>
        public var catalogOffset: Int?
    }

    /// Splits a file into about `count` parts at chunk starts (nil when it has fewer chunksets).
    public static func parts(of bytes: UnsafeRawBufferPointer, count: Int) -> [Part]? {
        guard let base = bytes.baseAddress else { return nil }
        return parts(size: bytes.count, count: count) { o in (ulU32(base, o), ulU64(base, o + 8)) }
    }

    /// The same from a file on disk, reading only the chunk headers (a mapping would bring
    /// the whole file into memory: the kernel maps pages around each one touched).
    public static func parts(path: String, count: Int) -> [Part]? {
        guard let fd = try? openRegularFile(path) else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        var head = [UInt8](repeating: 0, count: 16)
        return parts(size: Int(st.st_size), count: count) { o in
            let got = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, 16, off_t(o)) }
            guard got == 16 else { return (0, UInt64.max) }
            return head.withUnsafeBytes { (ulU32($0.baseAddress!, 0), ulU64($0.baseAddress!, 8)) }
        }
    }

    /// Whether `count` bytes at `p` are all zeros. `release`: the pages looked at are given back
    /// as it goes (a mapped file's: a sparse tracev3 of 10 GB, its hole read as zeros, held
    /// 10.5 GB at its end).
    static func zeros(_ p: UnsafeRawPointer, _ count: Int, release: Bool = false) -> Bool {
        var i = 0
        let page = release ? Int(sysconf(Int32(_SC_PAGESIZE))) : 0
        var released = 0
        while i + 8 <= count {
            if p.loadUnaligned(fromByteOffset: i, as: UInt64.self) != 0 { return false }
            i += 8
            if release, i - released >= 64 << 20 {
                // (from the first whole page in, up to the last whole page looked at)
                let start = (Int(bitPattern: p + released) + page - 1) / page * page
                let end = Int(bitPattern: p + i) / page * page
                if end > start { madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, MADV_DONTNEED) }
                released = i
            }
        }
        while i < count {
            if p.load(fromByteOffset: i, as: UInt8.self) != 0 { return false }
            i += 1
        }
        return true
    }

    /// After a chunk whose size runs past the file's end at `offset`: the next 8-byte aligned
    /// place that holds a chunkset's header (its tag, a size that fits, its data a compressed
    /// block's magic), nil when none does (the file was cut there). One damaged size lost every
    /// chunk after it (1.3 million of 2.6 million entries), the file said to be "truncated".
    static func resumeAt(_ offset: Int, _ n: Int, _ base: UnsafeRawPointer) -> Int? {
        var k = ulAlign8(offset + 8)
        while k + 20 <= n {
            if ulU32(base, k) == 0x600D, case let size = ulU64(base, k + 8), size >= 4, size <= UInt64(n - k - 16) {
                let m = ulU32(base, k + 16)
                if m == 0x3134_7662 || m == 0x2D34_7662 || m == 0x2434_7662 { return k }
            }
            k += 8
        }
        return nil
    }

    static func parts(size n: Int, count: Int, chunk: (Int) -> (UInt32, UInt64)) -> [Part]? {
        guard count > 1, n >= 16, chunk(0).0 == 0x1000 else { return nil }
        let target = n / count
        var parts: [Part] = []
        var start = 0
        var startCatalog: Int?
        var lastCatalog: Int?
        var offset = 0
        while offset + 16 <= n {
            let (tag, size64) = chunk(offset)
            // (a damaged size: the last part holds the rest, its reader reads on past it)
            guard size64 <= UInt64(n - offset - 16) else { break }
            // (zeros where a chunk should be: padding, which the reader reports; no part starts there)
            if tag == 0 && size64 == 0 { break }
            if tag == 0x600D && offset - start >= target && parts.count < count - 1 {
                parts.append(Part(range: start..<offset, catalogOffset: startCatalog))
                start = offset
                startCatalog = lastCatalog
            }
            if tag == 0x600B { lastCatalog = offset }
            offset = ulAlign8(offset + 16 + Int(size64))
        }
        parts.append(Part(range: start..<n, catalogOffset: startCatalog))
        return parts.count > 1 ? parts : nil
    }

    /// Entries of a part whose oversize chunk was not in it, and the part's oversize chunks:
    /// resolved by `resolveDeferred` once every part is read.
    var pending: [DeferredEntry] = []
    var oversizeChunks = OversizeStore()

    /// Hands over the entries the parts kept for their oversize chunks, with the chunks of all
    /// parts; returns how many were still missing.
    static func resolveDeferred(_ pending: [DeferredEntry], stores: [OversizeStore],
                                _ body: (inout TraceV3Entry, TraceV3Catalog) -> Void) -> Int {
        var all = OversizeStore()
        for s in stores { all.chunks.merge(s.chunks) { a, _ in a } }
        var missing = 0
        for var e in pending {
            e.entry.withBytes(oversize: all) { entry in
                if entry.oversizeMissing { missing += 1 }
                body(&entry, e.catalog)
            }
        }
        return missing
    }

    public mutating func read(_ bytes: UnsafeRawBufferPointer, _ body: (inout TraceV3Entry, TraceV3Catalog) -> Void) {
        read(bytes, part: nil, body)
    }

    /// Reads the whole file, or one part of it (see `parts`).
    public mutating func read(_ bytes: UnsafeRawBufferPointer, part: Part?, _ body: (inout TraceV3Entry, TraceV3Catalog) -> Void) {
        guard let base = bytes.baseAddress, bytes.count >= 16 else {
            problems.append(TraceV3Problem(0, "file of \(bytes.count) bytes has no tracev3 header"))
            return
        }
        guard ulU32(base, 0) == 0x1000 else {
            problems.append(TraceV3Problem(0, "not a tracev3 file (first chunk tag 0x\(String(ulU32(base, 0), radix: 16)), expected 0x1000)"))
            return
        }
        let buffer = ULBuffer()
        var oversize = OversizeStore()
        var deferred: [DeferredEntry] = []
        var offset = 0
        var released = 0
        var n = bytes.count
        if let part {
            // The header (for the clock) and the catalog in force; both counted by the part holding them.
            let hsize = Int(min(ulU64(base, 8), UInt64(n - 16)))
            readHeader(base + 16, hsize)
            if let c = part.catalogOffset, c + 16 <= n {
                let size = Int(min(ulU64(base, c + 8), UInt64(n - c - 16)))
                if let cat = try? TraceV3Catalog(base + c + 16, size) { catalog = cat }
            }
            offset = part.range.lowerBound
            released = (offset / 4096) * 4096
            n = part.range.upperBound
        }
        while offset + 16 <= n {
            let tag = ulU32(base, offset)
            let size64 = ulU64(base, offset + 8)
            guard size64 <= UInt64(n - offset - 16) else {
                if let next = Self.resumeAt(offset, n, base) {
                    problems.append(TraceV3Problem(offset, "chunk 0x\(String(tag, radix: 16)) of \(size64) bytes runs past the end of the file (a damaged size): read on from the next chunkset, at byte \(next)"))
                    offset = next
                    continue
                }
                problems.append(TraceV3Problem(offset, "chunk 0x\(String(tag, radix: 16)) of \(size64) bytes runs past the end of the file (truncated)"))
                break
            }
            let size = Int(size64)
            let d = base + offset + 16
            if tag == 0 && size == 0, Self.zeros(base + offset, n - offset, release: releaseBehind) {
                // Zero padding to the end (a copy cut short and padded, a file preallocated):
                // one line, not a walk of 16 bytes at a time (30 s per GB, and silent).
                problems.append(TraceV3Problem(offset, "\(n - offset) bytes of zeros to the end of the file: not log data"))
                break
            }
            switch tag {
            case 0x1000:
                stats.headerChunks += 1
                readHeader(d, size)
            case 0x600B:
                stats.catalogChunks += 1
                do {
                    catalog = try TraceV3Catalog(d, size)
                    for p in catalog.processes { stats.catalogPIDs.insert(p.pid) }
                } catch let p as TraceV3Problem {
                    problems.append(TraceV3Problem(offset + 16 + p.offset, "catalog: \(p.message)"))
                    catalog = TraceV3Catalog()
                } catch {}
            case 0x600D:
                stats.chunksets += 1
                if let data = decompress(d, size, at: offset + 16, into: buffer) {
                    walkChunkset(data, chunksetOffset: offset, oversize: &oversize, deferred: &deferred, body)
                }
            default:
                // (a file holds a header, catalogs and chunksets only: another tag is a damaged
                // one, whose entries, or whose catalog's processes, were lost without a word)
                problems.append(TraceV3Problem(offset, "chunk of unknown tag 0x\(String(tag, radix: 16)) (\(size) bytes; damaged?): skipped"))
            }
            offset = ulAlign8(offset + 16 + size)
            if releaseBehind && offset - released >= 8 << 20 {
                let page = Int(sysconf(Int32(_SC_PAGESIZE)))
                let upTo = (offset / page) * page
                if upTo > released {
                    madvise(UnsafeMutableRawPointer(mutating: base + released), upTo - released, MADV_DONTNEED)
                    released = upTo
                }
            }
        }
        if stats.skippedChunksets > 0 {
            let k = stats.skippedChunksets
            let what = stats.skippedLZBitmap ? "LZBITMAP compression (iOS/macOS 27, magic ZBM\\x0c)"
                : "an unknown compression (marker '\(stats.skippedMarker ?? "?")')"
            problems.append(TraceV3Problem(0, "\(k) chunkset\(k == 1 ? "" : "s") in \(what) not decoded: skipped"))
        }
        if part != nil {
            pending = deferred
            oversizeChunks = oversize
            return
        }
        // Entries whose oversize chunk came later in the file.
        for var e in deferred {
            e.entry.withBytes(oversize: oversize) { entry in
                if entry.oversizeMissing { stats.oversizeMissing += 1 }
                body(&entry, e.catalog)
            }
        }
    }

    private mutating func readHeader(_ d: UnsafeRawPointer, _ n: Int) {
        guard n >= 40 else { return }
        header.timebaseNumer = ulU32(d, 0)
        header.timebaseDenom = ulU32(d, 4)
        header.startTime = ulU64(d, 8)
        header.wallSeconds = Int64(Int32(bitPattern: ulU32(d, 16)))
        header.wallMicros = ulU32(d, 20)
        header.timezoneMinutes = Int32(bitPattern: ulU32(d, 28))
        header.dst = ulU32(d, 32)
        header.flags = ulU32(d, 36)
        func cString(_ p: UnsafeRawPointer, _ max: Int) -> String {
            let b = UnsafeRawBufferPointer(start: p, count: max)
            let end = b.firstIndex(of: 0) ?? max
            return String(decoding: b[0..<end], as: UTF8.self)
        }
        var o = 40
        while o + 8 <= n {
            let tag = ulU32(d, o)
            let len = Int(ulU32(d, o + 4))
            let s = o + 8
            guard s + len <= n else { break }
            switch tag {
            case 0x6100 where len >= 8: header.continuousTime = ulU64(d, s)
            case 0x6101 where len >= 56:
                header.build = cString(d + s + 8, 16)
                header.hardwareModel = cString(d + s + 24, 32)
            case 0x6102 where len >= 24:
                header.bootUUID = ULUUID(d + s)
                header.logdPID = ulU32(d, s + 16)
            case 0x6103 where len >= 1: header.timezonePath = cString(d + s, len)
            default: break
            }
            o = s + len
        }
    }

    /// What one chunkset may decompress to. logd writes chunksets of tens of KB; a file whose
    /// blocks add up past this is damaged or a bomb (a few MB of LZ4 would otherwise fill
    /// gigabytes).
    static let maxChunksetBytes = 16 << 20

    private mutating func oversized(_ offset: Int) -> UnsafeRawBufferPointer? {
        problems.append(TraceV3Problem(offset, "chunkset decompresses to over \(Self.maxChunksetBytes >> 20) MB: damaged, skipped"))
        return nil
    }

    /// The chunkset's chunks, decompressed (LZ4 "bv41" blocks, stored "bv4-" blocks) into
    /// `out` (reused, not zero-filled); valid until the next call.
    private mutating func decompress(_ d: UnsafeRawPointer, _ n: Int, at fileOffset: Int, into out: ULBuffer) -> UnsafeRawBufferPointer? {
        var o = 0
        var total = 0
        while o + 4 <= n {
            let marker = ulU32(d, o)
            switch marker {
            case 0x3134_7662:  // "bv41"
                // (`break` here would leave only the switch: the loop would spin on this marker.)
                guard o + 12 <= n else {
                    problems.append(TraceV3Problem(fileOffset + o, "LZ4 block header cut off by the end of its chunkset"))
                    return nil
                }
                let raw = Int(ulU32(d, o + 4))
                let comp = Int(ulU32(d, o + 8))
                guard o + 12 + comp <= n, raw < 1 << 28 else {
                    problems.append(TraceV3Problem(fileOffset + o, "LZ4 block of \(comp) bytes runs past its chunkset"))
                    return nil
                }
                guard total + raw <= Self.maxChunksetBytes else { return oversized(fileOffset + o) }
                out.reserve(max(1, total + raw))  // a block of 0 bytes still needs a buffer to point at
                let dict = out.base!
                let got = LZ4_decompress_safe_usingDict(
                    (d + o + 12).assumingMemoryBound(to: CChar.self),
                    (dict + total).assumingMemoryBound(to: CChar.self), Int32(comp), Int32(raw),
                    dict.assumingMemoryBound(to: CChar.self), Int32(total))
                guard got == Int32(raw) else {
                    problems.append(TraceV3Problem(fileOffset + o, "LZ4 block does not decompress (\(got) of \(raw) bytes)"))
                    return nil
                }
                stats.lz4Blocks += 1
                stats.compressedBytes += comp
                total += raw
                o += 12 + comp
            case 0x2D34_7662:  // "bv4-"
                guard o + 8 <= n else {
                    problems.append(TraceV3Problem(fileOffset + o, "stored block header cut off by the end of its chunkset"))
                    return nil
                }
                let raw = Int(ulU32(d, o + 4))
                guard o + 8 + raw <= n else {
                    problems.append(TraceV3Problem(fileOffset + o, "stored block of \(raw) bytes runs past its chunkset"))
                    return nil
                }
                guard total + raw <= Self.maxChunksetBytes else { return oversized(fileOffset + o) }
                out.reserve(max(1, total + raw))
                (out.base! + total).copyMemory(from: d + o + 8, byteCount: raw)
                stats.storedBlocks += 1
                total += raw
                o += 8 + raw
            case 0x2434_7662:  // "bv4$"
                stats.decompressedBytes += total
                return UnsafeRawBufferPointer(start: out.base, count: total)
            default:
                if total == 0 {
                    stats.skippedChunksets += 1
                    if marker == 0x0C4D_425A { stats.skippedLZBitmap = true }
                    if stats.skippedMarker == nil {
                        let b = UnsafeRawBufferPointer(start: d + o, count: 4)
                        stats.skippedMarker = String(decoding: b.map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: ".") }, as: UTF8.self)
                    }
                    return nil
                }
                stats.decompressedBytes += total
                return UnsafeRawBufferPointer(start: out.base, count: total)
            }
        }
        stats.decompressedBytes += total
        return total > 0 ? UnsafeRawBufferPointer(start: out.base, count: total) : nil
    }

    private mutating func walkChunkset(_ buf: UnsafeRawBufferPointer, chunksetOffset: Int, oversize: inout OversizeStore,
                                       deferred: inout [DeferredEntry], _ body: (inout TraceV3Entry, TraceV3Catalog) -> Void)
    {
        guard let b = buf.baseAddress else { return }
        let n = buf.count
        // Oversize chunks first: a log entry may precede the chunk holding its data.
        var o = 0
        while o + 16 <= n {
            let tag = ulU32(b, o)
            let size = Int(min(ulU64(b, o + 8), UInt64(n - o - 16)))
            if tag == 0x6002, size >= 34 {
                oversize.add(b + o + 16, size)
            }
            o = ulAlign8(o + 16 + size)
        }
        o = 0
        while o + 16 <= n {
            let tag = ulU32(b, o)
            let size64 = ulU64(b, o + 8)
            guard size64 <= UInt64(n - o - 16) else {
                problems.append(TraceV3Problem(chunksetOffset, "chunkset at byte offset \(chunksetOffset): chunk 0x\(String(tag, radix: 16)) at decompressed offset \(o) runs past the chunkset"))
                break
            }
            let size = Int(size64)
            let d = b + o + 16
            switch tag {
            case 0x6001:
                stats.firehoseChunks += 1
                firehose(d, size, oversize: oversize, deferred: &deferred, body)
            case 0x6002:
                stats.oversizeChunks += 1
            case 0x6003:
                stats.statedumpChunks += 1
                statedump(d, size, body)
            case 0x6004:
                stats.simpledumpChunks += 1
                simpledump(d, size, body)
            default:
                // (no chunk of a chunkset has another tag: damage, its entries lost, and said)
                stats.unknownChunks += 1
                if stats.unknownChunks == 1 {
                    problems.append(TraceV3Problem(chunksetOffset, "chunkset at byte offset \(chunksetOffset): chunk of unknown tag 0x\(String(tag, radix: 16)) at decompressed offset \(o): skipped (damaged?)"))
                }
            }
            o = ulAlign8(o + 16 + size)
        }
    }

    static func saturating(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    private mutating func count(_ e: TraceV3Entry) {
        stats.entries[Int(e.kind.rawValue)] += 1
        if e.kind == .log {
            stats.levelCounts[Int(e.logType)] += 1
            stats.sourceCounts[Int(e.flags & 0x0E)] += 1
        }
        // A loss record's count is read from the file: saturate instead of trapping on overflow.
        if e.kind == .loss { stats.lostMessages = Self.saturating(stats.lostMessages, e.lostCount) }
        if e.privateData.count > 0 { stats.withPrivateData += 1 }
    }

    private mutating func firehose(_ d: UnsafeRawPointer, _ n: Int, oversize: OversizeStore, deferred: inout [DeferredEntry],
                                   _ body: (inout TraceV3Entry, TraceV3Catalog) -> Void)
    {
        guard n >= 32 else { return }
        let proc = catalog.process(ulU64(d, 0), ulU32(d, 8))
        let publicSize = Int(ulU16(d, 16))
        let privateVirtual = Int(ulU16(d, 18))
        let baseTime = ulU64(d, 24)
        let publicEnd = min(n, 16 + publicSize)
        var privateData = UnsafeRawBufferPointer(start: nil, count: 0)
        if privateVirtual < 0x1000 {
            let size = 0x1000 - privateVirtual
            if size <= n - publicEnd { privateData = UnsafeRawBufferPointer(start: d + n - size, count: size) }
        }
        var t = 32
        while t + 24 <= publicEnd {
            let recordType = ulU8(d, t)
            if recordType == 0 { break }
            let dataSize = Int(ulU16(d, t + 22))
            guard t + 24 + dataSize <= publicEnd else {
                problems.append(TraceV3Problem(0, "firehose tracepoint of \(dataSize) bytes runs past its chunk"))
                break
            }
            var e = TraceV3Entry()
            e.logType = ulU8(d, t + 1)
            e.flags = ulU16(d, t + 2)
            e.formatLow = ulU32(d, t + 4)
            e.threadID = ulU64(d, t + 8)
            e.continuousTime = baseTime &+ (UInt64(ulU32(d, t + 16)) | UInt64(ulU16(d, t + 20)) << 32)
            e.process = proc
            e.privateData = privateData
            let p = d + t + 24
            var known = true
            switch recordType {
            case 4: e.kind = .log; known = Self.parseLog(&e, p, dataSize, signpost: false)
            case 6: e.kind = .signpost; known = Self.parseLog(&e, p, dataSize, signpost: true)
            case 2: e.kind = .activity; known = Self.parseActivity(&e, p, dataSize)
            case 3:
                e.kind = .trace
                if dataSize >= 4 { e.loadLow = ulU32(p, 0) }
            case 7:
                e.kind = .loss
                if dataSize >= 24 { e.lostCount = ulU64(p, 16) }
            default: known = false
            }
            if known {
                if e.oversizeRef != 0 {
                    stats.oversizeReferences += 1
                    if !oversize.has(catalogKey(proc), e.oversizeRef) {
                        // Kept until the end of the file, when every oversize chunk is known.
                        count(e)
                        deferred.append(DeferredEntry(entry: StoredEntry(e, key: catalogKey(proc)), catalog: catalog))
                        t = 32 + ulAlign8(t - 32 + 24 + dataSize)
                        continue
                    }
                    let key = catalogKey(proc)
                    count(e)
                    oversize.apply(&e, key: key) { body(&$0, catalog) }
                } else {
                    count(e)
                    body(&e, catalog)
                }
            }
            t = 32 + ulAlign8(t - 32 + 24 + dataSize)
        }
    }

    private func catalogKey(_ proc: Int) -> TraceV3Catalog.ProcKey {
        proc >= 0 ? TraceV3Catalog.ProcKey(first: catalog.processes[proc].firstProcID, second: catalog.processes[proc].secondProcID)
            : TraceV3Catalog.ProcKey(first: 0, second: 0)
    }

    /// Log and signpost tracepoint data; false when it does not fit its size.
    private static func parseLog(_ e: inout TraceV3Entry, _ p: UnsafeRawPointer, _ n: Int, signpost: Bool) -> Bool {
        var o = 0
        let f = e.flags
        func need(_ k: Int) -> Bool { o + k <= n }
        if f & 0x0001 != 0 { guard need(8) else { return false }; e.activityID = ulU64(p, o); o += 8 }
        var privateRange: (Int, Int)?
        if f & 0x0100 != 0 { guard need(4) else { return false }; privateRange = (Int(ulU16(p, o)), Int(ulU16(p, o + 2))); o += 4 }
        guard need(4) else { return false }
        e.loadLow = ulU32(p, o)
        o += 4
        if f & 0x0020 != 0 { guard need(2) else { return false }; e.largeOffset = ulU16(p, o); o += 2 }
        switch f & 0x0E {
        case 0x08: guard need(2) else { return false }; e.loadHigh = ulU16(p, o); o += 2
        case 0x0A: guard need(16) else { return false }; e.uuidRelative = ULUUID(p + o); o += 16
        case 0x0C: guard need(2) else { return false }; e.largeSharedCache = ulU16(p, o); o += 2
        default: break
        }
        if f & 0x0200 != 0 { guard need(2) else { return false }; e.subsystemID = Int32(ulU16(p, o)); o += 2 }
        if signpost { guard need(8) else { return false }; e.signpostID = ulU64(p, o); o += 8 }
        if f & 0x0400 != 0 { guard need(1) else { return false }; o += 1 }
        if f & 0x0800 != 0 { guard need(2) else { return false }; e.oversizeRef = UInt32(ulU16(p, o)); o += 2 }
        if signpost && f & 0x8000 != 0 {
            guard need(4) else { return false }
            o += 4
            if f & 0x0020 != 0 { guard need(2) else { return false }; o += 2 }
        }
        if let (off, size) = privateRange, let pd = e.privateData.baseAddress {
            // The range's offset is virtual (0x1000-based): the private data sits at the chunk's end.
            let start = off - (0x1000 - e.privateData.count)
            if start >= 0, start + size <= e.privateData.count {
                e.privateData = UnsafeRawBufferPointer(start: pd + start, count: size)
            }
        } else {
            e.privateData = UnsafeRawBufferPointer(start: nil, count: 0)
        }
        guard need(2) else { return true }
        e.itemCount = Int(ulU8(p, o + 1))
        o += 2
        let itemsStart = o
        for _ in 0..<e.itemCount {
            guard need(2) else { return false }
            o += 2 + Int(ulU8(p, o + 1))
        }
        guard o <= n else { return false }
        e.items = UnsafeRawBufferPointer(start: p + itemsStart, count: o - itemsStart)
        e.values = UnsafeRawBufferPointer(start: p + o, count: n - o)
        return true
    }

    private static func parseActivity(_ e: inout TraceV3Entry, _ p: UnsafeRawPointer, _ n: Int) -> Bool {
        var o = 0
        let f = e.flags
        if f & 0x0001 != 0 { o += 8 }
        if f & 0x0010 != 0 { o += 8 }
        if f & 0x0200 != 0 { o += 8 }
        if e.logType != 3 { guard o + 8 <= n else { return false }; e.activityID = ulU64(p, o); o += 8 }
        guard o + 4 <= n else { return false }
        e.loadLow = ulU32(p, o)
        o += 4
        if f & 0x0020 != 0, o + 2 <= n { e.largeOffset = ulU16(p, o); o += 2 }
        switch f & 0x0E {
        case 0x08 where o + 2 <= n: e.loadHigh = ulU16(p, o)
        case 0x0A where o + 16 <= n: e.uuidRelative = ULUUID(p + o)
        case 0x0C where o + 2 <= n: e.largeSharedCache = ulU16(p, o)
        default: break
        }
        return true
    }

    private mutating func statedump(_ d: UnsafeRawPointer, _ n: Int, _ body: (inout TraceV3Entry, TraceV3Catalog) -> Void) {
        guard n >= 248 else { return }
        var e = TraceV3Entry()
        e.kind = .statedump
        e.process = catalog.process(ulU64(d, 0), ulU32(d, 8))
        e.continuousTime = ulU64(d, 16)
        e.activityID = ulU64(d, 24)
        e.senderUUID = ULUUID(d + 32)
        e.stateType = ulU32(d, 48)
        let size = Int(ulU32(d, 52))
        let title = UnsafeRawBufferPointer(start: d + 184, count: 64)
        e.text = UnsafeRawBufferPointer(rebasing: title[0..<(title.firstIndex(of: 0) ?? 64)])
        e.stateData = UnsafeRawBufferPointer(start: d + 248, count: min(size, n - 248))
        count(e)
        body(&e, catalog)
    }

    private mutating func simpledump(_ d: UnsafeRawPointer, _ n: Int, _ body: (inout TraceV3Entry, TraceV3Catalog) -> Void) {
        guard n >= 84 else { return }
        var e = TraceV3Entry()
        e.kind = .simpledump
        e.process = catalog.process(ulU64(d, 0), ulU32(d, 8))
        e.logType = ulU8(d, 13)
        e.continuousTime = ulU64(d, 16)
        e.threadID = ulU64(d, 24)
        e.loadLow = UInt32(truncatingIfNeeded: ulU64(d, 32))
        e.senderUUID = ULUUID(d + 40)
        let subSize = Int(ulU32(d, 76))
        let msgSize = Int(ulU32(d, 80))
        guard 84 + subSize + msgSize <= n else { return }
        func trimmed(_ p: UnsafeRawPointer, _ k: Int) -> UnsafeRawBufferPointer {
            let b = UnsafeRawBufferPointer(start: p, count: k)
            return UnsafeRawBufferPointer(rebasing: b[0..<(b.firstIndex(of: 0) ?? k)])
        }
        e.subsystemText = trimmed(d + 84, subSize)
        e.text = trimmed(d + 84 + subSize, msgSize)
        count(e)
        body(&e, catalog)
    }
}

/// A growable byte buffer that keeps its contents when it grows (LZ4 blocks may refer back).
final class ULBuffer {
    private(set) var base: UnsafeMutableRawPointer?
    private(set) var capacity = 0
    func reserve(_ n: Int) {
        guard n > capacity else { return }
        let c = max(n, capacity * 2, 1 << 16)
        let p = UnsafeMutableRawPointer.allocate(byteCount: c, alignment: 16)
        if let base {
            p.copyMemory(from: base, byteCount: capacity)
            base.deallocate()
        }
        base = p
        capacity = c
    }
    deinit { base?.deallocate() }
}

/// Oversize chunks of one file, copied (they are few): (process, reference) → items and values.
struct OversizeStore {
    struct Key: Hashable {
        var proc: TraceV3Catalog.ProcKey
        var ref: UInt32
    }
    struct Data {
        var itemCount: Int
        var items: [UInt8]
        var values: [UInt8]
        var privateData: [UInt8]
    }
    var chunks: [Key: Data] = [:]

    mutating func add(_ d: UnsafeRawPointer, _ n: Int) {
        let key = Key(proc: .init(first: ulU64(d, 0), second: ulU32(d, 8)), ref: ulU32(d, 24))
        let dataSize = Int(ulU16(d, 28))
        let privSize = Int(ulU16(d, 30))
        guard 32 + dataSize <= n, dataSize >= 2 else { return }
        let itemCount = Int(ulU8(d, 33))
        var o = 34
        for _ in 0..<itemCount {
            guard o + 2 <= 32 + dataSize else { return }
            o += 2 + Int(ulU8(d, o + 1))
        }
        guard o <= 32 + dataSize else { return }
        let priv = min(privSize, n - 32 - dataSize)
        chunks[key] = Data(itemCount: itemCount, items: Array(UnsafeRawBufferPointer(start: d + 34, count: o - 34)),
                           values: Array(UnsafeRawBufferPointer(start: d + o, count: 32 + dataSize - o)),
                           privateData: Array(UnsafeRawBufferPointer(start: d + 32 + dataSize, count: priv)))
    }

    func has(_ proc: TraceV3Catalog.ProcKey, _ ref: UInt32) -> Bool { chunks[Key(proc: proc, ref: ref)] != nil }

    /// Calls `body` with the entry's items taken from its oversize chunk (or marked missing).
    func apply(_ e: inout TraceV3Entry, key: TraceV3Catalog.ProcKey, _ body: (inout TraceV3Entry) -> Void) {
        guard let c = chunks[Key(proc: key, ref: e.oversizeRef)] else {
            e.oversizeMissing = true
            body(&e)
            return
        }
        c.items.withUnsafeBytes { items in
            c.values.withUnsafeBytes { values in
                c.privateData.withUnsafeBytes { priv in
                    e.itemCount = c.itemCount
                    e.items = items
                    e.values = values
                    if priv.count > 0 { e.privateData = priv }
                    body(&e)
                }
            }
        }
    }
}

/// An entry kept past its chunkset (its oversize chunk comes later): its own copies of the bytes.
struct StoredEntry {
    var entry: TraceV3Entry
    var key: TraceV3Catalog.ProcKey
    var items: [UInt8]
    var values: [UInt8]
    var privateData: [UInt8]

    init(_ e: TraceV3Entry, key: TraceV3Catalog.ProcKey) {
        entry = e
        self.key = key
        items = Array(e.items)
        values = Array(e.values)
        privateData = Array(e.privateData)
    }

    mutating func withBytes(oversize: OversizeStore, _ body: (inout TraceV3Entry) -> Void) {
        var e = entry
        let k = key
        items.withUnsafeBytes { i in
            values.withUnsafeBytes { v in
                privateData.withUnsafeBytes { p in
                    e.items = i
                    e.values = v
                    e.privateData = p
                    oversize.apply(&e, key: k, body)
                }
            }
        }
    }
}

struct DeferredEntry {
    var entry: StoredEntry
    var catalog: TraceV3Catalog
}

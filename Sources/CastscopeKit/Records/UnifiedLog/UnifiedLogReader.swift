#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The timesync database of an archive (`timesync/*.timesync`): per boot, the timebase, the
/// boot's wall time and the (continuous time, wall time) sync points.
public struct ULTimesync: Sendable {
    public struct Boot: Sendable {
        public var numer: UInt32
        public var denom: UInt32
        public var bootWallNanos: Int64
        public var syncs: [(ct: UInt64, wall: Int64)] = []
    }
    public var boots: [ULUUID: Boot] = [:]
    public var problems: [InputError] = []

    public init() {}

    /// Adds one timesync file's records.
    public mutating func add(_ data: [UInt8], path: String) {
        data.withUnsafeBytes { raw in
            guard let b = raw.baseAddress else { return }
            var o = 0
            var current: ULUUID?
            while o + 4 <= raw.count {
                let sig = ulU16(b, o)
                let size = Int(ulU16(b, o + 2))
                guard size >= 4, o + size <= raw.count else {
                    problems.append(InputError(path: path, offset: UInt64(o), "timesync record of \(size) bytes runs past the end of the file"))
                    return
                }
                if sig == 0xBBB0, size >= 48 {
                    let uuid = ULUUID(b + o + 8)
                    let boot = Boot(numer: ulU32(b, o + 24), denom: ulU32(b, o + 28), bootWallNanos: Int64(bitPattern: ulU64(b, o + 32)))
                    if let why = Self.damage(boot) {
                        // (its times would land in 1677 or 2262: the files' headers date them instead)
                        problems.append(InputError(path: path, offset: UInt64(o), "timesync boot record \(why): not used"))
                        current = nil
                    } else {
                        boots[uuid] = boot
                        current = uuid
                    }
                } else if sig == 0x7354, size >= 32, let c = current {  // "Ts"
                    let wall = Int64(bitPattern: ulU64(b, o + 16))
                    if Self.plausible(wall) {
                        boots[c]!.syncs.append((ulU64(b, o + 8), wall))
                    } else {
                        problems.append(InputError(path: path, offset: UInt64(o), "timesync point with a wall time \(wall) ns from 1970: not used"))
                    }
                } else if sig != 0x7354 && sig != 0xBBB0 {
                    problems.append(InputError(path: path, offset: UInt64(o), "unknown timesync record signature 0x\(String(sig, radix: 16))"))
                    return
                }
                o += size
            }
        }
        for k in boots.keys { boots[k]!.syncs.sort { $0.ct < $1.ct } }
    }

    /// What makes a boot record's numbers no clock's: a timebase with a zero or a ratio no
    /// machine has (Apple's are 1/1 and 125/3), a boot before 1990 or after 2200.
    static func damage(_ boot: Boot) -> String? {
        let (n, d) = (UInt64(boot.numer), UInt64(boot.denom))
        if n == 0 || d == 0 || n > 1000 * d || d > 1000 * n { return "with the timebase \(n)/\(d)" }
        if !plausible(boot.bootWallNanos) { return "with a boot time \(boot.bootWallNanos) ns from 1970" }
        return nil
    }

    /// A wall time after 1990 and before 2200.
    static func plausible(_ wallNanos: Int64) -> Bool {
        let year = 365 * 86_400 * Int64(1_000_000_000)
        return wallNanos >= 20 * year && wallNanos <= 230 * year
    }
}

/// Continuous time → wall time (ns since the epoch) for one tracev3 file.
public struct ULClock: Sendable {
    var numer: UInt64
    var denom: UInt64
    var baseCT: UInt64
    var baseWall: Int64
    var syncs: [(ct: UInt64, wall: Int64)] = []
    /// Whether a timesync boot record matched the file (else the header rule).
    public var fromTimesync = false

    /// The header rule: the header's wall clock (seconds and microseconds) is the wall time at
    /// the continuous time of its 0x6100 sub-chunk (see the reference README; the published
    /// "header wall clock + ct × timebase" is weeks off).
    public init(header h: TraceV3Header, timesync: ULTimesync?) {
        numer = UInt64(max(1, h.timebaseNumer))
        denom = UInt64(max(1, h.timebaseDenom))
        baseCT = h.continuousTime
        // Read from the file: a damaged header must not trap (the times are then garbage, and
        // say so by where they land, not by a crash).
        baseWall = h.wallSeconds &* 1_000_000_000 &+ Int64(truncatingIfNeeded: h.wallMicros) &* 1000
        if let boot = timesync?.boots[h.bootUUID] {
            fromTimesync = true
            numer = UInt64(max(1, boot.numer))
            denom = UInt64(max(1, boot.denom))
            syncs = boot.syncs
            baseCT = 0
            baseWall = boot.bootWallNanos
        }
    }

    public func wallNanos(_ ct: UInt64) -> Int64 {
        var bct = baseCT
        var bw = baseWall
        if !syncs.isEmpty {
            var lo = 0
            var hi = syncs.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if syncs[mid].ct <= ct { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 {
                bct = syncs[lo - 1].ct
                bw = syncs[lo - 1].wall
            }
        }
        if ct >= bct {
            return bw &+ Int64(truncatingIfNeeded: (ct - bct).multipliedFullWidth(by: numer).low / denom)
        }
        return bw &- Int64(truncatingIfNeeded: (bct - ct).multipliedFullWidth(by: numer).low / denom)
    }
}

/// Apple's names of entry types as `log show` prints them.
public func ulMessageType(_ e: TraceV3Entry) -> StaticString {
    switch e.kind {
    case .log, .simpledump:
        switch e.logType {
        case 0x01: return "Info"
        case 0x02: return "Debug"
        case 0x10: return "Error"
        case 0x11: return "Fault"
        default: return "Default"
        }
    case .statedump: return "State"
    case .activity: return "Activity"
    case .signpost: return "Signpost"
    case .trace: return "Trace"
    case .loss: return "Loss"
    }
}

/// One rendered entry: bytes valid during the call.
public struct ULRecord {
    public var entry: TraceV3Entry
    public var wallNanos: Int64
    public var pid: Int32
    public var euid: UInt32
    public var message: UnsafeRawBufferPointer
    public var format: UnsafeRawBufferPointer?
    public var subsystem: UnsafeRawBufferPointer
    public var category: UnsafeRawBufferPointer
    public var processPath: String?
    var resolved: ULStringStore.Resolved
    public var senderPath: String? { resolved.senderPath }
    public var formatMissing: Bool
    /// The entry's number in the file (1-based, in file order), cited as its "line".
    public var index: Int
}

/// What reading one tracev3 file gave.
public struct ULFileSummary: @unchecked Sendable {
    /// A part's entries waiting for an oversize chunk of another part, and its oversize chunks.
    var pending: [DeferredEntry] = []
    var oversize = OversizeStore()
    public var stats = TraceV3Stats()
    public var problems: [TraceV3Problem] = []
    public var header = TraceV3Header()
    /// Log entries whose format string was not in the archive (rendered as their arguments).
    public var formatMissing = 0
    public var rendered = 0
    public var fromTimesync = false
}

/// Reads tracev3 files of one archive into rendered records.
public final class UnifiedLogReader: @unchecked Sendable {
    public let strings: ULStringStore
    public let timesync: ULTimesync

    public init(strings: ULStringStore, timesync: ULTimesync) {
        self.strings = strings
        self.timesync = timesync
    }

    /// A logarchive folder (or a folder holding tracev3 files): its string files and timesync.
    public convenience init(root: String?) {
        var ts = ULTimesync()
        if let root, let dir = opendir(root + "/timesync") {
            var names: [String] = []
            while let ent = readdir(dir) {
                let name = withUnsafeBytes(of: ent.pointee.d_name) { String(cString: $0.baseAddress!.assumingMemoryBound(to: CChar.self)) }
                if name.hasSuffix(".timesync") { names.append(name) }
            }
            closedir(dir)
            for name in names.sorted() {
                let path = root + "/timesync/" + name
                do { ts.add(try ulReadFile(path), path: path) } catch let e as InputError { ts.problems.append(e) } catch {}
            }
        }
        self.init(strings: ULStringStore(root: root), timesync: ts)
    }

    /// Reads one tracev3 file's bytes. `wants` sees the message bytes first (a prefilter): only
    /// records it accepts are handed to `body` — nothing else is made per entry.
    /// `mapped`: the bytes are a read-only file mapping whose pages may be released once read.
    public func read(_ bytes: UnsafeRawBufferPointer, mapped: Bool = false, part: TraceV3Reader.Part? = nil,
                     wants: ((UnsafeRawBufferPointer) -> Bool)? = nil, _ body: (inout ULRecord) -> Void) -> ULFileSummary
    {
        var summary = ULFileSummary()
        var reader = TraceV3Reader()
        reader.releaseBehind = mapped
        // What the per-entry closure needs that is not plain data lives in one object reached
        // without reference counting (captured arrays and classes cost a retain per entry).
        let state = ULReadState(strings: strings,
                                clock: ULClock(header: TraceV3Reader.header(of: bytes) ?? TraceV3Header(), timesync: timesync))
        let ref = Unmanaged.passUnretained(state)
        reader.read(bytes, part: part) { e, catalog in
            ref._withUnsafeGuaranteedRef { st in st.handle(&e, catalog, wants, body) }
        }
        summary.formatMissing = state.formatMissing
        summary.rendered = state.rendered
        summary.fromTimesync = state.clock.fromTimesync
        summary.stats = reader.stats
        summary.problems = reader.problems
        // A header whose wall clock is zeroed (or no clock's) dates every entry in 1970 or
        // past 2200 when no timesync boot matches it: said once, by the file's first part.
        if !state.clock.fromTimesync, !ULTimesync.plausible(state.clock.baseWall), summary.rendered > 0, (part?.range.lowerBound ?? 0) == 0 {
            summary.problems.append(TraceV3Problem(0, "the header's wall clock is \(state.clock.baseWall == 0 ? "zero" : "no clock's (\(state.clock.baseWall) ns from 1970)") and no timesync boot matches the file: its entries' times are wrong"))
        }
        // (and one whose timebase or microseconds are no clock's: a zero numerator squeezed two
        // days into 24 minutes, 2^32 − 1 spread them from 1837 to 2215, without a word)
        if !state.clock.fromTimesync, summary.rendered > 0, (part?.range.lowerBound ?? 0) == 0 {
            let h = reader.header
            let (n, d) = (UInt64(h.timebaseNumer), UInt64(h.timebaseDenom))
            if n == 0 || d == 0 || n > 1000 * d || d > 1000 * n {
                summary.problems.append(TraceV3Problem(16, "the header's timebase \(n)/\(d) is no clock's (Apple's are 1/1 and 125/3) and no timesync boot matches the file: its entries' times are wrong"))
            } else if h.wallMicros >= 1_000_000 {
                summary.problems.append(TraceV3Problem(36, "the header's wall clock has \(h.wallMicros) microseconds (no clock's) and no timesync boot matches the file: its entries' times are off"))
            }
        }
        summary.header = reader.header
        summary.pending = reader.pending
        summary.oversize = reader.oversizeChunks
        return summary
    }

    /// After the parts of one file: the entries that waited for oversize chunks of other parts.
    /// Returns (entries still missing their chunk, log messages without a format string).
    func readDeferred(_ parts: [ULFileSummary], header: TraceV3Header, wants: ((UnsafeRawBufferPointer) -> Bool)?,
                      _ body: (inout ULRecord) -> Void) -> (missing: Int, formatMissing: Int)
    {
        let state = ULReadState(strings: strings, clock: ULClock(header: header, timesync: timesync))
        let missing = TraceV3Reader.resolveDeferred(parts.flatMap(\.pending), stores: parts.map(\.oversize)) { e, catalog in
            state.handle(&e, catalog, wants, body)
        }
        return (missing, state.formatMissing)
    }
}

/// The reader's state and its per-entry work (see `read`).
final class ULReadState {
    let strings: ULStringStore
    let clock: ULClock
    var message: [UInt8] = []
    var args: [ULArgument] = []
    var paths: [String?] = []
    var cached: [ULStringStore.ProcessStrings] = []
    var table: ULCatalogTable?
    var lastCatalog: ObjectIdentifier?
    var t = ULCatalogTable.Pointers()
    var index = 0
    var formatMissing = 0
    var rendered = 0

    init(strings: ULStringStore, clock: ULClock) {
        self.strings = strings
        self.clock = clock
        message.reserveCapacity(1024)
    }

    @inline(__always)
    func handle(_ e: inout TraceV3Entry, _ catalog: TraceV3Catalog, _ wants: ((UnsafeRawBufferPointer) -> Bool)?,
                _ body: (inout ULRecord) -> Void)
    {
        index += 1
        let cid = ObjectIdentifier(catalog)
        if cid != lastCatalog {
            lastCatalog = cid
            cached = strings.processStrings(catalog)
            paths = cached.map { $0.main?.imagePath }
            table = ULCatalogTable(catalog, hasStrings: cached.map { $0.main != nil || $0.dsc != nil })
            t = table!.pointers
        }
        let t = self.t
        message.removeAll(keepingCapacity: true)
        var resolved = ULStringStore.Resolved()
        var missing = false
        switch e.kind {
        case .log, .signpost, .activity:
            let source = e.stringSource
            let skip = e.process >= 0 && e.process < t.count && !t.hasStrings[e.process]
                && (source == .mainExecutable || source == .sharedCache || source == .largeSharedCache)
            if !skip { resolved = strings.resolve(e, catalog, cached) }
            ulArguments(e, into: &args)
            if e.isDynamic {
                ulRender(format: UnsafeRawBufferPointer(start: ulPercentS, count: 2), args: args, into: &message)
            } else if let f = resolved.format {
                ulRender(format: f, args: args, into: &message)
            } else {
                missing = true
                ulRenderArguments(args, into: &message)
            }
            if e.oversizeMissing { message.append(contentsOf: " <oversize data missing>".utf8) }
        case .statedump:
            message.append(contentsOf: "statedump: ".utf8)
            message.append(contentsOf: e.text)
        case .simpledump:
            message.append(contentsOf: e.text)
        case .loss:
            message.appendDecimal(e.lostCount)
            message.append(contentsOf: " messages lost here".utf8)
        case .trace:
            message.append(contentsOf: "<trace>".utf8)
        }
        if missing && e.kind == .log { formatMissing += 1 }
        let pi = e.process >= 0 && e.process < t.count ? e.process : -1
        var sub = UnsafeRawBufferPointer(start: nil, count: 0)
        var cat = UnsafeRawBufferPointer(start: nil, count: 0)
        if e.subsystemID >= 0, pi >= 0 {
            let id = UInt16(e.subsystemID)
            for k in Int(t.subStart[pi])..<Int(t.subStart[pi + 1]) where t.subs[k].id == id {
                let s = t.subs[k]
                sub = UnsafeRawBufferPointer(start: t.strings + Int(s.sub), count: Int(s.subLen))
                cat = UnsafeRawBufferPointer(start: t.strings + Int(s.cat), count: Int(s.catLen))
                break
            }
        }
        let pass = message.withUnsafeBytes { m in wants?(m) ?? true }
        guard pass else { return }
        rendered += 1
        let wall = clock.wallNanos(e.continuousTime)
        let index = self.index
        let path = pi >= 0 ? paths[pi] : nil
        message.withUnsafeBytes { m in
            var r = ULRecord(entry: e, wallNanos: wall, pid: pi >= 0 ? t.pids[pi] : 0, euid: pi >= 0 ? t.euids[pi] : 0, message: m,
                             format: resolved.format, subsystem: sub, category: cat, processPath: path,
                             resolved: resolved, formatMissing: missing, index: index)
            body(&r)
        }
    }
}

/// A catalog's per-process facts in memory it owns, read through plain pointers per entry.
final class ULCatalogTable {
    struct Sub {
        var id: UInt16
        var sub: Int32
        var subLen: Int32
        var cat: Int32
        var catLen: Int32
    }
    struct Pointers {
        var count = 0
        var pids = UnsafeMutablePointer<Int32>(bitPattern: 8)!
        var euids = UnsafeMutablePointer<UInt32>(bitPattern: 8)!
        var hasStrings = UnsafeMutablePointer<Bool>(bitPattern: 8)!
        var subStart = UnsafeMutablePointer<Int32>(bitPattern: 8)!
        var subs = UnsafeMutablePointer<Sub>(bitPattern: 8)!
        var strings = UnsafeRawPointer(bitPattern: 8)!
    }
    let pointers: Pointers
    private let strings: ULBytes

    init(_ catalog: TraceV3Catalog, hasStrings: [Bool]) {
        let n = catalog.processes.count
        strings = ULBytes(catalog.strings)
        var p = Pointers()
        p.count = n
        p.pids = .allocate(capacity: max(1, n))
        p.euids = .allocate(capacity: max(1, n))
        p.hasStrings = .allocate(capacity: max(1, n))
        p.subStart = .allocate(capacity: n + 1)
        let total = catalog.processes.reduce(0) { $0 + $1.subsystems.count }
        p.subs = .allocate(capacity: max(1, total))
        p.strings = UnsafeRawPointer(strings.base)
        var k = 0
        let bytes = UnsafeRawBufferPointer(start: strings.base, count: strings.count)
        for (i, proc) in catalog.processes.enumerated() {
            p.pids[i] = proc.pid
            p.euids[i] = proc.euid
            p.hasStrings[i] = i < hasStrings.count && hasStrings[i]
            p.subStart[i] = Int32(k)
            for s in proc.subsystems {
                let sub = ulCString(bytes, Int(s.subsystem))
                let cat = ulCString(bytes, Int(s.category))
                p.subs[k] = Sub(id: s.id, sub: Int32(sub.count > 0 ? sub.baseAddress! - bytes.baseAddress! : 0), subLen: Int32(sub.count),
                                cat: Int32(cat.count > 0 ? cat.baseAddress! - bytes.baseAddress! : 0), catLen: Int32(cat.count))
                k += 1
            }
        }
        p.subStart[n] = Int32(k)
        pointers = p
    }

    deinit {
        pointers.pids.deallocate()
        pointers.euids.deallocate()
        pointers.hasStrings.deallocate()
        pointers.subStart.deallocate()
        pointers.subs.deallocate()
    }
}

/// The catalog strings live in an array that outlives the record (the catalog object does).
func ulCString(_ b: UnsafeRawBufferPointer, _ offset: Int) -> UnsafeRawBufferPointer {
    guard offset >= 0, offset < b.count, let base = b.baseAddress else { return UnsafeRawBufferPointer(start: nil, count: 0) }
    var end = offset
    while end < b.count && b[end] != 0 { end += 1 }
    return UnsafeRawBufferPointer(start: base + offset, count: end - offset)
}

nonisolated(unsafe) let ulPercentS: UnsafeRawPointer = {
    let p = UnsafeMutableRawPointer.allocate(byteCount: 2, alignment: 1)
    p.storeBytes(of: UInt8(ascii: "%"), as: UInt8.self)
    p.storeBytes(of: UInt8(ascii: "s"), toByteOffset: 1, as: UInt8.self)
    return UnsafeRawPointer(p)
}()

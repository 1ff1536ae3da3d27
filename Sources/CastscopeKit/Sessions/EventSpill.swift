#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Events written out of memory to an unlinked temporary file and read back when asked: the
/// lines of relay sessions that ended, which only a join with a device session or an export
/// of every line reads again; sessions parked behind an open one; a big bundle's lines while
/// it is read (`HeldEvents`) (issue 15: memory follows open sessions).
///
/// The file is created in `TMPDIR` (else /tmp) with mode 0600 and unlinked at once, so that it
/// is gone with the process however that ends. Written through a buffer; read with `pread`, so
/// that readers on several threads need no lock but the buffer's.
public final class EventSpill: @unchecked Sendable {
    /// Where one list of events lies in the file.
    public struct Chunk: Sendable {
        var offset: Int64
        var length: Int
        var count: Int
    }

    private let fd: Int32
    /// What is written but not yet in the file.
    private var writer = SpillWriter(out: OutputBuffer(capacity: 1 << 16))
    private var buffer: OutputBuffer {
        _read { yield writer.out }
        _modify { yield &writer.out }
    }
    private var written: Int64 = 0
    /// A write to the file failed (a full disk): what follows stays in `buffer`, in memory.
    private var failed = false
    private var paths: [String] = []
    private var pathIndex: [String: Int] = [:]
    /// The path numbered last (lines of one file follow each other: no lookup for them).
    private var lastPath: (path: String, number: Int)?
    private let lock = NSLockLite()

    /// Nil when no temporary file can be made (the caller then keeps the events in memory).
    public init?() {
        let fd = unlinkedTemporaryFile("events")
        guard fd >= 0 else { return nil }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Writes `events` and says where they are.
    public func write(_ events: [Event]) -> Chunk {
        events.withUnsafeBufferPointer { write($0) }
    }

    func write(_ events: UnsafeBufferPointer<Event>) -> Chunk {
        var chunk = writeBytes { w, codec in
            for i in events.indices {
                codec.event(events[i], &w)
                // (A long list goes to the file as it is written, not whole from the buffer:
                // 8,192 held relay stats runs are ~16 MB, and the buffer kept its room.)
                if w.out.count >= Self.flushPast { flushWithin(&w) }
            }
        }
        chunk.count = events.count
        return chunk
    }

    /// What the buffer holds at most, but for one event, while a list is written.
    static let flushPast = 1 << 20

    /// The room the write buffer has (what it holds at most, in memory).
    var bufferCapacity: Int { lock.locked { writer.out.capacity } }

    /// `flush` of the writer lent to a `writeBytes` fill (called under the lock).
    private func flushWithin(_ w: inout SpillWriter) {
        guard !failed else { return }
        flush(&w.out)
    }

    /// Values of plain fields, one after another from the file's start (`appendPlain`): the
    /// first `count` of them, read into an array of that size.
    func readPlain<T: BitwiseCopyable>(_: T.Type, count: Int) -> [T] {
        let stride = MemoryLayout<T>.stride
        return [T](unsafeUninitializedCapacity: count) { out, done in
            let piece = max(1, (1 << 20) / stride)
            while done < count {
                let n = min(piece, count - done)
                readBytes(Chunk(offset: Int64(done * stride), length: n * stride, count: 0)) { r, _ in
                    for i in 0..<n { (out.baseAddress! + done + i).initialize(to: r.plain(T.self)) }
                }
                done += n
            }
        }
    }

    /// Appends `v` (a list of plain values, `readPlain`, `plain(at:)`).
    func appendPlain<T: BitwiseCopyable>(_ v: T) {
        _ = writeBytes { w, _ in w.plain(v) }
    }

    /// The plain value number `i` (`appendPlain`).
    func plain<T: BitwiseCopyable>(_: T.Type, at i: Int) -> T {
        let stride = MemoryLayout<T>.stride
        return readBytes(Chunk(offset: Int64(i * stride), length: MemoryLayout<T>.size, count: 0), cached: true) { r, _ in r.plain(T.self) }
    }

    /// The events of `chunk`, as they were written.
    public func read(_ chunk: Chunk) -> [Event] {
        readBytes(chunk) { r, codec in
            var out: [Event] = []
            out.reserveCapacity(chunk.count)
            for _ in 0..<chunk.count { out.append(codec.event(&r)) }
            return out
        }
    }

    /// How events and line references are written (paths by number: one copy of each).
    struct Encoder {
        let event: (Event, inout SpillWriter) -> Void
        let source: (SourceRef?, inout SpillWriter) -> Void
    }
    struct Decoder {
        let event: (inout SpillReader) -> Event
        let source: (inout SpillReader) -> SourceRef?
    }

    /// Writes what `fill` writes and says where it is.
    func writeBytes(_ fill: (inout SpillWriter, Encoder) -> Void) -> Chunk {
        lock.locked {
            let start = written + Int64(buffer.count)
            writer.newRecord()
            fill(&writer, Encoder(event: { e, w in self.encode(e, into: &w) }, source: { s, w in
                w.i64(s.map { Int64(self.pathNumber($0.path)) } ?? -1)
                if let s { w.i64(Int64(s.line)) }
            }))
            let chunk = Chunk(offset: start, length: Int(written) + buffer.count - Int(start), count: 0)
            if buffer.count >= 1 << 16 && !failed { flush() }
            return chunk
        }
    }

    /// Reads back what `writeBytes` wrote. `cached`: a small record among others read in
    /// about the order they were written (a relay session's, read by every writer of the
    /// report): read through a block kept from the last such read, not a read of its own.
    func readBytes<T>(_ chunk: Chunk, cached: Bool = false, _ body: (inout SpillReader, Decoder) -> T) -> T {
        let end = chunk.offset + Int64(chunk.length)
        if cached, chunk.length <= Self.cacheBlock / 4 {
            // Decoded where it lies in the block, under the lock (a record's decoding reads nothing more).
            let hit: T? = lock.locked {
                guard end <= written, !failed else { return nil }
                if chunk.offset < cacheStart || end > cacheStart + Int64(cache.count) {
                    cache = [UInt8](repeating: 0, count: Int(min(Int64(Self.cacheBlock), written - chunk.offset)))
                    cache.withUnsafeMutableBytes { readFully($0, at: chunk.offset) }
                    cacheStart = chunk.offset
                }
                let from = Int(chunk.offset - cacheStart)
                return cache.withUnsafeBytes { decode(UnsafeRawBufferPointer(rebasing: $0[from..<from + chunk.length]), paths, body) }
            }
            if let hit { return hit }
        }
        var bytes = [UInt8](repeating: 0, count: chunk.length)
        // What is past `written` is still in the buffer (not flushed yet, or the file failed).
        let (table, inFile): ([String], Int) = lock.locked {
            if end > written && !failed { flush() }
            let inFile = Int(max(0, min(end, written) - chunk.offset))
            if inFile < chunk.length {
                let from = Int(chunk.offset + Int64(inFile) - written)
                buffer.withUnsafeBytes { b in
                    bytes.withUnsafeMutableBytes { to in
                        to.baseAddress!.advanced(by: inFile).copyMemory(from: b.baseAddress! + from, byteCount: chunk.length - inFile)
                    }
                }
            }
            return (paths, inFile)
        }
        bytes.withUnsafeMutableBytes { readFully(UnsafeMutableRawBufferPointer(rebasing: $0[..<inFile]), at: chunk.offset) }
        return bytes.withUnsafeBytes { decode($0, table, body) }
    }

    /// Fills `b` from the file at `offset`.
    private func readFully(_ b: UnsafeMutableRawBufferPointer, at offset: Int64) {
        // A temporary file that cannot be read back is a broken machine, not a broken input.
        precondition(preadAll(fd, b, at: offset) == b.count, "castscope: a temporary file of held lines could not be read back")
    }

    /// The block `readBytes(_:cached:)` reads records through, and where it starts.
    private static let cacheBlock = 1 << 17
    private var cache: [UInt8] = []
    private var cacheStart: Int64 = 0

    private func decode<T>(_ raw: UnsafeRawBufferPointer, _ table: [String], _ body: (inout SpillReader, Decoder) -> T) -> T {
        var r = SpillReader(base: raw)
        return body(&r, Decoder(event: { self.decode(&$0, paths: table) }, source: { r in
            let n = r.i64()
            return n < 0 ? nil : SourceRef(path: table[Int(n)], line: Int(r.i64()))
        }))
    }

    /// Called under the lock. When the file takes no more (a full disk), the lines stay in
    /// memory from there on, as they would without a spill.
    private func flush() { flush(&writer.out) }

    /// The same for `buffer`, lent here (by `flushWithin`: while a fill writes into it).
    private func flush(_ buffer: inout OutputBuffer) {
        var done = 0
        buffer.withUnsafeBytes { b in
            while done < b.count {
                let n = Glibc.write(fd, b.baseAddress! + done, b.count - done)
                if n <= 0 {
                    failed = true
                    SpillTrouble.note(n < 0 ? errnoText() : "the file took no more")
                    return
                }
                done += n
            }
        }
        if failed {
            // The part written stays in the file; the rest of the buffer is kept.
            written += Int64(done)
            buffer.removeFirst(done)
            return
        }
        written += Int64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Called under the lock.
    private func pathNumber(_ path: String) -> Int {
        if let last = lastPath, last.path == path { return last.number }
        let k: Int
        if let known = pathIndex[path] {
            k = known
        } else {
            paths.append(path)
            k = paths.count - 1
            pathIndex[path] = k
        }
        lastPath = (path, k)
        return k
    }

    private func encode(_ e: Event, into w: inout SpillWriter) {
        var flags: UInt8 = 0
        if e.time != nil { flags |= 1 }
        if e.process != nil { flags |= 2 }
        if e.pid != nil { flags |= 4 }
        if e.timeInferred { flags |= 8 }
        if e.parsedTime != nil { flags |= 16 }
        if e.repeats != nil { flags |= 32 }
        if e.linesDiffer { flags |= 64 }
        let text = e.textRef
        if text.foldsWhenRepeated { flags |= 128 }
        w.u8(flags)
        // The text's number; a new one (the count so far) is followed by its fields.
        if let n = w.textNumber(text) {
            w.i64(Int64(n))
        } else {
            w.i64(Int64(w.number(text)))
            w.u8(text.code.rawValue)
            w.string(text.kind)
            w.string(text.sdk)
            if let p = text.process { w.string(p) }
            w.string(text.message)
            w.i64(Int64(text.attrs.count))
            for (k, v) in text.attrs {
                w.string(k)
                w.string(v)
            }
            w.i64(Int64(pathNumber(text.path)))
        }
        w.u8(e.side.spillCode)
        if let t = e.time { w.i64(t) }
        w.i64(Int64(e.displayOffset))
        if let p = e.pid { w.i64(Int64(p)) }
        w.i64(Int64(e.line))
        w.i64(Int64(e.order))
        w.i64(Int64(e.fileIndex))
        if let t = e.parsedTime { t.spill(into: &w) }
        if let r = e.repeats {
            w.i64s(r.naive)
            w.i32s(r.lines)
            w.i64s(r.times)
            w.i64(r.lastSecondOfDay.map(Int64.init) ?? Int64.min)
            w.i32s(r.frames)
            w.i32s(r.fps.map { Int32(bitPattern: $0.bitPattern) })
            w.i32s(r.dropped)
            w.i32s(r.orders)
            w.i64(Int64(r.readSeq))
            w.i64(r.joinedThrough.map(Int64.init) ?? Int64.min)
            w.u8(r.foldedLate ? 1 : 0)
            if let t = r.texts {
                w.i64s(t.columns.starts)
                w.u8s(t.columns.bytes)
            }
        }
    }

    private func decode(_ r: inout SpillReader, paths: [String]) -> Event {
        let flags = r.u8()
        let number = Int(r.i64())
        let text: Event.Text
        if number < r.texts.count {
            text = r.texts[number]
        } else {
            let code = KindCode(rawValue: r.u8()) ?? .other
            // (the few kinds, SDKs, processes and attribute names are shared, not one copy a line)
            let kind = r.sharedString(), sdk = r.sharedString()
            let process = flags & 2 != 0 ? r.sharedString() : nil
            let message = r.sharedString()
            var attrs: [(String, String)] = []
            let n = Int(r.i64())
            attrs.reserveCapacity(n)
            for _ in 0..<n {
                let k = r.sharedString()
                attrs.append((k, r.sharedString()))
            }
            let path = paths[Int(r.i64())]
            text = Event.Text(kind: kind, code: code, folds: flags & 128 != 0, sdk: sdk, process: process, message: message, attrs: attrs,
                              path: path)
            r.texts.append(text)
        }
        let side = Side(spillCode: r.u8())
        let time = flags & 1 != 0 ? r.i64() : nil
        let displayOffset = Int(r.i64())
        let pid = flags & 4 != 0 ? Int(r.i64()) : nil
        let line = Int(r.i64()), order = Int(r.i64()), fileIndex = Int(r.i64())
        let parsed = flags & 16 != 0 ? ParsedTime(spilled: &r) : nil
        var repeats: Repeats?
        if flags & 32 != 0 {
            let rep = Repeats()
            rep.naive = r.column()
            rep.lines = r.column()
            rep.times = r.timeColumn()
            let last = r.i64()
            rep.lastSecondOfDay = last == Int64.min ? nil : Int(last)
            rep.frames = r.i32s()
            rep.fps = r.i32s().map { Float(bitPattern: UInt32(bitPattern: $0)) }
            rep.dropped = r.i32s()
            rep.orders = r.column()
            rep.readSeq = Int(r.i64())
            let through = r.i64()
            rep.joinedThrough = through == Int64.min ? nil : Int(through)
            rep.foldedLate = r.u8() != 0
            if flags & 64 != 0 {
                let starts: SpilledColumn<Int64> = r.column()
                rep.texts = LineTexts.restore(starts: starts, bytes: r.column())
            }
            repeats = rep
        }
        var e = Event(text: text, side: side, time: time, timeInferred: flags & 8 != 0, pid: pid, line: line, order: order,
                      parsedTime: parsed, fileIndex: fileIndex)
        e.displayOffset = displayOffset
        e.repeats = repeats
        return e
    }
}

/// Little-endian fields appended to bytes (the spill's own layout, read back by `SpillReader`),
/// each a store into the buffer (an array's `append(contentsOf:)` was ~100 instructions a field,
/// and a held event has about twenty).
struct SpillWriter {
    var out: OutputBuffer

    init(out: OutputBuffer) { self.out = out }

    /// The texts (`Event.Text`) of the record being written (`EventSpill.writeBytes`) get
    /// numbers: a text is written whole where it first comes, and its later events give its
    /// number (`SpillReader.texts`). The lines of a run of held events share a few texts
    /// (interned as they were read); writing each event's kind, SDK, process, message and
    /// attributes, then reading and making them again, was a third of a held read of a log
    /// where every line is recognized. Found by the text's address in a small table (no hash
    /// of a table per event: a relay's stats lines never share one); a text pushed out of it
    /// is written again under a new number. The table holds its texts, so no other text can
    /// have the address of one in it.
    private var recentTexts = [(text: Event.Text?, number: Int, record: Int)](repeating: (nil, 0, -1), count: 64)
    private var record = 0
    private var textCount = 0

    mutating func newRecord() {
        record += 1
        textCount = 0
    }

    private static func slot(_ t: Event.Text) -> Int { Int(truncatingIfNeeded: UInt(bitPattern: ObjectIdentifier(t)) >> 4) & 63 }

    /// The number `t` has in this record, if it was written in it (and is still in the table).
    /// A text is in its slot or the one after it: two texts whose addresses took the same slot
    /// (1 in 64 pairs: a frame line's and a connect line's) pushed each other out at every
    /// line and each was written whole each time (`ChurnRound8Tests` failed now and then).
    func textNumber(_ t: Event.Text) -> Int? {
        let k = Self.slot(t)
        if recentTexts[k].record == record && recentTexts[k].text === t { return recentTexts[k].number }
        let j = (k + 1) & 63
        if recentTexts[j].record == record && recentTexts[j].text === t { return recentTexts[j].number }
        return nil
    }

    /// A new number for `t`, written whole after it (in its slot unless a text of this record
    /// holds it, then in the next).
    mutating func number(_ t: Event.Text) -> Int {
        let n = textCount
        textCount += 1
        let k = Self.slot(t)
        recentTexts[recentTexts[k].record == record ? (k + 1) & 63 : k] = (t, n, record)
        return n
    }

    mutating func u8(_ v: UInt8) { out.byte(v) }
    /// A value of plain fields as it lies in memory (read back on this machine only).
    mutating func plain<T: BitwiseCopyable>(_ v: T) {
        out.rawValue(v)
        out.repeating(0, count: MemoryLayout<T>.stride - MemoryLayout<T>.size)
    }
    mutating func i64(_ v: Int64) { out.rawValue(v.littleEndian) }
    mutating func i32(_ v: Int32) { out.rawValue(v.littleEndian) }
    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { u in
            i64(Int64(u.count))
            out.append(UnsafeRawBufferPointer(u))
        }
    }
    mutating func optionalString(_ s: String?) {
        u8(s == nil ? 0 : 1)
        if let s { string(s) }
    }
    mutating func optionalI64(_ v: Int64?) {
        u8(v == nil ? 0 : 1)
        if let v { i64(v) }
    }
    mutating func i64s<C: Collection>(_ a: C) where C.Element == Int64 {
        i64(Int64(a.count))
        #if _endian(little)
        if a.withContiguousStorageIfAvailable({ out.append(UnsafeRawBufferPointer($0)) }) != nil { return }
        #endif
        for v in a { i64(v) }
    }
    mutating func i32s<C: Collection>(_ a: C) where C.Element == Int32 {
        i64(Int64(a.count))
        #if _endian(little)
        if a.withContiguousStorageIfAvailable({ out.append(UnsafeRawBufferPointer($0)) }) != nil { return }
        #endif
        for v in a { i32(v) }
    }
    mutating func u8s<C: Collection>(_ a: C) where C.Element == UInt8 {
        i64(Int64(a.count))
        out.append(contentsOf: a)
    }
}

struct SpillReader {
    let base: UnsafeRawBufferPointer
    var at = 0
    /// The texts of the record read, by number (`SpillWriter.textNumber`).
    var texts: [Event.Text] = []
    /// Strings read by `sharedString`, by a hash of their bytes: where those lie and the string
    /// (made at its first call).
    private var memo: [(at: Int, count: Int, string: String)] = []

    init(base: UnsafeRawBufferPointer) { self.base = base }

    mutating func plain<T: BitwiseCopyable>(_: T.Type) -> T {
        defer { at += MemoryLayout<T>.stride }
        return base.loadUnaligned(fromByteOffset: at, as: T.self)
    }

    mutating func u8() -> UInt8 {
        defer { at += 1 }
        return base[at]
    }
    mutating func i64() -> Int64 {
        defer { at += 8 }
        return Int64(littleEndian: base.loadUnaligned(fromByteOffset: at, as: Int64.self))
    }
    mutating func i32() -> Int32 {
        defer { at += 4 }
        return Int32(littleEndian: base.loadUnaligned(fromByteOffset: at, as: Int32.self))
    }
    mutating func string() -> String {
        let n = Int(i64())
        defer { at += n }
        return String(decoding: UnsafeRawBufferPointer(rebasing: base[at..<at + n]), as: UTF8.self)
    }
    /// What `string` reads, for a field with few values (a kind, an SDK, a process, an
    /// attribute): the same bytes read before in this block give the string made then (one
    /// retain), not a new one (an allocation and a validation).
    mutating func sharedString() -> String {
        let n = Int(i64())
        guard n > 0 else { return "" }
        defer { at += n }
        let p = base.baseAddress! + at
        var h = UInt32(truncatingIfNeeded: n) &* 0x9E37_79B1
        h = (h ^ UInt32(p.load(as: UInt8.self))) &* 0x85EB_CA6B
        h = (h ^ UInt32((p + n / 2).load(as: UInt8.self))) &* 0xC2B2_AE35
        h = (h ^ UInt32((p + n - 1).load(as: UInt8.self))) &* 0x27D4_EB2F
        let slot = Int(h >> 26)
        if memo.isEmpty { memo = Array(repeating: (0, -1, ""), count: 64) }
        if memo[slot].count == n, memcmp(p, base.baseAddress! + memo[slot].at, n) == 0 { return memo[slot].string }
        let s = String(decoding: UnsafeRawBufferPointer(start: p, count: n), as: UTF8.self)
        memo[slot] = (at, n, s)
        return s
    }
    mutating func optionalString() -> String? { u8() == 0 ? nil : string() }
    mutating func optionalI64() -> Int64? { u8() == 0 ? nil : i64() }
    mutating func i64s() -> [Int64] {
        let n = Int(i64())
        return (0..<n).map { _ in i64() }
    }
    mutating func i32s() -> [Int32] {
        let n = Int(i64())
        return (0..<n).map { _ in i32() }
    }
    /// What `i64s` wrote of a run's times, as its column (straight in: a long run was written
    /// to disk whole as 64-bit times, then again as offsets).
    mutating func timeColumn() -> TimeColumn {
        let n = Int(i64())
        var out = TimeColumn()
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(Int64(littleEndian: plain(Int64.self))) }
        return out
    }
    /// What `i64s` or `i32s` wrote, as a column (a long one goes to disk as it is read back).
    mutating func column<T: FixedWidthInteger & BitwiseCopyable & Sendable>() -> SpilledColumn<T> {
        let n = Int(i64())
        var out = SpilledColumn<T>()
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(T(littleEndian: plain(T.self))) }
        return out
    }
}

extension Side {
    /// The side as one byte in a spill.
    var spillCode: UInt8 {
        switch self {
        case .extension: 0
        case .app: 1
        case .system: 2
        case .relay: 3
        }
    }

    init(spillCode: UInt8) {
        switch spillCode {
        case 0: self = .extension
        case 1: self = .app
        case 2: self = .system
        default: self = .relay
        }
    }
}

extension EventSpill {
    /// A session written whole, its lines with it (`SessionStream` parks a done session that
    /// waits behind an open one). Its relay view is not written: the caller keeps a session
    /// that has one (the join happens on sessions that are kept, never streamed).
    func write(session s: Session) -> Chunk {
        writeBytes { w, codec in
            w.string(s.id)
            w.string(s.sdk)
            w.string(s.capture)
            w.optionalString(s.process)
            w.optionalI64(s.pid.map(Int64.init))
            w.optionalI64(s.start)
            w.optionalI64(s.end)
            w.i64(Int64(s.displayOffset))
            w.u8((s.startInferred ? 1 : 0) | (s.interruptedByNewStart ? 2 : 0) | (s.connected ? 4 : 0))
            w.string(s.outcome.rawValue)
            w.string(s.reason)
            w.i64(Int64(s.attempts.count))
            for a in s.attempts {
                w.optionalI64(a.time)
                codec.source(a.source, &w)
                w.optionalString(a.failure)
                codec.source(a.failureSource, &w)
            }
            w.optionalI64(s.connectedAt)
            w.i64(Int64(s.frames))
            w.optionalI64(s.firstFrameAt)
            w.optionalI64(s.lastFrameAt)
            w.i64(Int64(s.seq))
            for list in [s.events, s.deciding] {
                w.i64(Int64(list.count))
                for i in list.indices { codec.event(list[i], &w) }
            }
        }
    }

    /// The session `write(session:)` wrote.
    func readSession(_ chunk: Chunk) -> Session {
        readBytes(chunk) { r, codec in
            var s = Session(id: r.string(), sdk: r.string(), process: nil, pid: nil)
            s.capture = r.string()
            s.process = r.optionalString()
            s.pid = r.optionalI64().map { Int($0) }
            s.start = r.optionalI64()
            s.end = r.optionalI64()
            s.displayOffset = Int(r.i64())
            let flags = r.u8()
            s.startInferred = flags & 1 != 0
            s.interruptedByNewStart = flags & 2 != 0
            s.connected = flags & 4 != 0
            s.outcome = Outcome(rawValue: r.string()) ?? .unknown
            s.reason = r.string()
            let attempts = Int(r.i64())
            s.attempts.reserveCapacity(attempts)
            for _ in 0..<attempts {
                let time = r.optionalI64()
                let source = codec.source(&r)!
                let failure = r.optionalString()
                s.attempts.append(ConnectAttempt(time: time, source: source, failure: failure, failureSource: codec.source(&r)))
            }
            s.connectedAt = r.optionalI64()
            s.frames = Int(r.i64())
            s.firstFrameAt = r.optionalI64()
            s.lastFrameAt = r.optionalI64()
            s.seq = Int(r.i64())
            for k in 0..<2 {
                let n = Int(r.i64())
                var list: [Event] = []
                list.reserveCapacity(n)
                for _ in 0..<n { list.append(codec.event(&r)) }
                if k == 0 { s.events = list } else { s.deciding = list }
            }
            return s
        }
    }
}

/// A temporary file for this process alone: made in `directory` (else `TMPDIR`, else /tmp) with
/// mode 0600, unlinked at once (nothing is left behind, however castscope ends) and closed on
/// exec (a pager started later does not hold it); -1 when none can be made.
func unlinkedTemporaryFile(_ name: String, directory: String? = nil) -> Int32 {
    let base = directory ?? temporaryBase()
    var template = Array((base + "/castscope-" + name + "-XXXXXX").utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    if fd >= 0 {
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }
    return fd
}

/// Writes all of `b` at `offset` of `fd` (retrying short writes and EINTR); false on an error
/// (a full disk).
func pwriteAll(_ fd: Int32, _ b: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
    var done = 0
    while done < b.count {
        let n = pwrite(fd, b.baseAddress! + done, b.count - done, off_t(offset) + off_t(done))
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return false }
        done += n
    }
    return true
}

/// Reads into `b` from `offset` of `fd` until it is full, the file ends or a read fails
/// (retrying short reads and EINTR): the number of bytes read.
func preadAll(_ fd: Int32, _ b: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
    var done = 0
    while done < b.count {
        let n = pread(fd, b.baseAddress! + done, b.count - done, off_t(offset) + off_t(done))
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { break }
        done += n
    }
    return done
}

/// The first time a temporary file took no more (a full `$TMPDIR`): what was to go to disk
/// stays in memory from there on, and memory grows with the input; said once, as a warning
/// (a full disk tripled the memory of a phone log beside its relay's journal, silently).
public enum SpillTrouble {
    private static let lock = NSLockLite()
    nonisolated(unsafe) private static var first: String?

    static func note(_ why: String) {
        lock.locked { if first == nil { first = why } }
    }

    /// The warning, once (nil when every write went through).
    public static func take() -> String? {
        lock.locked {
            defer { first = nil }
            return first.map { "\(temporaryBase()): \($0): what castscope sets aside on disk is kept in memory from there on (free some space, or point TMPDIR elsewhere)" }
        }
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The string files of a logarchive: uuidtext (one per image, `XX/YYYY…` named by its UUID)
// and the shared-cache strings (`dsc/UUID`, versions 1 and 2). Each is read whole into memory
// it owns, checked once, and looked up by string reference without copying.

/// Bytes owned for the life of the value; pointers into them stay valid.
final class ULBytes: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let count: Int
    init(_ bytes: [UInt8]) {
        count = bytes.count
        base = UnsafeMutableRawPointer.allocate(byteCount: max(1, count), alignment: 8)
        bytes.withUnsafeBytes { if count > 0 { base.copyMemory(from: $0.baseAddress!, byteCount: count) } }
    }
    deinit { base.deallocate() }

    /// The NUL-terminated string at `offset` (without its NUL), nil when out of bounds.
    func cString(at offset: Int) -> UnsafeRawBufferPointer? {
        guard offset >= 0, offset < count else { return nil }
        var end = offset
        while end < count && base.load(fromByteOffset: end, as: UInt8.self) != 0 { end += 1 }
        return UnsafeRawBufferPointer(start: base + offset, count: end - offset)
    }
}

/// Reads a whole file, or throws a one-line problem.
func ulReadFile(_ path: String) throws -> [UInt8] {
    let fd = try openRegularFile(path)
    defer { close(fd) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        if n < 0 { throw InputError(path: path, "read failed: \(errnoText())") }
        if n == 0 { break }
        out.append(contentsOf: chunk[0..<n])
    }
    return out
}

/// A uuidtext file: format strings of one image, and the image's path.
public final class UUIDText: @unchecked Sendable {
    let bytes: ULBytes
    /// (range start, size, data offset in the file).
    public private(set) var ranges: [(start: UInt32, size: UInt32, offset: Int)] = []
    public private(set) var imagePath = ""

    public init(_ data: [UInt8], path: String) throws {
        bytes = ULBytes(data)
        let b = bytes.base
        guard data.count >= 16, ulU32(b, 0) == 0x6677_8899 else {
            throw InputError(path: path, offset: 0, "not a uuidtext file (no 99 88 77 66 signature)")
        }
        let n = Int(ulU32(b, 12))
        guard 16 + n * 8 <= data.count else {
            throw InputError(path: path, offset: 12, "uuidtext truncated: \(n) entries need \(16 + n * 8) bytes, the file has \(data.count)")
        }
        var offset = 16 + n * 8
        for i in 0..<n {
            let start = ulU32(b, 16 + i * 8)
            let size = ulU32(b, 20 + i * 8)
            guard offset + Int(size) <= data.count else {
                throw InputError(path: path, offset: UInt64(16 + i * 8), "uuidtext truncated: entry \(i) runs past the end of the file")
            }
            ranges.append((start, size, offset))
            offset += Int(size)
        }
        if let p = bytes.cString(at: offset) { imagePath = String(decoding: p, as: UTF8.self) }
    }

    /// The format string at a string reference.
    public func format(_ ref: UInt64) -> UnsafeRawBufferPointer? {
        for r in ranges where ref >= UInt64(r.start) && ref < UInt64(r.start) + UInt64(r.size) {
            return bytes.cString(at: r.offset + Int(ref - UInt64(r.start)))
        }
        return nil
    }
}

/// A shared-cache strings file (`dsc/UUID`), versions 1 and 2.
public final class SharedCacheStrings: @unchecked Sendable {
    let bytes: ULBytes
    public private(set) var version: UInt16 = 0
    public private(set) var ranges: [(offset: UInt64, size: UInt32, data: Int, image: Int)] = []
    public private(set) var images: [(textOffset: UInt64, textSize: UInt32, uuid: ULUUID, path: String)] = []

    public init(_ data: [UInt8], path: String) throws {
        bytes = ULBytes(data)
        let b = bytes.base
        guard data.count >= 16, ulU32(b, 0) == 0x6473_6368 else {  // "hcsd"
            throw InputError(path: path, offset: 0, "not a shared-cache strings file (no 'hcsd' signature)")
        }
        version = ulU16(b, 4)
        guard version == 1 || version == 2 else {
            throw InputError(path: path, offset: 4, "shared-cache strings version \(version) is not known (1 and 2 are)")
        }
        let rangeCount = Int(ulU32(b, 8))
        let uuidCount = Int(ulU32(b, 12))
        let rangeSize = version == 1 ? 16 : 24
        let uuidSize = version == 1 ? 28 : 32
        let need = 16 + rangeCount * rangeSize + uuidCount * uuidSize
        guard rangeCount < 1 << 24, uuidCount < 1 << 24, need <= data.count else {
            throw InputError(path: path, offset: 8,
                             "shared-cache strings truncated or damaged: \(rangeCount) ranges and \(uuidCount) images need \(need) bytes, the file has \(data.count)")
        }
        var o = 16
        for i in 0..<rangeCount {
            let r: (UInt64, UInt32, Int, Int)
            if version == 1 {
                r = (UInt64(ulU32(b, o + 4)), ulU32(b, o + 12), Int(ulU32(b, o + 8)), Int(ulU32(b, o)))
            } else {
                r = (ulU64(b, o), ulU32(b, o + 12), Int(ulU32(b, o + 8)), Int(truncatingIfNeeded: ulU64(b, o + 16)))
            }
            guard r.2 + Int(r.1) <= data.count, r.3 < uuidCount else {
                throw InputError(path: path, offset: UInt64(o), "shared-cache strings damaged: range \(i) points outside the file")
            }
            ranges.append(r)
            o += rangeSize
        }
        for _ in 0..<uuidCount {
            let img: (UInt64, UInt32, ULUUID, Int)
            if version == 1 {
                img = (UInt64(ulU32(b, o)), ulU32(b, o + 4), ULUUID(b + o + 8), Int(ulU32(b, o + 24)))
            } else {
                img = (ulU64(b, o), ulU32(b, o + 8), ULUUID(b + o + 12), Int(ulU32(b, o + 28)))
            }
            let p = bytes.cString(at: img.3).map { String(decoding: $0, as: UTF8.self) } ?? ""
            images.append((img.0, img.1, img.2, p))
            o += uuidSize
        }
        ranges.sort { $0.offset < $1.offset }
    }

    /// The format string at a string reference and the image it belongs to.
    public func format(_ ref: UInt64) -> (UnsafeRawBufferPointer, Int)? {
        var lo = 0
        var hi = ranges.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ranges[mid].offset <= ref { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0 else { return nil }
        let r = ranges[lo - 1]
        guard ref < r.offset + UInt64(r.size), let s = bytes.cString(at: r.data + Int(ref - r.offset)) else { return nil }
        return (s, r.image)
    }
}

/// The string files of one archive, loaded on first use and kept; problems said once per file.
public final class ULStringStore: @unchecked Sendable {
    /// The folder holding `XX/` uuidtext folders and `dsc/` (a logarchive's root), if any.
    public let root: String?
    private let lock = NSLockLite()
    private var uuidtexts: [ULUUID: UUIDText?] = [:]
    private var dscs: [ULUUID: SharedCacheStrings?] = [:]
    public private(set) var problems: [InputError] = []

    public init(root: String?) { self.root = root }

    public func uuidtext(_ uuid: ULUUID) -> UUIDText? {
        lock.locked {
            if let cached = uuidtexts[uuid] { return cached }
            var loaded: UUIDText?
            if let root {
                let hex = uuid.hex
                let path = root + "/" + String(hex.prefix(2)) + "/" + String(hex.dropFirst(2))
                if access(path, F_OK) == 0 {
                    do { loaded = try UUIDText(try ulReadFile(path), path: path) } catch let e as InputError { problems.append(e) } catch {}
                }
            }
            uuidtexts[uuid] = loaded
            return loaded
        }
    }

    public func dsc(_ uuid: ULUUID) -> SharedCacheStrings? {
        lock.locked {
            if let cached = dscs[uuid] { return cached }
            var loaded: SharedCacheStrings?
            if let root {
                let path = root + "/dsc/" + uuid.hex
                if access(path, F_OK) == 0 {
                    do {
                        loaded = try SharedCacheStrings(try ulReadFile(path), path: path)
                    } catch let e as InputError { problems.append(e) } catch {}
                }
            }
            dscs[uuid] = loaded
            return loaded
        }
    }

    /// What an entry's format string is and where it came from.
    public struct Resolved {
        public var format: UnsafeRawBufferPointer?
        /// Where the sender's path is: its uuidtext, or an image of the shared cache.
        var senderText: UUIDText?
        var senderCache: SharedCacheStrings?
        var senderImage = 0
        public var senderUUID: ULUUID?
        public var senderPath: String? {
            if let senderText { return senderText.imagePath }
            if let senderCache { return senderCache.images[senderImage].path }
            return nil
        }
    }

    /// The string files a catalog's process uses, looked up once per catalog.
    public struct ProcessStrings {
        public var main: UUIDText?
        public var dsc: SharedCacheStrings?
    }

    public func processStrings(_ catalog: TraceV3Catalog) -> [ProcessStrings] {
        catalog.processes.map { ProcessStrings(main: uuidtext($0.mainUUID), dsc: $0.dscUUID.flatMap { dsc($0) }) }
    }

    public func resolve(_ e: TraceV3Entry, _ catalog: TraceV3Catalog, _ cached: [ProcessStrings]? = nil) -> Resolved {
        var r = Resolved()
        let pi = e.process
        guard pi >= 0 && pi < catalog.processes.count else { return r }
        let own = cached != nil && pi < cached!.count ? cached![pi] : ProcessStrings(
            main: uuidtext(catalog.processes[pi].mainUUID), dsc: catalog.processes[pi].dscUUID.flatMap { dsc($0) })
        let ref = e.formatReference
        switch e.stringSource {
        case .mainExecutable:
            r.senderUUID = catalog.processes[pi].mainUUID
            r.senderText = own.main
            if !e.isDynamic { r.format = own.main?.format(ref) }
        case .uuidRelative:
            guard let u = e.uuidRelative else { break }
            r.senderUUID = u
            let t = uuidtext(u)
            r.senderText = t
            if !e.isDynamic { r.format = t?.format(ref) }
        case .absolute:
            let pc = e.loadAddress
            if let img = catalog.processes[pi].images.first(where: { pc >= $0.load && pc < $0.load + UInt64($0.size) }) {
                r.senderUUID = img.uuid
                let t = uuidtext(img.uuid)
                r.senderText = t
                if !e.isDynamic { r.format = t?.format(ref) }
            }
        case .sharedCache, .largeSharedCache:
            guard let cache = own.dsc else { break }
            if !e.isDynamic, let (s, image) = cache.format(ref) {
                r.format = s
                r.senderCache = cache
                r.senderImage = image
                r.senderUUID = cache.images[image].uuid
            }
        case .none:
            break
        }
        return r
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// A uuidtext file: one range starting at `start`, with `strings` at their references.
func makeUUIDText(start: UInt32, size: Int, strings: [UInt32: String], path: String) -> Data {
    var d = Data()
    func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
    d.append(contentsOf: [0x99, 0x88, 0x77, 0x66])
    u32(2); u32(1); u32(1)
    u32(start); u32(UInt32(size))
    var body = [UInt8](repeating: 0, count: size)
    for (ref, s) in strings {
        let o = Int(ref - start)
        body.replaceSubrange(o..<(o + s.utf8.count), with: Array(s.utf8))
    }
    d.append(contentsOf: body)
    d.append(contentsOf: Array(path.utf8) + [0])
    return d
}

/// A constructed logarchive around the real macOS tracev3: its main image's uuidtext holds
/// format strings written for its entries' references (the real strings are not public), and
/// its dsc is the real damaged file that happens to carry the catalog's dsc UUID.
func makeConstructedArchive() throws -> URL {
    let root = try temporaryDirectory().appendingPathComponent("constructed.logarchive")
    let fm = FileManager.default
    for sub in ["Persist", "10", "dsc"] { try fm.createDirectory(at: root.appendingPathComponent(sub), withIntermediateDirectories: true) }
    try fm.copyItem(at: unifiedLogging.appendingPathComponent("0000000000000030.tracev3"),
                    to: root.appendingPathComponent("Persist/0000000000000030.tracev3"))
    try fm.copyItem(at: unifiedLogging.appendingPathComponent("uuidtext/dsc/8E21CAB1DCF936B49F85CF860E6F34EC"),
                    to: root.appendingPathComponent("dsc/8E21CAB1DCF936B49F85CF860E6F34EC"))
    let text = makeUUIDText(start: 0x35A700, size: 0x5900, strings: [
        0x35A710: "%{public}s %{public}s version %{public}s",
        0x35FCF0: "Server GUID: %{public}@",
        0x35CD8C: "%{public}s",
        0x35B610: "Registered: %{bool}d",
        0x35BA90: "%{public}s %{private}s",
    ], path: "/System/Library/PrivateFrameworks/AssetCacheServices.framework/AssetCache")
    try text.write(to: root.appendingPathComponent("10/1674443A9A33FCAF11D0ADEBBF5B95"))
    return root
}

@Suite struct UnifiedLogStringsTests {
    @Test func realSharedCacheStringFilesV1AndV2() throws {
        let dir = unifiedLogging.appendingPathComponent("uuidtext/dsc")
        let v1 = try SharedCacheStrings(Array(try Data(contentsOf: dir.appendingPathComponent("dsc-version1"))), path: "dsc-version1")
        #expect(v1.version == 1 && v1.ranges.count == 252 && v1.images.count == 196)
        let v2 = try SharedCacheStrings(Array(try Data(contentsOf: dir.appendingPathComponent("dsc-version2"))), path: "dsc-version2")
        #expect(v2.version == 2 && v2.ranges.count == 263 && v2.images.count == 200)
        // Every range resolves to a string and names an image with a path.
        for cache in [v1, v2] {
            for r in cache.ranges.prefix(50) {
                let hit = cache.format(r.offset)
                #expect(hit != nil)
                if let (_, image) = hit { #expect(cache.images[image].path.hasPrefix("/")) }
            }
            #expect(cache.format(UInt64.max - 1) == nil)
        }
    }

    @Test func damagedSharedCacheIsOneLineError() throws {
        let path = unifiedLogging.appendingPathComponent("uuidtext/dsc/8E21CAB1DCF936B49F85CF860E6F34EC").path
        #expect(throws: InputError.self) { try SharedCacheStrings(try ulReadFile(path), path: path) }
        do {
            _ = try SharedCacheStrings(try ulReadFile(path), path: path)
        } catch let e as InputError {
            #expect(!e.description.contains("\n"))
            #expect(e.description.contains("8E21CAB1DCF936B49F85CF860E6F34EC"))
        }
    }

    @Test func realUUIDTextFiles() throws {
        let dir = unifiedLogging.appendingPathComponent("uuidtext")
        let one = try UUIDText(Array(try Data(contentsOf: dir.appendingPathComponent("00/7EF56328D53A78B59CCCE3E3189F57"))), path: "00")
        #expect(one.ranges.count == 1 && one.imagePath.hasPrefix("/"))
        let r = one.ranges[0]
        #expect(one.format(UInt64(r.start)) != nil)
        let lsd = try UUIDText(Array(try Data(contentsOf: dir.appendingPathComponent("22/0D3C2953A33917B333DD8366AC25F2"))), path: "22")
        #expect(lsd.ranges.isEmpty && lsd.imagePath == "/usr/libexec/lsd")
    }

    @Test func realTimesync() throws {
        var ts = ULTimesync()
        ts.add(Array(try Data(contentsOf: unifiedLogging.appendingPathComponent("timesync/0000000000000002.timesync"))), path: "ts")
        #expect(ts.problems.isEmpty)
        #expect(ts.boots.count == 5)
        #expect(ts.boots.values.reduce(0) { $0 + $1.syncs.count } == 4_089)
    }

    @Test func osLogPrintfDialect() {
        func render(_ format: String, _ args: [ULArgument]) -> String {
            var out: [UInt8] = []
            Array(format.utf8).withUnsafeBytes { ulRender(format: $0, args: args, into: &out) }
            return String(decoding: out, as: UTF8.self)
        }
        let s = Array("SFIManagedFocal".utf8)
        s.withUnsafeBytes { str in
            #expect(render("%{public}@ is %{private}s", [.string(str), .privateValue]) == "SFIManagedFocal is <private>")
            #expect(render("%{public}-22s: OFF", [.string(str)]) == "SFIManagedFocal       : OFF")
            #expect(render("%.*s!", [.precision(3), .string(str)]) == "SFI!")
        }
        #expect(render("on=%{bool}d %{BOOL}d", [.int(1, size: 4), .int(0, size: 4)]) == "on=true NO")
        #expect(render("e=%{errno}d", [.int(2, size: 4)]) == "e=[2: No such file or directory]")
        #expect(render("(%s: %ld.%6.6d: 0x%x)", []) == "(<decode: missing data>: <decode: missing data>.<decode: missing data>: 0x<decode: missing data>)")
        #expect(render("%ld.%6.6d: 0x%x %%", [.int(0, size: 8), .int(1, size: 4), .int(2, size: 4)]) == "0.000001: 0x2 %")
        #expect(render("%d %u %lld", [.int(UInt64(UInt32(bitPattern: -5)), size: 4), .int(7, size: 4), .int(UInt64(bitPattern: -9), size: 8)]) == "-5 7 -9")
        #expect(render("%s", [.null]) == "(null)")
    }

    @Test func constructedArchiveResolvesFormatStrings() throws {
        let root = try makeConstructedArchive()
        defer { try? FileManager.default.removeItem(at: root.deletingLastPathComponent()) }
        let reader = UnifiedLogReader(root: root.path)
        let data = try Data(contentsOf: root.appendingPathComponent("Persist/0000000000000030.tracev3"))
        var messages: [String] = []
        var processes: Set<String> = []
        let summary = data.withUnsafeBytes { b in
            reader.read(b) { r in
                messages.append(String(decoding: r.message, as: UTF8.self))
                processes.insert(r.processPath ?? "")
            }
        }
        #expect(summary.formatMissing == 0)
        #expect(messages[0] == "Built-in Caching Server version 214.2")
        #expect(messages[1] == "Server GUID: EED8FD46-9636-4274-8F03-6B7B329B99F9")
        #expect(messages[2].hasPrefix("Cache manager initialized, cache at /Library/Application Support/Apple/AssetCache/Data"))
        #expect(messages[3] == "Registered: <decode: missing data>")
        #expect(messages[4] == "wants <decode: missing data>")
        #expect(processes == ["/System/Library/PrivateFrameworks/AssetCacheServices.framework/AssetCache"])
        // The damaged dsc named by the catalog: a one-line problem when it is needed.
        #expect(reader.strings.dsc(ULUUID(hex: "8E21CAB1DCF936B49F85CF860E6F34EC")!) == nil)
        #expect(reader.strings.problems.count == 1)
    }

    @Test func wallTimeByTheHeaderRule() throws {
        let data = try Data(contentsOf: unifiedLogging.appendingPathComponent("0000000000000f85.tracev3"))
        let reader = UnifiedLogReader(root: nil)
        var lo = Int64.max, hi = Int64.min
        var missing = 0
        let summary = data.withUnsafeBytes { b in
            reader.read(b) { r in
                lo = min(lo, r.wallNanos)
                hi = max(hi, r.wallNanos)
                if r.formatMissing { missing += 1 }
            }
        }
        #expect(!summary.fromTimesync)
        // 2022-04-11T11:37:24Z … 2022-04-13T13:19:04Z (the reference README).
        #expect(lo / 1_000_000_000 == 1_649_677_044)
        #expect(hi / 1_000_000_000 == 1_649_855_944)
        // No string files: every log entry is its arguments.
        #expect(summary.formatMissing == 8_158 - summary.stats.sources[0, default: 0] - dynamicCount(data))
    }

    func dynamicCount(_ data: Data) -> Int {
        var n = 0
        var r = TraceV3Reader()
        data.withUnsafeBytes { b in r.read(b) { e, _ in if e.kind == .log && e.isDynamic { n += 1 } } }
        return n
    }
}

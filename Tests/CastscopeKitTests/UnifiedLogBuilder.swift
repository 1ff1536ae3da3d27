import Foundation

@testable import CastscopeKit

/// Writes small tracev3 files and their uuidtext, to test what the real reference files cannot
/// show (resolvable strings, sessions): constructed data, said so in the README.
struct TraceV3Builder {
    struct Process {
        var pid: UInt32
        var uuid: [UInt8]
        var path: String
        var subsystem: (String, String)?
    }
    struct Message {
        var process: Int
        /// Nanoseconds after the header's wall clock.
        var offset: UInt64
        var format: String
        var args: [String] = []
        var level: UInt8 = 0
        var thread: UInt64 = 0x3A0C1
    }
    var processes: [Process] = []
    var messages: [Message] = []
    /// The header's wall clock (seconds since the epoch) at continuous time `ct0`.
    var wallSeconds: UInt32 = 1_773_356_390
    var ct0: UInt64 = 5_000_000_000

    static func uuid(_ n: UInt8) -> [UInt8] { [0xC0, 0xFF, 0xEE, n] + [UInt8](repeating: n, count: 12) }

    private static func le<T: FixedWidthInteger>(_ v: T, _ d: inout Data) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
    private static func pad8(_ d: inout Data) { while d.count % 8 != 0 { d.append(0) } }
    private static func chunk(_ tag: UInt32, _ sub: UInt32, _ body: Data, _ out: inout Data) {
        le(tag, &out); le(sub, &out); le(UInt64(body.count), &out)
        out.append(body)
        pad8(&out)
    }

    /// Format strings per process, at references 0x100, 0x200, …
    func formatRefs() -> [[String: UInt32]] {
        var refs = [[String: UInt32]](repeating: [:], count: processes.count)
        for m in messages where refs[m.process][m.format] == nil {
            refs[m.process][m.format] = UInt32(0x100 * (refs[m.process].count + 1))
        }
        return refs
    }

    /// The logarchive's files: relative path → bytes.
    func archiveFiles() -> [String: Data] {
        var files: [String: Data] = [:]
        files["Persist/0000000000000001.tracev3"] = tracev3()
        let refs = formatRefs()
        for (i, p) in processes.enumerated() {
            let hex = p.uuid.map { String(format: "%02X", $0) }.joined()
            let size = 0x100 * (refs[i].count + 2)
            var strings: [UInt32: String] = [:]
            for (f, r) in refs[i] { strings[r] = f }
            files[String(hex.prefix(2)) + "/" + String(hex.dropFirst(2))] = makeUUIDText(start: 0, size: size, strings: strings, path: p.path)
        }
        return files
    }

    func write(to root: URL) throws {
        for (rel, data) in archiveFiles() {
            let url = root.appendingPathComponent(rel)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
    }

    func tracev3() -> Data {
        var out = Data()
        // Header.
        var h = Data()
        Self.le(UInt32(1), &h); Self.le(UInt32(1), &h); Self.le(UInt64(0), &h)
        Self.le(wallSeconds, &h); Self.le(UInt32(0), &h); Self.le(UInt32(0), &h)
        Self.le(Int32(0), &h); Self.le(UInt32(0), &h); Self.le(UInt32(1), &h)
        Self.le(UInt32(0x6100), &h); Self.le(UInt32(8), &h); Self.le(ct0, &h)
        Self.le(UInt32(0x6101), &h); Self.le(UInt32(56), &h); h.append(Data(count: 8))
        h.append(Data(("23E224".utf8) + [UInt8](repeating: 0, count: 10))); h.append(Data("iPhone15,2".utf8 + [UInt8](repeating: 0, count: 22)))
        Self.le(UInt32(0x6102), &h); Self.le(UInt32(24), &h); h.append(Data(Self.uuid(0xB0))); Self.le(UInt32(42), &h); Self.le(UInt32(0), &h)
        Self.le(UInt32(0x6103), &h); Self.le(UInt32(48), &h); h.append(Data("/var/db/timezone/localtime".utf8 + [UInt8](repeating: 0, count: 22)))
        Self.chunk(0x1000, 0x11, h, &out)
        // Catalog.
        var uuids = Data()
        for p in processes { uuids.append(Data(p.uuid)) }
        var strings = Data()
        var subOffsets: [(UInt16, UInt16)?] = []
        for p in processes {
            if let (s, c) = p.subsystem {
                let so = UInt16(strings.count); strings.append(Data(s.utf8)); strings.append(0)
                let co = UInt16(strings.count); strings.append(Data(c.utf8)); strings.append(0)
                subOffsets.append((so, co))
            } else { subOffsets.append(nil) }
        }
        Self.pad8(&strings)
        var procs = Data()
        for (i, p) in processes.enumerated() {
            Self.le(UInt16(i), &procs); Self.le(UInt16(0), &procs); Self.le(UInt16(i), &procs); Self.le(UInt16(0xFFFF), &procs)
            Self.le(UInt64(100 + i), &procs); Self.le(UInt32(7), &procs); Self.le(p.pid, &procs); Self.le(UInt32(501), &procs)
            Self.le(UInt32(0), &procs); Self.le(UInt32(0), &procs); Self.le(UInt32(0), &procs)
            let subs = subOffsets[i]
            Self.le(UInt32(subs == nil ? 0 : 1), &procs); Self.le(UInt32(0), &procs)
            if let (so, co) = subs { Self.le(UInt16(1), &procs); Self.le(so, &procs); Self.le(co, &procs) }
            Self.pad8(&procs)
        }
        var c = Data()
        Self.le(UInt16(uuids.count), &c); Self.le(UInt16(uuids.count + strings.count), &c); Self.le(UInt16(processes.count), &c)
        Self.le(UInt16(uuids.count + strings.count + procs.count), &c); Self.le(UInt16(0), &c); c.append(Data(count: 6))
        Self.le(ct0, &c)
        c.append(uuids); c.append(strings); c.append(procs)
        Self.chunk(0x600B, 0x11, c, &out)
        // One chunkset of stored ("bv4-") data: one firehose chunk per process.
        let refs = formatRefs()
        var inner = Data()
        for (i, p) in processes.enumerated() {
            var tps = Data()
            for m in messages where m.process == i {
                var data = Data()
                Self.le(UInt32(0x1234), &data)
                if p.subsystem != nil { Self.le(UInt16(1), &data) }
                data.append(0); data.append(UInt8(m.args.count))
                var values = Data()
                for a in m.args {
                    data.append(0x22); data.append(4)
                    Self.le(UInt16(values.count), &data); Self.le(UInt16(a.utf8.count + 1), &data)
                    values.append(Data(a.utf8)); values.append(0)
                }
                data.append(values)
                tps.append(4); tps.append(m.level)
                Self.le(UInt16(0x0002 | (p.subsystem != nil ? 0x0200 : 0)), &tps)
                Self.le(refs[i][m.format]!, &tps)
                Self.le(m.thread, &tps)
                Self.le(UInt32(truncatingIfNeeded: m.offset), &tps); Self.le(UInt16(truncatingIfNeeded: m.offset >> 32), &tps)
                Self.le(UInt16(data.count), &tps)
                tps.append(data)
                Self.pad8(&tps)
            }
            var f = Data()
            Self.le(UInt64(100 + i), &f); Self.le(UInt32(7), &f); f.append(0); f.append(0); Self.le(UInt16(0), &f)
            Self.le(UInt16(16 + tps.count), &f); Self.le(UInt16(0x1000), &f); Self.le(UInt16(0), &f); f.append(0); f.append(0)
            Self.le(ct0, &f)
            f.append(tps)
            Self.chunk(0x6001, 0, f, &inner)
        }
        var set = Data("bv4-".utf8)
        Self.le(UInt32(inner.count), &set)
        set.append(inner)
        set.append(Data("bv4$".utf8))
        Self.chunk(0x600D, 0, set, &out)
        return out
    }
}

/// The jetsam-kill story as an iPhone would log it: a broadcast extension streaming frames
/// until the kernel kills it at its memory limit.
func jetsamStory() -> TraceV3Builder {
    var b = TraceV3Builder()
    b.processes = [
        .init(pid: 2210, uuid: TraceV3Builder.uuid(1), path: "/private/var/containers/Bundle/Application/X/JitsiDemo.app/PlugIns/BroadcastExtension.appex/BroadcastExtension",
              subsystem: ("org.jitsi.meet.broadcast", "extension")),
        .init(pid: 0, uuid: TraceV3Builder.uuid(2), path: "/kernel", subsystem: nil),
    ]
    let ms: UInt64 = 1_000_000
    b.messages.append(.init(process: 0, offset: 0, format: "broadcast started"))
    b.messages.append(.init(process: 0, offset: 3 * ms, format: "Open socket connection"))
    b.messages.append(.init(process: 0, offset: 5 * ms, format: "client stream %{public}s completed", args: ["open"]))
    for i in 0..<40 {
        b.messages.append(.init(process: 0, offset: UInt64(139 + 100 * i) * ms, format: "video sample processed successfully", level: 1))
    }
    b.messages.append(.init(process: 1, offset: 4_100 * ms,
                            format: "EXC_RESOURCE -> %{public}s exceeded mem limit: ActiveHard %{public}s MB (fatal)", args: ["BroadcastExtension[2210]", "50"], thread: 0x2B))
    return b
}

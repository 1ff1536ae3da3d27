import Foundation
import Testing

@testable import CastscopeKit

/// The eighth hostile review: zip member names flagged UTF-8 (bit 11) came out empty; the read
/// that crossed a budget, and the last reads of an archive cut short, were dropped.
@Suite("hostile round 8: archive member names, budgets and cut archives")
struct HostileRound8Tests {
    @Test("zip names as Python, Java and Windows write them (UTF-8, bit 11), and as DOS wrote them (code page 437), are the members' names: never empty, never the same")
    func zipMemberNamesNotASCII() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let src = dir.appendingPathComponent("src")
        let phone = src.appendingPathComponent("Jürgens iPhone")
        try FileManager.default.createDirectory(at: phone, withIntermediateDirectories: true)
        let samples = packageRoot.appendingPathComponent("samples")
        try FileManager.default.copyItem(at: samples.appendingPathComponent("stopped-10001/device-syslog.txt"),
                                         to: phone.appendingPathComponent("device-syslog.txt"))
        try FileManager.default.copyItem(at: samples.appendingPathComponent("retry-storm/log-stream-debug.txt"),
                                         to: src.appendingPathComponent("café.txt"))
        try jetsamStory().write(to: phone.appendingPathComponent("system_logs.logarchive"))
        let zip = dir.appendingPathComponent("bundle.zip")
        // Python's zipfile sets bit 11 on every name that is not ASCII. Two members named in
        // code page 437 (no flag: `Jürgen` and `Jörgen`, one name with U+FFFD for the byte
        // that is not UTF-8) and one flagged UTF-8 whose bytes are not (libarchive gives no
        // name for it) are written under placeholders of the same length and patched in.
        let gen = try runShell("""
            exec python3 -c '
            import os, struct, sys, zipfile
            src, out = sys.argv[1], sys.argv[2]
            log = open(os.path.join(src, "café.txt"), "rb").read()
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
                for d, _, fs in os.walk(src):
                    for f in sorted(fs):
                        p = os.path.join(d, f)
                        z.write(p, os.path.relpath(p, src))
                for i in (1, 2, 3):
                    z.writestr("PLACEHOLDER-%d.txt" % i, log)
            d = bytearray(open(out, "rb").read())
            names = {b"PLACEHOLDER-1.txt": "Jürgen/syslog.txt".encode("cp437"),
                     b"PLACEHOLDER-2.txt": "Jörgen/syslog.txt".encode("cp437"),
                     b"PLACEHOLDER-3.txt": b"bad\\xff\\xfe--name-3.txt"}
            for old, new in names.items():
                assert len(old) == len(new)
                d = d.replace(old, new)
            for sig, flag, length, name in ((b"PK\\x03\\x04", 6, 26, 30), (b"PK\\x01\\x02", 8, 28, 46)):
                p = d.find(sig)
                while p >= 0:
                    n = struct.unpack_from("<H", d, p + length)[0]
                    if bytes(d[p + name:p + name + n]).startswith(b"bad\\xff"):
                        struct.pack_into("<H", d, p + flag, struct.unpack_from("<H", d, p + flag)[0] | 0x800)
                    p = d.find(sig, p + 4)
            open(out, "wb").write(d)
            ' "$0" "$1"
            """, [src.path, zip.path])
        #expect(gen.status == 0, "\(gen.stderr)")
        let r = try castscope(["analyze", "--json", zip.path])
        let json = try #require(r.json, "\(r.stderr)")
        let paths = (json["inputs"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
            .map { String($0.dropFirst(zip.path.count)) }
        let unreadable = paths.filter { $0.hasPrefix("!\u{FFFD}member ") && $0.hasSuffix(" (its name cannot be read)") }
        #expect(unreadable.count == 1, "\(paths)")
        #expect(Set(paths).subtracting(unreadable) == ["!café.txt", "!Jürgens iPhone/device-syslog.txt", "!Jürgens iPhone/system_logs.logarchive",
                                                       "!Jürgen/syslog.txt", "!Jörgen/syslog.txt"], "\(paths)")
        #expect(paths.count == 6)
        // The logarchive under the folder is put together (its timesync file was read as a log: a binary file).
        #expect((json["inputErrors"] as? [Any])?.isEmpty == true, "\(r.stderr)")
        let sessions = json["sessions"] as? [[String: Any]] ?? []
        #expect(sessions.contains { $0["outcome"] as? String == "killed" && $0["process"] as? String == "BroadcastExtension" })
        // The evidence names its member.
        #expect(r.stdout.contains("bundle.zip!Jürgens iPhone/device-syslog.txt:"))
    }

    @Test("a member name's bytes: UTF-8 when they are, else code page 437 in a zip and ISO 8859-1 in a tar, every byte its own character")
    func memberNameDecoding() {
        func name(_ bytes: [UInt8], zip: Bool) -> String? {
            bytes.withUnsafeBytes { ArchiveReader.memberName($0, zip: zip) }
        }
        #expect(name(Array("Jürgens iPhone/café.txt".utf8), zip: true) == "Jürgens iPhone/café.txt")
        #expect(name(Array("Jürgens iPhone/café.txt".utf8), zip: false) == "Jürgens iPhone/café.txt")
        #expect(name([0x4A, 0x81, 0x72, 0x67], zip: true) == "Jürg")
        #expect(name([0x4A, 0x94, 0x72, 0x67], zip: true) == "Jörg")
        #expect(name([0xE1, 0xFF], zip: true) == "ß\u{A0}")
        #expect(name([0x4A, 0xFC, 0x72, 0x67], zip: false) == "Jürg")
        #expect(name([0x4A, 0xE4, 0x72, 0x67], zip: false) == "Järg")
        #expect(name([], zip: true) == nil)
    }
}

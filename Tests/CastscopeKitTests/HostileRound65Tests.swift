import Foundation
import Testing

@testable import CastscopeKit

/// Session 65's hostile round.
@Suite("hostile round 65")
struct HostileRound65Tests {
    @Test("a .gz with bytes after its gzip data that are no member: every line read, and the bytes said as trailing garbage at their offset (it said zlib's `incorrect header check`)")
    func gzipTrailingGarbage() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = try String(contentsOf: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt"), encoding: .utf8)
        let gz = try makeArchive(.gz, [("x", Array(text.utf8))])
        for junk in ["JUNKJUNK\n", "<html>404</html>", "\u{1F}x"] {
            let url = dir.appendingPathComponent("device.log.gz")
            try Data(gz + Array(junk.utf8)).write(to: url)
            let r = try castscope(["analyze", "--json", url.path])
            #expect(r.status == 1, "\(r.stderr)")
            #expect(r.stderr.contains("device.log.gz: at byte \(gz.count): what follows the gzip data is not gzip (trailing garbage?): passed over; everything before it was read"), "\(junk): \(r.stderr)")
            let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
            let input = (json["inputs"] as! [[String: Any]])[0]
            #expect(input["lines"] as? Int == text.split(separator: "\n", omittingEmptySubsequences: false).count - 1, "\(input)")
        }
    }

    @Test("an .xz or .zst with bytes after its data: every line read (a small file lost all of them, a big one its last block), the bytes said at their offset; concatenated streams, padding and a last line without its line break read as before")
    func xzZstdTrailingGarbage() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = try String(contentsOf: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        // (the last line without its line break: the junk must not take it)
        let cut = Array(text.utf8.dropLast())
        for (kind, ext) in [(ArchiveKind.xz, "xz"), (.zst, "zst")] {
            let data = try makeArchive(kind, [("x", cut)])
            for (name, bytes, junk) in [("junk", data + Array("JUNKJUNK\n".utf8), true), ("html", data + Array("<html>404</html>".utf8), true),
                                        ("twice", data + data, false), ("padded", data + [UInt8](repeating: 0, count: kind == .xz ? 8 : 0), false)] {
                let url = dir.appendingPathComponent("\(name).log.\(ext)")
                try Data(bytes).write(to: url)
                let r = try castscope(["analyze", "--json", url.path])
                let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
                let input = (json["inputs"] as! [[String: Any]])[0]
                #expect(input["lines"] as? Int == (name == "twice" ? 2 * lines - 1 : lines), "\(name).\(ext): \(input) \(r.stderr)")
                if junk {
                    #expect(r.status == 1, "\(r.stderr)")
                    let what = kind == .xz ? "xz" : "zstd"
                    #expect(r.stderr.contains("\(name).log.\(ext): at byte \(data.count): what follows the \(what) data is not \(what) (trailing garbage?): passed over; everything before it was read"), "\(r.stderr)")
                } else {
                    #expect(r.status == 0, "\(name).\(ext): \(r.stderr)")
                }
            }
        }
    }
}

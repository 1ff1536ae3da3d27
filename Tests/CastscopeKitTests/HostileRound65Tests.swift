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
}

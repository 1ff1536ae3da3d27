import Foundation
import Testing

/// `analyze`'s relay join on generated bundles (`scripts/make-join-bundle.py`): a phone's
/// broadcasts beside a relay that also serves other phones, each relay session's room naming
/// the broadcast it belongs to. Constructed data.
@Suite("relay join: each broadcast to its own relay session beside other phones'",
       .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote), "needs systemd-journal-remote (make test installs it)"))
struct JoinBundleTests {
    /// (seed, broadcasts, seconds between them, other phones' sessions a minute, relay clock ahead)
    @Test("every join right (by the largest overlap alone, another phone's longer session that spans a broadcast won)",
          arguments: [(1, 40, 60.0, 6.0, 2.5), (4, 30, 120.0, 60.0, 7.0), (3, 40, 30.0, 20.0, -40.0)])
    func ownRelaySession(_ c: (Int, Int, Double, Double, Double)) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let gen = Process()
        gen.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gen.arguments = ["python3", packageRoot.appendingPathComponent("scripts/make-join-bundle.py").path,
                         "\(c.0)", "\(c.1)", "\(c.2)", "\(c.3)", "\(c.4)", dir.path]
        try gen.run()
        gen.waitUntilExit()
        #expect(gen.terminationStatus == 0)
        let export = try Data(contentsOf: dir.appendingPathComponent("relay.export"))
        let journal = dir.appendingPathComponent("relay.journal")
        try makeJournal(export, at: journal)
        // The phone session each relay session belongs to: room rK is the K-th broadcast (S(K+1)).
        var own: [String: String] = [:]
        var session = ""
        for line in String(decoding: export, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("RELAY_SESSION=") { session = String(line.dropFirst(14)) }
            if line.hasPrefix("RELAY_ROOM=r"), let k = Int(line.dropFirst(12)) { own[session] = "S\(k + 1)" }
        }
        let r = try castscope(["analyze", "--json", dir.appendingPathComponent("phone.log").path, journal.path])
        let sessions = (r.json?["sessions"] as? [[String: Any]]) ?? []
        #expect(sessions.count == c.1)
        var joined = 0, wrong: [String] = []
        for s in sessions {
            guard let id = s["id"] as? String, let relay = (s["relay"] as? [String: Any])?["id"] as? String else { continue }
            joined += 1
            if own[relay] != id { wrong.append("\(id)→\(relay.prefix(8))") }
        }
        #expect(joined == c.1 && wrong.isEmpty, "\(joined) joined; to another phone's: \(wrong.prefix(5))")
    }
}

import Foundation
import Testing

/// `analyze`'s relay join on generated bundles (`scripts/make-join-bundle.py`): a phone's
/// broadcasts beside a relay that also serves other phones, each relay session's room naming
/// the broadcast it belongs to. Constructed data.
@Suite("relay join: each broadcast to its own relay session beside other phones'",
       .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote), "needs systemd-journal-remote (make test installs it)"))
struct JoinBundleTests {
    /// Writes phone.log and relay.export for (seed, broadcasts, period, noise, offset) into `dir`.
    static func generate(_ c: (Int, Int, Double, Double, Double), in dir: URL) throws {
        let gen = Process()
        gen.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gen.arguments = ["python3", packageRoot.appendingPathComponent("scripts/make-join-bundle.py").path,
                         "\(c.0)", "\(c.1)", "\(c.2)", "\(c.3)", "\(c.4)", dir.path]
        try gen.run()
        gen.waitUntilExit()
        #expect(gen.terminationStatus == 0)
    }

    /// (seed, broadcasts, seconds between them, other phones' sessions a minute, relay clock ahead)
    @Test("every join right (by the largest overlap alone, another phone's longer session that spans a broadcast won)",
          arguments: [(1, 40, 60.0, 6.0, 2.5), (4, 30, 120.0, 60.0, 7.0), (3, 40, 30.0, 20.0, -40.0)])
    func ownRelaySession(_ c: (Int, Int, Double, Double, Double)) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.generate(c, in: dir)
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

    @Test("the phone's own relay sessions missing (another relay host's journal): no broadcast joined to another phone's, and the header says why",
          arguments: [(7, 5, 120.0, 20.0, 30.0), (2, 12, 60.0, 30.0, -5.0)])
    func ownRelaySessionsMissing(_ c: (Int, Int, Double, Double, Double)) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.generate(c, in: dir)
        // Every entry of a session whose room names one of the phone's broadcasts taken out.
        let entries = String(decoding: try Data(contentsOf: dir.appendingPathComponent("relay.export")), as: UTF8.self)
            .components(separatedBy: "\n\n")
        let own = Set(entries.compactMap { e -> String? in
            guard e.contains("\nRELAY_ROOM=r") || e.hasPrefix("RELAY_ROOM=r") else { return nil }
            return e.split(separator: "\n").first { $0.hasPrefix("RELAY_SESSION=") }.map { String($0.dropFirst(14)) }
        })
        #expect(own.count == c.1)
        let others = entries.filter { e in !own.contains { e.contains("RELAY_SESSION=" + $0) } }
        let journal = dir.appendingPathComponent("relay.journal")
        try makeJournal(Data(others.joined(separator: "\n\n").utf8), at: journal)
        let r = try castscope(["analyze", "--json", dir.appendingPathComponent("phone.log").path, journal.path])
        let sessions = (r.json?["sessions"] as? [[String: Any]]) ?? []
        #expect(sessions.count == c.1)
        #expect(sessions.allSatisfy { $0["relay"] == nil || $0["relay"] is NSNull }, "joined to other phones' sessions")
        let text = try castscope(["analyze", "--no-color", dir.appendingPathComponent("phone.log").path, journal.path]).stdout
        #expect(text.contains("relay not joined: about"), "\(text.prefix(600))")
        #expect(!text.contains("orphan-device-session"))
    }
}

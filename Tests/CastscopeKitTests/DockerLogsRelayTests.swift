import Foundation
import Testing

/// The relay run in a container: `docker logs -t` / `kubectl logs --timestamps` give each
/// message after an RFC 3339 time, and Go's `log` writes `2026/03/12 10:15:04 …` itself. Read
/// as plain text (times lost), the phone's session lost its relay session and the clock; the
/// fallback format `timestamped` keeps the times, so the join is the journal's. Built from
/// `samples/relay/relay.export` (constructed from the contract, not a paste).
@Suite("the relay's lines from docker logs join as its journal's do")
struct DockerLogsRelayTests {
    /// (µs since 1970, message) of each entry of the sample export.
    static func entries() throws -> [(Int64, String)] {
        let export = try String(contentsOf: packageRoot.appendingPathComponent("samples/relay/relay.export"), encoding: .utf8)
        var out: [(Int64, String)] = []
        var time: Int64?
        for line in export.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("__REALTIME_TIMESTAMP=") { time = Int64(line.dropFirst(21)) }
            if line.hasPrefix("MESSAGE="), let t = time { out.append((t, String(line.dropFirst(8)))) }
            if line.isEmpty { time = nil }
        }
        return out
    }

    static func rfc3339(_ us: Int64, nanos: Bool) -> String {
        let d = Date(timeIntervalSince1970: Double(us / 1_000_000))
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: "UTC")!
        let p = c.dateComponents([.year, .month, .day, .hour, .minute, .second], from: d)
        let frac = nanos ? String(format: "%06d000", Int(us % 1_000_000)) : String(format: "%06d", Int(us % 1_000_000))
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.", p.year!, p.month!, p.day!, p.hour!, p.minute!, p.second!) + frac + "Z"
    }

    func summary(_ relay: String) throws -> (joined: Int, clock: String?, relayFormat: String?) {
        let r = try castscope(["analyze", "--json", "samples/healthy-jitsi", relay])
        let sessions = (r.json?["sessions"] as? [[String: Any]]) ?? []
        let joined = sessions.filter { $0["relay"] != nil }.count
        let clock = (r.json?["clock"] as? [String: Any])?["offsetSeconds"].map { "\($0)" }
        let format = ((r.json?["inputs"] as? [[String: Any]]) ?? []).last?["format"] as? String
        return (joined, clock, format)
    }

    @Test("a log show section pasted among a docker log's lines is log show's; the relay's lines after it stay the relay's")
    func pastedSection() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var text = ""
        // (more than the 200 lines detection reads: the file is a docker log's, the section pasted after)
        for k in 0..<250 { text += "2026-03-12T09:1\(k / 60):\(String(format: "%02d", k % 60)).000000000Z worker heartbeat ok n=\(k)\n" }
        text += "2026-03-12T09:15:00.000000000Z session 7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone14,2 room=a\n"
        text += "2026-03-12 10:15:02.104211+0100 0x2f1c4    Default     0x0                  812    0    BroadcastExtension: broadcast started\n"
        text += "2026-03-12 10:15:02.109211+0100 0x2f1c4    Default     0x0                  812    0    BroadcastExtension: Open socket connection\n"
        text += "2026-03-12T09:15:03.000000000Z session 0b7f1a2c-0000-4f0e-9a51-2f1d3c4b5a69 accepted peer=iPhone15,3 room=b\n"
        text += "2026-03-12T09:15:04.000000000Z session 0b7f1a2c-0000-4f0e-9a51-2f1d3c4b5a69 closed reason=peer-eof frames=10 duration=1.0s\n"
        let path = dir.appendingPathComponent("mixed.log")
        try text.write(to: path, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", path.path])
        let formats = ((r.json?["inputs"] as? [[String: Any]]) ?? []).map { $0["format"] as? String ?? "" }
        #expect(formats == ["timestamped", "apple-default"], "\(formats)")
        #expect(((r.json?["relaySessions"] as? [Any]) ?? []).count == 2)
        let sessions = (r.json?["sessions"] as? [[String: Any]]) ?? []
        #expect(sessions.first?["process"] as? String == "BroadcastExtension")
    }

    @Test("docker logs -t, kubectl logs --timestamps: the same join and clock as the journal export")
    func timestamps() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let entries = try Self.entries()
        #expect(entries.count > 10)
        let docker = dir.appendingPathComponent("relay-docker.log")
        try entries.map { Self.rfc3339($0.0, nanos: true) + " " + $0.1 }.joined(separator: "\n").appending("\n")
            .write(to: docker, atomically: true, encoding: .utf8)
        let journal = try summary(packageRoot.appendingPathComponent("samples/relay/relay.export").path)
        let fromDocker = try summary(docker.path)
        #expect(journal.joined >= 1)
        #expect(fromDocker.relayFormat == "timestamped")
        #expect(fromDocker.joined == journal.joined)
        #expect(fromDocker.clock != nil && fromDocker.clock == journal.clock, "\(fromDocker.clock ?? "nil") vs \(journal.clock ?? "nil")")
    }
}

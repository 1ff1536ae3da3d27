import Foundation
import Testing

@testable import CastscopeKit

/// Found by fuzzing the release binary: numbers a damaged file (or an option) can carry that
/// overflowed arithmetic (a trap: exit 132, the whole bundle lost), nesting that exhausted the
/// stack (139) or took quadratic time, outputs that wrote into an input, and control sequences
/// `show` passed to the terminal. Each input lies beside a good log where a bundle can hold it:
/// the good log's session must still be reported.
@Suite("Hostile numbers, nesting and outputs")
struct HostileNumbersTests {
    static let good = packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt")

    func scratch(_ files: [String: String]) throws -> URL {
        let dir = try temporaryDirectory()
        try FileManager.default.copyItem(at: Self.good, to: dir.appendingPathComponent("good.txt"))
        for (name, text) in files { try Data(text.utf8).write(to: dir.appendingPathComponent(name)) }
        return dir
    }

    func sessions(_ r: RunResult) -> [[String: Any]] { r.json?["sessions"] as? [[String: Any]] ?? [] }

    static let exportMax = "__REALTIME_TIMESTAMP=9223372036854775807\n_HOSTNAME=relay1\nSYSLOG_IDENTIFIER=broadcast-relay\nMESSAGE=session a accepted peer=x\n\n"

    @Test("numbers no log holds: reports, not traps", arguments: [
        // A JetsamEvent whose page count times page size overflows.
        ("jetsam.ips", "{\"bug_type\":\"298\",\"processes\":[{\"reason\":\"x\",\"name\":\"y\",\"rpages\":9223372036854775807}]}\n"),
        // A journal JSON byte array of a number past 64 bits.
        ("bytes.json", "{\"__REALTIME_TIMESTAMP\":\"1773306904673211\",\"SYSLOG_IDENTIFIER\":\"broadcast-relay\",\"MESSAGE\":[99999999999999999999]}\n"),
        // Relay stats whose frames add up past 64 bits.
        ("stats.log", """
            Timestamp                       (process)[PID]
            2026-03-12 10:20:08.000000+0100  localhost relay[7]: session a stats frames=9223372036854775807 bytes=1 fps=10.0 dropped=0
            2026-03-12 10:20:11.000000+0100  localhost relay[7]: session a accepted peer=p room=r
            2026-03-12 10:20:12.000000+0100  localhost relay[7]: session a stats frames=1 bytes=1 fps=10.0 dropped=0

            """),
        // A journal time at the end of 64 bits, shown in the phone's +01:00 beside it.
        ("max.export", exportMax),
    ])
    func numbers(_ name: String, _ text: String) throws {
        let dir = try scratch([name: text])
        defer { try? FileManager.default.removeItem(at: dir) }
        for args in [["--json"], ["--no-color"], ["--oneline"], ["--timezone", "+01:00", "--json"]] {
            let r = try castscope(["analyze"] + args + [dir.path])
            #expect([0, 1].contains(r.status), "\(name) \(args): \(r.status) \(r.stderr)")
            if args == ["--json"] { #expect(sessions(r).contains { $0["outcome"] as? String == "failed-to-connect" }, "\(name)") }
        }
    }

    @Test("the journal's end of time beside a phone dated year 0: the clock pairing does not overflow")
    func farApartClocks() throws {
        let phone = """
            0000-01-01 10:00:00.000000+0100 0x1 Default 0x0 915 0 BroadcastExtension: broadcast started
            0000-01-01 10:00:00.100000+0100 0x1 Default 0x0 915 0 BroadcastExtension: client stream open completed

            """
        let dir = try scratch(["phone.log": phone, "max.export": Self.exportMax])
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try castscope(["analyze", "--json", dir.path])
        #expect([0, 1].contains(r.status), "\(r.status) \(r.stderr)")
        #expect(sessions(r).count >= 2)
    }

    @Test("JSON nested 100,000 deep: an .ips report is one error beside the good log; a journal JSON line is read in linear time")
    func nesting() throws {
        let deep = "{\"a\":" + String(repeating: "[", count: 100_000)
        let arrays = "{\"__REALTIME_TIMESTAMP\":\"1773306904673211\",\"SYSLOG_IDENTIFIER\":\"broadcast-relay\",\"MESSAGE\":"
            + String(repeating: "[", count: 100_000) + "\"session a accepted\"" + String(repeating: "]", count: 100_000) + "}\n"
        let dir = try scratch(["deep.ips": deep, "arrays.json": arrays])
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try castscope(["analyze", "--json", dir.path])
        #expect(r.status == 1, "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("deep.ips") && r.stderr.contains("nested deeper than 512 levels"), "\(r.stderr)")
        #expect(sessions(r).contains { $0["outcome"] as? String == "failed-to-connect" })
        // The same parser reads --config.
        let config = dir.appendingPathComponent("config.json")
        try Data(("{\"thresholds\":" + String(repeating: "[", count: 100_000)).utf8).write(to: config)
        let c = try castscope(["analyze", "--config", config.path, Self.good.path])
        #expect(c.status == 2, "\(c.status) \(c.stderr)")
    }

    @Test("show: a date past 2262 or a journal's end of time is shown, not a trap; control sequences are escaped")
    func show() throws {
        let dir = try scratch([
            "late.log": "2263-01-01 10:00:00.000000+0100 0x1 Default 0x0 915 0 BroadcastExtension: broadcast started\n",
            "max.export": Self.exportMax,
            "esc.export": "__REALTIME_TIMESTAMP=1773306904673211\nSYSLOG_IDENTIFIER=relay\u{1b}[31m\nMESSAGE=session \u{1b}]0;pwn\u{07} \u{1b}[2J\n\n",
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["late.log", "max.export"] {
            let r = try castscope(["show", dir.appendingPathComponent(name).path])
            // (the end of 64 bits is no time: said with its line since session 63, exit 1; it
            // was clamped to 9999 without a word)
            #expect(r.status == (name == "max.export" ? 1 : 0), "\(name): \(r.status) \(r.stderr)")
            if name == "max.export" { #expect(r.stderr.contains("max.export:1: time 9223372036854775807 is no time"), "\(r.stderr)") }
        }
        let r = try castscope(["show", dir.appendingPathComponent("esc.export").path])
        #expect(r.status == 0)
        #expect(!r.stdout.contains("\u{1b}") && !r.stdout.contains("\u{07}"), "\(r.stdout)")
        #expect(r.stdout.contains("\\x1b]0;pwn\\x07"))
        #expect(try castscope(["show", "--start", "2263-01-01", dir.appendingPathComponent("late.log").path]).status == 0)
    }

    @Test("options past what 64 bits hold are usage errors, not traps", arguments: [
        ["--since=-999999999999w"], ["--until=999999999999 weeks ago"], ["--clock-offset=1e300"], ["--clock-offset=nan"],
        ["--clock-offset=-9223372036854775808"], ["--stall-seconds=1e300"], ["--retry-storm-seconds=inf"],
    ])
    func options(_ args: [String]) throws {
        let r = try castscope(["analyze"] + args + [Self.good.path])
        #expect(r.status == 2, "\(args): \(r.status) \(r.stderr)")
        #expect(r.stderr.hasPrefix("castscope: error:") || r.stderr.hasPrefix("Error:"), "\(r.stderr)")
    }

    @Test("a config file's threshold past the range is a usage error")
    func configRange() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("c.json")
        try Data("{\"thresholds\":{\"stall-seconds\":1e300}}".utf8).write(to: config)
        let r = try castscope(["analyze", "--config", config.path, Self.good.path])
        #expect(r.status == 2, "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("stall-seconds"))
    }

    @Test("--clickhouse file:// never writes into an input; tail's --cursor-reset never removes a followed journal")
    func outputsAreNotInputs() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("castscope_events.jsonl")
        try FileManager.default.copyItem(at: Self.good, to: input)
        let before = try Data(contentsOf: input)
        for target in [dir.path, dir.appendingPathComponent("sub").path] {
            let r = try castscope(["analyze", "--clickhouse", "file://" + target, dir.path])
            #expect(r.status == 2, "\(target): \(r.status) \(r.stderr)")
            #expect(r.stderr.hasPrefix("castscope: error: --clickhouse "), "\(r.stderr)")
        }
        let r = try castscope(["analyze", "--clickhouse", "file://" + dir.path, input.path])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(try Data(contentsOf: input) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["castscope_events.jsonl"])
        // The cursor file named as the followed journal (any file stands for it: refused first).
        let t = try castscope(["tail", "--file", input.path, "--from-start", "--cursor-file", input.path, "--cursor-reset"])
        #expect(t.status == 2, "\(t.status) \(t.stderr)")
        #expect(t.stderr.hasPrefix("castscope: error: --cursor-file "), "\(t.stderr)")
        #expect(try Data(contentsOf: input) == before)
    }

    @Test("damage in a gzip file's first 64 KB (cut, a bad CRC, garbage after it) keeps what was read before it")
    func gzipHead() throws {
        let text = try Data(contentsOf: Self.good)
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let plain = dir.appendingPathComponent("log.txt")
        try text.write(to: plain)
        let gz = Process()
        gz.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gz.arguments = ["-k", "-n", plain.path]
        try gz.run()
        gz.waitUntilExit()
        let whole = try Data(contentsOf: dir.appendingPathComponent("log.txt.gz"))
        #expect(whole.count < 64 * 1024)
        var badCRC = whole
        badCRC[badCRC.count - 8] ^= 0xFF
        let cases: [(String, Data)] = [("cut.txt.gz", whole.prefix(whole.count * 9 / 10)), ("crc.txt.gz", badCRC),
                                       ("trailing.txt.gz", whole + Data("garbage after the member".utf8))]
        for (name, bytes) in cases {
            let path = dir.appendingPathComponent(name)
            try bytes.write(to: path)
            let r = try castscope(["analyze", "--json", path.path])
            #expect(r.status == 1, "\(name): \(r.status) \(r.stderr)")
            #expect(!sessions(r).isEmpty, "\(name)")
            #expect(r.stderr.contains("\(name): at byte "), "\(r.stderr)")
        }
    }

    @Test("a stray NUL among a log's lines is damage in a log, not a binary file; a binary blob still is")
    func strayNul() throws {
        var text = Array(try Data(contentsOf: Self.good))
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        text[3000] = 0
        let path = dir.appendingPathComponent("nul.txt")
        try Data(text).write(to: path)
        let r = try castscope(["analyze", "--json", path.path])
        #expect([0, 1].contains(r.status), "\(r.status) \(r.stderr)")
        #expect(sessions(r).contains { $0["outcome"] as? String == "failed-to-connect" })
        let blob = dir.appendingPathComponent("blob.bin")
        var bytes = [UInt8](repeating: 65, count: 4096)
        for i in stride(from: 0, to: bytes.count, by: 7) { bytes[i] = 0 }
        try Data(bytes).write(to: blob)
        let b = try castscope(["analyze", blob.path])
        #expect(b.status == 4)
        #expect(b.stderr.contains("binary file (NUL byte), not a log"))
    }

    /// One LZ4 block of `1 + match + 5` zero bytes: a literal zero, one match of the byte before,
    /// and the five literals a block ends with (encoded by hand: about 1 byte per 255 out).
    static func zerosBlock(match: Int) -> [UInt8] {
        var b: [UInt8] = [0x1F, 0x00, 0x01, 0x00]
        var rest = match - 4 - 15
        while rest >= 255 { b.append(255); rest -= 255 }
        b.append(UInt8(rest))
        b += [0x50, 0, 0, 0, 0, 0]
        return b
    }

    @Test("a tracev3 chunkset that decompresses past 16 MB (a few KB of LZ4) is one error; the rest of the archive is read")
    func lz4Bomb() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let root = dir.appendingPathComponent("bomb.logarchive")
        try jetsamStory().write(to: root)
        let file = root.appendingPathComponent("Persist/0000000000000001.tracev3")
        var data = try Data(contentsOf: file)
        func le32(_ v: Int, _ d: inout Data) { withUnsafeBytes(of: UInt32(v).littleEndian) { d.append(contentsOf: $0) } }
        var set = Data()
        for _ in 0..<2 {
            let match = 9 << 20
            let block = Self.zerosBlock(match: match)
            set.append(Data("bv41".utf8))
            le32(1 + match + 5, &set)
            le32(block.count, &set)
            set.append(contentsOf: block)
        }
        set.append(Data("bv4$".utf8))
        var chunk = Data()
        le32(0x600D, &chunk); le32(0, &chunk)
        withUnsafeBytes(of: UInt64(set.count).littleEndian) { chunk.append(contentsOf: $0) }
        chunk.append(set)
        while chunk.count % 8 != 0 { chunk.append(0) }
        data.append(chunk)
        #expect(data.count < 200_000)
        try data.write(to: file)
        let r = try castscope(["analyze", "--json", root.path])
        #expect(r.status == 1, "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("chunkset decompresses to over 16 MB"), "\(r.stderr)")
        #expect(sessions(r).contains { $0["outcome"] as? String == "killed" })
    }

    @Test("a journal export's binary field of 8 MB is kept to the line limit; the entries after it are read")
    func bigBinaryField() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var export = Data()
        func entry(_ t: Int, _ message: String) -> Data {
            Data("__REALTIME_TIMESTAMP=\(t)\n_HOSTNAME=relay1\nSYSLOG_IDENTIFIER=broadcast-relay\nMESSAGE=\(message)\n\n".utf8)
        }
        export.append(entry(1_773_306_904_000_000, "session s1 accepted peer=x"))
        var big = Data("__REALTIME_TIMESTAMP=1773306905000000\nSYSLOG_IDENTIFIER=broadcast-relay\nMESSAGE\n".utf8)
        let size = 8 << 20
        withUnsafeBytes(of: UInt64(size).littleEndian) { big.append(contentsOf: $0) }
        big.append(Data("session s1 stats frames=10 ".utf8))
        big.append(Data(repeating: 0x78, count: size - 27))
        big.append(Data("\n\n".utf8))
        export.append(big)
        export.append(entry(1_773_306_906_000_000, "session s1 closed reason=peer-eof frames=10 duration=2.0s"))
        let path = dir.appendingPathComponent("relay.export")
        try export.write(to: path)
        let r = try castscope(["analyze", "--json", path.path])
        #expect(r.status == 0, "\(r.status) \(r.stderr)")
        let relay = r.json?["relaySessions"] as? [[String: Any]] ?? []
        #expect(relay.count == 1)
        #expect(relay.first?["reason"] as? String == "peer-eof", "\(relay)")
    }
}

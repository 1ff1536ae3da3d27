import Foundation
import Testing

@testable import CastscopeKit

@Suite("hostile round 12: os_log widths and precisions")
struct HostileRound12Tests {
    /// What widths may add to one message (`ulMaxPadding`).
    static let maxPadding = 1 << 20

    static func render(_ format: String, _ args: [ULArgument]) -> [UInt8] {
        var out: [UInt8] = []
        Array(format.utf8).withUnsafeBytes { ulRender(format: $0, args: args, into: &out) }
        return out
    }

    /// A format string comes from the device's uuidtext files and a `*` width or a precision
    /// item from the entry's own bytes: `%99999999999999999999d` trapped on the width's
    /// overflow, a precision item of −1 trapped on `s[0..<-1]` (both exit 132, the whole bundle
    /// lost), and `%{public}900000000s` padded one message to 900 MB.
    @Test("widths past 64 bits, negative precision items and huge widths neither trap nor grow a message past 1 MB")
    func hostileWidths() {
        let word = Array("abc".utf8)
        word.withUnsafeBytes { w in
            #expect(String(decoding: Self.render("[%.*s]", [.precision(-1), .string(w)]), as: UTF8.self) == "[abc]")
            #expect(String(decoding: Self.render("[%.*P]", [.precision(-7), .bytes(w)]), as: UTF8.self) == "[616263]")
            let huge = Self.render("%{public}99999999999999999999s|%99999999999999999999.99999999999999999999d", [.string(w), .int(5, size: 4)])
            #expect(huge.count <= Self.maxPadding + 16)
            #expect(huge.suffix(5) == Array("abc|5".utf8), "the string padded within the allowance, the number not at all")
            let wide = Self.render("%{public}900000000s", [.string(w)])
            #expect(wide.count == Self.maxPadding && wide.suffix(3) == ArraySlice(w))
            // Many huge widths share one allowance per message.
            let many = Self.render(String(repeating: "%{public}1000000s ", count: 50), Array(repeating: .string(w), count: 50))
            #expect(many.count <= Self.maxPadding + 50 * 4)
            // A width item of 2^31 - 1 (from the entry) too.
            #expect(Self.render("%*s", [.int(0x7FFF_FFFF, size: 4), .string(w)]).count == Self.maxPadding)
        }
    }

    /// printf's own rules where the renderer had its own: a negative `*` width left-justifies,
    /// and a width past 127 was cut to its first 127 bytes (all spaces: the number lost).
    @Test("a negative * width left-justifies; a number wider than 127 keeps its digits")
    func printfWidths() {
        let word = Array("ab".utf8)
        word.withUnsafeBytes { w in
            #expect(String(decoding: Self.render("[%*s]", [.int(UInt64(bitPattern: -5), size: 4), .string(w)]), as: UTF8.self) == "[ab   ]")
        }
        let wide = Self.render("%300d|%-200x|%.150d", [.int(5, size: 4), .int(255, size: 4), .int(7, size: 4)])
        let text = String(decoding: wide, as: UTF8.self)
        #expect(text == String(repeating: " ", count: 299) + "5|ff" + String(repeating: " ", count: 198) + "|" + String(repeating: "0", count: 149) + "7")
        let double = Self.render("%400.2f", [.int(Double(1.5).bitPattern, size: 8)])
        #expect(double.count == 400 && double.suffix(4) == Array("1.50".utf8))
        // The widest double (309 digits before its point) whole, with a precision and a flag.
        let widest = Self.render("%+.5f|%-12.3e|%g", [.int(Double(-1.7e308).bitPattern, size: 8), .int(Double(2.5).bitPattern, size: 8),
                                                      .int(Double(0.1).bitPattern, size: 8)])
        #expect(String(decoding: widest, as: UTF8.self) == String(format: "%+.5f|%-12.3e|%g", -1.7e308, 2.5, 0.1))
    }

    /// The same through `castscope show` and `analyze` on a log archive whose uuidtext holds
    /// such a format: before, exit 132 (the trap) and nothing shown.
    @Test("a log archive whose format string has a width past 64 bits is shown and analyzed")
    func archiveWithHostileFormat() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var b = jetsamStory()
        b.messages.insert(.init(process: 0, offset: 4 * 1_000_000, format: "width %{public}99999999999999999999s then %{public}900000000s", args: ["x", "y"]), at: 2)
        let root = dir.appendingPathComponent("w.logarchive")
        try b.write(to: root)
        let show = try castscope(["show", root.path])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("broadcast started") && show.stdout.contains("exceeded mem limit"))
        #expect(show.stdout.utf8.count < 3 << 20)
        let analyze = try castscope(["analyze", "--no-pager", "-q", root.path])
        #expect(analyze.status == 0 && analyze.stdout.contains("1 session (1 killed)"), "\(analyze.stdout)\(analyze.stderr)")
    }
}

@Suite("hostile round 12: the HTML page's data")
struct HostileRound12HTMLTests {
    /// The page's text showed a U+202E from a log line as `\u{202e}`, but the same message in
    /// the page's data (`<script id="cs-data">`, which the page's script puts into a mark's
    /// detail and a bar's title) was raw: the rest of that line read backwards, and an ESC or a
    /// C1 control went into the page as itself.
    @Test("controls and bidirectional overrides reach the HTML page's data as the page's text shows them")
    func bidiInThePageData() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = """
            2026-03-12 10:20:00.492204+0100  localhost BroadcastExtension[1204]: (ReplayKit) [com.apple.ReplayKit:RPBroadcastExtension] extension started
            2026-03-12 10:20:00.514204+0100  localhost BroadcastExtension[1204]: [io.livekit.example.flutter:Broadcast] open socket connection
            2026-03-12 10:20:00.514514+0100  localhost BroadcastExtension[1204]: [io.livekit.example.flutter:Broadcast] failure: socket file missing \u{202E}gnissim\u{2069} \u{8}x \u{9B}31m \u{7F}end

            """
        let input = dir.appendingPathComponent("l.log")
        try log.write(to: input, atomically: true, encoding: .utf8)
        let page = dir.appendingPathComponent("r.html")
        let r = try castscope(["analyze", "--no-pager", "-q", "--html", page.path, input.path])
        #expect(r.status == 0, "\(r.stderr)")
        let bytes = try Data(contentsOf: page)
        let text = String(decoding: bytes, as: UTF8.self)
        for hidden in ["\u{202E}", "\u{2069}", "\u{9B}", "\u{8}", "\u{7F}"] {
            #expect(!text.contains(hidden), "raw \(hidden.unicodeScalars.first!.value) in the page")
        }
        let start = try #require(text.range(of: "<script type=\"application/json\" id=\"cs-data\">"))
        let end = try #require(text.range(of: "</script>", range: start.upperBound..<text.endIndex))
        let data = try #require(JSONSerialization.jsonObject(with: Data(text[start.upperBound..<end.lowerBound].utf8)) as? [String: Any])
        let sessions = try #require(data["sessions"] as? [[String: Any]])
        let decided = try #require((sessions.first?["d"] as? [[Any]])?.first?[2] as? String)
        // As the page's text shows them: a JSON string that decodes to `\u{202e}gnissim\u{2069}`.
        #expect(decided.hasSuffix("missing \\u{202e}gnissim\\u{2069} \\bx \\u{9b}31m \\x7fend"), "\(decided)")
        #expect(text.contains("missing \\u{202e}gnissim\\u{2069} \\bx \\u{9b}31m \\x7fend"), "the page's text")
    }
}

@Suite("hostile round 12: a log archive's damage named inside its archive")
struct HostileRound12ArchiveTests {
    /// A `.logarchive` inside a tarball is copied to the run's temporary folder to be read; the
    /// damage of its uuidtext, dsc and timesync files was named by that copy's path
    /// (`/tmp/castscope-o6ESUS/logarchive-tne0uR/0/dsc/…`), a file the user cannot find and that
    /// is gone when the run ends.
    @Test("a damaged uuidtext or timesync file of a log archive in a tarball is named as the tarball's member")
    func damagedStringFilesInsideATarball() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sd = dir.appendingPathComponent("sd")
        let root = sd.appendingPathComponent("system_logs.logarchive")
        try jetsamStory().write(to: root)
        // The kernel's uuidtext (process 1) and a timesync file: junk.
        let hex = TraceV3Builder.uuid(2).map { String(format: "%02X", $0) }.joined()
        try Data(repeating: 0xAB, count: 64).write(to: root.appendingPathComponent(String(hex.prefix(2)) + "/" + String(hex.dropFirst(2))))
        try FileManager.default.createDirectory(at: root.appendingPathComponent("timesync"), withIntermediateDirectories: true)
        try Data(repeating: 0xAB, count: 64).write(to: root.appendingPathComponent("timesync/0000000000000000.timesync"))
        try runTar(["cf", "sd.tar", "sd"], cwd: dir)
        let tarball = dir.appendingPathComponent("sd.tar").path
        for command in ["analyze", "show"] {
            let r = try castscope(command == "show" ? [command, tarball] : [command, "--no-pager", tarball])
            #expect(r.status == 1, "\(command): \(r.stderr)")
            #expect(r.stderr.contains("sd.tar!sd/system_logs.logarchive/C0/FFEE02020202020202020202020202: at byte 0: not a uuidtext file"), "\(command): \(r.stderr)")
            #expect(r.stderr.contains("sd.tar!sd/system_logs.logarchive/timesync/0000000000000000.timesync"), "\(command): \(r.stderr)")
            #expect(!r.stderr.contains("/logarchive-"), "\(command): the temporary copy named: \(r.stderr)")
        }
        // On disk the archive is named as given, as before.
        let disk = try castscope(["show", root.path])
        #expect(disk.stderr.contains("\(root.path)/C0/FFEE02020202020202020202020202: at byte 0: not a uuidtext file"), "\(disk.stderr)")
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// Console.app copies in the layouts real pastes show that castscope read as plain text, times
/// lost (session 62): the type column hidden (react-native-callkeep#489), and the type as a
/// French Console names it (boring.notch#1046, `par défaut`). Console copies the columns it
/// shows, TAB-separated, and names the types in the Mac's language. And the host app's own
/// warning that its background time runs out (livekit/client-sdk-swift#510), which was no event.
@Suite("field formats, session 62: Console copies without the type column or with it localized; the host app's background time")
struct FieldFormatsRound62Tests {
    func input(_ r: [String: Any]) -> [String: Any] { (r["inputs"] as? [[String: Any]])?.first ?? [:] }

    /// react-native-callkeep#489 (lines shortened at their ends).
    static let noType = """
        13:07:32.814732-0400\tcallservicesd\t[WARN] No audio route collection found in audioRouteCollections: <private> for audio category AVAudioSessionCategoryPlayAndRecord
        13:07:32.907218-0400\tmediaserverd\tAudioSessionServerImp.cpp:3166:Sub_AudioSessionSetActiveWithFlags: { "action":"activate", "session":{"ID":"0x3535e","PID":2145,"name":"liveninjaMesseng"} }
        13:07:32.907598-0400\tcallservicesd\tDecreasing priority of other AVAudioSession interruption provider <private> to Default

        """

    /// boring.notch#1046 (a record continued on TAB-indented lines).
    static let french = """
        par défaut\t07:15:49.033283+0100\trunningboardd\tAcquiring assertion targeting [app<application.theboringteam.boringnotch.16.21(502)>:43918] attributes:[
        \t<RBSDomainAttribute| domain:"com.apple.launchservicesd" name:"RoleUserInteractive" sourceEnvironment:"(null)">
        \t]>
        par défaut\t07:15:49.033417+0100\trunningboardd\tAssertion 467-431-89725 (target:[app<application.theboringteam.boringnotch.16.21(502)>:43918]) will be created as active

        """

    @Test("the type column hidden: Console's layout, each line's time kept")
    func noTypeColumn() throws {
        let r = try analyzePaste(Self.noType)
        #expect(input(r.json)["format"] as? String == "console-copy", "\(input(r.json))")
        #expect(input(r.json)["records"] as? Int == 3, "\(input(r.json))")
        // (`show` writes the times in UTC: 13:07 at -04:00)
        #expect(r.text.contains(" 17:07:32.907218+0000 "), "\(r.text)")
        #expect(r.text.contains("mediaserverd: AudioSessionServerImp.cpp:3166:"), "\(r.text)")
    }

    @Test("a French Console's `par défaut`: Console's layout, the record continued by its indented lines")
    func localizedType() throws {
        let r = try analyzePaste(Self.french)
        #expect(input(r.json)["format"] as? String == "console-copy", "\(input(r.json))")
        #expect(input(r.json)["records"] as? Int == 2, "\(input(r.json))")
        #expect(input(r.json)["unparsed"] as? Int ?? 0 == 0, "\(input(r.json))")
    }

    /// The type column hidden and a PID column shown: the same rows with or without the TAB
    /// that leads a PID-column copy whose type column is empty (a paste's prefix taken off, or
    /// not). The hidden type's layout alone read the PID as the process, and the first line's
    /// `broadcast started` as no event (a full CI's `QuotedLinesTests.layoutsOwnTab` caught it).
    @Test("with a PID column, the rows read the same whether their first TAB is kept or taken off")
    func pidColumnEitherWay() throws {
        let rows = ["23:59:50.118204+0100\t4242\tBroadcastExtension\tbroadcast started",
                    "23:59:50.121204+0100\t4242\tBroadcastExtension\tOpen socket connection"]
        func timeline(_ text: String) throws -> [String] {
            let r = try analyzePaste(text, name: "console.txt", ["--date", "2026-03-12"])
            #expect((r.json["inputs"] as? [[String: Any]])?.first?["format"] as? String == "console-copy")
            let s = try #require((r.json["sessions"] as? [[String: Any]])?.first, "\(r.json)")
            return (s["timeline"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        }
        let kept = try timeline(rows.map { "\t" + $0 + "\n" }.joined())
        #expect(kept == ["broadcast started", "Open socket connection"], "\(kept)")
        #expect(try timeline(rows.map { $0 + "\n" }.joined()) == kept)
    }

    /// A broadcast extension's session (constructed: no real paste of one in these layouts was
    /// found), copied with the type column, without it, and with it in French: one session,
    /// the same outcome, timeline and findings each way.
    @Test("an extension's session reads the same in each layout")
    func sameSessionEachWay() throws {
        let lines: [(String, String)] = [
            ("10:00:00.100000+0100", "broadcast started"),
            ("10:00:00.200000+0100", "Open socket connection"),
            ("10:00:00.210000+0100", "client stream open completed"),
            ("10:00:00.300000+0100", "video sample processed successfully"),
            ("10:00:00.400000+0100", "video sample processed successfully"),
            ("10:00:00.500000+0100", "video sample processed successfully"),
            ("10:00:01.000000+0100", "server socket closed"),
            ("10:00:01.001000+0100", "client connection did close: (null)"),
        ]
        func paste(_ type: String?) -> String {
            lines.map { (type.map { $0 + "\t" } ?? "") + "\($0.0)\tBroadcastExtension\t\($0.1)\n" }.joined()
        }
        func sessions(_ type: String?) throws -> String {
            let r = try analyzePaste(paste(type), name: "console.txt", ["--date", "2026-03-12"])
            #expect(input(r.json)["format"] as? String == "console-copy", "\(type ?? "no type"): \(input(r.json))")
            let s = try #require(r.json["sessions"] as? [[String: Any]], "\(type ?? "no type")")
            #expect(s.count == 1)
            // (each paste is in a temporary directory of its own: sources named by file alone)
            return String(decoding: try JSONSerialization.data(withJSONObject: s, options: [.sortedKeys]), as: UTF8.self)
                .replacingOccurrences(of: #"[^"]*/console\.txt"#, with: "console.txt", options: .regularExpression)
        }
        let typed = try sessions("default")
        #expect(typed.contains("stopped-by-host"), "\(typed)")
        #expect(try sessions(nil) == typed)
        #expect(try sessions("par défaut") == typed)
    }

    /// livekit/client-sdk-swift#510 (a comment's paste, the extension's lines shortened): the
    /// host app's two lines come before the extension's in the paste, outside its session.
    static let expiring = """
        default\t15:53:24.587539+0100\tRemoteAccessExtension\t [INFO] -[RPBroadcastSampleHandler _processPayloadWithAudioSample:type:]:180 Broadcast extension received audio payload from replayd
        default\t15:53:24.631859+0100\tRemoteAccessExtension\t [INFO] -[RPBroadcastSampleHandler _processPayloadWithAudioSample:type:]:180 Broadcast extension received audio payload from replayd
        default\t15:52:34.196671+0100\tRemoteAccess\tReceived process assertions expiration warning!
        default\t15:52:34.196779+0100\tRemoteAccess\tNotifying client of imminent expiration of assertion

        """

    @Test("the host app's background time running out is an event of the app's, listed outside the session it precedes")
    func backgroundExpiringOutside() throws {
        let r = try analyzePaste(Self.expiring, name: "console.txt", ["--date", "2024-11-18"])
        let outside = try #require(r.json["unattached"] as? [[String: Any]])
        #expect(outside.map { $0["event"] as? String } == ["app.background_expiring", "app.background_expiring"], "\(outside)")
        #expect(outside.map { $0["side"] as? String } == ["app", "app"], "\(outside)")
        #expect(outside.first?["process"] as? String == "RemoteAccess")
        // (before the session's first line: no finding of the session's)
        let kinds = (r.json["findings"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(!kinds.contains("host-app-background-expiring"), "\(kinds)")
    }

    @Test("while the broadcast streams, it is a warning of the session's; alone in an excerpt, of the bundle's")
    func backgroundExpiringFindings() throws {
        var lines = ""
        for (t, p, m) in [("10:00:00.100000", "BroadcastExtension", "broadcast started"),
                          ("10:00:00.200000", "BroadcastExtension", "Open socket connection"),
                          ("10:00:00.210000", "BroadcastExtension", "client stream open completed"),
                          ("10:00:00.300000", "BroadcastExtension", "video sample processed successfully"),
                          ("10:00:05.300000", "RemoteAccess", "Received process assertions expiration warning!"),
                          ("10:00:06.400000", "BroadcastExtension", "video sample processed successfully"),
                          ("10:00:09.000000", "BroadcastExtension", "server socket closed"),
                          ("10:00:09.001000", "BroadcastExtension", "client connection did close: (null)")] {
            lines += "default\t\(t)+0100\t\(p)\t\(m)\n"
        }
        let r = try analyzePaste(lines, name: "console.txt", ["--date", "2024-11-18"])
        let f = try #require((r.json["findings"] as? [[String: Any]] ?? []).first { $0["kind"] as? String == "host-app-background-expiring" },
                             "\(r.json["findings"] ?? [])")
        #expect(f["severity"] as? String == "warning")
        #expect(f["session"] as? String == "S1", "\(f)")
        #expect((f["message"] as? String ?? "").contains("the host app RemoteAccess's background time ran out while the broadcast was streaming"), "\(f)")
        let alone = try analyzePaste("default\t15:52:34.196671+0100\tRemoteAccess\tReceived process assertions expiration warning!\n",
                                     name: "console.txt", ["--date", "2024-11-18"])
        let g = try #require((alone.json["findings"] as? [[String: Any]] ?? []).first, "\(alone.json)")
        #expect(g["kind"] as? String == "host-app-background-expiring")
        #expect(g["severity"] as? String == "warning")
        #expect(g["session"] == nil || g["session"] is NSNull, "\(g)")
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// Real pastes of session 50's hunt that castscope read wrong: GLib's own lines in a Janus or
/// Kurento log (their `**` form, a domain with `-`, no time before GLib 2.50). Each around the
/// lines as they were posted.
@Suite("hunt round 10: GLib's lines and its fatal errors in Janus's and Kurento's logs")
struct HuntRound10Tests {
    typealias Summary = HuntRound8Tests.Summary

    func analyze(_ text: String, name: String = "paste.txt") throws -> Summary {
        try HuntRound8Tests().analyze(text, name: name)
    }

    @Test("GLib's default handler's lines are records: their program, pid, domain and level, with or without GLib 2.50's time")
    func glibLines() throws {
        // Kurento#247: GStreamer's criticals, GLib's blank line before each, no time (GLib < 2.50):
        // plain text, each line a record of no process.
        let kms = """
            (kurento-media-server:1251): GStreamer-CRITICAL **: gst_mini_object_unlock: assertion 'state >= SHARE_ONE' failed

            (kurento-media-server:1251): GStreamer-CRITICAL **: gst_mini_object_unlock: assertion 'state >= SHARE_ONE' failed

            (kurento-media-server:1423): GLib-GObject-WARNING **: invalid uninstantiatable type '(null)' in cast to 'GObject'

            """
        let k = try analyzePaste(kms)
        let kInput = (k.json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect(kInput["format"] as? String == "glib", "\(kInput)")
        #expect(kInput["records"] as? Int == 3 && kInput["unparsed"] as? Int == 0, "\(kInput)")
        #expect(k.text.contains("Fault") && k.text.contains("kurento-media-server: [GStreamer:] gst_mini_object_unlock"), "\(k.text)")
        #expect(k.text.contains("kurento-media-server: [GLib-GObject:] invalid uninstantiatable type"), "\(k.text)")
        // janus-gateway#2416: libnice's STUN domain has a `-` in it: `libnice-stun-DEBUG` was
        // domain `libnice`, level `stun-DEBUG` (a Default line).
        let nice = try analyzePaste("""
            (process:1074): libnice-DEBUG: 19:49:26.111: Agent 0x55982e113980: inbound STUN packet for 1/1 (stream/component) from [172.31.2.63]:64095 (96 octets) :
            (process:1074): libnice-stun-DEBUG: 19:49:26.111: STUN demux: OK!

            """)
        #expect(nice.text.contains("Debug       0x0                  1074   0    process: [libnice-stun:] STUN demux: OK!"), "\(nice.text)")
        // A Janus log with GLib's criticals between its lines (janus-gateway#201's, with a time):
        // the `**` lines were unparsed.
        let janus = try analyzePaste("""
            [Tue May 21 12:00:09 2024] [2301143023] Handle detached (error=0), scheduling destruction
            (janus:6706): GLib-CRITICAL **: 12:00:09.992: g_async_queue_push: assertion 'queue' failed
            [Tue May 21 12:00:10 2024] [2301143023] WebRTC resources freed

            """)
        let jInput = (janus.json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect(jInput["format"] as? String == "janus", "\(jInput)")
        #expect(jInput["records"] as? Int == 3 && jInput["unparsed"] as? Int == 0, "\(jInput)")
    }
}

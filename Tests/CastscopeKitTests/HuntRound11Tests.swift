import Foundation
import Testing

@testable import CastscopeKit

/// Real pastes of session 52's hunt that castscope read wrong, each around the lines as they
/// were posted.
@Suite("hunt round 11: Prosody's log, g_error in a GLib or Janus file, the shell's and the kernel's trap, jetsam's per-process-limit")
struct HuntRound11Tests: PasteSummarySuite {
    typealias Summary = HuntRound8Tests.Summary

    @Test("Prosody's lines keep their source and level, in its file's layout (tabs, or a paste's spaces) and docker-jitsi-meet's console")
    func prosodyLines() throws {
        // christiancuri/Docs#9 (a Jitsi room reset; the file sink's tabs kept): the lines were
        // `timestamped-bsd`, source, level and message one text, every line Default.
        let tabs = try analyzePaste("""
            Nov 29 20:27:05 conference.mydomain.com:muc_domain_mapper\twarn\tSession filters applied
            Nov 29 20:27:05 mod_bosh\tinfo\tNew BOSH session, assigned it sid '7b955154-ce04-48f3-8a8a-691c5e3813c8'
            Nov 29 20:27:05 bosh7b955154-ce04-48f3-8a8a-691c5e3813c8\tinfo\tAuthenticated as 445446f8-775d-4709-b526-b586167ad282@mydomain.com
            Nov 29 20:28:48 bosh7b955154-ce04-48f3-8a8a-691c5e3813c8\tinfo\tBOSH client disconnected: session close

            """)
        let tInput = (tabs.json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect(tInput["format"] as? String == "prosody", "\(tInput)")
        #expect(tInput["records"] as? Int == 4 && tInput["unparsed"] as? Int == 0, "\(tInput)")
        #expect(tabs.text.contains("Info        0x0                         0    <unknown>: [mod_bosh:] New BOSH session, assigned it sid '7b955154"), "\(tabs.text)")
        #expect(tabs.text.contains("<unknown>: [conference.mydomain.com:muc_domain_mapper:] Session filters applied"), "\(tabs.text)")
        // jitsi-meet#13270 (the tabs a paste's spaces): an error and its Lua traceback, one
        // record of level Error.
        let traceback = try analyzePaste("""
            Feb 09 12:17:55 mod_bosh        error   Traceback[bosh]: /usr/lib/prosody/modules/mod_saslauth.lua:94: attempt to concatenate a nil value (field 'base_type')
                    stack traceback:        /usr/lib/prosody/modules/mod_saslauth.lua:94: in function </usr/lib/prosody/modules/mod_saslauth.lua:80>
                    (...tail calls...)
                    /usr/share/lua/5.4/prosody/util/events.lua:81: in function </usr/share/lua/5.4/prosody/util/events.lua:77>
                    /usr/lib/prosody/modules/mod_bosh.lua:340: in upvalue 'func'
            Feb 09 12:17:55 mod_bosh        info    BOSH client disconnected: session close

            """)
        let eInput = (traceback.json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect(eInput["format"] as? String == "prosody", "\(eInput)")
        #expect(eInput["records"] as? Int == 2 && eInput["unparsed"] as? Int == 0, "\(eInput)")
        #expect(traceback.text.contains("Error       0x0                         0    <unknown>: [mod_bosh:] Traceback[bosh]: /usr/lib/prosody/modules/mod_saslauth.lua:94"), "\(traceback.text)")
        // docker-jitsi-meet#2074 and jitsi-meet#14049: the container's console, the source
        // padded, the level then a tab (2025) or spaces (2023).
        let console = try analyzePaste("""
            2025-04-12 07:46:15 mod_bosh                                                     info\tNew BOSH session, assigned it sid 'b841c812-6807-43ca-8207-fa5c5d4856c0'

            2025-04-12 07:46:15 boshb841c812-6807-43ca-8207-fa5c5d4856c0                     info\tAuthenticated as birte@meet.jitsi [prosody:registered]

            2023-11-14 14:24:20 c2s5566dd6b1060                                              debug  SEND: <iq id='1f69a4ab-ce65-4e99-b34d-8ca89caf550e:sendIQ' from='focus.meet.jitsi/ipwtegp1nk3bdclhmivegmp3@meet.jitsi/SAs7PyhQvNPj' to='focus@auth.meet.jitsi/focus' xml:lang='en' type='set'>

            """)
        let cInput = (console.json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect(cInput["format"] as? String == "prosody-console", "\(cInput)")
        #expect(cInput["records"] as? Int == 3 && cInput["unparsed"] as? Int == 0, "\(cInput)")
        #expect(console.text.contains("Info        0x0                         0    <unknown>: [boshb841c812-6807-43ca-8207-fa5c5d4856c0:] Authenticated as birte@meet.jitsi"), "\(console.text)")
        #expect(console.text.contains("Debug       0x0                         0    <unknown>: [c2s5566dd6b1060:] SEND: <iq"), "\(console.text)")
        // jitsi-meet#12552's prosody.err line, its tabs a paste's spaces.
        let err = try analyzePaste("Nov 11 20:35:04 jitsi.example.org:end_conference    error   No muc_component specified. No muc to operate on!\n")
        #expect(err.text.contains("Error       0x0                         0    <unknown>: [jitsi.example.org:end_conference:] No muc_component specified."), "\(err.text)")
        // log4j's `%d [%t] %p`, one space between thread and level, is no console line of
        // Prosody's (its source is padded to two spaces or more): read as before.
        let log4j = try analyze("""
            2020-10-01 11:11:53,845 [Timer-1319] INFO io.openvidu.server.kurento.core.KurentoSession - Resetting process: closing media pipeline
            2020-10-01 11:11:54,001 [tExec-e2-t14578] ERROR io.openvidu.server.kurento.core.KurentoSession - media pipeline closed

            """)
        #expect(log4j.input["format"] as? String == "timestamped", "\(log4j.input)")
        // Nor is a `log show` export's row, whose Type column is a level's name too
        // (`0x1e2cd    Error`): its time has a zone, Prosody's console none.
        let row = "2023-10-14 17:53:54.688700+0800 0x1e2cd    Error       0x0                  4004   14   App: hi"
        let consoleFormat = try #require(try ParserRegistry.builtin().format(named: "prosody-console"))
        for pattern in consoleFormat.patterns {
            #expect(try fields(pattern.source, row) == nil, "\(pattern.source)")
        }
    }

    @Test("g_error's line in a GLib or Janus file is the process's death, as it is in a journal line")
    func glibErrorInGlibLayout() throws {
        // janus-gateway#3079: the line, then the SDP the paste went on with: "nothing
        // recognized", the `GLib-ERROR **: ` gone to the glib format's subsystem and level.
        let sdp = try analyze("""
            (janus:2858): GLib-ERROR **: 13:33:30.247: Creating pipes for GWakeup: Too many open files
            p:4 urn:ietf:params:rtp-hdrext:sdes:mid
            a=extmap:12 http://www.webrtc.org/experiments/rtp-hdrext/playout-delay
            a=rtpmap:97 rtx/90000
            a=fmtp:97 apt=96
            a=end-of-candidates

            """)
        #expect(sdp.messages("daemon-died") == ["janus: it aborted on GLib's fatal error (GLib-ERROR: Creating pipes for GWakeup: Too many open files)"], "\(sdp.findings)")
        // janus-gateway#22, #2834 (GLib before 2.50: no time; `process`: no program named).
        let old = try analyze("(process:9240): GLib-ERROR **: Creating pipes for GWakeup: Too many open files\n")
        #expect(old.input["format"] as? String == "glib", "\(old.input)")
        #expect(old.messages("daemon-died") == ["a process the paste does not name: it aborted on GLib's fatal error (GLib-ERROR: Creating pipes for GWakeup: Too many open files)"], "\(old.findings)")
        // Between Janus's own lines (the janus format): the same.
        let janus = try analyze("""
            [Tue Sep 27 13:33:30 2022] Creating new handle in session 4495486973980185: 8351019844777463; 0x7ff618021a40 0x7ff62818ed90
            (janus:2858): GLib-ERROR **: 13:33:30.247: Creating pipes for GWakeup: Too many open files

            """)
        #expect(janus.input["format"] as? String == "janus", "\(janus.input)")
        #expect(janus.messages("daemon-died") == ["janus: it aborted on GLib's fatal error (GLib-ERROR: Creating pipes for GWakeup: Too many open files)"], "\(janus.findings)")
        // A critical is no death, its level Fault, its message without the domain.
        let critical = try analyzePaste("(kurento-media-server:1251): GStreamer-CRITICAL **: gst_mini_object_unlock: assertion 'state >= SHARE_ONE' failed\n")
        #expect(critical.text.contains("kurento-media-server: [GStreamer:] gst_mini_object_unlock"), "\(critical.text)")
        #expect((critical.json["findings"] as? [[String: Any]] ?? []).isEmpty, "\(critical.json)")
    }

    @Test("the shell's `Trace/breakpoint trap` is a death, and a line of it under GLib's is read; said once with g_error's")
    func shellTrap() throws {
        // tsailun#2 (a GLib program out of file descriptors): the shell's line was unparsed in
        // the glib file; alone it was "nothing recognized", as `Aborted (core dumped)` is not.
        let r = try analyze("""
            (process:107966): GLib-ERROR **: Creating pipes for GWakeup: Too many open files
            Trace/breakpoint trap (core dumped)

            """)
        #expect(r.input["format"] as? String == "glib" && r.input["records"] as? Int == 2 && r.input["unparsed"] as? Int ?? 0 == 0, "\(r.input)")
        // (one death: g_error's words, not "… after GLib's fatal error (…)" of the same line)
        #expect(r.messages("daemon-died") == ["a process the paste does not name: it aborted on GLib's fatal error (GLib-ERROR: Creating pipes for GWakeup: Too many open files)"], "\(r.findings)")
        let alone = try analyze("Trace/breakpoint trap (core dumped)\n")
        #expect(alone.messages("daemon-died") == ["a process the paste does not name: the shell says it died on a trap (SIGTRAP: GLib's g_error, a compiler's trap) (Trace/breakpoint trap, core dumped)"], "\(alone.findings)")
        // janus-gateway#2934: the trap under a blank line, then Janus's console: one death, Janus's.
        let janus = try analyze("""
            (janus:2786395): GLib-ERROR **: 16:57:21.156: Creating pipes for GWakeup: Too many open files

            Trace/breakpoint trap (core dumped)

            -- all log
            [WARN] [1534396635776259] Unknown SSRC, dropping packet (SSRC 3041780643)...
            Creating new handle in session 4495486973980185: 8351019844777463; 0x7ff618021a40 0x7ff62818ed90

            """)
        #expect(janus.messages("daemon-died") == ["janus: it aborted on GLib's fatal error (GLib-ERROR: Creating pipes for GWakeup: Too many open files)"], "\(janus.findings)")
        // systemd's word on the same death still leads, GLib's after it (janus-gateway#1224).
        let systemd = try analyze("""
            May  2 20:23:38 sfu16 janus[24909]: (process:24909): GLib-ERROR **: Creating pipes for GWakeup: Too many open files
            May  2 20:23:38 sfu16 systemd[1]: janus.service: Main process exited, code=killed, status=5/TRAP

            """)
        #expect(systemd.messages("daemon-died") == ["janus: its main process was killed (status=5/TRAP) after GLib's fatal error (GLib-ERROR: Creating pipes for GWakeup: Too many open files)"], "\(systemd.findings)")
        // Another program's line in a GLib program's stderr is a record, its own words read:
        // glibc's shell word after a GLib critical.
        let aborted = try analyze("(janus:1): GLib-CRITICAL **: g_async_queue_push: assertion 'queue' failed\nAborted (core dumped)\n")
        #expect(aborted.kinds == ["daemon-died"] && aborted.input["unparsed"] as? Int ?? 0 == 0, "\(aborted.findings) \(aborted.input)")
    }

    @Test("the kernel's `trap int3` line is the task's death, as its invalid opcode and divide error are")
    func kernelInt3() throws {
        // janus-gateway#1224's kernel lines (the journal splits the image onto a line of its
        // own): g_error's int3 in a Janus thread was "nothing recognized" alone.
        let split = try analyze("""
            May  2 20:23:38 sfu16 kernel: [2539500.417151] traps: janus[24923] trap int3 ip:7ffa24d04261 sp:7ffa0f52e940 error:0
            May  2 20:23:38 sfu16 kernel: [2539500.425033]  in libglib-2.0.so.0.5000.3[7ffa24cb4000+112000]

            """)
        #expect(split.messages("daemon-died") == ["janus: it died on a trap (int3, SIGTRAP)"], "\(split.findings)")
        // On one line (the kernel's older layout), the image where it trapped.
        let one = try analyze("May  2 20:23:38 sfu16 kernel: [2539500.417151] traps: janus[24923] trap int3 ip:7ffa24d04261 sp:7ffa0f52e940 error:0 in libglib-2.0.so.0.5000.3[7ffa24cb4000+112000]\n")
        #expect(one.messages("daemon-died") == ["janus: it crashed (int3 trap in libglib-2.0.so.0.5000.3)"], "\(one.findings)")
        // With systemd's word on the same death and GLib's (the whole paste): one death, as before.
        let whole = try analyze("""
            May  2 20:23:38 sfu16 janus[24909]: [1891118921661515] Creating ICE agent (ICE Full mode, controlling)
            May  2 20:23:38 sfu16 kernel: [2539500.417151] traps: janus[24923] trap int3 ip:7ffa24d04261 sp:7ffa0f52e940 error:0
            May  2 20:23:38 sfu16 kernel: [2539500.425033]  in libglib-2.0.so.0.5000.3[7ffa24cb4000+112000]
            May  2 20:23:38 sfu16 janus[24909]: (process:24909): GLib-ERROR **: Creating pipes for GWakeup: Too many open files
            May  2 20:23:38 sfu16 systemd[1]: janus.service: Main process exited, code=killed, status=5/TRAP

            """)
        #expect(whole.messages("daemon-died") == ["janus: its main process was killed (status=5/TRAP) after GLib's fatal error (GLib-ERROR: Creating pipes for GWakeup: Too many open files)"], "\(whole.findings)")
    }

    @Test("jetsam's per-process-limit kill of a broadcast extension says it was its memory limit, with the kernel's footprint")
    func perProcessLimitKill() throws {
        // The kernel's words on a kill for its own limit (iOS 17's, as RealPasteTests' paste;
        // iOS 16's `(per-process-limit 3) 2331079KB`, as zhuowei's Console copy of
        // amfidebilitate's kill shows it) and osanalyticshelper's: the finding quoted the line,
        // "was killed (memorystatus: killing_specific_process …)", where `EXC_RESOURCE … 50 MB`
        // says "killed at its 50 MB memory limit".
        let kernel = try analyze("Mar 12 10:00:01 iPhone kernel[0] <Notice>: 234295.021 memorystatus: killing_specific_process pid 4412 [BroadcastUpload] (per-process-limit 100 0s rf:- type:daemon) 51200KB - memorystatus_available_pages: 137406\n")
        #expect(kernel.messages("extension-killed") == ["the extension BroadcastUpload[4412] was killed by jetsam for exceeding its memory limit (per-process-limit, footprint 50 MB): frames must be encoded and sent without holding them"], "\(kernel.findings)")
        let sessions = kernel.json["sessions"] as? [[String: Any]] ?? []
        #expect(sessions.first?["reason"] as? String == "the extension was killed for exceeding its memory limit (per-process-limit, footprint 50 MB)", "\(sessions)")
        let older = try analyze("Mar 12 10:00:01 iPhone kernel[0] <Notice>: 1401.082 memorystatus: killing_specific_process pid 4412 [BroadcastUpload] (per-process-limit 3) 51213KB - memorystatus_available_pages: 50117\n")
        #expect(older.messages("extension-killed") == ["the extension BroadcastUpload[4412] was killed by jetsam for exceeding its memory limit (per-process-limit, footprint 50 MB): frames must be encoded and sent without holding them"], "\(older.findings)")
        let analytics = try analyze("Mar 12 10:00:01 iPhone osanalyticshelper[55] <Notice>: Process ScreenShareUpload [4412] killed by jetsam reason per-process-limit\n")
        #expect(analytics.messages("extension-killed") == ["the extension ScreenShareUpload[4412] was killed by jetsam for exceeding its memory limit (per-process-limit): frames must be encoded and sent without holding them"], "\(analytics.findings)")
        // Another reason is quoted as before (memory ran short on the device, not its limit).
        let pages = try analyze("Mar 12 10:00:01 iPhone kernel[0] <Notice>: memorystatus: killing_specific_process pid 4412 [BroadcastUpload] (vm-pageshortage 1) - memorystatus_available_pages: 4096\n")
        #expect(pages.messages("extension-killed") == ["the extension BroadcastUpload[4412] was killed (memorystatus: killing_specific_process pid 4412 [BroadcastUpload] (vm-pageshortage 1) - memorystatus_available_pages: 4096)"], "\(pages.findings)")
    }
}

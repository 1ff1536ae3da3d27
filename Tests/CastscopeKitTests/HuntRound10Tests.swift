import Foundation
import Testing

@testable import CastscopeKit

/// Real pastes of session 50's hunt that castscope read wrong: GLib's own lines in a Janus or
/// Kurento log (their `**` form, a domain with `-`, no time before GLib 2.50) and GLib's fatal
/// errors, which end the process; a segfault the kernel and gdb both told; Xcode's memory stop
/// pasted alone. Each around the lines as they were posted.
@Suite("hunt round 10: GLib's lines and fatal errors, a segfault told once, the debugger's memory stop alone")
struct HuntRound10Tests: PasteSummarySuite {
    typealias Summary = HuntRound8Tests.Summary

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

    @Test("GLib's fatal errors end the process: g_assert, g_error, an allocation or a thread GLib could not make, the C library's error it aborts on")
    func glibFatalErrors() throws {
        // janus-gateway#947: g_assert's failure, under GLib's `**` line: "nothing recognized".
        let assert = try analyze("On the janus.log I get this:\n**\nlibnice-socket:ERROR:udp-bsd.c:294:socket_send_messages: assertion failed: (sock->priv != NULL)\n")
        #expect(assert.messages("daemon-died") == ["a process the paste does not name: it aborted on a failed assertion (udp-bsd.c:294:socket_send_messages: assertion failed: (sock->priv != NULL))"],
                "\(assert.findings)")
        // janus-gateway#201: Janus's untimed console, then GLib aborting on pthread's error.
        let libc = try analyze("""
            [WSS-0x1164ed0] Destroying WebSocket client
            Thread pool, serving request
            GLib (gthread-posix.c): Unexpected error from C library during 'pthread_mutex_lock': Invalid argument.  Aborting.

            """)
        #expect(libc.messages("daemon-died") == ["a process the paste does not name: it aborted on GLib's fatal error (unexpected error from the C library in pthread_mutex_lock: Invalid argument)"],
                "\(libc.findings)")
        // Kurento#352: GStreamer's debug line of GLib's fatal allocation (gdb then stopped on its SIGTRAP).
        let alloc = try analyze("0:02:58.803370708  9388 0x7fff88021990 ERROR                   glib GLib:0:: ../../../../glib/gmem.c:105: failed to allocate 18446744071604798583 bytes\n")
        #expect(alloc.messages("daemon-died") == ["a process the paste does not name: it aborted: GLib could not allocate memory (failed to allocate 18446744071604798583 bytes)"],
                "\(alloc.findings)")
        // g_error in GLib's own line (Kurento#493's `creating thread` in its backtrace's format
        // string), read as plain text and as the `glib` format: the program GLib names.
        let thread = "(kurento-media-server:1251): GLib-ERROR **: 10:21:56.123: creating thread 'rtpjitterbuffer': Error creating thread: Resource temporarily unavailable\n"
        let t = try analyze(thread)
        #expect(t.messages("daemon-died") == ["kurento-media-server: it aborted: GLib could not create a thread (creating thread 'rtpjitterbuffer': Resource temporarily unavailable)"],
                "\(t.findings)")
        let glibFormat = try analyze("(kurento-media-server:1251): GStreamer-CRITICAL **: gst_mini_object_unlock: assertion 'state >= SHARE_ONE' failed\n" + thread)
        #expect(glibFormat.input["format"] as? String == "glib", "\(glibFormat.input)")
        #expect(glibFormat.messages("daemon-died") == t.messages("daemon-died"), "\(glibFormat.findings)")
        // GLib's `process` names no program (Janus's libnice lines before it set its name); the
        // journal's does (janus-gateway#1974's shape).
        let journal = try analyze("Feb 27 17:53:43 janus[16089]: (process:16089): GLib-ERROR **: g_main_loop_run: called recursively\n")
        #expect(journal.messages("daemon-died") == ["janus: it aborted on GLib's fatal error (GLib-ERROR: g_main_loop_run: called recursively)"], "\(journal.findings)")
        // Criticals and warnings are no death (g_return_if_fail's `assertion '…' failed`).
        let critical = try analyze("""
            Feb 27 17:53:43 janus[16089]: (process:16089): libnice-CRITICAL **: nice_agent_add_stream: assertion 'NICE_IS_AGENT (agent)' failed
            (kurento-media-server:1423): GLib-GObject-CRITICAL **: g_signal_emit_valist: assertion 'G_TYPE_CHECK_INSTANCE (instance)' failed

            """)
        #expect(critical.kinds.isEmpty, "\(critical.findings)")
    }

    @Test("the kernel's segfault and gdb's SIGSEGV of one crash say it once, with the function gdb stopped in")
    func segfaultWithGdbFrame() throws {
        // coturn#1629 (the host redacted and the line broken after it in the original):
        // "turnserver: it crashed (segfault) (SIGSEGV in set_rtpfile)".
        let r = try analyze("""
            ```
            Jan 16 09:42:53 XXX
             kernel: [7254972.859762] turnserver[3777793]: segfault at 7ffff4e00c98 ip 00005555555a9d1e sp 00007ffff4e00ca0 error 6 in turnserver[55555555d000+6e000] likely on CPU 0 (core 0, socket 0)
            ```

            Could capture what happens with GDB and here is what I get:
            ```
            Thread 4 "turnserver" received signal SIGSEGV, Segmentation fault.
            [Switching to Thread 0x7fffe7600640 (LWP 3778663)]
            0x00005555555a9d1e in set_rtpfile () at src/apps/common/ns_turn_utils.c:369
            ```

            """)
        #expect(r.messages("daemon-died") == ["turnserver: it crashed (segfault in set_rtpfile)"], "\(r.findings)")
    }

    @Test("the debugger's memory stop pasted alone is the debugged process's kill, as its crash stop is its crash")
    func debuggerMemoryStopAlone() throws {
        // ScreenRecorder#13's whole issue, react-native-share-menu#283's sentence: nothing, while
        // `Thread 1: EXC_BAD_ACCESS (code=1, address=0x0)` alone is "the debugged process crashed".
        let bare = try analyze("EXC_RESOURCE RESOURCE_TYPE_MEMORY (limit=650 MB, unused=0x0)\n")
        #expect(bare.messages("app-crashed") == ["the debugged process was killed (terminated for its memory at its 650 MB limit, as the debugger says): whatever it was sharing or serving stopped with it"],
                "\(bare.findings)")
        let prose = try analyze("I got the error EXC_RESOURCE RESOURCE_TYPE_MEMORY (limit=120 MB, unused=0x0) when sharing heavy files, do you know why?\n")
        #expect(prose.messages("app-crashed").count == 1, "\(prose.findings)")
        // 50 MB is a broadcast extension's limit; the banner says so.
        let banner = try analyze("Thread 1: EXC_RESOURCE RESOURCE_TYPE_MEMORY (limit=50 MB, unused=0x0)\n")
        #expect(banner.messages("app-crashed") == ["the debugged process was killed (terminated for its memory at its 50 MB limit, a Broadcast Upload Extension's, as the debugger says): whatever it was sharing or serving stopped with it"],
                "\(banner.findings)")
        // Xcode's own words without a console line before them.
        let words = try analyze("Message from debugger: Terminated due to memory issue\n")
        #expect(words.messages("app-crashed") == ["the debugged process was killed (terminated for its memory, as the debugger says): whatever it was sharing or serving stopped with it"],
                "\(words.findings)")
        // The kernel's nameless limit line is no debugger's stop (its kill line names the victim).
        let kernel = try analyze("kernel[0] <Notice>: memorystatus: exceeded mem limit: ActiveHard 50 MB (fatal)\n")
        #expect(kernel.kinds.isEmpty, "\(kernel.findings)")
    }

    @Test("a ticket saved as Markdown: a fenced block indented under `<details>` or a list item is read without the indentation all its lines share")
    func indentedFenceInMarkdownFile() throws {
        // janus-gateway#3307 as a `.md` file: the `.txt` paste was read since session 49, the
        // Markdown file kept the two spaces and nothing was recognized.
        let gdb = """
            **Is there a gdb or libasan trace of the issue?**

            <details>
              <summary>gdb</summary>

            ```bash
              [Thread debugging using libthread_db enabled]
              Core was generated by `./bin/janus'.
              Program terminated with signal 11, Segmentation fault.
              #0  0x00007f43100c9d2b in janus_audiobridge_notify_participants (participant=participant@entry=0x7f42b8348050) at plugins/janus_audiobridge.c:2767
              ```
            </details>

            """
        let md = try analyze(gdb, name: "ticket.md")
        #expect(md.messages("daemon-died") == ["janus: it crashed and dumped core (SIGSEGV in janus_audiobridge_notify_participants)"], "\(md.findings)")
        // A block whose first line is at column 0 keeps its lines' own indentation (a record's
        // continuation): the journal's records and the systemd line are read as before.
        let own = try analyze("""
            ```
            Mar 15 08:47:50 sehnsucht 1panel[18078]: panic: runtime error: invalid memory address or nil pointer dereference
            Mar 15 08:47:50 sehnsucht 1panel[18078]:   goroutine 1 [running]:
            Mar 15 08:47:50 sehnsucht systemd[1]: 1panel.service: Main process exited, code=exited, status=2/INVALIDARGUMENT
            ```

            """, name: "notes.md")
        #expect(own.input["format"] as? String == "journal-short-precise" && own.kinds == ["daemon-died"], "\(own.input) \(own.findings)")
    }

    @Test("Node's out of memory in V8's other words: an older Node's `process out of memory`, the message cut by its own GC report")
    func v8AllocationFailed() throws {
        // owt-server#519 (an MCU's portal): stderr's second GC block cut V8's message after
        // `Allocation failed - `: "nothing recognized".
        let cut = try analyze("""
            <--- Last few GCs --->

            [5603:0x2682940] 2022588942 ms: Mark-sweep 1299.6 (1426.2) -> 1299.6 (1426.2) MB, 1230.9 / 0.0 ms  allocation failure GC in old space requested

            FATAL ERROR: CALL_AND_RETRY_LAST Allocation failed - <--- Last few GCs --->

            [5603:0x2682940] 2022588942 ms: Mark-sweep 1299.6 (1426.2) -> 1299.6 (1426.2) MB, 1230.9 / 0.0 ms  allocation failure GC in old space requested

            """)
        #expect(cut.messages("daemon-died") == ["a process the paste does not name: it ran out of memory (V8 could not allocate)"], "\(cut.findings)")
        // Node before 8 (forever#376's wording).
        let old = try analyze("FATAL ERROR: CALL_AND_RETRY_0 Allocation failed - process out of memory\n")
        #expect(old.messages("daemon-died") == ["a process the paste does not name: it ran out of memory (V8 could not allocate)"], "\(old.findings)")
        // Today's wording keeps its own words.
        let today = try analyze("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n")
        #expect(today.messages("daemon-died") == ["a process the paste does not name: it ran out of memory (JavaScript heap out of memory)"], "\(today.findings)")
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// Real pastes of hunt round 12 that castscope read wrong, each around the lines as they were
/// posted.
@Suite("hunt round 12")
struct HuntRound12Tests: PasteSummarySuite {
    typealias Summary = HuntRound8Tests.Summary

    @Test("gdb stopped on SIGABRT in a live process is the process's death, named by the frame that called into glibc's abort")
    func gdbLiveAbort() throws {
        // coturn/coturn#368 (turnserver under gdb, `Program received signal SIGABRT`): "nothing
        // recognized", as only a live SIGSEGV was read.
        let coturn = try analyze("""
            Program received signal SIGABRT, Aborted.
            0x00007f8a325c91d7 in raise () from /lib64/libc.so.6
            (gdb) bt
            #0  0x00007f8a325c91d7 in raise () from /lib64/libc.so.6
            #1  0x00007f8a325ca8c8 in abort () from /lib64/libc.so.6
            #2  0x00007f8a32608f07 in __libc_message () from /lib64/libc.so.6
            #3  0x00007f8a32611d4d in _int_malloc () from /lib64/libc.so.6
            #4  0x00007f8a32613fbc in malloc () from /lib64/libc.so.6
            #5  0x00007f8a336a8b48 in evbuffer_chain_new (size=1880, size@entry=1832) at buffer.c:168
            #6  0x00007f8a336ab7a0 in evbuffer_add (buf=0x7f89b00033a0, data_in=0x7f8a2cb30180, datlen=1832) at buffer.c:1552
            #7  0x0000000000422e4a in send_turn_session_info (tsi=0x7f8a2cb30180) at src/apps/relay/turn_admin_server.c:1468

            """)
        #expect(coturn.messages("daemon-died") == ["a process the paste does not name: it aborted under the debugger (SIGABRT in evbuffer_chain_new)"], "\(coturn.findings)")
        // medooze/media-server-node#94 (`Thread 1 "node" received signal SIGABRT`): the thread
        // names the program; glibc's reason is in its `malloc_printerr` frame.
        let node = try analyze("""
            Thread 1 "node" received signal SIGABRT, Aborted.
            __GI_raise (sig=sig@entry=6) at ../sysdeps/unix/sysv/linux/raise.c:51
            51\t../sysdeps/unix/sysv/linux/raise.c: No such file or directory.
            (gdb) bt
            #0  __GI_raise (sig=sig@entry=6) at ../sysdeps/unix/sysv/linux/raise.c:51
            #1  0x00007f1dcbe74801 in __GI_abort () at abort.c:79
            #2  0x00007f1dcbebd897 in __libc_message (action=action@entry=do_abort, fmt=fmt@entry=0x7f1dcbfeab9a "%s\\n")
                at ../sysdeps/posix/libc_fatal.c:181
            #3  0x00007f1dcbec490a in malloc_printerr (str=str@entry=0x7f1dcbfe8cba "corrupted double-linked list") at malloc.c:5350
            #4  0x00007f1dcbec4ac4 in malloc_consolidate (av=av@entry=0x7f1dcc21fc40 <main_arena>) at malloc.c:4456
            #5  0x00007f1dcbecc03b in _int_free (have_lock=0, p=<optimized out>, av=0x7f1dcc21fc40 <main_arena>) at malloc.c:4362
            #6  __GI___libc_free (mem=0x54f4150) at malloc.c:3124
            #7  0x00007f1dc929cc60 in moodycamel::ConcurrentQueueDefaultTraits::free (ptr=<optimized out>)
                at ../media-server/include/concurrentqueue.h:332

            """)
        #expect(node.messages("daemon-died") == ["node: it aborted under the debugger (SIGABRT in moodycamel::ConcurrentQueueDefaultTraits::free) (glibc: corrupted double-linked list)"], "\(node.findings)")
        // gdb stopping on a signal nothing dies of is no death.
        for line in ["Program received signal SIGPIPE, Broken pipe.", "Thread 5 \"janus\" received signal SIGINT, Interrupt."] {
            #expect(try analyze(line + "\n").findings.isEmpty, "\(line)")
        }
    }

    @Test("a backtrace pasted without gdb's head is a death when a frame is glibc's abort; with its head, one death")
    func headerlessBacktrace() throws {
        // coturn/coturn#490 (apport's retrace, frames numbered without `#`): "nothing recognized".
        let apport = try analyze("""
            0  __GI_raise (sig=sig@entry=6) at ../sysdeps/unix/sysv/linux/raise.c:51
            1  0x00007f93c6e89801 in __GI_abort () at abort.c:79
            2  0x00007f93c6ed2897 in __libc_message (action=action@entry=do_abort, fmt=fmt@entry=0x7f93c6fffb9a "%s\n") at ../sysdeps/posix/libc_fatal.c:181
            3  0x00007f93c6ed990a in malloc_printerr (str=str@entry=0x7f93c7001870 "double free or corruption (out)") at malloc.c:5350
            4  0x00007f93c6ee0e75 in _int_free (have_lock=0, p=0x7f93bc0000a0, av=0x7f93c7234c40 <main_arena>) at malloc.c:4278
            5  __GI___libc_free (mem=0x7f93bc0000b0) at malloc.c:3124
            6  0x00007f93c8aca380 in HMAC_CTX_free () from /usr/lib/x86_64-linux-gnu/libcrypto.so.1.1
            7  0x00007f93c8aca5fb in HMAC () from /usr/lib/x86_64-linux-gnu/libcrypto.so.1.1
            8  0x000055fa3696d8db in ?? ()

            """)
        #expect(apport.messages("daemon-died") == ["a process the paste does not name: its backtrace shows it aborted (SIGABRT in HMAC_CTX_free) (glibc: double free or corruption (out))"], "\(apport.findings)")
        // Kurento/bugtracker#599 (gdb's `bt` alone; Kurento's death handler, then C++ frames).
        let kurento = try analyze("""
            (gdb) bt
            #0  0x00007f41f616c1a6 in __GI_abort () at abort.c:125
            #1  0x00005599c56c6769 in Debug::DeathHandler::SignalHandler(int, void*, void*) () at /build/server/death_handler.cpp:299
            #2  0x00005599c56c6769 in Debug::DeathHandler::SignalHandler(int, void*, void*) (sig=<optimized out>, secret=<optimized out>) at /build/server/death_handler.cpp:600
            #3  0x00007f41f888b390 in <signal handler called> () at /lib/x86_64-linux-gnu/libpthread.so.0

            """)
        #expect(kurento.messages("daemon-died") == ["a process the paste does not name: its backtrace shows it aborted (SIGABRT)"], "\(kurento.findings)")
        // meetecho/janus-gateway#2545 (the core's head, then `bt`): one death, told as before.
        let janus = try analyze("""
            Program terminated with signal SIGABRT, Aborted.
            #0  0x00007fa0b7595c74 in raise () from /lib64/libc.so.6
            [Current thread is 1 (Thread 0x7f9901ffb700 (LWP 9094))]
            (gdb) bt
            #0  0x00007fa0b7595c74 in raise () from /lib64/libc.so.6
            #1  0x00007fa0b7597a69 in abort () from /lib64/libc.so.6
            #2  0x00007fa0b75da12c in ?? () from /lib64/libc.so.6
            #3  0x00007fa0b75e22bd in ?? () from /lib64/libc.so.6
            #4  0x00007fa0b75e2bce in ?? () from /lib64/libc.so.6
            #5  0x00007fa0b419dbdc in janus_sip_media_reset (session=0x7fa094027680) at plugins/janus_sip.c:1098
            #6  janus_sip_media_cleanup (session=session@entry=0x7fa094027680) at plugins/janus_sip.c:4634

            """)
        #expect(janus.messages("daemon-died") == ["a process the paste does not name: the debugger says a signal ended it (SIGABRT in janus_sip_media_reset)"], "\(janus.findings)")
        // A frame of another function is no death.
        #expect(try analyze("#1  0x000055f2925290ad in janus_sctp_association_destroy (sctp=0x7f2a582a6600) at sctp.c:365\n").findings.isEmpty)
    }

    @Test("Prosody's untimed console (docker-jitsi-meet before 2023) keeps its source and level, alone or among Jicofo's lines")
    func prosodyUntimed() throws {
        // jitsi/docker-jitsi-meet#538 (the prosody container's log, docker swarm): plain text,
        // every line Default with its source and level in the message.
        let alone = try analyzePaste("""
            server_epoll                                                       debug        New connection FD 16 (10.0.1.158, 49852, 10.0.1.160, 5280)
            http.server                                                        debug        Firing event: POST /http-bind
            mod_bosh                                                           debug        BOSH body open (sid: 996f94e7-43e7-48e5-99e0-4998e18d9130)
            bosh996f94e7-43e7-48e5-99e0-4998e18d9130                           debug        rid: 1273755675, sess: 1273755674, diff: 1

            """)
        let aInput = (alone.json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect(aInput["format"] as? String == "prosody-untimed" && aInput["records"] as? Int == 4 && aInput["unparsed"] as? Int == 0, "\(aInput)")
        #expect(alone.text.contains("Debug       0x0                         0    <unknown>: [mod_bosh:] BOSH body open (sid: 996f94e7"), "\(alone.text)")
        // jitsi/docker-jitsi-meet#413 (`docker-compose up`): Prosody's line after two of
        // Jicofo's was joined to the second as its continuation, its level Jicofo's.
        let compose = try analyzePaste("""
            jicofo_1   | Jicofo 2020-04-08 14:59:11.612 INFO: [1] org.jitsi.xmpp.component.ComponentBase.log()   ping timeout: 5000 ms
            jicofo_1   | Jicofo 2020-04-08 14:59:11.612 INFO: [1] org.jitsi.xmpp.component.ComponentBase.log()   ping threshold: 3
            prosody_1  | jcp55b93e217920             info   Incoming Jabber component connection

            """)
        let cInput = (compose.json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect(cInput["format"] as? String == "jitsi-java" && cInput["records"] as? Int == 3, "\(cInput)")
        #expect(compose.text.contains("2020-04-08 14:59:11.612000                 Info        0x0                         0    <unknown>: [jcp55b93e217920:] Incoming Jabber component connection"), "\(compose.text)")
        // prosody/prosody-docker#38: Prosody's lines first (no time before them), then Jicofo's
        // error: the file is still the Java services', Prosody's lines were unparsed.
        let first = try analyzePaste("""
            prosody_1      | c2s2313270                     info\tClient disconnected: connection closed
            prosody_1      | c2s22ee0d0                     info\tClient connected
            jicofo_1       | Jicofo 2017-10-10 14:25:04.298 SEVERE: [16] org.jitsi.impl.protocol.xmpp.XmppProtocolProvider.log() Failed to connect/login: service-unavailable(-1)
            jicofo_1       | service-unavailable(-1)

            """)
        let fInput = (first.json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect(fInput["format"] as? String == "jitsi-java" && fInput["records"] as? Int == 3 && fInput["unparsed"] as? Int ?? 0 == 0, "\(fInput)")
        #expect(first.text.contains("Info        0x0                         0    <unknown>: [c2s22ee0d0:] Client connected"), "\(first.text)")
        #expect(first.text.contains("Error       0x0                         0    Jicofo: org.jitsi.impl.protocol.xmpp.XmppProtocolProvider.log() Failed to connect/login"), "\(first.text)")
    }

    @Test("a log wrapped between words (a mail's or a form's copy) is read with each record whole again")
    func wrappedBetweenWords() throws {
        // winfried/HelpIM#230 ("Last 70 lines of /var/log/prosody/prosody.log", wrapped near 78
        // columns): each record's tail was a line of its own, counted unparsed and dropped
        // (`BOSH` / `client disconnected`; `Destroying` / `session for …`).
        let r = try analyzePaste("""
            Jul 11 11:07:36 bosh6d60319a-3d7c-49b3-adb7-00949e009222    info    BOSH
            client disconnected
            Jul 11 11:07:36 bosh6d60319a-3d7c-49b3-adb7-00949e009222    info    Destroying
            session for cf15e899-eae0-4086-93f4-6fba0f59f5f6@anon.localhost/xmpptk
            (cf15e899-eae0-4086-93f4-6fba0f59f5f6@anon.localhost)
            Jul 11 11:12:00 mod_bosh    info    New BOSH session, assigned it sid
            '402ed392-2fe2-46be-a737-fda13bd02684'
            Jul 11 11:12:00 bosh402ed392-2fe2-46be-a737-fda13bd02684    info
            Authenticated as e6a7c78f-a8b8-4d29-99ab-75e1f4cfbe51@anon.localhost
            Jul 11 11:16:54 bosh402ed392-2fe2-46be-a737-fda13bd02684    info    BOSH
            client disconnected

            """)
        let input = (r.json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect(input["format"] as? String == "prosody" && input["records"] as? Int == 5 && input["unparsed"] as? Int ?? 0 == 0, "\(input)")
        #expect(r.text.contains("[bosh6d60319a-3d7c-49b3-adb7-00949e009222:] BOSH client disconnected\n"), "\(r.text)")
        #expect(r.text.contains("[bosh6d60319a-3d7c-49b3-adb7-00949e009222:] Destroying session for cf15e899-eae0-4086-93f4-6fba0f59f5f6@anon.localhost/xmpptk (cf15e899-eae0-4086-93f4-6fba0f59f5f6@anon.localhost)\n"), "\(r.text)")
        #expect(r.text.contains("[bosh402ed392-2fe2-46be-a737-fda13bd02684:] Authenticated as e6a7c78f-a8b8-4d29-99ab-75e1f4cfbe51@anon.localhost\n"), "\(r.text)")
        // Short lines whose next lines are a record's own (a stack, a dump) are no wrap: the
        // Xcode console of the samples, and a log of short records with an indented dump.
        let dump = "2021-12-23 02:56:59.980625+0530 ClientMobile[12778:1168260] server stream open completed\n"
            + "2021-12-23 02:57:05.193274+0530 ClientMobile[12778:1167792] Available devices: [\n"
            + "camera\nmicrophone\n]\n"
        #expect(HardWrapSource.detectWords(Array(dump.utf8)) == nil)
    }

    @Test("100ms's screen share asked of an SDK built without its extension is screen-share-failed")
    func hmsPreferredExtension() throws {
        // 100mslive/100ms-react-native#1491 (HMSPrebuilt; a log viewer's copy: the event's
        // type, level and time each on a line of its own): "nothing recognized".
        let r = try analyze("""
            Exception - This event
            error
            02:04:06.000 PM
            Error: Could not start screen share, preferredExtension not passed in Build method
            Ui Lifecycle
            info
            02:04:06.077 PM

            """)
        #expect(r.messages("screen-share-failed") == ["the host app's configuration lacks what screen sharing needs (Error: Could not start screen share, preferredExtension not passed in Build method)"], "\(r.findings)")
    }
}

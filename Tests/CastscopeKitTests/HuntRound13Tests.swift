import Foundation
import Testing

@testable import CastscopeKit

/// Real pastes of hunt round 13 that castscope read wrong, each around the lines as they were
/// posted: the JVM's own words on its death (a relay's Java services: Jitsi Videobridge,
/// Jicofo, Ant Media) and bash's on a job it ran.
@Suite("hunt round 13")
struct HuntRound13Tests: PasteSummarySuite {
    typealias Summary = HuntRound8Tests.Summary

    @Test("the JVM's fatal error report is the daemon's death, named by its signal and problematic frame")
    func hotspotCrash() throws {
        // https://github.com/jitsi/jitsi-videobridge/issues/1274 (jvb.log without times):
        // "nothing recognized".
        let jvb = try analyze("""
            INFO: [102405] [confId=5bdf99ae1ba3cc54 epId=dc87d609 gid=ff145c stats_id=Kendall-33k conf_name=<NAME>] Endpoint.expire#811: Expired.
            INFO: [102398] [confId=5bdf99ae1ba3cc54 gid=ff145c conf_name=<NAME>] Conference.dominantSpeakerChanged#446: ds_change ds_id=7f61a6cc
            #
            # A fatal error has been detected by the Java Runtime Environment:
            #
            #  SIGSEGV (0xb) at pc=0x00007faaac8cd92a, pid=1283, tid=26839
            #
            # JRE version: OpenJDK Runtime Environment (11.0.7+10) (build 11.0.7+10-post-Debian-3deb10u1)
            # Java VM: OpenJDK 64-Bit Server VM (11.0.7+10-post-Debian-3deb10u1, mixed mode, sharing, tiered, compressed oops, concurrent mark sweep gc, linux-amd64)
            # Problematic frame:
            # J 17066 c2 org.bouncycastle.crypto.modes.GCMBlockCipher.processBlock([BI[BI)V (117 bytes) @ 0x00007faaac8cd92a [0x00007faaac8cc4e0+0x000000000000144a]
            #
            # No core dump will be written. Core dumps have been disabled. To enable core dumping, try "ulimit -c unlimited" before starting Java again
            #
            # An error report file with more information is saved as:
            # /tmp/hs_err_pid1283.log
            Could not load hsdis-amd64.so; library not loadable; PrintAssembly is disabled

            """)
        #expect(jvb.messages("daemon-died") == ["a Java process the paste does not name: the JVM crashed (SIGSEGV in the compiled Java method org.bouncycastle.crypto.modes.GCMBlockCipher.processBlock)"], "\(jvb.findings)")
        // https://github.com/jitsi/libjitsi/issues/35 (a mail's copy: a blank line after each,
        // bash's job line wrapped): the report and bash's word on the job are one death, by
        // the pid both give.
        let mail = try analyze("""
            [thread 140532624729856 also had an error]#

            # A fatal error has been detected by the Java Runtime Environment:

            #

            #  SIGSEGV (0xb) at pc=0x00007fd0088ba28a, pid=2027, tid=140532641572608

            #

            # JRE version: OpenJDK Runtime Environment (7.0_65-b32) (build 1.7.0_65-b32)

            # Java VM: OpenJDK 64-Bit Server VM (24.65-b04 mixed mode linux-amd64
            compressed oops)

            # Derivative: IcedTea 2.5.2

            # Distribution: Ubuntu 14.04 LTS, package 7u65-2.5.2-3~14.04

            # Problematic frame:

            # C  [libcrypto.so.1.0.0+0xea28a]# [ timer expired, abort... ]

            /usr/share/jitsi-videobridge/jvb.sh: line 32:  2027 Aborted
            (core dumped) LD_LIBRARY_PATH=$libs java -Xmx$VIDEOBRIDGE_MAX_MEMORY
            $VIDEOBRIDGE_DEBUG_OPTIONS -XX

            """)
        #expect(mail.messages("daemon-died") == ["jvb.sh: the shell says it aborted (SIGABRT) after the JVM crashed (SIGSEGV in libcrypto.so.1.0.0)"], "\(mail.findings)")
        // https://github.com/jitsi/jitsi-meet/issues/6445 (jvb.log with times): the report's
        // lines continue the last record, whose time the death takes.
        let timed = try analyze("""
            2020-04-28 10:15:41.916 WARNING: [518] [confId=5a879fb28f41c982 epId=0b29db19 gid=ff05e5 stats_id=Tyrel-w1W conf_name=prhkkljhkljhl] SendSideBandwidthEstimation.getRttMs#587: RTT suspiciously high (1723ms), capping to 1000ms.
            2020-04-28 10:15:45.512 WARNING: [518] [confId=5a879fb28f41c982 epId=0b29db19 gid=ff05e5 stats_id=Tyrel-w1W conf_name=prhkljhlkjhlkjh] TransportCcEngine.tccReceived#157: TCC packet contained received sequence numbers: 29566-29606. Couldn't find packet detail for the seq nums: 29566-29606. Latest seqNum was 31124, size is 1000. Latest RTT is 2757.907465 ms.
            #
            # A fatal error has been detected by the Java Runtime Environment:
            #
            #  SIGSEGV (0xb) at pc=0x00007fd2b59f3afb, pid=3511, tid=3555
            #

            """)
        #expect(timed.input["format"] as? String == "jitsi-java", "\(timed.input)")
        #expect(timed.messages("daemon-died") == ["a Java process the paste does not name: the JVM crashed (SIGSEGV)"], "\(timed.findings)")
        #expect(timed.times("daemon-died") == ["2020-04-28T10:15:45.512000"], "\(timed.findings)")
        // https://github.com/ant-media/Ant-Media-Server/issues/98 (Ant Media Server, a WebRTC
        // relay): a native frame in a library with no symbol.
        let ant = try analyze("""
            #
            # A fatal error has been detected by the Java Runtime Environment:
            #
            #  SIGSEGV (0xb) at pc=0x00007fcea784b840, pid=31096, tid=0x00007fce0216a700
            #
            # JRE version: Java(TM) SE Runtime Environment (8.0_171-b11) (build 1.8.0_171-b11)
            # Java VM: Java HotSpot(TM) 64-Bit Server VM (25.171-b11 mixed mode linux-amd64 compressed oops)
            # Problematic frame:
            # C  [libc.so.6+0x9f840]
            #
            # Failed to write core dump. Core dumps have been disabled. To enable core dumping, try "ulimit -c unlimited" before starting Java again

            """)
        #expect(ant.messages("daemon-died") == ["a Java process the paste does not name: the JVM crashed (SIGSEGV in libc.so.6)"], "\(ant.findings)")
        // The frames of other reports, as the finding names them: a native function
        // (jitsi/libjitsi#45), the JVM's own code (AsamK/signal-cli#796), a VM stub
        // (CraZySacX/node-jdbc#65).
        #expect(DeathFrames.hotspotFrame("C  [libjnffmpeg.so+0x1129b6]  ff_mjpeg_decode_sos+0x19b6") == "ff_mjpeg_decode_sos in libjnffmpeg.so")
        #expect(DeathFrames.hotspotFrame("V  [libjvm.so+0x5191aa]  AccessInternal::PostRuntimeDispatch<G1BarrierSet::AccessBarrier<598116ul, G1BarrierSet>, (AccessInternal::BarrierType)2, 598116ul>::oop_access_barrier(void*)+0xa")
            == "AccessInternal::PostRuntimeDispatch::oop_access_barrier in libjvm.so")
        #expect(DeathFrames.hotspotFrame("v  ~BufferBlob::jni_fast_GetLongField") == "~BufferBlob::jni_fast_GetLongField")
    }

    @Test("the JVM out of native memory is the daemon's death, with what it could not map")
    func hotspotMemory() throws {
        // https://github.com/jitsi/jitsi-videobridge/issues/1353 (jvb.log; its first time lost a
        // digit in the paste): "nothing recognized".
        let r = try analyze("""
            020-07-22 23:57:50.318 SEVERE: [27] AbstractHealthCheckService.run#185: Health check failed in PT32.766281S:
            java.lang.Exception: Performing a health check took too long: PT32.766281S
                    at org.jitsi.health.AbstractHealthCheckService.run(AbstractHealthCheckService.kt:170)
                    at org.jitsi.utils.concurrent.RecurringRunnableExecutor.run(RecurringRunnableExecutor.java:216)
            OpenJDK 64-Bit Server VM warning: INFO: os::commit_memory(0x00007f5244829000, 16384, 0) failed; error='Not enough space' (errno=12)
            #
            # There is insufficient memory for the Java Runtime Environment to continue.
            # Native memory allocation (mmap) failed to map 16384 bytes for committing reserved memory.

            """)
        #expect(r.messages("daemon-died") == ["a Java process the paste does not name: the JVM ran out of memory (Native memory allocation (mmap) failed to map 16384 bytes for committing reserved memory)"], "\(r.findings)")
    }

    @Test("bash's report of a job killed by a signal is the daemon's death, with the signal and the script")
    func bashJobDeath() throws {
        // https://github.com/TencentBlueKing/bk-ci/issues/10178 (the title, one space each):
        // "nothing recognized".
        let bkci = try analyze("backend.bkci.sh: line 42: 15 Killed java -server \"${java_argv[@]}\" $MEM_OPTS $GC_LOG $java_run\n")
        #expect(bkci.messages("daemon-died") == ["java: the shell says it was killed (SIGKILL, a job of backend.bkci.sh, line 42)"], "\(bkci.findings)")
        // https://github.com/monun/server-script/issues/5 (bash's padding kept).
        let paper = try analyze("""
            Use Aikar's Advanced memory options
            ./paper.sh: line 121:  3611 Killed                  java "${jvm_arguments[@]}"
            The server restarts. Press Enter to start immediately or Ctrl+C to cancel

            """)
        #expect(paper.messages("daemon-died") == ["java: the shell says it was killed (SIGKILL, a job of paper.sh, line 121)"], "\(paper.findings)")
        // A job that dumped core, and one whose program is a variable's value: the script.
        let core = try analyze("/usr/share/jitsi-videobridge/jvb.sh: line 32:  2027 Aborted                 (core dumped) LD_LIBRARY_PATH=$libs java -Xmx3072m\n")
        #expect(core.messages("daemon-died") == ["java: the shell says it aborted (SIGABRT, core dumped, a job of jvb.sh, line 32)"], "\(core.findings)")
        let variable = try analyze("run.sh: line 9: 812 Segmentation fault      $JANUS_BIN -F /etc/janus\n")
        #expect(variable.messages("daemon-died") == ["run.sh: the shell says it crashed (SIGSEGV)"], "\(variable.findings)")
        // Prose with the words is no death.
        #expect(try analyze("See the FAQ: line 5: 12 Killed processes are restarted by the supervisor\n").findings.isEmpty)
    }

    @Test("the JVM that could not start is the daemon's death, with the reason it gave, once per attempt")
    func jvmCouldNotStart() throws {
        // https://github.com/jitsi/jitsi-meet/issues/1826 (jicofo.log: two attempts):
        // "nothing recognized".
        let jicofo = try analyze("""
            Error occurred during initialization of VM
            Could not reserve enough space for object heap
            Error: Could not create the Java Virtual Machine.
            Error: A fatal exception has occurred. Program will exit.
            Error occurred during initialization of VM
            Could not reserve enough space for object heap
            Error: Could not create the Java Virtual Machine.

            """)
        #expect(jicofo.messages("daemon-died") == ["a Java process the paste does not name: the JVM could not start (Could not reserve enough space for object heap) (2 times; the first here)"], "\(jicofo.findings)")
        // https://github.com/linuxserver-archive/docker-unifi-controller/issues/177 (a
        // container restarting it: the reason before `Could not create…`).
        let unifi = try analyze("""
            Error: A fatal exception has occurred. Program will exit.
            Invalid maximum heap size: -Xmx1024MM
            Error: Could not create the Java Virtual Machine.
            Error: A fatal exception has occurred. Program will exit.
            Invalid maximum heap size: -Xmx1024MM
            Error: Could not create the Java Virtual Machine.
            Error: A fatal exception has occurred. Program will exit.
            Invalid maximum heap size: -Xmx1024MM
            Error: Could not create the Java Virtual Machine.

            """)
        #expect(unifi.messages("daemon-died") == ["a Java process the paste does not name: the JVM could not start (Invalid maximum heap size: -Xmx1024MM) (3 times; the first here)"], "\(unifi.findings)")
        // https://github.com/HyperiumClient/Addon-Workspace/pull/19 (stderr after stdout: the
        // reason after it).
        let after = try analyze("""
            Error: Could not create the Java Virtual Machine.
            Error: A fatal exception has occurred. Program will exit.
            Invalid maximum heap size: -Xmx8G
            The specified size exceeds the maximum representable size.

            """)
        #expect(after.messages("daemon-died") == ["a Java process the paste does not name: the JVM could not start (Invalid maximum heap size: -Xmx8G)"], "\(after.findings)")
    }

    @Test("Openfire's log keeps its times and levels: the JVB and Jicofo inside Openfire Meetings")
    func openfireDottedDates() throws {
        // https://github.com/igniterealtime/openfire-pade-plugin/issues/169: plain text, "times
        // lost" (a dotted year-first date no layout read).
        let r = try analyzePaste("""
            2020.12.23 05:01:23 INFO [Thread-26]: org.jivesoftware.openfire.plugin.ofmeet.JitsiJicofoWrapper - Jicofo 2020-12-23 05:01:23.346 INFO: [33] org.jitsi.jicofo.ComponentsDiscovery.log() Component went offline: focus.chat.joshwho.net
            2020.12.23 05:02:06 INFO [Thread-22]: org.jivesoftware.openfire.plugin.ofmeet.JitsiJvbWrapper - INFO: [17] VideobridgeExpireThread.expire#140: Running expire()
            2020.12.23 05:02:08 INFO [Thread-26]: org.jivesoftware.openfire.plugin.ofmeet.JitsiJicofoWrapper - Jicofo 2020-12-23 05:02:08.338 INFO: [33] org.jitsi.jicofo.ComponentsDiscovery.log() New component discovered: focus.chat.joshwho.net, null
            2020.12.23 05:03:06 INFO [Thread-22]: org.jivesoftware.openfire.plugin.ofmeet.JitsiJvbWrapper - INFO: [19] HealthChecker.run#170: Performed a successful health check in PT0S. Sticky failure: false

            """)
        let input = (r.json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect(input["format"] as? String == "openfire" && input["records"] as? Int == 4 && input["unparsed"] as? Int ?? 0 == 0, "\(input)")
        #expect(r.text.contains("2020-12-23 05:02:06.000000                 Info        0x0                         0    <unknown>: [org.jivesoftware.openfire.plugin.ofmeet.JitsiJvbWrapper:] INFO: [17] VideobridgeExpireThread.expire#140: Running expire()"), "\(r.text)")
        // https://github.com/igniterealtime/openfire-pade-plugin/issues/259 (the level padded,
        // a Java exception's lines each under Openfire's lead).
        let padded = try analyzePaste("""
            2021.02.27 11:13:27 INFO  [Thread-41]: org.jivesoftware.openfire.plugin.ofmeet.JitsiJicofoWrapper - \tat java.base/java.lang.Thread.run(Thread.java:834)
            2021.02.27 11:13:27 INFO  [Thread-41]: org.jivesoftware.openfire.plugin.ofmeet.JitsiJicofoWrapper - java.lang.IllegalArgumentException: name must not be null

            """)
        let pInput = (padded.json["inputs"] as? [[String: Any]])?.first ?? [:]
        #expect(pInput["format"] as? String == "openfire" && pInput["records"] as? Int == 2, "\(pInput)")
    }
}

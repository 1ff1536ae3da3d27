import Foundation
import Testing

@testable import CastscopeKit

/// Real pastes of session 64's field round (lines as the issues give them).
@Suite("field formats, round 64: ingest servers' connections, nginx's dead workers")
struct FieldFormatsRound64Tests {
    func analyze(_ name: String, _ text: String, _ args: [String] = []) throws -> RunResult {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: path)
        return try castscope(["analyze", "--no-color"] + args + [path.path])
    }

    @Test("nginx-rtmp's publish and disconnect (arut/nginx-rtmp-module#1137, #1247): a relay session with its room, peer and end (nothing recognized before)")
    func nginxRtmp() throws {
        let log = """
            2018/04/19 07:59:13 [info] 7559#0: *2 client connected '10.215.145.120'
            2018/04/19 07:59:13 [info] 7559#0: *2 publish: name='test34' args='' type= silent=0, client: 10.215.145.120, server: 0.0.0.0:1935
            2018/04/19 07:59:13 [info] 7559#0: *2 recv() failed (104: Connection reset by peer), client: 10.215.145.120, server: 0.0.0.0:1935
            2018/04/19 07:59:14 [info] 7559#0: *2 disconnect, client: 10.215.145.120, server: 0.0.0.0:1935
            2018/04/19 07:59:20 [info] 7559#0: *3 play: name='test34' args='' start=0 duration=0 reset=0 silent=0, client: 10.0.0.5, server: 0.0.0.0:1935

            """
        let r = try analyze("error.log", log)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("relay session 2 (10.215.145.120, room test34) at 2018-04-19T07:59:13.000000 has no device session in these logs; lasted 1.0 s, closed: disconnect"), "\(r.stdout)")
        #expect(!r.stdout.contains("relay session 3"), "\(r.stdout)")
    }

    @Test("mediamtx's publishing and closed connections (bluenviron/mediamtx#823, #5242): relay sessions; one with only its end says when and why it closed")
    func mediamtx() throws {
        let log = """
            2022/02/10 14:04:47 INF [RTMP] [conn 4X.XXX.XXX.237:21558] opened
            2022/02/10 14:04:48 INF [RTMP] [conn 4X.XXX.XXX.237:21558] is publishing to path 'live/screen', 1 track (H264)
            2022/02/10 14:04:57 INF [RTMP] [conn 4X.XXX.XXX.237:21558] closed (read tcp 192.168.1.XXX:1935->4X.XXX.XXX.237:21558: i/o timeout)
            2022/02/10 14:05:17 INF [RTMP] [conn 4X.XXX.XXX.237:21572] closed: terminated

            """
        let r = try analyze("mediamtx.log", log, ["--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let relay = json["relaySessions"] as! [[String: Any]]
        #expect(relay.count == 2, "\(r.stdout)")
        let first = relay.first { $0["id"] as? String == "4X.XXX.XXX.237:21558" }
        #expect(first?["room"] as? String == "live/screen", "\(relay)")
        #expect((first?["reason"] as? String)?.hasSuffix("i/o timeout") == true, "\(relay)")
        let text = try analyze("mediamtx.log", log)
        #expect(text.stdout.contains("relay session 4X.XXX.XXX.237:21572 (?, room ?) closed at 2022-02-10T14:05:17.000000 has no device session in these logs; closed: terminated"), "\(text.stdout)")
        // (a connection known only by its close, a reader's as often as not, is listed but no
        // warning: one publish and one viewer made four)
        #expect(text.stdout.contains("findings: 1 warning — orphan-relay-session"), "\(text.stdout)")
    }

    @Test("SRS's publish and unpublish by context id, SRS 5 and SRS 4's function-name column (ossrs/srs#3749, #2201)")
    func srs() throws {
        let log = """
            [2023-07-30 23:50:01.075][Trace][49][2u29kj95] RTMP client ip=10.0.0.7:50432, fd=12
            [2023-07-30 23:50:01.080][Trace][49][2u29kj95] client identified, type=fmle-publish, vhost=__defaultVhost__, app=live, stream=screen, param=, duration=-1ms
            [2023-07-30 23:50:02.001][Trace][49][0uv14058] client identified, type=rtmp-play, vhost=__defaultVhost__, app=live, stream=screen, param=, duration=-1ms
            [2023-07-30 23:50:10.596][Trace][49][2u29kj95] cleanup when unpublish
            [2023-07-30 23:50:10.596][Trace][virtual void SrsRtcStream::on_unpublish()][49][2u29kj95] cleanup when unpublish, created=1, deliver=1

            """
        let r = try analyze("srs.log", log)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("relay session 2u29kj95 (?, room screen) at 2023-07-30T23:50:01.080000 has no device session in these logs; lasted 9.5 s, closed: unpublish"), "\(r.stdout)")
        #expect(!r.stdout.contains("0uv14058"), "\(r.stdout)")
    }

    @Test("nginx's master on a dead worker or exec child (nginx-rtmp-module#1080, #993, sergey#286): daemon-died with the signal's name (nothing recognized before)")
    func nginxDeadWorkers() throws {
        let cases = [
            ("2017/07/25 14:11:31 [alert] 8343#0: worker process 8344 exited on signal 11 (core dumped)\n", "nginx: a worker process crashed (core dumped) (signal 11, SIGSEGV)"),
            ("2017/03/30 17:11:04 [alert] 9162#0: unknown process 9164 exited on signal 11\n", "nginx: a process it started (an exec, ffmpeg) was killed (signal 11, SIGSEGV)"),
            ("2018/11/09 20:31:32 [notice] 22#22: unknown process 227 exited with code 1\n", "nginx: a process it started (an exec, ffmpeg) exited with an error (exit code 1)"),
        ]
        for (line, says) in cases {
            let r = try analyze("error.log", line)
            #expect(r.stdout.contains("[daemon-died] \(says)"), "\(r.stdout)")
        }
        // (nginx-rtmp's exec ends its ffmpeg with SIGKILL at every unpublish, SIGTERM with
        // `exec_kill_signal term`, after which ffmpeg exits 255: routine, no death)
        for line in ["unknown process 227 exited with code 0", "unknown process 9164 exited on signal 9", "unknown process 9164 exited on signal 15",
                     "unknown process 9164 exited with code 255"] {
            let clean = try analyze("error.log", "2018/11/09 20:31:32 [notice] 22#22: \(line)\n")
            #expect(!clean.stdout.contains("daemon-died"), "\(clean.stdout)")
        }
    }

    @Test("an issue template's list lines above an SRS log (`1. SRS的日志如下(Log):`, ossrs/srs#2201) are sentences: the log keeps its times (it was plain text)")
    func listItemsAboveALog() throws {
        let log = """
            1. SRS版本(Version): `4.0`
            1. SRS的日志如下(Log):
            [2021-02-19 17:04:41.873][Trace][virtual SrsCplxError* SrsMetaCache::update_data(SrsMessageHeader*, SrsOnMetaDataPacket*, bool&)][26536][241h95q0] got metadata
            [2021-02-19 17:04:42.003][Warn][virtual SrsCplxError* SrsRtmpConn::handle_publish_message(SrsSource*, SrsCommonMessage*)][26536][241h95q0][11] fmle ignore AMF0/AMF3 command message.
            [2021-02-19 17:04:42.280][Trace][virtual void SrsSource::on_unpublish()][26536][6hq450u5] cleanup when unpublish
            [2021-02-19 17:04:42.280][Trace][virtual void SrsRtcStream::on_unpublish()][26536][6hq450u5] cleanup when unpublish, created=1, deliver=1

            """
        let r = try analyze("srs.md", log)
        #expect(r.stdout.contains("timestamped-bracketed"), "\(r.stdout)")
        #expect(r.stdout.contains("closed at 2021-02-19T17:04:42.280000"), "\(r.stdout)")
        #expect(!r.stderr.contains("times lost"), "\(r.stderr)")
    }

    @Test("one quoted line under a sentence (nginx-rtmp-module#1080's `> 2017/07/25 14:11:31 [alert] …`) is read without its `> `: its time kept")
    func oneQuotedLine() throws {
        let r = try analyze("issue.md", "More info on the bug\n\n> 2017/07/25 14:11:31 [alert] 8343#0: worker process 8344 exited on signal 11 (core dumped)\n")
        #expect(r.stdout.contains("2017-07-25T14:11:31.000000  sys  [alert] 8343#0: worker process 8344"), "\(r.stdout)")
    }

    @Test("coturn's session ends behind a compose prefix (OpenVidu#552): recognized with their reason; its uptime counter `33:` is no time, so no 'times lost' note")
    func coturnSessions() throws {
        let log = """
            coturn_1           | 33: session 005000000000000001: peer 192.168.1.49 lifetime updated: 300
            coturn_1           | 33: session 004000000000000001: closed (2nd stage), user <G4VKCQ> realm <openvidu> origin <>, local 192.168.1.49:3478, remote 82.226.16.196:54414, reason: allocation timeout
            coturn_1           | 33: session 004000000000000001: delete: realm=<openvidu>, username=<G4VKCQ>
            coturn_1           | 66: session 007000000000000001: refreshed, realm=<openvidu>, username=<G4VKCQ>, lifetime=0

            """
        let r = try analyze("compose.log", log, ["--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let closed = (json["unattached"] as! [[String: Any]]).filter { $0["event"] as? String == "turn.session_closed" }
        #expect(closed.count == 1 && (closed.first?["message"] as? String)?.hasSuffix("reason: allocation timeout") == true, "\(closed)")
        #expect(!r.stderr.contains("times lost") && !r.stdout.contains("times lost"), "\(r.stderr)")
    }

    @Test("a journal line whose message is a JSON logger's object with its time (mediasoup#200): the file's year from that time (it was read as this year)")
    func jsonLoggerTimeGivesTheYear() throws {
        let log = """
            Apr 21 03:26:41 host sfu[438]: {"level":"info","time":"2018-04-21T03:26:41Z","message":"2018-04-21T03:26:41.430Z mediasoup:Producer close()"}
            Apr 21 03:26:42 host sfu[438]: {"level":"info","time":"2018-04-21T03:26:42Z","message":"2018-04-21T03:26:42.001Z mediasoup:Transport close()"}

            """
        let r = try castscope(["show", try write("journal.txt", log)])
        #expect(r.stdout.contains("2018-04-21 03:26:41"), "\(r.stdout)")
        #expect(!r.stdout.contains("2026-04-21"), "\(r.stdout)")
        // (a time of something else, an object's inside it or another day's, is not the line's)
        for other in [#"{"level":"info","msg":"done","job":{"timestamp":"2019-01-05T08:00:00Z"}}"#, #"{"level":"info","time":"2019-01-05T03:26:41Z"}"#] {
            let o = try castscope(["show", try write("journal.txt", "Apr 21 03:26:41 host sfu[438]: \(other)\n")])
            #expect(!o.stdout.contains("\n2019-"), "\(o.stdout)")
        }
    }

    @Test("docker 1.x's `logs -t`, two spaces after the time (janus-gateway#583): the shell's `Segmentation fault (core dumped)` is a death (the space left before it hid it)")
    func dockerTwoSpaces() throws {
        let r = try analyze("docker.log", "2016-07-21T08:39:55.000000000Z  janus started\n2016-07-21T08:39:56.366303408Z  Segmentation fault (core dumped)\n")
        #expect(r.stdout.contains("[daemon-died]") && r.stdout.contains("Segmentation fault, core dumped"), "\(r.stdout)")
    }

    @Test("HaishinKit's SRT module failing to connect (SRTHaishinKit#16, #36): failed attempts and never-connected to the SRT server (nothing recognized before)")
    func haishinKitSRT() throws {
        let log = """
            2021-01-11 13:02:32.126 [Info] [com.haishinkit.SRTHaishinKit] [SRTSocket.swift:42] status > SRT Socket Connected
            2021-01-11 13:02:35.130 [Error] [com.haishinkit.SRTHaishinKit] [SRTSocket.swift:93] connect(_:options:) > Connection setup failure: connection time out

            """
        let r = try analyze("xcode.log", log)
        #expect(r.stdout.contains("failed-to-connect") && r.stdout.contains("never connected to the SRT server (1 attempt)"), "\(r.stdout)")
        let untimed = try analyze("paste.log", "[Error] [com.haishinkit.SRTHaishinKit] [SRTSocket.swift:102] createConnectionException() > Connection setup failure: connection time out\n")
        #expect(untimed.stdout.contains("never connected to the SRT server"), "\(untimed.stdout)")
    }

    @Test("Twilio's `Failed to connect to room with error … Code=53000` alone (twilio-video-ios#266): the broadcast failed, a finding (recognized, but none)")
    func twilioRoomConnectFailure() throws {
        let r = try analyze("paste.log", #"Error: Failed to connect to room with error Error Domain=com.twilio.video Code=53000 "Signaling connection error" UserInfo={NSLocalizedDescription=Signaling connection error, NSLocalizedFailureReason=SIP error 503}"# + "\n")
        #expect(r.stdout.contains("1 session") && r.stdout.contains("the broadcast failed"), "\(r.stdout)")
    }

    private func write(_ name: String, _ text: String) throws -> String {
        let dir = try temporaryDirectory()
        let path = dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: path)
        return path.path
    }
}

import Testing

@testable import CastscopeKit

/// Builds sessions from `(ms, side, event, message)` rows of one process.
func sessions(_ rows: [(Int64, Side, String, String, [(String, String)])], pid: Int = 9) -> SessionBuilder.Result {
    var events: [Event] = []
    for (i, r) in rows.enumerated() {
        events.append(Event(kind: r.2, sdk: "jitsi", side: r.1, time: r.0 * 1000, process: r.1 == .extension ? "Ext" : "App",
                            pid: r.1 == .extension ? pid : 1, message: r.3, attrs: r.4,
                            source: SourceRef(path: "t.log", line: i + 1), order: i, parsedTime: nil, fileIndex: 0))
    }
    return SessionBuilder().build(events)
}

@Suite("session state machine")
struct SessionTests {
    @Test func stoppedByHostAfterPeerClosedAndDidCloseNil() {
        let r = sessions([
            (0, .extension, "broadcast.started", "broadcast started", []),
            (5, .extension, "socket.connect_attempt", "open socket connection", []),
            (6, .extension, "socket.connect_failed", "failure: socket file missing", [("cause_text", "socket file missing")]),
            (105, .extension, "socket.connect_attempt", "open socket connection", []),
            (107, .extension, "socket.connected", "client stream open completed", []),
            (900, .extension, "socket.closed_by_peer", "server socket closed", []),
            (901, .extension, "socket.closed", "client connection did close nil", [("error", "nil")]),
        ])
        #expect(r.sessions.count == 1)
        let s = r.sessions[0]
        #expect(s.outcome == .stoppedByHost)
        #expect(s.attempts.count == 2 && s.attempts[0].failure == "socket file missing" && s.attempts[1].failure == nil)
        #expect(s.connectedAt == 107_000)
        #expect(s.deciding.map(\.source.line) == [6, 7])
        #expect(s.attemptCadence?.median == 100_000)
    }

    @Test func errorCloseIsASocketError() {
        let r = sessions([
            (0, .extension, "socket.connect_attempt", "open socket connection", []),
            (1, .extension, "socket.connected", "client stream open completed", []),
            (50, .extension, "socket.error", "client stream error occured: Optional(Error Domain=NSPOSIXErrorDomain Code=32)", []),
            (51, .extension, "socket.closed", "client connection did close Optional(...)", [("error", "Optional(...)")]),
        ])
        #expect(r.sessions.map(\.outcome) == [.socketError])
        #expect(r.sessions[0].startInferred)
    }

    @Test func killNamesItsVictimByPid() {
        var rows: [(Int64, Side, String, String, [(String, String)])] = [
            (0, .extension, "broadcast.started", "broadcast started", []),
            (10, .extension, "socket.connected", "client stream open completed", []),
            (20, .extension, "frame.sent", "video sample processed successfully", []),
        ]
        rows.append((30, .system, "extension.killed_memory", "EXC_RESOURCE -> Ext[9] exceeded mem limit: ActiveHard 50 MB",
                     [("target", "Ext"), ("target_pid", "9"), ("limit_kind", "ActiveHard"), ("limit_mb", "50")]))
        let r = sessions(rows)
        #expect(r.sessions.map(\.outcome) == [.killed])
        #expect(r.sessions[0].reason == "the extension was killed for exceeding its memory limit (ActiveHard 50 MB)")
        #expect(r.sessions[0].frames == 1)
    }

    @Test func logEndingMidStreamIsTruncatedAndASecondStartSplits() {
        let r = sessions([
            (0, .extension, "broadcast.started", "broadcast started", []),
            (1, .extension, "socket.connected", "client stream open completed", []),
            (5000, .extension, "broadcast.started", "broadcast started", []),
            (5001, .extension, "socket.connect_attempt", "open socket connection", []),
            (5002, .extension, "socket.connected", "client stream open completed", []),
        ])
        #expect(r.sessions.map(\.outcome) == [.truncated, .truncated])
        #expect(r.sessions[0].reason == "a new broadcastStarted arrived before this session ended")
        #expect(r.sessions[1].reason == "the log ends mid-session with no end line")
    }

    @Test func hostLinesAttachToTheSessionTheyOverlapAndCanCloseIt() {
        let r = sessions([
            (-3000, .app, "app.screenshare_requested", "Using getDisplayMedia for screen sharing", []),
            (0, .extension, "broadcast.started", "broadcast started", []),
            (2, .extension, "socket.connected", "client stream open completed", []),
            (100, .extension, "frame.sent", "video sample processed successfully", []),
            (400, .app, "server.client_disconnected", "server stream end encountered", []),
            (60_000, .app, "server.client_connected", "server stream open completed", []),
        ])
        #expect(r.sessions.count == 1)
        #expect(r.sessions[0].outcome == .completed)
        #expect(r.sessions[0].events.first?.kind == "app.screenshare_requested")
        #expect(r.unattached.map(\.kind) == ["server.client_connected"])
    }

    @Test func sendbirdGaveUpIsFailedToConnect() {
        let r = sessions([
            (0, .extension, "broadcast.started", "[SBCBroadcast] broadcastStarted - appGroup=g", []),
            (1, .extension, "socket.connect_attempt", "exists=0", []),
            (2, .extension, "socket.connect_failed", "errno=2", [("errno", "2"), ("strerror", "No such file or directory")]),
            (1500, .extension, "socket.connect_gave_up", "[SBCBroadcast] ERROR: Socket connect failed after all retries", []),
        ])
        #expect(r.sessions.map(\.outcome) == [.failedToConnect])
        #expect(r.sessions[0].attempts[0].failure == "errno=2 (No such file or directory)")
    }
}

@Suite("intervals")
struct IntervalTests {
    @Test("median and largest gap by selection agree with sorting, duplicates and odd/even counts included")
    func agreesWithSorting() {
        var rng = SystemRandomNumberGenerator()
        for n in [0, 1, 2, 3, 4, 5, 10, 101, 1000] {
            for spread in [1, 3, 1_000_000] {
                var t: Int64 = 0
                let times = (0..<n).map { _ in
                    t += Int64.random(in: -1...Int64(spread), using: &rng)  // a few going back
                    return t
                }
                let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.filter { $0 >= 0 }.sorted()
                let expected: (Int64, Int64)? = gaps.isEmpty ? nil : (gaps.count % 2 == 1 ? gaps[gaps.count / 2]
                    : (gaps[gaps.count / 2 - 1] + gaps[gaps.count / 2]) / 2, gaps.last!)
                let got = intervals(times)
                #expect(got?.median == expected?.0 && got?.max == expected?.1, "n \(n) spread \(spread)")
            }
        }
    }
}

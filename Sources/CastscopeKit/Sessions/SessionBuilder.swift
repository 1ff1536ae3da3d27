/// Builds broadcast sessions from time-ordered events with a state machine per extension
/// process: started → connecting (attempts) → connected → streaming → ended, then attaches
/// host-app and system lines to the session they overlap.
public struct SessionBuilder {
    /// How long after a session's end a host-app line may come and still belong to it.
    public var attachAfterMicros: Int64 = 2_000_000
    /// How long before a session's start a host-app line may come (server set-up, picker).
    public var attachBeforeMicros: Int64 = 10_000_000

    public init() {}

    public struct Result: Sendable {
        public var sessions: [Session]
        /// Recognized lines that belong to no session (host-only logs, system alerts).
        public var unattached: LinesOutside
    }

    enum Phase { case idle, connecting, connected, streaming, ended }

    struct Stream {
        var sessions: [Session] = []
        var phase: Phase = .idle
        /// The open session's error line and the host app's close line, held out of line: a
        /// stream is kept for every extension process seen (most have neither), and two
        /// events inline would make each 400 bytes.
        private var marks: [Event?] = []
        var sawError: Event? {
            get { marks.isEmpty ? nil : marks[0] }
            set { mark(0, newValue) }
        }
        var peerClosed: Event? {
            get { marks.isEmpty ? nil : marks[1] }
            set { mark(1, newValue) }
        }
        private mutating func mark(_ i: Int, _ e: Event?) {
            if marks.isEmpty {
                guard e != nil else { return }
                marks = [nil, nil]
            }
            marks[i] = e
            if case .none = marks[0], case .none = marks[1] { marks = [] }
        }
        /// Lines before the first session of the process (e.g. `LKSampleHandler created`).
        var preamble: [Event] = []
        /// Lines after the end of a session already handed on (`SessionStream`), to be placed
        /// like host lines.
        var late: [Event] = []
        /// Where its latest session was last found in `SessionStream.live` (that list's
        /// position plus the entries taken off its front since, `SessionStream.liveFront`; -1:
        /// not yet): a line finds its session there without a search.
        var liveHint = -1
    }

    /// Lines that open a new session when none is open.
    static let startCodes = KindSet([.socketConnectBegin, .socketInit, .socketConnectAttempt, .socketConnected])

    /// The extension process a line belongs to: process and pid, or the file when the lines
    /// carry no pid.
    static func streamKey(_ e: Event) -> String { streamKey(process: e.process, pid: e.pid, path: e.sourcePath) }

    static func streamKey(process: String?, pid: Int?, path: String) -> String {
        // Bytes, then one string: an interpolation was ~1,700 instructions, once per stream
        // a line is routed to.
        var key = OutputBuffer(capacity: 48)
        if let pid {
            key.append(process ?? "?")
            key.byte(UInt8(ascii: "["))
            key.int(pid)
            key.byte(UInt8(ascii: "]"))
        } else {
            key.append("file:")
            key.append(path)
        }
        return key.string
    }

    /// Kill lines that open a session when none is open (the extension's own lines may be
    /// missing: a device syslog excerpt holding only the kernel's line).
    static let killCodes = KindSet([.extensionKilledMemory, .extensionKilled])

    /// A kill whose victim is a Broadcast Upload Extension: the 50 MB limit broadcast
    /// extensions have, or (limit not given) a name that says so. A notification service
    /// extension at 24 MB or a host app at 650 MB is not one; nor is a network extension,
    /// whose limit is 50 MB too, when its name says what it is (`PacketTunnel`, a VPN's).
    static func killsBroadcastExtension(_ e: Event) -> Bool {
        guard killCodes.contains(e.code), let name = e.attr("target"), e.attr("image") != "app" else { return false }
        let lower = name.lowercased()
        let saysBroadcast = broadcastNameWords.contains { lower.hasBytes($0) }
        if !saysBroadcast && otherExtensionNameWords.contains(where: { lower.hasBytes($0) }) { return false }
        // (below the limit too when the name says so: a JetsamEvent's footprint at the kill,
        // 31 MB with `per-process-limit`, KSCrash#278's shape, was no session at all)
        if let mb = e.attr("limit_mb").flatMap({ Int($0) }) { return (45...55).contains(mb) || saysBroadcast && mb < 45 }
        return saysBroadcast
    }

    static let broadcastNameWords = ["broadcast", "upload", "screenshar", "screen shar", "screencapture"]
    /// Words in the names of other extensions (network extensions share the 50 MB limit).
    static let otherExtensionNameWords = ["packettunnel", "tunnel", "vpn", "dnsproxy", "contentfilter", "filterdata", "filtercontrol",
                                          "appproxy", "networkextension", "notificationservice", "notificationcontent", "widget"]

    /// All sessions of time-ordered events at once (tests, `tail`'s findings): a
    /// `SessionStream` that closes sessions only at the end of the events.
    public func build(_ events: [Event]) -> Result {
        var stream = SessionStream()
        stream.builder = self
        stream.idleHorizon = Int64.max
        stream.retireAfter = Int64.max
        stream.parkAfter = Int.max  // every session is kept: parking would only cost a spill
        stream.learn(events)
        var sessions: [Session] = []
        for e in events { stream.feed(e) { sessions.append($0) } }
        stream.finish { sessions.append($0) }
        return Result(sessions: sessions, unattached: stream.unattached)
    }

    // MARK: in-app capture

    /// The in-app capture stream a line belongs to: `capture.*` lines, and a ReplayKit error
    /// that is RPScreenRecorder's own start failure or comes while a capture is open in the
    /// same process (or file).
    func captureKey(_ e: Event, _ stream: (String) -> Stream?) -> String? {
        // The kind first: most lines are neither, and the key is a string built per line. A
        // capture kind's code is `.other` or `.captureFrame` (a code is a number to test; the
        // kind's prefix is not).
        guard e.code == .other || e.code == .captureFrame || e.code == .replaykitError else { return nil }
        let capture = e.kind.hasPrefix("capture.")
        guard capture || e.code == .replaykitError else { return nil }
        let k = "in-app:" + Self.streamKey(e)
        if capture { return k }
        if e.attr("method")?.hasPrefix("startCapture") == true || e.message.hasBytes("[RPScreenRecorder startCapture") { return k }
        if let s = stream(k), s.phase != .idle, s.phase != .ended { return k }
        return nil
    }

    func feedCapture(_ e: Event, into s: inout Stream) {
        let kind = e.kind
        let open = s.phase != .idle && s.phase != .ended
        if kind == "capture.started" {
            if open {
                end(&s, e, .truncated, "in-app capture: started again before this capture ended", deciding: [e])
                s.sessions[s.sessions.count - 1].interruptedByNewStart = true
                s.sessions[s.sessions.count - 1].end = Self.latestTime(s.sessions[s.sessions.count - 1].events)
            }
            newSession(e, inferred: false, into: &s)
        } else if !open, kind == "capture.interrupted", let i = s.sessions.indices.last, s.sessions[i].outcome == .interrupted {
            // The same interruption told again (ReplayKit pauses, then the app resigns active).
            s.sessions[i].events.append(e)
            s.sessions[i].deciding.append(e)
            return
        } else if !open {
            if kind == "capture.resumed" || kind == "capture.frame" || kind == "capture.stopped" || kind == "capture.interrupted"
                || kind == "replaykit.error"
            {
                newSession(e, inferred: true, into: &s)
            } else {
                if let i = s.sessions.indices.last { s.sessions[i].events.append(e) } else { s.preamble.append(e) }
                return
            }
        }
        let i = s.sessions.count - 1
        s.sessions[i].capture = "in-app"
        if s.sessions[i].sdk == "ios" || s.sessions[i].sdk == "in-app", e.sdk != "ios", e.sdk != "in-app" { s.sessions[i].sdk = e.sdk }
        s.sessions[i].events.append(e)
        Self.foldLatest(&s.sessions[i].events, e.code)
        switch kind {
        case "capture.frame":
            s.sessions[i].frames += e.count
            if s.sessions[i].firstFrameAt == nil { s.sessions[i].firstFrameAt = e.time }
            s.sessions[i].lastFrameAt = e.lastTime
            s.phase = .streaming
        case "capture.interrupted":
            let cause = e.attr("cause") ?? e.message
            end(&s, e, .interrupted,
                "in-app capture was interrupted: \(cause); in-app capture (RPScreenRecorder.startCapture) runs only while the app is in the foreground",
                deciding: [e])
        case "capture.stopped":
            end(&s, e, .completed, "in-app capture: the app stopped the capture (\(e.message))", deciding: [e])
        case "replaykit.error":
            // A known code is said by its meaning (`-5801 (userDeclined): the user declined
            // recording …`), not by the whole line: a localized description and its `UserInfo`
            // made a why of 330 characters (flutter-webrtc#936); another, with its line.
            if let code = ReplayKitErrors.code(of: e), ReplayKitErrors.table[code] != nil {
                end(&s, e, .failed, "in-app capture failed with " + ReplayKitErrors.describe(code: code, text: nil, message: e.message), deciding: [e])
                break
            }
            let code = e.attr("code").map { " \($0)" } ?? ""
            let cause = e.attr("cause").map { " (\($0))" } ?? ""
            end(&s, e, .failed, "in-app capture failed with ReplayKit error\(code): \(e.message)\(cause)", deciding: [e])
        default:
            break
        }
    }

    private func newSession(_ e: Event, inferred: Bool, into s: inout Stream) {
        var session = Session(id: "", sdk: e.sdk, process: e.process, pid: e.pid)
        if e.side == .system, let target = e.attr("target") {
            // Opened by a kill: the victim is the session's process.
            session.process = target
            session.pid = e.attr("target_pid").flatMap { Int($0) }
            session.sdk = "unknown"
        }
        session.start = e.time
        session.displayOffset = e.displayOffset
        session.startInferred = inferred
        session.events = s.preamble
        s.preamble = []
        s.sessions.append(session)
        s.phase = .connecting
        s.sawError = nil
        s.peerClosed = nil
    }

    private func end(_ s: inout Stream, _ e: Event, _ outcome: Outcome, _ reason: String, deciding: [Event]) {
        let i = s.sessions.count - 1
        s.sessions[i].end = e.time
        s.sessions[i].outcome = outcome
        s.sessions[i].reason = reason
        s.sessions[i].deciding = deciding
        s.phase = .ended
    }

    func feed(_ e: Event, into s: inout Stream) {
        let kind = e.kind
        let code = e.code
        if code == .broadcastStarted {
            if s.phase != .idle && s.phase != .ended {
                end(&s, e, .truncated,
                    "a new broadcastStarted arrived before this session ended", deciding: [e])
                s.sessions[s.sessions.count - 1].interruptedByNewStart = true
                s.sessions[s.sessions.count - 1].end = Self.latestTime(s.sessions[s.sessions.count - 1].events)
            }
            newSession(e, inferred: false, into: &s)
            s.sessions[s.sessions.count - 1].events.append(e)
            s.sessions[s.sessions.count - 1].start = e.time
            return
        }
        if s.phase == .idle {
            let opens = Self.startCodes.contains(code) || kind.hasPrefix("socket.") || kind.hasPrefix("frame.")
                || kind.hasPrefix("broadcast.") || (Self.killCodes.contains(code) && e.attr("target") != nil)
            guard opens else { s.preamble.append(e); return }
            newSession(e, inferred: true, into: &s)
        } else if s.phase == .ended {
            guard Self.startCodes.contains(code) else {
                // After the end: the line stays with the session it follows.
                if let i = s.sessions.indices.last { s.sessions[i].events.append(e) } else { s.late.append(e) }
                return
            }
            newSession(e, inferred: true, into: &s)
        }
        let i = s.sessions.count - 1
        // A full list grows by half, not double: thousands of open sessions each hold their
        // list's room to grow (at 5,000 open, a list of 9 events and the line being folded had
        // room for 16).
        let n = s.sessions[i].events.count
        if n >= 8, n == s.sessions[i].events.capacity { s.sessions[i].events.reserveCapacity(n + n / 2) }
        s.sessions[i].events.append(e)
        Self.foldLatest(&s.sessions[i].events, code)
        // A session opened by an SDK-neutral line (Apple's own, or a kill) takes the SDK of
        // the first line that names one.
        // (Compared one by one: an array literal here is a list made per line.)
        if e.side == .extension, s.sessions[i].sdk == "replaykit" || s.sessions[i].sdk == "unknown",
            e.sdk != "replaykit", e.sdk != "ios", e.sdk != "unknown"
        {
            s.sessions[i].sdk = e.sdk
        }
        switch code {
        case .socketConnectAttempt:
            s.sessions[i].attempts.append(ConnectAttempt(time: e.time, source: e.source))
        case .socketConnectFailed:
            let cause = e.attr("cause_text") ?? e.attr("strerror").map { "errno=\(e.attr("errno") ?? "?") (\($0))" }
                ?? e.message
            if let last = s.sessions[i].attempts.indices.last, !s.sessions[i].attempts.failed(last) {
                s.sessions[i].attempts.setFailure(last, cause: cause, source: e.source)
            } else {
                s.sessions[i].attempts.append(ConnectAttempt(time: e.time, source: e.source, failure: cause, failureSource: e.source))
            }
        case .socketConnected:
            if s.sessions[i].connectedAt == nil { s.sessions[i].connectedAt = e.time }
            s.sessions[i].connected = true
            if s.phase == .connecting { s.phase = .connected }
            // Connected again after a close or an error (HaishinKit's reconnect, a retry after
            // ECONNREFUSED): those are over, not what ended the session (HaishinKit#823 ended
            // "the other end closed the connection" with its reconnect 7.6 s later).
            s.peerClosed = nil
            s.sawError = nil
        case .frameSent:
            s.sessions[i].frames += e.count
            if s.sessions[i].firstFrameAt == nil { s.sessions[i].firstFrameAt = e.time }
            s.sessions[i].lastFrameAt = e.lastTime
            s.phase = .streaming
        case .socketClosedByPeer:
            // Before any connection and any frame, the other end's close fails the connect
            // attempt under way. HaishinKit dials an RTMP server whose connect it often does not
            // log: there a close is a failed attempt of its own (`on(status:) > ` with no
            // handshake: muxinc/examples#118 ended "truncated", the log "stopping mid-session"),
            // unless within a second of the last failure (its socket's close, then its status
            // line). (A Jitsi excerpt's `server socket closed` with no connect line in it is no
            // attempt: its connection may be before the excerpt.)
            if !s.sessions[i].connected, s.sessions[i].frames == 0 {
                let cause = e.attr("cause_text") ?? ("closed by the other end" + (e.attr("description").map { $0.trimmingSpaces() }.flatMap { $0.isEmpty ? nil : ": \($0)" } ?? ""))
                let attempts = s.sessions[i].attempts
                if let last = attempts.indices.last, !attempts.failed(last) {
                    s.sessions[i].attempts.setFailure(last, cause: cause, source: e.source)
                } else if s.sessions[i].sdk != "haishinkit" {
                    // (no attempt under way: nothing to fail)
                } else if let last = attempts.last, let a = last.time, let t = e.time, t >= a, t - a <= 1_000_000 {
                    // (the same failure)
                } else {
                    s.sessions[i].attempts.append(ConnectAttempt(time: e.time, source: e.source, failure: cause, failureSource: e.source))
                }
            }
            s.peerClosed = e
        case .socketError, .socketSendFailed:
            s.sawError = e
        case .socketClosed:
            let error = e.attr("error") ?? "nil"
            if error == "nil" || error == "(null)" {
                var why = "the socket closed without an error, so the extension stopped with code 10001 \"Screen sharing stopped\""
                if let peer = s.peerClosed { why = "the host app closed its end (\(peer.message)); " + why }
                end(&s, e, .stoppedByHost, why, deciding: [s.peerClosed, e].compactMap { $0 })
            } else if error == "<private>" {
                end(&s, e, .unknown, "the close reason is redacted (<private>): enable private data or log with %{public}", deciding: [e])
            } else {
                end(&s, e, .socketError, "the socket closed with an error: \(error)", deciding: [s.sawError, e].compactMap { $0 })
            }
        case .broadcastStopped10001:
            end(&s, e, .stoppedByHost, "the extension stopped with code 10001 \"Screen sharing stopped\"", deciding: [e])
        case .broadcastStoppedByApp:
            let reason = e.attr("reason") ?? (e.attr("graceful") == "1" ? "graceful" : "unexpected")
            if reason == "unexpected" {
                end(&s, e, .socketError, "sending a frame failed and the host app left no shutdown reason (connection to the main app lost)",
                    deciding: [s.sawError, e].compactMap { $0 })
            } else {
                end(&s, e, .stoppedByHost, "the host app shut the broadcast down: \"\(reason)\"", deciding: [e])
            }
        case .broadcastFailed:
            if !s.sessions[i].connected && !s.sessions[i].attempts.isEmpty {
                end(&s, e, .failedToConnect, "the broadcast failed before the extension ever connected", deciding: [e])
            } else {
                end(&s, e, .socketError, "the broadcast failed: \(e.message)", deciding: [s.sawError, e].compactMap { $0 })
            }
        case .socketConnectGaveUp:
            end(&s, e, .failedToConnect,
                "the extension gave up after \(s.sessions[i].attempts.count) connect attempt\(s.sessions[i].attempts.count == 1 ? "" : "s")",
                deciding: [s.sessions[i].attempts.last.map { _ in e }].compactMap { $0 })
        case .broadcastFinished:
            if !s.sessions[i].connected && s.sessions[i].attempts.anyFailed {
                end(&s, e, .failedToConnect, "the broadcast was stopped before the extension ever connected (\(s.sessions[i].attempts.count) failed attempts)", deciding: [e])
            } else {
                end(&s, e, .completed, "the broadcast was finished by the user or the system (broadcastFinished)", deciding: [e])
            }
        case .extensionKilledMemory:
            let limit = e.attr("limit_mb").map { " (\(e.attr("limit_kind") ?? "limit") \($0) MB)" } ?? ""
            let unnamed = e.attr("target") == nil ? " (the kill line names no process: this was the only extension session open)" : ""
            end(&s, e, .killed, "the extension was killed for exceeding its memory limit\(limit)\(unnamed)", deciding: [e])
        case .extensionKilled where e.attr("reason") == "per-process-limit":
            // (jetsam's kill for its own limit, the kernel's footprint when it gives one)
            let footprint = e.attr("footprint_kb").flatMap { Int($0) }.map { ", footprint \($0 / 1024) MB" } ?? ""
            end(&s, e, .killed, "the extension was killed for exceeding its memory limit (per-process-limit\(footprint))", deciding: [e])
        case .extensionKilled:
            // (a crash report of a signal other than SIGKILL: a crash, told so; the outcome is the kill's)
            end(&s, e, .killed, "the extension \(IPSReport.isCrash(e.message) ? "crashed" : "was killed") (\(e.message))", deciding: [e])
        case .processExited:
            if e.attr("code") == "9" {
                end(&s, e, .killed, "the extension was killed with signal 9 (\(e.message))", deciding: [e])
            } else if !s.sessions[i].connected && !s.sessions[i].attempts.isEmpty {
                end(&s, e, .failedToConnect, "the extension exited (\(e.message)) without ever connecting after \(s.sessions[i].attempts.count) attempts", deciding: [e])
            } else {
                end(&s, e, .completed, "the extension exited normally (\(e.message))", deciding: [e])
            }
        default:
            break
        }
    }

    /// Connect lines: an extension that cannot reach the host app logs an attempt and its
    /// failure every 100 ms for as long as the broadcast runs (hours: hundreds of thousands of
    /// lines, all of one open session). A connect line that repeats one of the connect run the
    /// session's events end with is folded into that line's event (its time and line number
    /// kept in the event's repeats, as frame lines are), so that the session holds a few events
    /// and not one per line. The timeline folds such a run into one row anyway.
    ///
    /// One line late: when a connect line is appended, the line before it is folded. So the
    /// list always ends with the latest line as an event of its own (`events.last` is the last
    /// line, as every reader of a session's end expects), a run's last line stays its last event
    /// (a timeline row cites it), and each folded event's lines stay in time order. Only plain
    /// connect lines are folded, into the latest earlier event of the same message within the
    /// run (at most `foldLookBack` events back, all of them connect lines of the same side), and
    /// only once the run is `foldFrom` lines long: a healthy start's few attempts stay lines of
    /// their own (a run of its own per attempt would cost more than it saves).
    ///
    /// Frame lines (`group` is `frameCodes`) are folded the same way: several extensions
    /// logging at once interleave their frame lines in the file, so the reader could not fold
    /// them. So are the short runs the reader did fold, of one frame line repeated, between
    /// other processes' recognized lines (a host app that logs between every few frames): each
    /// stayed an event to the end of its session, ~120 bytes a run, and one session streaming
    /// through 256 MB of such a log held 124 MB. Such a run, folded or folded into, becomes a
    /// run folded here (`Event.foldReadRunLate`): its lines keep the run's place in reading
    /// order, each at its own time, as they stood when it was one event.
    static func foldConnectLine(_ events: inout [Event], _ group: KindSet) {
        let x = events.count - 2
        // Most lines (a frame run folded while reading, a line of another kind before it) are
        // told apart here, before the list is opened for writing.
        // (Through a buffer pointer: a computed property of an element copies the event.)
        let frames = group.mask == frameCodes.mask
        guard x >= 1, events.withUnsafeBufferPointer({ ev in
            group.contains(ev[x].code) && (ev[x].repeats == nil || (frames && ev[x].repeats!.isPlainReadRun(timed: ev[x].time != nil)))
        }) else { return }
        // In place: an event handed to a function or taken out of the list is a copy (a retain
        // and a release per reference in it), once per line of the storm.
        // Lines of their own folded into the run's first as it begins (`take`): their places.
        var merged = 0..<0
        let folded = events.withUnsafeMutableBufferPointer { ev -> Bool in
            guard ev[x + 1].side == ev[x].side else { return false }
            // Into a run folded here, or a line of its own once the run is long; not into
            // frames folded while reading (their lines' places are the event's).
            // (or, for frames, into a run of one line the reader folded: made a run folded here)
            func mayTake(_ j: Int, readRun: Bool = true) -> Bool {
                ev[j].foldsLines || (ev[j].repeats == nil && runIsLong(ev, before: x, side: ev[x].side, group))
                    || (readRun && frames && ev[j].repeats?.isPlainReadRun(timed: ev[j].time != nil) == true)
            }
            let run = ev[x].repeats
            // The latest line takes the folded one's place; the list loses its last.
            func take(_ j: Int, text: Event.Text?) -> Bool {
                var j = j
                if frames, text == nil, ev[j].repeats == nil {
                    // A frame run that begins: the same line's events of their own just before
                    // it fold into the first of them, which holds the run (its lines in order).
                    // Each stayed an event to the end of its session (`foldFrom` of them, ~120
                    // bytes each, and the list's room for twice as many): with thousands of
                    // extension sessions open at once, 4 KB a session.
                    var s = j
                    while s > 0, ev[s - 1].repeats == nil, ev[s - 1].code == ev[j].code, Event.repeatsLine(ev, s - 1, j) { s -= 1 }
                    if s < j {
                        for k in (s + 1)...j { ev[s].foldIn(time: ev[k].time, line: ev[k].line, order: ev[k].order) }
                        merged = (s + 1)..<(j + 1)
                        j = s
                    }
                }
                ev[j].foldReadRunLate()
                if let run {
                    // (each line of a run the reader folded, at the run's place in reading order)
                    let order = ev[x].order
                    Event.forEachTimeAndLine(repeats: run, time: ev[x].time, line: ev[x].line) { t, line in
                        ev[j].foldIn(time: t, line: line, order: order, text: text)
                    }
                } else {
                    ev[j].foldIn(time: ev[x].time, line: ev[x].line, order: ev[x].order, text: text)
                }
                ev.swapAt(x, x + 1)
                return true
            }
            var j = x - 1
            // Frame and connect lines that carry a length, a counter or an id fold too (their
            // texts kept line by line, `LineTexts`; the connect attempts were taken from each
            // line as it came): into the latest run of their kind, when no earlier event within
            // reach has their very message.
            let varying = group.mask == frameCodes.mask || group.mask == connectCodes.mask
            var like = -1
            while j >= max(0, x - foldLookBack), group.contains(ev[j].code), ev[j].side == ev[x].side {
                if ev[j].sameMessage(ev[x]) {
                    guard mayTake(j) else { return false }
                    // The same line (nearly always: its text is the run's own, no text taken),
                    // or the run's message with other attribute values, in a run whose lines differ.
                    let same = Event.repeatsLine(ev, j, x)
                    guard same || (run == nil && ev[j].linesDiffer && Event.continuesVarying(ev, j, x)) else { return false }
                    return take(j, text: same ? nil : ev[x].textRef)
                }
                if varying, like < 0, ev[j].code == ev[x].code {
                    like = j
                    // A run whose lines differ already takes every line of its kind after
                    // it: its lines stay in time order (a line folded into an older event
                    // of the same message would go behind the run's later lines).
                    if ev[j].linesDiffer { break }
                }
                j -= 1
            }
            if like >= 0, run == nil, mayTake(like, readRun: false), Event.continuesVarying(ev, like, x) {
                return take(like, text: ev[x].textRef)
            }
            return false
        }
        if folded { events.removeLast() }
        if !merged.isEmpty {
            events.removeSubrange(merged)
            // (and the list's room: it grew for the lines that are now one event; only a short
            // list's, a session of a few events: a long one copied whole at each run that begins,
            // and grown again by its next line, made a session whose frames another line cuts
            // every few dozen quadratic, 3× the time at 200,000 lines)
            guard events.count <= Self.refitBelow, events.capacity >= 2 * events.count + 8 else { return }
            var fit: [Event] = []
            fit.reserveCapacity(events.count)
            fit.append(contentsOf: events)
            events = fit
        }
    }

    /// The line just appended to a session's events (its kind's `code`), folded into a run
    /// before it if it continues one: connect, frame and in-app capture frame lines by their
    /// group, any other by `foldRepeatedLine`.
    static func foldLatest(_ events: inout [Event], _ code: KindCode) {
        if let group = foldGroup(code) {
            if code == .frameSent, joinCutRun(&events) { return }
            foldConnectLine(&events, group)
        } else {
            foldRepeatedLine(&events)
        }
    }

    /// A frame run that the reader's parts cut (a big file's ranges, or the 131,072-line parts
    /// of one reader: each part folds its own lines) joined again, as one reader folds it: the
    /// run just added is the next event read after the run before it (no line recognized
    /// between, in any session) and the same line. Each part's run kept its lines' times and
    /// numbers in memory (each column under the megabyte past which it goes to disk): one
    /// session streaming frames for 512 MB held 86 MB, for 2 GB 279 MB, in parallel ranges.
    /// True when it was joined (the list is one shorter).
    static func joinCutRun(_ events: inout [Event]) -> Bool {
        let x = events.count - 1
        guard x >= 1 else { return false }
        let joined = events.withUnsafeMutableBufferPointer { ev -> Bool in
            // Where each was read: counted by `Repeats.readSeq` where parts were taken, by
            // `order` where not.
            func read(_ k: Int, _ r: Repeats) -> Int { r.readSeq == 0 ? ev[k].order : r.readSeq }
            guard let head = ev[x - 1].repeats, let more = ev[x].repeats, ev[x - 1].code == .frameSent,
                (head.readSeq == 0) == (more.readSeq == 0),
                read(x, more) == (head.joinedThrough ?? read(x - 1, head)) + 1,
                ev[x].process == ev[x - 1].process,
                head.texts == nil, more.texts == nil, !head.foldedLate, !more.foldedLate,
                head.frames.isEmpty, more.frames.isEmpty, head.orders.isEmpty, more.orders.isEmpty,
                (head.times.isEmpty) == (more.times.isEmpty), Event.repeatsLine(ev, x - 1, x)
            else { return false }
            head.append(more)
            head.joinedThrough = more.joinedThrough ?? read(x, more)
            return true
        }
        if joined { events.removeLast() }
        return joined
    }

    /// Any other line repeated many times over (the host app's `error reading bytes from
    /// stream` or `CVPixelBufferCreate failed` for every frame of a broken stream, ReplayKit's
    /// per-sample notes): folded the same way, the same line into the same line, once
    /// `foldFrom` of them follow each other on their side (lines of other sides between them,
    /// which do not end a run in the timeline, are passed over). Only kinds no stage reads line
    /// by line (`Event.Text.foldsWhenRepeated`); the timeline folds such a run into one row.
    static func foldRepeatedLine(_ events: inout [Event]) {
        let x = events.count - 2
        guard x >= foldFrom, events.withUnsafeBufferPointer({ ev in ev[x].repeats == nil && ev[x].foldsWhenRepeated }) else { return }
        let folded = events.withUnsafeMutableBufferPointer { ev -> Bool in
            let side = ev[x].side
            guard ev[x + 1].side == side else { return false }
            // The latest earlier line of its side, and how many of the same line run before it.
            var j = x - 1
            while j >= max(0, x - foldLookBack), ev[j].side != side { j -= 1 }
            guard j >= 0, ev[j].side == side else { return false }
            if Event.repeatsLine(ev, j, x) {
                guard ev[j].foldsLines || streak(ev, before: x, side: side, { k in Event.repeatsLine(ev, k, x) }) else { return false }
                ev[j].foldIn(time: ev[x].time, line: ev[x].line, order: ev[x].order)
                ev.swapAt(x, x + 1)
                return true
            }
            // A line that carries a counter or an id: the timeline folds its run (lines of one
            // kind and shape) as a storm once it has more than `Timeline.stormTexts` texts, so
            // such a run folds here once it surely has (its texts kept line by line).
            guard Event.continuesVarying(ev, j, x), MessageShape.same(ev[j].message, ev[x].message) else { return false }
            if !ev[j].linesDiffer {
                guard ev[j].repeats == nil else { return false }
                var texts: [String] = []
                let storms = streak(ev, before: x, side: side) { k in
                    guard ev[k].kind == ev[x].kind, MessageShape.same(ev[k].message, ev[x].message) else { return false }
                    if texts.count <= Timeline.stormTexts, !texts.contains(ev[k].message) { texts.append(ev[k].message) }
                    return true
                }
                guard storms, texts.count > Timeline.stormTexts else { return false }
            }
            ev[j].foldIn(time: ev[x].time, line: ev[x].line, order: ev[x].order, text: ev[x].textRef)
            ev.swapAt(x, x + 1)
            return true
        }
        if folded { events.removeLast() }
    }

    /// Whether the `foldFrom` lines of `side` before `x` are lines of their own that `like` takes
    /// (lines of other sides between them passed over).
    private static func streak(_ ev: UnsafeMutableBufferPointer<Event>, before x: Int, side: Side, _ like: (Int) -> Bool) -> Bool {
        var same = 0, k = x - 1
        while k >= 0, same < foldFrom {
            if ev[k].side == side {
                guard ev[k].repeats == nil, like(k) else { return false }
                same += 1
            }
            k -= 1
        }
        return same >= foldFrom
    }

    /// A line of the session's side that joined it later (another extension process's line, or
    /// a late one, placed by time) can fall inside a folded connect run, which the lines one by
    /// one would have shown as two runs: the folded events are cut there, the lines after it
    /// going into events of their own placed after it (cut again if another such line falls
    /// among them). `events` is in (time, order) order, as `SessionStream` sorts it.
    static func cutFoldedRuns(_ events: inout [Event]) {
        var i = 0
        while i < events.count {
            guard events[i].foldsLines else {
                i += 1
                continue
            }
            let side = events[i].side
            let last = events[i].lastLinePlace
            var j = i + 1
            var cutAt: Int?
            while j < events.count {
                let place = (events[j].time ?? Int64.min, events[j].order)
                if !(place < last) { break }
                if events[j].side == side && !(foldGroup(events[i].code)?.contains(events[j].code) ?? false) {
                    cutAt = j
                    break
                }
                j += 1
            }
            if let c = cutAt {
                let (before, after) = events[i].cut(at: (events[c].time ?? Int64.min, events[c].order))
                events[i] = before
                if let after {
                    let key = (after.time ?? Int64.min, after.order)
                    var p = c + 1
                    while p < events.count, (events[p].time ?? Int64.min, events[p].order) < key { p += 1 }
                    events.insert(after, at: p)
                }
            }
            i += 1
        }
    }

    /// Whether the `foldFrom` events before `x` are all lines of `group` (connect or frame
    /// lines) of `side`.
    private static func runIsLong(_ ev: UnsafeMutableBufferPointer<Event>, before x: Int, side: Side, _ group: KindSet) -> Bool {
        guard x >= foldFrom else { return false }
        for k in (x - foldFrom)..<x where !group.contains(ev[k].code) || ev[k].side != side { return false }
        return true
    }

    static let connectCodes = KindSet([.socketConnectAttempt, .socketConnectFailed, .socketConnectRetry])
    /// Frame lines: folded while reading when they follow each other in the file; those of
    /// several extensions logging at once (or between host-app lines) are not, and are folded
    /// here, in their session, as connect lines are.
    static let frameCodes = KindSet([.frameSent, .frameChunkWritable, .frameChunkWritten])

    /// The lines a line of kind `code` folds with as the session is built (the timeline's
    /// groups: connect lines, frame lines), or nil.
    @inline(__always) static func foldGroup(_ code: KindCode) -> KindSet? {
        if connectCodes.contains(code) { return connectCodes }
        if frameCodes.contains(code) { return frameCodes }
        if code == .captureFrame { return captureFrameCodes }
        return nil
    }
    /// An in-app capture's frame lines (ReplayKit's `RPDaemonProxy: captureHandlerWithSample:`,
    /// one per frame): folded as frame lines are, the same line into the same line only (the
    /// timeline tells them apart by message, as any line but connect and frame lines). Each one
    /// was an event of its own to the end of its session, ~170 bytes a frame.
    static let captureFrameCodes = KindSet([.captureFrame])
    /// Lines of a connect run before its lines are folded (Jitsi's timer: 1.6 s of retrying).
    static let foldFrom = 16
    /// A list of at most this many events is made no larger than it needs when a frame run
    /// that begins takes the lines before it (`foldConnectLine`): a bounded copy per run.
    static let refitBelow = 128
    /// A connect run has a few distinct lines (an attempt, its failure, a retry note).
    static let foldLookBack = 8

    /// The latest time of a session's lines: where it ends when no line ends it. Every line
    /// counts, not the last event's: lines out of time order (a zone-less log's clock set back,
    /// exports that interleave) can leave a later line in an earlier event or inside a run, and
    /// the streamed read, which folds a run in parts, holds the same lines in other events than
    /// the whole read (one scan per session, a run on disk a block at a time).
    static func latestTime(_ events: [Event]) -> Int64? {
        var latest: Int64?
        for e in events { if let t = e.latestTime { latest = max(latest ?? t, t) } }
        return latest
    }

    func finish(_ s: inout Stream) {
        guard let i = s.sessions.indices.last, s.phase != .ended else { return }
        let last = s.sessions[i].events.last?.lastLine
        // Its latest line, not its last: a run whose clock went back ended the session before
        // it began, so its span held none of its host-app lines (and the whole read, which closes
        // it as soon as its stream's lines are past, placed them elsewhere; the streamed read,
        // placing them while it was open, did not).
        s.sessions[i].end = Self.latestTime(s.sessions[i].events)
        let session = s.sessions[i]
        if let err = s.sawError {
            // Before any connection and any frame (a refused RTMP connect, HaishinKit's
            // `Connection failed:` before the handshake), it never connected. (A Jitsi
            // extension that sent frames without a connect line did connect.)
            let never = !session.connected && !session.attempts.isEmpty && session.frames == 0
            s.sessions[i].outcome = never ? .failedToConnect : .socketError
            s.sessions[i].reason = (never ? "never connected: " : "") + "the log ends after a socket error: \(err.message)"
            s.sessions[i].deciding = [err]
        } else if !session.connected && session.attempts.anyFailed {
            let n = session.attempts.count
            var span = ""
            if n > 1, let a = session.attempts.first?.time, let b = session.attempts.last?.time { span = " over \(Fmt.duration(b - a))" }
            s.sessions[i].outcome = .failedToConnect
            s.sessions[i].reason = "never connected: the log ends after \(n) failed connect attempt\(n == 1 ? "" : "s")\(span)"
            s.sessions[i].deciding = [session.attempts.last?.failureSource, session.attempts.last?.source].compactMap { src in
                // The line itself, also when it was folded into a run (`foldConnectLine`).
                src.flatMap { src in session.events.lazy.reversed().compactMap { $0.line(at: src) }.first }
            }.prefix(1).map { $0 }
        } else if let peer = s.peerClosed {
            // (an RTMP server's `NetConnection.Connect.Closed`, the host app closing its end)
            s.sessions[i].outcome = .truncated
            s.sessions[i].reason = "the other end closed the connection (\(peer.message)) and the log ends there, with no end line"
            s.sessions[i].deciding = [peer]
        } else {
            s.sessions[i].outcome = .truncated
            s.sessions[i].reason = "the log ends mid-session with no end line"
            s.sessions[i].deciding = last.map { [$0] } ?? []
        }
    }

    /// A session the extension's own lines leave open can still be closed by what the host
    /// app saw: the extension closing its end means the broadcast finished.
    func decideFromHost(_ s: inout Session) {
        guard s.outcome == .truncated, s.connected else { return }
        let lastExt = s.events.last(where: { $0.side == .extension })?.lastTime ?? Int64.min
        if let d = s.events.last(where: {
            $0.side == .app && ($0.kind == "server.client_disconnected" || $0.kind == "app.extension_disconnected")
                && ($0.time ?? Int64.min) >= lastExt
        }) {
            s.outcome = .completed
            s.reason = "the host app saw the extension close the connection (\(d.message)): the broadcast was finished"
            s.deciding = [d]
            s.end = d.time ?? s.end
        }
    }
}

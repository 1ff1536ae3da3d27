/// The lines `castscope tail` prints: one per event or session change, as text or as one JSON
/// object per line. Pure formatting; the command does the printing.
public struct LiveReport: Sendable {
    public var json: Bool
    public var color: Bool
    /// The zone of journal (relay) times: --utc/--timezone, else the phone's offset once a
    /// line gave it, else this machine's (as journalctl shows them).
    public var zone: DisplayZone = .local

    func relayOffset(_ t: Int64) -> Int { zone.offset(at: t) }

    /// Relay clock minus device clock once sessions were joined: relay times are shown on the
    /// device's clock, as `analyze` shows them.
    public var relayShift: Int64 = 0

    public init(json: Bool, color: Bool) {
        self.json = json
        self.color = color
    }

    func paint(_ s: String, _ code: String) -> String { color ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }

    func clock(_ t: Int64?, _ offset: Int) -> String {
        guard let t else { return "--:--:--.---" }
        let s = Fmt.rfc3339(t, offset: offset)
        let time = s.split(separator: "T")[1]
        return String(time.prefix(12))
    }

    public func event(_ e: Event, cursor: String?) -> String {
        if json {
            var w = JSONLine()
            w.add("type", "event")
            w.add("time", e.time.map { Fmt.rfc3339($0, offset: e.displayOffset) })
            w.add("side", e.side.rawValue)
            w.add("event", e.kind)
            w.add("message", e.message)
            w.add("source", e.source.description)
            w.add("cursor", cursor)
            return w.text
        } else {
            return "\(clock(e.time, e.displayOffset))  \(paint(e.kind, "2"))  \(e.message)  \(paint(e.source.description, "2"))"
        }
    }

    func sessionLine(_ change: String, _ s: Session, time: Int64?, _ detail: String) -> String {
        if json {
            var w = JSONLine()
            w.add("type", "session")
            w.add("change", change == "no end" ? "no-end" : change)
            w.add("id", s.id)
            w.add("sdk", s.sdk)
            w.add("process", s.process)
            w.add("pid", int: s.pid)
            w.add("time", time.map { Fmt.rfc3339($0, offset: s.displayOffset) })
            if change == "ended" {
                w.add("outcome", s.outcome.rawValue)
                w.add("reason", s.reason)
            }
            if change == "connected" { w.add("attempts", int: s.attempts.count) }
            w.add("detail", detail)
            return w.text
        }
        let who = [s.sdk, s.process.map { p in s.pid.map { "\(p)[\($0)]" } ?? p }].compactMap { $0 }.joined(separator: " ")
        let tag = change.padded(10)
        let colour = change == "ended" ? (s.outcome == .completed ? "32" : s.outcome == .stoppedByHost ? "33" : "31") : "1"
        return "\(clock(time, s.displayOffset))  \(paint("\(s.id) \(tag)", colour)) \(who)  \(detail)"
    }

    public func change(_ change: LiveSessions.Change) -> String {
        switch change {
        case .started(let s):
            return sessionLine("started", s, time: s.start, s.startInferred ? "(no broadcastStarted line)" : "")
        case .connected(let s):
            var d = "after \(s.attempts.count) attempt\(s.attempts.count == 1 ? "" : "s")"
            if let c = s.connectedAt, let st = s.start { d += ", \(Fmt.duration(c - st))" }
            return sessionLine("connected", s, time: s.connectedAt, d)
        case .stalled(let s, let why):
            return sessionLine("stalled", s, time: s.lastFrameAt, why)
        case .ended(let s):
            return sessionLine("ended", s, time: s.end, "\(s.outcome.rawValue): \(s.reason)")
        case .relayAccepted(let r):
            return relayLine("accepted", r, time: r.accepted, "peer=\(r.peer ?? "?") room=\(r.room ?? "?")")
        case .relayStalled(let r, let e):
            return relayLine("stalled", r, time: e.time, e.message)
        case .relayClosed(let r):
            return relayLine("closed", r, time: r.closed, "reason=\(r.reason ?? "?")" + (r.frames.map { ", \($0) frames" } ?? "")
                + (r.backwardsNote.map { "; " + $0 } ?? ""))
        case .relayNoEnd(let r, let last):
            let silence = "\(LiveSessions.relaySilence / 60_000_000) min"
            return relayLine("no end", r, time: last, "no line for \(silence) and no closed line: ended, its end not seen"
                + (r.frames.map { " (\($0) frames)" } ?? ""))
        case .joined(let s, let r):
            if json {
                var w = JSONLine()
                w.add("type", "join")
                w.add("session", s.id)
                w.add("relay", r.id)
                w.add("time", r.accepted.map { Fmt.rfc3339($0 - relayShift, offset: relayOffset($0)) })
                w.add("clockOffsetSeconds", number: Double(relayShift) / 1e6, places: 3)
                return w.text
            }
            let shift = (relayShift >= 0 ? "+" : "-") + Fmt.decimal(Double(abs(relayShift)) / 1e6, 3)
            return "\(clock(r.accepted.map { $0 - relayShift }, r.accepted.map(relayOffset) ?? 0))  \(paint("\(s.id) joined", "1"))     relay \(r.id.prefix(8)) (relay clock \(shift) s; relay times shown on the device's clock)"
        case .finding(let s, let f):
            if json {
                var w = JSONLine()
                w.add("type", "finding")
                w.add("session", s.id)
                w.add("kind", f.kind)
                w.add("severity", f.severity.rawValue)
                w.add("time", f.time.map { Fmt.rfc3339($0, offset: f.displayOffset) })
                w.add("message", f.message)
                w.addArray("evidence", f.evidence.map(\.description))
                return w.text
            }
            let colour = f.severity == .error ? "31" : f.severity == .warning ? "33" : "36"
            return "\(clock(f.time, f.displayOffset))  \(paint("\(s.id) \(f.severity.rawValue)", colour))\(String(repeating: " ", count: max(1, 11 - f.severity.rawValue.count - s.id.count + 2))) [\(f.kind)] \(f.message)"
        }
    }

    func relayLine(_ change: String, _ r: RelaySession, time: Int64?, _ detail: String) -> String {
        if json {
            var w = JSONLine()
            w.add("type", "relay")
            // (one word, as a session's: `no-end`)
            w.add("change", change == "no end" ? "no-end" : change)
            w.add("id", r.id)
            w.add("peer", r.peer)
            w.add("room", r.room)
            w.add("time", time.map { Fmt.rfc3339($0 - relayShift, offset: relayOffset($0)) })
            w.add("reason", r.reason)
            w.add("frames", int: r.frames)
            return w.text
        }
        let colour = change == "closed" ? (r.reason == "peer-eof" ? "32" : "31") : change == "stalled" || change == "no end" ? "33" : "1"
        return "\(clock(time.map { $0 - relayShift }, time.map(relayOffset) ?? 0))  \(paint("relay \(r.id.prefix(8)) \(change.padded(9))", colour)) \(detail)"
    }

    public func gap(from: Int64?, to: Int64?, _ text: String) -> String {
        guard json else { return paint("gap: ", "33;1") + text }
        var w = JSONLine()
        w.add("type", "gap")
        w.add("from", from.map { Fmt.rfc3339($0, offset: relayOffset($0)) })
        w.add("to", to.map { Fmt.rfc3339($0, offset: relayOffset($0)) })
        w.add("message", text)
        return w.text
    }

    /// `sessions`: each session's id and outcome (nil while open; `LiveSessions.outcomes`).
    /// `retired` sessions ended long before and were let go of (`LiveSessions.retire`): counted
    /// by outcome, not listed.
    /// `relayNoEnd` of the `relaySessions` ended with no end seen (`LiveSessions.relayNoEnd`).
    public func summary(_ sessions: [(id: String, outcome: Outcome?)], relaySessions: Int, relayNoEnd: Int = 0,
                        retired: Int = 0, retiredOutcomes: [Outcome: Int] = [:]) -> String {
        let counts = retiredOutcomes.sorted { ($1.value, $0.key.rawValue) < ($0.value, $1.key.rawValue) }
        if json {
            var parts: [String] = []
            for s in sessions {
                var w = JSONLine()
                w.add("id", s.id)
                w.add("state", s.outcome == nil ? "open" : "ended")
                w.add("outcome", s.outcome?.rawValue)
                parts.append(w.text)
            }
            var out = "{\"type\":\"summary\",\"sessions\":[\(parts.joined(separator: ","))],\"relaySessions\":\(relaySessions)"
            if relayNoEnd > 0 { out += ",\"relayNoEnd\":\(relayNoEnd)" }
            if retired > 0 {
                out += ",\"earlier\":{\"sessions\":\(retired),\"outcomes\":{"
                    + counts.map { JSONWriter.quote($0.key.rawValue) + ":\($0.value)" }.joined(separator: ",") + "}}"
            }
            return out + "}"
        }
        let total = sessions.count + retired
        var line = "castscope tail: \(total) session\(total == 1 ? "" : "s") seen"
        if retired > 0 {
            line += " (\(retired) ended over half an hour before the last: "
                + counts.map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", ") + ")"
        }
        if !sessions.isEmpty {
            line += (retired > 0 ? "; then " : ": ") + sessions.map { "\($0.id) \($0.outcome?.rawValue ?? "open")" }.joined(separator: ", ")
        }
        line += "; \(relaySessions) relay session\(relaySessions == 1 ? "" : "s")"
        if relayNoEnd > 0 {
            line += " (\(relayNoEnd) ended with no end seen: no line for \(LiveSessions.relaySilence / 60_000_000) min and no closed line)"
        }
        return line
    }
}

/// A JSON object on one line, keys in insertion order.
public struct JSONLine {
    private var parts: [String] = []
    public init() {}
    public mutating func add(_ key: String, _ value: String?) {
        parts.append(JSONWriter.quote(key) + ":" + (value.map(JSONWriter.quote) ?? "null"))
    }
    /// A number (`null` when absent), typed as `analyze --json` types it.
    /// An array of strings.
    public mutating func addArray(_ key: String, _ values: [String]) {
        parts.append(JSONWriter.quote(key) + ":[" + values.map(JSONWriter.quote).joined(separator: ",") + "]")
    }
    public mutating func add(_ key: String, int value: Int?) {
        parts.append(JSONWriter.quote(key) + ":" + (value.map(String.init) ?? "null"))
    }
    /// A decimal number with `places` digits after the point (`null` when absent).
    public mutating func add(_ key: String, number value: Double?, places: Int) {
        parts.append(JSONWriter.quote(key) + ":" + (value.map { Fmt.decimal($0, places) } ?? "null"))
    }
    public var text: String { "{" + parts.joined(separator: ",") + "}" }
}

extension String {
    fileprivate func padded(_ n: Int) -> String { count >= n ? self : self + String(repeating: " ", count: n - count) }
}

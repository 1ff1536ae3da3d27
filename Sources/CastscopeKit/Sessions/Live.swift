/// Sessions as they happen, for `castscope tail`: the same state machine as `analyze`, fed one
/// event at a time, reporting each change (started, connected, stalled, ended) as it occurs.
public final class LiveSessions {
    public enum Change: Sendable {
        case started(Session)
        case connected(Session)
        case stalled(Session, String)
        case ended(Session)
        case relayAccepted(RelaySession)
        case relayStalled(RelaySession, Event)
        case relayClosed(RelaySession)
    }

    let builder = SessionBuilder()
    var streams: [String: SessionBuilder.Stream] = [:]
    /// Session ids by stream key and index within the stream.
    var ids: [String: [String]] = [:]
    var nextID = 1
    public private(set) var relay: [String: RelaySession] = [:]
    public private(set) var relayOrder: [String] = []
    /// Frames stop for longer than this while streaming: a stall (device side).
    public var stallAfterMicros: Int64 = 2_000_000
    var stalledSessions = Set<String>()

    public init() {}

    func key(_ e: Event) -> String { SessionBuilder.streamKey(e) }

    /// Every session seen so far, with its current state.
    public var sessions: [Session] {
        var out: [Session] = []
        for (k, s) in streams {
            for (i, var session) in s.sessions.enumerated() {
                session.id = ids[k]?[i] ?? "?"
                out.append(session)
            }
        }
        return out.sorted { (Int($0.id.dropFirst()) ?? 0) < (Int($1.id.dropFirst()) ?? 0) }
    }

    /// Sessions not ended yet (an ended session always has its reason).
    public var open: [Session] { sessions.filter { $0.reason.isEmpty } }

    public func feed(_ e: Event) -> [Change] {
        if e.side == .relay { return feedRelay(e) }
        var k: String?
        if e.side == .extension {
            k = key(e)
        } else if e.side == .system, let pid = e.attr("target_pid").flatMap({ Int($0) }) {
            k = streams.keys.first(where: { $0.hasSuffix("[\(pid)]") })
        } else if e.side == .system, streams[key(e)] != nil {
            k = key(e)
        }
        guard let k else { return hostEvent(e) }
        var stream = streams[k] ?? SessionBuilder.Stream()
        let before = stream.sessions.count
        let beforePhase = stream.phase
        let beforeConnected = stream.sessions.last?.connectedAt
        builder.feed(e, into: &stream)
        var changes: [Change] = []
        if stream.sessions.count > before {
            // A new session (a second broadcastStarted may have ended the previous one).
            if before > 0 && beforePhase != .ended {
                streams[k] = stream
                changes.append(.ended(named(k, before - 1)))
            }
            ids[k, default: []].append("S\(nextID)")
            nextID += 1
            streams[k] = stream
            changes.append(.started(named(k, stream.sessions.count - 1)))
        }
        streams[k] = stream
        let last = stream.sessions.count - 1
        if last >= 0 {
            if beforeConnected == nil, stream.sessions[last].connectedAt != nil { changes.append(.connected(named(k, last))) }
            if stream.phase == .ended && (beforePhase != .ended || stream.sessions.count > before) {
                changes.append(.ended(named(k, last)))
            }
        }
        return changes
    }

    func named(_ k: String, _ i: Int) -> Session {
        var s = streams[k]!.sessions[i]
        s.id = ids[k]?[i] ?? "?"
        return s
    }

    /// Host-app lines: the extension closing its end finishes a connected open session.
    func hostEvent(_ e: Event) -> [Change] {
        guard e.side == .app, e.kind == "server.client_disconnected" || e.kind == "app.extension_disconnected" else { return [] }
        for (k, s) in streams where s.phase != .ended && s.phase != .idle {
            guard let i = s.sessions.indices.last, s.sessions[i].connectedAt != nil else { continue }
            var stream = s
            stream.sessions[i].events.append(e)
            stream.sessions[i].end = e.time
            stream.sessions[i].outcome = .completed
            stream.sessions[i].reason = "the host app saw the extension close the connection (\(e.message)): the broadcast was finished"
            stream.sessions[i].deciding = [e]
            stream.phase = .ended
            streams[k] = stream
            return [.ended(named(k, i))]
        }
        return []
    }

    func feedRelay(_ e: Event) -> [Change] {
        guard let id = e.attr("session") else { return [] }
        if relay[id] == nil { relayOrder.append(id) }
        var group = RelayJoiner().group((relay[id]?.events ?? []) + [e])
        guard var r = group.popLast() else { return [] }
        r.deviceSession = relay[id]?.deviceSession
        relay[id] = r
        switch e.kind {
        case "relay.accepted": return [.relayAccepted(r)]
        case "relay.stalled": return [.relayStalled(r, e)]
        case "relay.closed": return [.relayClosed(r)]
        default: return []
        }
    }

    /// Called now and then with the current time: device sessions whose frames stopped.
    public func tick(now: Int64) -> [Change] {
        var changes: [Change] = []
        for (k, s) in streams where s.phase == .streaming {
            guard let i = s.sessions.indices.last, let last = s.sessions[i].lastFrameAt else { continue }
            let id = ids[k]?[i] ?? "?"
            if now - last > stallAfterMicros {
                if stalledSessions.insert(id).inserted {
                    changes.append(.stalled(named(k, i), "no frames for \(Fmt.duration(now - last))"))
                }
            } else {
                stalledSessions.remove(id)
            }
        }
        return changes
    }
}

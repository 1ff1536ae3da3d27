/// Open sessions whose process has been silent for `idleHorizon` of log time, written to the
/// spill file while many are open, and read back when their process writes again or their
/// turn to close comes.
///
/// A session stays open until its end line, a newer session of its process name or pid, or
/// the end of the logs: a quiet extension that logs nothing between its start and its end
/// for half an hour is still one session, whose end line comes last. Closing it at a time
/// horizon would make that end line a stray. Held in memory instead, a log where every line
/// names a new extension process (every session open to the end) held all of them: a million
/// lines took 2 GB. Asleep, an open session costs its `Live` entry and its stream's slot.
///
/// Only once more than `sleepAfter` open sessions are awake (a bundle with a few hundred
/// open at once never writes one); checked when that count has doubled since the last check,
/// so the walk over the awake sessions is paid once per as many new (or woken) sessions.
extension SessionStream {
    struct Asleep {
        var chunk: EventSpill.Chunk
        /// What `endOf` and `SessionBuilder.finish` read of the session, kept aside: its end
        /// while open, its start, its last event's last time and its last line's time.
        var end: Int64?
        var start: Int64?
        var lastTime: Int64?
        var lastLineTime: Int64?
        /// The logs ended while it slept: `SessionBuilder.finish` runs when it wakes (in its
        /// turn to be handed on, not all at once at the end).
        var finishOnWake = false
    }

    /// Puts to sleep the ended sessions waiting for their turn to be handed on (lines of their
    /// process may still join them for `afterEnd`, 30 s of log time) once more than
    /// `sleepAfter` wait, those whose process has been silent for a second. Extensions that
    /// come and go every second or so (a device farm, a relay's fleet of phones in one log) had
    /// thousands waiting at once, each with its events: 72–135 MB at 256 MB of them. Walked
    /// when half as many more have ended since the last walk (every time, with `sleepAfter`
    /// 0), so the walk is paid once per as many sessions as it may put to sleep.
    mutating func sleepEnded() {
        guard endedSinceWalk > max(sleepAfter / 2, 0), endedWaiting.count > sleepAfter, !spillFailed else { return }
        endedSinceWalk = 0
        for seq in endedWaiting {
            guard let i = liveIndex(seq), live[i].ended, !live[i].ready, live[i].asleepBox == nil,
                let own = live[i].lastOwn, now - own > Self.endedSilence
            else { continue }
            _ = sleep(i, ended: true)
        }
    }

    /// How long an ended session's process has been silent before it may sleep (its last few
    /// lines most often follow its end line at once: each would wake it).
    static let endedSilence: Int64 = 1_000_000

    /// Puts to sleep the open sessions silent for `idleHorizon`, when enough are awake. Walks
    /// `awakeOpen` only (with a million sessions open and asleep, a walk over every live one
    /// each time was a fifth of the run), dropping those that ended, were taken out or slept;
    /// without a walk due, the list is still compacted once it is mostly such.
    mutating func sleepSilent() {
        let awake = live.count - asleepCount
        if awake > max(sleepAfter, sleepCheckAt), !spillFailed {
            walkAwake(sleeping: true)
            sleepCheckAt = sleepAfter == 0 ? 0 : 2 * (live.count - asleepCount)
        } else if awakeOpen.count > 2 * awake + 1024 {
            walkAwake(sleeping: false)
        }
    }

    private mutating func walkAwake(sleeping: Bool) {
        var kept = 0
        for j in awakeOpen.indices {
            let seq = awakeOpen[j]
            guard let i = liveIndex(seq), !live[i].ended, !live[i].ready, live[i].asleepBox == nil else { continue }
            if sleeping, let own = live[i].lastOwn, now - own > idleHorizon, sleep(i) { continue }
            awakeOpen[kept] = seq
            kept += 1
        }
        awakeOpen.removeLast(awakeOpen.count - kept)
    }

    /// Writes live session `i`'s open session (or, `ended`, its stream's ended last one) to the
    /// spill, out of its stream; false when it cannot sleep (not its stream's last session, a
    /// relay view, no spill).
    private mutating func sleep(_ i: Int, ended: Bool = false) -> Bool {
        let k = live[i].stream
        guard asleepSeq[k] == 0, streams[k].phase != .idle, (streams[k].phase == .ended) == ended,
            let n = streams[k].sessions.indices.last, streams[k].sessions[n].seq == live[i].seq,
            streams[k].sessions[n].relayBox == nil, let spill = spillFile()
        else { return false }
        let s = streams[k].sessions.removeLast()
        // Its buffer too, when it was the stream's only session.
        if streams[k].sessions.isEmpty { streams[k].sessions = [] }
        let last = s.events.last
        live[i].asleep = Asleep(chunk: spill.write(session: s), end: s.end, start: s.start, lastTime: last?.lastTime,
                                lastLineTime: last?.lastLine.time)
        asleepSeq[k] = s.seq
        asleepCount += 1
        return true
    }

    /// Stream `k`'s session back from the spill (its caller puts it last in the stream), and
    /// whether the logs ended while it slept.
    mutating func wake(_ k: Int) -> (Session, finish: Bool) {
        let i = liveIndex(asleepSeq[k])!
        let a = live[i].asleep!
        live[i].asleep = nil
        awakeOpen.append(asleepSeq[k])
        asleepSeq[k] = 0
        asleepCount -= 1
        return (spill!.readSession(a.chunk), a.finishOnWake)
    }

    /// Stream `k` in `streams` with session `seq` awake, if it slept (and finished, when the
    /// logs ended meanwhile).
    mutating func wakeInPlace(_ k: Int, seq: Int) {
        guard asleepSeq[k] == seq else { return }
        let (s, finish) = wake(k)
        streams[k].sessions.append(s)
        if finish {
            builder.finish(&streams[k])
            streams[k].phase = .ended
        }
    }

    /// The end of the logs for an asleep stream: finished when it wakes; its end noted now,
    /// as `SessionBuilder.finish` will set it (its last line's time). An ended session asleep
    /// is done already.
    mutating func finishAsleep(_ k: Int) {
        guard streams[k].phase != .ended else { return }
        let i = liveIndex(asleepSeq[k])!
        live[i].asleep!.finishOnWake = true
        noteEnd(seq: asleepSeq[k], end: live[i].asleep!.lastLineTime)
    }

    /// `endOf` for an asleep session: nil when `l` is awake. The same as `endOf` reads of an
    /// awake one: its end (as finished, once the logs ended), else the last time of the last
    /// line joined to it or of its own, else its start.
    func asleepEnd(_ l: Live) -> Int64?? {
        guard let a = l.asleep else { return nil }
        let end: Int64? = a.finishOnWake ? a.lastLineTime : a.end
        if let end { return .some(end) }
        let last: Int64? = l.joined.last.map { $0.lastTime } ?? a.lastTime
        return .some(last ?? a.start)
    }

    /// The spill file, made when first needed (nil when none can be).
    mutating func spillFile() -> EventSpill? {
        if spill == nil && !spillFailed {
            spill = EventSpill()
            if spill == nil { spillFailed = true }
        }
        return spill
    }
}

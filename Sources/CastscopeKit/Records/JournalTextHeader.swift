/// The header older journalctl prints before its output: `-- Logs begin at Wed 2017-11-08
/// 15:37:00 CET, end at Thu 2017-12-28 06:43:00 CET. --`, later `-- Journal begins at …, ends at
/// … --` (recent versions print none); and the lines around entries that are not entries.
enum JournalTextHeader {
    static let openers = [Array("-- Logs begin at ".utf8), Array("-- Journal begins at ".utf8)]

    /// What journalctl and systemctl print around the entries, not an entry: `--` lines at the
    /// start of a line (`-x`'s catalog text, `-- Boot …`, grep's group separator), and before the
    /// first entry `systemctl status`'s head (`● relay.service - …`, `Loaded:`, `Active:`, the
    /// CGroup tree). Such a line is skipped, not counted as unread.
    static func isAside(_ line: UnsafeRawBufferPointer, beforeRecords: Bool) -> Bool {
        if line.count >= 2, line[0] == UInt8(ascii: "-"), line[1] == UInt8(ascii: "-") { return true }
        // `-x`'s catalog text as journalctl 246 and later marks it (`░░ Subject: A start job…`).
        if line.starts(with: catalogMark) { return true }
        guard beforeRecords else { return false }
        var i = 0
        while i < line.count, line[i] == 0x20 { i += 1 }
        let rest = UnsafeRawBufferPointer(rebasing: line[i...])
        return statusHeads.contains { rest.starts(with: $0) }
    }

    /// systemctl's report that a job failed, `Job for X.service failed because …` (a start, a
    /// restart: `the control process exited with error code.`, `a fatal signal was delivered to
    /// the control process.`, `start of the service was attempted too often.`), which it prints
    /// above the `See "systemctl status X.service" …` line.
    static func isJobFailure(_ line: UnsafeRawBufferPointer) -> Bool {
        line.starts(with: jobFor) && findBytes(line, jobFailed, from: jobFor.count) != nil
    }
    static let jobFor = Array("Job for ".utf8)
    static let jobFailed = Array(".service failed because ".utf8)
    static let systemctl = Array("systemctl".utf8)

    static let statusHeads: [[UInt8]] = ["● ", "○ ", "× ", "↻ ", "Loaded: ", "Active: ", "Process: ", "Main PID: ", "Cntrl PID: ", "Tasks: ",
        "Memory: ", "CPU: ", "CGroup: ", "Docs: ", "TriggeredBy: ", "Triggers: ", "Status: ", "Drop-In: ", "Invocation: ",
        "Mem peak: ", "IP: ", "IO: ", "└─", "├─", "│", "See \"systemctl status ",
        // (`Docs:`'s further lines, one address each: `           man:turnadmin(1)`, coturn#118)
        "man:", "https://", "http://", "file:", "info:"].map { Array($0.utf8) }
    static let ends = [Array(", end at ".utf8), Array(", ends at ".utf8)]
    static let catalogMark = Array("░░".utf8)
    static let activeSince = Array("Active: ".utf8)
    static let since = Array(" since ".utf8)
    static let active = Array("active ".utf8)
    static let closer = Array(". --".utf8)

    /// The full time (`[Www ]YYYY-MM-DD HH:MM:SS ZONE`) that fills `line[from..<to]` exactly,
    /// with its year and date.
    static func fullTime(_ line: UnsafeRawBufferPointer, _ from: Int, _ to: Int) -> ParsedTime? {
        var t = ParsedTime()
        guard TimeScan.full(UnsafeRawBufferPointer(rebasing: line[..<to]), from, into: &t) == to, t.hasYear, t.hasDate else { return nil }
        return t
    }

    /// Where a header's time ends: before `. --` (or the line's end) and the spaces before it.
    static func closerStop(_ line: UnsafeRawBufferPointer, from: Int) -> Int {
        var stop = findBytes(line, closer, from: from) ?? line.count
        while stop > from, line[stop - 1] == 0x20 || line[stop - 1] == 0x0D { stop -= 1 }
        return stop
    }

    /// The time a header or status line around the entries gives them a year (and zone) from,
    /// marked as the bound it is (`ParsedTime.isFloor`, `isCeiling`):
    /// the end of `-- Logs begin at …, end at … --`; its beginning when there is no end (the
    /// header `journalctl -f` prints, `-- Logs begin at Thu 2019-08-01 15:22:28 UTC. --`); the
    /// time `systemctl status`'s `Active: active (running) since Tue 2024-03-12 09:00:01 UTC; 2h
    /// ago` gives (a floor; `failed … since`, when it stopped, a ceiling).
    static func time(_ line: UnsafeRawBufferPointer) -> ParsedTime? {
        if var t = endTime(line) {
            t.isCeiling = true
            return t
        }
        if let opener = openers.first(where: { line.starts(with: $0) }) {
            // (read up to the punctuation after its zone, as `endTime` reads)
            guard var t = fullTime(line, opener.count, closerStop(line, from: opener.count)) else { return nil }
            t.isFloor = true
            return t
        }
        guard let found = activeSince(line) else { return nil }
        var t = found.time
        // `active (running) since` is when it started: the lines shown are after it. `failed`,
        // `inactive (dead)`, `activating (auto-restart)` since is when it stopped: before it.
        let state = UnsafeRawBufferPointer(rebasing: line[(found.from + activeSince.count)..<found.since])
        if state.starts(with: active) { t.isFloor = true } else { t.isCeiling = true }
        return t
    }

    /// `systemctl status`'s `Active: <state> since <time>; 2h ago`: where `Active:` begins (past
    /// the indent), where ` since ` is, and its time.
    static func activeSince(_ line: UnsafeRawBufferPointer) -> (from: Int, since: Int, time: ParsedTime)? {
        var i = 0
        while i < line.count, line[i] == 0x20 { i += 1 }
        guard UnsafeRawBufferPointer(rebasing: line[i...]).starts(with: activeSince),
            let at = findBytes(line, since, from: i + activeSince.count)
        else { return nil }
        // (up to the `;` before `2h ago`)
        let stop = line[(at + since.count)...].firstIndex(of: UInt8(ascii: ";")) ?? line.count
        guard let t = fullTime(line, at + since.count, stop) else { return nil }
        return (i, at, t)
    }

    /// The unit `systemctl status` shows (`● janus.service - Janus WebRTC Server`, `× coturn.service`):
    /// `janus`, `coturn`.
    static func statusUnit(_ line: UnsafeRawBufferPointer) -> [UInt8]? {
        var i = 0
        while i < line.count, line[i] == 0x20 { i += 1 }
        let rest = UnsafeRawBufferPointer(rebasing: line[i...])
        guard let mark = unitMarks.first(where: { rest.starts(with: $0) }) else { return nil }
        let from = i + mark.count
        guard let at = findBytes(line, dotService, from: from), at > from,
            !line[from..<at].contains(where: { $0 == 0x20 || $0 == 0x09 })
        else { return nil }
        return Array(line[from..<at])
    }
    /// (`â `: `●` as a terminal that reads UTF-8 as Latin-1 copies it, its other two bytes
    /// control codes a paste drops: jitsi/jibri#279)
    static let unitMarks = ["● ", "○ ", "× ", "↻ ", "â "].map { Array($0.utf8) }
    static let dotService = Array(".service".utf8)

    /// `Active: failed (Result: exit-code) since Sat 2022-01-22 02:05:20 UTC; 22min ago` (also
    /// `activating (auto-restart) (Result: …)`): when the unit failed, and the line without its
    /// indent. Nil for any other state, or a result of `success`.
    static func failedSince(_ line: UnsafeRawBufferPointer) -> (time: ParsedTime, from: Int)? {
        guard let (i, at, t) = activeSince(line),
            let r = findBytes(UnsafeRawBufferPointer(rebasing: line[..<at]), result, from: i + activeSince.count),
            !UnsafeRawBufferPointer(rebasing: line[(r + result.count)...]).starts(with: success)
        else { return nil }
        return (t, i)
    }
    static let result = Array("(Result: ".utf8)
    static let success = Array("success)".utf8)

    /// The time the entries end at: with its year, and with its zone only when the first entry's
    /// is the same (a header from CET to CEST says nothing of the lines between).
    static func endTime(_ line: UnsafeRawBufferPointer) -> ParsedTime? {
        guard let opener = openers.first(where: { line.starts(with: $0) }) else { return nil }
        // Each time is read from the bytes up to the punctuation after its zone (`,`, `.`).
        for end in ends {
            guard let at = findBytes(line, end, from: opener.count), let begin = fullTime(line, opener.count, at) else { continue }
            let from = at + end.count
            guard var t = fullTime(line, from, closerStop(line, from: from)) else { return nil }
            if begin.offset != t.offset { t.offset = nil }
            return t
        }
        return nil
    }
}

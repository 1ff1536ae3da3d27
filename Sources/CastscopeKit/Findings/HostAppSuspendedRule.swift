/// host-app-suspended: runningboardd suspends the host app while the broadcast is connected; its
/// socket server stops, so the extension's connection closes (the usual cause of 10001).
struct HostAppSuspendedRule: FindingRule {
    let kind = "host-app-suspended"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        HostAppLost.findings(r, kind: kind, code: .appSuspended,
                             lone: { "the app\(HostAppLost.app($0)) was suspended by runningboardd: if it hosts the broadcast's socket server, sharing stops here" },
                             streaming: { e, _ in "the host app\(HostAppLost.app(e)) was suspended while the broadcast was streaming: its socket server stopped" })
    }
}

/// host-app-background-expiring: the host app's own warning that its background time runs out
/// (`Received process assertions expiration warning!`, `Notifying client of imminent expiration
/// of assertion`: livekit/client-sdk-swift#510) while the broadcast is connected. iOS suspends
/// it next, and with it a socket server it hosts; a warning, as the suspension is still to come
/// (`host-app-suspended` says when it came).
struct HostAppBackgroundExpiringRule: FindingRule {
    let kind = "host-app-background-expiring"

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        HostAppLost.findings(r, kind: kind, code: .appBackgroundExpiring,
                             lone: { "the app\(Self.process($0))'s background time ran out (its process assertions expire): iOS suspends it next; if it hosts the broadcast's socket server, sharing stops then" },
                             streaming: { e, _ in "the host app\(Self.process(e))'s background time ran out while the broadcast was streaming: iOS suspends it next, and its socket server with it" },
                             severity: { _, _ in .warning })
    }

    /// ` RemoteAccess`: the process that logged it, the app itself.
    static func process(_ e: Event) -> String { e.process.map { " \($0)" } ?? "" }
}

/// host-app-terminated: runningboardd ends an app on another daemon's request (`Received
/// termination request from [osservice<com.apple.dasd>:76] on … app<…> … explanation:BG Kill`,
/// Apple forum 759754) while the broadcast is connected. An error when the session ends within
/// `endsAfter` of it (its socket server went with the app); else a warning, as the app ended
/// may not be the host.
struct HostAppTerminatedRule: FindingRule {
    let kind = "host-app-terminated"
    static let endsAfter: Int64 = 10_000_000

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        HostAppLost.findings(r, kind: kind, code: .appTerminated,
                             lone: { "the app\(HostAppLost.app($0)) was terminated\(Self.why($0)): if it hosts the broadcast's socket server, sharing stops here" },
                             streaming: { e, ended in
                                 let why = Self.why(e)
                                 return ended
                                     ? "the host app\(HostAppLost.app(e)) was terminated\(why) while the broadcast was streaming: its socket server went with it"
                                     : "an app\(HostAppLost.app(e)) was terminated\(why) while the broadcast was streaming: if it hosts the socket server, sharing stops here"
                             }, severity: { s, e in
                                 guard let t = e.time, let end = s.end, end >= t, end - t <= Self.endsAfter else { return .warning }
                                 return .error
                             })
    }

    /// ` by runningboardd on dasd's request ("BG Kill Demo")`; a kill with a termination code
    /// (a watchdog's, RunningBoard's: a crash report's `Termination Reason:`, or its
    /// `<RBSTerminateContext| … code:0x8BADF00D …>` alone) ` by FrontBoard (0x8BADF00D: watchdog:
    /// it took too long …) ("scene-create watchdog transgression: …")`.
    static func why(_ e: Event) -> String {
        var why = " by \(e.attr("by") ?? (e.attr("domain") == "10" ? "FrontBoard" : "runningboardd"))"
        if let from = e.attr("requester") { why += " on \(requesterName(from))'s request" }
        if let code = terminationCode(e) {
            why += " (\(code)" + (IPSReport.terminationMeaning(code).map { ": \($0)" } ?? "") + ")"
        }
        if let explanation = explanation(e.message), !explanation.isEmpty { why += " (\"\(explanation)\")" }
        return why
    }

    /// The kill's code (`0x8BADF00D`), from the line's `code:` or its termination reason.
    static func terminationCode(_ e: Event) -> String? {
        for text in [e.attr("code"), e.attr("termination")].compactMap({ $0 }) {
            for word in text.split(whereSeparator: { $0 == " " || $0 == ":" || $0 == "," }) where word.hasPrefix("0x") && word.count == 10 {
                return String(word)
            }
        }
        return nil
    }

    /// RunningBoard's `explanation:BG Kill Demo reportType:None …>`: up to the next field or the
    /// context's end.
    static func explanation(_ message: String) -> String? {
        guard let at = message.firstRange(of: "explanation:") else { return nil }
        var text = message[at.upperBound...]
        for end in [" reportType:", " maxTerminationResistance:", " attrs:", " ProcessVisibility:", " ProcessState:", " WatchdogEvent:"] {
            if let r = text.firstRange(of: end) { text = text[..<r.lowerBound] }
        }
        while text.last == ">" || text.last == " " { text = text.dropLast() }
        return String(text)
    }

    /// `osservice<com.apple.dasd>:76` → `com.apple.dasd`.
    static func requesterName(_ s: String) -> String {
        guard let open = s.firstIndex(of: "<"), let close = s[open...].firstIndex(of: ">") else { return s }
        let name = s[s.index(after: open)..<close]
        return name.isEmpty ? s : String(name)
    }
}

/// What the host app's suspension and termination findings share: a line of the system's that
/// falls in a session after it connected (or, in an excerpt with no session, the first one).
enum HostAppLost {
    static func app(_ e: Event) -> String { e.attr("bundle").map { " \($0)" } ?? "" }

    static func findings(_ r: AnalysisReport, kind: String, code: KindCode, lone: (Event) -> String,
                         streaming: (Event, Bool) -> String,
                         severity: (borrowing Session, Event) -> Severity = { _, _ in .error }) -> [Finding]
    {
        // An excerpt that holds only the system's lines (no extension line, so no session):
        // the line is still what the reader must be told; a warning, as nothing shows the
        // broadcast was live then.
        let alone: [Finding] = r.sessionCount == 0 ? Array(r.unattached.matching(KindSet([code])).prefix(1)).map { e in
            Finding(kind: kind, severity: .warning, time: e.time, displayOffset: e.displayOffset, session: nil,
                    message: lone(e), evidence: [e.source])
        } : []
        return alone + r.sessions.borrowingCompactMap { s in
            guard let c = s.connectedAt, let span = s.span else { return nil }
            // By index and code first: `firstIndex(where:)` handed its closure a copy of every
            // line it looked at.
            var found: Int?
            for i in s.events.indices where s.events[i].code == code {
                if let t = s.events[i].time, t >= c, span.contains(t) {
                    found = i
                    break
                }
            }
            guard let at = found else { return nil }
            let e = s.events[at]
            let level = severity(s, e)
            return s.finding(kind, level, at: e.time, streaming(e, level == .error), [e.source])
        }
    }
}

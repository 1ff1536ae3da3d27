/// app-crashed: a process crashed — an uncaught exception (`*** Terminating app due to uncaught
/// exception`), or the debugger stopped it on an exception or a fatal signal (`stop reason =
/// EXC_BAD_ACCESS`, `signal SIGABRT`). Whatever was being shared stops with it; when the host
/// app crashes the extension loses its socket. One finding per crash, in its session or, with
/// none, for the bundle (a pasted crash is often all a ticket has). The debugger stopping on
/// SIGABRT just after an uncaught exception is that exception's abort: the same crash, one more
/// line of evidence.
struct AppCrashedRule: FindingRule {
    let kind = "app-crashed"
    /// Made once (an array and its filter per call was most of the rule on a session of its own).
    static let kinds = KindSet([.appCrashed])

    /// `line` is the debugger's SIGABRT stop that ends the uncaught exception `previous` (the same
    /// process when the stop names one; within a minute when both have times).
    /// So is libc++abi's telling of the same exception again after the call stack (plain
    /// stderr: no process, no time of its own; flutter_screen_recording#64).
    /// So is Crashlytics' `Crashed: <queue>` again: its stack-trace copy heads the issue's
    /// exception line with it, then the crashed thread's frames (AgoraRtcEngine_iOS#26), a few
    /// lines further on. Two crashes pasted one after the other on the same queue (most are
    /// on `com.apple.main-thread`) are two: the second comes after the first's frames.
    static let crashedAgainWithin = 4

    static func sameCrash(_ previous: Event, _ line: Event) -> Bool {
        if let queue = previous.attr("crashed_queue") {
            guard line.attr("crashed_queue") == queue, line.fileIndex == previous.fileIndex,
                line.line > previous.line, line.line - previous.line <= crashedAgainWithin
            else { return false }
            if let a = previous.pid, let b = line.pid, a != b { return false }
            if let a = previous.time, let b = line.time, !line.timeInferred, b - a > 60_000_000 || b < a { return false }
            return true
        }
        guard let exception = previous.attr("exception") else { return false }
        if let again = line.attr("exception") {
            guard again == exception, line.attr("reason") == previous.attr("reason") else { return false }
        } else {
            guard line.attr("reason") == "ABRT", line.message.contains("signal SIGABRT") else { return false }
        }
        if let a = previous.pid, let b = line.pid, a != b { return false }
        if let a = previous.time, let b = line.time, !line.timeInferred, b - a > 60_000_000 || b < a { return false }
        return true
    }

    /// A crash report pasted whole names its process (`Process: brandpoint [1178]`) and reads as
    /// that process's end (`extension.killed`: in its session, the extension's kill). Outside any
    /// session, one that died of a crash's signal (`EXC_CRASH (SIGABRT)`, `EXC_BAD_ACCESS
    /// (SIGSEGV)`) is this finding for the bundle (with sessions in it, when they hold lines of
    /// its process: the host app), as its exception part pasted alone is (OneSignal
    /// #870's report gave none; a `SIGKILL` is a kill, not a crash).
    static let crashSignals = ["SIGABRT", "SIGSEGV", "SIGBUS", "SIGILL", "SIGTRAP", "SIGFPE", "SIGSYS", "EXC_BAD_ACCESS", "EXC_BAD_INSTRUCTION",
                               "EXC_BREAKPOINT", "EXC_ARITHMETIC", "EXC_GUARD"]
    static let reportKinds = KindSet([.extensionKilled, .extensionKilledMemory])
    static let reportPrefix = "Crash report: "
    static let appReportPrefix = "Crash report (app): "

    static func crashedReport(_ e: Event) -> String? {
        guard e.code == .extensionKilled, e.message.hasPrefix(reportPrefix) || e.message.hasPrefix(appReportPrefix), let text = e.attr("text"),
            !text.contains("SIGKILL"), crashSignals.contains(where: { text.contains($0) })
        else { return nil }
        return text
    }

    /// The words of the debugger's stop on a memory kill that names no process: Xcode's
    /// `Message from debugger: Terminated due to memory issue`, its banner's or lldb's
    /// `EXC_RESOURCE … (limit=N MB …)`; with the limit, and whose it is at 50 MB.
    static func debuggerMemoryStop(_ e: Event) -> String? {
        guard e.code == .extensionKilledMemory, e.attr("target") == nil else { return nil }
        let xcode = EventFactory.victimIsLine(e.attrs)
        guard xcode || e.message.contains("EXC_RESOURCE") else { return nil }
        var stop = "terminated for its memory"
        if let mb = e.attr("limit_mb") {
            stop += " at its \(mb) MB limit" + (mb == "50" ? ", a Broadcast Upload Extension's" : "")
        }
        return stop + ", as the debugger says"
    }

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        var out = crashes(r)
        if !r.unattached.isEmpty {
            // With sessions in the bundle, only a report of a process they hold lines of (the
            // host app): an unrelated app's crash in a sysdiagnose is no finding of theirs.
            var known: Set<String>?
            for e in r.unattached.matching(Self.reportKinds) {
                // (or Xcode's word that the debugged app, not an extension, was killed for
                // its memory: RMGallery#10)
                let memory = e.code == .extensionKilledMemory && EventFactory.victimIsLine(e.attrs) && e.attr("target") != nil
                // (the debugger's memory stop pasted with nothing that names its process, in a
                // bundle of no session: Xcode's `Thread 1: EXC_RESOURCE RESOURCE_TYPE_MEMORY
                // (limit=50 MB, unused=0x0)` alone, ScreenRecorder#13 and react-native-share-menu#283
                // gave nothing while its EXC_BAD_ACCESS gives "the debugged process crashed")
                if r.sessionCount == 0, let stop = Self.debuggerMemoryStop(e) {
                    out.append(Finding(kind: kind, severity: .error, time: e.time, displayOffset: e.displayOffset, session: nil,
                                       message: "the debugged process was killed (\(stop)): whatever it was sharing or serving stopped with it",
                                       evidence: [e.source]))
                    continue
                }
                guard let text = memory ? "terminated for its memory, as Xcode's debugger says" : Self.crashedReport(e) else { continue }
                if r.sessionCount > 0 {
                    if known == nil {
                        // (sessions handed on as they ended left their processes' names)
                        var names = r.streamed?.processes ?? []
                        r.sessions.borrowingForEach { s in s.forEachProcess { names.insert($0) } }
                        known = names
                    }
                    guard let target = e.attr("target"), known!.contains(target) else { continue }
                }
                let who = e.attr("target").map { "\($0)\(e.attr("target_pid").map { "[\($0)]" } ?? "")" } ?? "the process the report names"
                out.append(Finding(kind: kind, severity: .error, time: e.time, displayOffset: e.displayOffset, session: nil,
                                   message: "\(who) \(memory ? "was killed" : "crashed") (\(text)): whatever it was sharing or serving stopped with it",
                                   evidence: [e.source]))
            }
        }
        return out
    }

    /// Whether a report's reason says a kill: SIGKILL in its exception (`EXC_CRASH (SIGKILL)`,
    /// `EXC_CRASH (SIGKILL (Code Signature Invalid))`), as `IPSReport.isCrash` reads it.
    static func killed(_ reason: String) -> Bool {
        reason.prefix { $0 != ";" }.contains("(SIGKILL")
    }

    private func crashes(_ r: AnalysisReport) -> [Finding] {
        perLine(r, kinds: Self.kinds, continues: Self.sameCrash) { e in
            guard e.code == .appCrashed else { return nil }
            let report = e.message.hasPrefix("Crash report of a process")
            let crashlytics = e.attr("crashed_queue")
            let who = e.process.map { "\($0)\(e.pid.map { "[\($0)]" } ?? "")" }
                ?? (report ? "a process the pasted crash report does not name"
                    : crashlytics != nil ? "the app Crashlytics reported" : "the debugged process")
            let what: String
            if let queue = crashlytics {
                // Firebase Crashlytics' text: `Crashed: <queue>` above the crashed thread's frames.
                what = "on \(queue)"
            } else if report, let reason = e.attr("reason") {
                what = reason
            } else if let exception = e.attr("exception") {
                let reason = e.attr("reason").map { ": \($0)" } ?? ""
                what = "uncaught exception \(exception)\(reason)"
            } else if let reason = e.attr("reason") {
                // The debugger's stop: `EXC_…` (its prefix is in the pattern) or a signal.
                what = e.message.contains("signal SIG") ? "stopped by the debugger on signal SIG\(reason)"
                    : "stopped by the debugger on EXC_\(reason)" + (e.attr("detail").map { " \($0)" } ?? "")
            } else {
                what = e.message
            }
            if report, e.process == nil, Self.killed(what) {
                // A kill (`EXC_CRASH (SIGKILL)`: RunningBoard's, the watchdog's, jetsam's), not
                // a crash of its own; a named process's kill is its own event (`app.terminated`,
                // `extension.killed`), of no finding unless a session's extension was killed.
                return (.warning, "\(who) was killed (\(what)), not a crash of its own: if it was the broadcast extension or its app, "
                    + "sharing stopped with it")
            }
            return (.error, "\(who) crashed (\(what)): whatever it was sharing or serving stopped with it")
        }
    }
}

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
    static func sameCrash(_ previous: Event, _ line: Event) -> Bool {
        guard previous.attr("exception") != nil, line.attr("exception") == nil, line.attr("reason") == "ABRT",
            line.message.contains("signal SIGABRT")
        else { return false }
        if let a = previous.pid, let b = line.pid, a != b { return false }
        if let a = previous.time, let b = line.time, !line.timeInferred, b - a > 60_000_000 || b < a { return false }
        return true
    }

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        perLine(r, kinds: Self.kinds, continues: Self.sameCrash) { e in
            guard e.code == .appCrashed else { return nil }
            let report = e.message.hasPrefix("Crash report of a process")
            let who = e.process.map { "\($0)\(e.pid.map { "[\($0)]" } ?? "")" }
                ?? (report ? "a process the pasted crash report does not name" : "the debugged process")
            let what: String
            if report, let reason = e.attr("reason") {
                what = reason
            } else if let exception = e.attr("exception") {
                let reason = e.attr("reason").map { ": \($0)" } ?? ""
                what = "uncaught exception \(exception)\(reason)"
            } else if let reason = e.attr("reason") {
                // The debugger's stop: `EXC_…` (its prefix is in the pattern) or a signal.
                what = e.message.contains("signal SIG") ? "stopped by the debugger on signal SIG\(reason)"
                    : "stopped by the debugger on EXC_\(reason)"
            } else {
                what = e.message
            }
            return (.error, "\(who) crashed (\(what)): whatever it was sharing or serving stopped with it")
        }
    }
}

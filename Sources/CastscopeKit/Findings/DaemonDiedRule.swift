/// daemon-died: a Linux daemon died — the relay, an SFU, a TURN server — as systemd and the
/// kernel say it (`linux-daemons` vocabulary: killed, crashed, OOM-killed, exited with an
/// error status, restarted until systemd gave up), or as a Go program says it (`panic: runtime error: …`). The relay logs no `closed` line for the sessions it was serving then:
/// those of that process that stopped at that moment with none (their last line at most `gone`
/// before it) are named, each once, and the death is an error. Any other unit's deaths (or an
/// idle relay's) are one warning per unit, with how many times it died: a flapping exporter
/// on a relay host dies hundreds of times a day. Bundle findings, not a phone session's (a
/// server's line can fall within one's span). The kernel's, systemd's and the exit line of one
/// death (the same unit within a few seconds) are one death.
struct DaemonDiedRule: FindingRule {
    let kind = "daemon-died"
    static let kinds = KindSet([.daemonDied])
    /// A session whose last line came this long before the daemon died was open then.
    static let gone: Int64 = 120_000_000
    /// Lines of one unit this close are one death.
    static let sameDeath: Int64 = 5_000_000

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        // (sessions handed on as they ended left their daemons' deaths and stops)
        // systemd's `Stopping …` lines: an exit with an error status after one is a stop
        // (`systemctl stop`, a restart; many daemons exit 1 on SIGTERM), not a death.
        var stopping: [Event] = []
        var lines: [Event] = []
        // systemd's `Scheduled restart job, restart counter is at N`: the highest N of each unit
        // (on its host) says how often it died, most of it before the paste begins.
        var restarts: [String: (count: Int, first: Event)] = [:]
        var restartOrder: [String] = []
        func take(_ e: Event) {
            switch e.code {
            case .daemonStopping: stopping.append(e)
            case .daemonRestarted:
                guard let unit = Self.restartedUnit(e), let n = e.attr("restarts").flatMap({ Int($0) }) else { return }
                let key = Self.hostKey(unit, e)
                if let seen = restarts[key] {
                    if n > seen.count { restarts[key]!.count = n }
                } else {
                    restarts[key] = (n, e)
                    restartOrder.append(key)
                }
            default:
                // (`Active: failed (Result: …)` only as the head's own record, whose process is
                // its unit: inside another entry, a second unit's head folded into it, it named
                // the first one's unit)
                if e.attr("result") != nil && !e.message.hasPrefix("Active: ") { return }
                lines.append(e)
            }
        }
        for e in r.streamed?.daemonDeaths ?? [] { take(e) }
        r.sessions.borrowingForEach { s in s.forEachLine(Self.lineKinds, take) }
        if !r.unattached.isEmpty { for e in r.unattached.matching(Self.lineKinds) where Self.lineKinds.contains(e.code) { take(e) } }
        guard !lines.isEmpty || !restarts.isEmpty else { return [] }
        /// `; systemd's restart counter for it reached 75`, when it did (2 or more).
        func counter(_ unit: String?, _ e: Event) -> String {
            guard let unit, let n = restarts[Self.hostKey(unit, e)]?.count, n >= 1 else { return "" }
            return n == 1 ? "; systemd restarted it" : "; systemd's restart counter for it reached \(n)"
        }
        var told = Set<String>()
        lines.sort { ($0.time ?? Int64.min, $0.order) < ($1.time ?? Int64.min, $1.order) }
        // Deaths: runs of one unit's lines within `sameDeath`.
        var deaths: [[Event]] = []
        for e in lines {
            if let death = deaths.last, let last = death.last, Self.close(last, e) || Self.backtraceOf(death, e), !Self.restartsJVM(death, e),
                Self.key(last) == Self.key(e) || Self.namesLibraryCrash(death, e) || Self.namesCutTask(death, e) || Self.joins(death, e)
            {
                deaths[deaths.count - 1].append(e)
            } else if let k = deaths.indices.reversed().prefix(Self.lookBack).first(where: { Self.key(deaths[$0].last!) == Self.key(e) }),
                deaths[k].last!.time == nil || e.time == nil, Self.close(deaths[k].last!, e), !Self.restartsJVM(deaths[k], e)
            {
                // (an untimed line sorts before every timed one: another unit's untimed death
                // between it and its unit's timed line, as in a second file, is no new death)
                deaths[k].append(e)
            } else {
                deaths.append([e])
            }
        }
        // The relay sessions left without a closed line, with their process (read back once).
        var unclosed: [(id: String, last: Int64, process: String?, host: String?)] = []
        for i in r.relaySessions.indices {
            let s = r.relaySessions[i]
            guard s.closed == nil, let last = s.end else { continue }
            unclosed.append((s.id, last, s.events.first?.process, s.host))
        }
        // A death only the kernel names, by the 15 bytes it keeps of a task's name (`Out of
        // memory: Killed process 401 (systemd-journal)`), and systemd's restart of the unit whose
        // name they begin (`systemd-journald.service: Scheduled restart job, restart counter is at
        // 1`) soon after: one death, under the unit's whole name, the restart its last line.
        var restartOf: [Int: (unit: String, line: Event)] = [:]
        for (k, death) in deaths.enumerated() {
            guard let cut = Self.cutName(of: death), cut.utf8.count == Self.taskNameBytes, let t = death.last?.time else { continue }
            for key in restartOrder {
                let e = restarts[key]!.first
                guard let unit = Self.restartedUnit(e), unit != cut, unit.utf8.starts(with: cut.utf8), e.attr("host") == death[0].attr("host"),
                    let rt = e.time, rt >= t, rt.saturatingSince(t) <= Self.restartAfter
                else { continue }
                restartOf[k] = (unit, e)
                break
            }
        }
        var blamed = Set<String>()
        var out: [Finding] = []
        var others: [String: (first: [Event], count: Int, unit: String?)] = [:]
        var order: [String] = []
        /// A death that blames no session: counted for one warning per daemon.
        func warn(_ key: String, _ death: [Event], unit: String?) {
            if others[key] == nil { order.append(key) }
            others[key, default: (death, 0, unit)].count += Self.occurrences(death)
        }
        for (k, found) in deaths.enumerated() where !Self.stopped(found, by: stopping) {
            let death = restartOf[k].map { found + [$0.line] } ?? found
            let e = death[0]
            guard let unit = restartOf[k]?.unit ?? Self.unit(of: death) else {
                warn(Self.key(e) ?? "?", death, unit: nil)
                continue
            }
            // (a kernel's task name is cut at 15 bytes — a segfault's task, the OOM killer's
            // process —; a systemd unit's name is whole)
            let cut = restartOf[k] == nil && death.allSatisfy { $0.attr("unit") == nil || $0.attr("comm") != nil }
            let ids: [String] = e.time.map { time in
                // (the same process, on the same host when both lines name one)
                unclosed.filter { Self.names($0.process, unit, cut: cut) && (e.attr("host") == nil || $0.host == nil || $0.host == e.attr("host")) && $0.last <= time && time.saturatingSince($0.last) <= Self.gone && !blamed.contains($0.id) }.map(\.id)
            } ?? []
            guard !ids.isEmpty else {
                warn(unit, death, unit: unit)
                continue
            }
            blamed.formUnion(ids)
            let named = ids.prefix(3).map { String($0.prefix(8)) }.joined(separator: ", ") + (ids.count > 3 ? ", …" : "")
            let sessions = ids.count == 1 ? "the relay session open then (\(named)) stopped" : "the \(ids.count) relay sessions open then (\(named)) stopped"
            told.insert(Self.hostKey(unit, e))
            out.append(finding(.error, "\(Self.what(death, unit: unit)): \(sessions) with it, with no closed line\(counter(unit, e))", death))
        }
        for key in order {
            let (death, count, name) = others[key]!
            let times = count == 1 ? "" : " (\(count) times; the first here)"
            if let name { told.insert(Self.hostKey(name, death[0])) }
            out.append(finding(.warning, Self.what(death, unit: name) + times + counter(name, death[0]), death))
        }
        // A unit systemd restarted, whose death the lines do not hold (the paste begins after it).
        for key in restartOrder where !told.contains(key) {
            let (n, e) = restarts[key]!
            guard let unit = Self.restartedUnit(e) else { continue }
            // (a counter of 1 is one exit, no loop)
            let how = n == 1 ? "it exited and systemd restarted it" : "it keeps exiting: systemd restarted it"
            out.append(finding(.warning, "\(unit): \(how) (restart counter at \(n))", [e]))
        }
        return out
    }

    /// A death's lines and systemd's stops, read together (`SessionTally` keeps both).
    static let lineKinds = KindSet([.daemonDied, .daemonStopping, .daemonRestarted])

    /// The unit of systemd's `X.service: Scheduled restart job, restart counter is at N` (the
    /// rule matches its last words only: as the rule's longest literal, "Scheduled restart job"
    /// was looked for in every line, and macOS logs are full of "Scheduled" and "Scheduler").
    static func restartedUnit(_ e: Event) -> String? {
        guard let at = e.message.firstRange(of: ".service: Scheduled restart job") else { return nil }
        let before = e.message[..<at.lowerBound]
        let unit = before.split(separator: " ").last.map(String.init) ?? ""
        return unit.isEmpty ? nil : unit
    }

    /// `e` follows `last` closely enough to be the same death: within `sameDeath`, or, one of
    /// them untimed (a container's output pasted as plain text: Janus's `[FATAL] [janus.c:main:…]`
    /// and its `Error launching Janus` on the next line; systemctl's untimed `Job for … failed`
    /// above the `Active: failed … since` of the status it asks for), within `sameDeathLines`
    /// of one file.
    static func close(_ last: Event, _ e: Event) -> Bool {
        // (two processes' deaths, each naming its pid: Kurento's death handler's untimed
        // `Segmentation fault (thread …, pid 1331)` lines of two runs in one errors.log)
        var samePid = false
        for key in pidKeys {
            if let a = last.attr(key), let b = e.attr(key) {
                if a != b { return false }
                samePid = true
            }
        }
        if let a = last.time, let b = e.time { return b >= a && b.saturatingSince(a) <= sameDeath }
        guard last.sourcePath == e.sourcePath else { return false }
        // (one pid on both, untimed: the JVM's report and bash's word on its job, a blank line
        // between each of the report's lines in a mail's copy: libjitsi#35)
        let lines = samePid ? samePidLines : sameDeathLines
        if last.time == nil && e.time == nil { return e.line >= last.line && e.line - last.line <= lines }
        return abs(e.line - last.line) <= lines
    }

    /// `e` is the abort frame of the backtrace gdb printed after `death`'s signal, however many
    /// lines (`[New LWP …]`, `thread apply all bt`'s other threads) came between: its first.
    static func backtraceOf(_ death: [Event], _ e: Event) -> Bool {
        guard e.attr("backtrace") != nil, e.time == nil, let last = death.last, last.time == nil, last.sourcePath == e.sourcePath,
            e.line > last.line
        else { return false }
        return death.contains { $0.attr("frames") != nil && $0.attr("backtrace") == nil } && !death.contains { $0.attr("backtrace") != nil }
    }

    /// `e` is a JVM's next attempt to start, not more of `death`'s: a line of a kind (its reason,
    /// its `Could not create the Java Virtual Machine.`) `death` already has (jicofo's log
    /// of two starts, each `Could not reserve enough space for object heap`: jitsi-meet#1826).
    static func restartsJVM(_ death: [Event], _ e: Event) -> Bool {
        guard let kind = e.attr("jvm_start") else { return false }
        return death.contains { $0.attr("jvm_start") == kind }
    }

    /// Attributes that give the pid of the process that died (not a thread's: the kernel
    /// tells a crash once per faulting thread).
    static let pidKeys = ["core_pid", "worker_pid", "asan_pid"]

    /// Deaths looked back over for one of the same unit an untimed line belongs to.
    static let lookBack = 64

    /// Untimed lines of one unit this close are one death.
    static let sameDeathLines = 20
    /// Untimed lines that name one pid this close are one death (a report of 60 lines between).
    static let samePidLines = 80

    /// The bytes of a task's name the kernel keeps (`TASK_COMM_LEN` less its NUL).
    static let taskNameBytes = 15
    /// How soon after a death systemd's restart of its unit is that death's.
    static let restartAfter: Int64 = 60_000_000

    /// The name the kernel gave a death's task, when only the kernel names it: the OOM killer's
    /// process, a segfault's task (cut at `taskNameBytes`).
    static func cutName(of death: [Event]) -> String? {
        guard death.allSatisfy({ $0.attr("unit") == nil || $0.attr("comm") != nil }) else { return nil }
        for e in death {
            if e.attr("comm") != nil, let unit = e.attr("unit") { return unit }
            if let task = e.attr("task"), unit(e) == task { return task }
        }
        return nil
    }

    /// `e` is systemd's line on the unit whose task the kernel named in `death` by its first
    /// `taskNameBytes` (`Killed process 401 (systemd-journal)`, then `systemd-journald.service:
    /// A process of this unit has been killed by the OOM killer.`), or the reverse.
    static func namesCutTask(_ death: [Event], _ e: Event) -> Bool {
        func whole(_ x: Event) -> String? { x.attr("comm") == nil ? x.attr("unit") : nil }
        if let cut = cutName(of: death), let unit = whole(e) { return cut.utf8.count == taskNameBytes && unit.utf8.starts(with: cut.utf8) }
        if let cut = cutName(of: [e]), death.allSatisfy({ cutName(of: [$0]) == nil }), let unit = death.lazy.compactMap(whole).first {
            return cut.utf8.count == taskNameBytes && unit.utf8.starts(with: cut.utf8)
        }
        return false
    }

    /// `e` and `death` are one death, one side naming no daemon (`"joins"` in its rule): gdb's
    /// `Program terminated with signal SIGSEGV` after its `Core was generated by `…janus``.
    static func joins(_ death: [Event], _ e: Event) -> Bool {
        func unnamed(_ x: Event) -> Bool { x.attr("joins") != nil && key(x) == nil }
        if unnamed(e) { return true }
        return death.allSatisfy(unnamed) && key(e) != nil
    }

    /// The compose service of a container's name: `docker-jitsi-meet_jicofo_1` (compose v1)
    /// is jicofo; v2's `livekit-livekit-1` stays whole but for its replica number (a project
    /// and a service are both written with `-`).
    static func composeService(_ container: String) -> String {
        var parts = container.split(separator: "_", omittingEmptySubsequences: false)
        if parts.count >= 3, parts.last!.allSatisfy(\.isNumber) {
            parts.removeLast()
            return String(parts.last!)
        }
        let dashes = container.split(separator: "-", omittingEmptySubsequences: false)
        if dashes.count >= 2, let n = dashes.last, !n.isEmpty, n.allSatisfy(\.isNumber) { return dashes.dropLast().joined(separator: "-") }
        return container
    }

    /// A Kubernetes pod's workload: `livekit-server-7c9f8d7b6-x2x9z` (a Deployment's template
    /// hash and the pod's suffix) is livekit-server; a StatefulSet's `coturn-0` is coturn.
    static func workload(_ pod: String) -> String {
        var parts = pod.split(separator: "-").map(String.init)
        func random(_ s: String, _ n: ClosedRange<Int>) -> Bool { n.contains(s.count) && s.allSatisfy { $0.isLowercase || $0.isNumber } }
        guard parts.count >= 2 else { return pod }
        if parts.last!.allSatisfy(\.isNumber) {
            parts.removeLast()
        } else if random(parts.last!, 5...5) {
            parts.removeLast()
            if parts.count >= 2, random(parts.last!, 8...10), parts.last!.contains(where: \.isNumber) { parts.removeLast() }
        }
        return parts.joined(separator: "-")
    }

    /// How many deaths `death`'s lines tell: rsyslog's `message repeated 3 times: [ …]` stands
    /// for 3 more of the line it repeats (alone, those 3; it was counted as one).
    static func occurrences(_ death: [Event]) -> Int {
        var more = 0
        var plain = false
        for e in death {
            if let n = e.attr("repeated").flatMap({ Int($0) }) { more += n } else { plain = true }
        }
        return more == 0 ? 1 : more + (plain ? 1 : 0)
    }

    /// A unit on a host (a fleet's bundle holds several relays).
    static func hostKey(_ unit: String, _ e: Event) -> String { (e.attr("host") ?? "") + "\u{1}" + unit }
    /// How long before an exit a `Stopping …` line makes it a stop.
    static let stopWindow: Int64 = 90_000_000

    /// `death` is only an exit with an error status (no kill, crash or panic), and a `Stopping
    /// …` line that names its unit, or names none (an older systemd writes the description),
    /// on its host came at most `stopWindow` before it.
    static func stopped(_ death: [Event], by stopping: [Event]) -> Bool {
        guard death.allSatisfy({ $0.attr("exit") != nil }), let unit = death[0].attr("unit"), let t = death[0].time else { return false }
        return stopping.contains { s in
            guard let st = s.time, st <= t, t - st <= stopWindow, s.attr("host") == death[0].attr("host") else { return false }
            let what = s.attr("what") ?? ""
            if what.hasPrefix(unit + ".service") { return true }
            // Another unit's stop (`session-5.scope`, `foo.service`) is not this one's; an older
            // systemd's description alone may be, if the exit follows it closely (a logout or a
            // shutdown hid a relay's crash for 90 s).
            if unitSuffixes.contains(where: { what.contains($0) }) { return false }
            return t - st <= descriptionWindow
        }
    }

    static let unitSuffixes = [".service", ".scope", ".socket", ".timer", ".slice", ".mount", ".target", ".path", ".device", ".swap"]
    /// How close an exit must follow a `Stopping …` line that names no unit (a description).
    static let descriptionWindow: Int64 = 15_000_000

    /// The daemon a death line names: systemd's unit, the OOM killer's process, or for a
    /// segfault the program it happened in, else (in a library, or at an address no file maps:
    /// the kernel then writes no ` in …[…]`) the task before `[pid]: segfault at` — the
    /// faulting thread's name, which is the program's in a single-threaded daemon (coturn#139,
    /// #790: `turnserver[487]: segfault at … in libcrypto.so.1.0.0[…]`); the digits left of a
    /// thread name with a space (`hloop 475389242`) name nothing.
    static func unit(_ e: Event) -> String? {
        if let unit = e.attr("unit") { return unit }
        // (a supervisor's `RuntimeError: Janus unexpectedly died`: the daemon as its unit is named)
        if let daemon = e.attr("daemon") { return daemon.lowercased() }
        // (glibc's `*** Error in `/usr/bin/janus': …`: the program it names)
        // (gdb's `Core was generated by `/opt/janus/bin/janus -o'.`: the program without its arguments)
        // (glibc's `janus: dump.c:342: do_dump: Assertion `value' failed.`: the program that asserted)
        if let program = e.attr("program") ?? e.attr("assert_program"), let name = program.split(separator: " ").first?.split(separator: "/").last {
            return String(name)
        }
        // (gdb's `Thread 2 "coturn" received signal SIGSEGV`: a thread named as its program is;
        // one a daemon named itself, `hloop 12345`, names nothing)
        if let thread = e.attr("thread_name") { return thread.isEmpty || thread.contains(" ") || thread.allSatisfy(\.isNumber) ? nil : thread }
        // (docker compose's `docker-jitsi-meet_jicofo_1 exited with code 1`, the kubelet's
        // `Back-off restarting failed container livekit in pod …`, kubectl's pod)
        if let container = e.attr("container") { return composeService(container) }
        if let container = e.attr("k8s_container") { return container }
        if let pod = e.attr("pod") { return workload(pod) }
        // (GLib's fatal message, `(kurento-media-server:1251): GLib-ERROR **: …`: the program GLib
        // names before it, not its `process` when the program never set its name)
        if e.attr("glib_fatal") != nil { return glibProgram(e) }
        // (a Go panic, glibc's abort, the JVM's or V8's out of memory: the program's own line, under its own name)
        if e.attr("runtime_error") != nil || e.attr("abort") != nil || e.attr("oom") != nil, let process = e.process { return process }
        // (the JVM's fatal error report, or its failure to start: the line's process; in a
        // paste, none, and the lines join another's that names it)
        if e.attr("jvm_fatal") != nil || e.attr("jvm_start") != nil { return e.process }
        // (bash's word on a job it ran: `jvb.sh: line 32:  2027 Aborted  (core dumped) java …`:
        // the line's process, else the job's program, else the script)
        if e.attr("job_signal") != nil { return e.process ?? jobProgram(e) ?? scriptName(e) }
        // (a Go panic with no process: the program its stack's frames name)
        if let program = e.attr("go_program") { return program }
        // (AddressSanitizer's report: the program a supervisor's prefix names, `janus-gateway.default@…(O):
        // ==9536==ERROR: …` under `bash[1392]`, else the line's process)
        if e.attr("sanitizer") != nil { return sanitizedProgram(e) ?? e.process }
        // (`systemctl status`'s `Active: failed (Result: …)`: the record is its unit's)
        if e.attr("result") != nil { return e.process }
        if let image = e.attr("image"), !isLibrary(image) { return image }
        guard let task = e.attr("task"), !task.allSatisfy(\.isNumber) else { return nil }
        return task
    }

    /// A death's daemon: systemd's unit when one of its lines names one (the exit of a process
    /// whose thread the kernel named), else its first line's.
    static func unit(of death: [Event]) -> String? {
        // (systemd's whole name over the kernel's 15 bytes of it)
        death.lazy.compactMap { $0.attr("comm") == nil ? $0.attr("unit") : nil }.first ?? death.lazy.compactMap { $0.attr("unit") }.first ?? unit(death[0])
            ?? death.lazy.compactMap { unit($0) }.first
    }

    /// What the lines of one death share: its daemon, or for a crash in a library the library
    /// (the kernel tells it once per faulting thread, each under its own name).
    static func key(_ e: Event) -> String? {
        if let image = e.attr("image"), isLibrary(image), e.attr("unit") == nil { return "in " + image }
        return unit(e)
    }

    /// `e` is systemd's word on the process a library crash (`death`, no unit yet) killed.
    static func namesLibraryCrash(_ death: [Event], _ e: Event) -> Bool {
        guard e.attr("unit") != nil, let image = death[0].attr("image"), isLibrary(image) else { return false }
        return !death.contains { $0.attr("unit") != nil }
    }

    static func isLibrary(_ image: String) -> Bool { image.hasSuffix(".so") || image.contains(".so.") }

    /// A relay session's process is the daemon: the kernel keeps 15 bytes of a task's name
    /// (`cut`); a systemd unit's name is whole.
    static func names(_ process: String?, _ unit: String, cut: Bool) -> Bool {
        guard let process else { return false }
        return process == unit || (cut && unit.utf8.count == 15 && process.hasPrefix(unit))
    }

    /// `unit: how (status=…)`; a segfault in a library names it.
    static func what(_ death: [Event], unit named: String? = nil) -> String {
        // (the line that names the daemon, over one that joined it: gdb's signal after its core)
        let lead = death.first { $0.attr("joins") == nil } ?? death[0]
        let e = death.first { $0.attr("status") != nil } ?? lead
        let image = death.lazy.compactMap { $0.attr("image") }.first { isLibrary($0) }
        let frame = death.lazy.compactMap { $0.attr("frame_function") }.first
        let unit: String
        if let known = named ?? Self.unit(of: death) {
            unit = known
        } else {
            // (glibc's abort in a paste that does not say whose)
            if image == nil, let abort = abortText(death) { return "a process the paste does not name aborted (\(abort))" }
            if let image { return "a process crashed (\(death.lazy.compactMap { $0.attr("fault") }.first ?? "segfault") in \(image))" }
            // (a Go panic whose frames name no program: its first frame's function is told;
            // s6-overlay's lines are its container's)
            unit = death.contains { $0.attr("runtime_error") != nil } ? "an unnamed Go program"
                : death.contains { $0.attr("s6") != nil } ? "a container (s6-overlay)"
                : death.contains { $0.attr("jvm_fatal") != nil || $0.attr("jvm_start") != nil } ? "a Java process the paste does not name"
                : "a process the paste does not name"
        }
        // (a segfault, or the CPU's trap: `traps: X[pid] general protection fault …`)
        let fault = death.lazy.compactMap { $0.attr("fault") }.first ?? "segfault"
        var what: String
        // (the line whose words say how it died)
        var teller: Event?
        // (systemd's or the kernel's line over the daemon's own naming its unit: Janus's fatal error)
        if let systemd = death.first(where: { $0.attr("unit") != nil && $0.attr("own_words") == nil }) ?? death.first(where: { $0.attr("unit") != nil }) {
            what = "\(unit): \(systemd.attr("how") ?? "it died")" + (image.map { " (after a \(fault) in \($0))" } ?? "")
            teller = systemd
        } else if let image {
            what = "\(unit): it crashed (\(fault) in \(image))"
        } else {
            what = "\(unit): \(lead.attr("how") ?? "it died")"
            teller = lead
        }
        // (the container or pod it ran in, when its name is not the daemon's)
        // (the kubelet's `pod_namespace(uid)`: the pod)
        if let container = (lead.attr("container") ?? lead.attr("pod")).map({ String($0.prefix { $0 != "(" && ($0 != "_" || lead.attr("pod") == nil) }) }),
            container != unit
        {
            what += " (\(lead.attr("pod") != nil ? "pod" : "container") \(container))"
        }
        // (gdb's signal, and the function of its backtrace's first frame; an older gdb's
        // `signal 6, Aborted` by its name)
        if let signal = death.lazy.compactMap({ $0.attr("gdb_signal") }).first {
            // (the kernel's `segfault` already told, gdb's SIGSEGV says where: coturn#1629 was
            // "it crashed (segfault) (SIGSEGV in set_rtpfile)")
            if Self.signalName(signal) == "SIGSEGV", let frame, let told = what.firstRange(of: " (segfault)") {
                what.replaceSubrange(told, with: " (segfault in \(frame))")
            } else {
                what += " (\(Self.signalName(signal))" + (frame.map { " in \($0)" } ?? "") + ")"
            }
        }
        // (the shell's word on its job, when nothing else says how: `Segmentation fault (core dumped)`)
        if lead.attr("shell_death") != nil || !death.contains(where: { $0.attr("shell_death") == nil }),
            let shell = death.lazy.compactMap({ $0.attr("shell_death") }).first
        {
            what += " (\(shell))"
        }
        // (bash's job: its signal, a core dumped, and the script and line that ran it)
        if let job = death.first(where: { $0.attr("job_signal") != nil }), let signal = job.attr("job_signal") {
            var parts = [signal]
            if job.attr("job")?.contains("(core dumped)") == true { parts.append("core dumped") }
            if let script = scriptName(job), script != unit { parts.append("a job of \(script)" + (job.attr("script_line").map { ", line \($0)" } ?? "")) }
            what += " (" + parts.joined(separator: ", ") + ")"
        }
        // (the JVM's own report: its signal and problematic frame, or the memory it lacked)
        if let jvm = death.first(where: { $0.attr("jvm_fatal") != nil }) {
            let detail = jvmText(jvm).map { " (\($0))" } ?? ""
            if lead.attr("jvm_fatal") != nil {
                what += detail
            } else {
                what += " after " + (jvm.attr("jvm_fatal") == "memory" ? "the JVM ran out of memory" : "the JVM crashed") + detail
            }
        }
        // (why the JVM could not start: `Invalid maximum heap size: -Xmx1024MM`, `Unrecognized VM option '…'`)
        if death.contains(where: { $0.attr("jvm_start") != nil }) {
            var reasons: [String] = []
            for e in death where e.attr("jvm_start") == "reason" {
                let text = e.message.split(separator: "\n").first.map { String($0.drop { $0 == "#" || $0 == " " }) } ?? ""
                var end = text
                while let last = end.last, last == " " || last == "." || last == "\r" { end.removeLast() }
                if !end.isEmpty, !reasons.contains(end) { reasons.append(end) }
            }
            let reason = reasons.isEmpty ? nil : reasons.joined(separator: "; ")
            if lead.attr("jvm_start") != nil {
                if let reason { what += " (\(reason))" }
            } else {
                what += " (the JVM could not start" + (reason.map { ": \($0)" } ?? "") + ")"
            }
        }
        // (s6-overlay's init script or service that failed)
        if let s6 = death.first(where: { $0.attr("s6_script") != nil }), let script = s6.attr("s6_script") {
            what += " (\(script.split(separator: "/").last.map(String.init) ?? script) exited \(s6.attr("s6_exit") ?? "?"))"
        } else if let s6 = death.first(where: { $0.attr("s6_service") != nil }), let service = s6.attr("s6_service") {
            what += " (s6-rc: \(service) exited \(s6.attr("s6_exit") ?? "?"))"
        }
        // (mediasoup's worker that could not be started: `spawn …/mediasoup-worker ENOENT`)
        if let error = death.lazy.compactMap({ $0.attr("start_error") }).first {
            what += " (\(startError(error))): the SFU has no media worker"
        }
        // (the JVM's words: `unable to create new native thread`, `Java heap space`)
        if let oom = death.lazy.compactMap({ $0.attr("oom_error") }).first {
            what += " (java.lang.OutOfMemoryError: \(oom.split(separator: "\n").first.map(String.init) ?? oom))"
        }
        if let status = e.attr("status") { what += " (status=\(status))" }
        // (supervisord's `exited: janus (exit status 1; not expected)`)
        if let status = e.attr("exit_status") { what += " (exit status \(status))" }
        // (systemctl's `Job for janus.service failed because the control process exited with error code.`)
        if let why = e.attr("job_failed") { what += " (\(why))" }
        // (mediasoup's worker: `[pid:34, code:null, signal:SIGABRT]`, after the assertion its
        // stderr gave)
        let exit = e.attr("signal") != nil || e.attr("code") != nil ? e : death.first { $0.attr("signal") != nil } ?? e
        if let signal = exit.attr("signal"), signal != "null" {
            // (a number, as nginx gives it, `exited on signal 11`: with its name)
            what += Int(signal) != nil && Self.signalName(signal) != signal ? " (signal \(signal), \(Self.signalName(signal)))" : " (\(signal))"
        } else if let code = exit.attr("code"), code != "null" {
            what += " (exit code \(code))"
        }
        // (glibc's failed assertion: where, and what; after another line's word on the death)
        if let a = death.first(where: { $0.attr("assertion") != nil }), let assertion = a.attr("assertion") {
            let told = death.contains { $0.attr("unit") != nil && $0.attr("assertion") == nil }
            what += (told ? " after a failed assertion (" : " (") + (a.attr("assert_where").map { "\($0): " } ?? "") + "\(a.attr("assert_kw") ?? "Assertion") `\(assertion)' failed)"
        }
        if let glib = glibText(death) {
            // (after another line's word only when that line said how it died: the shell's
            // `Trace/breakpoint trap` after g_error, which it joins, said "it aborted on GLib's
            // fatal error after GLib's fatal error")
            let told = teller?.attr("glib_fatal") == nil
                && death.contains { $0.attr("glib_fatal") == nil && ($0.attr("status") != nil || $0.attr("gdb_signal") != nil || $0.attr("shell_death") != nil) }
            what += (told ? " after GLib's fatal error (" : " (") + glib + ")"
        }
        if let result = death.lazy.compactMap({ $0.attr("result") }).first { what += " (Result: \(result))" }
        if let sanitizer = e.attr("sanitizer") { what += " (AddressSanitizer: \(sanitizerSummary(sanitizer)))" }
        // The daemon's own last words, which systemd's line does not give: Janus's fatal error,
        // glibc's abort (`free(): corrupted unsorted chunks` before `status=6/ABRT`).
        if let fatal = death.lazy.compactMap({ $0.attr("fatal") }).first {
            what += death.contains(where: { $0.attr("fatal") == nil && $0.attr("status") != nil }) ? " after a fatal error (\(fatal))" : " (\(fatal))"
        }
        if let abort = abortText(death) {
            what += death.contains(where: { $0.attr("abort") == nil && $0.attr("daemon") == nil }) ? " after an abort (\(abort))" : " (\(abort))"
        } else if let abort = death.lazy.compactMap({ $0.attr("frame_abort") }).first {
            // (glibc's words read from gdb's `malloc_printerr (str=… "…")` frame: the line it
            // printed is not in the paste)
            what += " (glibc: \(abort))"
        }
        if let error = death.lazy.compactMap({ $0.attr("runtime_error") }).first {
            let panic = "runtime error: \(error)" + (frame.map { " in \($0)" } ?? "")
            what += death.contains(where: { $0.attr("runtime_error") == nil }) ? " after a panic (\(panic))" : " (\(panic))"
        }
        return what
    }

    /// A signal gdb gave by its number (gdb 7.6 on RHEL 7: `Program terminated with signal 11,
    /// Segmentation fault.`) by its name, as a later gdb gives it (Linux's numbers).
    static func signalName(_ signal: String) -> String {
        guard let n = Int(signal), let name = linuxSignals[n] else { return signal }
        return name
    }
    static let linuxSignals = [1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
                               9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"]

    /// The JVM's fatal error as its report gives it: `SIGSEGV in HMAC_Init_ex in libcrypto.so.1.0.0`,
    /// or the native memory it could not have.
    static func jvmText(_ e: Event) -> String? {
        if e.attr("jvm_fatal") == "memory" { return e.attr("jvm_memory") }
        switch (e.attr("jvm_signal"), e.attr("jvm_frame")) {
        case let (signal?, frame?): return "\(signal) in \(frame)"
        case let (signal?, nil): return signal
        case let (nil, frame?): return "in \(frame)"
        default: return nil
        }
    }

    /// The script bash names before its job's death (`/usr/share/jitsi-videobridge/jvb.sh: line
    /// 32: …`): its file's name.
    static func scriptName(_ e: Event) -> String? {
        guard let script = e.attr("script"), let name = script.split(separator: "/").last, !name.isEmpty else { return nil }
        return String(name)
    }

    /// The program of bash's job (`java -server "${java_argv[@]}" …`, `LD_LIBRARY_PATH=$libs
    /// java …`): its first word after the variables set for it, without its directory; none
    /// when the line was cut before it or it is a variable's value.
    static func jobProgram(_ e: Event) -> String? {
        guard var job = e.attr("job").map({ Substring($0) }) else { return nil }
        job = job.drop { $0 == " " || $0 == "\t" }
        if job.hasPrefix("(core dumped)") { job = job.dropFirst(13).drop { $0 == " " || $0 == "\t" } }
        for word in job.split(separator: " ") {
            if let eq = word.firstIndex(of: "="), eq != word.startIndex, word[..<eq].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) { continue }
            let name = word.split(separator: "/").last ?? word
            guard let first = name.first, first.isLetter || first == "_" || first == ".",
                !name.contains(where: { $0 == "$" || $0 == "\"" || $0 == "'" || $0 == "`" })
            else { return nil }
            return String(name)
        }
        return nil
    }

    /// Why a worker could not be started, without Node's `Error: ` and the `debug` module's
    /// `+0ms` delta after it.
    static func startError(_ text: String) -> String {
        var t = text.split(separator: "\n", omittingEmptySubsequences: false).first ?? Substring(text)
        if t.hasPrefix("Error: ") { t = t.dropFirst(7) }
        if let plus = t.lastIndex(of: "+"), plus > t.startIndex, t[t.index(before: plus)] == " ",
            t[t.index(after: plus)...].hasSuffix("ms") || t[t.index(after: plus)...].hasSuffix("s"),
            t[t.index(after: plus)...].first?.isNumber == true
        {
            t = t[..<t.index(before: plus)]
        }
        return String(t)
    }

    /// glibc's words when it aborted the process (`free(): corrupted unsorted chunks`,
    /// `double free or corruption (out)`, `stack smashing detected: terminated`).
    static func abortText(_ death: [Event]) -> String? {
        guard let e = death.first(where: { $0.attr("abort") != nil }), let abort = e.attr("abort") else { return nil }
        return (e.attr("abort_in") ?? "") + abort
    }

    /// GLib's words on the fatal error that aborted the process: g_error's message without the
    /// time GLib 2.50+ writes after `**: ` (`failed to allocate 18446744071604798583 bytes`),
    /// g_assert's place and expression (`udp-bsd.c:294:socket_send_messages: assertion failed:
    /// (sock->priv != NULL)`), the C library's error GLib aborts on.
    static func glibText(_ death: [Event]) -> String? {
        guard let e = death.first(where: { $0.attr("glib_fatal") != nil }) else { return nil }
        switch e.attr("glib_fatal") {
        case "alloc": return "failed to allocate \(e.attr("glib_alloc") ?? "?") bytes"
        case "assert": return (e.attr("glib_where").map { "\($0): " } ?? "") + "assertion failed: " + (e.attr("glib_assertion") ?? "")
        case "thread": return "creating thread '\(e.attr("glib_thread") ?? "?")': \(e.attr("glib_error") ?? "?")"
        case "libc": return "unexpected error from the C library in \(e.attr("glib_call") ?? "?"): \(e.attr("glib_error") ?? "?")"
        default:
            guard let error = e.attr("glib_error") else { return nil }
            var text = Substring(error)
            // (`12:00:09.992: `, GLib 2.50's time)
            let clock = text.prefix { $0.isNumber || $0 == ":" || $0 == "." }
            if clock.count >= 8, clock.filter({ $0 == ":" }).count >= 3, text.dropFirst(clock.count).hasPrefix(" ") {
                text = text.dropFirst(clock.count + 1)
            }
            return (e.attr("glib_domain").map { "\($0)-ERROR: " } ?? "") + text
        }
    }

    /// The program of a GLib message: the record's process, or `name` of the `(name:pid): `
    /// GLib writes before it (in text read as plain); GLib's `process` (the program never set
    /// its name: Janus's libnice lines) names nothing.
    static func glibProgram(_ e: Event) -> String? {
        var name: Substring?
        if let p = e.process { name = Substring(p) }
        let m = e.message
        if let open = m.firstIndex(of: "("), let close = m[open...].firstIndex(of: ")"), m[close...].hasPrefix("): "),
            let colon = m[open..<close].lastIndex(of: ":"), colon > m.index(after: open),
            m[m.index(after: colon)..<close].allSatisfy(\.isNumber), !m[m.index(after: colon)..<close].isEmpty
        {
            let named = m[m.index(after: open)..<colon]
            if named != "process" { name = named }
        }
        guard let n = name, !n.isEmpty, n != "process", !n.contains(" ") else { return nil }
        return String(n)
    }

    /// The program named before AddressSanitizer's `==pid==` (a supervisor's prefix: `name.group@origin(O): `),
    /// cut at its first `.`, `@` or `(`.
    static func sanitizedProgram(_ e: Event) -> String? {
        guard let pid = e.attr("asan_pid"), let at = e.message.firstRange(of: "==\(pid)==") else { return nil }
        var name = e.message[..<at.lowerBound]
        while let last = name.last, last == " " || last == ":" { name = name.dropLast() }
        if let cut = name.firstIndex(where: { $0 == "." || $0 == "@" || $0 == "(" }) { name = name[..<cut] }
        guard !name.isEmpty, !name.contains(" ") else { return nil }
        return String(name)
    }

    /// AddressSanitizer's error without its registers (`SEGV on unknown address 0x18 (pc … bp … sp … T122)`,
    /// `heap-use-after-free on address 0x60… at pc … bp … sp …`).
    static func sanitizerSummary(_ s: String) -> String {
        for cut in [" (pc ", " at pc "] { if let r = s.firstRange(of: cut) { return String(s[..<r.lowerBound]) } }
        return s
    }

    func finding(_ severity: Severity, _ message: String, _ death: [Event]) -> Finding {
        // (at its first line that has a time: systemctl's `Job for X.service failed` has none,
        // its `Active: failed … since` below it has)
        let e = death.first(where: { $0.time != nil }) ?? death[0]
        return Finding(kind: kind, severity: severity, time: e.time, displayOffset: e.displayOffset, session: nil, message: message,
                       evidence: death.map(\.source))
    }
}

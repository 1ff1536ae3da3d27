import ArgumentParser
import CastscopeKit

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, always, never
}

/// Colour as git and ls decide it: --color, else NO_COLOR (never), else CLICOLOR_FORCE
/// (always), else a terminal that is not TERM=dumb.
struct ColorOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Colour: auto (a terminal that is not TERM=dumb), always (for less -R), never. Also NO_COLOR, CLICOLOR_FORCE.", valueName: "when"))
    var color: ColorChoice?

    @Flag(name: .long, help: "Same as --color never.")
    var noColor = false

    func enabled(fd: Int32 = 1) -> Bool {
        if noColor { return false }
        switch color {
        case .always: return true
        case .never: return false
        default: break
        }
        if ProcessInfoLite.environment("NO_COLOR") != nil { return false }
        if let force = ProcessInfoLite.environment("CLICOLOR_FORCE"), force != "0" { return true }
        return isatty(fd) != 0 && ProcessInfoLite.environment("TERM") != "dumb"
    }
}

/// Which sessions the report shows, and how much of it.
struct NavigationOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Only this session: S3 (or 3), or a pid (pid:915, or a number no session has as its id). Repeatable, or comma-separated.", valueName: "id"))
    var session: [String] = []

    @Flag(name: .long, help: "Only sessions that did not complete cleanly or have a warning or an error.")
    var onlyProblems = false

    @Option(name: .long, help: ArgumentHelp("Only sessions with a finding of this severity or worse (info, warning, error).", valueName: "severity"))
    var minSeverity: FailOn?

    @Option(name: [.customShort("g"), .customLong("grep")], help: ArgumentHelp("Only sessions with a line, reason or finding matching this extended regular expression (case-insensitive unless it has capitals, like journalctl -g).", valueName: "pattern"))
    var grep: String?

    @Option(name: [.customShort("n"), .customLong("last")], parsing: .unconditional, help: ArgumentHelp("Only the N most recent sessions (after the filters above).", valueName: "N"))
    var last: Int?

    @Flag(name: [.customShort("r"), .long], help: "Newest session first.")
    var reverse = false

    @Flag(name: [.customShort("q"), .long], help: "Only the header: counts, outcomes, findings and which sessions have them.")
    var quiet = false

    @Flag(name: .long, help: "One pasteable line for the whole bundle: sessions, outcomes, findings.")
    var oneline = false

    @Flag(name: [.customLong("list")], help: "One line per session (id, start, duration, outcome, process, findings); also `castscope sessions`.")
    var list = false

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Fit the text report to N columns (timeline rows cut, other lines wrapped); 0: no limit. Default: the terminal's width ($COLUMNS), no limit when piped.", valueName: "N"))
    var width: Int?

    /// The width to fit: --width, else the terminal's.
    func columns() -> Int? {
        if let width { return width > 0 ? max(40, width) : nil }
        guard isatty(1) != 0 else { return nil }
        var ws = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 0 { return max(40, Int(ws.ws_col)) }
        if let c = ProcessInfoLite.environment("COLUMNS").flatMap(Int.init), c > 0 { return max(40, c) }
        return 80
    }

    @Flag(name: .long, inversion: .prefixedNo, help: "Page the text report through $CASTSCOPE_PAGER, $PAGER or less -FRX on a terminal.")
    var pager = true

    func validate() throws {
        if let width, width < 0 { throw ValidationError("--width must be 0 (no limit) or more, got \(width)") }
        if let last, last < 1 { throw ValidationError("-n/--last must be at least 1, got \(last)") }
        if [quiet, oneline, list].filter({ $0 }).count > 1 { throw ValidationError("-q, --oneline and --list: give one") }
        if let grep, Regex.compile(grep) == nil { throw ValidationError("-g: '\(grep)' is not an extended regular expression") }
        // (`--session ""` showed every session, `pid:abc` none, without a word)
        for given in session {
            let ids = given.split(separator: ",").map { String($0).trimmingCharacters(in: " ") }.filter { !$0.isEmpty }
            guard !ids.isEmpty else { throw ValidationError("--session takes S3 (or 3) or pid:915, got '\(given)'") }
            for id in ids {
                let lower = id.lowercased()
                let digits = lower.hasPrefix("pid:") || lower.hasPrefix("pid=") ? lower.dropFirst(4) : lower.hasPrefix("s") ? lower.dropFirst() : lower[...]
                guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else {
                    throw ValidationError("--session takes S3 (or 3) or pid:915, got '\(id)'")
                }
            }
        }
    }

    var selection: SessionSelection {
        var s = SessionSelection()
        s.ids = session.flatMap { $0.split(separator: ",").map(String.init) }
        s.onlyProblems = onlyProblems
        s.minSeverity = minSeverity?.severity
        if let grep, let re = Regex.compile(grep) { s.matches = { re.matches($0) } }
        s.last = last
        s.reverse = reverse
        return s
    }

    var shapesText: Bool { quiet || oneline || list }
}

/// A POSIX extended regular expression (journalctl -g: case-insensitive when all lowercase).
final class Regex: @unchecked Sendable {
    private var re = regex_t()
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    static func compile(_ pattern: String) -> Regex? {
        let r = Regex()
        let caseless = pattern == pattern.lowercased()
        let flags = REG_EXTENDED | REG_NOSUB | (caseless ? REG_ICASE : 0)
        guard regcomp(&r.re, pattern, flags) == 0 else { return nil }
        pthread_mutex_init(r.lock, nil)
        return r
    }

    func matches(_ s: String) -> Bool {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return regexec(&re, s, 0, nil, 0) == 0
    }
}

/// The pager for a text report on a terminal (git's rules: LESS=FRX unless set).
enum Pager {
    static func command(enabled: Bool) -> String? {
        guard enabled, isatty(1) != 0 else { return nil }
        let cmd = ProcessInfoLite.environment("CASTSCOPE_PAGER") ?? ProcessInfoLite.environment("PAGER") ?? "less"
        if cmd == "cat" || cmd.trimmingCharacters(in: " ").isEmpty { return nil }
        if getenv("LESS") == nil { setenv("LESS", "FRX", 1) }
        return cmd
    }

    /// Writes through the pager; false when it could not be started. A pager the shell could
    /// not run (`PAGER=most` where it is not installed, a typo in `$CASTSCOPE_PAGER`: the
    /// shell's exit 127, or 126 for a file that is not executable) took the report with it,
    /// exit 0 and only the shell's `not found` line: that is said, and the report is written
    /// without it (false).
    ///
    /// A pager that started and read part of the report before it exited 126 or 127 (a
    /// wrapper whose later command was not found) may have shown that part: the report was
    /// printed twice. So the pager's pipe is watched: the report is written again only when
    /// the pager read none of it (what is left in the pipe is all that was written).
    static func write(_ text: String, through cmd: String) -> Bool {
        signal(SIGPIPE, SIG_IGN)  // quitting the pager early is not an error
        fflush(stdout)
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return false }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, readEnd, 0)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = ([String](["/bin/sh", "-c", cmd])).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        guard posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ) == 0 else {
            close(readEnd)
            close(writeEnd)
            return false
        }
        // The read end stays open here, to count what the pager left: writes do not fail when
        // it is gone, so they are non-blocking, and stop when it has exited.
        _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK)
        var status: Int32 = 0
        var reaped = false
        var written = 0
        var text = text
        text.withUTF8 { buf in
            while written < buf.count {
                let n = Glibc.write(writeEnd, buf.baseAddress! + written, buf.count - written)
                if n > 0 { written += n; continue }
                if n < 0 && errno == EINTR { continue }
                guard n < 0 && errno == EAGAIN else { break }
                var p = pollfd(fd: writeEnd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, 50)
                if waitpid(pid, &status, WNOHANG) == pid { reaped = true; break }
            }
        }
        close(writeEnd)
        if !reaped { while waitpid(pid, &status, 0) == -1 && errno == EINTR {} }
        var unread: Int32 = 0
        if ioctl(readEnd, UInt(FIONREAD), &unread) != 0 { unread = -1 }
        close(readEnd)
        // (WIFEXITED and WEXITSTATUS, spelled out: Glibc's macros are not imported)
        if status & 0x7F == 0, [126, 127].contains((status >> 8) & 0xFF) {
            if Int(unread) == written {
                fputs("castscope: warning: " + Sanitize.line("the pager '\(cmd)' could not be run (the shell's exit \((status >> 8) & 0xFF)): the report follows without it (set $CASTSCOPE_PAGER or $PAGER, or pass --no-pager)") + "\n", stderr)
                return false
            }
            fputs("castscope: warning: " + Sanitize.line("the pager '\(cmd)' exited \((status >> 8) & 0xFF) after it read part of the report: it is not written again (pass --no-pager to see it whole)") + "\n", stderr)
        }
        return true
    }
}

extension String {
    func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}

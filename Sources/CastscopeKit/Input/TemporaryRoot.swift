#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CCastscopeSignals

/// One private folder per run under `TMPDIR` (`castscope-XXXXXX`) that every named temporary
/// copy goes in: log archive members copied out of a tarball, a journal or tracev3 member. Their
/// owners remove what they wrote as they finish, and the folder goes when it is empty
/// (`release`). Ctrl-C or SIGTERM while a sysdiagnose was read left its log archive's copy
/// behind (1.4 GB a time), and a report being written left its temporary file beside its
/// target: on those signals (and SIGHUP) the folder and the reports' temporary files
/// (`removeOnSignal`) are removed first (`/bin/rm -rf`, from the handler through `_Fork` and
/// `execv`, both async-signal-safe), then the signal takes its default course. A handler
/// already in place (`tail` stops its followers on SIGINT and SIGTERM) is left as it is.
public enum TemporaryRoot {
    private static let lock = NSLockLite()
    nonisolated(unsafe) private static var made: String?
    nonisolated(unsafe) private static var others: [String] = []
    nonisolated(unsafe) private static var handling = false
    /// `rm -rf <root> <others>` as C strings, made before any signal can need them (and never
    /// freed: a handler may be reading the ones it replaced).
    nonisolated(unsafe) static var removal: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?

    /// The run's folder, made on first use.
    static func path() throws -> String {
        try lock.locked { Result(catching: { try made ?? makeRootLocked() }) }.get()
    }

    private static func makeRootLocked() throws -> String {
        let base = temporaryBase()
        var template = Array((base + "/castscope-XXXXXX").utf8CString)
        guard let p = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw InputError(path: base, "cannot create a private temporary directory: \(errnoText())")
        }
        made = String(cString: p)
        armLocked()
        return made!
    }

    /// A new private folder `<prefix>-XXXXXX` in the run's folder, made under the lock (a
    /// `release` between making the run's folder and this one would have removed it).
    static func folder(_ prefix: String) throws -> String {
        try lock.locked {
            Result(catching: {
                let root = try made ?? makeRootLocked()
                var template = Array((root + "/" + prefix + "-XXXXXX").utf8CString)
                guard let p = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                    throw InputError(path: root, "cannot create a private temporary directory: \(errnoText())")
                }
                return String(cString: p)
            })
        }.get()
    }

    /// An owner removed what it wrote: the folder goes once it is empty (made again when a
    /// copy needs it).
    static func release() {
        lock.locked {
            guard let root = made, rmdir(root) == 0 else { return }
            made = nil
            armLocked()
        }
    }

    /// A file (a report's temporary file) to remove if a signal ends the run before its owner
    /// does (`forgetOnSignal`).
    public static func removeOnSignal(_ path: String) {
        lock.locked {
            others.append(path)
            armLocked()
        }
    }

    public static func forgetOnSignal(_ path: String) {
        lock.locked {
            guard let i = others.lastIndex(of: path) else { return }
            others.remove(at: i)
            armLocked()
        }
    }

    /// The command the handler runs for what there is to remove now; the handlers installed
    /// the first time there is any.
    private static func armLocked() {
        let paths = (made.map { [$0] } ?? []) + others
        guard !paths.isEmpty else {
            removal = nil
            return
        }
        let argv = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: paths.count + 4)
        argv[0] = strdup("rm")
        argv[1] = strdup("-rf")
        argv[2] = strdup("--")
        for (k, p) in paths.enumerated() { argv[3 + k] = strdup(p) }
        argv[3 + paths.count] = nil
        removal = argv
        guard !handling else { return }
        handling = true
        // (and the other signals whose default ends the process: Ctrl-\ is SIGQUIT, some
        // supervisors send it; a stray SIGUSR1 or SIGALRM left a sysdiagnose's copy behind)
        for sig in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF] {
            var current = sigaction()
            guard sigaction(sig, nil, &current) == 0 else { continue }
            #if canImport(Glibc)
            let isDefault = current.__sigaction_handler.sa_handler == nil
            #else
            let isDefault = current.__sigaction_u.__sa_handler == nil
            #endif
            if isDefault { signal(sig, removeThenDie) }
        }
    }
}

/// Removes the run's temporary files, then lets the signal end the process as it would have.
private let removeThenDie: @convention(c) (Int32) -> Void = { sig in
    if let argv = TemporaryRoot.removal {
        let pid = ccastscope_fork_in_handler()
        if pid == 0 {
            execv("/bin/rm", argv)
            _exit(127)
        }
        if pid > 0 {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
    }
    signal(sig, SIG_DFL)
    raise(sig)
}

/// Copies `source` to the open file `fd` (a temporary copy made to read it: a log archive
/// member, a journal or tracev3 member); errors name `display`, the input as the user gave it.
func copyAll(_ source: ByteSource, to fd: Int32, display: String) throws {
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var offset: Int64 = 0
    while true {
        let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
        if n == 0 { return }
        guard buffer.withUnsafeBytes({ pwriteAll(fd, UnsafeRawBufferPointer(rebasing: $0[0..<n]), at: offset) }) else {
            throw InputError(path: display, copyWriteFailed + errnoText())
        }
        offset += Int64(n)
    }
}

/// How `copyAll` says that the copy could not be written (a full or missing $TMPDIR), and how a
/// copy's file that could not be made is said.
let copyWriteFailed = "write failed (temporary copy to read it): "
let copyOpenFailed = "cannot copy it to a temporary file to read it: "

/// Whether `error`, from making a copy (`copyAll`), came from the input (an archive or a
/// compressed stream that ends or is damaged inside the member: what was copied is the member up
/// to there), not from making or writing the copy (whose part is no cut of the member's, and is
/// not read; a copy never made has nothing to read).
func inputEndedInside(_ error: Error) -> Bool {
    guard let message = (error as? InputError)?.message else { return true }
    return !message.hasPrefix(copyWriteFailed) && !message.hasPrefix(copyOpenFailed)
}

/// `$TMPDIR`, else /tmp; a `TMPDIR` set but empty (a unit's `Environment=TMPDIR=`) is unset,
/// as POSIX tools take it (it put the files in `/`, or failed naming an empty path).
func temporaryBase() -> String {
    guard let v = getenv("TMPDIR"), v.pointee != 0 else { return "/tmp" }
    return String(cString: v)
}

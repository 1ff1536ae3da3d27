#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One private folder per run under `TMPDIR` (`castscope-XXXXXX`) that every named temporary
/// copy goes in: log archive members copied out of a tarball, a journal or tracev3 member. Their
/// owners remove what they wrote as they finish, and the folder goes when it is empty (`release`). Ctrl-C or SIGTERM
/// while a sysdiagnose was read left its log archive's copy behind (1.4 GB a time): on those
/// signals (and SIGHUP) the folder is removed first (`rm -rf`, forked and exec'd from the
/// handler: both async-signal-safe), then the signal takes its default course. A handler
/// already in place (`tail` stops its followers on SIGINT and SIGTERM) is left as it is.
enum TemporaryRoot {
    private static let lock = NSLockLite()
    nonisolated(unsafe) private static var made: String?
    /// `rm -rf <root>` as C strings, made before any signal can need them.
    nonisolated(unsafe) static var removal: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?

    /// The run's folder, made on first use.
    static func path() throws -> String {
        let result: Result<String, InputError> = lock.locked {
            if let made { return .success(made) }
            let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
            var template = Array((base + "/castscope-XXXXXX").utf8CString)
            guard let p = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                return .failure(InputError(path: base, "cannot create a private temporary directory: \(errnoText())"))
            }
            let root = String(cString: p)
            made = root
            let argv = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: 4)
            argv[0] = strdup("rm")
            argv[1] = strdup("-rf")
            argv[2] = strdup(root)
            argv[3] = nil
            removal = argv
            for sig in [SIGINT, SIGTERM, SIGHUP] {
                var current = sigaction()
                guard sigaction(sig, nil, &current) == 0 else { continue }
                #if canImport(Glibc)
                let isDefault = current.__sigaction_handler.sa_handler == nil
                #else
                let isDefault = current.__sigaction_u.__sa_handler == nil
                #endif
                if isDefault { signal(sig, removeThenDie) }
            }
            return .success(root)
        }
        return try result.get()
    }

    /// An owner removed what it wrote: the folder goes once it is empty (made again when a
    /// copy needs it; the handlers then remove the new one).
    static func release() {
        lock.locked {
            guard let root = made, rmdir(root) == 0 else { return }
            made = nil
            // (its strings are not freed: a signal handler may be reading them)
            removal = nil
        }
    }
}

/// Removes the run's temporary folder, then lets the signal end the process as it would have.
private let removeThenDie: @convention(c) (Int32) -> Void = { sig in
    if let argv = TemporaryRoot.removal {
        let pid = fork()
        if pid == 0 {
            execvp("rm", argv)
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

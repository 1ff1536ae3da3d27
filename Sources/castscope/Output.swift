import ArgumentParser
import CastscopeKit

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The exit codes castscope promises (README "Exit codes", `castscope --help`).
enum Exit {
    /// Analyzed.
    static let ok: Int32 = 0
    /// Analyzed, but some input could not be read (named on stderr).
    static let inputErrors: Int32 = 1
    /// Usage error: bad option, or an output that would overwrite an input or a foreign file.
    static let usage: Int32 = 2
    /// A finding at or above --fail-on.
    static let failOn: Int32 = 3
    /// Nothing in the inputs was recognized, or an input path does not exist.
    static let nothingRecognized: Int32 = 4
    /// An output (file or standard output) could not be written; the other outputs were.
    static let writeFailed: Int32 = 5
}

/// Standard input, output and error closed when castscope starts (`>&-`, `2>&-`, `<&-`: a
/// cron line, a parent that closed its descriptors before exec). A closed one is the lowest
/// free number, so the first file castscope opened took it: the `--html` report's temporary
/// file, a spill, a `file://` table, and the text report (or the error lines) went into that
/// file, exit 0 (hostile round 10). Each is held by `/dev/null` opened the other way round
/// (read-only for output, write-only for input), so every use still fails with EBADF as on a
/// closed descriptor, and no file castscope opens can take its number.
enum StandardDescriptors {
    nonisolated(unsafe) private static var closed: UInt8 = 0

    /// First thing in `main`, before any file is opened.
    static func holdClosed() {
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            let placeholder = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY)
            guard placeholder >= 0 else { continue }
            if placeholder != fd {
                dup2(placeholder, fd)
                close(placeholder)
            }
            closed |= 1 << UInt8(fd)
        }
    }

    /// Whether `fd` (0, 1 or 2) was closed at start: held by a placeholder, not open for use.
    static func wasClosed(_ fd: Int32) -> Bool { (0...2).contains(fd) && closed & (1 << UInt8(fd)) != 0 }
}

/// What an output holds.
enum ReportFormat: String, CaseIterable, ExpressibleByArgument {
    case text, json, markdown, html, perfetto

    /// The format a file name suggests (`report.html` → html), nil when it suggests none.
    static func guess(path: String) -> ReportFormat? {
        let lower = path.lowercased()
        if lower.hasSuffix(".html") || lower.hasSuffix(".htm") { return .html }
        if lower.hasSuffix(".md") || lower.hasSuffix(".markdown") { return .markdown }
        if lower.hasSuffix(".perfetto.json") || lower.hasSuffix(".trace.json") || lower.hasSuffix(".trace") { return .perfetto }
        if lower.hasSuffix(".json") { return .json }
        if lower.hasSuffix(".txt") || lower.hasSuffix(".log") { return .text }
        return nil
    }
}

/// One place a report goes: a file path or `-` (standard output).
struct OutputTarget {
    var path: String
    var format: ReportFormat
    /// The option that named it, for error messages.
    var option: String
    var isStdout: Bool { path == "-" }
}

/// Writes reports so that no input and no file castscope did not write is ever replaced, and
/// a failed write (full disk, kill) never leaves half a report over a good one.
enum OutputWriter {
    /// Set when files are asked for besides standard output (`mayOutliveStdout`): SIGPIPE is
    /// ignored, and a reader of standard output that stops early (`| head`) ends only what goes
    /// there; the files are written, then castscope ends by SIGPIPE as before (`endIfStdoutGone`).
    /// (It ended at once: `--html r.html … | head` left no page, and a `file://` export with a
    /// torn last line; hostile round 8.)
    nonisolated(unsafe) static var stdoutMayClose = false
    nonisolated(unsafe) static var stdoutGone = false

    static func mayOutliveStdout() {
        signal(SIGPIPE, SIG_IGN)
        stdoutMayClose = true
    }

    /// Standard output's reader went away: ends by SIGPIPE now, the other outputs written.
    static func endIfStdoutGone() {
        guard stdoutGone else { return }
        fflush(nil)
        signal(SIGPIPE, SIG_DFL)
        raise(SIGPIPE)
    }

    /// The real path of `path` (symlinks resolved); for a path that does not exist yet, its
    /// folder's real path and its name. (As a String: bytes that are not UTF-8 repaired; what
    /// compares paths uses `realBytes`.)
    static func realPath(_ path: String) -> String? {
        realBytes(BytePath.of(path)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `realPath` in bytes, as the kernel gives them.
    static func realBytes(_ path: [UInt8]) -> [UInt8]? {
        if let r = BytePath.realpath(path) { return r }
        let (dir, name) = BytePath.split(path)
        guard let d = BytePath.realpath(dir) else { return nil }
        return BytePath.join(d, name)
    }

    /// 1 or 2 when `path` is this process's standard output or error (`/dev/stdout`,
    /// `/proc/self/fd/2`, a file the shell redirected it to): written through it, not replaced.
    static func standardStream(_ path: String) -> Int32? {
        guard path != "-" else { return nil }
        // By name first (`/dev/stderr` is fd 2 even when fd 1 is the same terminal, or `2>&1`
        // made them one file: by inode it passed for standard output), then by inode (a file
        // the shell redirected standard output to).
        if let fd = namedDescriptor(path), fd == 1 || fd == 2 { return fd }
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        for fd: Int32 in [1, 2] {
            var o = stat()
            if !StandardDescriptors.wasClosed(fd), fstat(fd, &o) == 0, o.st_dev == st.st_dev, o.st_ino == st.st_ino { return fd }
        }
        return nil
    }

    /// The descriptor a path names through its links (`/dev/stdout` → `/proc/self/fd/1`,
    /// `/dev/fd/2`), whether or not it is open; nil for any other path.
    static func namedDescriptor(_ path: String) -> Int32? {
        // (an argument that is not UTF-8, reached through its folder's descriptor: a file)
        if BundleWalker.rawPaths[path] != nil { return nil }
        var current = path
        for _ in 0..<16 {
            for prefix in ["/proc/self/fd/", "/dev/fd/"] where current.hasPrefix(prefix) {
                return Int32(current.dropFirst(prefix.count))
            }
            if current == "/dev/stdout" { return 1 }
            if current == "/dev/stderr" { return 2 }
            guard let next = readLink(current) else { return nil }
            current = next
        }
        return nil
    }

    /// What link `path` points to, relative to its folder resolved; nil when it is no link.
    static func readLink(_ path: String) -> String? {
        BytePath.readLink(Array(path.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The file a symlink names, resolved, also when it does not exist yet (a link to the
    /// report a run is about to write); nil when a link in the chain cannot be read.
    static func linkTarget(_ path: [UInt8]) -> [UInt8]? {
        if let r = BytePath.realpath(path) { return r }
        var current = path
        for _ in 0..<40 {
            guard let next = BytePath.readLink(current) else { return realBytes(current) }
            current = next
        }
        return nil
    }

    /// Whether two output paths name one file: the same real path (links resolved, also when
    /// it does not exist yet), or the same device and inode (hard links, bind mounts).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        let a = BytePath.of(a), b = BytePath.of(b)
        if let ra = linkTarget(a) ?? realBytes(a), let rb = linkTarget(b) ?? realBytes(b), ra == rb { return true }
        guard let sa = BytePath.stat(a), let sb = BytePath.stat(b) else { return false }
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    /// A path as error lines show it: an argument that is not UTF-8 as given (`caf\xe9/r.txt`),
    /// not as it is reached (`/proc/self/fd/5/r.txt`).
    static func shown(_ path: String) -> String { BundleWalker.argumentNames[path] ?? path }

    /// Why `target` must not be written, or nil. Checked before anything is read.
    static func refusal(_ target: OutputTarget, inputs: [String], force: Bool) -> String? {
        // A descriptor named that is not open (`-o /dev/stdout >&-`): nothing to write to, and
        // its link (`/dev/stdout` itself) is no file to replace.
        if !target.isStdout, let fd = namedDescriptor(target.path) {
            var st = stat()
            if fstat(fd, &st) != 0 || StandardDescriptors.wasClosed(fd) { return "\(target.option) \(target.path): file descriptor \(fd) is not open" }
        }
        guard !target.isStdout, standardStream(target.path) != 1 else { return stdoutConflict(inputs: inputs) }
        if standardStream(target.path) == 2 { return stdoutConflict(inputs: inputs, fd: 2) }
        let path = target.path, bytes = BytePath.of(path)
        guard realBytes(bytes) != nil else {
            return "\(target.option) \(shown(path)): its folder does not exist"
        }
        // (the option the user gave: `--perfetto in.log` was told "e.g. -o report.perfetto")
        let option = target.option.hasPrefix("--") && target.option != "--output" ? target.option : "-o"
        let example = "e.g. \(option) report.\(target.format == .markdown ? "md" : target.format == .text ? "txt" : target.format.rawValue)"
        if let why = inputConflict(path, option: target.option, inputs: inputs, example: example) { return why }
        if let st = BytePath.stat(bytes) {
            let kind = st.st_mode & S_IFMT
            if kind == S_IFDIR { return "\(target.option) \(shown(path)) is a folder" }
            if kind == S_IFREG && !force && st.st_size > 0 && !writtenByCastscope(path) {
                return "\(target.option) \(shown(path)) exists and was not written by castscope: pass --force to replace it"
            }
        }
        return nil
    }

    /// Why standard output must not be written: the shell opened it onto an input
    /// (`castscope analyze in.txt >> in.txt`, `castscope show in 1<> in`), as `-o` is refused
    /// (GNU cat refuses `cat f >> f` likewise). Nil when it is not a regular file that is one.
    static func stdoutConflict(inputs: [String], fd: Int32 = 1) -> String? {
        var out = stat()
        guard !StandardDescriptors.wasClosed(fd), fstat(fd, &out) == 0, (out.st_mode & S_IFMT) == S_IFREG else { return nil }
        for input in inputs {
            var st = stat()
            if input == "-" {
                guard fstat(0, &st) == 0 else { continue }
            } else {
                guard let s = BytePath.stat(BytePath.of(input)) else { continue }
                st = s
            }
            guard (st.st_mode & S_IFMT) == S_IFREG, st.st_dev == out.st_dev, st.st_ino == out.st_ino else { continue }
            let what = input == "-" ? "the standard input being read" : "the input \(shown(input))"
            return "standard \(fd == 2 ? "error" : "output") is \(what): castscope never writes over an input (redirect it elsewhere, or -o FILE)"
        }
        // A log inside an input folder, or what a link in one leads to (`castscope analyze in
        // >> in/a.log` appended the report to a.log, which the walk then passed over without a
        // word), as `-o` is checked; and, when the file has other names, one of them in an input
        // folder. (A file the shell just made or emptied, `> in/report.txt`, or castscope's own
        // report appended to, a cron job's `>> in/castscope.log`, is no log: the walk passes
        // over it, and it is written.)
        let stream = fd == 2 ? "standard error" : "standard output"
        guard out.st_size > 0, let real = BytePath.realpath(Array("/proc/self/fd/\(fd)".utf8)),
            !writtenByCastscope(String(decoding: real, as: UTF8.self))
        else { return nil }
        if let why = inputConflict(String(decoding: real, as: UTF8.self), option: stream, inputs: inputs, example: "redirect it elsewhere, or -o FILE") {
            return why
        }
        if out.st_nlink > 1, let other = inputFile((UInt64(out.st_dev), UInt64(out.st_ino)), inputs: inputs) {
            return "\(stream) is \(other) under another name (a hard link), which is read as an input: castscope never writes over an input (redirect it elsewhere, or -o FILE)"
        }
        return nil
    }

    /// Why writing (or removing) `path` would touch an input: it is one, or it is inside an
    /// input folder. Nil when it is neither (or its folder does not exist yet).
    /// Paths are compared as bytes and files by device and inode: an input under a folder
    /// whose name is not UTF-8 (`caf\xe9/in.log`, read as `/proc/self/fd/N`) was compared by
    /// its real path decoded to a String, U+FFFD in place of the byte, which names no file, and
    /// `--force -o` over a hard link to it (or a link to it inside such a folder) replaced it.
    static func inputConflict(_ path: String, option: String, inputs: [String], example: String = "choose another path") -> String? {
        let bytes = BytePath.of(path)
        // A link is replaced where it is, and what it names is not to be touched either: both
        // are checked (a link inside an input folder that points out of it was let through).
        if let link = BytePath.lstat(bytes), (link.st_mode & S_IFMT) == S_IFLNK {
            let (dir, name) = BytePath.split(bytes)
            if let real = BytePath.realpath(dir),
                let why = inputConflict(resolved: BytePath.join(real, name), path, option: option, inputs: inputs, example: example)
            {
                return why
            }
        }
        guard let out = linkTarget(bytes) ?? realBytes(bytes) else { return nil }
        return inputConflict(resolved: out, path, option: option, inputs: inputs, example: example)
    }

    /// `inputConflict` for the output's path `out`, resolved.
    private static func inputConflict(resolved out: [UInt8], _ path: String, option: String, inputs: [String], example: String) -> String? {
        let path = shown(path)
        // Standard input redirected from a file (`castscope analyze -o F - < F`) is that file.
        if inputs.contains("-") {
            var read = stat()
            if fstat(0, &read) == 0, (read.st_mode & S_IFMT) == S_IFREG, let written = BytePath.stat(out),
                read.st_dev == written.st_dev, read.st_ino == written.st_ino
            {
                return "\(option) \(path) is the standard input being read: castscope never writes over an input (\(example))"
            }
        }
        // The output file and each folder above it, by device and inode: a bind mount or a
        // second mount of the same file system names an input by another path (`-o
        // alias/in.txt in.txt --force` replaced the input).
        let outFile = BytePath.stat(out).map { (UInt64($0.st_dev), UInt64($0.st_ino)) }
        var folders: [(UInt64, UInt64)] = []
        var dir = BytePath.split(out).dir
        while true {
            if let st = BytePath.stat(dir) { folders.append((UInt64(st.st_dev), UInt64(st.st_ino))) }
            if dir == [0x2F] || dir.isEmpty { break }
            dir = BytePath.split(dir).dir
        }
        func under(_ folder: [UInt8]) -> Bool { out.starts(with: folder == [0x2F] ? folder : folder + [0x2F]) }
        for input in inputs where input != "-" {
            let given = BytePath.of(input)
            guard let real = realBytes(given) else { continue }
            // (the input itself by its own bytes: `/proc/self/fd/N` is the file it was opened as)
            let st = BytePath.stat(given) ?? BytePath.stat(real)
            let id = st.map { (UInt64($0.st_dev), UInt64($0.st_ino)) }
            if real == out || (id != nil && outFile.map { $0 == id! } ?? false) {
                return "\(option) \(path) is one of the inputs: castscope never writes over an input (\(example))"
            }
            if let st, let id, (st.st_mode & S_IFMT) == S_IFDIR, under(real) || folders.contains(where: { $0 == id }) {
                return "\(option) \(path) is inside the input folder \(shown(input)): castscope never writes into what it reads"
            }
        }
        // What the links inside the input folders lead to is read too (the walk follows them):
        // a link to a file or a folder outside (`logs/relay -> /var/log/relay`) made that file
        // an input the checks above never saw (`--force -o /var/log/relay/relay.log logs/`
        // replaced it; `-o elsewhere/r.txt` wrote into a folder being read).
        for (link, target) in linkedInputs(inputs) {
            guard let st = BytePath.stat(target) else { continue }
            let id = (UInt64(st.st_dev), UInt64(st.st_ino))
            if target == out || outFile.map({ $0 == id }) ?? false {
                return "\(option) \(path) is read as an input through the link \(link): castscope never writes over an input (\(example))"
            }
            if (st.st_mode & S_IFMT) == S_IFDIR, under(target) || folders.contains(where: { $0 == id }) {
                return "\(option) \(path) is inside the folder the link \(link) leads to, which is read as an input: castscope never writes into what it reads"
            }
        }
        return nil
    }

    nonisolated(unsafe) private static var linkedCache: (inputs: [String], links: [(link: String, target: [UInt8])])?

    /// The links inside the input folders, as the walk (`Bundle.walkPath`) meets them: names
    /// beginning with `.` passed over, links to folders followed, each folder once (by device
    /// and inode), no deeper than the walk goes (`BundleWalker.maxFolderDepth`). Each as shown,
    /// with its target's real path in bytes. Folders are opened one from the other by their
    /// names' bytes (`openat`): a name that is not UTF-8 (which the walk reads) hid the links
    /// under it, and a tree thousands deep is neither past PATH_MAX nor a deep recursion. Only
    /// links cost a `stat`; the rest is `readdir`'s own type (100,000 files: a few milliseconds).
    static func linkedInputs(_ inputs: [String]) -> [(link: String, target: [UInt8])] {
        if let cached = linkedCache, cached.inputs == inputs { return cached.links }
        let links = walkInputFolders(inputs, file: nil)
        linkedCache = (inputs, links)
        return links
    }

    /// An input folder's file (as shown) that is the file `id` (device and inode) under
    /// another name: a hard link into a folder being read.
    static func inputFile(_ id: (dev: UInt64, ino: UInt64), inputs: [String]) -> String? {
        var found: String?
        _ = walkInputFolders(inputs) { fd, name, shown in
            var st = stat()
            guard found == nil, BytePath.with(name, { fstatat(fd, $0, &st, 0) }) == 0, UInt64(st.st_dev) == id.dev, UInt64(st.st_ino) == id.ino
            else { return }
            found = shown
        }
        return found
    }

    /// The walk `linkedInputs` makes: the links met, and `file` called with each other entry
    /// that is no folder (its folder open, its name, and as shown).
    private static func walkInputFolders(_ inputs: [String], file: ((Int32, [UInt8], String) -> Void)?) -> [(link: String, target: [UInt8])] {
        var links: [(link: String, target: [UInt8])] = []
        var seen = Set<[UInt64]>()
        // `fd`: the folder, open (closed here); `shown`: its name as shown; `depth`: folders above it.
        func scan(_ fd: Int32, _ shown: String, depth: Int) {
            defer { close(fd) }
            var st = stat()
            guard depth < BundleWalker.maxFolderDepth, fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR,
                seen.insert([UInt64(st.st_dev), UInt64(st.st_ino)]).inserted
            else { return }
            let listing = dup(fd)
            guard listing >= 0, let handle = fdopendir(listing) else {
                if listing >= 0 { close(listing) }
                return
            }
            var children: [([UInt8], UInt8)] = []
            while let ent = readdir(handle) {
                let name = withUnsafeBytes(of: ent.pointee.d_name) { buf in
                    Array(buf[..<(buf.firstIndex(of: 0) ?? buf.count)])
                }
                if name.first == 0x2E { continue }
                children.append((name, ent.pointee.d_type))
            }
            closedir(handle)
            for (name, type) in children {
                let child = (shown.hasSuffix("/") ? shown : shown + "/") + (String(validating: name, as: UTF8.self) ?? BundleWalker.escapedName(name))
                var kind = type
                if kind == UInt8(DT_UNKNOWN) {
                    var l = stat()
                    guard BytePath.with(name, { fstatat(fd, $0, &l, AT_SYMLINK_NOFOLLOW) }) == 0 else { continue }
                    kind = (l.st_mode & S_IFMT) == S_IFLNK ? UInt8(DT_LNK) : (l.st_mode & S_IFMT) == S_IFDIR ? UInt8(DT_DIR) : UInt8(DT_REG)
                }
                if kind == UInt8(DT_DIR) {
                    let sub = BytePath.with(name) { openat(fd, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
                    if sub >= 0 { scan(sub, child, depth: depth + 1) }
                } else if kind == UInt8(DT_LNK), let target = BytePath.realpath(Array("/proc/self/fd/\(fd)/".utf8) + name) {
                    links.append((child, target))
                    let sub = BytePath.with(target) { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
                    if sub >= 0 { scan(sub, child, depth: depth + 1) } else { file?(fd, name, child) }
                } else {
                    file?(fd, name, child)
                }
            }
        }
        for input in inputs where input != "-" {
            let fd = BytePath.with(BytePath.of(input)) { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
            if fd >= 0 { scan(fd, shown(input), depth: 0) }
        }
        return links
    }

    /// Whether the file begins as a report castscope writes begins: the text header
    /// (`castscope: 2 files, …`), the JSON schema, the Markdown title, the HTML page's generator,
    /// the Perfetto trace's. (Any file naming castscope in its first 4 KB was taken for one: a
    /// user's notes or a README about it were replaced without --force.)
    static func writtenByCastscope(_ path: String) -> Bool {
        guard let f = BytePath.with(BytePath.of(path), { fopen($0, "rb") }) else { return false }
        defer { fclose(f) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = fread(&buffer, 1, buffer.count, f)
        return OwnReports.begins(buffer[0..<n])
    }

    /// Writes `text` to the target: standard output directly; a regular file through a
    /// temporary file beside it renamed over it; anything else (a device, a FIFO) directly.
    /// Returns a one-line error, or nil.
    static func write(_ text: String, to target: OutputTarget) -> String? {
        var text = text
        return text.withUTF8 { write(UnsafeRawBufferPointer($0), to: target) }
    }

    /// The same for a report rendered as bytes (JSON: no `String` of the whole document).
    static func write(_ bytes: [UInt8], to target: OutputTarget) -> String? {
        bytes.withUnsafeBytes { write($0, to: target) }
    }

    static func write(_ text: UnsafeRawBufferPointer, to target: OutputTarget) -> String? {
        write(to: target) { writeAll(text, to: $0) }
    }

    /// Writes what `body` writes to the stream it is given (false: a write failed), in the
    /// same way as a whole report: for reports written in parts (`StreamedReport`).
    static func write(to target: OutputTarget, _ body: (UnsafeMutablePointer<FILE>) -> Bool) -> String? {
        if target.isStdout || standardStream(target.path) == 1 {
            if stdoutGone { return nil }
            clearerr(stdout)
            let ok = body(stdout) && fflush(stdout) == 0
            if !ok && errno == EPIPE && stdoutMayClose {
                stdoutGone = true
                return nil
            }
            return ok ? nil : "standard output: cannot write: \(String(cString: strerror(errno)))"
        }
        if standardStream(target.path) == 2 {
            let ok = body(stderr) && fflush(stderr) == 0
            return ok ? nil : "standard error: cannot write: \(String(cString: strerror(errno)))"
        }
        // (a symlink otherwise is replaced, not written through: one planted where a report
        // goes, say in /tmp, must not make a root run write where it points)
        let path = shown(target.path), bytes = BytePath.of(target.path)
        let found = BytePath.stat(bytes)
        let exists = found != nil
        let st = found ?? stat()
        // (another descriptor named, `/dev/fd/3`: written through when open, never replaced)
        if let fd = namedDescriptor(target.path), !exists || StandardDescriptors.wasClosed(fd) { return "\(path): file descriptor \(fd) is not open" }
        if exists && ((st.st_mode & S_IFMT) != S_IFREG || namedDescriptor(target.path) != nil) {
            guard let f = BytePath.with(bytes, { fopen($0, "w") }) else { return "\(path): cannot write: \(String(cString: strerror(errno)))" }
            let ok = body(f) && fflush(f) == 0
            let e = errno
            let closed = fclose(f) == 0
            return ok && closed ? nil : "\(path): cannot write: \(String(cString: strerror(ok ? errno : e)))"
        }
        // (an argument that is not UTF-8 is made in its folder, `/proc/self/fd/N/caf\xe9.txt`,
        // under a temporary name of its shown form, and renamed to its own bytes)
        let (dirBytes, nameBytes) = BytePath.split(bytes)
        let dir = String(decoding: dirBytes, as: UTF8.self)
        let name = String(validating: nameBytes, as: UTF8.self) ?? BundleWalker.escapedName(nameBytes)
        var template = Array((dir + "/." + name + ".castscope-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return "\(path): cannot write: \(String(cString: strerror(errno)))" }
        let temporary = String(cString: template)
        // (removed if Ctrl-C ends the run while it is written)
        TemporaryRoot.removeOnSignal(temporary)
        defer { TemporaryRoot.forgetOnSignal(temporary) }
        // The report keeps the permissions of the file it replaces; a new one gets what the
        // umask gives a new file, as `>` does (it was 0644 whatever the umask: under umask 077 a
        // report of a customer's logs in a shared /tmp was world-readable).
        fchmod(fd, exists ? st.st_mode & 0o7777 : newFileMode)
        guard let f = fdopen(fd, "w") else {
            close(fd)
            unlink(temporary)
            return "\(path): cannot write: \(String(cString: strerror(errno)))"
        }
        var ok = body(f) && fflush(f) == 0 && fsync(fd) == 0
        var e = errno
        if fclose(f) != 0 && ok { ok = false; e = errno }
        if ok && BytePath.with(bytes, { rename(temporary, $0) }) != 0 { ok = false; e = errno }
        if !ok {
            unlink(temporary)
            return "\(path): cannot write: \(String(cString: strerror(e)))"
        }
        return nil
    }

    /// 0666 less the umask (read once; umask can only be read by setting it).
    static let newFileMode: mode_t = {
        let mask = umask(0o077)
        umask(mask)
        return 0o666 & ~mask
    }()

    static func writeAll(_ buf: UnsafeRawBufferPointer, to f: UnsafeMutablePointer<FILE>) -> Bool {
        ByteSpill.writeAll(buf, to: f)
    }

    static func writeAll(_ b: OutputBuffer, to f: UnsafeMutablePointer<FILE>) -> Bool {
        b.withUnsafeBytes { writeAll(UnsafeRawBufferPointer($0), to: f) }
    }

    static func writeAll(_ text: String, to f: UnsafeMutablePointer<FILE>) -> Bool {
        var text = text
        return text.withUTF8 { writeAll(UnsafeRawBufferPointer($0), to: f) }
    }
}

/// The bytes on disk under the given paths (files, and folders walked without hidden entries
/// as the bundle walker does), for the progress line's percentage; nil for standard input.
func bytesOnDisk(_ paths: [String]) -> UInt64? {
    var total: UInt64 = 0
    var budget = 100_000  // entries: a progress line is not worth a long walk
    func add(_ path: String) {
        var st = stat()
        guard budget > 0, stat(path, &st) == 0 else { return }
        budget -= 1
        switch st.st_mode & S_IFMT {
        case S_IFREG: total += UInt64(st.st_size)
        case S_IFDIR:
            guard let d = opendir(path) else { return }
            defer { closedir(d) }
            while let e = readdir(d) {
                let name = withUnsafeBytes(of: e.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name.hasPrefix(".") { continue }
                add(path.hasSuffix("/") ? path + name : path + "/" + name)
            }
        default: break
        }
    }
    if paths.contains("-") { return nil }
    for p in paths { add(p) }
    return total > 0 ? total : nil
}

/// One error line on stderr, `castscope: error: …`, with whatever came from an input (a
/// file name, a config key, a server's answer) escaped: never a control sequence, never cut
/// short by a NUL, always one line.
func printError(_ text: String) {
    fputs("castscope: error: " + Sanitize.line(text) + "\n", stderr)
}

/// Paths as the kernel takes them: bytes, which a String cannot always hold (a name that is not
/// UTF-8 is repaired to U+FFFD, and then names another file or none). What compares an output
/// with the inputs, and writes an output given by such bytes, works on these.
enum BytePath {
    /// The bytes `path` stands for: an argument that was not UTF-8 by its own bytes
    /// (`BundleWalker.rawPaths`), any other path by its UTF-8.
    static func of(_ path: String) -> [UInt8] { BundleWalker.rawPaths[path] ?? Array(path.utf8) }

    /// `body` given the path as a C string.
    static func with<T>(_ path: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        (path + [0]).withUnsafeBufferPointer { body(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self)) }
    }

    static func stat(_ path: [UInt8]) -> Glibc.stat? {
        var st = Glibc.stat()
        return with(path) { fstatat(AT_FDCWD, $0, &st, 0) } == 0 ? st : nil
    }

    static func lstat(_ path: [UInt8]) -> Glibc.stat? {
        var st = Glibc.stat()
        return with(path) { fstatat(AT_FDCWD, $0, &st, AT_SYMLINK_NOFOLLOW) } == 0 ? st : nil
    }

    /// realpath(3): links resolved, nil when the path does not exist.
    static func realpath(_ path: [UInt8]) -> [UInt8]? {
        guard let r = with(path, { Glibc.realpath($0, nil) }) else { return nil }
        defer { free(r) }
        return Array(UnsafeRawBufferPointer(start: r, count: strlen(r)))
    }

    /// What link `path` points to, relative to its folder resolved; nil when it is no link.
    static func readLink(_ path: [UInt8]) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = with(path) { p in buffer.withUnsafeMutableBytes { Glibc.readlink(p, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count - 1) } }
        guard n > 0 else { return nil }
        let target = Array(buffer[0..<n])
        return target.first == 0x2F ? target : split(path).dir + [0x2F] + target
    }

    static func split(_ path: [UInt8]) -> (dir: [UInt8], name: [UInt8]) {
        guard let slash = path.lastIndex(of: 0x2F) else { return ([0x2E], path) }
        return (slash == 0 ? [0x2F] : Array(path[..<slash]), Array(path[(slash + 1)...]))
    }

    /// `name` in folder `dir` (`split`'s inverse; the root without a doubled slash).
    static func join(_ dir: [UInt8], _ name: [UInt8]) -> [UInt8] {
        (dir == [0x2F] ? [] : dir) + [0x2F] + name
    }
}

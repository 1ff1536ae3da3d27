#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the first bytes of a stream say it is.
public enum ContentKind: String, Sendable {
    case gzip, zip, tar, journal, text
    /// xz, bzip2, zstd or lz4 (`Compression`), decompressed through libarchive.
    case compressed
    /// An Apple Unified Logging tracev3 file (header chunk 0x1000, 208 bytes).
    case tracev3
}

/// What a stream's first bytes say it is (`tail -` refuses what is not text).
public func sniffContent(_ head: [UInt8]) -> ContentKind { sniff(head) }

func sniff(_ head: [UInt8]) -> ContentKind {
    if head.count >= 2 && head[0] == 0x1F && head[1] == 0x8B { return .gzip }
    if Compression.sniff(head) != nil { return .compressed }
    if head.count >= 4 && head[0] == 0x50 && head[1] == 0x4B
        && ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6))
    {
        return .zip
    }
    if head.count >= 262 && Array(head[257..<262]) == Array("ustar".utf8) { return .tar }
    if head.count >= 8 && Array(head[0..<8]) == Array("LPKSHHRH".utf8) { return .journal }
    if head.count >= 16 && head[0..<4] == [0x00, 0x10, 0x00, 0x00] && head[8..<16] == [0xD0, 0, 0, 0, 0, 0, 0, 0] { return .tracev3 }
    return .text
}

/// Walks every input path (files, folders, archives inside archives, `-` for stdin) and
/// hands each text member to `visit` as a stream with its display path
/// (`bundle.tar.gz!logs/app.zip!ext.log`). Problems go to `report` and the walk goes on.
public struct BundleWalker {
    /// Limits on bytes, members, nesting and expansion (see `Budget`).
    public var budget = Budget()
    public var maxNesting: Int {
        get { budget.maxNesting }
        set { budget.maxNesting = newValue }
    }
    /// Inputs held in memory, read instead of a file when a path is one of their names.
    public var memory: [String: [UInt8]] = [:]
    /// Error lines shown per input given on the command line; the rest are counted in one line.
    public var maxProblemsPerInput = 50
    public var visit: (String, ByteSource) throws -> Void
    /// Text files on disk (not members, not stdin), offered first: return true when handled
    /// (the analyzer reads big files in parallel ranges).
    public var visitFile: ((String, String) throws -> Bool)?
    public var report: (InputError) -> Void
    /// Binary journal files, handed over for sd-journal reading: the display path, the path on
    /// disk when the file is one (not an archive member or stdin), and the stream.
    public var journal: ((String, String?, ByteSource) throws -> Void)?
    /// Apple Unified Logging (Input/LogArchive.swift): a `.logarchive` folder (display path,
    /// folder on disk) — archive members are spilled to a private folder first — and tracev3
    /// files met on their own (display path, the path on disk when a file, the stream).
    public var logArchive: ((String, String) -> Void)?
    public var unifiedLog: ((String, String?, ByteSource) throws -> Void)?
    /// A note on an input that loses nothing but is worth a word (an archive's symbolic links,
    /// not followed): the input's display path and the note. Not an error (the exit code stays).
    public var note: ((String, String) -> Void)?
    /// Apple diagnostic reports (`*.ips`): display path and the stream.
    public var ips: ((String, ByteSource) throws -> Void)?
    /// How well the known formats recognize a head's lines (`FormatDetector.bestScore`): a
    /// prefix every line carries comes off only when the lines are recognized better without
    /// it (`quotePrefix`). Unset, it always does.
    public var recognition: (([UInt8]) -> Int)?
    /// How many of a head's lines the known formats read with a time (`FormatDetector.bestTimedScore`).
    public var timedRecognition: (([UInt8]) -> Int)?

    public init(visit: @escaping (String, ByteSource) throws -> Void,
                report: @escaping (InputError) -> Void)
    {
        self.visit = visit
        self.report = report
    }

    public func walk(_ paths: [String]) {
        let tally = BudgetTally(budget)
        // (arguments not held open: the first five named, the rest counted in one line)
        var notHeld: [String] = []
        defer {
            if notHeld.count > 5 {
                report(InputError(path: notHeld[5], "and \(notHeld.count - 6) more arguments after it: not read, as the one above"))
            }
        }
        for path in paths {
            // Each input's problems are shown up to a limit (a bomb of broken members, a folder of
            // 100,000 unreadable files); the rest are counted in one line.
            var shown = 0
            var hidden = 0
            var walker = self
            walker.report = { error in
                if shown < maxProblemsPerInput || error.message.contains("budget: ") {
                    shown += 1
                    report(error)
                } else {
                    hidden += 1
                }
            }
            tally.rootSize = nil
            tally.rootBytes = 0
            tally.rootStopped = false
            let display = Self.argumentNames[path] ?? Sanitize.line(path)
            if let shown = Self.argumentsNotHeld[path] {
                notHeld.append(shown)
                if notHeld.count <= 5 { report(InputError(path: shown, "not read: more than \(Self.argumentsHeldAtMost) names that are not UTF-8 on the command line, each held open, and the open-file limit (ulimit -n) is \(Self.openFileLimit): give their folder instead")) }
            } else if let bytes = memory[path] {
                walker.stream(MemorySource(bytes), path: display, depth: 0, tally: tally)
            } else if path == "-" {
                let source = FileSource(fd: 0, path: "-")
                walker.stream(source, path: "<stdin>", depth: 0, tally: tally)
                if source.grew { walker.note?("<stdin>", FileSource.grewNote(from: source.openedEnd, to: source.sizeNow)) }
            } else {
                var walk = FolderWalk()
                walker.walkPath(path, display: display, walk: &walk, tally: tally, topLevel: true)
            }
            if hidden > 0 {
                report(InputError(path: path == "-" ? "<stdin>" : display,
                                  "\(hidden) more problem\(hidden == 1 ? "" : "s") in this input not shown"))
            }
        }
    }

    /// Inputs given on the command line whose names are not UTF-8, by the path they are read
    /// through (`/proc/self/fd/N`), as they are shown (`caf\xe9.log`): set once, before the
    /// command runs (`useArgumentsNotUTF8`).
    nonisolated(unsafe) public private(set) static var argumentNames: [String: String] = [:]

    /// The command line's arguments (without the program's name), each one that is not UTF-8
    /// and names a file or folder opened by its bytes and given as `/proc/self/fd/N` (held open
    /// to the end of the run). Swift's own argument list repairs such bytes to U+FFFD:
    /// `castscope analyze ~/Downloads/*` over a `caf\xe9.log` said "cannot open: No such file
    /// or directory" of a file that is there. Others are as Swift gives them.
    public static func useArgumentsNotUTF8() -> [String] {
        var out: [String] = []
        for i in 1..<Int(CommandLine.argc) {
            guard let arg = CommandLine.unsafeArgv[i] else { continue }
            let bytes = Array(UnsafeRawBufferPointer(start: arg, count: strlen(arg)))
            if let text = String(validating: bytes, as: UTF8.self) {
                out.append(text)
                continue
            }
            // Each is held open to the end of the run: past half the open-file limit, none
            // could be read (1,100 of them under `ulimit -n 1024`: every one "cannot open: Too
            // many open files", named `/proc/self/fd/9`, or "No such file" of a name with
            // U+FFFD in it). Those past it are said, and the others read.
            if argumentsHeld >= argumentsHeldAtMost {
                let repaired = String(decoding: bytes, as: UTF8.self)
                argumentsNotHeld[repaired] = Sanitize.line(escapedName(bytes))
                out.append(repaired)
                continue
            }
            let fd = open(arg, pathOnly | O_CLOEXEC)
            if fd >= 0 { argumentsHeld += 1 }
            guard fd >= 0 else {
                // (kept with its bytes: an output not made yet is reached through its folder,
                // `reachedByBytes`; any other value, a pattern, is as Swift repairs it)
                let repaired = String(decoding: bytes, as: UTF8.self)
                argumentBytes[repaired] = bytes
                out.append(repaired)
                continue
            }
            let through = "/proc/self/fd/\(fd)"
            argumentBytes[through] = bytes
            argumentNames[through] = Sanitize.line(escapedName(bytes))
            out.append(through)
        }
        return out
    }

    /// The soft limit on open files when castscope began.
    static let openFileLimit: Int = {
        var limit = rlimit()
        return getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_cur < 1 << 30 ? Int(limit.rlim_cur) : 1 << 30
    }()
    /// How many arguments that are not UTF-8 are held open at most: half the open-file limit
    /// less what a run keeps open besides (threads' files, spills, journals).
    static let argumentsHeldAtMost = max(16, openFileLimit / 2 - 32)
    nonisolated(unsafe) private static var argumentsHeld = 0
    /// Arguments past that, as Swift repaired them, with their names as shown.
    nonisolated(unsafe) private static var argumentsNotHeld: [String: String] = [:]

    /// Whether `path` is an argument not opened for want of descriptors (said by the walk, not
    /// a path that does not exist).
    public static func wasNotHeld(_ path: String) -> Bool { argumentsNotHeld[path] != nil }

    /// The arguments that are not UTF-8, by what they became (`/proc/self/fd/N`, or as Swift
    /// repaired one that names nothing), with their bytes.
    nonisolated(unsafe) private static var argumentBytes: [String: [UInt8]] = [:]

    /// An output's path as it can be written: for an argument that is not UTF-8, its folder
    /// opened by its bytes, and its name's own bytes in `rawPaths` (what replaces it is made
    /// there, and renamed to them). One that names no file yet (`-o caf\xe9/report.txt`: refused
    /// as "its folder does not exist" of a folder that is there, or made under a name with U+FFFD
    /// in it) is given as `/proc/self/fd/N/report.txt`; any other path is as it is.
    public static func reachedByBytes(_ path: String) -> String {
        guard let bytes = argumentBytes[path], let folder = folderDescriptor(bytes) else { return path }
        let through = argumentNames[path] != nil ? path
            : "/proc/self/fd/\(folder.fd)/" + (String(validating: folder.name, as: UTF8.self) ?? escapedName(folder.name))
        rawPaths[through] = folder.prefix + folder.name
        argumentNames[through] = Sanitize.line(escapedName(bytes))
        return through
    }

    /// The folder of a path given by its bytes, opened by them (held to the end of the run),
    /// and the name in it; nil when it cannot be opened or the path ends in `/`.
    private static func folderDescriptor(_ bytes: [UInt8]) -> (fd: Int32, prefix: [UInt8], name: [UInt8])? {
        let slash = bytes.lastIndex(of: 0x2F)
        let name = Array(slash.map { bytes[($0 + 1)...] } ?? bytes[...])
        let folder: [UInt8] = slash.map { $0 == 0 ? [0x2F] : Array(bytes[..<$0]) } ?? [0x2E]
        guard !name.isEmpty else { return nil }
        let fd = (folder + [0]).withUnsafeBufferPointer {
            open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), pathOnly | O_DIRECTORY | O_CLOEXEC)
        }
        return fd >= 0 ? (fd, Array("/proc/self/fd/\(fd)/".utf8), name) : nil
    }

    /// The same arguments' bytes as the kernel takes them, by the name they are given under
    /// (`argumentNames`' keys): their folder's descriptor and the name's own bytes
    /// (`/proc/self/fd/5/caf\xe9.txt`), for what writes or replaces them (an output) and what
    /// compares them (an output against the inputs).
    nonisolated(unsafe) public private(set) static var rawPaths: [String: [UInt8]] = [:]

    /// How deep folders are walked (`walkPath` recurses once a level).
    public static let maxFolderDepth = 256

    /// Linux's `O_PATH` (a macro Glibc's module does not bring): a descriptor that names a
    /// file without opening it (a FIFO does not block, a device is not touched).
    static let pathOnly: Int32 = 0o10000000

    /// A file name that is not UTF-8, shown: its valid parts as they are, each byte that is
    /// not as `\xHH` (two names that differ stay different).
    public static func escapedName(_ bytes: [UInt8]) -> String {
        var out = String.UnicodeScalarView()
        var i = 0
        // Scalar by scalar: a valid one as it is, the bytes of an invalid sequence one by one.
        while i < bytes.count {
            var rest = bytes[i...].makeIterator()
            var parser = Unicode.UTF8.ForwardParser()
            switch parser.parseScalar(from: &rest) {
            case .valid(let encoded):
                out.append(Unicode.UTF8.decode(encoded))
                i += encoded.count
            case .error(let length):
                for b in bytes[i..<(i + length)] { out.append(contentsOf: "\\x\(hexDigits[Int(b >> 4)])\(hexDigits[Int(b & 15)])".unicodeScalars) }
                i += length
            case .emptyInput:
                i = bytes.count
            }
        }
        return String(out)
    }
    private static let hexDigits = Array("0123456789abcdef")

    /// Members of an archive passed over and said on it: the first five by name, then how many
    /// more (links, FIFOs and devices).
    struct PassedOver {
        private var named: [String] = []
        private var more = 0
        mutating func add(_ note: @autoclosure () -> String) {
            if named.count < 5 { named.append(note()) } else { more += 1 }
        }
        /// The notes: each named, then `more`'s words for the rest, if any.
        func notes(_ moreWords: (Int) -> String) -> [String] { more > 0 ? named + [moreWords(more)] : named }
    }

    /// Standard output's device and inode when it is a regular file.
    static let standardOutput: (UInt64, UInt64)? = {
        var st = stat()
        guard fstat(1, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (UInt64(st.st_dev), UInt64(st.st_ino))
    }()

    /// One input's folder walk: the folders above the one being read (a loop), every folder
    /// read so far (each real folder once: links in a "diamond", every folder linked from two
    /// above it, doubled the walk at each level, 16 levels of a few KB ran for minutes), and the
    /// input's own real path (a link to a folder that holds it is not followed).
    struct FolderWalk {
        var visiting: [(UInt64, UInt64)] = []
        var seen = Set<[UInt64]>()
        var root: String?
    }

    /// The devices of kernel file systems that hold no files (`/proc`, `/sys`, cgroups,
    /// debugfs, …), by the mount points they have here: a link to `/proc` in a bundle walked it
    /// without end.
    static let pseudoFileSystems: Set<UInt64> = {
        var devices = Set<UInt64>()
        for mount in ["/proc", "/sys", "/sys/fs/cgroup", "/sys/kernel/debug", "/sys/kernel/tracing", "/sys/kernel/security", "/dev/pts"] {
            var st = stat()
            if stat(mount, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR { devices.insert(UInt64(st.st_dev)) }
        }
        // (a root that is one of them, in a chroot without /proc mounted: none)
        var root = stat()
        if stat("/", &root) == 0 { devices.remove(UInt64(root.st_dev)) }
        return devices
    }()

    private func walkPath(_ path: String, display: String, walk: inout FolderWalk, tally: BudgetTally,
                          topLevel: Bool = false)
    {
        var st = stat()
        guard stat(path, &st) == 0 else {
            report(InputError(path: display, "cannot open: \(errnoText())"))
            return
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            if let logArchive, isLogArchiveFolder(path) {
                logArchive(display, path)
                // The files a ticket's bundle put in the archive's folder beside its parts (a
                // console copy, an `.ips`, a text log) are read as any file (they were passed
                // over without a word: a jetsam kill's session was lost so).
                for name in logArchiveStrays(path) {
                    walkPath(path + "/" + name, display: (display.hasSuffix("/") ? display : display + "/") + Sanitize.line(name),
                             walk: &walk, tally: tally)
                }
                return
            }
            let key = (UInt64(st.st_dev), UInt64(st.st_ino))
            if walk.visiting.contains(where: { $0 == key }) {
                report(InputError(path: display, "symlink loop (directory already being read), skipped"))
                return
            }
            if Self.pseudoFileSystems.contains(UInt64(st.st_dev)) {
                report(InputError(path: display, "a kernel file system (/proc, /sys and the like), not logs: not read"))
                return
            }
            let real = realpath(path, nil).map { p in defer { free(p) }; return String(cString: p) }
            if topLevel {
                walk.root = real
            } else if let real, let root = walk.root, real == "/" || root.hasPrefix(real.hasSuffix("/") ? real : real + "/") {
                // (a link up the tree, `ln -s / bundle/root`, `ln -s .. bundle/up`: the input again
                // and all around it, the host's whole disk for `/`)
                report(InputError(path: display, "a link to \(Sanitize.line(real)), a folder that holds the input: not followed"))
                return
            }
            // (a folder reached again through a link, `latest -> 2026-12-03`: read once, and
            // nothing said, as `find -L` says nothing of it; its files are the other path's)
            guard walk.seen.insert([key.0, key.1]).inserted else { return }
            // Each folder is a level of this recursion: a tree 3,000 folders deep (made to hurt,
            // or a names-not-UTF-8 chain, which no PATH_MAX stops) overflowed the stack at about
            // 1,700 (SIGSEGV, every input lost). Real bundles are a dozen deep.
            if walk.visiting.count >= Self.maxFolderDepth {
                report(InputError(path: display, "folders nested more than \(Self.maxFolderDepth) deep: this one and what is under it not read"))
                return
            }
            walk.visiting.append(key)
            defer { walk.visiting.removeLast() }
            guard let dir = opendir(path) else {
                report(InputError(path: display, "cannot read folder: \(errnoText())"))
                return
            }
            var names: [String] = []
            // Names that are not UTF-8 (a Windows zip unpacked by a tool that kept its code
            // page's bytes, `caf\xe9.log`), as shown, with their bytes.
            var raw: [String: [UInt8]] = [:]
            while let ent = readdir(dir) {
                let bytes = withUnsafeBytes(of: ent.pointee.d_name) { buf in
                    Array(UnsafeRawBufferPointer(rebasing: buf[..<(buf.firstIndex(of: 0) ?? buf.count)]))
                }
                guard let name = String(validating: bytes, as: UTF8.self) else {
                    if bytes.first == 0x2E { continue }
                    let shown = Self.escapedName(bytes)
                    names.append(shown)
                    raw[shown] = bytes
                    continue
                }
                if name == "." || name == ".." || name.hasPrefix(".") { continue }
                names.append(name)
            }
            closedir(dir)
            for name in names.sorted() {
                let childDisplay = (display.hasSuffix("/") ? display : display + "/") + Sanitize.line(name)
                guard let bytes = raw[name] else {
                    let child = path.hasSuffix("/") ? path + name : path + "/" + name
                    walkPath(child, display: childDisplay, walk: &walk, tally: tally)
                    continue
                }
                // A String holds no such name (it was repaired to U+FFFD, and the file was
                // "cannot open: No such file or directory"): opened by its bytes, then read
                // through its descriptor's name in /proc, held open while it is walked.
                let full = Array(path.utf8) + (path.hasSuffix("/") ? [] : [0x2F]) + bytes + [0]
                let fd = full.withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), Self.pathOnly | O_CLOEXEC) }
                guard fd >= 0 else {
                    report(InputError(path: childDisplay, "cannot open: \(errnoText())"))
                    continue
                }
                walkPath("/proc/self/fd/\(fd)", display: childDisplay, walk: &walk, tally: tally)
                close(fd)
            }
            return
        }
        let type = st.st_mode & S_IFMT
        // A FIFO (`<(zcat x.gz)`, `/dev/stdin` on a pipe) or a character device named on the
        // command line is read as a stream, under the byte budget; inside a folder it could block
        // forever, so it is skipped there, and said so, as are sockets and block devices.
        let isStream = type == S_IFIFO || type == S_IFCHR
        guard type == S_IFREG || (isStream && topLevel) else {
            let what = specialFileName(type) ?? "not a regular file"
            report(InputError(path: display, "\(what): not read\(isStream ? " inside a folder (name it on the command line to read it as a stream)" : ""), skipped"))
            return
        }
        // The file standard output writes (`analyze b > b/report.txt`): the report being
        // written is no input of itself (it was read as one, empty or half written).
        if !topLevel, type == S_IFREG, let out = Self.standardOutput, out == (UInt64(st.st_dev), UInt64(st.st_ino)) { return }
        do {
            let source = try FileSource(path: path, shownAs: display)
            // The expansion ratio is per file on disk (a folder of gzip files: each its own).
            tally.rootSize = isStream ? nil : UInt64(st.st_size)
            tally.rootBytes = 0
            tally.rootStopped = false
            if isStream {
                stream(source, path: display, depth: 0, tally: tally)
            } else {
                stream(source, path: display, depth: 0, diskPath: path, tally: tally)
                if source.grew, let now = fileSize(path) { note?(display, FileSource.grewNote(from: source.openedSize, to: now)) }
            }
        } catch let e as InputError {
            report(e)
        } catch {
            report(InputError(path: display, "\(error)"))
        }
    }

    /// The byte order of a UTF-16 head that opens a diagnostic report (an `.ips` by its name,
    /// or by its JSON header line), else nil.
    static func utf16Report(_ head: [UInt8], path: String) -> UTF16Source.Order? {
        guard let order = UTF16Source.detect(head) else { return nil }
        let text = UTF16Source.decoded(head, order)
        let named = path.hasSuffix(".ips") || path.hasSuffix(".ips.synced")
        return named && IPSReport.mayBeReport(text) && !text.isEmpty || IPSReport.opensReport(text) ? order : nil
    }

    /// The first bytes read to tell what a stream is (and whether its text needs a source of
    /// its own: an Xcode entry's metadata line can follow a first message of a few hundred bytes).
    static let headBytes = 4096

    /// Text read through a source of its own, by one reader (never in ranges, nor streamed
    /// as it is read): terminal colours (`TerminalEscapeSource`), docker compose output
    /// (`ComposePrefixSource`), Markdown notes (`MarkdownSource`), Xcode's console with metadata,
    /// lines broken at a terminal's width (`HardWrapSource`).
    /// (A prefix common to the lines is a reason here whether or not it then comes off: the
    /// cheap test, not `quotePrefix`'s scoring, which runs once, when the file is read.)
    static func readsThroughOwnSource(path: String, head: [UInt8]) -> Bool {
        TerminalEscapeSource.detect(head) || ComposePrefixSource.detect(head) || MarkdownSource.isMarkdown(path)
            || XcodeMetadataSource.detect(head) || UTF16Source.detect(head) != nil || UTF8MarkSource.detect(head)
            || QuotedLinesSource.detect(head) != nil || QuotedLinesSource.toolPrefix(head) != nil || HardWrapSource.layout(head) != nil
            || TimeLeadSource.likely(head) || TimeLeadSource.untimedLead(head) != nil || StringLiteralLinesSource.detect(head) || JavaLoggingSource.detect(head)
    }

    /// The lead every line of `head` carries when it is a paste's (an indentation, a quote:
    /// `QuotedLinesSource.detect`; with `recognition`, a tool's tag: `toolPrefix`), not the
    /// layout's own. A Console.app copy whose type column is empty begins every line with a
    /// TAB, the prefix a code block's would be; indented, its lines share four spaces and that
    /// TAB. With `recognition`, the part of the lead taken off is the one whose lines are
    /// recognized best (the longest of equals), and none when the lines as they are are
    /// recognized better still; a tool's tag comes off only when the lines are recognized
    /// better without it.
    static func quotePrefix(_ head: [UInt8], recognition: (([UInt8]) -> Int)?) -> [UInt8]? {
        let (found, passedLeadIn) = QuotedLinesSource.detectPastLeadIn(head)
        guard let prefix = found else {
            // A tool's tag before every line: off only when that reads the lines better.
            guard let recognition, let tag = QuotedLinesSource.toolPrefix(head),
                recognition(QuotedLinesSource.stripped(head, prefix: tag)) > recognition(head)
            else { return nil }
            return tag
        }
        guard let recognition else { return passedLeadIn ? nil : prefix }
        var best = (prefix: prefix, score: recognition(QuotedLinesSource.stripped(head, prefix: prefix)))
        // Shorter parts that end where one kind of lead byte gives way to another (four
        // spaces, then a TAB; `>`, then its space): a run of one byte is the paste's or not.
        for k in stride(from: prefix.count - 1, through: 1, by: -1) where prefix[k] != prefix[k - 1] {
            let part = Array(prefix[..<k])
            let score = recognition(QuotedLinesSource.stripped(head, prefix: part))
            if score > best.score { best = (part, score) }
        }
        // Found past a sentence above the block: only when the lines read better without it
        // (an `Exception in thread …` line keeps its frames' tabs).
        if passedLeadIn { return recognition(head) >= best.score ? nil : best.prefix }
        return recognition(head) > best.score ? nil : best.prefix
    }

    /// `text` without another tool's time (or line number) before every line, when the log
    /// behind it has times of its own (`TimeLeadSource`), and its head so: off when a layout
    /// then reads with a time nearly as many lines as with it, or nearly all the lines with a
    /// time of their own. (Read with it, a layout that takes any first time, `timestamped` or
    /// Xcode's, reads them as often, but with the tool's times: `log show` behind `ts` was
    /// read so, 29 lines of its head against 27 without; an excerpt that begins inside a stack
    /// trace has few lines with times. Counted with times: an Xcode console whose one message
    /// began with a clock lost every time, its lines read as well by the untimed layout.)
    private func withoutTimeLead(_ text: ByteSource, head: [UInt8]) -> (text: ByteSource, head: [UInt8]) {
        guard let timedRecognition, let (lead, ownTimes, _) = TimeLeadSource.detectCounting(head) else {
            // (kubectl's or grep's lead before lines with no time: off, as no log writes it)
            if let lead = TimeLeadSource.untimedLead(head) { return (TimeLeadSource(text, lead: lead), TimeLeadSource.stripped(head, lead: lead)) }
            return (text, head)
        }
        let bare = TimeLeadSource.stripped(head, lead: lead)
        let timedBare = timedRecognition(bare)
        guard timedBare > 0, timedBare * 5 >= min(timedRecognition(head), ownTimes) * 4 else { return (text, head) }
        return (TimeLeadSource(text, lead: lead), bare)
    }

    /// Sniffs `source` and dispatches it: decompress, open as archive, or hand over as text.
    func stream(_ source: ByteSource, path: String, depth: Int, diskPath: String? = nil, tally: BudgetTally = BudgetTally(Budget())) {
        // Once a budget is spent, what is left of the compressed inputs is not read (a file on
        // disk read as it is still is).
        if tally.stopped && (depth > 0 || diskPath == nil) { return }
        do {
            // (damage within the first bytes is met again after them, with its offset)
            let (head, replay) = try readHead(Self.headBytes, from: source)
            let kind = sniff(head)
            if tally.exhausted && (kind != .text || diskPath == nil) {
                report(InputError(path: path, "not read: the bundle budget is spent (see the error above)"))
                return
            }
            if kind != .text && depth >= maxNesting {
                report(InputError(path: path, "archives nested more than \(maxNesting) deep, skipped"))
                return
            }
            switch kind {
            case .gzip:
                // Inflate with our own zlib stream, on another core, ahead of the parser; the
                // inflated bytes are sniffed again (text, a tar, a zip or a journal).
                stream(ReadAheadSource(try GzipSource(input: replay, path: path)), path: path, depth: depth + 1, tally: tally)
            case .compressed:
                // Decompressed on another core, ahead of the parser, and sniffed again. A stream
                // cut within its first block comes out as it went in (libarchive passes bytes it
                // cannot decompress through): that is damage, not another layer (a .tar.bz2 cut
                // at 10 bytes was "archives nested more than 8 deep").
                let kind = Compression.sniff(head)!
                let (inner, innerReplay) = try readHead(Self.headBytes, from: try decompressed(replay, path: path, kind))
                if !inner.isEmpty, inner == Array(head.prefix(inner.count)) {
                    report(InputError(path: path, "\(kind.rawValue) data that does not decompress (cut short, or damaged in its first block)"))
                    return
                }
                stream(ReadAheadSource(innerReplay), path: path, depth: depth + 1, tally: tally)
            case .zip, .tar:
                try readArchive(replay, path: path, depth: depth, zipOnDisk: kind == .zip ? diskPath : nil, tally: tally)
            case .journal:
                if let journal {
                    try journal(path, diskPath, diskPath == nil ? BudgetSource(replay, tally: tally, path: path) : replay)
                } else {
                    report(InputError(path: path, "binary journal file: not read by this build"))
                }
            case .tracev3:
                if let unifiedLog {
                    // (a member copied to disk to be read: counted as it is copied)
                    try unifiedLog(path, diskPath, diskPath == nil ? BudgetSource(replay, tally: tally, path: path) : replay)
                } else {
                    report(InputError(path: path, "Apple tracev3 file: not read by this build"))
                }
            case .text where ips != nil && Self.utf16Report(head, path: path) != nil:
                // An `.ips` saved as UTF-16 (Windows' Notepad "Unicode", PowerShell's `>`) was
                // read as plain text: its kill or crash lost. Decoded to UTF-8 and sniffed again.
                stream(UTF16Source(replay, Self.utf16Report(head, path: path)!), path: path, depth: depth + 1, tally: tally)
            case .text where ips != nil && (path.hasSuffix(".ips") || path.hasSuffix(".ips.synced")) && IPSReport.mayBeReport(head):
                try ips!(path, replay)
            case .text:
                var replay = replay
                if ips != nil, IPSReport.opensReport(head) {
                    // An `.ips` by its header line (a report renamed by a mail or ticket system
                    // was "nothing recognized"): read as one when it parses, else as text (a
                    // report pasted with its middle elided: its process entries are read there).
                    let limit = 16 << 20
                    let bytes = try readUpTo(limit + 1, from: replay)
                    // (a report whose body is text is read as text: its lines are cited)
                    // (one that cannot be read is said as an `.ips` is, whatever its name, unless
                    // a JetsamEvent's: a crash report cut before its exception has no lines that
                    // text could read, and was "nothing recognized" under another name)
                    let parsed = bytes.count <= limit ? Result { try IPSReport.parseAll(String(decoding: bytes, as: UTF8.self), path: path).reports } : nil
                    let unreadable = if case .failure = parsed { IPSReport.headerBugType(head) != "298" } else { false }
                    if unreadable || (try? parsed?.get())?.contains(where: \.fromText) == false {
                        // (through the UTF-16 decoder it came from, if it did: its errors' bytes)
                        try ips!(path, replay.utf16Origin == nil ? MemorySource(bytes) : PrefixedSource(prefix: bytes, rest: replay))
                        return
                    }
                    replay = PrefixedSource(prefix: bytes, rest: replay)
                }
                // (a short file of NULs alone too: it has no block of 64 to detect, and was a
                // "binary file" as a long one was)
                let zeros = LeadingZerosSource.detect(head) || head.count < Self.headBytes && !head.isEmpty && !head.contains { $0 != 0 }
                let ownSource = zeros || Self.readsThroughOwnSource(path: path, head: head)
                if !ownSource, let diskPath, let visitFile, try visitFile(path, diskPath) { return }
                var text: ByteSource = diskPath == nil ? BudgetSource(replay, tally: tally, path: path) : replay
                var head = head
                var passedOver: InputError?
                // (said after the file is read: its summary is made then)
                defer { if let passedOver { report(passedOver) } }
                if zeros {
                    // A block of NULs first (logrotate's copytruncate): passed over, said, and
                    // the text after it read as a file of its own.
                    let skipping = LeadingZerosSource(text, path: path, fileSize: diskPath.flatMap(fileSize))
                    (head, text) = try readHead(Self.headBytes, from: skipping)
                    // A file of NULs and nothing else: a log preallocated, or zeroed by a crash
                    // (its blocks allocated, its data never written). It was "binary file (NUL
                    // byte), not a log", which sent the reader looking for another format.
                    guard !head.isEmpty else {
                        report(InputError(path: path, offset: 0, "\(skipping.skipped == 1 ? "its one byte is" : "all \(skipping.skipped) bytes are") NUL (a log preallocated, or zeroed when its system crashed?): nothing to read"))
                        return
                    }
                    passedOver = InputError(path: path, offset: 0, "\(skipping.skipped) NUL bytes at the start passed over (a log truncated while it was written: logrotate's copytruncate?); read from byte \(skipping.skipped)")
                }
                // UTF-16 (a Windows shell's redirect) is made UTF-8 first.
                if let order = UTF16Source.detect(head) {
                    text = UTF16Source(text, order)
                    head = UTF16Source.decoded(head, order)
                } else if UTF8MarkSource.detect(head) {
                    text = UTF8MarkSource(text)
                    head.removeFirst(3)
                }
                // A terminal's colours come off next; what is under them decides the rest.
                let colored = TerminalEscapeSource.detect(head)
                if colored {
                    head = TerminalEscapeSource.stripped(head)
                    text = TerminalEscapeSource(text)
                }
                // A rich-text editor's no-break spaces (between a date and its time): spaces.
                if NoBreakSpaceSource.detect(head) {
                    head = NoBreakSpaceSource.stripped(head)
                    text = NoBreakSpaceSource(text)
                }
                // Every line a JSON string literal (`jq` without `-r`, an array of lines):
                // unquoted when that reads them better.
                if let recognition, StringLiteralLinesSource.detect(head) {
                    let bare = StringLiteralLinesSource.stripped(head)
                    if recognition(bare) > recognition(head) {
                        text = StringLiteralLinesSource(text)
                        head = bare
                    }
                }
                // Every line indented or quoted (`> `, a quote of an indented block): the
                // prefix off, as often as it is nested. (A Markdown file's quotes are its own.)
                for _ in 0..<4 where !MarkdownSource.isMarkdown(path) {
                    guard let prefix = Self.quotePrefix(head, recognition: recognition) else { break }
                    text = QuotedLinesSource(text, prefix: prefix)
                    head = QuotedLinesSource.stripped(head, prefix: prefix)
                }
                (text, head) = withoutTimeLead(text, head: head)
                // Long lines broken at a terminal's width: joined again (told from more lines than
                // the other layouts: a syslog may wrap a line in a hundred).
                let (wrapHead, whole) = try readHead(HardWrapSource.headBytes, from: text)
                text = whole
                // (or broken between words: a mail's or a form's copy)
                if let (width, words) = HardWrapSource.layout(wrapHead) {
                    text = HardWrapSource(text, width: width, words: words)
                }
                if ComposePrefixSource.detect(head) {
                    // `docker compose logs`: the service's name off each line (and a log viewer's
                    // time after it, when the service's lines have their own).
                    let inner = drained(ComposePrefixSource(MemorySource(head)))
                    let (service, serviceHead) = withoutTimeLead(ComposePrefixSource(text), head: inner)
                    // (a Java service's two-line records: `JavaLoggingSource`, below)
                    try visit(path, JavaLoggingSource.detect(serviceHead) ? JavaLoggingSource(service) : service)
                } else if XcodeMetadataSource.detect(head) {
                    // Xcode's console with metadata: each entry one line.
                    try visit(path, XcodeMetadataSource(text))
                } else if JavaLoggingSource.detect(head) {
                    // java.util.logging's two-line records: each pair one line.
                    try visit(path, JavaLoggingSource(text))
                } else if MarkdownSource.isMarkdown(path), !OwnReports.begins(head) {
                    // Its code blocks and quotes (a Markdown file is small; castscope's own
                    // Markdown report is told by its title and not read).
                    try visit(path, try MarkdownSource.open(text))
                } else {
                    try visit(path, text)
                }
            }
        } catch let e as InputError {
            report(e)
        } catch {
            report(InputError(path: path, "\(error)"))
        }
    }

    /// A name for a member whose name an earlier member of its archive has (`tar -rf` appends
    /// a newer copy of a file; zip writers append one): the number of the copy before the
    /// name's first extension, as a download folder names a second copy (`device (2).log`,
    /// `crash (2).ips`), never a name given already. Both members were named alike in every
    /// output, their lines cited alike, and the ClickHouse export gave them one input id and,
    /// line by line, one event id: `FINAL` kept one row of each pair (hostile round 10).
    static func another(_ display: String, names: inout Set<String>) -> String {
        let bang = display.lastIndex(of: "!")!
        let member = display[display.index(after: bang)...]
        let baseStart = member.lastIndex(of: "/").map { member.index(after: $0) } ?? member.startIndex
        // (after the base's first character: a name may end in `/`, a base never begins with `.`)
        let dot = member[baseStart...].dropFirst().firstIndex(of: ".") ?? member.endIndex
        for n in 2... {
            let candidate = String(display[..<dot]) + " (\(n))" + display[dot...]
            if names.insert(candidate).inserted { return candidate }
        }
        return display
    }

    private func readArchive(_ source: ByteSource, path: String, depth: Int, zipOnDisk: String? = nil, tally: BudgetTally) throws {
        let archive = try ArchiveReader(source: source, path: path)
        // A zip on disk: its symbolic links, from its central directory (`zipLinks`); in a zip
        // read as a stream (inside another archive, from standard input) a link is still read
        // as a file holding its target's path.
        let zipLinks = zipOnDisk.map { ArchiveReader.zipLinks(atPath: $0, limit: tally.budget.maxMembers) } ?? [:]
        archive.onDamagedHeader = { [self] in report($0) }
        var spill = logArchive.map { LogArchiveSpill(archivePath: path, hand: $0) }
        defer { spill?.finish() }
        // The names given to this archive's members (`memberName`).
        var names = Set<String>()
        // Symbolic link members (a sysdiagnose tarball holds some): not followed, and said on the
        // archive, the first five by name, then how many more. Skipped without a word before
        // session 51; an error would have made every such tarball exit 1.
        var links = PassedOver()
        // FIFOs, devices and sockets (a tar of a folder a daemon's pipe sat in, of `/dev`): no
        // data to read, said as links are. They were passed over without a word, where a
        // folder on disk names each.
        var specials = PassedOver()
        defer {
            if let note {
                for n in links.notes({ "\($0) more member\($0 == 1 ? " is a link" : "s are links"), not followed" }) { note(path, n) }
                for n in specials.notes({ "\($0) more member\($0 == 1 ? " is a FIFO, device or socket" : "s are FIFOs, devices or sockets"), not read" }) {
                    note(path, n)
                }
            }
        }
        while !tally.stopped {
            let entry: ArchiveReader.Entry?
            do {
                entry = try archive.nextEntry()
            } catch let e as InputError {
                report(e)
                return
            }
            guard var entry else { return }
            // (the same name and the target's length: a link, stored as its target's path)
            if entry.symlink == nil, !zipLinks.isEmpty, let target = zipLinks[entry.name], entry.size == Int64(target.utf8.count) {
                entry.symlink = target
            }
            if let target = entry.symlink {
                let base = entry.name.split(separator: "/").last.map(String.init) ?? entry.name
                if base.hasPrefix(".") || entry.name.hasPrefix("__MACOSX/") { continue }
                links.add("\(Sanitize.line(entry.name)) -> \(Sanitize.line(target)): a link, not followed")
                continue
            }
            if let what = entry.special {
                specials.add("\(Sanitize.line(entry.name)): \(what), no file: not read")
                continue
            }
            guard entry.isRegularFile else { continue }
            var display = path + "!" + Sanitize.line(entry.name)
            tally.members += 1
            if tally.members > tally.budget.maxMembers {
                tally.exhausted = true
                report(InputError(path: display, "bundle budget: more than \(tally.budget.maxMembers) archive members (--max-members); this member and the rest of the archives are not read"))
                return
            }
            if isUnsafeMemberName(entry.name) {
                report(InputError(path: display, "unsafe member name (absolute or '..'), skipped"))
                continue
            }
            let base = entry.name.split(separator: "/").last.map(String.init) ?? entry.name
            if base.hasPrefix(".") || entry.name.hasPrefix("__MACOSX/") { continue }
            if !names.insert(display).inserted { display = Self.another(display, names: &names) }
            // (a member zipped with a password was "damaged archive member: Passphrase
            // required for this entry", at byte 0: not damage, and nothing to retry)
            if entry.isEncrypted {
                report(InputError(path: display, "encrypted member (the zip was made with a password): not read; unzip it with the password and analyze the files"))
                continue
            }
            if spill != nil {
                // (counted against the budgets as it is copied: a 483 KB .tar.xz wrote 3 GB; a
                // member that cannot be copied is that member's error, and the walk goes on)
                do {
                    if try spill!.take(entry.name, BudgetSource(archive.entrySource(displayPath: display), tally: tally, path: display),
                                       display: display) { continue }
                } catch let e as InputError {
                    report(e)
                    continue
                }
            }
            stream(archive.entrySource(displayPath: display), path: display, depth: depth + 1, tally: tally)
        }
    }
}

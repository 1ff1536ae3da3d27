#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Follows a journal on the thread that calls `run()` (sd-journal handles are thread-affine),
/// with an optional cursor file: the cursor is saved only after the entries before it were
/// handed over and flushed, and a restart resumes right after it. When the saved entry no
/// longer exists (rotated and vacuumed away), the gap is reported with its time span.
public struct JournalCursorFollower {
    public enum Source: Sendable {
        case system
        case directory(String)
        case files([String])
    }

    public var source: Source
    public var filter: JournalFilter
    public var cursorFile: String?
    public var fromStart: Bool
    public var reader: JournalReader
    /// How long one wait for new entries may block before `shouldStop` is asked again.
    public var pollMicros: UInt64 = 250_000

    public init(source: Source, filter: JournalFilter, cursorFile: String?, fromStart: Bool, exportFormat: LogFormat) {
        self.source = source
        self.filter = filter
        self.cursorFile = cursorFile
        self.fromStart = fromStart
        reader = JournalReader(format: exportFormat, filter: filter)
    }

    public struct Callbacks {
        /// An entry with a message, and its cursor.
        public var entry: (RawRecord, String, String) -> Void
        /// Called after a batch, before the cursor is saved: output must be flushed here. A
        /// throw (the output could not be written) keeps the cursor where it was and ends `run`.
        public var flush: () throws -> Void
        public var gap: (Int64?, Int64?, String) -> Void
        public var note: (String) -> Void
        /// Called after every wait (about every `pollMicros`).
        public var idle: () -> Void
        public var shouldStop: () -> Bool

        public init(entry: @escaping (RawRecord, String, String) -> Void, flush: @escaping () throws -> Void,
                    gap: @escaping (Int64?, Int64?, String) -> Void, note: @escaping (String) -> Void,
                    idle: @escaping () -> Void, shouldStop: @escaping () -> Bool)
        {
            self.entry = entry
            self.flush = flush
            self.gap = gap
            self.note = note
            self.idle = idle
            self.shouldStop = shouldStop
        }
    }

    /// The journal files sd-journal opens in a folder: its own and those of its folders one
    /// level down named by a machine id (hex, or a UUID), in name order.
    static func journalFiles(in folder: String) -> [String] {
        func entries(_ dir: String) -> [(String, Bool)] {
            guard let d = opendir(dir) else { return [] }
            defer { closedir(d) }
            var out: [(String, Bool)] = []
            while let ent = readdir(d) {
                let name = withUnsafeBytes(of: ent.pointee.d_name) { String(cString: $0.baseAddress!.assumingMemoryBound(to: CChar.self)) }
                guard name != ".", name != ".." else { continue }
                var st = stat()
                guard stat(dir + "/" + name, &st) == 0 else { continue }
                out.append((name, (st.st_mode & S_IFMT) == S_IFDIR))
            }
            return out.sorted { $0.0 < $1.0 }
        }
        func isJournal(_ name: String) -> Bool { name.hasSuffix(".journal") || name.hasSuffix(".journal~") }
        var files: [String] = []
        for (name, isFolder) in entries(folder) {
            if !isFolder {
                if isJournal(name) { files.append(folder + "/" + name) }
            } else if Self.isMachineID(name) {
                files += entries(folder + "/" + name).filter { !$0.1 && isJournal($0.0) }.map { folder + "/" + name + "/" + $0.0 }
            }
        }
        return files
    }

    static func isMachineID(_ name: String) -> Bool {
        let hex = name.utf8.filter { $0 != UInt8(ascii: "-") }
        return (name.utf8.count == 32 || name.utf8.count == 36) && hex.count == 32
            && hex.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) || ($0 >= 65 && $0 <= 70) }
    }

    /// The time of the journal's newest entry, where it is left positioned; nil when empty.
    static func newestTime(_ journal: Journal) throws -> Int64? {
        try journal.seekTail()
        guard try journal.previous() else { return nil }
        return try Int64(exactly: journal.realtime())
    }

    /// The realtime (µs) a cursor names (`t=` field, hex).
    public static func time(ofCursor cursor: String) -> Int64? {
        for part in cursor.split(separator: ";") where part.hasPrefix("t=") {
            return Int64(part.dropFirst(2), radix: 16)
        }
        return nil
    }

    /// The descriptor the printed lines go to (standard output): a batch is committed against
    /// it (see `CursorState`).
    public var outputFD: Int32 = 1
    /// False when the batch's rows go elsewhere too (`tail --clickhouse`): the output having
    /// grown then says nothing of whether they arrived, and a pending batch is read again on
    /// restart (ClickHouse keeps one row per id; the output may show its lines twice). The
    /// output's growth was taken as the whole batch's: a tail stopped while ClickHouse was
    /// down, its output appended to a file, never sent those rows (hostile round 8).
    public var outputShowsDelivery = true
    /// Entries handed over between two commits at most (their lines must fit in the output's
    /// buffer, so that a batch reaches the output in one write).
    public var maxBatch = 256

    /// The saved position, or nil when there is no cursor file (or it does not exist yet).
    /// An empty or garbled file is an error naming it (`--cursor-reset` starts over): it
    /// never silently means "from now".
    public func loadCursor() throws -> String? {
        guard let cursorFile else { return nil }
        guard let state = try CursorState.load(cursorFile) else { return nil }
        return outputShowsDelivery ? state.resolve(outputFD: outputFD) : state.committed
    }

    /// Writes the cursor atomically and durably: temporary file, fsync, rename, fsync of the folder.
    public func saveCursor(_ cursor: String) throws {
        guard let cursorFile else { return }
        try CursorState(committed: cursor).save(cursorFile, durable: true)
    }

    public func run(_ cb: Callbacks) throws {
        let journal: Journal
        let label: String
        switch source {
        case .system:
            journal = try Journal(localSystem: true)
            label = "the system journal"
        case .directory(let d):
            journal = try Journal(directory: d)
            label = d
        case .files(let f):
            journal = try Journal(files: f)
            label = f.joined(separator: ", ")
        }
        for m in filter.matches { try journal.addMatch(m) }
        // `--file`: the files as opened, to tell when one was rotated away (journald renames the
        // active file and starts a new one under its name, which an open file never sees: tail
        // went silent without a word).
        var opened: [(path: String, id: (UInt64, UInt64), size: Int64)] = []
        if case .files(let f) = source {
            for path in f {
                var st = stat()
                if stat(path, &st) == 0 { opened.append((path, (UInt64(st.st_dev), UInt64(st.st_ino)), Int64(st.st_size))) }
            }
        }
        // `-D`: the folder as opened, to tell when it was removed or replaced (sd-journal watches
        // the one opened, and went on waiting on it without a word, also when a new folder
        // came under its name).
        // (held open: a folder removed has no links left, even when a new one took its inode)
        var folder: (path: String, fd: Int32)?
        if case .directory(let d) = source {
            let fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if fd >= 0 { folder = (d, fd) }
        }
        defer { if let folder { close(folder.fd) } }
        var waits = 0
        var pendingFirst = false  // the current entry is new and not yet handed over
        if let saved = try loadCursor() {
            do { try journal.seek(cursor: saved) } catch {
                // (a hand-edited or damaged cursor: the cursor file is named, not the journal)
                throw InputError(path: cursorFile ?? "cursor", "not a cursor this journal can seek to (\(error)): fix it, or pass --cursor-reset")
            }
            // With matches (`-u`, `-t`, `--match`), whether the cursor's entry is in the journal
            // at all, matching or not: one saved on an entry the matches now leave out (a run
            // with other matches) is where to resume, no entry lost (it was said to be a gap).
            var cursorPresent = false
            if !filter.matches.isEmpty {
                journal.flushMatches()
                try journal.seek(cursor: saved)
                cursorPresent = try journal.next() && journal.test(cursor: saved)
                for m in filter.matches { try journal.addMatch(m) }
                try journal.seek(cursor: saved)
            }
            if try journal.next() {
                if journal.test(cursor: saved) {
                    cb.note("following \(label), resuming after the saved cursor")
                } else if cursorPresent {
                    // (the first matching entry after it: new)
                    pendingFirst = true
                    cb.note("following \(label), resuming after the saved cursor")
                } else {
                    // The saved entry is gone: say what may have been lost, then go on.
                    // (a cursor's time after the entry found, year 294247 from a damaged one: no span)
                    let to = try? Int64(journal.realtime())
                    let from = Self.time(ofCursor: saved).flatMap { f in to.map { f <= $0 } ?? true ? f : nil }
                    var span = ""
                    if let from, let to { span = " between \(Fmt.rfc3339(from, offset: 0)) and \(Fmt.rfc3339(to, offset: 0))" }
                    // (or the cursor is another journal's, whose time sd-journal seeks instead: said too)
                    cb.gap(from, to, "the saved cursor's entry is not in this journal (rotated or vacuumed away, or the cursor is another journal's): entries\(span) may be lost")
                    pendingFirst = true
                }
            } else if cursorPresent {
                cb.note("following \(label), resuming after the saved cursor")
            } else if let at = Self.time(ofCursor: saved), let newest = try Self.newestTime(journal), at > newest {
                // Nothing after a cursor ahead of the journal's newest entry (another journal's,
                // or one this journal was rolled back from): every new entry was held back
                // behind it, silently. Followed from the newest entry instead, and said.
                cb.gap(newest, at, "the saved cursor is ahead of this journal's newest entry (another journal's, or one rolled back): following from its newest entry")
                cb.note("following \(label) from its newest entry")
            } else {
                try journal.seek(cursor: saved)
                if try journal.next(), journal.test(cursor: saved) {
                    cb.note("following \(label), resuming after the saved cursor")
                } else if let at = Self.time(ofCursor: saved) {
                    // The saved entry is not in the journal though its time is not past the
                    // newest (one rolled back to a snapshot and written again, a hand-made
                    // cursor): sd-journal sought by its sequence number past the end, and every
                    // entry written since was held behind it, "resuming" with none shown. Followed
                    // from the cursor's time, and said.
                    try journal.seek(realtimeMicros: UInt64(max(0, at)))
                    if try journal.next() {
                        pendingFirst = true
                        let to = try? Int64(journal.realtime())
                        cb.gap(at, to, "the saved cursor's entry is not in this journal (rolled back to an older copy, or the cursor is another journal's): following from its time")
                    } else {
                        cb.gap(at, nil, "the saved cursor's entry is not in this journal (rolled back to an older copy, or the cursor is another journal's): following from its time")
                    }
                    cb.note("following \(label) from the saved cursor's time")
                } else {
                    cb.note("following \(label), resuming after the saved cursor")
                }
            }
        } else if fromStart {
            try journal.seekHead()
            cb.note("following \(label) from its oldest entry")
        } else {
            try journal.seekTail()
            _ = try journal.previous()
            cb.note("following \(label) from now")
        }
        // A file cut short among `-D`'s (a copy that stopped part way): sd-journal passes over
        // it without a word, and its entries were missing from what was followed unsaid.
        if case .directory(let d) = source {
            for path in Self.journalFiles(in: d) {
                let header = JournalHeader.read(path: path)
                if let declared = header?.declaredSize, let size = fileSize(path), declared > size {
                    cb.note("\(path) is cut short (its header says \(declared) bytes, it has \(size)): sd-journal passes over it, so none of its entries is followed; castscope analyze reads those before the cut")
                    continue
                }
                // A file sd-journal will not open on its own (a damaged header: its flags, its
                // state, its sizes) is passed over in the folder without a word too; `analyze`
                // and `tail --file` name it. (Not a file being written, state ONLINE: the one
                // followed most, left to sd-journal alone.)
                if header?.state == 1 { continue }
                do {
                    let alone = try Journal(files: [path])
                    try alone.seekHead()
                } catch {
                    cb.note("\(path): sd-journal refused the file (\(error)): none of its entries is followed")
                }
            }
        }
        // A journal file named with `--file` that is no longer written (archived, or closed
        // cleanly) and damaged in its middle: sd-journal passes over what it cannot read
        // without a word (3,968 of 4,000 relay lines followed, nothing said), where `analyze`
        // names the loss. Its entries are counted once against its header's, when its old
        // entries are followed at all (from the start, or from a saved cursor: not from now).
        if case .files(let f) = source, fromStart || cursorFile.map({ access($0, F_OK) == 0 }) == true {
            for path in f where !cb.shouldStop() {
                guard let header = JournalHeader.read(path: path), header.state != 1, header.entries > 0,
                    let alone = try? Journal(files: [path]), (try? alone.seekHead()) != nil
                else { continue }
                var read: UInt64 = 0
                while read < header.entries, (try? alone.next()) == true {
                    read += 1
                    if read & 0xFFFF == 0, cb.shouldStop() { return }
                }
                if read < header.entries {
                    cb.note("\(path): journal file damaged: its header promised \(header.entries) entries, \(read) can be read: the others are passed over (castscope analyze names where)")
                }
            }
        }
        try journal.prepareWait()
        var record = RawRecord()
        var index = 0
        var committed = try loadCursor()
        /// Exactly once across SIGKILL: before the batch's lines are flushed, the cursor file
        /// records the batch's last cursor as pending with the output's size; after the flush,
        /// the batch is committed (fsynced). A restart that finds a pending batch looks at the
        /// output: when it is the same regular file and grew past that size, the batch was
        /// written and is not repeated; otherwise it is read again.
        func commit(_ cursor: String) throws {
            if let cursorFile {
                try CursorState(committed: committed, pending: cursor, output: outputShowsDelivery ? OutputMark(fd: outputFD) : nil)
                    .save(cursorFile, durable: false)
            }
            do { try cb.flush() } catch {
                // The batch's lines did not all reach the output (a full disk, /dev/full, a
                // closed pipe with SIGPIPE ignored): the cursor stays at the last batch written
                // whole, its pending mark dropped (a file that grew by a torn half-batch would
                // pass for the whole of it on restart). The cursor was saved past every lost
                // line, and tail went on (hostile round 9).
                if let cursorFile { try? CursorState(committed: committed).save(cursorFile, durable: true) }
                throw error
            }
            try saveCursor(cursor)
            committed = cursor
        }
        while true {
            var lastCursor: String?
            var batch = 0
            while true {
                if pendingFirst {
                    pendingFirst = false
                } else {
                    guard try journal.next() else { break }
                }
                index += 1
                record.reset(line: index)
                let cursor = try journal.cursor()
                if reader.fill(&record, from: journal) { cb.entry(record, cursor, label) }
                lastCursor = cursor
                batch += 1
                if batch % maxBatch == 0 || cb.shouldStop() {
                    try commit(cursor)
                    lastCursor = nil
                    if cb.shouldStop() { return }
                }
            }
            if let c = lastCursor { try commit(c) }
            if cb.shouldStop() { return }
            _ = try journal.wait(timeoutMicros: pollMicros)
            cb.idle()
            waits += 1
            if let f = folder, waits % 20 == 0 {
                var st = stat()
                if fstat(f.fd, &st) == 0, st.st_nlink == 0 {
                    let back = stat(f.path, &st) == 0
                    cb.note("\(f.path) was \(back ? "replaced by another folder" : "removed"): the folder opened gets no more entries; start tail again to follow \(back ? "the new one" : "it once it is back")")
                    close(f.fd)
                    folder = nil
                }
            }
            if !opened.isEmpty, waits % 20 == 0 {
                // (looked at every few seconds; each rotated file said once; a file's largest
                // size seen kept, for a cut)
                for k in opened.indices {
                    var st = stat()
                    if stat(opened[k].path, &st) == 0, Int64(st.st_size) > opened[k].size { opened[k].size = Int64(st.st_size) }
                }
                opened.removeAll { file in
                    var st = stat()
                    let now = stat(file.path, &st) == 0 ? (UInt64(st.st_dev), UInt64(st.st_ino)) : nil
                    // (the same file made shorter, `truncate` or a copy over it cut short: tail
                    // went quiet and waited for ever, the entries past the cut lost unsaid)
                    if now.map({ $0 == file.id }) == true, Int64(st.st_size) < file.size {
                        cb.note("\(file.path) became shorter while followed (\(file.size) → \(st.st_size) bytes): the entries past the cut are lost, and sd-journal follows it no further; start tail again to read what is left")
                        return true
                    }
                    guard now.map({ $0 != file.id }) ?? true else { return false }
                    let folder = file.path.lastIndex(of: "/").map { String(file.path[..<$0]) } ?? "."
                    cb.note("\(file.path) was rotated away (\(now == nil ? "it is gone" : "a new file has its name")): the file opened gets no more entries; follow its folder to see the new ones: castscope tail -D \(folder)")
                    return true
                }
            }
        }
    }
}

/// Where the output stood when a batch was about to be flushed: the file (device, inode) and
/// its size (or position, when it is not opened for appending).
struct OutputMark: Equatable {
    var device: UInt64
    var inode: UInt64
    var offset: Int64

    /// The mark of `fd` when it is a regular file; nil for a pipe or a terminal, where what was
    /// written cannot be looked at afterwards.
    init?(fd: Int32) {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        let flags = fcntl(fd, F_GETFL)
        offset = flags >= 0 && (flags & O_APPEND) != 0 ? Int64(st.st_size) : Int64(lseek(fd, 0, SEEK_CUR))
    }

    init(device: UInt64, inode: UInt64, offset: Int64) {
        self.device = device
        self.inode = inode
        self.offset = offset
    }

    /// True when `fd` is the same file and holds bytes past the mark.
    func grew(on fd: Int32) -> Bool {
        var st = stat()
        guard fstat(fd, &st) == 0, UInt64(st.st_dev) == device, UInt64(st.st_ino) == inode else { return false }
        return Int64(st.st_size) > offset
    }
}

/// The cursor file: the committed cursor on its first line (what other tools read), and while a
/// batch is being flushed a second line `pending CURSOR DEV INO OFFSET` (or `pending CURSOR -`
/// when the output is not a regular file).
struct CursorState {
    var committed: String?
    var pending: String?
    var output: OutputMark?

    init(committed: String?, pending: String? = nil, output: OutputMark? = nil) {
        self.committed = committed
        self.pending = pending
        self.output = output
    }

    static func isCursor(_ s: Substring) -> Bool {
        let fields = s.split(separator: ";")
        guard !fields.isEmpty, !s.contains(" ") else { return false }
        let names = Set(fields.map { $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? "" })
        return names.contains("s") && names.contains("i") && names.contains("t")
            && fields.allSatisfy { $0.contains("=") && $0.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F } }
    }

    /// Reads the file; nil when it does not exist. Throws, naming the file, when it is empty or
    /// not a cursor file.
    static func load(_ path: String) throws -> CursorState? {
        var st = stat()
        if stat(path, &st) == 0, (st.st_mode & S_IFMT) != S_IFREG {
            throw InputError(path: path, "the cursor file is not a regular file (castscope replaces it as it saves): name a file")
        }
        let source: FileSource
        do { source = try FileSource(path: path) } catch {
            if errno == ENOENT { return nil }
            throw InputError(path: path, "cannot read the cursor file: \(errnoText())")
        }
        var bytes = try readUpTo(8192, from: source)
        // A cursor saved from an editor: a byte order mark before it, CRLF after it (each was
        // "not a journal cursor", the mark printed raw in the error).
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        // (on the bytes: a String holds CRLF as one Character, never split at "\n")
        bytes = bytes.indices.compactMap { i in bytes[i] == 0x0D && i + 1 < bytes.count && bytes[i + 1] == 0x0A ? nil : bytes[i] }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let reset = "; remove it or start over with --cursor-reset"
        guard let first = lines.first, !bytes.allSatisfy({ $0 == 0x0A || $0 == 0x20 || $0 == 0 }) else {
            throw InputError(path: path, "the cursor file is empty (a write that never finished?)\(reset)")
        }
        var state = CursorState(committed: nil)
        if first != "-" {
            guard isCursor(first) else {
                throw InputError(path: path, line: 1, "not a journal cursor: '\(Sanitize.line(String(first.prefix(80))))'\(reset)")
            }
            state.committed = String(first)
        }
        if lines.count > 1, lines[1].hasPrefix("pending ") {
            let parts = lines[1].split(separator: " ")
            guard parts.count >= 3, isCursor(parts[1]) else {
                throw InputError(path: path, line: 2, "garbled pending batch\(reset)")
            }
            state.pending = String(parts[1])
            if parts.count == 5, let d = UInt64(parts[2]), let i = UInt64(parts[3]), let o = Int64(parts[4]) {
                state.output = OutputMark(device: d, inode: i, offset: o)
            }
        }
        return state
    }

    /// The cursor to resume after: the pending batch's when its lines reached the output.
    func resolve(outputFD: Int32) -> String? {
        if let pending, let output, output.grew(on: outputFD) { return pending }
        return committed
    }

    func save(_ path: String, durable: Bool) throws {
        var text = (committed ?? "-") + "\n"
        if let pending {
            text += "pending \(pending) " + (output.map { "\($0.device) \($0.inode) \($0.offset)" } ?? "-") + "\n"
        }
        let tmp = path + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw InputError(path: tmp, "cannot write the cursor: \(errnoText())") }
        let bytes = Array(text.utf8)
        var ok = bytes.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) } == bytes.count
        if ok && durable { ok = fsync(fd) == 0 }
        let why = errnoText()
        close(fd)
        guard ok else {
            // (a full disk left an empty `.tmp` beside the cursor)
            unlink(tmp)
            throw InputError(path: path, "cannot write the cursor: \(why)")
        }
        guard rename(tmp, path) == 0 else { throw InputError(path: path, "cannot save the cursor: \(errnoText())") }
        if durable {
            let slash = path.lastIndex(of: "/")
            let dir = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
            let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dfd >= 0 {
                _ = fsync(dfd)
                close(dfd)
            }
        }
    }
}

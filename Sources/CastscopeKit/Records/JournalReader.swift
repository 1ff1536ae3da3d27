#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// journalctl-style filters for journal sources (sd-journal files, export and JSON text).
public struct JournalFilter: Sendable {
    /// `FIELD=value` matches: ORed within a field, ANDed across fields.
    public var matches: [String] = []

    public init(matches: [String] = []) { self.matches = matches }

    public var isEmpty: Bool { matches.isEmpty }

    /// Field → accepted values.
    var groups: [(String, [String])] {
        var out: [(String, [String])] = []
        for m in matches {
            guard let eq = m.firstIndex(of: "=") else { continue }
            let k = String(m[..<eq])
            let v = String(m[m.index(after: eq)...])
            if let i = out.firstIndex(where: { $0.0 == k }) { out[i].1.append(v) } else { out.append((k, [v])) }
        }
        return out
    }

    /// Whether an entry whose fields are given by `value(field)` passes.
    func accepts(_ value: (String) -> [String]) -> Bool {
        groups.allSatisfy { field, wanted in value(field).contains(where: wanted.contains) }
    }
}

/// Reads the entries of journal files through sd-journal into records, with the field mapping
/// of the `journal-export` format (so a site's parsers/ override applies here too).
public struct JournalReader {
    public var format: LogFormat
    public var filter: JournalFilter
    /// Entries whose MESSAGE holds no vocabulary anchor are counted, not read field by field.
    public var prefilter: Prefilter?

    /// The format's keys, read in one pass over each entry.
    private let fields: JournalEntryFields

    public init(format: LogFormat, filter: JournalFilter, prefilter: Prefilter? = nil) {
        self.format = format
        self.filter = filter
        self.prefilter = prefilter?.isUseful == true ? prefilter : nil
        fields = JournalEntryFields(format: format)
    }

    public struct Result {
        public var stats = ReadStats()
        public var read = 0
        public var promised: UInt64?
        public var error: String?
        /// Entries whose MESSAGE could not be read (damaged objects, not merely absent).
        public var damaged = 0
        /// The file is shorter than its header says (what was read is what lies before the cut).
        public var cutShort: String?
        /// Why the sink stopped the read (a budget spent: `Stop`), nil when it did not.
        public var stopped: String?

        /// The cut, whether entries were read before it, and what sd-journal said there (nil:
        /// the file is not cut short).
        public var cutShortProblem: String? {
            guard let cutShort else { return nil }
            let before = read > 0 ? "the entries before the cut were read (journalctl reads none of such a file)" : "no entry lies whole before the cut"
            return cutShort + "; " + before + (error.map { "; " + $0 } ?? "")
        }
    }

    /// Thrown by a read's sink to end the read on purpose (`--max-events` spent): said as
    /// `Result.stopped`, not as damage.
    public struct Stop: Error {
        public var message: String
        public init(_ message: String) { self.message = message }
    }

    /// The largest size a file cut short is made up to (a hole) for sd-journal to read it:
    /// journald's files are at most a few GB; a header that says more is no journald's.
    static let largestCutCopy: UInt64 = 1 << 36

    /// Entries read between reopenings of the file. sd-journal maps the file in windows and
    /// keeps what it touched mapped until the handle closes, so a long file would otherwise be
    /// resident in full (a 125 MB file: 98 MB); reopening at the cursor releases the mappings,
    /// and memory stays near what one stretch of entries touches.
    public var reopenEvery = 32768
    static let loopCheckEvery = 4096

    /// Reads one journal file on disk. The record's `line` is the entry's number in the file.
    /// With `from`, reading starts at the entry that cursor names; with `until`, it stops before
    /// the entry that one names (a stretch of the file, from `cuts`; lines then count from the
    /// stretch's first entry).
    public func read(path: String, from: String? = nil, until: String? = nil,
                     _ sink: (inout RawRecord) throws -> Void) -> Result {
        var result = Result()
        let header = JournalHeader.read(path: path)
        result.promised = header?.entries
        // A file cut short (a copy or download that stopped, a ticket's size limit): sd-journal
        // refuses it whole, as journalctl does. journald writes an entry after the data it
        // points to, so the entries before the cut are whole: a private copy as long as the
        // header says (the rest a hole, read as zeros) reads them, and reading stops at the cut.
        var copy: PrivateTemporaryDirectory?
        defer { withExtendedLifetime(copy) {} }
        var path = path
        if let declared = header?.declaredSize, let size = fileSize(path), declared > size {
            let cut = "the file is cut short: its header says \(declared) bytes, it has \(size) (a copy or download that stopped part way?)"
            // (why the copy could not be made: a full or missing TMPDIR was worded as if the
            // file held nothing to read)
            var failed: String?
            if declared <= Self.largestCutCopy {
                do {
                    let made = try PrivateTemporaryDirectory()
                    let copied = try made.write(try FileSource(path: path), name: "cut.journal", display: path)
                    guard truncate(copied, off_t(declared)) == 0 else {
                        throw InputError(path: path, "cannot make its copy as long as its header says: \(errnoText())")
                    }
                    copy = made
                    path = copied
                    result.cutShort = cut
                } catch {
                    failed = (error as? InputError).map { $0.path == path ? $0.message : $0.description } ?? "\(error)"
                }
            }
            if copy == nil {
                result.error = cut + (failed.map { "; its entries before the cut could not be read: \($0)" }
                    ?? "; sd-journal and journalctl read no entry of such a file")
                return result
            }
        }
        func open() throws -> Journal {
            let journal = try Journal(files: [path])
            for m in filter.matches { try journal.addMatch(m) }
            return journal
        }
        var journal: Journal
        do {
            journal = try open()
            if let from { try journal.seek(cursor: from) } else { try journal.seekHead() }
        } catch {
            // (castscope's own finding says itself; sd-journal's errno needs the prefix)
            result.error = (error as? JournalError)?.code == 0 ? "\(error)" : "sd-journal refused the file: \(error)"
            return result
        }
        // The stop entry is tested by its cursor only when its time comes up.
        let stopTime = until.flatMap { JournalCut.field("t", of: $0) }
        var record = RawRecord()
        var index = 0
        // One file's entries come in rising sequence numbers: a damaged entry array that leads
        // back (a header claiming 2^64 entries made sd-journal go round for ever, and the
        // bundle's other files were never reported) is caught at the next look, every
        // `loopCheckEvery` entries.
        var lastSeqnum: UInt64?
        do {
            while try journal.next() {
                if let until, let stopTime, try journal.realtime() == stopTime, journal.test(cursor: until) { break }
                if index > 0 && index % Self.loopCheckEvery == 0, let seqnum = JournalCut.field("i", of: try journal.cursor()) {
                    if let last = lastSeqnum, seqnum <= last {
                        throw JournalError("entry \(index + 1) comes before one read earlier: the file's entries lead back (damaged)", -EBADMSG)
                    }
                    lastSeqnum = seqnum
                }
                if index > 0 && index % reopenEvery == 0, let cursor = try? journal.cursor() {
                    // A fresh handle at the same entry; where damage keeps it from finding that
                    // entry again, the one in hand reads on (its mappings stay: memory, not
                    // entries; giving up there lost 56 % of a file with 1 MB zeroed).
                    if let fresh = try? open(), (try? fresh.seek(cursor: cursor)) != nil, (try? fresh.next()) == true, fresh.test(cursor: cursor) {
                        journal = fresh
                    }
                }
                index += 1
                result.read += 1
                result.stats.lines += 1
                record.reset(line: index)
                switch fill(&record, from: journal, irrelevantUnless: result.stats.records > 0 ? prefilter : nil) {
                case .irrelevant:
                    result.stats.records += 1
                case .noMessage:
                    result.stats.skipped += 1
                    if journal.fieldStatus("MESSAGE") != -ENOENT { result.damaged += 1 }
                case .record:
                    result.stats.records += 1
                    try sink(&record)
                }
            }
        } catch let stop as Stop {
            result.stopped = stop.message
        } catch {
            result.error = "reading stopped after \(index) entries: \(error)"
        }
        return result
    }

    /// Fills a record from the journal's current entry; false when it has no message.
    public func fill(_ record: inout RawRecord, from journal: Journal) -> Bool {
        fill(&record, from: journal, irrelevantUnless: nil) == .record
    }

    enum Filled { case record, noMessage, irrelevant }

    /// Fills a record from the entry's fields, read in one pass: for each field the format's
    /// first key the entry has, for the time the first key whose value is a number (else the
    /// entry's realtime). With a prefilter, an entry whose MESSAGE holds no anchor is
    /// `.irrelevant` as soon as its MESSAGE is read.
    func fill(_ record: inout RawRecord, from journal: Journal, irrelevantUnless prefilter: Prefilter?) -> Filled {
        guard fields.collect(from: journal, prefilter: prefilter) else { return .irrelevant }
        for i in fields.timeKeys {
            if let value = fields.withValue(i, { Int64(String(decoding: $0, as: UTF8.self)) }), let us = value {
                record.time = .epoch(micros: us)
                break
            }
        }
        if record.time == nil, let us = try? journal.realtime() { record.time = .epoch(micros: Int64(clamping: us)) }
        var hasMessage = false
        for (field, keys) in fields.fieldKeys {
            guard let i = keys.first(where: fields.has) else { continue }
            fields.withValue(i) { record.set(field, $0) }
            if field == .message { hasMessage = true }
        }
        return hasMessage ? .record : .noMessage
    }
}

/// Where a journal file may be cut into stretches that readers take in parallel: the cursors of
/// entries at even steps of its sequence numbers (entries are appended in sequence-number order,
/// and sd-journal seeks to a sequence number by bisection).
public enum JournalCut {
    /// A field of a cursor (`s=…;i=…;b=…;m=…;t=…;x=…`), for `i` and `t` as a number (hex).
    static func field(_ name: Character, of cursor: String) -> UInt64? {
        for part in cursor.split(separator: ";") where part.count > 2 && part.first == name && part.dropFirst().first == "=" {
            return UInt64(part.dropFirst(2), radix: 16)
        }
        return nil
    }

    /// Cursors of the first entries of stretches 2…`parts` (fewer when entries are few); nil
    /// when the file cannot be opened or read at its ends.
    public static func cuts(path: String, parts: Int) -> [String]? {
        guard parts > 1, let journal = try? Journal(files: [path]) else { return nil }
        do {
            try journal.seekHead()
            guard try journal.next() else { return nil }
            let head = try journal.cursor()
            try journal.seekTail()
            guard try journal.previous() else { return nil }
            let tail = try journal.cursor()
            guard let first = field("i", of: head), let last = field("i", of: tail), last > first,
                let id = head.split(separator: ";").first, id.hasPrefix("s=")
            else { return nil }
            var cuts: [String] = []
            for k in 1..<parts {
                // Divided first: a damaged header's sequence numbers may be anything.
                let seqnum = first + (last - first) / UInt64(parts) * UInt64(k)
                try journal.seek(cursor: "\(id);i=\(String(seqnum, radix: 16))")
                guard try journal.next() else { break }
                let c = try journal.cursor()
                if c != head, c != cuts.last { cuts.append(c) }
            }
            return cuts
        } catch {
            return nil
        }
    }
}

/// The keys a journal format reads (`fields` in its parsers/ file), gathered from an entry in
/// one pass over its data objects: the first value of each, copied out (sd-journal's pointers
/// last until its next call).
final class JournalEntryFields {
    private let keys: [[UInt8]]
    /// Indices into `keys`: the time keys in order of preference, and per field its keys.
    let timeKeys: [Int]
    let fieldKeys: [(RecordField, [Int])]
    private let longestKey: Int
    private var arena: [UInt8] = []
    private var starts: [Int]
    private var ends: [Int]

    init(format: LogFormat) {
        var keys: [[UInt8]] = []
        func index(_ key: String) -> Int {
            let bytes = Array(key.utf8)
            if let i = keys.firstIndex(of: bytes) { return i }
            keys.append(bytes)
            return keys.count - 1
        }
        timeKeys = format.jsonTimeKeys.map(index)
        fieldKeys = format.jsonFields.map { field, names in (field, names.map(index)) }
        self.keys = keys
        longestKey = keys.map(\.count).max() ?? 0
        starts = [Int](repeating: -1, count: keys.count)
        ends = starts
        arena.reserveCapacity(1024)
    }

    func has(_ i: Int) -> Bool { starts[i] >= 0 }

    func withValue<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        guard starts[i] >= 0 else { return nil }
        return arena.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[starts[i]..<ends[i]])) }
    }

    /// Reads the entry; false when the prefilter found its MESSAGE irrelevant (reading stopped).
    func collect(from journal: Journal, prefilter: Prefilter?) -> Bool {
        arena.removeAll(keepingCapacity: true)
        for i in starts.indices { starts[i] = -1 }
        var checkMessage = prefilter != nil
        var relevant = true
        journal.forEachField { item in
            let limit = min(item.count, max(longestKey, 7) + 1)
            var eq = 0
            while eq < limit, item[eq] != UInt8(ascii: "=") { eq += 1 }
            guard eq < limit else { return true }
            if checkMessage, eq == 7, memcmp(item.baseAddress!, "MESSAGE", 7) == 0 {
                checkMessage = false
                if !prefilter.unsafelyUnwrapped.mayMatch(UnsafeRawBufferPointer(rebasing: item[(eq + 1)...])) {
                    relevant = false
                    return false
                }
            }
            for i in keys.indices where starts[i] < 0 && keys[i].count == eq {
                let same = keys[i].withUnsafeBytes { memcmp($0.baseAddress!, item.baseAddress!, eq) == 0 }
                guard same else { continue }
                starts[i] = arena.count
                arena.append(contentsOf: UnsafeRawBufferPointer(rebasing: item[(eq + 1)...]))
                ends[i] = arena.count
            }
            return true
        }
        return relevant
    }
}

/// An input read through a file of its own: the file on disk, else a private copy in a new
/// temporary directory (an archive's member, standard input), removed when this value goes
/// (keep it while the file is read).
struct FileToRead {
    let path: String
    /// The input's error when its archive or stream ends inside the member (`writeMember`):
    /// thrown after what the part gave was read.
    let endedInside: Error?
    private let copy: PrivateTemporaryDirectory?

    init(diskPath: String?, copy write: (PrivateTemporaryDirectory) throws -> (path: String, endedInside: Error?)) throws {
        guard diskPath == nil else {
            (path, endedInside, copy) = (diskPath!, nil, nil)
            return
        }
        let made = try PrivateTemporaryDirectory()
        (path, endedInside) = try write(made)
        copy = made
    }
}

/// A private temporary directory, removed with everything in it when the value goes away.
final class PrivateTemporaryDirectory {
    let path: String

    init() throws {
        // (in the run's folder: removed with it on Ctrl-C)
        path = try TemporaryRoot.folder("copy")
    }

    /// Writes `source` to a file in the directory (0600) and returns its path. Errors name
    /// `display` (the input as the user gave it), not the temporary file.
    func write(_ source: ByteSource, name: String, display: String) throws -> String {
        let file = path + "/" + name
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw InputError(path: display, copyOpenFailed + errnoText()) }
        defer { close(fd) }
        try copyAll(source, to: fd, display: display)
        return file
    }

    /// A member of an archive (or standard input) written here as `name`: its path, and the
    /// input's error when the archive or stream ends inside it (a ticket's size limit cut a
    /// .tar.gz, .zip or .gz part way): what was copied is then the member up to the cut, read
    /// as a file cut short on disk is when `usable` takes it, and the archive's damage is said
    /// after what it gave. A copy that could not be made or written is no cut of the member's.
    func writeMember(_ source: ByteSource, name: String, display: String,
                     usable: (String) -> Bool = { _ in true }) throws -> (path: String, endedInside: Error?)
    {
        do {
            return (try write(source, name: name, display: display), nil)
        } catch {
            let partial = path + "/" + name
            guard inputEndedInside(error), usable(partial) else { throw error }
            return (partial, error)
        }
    }

    /// `writeMember` for a journal, for sd-journal: a journal cut short has its entries before
    /// the cut read (`JournalReader.read`); a part without a journal's header is not read. (None
    /// was read before: a text member keeps its lines before such a cut.)
    func writeJournal(_ source: ByteSource, display: String) throws -> (path: String, endedInside: Error?) {
        // (its own name when it is a plain one: a member's name escaped for display can be
        // longer than a file name may be)
        let base = display.split(separator: "/").last.map(String.init) ?? ""
        let plain = base.utf8.count <= 128 && !base.contains("\\") && !base.contains("!")
        let name = !plain ? "member.journal" : base.hasSuffix(".journal") || base.hasSuffix(".journal~") ? base : base + ".journal"
        return try writeMember(source, name: name, display: display, usable: { JournalHeader.read(path: $0) != nil })
    }

    deinit {
        if let dir = opendir(path) {
            while let ent = readdir(dir) {
                let name = withUnsafeBytes(of: ent.pointee.d_name) { String(cString: $0.baseAddress!.assumingMemoryBound(to: CChar.self)) }
                if name != "." && name != ".." { unlink(path + "/" + name) }
            }
            closedir(dir)
        }
        rmdir(path)
        TemporaryRoot.release()
    }
}

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

    public init(format: LogFormat, filter: JournalFilter, prefilter: Prefilter? = nil) {
        self.format = format
        self.filter = filter
        self.prefilter = prefilter?.isUseful == true ? prefilter : nil
    }

    public struct Result {
        public var stats = ReadStats()
        public var read = 0
        public var promised: UInt64?
        public var error: String?
        /// Entries whose MESSAGE could not be read (damaged objects, not merely absent).
        public var damaged = 0
    }

    /// Entries read between reopenings of the file. sd-journal maps the file in windows and
    /// keeps what it touched mapped until the handle closes, so a long file would otherwise be
    /// resident in full (a 125 MB file: 98 MB); reopening at the cursor releases the mappings,
    /// and memory stays near what one stretch of entries touches.
    public var reopenEvery = 32768

    /// Reads one journal file on disk. The record's `line` is the entry's number in the file.
    public func read(path: String, _ sink: (inout RawRecord) throws -> Void) -> Result {
        var result = Result()
        result.promised = JournalHeader.read(path: path)?.entries
        func open() throws -> Journal {
            let journal = try Journal(files: [path])
            for m in filter.matches { try journal.addMatch(m) }
            return journal
        }
        var journal: Journal
        do {
            journal = try open()
            try journal.seekHead()
        } catch {
            result.error = "sd-journal refused the file: \(error)"
            return result
        }
        var record = RawRecord()
        var index = 0
        do {
            while try journal.next() {
                if index > 0 && index % reopenEvery == 0 {
                    let cursor = try journal.cursor()
                    journal = try open()
                    try journal.seek(cursor: cursor)
                    guard try journal.next(), journal.test(cursor: cursor) else {
                        throw JournalError("sd_journal_seek_cursor (reopening at entry \(index + 1))", -ENOENT)
                    }
                }
                index += 1
                result.read += 1
                result.stats.lines += 1
                record.reset(line: index)
                if let prefilter, result.stats.records > 0,
                    journal.withField("MESSAGE", { $0.map { !prefilter.mayMatch($0) } ?? false })
                {
                    result.stats.records += 1
                    continue
                }
                guard fill(&record, from: journal) else {
                    result.stats.skipped += 1
                    if journal.fieldStatus("MESSAGE") != -ENOENT { result.damaged += 1 }
                    continue
                }
                result.stats.records += 1
                try sink(&record)
            }
        } catch {
            result.error = "reading stopped after \(index) entries: \(error)"
        }
        return result
    }

    /// Fills a record from the journal's current entry; false when it has no message.
    public func fill(_ record: inout RawRecord, from journal: Journal) -> Bool {
        for key in format.jsonTimeKeys {
            if let v = journal.field(key), let us = Int64(v) {
                record.time = .epoch(micros: us)
                break
            }
        }
        if record.time == nil, let us = try? journal.realtime() { record.time = .epoch(micros: Int64(us)) }
        var hasMessage = false
        for (field, keys) in format.jsonFields {
            for key in keys {
                let found = journal.withField(key) { bytes -> Bool in
                    guard let bytes else { return false }
                    record.set(field, bytes)
                    return true
                }
                if found {
                    if field == .message { hasMessage = true }
                    break
                }
            }
        }
        return hasMessage
    }
}

/// A private temporary directory, removed with everything in it when the value goes away.
final class PrivateTemporaryDirectory {
    let path: String

    init() throws {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((base + "/castscope-XXXXXX").utf8CString)
        guard let p = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw InputError(path: base, "cannot create a private temporary directory: \(errnoText())")
        }
        path = String(cString: p)
    }

    /// Writes `source` to a file in the directory (0600) and returns its path.
    func write(_ source: ByteSource, name: String) throws -> String {
        let file = path + "/" + name
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw InputError(path: file, "cannot create: \(errnoText())") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { break }
            var written = 0
            while written < n {
                let w = buffer.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, n - written) }
                guard w > 0 else { throw InputError(path: file, "write failed: \(errnoText())") }
                written += w
            }
        }
        return file
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
    }
}

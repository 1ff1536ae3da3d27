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
        /// Called after a batch, before the cursor is saved: output must be flushed here.
        public var flush: () -> Void
        public var gap: (Int64?, Int64?, String) -> Void
        public var note: (String) -> Void
        /// Called after every wait (about every `pollMicros`).
        public var idle: () -> Void
        public var shouldStop: () -> Bool

        public init(entry: @escaping (RawRecord, String, String) -> Void, flush: @escaping () -> Void,
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

    /// The realtime (µs) a cursor names (`t=` field, hex).
    public static func time(ofCursor cursor: String) -> Int64? {
        for part in cursor.split(separator: ";") where part.hasPrefix("t=") {
            return Int64(part.dropFirst(2), radix: 16)
        }
        return nil
    }

    public func loadCursor() -> String? {
        guard let cursorFile, let source = try? FileSource(path: cursorFile), let bytes = try? readUpTo(4096, from: source)
        else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).trimmingSpaces().split(separator: "\n").first.map(String.init)
        return text?.isEmpty == false ? text : nil
    }

    /// Writes the cursor atomically (temporary file + rename).
    public func saveCursor(_ cursor: String) throws {
        guard let cursorFile else { return }
        let tmp = cursorFile + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw InputError(path: tmp, "cannot write the cursor: \(errnoText())") }
        let text = Array((cursor + "\n").utf8)
        let ok = text.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) } == text.count
        close(fd)
        guard ok, rename(tmp, cursorFile) == 0 else { throw InputError(path: cursorFile, "cannot save the cursor: \(errnoText())") }
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
        var pendingFirst = false  // the current entry is new and not yet handed over
        if let saved = loadCursor() {
            try journal.seek(cursor: saved)
            if try journal.next() {
                if journal.test(cursor: saved) {
                    cb.note("following \(label), resuming after the saved cursor")
                } else {
                    // The saved entry is gone: say what may have been lost, then go on.
                    let from = Self.time(ofCursor: saved)
                    let to = try? Int64(journal.realtime())
                    var span = ""
                    if let from, let to { span = " between \(Fmt.rfc3339(from, offset: 0)) and \(Fmt.rfc3339(to, offset: 0))" }
                    cb.gap(from, to, "the saved cursor's entry no longer exists (rotated or vacuumed): entries\(span) may be lost")
                    pendingFirst = true
                }
            } else {
                cb.note("following \(label), resuming after the saved cursor")
            }
        } else if fromStart {
            try journal.seekHead()
            cb.note("following \(label) from its oldest entry")
        } else {
            try journal.seekTail()
            _ = try journal.previous()
            cb.note("following \(label) from now")
        }
        try journal.prepareWait()
        var record = RawRecord()
        var index = 0
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
                if batch % 1000 == 0 || cb.shouldStop() {
                    cb.flush()
                    try saveCursor(cursor)
                    lastCursor = nil
                    if cb.shouldStop() { return }
                }
            }
            if let c = lastCursor {
                cb.flush()
                try saveCursor(c)
            }
            if cb.shouldStop() { return }
            _ = try journal.wait(timeoutMicros: pollMicros)
            cb.idle()
        }
    }
}

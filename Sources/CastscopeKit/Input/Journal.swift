import CCastscopeSystemd

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error from sd-journal, which returns `-errno`.
public struct JournalError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var code: Int32
    init(_ operation: String, _ rc: Int32) {
        self.operation = operation
        code = -rc
    }
    /// An error castscope found itself, said in full (no errno).
    init(said message: String) {
        operation = message
        code = 0
    }
    public var description: String { code == 0 ? operation : "\(operation): \(errnoText(code))" }
}

/// Owns one `sd_journal *`. Not `Sendable` and synchronous on purpose: libsystemd forbids
/// using a handle from any thread but the one that opened it, and Swift does not enforce that,
/// so every call checks the owner thread.
public final class Journal {
    private let handle: OpaquePointer
    private let owner = pthread_self()

    private func checkThread() {
        precondition(pthread_equal(owner, pthread_self()) != 0, "sd_journal used from a second thread")
    }

    /// Opens journal files (made absolute: sd_journal_wait needs it).
    public init(files: [String]) throws {
        // (sd-journal maps the files: one cut short while read faults as a mapped tracev3 does)
        _ = MappedFiles.guarded
        // A header that claims more entries than the file can hold: sd-journal went round
        // inside one sd_journal_next for ever (journalctl too), and the bundle's other files
        // were never reported.
        for path in files {
            var st = stat()
            guard let header = JournalHeader.read(path: path), stat(path, &st) == 0 else { continue }
            // (a file shorter than its header says is said as that first: its entry count was
            // right for the whole file, and "claims more entries than it can hold (damaged)"
            // hid the cut)
            let cutShort = header.declaredSize.map { $0 > UInt64(max(st.st_size, 0)) } ?? false
            if !cutShort, header.entries > UInt64(max(st.st_size, 0)) / 64 {
                throw JournalError("its header claims \(header.entries) entries, more than \(st.st_size) bytes can hold (damaged)", -EBADMSG)
            }
            // A file shorter than its header says (a copy or download cut short, a ticket's size
            // limit): sd-journal refuses it whole, as journalctl does, with ENODATA ("No data
            // available", which said nothing of why). Only tail meets this: `JournalReader` reads
            // such a file from a copy as long as its header says, and tail follows the file itself.
            if let declared = header.declaredSize, declared > UInt64(max(st.st_size, 0)) {
                throw JournalError(said: "the file is cut short: its header says \(declared) bytes, it has \(st.st_size) "
                    + "(a copy or download that stopped part way?); sd-journal and journalctl read no entry of such a file "
                    + "(castscope analyze and show read the entries before the cut)")
            }
        }
        var cStrings: [UnsafePointer<CChar>?] = files.map { UnsafePointer(realpath($0, nil) ?? strdup($0)!) }
        cStrings.append(nil)
        defer { for p in cStrings { free(UnsafeMutablePointer(mutating: p)) } }
        var h: OpaquePointer?
        let rc = cStrings.withUnsafeMutableBufferPointer { sd_journal_open_files(&h, $0.baseAddress, 0) }
        guard rc >= 0, let h else { throw JournalError("sd_journal_open_files", rc) }
        handle = h
    }

    /// Opens every journal file in a directory (and follows new ones as they appear).
    public init(directory: String) throws {
        _ = MappedFiles.guarded
        var h: OpaquePointer?
        let path = realpath(directory, nil).map { p in defer { free(p) }; return String(cString: p) } ?? directory
        let rc = sd_journal_open_directory(&h, path, 0)
        guard rc >= 0, let h else { throw JournalError("sd_journal_open_directory", rc) }
        handle = h
    }

    /// Opens the local system's journal (what `journalctl` shows).
    public init(localSystem: Bool) throws {
        _ = MappedFiles.guarded
        var h: OpaquePointer?
        let rc = sd_journal_open(&h, Int32(SD_JOURNAL_LOCAL_ONLY))
        guard rc >= 0, let h else { throw JournalError("sd_journal_open", rc) }
        handle = h
    }

    deinit {
        checkThread()
        sd_journal_close(handle)
    }

    /// `FIELD=value`; matches of one field are ORed, of different fields ANDed (journalctl).
    public func addMatch(_ match: String) throws {
        checkThread()
        let rc = match.withCString { sd_journal_add_match(handle, $0, 0) }
        if rc < 0 { throw JournalError("sd_journal_add_match(\(match))", rc) }
    }

    /// Drops every match (`addMatch`): the whole journal again.
    public func flushMatches() {
        checkThread()
        sd_journal_flush_matches(handle)
    }

    public func next() throws -> Bool {
        checkThread()
        let rc = sd_journal_next(handle)
        if rc < 0 { throw JournalError("sd_journal_next", rc) }
        return rc > 0
    }

    public func previous() throws -> Bool {
        checkThread()
        let rc = sd_journal_previous(handle)
        if rc < 0 { throw JournalError("sd_journal_previous", rc) }
        return rc > 0
    }

    public func seekHead() throws {
        checkThread()
        let rc = sd_journal_seek_head(handle)
        if rc < 0 { throw JournalError("sd_journal_seek_head", rc) }
    }

    public func seekTail() throws {
        checkThread()
        let rc = sd_journal_seek_tail(handle)
        if rc < 0 { throw JournalError("sd_journal_seek_tail", rc) }
    }

    public func seek(realtimeMicros: UInt64) throws {
        checkThread()
        let rc = sd_journal_seek_realtime_usec(handle, realtimeMicros)
        if rc < 0 { throw JournalError("sd_journal_seek_realtime_usec", rc) }
    }

    public func seek(cursor: String) throws {
        checkThread()
        let rc = cursor.withCString { sd_journal_seek_cursor(handle, $0) }
        if rc < 0 { throw JournalError("sd_journal_seek_cursor", rc) }
    }

    /// True when the current entry is the one `cursor` names.
    public func test(cursor: String) -> Bool {
        checkThread()
        return cursor.withCString { sd_journal_test_cursor(handle, $0) } > 0
    }

    /// The raw value of FIELD for the current entry (without `FIELD=`), valid until the next call.
    public func withField<R>(_ name: String, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        checkThread()
        var data: UnsafeRawPointer?
        var length = 0
        let rc = sd_journal_get_data(handle, name, &data, &length)
        guard rc >= 0, let data else { return try body(nil) }
        let prefix = name.utf8.count + 1
        return try body(UnsafeRawBufferPointer(start: data + prefix, count: max(0, length - prefix)))
    }

    /// Calls `body` with each readable `FIELD=value` of the current entry, in the entry's order,
    /// until it returns false (one pass over the entry's data objects; `withField` is a pass per
    /// field). Damaged or undecodable objects are passed over, as `sd_journal_get_data` does.
    public func forEachField(_ body: (UnsafeRawBufferPointer) throws -> Bool) rethrows {
        checkThread()
        sd_journal_restart_data(handle)
        var data: UnsafeRawPointer?
        var length = 0
        while sd_journal_enumerate_available_data(handle, &data, &length) > 0, let data {
            if try !body(UnsafeRawBufferPointer(start: data, count: length)) { return }
        }
    }

    /// 0 when FIELD is readable, else sd-journal's `-errno` (`-ENOENT`: the entry has none;
    /// `-EBADMSG` and others: the object is damaged).
    public func fieldStatus(_ name: String) -> Int32 {
        checkThread()
        var data: UnsafeRawPointer?
        var length = 0
        let rc = sd_journal_get_data(handle, name, &data, &length)
        return rc < 0 ? rc : 0
    }

    public func field(_ name: String) -> String? {
        withField(name) { $0.map { String(decoding: $0, as: UTF8.self) } }
    }

    public func realtime() throws -> UInt64 {
        checkThread()
        var usec: UInt64 = 0
        let rc = sd_journal_get_realtime_usec(handle, &usec)
        if rc < 0 { throw JournalError("sd_journal_get_realtime_usec", rc) }
        return usec
    }

    public func cursor() throws -> String {
        checkThread()
        var c: UnsafeMutablePointer<CChar>?
        let rc = sd_journal_get_cursor(handle, &c)
        guard rc >= 0, let c else { throw JournalError("sd_journal_get_cursor", rc) }
        defer { free(c) }
        return String(cString: c)
    }

    /// Makes sure inotify watches are in place now, so nothing appended after this is missed.
    public func prepareWait() throws {
        checkThread()
        let rc = sd_journal_get_fd(handle)
        if rc < 0 { throw JournalError("sd_journal_get_fd", rc) }
    }

    public enum WaitResult: Sendable { case nop, append, invalidate }

    public func wait(timeoutMicros: UInt64) throws -> WaitResult {
        checkThread()
        let rc = sd_journal_wait(handle, timeoutMicros)
        if rc < 0 { throw JournalError("sd_journal_wait", rc) }
        switch rc {
        case Int32(SD_JOURNAL_APPEND): return .append
        case Int32(SD_JOURNAL_INVALIDATE): return .invalidate
        default: return .nop
        }
    }
}

/// What a journal file's header says, read by hand (the header layout is stable:
/// systemd's JOURNAL_FILE_FORMAT.md), to tell how many entries a damaged file promised.
public struct JournalHeader: Sendable {
    public var entries: UInt64
    public var state: UInt8

    public init?(bytes: [UInt8]) {
        guard bytes.count >= 160, Array(bytes[0..<8]) == Array("LPKSHHRH".utf8) else { return nil }
        var n: UInt64 = 0
        for k in 0..<8 { n |= UInt64(bytes[152 + k]) << (8 * UInt64(k)) }
        entries = n
        state = bytes[16]
        func u64(_ at: Int) -> UInt64 {
            var v: UInt64 = 0
            for k in 0..<8 { v |= UInt64(bytes[at + k]) << (8 * UInt64(k)) }
            return v
        }
        // header_size (88) + arena_size (96): the file's size as its header gives it.
        let (sum, overflow) = u64(88).addingReportingOverflow(u64(96))
        declaredSize = overflow ? nil : sum
    }

    /// The size the header says the file has (its header and arena); nil when they overflow.
    public var declaredSize: UInt64?

    public static func read(path: String) -> JournalHeader? {
        guard let source = try? FileSource(path: path), let head = try? readUpTo(256, from: source) else { return nil }
        return JournalHeader(bytes: head)
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A forward-only stream of bytes: a file, a gzip member, an archive entry, stdin.
///
/// `read` fills as much of `buffer` as it can and returns the count; 0 means end of stream.
public protocol ByteSource: AnyObject {
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Bytes consumed from the underlying (compressed) input so far, for error offsets.
    var consumedOffset: UInt64 { get }
    /// The UTF-16 decoder these bytes come from, through a head read before them (an `.ips`
    /// saved as UTF-16 names its errors' bytes in the file, not in the decoded text); nil for most.
    var utf16Origin: UTF16Source? { get }
}

extension ByteSource {
    public var utf16Origin: UTF16Source? { nil }
}

/// An input problem: names the file and, where it is known, the line or byte offset.
public struct InputError: Error, CustomStringConvertible, Sendable, Equatable {
    public var path: String
    public var line: Int?
    public var offset: UInt64?
    public var message: String

    public init(path: String, line: Int? = nil, offset: UInt64? = nil, _ message: String) {
        self.path = path
        self.line = line
        self.offset = offset
        self.message = message
    }

    /// `path:line: message` or `path: byte N: message`: one line, as a compiler would print it.
    public var description: String {
        if let line { return "\(path):\(line): \(message)" }
        if let offset { return "\(path): at byte \(offset): \(message)" }
        return "\(path): \(message)"
    }
}

extension InputError {
    /// The error with a path under `root` (a log archive's folder: for one inside an archive,
    /// its copy in the run's temporary folder) named as `display` names that folder: the
    /// archive and its member, not `/tmp/castscope-…/logarchive-…/0/dsc/…`.
    func named(under root: String?, as display: String) -> InputError {
        guard let root else { return self }
        let prefix = root.hasSuffix("/") ? root : root + "/"
        guard path.hasPrefix(prefix) else { return self }
        var e = self
        e.path = display + "/" + path.dropFirst(prefix.count)
        return e
    }
}

/// Reads a file descriptor with read(2). Owns the descriptor when `owned`.
public final class FileSource: ByteSource {
    private let fd: Int32
    private let owned: Bool
    public let path: String
    public private(set) var consumedOffset: UInt64 = 0

    /// A regular file's size when it was opened: a file that ends before it was cut while it
    /// was read (logrotate's copytruncate), which is said, not passed over as its end.
    public private(set) var openedSize: UInt64 = 0

    /// True once a read stopped at `openedSize` with more bytes behind it: the file grew while
    /// it was read. A file on disk is read as it was when opened (a log its daemon writes
    /// faster than castscope reads was read for as long as the daemon wrote, without end; the
    /// parallel ranges of a big file already stopped at the size they were cut from).
    public private(set) var grew = false

    /// `shownAs`: the name errors give (a file reached through `/proc/self/fd/N`, its name
    /// not UTF-8, is named as shown, `caf\xe9.log`).
    public init(path: String, shownAs: String? = nil) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw InputError(path: shownAs ?? path, "cannot open: \(errnoText())") }
        self.fd = fd
        self.owned = true
        self.path = shownAs ?? path
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { openedSize = UInt64(st.st_size) }
    }

    /// A descriptor opened by someone else: standard input. A regular file there (`analyze - <
    /// relay.log`) is read from where it stands to its size now, as a file on disk is (round
    /// 14 left it: a log its daemon writes was read for as long as the daemon wrote).
    public init(fd: Int32, path: String) {
        self.fd = fd
        self.owned = false
        self.path = path
        var st = stat()
        let at = lseek(fd, 0, SEEK_CUR)
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, at >= 0, st.st_size > at {
            start = UInt64(at)
            openedSize = UInt64(st.st_size) - start
        }
    }

    /// Where the descriptor stood when it was handed over (0 for a file castscope opened):
    /// `openedSize` bytes from there are read.
    private var start: UInt64 = 0

    /// The file's size now, less `start`: what could be read from where reading began.
    private var currentSize: UInt64 {
        var st = stat()
        return fstat(fd, &st) == 0 ? UInt64(max(0, st.st_size)) - min(start, UInt64(max(0, st.st_size))) : 0
    }

    /// The file's size when it was opened, and now (what `grewNote` names).
    public var openedEnd: UInt64 { start + openedSize }
    public var sizeNow: UInt64 { start + currentSize }

    deinit { if owned { close(fd) } }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        // (0 bytes when opened: a /proc file, whose size says nothing of its bytes, is read to its end)
        var want = buffer.count
        if openedSize > 0 {
            guard consumedOffset < openedSize else {
                if !grew, currentSize > openedSize { grew = true }
                return 0
            }
            want = Int(min(UInt64(want), openedSize - consumedOffset))
        }
        while true {
            #if canImport(Glibc)
            let n = Glibc.read(fd, base, want)
            #else
            let n = Darwin.read(fd, base, want)
            #endif
            // (a file whose size is now less: sysfs and some FUSE files give fewer bytes than
            // their size says, and keep saying it)
            if n == 0, consumedOffset < openedSize, currentSize < openedSize {
                throw InputError.shrank(path: path, at: consumedOffset, from: openedSize)
            }
            if n >= 0 {
                consumedOffset += UInt64(n)
                return n
            }
            if errno == EINTR { continue }
            throw InputError(path: path, offset: consumedOffset, "read failed: \(errnoText())")
        }
    }
}

/// A source that first replays bytes already read (for sniffing) and then continues.
public final class PrefixedSource: ByteSource {
    private var prefix: [UInt8]
    private var prefixPos = 0
    private let rest: ByteSource

    public init(prefix: [UInt8], rest: ByteSource) {
        self.prefix = prefix
        self.rest = rest
    }

    public var consumedOffset: UInt64 { rest.consumedOffset }
    public var utf16Origin: UTF16Source? { rest.utf16Origin }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if prefixPos < prefix.count {
            let n = handOut(prefix, from: &prefixPos, into: buffer)
            if prefixPos == prefix.count { prefix = []; prefixPos = 0 }
            return n
        }
        return try rest.read(into: buffer)
    }
}

/// Reads up to `count` bytes from `source` (fewer only at end of stream).
public func readUpTo(_ count: Int, from source: ByteSource) throws -> [UInt8] {
    let (bytes, damage) = fill(count, from: source)
    if let damage { throw damage }
    return bytes
}

/// Up to `count` bytes of `source`, and the error that stopped it short, if one did.
private func fill(_ count: Int, from source: ByteSource) -> (bytes: [UInt8], damage: Error?) {
    var out = [UInt8](repeating: 0, count: count)
    var filled = 0
    var damage: Error?
    while filled < count {
        do {
            let n = try out.withUnsafeMutableBytes { buf in
                try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buf[filled...]))
            }
            if n == 0 { break }
            filled += n
        } catch {
            damage = error
            break
        }
    }
    out.removeSubrange(filled...)
    return (out, damage)
}

/// A file's first `count` bytes, to detect its format and then read again, as a source that
/// gives them and then the rest. Damage within them (a gzip stream cut or with a bad CRC) is
/// met again after the bytes before it, where the reader reports it with its offset like
/// damage further in: what was readable is not lost with it.
func readHead(_ count: Int, from source: ByteSource) throws -> (head: [UInt8], source: ByteSource) {
    let (head, damage) = fill(count, from: source)
    guard let damage else { return (head, PrefixedSource(prefix: head, rest: source)) }
    guard !head.isEmpty else { throw damage }
    return (head, PrefixedSource(prefix: head, rest: FailedSource(error: damage, consumedOffset: source.consumedOffset)))
}

/// A source whose next read fails with `error` (the damage `readHead` met).
final class FailedSource: ByteSource {
    let error: Error
    let consumedOffset: UInt64
    init(error: Error, consumedOffset: UInt64) { (self.error, self.consumedOffset) = (error, consumedOffset) }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { throw error }
}

func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

/// Bytes already in memory (samples, tests).
public final class MemorySource: ByteSource {
    private let bytes: [UInt8]
    private var position = 0
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public convenience init(_ text: String) { self.init(Array(text.utf8)) }
    public var consumedOffset: UInt64 { UInt64(position) }
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { handOut(bytes, from: &position, into: buffer) }
}

/// Copies as much of `bytes[position...]` as `buffer` holds into it and moves `position` past
/// what was copied; the count (a source handing out bytes it holds).
func handOut(_ bytes: [UInt8], from position: inout Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
    let n = min(buffer.count, bytes.count - position)
    guard n > 0 else { return 0 }
    let from = position
    bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + from, byteCount: n) }
    position += n
    return n
}

/// A source that rewrites what it reads a piece at a time (a line, or a block read):
/// `step` appends what the next piece becomes to `out` (maybe nothing) and sets `eof` once
/// its input ended and what was left is in `out`; `readMade` is its `read(into:)`. The
/// line-rewriting sources (`HardWrapSource`, `JavaLoggingSource`, `QuotedLinesSource`,
/// `StringLiteralLinesSource`, `TimeLeadSource`, `XcodeMetadataSource`) each wrote this loop.
protocol RewritingSource: ByteSource {
    associatedtype Made: MadeBytes
    /// Bytes made and not yet handed out (from `outPos`).
    var out: Made { get set }
    var outPos: Int { get set }
    var eof: Bool { get }
    func step() throws
}

extension RewritingSource {
    /// Hands out what was made, stepping while none is left; 0 at the end.
    func readMade(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while outPos == out.count {
            out.removeAll(keepingCapacity: true)
            outPos = 0
            if eof { return 0 }
            try step()
        }
        return out.handOut(from: &outPos, into: buffer)
    }
}

/// The bytes a `RewritingSource` made: an array, or the reports' byte buffer (`OutputBuffer`).
protocol MadeBytes {
    var count: Int { get }
    mutating func removeAll(keepingCapacity: Bool)
    /// `handOut` of these bytes.
    func handOut(from position: inout Int, into buffer: UnsafeMutableRawBufferPointer) -> Int
}

extension Array: MadeBytes where Element == UInt8 {
    func handOut(from position: inout Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        CastscopeKit.handOut(self, from: &position, into: buffer)
    }
}

extension OutputBuffer: MadeBytes {
    func handOut(from position: inout Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let n = min(buffer.count, count - position)
        guard n > 0 else { return 0 }
        let from = position
        withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + from, byteCount: n) }
        position += n
        return n
    }
}

/// What `source` gives (at most `limit` bytes), to its end or its first error (a head put through a source of
/// its own: what that source makes of a file's first bytes).
func drained(_ source: ByteSource, limit: Int = .max) -> [UInt8] {
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while out.count < limit, let n = try? buffer.withUnsafeMutableBytes({ try source.read(into: $0) }), n > 0 {
        out += buffer[0..<min(n, limit - out.count)]
    }
    return out
}

/// A byte range of a file on disk, read with pread(2): lets one big file be parsed in parallel.
public final class RangeFileSource: ByteSource {
    private let fd: Int32
    private var position: UInt64
    private let end: UInt64
    private let start: UInt64
    public let path: String

    public init(path: String, from: UInt64, to: UInt64) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw InputError(path: path, "cannot open: \(errnoText())") }
        self.fd = fd
        self.path = path
        start = from
        position = from
        end = to
    }

    deinit { close(fd) }

    public var consumedOffset: UInt64 { position - start }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let want = Int(min(UInt64(buffer.count), end - position))
        guard want > 0 else { return 0 }
        while true {
            let n = pread(fd, buffer.baseAddress!, want, off_t(position))
            if n == 0 {
                var st = stat()
                if fstat(fd, &st) == 0, UInt64(max(0, st.st_size)) < end { throw InputError.shrank(path: path, at: position, from: end) }
                return 0
            }
            if n >= 0 {
                position += UInt64(n)
                return n
            }
            if errno == EINTR { continue }
            throw InputError(path: path, offset: position, "read failed: \(errnoText())")
        }
    }
}

extension InputError {
    /// A file read to a point before its end as it was when reading began.
    static func shrank(path: String, at offset: UInt64, from size: UInt64) -> InputError {
        InputError(path: path, offset: offset, "the file became shorter while it was read (rotated or truncated?): it ended at byte \(offset) of \(size); what was read before is kept")
    }
}

extension FileSource {
    /// The note on a file on disk that grew while it was read, from `size` (what was read) to
    /// `now` bytes: a log still being written is read as it was when castscope began (a note,
    /// not an error: nothing in what was read is wrong).
    static func grewNote(from size: UInt64, to now: UInt64) -> String {
        "the file grew while it was read (from \(size) to \(now) bytes: still being written?): read as it was when castscope began to read it; what was written since is not in this report"
    }
}

/// What a file of mode `type` (`st_mode & S_IFMT`, or an archive member's type bits: the
/// same values) is when it holds no data to read: a FIFO, a device or a socket; nil for any
/// other (a file, a folder, a link).
func specialFileName(_ type: mode_t) -> String? {
    switch type {
    case S_IFIFO: "a FIFO"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    case S_IFSOCK: "a socket"
    default: nil
    }
}

/// The size of a regular file, or nil.
func fileSize(_ path: String) -> UInt64? {
    var st = stat()
    guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
    return UInt64(st.st_size)
}

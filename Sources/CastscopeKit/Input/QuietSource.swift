#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A live stream's descriptor (`tail` on standard input) that says when it goes quiet: before
/// a read that would wait, no byte for `quietMilliseconds` calls `onQuiet` (once per wait).
///
/// A line reader knows a record has ended only when the next record's line begins, so the
/// newest line of a live stream waited for the next one: a session's last line (the
/// extension's `broadcastFinished`, followed by silence) was not shown until the phone said
/// something else. The reader hands on the record it holds when the stream goes quiet
/// (`RecordReader.streamWentQuiet`); `log stream` and idevicesyslog write a record's lines
/// together, so a pause inside one record does not happen.
public final class QuietSource: ByteSource {
    private let fd: Int32
    private let inner: FileSource
    public let quietMilliseconds: Int32
    public var onQuiet: (() throws -> Void)?

    public init(fd: Int32, path: String, quietMilliseconds: Int32 = 200) {
        self.fd = fd
        self.inner = FileSource(fd: fd, path: path)
        self.quietMilliseconds = quietMilliseconds
    }

    public var consumedOffset: UInt64 { inner.consumedOffset }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let onQuiet {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            var ready: Int32
            repeat { ready = poll(&p, 1, quietMilliseconds) } while ready < 0 && errno == EINTR
            if ready == 0 { try onQuiet() }
        }
        return try inner.read(into: buffer)
    }
}

import CastscopeKit

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
import Foundation
#endif

/// Runs the library's journal follower on the current thread (which owns the sd-journal
/// handle) and hands entries to the engine.
struct JournalFollower: @unchecked Sendable {
    typealias Source = JournalCursorFollower.Source
    let follower: JournalCursorFollower
    let engine: TailEngine
    let stop: StopFlag

    init(source: Source, filter: JournalFilter, cursorFile: String?, fromStart: Bool, exportFormat: LogFormat,
         engine: TailEngine, stop: StopFlag)
    {
        var follower = JournalCursorFollower(source: source, filter: filter, cursorFile: cursorFile, fromStart: fromStart,
                                             exportFormat: exportFormat)
        follower.outputShowsDelivery = engine.clickhouse == nil
        self.follower = follower
        self.engine = engine
        self.stop = stop
    }

    func run() {
        let engine = self.engine
        let stop = self.stop
        do {
            try follower.run(JournalCursorFollower.Callbacks(
                entry: { rec, cursor, label in engine.handle(rec, path: label, fileIndex: 0, cursor: cursor) },
                flush: { try engine.flush() },
                gap: { from, to, text in engine.gap(from: from, to: to, text) },
                note: { engine.note($0) },
                idle: { engine.tick() },
                shouldStop: { stop.isSet || engine.outputFailed }))
        } catch is TailEngine.OutputFailed {
            // (said once by tail as it ends, exit 5)
        } catch let e as InputError where e.path == follower.cursorFile || e.path == follower.cursorFile.map({ $0 + ".tmp" }) {
            // (the cursor file's own trouble names it, not the journal)
            engine.error(e.description)
        } catch {
            // (named as given: `--file F`, `-D DIR`; an error of "journal:" named none)
            let named: String
            switch follower.source {
            case .system: named = "the system journal"
            case .directory(let d): named = d
            case .files(let f): named = f.joined(separator: ", ")
            }
            if let e = error as? JournalError, e.code == EMFILE || e.code == ENFILE {
                // (the limit, and how to raise it, rather than the call that failed)
                var files = rlimit()
                let limit = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0 ? " (\(files.rlim_cur))" : ""
                engine.error("\(named): more journal files than may be open at once: raise the open-file limit\(limit), e.g. ulimit -n or LimitNOFILE= in the unit, or follow fewer files")
                return
            }
            engine.error("\(named): \(error)")
        }
    }
}

/// Reads a text stream on standard input (format detected from what arrives first).
struct StdinFollower: @unchecked Sendable {
    let registry: ParserRegistry
    let forced: String?
    let engine: TailEngine
    /// The stream read (standard input, or a FIFO given to `--file`) and its name in errors.
    var fd: Int32 = 0
    var path = "<stdin>"
    var fileIndex = 1
    var what = "standard input"

    func run() {
        let path = self.path
        let input = QuietSource(fd: fd, path: path)
        do {
            // Detect from the first lines that arrive (whole lines of them): a live tool's
            // first line comes alone (idevicesyslog's `[connected:…]`, log stream's `Filtering
            // the log data…`), and detected from it alone the stream was plain text, its times
            // lost. Up to 8 lines, 64 KB or 2 seconds, whichever comes first.
            var head = [UInt8](repeating: 0, count: 64 * 1024)
            let n = try head.withUnsafeMutableBytes { try input.read(into: $0) }
            head.removeSubrange(n...)
            if n == 0 { return }
            // A block of NULs first (a log truncated while written: copytruncate), passed over
            // as `analyze` passes it over; the text after it is the stream.
            var source: ByteSource = input
            // UTF-16 (PowerShell's `idevicesyslog | castscope tail -`) read as UTF-8, as
            // `analyze -` reads it (it was refused as binary data); a UTF-8 byte-order mark
            // comes off, as `analyze` takes it off. Before the NUL check: UTF-16 big-endian
            // starts with a NUL.
            if let order = UTF16Source.detect(head) {
                source = UTF16Source(PrefixedSource(prefix: head, rest: input), order)
                var decoded = [UInt8](repeating: 0, count: 64 * 1024)
                let m = try decoded.withUnsafeMutableBytes { try source.read(into: $0) }
                head = Array(decoded[0..<m])
                engine.note("\(what) is UTF-16 (\(order == .littleEndian ? "little" : "big")-endian): read as UTF-8")
                if head.isEmpty { return }
            } else if UTF8MarkSource.detect(head) {
                head.removeFirst(3)
            }
            if let (after, rest, skipped) = try skippingLeadingZeros(head: head, rest: source, count: 64 * 1024, path: path) {
                guard !after.isEmpty else {
                    engine.error("\(path): at byte 0: binary data (NUL bytes), not a log: \(what) is not read further")
                    return
                }
                engine.note("\(skipped) NUL bytes at the start passed over (a log truncated while it was written?)")
                head = after
                source = rest
            }
            if forced == nil { try Self.readMore(into: &head, from: source, fd: fd) }
            // Lines ended by CR alone are lines, as `analyze` reads them.
            var rest: ByteSource
            (head, rest) = CROnlyLines.stream(head: head, rest: source)
            // java.util.logging's two-line records (a Java relay's console piped in): each pair one
            // line, as `analyze` reads the same text (read as plain, every record's message lost
            // its time and level).
            var julFormat: LogFormat?
            if forced == nil, JavaLoggingSource.detect(head), let f = registry.format(named: "java-logging") {
                rest = JavaLoggingSource(PrefixedSource(prefix: head, rest: rest))
                head = []
                julFormat = f
            }
            let format: LogFormat
            if let forced, let f = registry.format(named: forced) {
                format = f
            } else if let julFormat {
                format = julFormat
            } else {
                let complete = head.lastIndex(of: 0x0A).map { Array(head[...$0]) } ?? head
                format = complete.withUnsafeBytes { FormatDetector(formats: registry.formats).detect(head: $0)?.format }
                    ?? registry.format(named: "plain")!
            }
            // What is not a text stream is said once, and standard input is not read further
            // (a NUL stream was read for ever without a word; gzip data read as text gave
            // "invalid UTF-8" and nothing else).
            switch sniffContent(head) {
            case .text: break
            case let kind:
                engine.error("\(path): \(kind.rawValue) data, not a text stream: tail reads lines as they come (castscope analyze - reads it, or decompress it first: zcat FILE | castscope tail -)")
                return
            }
            if forced == nil, let nul = FormatDetector.binaryAt(head, format: format) {
                engine.error("\(path): at byte \(nul): binary data (NUL bytes), not a log: \(what) is not read further")
                return
            }
            engine.note("reading \(what) as \(format.name)")
            let lines = LineReader(source: PrefixedSource(prefix: head, rest: rest), path: path)
            // With the vocabulary's prefilter, as `analyze` reads: a line that cannot hold a
            // recognized message is passed over on its bytes (a dense phone log piped in spent
            // most of tail's time matching every line).
            let reader = RecordReader(format: format, lines: lines, prefilter: engine.factory.matcher.prefilter)
            // (the newest line shown when the stream goes quiet, not when the next one comes)
            input.onQuiet = { [unowned reader] in try reader.streamWentQuiet() }
            defer {
                // What analyze would name for the same stream (lines too long, damaged fields,
                // bytes that are not UTF-8), said once the stream ends.
                for p in reader.problems { engine.error(p.description) }
                if let e = reader.stats.invalidUTF8Error(path: path, scope: "stream") { engine.error(e.description) }
            }
            try reader.run { rec in
                engine.handle(rec, path: path, fileIndex: fileIndex, cursor: nil)
                try engine.flush()
            }
        } catch is TailEngine.OutputFailed {
            // (standard output could not be written: tail ends, exit 5, saying so once)
        } catch let e as InputError {
            // (it names the stream itself: "<stdin>: <stdin>: at byte 0: read failed")
            engine.error(e.description)
        } catch {
            engine.error("\(path): \(error)")
        }
    }
}

extension StdinFollower {
    /// Reads on into `head` until it holds 8 lines, 64 KB, the end of the stream, or 2 seconds
    /// have passed (a stream that says little is read as it is).
    static func readMore(into head: inout [UInt8], from input: ByteSource, fd: Int32 = 0) throws {
        var started = timespec()
        clock_gettime(CLOCK_MONOTONIC, &started)
        func elapsedMs() -> Int {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            return Int(now.tv_sec - started.tv_sec) * 1000 + Int(now.tv_nsec - started.tv_nsec) / 1_000_000
        }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while head.count < 64 * 1024, head.reduce(0, { $0 + ($1 == 0x0A ? 1 : 0) }) < 8 {
            let left = 2000 - elapsedMs()
            guard left > 0 else { return }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(left)) > 0 else { return }
            let n = try chunk.withUnsafeMutableBytes { try input.read(into: $0) }
            if n == 0 { return }
            head.append(contentsOf: chunk[0..<n])
        }
    }
}

/// Runs `body` on a new detached thread (pthreads directly on Linux: Foundation's Thread
/// would load Foundation and ICU at every start of the program, ~10 ms).
func startThread(_ body: @escaping @Sendable () -> Void) {
    #if canImport(Glibc)
    final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { arg in
        Unmanaged<Box>.fromOpaque(arg!).takeRetainedValue().body()
        return nil
    }, box)
    precondition(status == 0, "pthread_create failed: \(status)")
    pthread_detach(thread)
    #else
    Thread { body() }.start()
    #endif
}

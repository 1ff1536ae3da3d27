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
        follower = JournalCursorFollower(source: source, filter: filter, cursorFile: cursorFile, fromStart: fromStart,
                                         exportFormat: exportFormat)
        self.engine = engine
        self.stop = stop
    }

    func run() {
        let engine = self.engine
        let stop = self.stop
        do {
            try follower.run(JournalCursorFollower.Callbacks(
                entry: { rec, cursor, label in engine.handle(rec, path: label, fileIndex: 0, cursor: cursor) },
                flush: { engine.flush() },
                gap: { from, to, text in engine.gap(from: from, to: to, text) },
                note: { engine.note($0) },
                idle: { engine.tick() },
                shouldStop: { stop.isSet }))
        } catch {
            engine.error("journal: \(error)")
        }
    }
}

/// Reads a text stream on standard input (format detected from what arrives first).
struct StdinFollower: @unchecked Sendable {
    let registry: ParserRegistry
    let forced: String?
    let engine: TailEngine

    func run() {
        let input = FileSource(fd: 0, path: "<stdin>")
        do {
            // Detect from the first chunk that arrives (whole lines of it).
            var head = [UInt8](repeating: 0, count: 64 * 1024)
            let n = try head.withUnsafeMutableBytes { try input.read(into: $0) }
            head.removeSubrange(n...)
            if n == 0 { return }
            // Lines ended by CR alone are lines, as `analyze` reads them.
            let rest: ByteSource
            (head, rest) = CROnlyLines.stream(head: head, rest: input)
            let format: LogFormat
            if let forced, let f = registry.format(named: forced) {
                format = f
            } else {
                let complete = head.lastIndex(of: 0x0A).map { Array(head[...$0]) } ?? head
                format = complete.withUnsafeBytes { FormatDetector(formats: registry.formats).detect(head: $0)?.format }
                    ?? registry.format(named: "plain")!
            }
            engine.note("reading standard input as \(format.name)")
            let lines = LineReader(source: PrefixedSource(prefix: head, rest: rest), path: "<stdin>")
            // With the vocabulary's prefilter, as `analyze` reads: a line that cannot hold a
            // recognized message is passed over on its bytes (a dense phone log piped in spent
            // most of tail's time matching every line).
            let reader = RecordReader(format: format, lines: lines, prefilter: engine.factory.matcher.prefilter)
            defer {
                // What analyze would name for the same stream (lines too long, damaged fields,
                // bytes that are not UTF-8), said once the stream ends.
                for p in reader.problems { engine.error(p.description) }
                if let e = reader.stats.invalidUTF8Error(path: "<stdin>", scope: "stream") { engine.error(e.description) }
            }
            try reader.run { rec in
                engine.handle(rec, path: "<stdin>", fileIndex: 1, cursor: nil)
                engine.flush()
            }
        } catch {
            engine.error("<stdin>: \(error)")
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

/// In-memory entry points for the libFuzzer targets in `Fuzz/` (and for tests): each runs one
/// stage, or the whole pipeline, on a byte buffer, without temporary files (the temp-file route
/// ran ~330 inputs/s; these run thousands). They must never crash, whatever the bytes.
public enum FuzzEntry {
    /// Built once per process: the built-in registry and an analyzer over it.
    nonisolated(unsafe) static var analyzer: Analyzer?
    nonisolated(unsafe) static var forcedAnalyzers: [String: Analyzer] = [:]

    static func make(forced: String?) -> Analyzer {
        if let forced, let a = forcedAnalyzers[forced] { return a }
        if forced == nil, let a = analyzer { return a }
        // (`CASTSCOPE_SLEEP_AFTER=0` fuzzes with every silent open session put to sleep)
        SessionStream.useSleepAfterFromEnvironment()
        var options = AnalyzeOptions()
        options.forcedFormat = forced
        // Small budgets: a fuzzer's input is small, and an expansion must stay cheap.
        options.budget.maxBytes = 64 << 20
        options.budget.maxMembers = 1000
        let a = try! Analyzer(registry: ParserRegistry.builtin(), options: options)
        a.parallelism = 1
        if let forced { forcedAnalyzers[forced] = a } else { analyzer = a }
        return a
    }

    /// The whole pipeline on `data` as one input file: sniffing (gzip, tar, zip, journal, text),
    /// format detection (or `forcedFormat`), records, events, sessions, findings, and every
    /// report writer.
    public static func pipeline(_ data: [UInt8], forcedFormat: String? = nil) {
        let a = make(forced: forcedFormat)
        a.memoryInputs = ["fuzz-input": data]
        let report = a.analyze(["fuzz-input"])
        a.memoryInputs = [:]
        _ = TextReport(color: true).render(report)
        _ = Sanitize.terminal(MarkdownReport.render(report))
        _ = JSONReport.render(report)
        _ = PerfettoReport.render(report)
    }

    /// The Unified Logging reader on a tracev3 file's bytes: header, catalogs, chunksets (LZ4),
    /// firehose/oversize/statedump entries, and every message rendered (no string files: each
    /// message is its arguments), as `analyze` reads an archive.
    public static func tracev3(_ data: [UInt8]) {
        let reader = UnifiedLogReader(strings: ULStringStore(root: nil), timesync: ULTimesync())
        var total = 0
        data.withUnsafeBytes { bytes in
            let summary = reader.read(bytes) { rec in total &+= rec.message.count &+ rec.subsystem.count }
            _ = summary.problems.map(\.description)
        }
        _ = total
    }

    /// The string files of a log archive: a uuidtext file and a shared-cache (dsc) file, each
    /// parsed (a damaged one is an error, never a crash) and asked for a string.
    public static func stringFiles(_ data: [UInt8]) {
        if let u = try? UUIDText(data, path: "fuzz.uuidtext") { _ = u.ranges.count; _ = u.imagePath }
        if let d = try? SharedCacheStrings(data, path: "fuzz.dsc") { _ = d.ranges.count; _ = d.images.count }
    }

    /// gzip inflation alone (multi-member, damaged streams).
    public static func gzip(_ data: [UInt8]) {
        guard let source = try? GzipSource(input: MemorySource(data), path: "fuzz.gz") else { return }
        drain(source)
    }

    /// libarchive over a buffer: every member's header and data (also through sniffing, so a
    /// gzip-compressed tar is a tar.gz).
    public static func archive(_ data: [UInt8]) {
        guard let reader = try? ArchiveReader(source: MemorySource(data), path: "fuzz.tar") else { return }
        var members = 0
        while members < 1000, let entry = try? reader.nextEntry() {
            members += 1
            _ = isUnsafeMemberName(entry.name)
            if entry.isRegularFile { drain(reader.entrySource(displayPath: "fuzz.tar!" + entry.name)) }
        }
    }

    /// The terminal escaping: its output never holds a control character but newline and tab
    /// (and, with `styles`, the allowed colour sequences), and the unescaped text round-trips.
    public static func sanitize(_ data: [UInt8]) {
        let s = String(decoding: data, as: UTF8.self)
        for (oneLine, styles) in [(false, false), (true, false), (false, true)] {
            let t = Sanitize.terminal(s, oneLine: oneLine, styles: styles)
            var bytes = Array(t.utf8)
            bytes.withUnsafeMutableBufferPointer { b in
                var i = 0
                while i < b.count {
                    if styles, b[i] == 0x1B, let n = Sanitize.ownStyleLength(UnsafeBufferPointer(b), at: i) {
                        i += n
                        continue
                    }
                    let c = b[i]
                    precondition(!(c < 0x20 && c != 0x09 && !(c == 0x0A && !oneLine)) && c != 0x7F, "control byte \(c) left")
                    i += 1
                }
            }
            precondition(!t.unicodeScalars.contains { (0x80...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) })
            bytes = []
        }
    }

    static func drain(_ source: ByteSource, limit: Int = 64 << 20) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        var total = 0
        while total < limit, let n = try? source.read(into: buffer), n > 0 { total += n }
    }
}

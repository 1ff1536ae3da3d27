#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lines of a text file written in another layout than the one its head was read as.
///
/// A ticket's attachment is often several outputs pasted into one file: an Xcode console and
/// then `journalctl -u relay`, a `log show` export with the relay's journal appended, `-o short`
/// then `-o short-iso`. A file is read in the format its head shows; the lines of another
/// format after it were counted unparsed, joined to the message before them, or taken as
/// print() lines: the device's session was lost and the relay's sessions were reported as
/// having no device session. Such lines are set aside as they are met (`ForeignLineTest`), with
/// their line numbers, and read again afterwards in the format they show, as a part of the same
/// file (`Analyzer`: a segment input).
public struct ForeignFormats: Sendable {
    /// The formats whose record a line may be: every `lines` format, and the JSON formats with
    /// an object a line, but those marked `"segments": false`.
    let formats: [LogFormat]
    public init(_ formats: [LogFormat]) { self.formats = formats.filter { ($0.kind == .lines || $0.kind == .jsonLines) && $0.segments } }
}

/// One reader's test of a line its own format does not read: does it start a record (or is it
/// the header) of another format? (A class that owns raw tables, walked without reference
/// counting, as `RecordReader` walks its own patterns: this runs on every print() line.)
final class ForeignLineTest {
    /// Every other format's patterns that hold a time, and a cheap test of each one's start
    /// (`probeKinds`: 0 none, 1–4 `RecordStartProbe`'s date, BSD date, clock, word-then-tab;
    /// 5 a first byte, in `firstBytes`).
    private let programs: UnsafeMutableBufferPointer<Unmanaged<PatternProgram>>
    private let probeKinds: UnsafeMutableBufferPointer<UInt8>
    private let firstBytes: UnsafeMutableBufferPointer<UInt8>
    private var matches: [PatternMatch]
    private let headers: [[UInt8]]
    /// Keys (`"key":`) that make an object a line a JSON format's record.
    private let jsonKeys: [[UInt8]]
    /// The formats, which own the programs.
    private let owners: [LogFormat]

    /// nil when no other format has a pattern or keys to look for.
    init?(_ candidates: ForeignFormats, besides format: LogFormat) {
        var programs: [Unmanaged<PatternProgram>] = []
        var kinds: [UInt8] = []
        var firsts: [UInt8] = []
        var slots: [Int] = []
        var headers: [[UInt8]] = []
        var jsonKeys: [[UInt8]] = []
        var owners: [LogFormat] = []
        for other in candidates.formats where other.name != format.name {
            owners.append(other)
            if other.kind == .jsonLines {
                jsonKeys += other.detectKeys.map { Array("\"\($0)\":".utf8) }
                continue
            }
            for (i, p) in other.patterns.enumerated() {
                // Only patterns with a time: one without (Xcode's untimed `Process[pid:tid] …`)
                // would take many a print() line.
                guard p.ops.contains(where: { if case .field(_, let type) = $0 { Self.timeTypes.contains(type) } else { false } })
                else { continue }
                programs.append(Unmanaged.passUnretained(p.program))
                slots.append(p.names.count)
                let probe = other.patternProbes[i]
                if case .literal(let l) = probe, let first = l.first {
                    kinds.append(5)
                    firsts.append(first)
                } else {
                    // (5, a slashed ISO date, is no cheap test here: 5 is a first byte's)
                    kinds.append(probe.cheapCode == 5 ? 0 : UInt8(probe.cheapCode))
                    firsts.append(0)
                }
            }
            headers += other.headers.map { Array($0.utf8) }.filter { $0.count >= 8 }
        }
        guard !programs.isEmpty || !jsonKeys.isEmpty else { return nil }
        self.programs = .allocate(capacity: programs.count)
        _ = self.programs.initialize(from: programs)
        probeKinds = .allocate(capacity: kinds.count)
        _ = probeKinds.initialize(from: kinds)
        firstBytes = .allocate(capacity: firsts.count)
        _ = firstBytes.initialize(from: firsts)
        matches = slots.map { PatternMatch(slots: $0) }
        self.headers = headers
        self.jsonKeys = jsonKeys
        self.owners = owners
    }

    deinit {
        programs.deallocate()
        probeKinds.deallocate()
        firstBytes.deallocate()
    }

    static let timeTypes: Set<Pattern.FieldType> = [.iso, .isotz, .isolocal, .bsd, .clock, .full, .epoch, .mono, .bsdlocal, .isoany, .mdy]

    /// The layouts of the last lines no other format read (`layout`): a line laid out the same
    /// is not tried again (an Xcode console's print() lines that begin with the app's own
    /// timestamp would otherwise each be tried against every other format's patterns).
    private var failed = [UInt64](repeating: 0, count: 16)
    private var nextFailed = 0

    /// Whether `line` starts a record of another format (a pattern of it matches the whole
    /// line) or is one of its headers.
    func starts(_ line: UnsafeRawBufferPointer) -> Bool {
        guard let first = line.first, first != 0x20, first != 0x09, let base = line.baseAddress else { return false }
        if first == UInt8(ascii: "{") {
            return line.last == UInt8(ascii: "}") && jsonKeys.contains { contains(line, $0) }
        }
        let shape = Self.layout(line)
        if failed.contains(shape) { return false }
        // The cheap tests once each, not once per pattern.
        let iso = ISODate.starts(base, line.count), bsd = BSDDate.starts(base, line.count), clock = Clock.starts(base, line.count)
        for i in 0..<programs.count {
            switch probeKinds[i] {
            case 1: if !iso { continue }
            case 2: if !bsd { continue }
            case 3: if !clock { continue }
            case 4: if !WordThenTab.starts(base, line.count) { continue }
            case 5: if first != firstBytes[i] { continue }
            default: break
            }
            if programs[i]._withUnsafeGuaranteedRef({ $0.match(line, into: &matches[i]) }) { return true }
        }
        for h in headers where line.starts(with: h) { return true }
        failed[nextFailed] = shape
        nextFailed = (nextFailed + 1) & 15
        return false
    }

    /// A hash of the layout of a line's first 48 bytes: each run of digits as one `0`, each
    /// run of letters as one `a`, other bytes as they are (never 0: the empty slots of
    /// `failed`). Lines of one layout whose words differ in length are one layout.
    static func layout(_ line: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        var last: UInt8 = 0
        for i in 0..<min(line.count, 48) {
            var b = line[i]
            if b &- 0x30 < 10 { b = 0x30 } else if (b | 0x20) &- 0x61 < 26 { b = 0x61 }
            if b == last && (b == 0x30 || b == 0x61) { continue }
            last = b
            h = (h ^ UInt64(b)) &* 0x100_0000_01b3
        }
        return h | 1
    }
}

/// The lines set aside by one reader (or the readers of a file's ranges, joined in file order):
/// their bytes, in memory up to `memoryBytes` and then in an unlinked temporary file, and where
/// each run of them was in the file.
public final class ForeignLines: @unchecked Sendable {
    /// Bytes kept in memory before the rest go to a temporary file.
    static let memoryBytes = 1 << 20

    private var bytes: [UInt8] = []
    private var fd: Int32 = -1
    private var written: Int64 = 0
    /// No temporary file could be made or written (a full disk): the lines from then on stay
    /// in memory (`bytes`, after the `written` ones).
    private var inMemoryOnly = false
    /// Each run of consecutive lines: its first line here (1-based) and in the file.
    private var runs: [(here: Int, line: Int)] = []
    public private(set) var lineCount = 0
    /// The longest line, to read them back with a buffer that holds it.
    private var longest = 0

    init() {}

    /// Sets aside line `number` of the file.
    func append(_ line: UnsafeRawBufferPointer, number: Int) {
        // (a new run unless it follows the last line set aside)
        if runs.last.map({ $0.line + (lineCount - $0.here + 1) }) != number { runs.append((lineCount + 1, number)) }
        lineCount += 1
        longest = max(longest, line.count)
        bytes.append(contentsOf: line)
        bytes.append(0x0A)
        if bytes.count >= Self.memoryBytes && !inMemoryOnly { spill() }
    }

    /// Adds `other`'s lines after these (those of the next range of the same file), their
    /// line numbers as `fileLine` gives them.
    func append(_ other: ForeignLines, fileLine: (Int) -> Int) {
        other.forEachLine { line, number in append(line, number: fileLine(number)) }
    }

    /// The file's line number of line `here` (1-based) of these.
    func fileLine(_ here: Int) -> Int {
        let k = runs.partitionPoint { $0.here <= here } - 1
        guard k >= 0 else { return here }
        return runs[k].line + (here - runs[k].here)
    }

    /// The first and last line of the file among these.
    var span: ClosedRange<Int>? {
        guard let first = runs.first, let last = runs.last else { return nil }
        return first.line...(last.line + (lineCount - last.here))
    }

    /// `line 5`, `lines 54–170`, or `117 lines between line 54 and line 400`.
    var described: String {
        guard let span else { return "no line" }
        if lineCount == 1 { return "line \(span.lowerBound)" }
        if span.count == lineCount { return "lines \(span.lowerBound)–\(span.upperBound)" }
        return "\(lineCount) lines between line \(span.lowerBound) and line \(span.upperBound)"
    }

    /// Up to `n` bytes from the start (the head a format is detected from).
    func head(_ n: Int) -> [UInt8] { drained(source(), limit: n) }

    /// The lines, as a source to read them from again: those written to the temporary file,
    /// then those in memory (lines that fit in memory make no file).
    func source() -> ByteSource {
        if fd >= 0 && !inMemoryOnly { spill() }
        guard written > 0 else { return MemorySource(bytes) }
        return SpilledSource(fd: fd, size: written, then: MemorySource(bytes))
    }

    private func forEachLine(_ body: (UnsafeRawBufferPointer, Int) -> Void) {
        let lines = LineReader(source: source(), path: "", maxLineLength: longest + 1)
        while let line = try? lines.nextLine() {
            body(line, fileLine(lines.lineNumber))
        }
    }

    private func spill() {
        if fd < 0 {
            fd = unlinkedTemporaryFile("foreign")
            guard fd >= 0 else { inMemoryOnly = true; return }
        }
        guard !bytes.isEmpty else { return }
        if bytes.withUnsafeBytes({ pwriteAll(fd, $0, at: written) }) {
            written += Int64(bytes.count)
            bytes.removeAll(keepingCapacity: true)
        } else {
            // Kept in memory after all: better than losing the lines (or their numbers).
            inMemoryOnly = true
        }
    }

    deinit { if fd >= 0 { close(fd) } }
}

/// Reads the spilled lines back with pread(2) (the file stays open for `ForeignLines`), then
/// what `then` holds.
private final class SpilledSource: ByteSource {
    private let fd: Int32
    private let size: Int64
    private let then: ByteSource
    private var offset: Int64 = 0
    var consumedOffset: UInt64 { UInt64(offset) + then.consumedOffset }
    init(fd: Int32, size: Int64, then: ByteSource) { (self.fd, self.size, self.then) = (fd, size, then) }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let left = Int(size - offset)
        guard left > 0, let base = buffer.baseAddress, buffer.count > 0 else { return try then.read(into: buffer) }
        let n = pread(fd, base, min(left, buffer.count), off_t(offset))
        guard n > 0 else { return try then.read(into: buffer) }
        offset += Int64(n)
        return n
    }
}

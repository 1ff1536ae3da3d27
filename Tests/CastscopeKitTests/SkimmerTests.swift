import Foundation
import Testing

@testable import CastscopeKit

/// Returns at most `step` bytes per read, so lines straddle buffer refills.
private final class TrickleSource: ByteSource {
    private let bytes: [UInt8]
    private let step: Int
    private var position = 0
    init(_ bytes: [UInt8], step: Int) {
        self.bytes = bytes
        self.step = step
    }
    var consumedOffset: UInt64 { UInt64(position) }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, step, bytes.count - position)
        if n > 0 { bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + position, byteCount: n) } }
        position += n
        return n
    }
}

@Suite("skimming irrelevant lines")
struct SkimmerTests {
    struct Reading: Equatable {
        var records: [String] = []
        var lines = 0, records_ = 0, skipped = 0, unparsed = 0, invalidUTF8 = 0
        var firstInvalidUTF8: Int?
        var problems: [String] = []
    }

    /// Reads `bytes` as `format` with the built-in vocabulary's prefilter, skimming or not.
    func read(_ bytes: [UInt8], format: LogFormat, skims: Bool, step: Int = 1 << 30) throws -> (Reading, skimmed: Int) {
        let registry = try ParserRegistry.builtin()
        let prefilter = Prefilter(anchors: EventMatcher(vocabularies: registry.vocabularies).anchors)
        let reader = RecordReader(format: format, lines: LineReader(source: TrickleSource(bytes, step: step), path: "t", maxLineLength: 4096),
                                  prefilter: prefilter, skims: skims)
        var out = Reading()
        try reader.run { rec in
            var fields = ["\(rec.line)"]
            for field in RecordField.allCases { if let v = rec.string(field) { fields.append("\(field.name)=\(v)") } }
            if let t = rec.time { fields.append("time=\(t)") }
            out.records.append(fields.joined(separator: "|"))
        }
        out.lines = reader.stats.lines
        out.records_ = reader.stats.records
        out.skipped = reader.stats.skipped
        out.unparsed = reader.stats.unparsed
        out.invalidUTF8 = reader.stats.invalidUTF8Lines
        out.firstInvalidUTF8 = reader.stats.firstInvalidUTF8
        out.problems = reader.problems.map(\.description)
        return (out, reader.skimmedLines)
    }

    func textFiles() throws -> [URL] {
        var urls: [URL] = []
        for dir in [packageRoot.appendingPathComponent("samples"), realLogs] {
            let walker = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: nil)!
            for case let url as URL in walker where ["txt", "ndjson", "log"].contains(url.pathExtension) { urls.append(url) }
        }
        return urls
    }

    @Test("every sample and real log: skimming gives the same records, counts and errors as reading line by line")
    func samplesAndRealLogs() throws {
        let registry = try ParserRegistry.builtin()
        let detector = FormatDetector(formats: registry.formats)
        let files = try textFiles()
        #expect(files.count >= 20)
        var skimmedSomewhere = 0
        for url in files {
            let bytes = try [UInt8](Data(contentsOf: url))
            let format = try #require(bytes.withUnsafeBytes { detector.detect(head: $0)?.format }, "\(url.lastPathComponent)")
            for step in [1 << 30, 97] {
                let slow = try read(bytes, format: format, skims: false, step: step)
                let fast = try read(bytes, format: format, skims: true, step: step)
                #expect(fast.0 == slow.0, "\(url.lastPathComponent), reads of \(step) bytes")
                #expect(slow.skimmed == 0)
                skimmedSomewhere += fast.skimmed
            }
        }
        #expect(skimmedSomewhere > 20)  // these files are mostly broadcast lines; the next test is mostly noise
    }

    @Test("noise with CRLF, blank lines, non-ASCII, headers mid-file and continuations of kept and skipped records")
    func trickyNoise() throws {
        let registry = try ParserRegistry.builtin()
        let head = "2026-03-12 10:00:00.00"
        var text = "Timestamp                       Thread     Type        Activity             PID    TTL  \n"
        for i in 0..<400 {
            let t = "\(head)\(String(format: "%04d", i))+0100 0x3fb13    Default     0x0                  0      0    "
            switch i % 10 {
            case 0: text += t + "kernel: (AppleBCMWLANCore) wl0: Roamed, reason #\(i)\r\n"
            case 1: text += "\n"
            case 2: text += t + "SpringBoard: caf\u{E9} \u{1F600} scene \(i)\n"
            case 3: text += t + "BroadcastExtension: broadcast started\n  continued detail \(i)\n\tmore\n"
            case 4: text += t + "cloudd: noise {\n  \"key\" = \(i);\n}\n"
            case 5: text += "Filtering the log data using \"process == 'x'\"\n"
            case 6: text += t + "BroadcastExtension: Broadcast finished\n"
            case 7: text += t + "mDNSResponder: retry \(i)\n" 
            case 8 where i % 20 == 8:
                // A line with an anchor that is no record, then lines continuing nothing.
                text += "stray: open socket connection\n  indented after it\nnot a record either \(i)\n"
            case 9:
                // A kept record, a blank line, then a line continuing it without indent (the
                // skimmer runs while it is pending and must leave that line to it).
                text += t + "BroadcastExtension: Broadcast finished\n\nunindented continuation \(i)\n\n"
            default: text += "   indented orphan \(i)\n"
            }
        }
        var bytes = Array(text.utf8)
        bytes.append(contentsOf: [0xFF, 0x0A])  // an invalid UTF-8 line
        bytes.append(contentsOf: Array("\(head)9999+0100 0x1 Default 0x0 0 0 kernel: last line without newline".utf8))
        let format = try #require(registry.format(named: "apple-default"))
        for step in [1 << 30, 1, 7, 4096] {
            let slow = try read(bytes, format: format, skims: false, step: step)
            let fast = try read(bytes, format: format, skims: true, step: step)
            #expect(fast.0 == slow.0, "reads of \(step) bytes")
            #expect(fast.skimmed > (step > 100 ? 100 : 10), "reads of \(step) bytes")
            #expect(slow.0.invalidUTF8 == 1)
        }
    }
}

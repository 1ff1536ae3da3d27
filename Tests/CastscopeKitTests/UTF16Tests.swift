import Foundation
import Testing

@testable import CastscopeKit

/// A log saved as UTF-16 (Windows PowerShell 5.1's `>` and `Out-File`, Notepad's "Unicode")
/// reads as the UTF-8 text it holds.
@Suite("UTF-16 text and byte-order marks")
struct UTF16Tests {
    static func utf16(_ s: String, _ order: UTF16Source.Order, bom: Bool) -> [UInt8] {
        var out: [UInt8] = []
        for u in Array((bom ? "\u{FEFF}" : "").utf16) + Array(s.utf16) {
            out += order == .littleEndian ? [UInt8(u & 0xFF), UInt8(u >> 8)] : [UInt8(u >> 8), UInt8(u & 0xFF)]
        }
        return out
    }

    @Test("ASCII, CRLF, accents, CJK and emoji in both byte orders, with and without a byte-order mark, in reads of any size")
    func decodes() throws {
        let text = "2026-03-12 10:20:00.514204+0100  localhost BroadcastExtension[1204]: open socket connection\r\ncaf\u{E9} \u{65E5}\u{672C} \u{1F4F9} end\n"
        for order in [UTF16Source.Order.littleEndian, .bigEndian] {
            for bom in [true, false] {
                let bytes = Self.utf16(text, order, bom: bom)
                #expect(UTF16Source.detect(bytes) == order, "\(order) bom \(bom)")
                for chunk in [1, 2, 3, 7, 4096] {
                    #expect(try drain(UTF16Source(ChunkedSource(bytes, chunk: chunk), order)) == Array(text.utf8), "\(order) bom \(bom) chunk \(chunk)")
                }
                #expect(UTF16Source.decoded(bytes, order) == Array(text.utf8))
            }
        }
        // Damage: an unpaired high surrogate (mid-text, then last before an odd last byte), a lone low one.
        let bad: [UInt8] = [0xFF, 0xFE, 0x61, 0x00, 0x00, 0xD8, 0x62, 0x00, 0x00, 0xDC, 0x63, 0x00, 0x3D, 0xD8, 0x0A]
        #expect(try drain(UTF16Source(ChunkedSource(bad, chunk: 1), .littleEndian)) == Array("a\u{FFFD}b\u{FFFD}c\u{FFFD}\u{FFFD}".utf8))
        #expect(try drain(UTF16Source(MemorySource([0xFF, 0xFE, 0x61, 0x00, 0x00, 0xD8]), .littleEndian)) == Array("a\u{FFFD}".utf8))
    }

    @Test("detection: not UTF-8 text, not UTF-32's mark, not binary with NULs")
    func detection() {
        #expect(UTF16Source.detect(Array("plain UTF-8 text, a line of a log\nand another one\n".utf8)) == nil)
        #expect(UTF16Source.detect([0xFF, 0xFE, 0x00, 0x00, 0x61, 0x00, 0x00, 0x00]) == nil)
        #expect(UTF16Source.detect([UInt8](repeating: 0, count: 4096)) == nil)
        #expect(UTF16Source.detect((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) }) == nil)
        // A journal file's header is sniffed before (never read as text).
        #expect(UTF16Source.detect(Array("LPKSHHRH".utf8) + [UInt8](repeating: 0, count: 248)) == nil)
    }

    @Test("the retry-storm sample saved by PowerShell (UTF-16LE, mark, CRLF), as UTF-16BE, gzipped and in a zip: the same report as the UTF-8 file")
    func sameReport() throws {
        let sample = packageRoot.appendingPathComponent("samples/retry-storm/log-stream-debug.txt")
        let text = try String(contentsOf: sample, encoding: .utf8)
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let le = Self.utf16(text.replacingOccurrences(of: "\n", with: "\r\n"), .littleEndian, bom: true)
        let files: [(String, [UInt8])] = [
            ("syslog.txt", Array(text.utf8)),
            ("le.txt", le),
            ("be.txt", Self.utf16(text, .bigEndian, bom: true)),
            ("le.txt.gz", makeArchive(.gz, [("le.txt", le)])),
            ("le.zip", makeArchive(.zip, [("logs/syslog.txt", le)])),
        ]
        let reports = try reportsWithoutNames(files, in: dir, alsoNames: ["le.zip!logs/syslog.txt"])
        #expect(reports["syslog.txt"]!.contains("failed-to-connect"))
        for (name, _) in files.dropFirst() { #expect(reports[name] == reports["syslog.txt"], "\(name)") }
    }

    @Test("a UTF-8 byte-order mark before the first line (Notepad, PowerShell 7): the first ndjson object and a header are kept, plain and gzipped")
    func utf8Mark() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for sample in ["samples/sendbird-call-ended/log-show.ndjson", "samples/retry-storm/log-stream-debug.txt"] {
            let bytes = Array(try Data(contentsOf: packageRoot.appendingPathComponent(sample)))
            let files: [(String, [UInt8])] = [
                ("plain.log", bytes),
                ("marked.log", [0xEF, 0xBB, 0xBF] + bytes),
                ("marked.log.gz", makeArchive(.gz, [("marked.log", [0xEF, 0xBB, 0xBF] + bytes)])),
            ]
            let reports = try reportsWithoutNames(files, in: dir)
            #expect(reports["plain.log"]!.contains("recognized") && !reports["marked.log"]!.contains("unparsed"), "\(sample)")
            #expect(reports["marked.log"] == reports["plain.log"], "\(sample)")
            #expect(reports["marked.log.gz"] == reports["plain.log"], "\(sample)")
        }
    }
}

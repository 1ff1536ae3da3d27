import Foundation
import Testing

@testable import CastscopeKit

/// Text files on disk are read in place (`RangeFileSource.mapped`): the same lines, numbers and
/// look-backs as a copy read through a buffer, across the pages let go behind the reader.
@Suite("lines read in place from a mapped range")
struct MappedLinesTests {
    @Test("a mapped range gives the lines a buffered read gives: CRLF, empty runs, a line over the limit, no final newline, ranges that start mid-page")
    func sameLinesAsABufferedRead() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var text = ""
        var k = 0
        // Over three times the release step, so that pages are let go while lines remain.
        while text.utf8.count < 3 * LineReader.releaseEvery + 12345 {
            k += 1
            switch k % 97 {
            case 0: text += "\n\n\n"
            case 1: text += "crlf line \(k)\r\n"
            case 2: text += String(repeating: "x", count: 70_000) + "\n"
            default: text += "2026-03-12 10:00:00.\(100_000 + k)+0100 0x1 Default 0x0 2107 0 BroadcastExtension: line \(k)\n"
            }
        }
        text += String(repeating: "y", count: 2_100_000) + "\n"  // over the 1 MB limit
        text += "last line without a newline"
        let file = dir.appendingPathComponent("big.log")
        try Data(text.utf8).write(to: file)
        let size = UInt64(text.utf8.count)
        for (from, to) in [(UInt64(0), size), (UInt64(4097), size - 10), (UInt64(123_457), UInt64(3 * LineReader.releaseEvery))] {
            let range = try RangeFileSource(path: file.path, from: from, to: to)
            #expect(range.mapped != nil)
            let mapped = LineReader(source: range, path: "m", maxLineLength: 1 << 20)
            let bytes = Array(text.utf8[text.utf8.index(text.utf8.startIndex, offsetBy: Int(from))..<text.utf8.index(text.utf8.startIndex, offsetBy: Int(to))])
            let copied = LineReader(source: MemorySource(bytes), path: "m", maxLineLength: 1 << 20)
            var n = 0
            while true {
                let a = try mapped.nextLine().map { Array($0) }
                let b = try copied.nextLine().map { Array($0) }
                #expect(a == b, "line \(n + 1) of \(from)..<\(to)")
                guard a != nil, a == b else { break }
                #expect(mapped.lineNumber == copied.lineNumber)
                n += 1
                if n % 5000 == 0 {
                    // A look back after pages were let go reads them again.
                    var back: [Int] = []
                    mapped.precedingLines { number, _ in back.append(number); return back.count < 3 }
                    #expect(back.first == mapped.lineNumber, "\(back)")
                }
            }
            #expect(n > 1000)
            #expect(mapped.problems.map(\.description) == copied.problems.map(\.description))
        }
    }
}

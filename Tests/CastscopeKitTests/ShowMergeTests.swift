import Foundation
import Testing

@testable import CastscopeKit

@Suite("castscope show: the time merge in bounded memory")
struct ShowMergeTests {
    /// Three logs whose lines interleave in time, out of order within each file too, with many
    /// equal times across files (ties go in arrival order: file, then line).
    func interleaved(in dir: URL) throws {
        for (f, name) in ["a", "b", "c"].enumerated() {
            var text = ""
            for i in 0..<400 {
                let second = (i * 7 + f * 3) % 50
                text += String(format: "2026-03-12 10:00:%02d.000000+0000 proc%@[1%d:2] file %@ line %d\n", second, name, f, name, i)
            }
            try text.write(to: dir.appendingPathComponent("\(name).log"), atomically: true, encoding: .utf8)
        }
    }

    func show(_ paths: [String], style: LogShowOptions.Style, runBytes: Int, directory: String? = nil) throws -> (text: String, spilled: Int) {
        var options = LogShowOptions()
        options.style = style
        let show = LogShow(registry: try ParserRegistry.builtin(), options: options)
        show.runBytes = runBytes
        show.temporaryDirectory = directory
        var out: [UInt8] = []
        show.run(paths) { out.append(contentsOf: $0); return true }
        #expect(show.errors.isEmpty, "\(show.errors)")
        return (String(decoding: out, as: UTF8.self), show.spilledRecords)
    }

    @Test("runs on disk give the bytes of one sort in memory; ties keep arrival order; no temporary file keeps them in memory")
    func runsMerge() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try interleaved(in: dir)
        // Beside them, the real iOS archive files as a log archive (their records' times are years apart).
        let reference = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/reference/unified-logging")
        let archive = dir.appendingPathComponent("device.logarchive")
        try FileManager.default.createDirectory(at: archive.appendingPathComponent("Persist"), withIntermediateDirectories: true)
        for name in ["uuidtext", "timesync"] {
            try FileManager.default.copyItem(at: reference.appendingPathComponent(name), to: archive.appendingPathComponent(name))
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: reference.path) where name.hasSuffix(".tracev3") {
            try FileManager.default.copyItem(at: reference.appendingPathComponent(name), to: archive.appendingPathComponent("Persist/" + name))
        }
        let paths = [dir.path]
        for style in [LogShowOptions.Style.default, .ndjson, .json] {
            let whole = try show(paths, style: style, runBytes: 1 << 30)
            #expect(whole.spilled == 0)
            let runs = try show(paths, style: style, runBytes: 4096)
            #expect(runs.spilled > 1000, "many small runs were written and merged")
            #expect(runs.text == whole.text, "\(style)")
            let noFile = try show(paths, style: style, runBytes: 4096, directory: "/nonexistent/castscope")
            #expect(noFile.spilled == 0 && noFile.text == whole.text)
        }
        // The order itself: by time, then file a, b, c, then line.
        try FileManager.default.removeItem(at: archive)
        let lines = try show([dir.path], style: .default, runBytes: 2048).text.split(separator: "\n").dropFirst()
        #expect(lines.count == 1200)
        let keys = lines.map { l -> (String, Int, Int) in
            let words = l.split(separator: " ")
            return (String(words[1]), ["a", "b", "c"].firstIndex(of: String(words[words.count - 3]))!, Int(words[words.count - 1])!)
        }
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 <= $1 }, "time, then file, then line")
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// A paste copied out of a terminal that wraps (tmux, screen, a narrow window) or put through
/// `fold -w`: long lines broken at a fixed width (`HardWrapSource`).
@Suite("Lines broken at a terminal's width")
struct HardWrapTests {
    /// `fold -w width` in columns, as a terminal wraps: a character is one, a TAB goes to the
    /// next multiple of 8 (fold(1) counts bytes, and would cut a UTF-8 sequence).
    static func fold(_ text: String, width: Int) -> String {
        var out = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var column = 0
            for c in line {
                let next = c == "\t" ? (column / 8 + 1) * 8 : column + 1
                if next > width {
                    out += "\n"
                    column = 0
                }
                column = c == "\t" ? (column / 8 + 1) * 8 : column + 1
                out.append(c)
            }
            out += "\n"
        }
        return String(out.dropLast())
    }

    /// The timed samples and real pastes (an untimed paste gives no way to tell a record's rest).
    func timedLogs() throws -> [(name: String, text: String)] {
        let fm = FileManager.default
        var urls: [URL] = []
        let samples = packageRoot.appendingPathComponent("samples")
        for dir in try fm.contentsOfDirectory(atPath: samples.path) {
            for f in try fm.contentsOfDirectory(atPath: samples.appendingPathComponent(dir).path) where f.hasSuffix(".txt") {
                urls.append(samples.appendingPathComponent(dir).appendingPathComponent(f))
            }
        }
        for f in try fm.contentsOfDirectory(atPath: realLogs.path) { urls.append(realLogs.appendingPathComponent(f)) }
        return try urls.sorted { $0.path < $1.path }.map { ($0.lastPathComponent, try String(contentsOf: $0, encoding: .utf8)) }
    }

    @Test("no unwrapped sample or real paste is taken for a wrapped one")
    func noFalseWidth() throws {
        for log in try timedLogs() {
            #expect(HardWrapSource.detect(Array(log.text.utf8.prefix(HardWrapSource.headBytes))) == nil, "\(log.name)")
        }
    }

    @Test("the width is found, and the lines come back whole, in any split of the input; line numbers kept")
    func joinsAgain() throws {
        let device = try String(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"), encoding: .utf8)
        for width in [80, 100, 132] {
            let folded = Self.fold(device, width: width)
            #expect(HardWrapSource.detect(Array(folded.utf8.prefix(HardWrapSource.headBytes))) == width)
            for chunk in [1, 7, 4096] {
                let source = HardWrapSource(ChunkedSource(Array(folded.utf8), chunk: chunk), width: width)
                let out = String(decoding: drained(source), as: UTF8.self)
                // Each record whole again, an empty line in place of each line joined to it.
                #expect(out.split(separator: "\n", omittingEmptySubsequences: true) == device.split(separator: "\n", omittingEmptySubsequences: true),
                        "width \(width), chunk \(chunk)")
                #expect(out.split(separator: "\n", omittingEmptySubsequences: false).count
                        == folded.split(separator: "\n", omittingEmptySubsequences: false).count)
            }
        }
    }

    @Test("a timed paste folded at 80, 100, 132 or 200 columns reads as the paste: lines, sessions, outcomes, findings")
    func foldedReadsAsWhole() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let registry = try ParserRegistry.builtin()
        func gist(_ text: String) throws -> String {
            let url = dir.appendingPathComponent("paste.txt")
            try text.write(to: url, atomically: true, encoding: .utf8)
            let r = try Analyzer(registry: registry).analyze([url.path])
            let findings = r.findings.map(\.kind).sorted()
            return "\(r.inputs.map(\.format)) \(r.inputs.reduce(0) { $0 + $1.events }) \(r.sessionCount) \(r.sessions.map(\.outcome.rawValue)) \(findings)"
        }
        var checked = 0
        for log in try timedLogs() {
            let whole = try gist(log.text)
            for width in [80, 100, 132, 200] {
                let folded = Self.fold(log.text, width: width)
                // Wrapped lines the head does not show twice are not told apart (a paste of three
                // lines, one of them wrapped): only pastes whose width can be found.
                guard HardWrapSource.detect(Array(folded.utf8.prefix(HardWrapSource.headBytes))) != nil else { continue }
                #expect(try gist(folded) == whole, "\(log.name) at \(width)")
                checked += 1
            }
        }
        #expect(checked >= 25)
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// Runs scripts/validate-json.py (PyPI `jsonschema`, installed by `make deps`) on files.
func validateJSON(_ mode: String, _ files: [URL]) throws -> (status: Int32, output: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", packageRoot.appendingPathComponent("scripts/validate-json.py").path, mode] + files.map(\.path)
    let pipe = Pipe()
    p.standardOutput = pipe
    p.standardError = pipe
    try p.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

@Suite("JSON Schema: schema/*.schema.json describe what analyze --json and tail --json write", .serialized)
struct SchemaTests {
    @Test("every sample's analyze --json (and a 65-session bundle's) validates against castscope.report.schema.json")
    func reports() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var files: [URL] = []
        var inputs = try FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent("samples").path)
            .filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.sorted().map { "samples/" + $0 }
        inputs += ["samples/", try manySessionsLog(65, in: dir).path]
        for (n, input) in inputs.enumerated() {
            let r = try castscope(["analyze", "--json", input])
            #expect(r.status == 0, "\(input): \(r.stderr)")
            let f = dir.appendingPathComponent("r\(n).json")
            try r.stdout.write(to: f, atomically: true, encoding: .utf8)
            files.append(f)
        }
        // A report with input errors and findings of every kind the samples make.
        let r = try castscope(["analyze", "--json", "no/such/file.log", "samples/retry-storm"])
        #expect(r.status == 4, "a named path that does not exist")
        let json = try #require(r.json)
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["inputErrors"] as? Int == 1, "input errors counted as such")
        #expect((summary["severities"] as? [String: Any])?["error"] as? Int == 2)
        #expect(summary["findingCount"] as? Int == 3)
        #expect(((summary["generator"] as? [String: Any])?["commandLine"] as? [String])?.first == "castscope")
        let f = dir.appendingPathComponent("errors.json")
        try r.stdout.write(to: f, atomically: true, encoding: .utf8)
        files.append(f)
        let v = try validateJSON("report", files)
        #expect(v.status == 0, "\(v.output)")
        #expect(v.output.contains("report=\(files.count)"))
    }

    @Test("tail --json: event, session, relay, summary lines from real runs, gap from the writer, each validates against its schema")
    func tailLines() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Standard input: device sessions.
        let data = try Data(contentsOf: packageRoot.appendingPathComponent("samples/sendbird-call-ended/log-show.ndjson"))
        let stdin = try castscope(["tail", "--no-journal", "--json", "--events", "-"], stdin: data)
        #expect(stdin.status == 0)
        let a = dir.appendingPathComponent("stdin.jsonl")
        try stdin.stdout.write(to: a, atomically: true, encoding: .utf8)
        let connected = stdin.stdout.split(separator: "\n").first { $0.contains("\"change\":\"connected\"") } ?? ""
        #expect(connected.contains("\"attempts\":2,") && connected.contains("\"pid\":1533,"), "numbers, not strings: \(connected)")
        #expect(!connected.contains("\"pid\":\""))
        // The relay's journal: relay lines; tail follows until interrupted, then prints its summary.
        let b = dir.appendingPathComponent("relay.jsonl")
        FileManager.default.createFile(atPath: b.path, contents: nil)
        let out = try FileHandle(forWritingTo: b)
        let p = Process()
        p.executableURL = packageRoot.appendingPathComponent(".build/debug/castscope")
        p.arguments = ["tail", "--file", "samples/relay/relay.journal", "--from-start", "--json", "--events"]
        p.currentDirectoryURL = packageRoot
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        for _ in 0..<100 {
            if (try? String(contentsOf: b, encoding: .utf8))?.components(separatedBy: "\"type\":\"relay\"").count ?? 0 > 11 { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        p.interrupt()
        p.waitUntilExit()
        try out.close()
        let relayLines = try String(contentsOf: b, encoding: .utf8)
        #expect(relayLines.contains("\"type\":\"relay\"") && relayLines.contains("\"type\":\"summary\""))
        #expect(relayLines.contains("\"frames\":615"), "frames as a number")
        // A gap line needs a vacuumed journal (TailTests covers it end to end): here the writer's own output.
        let live = LiveReport(json: true, color: false)
        let c = dir.appendingPathComponent("gap.jsonl")
        try (live.gap(from: 1_773_306_000_000_000, to: 1_773_306_060_000_000, "the saved cursor's entry no longer exists") + "\n"
            + live.gap(from: nil, to: nil, "unknown span") + "\n").write(to: c, atomically: true, encoding: .utf8)
        // A summary with sessions let go of (`earlier`): 60 sessions 97 s apart, the first ones
        // ended over half an hour before the last.
        let many = dir.appendingPathComponent("many.log")
        let gen = Process()
        gen.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gen.arguments = ["python3", packageRoot.appendingPathComponent("scripts/generate-many-sessions.py").path, "60", many.path]
        try gen.run()
        gen.waitUntilExit()
        let longer = try castscope(["tail", "--no-journal", "--json", "-"], stdin: try Data(contentsOf: many))
        let d = dir.appendingPathComponent("earlier.jsonl")
        try longer.stdout.write(to: d, atomically: true, encoding: .utf8)
        #expect(longer.stdout.contains("\"earlier\":{\"sessions\":"), "\(longer.stdout.suffix(400))")
        let v = try validateJSON("tail", [a, b, c, d])
        #expect(v.status == 0, "\(v.output)")
        for type in ["event", "session", "relay", "summary", "gap"] { #expect(v.output.contains("\(type)="), "\(type) checked") }
    }

    @Test("the schema files are valid JSON Schema (draft 2020-12) and name the report version the writer uses")
    func schemaFiles() throws {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("schema/castscope.report.schema.json"), encoding: .utf8)
        #expect(text.contains("\"const\": \"\(JSONReport.schema)\""))
        let v = try validateJSON("tail", [])
        #expect(v.status == 0, "\(v.output)")
    }
}

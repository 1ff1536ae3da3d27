import Foundation
import Testing

@testable import CastscopeKit

/// `--markdown` and `--markdown-full` are written as sessions end (the command's
/// `StreamedMarkdown`: rows and sections on disk, their sizes in memory, chosen at the end by
/// `MarkdownReport.Plan`): the bytes must be `MarkdownReport.render`'s on the whole report.
@Suite("Markdown, Perfetto and HTML written as sessions end")
struct StreamedMarkdownTests {
    @Test("the command's Markdown equals render on the whole report: samples, a dense log and 300 sessions, within the limit and in full")
    func sameBytesAsTheWholeReport() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var inputs = ["samples/healthy-jitsi", "samples/retry-storm", "samples/jetsam-kill", "samples/stopped-10001",
                      "samples/sendbird-call-ended", "samples/mixed-bundle", "samples/relay", "samples"]
            .map { packageRoot.appendingPathComponent($0).path }
        inputs.append(try denseBenchLog(megabytes: 3, in: dir).path)
        inputs.append(try manySessionsLog(300, in: dir).path)
        var leftSomethingOut = false
        for path in inputs {
            let report = try Analyzer(registry: try ParserRegistry.builtin()).analyze([path])
            for (flag, limit) in [("--markdown", Optional(MarkdownReport.defaultLimit)), ("--markdown-full", nil)] {
                let r = try castscope(["analyze", flag, path], env: ["SOURCE_DATE_EPOCH": "0"])
                let provenance = Provenance(commandLine: ["castscope", "analyze", flag, path], generatedAt: 0)
                let whole = Sanitize.terminal(MarkdownReport.render(report, limit: limit, provenance: provenance))
                // Compared first: a failing #expect on two long strings would diff them for minutes.
                let same = r.stdout == whole
                #expect(same, "\(flag) \(path): \(r.stdout.count) vs \(whole.count) characters")
                if limit != nil && whole.contains("Left out to fit") { leftSomethingOut = true }
            }
        }
        #expect(leftSomethingOut, "some input is over the limit, so the choice of what fits is tested")
    }

    /// `--list`, `--oneline` and `-q` (the command's `StreamedTextShape`) no longer make the
    /// outputs beside them take the whole report: the text must be the whole report's.
    @Test("the command's --list, --oneline and -q equal the text report's shapes on the whole report, beside an HTML page")
    func textShapesSameBytesAsTheWholeReport() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var inputs = ["samples/healthy-jitsi", "samples/retry-storm", "samples/jetsam-kill", "samples/mixed-bundle", "samples/relay", "samples"]
            .map { packageRoot.appendingPathComponent($0).path }
        inputs.append(try denseBenchLog(megabytes: 3, in: dir).path)
        let page = dir.appendingPathComponent("r.html").path
        for path in inputs {
            let report = try Analyzer(registry: try ParserRegistry.builtin()).analyze([path])
            var quiet = TextReport(color: false)
            quiet.headerOnly = true
            let plain = TextReport(color: false)
            for (flag, whole) in [("--list", plain.sessionList(report)), ("--oneline", plain.oneline(report, label: path)),
                                  ("-q", quiet.render(report))] {
                for extra in [[], ["--html", page]] {
                    let r = try castscope(["analyze", flag] + extra + [path], env: ["SOURCE_DATE_EPOCH": "0"])
                    let same = r.stdout == Sanitize.terminal(whole)
                    #expect(same, "\(flag) \(extra) \(path): \(r.stdout.count) vs \(whole.count) characters")
                }
            }
        }
    }

    /// `--perfetto` and `--html` too (the command's `StreamedPerfetto`, `StreamedHTML`): each
    /// session's parts spilled in its turn, the head written in front at the end; with
    /// `--fail-on` the report keeps every finding and they are taken from there.
    @Test("the command's Perfetto trace and HTML page equal render on the whole report, with and without --fail-on")
    func perfettoAndHTMLSameBytesAsTheWholeReport() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var inputs = ["samples/healthy-jitsi", "samples/retry-storm", "samples/jetsam-kill", "samples/stopped-10001",
                      "samples/mixed-bundle", "samples/relay", "samples"].map { packageRoot.appendingPathComponent($0).path }
        inputs.append(try denseBenchLog(megabytes: 3, in: dir).path)
        for path in inputs {
            let report = try Analyzer(registry: try ParserRegistry.builtin()).analyze([path])
            for format in ["perfetto", "html"] {
                for extra in [[], ["--fail-on", "error"]] {
                    let args = ["analyze"] + extra + ["--format", format, "-o", "-", path]
                    let r = try castscope(args, env: ["SOURCE_DATE_EPOCH": "0"])
                    let provenance = Provenance(commandLine: ["castscope"] + args, generatedAt: 0)
                    let whole = format == "html" ? HTMLReport.render(report, provenance: provenance)
                        : PerfettoReport.render(report, provenance: provenance)
                    let same = r.stdout == whole
                    #expect(same, "\(format) \(extra) \(path): \(r.stdout.count) vs \(whole.count) characters")
                }
            }
        }
    }
}

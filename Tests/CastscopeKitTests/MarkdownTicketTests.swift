import Foundation
import Testing

@testable import CastscopeKit

/// Renders Markdown with cmark-gfm, GitHub's parser (scripts/render-markdown.py, PyPI cmarkgfm).
func renderGFM(_ markdown: String) throws -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", packageRoot.appendingPathComponent("scripts/render-markdown.py").path]
    let input = Pipe()
    let output = Pipe()
    p.standardInput = input
    p.standardOutput = output
    try p.run()
    // Written from another thread: a big document would fill both pipes.
    let writer = Thread { input.fileHandleForWriting.write(Data(markdown.utf8)); try? input.fileHandleForWriting.close() }
    writer.start()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    #expect(p.terminationStatus == 0, "cmarkgfm installed (make deps)")
    return String(decoding: data, as: UTF8.self)
}

@Suite("Markdown for a ticket, rendered by GitHub's parser", .serialized)
struct MarkdownTicketTests {
    @Test("a 65-session bundle fits 65,536 characters; <private>, backticks, ** and | arrive as written; --markdown-full has everything")
    func sixtyFiveSessions() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = try manySessionsLog(65, in: dir)
        let r = try castscope(["analyze", "--markdown", log.path])
        #expect(r.status == 0, "\(r.stderr)")
        let md = r.stdout
        #expect(md.utf16.count <= 65_536, "\(md.utf16.count) characters")
        #expect(md.contains("`castscope analyze --markdown-full` writes every session in full"))
        let html = try renderGFM(md)
        #expect(html.components(separatedBy: "<table>").count - 1 >= 2, "the summary table and timelines are GFM tables")
        #expect(html.contains("<code>client connection did close &lt;private&gt;</code>"), "the redacted close reason keeps <private>")
        #expect(html.contains("the close reason is redacted (&lt;private&gt;)"), "also in castscope's own sentence")
        #expect(html.contains("<code>client stream error occured: Error Domain=`NSPOSIXErrorDomain` Code=32 **Broken pipe** a|b</code>"),
                "backticks, ** and | inside a message, in a table cell, intact")
        #expect(!html.contains("<strong>Broken pipe</strong>") && !html.contains("<private>"))
        // Every session has its row; the failing ones their section.
        let failing = md.components(separatedBy: "\n## S").count - 1
        #expect(failing == 65 - md.components(separatedBy: "| **completed** |").count + 1)
        for id in [1, 33, 65] { #expect(md.contains("| `S\(id)` |"), "row of S\(id)") }

        let full = try castscope(["analyze", "--markdown-full", log.path]).stdout
        #expect(full.utf16.count > 65_536, "the full report of 65 sessions is bigger (\(full.utf16.count))")
        #expect(full.components(separatedBy: "\n## S").count - 1 == 65, "every session in full")
        #expect(!full.contains("Left out"))
        let fullHTML = try renderGFM(full)
        #expect(fullHTML.contains("<code>client connection did close &lt;private&gt;</code>"))
    }

    @Test("300 sessions: still within the limit, and the report says what it left out")
    func threeHundredSessions() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let md = try castscope(["analyze", "--markdown", try manySessionsLog(300, in: dir).path]).stdout
        #expect(md.utf16.count <= 65_536)
        #expect(md.contains("Left out to fit 65536 characters: ") && md.contains("failing session"))
    }

    @Test("code spans hold any text; prose is escaped; whole-second logs say 'within the same second'")
    func escaping() throws {
        #expect(MarkdownReport.code("a`b") == "``a`b``")
        #expect(MarkdownReport.code("`x`") == "`` `x` ``")
        #expect(MarkdownReport.code("a|b", inTable: true) == "`a\\|b`")
        #expect(MarkdownReport.code("two\nlines") == "`two lines`")
        #expect(MarkdownReport.text("<private> **x** [a](b)") == "\\<private\\> \\*\\*x\\*\\* \\[a\\](b)")
        let html = try renderGFM("- " + MarkdownReport.text("a <private> `b` **c** _d_ ~e~ & f | g") + "\n- " + MarkdownReport.code("``` <b>x</b> ```") + "\n")
        #expect(html.contains("<li>a &lt;private&gt; `b` **c** _d_ ~e~ &amp; f | g</li>"), "\(html)")
        #expect(html.contains("<li><code>``` &lt;b&gt;x&lt;/b&gt; ```</code></li>"), "\(html)")
        // A backtick or a pipe followed by a combining mark is still a backtick or a pipe to a
        // Markdown parser (code points, not characters): padded, and escaped in a table.
        #expect(MarkdownReport.code("`\u{301}x") == "`` `\u{301}x ``")
        #expect(MarkdownReport.code("a|\u{301}b", inTable: true) == "`a\\|\u{301}b`")
        let table = try renderGFM("| a | b |\n|---|---|\n| " + MarkdownReport.code("x|\u{301}y", inTable: true) + " | "
                                  + MarkdownReport.code("`\u{301}z") + " |\n")
        #expect(table.contains("<td><code>x|\u{301}y</code></td>") && table.contains("<td><code>`\u{301}z</code></td>"), "\(table)")
        let coarse = try castscope(["analyze", "--markdown", "samples/stopped-10001"]).stdout
        #expect(coarse.contains("connected within the same second"))
        #expect(!coarse.contains("connected after 0 µs"))
    }
}

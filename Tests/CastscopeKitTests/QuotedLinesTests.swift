import Foundation
import Testing

@testable import CastscopeKit

/// A log pasted with every line indented (a code block on Stack Overflow, a wiki) or quoted
/// (`> ` in an e-mail reply or a ticket) reads as the log under the prefix.
@Suite("Indented and quoted pastes")
struct QuotedLinesTests {
    @Test("the prefix: four spaces, a tab, `> `, `> > `, `>` then an indentation; none for a layout's own leading spaces")
    func detection() {
        func lines(_ prefix: String, _ body: [String] = ["Mar 12 11:02:07 BroadcastExtension[915] <Notice>: broadcast started",
                                                          "Mar 12 11:02:07 BroadcastExtension[915] <Notice>: Open socket connection",
                                                          "", "Mar 12 11:02:08 BroadcastExtension[915] <Notice>: Socket connected"]) -> [UInt8] {
            Array(body.map { $0.isEmpty ? ($0 + prefix.filter { $0 == ">" }) : prefix + $0 }.joined(separator: "\n").utf8) + [0x0A]
        }
        #expect(QuotedLinesSource.detect(lines("    ")) == Array("    ".utf8))
        #expect(QuotedLinesSource.detect(lines("\t")) == [0x09])
        #expect(QuotedLinesSource.detect(lines("> ")) == Array("> ".utf8))
        #expect(QuotedLinesSource.detect(lines("> > ")) == Array("> > ".utf8))
        #expect(QuotedLinesSource.detect(lines(">     ")) == Array("> ".utf8))
        #expect(QuotedLinesSource.detect(lines("")) == nil)
        #expect(QuotedLinesSource.detect(lines(" ")) == nil)
        // journalctl -o json-pretty and -o verbose indent their fields, not their first line.
        #expect(QuotedLinesSource.detect(Array("{\n\t\"MESSAGE\" : \"a\",\n\t\"_PID\" : \"1\",\n\t\"PRIORITY\" : \"6\"\n}\n".utf8)) == nil)
        #expect(QuotedLinesSource.detect(Array("Thu 2026-03-12 10:20:00.1 UTC [s=1]\n    _PID=1\n    MESSAGE=a\n    PRIORITY=6\n".utf8)) == nil)
        // Most lines unindented, a few continuation lines indented.
        #expect(QuotedLinesSource.detect(lines("", ["a 1", "  more", "b 2", "c 3", "d 4"])) == nil)
        // Long lines (ndjson, 1.8 KB messages): two whole lines and a cut one in the 4 KB head,
        // as the walker sees it; and a paste of two lines.
        let long = String(repeating: "x", count: 1800)
        let head = Array(lines("> ", ["Mar 12 11:02:07 Ext[915] <Notice>: " + long, "Mar 12 11:02:08 Ext[915] <Notice>: " + long,
                                      "Mar 12 11:02:09 Ext[915] <Notice>: " + long]).prefix(4096))
        #expect(QuotedLinesSource.detect(head) == Array("> ".utf8))
        #expect(QuotedLinesSource.detect(lines("    ", ["{\"a\": 1}", "{\"b\": 2}"])) == Array("    ".utf8))
        // A ticket's sentence above the block (haishinkit#619's `ログ：`, `Logs:`): up to three
        // lines with no lead and no time pass, and the block's prefix is found after them.
        let block = "    Mar 12 11:02:07 Ext[915] <Notice>: a\n    Mar 12 11:02:08 Ext[915] <Notice>: b\n    Mar 12 11:02:09 Ext[915] <Notice>: c\n"
        #expect(QuotedLinesSource.detect(Array(("ログ：\n\n" + block).utf8)) == Array("    ".utf8))
        #expect(QuotedLinesSource.detect(Array(("Logs from Console:\n" + block).utf8)) == Array("    ".utf8))
        #expect(QuotedLinesSource.detect(Array(("Here are the logs.\nSee below:\n> Mar 12 11:02:07 Ext[915] <Notice>: a\n> Mar 12 11:02:08 Ext[915] <Notice>: b\n").utf8))
            == Array("> ".utf8))
        // A log's own first record (a time in it) is no such sentence: its indented
        // continuation lines are not a paste's prefix.
        #expect(QuotedLinesSource.detect(Array(("2026-03-12 10:00:00 Exception in main\n\tat a.b(C.java:1)\n\tat a.c(C.java:2)\n\tat a.d(C.java:3)\n").utf8)) == nil)
        // Four sentences are prose, not a lead-in.
        #expect(QuotedLinesSource.detect(Array(("One.\nTwo.\nThree.\nFour.\n" + block).utf8)) == nil)
    }

    @Test("the prefix comes off each line that has it, in reads of any size; other lines and deeper indentation stay; a quote's lone `>` is an empty line")
    func stripping() throws {
        // (`>` then CR LF is an empty line also when a read ends between the CR and the LF; `>`
        // then a CR inside a line keeps both)
        let input = Array("> one\r\n>\n> two\nthree\n>\r\n>\rx\n>   four\n> five".utf8)
        let want = Array("one\r\n\ntwo\nthree\n\r\n>\rx\n  four\nfive".utf8)
        for chunk in [1, 2, 3, 5, 7, 4096] {
            #expect(try drain(QuotedLinesSource(ChunkedSource(input, chunk: chunk), prefix: Array("> ".utf8))) == want, "chunk \(chunk)")
        }
        #expect(QuotedLinesSource.stripped(input, prefix: Array("> ".utf8)) == want)
        // A last line that is only the start of the prefix keeps it.
        #expect(try drain(QuotedLinesSource(MemorySource(Array("> a\n>".utf8)), prefix: Array("> ".utf8))) == Array("a\n>".utf8))
    }

    @Test("samples pasted indented (device syslog, log show, ndjson, journal export) or quoted, plain and gzipped: the same report as the file")
    func sameReports() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let samples = ["samples/stopped-10001/device-syslog.txt", "samples/healthy-jitsi/sysdiagnose-log-show.txt",
                       "samples/sendbird-call-ended/log-show.ndjson", "samples/relay/relay.export"]
        for sample in samples {
            let text = try String(contentsOf: packageRoot.appendingPathComponent(sample), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            func prefixed(_ p: String) -> [UInt8] { Array(lines.map { $0.isEmpty ? "" : p + $0 }.joined(separator: "\n").utf8) }
            let files: [(String, [UInt8])] = [
                ("plain", Array(text.utf8)), ("spaces", prefixed("    ")), ("tab", prefixed("\t")), ("quote", prefixed("> ")),
                ("quoted-block", prefixed(">     ")), ("quote.gz", makeArchive(.gz, [("q", prefixed("> "))])),
            ]
            let reports = try reportsWithoutNames(files, in: dir)
            #expect(reports["plain"]!.contains("recognized"))
            for (name, _) in files.dropFirst() { #expect(reports[name] == reports["plain"], "\(sample) \(name)") }
        }
    }

    @Test("a tool's tag before every line (Appium's `info: [IOS_SYSLOG_ROW ] `) comes off when the lines then read better; a layout's own words stay")
    func toolTag() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(QuotedLinesSource.toolPrefix(Array("info: [IOS_SYSLOG_ROW ] Mar 12 a\ninfo: [IOS_SYSLOG_ROW ] b\n".utf8)) == Array("info: [IOS_SYSLOG_ROW ] ".utf8))
        // A time is the log's own; so is a prefix fewer than four lines in five share.
        #expect(QuotedLinesSource.toolPrefix(Array("Mar 12 11:02:07 a\nMar 12 11:02:08 b\n".utf8)) == nil)
        #expect(QuotedLinesSource.toolPrefix(Array("app: a\napp: b\nother c\n".utf8)) == nil)
        let syslog = try String(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"), encoding: .utf8)
        let tagged = syslog.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "info: [IOS_SYSLOG_ROW ] " + $0 }
        let reports = try reportsWithoutNames([("plain", Array(syslog.utf8)), ("tagged", Array(tagged.joined(separator: "\n").utf8))], in: dir)
        #expect(reports["tagged"] == reports["plain"])
        // Every line in one month (legacy-ios-kit#182's `SYSLOG: Jun  8 20:55:52 …`): the tag
        // ends with its last marked word, not with the month all lines share.
        #expect(QuotedLinesSource.toolPrefix(Array("SYSLOG: Jun  8 20:55:52 localhost kernel[0] <Notice>: a\nSYSLOG: Jun  8 20:55:53 localhost kernel[0] <Notice>: b\n".utf8)) == Array("SYSLOG: ".utf8))
        // A plain word inside a tag does not end it (`[worker] app | `).
        #expect(QuotedLinesSource.toolPrefix(Array("[worker] app | 2026-03-12T09:15:04+0000 a\n[worker] app | 2026-03-12T09:15:05+0000 b\n".utf8)) == Array("[worker] app | ".utf8))
        let body = syslog.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("[connected") }
        let month = try reportsWithoutNames([("plain", Array(body.joined(separator: "\n").utf8)),
                                             ("tagged", Array(body.map { $0.isEmpty ? "" : "SYSLOG: " + $0 }.joined(separator: "\n").utf8)),
                                             ("appium", Array(body.map { $0.isEmpty ? "" : "info: [IOS_SYSLOG_ROW ] " + $0 }.joined(separator: "\n").utf8))], in: dir)
        #expect(month["tagged"] == month["plain"])
        #expect(month["appium"] == month["plain"])
        // Lines that share a first word but read no better without it keep it.
        let words = "BroadcastExtension: broadcast started\nBroadcastExtension: Open socket connection\n"
        let r = try castscope(["analyze", "--json", "-"], stdin: Data(words.utf8))
        let messages = (r.json?["sessions"] as? [[String: Any]])?.first?["timeline"] as? [[String: Any]]
        #expect(messages?.contains { $0["message"] as? String == "BroadcastExtension: Open socket connection" } == true, "\(r.stdout)")
    }

    @Test("a layout whose every line begins with a TAB (Console.app's copy with a PID column and the type column empty) keeps it; quoted or indented, only the paste's prefix comes off")
    func layoutsOwnTab() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // The jetsam sample's Console copy (`type<TAB>time<TAB>process<TAB>message`) as the
        // copy with a PID column writes it (`<TAB>time<TAB>pid<TAB>process<TAB>message`, as in
        // jitsi-meet#9784): a TAB is the first byte of every line, as a code block's would be.
        let text = try String(contentsOf: packageRoot.appendingPathComponent("samples/jetsam-kill/console-copy.txt"), encoding: .utf8)
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let f = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false)
            lines.append(f.count == 4 && !f[0].isEmpty ? ["", f[1], "4242", f[2], f[3]].joined(separator: "\t") : String(line))
        }
        #expect(lines.filter { $0.hasPrefix("\t") }.count > 100)
        func prefixed(_ p: String) -> [UInt8] { Array(lines.map { $0.isEmpty ? "" : p + $0 }.joined(separator: "\n").utf8) }
        for (name, bytes) in [("as-copied.txt", prefixed("")), ("quoted.txt", prefixed("> ")), ("indented.txt", prefixed("    "))] {
            let path = dir.appendingPathComponent(name)
            try Data(bytes).write(to: path)
            let r = try castscope(["analyze", "--json", "--date", "2026-03-12", path.path])
            let input = (r.json?["inputs"] as? [[String: Any]])?.first
            #expect(input?["format"] as? String == "console-copy", "\(name): \(r.stderr)")
            #expect(input?["unparsed"] as? Int == 0, "\(name)")
            let sessions = r.json?["sessions"] as? [[String: Any]] ?? []
            #expect(sessions.count == 1, "\(name)")
            // Its times kept (read as plain text, the session had none), its kill found.
            #expect(sessions.first?["start"] as? String == "2026-03-12T23:59:50.118204+01:00", "\(name)")
            #expect((r.json?["findings"] as? [[String: Any]])?.contains { $0["kind"] as? String == "extension-killed" } == true, "\(name)")
        }
    }

    @Test("a paste inside a code fence (```log … ```, ~~~) or a code span over its lines, or with the fence on its first and last log lines, reads as the file: no record lost, no backtick in a message, no fence counted unparsed")
    func codeMarks() throws {
        var open = false
        func un(_ s: String) -> String { Array(s.utf8).withUnsafeBytes { String(decoding: CodeMarks.unmarked($0, spanOpen: &open), as: UTF8.self) } }
        func fence(_ s: String) -> Bool { Array(s.utf8).withUnsafeBytes { CodeMarks.isFence($0) } }
        #expect(un("`Jan 29 10:52:15 a b") == "Jan 29 10:52:15 a b" && open)
        #expect(un("Jan 29 10:52:15 a bundleID=<private>`") == "Jan 29 10:52:15 a bundleID=<private>" && !open)
        #expect(un("```Jan 29 10:52:15 a b```") == "Jan 29 10:52:15 a b")
        #expect(un("`Jan 29 10:52:15 a b`") == "Jan 29 10:52:15 a b")
        // A quote's `>` on the first log line only (Markdown's lazy quote: ios-unity5#33).
        func first(_ s: String) -> String {
            Array(s.utf8).withUnsafeBytes { String(decoding: CodeMarks.unmarked($0, spanOpen: &open, first: true), as: UTF8.self) }
        }
        #expect(first(">2017-02-08 16:31:37.802 App[2370:742930] -> registered") == "2017-02-08 16:31:37.802 App[2370:742930] -> registered")
        #expect(first("> 2017-02-08 16:31:37.802 App[2370:742930] x") == "2017-02-08 16:31:37.802 App[2370:742930] x")
        #expect(first("> not a log line") == "> not a log line")
        // (only a file's first line: a later `>5 retries` is a message's)
        #expect(un(">5 retries in a row") == ">5 retries in a row")
        // A lone backtick at a message's end, with no span open, is the message's.
        #expect(un("Jan 29 10:52:15 quote char is `") == "Jan 29 10:52:15 quote char is `")
        // A span the message holds stays whole; so does a lone backtick before a space.
        #expect(un("Jan 29 10:52:15 a set `x`") == "Jan 29 10:52:15 a set `x`")
        #expect(un("` a") == "` a")
        #expect(fence("```") && fence("```log") && fence("  ~~~ ") && fence("````objective-c"))
        #expect(!fence("```Jan 29 10:52:15 a b") && !fence("``") && !fence("`x`") && !fence("    ```"))
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for sample in ["samples/stopped-10001/device-syslog.txt", "samples/healthy-jitsi/sysdiagnose-log-show.txt",
                       "samples/sendbird-call-ended/log-show.ndjson", "samples/relay/relay.export"] {
            let text = try String(contentsOf: packageRoot.appendingPathComponent(sample), encoding: .utf8)
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if lines.last == "" { lines.removeLast() }
            func joined(_ l: [String]) -> [UInt8] { Array(l.joined(separator: "\n").utf8) }
            // (a blank line where the fence is: the same line numbers)
            var files: [(String, [UInt8])] = [("plain", joined([""] + lines + [""])), ("fenced", joined(["```log"] + lines + ["```"])),
                                              ("tildes", joined(["~~~"] + lines + ["~~~ "]))]
            if !sample.hasSuffix(".ndjson") && !sample.hasSuffix(".export") {
                // (the layouts a line of which is text: an inline span, a fence on the lines)
                let first = lines.firstIndex { !$0.isEmpty }!, last = lines.lastIndex { !$0.isEmpty }!
                let (a, z) = (lines[first], lines[last])
                lines[first] = "`" + a
                lines[last] = z + "`"
                files.append(("span", joined([""] + lines + [""])))
                lines[first] = "```" + a
                lines[last] = z + "```"
                files.append(("fence-on-lines", joined([""] + lines + [""])))
            }
            let reports = try reportsWithoutNames(files, in: dir)
            #expect(reports["plain"]!.contains("recognized"))
            for (name, _) in files.dropFirst() {
                // (the fence lines are skipped, as headers are: the same records)
                #expect(reports[name] == reports["plain"], "\(sample) \(name)\n\(reports[name] ?? "")\n---\n\(reports["plain"] ?? "")")
            }
        }
    }
}

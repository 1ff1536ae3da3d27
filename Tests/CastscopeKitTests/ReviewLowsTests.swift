import Foundation
import Testing

@testable import CastscopeKit

/// The small items session 48's review left: a java.util.logging record joined past the line
/// limit, the crashed thread's queue in a text crash report, numbers in the parts of an `.ips`
/// the lazy parse passes over, a quiet relay session `tail` counted twice.
@Suite("the review's low items: a JUL record past 1 MB, a crashed thread's queue, skipped .ips numbers, tail's quiet sessions")
struct ReviewLowsTests {
    func input(_ r: [String: Any]) -> [String: Any] { (r["inputs"] as? [[String: Any]])?.first ?? [:] }

    @Test("a java.util.logging record whose message makes the joined pair longer than 1 MB keeps its time, level and stack trace, and says it was cut")
    func julRecordPastTheLimit() throws {
        let first = "Jun 02, 2020 1:48:48 PM org.ice4j.stack.NetAccessManager start\nINFO: started\n"
        let big = "Jun 02, 2020 1:48:49 PM org.ice4j.stack.NetAccessManager handleFatalError\nSEVERE: Unexpected Error! "
        let after = "\n\tat org.ice4j.socket.MergingDatagramSocket.initializeActive(MergingDatagramSocket.java:577)\n"
            + "Jun 02, 2020 1:48:50 PM org.ice4j.stack.NetAccessManager other\nINFO: next one\n"
        // (a message just under the limit, one over it, one of 3 MB: the joined line is over)
        for size in [(1 << 20) - 90, (1 << 20) + 100, 3 << 20] {
            let r = try analyzePaste(first + big + String(repeating: "x", count: size) + after)
            #expect(input(r.json)["format"] as? String == "java-logging", "\(input(r.json))")
            // (the record of line 3 with its time and level; the stack trace stays with it, not
            // with the record before)
            #expect(r.text.contains("2020-06-02 13:48:49.000000                 Error       0x0                         0    <unknown>: [org.ice4j.stack.NetAccessManager:handleFatalError] Unexpected Error! xxxx"),
                    "\(size)")
            #expect(!r.text.contains("started\n\tat org.ice4j"), "\(size)")
            let errors = (input(r.json)["errors"] as? [Any] ?? []).map { "\($0)" }.joined()
            #expect(errors.contains(":3: record longer than 1 MB with the lines joined to it"), "\(size): \(errors)")
            #expect(!errors.contains("skipped"), "\(size): \(errors)")
            #expect(r.text.contains("[org.ice4j.stack.NetAccessManager:other] next one"), "\(size)")
        }
        // The source: the joined line is cut at the limit (not inside a character), the rest of
        // its message the continuation line where the second line was.
        // (a second line under the limit, the pair over it)
        let message = String(repeating: "é", count: (1 << 19) - 20)
        let text = "Jun 02, 2020 1:48:49 PM org.ice4j.Foo bar\nSEVERE: " + message + "\n"
        let out = drained(JavaLoggingSource(MemorySource(Array(text.utf8))))
        let lines = out.split(separator: 0x0A, omittingEmptySubsequences: false)
        #expect(lines.count == 3, "\(lines.map(\.count))")
        #expect(lines[0].count <= 1 << 20 && lines[0].count > (1 << 20) - 2, "\(lines[0].count)")
        #expect(lines[1].first == 0x09, "\(lines[1].prefix(4))")
        let whole = String(decoding: lines[0] + lines[1].dropFirst(), as: UTF8.self)
        #expect(whole == "Jun 02, 2020 1:48:49 PM org.ice4j.Foo bar\tSEVERE: " + message, "\(whole.utf8.count)")
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// Session 49's review of the helpers' changes.
@Suite("session 49 review")
struct ReviewRound49Tests {
    /// glibc's assertion, matched by its cheap anchor `' failed.` with its word as a field
    /// (`Assertion` is in every `BKProcessAssertion` line): any `` word `x' failed. `` after two
    /// colons (autoconf's, a build's, an app's own `Check` macro) was a daemon that died.
    @Test("a line quoting `x' failed. in other words than glibc's Assertion is no daemon's death; glibc's still is")
    func assertionWordOnly() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let other = dir.appendingPathComponent("other.log")
        try Data("""
            2026-03-12T10:00:00.000+0100 build-host make[1]: configure: error: command `gcc' failed.
            2026-03-12T10:00:01.000+0100 relay1 janus[812]: janus: sdp-utils.c: Check `x != NULL' failed.

            """.utf8).write(to: other)
        let r = try castscope(["analyze", "--no-pager", other.path])
        #expect(!r.stdout.contains("daemon-died"), "\(r.stdout)")
        #expect(r.status == 4, "\(r.status) \(r.stderr)")
        let glibc = dir.appendingPathComponent("glibc.log")
        try Data("2026-03-12T10:00:01.000+0100 relay1 janus[812]: janus: dump.c:342: do_dump: Assertion `value' failed.\n".utf8)
            .write(to: glibc)
        let g = try castscope(["analyze", "--no-pager", glibc.path])
        #expect(g.stdout.contains("[daemon-died] janus: it aborted on a failed assertion (dump.c:342: do_dump: Assertion `value' failed)"), "\(g.stdout)")
    }

    @Test("a rule's \"only\" must name one of its match's fields and give it a value")
    func onlyNamesACapture() throws {
        for only in ["{\"kw\":[\"A\"]}", "{\"w\":[]}"] {
            let dir = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            try Data("{\"name\":\"e\",\"rules\":[{\"event\":\"broadcast.started\",\"match\":\"go {w:word} now\",\"only\":\(only)}],\"samples\":[{\"message\":\"a\"}]}".utf8)
                .write(to: dir.appendingPathComponent("e.json"))
            let r = try castscope(["analyze", "--oneline", "--parsers", dir.path, packageRoot.appendingPathComponent("samples/relay").path])
            #expect(r.status == 2 && r.stderr.contains("\"only\""), "\(only): \(r.status) \(r.stderr)")
        }
    }
}

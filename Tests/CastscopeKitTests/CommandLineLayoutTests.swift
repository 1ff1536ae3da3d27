import Foundation
import Testing

/// Issue 11 item 6: the text report fits the terminal, cites files by short aliases, one zone.
@Suite struct CommandLineLayoutTests {
    @Test("--width: every line fits, timeline rows keep their [n]:line source, prose wraps under its label")
    func fitsTheWidth() throws {
        for width in [60, 80, 120] {
            let r = try castscope(["analyze", "--width", "\(width)", "samples"])
            #expect(r.status == 0)
            let long: [String] = r.stdout.split(separator: "\n").map(String.init).filter { $0.count > width }
            #expect(long.isEmpty, "\(width): \(long.first ?? "")")
        }
        let r = try castscope(["analyze", "--width", "80", "samples/stopped-10001"])
        #expect(r.stdout.contains("   why: the host app closed its end (server socket closed); the socket closed\n        without an error"))
        #expect(r.stdout.contains("     -3.000     app  [JitsiMeetSDK] [modules/RTC/ScreenObtainer] Using g…  [2]:1\n"))
        #expect(r.stdout.contains("\n  [1] samples/stopped-10001/device-syslog.txt  idevicesyslog  209 records, 207\n    recognized\n"))
        #expect(r.stdout.contains("\n  [2] samples/stopped-10001/host-app-xcode.txt  xcode"))
        #expect(r.stdout.contains("video sample processed successfully ×200 over 1…  [1]:6–205\n"))
    }

    @Test("on a terminal the width is the terminal's ($COLUMNS); piped, lines are not wrapped")
    func terminalWidth() throws {
        let piped = try castscope(["analyze", "samples/stopped-10001"], env: ["COLUMNS": "50"])
        #expect(piped.stdout.split(separator: "\n").contains { $0.count > 100 })
        let bin = packageRoot.appendingPathComponent(".build/debug/castscope").path
        let shown = try onTerminal("stty cols 70 2>/dev/null; '\(bin)' analyze --no-pager --color never samples/stopped-10001",
                                   env: ["COLUMNS": "70"])
        let lines: [String] = shown.replacingOccurrences(of: "\r", with: "")
            .split(separator: "\n").map(String.init)
        #expect(lines.count > 20)
        #expect(lines.allSatisfy { $0.count <= 70 }, "\(lines.first { $0.count > 70 } ?? "")")
    }

    @Test("one zone per report: relay times are shown in the phone's offset, not UTC")
    func oneZone() throws {
        let r = try castscope(["analyze", "samples/stopped-10001", "samples/relay/relay.export"])
        #expect(r.stdout.contains("(iPhone14,2, room standup) at 2026-03-12T10:15:04.673211+01:00 has no device session"))
        #expect(!r.stdout.contains("+00:00"))
    }
}

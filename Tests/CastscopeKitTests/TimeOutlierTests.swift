import Foundation
import Testing

/// One line dated far from the lines around it (a phone's clock that jumped for one line, a
/// damaged year: session 48's hostile review left it): it gave its session a frame stall of
/// 69,889,872 hours, 0.0 fps and a duration to the end of the day (a step back of over a day
/// taken for midnight), with no word. It is placed at the time of the line before it and said.
@Suite("a line dated far from the lines around it")
struct TimeOutlierTests {
    static let sample = packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt")

    /// The sample with line `number`'s date replaced by `date` (its first ten characters).
    static func sample(line number: Int, date: String) throws -> String {
        var lines = try String(contentsOf: sample, encoding: .utf8).components(separatedBy: "\n")
        lines[number - 1] = date + lines[number - 1].dropFirst(10)
        return lines.joined(separator: "\n")
    }

    @Test("a frame line of year 9999 or of 1970 in a run of frames: the session as without it, and a note naming the line", arguments: ["9999-03-12", "1970-01-01"])
    func frameLineOfAnotherYear(_ date: String) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("device.txt")
        try Self.sample(line: 22, date: date).write(to: file, atomically: true, encoding: .utf8)
        let clean = try castscope(["analyze", "--no-pager", Self.sample.path])
        for r in [try castscope(["analyze", "--no-pager", file.path]),
                  try castscope(["analyze", "--no-pager", "-"], stdin: try Data(contentsOf: file))] {
            #expect(r.status == clean.status)
            #expect(r.stdout.contains("completed") && r.stdout.contains("lasted 3.7 s") && r.stdout.contains("frames: 30 (10.0/s)"), "\(r.stdout)")
            #expect(!r.stdout.contains("frame-stall") && !r.stdout.contains("low-frame-rate"), "\(r.stdout)")
            #expect(r.stdout.contains("note: line 22 is dated \(date)T10:15:02.861211+01:00, far from the lines around it"), "\(r.stdout)")
        }
    }

    @Test("a line that is no frame, dated in another year between two lines of the session's day: placed at the line before it")
    func singleEventOfAnotherYear() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("device.txt")
        // line 11: the host app's `server stream open completed`
        try Self.sample(line: 11, date: "2031-07-01").write(to: file, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", file.path])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let sessions = try #require(json["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        #expect((sessions.first?["outcome"] as? String) == "completed", "\(r.stdout.prefix(2000))")
        #expect(r.stdout.contains("line 11 is dated 2031-07-01"), "\(r.stdout.prefix(3000))")
    }

    @Test("a clock that jumps ahead and stays there is no outlier: every line keeps its time, no note")
    func aJumpThatStays() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var lines = try String(contentsOf: Self.sample, encoding: .utf8).components(separatedBy: "\n")
        for k in 21..<lines.count where lines[k].hasPrefix("2026-03-12") { lines[k] = "2026-03-22" + lines[k].dropFirst(10) }
        let file = dir.appendingPathComponent("device.txt")
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--no-pager", file.path])
        #expect(!r.stdout.contains("far from the lines around"), "\(r.stdout)")
        #expect(r.stdout.contains("frame-stall"), "the ten days without frames are the log's own: \(r.stdout)")
    }

    /// Session 63's hostile review: two lines of year 9999 side by side gave the frame stall of
    /// 69,896,928 h that one alone no longer gave. Up to three in a row are placed; four are a
    /// clock that stayed there a while, kept as read.
    @Test("two or three lines in a row of another year are placed as one is; four are kept", arguments: [2, 3, 4])
    func linesInARowOfAnotherYear(_ n: Int) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var lines = try String(contentsOf: Self.sample, encoding: .utf8).components(separatedBy: "\n")
        for k in 19..<(19 + n) { lines[k] = "9999-12-31" + lines[k].dropFirst(10) }
        let file = dir.appendingPathComponent("device.txt")
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--no-pager", file.path])
        if n <= 3 {
            #expect(!r.stdout.contains("frame-stall") && r.stdout.contains("lasted 3.7 s"), "\(r.stdout)")
            #expect(r.stdout.contains("\(n) lines are dated far from the lines around them"), "\(r.stdout)")
        } else {
            #expect(!r.stdout.contains("far from the lines around"), "\(r.stdout)")
        }
    }
}

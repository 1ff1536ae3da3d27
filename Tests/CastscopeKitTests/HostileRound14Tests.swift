import Foundation
import Testing

@testable import CastscopeKit

@Suite("hostile round 14: files that change while read")
struct HostileRound14GrowingTests {
    /// A log its daemon writes faster than castscope reads (`castscope analyze
    /// /var/log/relay.log` on a busy host; a debug build reads a few MB/s) was read for as long
    /// as the daemon wrote: `analyze` never ended (a file grown by 10 MB/s was still being read
    /// 40 s after a start at 2 MB). The parallel ranges of a big file already stopped at the size
    /// they were cut from; a file read whole now stops where it ended when it was opened, and
    /// the input says that it grew. Deterministic: the file grows inside the reader's visit.
    @Test("a file that grows while it is read is read as it was when opened, and a note says so")
    func growingFileIsReadAsOpened() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("relay.log")
        let first = Array(String(repeating: "2026-03-12 10:20:01.5 open socket connection\n", count: 2000).utf8)
        try Data(first).write(to: file)
        let more = Data(String(repeating: "2026-03-12 10:20:02.5 written later\n", count: 4000).utf8)

        // The source alone: bytes past its size when opened are not handed over.
        let source = try FileSource(path: file.path)
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: more)
        #expect(try drain(source) == first)

        // Through the walk: the visit sees what the file held when opened, and the note names
        // both sizes.
        try Data(first).write(to: file)
        var seen: [UInt8] = []
        var notes: [String] = []
        var errors: [String] = []
        var walker = BundleWalker(visit: { _, source in
            try handle.seek(toOffset: UInt64(first.count))
            try handle.write(contentsOf: more)
            seen = try drain(source)
        }, report: { errors.append($0.description) })
        walker.note = { path, note in notes.append("\(path): \(note)") }
        walker.walk([file.path])
        try handle.close()
        #expect(errors == [])
        #expect(seen == first)
        #expect(notes == ["\(file.path): the file grew while it was read (from \(first.count) to \(first.count + more.count) bytes: still being written?): read as it was when castscope began to read it; what was written since is not in this report"])

        // A file that did not grow gets no note, and a /proc file (0 bytes by its size) is read
        // to its end.
        notes = []
        walker.visit = { _, source in seen = try drain(source) }
        walker.walk([file.path])
        #expect(notes == [] && seen.count == first.count + more.count)
        let proc = try FileSource(path: "/proc/self/status")
        #expect(try drain(proc).count > 0)
    }
}

@Suite("hostile round 14: tail's cursor file")
struct HostileRound14CursorTests {
    /// `/proc/version` is one short line of text, so it passed for a cursor file; its folder
    /// takes no new file, and the refusal read "its folder cannot be written: No such file or
    /// directory" of a folder that exists (round 13 left it).
    @Test("tail --cursor-file in /proc or /sys is refused as a file the kernel makes, exit 2")
    func cursorInProc() throws {
        for (path, mount) in [("/proc/version", "/proc"), ("/proc/no-such-cursor", "/proc"), ("/sys/kernel/no-such-cursor", "/sys")] {
            let r = try castscope(["tail", "--file", relayJournal.path, "--from-start", "--cursor-file", path])
            #expect(r.status == 2, "\(path): \(r.status) \(r.stderr)")
            #expect(r.stderr == "castscope: error: --cursor-file \(path): it is in \(mount), a file system the kernel makes, not a file castscope can save: name a file on disk\n",
                    "\(path): \(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
    }
}

import Foundation
import Testing

@testable import CastscopeKit

/// Collects a child's output lines with the time each arrived.
final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = Data()
    private var lines: [(String, Date)] = []

    init(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] h in
            let data = h.availableData
            guard let self, !data.isEmpty else { h.readabilityHandler = nil; return }
            self.lock.lock()
            self.buffer.append(data)
            while let nl = self.buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: self.buffer[self.buffer.startIndex..<nl], as: UTF8.self)
                self.buffer.removeSubrange(self.buffer.startIndex...nl)
                self.lines.append((line, Date()))
            }
            self.lock.unlock()
        }
    }

    var all: [(String, Date)] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    func waitFor(timeout: TimeInterval, _ condition: ([(String, Date)]) -> Bool) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if condition(all) { return true }
            usleep(20_000)
        }
        return condition(all)
    }
}

/// systemd-journal-remote writing what we feed it (a pipe) into a journal file: the relay's
/// entries for one session, stamped now (with `_HOSTNAME` when `hostname` is given).
final class JournalFeeder {
    let process = Process()
    let input = Pipe()
    let session: String
    let hostname: String?

    init(output: URL, session: String = "7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69", hostname: String? = nil) throws {
        self.session = session
        self.hostname = hostname
        process.executableURL = URL(fileURLWithPath: journalRemote)
        process.arguments = ["--output=" + output.path, "-"]
        var env = ProcessInfo.processInfo.environment
        env["SYSTEMD_JOURNAL_COMPACT"] = "0"
        process.environment = env
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Entries of this session with these messages after `session <id> `, stamped now (the k-th
    /// one k µs later, so that each is distinct).
    func send(_ messages: [String]) {
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        var text = ""
        for (k, m) in messages.enumerated() {
            text += "__REALTIME_TIMESTAMP=\(now + Int64(k))\n_PID=811\n" + (hostname.map { "_HOSTNAME=\($0)\n" } ?? "")
                + "SYSLOG_IDENTIFIER=broadcast-relay\nRELAY_SESSION=\(session)\nMESSAGE=session \(session) \(m)\n\n"
        }
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    /// One relay `stats` entry whose frame count is `seq`.
    func feed(_ seq: Int) { send(["stats frames=\(seq) bytes=1 fps=10.0 dropped=0"]) }

    /// `stats` entries with frame counts `seqs` (each one a distinct entry).
    func write(_ seqs: Range<Int>) { send(seqs.map { "stats frames=\($0) bytes=1 fps=10.0 dropped=0" }) }

    func accept() { send(["accepted peer=iPhone14,2 room=standup"]) }

    func finish() throws {
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

/// `castscope tail --json --events` on a journal directory.
final class TailProcess {
    let process = Process()
    let out: LineCollector
    let errURL: URL

    init(directory: URL, cursor: URL, scratch: URL, extra: [String] = []) throws {
        process.executableURL = packageRoot.appendingPathComponent(".build/debug/castscope")
        process.arguments = ["tail", "--directory", directory.path, "--cursor-file", cursor.path, "--json", "--events"] + extra
        let pipe = Pipe()
        process.standardOutput = pipe
        errURL = scratch.appendingPathComponent("tail-\(UUID().uuidString).err")
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        out = LineCollector(pipe.fileHandleForReading)
        try process.run()
    }

    var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    func waitUntilFollowing() -> Bool {
        let end = Date().addingTimeInterval(5)
        while Date() < end {
            if stderr.contains("following") { return true }
            usleep(20_000)
        }
        return false
    }

    func stop(_ signal: Int32 = SIGTERM) {
        kill(process.processIdentifier, signal)
        let end = Date().addingTimeInterval(5)
        while process.isRunning && Date() < end { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        usleep(100_000)  // let the last output arrive
    }

    /// The frame counts (sequence numbers) of the stats events it printed.
    var seen: [(Int, Date)] {
        out.all.compactMap { line, at in
            guard line.contains("\"type\":\"event\""), let r = line.range(of: "stats frames=") else { return nil }
            let digits = line[r.upperBound...].prefix(while: \.isNumber)
            return Int(digits).map { ($0, at) }
        }
    }
}

@Suite("castscope tail against real journal files", .serialized,
       .enabled(if: FileManager.default.isExecutableFile(atPath: journalRemote), "needs systemd-journal-remote"))
struct TailTests {
    @Test("a saved cursor ahead of the journal's newest entry (another journal's) is said, and what comes after is shown")
    func cursorAheadOfTheJournal() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journals = dir.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journals, withIntermediateDirectories: true)
        let feeder = try JournalFeeder(output: journals.appendingPathComponent("live.journal"))
        feeder.feed(0)
        usleep(300_000)
        // Another journal's cursor, an hour ahead of every entry here.
        let ahead = Int64(Date().timeIntervalSince1970 * 1_000_000) + 3_600_000_000
        let cursor = dir.appendingPathComponent("cursor")
        try Data("s=0123456789abcdef0123456789abcdef;i=5;b=fedcba9876543210fedcba9876543210;m=1;t=\(String(ahead, radix: 16));x=1\n".utf8).write(to: cursor)
        let tail = try TailProcess(directory: journals, cursor: cursor, scratch: dir)
        #expect(tail.waitUntilFollowing(), "\(tail.stderr)")
        for seq in 1...20 {
            feeder.feed(seq)
            usleep(10_000)
        }
        #expect(tail.out.waitFor(timeout: 20) { _ in tail.seen.count >= 20 }, "\(tail.seen.count) of 20 shown")
        tail.stop(SIGTERM)
        #expect(tail.out.all.contains { $0.0.contains("\"type\":\"gap\"") && $0.0.contains("ahead of this journal") })
    }

    @Test("each entry is printed once, within a second, across a restart with --cursor-file and across a rotation")
    func cursorRestartAndRotation() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journals = dir.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journals, withIntermediateDirectories: true)
        let cursor = dir.appendingPathComponent("cursor")
        var fedAt: [Int: Date] = [:]
        let first = try JournalFeeder(output: journals.appendingPathComponent("live.journal"))
        first.feed(0)  // before tail starts: not shown (tail starts from now)
        usleep(200_000)

        let tail1 = try TailProcess(directory: journals, cursor: cursor, scratch: dir)
        #expect(tail1.waitUntilFollowing(), "\(tail1.stderr)")
        for seq in 1...40 {
            fedAt[seq] = Date()
            first.feed(seq)
            usleep(10_000)
        }
        #expect(tail1.out.waitFor(timeout: 30) { _ in tail1.seen.count >= 40 })
        tail1.stop(SIGTERM)
        #expect(tail1.process.terminationStatus == 0)

        // Entries written while nobody follows.
        for seq in 41...80 { first.feed(seq) }
        usleep(200_000)
        let tail2 = try TailProcess(directory: journals, cursor: cursor, scratch: dir)
        #expect(tail2.waitUntilFollowing(), "\(tail2.stderr)")
        #expect(tail2.stderr.contains("resuming after the saved cursor"))
        for seq in 81...100 {
            fedAt[seq] = Date()
            first.feed(seq)
            usleep(10_000)
        }
        // Rotation: the writer goes away and a new file appears in the directory.
        try first.finish()
        let second = try JournalFeeder(output: journals.appendingPathComponent("live@rotated.journal"))
        usleep(300_000)
        for seq in 101...140 {
            fedAt[seq] = Date()
            second.feed(seq)
            usleep(10_000)
        }
        #expect(tail2.out.waitFor(timeout: 30) { _ in tail2.seen.count >= 100 }, "tail 2 saw \(tail2.seen.count)")
        tail2.stop(SIGINT)
        try second.finish()

        let seen = tail1.seen + tail2.seen
        let seqs = seen.map(\.0).sorted()
        #expect(seqs == Array(1...140), "each entry exactly once; got \(seqs.count) (duplicates: \(Dictionary(grouping: seqs, by: { $0 }).filter { $1.count > 1 }.keys.sorted()))")
        // Latency for entries fed while a tail was following.
        var latencies: [Double] = []
        for (seq, at) in seen { if let fed = fedAt[seq] { latencies.append(at.timeIntervalSince(fed)) } }
        latencies.sort()
        #expect(latencies.count == 100)
        let p99 = latencies[Int(Double(latencies.count - 1) * 0.99)]
        #expect(p99 < 1.0, "p99 latency \(p99) s")
        #expect(tail2.out.all.last?.0.hasPrefix("{\"type\":\"summary\"") == true, "summary on Ctrl-C")
    }

    @Test("a cursor whose entry was vacuumed away: the gap is reported with its time span")
    func vacuumedCursor() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journals = dir.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journals, withIntermediateDirectories: true)
        let cursor = dir.appendingPathComponent("cursor")
        let old = journals.appendingPathComponent("old.journal")
        let first = try JournalFeeder(output: old)
        for seq in 1...10 { first.feed(seq) }
        try first.finish()
        let tail1 = try TailProcess(directory: journals, cursor: cursor, scratch: dir, extra: ["--from-start"])
        #expect(tail1.out.waitFor(timeout: 30) { _ in tail1.seen.count >= 10 })
        tail1.stop()
        try FileManager.default.removeItem(at: old)  // vacuumed
        let second = try JournalFeeder(output: journals.appendingPathComponent("new.journal"))
        for seq in 11...15 { second.feed(seq) }
        try second.finish()
        let tail2 = try TailProcess(directory: journals, cursor: cursor, scratch: dir)
        #expect(tail2.out.waitFor(timeout: 30) { _ in tail2.seen.count >= 5 })
        tail2.stop()
        let gap = tail2.out.all.first(where: { $0.0.contains("\"type\":\"gap\"") })?.0 ?? ""
        #expect(gap.contains("\"from\":\"20"), "\(gap)")
        #expect(gap.contains("\"to\":\"20"))
        #expect(gap.contains("the saved cursor's entry is not in this journal (rotated or vacuumed away, or the cursor is another journal's)"))
        #expect(tail2.seen.map(\.0) == Array(11...15))
    }

    @Test("a text stream on stdin at the same time: sessions as they happen")
    func stdinStream() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let data = try Data(contentsOf: packageRoot.appendingPathComponent("samples/sendbird-call-ended/log-show.ndjson"))
        let r = try castscope(["tail", "--no-journal", "--json", "-"], stdin: data)
        #expect(r.status == 0)
        let changes = r.stdout.split(separator: "\n").filter { $0.contains("\"type\":\"session\"") }
        #expect(changes.count == 3)
        #expect(changes[0].contains("\"change\":\"started\""))
        #expect(changes[1].contains("\"change\":\"connected\""))
        #expect(changes[2].contains("\"change\":\"ended\"") && changes[2].contains("\"outcome\":\"stopped-by-host\""))
    }

    @Test("a text stream on stdin whose lines end in CR alone: the same sessions as with LF")
    func stdinStreamOfCROnlyLines() throws {
        let lf = try Data(contentsOf: packageRoot.appendingPathComponent("samples/healthy-jitsi/sysdiagnose-log-show.txt"))
        let cr = Data(lf.map { $0 == 0x0A ? 0x0D : $0 })
        func sessions(_ stdin: Data) throws -> [Substring] {
            let r = try castscope(["tail", "--no-journal", "--json", "-"], stdin: stdin)
            #expect(r.status == 0)
            return r.stdout.split(separator: "\n").filter { $0.contains("\"type\":\"session\"") }
        }
        let withLF = try sessions(lf)
        #expect(withLF.count >= 3)
        #expect(try sessions(cr) == withLF)
    }

    @Test("a live tool's first line arriving alone (idevicesyslog's [connected:…]) does not make the stream plain text")
    func firstLineAlone() throws {
        let syslog = try String(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"), encoding: .utf8)
        let lines = syslog.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first?.hasPrefix("[connected:") == true)
        let p = Process()
        p.executableURL = packageRoot.appendingPathComponent(".build/debug/castscope")
        p.arguments = ["tail", "--no-journal", "--no-color", "-"]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = output
        try p.run()
        input.fileHandleForWriting.write(Data((lines[0] + "\n").utf8))
        usleep(300_000)
        input.fileHandleForWriting.write(Data(lines.dropFirst().joined(separator: "\n").utf8))
        try input.fileHandleForWriting.close()
        let out = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(out.contains("reading standard input as idevicesyslog"), "\(out)")
        #expect(out.contains("S1 started"), "\(out)")
    }

    @Test("tail --file says when the file it follows was rotated away (journald's new file under its name gets the entries)")
    func fileRotatedAway() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let journal = dir.appendingPathComponent("relay.journal")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("samples/relay/relay.journal"), to: journal)
        let p = Process()
        p.executableURL = packageRoot.appendingPathComponent(".build/debug/castscope")
        p.arguments = ["tail", "--file", journal.path, "--from-start", "--no-color"]
        let output = Pipe(), errors = Pipe()
        p.standardOutput = output
        p.standardError = errors
        let err = LineCollector(errors.fileHandleForReading)
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        #expect(err.waitFor(timeout: 20) { $0.contains { $0.0.contains("following") } })
        // As journald rotates: the file renamed, a new one under its name.
        try FileManager.default.moveItem(at: journal, to: dir.appendingPathComponent("relay@0001.journal"))
        try FileManager.default.copyItem(at: dir.appendingPathComponent("relay@0001.journal"), to: journal)
        let said = err.waitFor(timeout: 30) { $0.contains { $0.0.contains("was rotated away") && $0.0.contains("tail -D") } }
        #expect(said, "\(err.all.map(\.0))")
        p.terminate()
        p.waitUntilExit()
    }

    @Test("a live stream's newest line is shown when the stream goes quiet, not when the next line comes (a session's last line)")
    func newestLineOfAQuietStream() throws {
        let p = Process()
        p.executableURL = packageRoot.appendingPathComponent(".build/debug/castscope")
        p.arguments = ["tail", "--no-journal", "--no-color", "--events", "-"]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = output
        let out = LineCollector(output.fileHandleForReading)
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        // A whole session, then silence with the stream still open (log stream waiting for
        // the phone's next line): its end is shown without another line or the stream's end.
        let session = """
            2026-03-12 10:00:00.171905+0100 0x11a9     Default     0x0                  2107   0    BroadcastExtension: broadcast started
            2026-03-12 10:00:00.272146+0100 0x92e1a    Default     0x0                  2107   0    BroadcastExtension: Open socket connection
            2026-03-12 10:00:00.374322+0100 0x31cbd    Default     0x0                  2107   0    BroadcastExtension: client stream open completed
            2026-03-12 10:00:01.374322+0100 0x31cbd    Default     0x0                  2107   0    BroadcastExtension: client connection did close: (null)

            """
        input.fileHandleForWriting.write(Data(session.utf8))
        let ended = out.waitFor(timeout: 20) { lines in lines.contains { $0.0.contains("S1 ended") } }
        #expect(ended, "the session's last line waited for another: \(out.all.map(\.0))")
        #expect(out.all.contains { $0.0.contains("client connection did close") })
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        // Nothing twice once the stream ends.
        #expect(out.all.filter { $0.0.contains("client connection did close") }.count == 1, "\(out.all.map(\.0))")
        #expect(out.all.filter { $0.0.contains("S1 ended") }.count == 1, "\(out.all.map(\.0))")
    }
}

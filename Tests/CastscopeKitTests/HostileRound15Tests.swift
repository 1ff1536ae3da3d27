import Foundation
import Testing

@testable import CastscopeKit

/// Runs castscope through `/bin/sh` in `dir` (`$0` is the binary): the test's own arguments are
/// Strings, and names that are not UTF-8 come from the shell's printf.
func castscopeThroughShell(_ script: String, in dir: URL) throws -> (status: Int32, stderr: String) {
    let shell = Process()
    shell.executableURL = URL(fileURLWithPath: "/bin/sh")
    shell.arguments = ["-c", script + " > out.txt 2> err.txt", packageRoot.appendingPathComponent(".build/debug/castscope").path]
    shell.currentDirectoryURL = dir
    try shell.run()
    shell.waitUntilExit()
    let err = (try? Data(contentsOf: dir.appendingPathComponent("err.txt"))) ?? Data()
    return (shell.terminationStatus, String(decoding: err, as: UTF8.self))
}

/// A path under `dir` built from bytes (a name that is not UTF-8), as a C string.
func rawPath(_ dir: URL, _ parts: [UInt8]) -> [CChar] { (Array(dir.path.utf8) + [0x2F] + parts + [0]).map { CChar(bitPattern: $0) } }

@Suite("hostile round 15: outputs and inputs whose names are not UTF-8")
struct HostileRound15NameTests {
    /// An input under a folder whose name is not UTF-8 (`caf\xe9/in.log`, read through
    /// `/proc/self/fd/N` since round 14) was compared with the outputs by its real path decoded
    /// to a String: U+FFFD in place of the byte, a path that names no file, so neither its
    /// device and inode nor the links under such a folder were ever looked at. `--force -o`
    /// over a hard link to it, or over a file a link inside such a folder leads to, replaced
    /// the input. And an output named by such bytes was refused ("its folder does not exist")
    /// or made under a name with U+FFFD in it.
    @Test("--force never writes over an input under a folder whose name is not UTF-8; outputs named by such bytes are written there")
    func outputsAgainstInputsNotUTF8() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = try Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"))
        let cafe = Array("caf".utf8) + [0xE9]
        #expect(mkdir(rawPath(dir, cafe), 0o755) == 0)
        #expect(mkdir(dir.appendingPathComponent("logs").path, 0o755) == 0)
        #expect(mkdir(rawPath(dir, Array("logs/".utf8) + cafe), 0o755) == 0)
        let input = rawPath(dir, cafe + Array("/in.log".utf8))
        let fd = open(input, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = log.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
        close(fd)
        #expect(link(input, dir.appendingPathComponent("hard.log").path) == 0)
        try log.write(to: dir.appendingPathComponent("outside.txt"))
        #expect(symlink("../../outside.txt", rawPath(dir, Array("logs/".utf8) + cafe + Array("/l.txt".utf8))) == 0)

        // The input by another name (a hard link): refused, left as it was.
        var r = try castscopeThroughShell(#""$0" analyze --force -o hard.log "$(printf 'caf\351')/in.log""#, in: dir)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr == "castscope: error: --output hard.log is one of the inputs: castscope never writes over an input (e.g. -o report.txt)\n", "\(r.stderr)")
        #expect(try Data(contentsOf: dir.appendingPathComponent("hard.log")) == log)

        // A file read through a link inside such a folder: refused, the link named as shown.
        r = try castscopeThroughShell(#""$0" analyze --force -o outside.txt logs"#, in: dir)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr == "castscope: error: --output outside.txt is read as an input through the link logs/caf\\xe9/l.txt: castscope never writes over an input (e.g. -o report.txt)\n", "\(r.stderr)")
        #expect(try Data(contentsOf: dir.appendingPathComponent("outside.txt")) == log)

        // Inside the input folder named by those bytes: refused, named as given.
        r = try castscopeThroughShell(#""$0" analyze -o "$(printf 'caf\351')/r.txt" "$(printf 'caf\351')""#, in: dir)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr == "castscope: error: --output caf\\xe9/r.txt is inside the input folder caf\\xe9: castscope never writes into what it reads\n", "\(r.stderr)")

        // Outputs named by such bytes, in a folder that is not an input: written under them.
        #expect(mkdir(rawPath(dir, Array("out".utf8) + [0xFF]), 0o755) == 0)
        for (script, name) in [(#""$0" analyze -o "$(printf 'out\377')/report.txt" hard.log"#, Array("out".utf8) + [0xFF] + Array("/report.txt".utf8)),
                               (#""$0" analyze --html "$(printf 'r\351').html" hard.log"#, [0x72, 0xE9] + Array(".html".utf8))]
        {
            for _ in 0..<2 {  // made, then replaced (a report castscope wrote)
                r = try castscopeThroughShell(script, in: dir)
                #expect(r.status == 0, "\(script): \(r.stderr)")
                var st = stat()
                #expect(stat(rawPath(dir, name), &st) == 0 && st.st_size > 100, "\(script)")
            }
        }
    }
}

@Suite("hostile round 15: standard input that is a growing file")
struct HostileRound15StdinTests {
    /// `castscope analyze - < /var/log/relay.log` on a busy host: round 14 stopped a file on
    /// disk at its size when opened, but standard input was read for as long as the daemon
    /// wrote ("the offset it was opened at is not known": it is, lseek gives it). Read from
    /// where the descriptor stands to the file's size then; the note names both sizes.
    @Test("a regular file on standard input is read from its offset to its size when handed over, and said to have grown")
    func growingFileOnStandardInput() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("relay.log")
        let first = Array(String(repeating: "2026-03-12 10:20:01.5 open socket connection\n", count: 200).utf8)
        try Data(first).write(to: file)
        let fd = open(file.path, O_RDONLY)
        defer { close(fd) }
        // (a shell that read the first line itself: `{ read h; castscope analyze -; } < f`)
        #expect(lseek(fd, 45, SEEK_SET) == 45)
        let source = FileSource(fd: fd, path: "-")
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(String(repeating: "2026-03-12 10:20:02.5 written later\n", count: 400).utf8))
        try handle.close()
        #expect(try drain(source) == Array(first[45...]))
        #expect(source.grew)
        #expect(source.openedEnd == UInt64(first.count) && source.sizeNow == UInt64(first.count + 400 * 36))
        #expect(FileSource.grewNote(from: source.openedEnd, to: source.sizeNow).hasPrefix("the file grew while it was read (from 9000 to 23400 bytes"))

        // A pipe (no size) is read to its end, as before.
        let r = try castscope(["analyze", "--json", "-"], stdin: Data(first))
        let inputs = r.json?["inputs"] as? [[String: Any]] ?? []
        #expect(inputs.first?["path"] as? String == "<stdin>" && (inputs.first?["notes"] as? [String] ?? []).allSatisfy { !$0.contains("grew") }, "\(inputs)")
    }
}

@Suite("hostile round 15: archives cut short")
struct HostileRound15CutArchiveTests {
    /// Lines that compress poorly (a counter and random hex), so that a cut leaves whole
    /// blocks before it in every format.
    static func noisyLines(_ count: Int, seed: UInt64) -> [UInt8] {
        var x = seed
        func next() -> String {
            x = x &* 6364136223846793005 &+ 1442695040888963407
            return String(x, radix: 16)
        }
        return Array((0..<count).map {
            "2026-03-12 10:\(10 + $0 / 1000 % 50):00.\(100000 + $0 % 1000)+0100 0x3fb13    Default     0x0                  198    0    mDNSResponder: chunk \($0) \(next())\(next())\n"
        }.joined().utf8)
    }

    /// A download or a ticket's size limit cuts an archive part way. libarchive's words for it
    /// were passed on as damage ("damaged archive member: Truncated tar archive", "ZIP
    /// decompression failed (-5)", "damaged xz data: Lzma library error: No progress is
    /// possible", "truncated gzip stream (input ends inside a member)" of a `.tar.gz`, a gzip
    /// member and not the archive's): none said the file was cut, nor which member the cut fell
    /// in, nor that what came before was read.
    @Test("a .tar, .zip, .tar.gz or .xz cut short: one line saying so, with the member and byte, and what came before read")
    func cutArchives() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // (a session first: a bundle of noise alone is "nothing recognized", exit 4)
        let session = Array(try Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt")))
        let p1 = session + Self.noisyLines(8000, seed: 1), p2 = Self.noisyLines(8000, seed: 2)
        for (kind, name) in [(ArchiveKind.tar, "b.tar"), (.zip, "b.zip"), (.tarGz, "b.tar.gz"), (.xz, "p.log.xz")] {
            let whole = makeArchive(kind, kind == .xz ? [("p.log", p1 + p2)] : [("p1.log", p1), ("p2.log", p2)])
            let cut = whole.count * 3 / 4
            let file = dir.appendingPathComponent(name)
            try Data(whole.prefix(cut)).write(to: file)
            let r = try castscope(["analyze", "--json", file.path])
            #expect(r.status == 1, "\(name): \(r.status) \(r.stderr)")
            let path = file.path
            let lines = r.stderr.split(separator: "\n").map(String.init)
            #expect(lines.count == 1, "\(name): \(r.stderr)")
            let line = lines.first ?? ""
            switch kind {
            case .tar, .zip:
                #expect(line.hasPrefix("castscope: error: \(path)!p2.log: at byte ")
                        && line.contains(": cut short: the archive ends inside this member (at byte \(cut) of the archive): its ")
                        && line.hasSuffix(" bytes before the cut are read"), "\(name): \(line)")
            case .tarGz:
                #expect(line.hasPrefix("castscope: error: \(path): at byte \(cut): gzip data cut short: the file ends inside it: what was decompressed before the cut is read (inside the member \(path)!p2.log, after its first "),
                        "\(name): \(line)")
            default:
                #expect(line.hasPrefix("castscope: error: \(path): at byte \(cut): xz data cut short: the file ends inside it: the ")
                        && line.hasSuffix(" bytes decompressed before the cut are read"), "\(name): \(line)")
            }
            // What came before the cut is read: the first member whole, the second in part.
            let inputs = Dictionary((r.json?["inputs"] as? [[String: Any]] ?? []).map { ($0["path"] as? String ?? "", $0["lines"] as? Int ?? 0) }, uniquingKeysWith: +)
            if kind == .xz {
                #expect((inputs[path] ?? 0) > 8000, "\(name): \(inputs)")
            } else {
                #expect((inputs["\(path)!p1.log"] ?? 0) > 8000 && (inputs["\(path)!p2.log"] ?? 0) > 1000, "\(name): \(inputs)")
            }
        }
    }
}

@Suite("hostile round 15: files of NUL bytes")
struct HostileRound15ZeroTests {
    /// A log preallocated, or zeroed by a crash (its blocks allocated, its data never
    /// written), holds NULs and nothing else. It was called a "binary file (NUL byte), not a
    /// log", which sends its reader looking for a format; a short one (under the 64 NULs a
    /// copytruncate hole is detected by) was that too.
    @Test("a file of NUL bytes alone is named as such, nothing to read; the bundle around it is read")
    func filesOfNULs() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("device.log")
        try Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt")).write(to: good)
        for count in [1, 40, 5000, 300_000] {
            let zeros = dir.appendingPathComponent("zeros-\(count).log")
            try Data(count: count).write(to: zeros)
            let r = try castscope(["analyze", "--json", zeros.path, good.path])
            #expect(r.status == 1, "\(count): \(r.stderr)")
            let said = count == 1 ? "its one byte is" : "all \(count) bytes are"
            #expect(r.stderr == "castscope: error: \(zeros.path): at byte 0: \(said) NUL (a log preallocated, or zeroed when its system crashed?): nothing to read\n",
                    "\(count): \(r.stderr)")
            #expect((r.json?["sessions"] as? [Any])?.count == 1, "\(count)")
            try FileManager.default.removeItem(at: zeros)
        }
    }
}

@Suite("hostile round 15: many names that are not UTF-8")
struct HostileRound15ManyNamesTests {
    /// `castscope analyze ~/Downloads/*` over a folder of names that are not UTF-8: round 14
    /// opens each such argument by its bytes and holds it open to the end of the run. Past the
    /// open-file limit none could be read: 1,100 of them under `ulimit -n 1024` were every one
    /// lost ("cannot open: Too many open files" named `/proc/self/fd/9`, or "No such file or
    /// directory" of a name with U+FFFD in it), exit 4. At most half the limit is held; those
    /// past it are said (five by name, then a count) and the others read.
    @Test("more names that are not UTF-8 than descriptors: the first read, the rest said in six lines")
    func manyArgumentsNotUTF8() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = try Data(contentsOf: packageRoot.appendingPathComponent("samples/stopped-10001/device-syslog.txt"))
        for i in 0..<300 {
            let fd = open(rawPath(dir, Array(String(format: "f%03d", i).utf8) + [0xE9] + Array(".log".utf8)), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            _ = log.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
            close(fd)
        }
        let r = try castscopeThroughShell(#"ulimit -n 256; "$0" analyze -o report.json f*.log"#, in: dir)
        #expect(r.status == 1, "\(r.stderr.prefix(500))")
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 6, "\(r.stderr.prefix(800))")
        #expect(lines.first == "castscope: error: f096\\xe9.log: not read: more than 96 names that are not UTF-8 on the command line, each held open, and the open-file limit (ulimit -n) is 256: give their folder instead",
                "\(lines.first ?? "")")
        #expect(lines.last == "castscope: error: f101\\xe9.log: and 198 more arguments after it: not read, as the one above", "\(lines.last ?? "")")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("report.json"))) as? [String: Any]
        let read = (json?["inputs"] as? [[String: Any]] ?? []).filter { ($0["records"] as? Int ?? 0) > 100 }
        #expect(read.count == 96, "\(read.count)")
    }
}

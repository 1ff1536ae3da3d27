import CCastscopeArchive
import Foundation
import Testing

@testable import CastscopeKit

/// The package root (tests run the binary from there, so paths in reports are relative).
let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// `../shared/reference/real-logs`, beside the checkout.
let realLogs = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/reference/real-logs")

struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
    }
}

/// Every report of each input in each format is the same with `knob` in the environment as
/// without it (a knob that moves data to disk sooner must not change a byte of any report).
func expectSameReports(_ inputs: [String], formats: [[String]], with knob: [String: String],
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
    let env = ["SOURCE_DATE_EPOCH": "0"]
    for input in inputs {
        for format in formats {
            let plain = try castscope(["analyze", "--no-color"] + format + [input], env: env)
            let turned = try castscope(["analyze", "--no-color"] + format + [input], env: env.merging(knob) { $1 })
            #expect(plain.status == turned.status, sourceLocation: sourceLocation)
            #expect(plain.stdout == turned.stdout, "\(input) \(format)", sourceLocation: sourceLocation)
            #expect(!plain.stdout.isEmpty, sourceLocation: sourceLocation)
        }
    }
}

/// Runs the built `castscope` binary (debug build, made by `make test` before `swift test`).
func castscope(_ args: [String], stdin: Data? = nil, cwd: URL = packageRoot, env: [String: String] = [:]) throws -> RunResult {
    let binary = packageRoot.appendingPathComponent(".build/debug/castscope")
    let p = Process()
    p.executableURL = binary
    p.arguments = args
    p.currentDirectoryURL = cwd
    var environment = ProcessInfo.processInfo.environment
    // A test that asked for a named zone in this process left TZ set to it (`ZoneTable`):
    // the command gets the machine's zone, as it would from a shell.
    environment["TZ"] = ZoneTable.shared.originalTZ
    for (k, v) in env { environment[k] = v }
    p.environment = environment
    // Output goes to files, so that a large report never blocks on a full pipe.
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let outURL = dir.appendingPathComponent("out")
    let errURL = dir.appendingPathComponent("err")
    FileManager.default.createFile(atPath: outURL.path, contents: nil)
    FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)
    p.standardOutput = out
    p.standardError = err
    let input = Pipe()
    p.standardInput = input
    try p.run()
    if let stdin { input.fileHandleForWriting.write(stdin) }
    try input.fileHandleForWriting.close()
    p.waitUntilExit()
    try out.close()
    try err.close()
    let outData = try Data(contentsOf: outURL)
    let errData = try Data(contentsOf: errURL)
    return RunResult(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                     stderr: String(decoding: errData, as: UTF8.self))
}

/// A fresh temporary directory, removed by the caller, and in any case when the test
/// process exits (a failing test, or a helper that hands its directory on, left hundreds of
/// megabytes of them in /tmp over a day's runs).
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("castscope-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    madeDirectories.withLock { made in
        if made.isEmpty { atexit { madeDirectories.withLock { for d in $0 { try? FileManager.default.removeItem(atPath: d) } } } }
        made.append(url.path)
    }
    return url
}

/// The directories `temporaryDirectory` made.
private let madeDirectories = Locked<[String]>([])

/// A value behind a lock (tests run in parallel).
final class Locked<T>: @unchecked Sendable {
    private var value: T
    private let lock = NSLock()
    init(_ value: T) { self.value = value }
    func withLock<R>(_ body: (inout T) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

enum ArchiveKind { case zip, tar, tarGz, gz, tarXz, tarBz2, tarZst, xz, bz2, zst }

/// Writes an archive in memory with libarchive (zip, tar, tar.gz/.xz/.bz2/.zst, or one member
/// compressed on its own: .gz, .xz, .bz2, .zst); a zip's members encrypted with ZipCrypto
/// under `passphrase` when one is given.
func makeArchive(_ kind: ArchiveKind, _ entries: [(String, [UInt8])], passphrase: String? = nil) -> [UInt8] {
    let a = archive_write_new()!
    defer { archive_write_free(a) }
    switch kind {
    case .zip:
        archive_write_set_format_zip(a)
        if let passphrase {
            precondition(archive_write_set_options(a, "zip:encryption=zipcrypt") == ARCHIVE_OK)
            precondition(archive_write_set_passphrase(a, passphrase) == ARCHIVE_OK)
        }
    case .tar: archive_write_set_format_pax_restricted(a)
    case .tarGz:
        archive_write_set_format_pax_restricted(a)
        archive_write_add_filter_gzip(a)
    case .gz:
        archive_write_set_format_raw(a)
        archive_write_add_filter_gzip(a)
    case .tarXz, .tarBz2, .tarZst:
        archive_write_set_format_pax_restricted(a)
    case .xz, .bz2, .zst:
        archive_write_set_format_raw(a)
    }
    switch kind {
    case .tarXz, .xz: archive_write_add_filter_xz(a)
    case .tarBz2, .bz2: archive_write_add_filter_bzip2(a)
    case .tarZst, .zst: archive_write_add_filter_zstd(a)
    default: break
    }
    let capacity = entries.reduce(1 << 20) { $0 + $1.1.count * 2 }
    var buffer = [UInt8](repeating: 0, count: capacity)
    var used = 0
    buffer.withUnsafeMutableBytes { buf in
        archive_write_open_memory(a, buf.baseAddress, capacity, &used)
        for (name, data) in entries {
            let e = archive_entry_new()!
            archive_entry_set_pathname(e, name)
            archive_entry_set_size(e, Int64(data.count))
            archive_entry_set_filetype(e, 0o100000)
            archive_entry_set_perm(e, 0o644)
            archive_write_header(a, e)
            data.withUnsafeBytes { _ = archive_write_data(a, $0.baseAddress, data.count) }
            archive_entry_free(e)
        }
        archive_write_close(a)
    }
    return Array(buffer[0..<used])
}

/// Reads all records of `text` as `format` into (field dictionaries).
func records(_ text: String, format name: String) throws -> [[String: String]] {
    let registry = try ParserRegistry.builtin()
    let format = try #require(registry.format(named: name))
    let reader = RecordReader(format: format, lines: LineReader(source: MemorySource(text), path: "t"))
    var out: [[String: String]] = []
    try reader.run { rec in
        var f: [String: String] = ["line": String(rec.line)]
        for field in RecordField.allCases { if let v = rec.string(field) { f[field.name] = v } }
        if rec.timeInferred { f["inferred"] = "1" }
        out.append(f)
    }
    return out
}

/// Runs `command` (a shell command line) under a pseudo-terminal (`script`), as a user at a
/// terminal would, from the package root; its output as the terminal showed it. `CI=1` (no
/// progress line) and `TERM=xterm`, no `NO_COLOR`, unless `env` says otherwise.
func onTerminal(_ command: String, env: [String: String] = [:]) throws -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    p.arguments = ["-qec", command, "/dev/null"]
    p.currentDirectoryURL = packageRoot
    var e = ProcessInfo.processInfo.environment
    e["CI"] = "1"
    e.removeValue(forKey: "NO_COLOR")
    e["TERM"] = "xterm"
    for (k, v) in env { e[k] = v }
    p.environment = e
    let out = Pipe()
    p.standardOutput = out
    p.standardInput = FileHandle.nullDevice
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

/// `castscope analyze --no-color` of each of `files` (name, bytes) written into `dir`, by
/// name, with every file's name (and each of `alsoNames`: a member's display path) given as
/// `F`: for comparing the reports of one log stored in several ways.
func reportsWithoutNames(_ files: [(String, [UInt8])], in dir: URL, alsoNames: [String] = []) throws -> [String: String] {
    let names = (files.map(\.0) + alsoNames).sorted { $0.count > $1.count }
    var reports: [String: String] = [:]
    for (name, bytes) in files {
        let url = dir.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        let out = try castscope(["analyze", "--no-color", url.path])
        #expect(out.status == 0, "\(name): \(out.stderr)")
        var report = out.stdout.replacingOccurrences(of: dir.path + "/", with: "")
        for n in names { report = report.replacingOccurrences(of: n, with: "F") }
        reports[name] = report
    }
    return reports
}

/// Every field of each session (by reflection: one added later is compared too), and every
/// line's kind, message, attributes, time, place and count; with `texts`, each folded line's
/// own text too.
func describe(_ sessions: [Session], texts: Bool = false) -> [String] {
    let line: (Event) -> String = { e in
        var each = ""
        if texts {
            var all: [String] = []
            e.forEachLineMessage { all.append($0) }
            each = ":\(all)"
        }
        return "\(e.kind):\(e.message):\(e.attrs):\(e.time ?? -1):\(e.source):\(e.order):\(e.count)\(each)"
    }
    return sessions.map { s in
        Mirror(reflecting: s).children.map { c -> String in
            switch c.label {
            case "events": return "events=\(s.events.map(line))"
            case "deciding": return "deciding=\(s.deciding.map(line))"
            // (held by reference: its value, not the box's name)
            case "relayBox": return "relay=\(String(describing: s.relay))"
            default: return "\(c.label ?? "?")=\(c.value)"
            }
        }.joined(separator: " ")
    }
}

/// `/bin/sh -c script` with `$0`, `$1`, … set to `args` (a redirection or a limit the test
/// needs from a shell): its exit status and standard error; standard output is dropped.
func runShell(_ script: String, _ args: [String]) throws -> (status: Int32, stderr: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/sh")
    p.arguments = ["-c", script] + args
    let err = Pipe()
    p.standardError = err
    p.standardOutput = FileHandle.nullDevice
    try p.run()
    let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    return (p.terminationReason == .exit ? p.terminationStatus : 128 + p.terminationStatus, text)
}

/// A paste written to a file of its own and analyzed: the JSON report, and `show`'s text of it
/// (the hunt rounds' tests, each around a paste's real lines).
func analyzePaste(_ text: String, name: String = "paste.txt", _ extra: [String] = []) throws -> (json: [String: Any], text: String) {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let url = dir.appendingPathComponent(name)
    try Data(text.utf8).write(to: url)
    let j = try castscope(["analyze", "--json"] + extra + [url.path])
    let t = try castscope(["show", url.path])
    return (j.json ?? [:], t.stdout)
}

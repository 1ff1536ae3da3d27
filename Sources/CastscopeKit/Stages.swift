#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `CASTSCOPE_STAGES=1`: one line per pipeline stage on stderr with the time since start and
/// the process's resident and peak memory (Linux), for finding where time and memory go
/// (`make bench` measures; this only tells which stage to look at).
public enum Stages {
    public static let enabled = getenv("CASTSCOPE_STAGES") != nil
    nonisolated(unsafe) static var start: Int64 = 0

    public static func mark(_ name: String) {
        guard enabled else { return }
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let now = Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
        if start == 0 { start = now }
        var rss = "", hwm = "", anon = ""
        forEachLine(of: "/proc/self/status") { s in
            if s.hasPrefix("VmRSS:") { rss = s.dropFirst(6).stageValue() }
            if s.hasPrefix("VmHWM:") { hwm = s.dropFirst(6).stageValue() }
            if s.hasPrefix("RssAnon:") { anon = s.dropFirst(8).stageValue() }
            return true
        }
        fputs("stage \(name): \(Fmt.decimal(Double(now - start) / 1000, 1)) ms, rss \(rss) (anon \(anon)), peak \(hwm)\n", stderr)
    }
}

/// The process's resident memory, for stages that bound what they hold by it.
enum Resident {
    /// In megabytes (Linux: `/proc/self/statm`); nil where it cannot be read.
    static func megabytes() -> Int? {
        statm().map { megabytes(pages: $0.resident) }
    }

    /// Its anonymous part (resident less file-backed and shared pages: not the mapped pages of
    /// a journal being read), in megabytes; nil where it cannot be read.
    static func anonymousMegabytes() -> Int? {
        statm().map { megabytes(pages: max(0, $0.resident - $0.shared)) }
    }

    /// Resident and shared (file-backed) pages, from `/proc/self/statm` (Linux; nil elsewhere).
    private static func statm() -> (resident: Int, shared: Int)? {
        #if os(Linux)
        var first = ""
        forEachLine(of: "/proc/self/statm") { first = $0; return false }
        let fields = first.split(separator: " ")
        guard fields.count > 2, let resident = Int(fields[1]), let shared = Int(fields[2]) else { return nil }
        return (resident, shared)
        #else
        return nil
        #endif
    }

    private static func megabytes(pages: Int) -> Int { (pages * Int(sysconf(Int32(_SC_PAGESIZE)))) >> 20 }
}

/// Each line of a small text file (a `/proc` one), until `body` says to stop; nothing when it
/// cannot be opened.
private func forEachLine(of path: String, _ body: (String) -> Bool) {
    guard let f = fopen(path, "r") else { return }
    defer { fclose(f) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, 256, f) != nil {
        guard body(String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) else { return }
    }
}

extension Substring {
    fileprivate func stageValue() -> String {
        String(self.drop { $0 == " " || $0 == "\t" }.prefix { $0 != "\n" })
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// What the tracev3 files of one log archive gave the pipeline.
struct ULAnalysis {
    var events: [Event] = []
    var summary: InputSummary
    var errors: [InputError] = []
}

extension ULRecord {
    /// Fills a pipeline record (the fields `log show` prints) from the rendered entry.
    func fill(_ rec: inout RawRecord, line: Int) {
        rec.reset(line: line)
        rec.time = .epoch(micros: wallNanos / 1000)
        if let p = processPath {
            let name = p.split(separator: "/").last.map(String.init) ?? p
            rec.set(.process, bytes: Array(name.utf8))
        }
        var digits: [UInt8] = []
        digits.appendDecimal(UInt64(pid.magnitude), negative: pid < 0)
        rec.set(.pid, bytes: digits)
        digits.removeAll(keepingCapacity: true)
        digits.append(contentsOf: "0x".utf8)
        digits.append(contentsOf: String(entry.threadID, radix: 16).utf8)
        rec.set(.tid, bytes: digits)
        ulMessageType(entry).withUTF8Buffer { rec.set(.level, UnsafeRawBufferPointer($0)) }
        if subsystem.count > 0 { rec.set(.subsystem, subsystem) }
        if category.count > 0 { rec.set(.category, category) }
        if let s = senderPath, let name = s.split(separator: "/").last { rec.set(.library, bytes: Array(name.utf8)) }
        rec.set(.message, message)
    }
}

extension Analyzer {
    /// Reads the tracev3 files of a log archive (or single tracev3 streams, `root` nil) on every
    /// core, each file on its own; recognized records become events, in file order.
    func readUnifiedLog(display: String, root: String?, files: [(display: String, path: String)]) -> ULAnalysis {
        let reader = UnifiedLogReader(root: root)
        var summary = InputSummary(path: display)
        summary.format = "tracev3"
        struct FileResult {
            var events: [Event] = []
            var summary = ULFileSummary()
            var error: InputError?
        }
        let slots = ULSlots<FileResult>(count: files.count)
        let factory = EventFactory(matcher: matcher)
        let prefilter = self.prefilter.isUseful ? self.prefilter : nil
        DispatchQueue.concurrentPerform(iterations: files.count) { k in
            var result = FileResult()
            let file = files[k]
            do {
                let mapped = try MappedFile(path: file.path)
                let interner = Interner()
                var compactor = EventCompactor()
                var rec = RawRecord()
                var order = 0
                let scanner = prefilter?.scanner
                result.summary = reader.read(mapped.bytes, mapped: true, wants: scanner.map { s in { s.mayMatch($0) } }) { r in
                    r.fill(&rec, line: r.index)
                    if factory.add(rec, path: file.display, order: order + 1, fileIndex: 0, interner: interner,
                                   compactor: &compactor, to: &result.events)
                    {
                        order += 1
                    }
                }
            } catch let e as InputError {
                result.error = e
            } catch {}
            slots.set(k, result)
        }
        var out = ULAnalysis(summary: summary)
        var entries = 0
        var logs = 0
        var missing = 0
        var timesynced = 0
        for (k, r) in slots.all.enumerated() {
            out.events.append(contentsOf: r.events)
            if let e = r.error { out.errors.append(e) }
            for p in r.summary.problems {
                out.errors.append(InputError(path: files[k].display, offset: p.offset > 0 ? UInt64(p.offset) : nil, p.message))
            }
            let s = r.summary.stats
            entries += s.entries.reduce(0, +)
            logs += s.count(.log)
            missing += r.summary.formatMissing
            if r.summary.fromTimesync { timesynced += 1 }
            if s.lostMessages > 0 { out.summary.notes.append("\(files[k].display): \(s.lostMessages) messages lost here (loss records)") }
        }
        for e in reader.strings.problems + reader.timesync.problems { out.errors.append(e) }
        out.summary.stats.lines = entries
        out.summary.stats.records = entries
        out.summary.notes.append("\(files.count) tracev3 file\(files.count == 1 ? "" : "s"), \(entries) entries (\(logs) log messages)"
            + (files.isEmpty ? "" : ", wall time from \(timesynced == files.count ? "timesync" : timesynced == 0 ? "the file headers (no matching timesync)" : "timesync for \(timesynced) of \(files.count) files")"))
        if missing > 0 && logs > 0 {
            let share = Double(missing) * 100 / Double(logs)
            out.summary.notes.append(
                "\(missing) of \(logs) log messages (\(share < 10 ? String(format1: share) : String(Int(share.rounded())))%) had no format string in the archive and are shown as their arguments: "
                    + "ask the customer for a fresh `sudo log collect --device --output device.logarchive` on the Mac the device is connected to "
                    + "(or a sysdiagnose taken with its logs) — it carries the UUIDText and dsc string files")
        }
        for e in out.errors { out.summary.errors.append(e.description) }
        out.summary.events = out.events.reduce(0) { $0 + $1.count }
        return out
    }
}

extension String {
    /// One decimal place.
    init(format1 v: Double) {
        let tenths = Int((v * 10).rounded())
        self = String(tenths / 10) + "." + String(tenths % 10)
    }
}

/// Per-index results written by parallel workers.
final class ULSlots<T>: @unchecked Sendable {
    private var slots: [T?]
    private let lock = NSLockLite()
    init(count: Int) { slots = Array(repeating: nil, count: count) }
    func set(_ k: Int, _ v: T) { lock.locked { slots[k] = v } }
    var all: [T] { lock.locked { slots.compactMap { $0 } } }
}

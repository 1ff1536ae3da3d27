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

/// Tracev3 files at least this big are read in parts, one per core.
let unifiedLogSplitSize = 16 << 20

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
        // Big files are read in parts, one per core (chunksets split at chunk starts); the
        // entries a part kept for an oversize chunk of another part are rendered at the end.
        struct Job {
            var file: Int
            var part: TraceV3Reader.Part?
        }
        var jobs: [Job] = []
        for (k, f) in files.enumerated() {
            var split: [TraceV3Reader.Part]?
            if parallelism > 1, let size = fileSize(f.path), size >= UInt64(unifiedLogSplitSize) {
                split = TraceV3Reader.parts(path: f.path, count: parallelism * 2)
            }
            if let split { jobs += split.map { Job(file: k, part: $0) } } else { jobs.append(Job(file: k, part: nil)) }
        }
        let work = jobs
        let slots = ULSlots<FileResult>(count: jobs.count)
        let factory = EventFactory(matcher: matcher)
        let prefilter = self.prefilter.isUseful ? self.prefilter : nil
        let scanner = prefilter?.scanner
        var wants: (@Sendable (UnsafeRawBufferPointer) -> Bool)?
        if let scanner { wants = { @Sendable b in scanner.mayMatch(b) } }
        let wantsFinal = wants
        DispatchQueue.concurrentPerform(iterations: work.count) { j in
            var result = FileResult()
            let file = files[work[j].file]
            do {
                let mapped = try MappedFile(path: file.path)
                let interner = Interner()
                var compactor = EventCompactor()
                var rec = RawRecord()
                var order = 0
                result.summary = reader.read(mapped.bytes, mapped: true, part: work[j].part, wants: wantsFinal) { r in
                    r.fill(&rec, line: r.index)
                    if factory.add(&rec, path: file.display, order: order + 1, fileIndex: 0, interner: interner,
                                   compactor: &compactor, to: &result.events)
                    {
                        order += 1
                    }
                }
                if mapped.shrank { result.error = mapped.shrankError(display: file.display) }
            } catch let e as InputError {
                result.error = e.named(under: root, as: display)
            } catch {}
            slots.set(j, result)
        }
        // One result per file: its parts' events in order, counts added, waiting entries rendered.
        var byFile = [FileResult](repeating: FileResult(), count: files.count)
        var partsOf = [[ULFileSummary]](repeating: [], count: files.count)
        for (j, r) in slots.all.enumerated() {
            let k = jobs[j].file
            byFile[k].events.append(contentsOf: r.events)
            byFile[k].error = byFile[k].error ?? r.error
            if jobs[j].part == nil {
                byFile[k].summary = r.summary
                continue
            }
            partsOf[k].append(r.summary)
            if partsOf[k].count == 1 {
                byFile[k].summary = r.summary
            } else {
                byFile[k].summary.stats.add(r.summary.stats)
                byFile[k].summary.problems += r.summary.problems
                byFile[k].summary.formatMissing += r.summary.formatMissing
                byFile[k].summary.rendered += r.summary.rendered
            }
        }
        for k in files.indices where !partsOf[k].isEmpty {
            let interner = Interner()
            var compactor = EventCompactor()
            var rec = RawRecord()
            var order = 0
            var events: [Event] = []
            let display = files[k].display
            let (missing, noFormat) = reader.readDeferred(partsOf[k], header: byFile[k].summary.header, wants: wantsFinal) { r in
                r.fill(&rec, line: r.index)
                if factory.add(&rec, path: display, order: order + 1, fileIndex: 0, interner: interner,
                               compactor: &compactor, to: &events)
                {
                    order += 1
                }
            }
            byFile[k].events += events
            byFile[k].summary.stats.oversizeMissing += missing
            byFile[k].summary.formatMissing += noFormat
        }
        var out = ULAnalysis(summary: summary)
        var entries = 0
        var logs = 0
        var missing = 0
        var timesynced = 0
        for (k, r) in byFile.enumerated() {
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
        for e in reader.strings.problems + reader.timesync.problems { out.errors.append(e.named(under: root, as: display)) }
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

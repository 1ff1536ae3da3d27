#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `castscope show`'s time merge in bounded memory (issue 15: memory follows what is open, not
/// the input). Each record arrives as its output bytes and a time; records are kept in memory
/// up to `runBytes`, then that run is sorted and written to an unlinked temporary file, and at
/// the end the runs (and the last one, in memory) are merged. The order is a stable sort's:
/// by time, then arrival (records without a time first, in arrival order). A sysdiagnose's
/// log archive of a gigabyte once meant every record in memory as strings (1.4 GB for 215 MB
/// of tracev3).
///
/// Without a temporary file (none can be made, or the disk is full) the records stay in memory,
/// as before.
final class LogShowRuns {
    private struct Entry {
        var time: Int64
        var seq: Int64
        var start: Int
        var length: Int
    }

    let runBytes: Int
    private var bytes: OutputBuffer
    private var entries: [Entry] = []
    private var seq: Int64 = 0
    private var fd: Int32 = -1
    /// The runs on disk: where each starts and how many records it holds.
    private var runs: [(offset: Int64, count: Int)] = []
    private var written: Int64 = 0
    private var spillFailed = false
    /// Records written to disk in all (for a test: whether the runs were used).
    private(set) var spilled = 0

    let directory: String?

    init(runBytes: Int = 16 << 20, directory: String? = nil) {
        self.runBytes = runBytes
        self.directory = directory
        // Room for a full run and the record that fills it, made once: a buffer that doubled
        // past the run's size would hold twice that (its pages are touched only as written).
        bytes = OutputBuffer(capacity: min(runBytes, 32 << 20) + (1 << 20))
    }

    deinit { if fd >= 0 { close(fd) } }

    /// A record at `time` (nil: none) whose bytes `write` writes.
    func add(time: Int64?, _ write: (inout OutputBuffer) -> Void) {
        let start = bytes.count
        write(&bytes)
        entries.append(Entry(time: time ?? .min, seq: seq, start: start, length: bytes.count - start))
        seq += 1
        if bytes.count >= runBytes && !spillFailed { spill() }
    }

    private static func sorted(_ entries: inout [Entry]) {
        // Nearly always in order already (a log is written in time order).
        let inOrder = !entries.indices.dropFirst().contains {
            (entries[$0].time, entries[$0].seq) < (entries[$0 - 1].time, entries[$0 - 1].seq)
        }
        if !inOrder { entries.sort { ($0.time, $0.seq) < ($1.time, $1.seq) } }
    }

    /// The run in memory, sorted, to the end of the file: each record as its time, its
    /// arrival number, its length and its bytes. On a failed write the run stays in memory
    /// (and every record after it: no more runs are written).
    private func spill() {
        if fd < 0 {
            fd = unlinkedTemporaryFile("show", directory: directory)
            guard fd >= 0 else { spillFailed = true; return }
        }
        Self.sorted(&entries)
        var out = OutputBuffer(capacity: 1 << 20)
        var at = written
        var ok = true
        func flush() {
            guard ok, !out.isEmpty else { return }
            ok = out.withUnsafeBytes { b in pwriteAll(fd, UnsafeRawBufferPointer(b), at: at) }
            at += Int64(out.count)
            out.removeAll()
        }
        bytes.withUnsafeBytes { all in
            for e in entries {
                withUnsafeBytes(of: e.time.littleEndian) { out.append($0) }
                withUnsafeBytes(of: e.seq.littleEndian) { out.append($0) }
                withUnsafeBytes(of: Int64(e.length).littleEndian) { out.append($0) }
                out.append(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(all)[e.start..<e.start + e.length]))
                if out.count >= 1 << 20 { flush() }
            }
        }
        flush()
        guard ok else {
            spillFailed = true
            return
        }
        runs.append((written, entries.count))
        spilled += entries.count
        written = at
        entries.removeAll(keepingCapacity: true)
        bytes.removeAll()
    }


    /// Hands every record's bytes to `emit` in order (`first`: the first record). False when a
    /// run could not be read back or `emit` said stop.
    func finish(_ emit: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        Self.sorted(&entries)
        return bytes.withUnsafeBytes { raw in
            let memory = UnsafeRawBufferPointer(raw)
            guard !runs.isEmpty else {
                for e in entries where !emit(UnsafeRawBufferPointer(rebasing: memory[e.start..<e.start + e.length])) { return false }
                return true
            }
            // The readers' blocks together stay near 8 MB: 256 KB each for 128 runs of a 2 GB
            // input was 32 MB at once (`show` peaked at 67 MB).
            let block = max(32 << 10, min(256 << 10, (8 << 20) / runs.count))
            var readers = runs.map { RunReader(fd: fd, offset: $0.offset, count: $0.count, blockSize: block) }
            var memoryNext = 0
            // The head of each source: a run on disk (its index), or the memory run (-1).
            var heap: [(time: Int64, seq: Int64, source: Int)] = []
            func push(_ h: (time: Int64, seq: Int64, source: Int)) {
                heap.append(h)
                var i = heap.count - 1
                while i > 0 {
                    let p = (i - 1) / 2
                    guard (heap[i].time, heap[i].seq) < (heap[p].time, heap[p].seq) else { break }
                    heap.swapAt(i, p)
                    i = p
                }
            }
            func pop() -> (time: Int64, seq: Int64, source: Int) {
                let top = heap[0]
                let last = heap.removeLast()
                if !heap.isEmpty {
                    heap[0] = last
                    var i = 0
                    while true {
                        let l = 2 * i + 1, r = l + 1
                        var m = i
                        if l < heap.count && (heap[l].time, heap[l].seq) < (heap[m].time, heap[m].seq) { m = l }
                        if r < heap.count && (heap[r].time, heap[r].seq) < (heap[m].time, heap[m].seq) { m = r }
                        if m == i { break }
                        heap.swapAt(i, m)
                        i = m
                    }
                }
                return top
            }
            for k in readers.indices {
                guard let h = readers[k].next() else { return false }
                push((h.time, h.seq, k))
            }
            if let e = entries.first { push((e.time, e.seq, -1)) }
            while !heap.isEmpty {
                let top = pop()
                if top.source < 0 {
                    let e = entries[memoryNext]
                    guard emit(UnsafeRawBufferPointer(rebasing: memory[e.start..<e.start + e.length])) else { return false }
                    memoryNext += 1
                    if memoryNext < entries.count { push((entries[memoryNext].time, entries[memoryNext].seq, -1)) }
                    continue
                }
                guard readers[top.source].withPayload(emit) else { return false }
                if readers[top.source].remaining > 0 {
                    guard let h = readers[top.source].next() else { return false }
                    push((h.time, h.seq, top.source))
                }
            }
            return readers.allSatisfy { !$0.failed }
        }
    }

    /// One run read back a block at a time.
    private struct RunReader {
        let fd: Int32
        var offset: Int64
        var remaining: Int
        var block: [UInt8] = []
        var at = 0
        var length = 0
        var failed = false
        /// The record `next` read the head of: its bytes' place in `block`.
        var payload = 0..<0

        let blockSize: Int

        init(fd: Int32, offset: Int64, count: Int, blockSize: Int) {
            self.fd = fd
            self.offset = offset
            remaining = count
            self.blockSize = blockSize
        }

        /// At least `n` bytes from `at` in the block (false: the file ended or failed).
        private mutating func need(_ n: Int) -> Bool {
            if length - at >= n { return true }
            // What is left moves to the front, then the block is filled from the file.
            let left = length - at
            var next = [UInt8](repeating: 0, count: max(n, blockSize))
            if left > 0 { next.withUnsafeMutableBytes { d in block.withUnsafeBytes { s in d.baseAddress!.copyMemory(from: s.baseAddress! + at, byteCount: left) } } }
            let got = next.withUnsafeMutableBytes { preadAll(fd, UnsafeMutableRawBufferPointer(rebasing: $0[left...]), at: offset) }
            offset += Int64(got)
            let filled = left + got
            guard filled >= n else { failed = true; return false }
            block = next
            at = 0
            length = filled
            return true
        }

        /// The next record's time and arrival number (its bytes are `payload`).
        mutating func next() -> (time: Int64, seq: Int64)? {
            guard remaining > 0, need(24) else { return nil }
            let (time, seq, len) = block.withUnsafeBytes { b in
                (Int64(littleEndian: b.loadUnaligned(fromByteOffset: at, as: Int64.self)),
                 Int64(littleEndian: b.loadUnaligned(fromByteOffset: at + 8, as: Int64.self)),
                 Int(Int64(littleEndian: b.loadUnaligned(fromByteOffset: at + 16, as: Int64.self))))
            }
            guard len >= 0, need(24 + len) else { failed = true; return nil }
            payload = at + 24..<at + 24 + len
            at += 24 + len
            remaining -= 1
            return (time, seq)
        }

        func withPayload(_ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
            block.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[payload])) }
        }
    }
}

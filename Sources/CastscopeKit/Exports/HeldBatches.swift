#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One table's insert bodies, compressed and kept in order instead of sent: `analyze` reads a
/// big text file and hands its sessions on while it reads, and may still give up and read the
/// bundle again the whole way (`Analyzer.readingAsItGoes`); rows already inserted could not be
/// taken back then (a session cut differently would leave rows of its own). They go out when
/// the analysis is final (`BatchSender.release`).
///
/// Kept in an unlinked temporary file (mode 0600, in `TMPDIR` or /tmp: gone with the process
/// however it ends), so that memory holds one batch, not the bundle's rows; in memory when no
/// such file can be made or written.
final class HeldBatches {
    private var fd: Int32 = -1
    private var end: Int64 = 0
    /// Where each batch lies in the file (or, for `memory`, its index there), and its rows.
    private var batches: [(offset: Int64, length: Int, rows: Int)] = []
    private var memory: [[UInt8]] = []

    init() {
        fd = unlinkedTemporaryFile("rows")
    }

    deinit { if fd >= 0 { close(fd) } }

    var count: Int { batches.count }

    /// Keeps one compressed body of `rows` rows, after those kept before.
    func append(_ body: [UInt8], rows: Int) {
        if fd >= 0, memory.isEmpty, writeAll(body, at: end) {
            batches.append((end, body.count, rows))
            end += Int64(body.count)
            return
        }
        // No file, or a write failed (a full disk): this and what follows stay in memory.
        batches.append((Int64(memory.count), body.count, rows))
        memory.append(body)
    }

    /// Each kept body in the order kept, read back one at a time; nil for one the file could
    /// not give back (that table is then reported as not written).
    func forEach(_ body: ([UInt8]?, Int) -> Void) {
        let inFile = batches.count - memory.count
        for (k, b) in batches.enumerated() {
            guard k < inFile else { body(memory[Int(b.offset)], b.rows); continue }
            body(read(b.offset, b.length), b.rows)
        }
    }

    private func writeAll(_ bytes: [UInt8], at offset: Int64) -> Bool {
        bytes.withUnsafeBytes { pwriteAll(fd, $0, at: offset) }
    }

    private func read(_ offset: Int64, _ length: Int) -> [UInt8]? {
        let out = [UInt8](unsafeUninitializedCapacity: length) { buf, count in
            count = preadAll(fd, UnsafeMutableRawBufferPointer(buf), at: offset)
        }
        return out.count == length ? out : nil
    }
}

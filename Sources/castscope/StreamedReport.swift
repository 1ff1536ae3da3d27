#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CastscopeKit

/// Bytes kept in memory up to 1 MB, then in an unlinked temporary file: the sessions of a
/// report written as they end, until the head (which counts them) can be written before them.
final class Spill {
    private var buffer: [UInt8] = []
    private var file: UnsafeMutablePointer<FILE>?
    private(set) var failed = false

    init() { buffer.reserveCapacity(1 << 20) }
    deinit { if let file { fclose(file) } }

    func append(_ s: String) {
        var s = s
        s.withUTF8 { buffer.append(contentsOf: $0) }
        spillIfFull()
    }

    func append(_ b: [UInt8]) {
        buffer.append(contentsOf: b)
        spillIfFull()
    }

    /// A report's bytes with control characters from the logs escaped on their way in.
    func appendSanitized(_ b: [UInt8], styles: Bool) {
        b.withUnsafeBufferPointer { Sanitize.terminal($0, styles: styles, into: &buffer) }
        spillIfFull()
    }

    private func spillIfFull() {
        guard buffer.count >= 1 << 20, !failed else { return }
        if file == nil { file = tmpfile() }
        guard let file, OutputWriter.writeAll(buffer.withUnsafeBytes { $0 }, to: file) else {
            failed = true  // kept in memory instead
            return
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Copies everything appended to `out`.
    func copy(to out: UnsafeMutablePointer<FILE>) -> Bool {
        if let file {
            guard fflush(file) == 0 else { return false }
            rewind(file)
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
                if n == 0 { break }
                guard chunk.withUnsafeBytes({ fwrite($0.baseAddress, 1, n, out) }) == n else { return false }
            }
            if ferror(file) != 0 { return false }
        }
        return buffer.withUnsafeBytes { OutputWriter.writeAll($0, to: out) }
    }
}

/// Text and JSON reports written as sessions end (`Analyzer.onSession`): each session is
/// rendered when the analyzer hands it on and then let go; the head (which counts sessions and
/// findings) and the tail are rendered at the end and written around them. The bytes are those
/// of the whole-report writers (`TextReport.render`, `JSONReport.renderBytes`).
final class StreamedReport {
    let target: OutputTarget
    var text: TextReport?
    let spill = Spill()
    var count = 0
    /// One session's text, before it is sanitized into the spill.
    var block = OutputBuffer(capacity: 1 << 16)

    init(target: OutputTarget, text: TextReport?) {
        self.target = target
        self.text = text
    }

    /// Before the first session: the inputs are known (for `[n]:line` aliases).
    func begin(_ partial: AnalysisReport) {
        text = text?.prepared(inputs: partial.inputs)
    }

    func add(_ s: Session, _ findings: [Finding]) {
        if let r = text {
            block.removeAll()
            r.sessionBlock(s, findings: findings, into: &block)
            if r.width != nil {
                spill.append(terminal(r, block.string))
            } else {
                spill.appendSanitized(block.bytes, styles: r.color)
            }
        } else {
            spill.append(JSONReport.sessionElement(s, first: count == 0))
        }
        count += 1
    }

    /// The report's own text as the whole-report path leaves it: wrapped to the width, control
    /// characters from the logs escaped.
    func terminal(_ r: TextReport, _ part: String) -> String {
        Sanitize.terminal(r.width.map { TextReport.wrap(part, width: $0) } ?? part, styles: r.color)
    }

    /// Writes head, sessions and tail; a one-line error, or nil.
    func finish(_ report: AnalysisReport) -> String? {
        if let r = text {
            let head = terminal(r, r.head(report))
            let tail = terminal(r, r.tail(report))
            return OutputWriter.write(to: target) { f in
                OutputWriter.writeAll(head, to: f) && spill.copy(to: f) && OutputWriter.writeAll(tail, to: f)
            }
        }
        let (head, tail) = JSONReport.renderParts(report, sessionCount: count)
        return OutputWriter.write(to: target) { f in
            head.withUnsafeBytes { OutputWriter.writeAll($0, to: f) } && spill.copy(to: f)
                && tail.withUnsafeBytes { OutputWriter.writeAll($0, to: f) }
        }
    }
}

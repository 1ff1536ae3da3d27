#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The fast path over runs of irrelevant lines (the 95 %+ of a sysdiagnose export that comes
/// from unrelated processes): a whole buffer of complete lines at a time, pointers and scalars
/// only — no method call on a class, no reference count, no `String`. The prefilter and the
/// ASCII test run over the buffer as a whole (`PrefilterScanner.certify`), so each line costs
/// one newline search and a look at its first bytes.
///
/// It consumes lines as long as each one is provably one that `RecordReader` would only count:
/// ASCII, no anchor, not a header or footer, and either a record start or a continuation of a
/// record already found irrelevant. At the first other line it stops and leaves that line to the
/// full per-line path, so both paths give the same records and counts.
struct Skimmer {
    let scanner: PrefilterScanner
    /// First bytes of skip/header prefixes: such lines go to the full path.
    let skipFirstBytes: UnsafePointer<Bool>
    /// 1 ISO date, 2 BSD date, 3 clock, 4 word then tab (see `RecordStartProbe`); 0 for plain
    /// formats, where every line is a record.
    let probe: Int
    /// Continuation lines of an irrelevant record are skipped (join formats: any line that does
    /// not start a record; in tab and indented formats those lines are indented, which the full
    /// path reads).
    let skipsContinuations: Bool
    /// A record whose line ends in an opening bracket opens a dump its lines continue (tab and
    /// indented formats, as plain text): the full path reads it.
    let stopsAtDumps: Bool
    let maxLineLength: Int

    struct Progress {
        var bytes = 0
        var lines = 0
        var records = 0
        var skipped = 0
        /// The last record started in the run was irrelevant (its continuations are skipped).
        var pendingIrrelevant: Bool
        /// The line it stopped at holds an anchor the block scan verified: the full path need
        /// not scan it again.
        var stoppedAtAnchor = false
    }

    /// Walks `region` (complete lines, each ending in `\n`) from its start; returns how far it got.
    /// Not inlined: the line loop keeps its registers (inlined into the reader's big loop, its
    /// counters lived on the stack).
    @inline(never)
    func run(_ region: UnsafeRawBufferPointer, pendingIrrelevant: Bool) -> Progress {
        // The record-start test chosen once, so that the line loop is compiled for it.
        switch probe {
        case 0: return walk(region, pendingIrrelevant, Always.self)
        case 1: return walk(region, pendingIrrelevant, ISODate.self)
        case 2: return walk(region, pendingIrrelevant, BSDDate.self)
        case 3: return walk(region, pendingIrrelevant, Clock.self)
        case 5: return walk(region, pendingIrrelevant, ISOAnyDate.self)
        default: return walk(region, pendingIrrelevant, WordThenTab.self)
        }
    }

    /// Certifies the next block (not inlined: the line loop stays small).
    @inline(never)
    func certify(_ base: UnsafeRawPointer, from: Int, upTo: Int, end: Int) -> (clean: Int, found: Bool, anchor: Bool) {
        scanner.certify(base, from: from, upTo: upTo, end: end)
    }

    @inline(__always)
    private func walk<P: LineStart>(_ region: UnsafeRawBufferPointer, _ pendingIrrelevant: Bool, _: P.Type) -> Progress {
        var progress = Progress(pendingIrrelevant: pendingIrrelevant)
        guard let base = region.baseAddress else { return progress }
        let total = region.count
        let skipFirst = skipFirstBytes
        let maxLength = maxLineLength
        let continues = skipsContinuations
        let dumps = stopsAtDumps
        var at = 0
        // Bytes before `clean` are certified (no anchor, all ASCII). Certified a block at a
        // time, small blocks first: a run that stops early wastes little.
        var clean = 0
        var found = false
        var anchor = false
        var block = 2048
        while at < total {
            guard let nlPointer = memchr(base + at, 0x0A, total - at) else { break }
            let nl = base.distance(to: UnsafeRawPointer(nlPointer))
            while nl >= clean && !found {
                (clean, found, anchor) = certify(base, from: clean, upTo: clean &+ block, end: total)
                block = min(block &* 2, 1 << 16)
            }
            // Something (perhaps) in this line: the full path looks at it.
            if nl >= clean {
                progress.stoppedAtAnchor = anchor && clean >= at
                break
            }
            var length = nl &- at
            if length > maxLength { break }
            let line = base + at
            if length > 0, line.load(fromByteOffset: length &- 1, as: UInt8.self) == 0x0D { length &-= 1 }
            if length == 0 {
                progress.skipped &+= 1
            } else {
                let first = line.load(as: UInt8.self)
                if first == 0x20 || first == 0x09 || skipFirst[Int(first)] { break }
                if P.self == Always.self || dumps {
                    // Plain text (and a Console copy's rows): a line ending in an opening bracket
                    // starts a dump whose lines join it: the full path reads it.
                    let last = line.load(fromByteOffset: length &- 1, as: UInt8.self)
                    // (and a code span's closing backtick, which the full path takes off first)
                    // (a line ending in white space may end in a bracket before it: `{  `)
                    if last == 0x7B || last == 0x5B || last == 0x28 || last == 0x60 || last == 0x20 || last == 0x09 { break }
                }
                if P.starts(line, length) {
                    progress.records &+= 1
                    if P.self != Always.self { progress.pendingIrrelevant = true }
                } else if !(continues && progress.pendingIrrelevant) {
                    break
                }
            }
            progress.lines &+= 1
            at = nl &+ 1
        }
        progress.bytes = at
        return progress
    }
}

/// A record-start test on a line's first bytes (`RecordStartProbe.test` uses these too).
protocol LineStart { static func starts(_ p: UnsafeRawPointer, _ n: Int) -> Bool }

@inline(__always) private func digit(_ p: UnsafeRawPointer, _ k: Int) -> Bool { p.load(fromByteOffset: k, as: UInt8.self) &- 0x30 < 10 }
@inline(__always) private func byte(_ p: UnsafeRawPointer, _ k: Int) -> UInt8 { p.load(fromByteOffset: k, as: UInt8.self) }

/// Plain text: every line is a record.
enum Always: LineStart {
    @inline(__always) static func starts(_ p: UnsafeRawPointer, _ n: Int) -> Bool { true }
}

enum ISODate: LineStart {
    @inline(__always) static func starts(_ p: UnsafeRawPointer, _ n: Int) -> Bool {
        n > 10 && digit(p, 0) && digit(p, 1) && digit(p, 2) && digit(p, 3) && byte(p, 4) == 0x2D && digit(p, 5) && byte(p, 7) == 0x2D
    }
}

/// `ISODate`, or its date with slashes (`2022/02/10 14:04:47`: the `isoany` field's; only for a
/// format that reads those, as a `log show` message line starting so continues its record).
enum ISOAnyDate: LineStart {
    @inline(__always) static func starts(_ p: UnsafeRawPointer, _ n: Int) -> Bool {
        n > 10 && digit(p, 0) && digit(p, 1) && digit(p, 2) && digit(p, 3) && digit(p, 5)
            && ((byte(p, 4) == 0x2D && byte(p, 7) == 0x2D) || (byte(p, 4) == 0x2F && byte(p, 7) == 0x2F))
    }
}

enum BSDDate: LineStart {
    @inline(__always) static func starts(_ p: UnsafeRawPointer, _ n: Int) -> Bool {
        n > 15 && byte(p, 0) &- 0x41 < 26 && byte(p, 3) == 0x20
            && ((byte(p, 6) == 0x20 && byte(p, 9) == 0x3A)
                // (`Apr 3 07:46:43`: the day's padding space collapsed, as a web page does;
                // a month's name, so that `Job 5 12:30:00` is no record's start)
                || (digit(p, 4) && byte(p, 5) == 0x20 && digit(p, 6) && digit(p, 7) && byte(p, 8) == 0x3A && isMonth(p)))
    }
}

/// The first three bytes are an English month's abbreviation.
@inline(__always) private func isMonth(_ p: UnsafeRawPointer) -> Bool { TimeScan.month(byte(p, 0), byte(p, 1), byte(p, 2)) > 0 }

enum Clock: LineStart {
    @inline(__always) static func starts(_ p: UnsafeRawPointer, _ n: Int) -> Bool {
        n > 8 && digit(p, 0) && digit(p, 1) && byte(p, 2) == 0x3A
    }
}

enum WordThenTab: LineStart {
    @inline(__always) static func starts(_ p: UnsafeRawPointer, _ n: Int) -> Bool {
        // The first byte is neither tab nor space here (checked before).
        for k in 1..<min(n, 16) where byte(p, k) == 0x09 { return true }
        return false
    }
}

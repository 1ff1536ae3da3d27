/// Limits on what one bundle may expand to, so that a hostile or broken bundle (a zip bomb, a
/// nested one, an endless stream) ends with a one-line error naming the member instead of
/// running until it is killed. The defaults are generous for real sysdiagnoses (a few GB of
/// logs in tens of thousands of files); each is an option of `castscope analyze`.
public struct Budget: Sendable, Equatable {
    /// Bytes read out of decompressors and streams (gzip, archive members, stdin, FIFOs),
    /// summed over the whole bundle. Files on disk read as they are do not count.
    public var maxBytes: UInt64 = 32 << 30
    /// Archive members (at every nesting level) over the whole bundle.
    public var maxMembers = 100_000
    /// Archives inside archives (a gzip counts as a level).
    public var maxNesting = 8
    /// Bytes read out of one compressed file on disk per byte of it, checked once
    /// `ratioFloor` bytes have come out of it (real logs compress 5–50×; a bomb 1,000× and more).
    public var maxExpansion: UInt64 = 1_000
    public var ratioFloor: UInt64 = 64 << 20
    /// Recognized lines kept from one text file (each costs ~36 bytes even folded into a run:
    /// its time and line number are kept for the frame series and the timeline). A bomb of
    /// valid lines (4.3 GB of frame lines out of 14.6 MB of gzip) ends here with one line; a
    /// real hour of 30 fps frame lines is ~110,000.
    public var maxEventsPerFile = 4_000_000

    public init() {}
}

/// What a bundle walk has used of its budget, and the roots (inputs given on the command line)
/// it stopped.
final class BudgetTally {
    let budget: Budget
    var bytes: UInt64 = 0
    var members = 0
    /// Set when the bundle-wide byte or member budget is spent: nothing more is decompressed.
    var exhausted = false
    /// The current root: its size on disk (for the expansion ratio) and its expanded bytes.
    var rootSize: UInt64?
    var rootBytes: UInt64 = 0
    /// Set when the current root went over its expansion ratio: the rest of it is skipped.
    var rootStopped = false

    init(_ budget: Budget) { self.budget = budget }

    var stopped: Bool { exhausted || rootStopped }

    /// Counts `n` bytes read from `path`, `offset` bytes of it having been read before them:
    /// how many of them are within the budgets (all of them, or those up to the limit), and
    /// the budget's error when they are not all (naming the byte of `path` at the limit).
    func take(_ n: Int, path: String, offset: UInt64) -> (keep: Int, error: InputError?) {
        let n = UInt64(n)
        let keep = min(n, allowance)
        bytes += keep
        rootBytes += keep
        guard keep < n else { return (Int(keep), nil) }
        let at = offset + keep
        if bytes >= budget.maxBytes {
            exhausted = true
            return (Int(keep), InputError(path: path, offset: at,
                                          "bundle budget: more than \(budget.maxBytes) bytes decompressed or streamed (--max-bytes); the rest of this member and of the compressed inputs is not read"))
        }
        rootStopped = true
        return (Int(keep), InputError(path: path, offset: at,
                                      "expansion budget: \(rootBytes + (n - keep)) bytes out of a \(rootSize ?? 0)-byte file, more than \(budget.maxExpansion)× (--max-expansion); the rest of this file is not read"))
    }

    /// How many more bytes may be read before a budget is over: the bundle's bytes up to
    /// `maxBytes`; the root's up to the last count that is not over its expansion ratio (over
    /// is more than `ratioFloor` bytes and more than `maxExpansion` per byte of the file).
    private var allowance: UInt64 {
        var left = budget.maxBytes > bytes ? budget.maxBytes - bytes : 0
        if let size = rootSize {
            let (ratioOver, overflow) = (budget.maxExpansion + 1).multipliedReportingOverflow(by: max(size, 1))
            let over = overflow ? UInt64.max : max(budget.ratioFloor + 1, ratioOver)
            left = min(left, over - 1 > rootBytes ? over - 1 - rootBytes : 0)
        }
        return left
    }
}

/// Counts the bytes a leaf stream (what the parser reads) delivers against the budget. The
/// read that crosses a limit hands on its bytes up to it; the next read throws the budget's
/// error (the whole read was dropped: ~200 KB of lines before the limit were not analyzed, all
/// of them under a budget smaller than one read).
final class BudgetSource: ByteSource {
    private let inner: ByteSource
    private let tally: BudgetTally
    private let path: String
    private var delivered: UInt64 = 0
    /// The budget's error, after the bytes up to the limit were handed on.
    private var spent: InputError?

    init(_ inner: ByteSource, tally: BudgetTally, path: String) {
        self.inner = inner
        self.tally = tally
        self.path = path
    }

    var consumedOffset: UInt64 { inner.consumedOffset }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let spent { throw spent }
        if tally.stopped { return 0 }
        let n = try inner.read(into: buffer)
        let (keep, error) = tally.take(n, path: path, offset: delivered)
        delivered += UInt64(keep)
        if let error {
            spent = error
            if keep == 0 { throw error }
        }
        return keep
    }
}

/// Counts one file's recognized lines against `Budget.maxEventsPerFile`, across the parallel
/// readers of its ranges.
final class EventBudget: @unchecked Sendable {
    let limit: Int
    private let lock = NSLockLite()
    private var used = 0
    private var _spent = false
    init(limit: Int) { self.limit = limit }

    /// The file's lines up to the limit were taken (in file order): the rest is not read.
    var spent: Bool { lock.locked { _spent } }
    func spend() { lock.locked { _spent = true } }

    /// Takes `n` lines; false once the file is over its budget.
    func take(_ n: Int) -> Bool {
        lock.locked {
            used += n
            return used <= limit
        }
    }

    func error(path: String, line: Int) -> InputError {
        InputError(path: path, line: line,
                   "memory budget: more than \(limit) recognized lines in this file (--max-events); the rest of it is not analyzed")
    }
}

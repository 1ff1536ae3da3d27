/// How a broadcast session ended: a closed set.
public enum Outcome: String, Sendable, CaseIterable {
    case completed
    case stoppedByHost = "stopped-by-host"
    case failedToConnect = "failed-to-connect"
    case socketError = "socket-error"
    case killed
    case truncated
    case unknown
    /// In-app capture stopped by the system: the app left the foreground (ReplayKit paused it).
    case interrupted
    /// In-app capture failed (a ReplayKit error code).
    case failed
}

/// One connect attempt of the extension to the host app's socket.
public struct ConnectAttempt: Sendable {
    public var time: Int64?
    public var source: SourceRef
    /// Why it failed (`socket file missing`, `errno=61 (Connection refused)`, ...); nil if it
    /// succeeded or the log does not say.
    public var failure: String?
    public var failureSource: SourceRef?
}

/// One broadcast session: one run of the extension from start to end.
public struct Session: Sendable {
    public var id: String
    public var sdk: String
    /// What captured the screen: `extension` (a Broadcast Upload Extension) or `in-app`
    /// (`RPScreenRecorder.startCapture` inside the app, foreground only).
    public var capture = "extension"
    public var process: String?
    public var pid: Int?
    public var start: Int64?
    public var end: Int64?
    public var displayOffset = 0
    /// True when no `broadcastStarted` line was seen and the session starts at its first line.
    public var startInferred = false
    /// True when a second `broadcastStarted` came before this session ended.
    public var interruptedByNewStart = false
    public var outcome: Outcome = .unknown
    /// One sentence: why the outcome is what it is.
    public var reason = ""
    /// Every connect attempt, in order (held compactly: a retry storm has hundreds of
    /// thousands).
    public var attempts = ConnectAttempts()
    public var connectedAt: Int64?
    /// The extension connected (also when the lines carry no time, where `connectedAt` is nil:
    /// in an untimed paste order decides).
    public var connected = false
    public var frames = 0
    public var firstFrameAt: Int64?
    public var lastFrameAt: Int64?
    /// Every event of the session in time order: the extension's and the host app's and the
    /// system's lines that overlap it.
    public var events: [Event] = []
    /// The lines that decided the outcome.
    public var deciding: [Event] = []
    /// The relay's view of this broadcast, when a relay session was joined to it (its times
    /// as the relay wrote them; `events` holds its lines on the device's time axis).
    public var relay: RelaySession? {
        get { relayBox?.value }
        set { relayBox = newValue.map(Boxed.init) }
    }
    /// (Held aside: 376 bytes in every session, most of which never meet their relay's, and
    /// thousands of open ones are held at once.)
    var relayBox: Boxed<RelaySession>?
    /// Its place in start order (`SessionStream`), while it is being built.
    var seq = 0

    public var duration: Int64? {
        guard let start, let end else { return nil }
        return end - start
    }

    /// Why attempts failed, each cause with its count, in order of first appearance.
    public var failureCauses: [(String, Int)] { attempts.failureCounts }

    /// Device frame lines per second since the start: (second, frames), in order.
    public var framesPerSecond: [(second: Int64, frames: Int)] {
        guard let start else { return [] }
        var perSecond: [Int64: Int] = [:]
        for i in events.indices where events[i].code == .frameSent {
            events[i].forEachTime { t in if let t { perSecond[(t - start) / 1_000_000, default: 0] += 1 } }
        }
        return perSecond.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Median and largest interval between connect attempts, in microseconds.
    public var attemptCadence: (median: Int64, max: Int64)? {
        attempts.gaps.intervals
    }
}

/// Median and largest gap between consecutive times (µs), or nil with fewer than two.
public func intervals(_ times: [Int64]) -> (median: Int64, max: Int64)? {
    var g = Gaps()
    g.reserveCapacity(times.count)
    for t in times { g.add(t) }
    return g.intervals
}

/// The times of a run of lines taken one by one, kept as what `intervals` needs: the first
/// and the last, how many, and the gaps between consecutive ones (not the times themselves: a
/// retry storm's run has hundreds of thousands; held in a column that goes to disk past its
/// first megabyte, `SpilledColumn`).
public struct Gaps {
    public private(set) var first: Int64?
    public private(set) var last: Int64?
    public private(set) var count = 0
    private var gaps = SpilledColumn<Int64>()
    private var largest = Int64.min

    public init() {}

    /// With the gaps' column in blocks of `blockBytes` (tests).
    init(blockBytes: Int) { gaps = SpilledColumn(blockBytes: blockBytes) }

    /// Whether part of the gaps is on disk (tests).
    var spilled: Bool { gaps.spilled }

    mutating func reserveCapacity(_ n: Int) { gaps.reserveCapacity(max(0, n - 1)) }

    public mutating func add(_ t: Int64) {
        if let p = last {
            let g = t - p
            // A step back (lines of two files, a clock set back) is no interval.
            if g >= 0 {
                gaps.append(g)
                if g > largest { largest = g }
            }
        } else {
            first = t
        }
        last = t
        count += 1
    }

    /// Median and largest gap, or nil with fewer than two times or no gap that is not negative.
    public var intervals: (median: Int64, max: Int64)? {
        guard count >= 2, !gaps.isEmpty else { return nil }
        let mid = gaps.count / 2
        guard gaps.spilled else {
            // The median by selection, not by sorting (a frame run has tens of thousands of gaps).
            var gaps = self.gaps.memory
            let upper = selectNth(&gaps, mid)
            let median = gaps.count % 2 == 1 ? upper : (gaps[..<mid].max()! + upper) / 2
            return (median, largest)
        }
        // Hours of lines, on disk: selected in passes over the column, not copied.
        let upper = Self.nth(mid, of: gaps, largest: largest)
        let median = gaps.count % 2 == 1 ? upper : (Self.nth(mid - 1, of: gaps, largest: largest) + upper) / 2
        return (median, largest)
    }

    /// The `k`-th smallest (0-based) of `values` (none negative, none above `largest`), by
    /// its binary digits 16 at a time from the highest `largest` has: each pass counts the
    /// values that share the digits found so far by their next 16, and keeps the one holding
    /// rank `k`. Memory is a table of 65,536 counts, whatever the column's length.
    static func nth(_ k: Int, of values: SpilledColumn<Int64>, largest: Int64) -> Int64 {
        // Digits [lo, hi) of each value, from the highest bit `largest` has down.
        var hi = max(16, 64 - UInt64(largest).leadingZeroBitCount)
        var prefix: UInt64 = 0
        var rank = k
        var counts = [Int](repeating: 0, count: 1 << 16)
        while true {
            let lo = max(0, hi - 16)
            let mask: UInt64 = (1 << UInt64(hi - lo)) - 1
            for i in counts.indices { counts[i] = 0 }
            values.forEachChunk { chunk in
                for v in chunk {
                    let u = UInt64(v)
                    guard hi >= 64 || u >> UInt64(hi) == prefix >> UInt64(hi) else { continue }
                    counts[Int((u >> UInt64(lo)) & mask)] += 1
                }
            }
            var digit = 0
            while rank >= counts[digit] {
                rank -= counts[digit]
                digit += 1
            }
            prefix |= UInt64(digit) << UInt64(lo)
            if lo == 0 { return Int64(prefix) }
            hi = lo
        }
    }
}

/// The `k`-th smallest value (0-based); afterwards every value before index `k` is no larger.
/// Three-way partitions, so runs of equal values (regular frame gaps) cost nothing extra.
func selectNth(_ a: inout [Int64], _ k: Int) -> Int64 {
    var lo = 0
    var hi = a.count - 1
    while lo < hi {
        let x = a[lo], y = a[(lo + hi) / 2], z = a[hi]
        let pivot = max(min(x, y), min(max(x, y), z))
        var lt = lo, i = lo, gt = hi
        while i <= gt {
            if a[i] < pivot {
                a.swapAt(lt, i)
                lt += 1
                i += 1
            } else if a[i] > pivot {
                a.swapAt(i, gt)
                gt -= 1
            } else {
                i += 1
            }
        }
        if k < lt { hi = lt - 1 } else if k > gt { lo = gt + 1 } else { return pivot }
    }
    return a[lo]
}

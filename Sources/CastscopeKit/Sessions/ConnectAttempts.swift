/// A session's connect attempts, held as columns rather than as `ConnectAttempt` values.
///
/// A `ConnectAttempt` is two source references (a path each) and an optional cause string:
/// about 80 bytes. An extension that never reaches the host app retries every 100 ms for as long
/// as the broadcast runs: ten hours are 360,000 attempts, all of one open session. Here an
/// attempt is its time, its two line numbers and three indices (its paths and its cause, each
/// named once per session): 28 bytes. Reading an element builds the `ConnectAttempt`.
public struct ConnectAttempts: Sendable, RandomAccessCollection, ExpressibleByArrayLiteral {
    /// `Int64.min` for an attempt without a time.
    private var times: [Int64] = []
    private var lines: [Int32] = []
    private var failureLines: [Int32] = []
    /// Index into `paths`.
    private var pathIndex: [UInt32] = []
    /// Index into `paths`, `UInt32.max` when the attempt has no failure line.
    private var failurePathIndex: [UInt32] = []
    /// Index into `causes` plus one, 0 when the attempt did not fail (or the log does not say).
    private var causeIndex: [UInt32] = []
    /// The files and the causes named, each once, in order of first appearance.
    private var paths: [String] = []
    private var causes: [String] = []
    /// The same, by text, once there are more than a few (a cause that names a number).
    private var pathNumbers: [String: UInt32] = [:]
    private var causeNumbers: [String: UInt32] = [:]

    private static let noTime = Int64.min
    private static let noPath = UInt32.max
    /// Up to this many names are found by comparison, past it by hashing.
    private static let fewNames = 8

    public init() {}

    public init(arrayLiteral elements: ConnectAttempt...) {
        for a in elements { append(a) }
    }

    public init<S: Sequence>(_ elements: S) where S.Element == ConnectAttempt {
        for a in elements { append(a) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { times.count }

    public subscript(i: Int) -> ConnectAttempt {
        let t = times[i]
        let c = Int(causeIndex[i])
        let fp = failurePathIndex[i]
        return ConnectAttempt(time: t == Self.noTime ? nil : t,
                              source: SourceRef(path: paths[Int(pathIndex[i])], line: Int(lines[i])),
                              failure: c == 0 ? nil : causes[c - 1],
                              failureSource: fp == Self.noPath ? nil : SourceRef(path: paths[Int(fp)], line: Int(failureLines[i])))
    }

    public mutating func reserveCapacity(_ n: Int) {
        times.reserveCapacity(n)
        lines.reserveCapacity(n)
        failureLines.reserveCapacity(n)
        pathIndex.reserveCapacity(n)
        failurePathIndex.reserveCapacity(n)
        causeIndex.reserveCapacity(n)
    }

    public mutating func append(_ a: ConnectAttempt) {
        times.append(a.time ?? Self.noTime)
        lines.append(Self.line(a.source.line))
        pathIndex.append(path(a.source.path))
        causeIndex.append(a.failure.map { cause($0) } ?? 0)
        if let f = a.failureSource {
            failurePathIndex.append(path(f.path))
            failureLines.append(Self.line(f.line))
        } else {
            failurePathIndex.append(Self.noPath)
            failureLines.append(0)
        }
    }

    /// Whether attempt `i` has a failure (without building it).
    public func failed(_ i: Int) -> Bool { causeIndex[i] != 0 }

    /// Attempt `i`'s failure cause, without building the attempt.
    public func failure(_ i: Int) -> String? {
        let c = Int(causeIndex[i])
        return c == 0 ? nil : causes[c - 1]
    }

    /// Attempt `i`'s time, without building the attempt.
    public func time(_ i: Int) -> Int64? {
        let t = times[i]
        return t == Self.noTime ? nil : t
    }

    /// Records the failure of attempt `i`.
    public mutating func setFailure(_ i: Int, cause text: String, source: SourceRef) {
        causeIndex[i] = cause(text)
        failurePathIndex[i] = path(source.path)
        failureLines[i] = Self.line(source.line)
    }

    /// Whether any attempt failed.
    public var anyFailed: Bool { causeIndex.contains { $0 != 0 } }

    /// How many attempts failed.
    public var failedCount: Int { causeIndex.reduce(0) { $0 + ($1 != 0 ? 1 : 0) } }

    /// Each failure cause with its count, in order of first appearance.
    public var failureCounts: [(String, Int)] {
        var counts = [Int](repeating: 0, count: causes.count)
        for c in causeIndex where c != 0 { counts[Int(c) - 1] += 1 }
        // A cause named by an attempt whose failure was later replaced keeps a count of 0.
        return causes.indices.filter { counts[$0] > 0 }.map { (causes[$0], counts[$0]) }
    }

    /// The attempts' times, those that have one, in order, as gaps (`Session.attemptCadence`).
    public var gaps: Gaps {
        var g = Gaps()
        g.reserveCapacity(times.count)
        for t in times where t != Self.noTime { g.add(t) }
        return g
    }

    private static func line(_ n: Int) -> Int32 { Int32(clamping: n) }

    private mutating func path(_ p: String) -> UInt32 {
        Self.number(p, &paths, &pathNumbers)
    }

    /// Cause numbers start at 1 (0 is "no failure").
    private mutating func cause(_ text: String) -> UInt32 {
        Self.number(text, &causes, &causeNumbers) + 1
    }

    /// `name`'s place in `names`, added at the end the first time.
    private static func number(_ name: String, _ names: inout [String], _ numbers: inout [String: UInt32]) -> UInt32 {
        if names.count <= fewNames {
            // The last one named first: attempts repeat the cause and file before them.
            if let k = names.lastIndex(of: name) { return UInt32(k) }
        } else if let k = numbers[name] {
            return k
        }
        names.append(name)
        if names.count > fewNames {
            if numbers.isEmpty { for (k, n) in names.enumerated() { numbers[n] = UInt32(k) } }
            numbers[name] = UInt32(names.count - 1)
        }
        return UInt32(names.count - 1)
    }
}

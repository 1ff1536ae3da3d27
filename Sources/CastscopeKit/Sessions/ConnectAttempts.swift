/// A session's connect attempts, held packed rather than as `ConnectAttempt` values.
///
/// A `ConnectAttempt` is two source references (a path each) and an optional cause string:
/// about 80 bytes. An extension that never reaches the host app retries every 100 ms for as long
/// as the broadcast runs: ten hours are 360,000 attempts, all of one open session. Here an
/// attempt is its time, its two line numbers and three numbers naming its paths and its cause
/// (each text held once per session): 32 bytes. Reading an element builds the `ConnectAttempt`.
public struct ConnectAttempts: Sendable, RandomAccessCollection, ExpressibleByArrayLiteral {
    private struct Packed: Sendable {
        /// `Int64.min` for an attempt without a time.
        var time: Int64
        var line: Int32
        var failureLine: Int32
        /// Index into `names`.
        var path: UInt32
        /// Index into `names`, `none` when the attempt has no failure line.
        var failurePath: UInt32
        /// Index into `names`, `none` when the attempt did not fail (or the log does not say).
        var cause: UInt32
    }

    private var packed: [Packed] = []
    /// The files and the causes named, each once, in order of first appearance (causes in that
    /// order among themselves: `failureCounts`).
    private var names: [String] = []
    /// The same, by text, once there are more than a few (a cause that names a number).
    private var numbers: [String: UInt32] = [:]

    private static let noTime = Int64.min
    private static let none = UInt32.max
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
    public var endIndex: Int { packed.count }

    public subscript(i: Int) -> ConnectAttempt {
        let p = packed[i]
        return ConnectAttempt(time: p.time == Self.noTime ? nil : p.time,
                              source: SourceRef(path: names[Int(p.path)], line: Int(p.line)),
                              failure: p.cause == Self.none ? nil : names[Int(p.cause)],
                              failureSource: p.failurePath == Self.none ? nil
                                  : SourceRef(path: names[Int(p.failurePath)], line: Int(p.failureLine)))
    }

    public mutating func reserveCapacity(_ n: Int) { packed.reserveCapacity(n) }

    public mutating func append(_ a: ConnectAttempt) {
        var p = Packed(time: a.time ?? Self.noTime, line: Self.line(a.source.line), failureLine: 0, path: number(a.source.path),
                       failurePath: Self.none, cause: Self.none)
        if let cause = a.failure { p.cause = number(cause) }
        if let f = a.failureSource {
            p.failurePath = number(f.path)
            p.failureLine = Self.line(f.line)
        }
        packed.append(p)
    }

    /// Whether attempt `i` has a failure (without building it).
    public func failed(_ i: Int) -> Bool { packed[i].cause != Self.none }

    /// Attempt `i`'s failure cause, without building the attempt.
    public func failure(_ i: Int) -> String? {
        let c = packed[i].cause
        return c == Self.none ? nil : names[Int(c)]
    }

    /// The indices of the attempts whose failure cause passes `test`, in order; `test` is asked
    /// once per distinct cause, not once per attempt (a storm has one or two causes).
    public func failing(_ test: (String) -> Bool) -> [Int] {
        var passes = [Bool?](repeating: nil, count: names.count)
        var out: [Int] = []
        for i in packed.indices {
            let c = packed[i].cause
            guard c != Self.none else { continue }
            let k = Int(c)
            if passes[k] == nil { passes[k] = test(names[k]) }
            if passes[k]! { out.append(i) }
        }
        return out
    }

    /// Records the failure of attempt `i`.
    public mutating func setFailure(_ i: Int, cause text: String, source: SourceRef) {
        let cause = number(text), path = number(source.path)
        packed[i].cause = cause
        packed[i].failurePath = path
        packed[i].failureLine = Self.line(source.line)
    }

    /// Whether any attempt failed.
    public var anyFailed: Bool { packed.contains { $0.cause != Self.none } }

    /// How many attempts failed.
    public var failedCount: Int { packed.reduce(0) { $0 + ($1.cause != Self.none ? 1 : 0) } }

    /// Each failure cause with its count, in order of first appearance.
    public var failureCounts: [(String, Int)] {
        var counts = [Int](repeating: 0, count: names.count)
        var order: [Int] = []
        for p in packed where p.cause != Self.none {
            let c = Int(p.cause)
            if counts[c] == 0 { order.append(c) }
            counts[c] += 1
        }
        return order.map { (names[$0], counts[$0]) }
    }

    /// The attempts' times, those that have one, in order, as gaps (`Session.attemptCadence`).
    public var gaps: Gaps {
        var g = Gaps()
        g.reserveCapacity(packed.count)
        for p in packed where p.time != Self.noTime { g.add(p.time) }
        return g
    }

    private static func line(_ n: Int) -> Int32 { Int32(clamping: n) }

    /// `name`'s number, the first time it is named: the next one.
    private mutating func number(_ name: String) -> UInt32 {
        if names.count <= Self.fewNames {
            // The last one named first: attempts repeat the cause and file before them.
            if let k = names.lastIndex(of: name) { return UInt32(k) }
        } else if let k = numbers[name] {
            return k
        }
        names.append(name)
        if names.count > Self.fewNames {
            if numbers.isEmpty { for (k, n) in names.enumerated() { numbers[n] = UInt32(k) } }
            numbers[name] = UInt32(names.count - 1)
        }
        return UInt32(names.count - 1)
    }
}

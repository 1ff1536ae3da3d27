/// A session's connect attempts, held packed rather than as `ConnectAttempt` values.
///
/// A `ConnectAttempt` is two source references (a path each) and an optional cause string:
/// about 80 bytes. An extension that never reaches the host app retries every 100 ms for as long
/// as the broadcast runs: ten hours are 360,000 attempts, all of one open session. Here an
/// attempt is its time, its two line numbers and three numbers naming its paths and its cause
/// (each text held once per session): 32 bytes, in a column that goes to disk a megabyte at a
/// time past its first (`SpilledColumn`): a day of retrying is held in a few megabytes. Reading
/// an element builds the `ConnectAttempt`; reading them in order reads the disk a block at a time.
public struct ConnectAttempts: Sendable, RandomAccessCollection, ExpressibleByArrayLiteral {
    fileprivate struct Packed: Sendable {
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

    private var packed = SpilledColumn<Packed>()
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

    public subscript(i: Int) -> ConnectAttempt { attempt(packed[i]) }

    private func attempt(_ p: Packed) -> ConnectAttempt {
        ConnectAttempt(time: p.time == Self.noTime ? nil : p.time,
                              source: SourceRef(path: names[Int(p.path)], line: Int(p.line)),
                              failure: p.cause == Self.none ? nil : names[Int(p.cause)],
                              failureSource: p.failurePath == Self.none ? nil
                                  : SourceRef(path: names[Int(p.failurePath)], line: Int(p.failureLine)))
    }

    /// In order, the packed column read a block at a time.
    public struct Iterator: IteratorProtocol {
        fileprivate let attempts: ConnectAttempts
        fileprivate var packed: SpilledColumn<Packed>.Iterator

        public mutating func next() -> ConnectAttempt? { packed.next().map { attempts.attempt($0) } }
    }

    public func makeIterator() -> Iterator { Iterator(attempts: self, packed: packed.makeIterator()) }

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

    /// The files and causes the attempts name (`forEachNamed` gives indices into it).
    public var namesUsed: [String] { names }

    /// Each attempt in order without building it: its time (nil: none), its line, and the
    /// indices into `namesUsed` of its file and of its cause (nil: none). A writer formats
    /// each name once, not once per attempt (a storm's attempts name one file and one cause).
    public func forEachNamed(_ body: (_ time: Int64?, _ line: Int, _ path: Int, _ cause: Int?) -> Void) {
        packed.forEachChunk { chunk in
            for p in chunk {
                body(p.time == Self.noTime ? nil : p.time, Int(p.line), Int(p.path), p.cause == Self.none ? nil : Int(p.cause))
            }
        }
    }

    /// Whether attempt `i` has a failure (without building it).
    public func failed(_ i: Int) -> Bool { packed[i].cause != Self.none }

    /// Attempt `i`'s failure cause, without building the attempt.
    public func failure(_ i: Int) -> String? {
        let c = packed[i].cause
        return c == Self.none ? nil : names[Int(c)]
    }

    /// The attempts whose failure cause passes `test`: how many, the indices of the first
    /// `first` of them and of the last; `test` is asked once per distinct cause, not once per
    /// attempt (a storm has one or two causes, and hundreds of thousands of attempts).
    public func failing(first: Int, _ test: (String) -> Bool) -> (count: Int, first: [Int], last: Int?) {
        var passes = [Bool?](repeating: nil, count: names.count)
        var out: (count: Int, first: [Int], last: Int?) = (0, [], nil)
        var i = -1
        packed.forEachChunk { chunk in
            for p in chunk {
                i += 1
                let c = p.cause
                guard c != Self.none else { continue }
                let k = Int(c)
                if passes[k] == nil { passes[k] = test(names[k]) }
                guard passes[k]! else { continue }
                out.count += 1
                if out.first.count < first { out.first.append(i) }
                out.last = i
            }
        }
        return out
    }

    /// Records the failure of attempt `i`.
    public mutating func setFailure(_ i: Int, cause text: String, source: SourceRef) {
        let cause = number(text), path = number(source.path)
        var p = packed[i]
        p.cause = cause
        p.failurePath = path
        p.failureLine = Self.line(source.line)
        packed[i] = p
    }

    /// Whether any attempt failed.
    public var anyFailed: Bool { packed.contains { $0.cause != Self.none } }

    /// How many attempts failed.
    public var failedCount: Int {
        var n = 0
        packed.forEachChunk { chunk in for p in chunk where p.cause != Self.none { n += 1 } }
        return n
    }

    /// Each failure cause with its count, in order of first appearance.
    public var failureCounts: [(String, Int)] {
        var counts = [Int](repeating: 0, count: names.count)
        var order: [Int] = []
        packed.forEachChunk { chunk in
            for p in chunk where p.cause != Self.none {
                let c = Int(p.cause)
                if counts[c] == 0 { order.append(c) }
                counts[c] += 1
            }
        }
        return order.map { (names[$0], counts[$0]) }
    }

    /// The attempts' times, those that have one, in order, as gaps (`Session.attemptCadence`).
    public var gaps: Gaps {
        var g = Gaps()
        g.reserveCapacity(packed.count)
        packed.forEachChunk { chunk in for p in chunk where p.time != Self.noTime { g.add(p.time) } }
        return g
    }

    private static func line(_ n: Int) -> Int32 { Int32(clamping: n) }

    /// `name`'s number, the first time it is named: the next one.
    private mutating func number(_ name: String) -> UInt32 {
        if names.count <= Self.fewNames {
            // The last one named first: attempts repeat the cause and file before them.
            // (Lengths compared first: `==` of two texts that differ, a storm's file name against
            // its cause, went through the standard library's full comparison twice a try.)
            let n = name.utf8.count
            var k = names.count - 1
            while k >= 0 {
                if names[k].utf8.count == n, names[k] == name { return UInt32(k) }
                k -= 1
            }
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

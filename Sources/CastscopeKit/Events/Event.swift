/// Where a line came from: the path inside the bundle and the line number.
public struct SourceRef: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var path: String
    public var line: Int
    public var description: String { "\(path):\(line)" }
    public static func < (a: SourceRef, b: SourceRef) -> Bool { (a.path, a.line) < (b.path, b.line) }
}

/// A normalized event: one log line that the vocabulary recognized.
public struct Event: Sendable {
    /// The event's strings, held once and shared by its copies: an event changes hands several
    /// times on its way into a session and a report, and a copy then costs one retain instead
    /// of one per string (issue 15: retains and releases were a third of a dense bundle's time).
    final class Text: Sendable {
        let kind: String
        let sdk: String
        let process: String?
        let message: String
        let attrs: [(String, String)]
        /// The file of the line (its number is the event's own `line`, which changes when a
        /// part of a file read apart is placed in it: a new `Text` per event, as it was).
        let path: String
        /// `kind` as a number, for the tests made per line (`KindCode`).
        let code: KindCode
        /// Whether no stage looks at lines of this kind one by one, so that repeats of one
        /// line fold into one event as the session is built (`SessionBuilder.foldRepeatedLine`).
        let foldsWhenRepeated: Bool
        /// `code` and `folds`: what `kind` gives, when the caller knows it (an event read back).
        init(kind: String, code: KindCode? = nil, folds: Bool? = nil, sdk: String, process: String?, message: String,
             attrs: [(String, String)], path: String)
        {
            self.kind = kind
            self.code = code ?? KindCode(kind)
            foldsWhenRepeated = folds ?? (self.code == .other && !Self.readOneByOne.contains { kind.hasPrefix($0) })
            self.sdk = sdk
            self.process = process
            self.message = message
            self.attrs = attrs
            self.path = path
        }
        /// Kinds without a code that a stage still looks at line by line, by name (the host
        /// app seeing the extension go, the relay's lines, the capture state machine, kills,
        /// the first connect or frame line).
        static let readOneByOne = ["server.client_disconnected", "app.extension_disconnected", "relay.", "capture.", "extension.killed",
                                   "replaykit.", "socket.connected", "frame.sent"]

        func with(kind: String? = nil, sdk: String? = nil, process: String?? = nil, message: String? = nil,
                  attrs: [(String, String)]? = nil, path: String? = nil) -> Text
        {
            Text(kind: kind ?? self.kind, code: kind == nil ? code : nil, sdk: sdk ?? self.sdk, process: process ?? self.process, message: message ?? self.message,
                 attrs: attrs ?? self.attrs, path: path ?? self.path)
        }
    }
    private var text: Text
    /// The shared text itself (to be folded into another event's run).
    var textRef: Text { text }

    // The other fields are in an order that leaves little padding (the small ones fill the
    // gaps after optionals): a dense bundle holds every recognized line while it is read.

    /// Normalized name, e.g. `socket.connect_attempt` (see parsers/vocabulary).
    public var kind: String {
        _read { yield text.kind }
        set { text = text.with(kind: newValue) }
    }
    /// The kind's code (`.other` for a kind the pipeline does not test line by line).
    public var code: KindCode { text.code }
    public var sdk: String {
        _read { yield text.sdk }
        set { text = text.with(sdk: newValue) }
    }
    /// Microseconds since the epoch, once resolved; nil when the file carries no times.
    public var time: Int64?
    public var side: Side
    /// True when the time was taken from a neighbouring line (Xcode `print()` output) or the
    /// date came from elsewhere in the bundle.
    public var timeInferred = false
    /// The UTC offset to show the time in (the line's own, or the bundle's): seconds, or
    /// `Fmt.unzoned` (held in 32 bits, as `ParsedTime` holds an offset).
    public var displayOffset: Int {
        get { Int(displayOffset32) }
        set { displayOffset32 = Int32(clamping: newValue) }
    }
    private var displayOffset32: Int32 = 0
    public var process: String? {
        _read { yield text.process }
        set { text = text.with(process: .some(newValue)) }
    }
    public var pid: Int?
    /// Which input of the bundle it is from (held in 32 bits).
    var fileIndex: Int {
        get { Int(fileIndex32) }
        set { fileIndex32 = Int32(clamping: newValue) }
    }
    private var fileIndex32: Int32 = 0
    public var message: String {
        _read { yield text.message }
        set { text = text.with(message: newValue) }
    }
    public var attrs: [(String, String)] {
        _read { yield text.attrs }
        set { text = text.with(attrs: newValue) }
    }
    public var source: SourceRef {
        get { SourceRef(path: text.path, line: line) }
        set {
            if newValue.path != text.path { text = text.with(path: newValue.path) }
            line = newValue.line
        }
    }
    /// `source.path`, read in place.
    public var sourcePath: String { _read { yield text.path } }
    /// `source.line`.
    public var line: Int
    /// Position in reading order, for a stable sort.
    public var order: Int
    /// A run of the same line repeated (frames): one event stands for all of them, with each
    /// one's time and line kept compactly, so that memory does not grow by an event per frame.
    public var repeats: Repeats? = nil
    // (Last: its tag byte ends the event, 96 bytes in all where it was 120.)
    var parsedTime: ParsedTime?

    init(kind: String, code: KindCode? = nil, folds: Bool? = nil, sdk: String, side: Side, time: Int64?, displayOffset: Int = 0,
         timeInferred: Bool = false, process: String?, pid: Int?, message: String, attrs: [(String, String)], source: SourceRef,
         order: Int, parsedTime: ParsedTime?, fileIndex: Int, repeats: Repeats? = nil)
    {
        self.text = Text(kind: kind, code: code, folds: folds, sdk: sdk, process: process, message: message, attrs: attrs,
                         path: source.path)
        self.line = source.line
        self.time = time
        self.side = side
        self.displayOffset32 = Int32(clamping: displayOffset)
        self.pid = pid
        self.timeInferred = timeInferred
        self.order = order
        self.parsedTime = parsedTime
        self.fileIndex32 = Int32(clamping: fileIndex)
        self.repeats = repeats
    }

    /// An event whose kind, SDK, process, message, attributes and file are `text`'s (shared
    /// with other events).
    init(text: Text, side: Side, time: Int64?, timeInferred: Bool, pid: Int?, line: Int, order: Int, parsedTime: ParsedTime?,
         fileIndex: Int)
    {
        self.text = text
        self.line = line
        self.time = time
        self.side = side
        self.pid = pid
        self.timeInferred = timeInferred
        self.order = order
        self.parsedTime = parsedTime
        self.fileIndex32 = Int32(clamping: fileIndex)
    }

    /// An event holding nothing: what is left in a list whose events were moved out one by
    /// one (the list still deinitializes its elements).
    static let placeholder = Event(kind: "", sdk: "", side: .app, time: nil, process: nil, pid: nil, message: "", attrs: [],
                                   source: SourceRef(path: "", line: 0), order: 0, parsedTime: nil, fileIndex: 0)

    public func attr(_ name: String) -> String? { attrs.first(where: { $0.0 == name })?.1 }

    /// How many log lines the event stands for.
    public var count: Int { repeats?.lines.count ?? 1 }
    /// The time of the last line it stands for.
    public var lastTime: Int64? { repeats?.times.last ?? time }
    /// The latest time of the lines it stands for (a session ends there). A run's lines need
    /// not be in time order: a zone-less log's clock set back between two frame lines of one
    /// process, or exports that interleave (16.909, 16.956, 16.932 ends at 16.956, not at its
    /// last line). The run's times are scanned, a block at a time when on disk.
    var latestTime: Int64? {
        guard let first = time else { return lastTime }
        guard let b = repeats?.times.bounds else { return first }
        return max(first, b.max)
    }
    public var lastSource: SourceRef {
        guard let r = repeats, let l = r.lines.last else { return source }
        return SourceRef(path: text.path, line: Int(l))
    }

    /// Calls `body` with the time and source of every line the event stands for, in order.
    public func forEachLine(_ body: (Int64?, SourceRef) -> Void) {
        let path = source.path
        forEachTimeAndLine { t, line in body(t, SourceRef(path: path, line: line)) }
    }

    /// Each line's time only (no source reference built per line: a run of frame lines is
    /// tens of thousands of them).
    public func forEachTime(_ body: (Int64?) -> Void) {
        forEachTimeAndLine { t, _ in body(t) }
    }

    /// Each line's time and line number (in `source.path`), without building references.
    public func forEachTimeAndLine(_ body: (Int64?, Int) -> Void) {
        Self.forEachTimeAndLine(repeats: repeats, time: time, line: line, body)
    }

    /// The same for an event given by the three fields it reads, so that a caller holding a
    /// list of events can read them in place (a method called on an element copied the whole
    /// event first, a retain and a release per reference in it).
    static func forEachTimeAndLine(repeats r: Repeats?, time: Int64?, line: Int, _ body: (Int64?, Int) -> Void) {
        guard let r else { body(time, line); return }
        if r.times.spilled || r.lines.spilled { return forEachSpilledTimeAndLine(r, time: time, body) }
        let n = r.lines.count
        let known = min(n, r.times.count)
        r.lines.memory.withUnsafeBufferPointer { lines in
            _ = r.times.withMemory(wide: { times in
                for k in 0..<n { body(k < known ? times[k] : time, Int(lines[k])) }
            }, narrow: { base, times in
                for k in 0..<n { body(k < known ? base &+ Int64(times[k]) : time, Int(lines[k])) }
            })
        }
    }

    /// The same for a run with part of its lines on disk: read in order, a block at a time.
    @inline(never)
    private static func forEachSpilledTimeAndLine(_ r: Repeats, time: Int64?, _ body: (Int64?, Int) -> Void) {
        let n = r.lines.count
        let known = min(n, r.times.count)
        var times = r.times.makeIterator(), lines = r.lines.makeIterator()
        for k in 0..<n {
            let l = lines.next()!
            body(k < known ? times.next()! : time, Int(l))
        }
    }

    /// Whether event `b` of `ev` is event `a`'s line again but for its time and line number:
    /// the same kind, SDK, process, message, attributes and file, of the same process, side
    /// and zone, timed or not alike. (Texts are interned: nearly always the same `Text`,
    /// compared by identity.) Read in place, field by field: a method called on an event read
    /// through a buffer takes a copy of it (a retain and a release per reference in it), and
    /// this runs twice per line of a connect storm.
    static func repeatsLine(_ ev: UnsafeMutableBufferPointer<Event>, _ a: Int, _ b: Int) -> Bool {
        sameLine(ev, a, b, butTexts: false)
    }

    /// Whether `other` has this event's message (the same interned text, or an equal one).
    func sameMessage(_ other: borrowing Event) -> Bool { text === other.text || text.message == other.text.message }

    /// Whether event `b` of `ev` is a line of `a`'s run but for its message and attribute
    /// values (`repeatsLine` but for those; the same attributes by name): a frame line that
    /// carries a length or a counter, folded with the others as the session is built
    /// (`LineTexts`).
    static func continuesVarying(_ ev: UnsafeMutableBufferPointer<Event>, _ a: Int, _ b: Int) -> Bool {
        sameLine(ev, a, b, butTexts: true)
    }

    /// `repeatsLine`, or with `butTexts` `continuesVarying`.
    @inline(__always)
    private static func sameLine(_ ev: UnsafeMutableBufferPointer<Event>, _ a: Int, _ b: Int, butTexts: Bool) -> Bool {
        // (Its place in reading order is kept as a 32-bit difference from this one's.)
        guard ev[a].side == ev[b].side, ev[a].pid == ev[b].pid, ev[a].fileIndex == ev[b].fileIndex,
            ev[a].timeInferred == ev[b].timeInferred, Int32(exactly: ev[b].order - ev[a].order) != nil,
            ev[a].displayOffset == ev[b].displayOffset, (ev[a].time == nil) == (ev[b].time == nil),
            (ev[a].parsedTime == nil) == (ev[b].parsedTime == nil)
        else { return false }
        return ev[a].text === ev[b].text || sameText(ev[a].text, ev[b].text, butTexts: butTexts)
    }

    /// The texts' part of `sameLine`, for two texts that are not the same object.
    private static func sameText(_ a: Text, _ b: Text, butTexts: Bool) -> Bool {
        guard a.code == b.code, a.kind == b.kind, butTexts || a.message == b.message, a.process == b.process, a.sdk == b.sdk,
            a.path == b.path, a.attrs.count == b.attrs.count
        else { return false }
        for k in a.attrs.indices where a.attrs[k].0 != b.attrs[k].0 || (!butTexts && a.attrs[k].1 != b.attrs[k].1) { return false }
        return true
    }

    /// Whether repeats of its line fold into one event as the session is built.
    var foldsWhenRepeated: Bool { text.foldsWhenRepeated }

    /// Whether its lines do not all say the same (`Repeats.texts`).
    public var linesDiffer: Bool { repeats?.texts != nil }

    /// Each line's message, in order: the event's own for every line, or each line's when its
    /// lines differ (read a block at a time).
    public func forEachLineMessage(_ body: (String) -> Void) {
        guard let t = repeats?.texts else {
            for _ in 0..<count { body(message) }
            return
        }
        t.forEachMessage(like: text, body)
    }

    /// Whether a line's message passes `test` (each line's when they differ).
    public func anyLineMessage(_ test: (String) -> Bool) -> Bool {
        guard linesDiffer else { return test(message) }
        var any = false
        forEachLineMessage { m in if !any, test(m) { any = true } }
        return any
    }

    /// Each line's time, number and message, in order.
    public func forEachLineWithMessage(_ body: (Int64?, Int, String) -> Void) {
        guard let t = repeats?.texts else {
            forEachTimeAndLine { time, line in body(time, line, message) }
            return
        }
        var messages = LineTexts.Cursor(t, like: text)
        forEachTimeAndLine { time, line in body(time, line, messages.nextMessage()!) }
    }

    /// Each line's own text, one at a time in order (a text made per line when they differ).
    func lineTexts() -> AnyIterator<Text> {
        guard let t = repeats?.texts else {
            var n = count
            let text = self.text
            return AnyIterator {
                guard n > 0 else { return nil }
                n -= 1
                return text
            }
        }
        return t.makeIterator(like: text)
    }

    /// Its lines' messages one at a time (`t` is its `Repeats.texts`).
    func lineMessages(_ t: LineTexts) -> LineTexts.Cursor { LineTexts.Cursor(t, like: text) }

    /// The event with `t` for its text (one of its lines' own, `lineTexts`).
    func with(text t: Text) -> Event {
        var e = self
        e.text = t
        return e
    }

    /// Takes a later line that `repeatsLine` (its resolved time, line number and place in
    /// reading order) into this event's run of repeats (made on the first, holding this event's
    /// own line first).
    mutating func foldIn(time otherTime: Int64?, line otherLine: Int, order otherOrder: Int, text other: Text? = nil) {
        // Not `add`: the times are resolved already, and the times as parsed (`naive`), which
        // resolution reads, are not kept (a run folded after resolution has none).
        let r: Repeats
        if let existing = repeats {
            r = existing
        } else {
            r = Repeats()
            r.lines.append(Int32(truncatingIfNeeded: line))
            if let t = time { r.times.append(t) }
            r.foldedLate = true
            repeats = r
        }
        r.lines.append(Int32(truncatingIfNeeded: otherLine))
        if let t = otherTime { r.times.append(t) }
        FreedMemory.grew(to: r.lines.count)
        // A line that says something else than the run's own text: from now on each line's
        // text is kept (the lines before it say the run's own).
        if let other, other !== text, other.message != text.message || !other.attrs.elementsEqual(text.attrs, by: { $0 == $1 }) {
            if r.texts == nil {
                let texts = LineTexts()
                texts.appendHead(times: r.lines.count - 1)
                r.texts = texts
            }
            r.texts!.append(other, head: text)
        } else {
            r.texts?.append(text, head: text)
        }
        // Places in reading order follow the line numbers (one record a line) until a line
        // says otherwise; only then are they kept (4 bytes a line).
        let delta = otherOrder - order
        if r.orders.isEmpty && delta == otherLine - line {
            return
        }
        if r.orders.isEmpty {
            // Until now each line's place was its line number's difference from the first's.
            let first = r.lines[0]
            var k = 0, n = r.lines.count - 1
            r.lines.forEachChunk { chunk in
                for l in chunk where k < n {
                    r.orders.append(l &- first)
                    k += 1
                }
            }
        }
        r.orders.append(Int32(truncatingIfNeeded: delta))
    }

    /// A run of one frame line that the reader folded (`Repeats.isPlainReadRun`) made a run
    /// folded as the session is built, to take later lines (`SessionBuilder.foldConnectLine`):
    /// its lines keep the run's place in reading order (they stood there as one event), each
    /// at its own time. A new `Repeats` (copies of the event keep theirs); the times as parsed
    /// are not kept, as in any run folded after resolution. Nothing when it is not such a run.
    mutating func foldReadRunLate() {
        guard let r = repeats, !r.foldedLate else { return }
        let p = Repeats()
        p.lines = r.lines
        p.times = r.times
        p.orders = SpilledColumn(repeatElement(Int32(0), count: r.lines.count))
        p.lastSecondOfDay = r.lastSecondOfDay
        p.foldedLate = true
        repeats = p
    }

    /// Whether it stands for connect lines folded as the session was built (`Event.foldIn`),
    /// which were events of their own until then.
    public var foldsLines: Bool { repeats?.foldedLate ?? false }

    /// Where each of its lines stood in the session's list when each line of a folded connect
    /// run was an event of its own: the list is in (time, reading order), so a line's place is
    /// its own (time, order, 0) when it was folded in, and the event's (time, order) with the
    /// line's index in the run otherwise (a run folded while reading, frames or relay stats,
    /// was one event). `body` gets (the line's time, its number, its place).
    public func forEachLinePlace(_ body: (Int64?, Int, (time: Int64, order: Int, k: Int)) -> Void) {
        let places = linePlaces()
        while let (t, line, place) = places.next() { body(t, line, place) }
    }

    /// The same one line at a time (read in order: a long run's lines may be on disk).
    func linePlaces() -> AnyIterator<(time: Int64?, line: Int, place: (time: Int64, order: Int, k: Int))> {
        let head = time ?? Int64.min, order = self.order
        guard let r = repeats else {
            var done = false
            let (t, line) = (time, self.line)
            return AnyIterator {
                if done { return nil }
                done = true
                return (t, line, (head, order, 0))
            }
        }
        let n = r.lines.count, known = Swift.min(n, r.times.count), folded = r.foldedLate
        var times = r.times.makeIterator(), lines = r.lines.makeIterator(), orders = r.orders.makeIterator()
        let time = self.time
        var first: Int32 = 0
        var k = 0
        return AnyIterator {
            guard k < n else { return nil }
            defer { k += 1 }
            let l = lines.next()!
            if k == 0 { first = l }
            let t = k < known ? times.next()! : time
            guard folded else { return (t, Int(l), (head, order, k)) }
            // (`Repeats.orderDelta`: the line number's difference while `orders` is empty.)
            let delta = r.orders.isEmpty ? Int(l) - Int(first) : Int(orders.next()!)
            return (t, Int(l), (t ?? Int64.min, order + delta, 0))
        }
    }

    /// The place (time, order) of its last line, as `forEachLinePlace` gives it.
    var lastLinePlace: (Int64, Int) {
        guard let r = repeats, r.foldedLate else { return (time ?? Int64.min, order) }
        return (lastTime ?? Int64.min, order + r.orderDelta(r.lines.count - 1))
    }

    /// A folded connect run cut at `place`: its lines before it, and those after it as an event
    /// of their own (nil when none is after it). A part of one line is a plain event.
    func cut(at place: (Int64, Int)) -> (before: Event, after: Event?) {
        guard let r = repeats, r.foldedLate else { return (self, nil) }
        // Which lines stay (read in order: a long run's lines may be on disk).
        var stays: [Bool] = []
        stays.reserveCapacity(r.lines.count)
        forEachLinePlace { _, _, p in stays.append((p.time, p.order) < place) }
        let staying = stays.reduce(0) { $0 + ($1 ? 1 : 0) }
        guard staying > 0, staying < stays.count else { return (self, nil) }
        func part(_ flags: [Bool], _ count: Int) -> Event {
            let head = flags.firstIndex(of: true)!
            guard count > 1 else { return alone(head) }
            var e = self
            if head < r.times.count { e.time = r.times[head] }
            e.line = Int(r.lines[head])
            e.order = order + r.orderDelta(head)
            let p = Repeats()
            p.lines = r.lines.selecting(flags)
            p.times = r.times.selecting(flags)
            p.foldedLate = true
            if let t = r.texts {
                let (texts, head) = t.selecting(flags, like: text)
                p.texts = texts
                e.text = head
            }
            if !r.orders.isEmpty {
                let base = r.orders[head]
                p.orders = r.orders.selecting(flags)
                p.orders.update { $0 - base }
            }
            e.repeats = p
            return e
        }
        return (part(stays, staying), part(stays.map { !$0 }, stays.count - staying))
    }

    /// The line at `src` that this event stands for, as an event of its own, or nil.
    func line(at src: SourceRef) -> Event? {
        guard let r = repeats else { return source == src ? self : nil }
        guard sourcePath == src.path, let k = r.lines.lastIndex(of: Int32(truncatingIfNeeded: src.line)),
            Int(r.lines[k]) == src.line
        else { return nil }
        return alone(k)
    }

    /// Its first `k` lines (1 ≤ k < `count`), where a budget ends inside a run.
    func keepingFirst(_ k: Int) -> Event {
        guard let r = repeats, k < r.lines.count else { return self }
        guard k > 1 else { return alone(0) }
        let p = Repeats()
        p.naive = r.naive.leading(k)
        p.lines = r.lines.leading(k)
        p.times = r.times.leading(k)
        p.orders = r.orders.leading(k)
        p.frames = Array(r.frames.prefix(k))
        p.fps = Array(r.fps.prefix(k))
        p.dropped = Array(r.dropped.prefix(k))
        p.lastSecondOfDay = r.lastSecondOfDay
        p.foldedLate = r.foldedLate
        p.readSeq = r.readSeq
        p.texts = r.texts?.leading(k, like: text)
        var e = self
        e.repeats = p
        return e
    }

    /// The lines it stands for whose times lie in `since...until` (a line without a time
    /// stays): itself when all do, none, or a run of those lines (a run of frames that a
    /// `--since` or `--until` cuts; kept or dropped whole by its first line's time, 200 frames
    /// went with the half second before them).
    func within(_ since: Int64, _ until: Int64) -> [Event] {
        guard let r = repeats else { return time.map { $0 >= since && $0 <= until } ?? true ? [self] : [] }
        var keep: [Bool] = []
        keep.reserveCapacity(r.lines.count)
        forEachTimeAndLine { t, _ in keep.append(t.map({ $0 >= since && $0 <= until }) ?? true) }
        if !keep.contains(false) { return [self] }
        guard let first = keep.firstIndex(of: true) else { return [] }
        // One run of the lines kept (a million frames cut by `--since` were a million events);
        // lines that differ in their texts, each on its own.
        let kept = keep.indices.filter { keep[$0] }
        guard kept.count > 1, r.texts == nil, r.times.count == keep.count else { return kept.map { alone($0) } }
        var e = alone(first)
        e.repeats = r.selecting(keep)
        return [e]
    }

    /// The event as its last line alone (for "decided by" evidence).
    var lastLine: Event {
        guard let r = repeats else { return self }
        return alone(r.lines.count - 1)
    }

    /// Line `k` of the lines it stands for, as an event of its own: that line's time, number
    /// and (for a folded connect run) place in reading order.
    private func alone(_ k: Int) -> Event {
        guard let r = repeats else { return self }
        var e = self
        if k < r.times.count { e.time = r.times[k] }
        e.line = Int(r.lines[k])
        if r.foldedLate { e.order += r.orderDelta(k) }
        if let t = r.texts { e.text = t.text(k, like: text) }
        e.repeats = nil
        return e
    }
}

extension Array where Element == Event {
    /// Hands each event to `body` moved out of the list (not copied: its strings are then
    /// held once, by whoever keeps it), and leaves the list empty.
    mutating func drain(_ body: (Event) -> Void) {
        drain(indices, body)
        self = []
    }

    /// Moves the events `isOut` picks into a list of their own and closes the gaps they leave:
    /// both keep their order, and the events that stay are not copied. With `side`, only events
    /// of that side are candidates, tested on the field first: handing an event to `isOut`
    /// copies it, and most lists hold few of the side moved out (relay lines in a device's log).
    mutating func moveOut(side: Side? = nil, where isOut: (Event) -> Bool = { _ in true }) -> [Event] {
        var out: [Event] = []
        var kept = 0
        for i in indices {
            if side.map({ self[i].side == $0 }) ?? true, isOut(self[i]) {
                out.append(self[i])
                continue
            }
            if kept != i { swapAt(kept, i) }
            kept += 1
        }
        removeLast(count - kept)
        return out
    }

    /// The same for `range`, whose places keep a placeholder.
    mutating func drain(_ range: Range<Int>, _ body: (Event) -> Void) {
        let placeholder = Event.placeholder
        withUnsafeMutableBufferPointer { buf in
            guard let base = buf.baseAddress else { return }
            for i in range {
                let e = (base + i).move()
                (base + i).initialize(to: placeholder)
                body(e)
            }
        }
    }
}

/// The lines a repeated event stands for: times as parsed (for resolution; none in a run folded
/// after resolution, `Event.foldIn`), resolved times, and line numbers. Shared by copies of the
/// event; written only while reading and resolving, and by `Event.foldIn`.
public final class Repeats: @unchecked Sendable {
    // (Columns that go to disk a megabyte at a time past their first: a session that folds
    // lines for a day is held in a few megabytes. `SpilledColumn`.)
    var naive = SpilledColumn<Int64>()
    var lines = SpilledColumn<Int32>()
    var times = TimeColumn()
    /// Seconds since midnight of the last line, for midnight roll-over in dateless files.
    var lastSecondOfDay: Int?
    /// For relay `stats` lines: each line's frames, frames per second and dropped frames.
    var frames: [Int32] = []
    var fps: [Float] = []
    var dropped: [Int32] = []
    /// Connect lines folded as the session is built (`Event.foldIn`), which were events of
    /// their own until then.
    var foldedLate = false
    /// For those: each line's place in reading order less the event's own `order` (the order
    /// the lines had as events of their own: `Event.forEachLinePlace`); empty while it is the
    /// line number's difference (one record a line), and for runs folded while reading.
    var orders = SpilledColumn<Int32>()
    /// For a run folded as the session was built whose lines do not all say the same (frame
    /// lines with a length or a counter): each line's message and attribute values, from the
    /// first line on (nil while every line is the event's own text).
    var texts: LineTexts?
    /// Where in the events read the last run joined into this one was (its `readSeq`, or its
    /// `order` where that is not kept: runs a reader's parts cut, `SessionBuilder.joinCutRun`):
    /// the next part's run continues it when it was read next.
    var joinedThrough: Int?
    /// For a run the reader folded, taken from a big file's parts: how many events had been
    /// read when its event was (0: not counted; its `order` then counts events), for
    /// `SessionBuilder.joinCutRun` (an event's `order` there follows line numbers).
    var readSeq = 0

    /// A run the reader folded of one line repeated, each line's time resolved (`timed`, as its
    /// event is) and nothing else kept per line: a frame run that the session may fold as it
    /// folds lines of their own (`Event.foldReadRunLate`).
    func isPlainReadRun(timed: Bool) -> Bool {
        !foldedLate && texts == nil && frames.isEmpty && orders.isEmpty && (timed ? times.count == lines.count : times.isEmpty)
    }

    /// Line `k`'s place in reading order less the first line's.
    func orderDelta(_ k: Int) -> Int { orders.isEmpty ? Int(lines[k]) - Int(lines[0]) : Int(orders[k]) }

    init() {}

    func add(time: ParsedTime?, line: Int) {
        naive.append(time?.naive ?? 0)
        lines.append(Int32(line))
        lastSecondOfDay = time?.secondOfDay
    }

    func addStats(_ e: Event) { addStats(e.attrs) }

    /// The same from a stats line's attributes (the first of each name counts, as `Event.attr`).
    func addStats(_ attrs: [(String, String)]) {
        func attr(_ name: String) -> String? { attrs.first(where: { $0.0 == name })?.1 }
        addStats(frames: Repeats.count(attr("frames")), fps: Repeats.rate(attr("fps")), dropped: Repeats.count(attr("dropped")))
    }

    func addStats(frames: Int, fps: Double, dropped: Int) {
        self.frames.append(Int32(frames))
        self.fps.append(Float(fps))
        self.dropped.append(Int32(dropped))
    }

    /// A stats line's count as kept: 0 to 2^31 − 1 (a negative or unreadable one is damage: 0).
    static func count(_ text: String?) -> Int { max(0, Int(Int32(text ?? "") ?? 0)) }
    /// The same of a capture's bytes (nil: not captured).
    static func count(_ bytes: UnsafeRawBufferPointer?) -> Int {
        guard let bytes else { return 0 }
        // Digits alone (nearly every count): read in place; anything else as the text reads.
        if bytes.count > 0, bytes.count <= 9, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return bytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        return count(String(decoding: bytes, as: UTF8.self))
    }
    /// A stats line's rate as kept: finite, not negative, within a `Float` (else 0): JSON and
    /// Perfetto have no `inf` or `nan`.
    static func rate(_ text: String?) -> Double {
        guard let v = Double(text ?? ""), v.isFinite, v >= 0, v <= Double(Float.greatestFiniteMagnitude) else { return 0 }
        return v
    }
    /// The same of a capture's bytes (nil: not captured).
    static func rate(_ bytes: UnsafeRawBufferPointer?) -> Double {
        guard let bytes else { return 0 }
        // `ddd.dd` of 15 digits or fewer is exact as an integer over a power of ten, and one
        // division of two exact doubles is rounded once: the double `Double(text)` reads.
        var digits = 0, mantissa = 0, point = -1, ok = bytes.count > 0 && bytes.count <= 16
        if ok {
            for (k, b) in bytes.enumerated() {
                if b >= 0x30 && b <= 0x39 {
                    mantissa = mantissa * 10 + Int(b - 0x30)
                    digits += 1
                } else if b == 0x2E && point < 0 && k > 0 && k < bytes.count - 1 {
                    point = k
                } else {
                    ok = false
                    break
                }
            }
        }
        guard ok, digits <= 15 else { return rate(String(decoding: bytes, as: UTF8.self)) }
        let decimals = point < 0 ? 0 : bytes.count - 1 - point
        return Double(mantissa) / powersOfTen[decimals]
    }
    private static let powersOfTen: [Double] = (0...16).map { k in (0..<k).reduce(1.0) { r, _ in r * 10 } }

    /// The run of the lines whose flag is set (at least one), with what is kept of each line
    /// and of the run (not their texts: a run whose lines differ is cut line by line).
    func selecting(_ keep: [Bool]) -> Repeats {
        let p = Repeats()
        p.naive = naive.selecting(keep)
        p.lines = lines.selecting(keep)
        p.times = times.selecting(keep)
        if !orders.isEmpty, let first = keep.firstIndex(of: true) {
            // (each line's place less the run's own, which is now the first kept line's)
            let base = orders[first]
            p.orders = orders.selecting(keep)
            p.orders.update { $0 - base }
        }
        if frames.count == keep.count {
            let kept = keep.indices.filter { keep[$0] }
            p.frames = kept.map { frames[$0] }
            p.fps = kept.map { fps[$0] }
            p.dropped = kept.map { dropped[$0] }
        }
        p.lastSecondOfDay = lastSecondOfDay
        p.foldedLate = foldedLate
        p.readSeq = readSeq
        return p
    }

    /// Takes the lines of `other`, a run that continues this one (read apart).
    func append(_ other: Repeats) {
        naive += other.naive
        lines += other.lines
        times += other.times
        lastSecondOfDay = other.lastSecondOfDay
        frames += other.frames
        fps += other.fps
        dropped += other.dropped
        orders += other.orders
        foldedLate = foldedLate || other.foldedLate
        // (Runs whose lines differ are folded as the session is built, never read apart.)
    }

    /// A copy with every time moved by `delta` (relay lines put on the device's clock).
    func shifted(by delta: Int64) -> Repeats {
        let r = Repeats()
        r.naive = naive
        r.lines = lines
        r.times = TimeColumn(times.lazy.map { $0 + delta })
        r.lastSecondOfDay = lastSecondOfDay
        r.frames = frames
        r.fps = fps
        r.dropped = dropped
        r.orders = orders
        r.foldedLate = foldedLate
        r.texts = texts
        r.joinedThrough = joinedThrough
        r.readSeq = readSeq
        return r
    }
}

extension Event {
    /// Calls `body` with (time, source, frames, fps, dropped) of every relay `stats` line the
    /// event stands for.
    public func forEachStat(_ body: (Int64?, SourceRef, Int, Double, Int) -> Void) {
        guard let r = repeats, r.frames.count == r.lines.count else {
            // As a folded run keeps them (32 bits; a damaged count is 0): sums cannot overflow.
            body(time, source, Repeats.count(attr("frames")), Repeats.rate(attr("fps")), Repeats.count(attr("dropped")))
            return
        }
        var k = 0
        forEachTimeAndLine { t, line in
            body(t, SourceRef(path: source.path, line: line), Int(r.frames[k]), Double(r.fps[k]), Int(r.dropped[k]))
            k += 1
        }
    }
}

/// Folds repeated lines into one event as they are read: consecutive frame lines of one
/// process, and the `stats` lines of one relay session until another line of that session.
struct EventCompactor {
    private var openStats = OpenStatsRuns()

    /// No relay stats run is open.
    var isEmpty: Bool { openStats.isEmpty }
    /// A line taken out of the list after the last one in it (a relay line the `RelayStage`
    /// took): the next frame line does not continue the run before it.
    var barrier = false

    /// The relay line of session `id` just appended was taken out of the list again.
    mutating func taken(session id: String) {
        openStats[StatsKey(id)] = nil
        barrier = true
    }

    /// Open runs.
    var openCount: Int { openStats.count }

    /// The first place in the list an open run is at (nil: none is open).
    var firstOpen: Int? { openStats.firstPlace }

    /// The first `n` events of the list were taken out of it: the open runs are `n` places
    /// nearer its start (none is among those taken).
    mutating func moveBack(by n: Int) {
        openStats.updatePlaces { i in
            precondition(i >= n, "an open relay stats run was taken out of the list")
            return i - n
        }
    }

    /// The events before the last were handed on: relay stats runs start again.
    mutating func forgetOpenRuns() { openStats = OpenStatsRuns() }

    /// Open runs at most moved by `moveOpenRunsBack` (a relay fleet has a few thousand open).
    static let maxMovedRuns = 1 << 14

    /// Moves the open runs behind the other events of `events` from the first of them on, so
    /// that the lines before them (sessions closed since the oldest open run began) can be
    /// written out; nil when it does not (`maxMovedRuns` or fewer open, else nothing is moved).
    /// Each run is the latest line of its session, so every session's lines keep their order;
    /// only runs whose lines carry their month and day are moved (a year is placed per line
    /// from the reference, not from the lines before it, as a time of day's midnight is).
    /// Returns where the runs now begin.
    mutating func moveOpenRunsBack(in events: inout [Event]) -> Int? {
        guard !openStats.isEmpty, openStats.count <= Self.maxMovedRuns else { return nil }
        var open = openStats.entries.map { (at: $0.at, id: $0.id) }
        for r in open {
            guard let t = events[r.at].parsedTime, t.hasDate, !t.sinceBoot else { return nil }
        }
        open.sort { $0.at < $1.at }
        var tail: [Event] = []
        tail.reserveCapacity(open.count)
        var kept = open[0].at, j = 0
        for i in open[0].at..<events.count {
            if j < open.count, open[j].at == i {
                tail.append(events[i])
                j += 1
            } else {
                if kept != i { events.swapAt(kept, i) }
                kept += 1
            }
        }
        events.replaceSubrange(kept..<events.count, with: tail)
        for (n, r) in open.enumerated() { openStats[r.id] = kept + n }
        return kept
    }

    mutating func add(_ e: consuming Event, to events: inout [Event]) {
        if continuesRun(code: e.code, message: e.message, pid: e.pid, process: e.process, fileIndex: e.fileIndex,
                        time: e.parsedTime, line: e.line, in: &events)
        {
            return
        }
        absorb(e, into: &events)
    }

    /// A frame line that continues the frame run `events` ends with (same message, process,
    /// pid, file): folded into that run (its time and line). The event need not exist yet.
    func continuesRun(code: KindCode, message: String, pid: Int?, process: String?, fileIndex: Int, time: ParsedTime?, line: Int,
                      in events: inout [Event]) -> Bool
    {
        guard code == .frameSent, !barrier, let i = events.indices.last, events[i].code == .frameSent, events[i].message == message,
            events[i].pid == pid, events[i].process == process, events[i].fileIndex == fileIndex,
            (events[i].parsedTime == nil) == (time == nil)
        else { return false }
        repeats(of: &events[i], stats: false).add(time: time, line: line)
        return true
    }

    /// A relay `stats` line as the matcher matched it (rule captures `m` in `body`, where
    /// `slots` says) that continues the run of its session open in `events`: folded in as
    /// `continuesStats(hit…)` folds it, before a hit is made.
    func continuesStats(_ slots: EventMatcher.StatsSlots, _ m: borrowing PatternMatch, _ body: UnsafeRawBufferPointer,
                        fileIndex: Int, time: ParsedTime?, line: Int, in events: inout [Event]) -> Bool {
        func capture(_ slot: Int) -> UnsafeRawBufferPointer? {
            guard slot >= 0, let r = m.range(slot) else { return nil }
            return UnsafeRawBufferPointer(rebasing: body[r])
        }
        guard !openStats.isEmpty, let session = capture(slots.session) else { return false }
        let (frames, fps, dropped) = (capture(slots.frames), capture(slots.fps), capture(slots.dropped))
        return foldStats(session: StatsKey(bytes: session), fileIndex: fileIndex, time: time, line: line, in: &events) {
            $0.addStats(frames: Repeats.count(frames), fps: Repeats.rate(fps), dropped: Repeats.count(dropped))
        }
    }

    /// A relay `stats` line (the matcher's `hit`) that continues the run of its session open in
    /// `events`, folded in as `absorb` folds its event, which need not exist.
    func continuesStats(_ hit: EventMatcher.Hit, fileIndex: Int, time: ParsedTime?, line: Int, in events: inout [Event]) -> Bool {
        guard hit.code == .relayStats, hit.rule.side == .relay, !openStats.isEmpty,
            let id = hit.attrs.first(where: { $0.0 == "session" })?.1
        else { return false }
        return foldStats(session: StatsKey(id), fileIndex: fileIndex, time: time, line: line, in: &events) { $0.addStats(hit.attrs) }
    }

    /// A stats line of session `id`, folded into its open run in `events` when there is one in
    /// this file: its time and line, then its counts (`stats`).
    private func foldStats(session id: StatsKey, fileIndex: Int, time: ParsedTime?, line: Int, in events: inout [Event],
                           _ stats: (Repeats) -> Void) -> Bool {
        guard let i = openStats[id], events[i].fileIndex == fileIndex else { return false }
        let r = repeats(of: &events[i], stats: true)
        r.add(time: time, line: line)
        stats(r)
        return true
    }

    /// A relay `stats` line, or run, that continues the run of its session open in `events` (no
    /// other line of that session between) joins it; anything else is appended. `add` uses it for
    /// each line; the parts of a file read apart (ranges, stretches, each compacted on its own)
    /// go through it in file order, so that a run they cut is folded as one reader folds it.
    /// (`e` is taken, not copied: appended as it is.)
    mutating func absorb(_ e: consuming Event, into events: inout [Event]) {
        if e.side == .relay, let session = e.attr("session") {
            let id = StatsKey(session)
            if e.code == .relayStats {
                if let i = openStats[id], events[i].fileIndex == e.fileIndex {
                    append(e, to: &events[i], stats: true)
                    return
                }
                openStats[id] = events.count
            } else {
                openStats[id] = nil
            }
        }
        events.append(e)
        barrier = false
    }

    /// Folds the relay `stats` line or run `e` into the run `head` (the `RelayStage`'s rule).
    static func fold(_ e: Event, into head: inout Event) { EventCompactor().append(e, to: &head, stats: true) }

    private func append(_ e: Event, to head: inout Event, stats: Bool) {
        let r = repeats(of: &head, stats: stats)
        if let more = e.repeats {
            r.append(more)
            return
        }
        r.add(time: e.parsedTime, line: e.line)
        if stats { r.addStats(e) }
    }

    /// The run `head` starts (made on its first repeat, holding `head` itself first).
    private func repeats(of head: inout Event, stats: Bool) -> Repeats {
        if let existing = head.repeats { return existing }
        let r = Repeats()
        r.add(time: head.parsedTime, line: head.line)
        if stats { r.addStats(head) }
        head.repeats = r
        return r
    }
}

/// A relay session's id as the key of its open `stats` run, made from the line's bytes without
/// a `String`: up to 48 bytes held in the key (a UUID is 36), hashed and compared as words in
/// place. (Keyed by `String`, each `stats` line made one from its bytes, and each look-up among
/// thousands of open runs went to the key's storage to compare it: a fifth of the time of a
/// relay with 5,000 sessions open.) A longer id is kept as its `String`.
struct StatsKey: Hashable {
    private var a: UInt64 = 0, b: UInt64 = 0, c: UInt64 = 0, d: UInt64 = 0, e: UInt64 = 0, f: UInt64 = 0
    private var count = 0
    private var long: String?

    init(bytes: UnsafeRawBufferPointer) {
        count = bytes.count
        guard bytes.count <= 48 else {
            long = String(decoding: bytes, as: UTF8.self)
            return
        }
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { w in
            if let from = bytes.baseAddress, !bytes.isEmpty { w.baseAddress!.copyMemory(from: from, byteCount: bytes.count) }
        }
        (a, b, c, d, e, f) = words
    }

    init(_ id: String) {
        var id = id
        self = id.withUTF8 { StatsKey(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// An empty key (a free slot of `OpenStatsRuns`).
    init() {}

    /// The key's words mixed into one (`OpenStatsRuns` takes its high bits): a UUID's
    /// differing bytes may be in any of them.
    var mixed: UInt64 {
        let k: UInt64 = 0x9E37_79B9_7F4A_7C15
        var h = UInt64(truncatingIfNeeded: count) &* k
        if let long { h ^= UInt64(truncatingIfNeeded: long.hashValue) }
        @inline(__always) func mix(_ w: UInt64) { h = (h ^ w) &* k; h ^= h >> 29 }
        mix(a); mix(b); mix(c); mix(d); mix(e); mix(f)
        return h &* k
    }
}

extension ParsedTime {
    /// The instant with missing parts taken as 2000-01-01 UTC: differences between two lines of
    /// one file are right (but for midnight, which resolution handles).
    var naive: Int64 { instant(defaultYear: 2000, defaultMonth: 1, defaultDay: 1, defaultOffset: 0) }
}

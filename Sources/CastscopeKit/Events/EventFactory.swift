/// Turns a record into an event when the vocabulary recognizes its message.
public struct EventFactory: Sendable {
    public let matcher: EventMatcher

    public init(matcher: EventMatcher) { self.matcher = matcher }

    public init(registry: ParserRegistry) { matcher = EventMatcher(vocabularies: registry.vocabularies) }

    /// The event for `rec`, or nil when no rule matches. Its time is still unresolved
    /// (`parsedTime`); `resolveNow` or the analyzer's bundle-wide resolution sets it.
    public func event(from rec: RawRecord, path: String, order: Int, fileIndex: Int) -> Event? {
        guard let hit = rec.withBytes(.message, { matcher.match($0, category: rec.string(.category)) }) ?? nil else {
            return nil
        }
        var process = rec.string(.process)
        if let p = process, p.hasSuffix(")"), let open = p.firstIndex(of: "(") {
            process = String(p[..<open])  // `proc(library)` in idevicesyslog
        }
        var attrs = hit.attrs
        if let host = rec.string(.host) { attrs.append(("host", host)) }
        return Event(
            kind: hit.rule.event, sdk: hit.rule.sdk, side: hit.rule.side,
            time: nil, timeInferred: rec.timeInferred, process: process, pid: rec.pid,
            message: rec.string(.message) ?? "", attrs: attrs,
            source: SourceRef(path: path, line: rec.line), order: order,
            parsedTime: rec.time, fileIndex: fileIndex)
    }
}

extension Event {
    /// Live streams: parts a line lacks (year, date, zone) are taken from `now` (µs, UTC).
    public mutating func resolveNow(_ now: Int64, defaultOffset: Int = 0) {
        guard let t = parsedTime else { return }
        let local = (now + Int64(defaultOffset) * 1_000_000).floorDiv(1_000_000)
        let (y, m, d) = civilFromDays(Int(local.floorDiv(86_400)))
        time = t.instant(defaultYear: y, defaultMonth: m, defaultDay: d, defaultOffset: defaultOffset)
        displayOffset = t.offset ?? defaultOffset
    }
}

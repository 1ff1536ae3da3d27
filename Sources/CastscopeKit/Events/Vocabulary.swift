/// Which process a message comes from.
public enum Side: String, Sendable, Codable {
    /// The Broadcast Upload Extension (socket client).
    case `extension`
    /// The host app (socket server, SDK).
    case app
    /// The system (kernel, runningboardd, ReplayKit, the debugger).
    case system
    /// The Linux relay daemon.
    case relay
}

/// One vocabulary: messages of one SDK family mapped to normalized events.
/// Loaded from `parsers/vocabulary/*.json`.
public struct Vocabulary: Sendable {
    public struct Rule: Sendable {
        public var event: String
        public var pattern: Pattern
        public var anchored: Bool
        public var set: [(String, String)]
        public var side: Side
        public var sdk: String
        /// Only records of this os_log category (when the format gives categories).
        public var category: String?
        /// Not a message holding any of these: source code or prose that names the rule's word
        /// (`override func broadcastStarted(`, `class SampleHandler: RPBroadcastSampleHandler {`,
        /// `` `RPBroadcastSampleHandler` `` in a ticket's sentence), not a log line of it.
        public var unless: [[UInt8]] = []
        /// Captures that must be one of the given values, by slot (`"only": {"assert_kw":
        /// ["Assertion"]}`): looked at once the rule has matched, so a rule whose word must be a
        /// long and common literal (glibc's `Assertion`, in every `BKProcessAssertion`) can
        /// keep a cheap anchor (`' failed.`) without matching any `` word `x' failed. ``.
        public var only: [(slot: Int, values: [[UInt8]])] = []
    }

    public struct Sample: Sendable {
        public var message: String
        public var event: String?
        public var attrs: [(String, String)]
        public var category: String?
    }

    public var name: String
    public var title: String
    public var sdk: String
    public var rules: [Rule]
    public var samples: [Sample]
    public var origin: String

    /// `samples`: the definition was read with its samples (`ParserRegistry.builtin(samples:)`),
    /// which it must then have.
    public init(json: JSONValue, origin: String, samples withSamples: Bool = true) throws {
        func fail(_ m: String) -> LogFormat.DefinitionError { .init(origin: origin, message: m) }
        guard let name = json["name"]?.stringValue else { throw fail("missing \"name\"") }
        self.name = name
        self.origin = origin
        title = json["title"]?.stringValue ?? name
        sdk = json["sdk"]?.stringValue ?? name
        let defaultSide = json["side"]?.stringValue ?? "extension"
        var rules: [Rule] = []
        for r in json["rules"]?.arrayValue ?? [] {
            guard let event = r["event"]?.stringValue, let text = r["match"]?.stringValue else {
                throw fail("a rule needs \"event\" and \"match\"")
            }
            let sideName = r["side"]?.stringValue ?? defaultSide
            guard let side = Side(rawValue: sideName) else { throw fail("unknown side \(sideName)") }
            let pattern: Pattern
            do { pattern = try Pattern(text) } catch { throw fail("\(error)") }
            // (an empty `match`, or fields alone, matched every line: sessions made up)
            guard !pattern.anchor.isEmpty else { throw fail("the match \"\(text)\" has no text of its own: it would match every line") }
            let set = (r["set"]?.objectValue ?? []).compactMap { k, v in v.stringValue.map { (k, $0) } }
            let unless = (r["unless"]?.arrayValue ?? []).compactMap { $0.stringValue.map { Array($0.utf8) } }
            guard !unless.contains(where: \.isEmpty) else { throw fail("an empty \"unless\" text would keep the rule from every message") }
            var only: [(slot: Int, values: [[UInt8]])] = []
            for (capture, values) in r["only"]?.objectValue ?? [] {
                guard let slot = pattern.names.firstIndex(of: capture) else {
                    throw fail("\"only\" names \"\(capture)\", which the match \"\(text)\" does not capture")
                }
                let list = (values.arrayValue ?? []).compactMap { $0.stringValue.map { Array($0.utf8) } }
                guard !list.isEmpty else { throw fail("\"only\" gives \"\(capture)\" no value: the rule would match nothing") }
                only.append((slot, list))
            }
            rules.append(Rule(event: event, pattern: pattern, anchored: r["anchored"] == .bool(true), set: set,
                              side: side, sdk: r["sdk"]?.stringValue ?? sdk, category: r["category"]?.stringValue, unless: unless,
                              only: only))
        }
        if rules.isEmpty { throw fail("no rules") }
        self.rules = rules
        var samples: [Sample] = []
        for s in json["samples"]?.arrayValue ?? [] {
            guard let message = s["message"]?.stringValue else { throw fail("a sample needs \"message\"") }
            let attrs = (s["attrs"]?.objectValue ?? []).compactMap { k, v in v.stringValue.map { (k, $0) } }
            samples.append(Sample(message: message, event: s["event"]?.stringValue, attrs: attrs,
                                  category: s["category"]?.stringValue))
        }
        if withSamples, samples.isEmpty { throw fail("no samples: every vocabulary carries sample messages that a test runs") }
        self.samples = samples
    }
}

/// All rules of all vocabularies, matched against a message in order; the first match wins.
public final class EventMatcher: Sendable {
    public let rules: [Vocabulary.Rule]
    /// The distinct anchor literals of all rules: a message containing none of them cannot
    /// match, which is what keeps noisy inputs cheap.
    public var anchors: [[UInt8]] { prefilter.anchors }
    /// Finds which anchors a message holds in one pass, so that only rules whose anchor is
    /// there are tried (instead of searching the message for each rule's anchor in turn).
    /// Also the readers' line prefilter (the same anchors).
    public let prefilter: Prefilter
    private let scanner: PrefilterScanner
    /// Each rule's anchor, as an index into `anchors` (-1: none).
    private let ruleAnchor: [Int]

    public init(vocabularies: [Vocabulary]) {
        // Rules narrowed to a category are tried before the rules they refine.
        let all = vocabularies.flatMap(\.rules)
        rules = all.filter { $0.category != nil } + all.filter { $0.category == nil }
        var seen: [[UInt8]: Int] = [:]
        var anchors: [[UInt8]] = []
        var ruleAnchor: [Int] = []
        for rule in rules {
            let a = rule.pattern.anchor
            if a.isEmpty { ruleAnchor.append(-1); continue }
            if let i = seen[a] { ruleAnchor.append(i); continue }
            seen[a] = anchors.count
            ruleAnchor.append(anchors.count)
            anchors.append(a)
        }
        self.ruleAnchor = ruleAnchor
        var rulesOfAnchor = [[Int32]](repeating: [], count: anchors.count)
        var anchorless: [Int32] = []
        for (index, a) in ruleAnchor.enumerated() {
            if a >= 0 { rulesOfAnchor[a].append(Int32(index)) } else { anchorless.append(Int32(index)) }
        }
        self.rulesOfAnchor = rulesOfAnchor
        self.anchorless = anchorless
        // (one pass by index: `map` over the rules copied each rule, twice)
        var codes: [KindCode] = []
        codes.reserveCapacity(rules.count)
        var maxSlots = 0
        for index in rules.indices {
            codes.append(KindCode(rules[index].event))
            maxSlots = max(maxSlots, rules[index].pattern.names.count)
        }
        self.codes = codes
        self.maxSlots = maxSlots
        var infos: [RuleInfo] = []
        infos.reserveCapacity(rules.count)
        for index in rules.indices { infos.append(RuleInfo(rules[index])) }
        self.infos = infos
        var statsSlotsOf: [StatsSlots?] = []
        for index in rules.indices { statsSlotsOf.append(Self.statsSlots(rules[index], code: codes[index])) }
        self.statsSlotsOf = statsSlotsOf
        prefilter = Prefilter(anchors: anchors)
        scanner = prefilter.scanner
    }
    /// The rules of each anchor, in rule order: a message holding two of some 300 anchors tries
    /// the few rules of those two, not a test of every rule's anchor bit.
    private let rulesOfAnchor: [[Int32]]
    /// The rules with no anchor (none today: a rule needs text of its own), tried always.
    private let anchorless: [Int32]
    /// Each rule's event kind code, looked up once.
    private let codes: [KindCode]
    /// Each rule's `RuleInfo`, made once.
    private let infos: [RuleInfo]
    /// The most captures of any rule: one match state serves every rule a message tries.
    private let maxSlots: Int
    /// Per rule, where a relay `stats` rule captures what a stats run keeps (nil: not such a
    /// rule, or one whose words come another way, `set` or a name captured twice).
    private let statsSlotsOf: [StatsSlots?]

    /// The captures of a relay `stats` line a stats run keeps (`EventCompactor.continuesStats`),
    /// by slot (-1: not captured).
    public struct StatsSlots: Sendable {
        public var session: Int, frames: Int, fps: Int, dropped: Int
    }

    /// Rule `index`'s stats slots, when a `fold` given to `match` may take its match.
    public func statsSlots(_ index: Int) -> StatsSlots? { statsSlotsOf[index] }

    static func statsSlots(_ rule: Vocabulary.Rule, code: KindCode) -> StatsSlots? {
        guard code == .relayStats, rule.side == .relay else { return nil }
        let names = rule.pattern.names
        func slot(_ name: String) -> Int? {
            // (the hit's attribute is the first capture of the name that matched, else `set`'s)
            guard names.filter({ $0 == name }).count <= 1, !rule.set.contains(where: { $0.0 == name }) else { return nil }
            return names.firstIndex(of: name) ?? -1
        }
        guard let session = slot("session"), session >= 0, let frames = slot("frames"), let fps = slot("fps"),
            let dropped = slot("dropped")
        else { return nil }
        return StatsSlots(session: session, frames: frames, fps: fps, dropped: dropped)
    }

    /// A class: hits are remembered per distinct message (`Interner.verdict`) and handed out
    /// many times, and copying the rule's fields each time showed in profiles.
    public final class Hit: @unchecked Sendable {
        public let rule: RuleInfo
        public let attrs: [(String, String)]
        /// The code of the rule's event kind.
        let code: KindCode
        init(rule: RuleInfo, attrs: [(String, String)], code: KindCode) {
            self.rule = rule
            self.code = code
            self.attrs = attrs
        }
    }

    /// What a hit tells of its rule (its event kind, SDK and side), made once per rule and
    /// shared by its hits: a hit that held a copy of the rule took a reference to each of its
    /// seven lists and strings, and gave it back, per line (relay text: 6 % of the time).
    public final class RuleInfo: Sendable {
        public let event: String
        public let sdk: String
        public let side: Side
        init(_ rule: Vocabulary.Rule) {
            event = rule.event
            sdk = rule.sdk
            side = rule.side
        }
    }

    /// What `match(_:category:fold:)` made of a message.
    public enum Outcome {
        case hit(Hit)
        case missed
        /// A relay `stats` line that `fold` took: no hit made.
        case folded
    }

    /// Rule `index` matched with captures `m` in `body` (the message, or what follows a
    /// logger's lead): true when the caller took the line as it is (`Outcome.folded`), so that
    /// no hit, attributes or text are made for it. Asked only of rules with `statsSlots`.
    public typealias Fold = (_ index: Int, _ m: borrowing PatternMatch, _ body: UnsafeRawBufferPointer) -> Bool

    public func match(_ message: UnsafeRawBufferPointer, category: String? = nil) -> Hit? {
        if case .hit(let hit) = match(message, category: category, fold: { _, _, _ in false }) { return hit }
        return nil
    }

    /// `match`, offering a relay `stats` line to `fold` before its hit is made.
    public func match(_ message: UnsafeRawBufferPointer, category: String?, fold: Fold) -> Outcome {
        var m = PatternMatch(slots: 0)
        return match(message, category: category, fold: fold, scratch: &m)
    }

    /// The same with the captures' state lent by the caller (a reader's, kept from line to
    /// line): made per message, its two lists were two allocations per line tried.
    public func match(_ message: UnsafeRawBufferPointer, category: String?, fold: Fold, scratch m: inout PatternMatch) -> Outcome {
        // White space at the end is no part of the message: Markdown's two spaces of a line
        // break, a ticket's or a mail's copy, a terminal's padded line. A rule ending in a
        // word (`status={status:word}`, `Fatal Exception: {exception:word}`) did not match
        // with it, and a capture running to the end kept it (`SIGABRT  `: a second crash).
        var end = message.count
        while end > 0, message[end - 1] == 0x20 || message[end - 1] == 0x09 || message[end - 1] == 0x0D { end -= 1 }
        let message = end == message.count ? message : UnsafeRawBufferPointer(rebasing: message[..<end])
        // rsyslog's `message repeated 3 times: [ janus.service: Main process exited, …]`: the
        // bracketed message's event, which stands for 3 more (`repeated`).
        if let (inner, times) = Self.repeated(message) {
            // (not folded: its event says how many more lines it stands for)
            guard case .hit(let hit) = plainMatch(inner, category: category, fold: { _, _, _ in false }, &m) else { return .missed }
            return .hit(Hit(rule: hit.rule, attrs: hit.attrs + [("repeated", times)], code: hit.code))
        }
        return plainMatch(message, category: category, fold: fold, &m)
    }

    /// rsyslog's de-duplication line, `message repeated N times: [ X]`: X and N.
    static func repeated(_ message: UnsafeRawBufferPointer) -> (UnsafeRawBufferPointer, String)? {
        // (the first byte alone for every other message: no static array touched)
        guard message.count > 30, message[0] == UInt8(ascii: "m"), message.starts(with: repeatedHead) else { return nil }
        var i = repeatedHead.count
        let digits = i
        while i < message.count, message[i] >= 0x30, message[i] <= 0x39 { i += 1 }
        guard i > digits, i - digits <= 9, message[i...].starts(with: repeatedTail) else { return nil }
        let times = String(decoding: UnsafeRawBufferPointer(rebasing: message[digits..<i]), as: UTF8.self)
        var start = i + repeatedTail.count
        var end = message.count
        while end > start, message[end - 1] == 0x20 || message[end - 1] == 0x0D { end -= 1 }
        guard end > start, message[end - 1] == UInt8(ascii: "]") else { return nil }
        end -= 1
        while start < end, message[start] == 0x20 { start += 1 }
        return (UnsafeRawBufferPointer(rebasing: message[start..<end]), times)
    }
    private static let repeatedHead = Array("message repeated ".utf8)
    private static let repeatedTail = Array(" times: [".utf8)

    private func plainMatch(_ message: UnsafeRawBufferPointer, category: String?, fold: Fold, _ m: inout PatternMatch) -> Outcome {
        if scanner.isUseful {
            return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: scanner.wordCount) { present in
                let bits = present.baseAddress!
                scanner.anchorsPresent(message, into: bits)
                return matchCandidates(message, category: category, bits: bits, fold: fold, &m)
            }
        }
        var lead: Int?? = .none
        for index in rules.indices {
            let a = ruleAnchor[index]
            if a >= 0, findBytes(message, prefilter.anchors[a], from: 0) == nil { continue }
            let outcome = tryRule(index, message, category: category, &m, lead: &lead, fold: fold)
            if case .missed = outcome { continue }
            return outcome
        }
        return .missed
    }

    /// The rules of the anchors found (bits set in `bits`), tried in rule order.
    private func matchCandidates(_ message: UnsafeRawBufferPointer, category: String?, bits: UnsafePointer<UInt64>,
                                 fold: Fold, _ m: inout PatternMatch) -> Outcome {
        // (a message holds few anchors and they have few rules: a small list on the stack,
        // sorted by insertion; sized by the rules the message's anchors have, not by all rules:
        // with hundreds of rules that was past the stack's share and an allocation per message)
        var candidates = anchorless.count
        rulesOfAnchor.withUnsafeBufferPointer { all in
            for w in 0..<scanner.wordCount {
                var word = bits[w]
                while word != 0 {
                    candidates += all[w << 6 + word.trailingZeroBitCount].count
                    word &= word - 1
                }
            }
        }
        if candidates == 0 { return .missed }
        return withUnsafeTemporaryAllocation(of: Int32.self, capacity: candidates) { list in
            var count = 0
            func add(_ r: Int32) {
                var i = count
                while i > 0, list[i - 1] > r { list[i] = list[i - 1]; i -= 1 }
                list[i] = r
                count += 1
            }
            for r in anchorless { add(r) }
            rulesOfAnchor.withUnsafeBufferPointer { all in
                for w in 0..<scanner.wordCount {
                    var word = bits[w]
                    while word != 0 {
                        let a = w << 6 + word.trailingZeroBitCount
                        word &= word - 1
                        for r in all[a] { add(r) }
                    }
                }
            }
            if count == 0 { return .missed }
            var lead: Int?? = .none
            for k in 0..<count {
                let outcome = tryRule(Int(list[k]), message, category: category, &m, lead: &lead, fold: fold)
                if case .missed = outcome { continue }
                return outcome
            }
            return .missed
        }
    }

    /// Rule `index` against a message whose anchor it holds: its hit, or nil.
    /// `lead`: a logger's time and level before the message, for the rules that must cover all
    /// of it (`MessageLead`): looked for once, when such a rule is tried.
    private func tryRule(_ index: Int, _ message: UnsafeRawBufferPointer, category: String?,
                         _ m: inout PatternMatch, lead: inout Int??, fold: Fold) -> Outcome {
        rules.withUnsafeBufferPointer { rules -> Outcome in
            // (through a pointer: `let rule = rules[index]` copied the rule, a reference to each
            // of its lists and strings taken and given back per line tried)
            let rule = rules.baseAddress! + index
            if let c = rule.pointee.category, c != category { return .missed }
            if !rule.pointee.unless.isEmpty, rule.pointee.unless.contains(where: { findBytes(message, $0, from: 0) != nil }) { return .missed }
            // (made when a rule with captures is tried, for all: most messages try one rule,
            // many rules capture nothing)
            if m.starts.count < rule.pointee.pattern.names.count { m = PatternMatch(slots: maxSlots) }
            var body = message
            if rule.pointee.anchored {
                // An anchored rule must cover the whole message, bar trailing white space; or
                // all of it after a logger's lead.
                func covers(_ text: UnsafeRawBufferPointer, _ m: inout PatternMatch) -> Bool {
                    guard rule.pointee.pattern.match(text, into: &m) else { return false }
                    var e = m.end
                    while e < text.count, text[e] == 0x20 || text[e] == 0x09 { e += 1 }
                    return e == text.count
                }
                if !covers(message, &m) {
                    // (only the relay's words: a daemon's logger writes the lead; another
                    // process's `DEBUG: no data to send` is no Jitsi extension's line)
                    guard rule.pointee.side == .relay else { return .missed }
                    if lead == .none { lead = .some(MessageLead.end(message)) }
                    guard let start = lead!, case let rest = UnsafeRawBufferPointer(rebasing: message[start...]), covers(rest, &m) else { return .missed }
                    body = rest
                }
            } else if !rule.pointee.pattern.search(message, into: &m) {
                return .missed
            }
            if !rule.pointee.only.isEmpty, !rule.pointee.only.allSatisfy({ c in
                m.range(c.slot).map { r in c.values.contains { $0.elementsEqual(body[r]) } } ?? false
            }) {
                return .missed
            }
            // A stats line its run takes: nothing more made of it.
            if statsSlotsOf[index] != nil, fold(index, m, body) { return .folded }
            var attrs: [(String, String)] = []
            // (one allocation: a relay `stats` line's five grew the list four times)
            attrs.reserveCapacity(rule.pointee.pattern.names.count + rule.pointee.set.count)
            for (slot, name) in rule.pointee.pattern.names.enumerated() {
                if let r = m.range(slot) {
                    attrs.append((name, Event.text(UnsafeRawBufferPointer(rebasing: body[r]))))
                }
            }
            attrs.append(contentsOf: rule.pointee.set)
            return .hit(Hit(rule: infos[index], attrs: attrs, code: codes[index]))
        }
    }
}

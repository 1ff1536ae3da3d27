import Foundation
import Testing

@testable import CastscopeKit

@Suite("parsers/ definitions")
struct ParsersTests {
    @Test("every sample line of every format and vocabulary parses as declared")
    func samples() throws {
        let registry = try ParserRegistry.builtin()
        #expect(registry.formats.count >= 14)
        #expect(registry.vocabularies.count >= 6)
        let failures = SampleCheck.run(registry)
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        #expect(SampleCheck.count(registry) > 100)
    }

    @Test("the compiled-in definitions are the files in parsers/ (run `make generate` after editing)")
    func generatedIsFresh() throws {
        let dir = packageRoot.appendingPathComponent("parsers")
        let files = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "json" }
        let onDisk = Dictionary(uniqueKeysWithValues: try files.map { url -> (String, String) in
            let rel = String(url.path.dropFirst(dir.path.count + 1))
            return (rel, try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .newlines))
        })
        let compiled = Dictionary(uniqueKeysWithValues: BuiltinParsers.files.map { ($0.path, $0.text) })
        #expect(Set(onDisk.keys) == Set(compiled.keys))
        for (path, text) in onDisk { #expect(compiled[path] == text, "\(path) differs from the compiled-in copy") }
        // The names listed for completion without compiling are the compiled formats' names.
        #expect(ParserRegistry.builtinFormatNames.sorted() == (try ParserRegistry.builtin()).formats.map(\.name).sorted())
    }

    @Test("every table in parsers/tables/ parses, is named after its file, and gives its reader rows (they are not parsed at start)")
    func tablesParse() throws {
        let tables = BuiltinParsers.files.filter { $0.path.hasPrefix(BuiltinParsers.tablesFolder) }
        #expect(tables.count == 4)
        for file in tables {
            let name = String(file.path.dropFirst(BuiltinParsers.tablesFolder.count).dropLast(".json".count))
            let json = try #require(BuiltinParsers.table(name), "\(file.path)")
            #expect(json["table"]?.stringValue == name, "\(file.path)")
        }
        #expect(ZoneAbbreviations.offsets[Array("CEST".utf8)] == 7200)
        #expect(ZoneAbbreviations.offsets[Array("CST".utf8)] == nil)
        #expect(MonthNames.months[Array("marras".utf8)] == 11)
        #expect(IPSReport.terminationMeaning("Namespace SPRINGBOARD, Code 0x8BADF00D")?.hasPrefix("watchdog") == true)
        #expect(IPSReport.terminationMeaning("Namespace SIGNAL, Code 0x4") == nil)
        // Capitalized as older glibc wrote pt_BR's (`Out 23 16:48:59`, jibri#158), never over
        // another month's name (`Mar` stays March).
        #expect(MonthNames.months[Array("Out".utf8)] == 10)
        #expect(MonthNames.months[Array("Fev".utf8)] == 2)
        #expect(MonthNames.months[Array("Set".utf8)] == 9)
        #expect(MonthNames.months[Array("Mar".utf8)] == 3)
        #expect(ReplayKitErrors.table["-5803"] != nil)
    }

    @Test("every built-in vocabulary rule's anchor is 8 bytes or more: the readers' prefilter checks every (shortest − 3)-th byte")
    func anchorsKeepTheStride() throws {
        // `Thread {thread:int}: EXC_{reason}` (anchor `Thread `, 7 bytes) made the stride 4:
        // +17 % instructions on a noisy log show export.
        let registry = try ParserRegistry.builtin()
        for v in registry.vocabularies {
            for rule in v.rules {
                #expect(rule.pattern.anchor.count >= 8, "\(v.name): \(rule.pattern.source) (anchor '\(String(decoding: rule.pattern.anchor, as: UTF8.self))')")
            }
        }
        let matcher = EventMatcher(vocabularies: registry.vocabularies)
        #expect(matcher.prefilter.stride == 5)
    }

    @Test("a broken sample is reported with its file and sample number")
    func brokenSampleIsCaught() throws {
        var registry = try ParserRegistry.builtin()
        try registry.add(text: """
            {"name": "xcode", "kind": "lines", "patterns": ["{time:isotz} {process}[{pid:int}:{tid:hex}] {message}"],
             "continuation": "print", "priority": 20,
             "samples": [{"line": "2021-12-23 02:56:59.980625+0530 ClientMobile[12778:1168260] hi", "expect": {"pid": "1"}}]}
            """, origin: "user/xcode.json")
        let failures = SampleCheck.run(registry)
        #expect(failures == ["user/xcode.json: sample 1: pid is \"12778\", expected \"1\""])
    }

    @Test("a user directory adds a vocabulary and overrides a format by name")
    func userDirectory() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try """
            {"name": "my-relay", "sdk": "acme", "side": "extension",
             "rules": [{"event": "socket.connect_attempt", "match": "dialing host app"}],
             "samples": [{"message": "dialing host app", "event": "socket.connect_attempt"}]}
            """.write(to: dir.appendingPathComponent("acme.json"), atomically: true, encoding: .utf8)
        var registry = try ParserRegistry.builtin()
        let before = registry.vocabularies.count
        try registry.load(directory: dir.path)
        #expect(registry.vocabularies.count == before + 1)
        #expect(SampleCheck.run(registry).isEmpty)
        let log = dir.appendingPathComponent("x.log")
        try "dialing host app\ndialing host app\n".write(to: log, atomically: true, encoding: .utf8)
        let r = try castscope(["analyze", "--json", "--parsers", dir.path, log.path])
        let sessions = try #require(r.json?["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        #expect((sessions.first?["connect"] as? [String: Any])?["attempts"] as? Int == 2)
    }

    @Test("a definition error names the file")
    func definitionError() throws {
        var registry = ParserRegistry()
        #expect(throws: LogFormat.DefinitionError.self) {
            try registry.add(text: #"{"name": "x", "kind": "lines", "patterns": ["{oops"], "samples": [{"line": "a"}]}"#, origin: "d/x.json")
        }
        do {
            try registry.add(text: #"{"name": "x", "kind": "lines", "patterns": ["{t:nope}"], "samples": [{"line": "a"}]}"#, origin: "d/x.json")
        } catch {
            #expect("\(error)" == "d/x.json: unknown field type 'nope' in pattern \"{t:nope}\"")
        }
    }
}

@Suite("prefilter")
struct PrefilterTests {
    @Test("every vocabulary sample that maps to an event passes the prefilter, wherever it sits in a line")
    func neverDropsARecognizedMessage() throws {
        let registry = try ParserRegistry.builtin()
        let matcher = EventMatcher(vocabularies: registry.vocabularies)
        let prefilter = Prefilter(anchors: matcher.anchors)
        #expect(prefilter.isUseful && prefilter.stride > 1)
        for v in registry.vocabularies {
            for sample in v.samples where sample.event != nil {
                for pad in 0..<9 {
                    let line = "2026-03-12 10:15:02.104211+0100 0x2f1c4    Default     0x0   812    0    Ext: "
                        + String(repeating: "x", count: pad) + sample.message + String(repeating: " y", count: pad % 3)
                    let ok = Array(line.utf8).withUnsafeBytes { prefilter.mayMatch($0) }
                    #expect(ok, "\(sample.message) at pad \(pad)")
                    let bare = Array(sample.message.utf8).withUnsafeBytes { prefilter.mayMatch($0) }
                    #expect(bare, "\(sample.message) alone")
                }
            }
        }
        let noise = "2026-03-12 10:15:02.104211+0100 0x1a2 Default 0x0 0 0 kernel: memorystatus: set assertion priority(3) target"
        #expect(!Array(noise.utf8).withUnsafeBytes { prefilter.mayMatch($0) })
    }

    @Test("random anchor sets of every stride: the line scan says exactly whether an anchor occurs")
    func agreesWithSubstringSearch() throws {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("abcdeinorst :-_=[]0129AB".utf8)
        func text(_ n: Int) -> [UInt8] { (0..<n).map { _ in alphabet.randomElement(using: &rng)! } }
        func contains(_ hay: [UInt8], _ needle: [UInt8]) -> Bool {
            guard needle.count <= hay.count else { return false }
            for i in 0...(hay.count - needle.count) where hay[i..<(i + needle.count)].elementsEqual(needle) { return true }
            return false
        }
        var positives = 0
        for shortest in 4...14 {
            let anchors = (0..<12).map { k in text(k == 0 ? shortest : Int.random(in: shortest...24, using: &rng)) }
            let prefilter = Prefilter(anchors: anchors)
            #expect(prefilter.stride == min(8, shortest - 3))
            for trial in 0..<300 {
                var line = text(Int.random(in: 0...90, using: &rng))
                if trial % 2 == 0 {
                    let a = anchors.randomElement(using: &rng)!
                    line.insert(contentsOf: a, at: Int.random(in: 0...line.count, using: &rng))
                }
                if trial % 7 == 0, !line.isEmpty { line[Int.random(in: 0..<line.count, using: &rng)] = 0xC3 }
                let expected = anchors.contains { contains(line, $0) }
                positives += expected ? 1 : 0
                line.withUnsafeBytes { buf in
                    #expect(prefilter.mayMatch(buf) == expected, "stride \(prefilter.stride): \(String(decoding: line, as: UTF8.self))")
                }
            }
        }
        #expect(positives > 1000)
    }

    @Test("an adaptive prefilter moves anchors off windows that keep matching a daemon's words, and misses no anchor")
    func adaptsToCommonWords() throws {
        let anchors = ["IPCChannel returned error: ", "Received stop request", "client connection did close", "session "].map { Array($0.utf8) }
        let shared = Prefilter(anchors: anchors)
        let prefilter = shared.adaptive()
        var lines: [String] = []
        for i in 0..<6000 {
            lines.append("wl0: switched channel \(i); Received state update; client connection did change \(i % 7)")
            if i % 500 == 499 {
                let pad = String(repeating: "x", count: i % 11)
                lines.append(pad + "IPCChannel returned error: 5")
                lines.append(pad + "Received stop request " + pad)
                lines.append("client connection did close " + pad)
            }
        }
        let bytes = Array((lines.joined(separator: "\n") + "\n").utf8)
        let noSkip = UnsafeMutablePointer<Bool>.allocate(capacity: 256)
        noSkip.initialize(repeating: false, count: 256)
        defer { noSkip.deallocate() }
        func skim(_ prefilter: Prefilter) -> (stops: [String], skimmed: Int) {
            let skimmer = Skimmer(scanner: prefilter.scanner, skipFirstBytes: UnsafePointer(noSkip), probe: 0, skipsContinuations: false, stopsAtDumps: false,
                                  maxLineLength: 4096)
            var stops: [String] = []
            var skimmed = 0
            bytes.withUnsafeBytes { buffer in
                var at = 0
                while at < buffer.count {
                    let region = UnsafeRawBufferPointer(rebasing: buffer[at...])
                    let progress = skimmer.run(region, pendingIrrelevant: false)
                    // Every line it consumed holds no anchor.
                    let consumed = String(decoding: region[..<progress.bytes], as: UTF8.self)
                    #expect(!anchors.contains { consumed.contains(String(decoding: $0, as: UTF8.self)) })
                    skimmed += progress.lines
                    at += progress.bytes
                    // The line it stopped at goes to the full path (here: noted and passed over).
                    guard at < buffer.count, let nl = buffer[at...].firstIndex(of: 0x0A) else { break }
                    stops.append(String(decoding: buffer[at..<nl], as: UTF8.self))
                    at = nl + 1
                }
            }
            return (stops, skimmed)
        }
        let (stops, skimmed) = skim(prefilter)
        let anchorLines = lines.filter { l in anchors.contains { l.contains(String(decoding: $0, as: UTF8.self)) } }
        #expect(anchorLines.count == 36)
        #expect(anchorLines.allSatisfy(stops.contains))
        #expect(prefilter.demotions > 0)
        #expect(shared.demotions == 0)
        // Stops for lines without an anchor come only from demotions (each rechecks one line).
        #expect(stops.count - anchorLines.count <= prefilter.demotions)
        #expect(skimmed + stops.count == lines.count)

        // The reader of the next range of the same input takes it over, learning kept: it
        // misses no anchor either, and has (almost) nothing left to learn.
        let before = prefilter.demotions
        let again = skim(prefilter)
        #expect(anchorLines.allSatisfy(again.stops.contains))
        #expect(again.skimmed + again.stops.count == lines.count)
        #expect(again.stops.count - anchorLines.count <= prefilter.demotions - before)
        #expect(again.stops.count < stops.count)
    }

    @Test("certifying a buffer of many lines at once: nothing is missed before the point it reports")
    func certifyAgreesWithSubstringSearch() throws {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("abcdeinorst :-_=[]0129AB\n\n".utf8)
        func text(_ n: Int) -> [UInt8] { (0..<n).map { _ in alphabet.randomElement(using: &rng)! } }
        func occurs(_ hay: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
            guard needle.count <= hay.count else { return false }
            let h = Array(hay)
            for i in 0...(h.count - needle.count) where h[i..<(i + needle.count)].elementsEqual(needle) { return true }
            return false
        }
        var founds = 0
        var anchorsReported = 0
        for shortest in 4...12 {
            let anchors = (0..<10).map { k in text(k == 0 ? shortest : Int.random(in: shortest...20, using: &rng)).filter { $0 != 0x0A } }
                .filter { $0.count >= 4 }
            let prefilter = Prefilter(anchors: anchors)
            for trial in 0..<200 {
                var buffer = text(Int.random(in: 0...600, using: &rng))
                if trial % 3 == 0 { buffer.insert(contentsOf: anchors.randomElement(using: &rng)!, at: Int.random(in: 0...buffer.count, using: &rng)) }
                if trial % 5 == 0, !buffer.isEmpty { buffer[Int.random(in: 0..<buffer.count, using: &rng)] = 0xE2 }
                let bad = buffer.contains { $0 >= 0x80 } || anchors.contains { occurs(buffer[...], $0) }
                let (clean, found, anchor) = buffer.withUnsafeBytes { b in
                    b.baseAddress.map { prefilter.scanner.certify($0, from: 0, upTo: Int.max, end: b.count) } ?? (0, false, false)
                }
                #expect(found == bad, "stride \(prefilter.stride)")
                #expect(found || clean == buffer.count)
                // A reported anchor is one: an occurrence covers position `clean`.
                if anchor {
                    #expect(anchors.contains { a in
                        (max(0, clean - a.count + 1)...clean).contains { st in st + a.count <= buffer.count && buffer[st..<(st + a.count)].elementsEqual(a) }
                    })
                    anchorsReported += 1
                }
                let before = buffer[..<min(clean, buffer.count)]
                #expect(!before.contains { $0 >= 0x80 } && !anchors.contains { occurs(before, $0) })
                founds += found ? 1 : 0
            }
        }
        #expect(founds > 300)
        #expect(anchorsReported > 100)
    }
}

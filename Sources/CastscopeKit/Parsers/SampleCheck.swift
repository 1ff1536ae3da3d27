/// Runs the sample lines every definition carries (lnav's rule: samples are part of the
/// contract): each format sample must be detected as its format, be read so as a file too,
/// and parse to the declared fields; each vocabulary sample must map to the declared event and attributes (or to
/// none, when the sample declares no event) with all vocabularies in force.
public enum SampleCheck {
    public static func count(_ r: ParserRegistry) -> Int {
        r.formats.reduce(0) { $0 + $1.samples.count } + r.vocabularies.reduce(0) { $0 + $1.samples.count }
    }

    /// The fields of the first record of `text` read as `format`, as strings.
    public static func fields(of text: String, format: LogFormat) throws -> [String: String]? {
        let reader = RecordReader(format: format, lines: LineReader(source: MemorySource(text), path: "sample"))
        var out: [String: String]?
        try reader.run { rec in
            guard out == nil else { return }
            var f: [String: String] = [:]
            for field in RecordField.allCases { if let v = rec.string(field) { f[field.name] = v } }
            if let t = rec.time {
                f["time"] = Fmt.rfc3339(t.instant(defaultYear: 2000, defaultMonth: 1, defaultDay: 1, defaultOffset: 0),
                                        offset: t.offset ?? 0)
            }
            out = f
        }
        return out
    }

    /// `text` read as a file is (`Analyzer`, through the walker's own sources: a prefix
    /// common to every line, a terminal's width, …): nil when it is read as `format` with no
    /// line left unparsed. A sample's lines twice over, so that there are lines enough for
    /// those sources to act on (a layout whose every line begins with a TAB was taken for an
    /// indented paste: one line of it was read right, two were not).
    static func readAsFile(_ text: String, format: LogFormat, registry: ParserRegistry) -> String? {
        let analyzer: Analyzer
        do { analyzer = try Analyzer(registry: registry) } catch { return "as a file: \(error)" }
        analyzer.memoryInputs = ["sample": Array(text.utf8)]
        guard let input = analyzer.analyze(["sample"]).inputs.first(where: { $0.segmentOf == nil }) else { return "as a file: not read" }
        if input.format != format.name { return "as a file: read as \(input.format ?? "nothing"), not \(format.name)" }
        if input.stats.unparsed > 0 { return "as a file: \(input.stats.unparsed) of its lines not in that format" }
        return nil
    }

    public static func run(_ r: ParserRegistry) -> [String] {
        var failures: [String] = []
        let detector = FormatDetector(formats: r.formats)
        for format in r.formats {
            for (n, sample) in format.samples.enumerated() {
                let text = sample.lines.joined(separator: "\n") + "\n"
                let label = "\(format.origin): sample \(n + 1)"
                let detected = Array(text.utf8).withUnsafeBytes { detector.detect(head: $0) }
                if detected?.format.name != format.name {
                    failures.append("\(label): detected as \(detected?.format.name ?? "nothing"), not \(format.name)")
                }
                if let problem = readAsFile(text + text, format: format, registry: r) { failures.append("\(label): \(problem)") }
                do {
                    guard let got = try fields(of: text, format: format) else {
                        failures.append("\(label): no record")
                        continue
                    }
                    for (key, want) in sample.expect where got[key] != want {
                        failures.append("\(label): \(key) is \(got[key].map { "\"\($0)\"" } ?? "missing"), expected \"\(want)\"")
                    }
                } catch {
                    failures.append("\(label): \(error)")
                }
            }
        }
        let matcher = EventMatcher(vocabularies: r.vocabularies)
        for v in r.vocabularies {
            for (n, sample) in v.samples.enumerated() {
                let label = "\(v.origin): sample \(n + 1) \"\(sample.message)\""
                let hit = Array(sample.message.utf8).withUnsafeBytes { matcher.match($0, category: sample.category) }
                guard let want = sample.event else {
                    if let hit { failures.append("\(label): matched \(hit.rule.event), expected no event") }
                    continue
                }
                guard let hit else { failures.append("\(label): no event, expected \(want)"); continue }
                if hit.rule.event != want { failures.append("\(label): is \(hit.rule.event), expected \(want)") }
                for (key, value) in sample.attrs where !hit.attrs.contains(where: { $0 == (key, value) }) {
                    let got = hit.attrs.first(where: { $0.0 == key })?.1
                    failures.append("\(label): \(key) is \(got.map { "\"\($0)\"" } ?? "missing"), expected \"\(value)\"")
                }
            }
        }
        return failures
    }
}

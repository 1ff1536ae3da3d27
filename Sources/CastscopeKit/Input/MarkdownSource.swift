/// A Markdown file in a bundle (a ticket's `README.md`, notes, an issue saved as `.md`): its
/// logs are in code blocks and quotes, its prose and tables are about them. Prose lines are
/// given to the reader as empty lines (so line numbers stay the file's, and they are counted
/// skipped), so that a table quoting `didFinishWithError: … Code=-5808` makes no session.
///
/// With at least one fenced code block (```` ``` ```` or `~~~`), only the blocks' lines and
/// `>` quotes are read; without one, everything but table rows and headings (a log saved
/// with a `.md` name). A quote's markers (`> `, `>`, nested `> > `) come off its lines, and
/// what is quoted is Markdown too: a quote that holds a fenced block (GitHub's "Quote reply"
/// of a comment with a log, an e-mail reply) gives that block's lines and not its prose; a
/// quote without one gives all its lines (a quoted log). Before, the markers stayed on and
/// such a log was plain text, its times lost. A file over `limit` bytes is read as it is (it
/// is held whole while its fences are counted: notes are small, and memory must not follow a
/// big file).
public enum MarkdownSource {
    public static let limit = 4 << 20

    public static func isMarkdown(_ path: String) -> Bool {
        let lower = path.lowercased()
        return lower.hasSuffix(".md") || lower.hasSuffix(".markdown")
    }

    /// `source`'s text with its prose emptied (`codeOnly`), or, past `limit`, as it is.
    public static func open(_ source: ByteSource) throws -> ByteSource {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while bytes.count <= limit {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        // (read whole, `source` is at its end: it gives nothing after the prefix)
        return PrefixedSource(prefix: bytes.count > limit ? bytes : codeOnly(bytes), rest: source)
    }

    /// The text with prose lines emptied (their line breaks kept) and quote markers taken off:
    /// two passes over the lines, with no list of them (a file of newlines is as big in lines
    /// as in bytes); the first counts the fences, at the top level and in each run of quoted
    /// lines.
    static func codeOnly(_ bytes: [UInt8]) -> [UInt8] {
        func forEachLine(_ body: (ArraySlice<UInt8>, Bool) -> Void) {
            var start = 0
            while start < bytes.count {
                let nl = bytes[start...].firstIndex(of: 0x0A)
                body(bytes[start..<(nl ?? bytes.count)], nl != nil)
                start = (nl ?? bytes.count) + 1
            }
        }
        // Pass 1: is there a fence (top-level or quoted), and which quotes (runs of quoted
        // lines, numbered in order) hold one. A top-level block's lines are its own, `>` or not.
        var fenced = false
        var fencedQuotes = Set<Int>()
        do {
            var inBlock = false, quote = -1, inQuote = false
            forEachLine { line, _ in
                if inBlock {
                    if isFence(line) { inBlock = false }
                    inQuote = false
                    return
                }
                if let inner = quoted(line) {
                    if !inQuote { quote += 1; inQuote = true }
                    if isFence(inner) { fenced = true; fencedQuotes.insert(quote) }
                    return
                }
                inQuote = false
                if isFence(line) { fenced = true; inBlock = true }
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        // A fenced block's lines, held until it closes: an indentation all of them share (the
        // block indented under a list item or in an issue template's `<details>`, its fences
        // too) comes off, as it does off a pasted `.txt` (janus-gateway#3307's gdb lines kept
        // their two spaces in a ticket saved as `.md` and nothing was recognized).
        var block: [(ArraySlice<UInt8>, Bool)] = []
        func flush() {
            guard !block.isEmpty else { return }
            let cut = commonIndentation(block.map(\.0))
            for (line, newline) in block {
                out.append(contentsOf: line.count >= cut ? line.dropFirst(cut) : line[line.endIndex...])
                if newline { out.append(0x0A) }
            }
            block.removeAll(keepingCapacity: true)
        }
        var inBlock = false, quote = -1, inQuote = false, inQuotedBlock = false
        forEachLine { line, newline in
            var kept: ArraySlice<UInt8>? = nil
            if inBlock {
                if isFence(line) { inBlock = false } else { block.append((line, newline)); return }
                inQuote = false
            } else if let inner = quoted(line) {
                if !inQuote { quote += 1; inQuote = true; inQuotedBlock = false }
                if isFence(inner) {
                    inQuotedBlock.toggle()
                } else if inQuotedBlock {
                    block.append((inner, newline))
                    return
                } else if !fencedQuotes.contains(quote) {
                    kept = inner
                }
            } else {
                inQuote = false
                if isFence(line) {
                    inBlock = true
                } else if !fenced {
                    let t = indentStripped(line)
                    if !(t.first == UInt8(ascii: "|") || isHeading(t)) { kept = line }
                }
            }
            flush()
            if let kept { out.append(contentsOf: kept) }
            if newline { out.append(0x0A) }
        }
        flush()
        return out
    }

    /// The spaces (or tabs) every line that is not blank begins with, when there are two or
    /// more of them or one tab (a single space is a line's own); 0 otherwise.
    static func commonIndentation(_ lines: [ArraySlice<UInt8>]) -> Int {
        var common: ArraySlice<UInt8>?
        for line in lines {
            let body = line.last == 0x0D ? line.dropLast() : line
            guard body.contains(where: { $0 != 0x20 && $0 != 0x09 }) else { continue }
            let lead = body.prefix { $0 == 0x20 || $0 == 0x09 }
            guard let c = common else { common = lead; continue }
            let n = zip(c, lead).prefix { $0 == $1 }.count
            common = c.prefix(n)
            if n == 0 { return 0 }
        }
        guard let c = common, c.count >= 2 || c.first == 0x09 else { return 0 }
        return c.count
    }

    /// A quoted line's text without its markers (`>` and the space after it, up to three
    /// spaces before it, as often as the quote is nested), or nil for a line not quoted.
    static func quoted(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        var t = indentStripped(line)
        guard t.first == UInt8(ascii: ">") else { return nil }
        while t.first == UInt8(ascii: ">") {
            t = t.dropFirst()
            if t.first == 0x20 { t = t.dropFirst() }
            let next = indentStripped(t)
            if next.first == UInt8(ascii: ">") { t = next } else { break }
        }
        return t
    }

    /// Up to three spaces of indentation removed (Markdown's own limit for block markers).
    static func indentStripped(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var s = line
        var n = 0
        while n < 3, s.first == 0x20 { s = s.dropFirst(); n += 1 }
        return s
    }

    static func isFence(_ line: ArraySlice<UInt8>) -> Bool {
        let t = indentStripped(line)
        return t.starts(with: [0x60, 0x60, 0x60]) || t.starts(with: [0x7E, 0x7E, 0x7E])
    }

    /// `# Title` … `###### Title`.
    static func isHeading(_ t: ArraySlice<UInt8>) -> Bool {
        let hashes = t.prefix { $0 == UInt8(ascii: "#") }.count
        guard (1...6).contains(hashes) else { return false }
        let after = t.dropFirst(hashes)
        return after.isEmpty || after.first == 0x20 || after.first == 0x09 || after.first == 0x0D
    }
}

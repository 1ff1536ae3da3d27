/// A Markdown file in a bundle (a ticket's `README.md`, notes, an issue saved as `.md`): its
/// logs are in code blocks and quotes, its prose and tables are about them. Prose lines are
/// given to the reader as empty lines (so line numbers stay the file's, and they are counted
/// skipped), so that a table quoting `didFinishWithError: … Code=-5808` makes no session.
///
/// With at least one fenced code block (```` ``` ```` or `~~~`), only the blocks' lines and
/// `>` quotes are read; without one, everything but table rows and headings (a log saved
/// with a `.md` name). A file over `limit` bytes is read as it is (it is held whole while its
/// fences are counted: notes are small, and memory must not follow a big file).
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

    /// The text with prose lines emptied (their line breaks kept): two passes over the lines,
    /// with no list of them (a file of newlines is as big in lines as in bytes).
    static func codeOnly(_ bytes: [UInt8]) -> [UInt8] {
        func forEachLine(_ body: (ArraySlice<UInt8>, Bool) -> Void) {
            var start = 0
            while start < bytes.count {
                let nl = bytes[start...].firstIndex(of: 0x0A)
                body(bytes[start..<(nl ?? bytes.count)], nl != nil)
                start = (nl ?? bytes.count) + 1
            }
        }
        var fenced = false
        forEachLine { line, _ in if !fenced, isFence(line) { fenced = true } }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var inBlock = false
        forEachLine { line, newline in
            let keep: Bool
            if isFence(line) {
                inBlock.toggle()
                keep = false
            } else if inBlock {
                keep = true
            } else if fenced {
                keep = indentStripped(line).first == UInt8(ascii: ">")
            } else {
                let t = indentStripped(line)
                keep = !(t.first == UInt8(ascii: "|") || isHeading(t))
            }
            if keep { out.append(contentsOf: line) }
            if newline { out.append(0x0A) }
        }
        return out
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

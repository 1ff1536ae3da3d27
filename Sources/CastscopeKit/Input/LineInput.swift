/// The lines of a source, one at a time, each up to `maxBytes` (the rest of a longer line is
/// passed over): what a source that rewrites a paste line by line reads (`XcodeMetadataSource`,
/// `HardWrapSource`).
struct LineInput {
    let source: ByteSource
    let maxBytes: Int
    private var input = [UInt8](repeating: 0, count: 64 << 10)
    private var inPos = 0
    private var inEnd = 0
    private var line: [UInt8] = []
    private var ended = false

    init(_ source: ByteSource, maxBytes: Int) {
        self.source = source
        self.maxBytes = maxBytes
    }

    /// The next line, without its newline, and whether a newline ended it (the last line of a
    /// source may have none); nil at the end.
    mutating func next() throws -> (line: [UInt8], newline: Bool)? {
        guard !ended else { return nil }
        line.removeAll(keepingCapacity: true)
        while true {
            if inPos == inEnd {
                let n = try input.withUnsafeMutableBytes { try source.read(into: $0) }
                if n == 0 {
                    ended = true
                    return line.isEmpty ? nil : (line, false)
                }
                inPos = 0
                inEnd = n
            }
            if let nl = input[inPos..<inEnd].firstIndex(of: 0x0A) {
                keep(upTo: nl)
                inPos = nl + 1
                return (line, true)
            }
            keep(upTo: inEnd)
            inPos = inEnd
        }
    }

    private mutating func keep(upTo end: Int) {
        if line.count < maxBytes { line.append(contentsOf: input[inPos..<min(end, inPos + maxBytes - line.count)]) }
    }
}

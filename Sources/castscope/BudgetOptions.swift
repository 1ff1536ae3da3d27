import ArgumentParser
import CastscopeKit

/// `castscope analyze`'s limits on what a bundle may expand to (issue 12: hostile input).
struct BudgetOptions: ParsableArguments {
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Stop decompressing after this many bytes out of gzip, archives and streams in all (default 32G; K, M, G suffixes).", valueName: "bytes"))
    var maxBytes: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Stop after this many archive members in all (default 100000).", valueName: "n"))
    var maxMembers: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Archives inside archives at most this deep (default 8).", valueName: "n"))
    var maxNesting: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Stop reading a compressed file that expands more than this many times its size (default 1000).", valueName: "ratio"))
    var maxExpansion: UInt64?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Keep at most this many recognized lines per text file (default 4000000; memory ~36 bytes each).", valueName: "n"))
    var maxEvents: Int?

    func validate() throws {
        if let maxEvents, maxEvents < 1 { throw ValidationError("--max-events must be at least 1") }
        if let maxBytes, Self.bytes(maxBytes) == nil { throw ValidationError("--max-bytes must be a number of bytes above 0 (e.g. 500M, 4G), got '\(maxBytes)'") }
        if let maxMembers, maxMembers < 1 { throw ValidationError("--max-members must be at least 1") }
        if let maxNesting, maxNesting < 0 { throw ValidationError("--max-nesting must be 0 or more") }
        if let maxExpansion, maxExpansion < 1 { throw ValidationError("--max-expansion must be at least 1") }
    }

    static func bytes(_ s: String) -> UInt64? {
        var digits = Substring(s)
        var unit: UInt64 = 1
        switch s.last {
        case "K", "k": unit = 1 << 10
        case "M", "m": unit = 1 << 20
        case "G", "g": unit = 1 << 30
        default: break
        }
        if unit != 1 { digits = digits.dropLast() }
        guard let n = UInt64(digits), n > 0 else { return nil }
        let (v, overflow) = n.multipliedReportingOverflow(by: unit)
        return overflow ? nil : v
    }

    func resolve() -> Budget {
        var b = Budget()
        if let maxBytes, let v = Self.bytes(maxBytes) { b.maxBytes = v }
        if let maxMembers { b.maxMembers = maxMembers }
        if let maxNesting { b.maxNesting = maxNesting }
        if let maxExpansion { b.maxExpansion = maxExpansion }
        if let maxEvents { b.maxEventsPerFile = maxEvents }
        return b
    }
}

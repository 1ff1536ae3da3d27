#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The formats and vocabularies in force: the built-in ones (compiled in from `parsers/`)
/// plus any from a user directory, which add to them or replace them by name.
public struct ParserRegistry: Sendable {
    public var formats: [LogFormat] = []
    public var vocabularies: [Vocabulary] = []

    public init() {}

    /// The definitions compiled into the binary; without their samples unless `samples`
    /// (`castscope parsers --check` and the tests run them; nothing else reads them).
    public static func builtin(samples: Bool = true) throws -> ParserRegistry {
        var r = ParserRegistry()
        // (tables are read by the stage that uses them, when it first does: not parsed here)
        for (path, text) in BuiltinParsers.files where !path.hasPrefix(BuiltinParsers.tablesFolder) {
            try r.add(text: text, origin: "parsers/" + path, samples: samples)
        }
        return r
    }

    /// The built-in formats' names, without compiling anything (shell completion lists them
    /// on every run): each format's file is named after it (a test holds them to the registry).
    public static var builtinFormatNames: [String] {
        BuiltinParsers.files.compactMap { f in
            guard f.path.hasPrefix("formats/"), f.path.hasSuffix(".json") else { return nil }
            return String(f.path.dropFirst("formats/".count).dropLast(".json".count))
        }
    }

    /// Adds one definition: a vocabulary when it has "rules", a format otherwise.
    public mutating func add(text: String, origin: String, samples: Bool = true) throws {
        let json: JSONValue
        do { json = try JSONValue.parse(text, omitting: samples ? nil : "samples") } catch {
            throw LogFormat.DefinitionError(origin: origin, message: "\(error)")
        }
        if json["table"] != nil {
            // A data table (parsers/tables/): read by the stage that uses it, not a format.
            return
        }
        if json["rules"] != nil {
            let v = try Vocabulary(json: json, origin: origin, samples: samples)
            if let i = vocabularies.firstIndex(where: { $0.name == v.name }) { vocabularies[i] = v } else {
                vocabularies.append(v)
            }
        } else {
            let f = try LogFormat(json: json, origin: origin, samples: samples)
            if let i = formats.firstIndex(where: { $0.name == f.name }) { formats[i] = f } else { formats.append(f) }
        }
    }

    /// Loads every `*.json` below `directory` (sorted by path).
    public mutating func load(directory: String, samples: Bool = true) throws {
        var files: [String] = []
        // Each folder once (a symlink back to a folder being walked, two of them to `.`, was
        // walked exponentially: minutes and hundreds of MB before anything was said).
        var seen = Set<[UInt64]>()
        var problems: [(origin: String, message: String)] = []
        func walk(_ dir: String) {
            var st = stat()
            guard stat(dir, &st) == 0, seen.insert([UInt64(st.st_dev), UInt64(st.st_ino)]).inserted else { return }
            guard let d = opendir(dir) else {
                problems.append((dir, "cannot read folder: \(errnoText())"))
                return
            }
            defer { closedir(d) }
            while let ent = readdir(d) {
                let name = withUnsafeBytes(of: ent.pointee.d_name) { raw in
                    String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
                }
                if name.hasPrefix(".") { continue }
                let path = dir + "/" + name
                var st = stat()
                guard stat(path, &st) == 0 else { continue }
                if (st.st_mode & S_IFMT) == S_IFDIR {
                    walk(path)
                } else if name.hasSuffix(".json") {
                    // (a FIFO blocked the run for ever on its open, a device read without end:
                    // named, as an input folder names them)
                    if (st.st_mode & S_IFMT) == S_IFREG { files.append(path) } else {
                        problems.append((path, "not a regular file (a pipe, a device or a socket): not a definition"))
                    }
                }
            }
        }
        var st = stat()
        guard stat(directory, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
            throw LogFormat.DefinitionError(origin: directory, message: "not a directory")
        }
        walk(directory)
        if let first = problems.first { throw LogFormat.DefinitionError(origin: first.origin, message: first.message) }
        for path in files.sorted() {
            let source = try FileSource(path: path)
            let bytes = try readUpTo((4 << 20) + 1, from: source)
            // (a bigger file was cut and then called invalid JSON at its cut)
            guard bytes.count <= 4 << 20 else { throw LogFormat.DefinitionError(origin: path, message: "larger than 4 MB: not a definition") }
            try add(text: String(decoding: bytes, as: UTF8.self), origin: path, samples: samples)
        }
    }

    public func format(named name: String) -> LogFormat? { formats.first(where: { $0.name == name }) }
}

extension BuiltinParsers {
    static let tablesFolder = "tables/"

    /// A data table compiled in from `parsers/tables/NAME.json`, parsed; nil when absent or not
    /// JSON (a test checks every table parses).
    static func table(_ name: String) -> JSONValue? {
        let path = tablesFolder + name + ".json"
        guard let text = files.first(where: { $0.path == path })?.text else { return nil }
        return try? JSONValue.parse(text)
    }
}

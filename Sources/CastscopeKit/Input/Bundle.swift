#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the first bytes of a stream say it is.
public enum ContentKind: String, Sendable {
    case gzip, zip, tar, journal, text
    /// An Apple Unified Logging tracev3 file (header chunk 0x1000, 208 bytes).
    case tracev3
}

func sniff(_ head: [UInt8]) -> ContentKind {
    if head.count >= 2 && head[0] == 0x1F && head[1] == 0x8B { return .gzip }
    if head.count >= 4 && head[0] == 0x50 && head[1] == 0x4B
        && ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6))
    {
        return .zip
    }
    if head.count >= 262 && Array(head[257..<262]) == Array("ustar".utf8) { return .tar }
    if head.count >= 8 && Array(head[0..<8]) == Array("LPKSHHRH".utf8) { return .journal }
    if head.count >= 16 && head[0..<4] == [0x00, 0x10, 0x00, 0x00] && head[8..<16] == [0xD0, 0, 0, 0, 0, 0, 0, 0] { return .tracev3 }
    return .text
}

/// Walks every input path (files, folders, archives inside archives, `-` for stdin) and
/// hands each text member to `visit` as a stream with its display path
/// (`bundle.tar.gz!logs/app.zip!ext.log`). Problems go to `report` and the walk goes on.
public struct BundleWalker {
    public var maxNesting = 8
    public var visit: (String, ByteSource) throws -> Void
    /// Text files on disk (not members, not stdin), offered first: return true when handled
    /// (the analyzer reads big files in parallel ranges).
    public var visitFile: ((String, String) throws -> Bool)?
    public var report: (InputError) -> Void
    /// Binary journal files, handed over for sd-journal reading: the display path, the path on
    /// disk when the file is one (not an archive member or stdin), and the stream.
    public var journal: ((String, String?, ByteSource) throws -> Void)?
    /// Apple Unified Logging (Input/LogArchive.swift): a `.logarchive` folder (display path,
    /// folder on disk) — archive members are spilled to a private folder first — and tracev3
    /// files met on their own (display path, the path on disk when a file, the stream).
    public var logArchive: ((String, String) -> Void)?
    public var unifiedLog: ((String, String?, ByteSource) throws -> Void)?
    /// Apple diagnostic reports (`*.ips`): display path and the stream.
    public var ips: ((String, ByteSource) throws -> Void)?

    public init(visit: @escaping (String, ByteSource) throws -> Void,
                report: @escaping (InputError) -> Void)
    {
        self.visit = visit
        self.report = report
    }

    public func walk(_ paths: [String]) {
        for path in paths {
            if path == "-" {
                stream(FileSource(fd: 0, path: "-"), path: "<stdin>", depth: 0)
                continue
            }
            var visiting: [(UInt64, UInt64)] = []
            walkPath(path, display: path, visiting: &visiting)
        }
    }

    private func walkPath(_ path: String, display: String, visiting: inout [(UInt64, UInt64)]) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            report(InputError(path: display, "cannot open: \(errnoText())"))
            return
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            if let logArchive, isLogArchiveFolder(path) {
                logArchive(display, path)
                return
            }
            let key = (UInt64(st.st_dev), UInt64(st.st_ino))
            if visiting.contains(where: { $0 == key }) {
                report(InputError(path: display, "symlink loop (directory already being read), skipped"))
                return
            }
            visiting.append(key)
            defer { visiting.removeLast() }
            guard let dir = opendir(path) else {
                report(InputError(path: display, "cannot read folder: \(errnoText())"))
                return
            }
            var names: [String] = []
            while let ent = readdir(dir) {
                let name = withUnsafeBytes(of: ent.pointee.d_name) { raw in
                    String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
                }
                if name == "." || name == ".." || name.hasPrefix(".") { continue }
                names.append(name)
            }
            closedir(dir)
            for name in names.sorted() {
                let child = path.hasSuffix("/") ? path + name : path + "/" + name
                let childDisplay = display.hasSuffix("/") ? display + name : display + "/" + name
                walkPath(child, display: childDisplay, visiting: &visiting)
            }
            return
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return }
        do {
            let source = try FileSource(path: path)
            stream(source, path: display, depth: 0, diskPath: path)
        } catch let e as InputError {
            report(e)
        } catch {
            report(InputError(path: display, "\(error)"))
        }
    }

    /// Sniffs `source` and dispatches it: decompress, open as archive, or hand over as text.
    func stream(_ source: ByteSource, path: String, depth: Int, diskPath: String? = nil) {
        do {
            let head = try readUpTo(512, from: source)
            let replay = PrefixedSource(prefix: head, rest: source)
            let kind = sniff(head)
            if kind != .text && depth >= maxNesting {
                report(InputError(path: path, "archives nested more than \(maxNesting) deep, skipped"))
                return
            }
            switch kind {
            case .gzip:
                // Inflate with our own zlib stream, on another core, ahead of the parser; the
                // inflated bytes are sniffed again (text, a tar, a zip or a journal).
                stream(ReadAheadSource(try GzipSource(input: replay, path: path)), path: path, depth: depth + 1)
            case .zip, .tar:
                try readArchive(replay, path: path, depth: depth)
            case .journal:
                if let journal {
                    try journal(path, diskPath, replay)
                } else {
                    report(InputError(path: path, "binary journal file: not read by this build"))
                }
            case .tracev3:
                if let unifiedLog {
                    try unifiedLog(path, diskPath, replay)
                } else {
                    report(InputError(path: path, "Apple tracev3 file: not read by this build"))
                }
            case .text where ips != nil && path.hasSuffix(".ips"):
                try ips!(path, replay)
            case .text:
                if let diskPath, let visitFile, try visitFile(path, diskPath) { return }
                try visit(path, replay)
            }
        } catch let e as InputError {
            report(e)
        } catch {
            report(InputError(path: path, "\(error)"))
        }
    }

    private func readArchive(_ source: ByteSource, path: String, depth: Int) throws {
        let archive = try ArchiveReader(source: source, path: path)
        var spill = logArchive.map { LogArchiveSpill(archivePath: path, hand: $0) }
        defer { spill?.finish() }
        while true {
            let entry: ArchiveReader.Entry?
            do {
                entry = try archive.nextEntry()
            } catch let e as InputError {
                report(e)
                return
            }
            guard let entry else { return }
            guard entry.isRegularFile else { continue }
            let display = path + "!" + entry.name
            if isUnsafeMemberName(entry.name) {
                report(InputError(path: display, "unsafe member name (absolute or '..'), skipped"))
                continue
            }
            let base = entry.name.split(separator: "/").last.map(String.init) ?? entry.name
            if base.hasPrefix(".") || entry.name.hasPrefix("__MACOSX/") { continue }
            if spill != nil, try spill!.take(entry.name, archive.entrySource(displayPath: display)) { continue }
            stream(archive.entrySource(displayPath: display), path: display, depth: depth + 1)
        }
    }
}

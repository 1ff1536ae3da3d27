#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a folder is an Apple log archive: `*.logarchive`, or a copy of
/// `/var/db/diagnostics` (a `timesync` folder beside `Persist` or `Special`).
func isLogArchiveFolder(_ path: String) -> Bool {
    let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
    func isDir(_ p: String) -> Bool {
        var st = stat()
        return stat(p, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }
    // A folder named so that holds none of a log archive's parts is a folder (its text logs
    // were never read nor named).
    if trimmed.hasSuffix(".logarchive") {
        return isDir(trimmed + "/timesync") || isDir(trimmed + "/Persist") || isDir(trimmed + "/Special")
            || isDir(trimmed + "/Signpost") || isDir(trimmed + "/HighVolume") || access(trimmed + "/Info.plist", F_OK) == 0
    }
    return isDir(trimmed + "/timesync") && (isDir(trimmed + "/Persist") || isDir(trimmed + "/Special"))
}

/// Members of a `.logarchive` inside a tar or zip (a sysdiagnose): written to a private
/// temporary folder as they stream by (tracev3 files need their uuidtext, dsc and timesync,
/// which may come later in the archive), read as a folder when the archive ends, then removed.
/// Memory stays one copy buffer; the disk holds the log archive for the time of the read.
struct LogArchiveSpill {
    let archivePath: String
    let hand: (String, String) -> Void
    private var base: String?
    /// Log archive prefixes (member path up to `.logarchive`) in the order met, and their folders.
    private var archives: [(prefix: String, dir: String)] = []
    private var files: [String] = []
    private var dirs: [String] = []
    /// `dirs` as a set: 100,000 members in folders of their own made the walk quadratic (a
    /// 692 KB .tar.gz took over a minute).
    private var made: Set<String> = []

    init(archivePath: String, hand: @escaping (String, String) -> Void) {
        self.archivePath = archivePath
        self.hand = hand
    }

    /// Takes the member when it belongs to a log archive; returns whether it did.
    /// Errors name `display` (the member), not the temporary copy.
    mutating func take(_ name: String, _ source: ByteSource, display: String) throws -> Bool {
        let parts = name.split(separator: "/", omittingEmptySubsequences: true)
        guard let k = parts.firstIndex(where: { $0.hasSuffix(".logarchive") }), k < parts.count - 1 else { return false }
        let prefix = parts[0...k].joined(separator: "/")
        let dir: String
        if let a = archives.first(where: { $0.prefix == prefix }) {
            dir = a.dir
        } else {
            if base == nil {
                // (in the run's folder: removed with it on Ctrl-C)
                base = try TemporaryRoot.folder("logarchive")
            }
            dir = base! + "/" + String(archives.count)
            try makeDir(dir, display: display)
            archives.append((prefix, dir))
        }
        var path = dir
        for part in parts[(k + 1)...].dropLast() {
            path += "/" + part
            if !made.contains(path) { try makeDir(path, display: display) }
        }
        path += "/" + parts.last!
        try copy(source, to: path, display: display)
        return true
    }

    private mutating func makeDir(_ p: String, display: String) throws {
        if mkdir(p, 0o700) != 0 && errno != EEXIST {
            throw InputError(path: display, "cannot make a temporary folder to read it in: \(errnoText())")
        }
        dirs.append(p)
        made.insert(p)
    }

    private mutating func copy(_ source: ByteSource, to file: String, display: String) throws {
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw InputError(path: display, copyOpenFailed + errnoText()) }
        files.append(file)
        defer { close(fd) }
        do {
            try copyAll(source, to: fd, display: display)
        } catch {
            // A copy cut short (a full $TMPDIR) is this member's error alone: not read again
            // as a truncated file, a second and misleading error for it. A member the archive
            // ends inside (a sysdiagnose cut at a ticket's size limit) is kept as copied: its
            // tracev3 chunks before the cut are read, as a file's cut short on disk are (the
            // whole file was lost).
            if !inputEndedInside(error) {
                unlink(file)
                files.removeLast()
            }
            throw error
        }
    }

    /// Reads each spilled log archive, then removes every file and folder written.
    mutating func finish() {
        for a in archives { hand(archivePath + "!" + a.prefix, a.dir) }
        for f in files { unlink(f) }
        for d in dirs.reversed() { rmdir(d) }
        if let base {
            rmdir(base)
            TemporaryRoot.release()
        }
        archives = []
        files = []
        dirs = []
        made = []
        base = nil
    }
}

/// The files at a log archive folder's top that are none of its parts (its `Info.plist`,
/// `version.plist`, a live `logdata.LiveData.tracev3`, its folders), sorted: a text log or an
/// `.ips` a bundle put there.
func logArchiveStrays(_ root: String) -> [String] {
    (archiveFolderEntries(root) ?? []).map(\.name).filter { name in
        if name.hasSuffix(".plist") || name.hasSuffix(".tracev3") || name.hasSuffix(".timesync") { return false }
        var st = stat()
        return stat(root + "/" + name, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }
}

/// A log archive folder's entries but the hidden ones, with their `d_type`, sorted by name;
/// nil when it cannot be opened.
private func archiveFolderEntries(_ dir: String) -> [(name: String, type: UInt8)]? {
    guard let d = opendir(dir) else { return nil }
    var names: [(name: String, type: UInt8)] = []
    while let ent = readdir(d) {
        let name = withUnsafeBytes(of: ent.pointee.d_name) { String(cString: $0.baseAddress!.assumingMemoryBound(to: CChar.self)) }
        if name.hasPrefix(".") { continue }
        names.append((name, ent.pointee.d_type))
    }
    closedir(d)
    return names.sorted { $0.name < $1.name }
}

/// The tracev3 files under a folder, sorted by path.
func tracev3Files(under root: String, unreadable: (_ folder: String, _ why: String) -> Void = { _, _ in }) -> [String] {
    var out: [String] = []
    // (folders by device and inode: a symlinked `Persist` is followed, a loop is not)
    var seen = Set<[UInt64]>()
    var files = Set<[UInt64]>()
    func walk(_ dir: String, depth: Int) {
        guard depth < 6 else { return }
        var st = stat()
        if stat(dir, &st) == 0 {
            guard seen.insert([UInt64(st.st_dev), UInt64(st.st_ino)]).inserted else { return }
        }
        guard let names = archiveFolderEntries(dir) else {
            // (an unreadable `Persist` made the archive "empty", with no word of why)
            unreadable(dir, errnoText())
            return
        }
        for (name, type) in names {
            let p = dir + "/" + name
            var isDir = type == UInt8(DT_DIR)
            if type == UInt8(DT_LNK) || type == UInt8(DT_UNKNOWN) {
                // A symlink (a folder kept elsewhere) or a file system that does not say: asked.
                var target = stat()
                isDir = stat(p, &target) == 0 && (target.st_mode & S_IFMT) == S_IFDIR
            }
            if isDir {
                walk(p, depth: depth + 1)
            } else if name.hasSuffix(".tracev3") {
                // (one file reached twice, through a link or a hard link: read once; its every
                // entry was read twice)
                var st = stat()
                if stat(p, &st) == 0, !files.insert([UInt64(st.st_dev), UInt64(st.st_ino)]).inserted { continue }
                out.append(p)
            }
        }
    }
    walk(root, depth: 0)
    return out
}

/// The log archive folder a tracev3 file on disk sits in (up to three levels up), if any.
func logArchiveRoot(of file: String?) -> String? {
    guard var dir = file else { return nil }
    for _ in 0..<3 {
        guard let slash = dir.lastIndex(of: "/") else { return nil }
        dir = String(dir[..<slash])
        if dir.isEmpty { return nil }
        if isLogArchiveFolder(dir) { return dir }
    }
    return nil
}

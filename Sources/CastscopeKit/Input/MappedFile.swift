#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CCastscopeSignals

/// A file mapped read-only (tracev3 files are read from the mapping, not copied).
///
/// A mapped file cut short while it is read (a log rotated or truncated under castscope)
/// faults past its new end; the SIGBUS killed the whole run (exit 135), every other input with
/// it. `MappedFiles.guarded` installs a handler that puts a page of zeros there instead, as
/// journalctl does (sd-journal maps journal files too): the reader meets zeros, and `shrank`
/// tells the file's reader to say so.
final class MappedFile {
    let bytes: UnsafeRawBufferPointer
    let path: String
    private let length: Int

    init(path: String) throws {
        _ = MappedFiles.guarded
        self.path = path
        let fd = try openRegularFile(path)
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw InputError(path: path, "cannot stat: \(errnoText())") }
        length = Int(st.st_size)
        if length == 0 {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let p = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0), p != MAP_FAILED else {
            throw InputError(path: path, "cannot map: \(errnoText())")
        }
        bytes = UnsafeRawBufferPointer(start: p, count: length)
    }

    /// The file is shorter now than when it was mapped: what lay past its new end was read
    /// as zeros.
    var shrank: Bool {
        var st = stat()
        return stat(path, &st) == 0 && Int(st.st_size) < length
    }

    /// The error for a file that `shrank`, named as the report names it.
    func shrankError(display: String) -> InputError {
        InputError(path: display, "the file became shorter while it was read (rotated or truncated?): what lay past its new end was read as zeros")
    }

    deinit {
        if let p = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: p), length) }
    }
}

/// Opens a file of a log archive to read it, or throws: a FIFO there (`mkfifo`, or a link to
/// one) blocked `open` for ever and a link to a device (`/dev/zero`) was read without end, in
/// `analyze` and `show` alike (the folder walk passes over such files; the archive's own
/// reader opened its tracev3, timesync, uuidtext and dsc files by name). Opened without
/// blocking, and only a regular file is kept.
func openRegularFile(_ path: String) throws -> Int32 {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else { throw InputError(path: path, "cannot open: \(errnoText())") }
    var st = stat()
    guard fstat(fd, &st) == 0 else {
        let why = errnoText()
        close(fd)
        throw InputError(path: path, "cannot stat: \(why)")
    }
    guard (st.st_mode & S_IFMT) == S_IFREG else {
        close(fd)
        throw InputError(path: path, "not a regular file (a FIFO, a device or a socket): not read")
    }
    return fd
}

enum MappedFiles {
    /// The SIGBUS handler is in place (installed once, by the first mapped file or journal).
    static let guarded: Bool = ccastscope_install_sigbus() == 0
}

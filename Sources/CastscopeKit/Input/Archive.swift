
/// Streams the members of a tar / tar.gz / zip through libarchive, never extracting to disk.
///
/// The archive is read from any `ByteSource` (so an archive inside an archive is read from
/// its parent's entry stream). One `ArchiveReader` owns one `struct archive *`.
final class ArchiveReader {
    private let lib: LibArchive
    private let handle: OpaquePointer
    private let box: Unmanaged<CallbackBox>
    let path: String

    /// Holds the upstream source and the buffer libarchive reads from.
    final class CallbackBox {
        let source: ByteSource
        let buffer: UnsafeMutableRawBufferPointer
        var error: InputError?
        init(source: ByteSource) {
            self.source = source
            buffer = .allocate(byteCount: 256 * 1024, alignment: 16)
        }
        deinit { buffer.deallocate() }
    }

    init(source: ByteSource, path: String) throws {
        let lib: LibArchive
        switch LibArchive.shared {
        case .success(let l): lib = l
        case .failure(let why): throw InputError(path: path, "cannot read archives: \(why)")
        }
        guard let a = lib.readNew() else { throw InputError(path: path, "libarchive: out of memory") }
        _ = lib.supportFilterGzip(a)
        _ = lib.supportFilterBzip2(a)
        _ = lib.supportFilterXz(a)
        _ = lib.supportFormatTar(a)
        _ = lib.supportFormatGnutar(a)
        _ = lib.supportFormatZip(a)
        self.lib = lib
        handle = a
        self.path = path
        box = Unmanaged.passRetained(CallbackBox(source: source))
        let rc = lib.readOpen(a, box.toOpaque(), nil, archiveReadCallback, nil)
        if rc != LibArchive.ok {
            // Every stored property is set, so throwing runs `deinit`, which frees the handle
            // and releases the box: freeing them here too was a double free (exit 139 on a
            // 512-byte tar with a bad checksum).
            throw box.takeUnretainedValue().error
                ?? InputError(path: path, "not a readable archive: \(Self.message(lib, a))")
        }
    }

    deinit {
        _ = lib.readFree(handle)
        box.release()
    }

    static func message(_ lib: LibArchive, _ a: OpaquePointer) -> String {
        lib.errorString(a).map { String(cString: $0) } ?? "unknown libarchive error"
    }

    struct Entry {
        var name: String
        var isRegularFile: Bool
        var size: Int64?
    }

    /// The next member header, or nil at the end. Throws on a damaged archive.
    func nextEntry() throws -> Entry? {
        var entry: OpaquePointer?
        let rc = lib.readNextHeader(handle, &entry)
        if rc == LibArchive.eof { return nil }
        if rc < LibArchive.warn || entry == nil {
            throw box.takeUnretainedValue().error
                ?? InputError(path: path, "damaged archive: \(Self.message(lib, handle))")
        }
        let name = lib.entryPathname(entry).map { String(cString: $0) } ?? ""
        let type = lib.entryFiletype(entry) & 0o170000
        let size = lib.entrySizeIsSet(entry) != 0 ? lib.entrySize(entry) : nil
        return Entry(name: name, isRegularFile: type == 0o100000, size: size)
    }

    /// The current member's data as a stream; valid until `nextEntry()` is called again.
    func entrySource(displayPath: String) -> ByteSource {
        EntrySource(reader: self, path: displayPath)
    }

    final class EntrySource: ByteSource {
        let reader: ArchiveReader
        let path: String
        private(set) var consumedOffset: UInt64 = 0
        init(reader: ArchiveReader, path: String) {
            self.reader = reader
            self.path = path
        }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let n = reader.lib.readData(reader.handle, buffer.baseAddress, buffer.count)
            if n < 0 {
                throw reader.box.takeUnretainedValue().error
                    ?? InputError(path: path, offset: consumedOffset,
                                  "damaged archive member: \(ArchiveReader.message(reader.lib, reader.handle))")
            }
            consumedOffset += UInt64(n)
            return n
        }
    }
}

/// True when an archive member name could escape the bundle (absolute, or a `..` component).
func isUnsafeMemberName(_ name: String) -> Bool {
    if name.hasPrefix("/") { return true }
    return name.split(separator: "/", omittingEmptySubsequences: false).contains("..")
}

/// libarchive's read callback: pulls the next chunk from the upstream `ByteSource`.
private func archiveReadCallback(
    _ archive: OpaquePointer?, _ client: UnsafeMutableRawPointer?, _ bufOut: UnsafeMutablePointer<UnsafeRawPointer?>?
) -> Int {
    let box = Unmanaged<ArchiveReader.CallbackBox>.fromOpaque(client!).takeUnretainedValue()
    do {
        let n = try box.source.read(into: box.buffer)
        bufOut?.pointee = UnsafeRawPointer(box.buffer.baseAddress)
        return n
    } catch let e as InputError {
        box.error = e
        return -1
    } catch {
        return -1
    }
}

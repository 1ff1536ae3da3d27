#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// libarchive, opened when the first archive is met. Most runs read no archive, and linking
/// it loads libarchive with libxml2, ICU, nettle, lzma, zstd, ... at every start of the
/// program: 1.2 ms of a ~10 ms start (`perf stat -r 40`: an empty C program 0.48 ms of task
/// clock, linked against libarchive 1.65 ms). The handles are libarchive 3's C ABI as
/// archive.h declares it: opaque pointers, `ARCHIVE_*` status codes, the read callback.
/// (The tests still link it through `CCastscopeArchive`, to write archives.)
struct LibArchive {
    typealias ReadCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<UnsafeRawPointer?>?) -> Int

    static let ok: Int32 = 0
    static let eof: Int32 = 1
    static let warn: Int32 = -20
    /// A header that could not be read (a tar block with a bad checksum): reading on may work.
    static let retry: Int32 = -10

    let readNew: @convention(c) () -> OpaquePointer?
    let supportFilterGzip: @convention(c) (OpaquePointer?) -> Int32
    let supportFilterBzip2: @convention(c) (OpaquePointer?) -> Int32
    let supportFilterXz: @convention(c) (OpaquePointer?) -> Int32
    let supportFormatTar: @convention(c) (OpaquePointer?) -> Int32
    let supportFormatGnutar: @convention(c) (OpaquePointer?) -> Int32
    let supportFormatZip: @convention(c) (OpaquePointer?) -> Int32
    /// The zip reader that reads the central directory (a zip on disk, `ArchiveReader.zipLinks`):
    /// the streamed one never sees it, and a member's mode (a symbolic link) is only there.
    let supportFormatZipSeekable: (@convention(c) (OpaquePointer?) -> Int32)?
    /// archive_read_open_filename(a, path, block size)
    let readOpenFilename: (@convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int) -> Int32)?
    /// One unnamed member: the bytes a compression filter gives (a lone `.xz`, `.bz2`, `.zst`).
    let supportFormatRaw: @convention(c) (OpaquePointer?) -> Int32
    /// Filters a libarchive may be built without (nil then: such a file is said not readable).
    let supportFilterZstd: (@convention(c) (OpaquePointer?) -> Int32)?
    let supportFilterLz4: (@convention(c) (OpaquePointer?) -> Int32)?
    let supportFilterLzma: (@convention(c) (OpaquePointer?) -> Int32)?
    /// archive_read_open(a, client, open callback, read callback, close callback)
    let readOpen: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeRawPointer?, ReadCallback?, UnsafeRawPointer?) -> Int32
    let readNextHeader: @convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    /// archive_read_data_block(a, &buff, &size, &offset): the member's next block as
    /// libarchive holds it (no copy), with its offset in the member (a sparse member's holes
    /// are the gaps). Not archive_read_data: it copies several blocks into the caller's buffer
    /// and, when one fails, returns only the error, the bytes copied before it lost with it.
    let readDataBlock: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeRawPointer?>?, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<Int64>?) -> Int32
    let readFree: @convention(c) (OpaquePointer?) -> Int32
    let errorString: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    let entryPathname: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    let entrySize: @convention(c) (OpaquePointer?) -> Int64
    let entrySizeIsSet: @convention(c) (OpaquePointer?) -> Int32
    let entryFiletype: @convention(c) (OpaquePointer?) -> mode_t
    /// A symbolic link member's target (NULL for any other member).
    let entrySymlink: (@convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?)?
    /// Whether a member's data is encrypted (libarchive 3.2 and later).
    let entryIsDataEncrypted: (@convention(c) (OpaquePointer?) -> Int32)?
    /// Where the last header read began, in the archive's (decompressed) bytes.
    let readHeaderPosition: (@convention(c) (OpaquePointer?) -> Int64)?
    /// The format of the archive being read (`ARCHIVE_FORMAT_ZIP` is 0x50000), known once a
    /// header is read.
    let format: (@convention(c) (OpaquePointer?) -> Int32)?
    static let formatZip: Int32 = 0x50000
    /// `ARCHIVE_FORMAT_TAR` and its variants (ustar, pax, GNU): 0x30000 in the high bits.
    static let formatTar: Int32 = 0x30000
    /// How many filters the reader runs, the "none" filter counted (1: the bytes are read as
    /// they come, no decompression inside libarchive).
    let filterCount: (@convention(c) (OpaquePointer?) -> Int32)?
    /// archive_filter_bytes(a, 0): how far the format has read the (decompressed) bytes.
    let filterBytes: (@convention(c) (OpaquePointer?, Int32) -> Int64)?
    /// archive_read_data_skip(a): past the rest of the member's data (only in its data).
    let readDataSkip: (@convention(c) (OpaquePointer?) -> Int32)?
    /// archive_read_set_options(a, "module:option,…"): the tar reader's
    /// `read_concatenated_archives` (read on past an end-of-archive block, as `tar -i`).
    let readSetOptions: (@convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32)?

    /// The library, or why it could not be opened (once per process).
    static let shared: Result<LibArchive, LoadError> = load()

    struct LoadError: Error, CustomStringConvertible {
        var description: String
    }

    #if canImport(Darwin)
    static let names = ["/usr/lib/libarchive.2.dylib", "libarchive.2.dylib", "libarchive.dylib"]
    #else
    static let names = ["libarchive.so.13", "libarchive.so"]
    #endif

    /// A UTF-8 character type for the thread reading headers (nil where there is none).
    /// libarchive converts a name it is told is UTF-8 (a zip member with general-purpose bit
    /// 11, as Python's zipfile, Java and Windows write non-ASCII names; a PAX name) to the
    /// current locale's character set, and a program that never called `setlocale` is in the
    /// C locale, which has no `ü`: the conversion failed and the name came back NULL, so every
    /// such member was named `bundle.zip!`, their ids the same. Per thread (`uselocale`), so the
    /// rest of the process keeps its locale.
    nonisolated(unsafe) private static let utf8Locale: locale_t? = {
        for name in ["C.UTF-8", "C.utf8", "en_US.UTF-8", "UTF-8"] {
            if let l = newlocale(Int32(LC_CTYPE_MASK), name, nil) { return l }
        }
        return nil
    }()

    /// Runs `body` with a UTF-8 character type on this thread (libarchive's header reading).
    static func withUTF8Names<R>(_ body: () throws -> R) rethrows -> R {
        guard let l = utf8Locale, let old = uselocale(l) else { return try body() }
        defer { uselocale(old) }
        return try body()
    }

    private static func load() -> Result<LibArchive, LoadError> {
        var handle: UnsafeMutableRawPointer?
        var why = ""
        for name in names {
            handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)
            if handle != nil { break }
            why = dlerror().map { String(cString: $0) } ?? name
        }
        guard let handle else { return .failure(LoadError(description: "libarchive not found (\(why))")) }
        // Each symbol's type is the field's it initializes.
        func symbol<T>(_ name: String) throws -> T {
            guard let p = dlsym(handle, name) else { throw LoadError(description: "libarchive lacks \(name)") }
            return unsafeBitCast(p, to: T.self)
        }
        func optional<T>(_ name: String) -> T? {
            dlsym(handle, name).map { unsafeBitCast($0, to: T.self) }
        }
        do {
            return .success(try LibArchive(
                readNew: symbol("archive_read_new"),
                supportFilterGzip: symbol("archive_read_support_filter_gzip"),
                supportFilterBzip2: symbol("archive_read_support_filter_bzip2"),
                supportFilterXz: symbol("archive_read_support_filter_xz"),
                supportFormatTar: symbol("archive_read_support_format_tar"),
                supportFormatGnutar: symbol("archive_read_support_format_gnutar"),
                supportFormatZip: symbol("archive_read_support_format_zip"),
                supportFormatZipSeekable: optional("archive_read_support_format_zip_seekable"),
                readOpenFilename: optional("archive_read_open_filename"),
                supportFormatRaw: symbol("archive_read_support_format_raw"),
                supportFilterZstd: optional("archive_read_support_filter_zstd"),
                supportFilterLz4: optional("archive_read_support_filter_lz4"),
                supportFilterLzma: optional("archive_read_support_filter_lzma"),
                readOpen: symbol("archive_read_open"),
                readNextHeader: symbol("archive_read_next_header"),
                readDataBlock: symbol("archive_read_data_block"),
                readFree: symbol("archive_read_free"),
                errorString: symbol("archive_error_string"),
                entryPathname: symbol("archive_entry_pathname"),
                entrySize: symbol("archive_entry_size"),
                entrySizeIsSet: symbol("archive_entry_size_is_set"),
                entryFiletype: symbol("archive_entry_filetype"),
                entrySymlink: optional("archive_entry_symlink"),
                entryIsDataEncrypted: optional("archive_entry_is_data_encrypted"),
                readHeaderPosition: optional("archive_read_header_position"),
                format: optional("archive_format"),
                filterCount: optional("archive_filter_count"),
                filterBytes: optional("archive_filter_bytes"),
                readDataSkip: optional("archive_read_data_skip"),
                readSetOptions: optional("archive_read_set_options")))
        } catch let e as LoadError {
            return .failure(e)
        } catch {
            return .failure(LoadError(description: "\(error)"))
        }
    }
}

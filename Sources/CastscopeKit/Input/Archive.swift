#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Streams the members of a tar / tar.gz / zip through libarchive, never extracting to disk.
///
/// The archive is read from any `ByteSource` (so an archive inside an archive is read from
/// its parent's entry stream). One `ArchiveReader` owns one `struct archive *`.
final class ArchiveReader {
    private let lib: LibArchive
    /// The handle and its source: replaced when a tar is read on past a header libarchive
    /// cannot read on from (`resync`).
    private var handle: OpaquePointer
    private var box: Unmanaged<CallbackBox>
    let path: String
    /// Where this handle's bytes begin in the archive (not 0 after a `resync`).
    private var base: UInt64 = 0
    /// Headers read on past (`resync`), bounded.
    private var resyncs = 0
    /// Where the header being read begins, in a tar read as it comes (`readHeader`): libarchive
    /// does not say so once a header has failed (its position calls refuse a failed reader).
    private var headerAt: UInt64?
    /// The handle read a member header last and may be in its data.
    private var inData = false
    static let maxResyncs = 4096

    /// Holds the upstream source and the buffer libarchive reads from.
    final class CallbackBox {
        let source: ByteSource
        let buffer: UnsafeMutableRawBufferPointer
        var error: InputError?
        /// Bytes read from `source` so far.
        var consumed: UInt64 = 0
        /// `source` came to its end.
        var ended = false
        /// Bytes of `buffer` the last read gave (libarchive reads in place from it).
        var lastCount = 0
        init(source: ByteSource, consumed: UInt64 = 0) {
            self.source = source
            self.consumed = consumed
            buffer = .allocate(byteCount: 256 * 1024, alignment: 16)
        }
        deinit { buffer.deallocate() }
    }

    /// The compression read as one stream, or nil: a tar or zip's members.
    let compressed: Compression?
    /// What damaged data is called in an error ("archive member", "xz data").
    var what: String { compressed.map { "\($0.rawValue) data" } ?? "archive member" }

    /// `compressed` names a compression (`Compression`) whose output is read as one stream
    /// (`decompressed`); nil reads a tar or zip's members.
    init(source: ByteSource, path: String, compressed: Compression? = nil) throws {
        let lib: LibArchive
        switch LibArchive.shared {
        case .success(let l): lib = l
        case .failure(let why): throw InputError(path: path, "cannot read \(compressed.map { "\($0.rawValue) data" } ?? "archives"): \(why)")
        }
        if compressed == .zstd && lib.supportFilterZstd == nil || compressed == .lz4 && lib.supportFilterLz4 == nil
            || compressed == .lzma && lib.supportFilterLzma == nil
        {
            throw InputError(path: path, "cannot read \(compressed!.rawValue) data: this libarchive has no \(compressed!.rawValue) filter")
        }
        guard let a = Self.newHandle(lib, compressed: compressed) else { throw InputError(path: path, "libarchive: out of memory") }
        self.compressed = compressed
        self.lib = lib
        handle = a
        self.path = path
        box = Unmanaged.passRetained(CallbackBox(source: source))
        let rc = LibArchive.withUTF8Names { lib.readOpen(a, box.toOpaque(), nil, archiveReadCallback, nil) }
        if rc != LibArchive.ok {
            // Every stored property is set, so throwing runs `deinit`, which frees the handle
            // and releases the box: freeing them here too was a double free (exit 139 on a
            // 512-byte tar with a bad checksum).
            let box = box.takeUnretainedValue()
            if let e = box.error { throw e }
            let why = Self.message(lib, a)
            // (cut before its first output buffer filled, 64 KB: said as the cut it is)
            if box.ended, compressed != nil, Self.saysTruncated(why) {
                throw InputError(path: path, offset: box.consumed, "\(what) cut short: the file ends before a first part of it could be decompressed: nothing read")
            }
            // (compressed data says how far it was read, as a damage later in it does: an xz or
            // zstd file damaged in its first block named no byte)
            throw InputError(path: path, offset: compressed == nil ? nil : box.consumed, "not readable \(compressed == nil ? "as an archive" : what): \(why)")
        }
    }

    deinit {
        _ = lib.readFree(handle)
        box.release()
    }

    /// A read handle with the filters and formats castscope reads.
    private static func newHandle(_ lib: LibArchive, compressed: Compression?) -> OpaquePointer? {
        guard let a = lib.readNew() else { return nil }
        // Filters by name only: libarchive's "all" also runs outside programs (lrzip, lzop,
        // grzip) on their magic bytes, which a hostile file must not start.
        _ = lib.supportFilterGzip(a)
        _ = lib.supportFilterBzip2(a)
        _ = lib.supportFilterXz(a)
        _ = lib.supportFilterLzma?(a)
        _ = lib.supportFilterZstd?(a)
        _ = lib.supportFilterLz4?(a)
        if compressed != nil {
            _ = lib.supportFormatRaw(a)
        } else {
            _ = lib.supportFormatTar(a)
            _ = lib.supportFormatGnutar(a)
            _ = lib.supportFormatZip(a)
        }
        return a
    }

    /// After a tar member header libarchive cannot read on from (a size field negative or
    /// past 64 bits, a damaged long name or pax header: "Tar entry has negative size"), the
    /// members after it are read from the next 512-byte block that is a header with a right
    /// checksum, as GNU tar's "Skipping to next header" does: they were all lost, with one
    /// error for the archive. The damaged member's own data is passed over. True when a
    /// header was found (the handle is then a new one, from there); false at the archive's
    /// end, or for what cannot be read on from (a zip, data decompressed inside libarchive,
    /// a cut, the source's own error).
    private func resync(_ why: String) throws -> Resync {
        let old = box.takeUnretainedValue()
        guard compressed == nil, old.error == nil, !(old.ended && Self.saysTruncated(why)), resyncs < Self.maxResyncs, readsTarAsItComes
        else { return .cannot }
        resyncs += 1
        guard let header = headerAt else { return .cannot }
        let next = try scanForHeader(from: header + 512)
        let number = resyncs
        if number <= 32 {
            let more = number == 32 ? " (more damaged headers in this archive are not named)" : ""
            onDamagedHeader?(InputError(path: path, offset: header,
                                        "damaged member header (\(why)): \(next.map { "read on from the next member header, at byte \($0.at)" } ?? "no member header follows it")\(more)"))
        }
        guard let next else { return .ended }
        return open(at: next.at, next.bytes)
    }

    /// After the tar's end-of-archive block: the rest of the file is read, as `tar -i` does,
    /// for a header after it (two tars joined, `cat a.tar b.tar`, a bundle appended to with
    /// `tar czf - x >> bundle.tgz`; a zeroed block between two members), whose members were
    /// lost without a word. Nothing is said of what follows the end if it holds no header
    /// (a tar padded to its record, a newline, junk). Reading to the end also reads a
    /// `.tar.gz`'s gzip trailer, so that its CRC is checked (a flipped byte went unsaid).
    private func readOnAfterEnd() throws -> Resync {
        guard compressed == nil, box.takeUnretainedValue().error == nil, resyncs < Self.maxResyncs, readsTarAsItComes,
            let bytes = lib.filterBytes, case let position = bytes(handle, 0), position >= 0
        else { return .cannot }
        resyncs += 1
        guard let next = try scanForHeader(from: base + UInt64(position)) else { return .ended }
        return open(at: next.at, next.bytes)
    }

    /// The handle reads a tar as libarchive takes it from the source (no filter of its own),
    /// so that its bytes are the source's.
    private var readsTarAsItComes: Bool {
        guard let format = lib.format, format(handle) & 0x7FFF_0000 == LibArchive.formatTar, let filters = lib.filterCount else { return false }
        return filters(handle) == 1
    }

    /// The first 512-byte block at or after `from` (rounded up to a block) that is a tar header,
    /// and the bytes from it that were read; nil at the source's end. The bytes after what
    /// libarchive used are the last read's, still in the box's buffer; the rest is the source's.
    private func scanForHeader(from: UInt64) throws -> (at: UInt64, bytes: [UInt8])? {
        let old = box.takeUnretainedValue()
        let inBuffer = old.consumed - UInt64(old.lastCount)
        var at = max(from, inBuffer)
        at += (512 - at % 512) % 512
        var pending: [UInt8] = at < old.consumed
            ? Array(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(old.buffer)[Int(at - inBuffer)..<old.lastCount]))
            : []
        var cursor = 0
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            while pending.count - cursor < 512 {
                let n = try chunk.withUnsafeMutableBytes { try old.source.read(into: $0) }
                if n == 0 { break }
                if cursor > 1 << 20 {
                    pending.removeFirst(cursor)
                    cursor = 0
                }
                pending.append(contentsOf: chunk[..<n])
            }
            guard pending.count - cursor >= 512 else { return nil }
            if pending.withUnsafeBytes({ Self.isTarHeader(UnsafeRawBufferPointer(rebasing: $0[cursor..<cursor + 512])) }) {
                return (at, Array(pending[cursor...]))
            }
            cursor += 512
            at += 512
        }
    }

    /// A new handle in place of the old one, reading from `bytes` (at `at` in the archive) and
    /// then the rest of the source.
    private func open(at: UInt64, _ bytes: [UInt8]) -> Resync {
        let old = box.takeUnretainedValue()
        let source = PrefixedSource(prefix: bytes, rest: old.source)
        guard let a = Self.newHandle(lib, compressed: nil) else { return .cannot }
        let next = Unmanaged.passRetained(CallbackBox(source: source, consumed: at))
        let rc = LibArchive.withUTF8Names { lib.readOpen(a, next.toOpaque(), nil, archiveReadCallback, nil) }
        _ = lib.readFree(handle)
        box.release()
        handle = a
        box = next
        base = at
        inData = false
        return rc == LibArchive.ok ? .resumed : .cannot
    }

    enum Resync {
        /// A new handle reads from the next header.
        case resumed
        /// No header follows the damaged one (said): the archive's members end there.
        case ended
        /// Not a tar read as it comes: the damage is the archive's error.
        case cannot
    }

    /// Whether a 512-byte block is a tar header: a name, and the checksum field's octal value
    /// the sum of its bytes, the field itself read as spaces (unsigned, or signed as old tars
    /// summed).
    static func isTarHeader(_ block: UnsafeRawBufferPointer) -> Bool {
        guard block.count == 512, block[0] != 0 else { return false }
        var unsigned = 0
        var signed = 0
        for k in 0..<512 {
            let b = (148..<156).contains(k) ? 0x20 : block[k]
            unsigned += Int(b)
            signed += Int(Int8(bitPattern: b))
        }
        var value = 0
        var digits = 0
        for k in 148..<156 {
            let b = block[k]
            if b == 0x20 && digits == 0 { continue }
            guard (0x30...0x37).contains(b) else { break }
            value = value * 8 + Int(b - 0x30)
            digits += 1
        }
        guard digits > 0, value == unsigned || value == signed else { return false }
        // (and one libarchive reads: ustar's magic, or an old tar's type and octal mode; a
        // block that only sums right was read on from, and libarchive refused it)
        if block[257] == UInt8(ascii: "u"), block[258] == UInt8(ascii: "s"), block[259] == UInt8(ascii: "t"),
            block[260] == UInt8(ascii: "a"), block[261] == UInt8(ascii: "r")
        {
            return true
        }
        let type = block[156]
        guard type == 0 || (0x30...0x37).contains(type) else { return false }
        return (100..<107).allSatisfy { block[$0] == 0x20 || block[$0] == 0 || (0x30...0x37).contains(block[$0]) }
    }

    static func message(_ lib: LibArchive, _ a: OpaquePointer) -> String {
        let text = lib.errorString(a).map { String(cString: $0) } ?? "unknown libarchive error"
        return text.split(separator: " ").joined(separator: " ")
    }

    /// The error for data that cannot be read on. A member's offset is in the member's bytes;
    /// compressed data's is in the file, as far as it was read (what gzip's errors give), with
    /// what was decompressed before it.
    func damaged(path: String, produced: UInt64) -> InputError {
        let why = Self.message(lib, handle)
        let box = box.takeUnretainedValue()
        // A file cut short (a download or a ticket's size limit): libarchive's words for it
        // ("Truncated tar archive", "ZIP decompression failed (-5)", "Lzma library error: No
        // progress is possible") said neither that nor what was kept.
        if box.ended && Self.saysTruncated(why) {
            if compressed == nil {
                return InputError(path: path, offset: produced,
                                  "cut short: the archive ends inside this member (at byte \(box.consumed) of the archive): its \(produced) bytes before the cut are read")
            }
            return InputError(path: path, offset: box.consumed,
                              "\(what) cut short: the file ends inside it: the \(produced) bytes decompressed before the cut are read")
        }
        if compressed == nil { return InputError(path: path, offset: produced, "damaged archive member: \(why)") }
        return InputError(path: path, offset: box.consumed,
                          "damaged \(what): \(why) (\(produced) bytes decompressed before it)")
    }

    /// Whether libarchive's message is its way of saying the data stopped (with the source at
    /// its end, a cut): tar and zip "Truncated …", zlib's and liblzma's "no progress" errors
    /// (Z_BUF_ERROR, -5; LZMA_BUF_ERROR), bzip2, zstd and lz4's "truncated … input".
    static func saysTruncated(_ message: String) -> Bool {
        let m = message.lowercased()
        return m.contains("truncated") || m.contains("no progress is possible") || m.hasSuffix("decompression failed (-5)")
    }

    struct Entry {
        var name: String
        var isRegularFile: Bool
        var size: Int64?
        /// A zip member written with a password: its data cannot be read.
        var isEncrypted = false
        /// A symbolic link's target (the member is a link, not a file; never followed).
        var symlink: String?
        /// What a member that holds no data is ("a FIFO", "a character device", …): nil for
        /// files, folders, links and hard links.
        var special: String?
    }

    /// A damaged member header the reader passed over (libarchive's `ARCHIVE_RETRY`: a tar
    /// block whose checksum fails), once per run of them, before the member after it: that
    /// member's lines are lost, and were lost with no word before session 43.
    var onDamagedHeader: ((InputError) -> Void)?

    /// Member headers read so far (a member whose name cannot be read is named by its number).
    private var headers = 0

    /// How the data of the last member read failed, if it did: damaged in the archive, or the
    /// source under the archive broke off (a gzip cut short: the error is the source's).
    enum MemberFailure { case damaged, upstream }
    fileprivate(set) var memberFailed: MemberFailure?

    /// The next member header, or nil at the end. Throws on a damaged archive.
    func nextEntry() throws -> Entry? {
        try LibArchive.withUTF8Names { try nextEntryReadingNames() }
    }

    /// The next header from the handle. In a tar read as it comes, the member before is
    /// skipped first, so that where the header begins is known (`headerAt`) should it fail.
    private func readHeader(_ entry: inout OpaquePointer?) -> Int32 {
        headerAt = nil
        if inData, readsTarAsItComes, let skip = lib.readDataSkip, let bytes = lib.filterBytes {
            let rc = skip(handle)
            inData = false
            if rc < LibArchive.warn { return rc }
            headerAt = base + UInt64(max(0, bytes(handle, 0)))
        } else if !inData, let bytes = lib.filterBytes {
            // (the first header of a handle; the one after a header that failed is not asked:
            // a failed handle refuses the position calls)
            let at = bytes(handle, 0)
            if at >= 0 { headerAt = base + UInt64(at) }
        }
        let rc = lib.readNextHeader(handle, &entry)
        inData = rc == LibArchive.ok || rc == LibArchive.warn
        return rc
    }

    private func nextEntryReadingNames() throws -> Entry? {
        var entry: OpaquePointer?
        var rc = readHeader(&entry)
        // (read on from the next header after one libarchive cannot read on from: `resync`)
        reading: while rc < LibArchive.warn && rc != LibArchive.retry && memberFailed == nil && box.takeUnretainedValue().error == nil {
            switch try resync(Self.message(lib, handle)) {
            case .resumed: rc = readHeader(&entry)
            case .ended: return nil
            case .cannot: break reading
            }
        }
        var retries = 0
        while rc == LibArchive.retry {
            if retries == 0 {
                let at = lib.readHeaderPosition.map { base + UInt64(max(0, $0(handle))) }
                onDamagedHeader?(InputError(path: path, offset: at, "damaged member header, skipped to the next member that can be read: \(Self.message(lib, handle))"))
            }
            retries += 1
            // (a damaged block is passed over 512 bytes at a time: a long run is no archive)
            if retries > 1 << 20 { throw InputError(path: path, "damaged archive: no member header can be read") }
            rc = readHeader(&entry)
        }
        let failed = memberFailed
        memberFailed = nil
        // (zero blocks end a tar, not its file: `readOnAfterEnd`)
        while rc == LibArchive.eof {
            guard case .resumed = try readOnAfterEnd() else { return nil }
            rc = readHeader(&entry)
            while rc == LibArchive.retry { rc = readHeader(&entry) }
        }
        if rc < LibArchive.warn || entry == nil {
            // The member before was cut where the source ended, or by the source's own error,
            // and said so with the byte: that is the one error (a cut .tar.gz said it twice
            // and counted a second input).
            if failed == .upstream && box.takeUnretainedValue().error != nil
                || failed == .damaged && box.takeUnretainedValue().ended
            {
                return nil
            }
            let box = box.takeUnretainedValue()
            // A zip cut right after a member's data (a download stopped before the central
            // directory): libarchive gives no reason, and the error read "damaged archive:
            // unknown libarchive error", without a byte, as if nothing could be read.
            if box.error == nil, box.ended, headers > 0, lib.errorString(handle) == nil {
                throw InputError(path: path, offset: box.consumed,
                                 "the archive ends after member \(headers), where another member or its directory should follow (cut short?): the members before were read")
            }
            // (cut inside a member's header: "damaged archive: Truncated tar archive" named
            // neither the cut nor what was kept)
            if box.error == nil, box.ended, Self.saysTruncated(Self.message(lib, handle)) {
                throw InputError(path: path, offset: box.consumed,
                                 "cut short: the archive ends inside the header of its member \(headers + 1)\(headers == 1 ? ": the member before it was read" : headers > 1 ? ": the \(headers) members before it were read" : "")")
            }
            throw box.error
                ?? InputError(path: path, "damaged archive: \(Self.message(lib, handle))")
        }
        headers += 1
        let isZip = lib.format.map { $0(handle) & 0x7FFF_0000 == LibArchive.formatZip } ?? false
        let name = lib.entryPathname(entry).flatMap { Self.memberName(UnsafeRawBufferPointer(start: $0, count: strlen($0)), zip: isZip) }
            // (never empty: an empty name made every such member `bundle.zip!`, one id for all)
            ?? "\u{FFFD}member \(headers) (its name cannot be read)"
        let type = lib.entryFiletype(entry) & 0o170000
        let size = lib.entrySizeIsSet(entry) != 0 ? lib.entrySize(entry) : nil
        let encrypted = lib.entryIsDataEncrypted.map { $0(entry) == 1 } ?? false
        // (a link's target is read only for a link: no cost to the other members)
        let symlink = type == 0o120000
            ? lib.entrySymlink?(entry).flatMap { Self.memberName(UnsafeRawBufferPointer(start: $0, count: strlen($0)), zip: isZip) } ?? "?"
            : nil
        return Entry(name: name, isRegularFile: type == 0o100000, size: size, isEncrypted: encrypted, symlink: symlink,
                     special: specialFileName(type))
    }

    /// The symbolic links of a zip on disk, by member name (their targets), read from its
    /// central directory, at most `limit`; empty when it has none or cannot be read so (a zip
    /// cut short has no central directory). The streamed reader never sees the central
    /// directory, where a member's mode is (Info-ZIP's `zip -y`, macOS's Archive Utility and
    /// `ditto` store a link as its target's path with the link's mode), so a link was read as
    /// a one-line file holding that path.
    static func zipLinks(atPath path: String, limit: Int) -> [String: String] {
        guard case .success(let lib) = LibArchive.shared, let seekable = lib.supportFormatZipSeekable,
            let open = lib.readOpenFilename, let symlink = lib.entrySymlink, let a = lib.readNew()
        else { return [:] }
        defer { _ = lib.readFree(a) }
        _ = seekable(a)
        return LibArchive.withUTF8Names {
            var links: [String: String] = [:]
            guard open(a, path, 64 * 1024) == LibArchive.ok else { return links }
            var entry: OpaquePointer?
            var read = 0
            while read < limit, case let rc = lib.readNextHeader(a, &entry), rc == LibArchive.ok || rc == LibArchive.warn, let e = entry {
                read += 1
                guard lib.entryFiletype(e) & 0o170000 == 0o120000, let target = symlink(e), let name = lib.entryPathname(e),
                    let member = Self.memberName(UnsafeRawBufferPointer(start: name, count: strlen(name)), zip: true)
                else { continue }
                links[member] = Self.memberName(UnsafeRawBufferPointer(start: target, count: strlen(target)), zip: true) ?? "?"
            }
            return links
        }
    }

    /// A member's name from the bytes libarchive gives: UTF-8 when they are (a name flagged
    /// UTF-8 reaches here as such, `LibArchive.withUTF8Names`); otherwise, in a zip, code page
    /// 437, as the zip specification says of names without the flag (DOS and older Windows
    /// tools), and in a tar ISO 8859-1. Both map every byte to its own character, so two
    /// members' names that differ stay different (U+FFFD for each bad byte made `J\xFCrgen` and
    /// `J\xE4rgen` one name). Nil for no bytes.
    static func memberName(_ bytes: UnsafeRawBufferPointer, zip: Bool) -> String? {
        guard !bytes.isEmpty else { return nil }
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var out = String.UnicodeScalarView()
        for b in bytes {
            if b < 0x80 || !zip {
                out.append(Unicode.Scalar(b))
            } else {
                out.append(cp437High[Int(b) - 0x80])
            }
        }
        return String(out)
    }

    /// Code page 437's characters for bytes 0x80–0xFF.
    private static let cp437High = Array("ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{A0}".unicodeScalars)

    /// The current member's data as a stream; valid until `nextEntry()` is called again.
    func entrySource(displayPath: String) -> ByteSource {
        EntrySource(reader: self, path: displayPath)
    }

    final class EntrySource: ByteSource {
        let reader: ArchiveReader
        let path: String
        private(set) var consumedOffset: UInt64 = 0
        /// What is left of the block libarchive gave last, and its offset in the member.
        private var block: UnsafeRawPointer?
        private var blockLeft = 0
        private var blockOffset: UInt64 = 0
        private var atEnd = false
        /// The error met with the block before it (or with none): thrown once that is handed on.
        private var damage: Error?
        init(reader: ArchiveReader, path: String) {
            self.reader = reader
            self.path = path
        }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            guard let out = buffer.baseAddress, buffer.count > 0 else { return 0 }
            while true {
                // A hole of a sparse member reads as zeros, as archive_read_data gives it.
                if blockOffset > consumedOffset {
                    let n = Int(min(UInt64(buffer.count), blockOffset - consumedOffset))
                    out.initializeMemory(as: UInt8.self, repeating: 0, count: n)
                    consumedOffset += UInt64(n)
                    return n
                }
                if blockLeft > 0, let from = block {
                    let n = min(buffer.count, blockLeft)
                    out.copyMemory(from: from, byteCount: n)
                    block = from + n
                    blockLeft -= n
                    blockOffset += UInt64(n)
                    consumedOffset += UInt64(n)
                    return n
                }
                if let damage { throw damage }
                if atEnd { return 0 }
                var from: UnsafeRawPointer?
                var size = 0
                var offset: Int64 = 0
                let rc = reader.lib.readDataBlock(reader.handle, &from, &size, &offset)
                if rc == LibArchive.eof {
                    // (at the member's size: a sparse member's trailing hole, zeros to its end)
                    atEnd = true
                    blockOffset = max(UInt64(max(0, offset)), consumedOffset)
                    continue
                }
                let got = from != nil && size > 0
                if rc < LibArchive.ok {
                    // Thrown after the bytes before it (this block's, if it came with one): the
                    // last blocks of a member cut short were lost with the error.
                    let upstream = reader.box.takeUnretainedValue().error
                    let produced = consumedOffset + UInt64(got ? size : 0)
                    // (the compressed file under the archive broke off inside this member, a
                    // `.tar.gz` cut short: its error names that file's byte; the member too)
                    damage = upstream.map { e -> Error in
                        var e = e
                        e.message += " (inside the member \(path), after its first \(produced) bytes)"
                        return e
                    } ?? reader.damaged(path: path, produced: produced)
                    reader.memberFailed = upstream == nil ? .damaged : .upstream
                    guard got else { continue }
                }
                (block, blockLeft) = got ? (from, size) : (nil, 0)
                blockOffset = max(UInt64(max(0, offset)), consumedOffset)
            }
        }
    }
}

/// Compressions other than gzip (which has its own inflater, `GzipSource`), read through
/// libarchive's filters: a rotated `syslog.1.xz`, a bundle re-packed as `.tar.xz`, `.tar.bz2`,
/// `.tar.zst`. Their output is sniffed again like an inflated gzip.
enum Compression: String, Sendable {
    case xz, bzip2, zstd, lz4
    /// lzma-alone (`lzma`, `xz --format=lzma`): xz's predecessor.
    case lzma

    /// The magic numbers at the start of a stream.
    static func sniff(_ head: [UInt8]) -> Compression? {
        if head.starts(with: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return .xz }
        if head.starts(with: [0x28, 0xB5, 0x2F, 0xFD]) { return .zstd }
        // (a skippable frame first: pzstd's output; the lz4 legacy frame: `lz4 -l`, the kernel's)
        if head.count >= 4, head[0] & 0xF0 == 0x50, head[1...3].elementsEqual([0x2A, 0x4D, 0x18]) { return .zstd }
        if head.starts(with: [0x04, 0x22, 0x4D, 0x18]) || head.starts(with: [0x02, 0x21, 0x4C, 0x18]) { return .lz4 }
        // lzma-alone: the default properties byte, a dictionary size of 64 KB or more
        if head.count >= 13, head[0] == 0x5D, head[1] == 0, head[2] == 0, head[4] == 0 || head[4] == 0x01 || head[4] == 0x02 || head[4] == 0x04 || head[4] == 0x08 || head[4] == 0x10 || head[4] == 0x20 || head[4] == 0x40 || head[4] == 0x80 {
            return .lzma
        }
        // "BZh", the block size '1'...'9', then a block's magic (pi) or the end of an empty stream's (sqrt pi)
        if head.count >= 10, head.starts(with: [0x42, 0x5A, 0x68]), (0x31...0x39).contains(head[3]),
            head[4..<10].elementsEqual([0x31, 0x41, 0x59, 0x26, 0x53, 0x59]) || head[4..<10].elementsEqual([0x17, 0x72, 0x45, 0x38, 0x50, 0x90])
        {
            return .bzip2
        }
        return nil
    }
}

/// The decompressed bytes of an `.xz` / `.bz2` / `.zst` / `.lz4` stream.
func decompressed(_ source: ByteSource, path: String, _ compression: Compression) throws -> ByteSource {
    // (an xz or zstd file's bytes after its data are kept from the filter: `CompressedEndSource`)
    let end = compression == .xz || compression == .zstd ? CompressedEndSource(source, path: path, kind: compression) : nil
    let reader = try ArchiveReader(source: end ?? source, path: path, compressed: compression)
    guard try reader.nextEntry() != nil else { throw InputError(path: path, "\(compression.rawValue) data: empty") }
    let entry = reader.entrySource(displayPath: path)
    return end.map { TrailingSaidSource(entry, end: $0) } ?? entry
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
        box.consumed += UInt64(n)
        box.lastCount = n
        if n == 0 { box.ended = true }
        bufOut?.pointee = UnsafeRawPointer(box.buffer.baseAddress)
        return n
    } catch let e as InputError {
        box.error = e
        return -1
    } catch {
        return -1
    }
}

#if canImport(Glibc)
import CCastscopeMalloc
import Synchronization
#endif

/// Gives the pages of freed heap blocks back to the system once a session is seen to grow
/// for hours.
///
/// A session that retries for hours grows its columns of times and line numbers by doubling
/// (`Event.foldIn`, `ConnectAttempts`): each growth frees the old block, and glibc keeps the
/// freed blocks' pages (it raises its mmap threshold to the size of the first big block freed,
/// so the next ones come from the heap). Ten hours of retrying peaked at 75 MB, 40 of it live.
/// When such a column first reaches `from` lines, blocks of a megabyte or more are mapped from
/// then on (and unmapped when freed), and at each doubling `malloc_trim` returns the free
/// pages in the middle of the heap too (`madvise`). A bundle of ordinary sessions never gets
/// here: its allocator is left as it is (a fixed threshold costs every big buffer page faults).
enum FreedMemory {
    static let from = 1 << 15

    /// Called with a column's new count: acts when it is a power of two from `from` on (the
    /// column has just moved to a block twice as big).
    @inline(__always) static func grew(to count: Int) {
        guard count >= from, count & (count - 1) == 0 else { return }
        giveBack()
    }

    #if canImport(Glibc)
    private static let mapsBigBlocks = Atomic<Bool>(false)
    #endif

    static func giveBack() {
        #if canImport(Glibc)
        if !mapsBigBlocks.exchange(true, ordering: .relaxed) { _ = mallopt(ccastscope_m_mmap_threshold, 1 << 20) }
        _ = malloc_trim(0)
        #endif
    }
}

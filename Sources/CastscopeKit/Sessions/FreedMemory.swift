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
    /// The anonymous resident megabytes at which `watch` gives back next.
    private static let nextLevel = Atomic<Int>(watchFrom)
    #endif

    /// Anonymous resident memory from which `watch` gives freed pages back.
    static let watchFrom = 32

    /// Called now and then by a stage that holds many sessions (once per range read): once the
    /// process's anonymous memory passes `watchFrom` megabytes, and again at each 16 more, the
    /// freed blocks' pages go back (`giveBack`). Thousands of sessions open at once grow and
    /// free their lists by doubling on every thread, and glibc kept ~15 MB of freed blocks
    /// (5,000 open extension sessions: 94 MB resident, 79 MB once given back). Runs that stay
    /// small never get here (a fixed mmap threshold costs big buffers page faults).
    static func watch() {
        #if canImport(Glibc)
        guard let anon = Resident.anonymousMegabytes(), anon >= nextLevel.load(ordering: .relaxed) else { return }
        nextLevel.store(anon + 16, ordering: .relaxed)
        giveBack()
        #endif
    }

    static func giveBack() {
        #if canImport(Glibc)
        if !mapsBigBlocks.exchange(true, ordering: .relaxed) { _ = mallopt(ccastscope_m_mmap_threshold, 1 << 20) }
        _ = malloc_trim(0)
        #endif
    }
}

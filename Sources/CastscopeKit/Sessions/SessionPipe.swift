#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Items handed from one thread to threads that work on them, finished in the order they were
/// handed: sessions from the thread that builds them to those that finish them (their
/// findings, and the report's bytes for them), so that building the next sessions and writing
/// the last ones go on at once; a big file's events from its readers to the thread that builds
/// sessions. At most `capacity` items, weighing at most `maxWeight` in all (a session's folded
/// frame runs can stand for tens of thousands of lines), wait: memory stays with the open
/// sessions when the receiving side is slower.
///
/// Each item is `prepare`d on one of `workers` threads (with more than one, several items at
/// once, in no order), then `commit`ted in the order handed, one at a time, by whichever worker
/// finds it next in line (nobody waits for an earlier item: its worker commits the later ones
/// that are ready). Prepared items waiting for their turn count towards `capacity` (the items
/// being prepared, one per worker, do not: with one worker, as before). The workers are woken once
/// `wakeAfter` items wait (or the sender would wait, or the pipe closes): a wake-up per item
/// costs more than a small item's work.
final class OrderedPipe<Item, Done>: @unchecked Sendable {
    /// Taken items leave their slot (nil), so that the receiver holds the only reference.
    private var waiting: [(item: Item?, weight: Int)] = []
    private var head = 0
    private var weight = 0
    private var closed = false
    /// Items taken, and items committed, since the start: a worker's item is the `taken`-th,
    /// and it is committed when `committed` comes to it.
    private var taken = 0
    private var committed = 0
    /// Prepared items whose turn has not come, by their place in the order.
    private var ready: [Int: Done] = [:]
    private var committing = false
    private var senderWaits = false
    private let capacity: Int
    private let maxWeight: Int
    private let wakeAfter: Int
    private let weigh: (Item) -> Int
    private let commit: (consuming Done) -> Void
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Items to take (the workers wait on it), and room to put (the sender does).
    private let itemsWait = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let roomWait = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var workers: [Worker<Void>] = []

    init(capacity: Int, maxWeight: Int, weigh: @escaping (Item) -> Int, workers: Int = 1, wakeAfter: Int = 1,
         prepare: @escaping (consuming Item) -> Done, commit: @escaping (consuming Done) -> Void)
    {
        self.capacity = max(1, capacity)
        self.maxWeight = maxWeight
        self.wakeAfter = max(1, min(wakeAfter, capacity))
        self.weigh = weigh
        self.commit = commit
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(itemsWait, nil)
        pthread_cond_init(roomWait, nil)
        self.workers = (0..<max(1, workers)).map { _ in
            Worker { [self] in
                while let (ticket, item) = self.next() { self.finished(ticket, prepare(item)) }
            }
        }
    }

    deinit {
        pthread_cond_destroy(itemsWait)
        pthread_cond_destroy(roomWait)
        pthread_mutex_destroy(mutex)
        itemsWait.deallocate()
        roomWait.deallocate()
        mutex.deallocate()
    }

    /// Items waiting to be taken or to be committed (under the lock).
    private var held: Int { waiting.count - head + ready.count }

    /// Hands an item on (waits while the pipe is full; an empty pipe takes any item).
    /// (`s` is taken, not copied: the receiver then holds the only reference to what it holds,
    /// and changes it in place, not a copy of it.)
    func put(_ s: consuming Item) {
        let n = weigh(s)
        pthread_mutex_lock(mutex)
        while held > 0 && (held >= capacity || weight + n > maxWeight) {
            // The workers may be asleep short of `wakeAfter`.
            pthread_cond_broadcast(itemsWait)
            senderWaits = true
            pthread_cond_wait(roomWait, mutex)
        }
        waiting.append((s, n))
        weight += n
        if waiting.count - head >= wakeAfter { pthread_cond_broadcast(itemsWait) }
        pthread_mutex_unlock(mutex)
    }

    /// The next item and its place in the order, or nil once the pipe is closed and empty.
    private func next() -> (Int, Item)? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while head == waiting.count && !closed { pthread_cond_wait(itemsWait, mutex) }
        guard head < waiting.count else { return nil }
        let n = waiting[head].weight
        let s = waiting[head].item.take()!
        head += 1
        weight -= n
        // Taken items leave the list (it would otherwise hold every one while the sender
        // stays ahead).
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 16 {
            waiting.removeFirst(head)
            head = 0
        }
        taken += 1
        wakeSender()
        return (taken - 1, s)
    }

    /// Lets a sender waiting for room try again (under the lock).
    private func wakeSender() {
        guard senderWaits else { return }
        senderWaits = false
        pthread_cond_signal(roomWait)
    }

    /// A prepared item: committed with those after it that are ready, when its turn has come
    /// and no other worker is committing (that one then commits it).
    private func finished(_ ticket: Int, _ done: consuming Done) {
        pthread_mutex_lock(mutex)
        ready[ticket] = done
        guard !committing else {
            pthread_mutex_unlock(mutex)
            return
        }
        committing = true
        while let d = ready.removeValue(forKey: committed) {
            pthread_mutex_unlock(mutex)
            commit(consume d)
            pthread_mutex_lock(mutex)
            committed += 1
        }
        committing = false
        wakeSender()
        pthread_mutex_unlock(mutex)
    }

    /// No more items: waits until every one handed on was worked on.
    func finish() {
        pthread_mutex_lock(mutex)
        closed = true
        pthread_cond_broadcast(itemsWait)
        pthread_mutex_unlock(mutex)
        for w in workers { w.join() }
        workers = []
    }
}

extension OrderedPipe where Done == Item {
    /// `work` runs on the pipe's own thread, once per item, in order.
    convenience init(capacity: Int, maxWeight: Int, weigh: @escaping (Item) -> Int, work: @escaping (consuming Item) -> Void) {
        self.init(capacity: capacity, maxWeight: maxWeight, weigh: weigh, prepare: { $0 }, commit: work)
    }
}

/// A session with its findings and what the sink made of it on a finishing thread.
struct FinishedSession {
    var session: Session
    var findings: [Finding]
    var prepared: Any?
}

/// Sessions to the threads that finish them, weighed by the log lines they stand for.
typealias SessionPipe = OrderedPipe<Session, FinishedSession>

extension OrderedPipe where Item == Session, Done == FinishedSession {
    /// Woken 8 sessions at a time (a small session's findings and bytes cost less than waking
    /// a thread for it).
    convenience init(capacity: Int = 64, maxLines: Int = 1 << 16, workers: Int = 1,
                     prepare: @escaping (Session) -> FinishedSession, commit: @escaping (FinishedSession) -> Void)
    {
        self.init(capacity: capacity, maxWeight: maxLines, weigh: { s in
            var n = 0
            for i in s.events.indices { n += s.events[i].count }
            return n
        }, workers: workers, wakeAfter: 8, prepare: prepare, commit: commit)
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Items handed from one thread to one thread that works on them, in the order they were
/// handed: sessions from the thread that builds them to the one that finishes them (their
/// findings, and the report's bytes for them), so that building the next sessions and writing
/// the last ones go on at once, on two cores; a big file's events from its readers to the
/// thread that builds sessions. At most `capacity` items, weighing at most `maxWeight` in all
/// (a session's folded frame runs can stand for tens of thousands of lines), wait: memory
/// stays with the open sessions when the receiving side is slower.
final class OrderedPipe<Item>: @unchecked Sendable {
    /// Taken items leave their slot (nil), so that the receiver holds the only reference.
    private var waiting: [(item: Item?, weight: Int)] = []
    private var head = 0
    private var weight = 0
    private var closed = false
    private let capacity: Int
    private let maxWeight: Int
    private let weigh: (Item) -> Int
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var worker: Worker<Void>?

    /// `work` runs on the pipe's own thread, once per item, in order.
    init(capacity: Int, maxWeight: Int, weigh: @escaping (Item) -> Int, work: @escaping (consuming Item) -> Void) {
        self.capacity = max(1, capacity)
        self.maxWeight = maxWeight
        self.weigh = weigh
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
        worker = Worker { [self] in
            while let s = self.next() { work(consume s) }
        }
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    /// Hands an item on (waits while the pipe is full; an empty pipe takes any item).
    func put(_ s: Item) {
        let n = weigh(s)
        pthread_mutex_lock(mutex)
        while waiting.count > head && (waiting.count - head >= capacity || weight + n > maxWeight) {
            pthread_cond_wait(changed, mutex)
        }
        waiting.append((s, n))
        weight += n
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }

    /// The next item, or nil once the pipe is closed and empty.
    private func next() -> Item? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while head == waiting.count && !closed { pthread_cond_wait(changed, mutex) }
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
        pthread_cond_broadcast(changed)
        return s
    }

    /// No more items: waits until every one handed on was worked on.
    func finish() {
        pthread_mutex_lock(mutex)
        closed = true
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
        worker?.join()
        worker = nil
    }
}

/// Sessions to the thread that finishes them, weighed by the log lines they stand for.
typealias SessionPipe = OrderedPipe<Session>

extension OrderedPipe where Item == Session {
    convenience init(capacity: Int = 64, maxLines: Int = 1 << 16, work: @escaping (Session) -> Void) {
        self.init(capacity: capacity, maxWeight: maxLines, weigh: { s in
            var n = 0
            for i in s.events.indices { n += s.events[i].count }
            return n
        }, work: work)
    }
}

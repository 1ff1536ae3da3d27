#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sessions handed from the thread that builds them to one thread that finishes them (their
/// findings, and the report's bytes for them), in the order they were handed: building the
/// next sessions and writing the last ones go on at once, on two cores. At most `capacity`
/// sessions, standing for at most `maxLines` log lines (a session's folded frame runs can be
/// tens of thousands), wait: memory stays with the open sessions when the writer is slower.
final class SessionPipe: @unchecked Sendable {
    private var waiting: [(session: Session, lines: Int)] = []
    private var head = 0
    private var lines = 0
    private var closed = false
    private let capacity: Int
    private let maxLines: Int
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var worker: Worker<Void>?

    /// `work` runs on the pipe's own thread, once per session, in order.
    init(capacity: Int = 64, maxLines: Int = 1 << 16, work: @escaping (Session) -> Void) {
        self.capacity = max(1, capacity)
        self.maxLines = maxLines
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
        worker = Worker { [self] in
            while let s = self.next() { work(s) }
        }
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    /// Hands a session on (waits while the pipe is full; an empty pipe takes any session).
    func put(_ s: Session) {
        var n = 0
        for i in s.events.indices { n += s.events[i].count }
        pthread_mutex_lock(mutex)
        while waiting.count > head && (waiting.count - head >= capacity || lines + n > maxLines) {
            pthread_cond_wait(changed, mutex)
        }
        waiting.append((s, n))
        lines += n
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }

    /// The next session, or nil once the pipe is closed and empty.
    private func next() -> Session? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while head == waiting.count && !closed { pthread_cond_wait(changed, mutex) }
        guard head < waiting.count else { return nil }
        let (s, n) = waiting[head]
        head += 1
        lines -= n
        // Taken sessions leave the list (it would otherwise hold every one while the builder
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

    /// No more sessions: waits until every one handed on was finished.
    func finish() {
        pthread_mutex_lock(mutex)
        closed = true
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
        worker?.join()
        worker = nil
    }
}

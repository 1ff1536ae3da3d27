#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// Reads an expensive source (gzip inflation) on another thread, a few chunks ahead of the
/// consumer, so that inflating and parsing use both cores. Errors reach the consumer at the
/// position where they happened.
public final class ReadAheadSource: ByteSource, @unchecked Sendable {
    private let inner: ByteSource
    private let chunkSize: Int
    private let depth: Int
    private var queue: [[UInt8]] = []
    private var finished = false
    private var failure: Error?
    private var cancelled = false
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var current: [UInt8] = []
    private var position = 0
    private var innerOffset: UInt64 = 0
    private var producing = true

    public init(_ inner: ByteSource, chunkSize: Int = 1 << 20, depth: Int = 4) {
        self.inner = inner
        self.chunkSize = chunkSize
        self.depth = depth
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
        DispatchQueue.global().async { [self] in produce() }
    }

    deinit {
        pthread_mutex_lock(mutex)
        cancelled = true
        pthread_cond_broadcast(changed)
        while producing { pthread_cond_wait(changed, mutex) }
        pthread_mutex_unlock(mutex)
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    public var consumedOffset: UInt64 { innerOffset }

    private func produce() {
        while true {
            var chunk = [UInt8](repeating: 0, count: chunkSize)
            var error: Error?
            var n = 0
            do {
                n = try chunk.withUnsafeMutableBytes { try inner.read(into: $0) }
            } catch let e {
                error = e
            }
            let offset = inner.consumedOffset
            pthread_mutex_lock(mutex)
            while queue.count >= depth && !cancelled { pthread_cond_wait(changed, mutex) }
            if cancelled {
                producing = false
                pthread_cond_broadcast(changed)
                pthread_mutex_unlock(mutex)
                return
            }
            if n > 0 {
                chunk.removeSubrange(n...)
                queue.append(chunk)
            }
            innerOffsetPending = offset
            if let error { failure = error }
            if n == 0 || error != nil {
                finished = true
                producing = false
                pthread_cond_broadcast(changed)
                pthread_mutex_unlock(mutex)
                return
            }
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
        }
    }

    private var innerOffsetPending: UInt64 = 0

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if position == current.count {
            pthread_mutex_lock(mutex)
            while queue.isEmpty && !finished { pthread_cond_wait(changed, mutex) }
            if queue.isEmpty {
                let error = failure
                innerOffset = innerOffsetPending
                pthread_mutex_unlock(mutex)
                if let error { throw error }
                return 0
            }
            current = queue.removeFirst()
            innerOffset = innerOffsetPending
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
            position = 0
        }
        return handOut(current, from: &position, into: buffer)
    }
}

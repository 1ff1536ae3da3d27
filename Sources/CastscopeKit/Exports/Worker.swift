#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A job on its own pthread, joined for its result: the export overlaps compressing and
/// sending one batch with building the next, and the bundle digest with the analysis.
public final class Worker<T>: @unchecked Sendable {
    final class Slot: @unchecked Sendable {
        var value: T?
        let lock = NSLockLite()
    }
    private let slot = Slot()
    private var thread: pthread_t?

    public init(_ body: @escaping () -> T) {
        let slot = self.slot
        thread = spawnJoinable(ThreadJob {
            let v = body()
            slot.lock.locked { slot.value = v }
        })
        if thread == nil { slot.value = body() }  // no thread: do it now
    }

    /// What the job returned if it has finished, without waiting.
    public func poll() -> T? { slot.lock.locked { slot.value } }

    /// Waits for the job and returns what it returned.
    public func join() -> T {
        if let t = thread {
            pthread_join(t, nil)
            thread = nil
        }
        return slot.value!
    }
}

final class ThreadJob: @unchecked Sendable {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// Starts `job` on a joinable pthread; nil when no thread could be made.
func spawnJoinable(_ job: ThreadJob) -> pthread_t? {
    let arg = Unmanaged.passRetained(job).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { arg in
        Unmanaged<ThreadJob>.fromOpaque(arg!).takeRetainedValue().body()
        return nil
    }, arg)
    if status != 0 {
        Unmanaged<ThreadJob>.fromOpaque(arg).release()
        return nil
    }
    return thread
}

import Foundation

/// Runs `body` on a thread of its own and waits for it without blocking a thread of Swift's
/// cooperative pool: a recording, a pool that waits for a buffer, a queue that waits for room
/// each block their thread on semaphores and locks.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.start()
    }
}

import DequeModule
import NIOCore
import Synchronization

/// One client of a live stream: the chunks handed to it and not yet sent, bounded in bytes.
///
/// The recording's thread hands chunks on (`offer`) and never waits; the connection's task
/// takes them (`next`) as fast as the client reads. A client that falls `limit` bytes behind is
/// cut off: what waits is let go at once, and its connection ends after the chunk it is
/// sending. A client that stops reading altogether is closed by `ConnectionGuard` once its
/// socket stays full. Either way what one client holds is bounded and nobody else notices.
public final class LiveViewer: Sendable {
    public enum End: Sendable, Equatable {
        /// The stream ended (the recording is over, or its pictures changed size).
        case streamEnded
        /// The client fell too far behind.
        case overflowed
    }

    private struct State {
        var queue = Deque<ByteBuffer>()
        var bytes = 0
        var waiter: CheckedContinuation<ByteBuffer?, Never>?
        var end: End?
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Hands a chunk on; false once the viewer has ended (overflowed now or before).
    @discardableResult
    func offer(_ chunk: ByteBuffer) -> Bool {
        let (waiter, taken): (CheckedContinuation<ByteBuffer?, Never>?, Bool) = state.withLock { state in
            guard state.end == nil else { return (nil, false) }
            if let waiter = state.waiter.take() { return (waiter, true) }
            if state.bytes + chunk.readableBytes > limit {
                state.queue.removeAll()
                state.bytes = 0
                state.end = .overflowed
                return (nil, false)
            }
            state.queue.append(chunk)
            state.bytes += chunk.readableBytes
            return (nil, true)
        }
        waiter?.resume(returning: chunk)
        return taken
    }

    /// Ends the viewer: what waits is still sent, then `next` gives nil.
    func end(_ reason: End = .streamEnded) {
        let waiter = state.withLock { state -> CheckedContinuation<ByteBuffer?, Never>? in
            if state.end == nil { state.end = reason }
            return state.waiter.take()
        }
        waiter?.resume(returning: nil)
    }

    /// The next chunk to send, waiting for one; nil once the viewer has ended.
    public func next() async -> ByteBuffer? {
        await withCheckedContinuation { continuation in
            let ready: ByteBuffer?? = state.withLock { state in
                if let chunk = state.queue.popFirst() {
                    state.bytes -= chunk.readableBytes
                    return .some(chunk)
                }
                if state.end != nil { return .some(nil) }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

}

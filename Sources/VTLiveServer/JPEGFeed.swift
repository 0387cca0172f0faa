import NIOCore
import Synchronization

/// The pictures of `/stream.mjpeg` and `/snapshot.jpg`: the newest JPEGs, which each client
/// takes when it is ready for one. A client held back for a moment (a busy machine, a
/// scheduler's pause) takes up where it left off from the `kept` newest, shared by every
/// client; one that reads slowly for longer gets fewer pictures, never a backlog of its own.
///
/// The JPEGs are the camera's own (an MJPEG camera: its bytes as they came, no encode) or made
/// from the recording's pictures, and only while someone wants them (`wanted`).
public final class JPEGFeed: Sendable {
    private struct State {
        var sequence: UInt64 = 0
        /// The newest JPEGs, oldest first.
        var recent: [(sequence: UInt64, buffer: ByteBuffer)] = []
        var waiters: [UInt64: CheckedContinuation<(ByteBuffer, UInt64)?, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var clients = 0
        var ended = false
    }

    /// Clients of `/stream.mjpeg` at once.
    public let maxClients: Int
    /// True when the JPEGs are the camera's own.
    public let fromCamera: Bool
    /// The JPEGs held for a client that comes back late: a sixth of a second at 30 fps.
    static let kept = 5
    private let state = Mutex(State())

    public init(maxClients: Int = 64, fromCamera: Bool) {
        self.maxClients = maxClients
        self.fromCamera = fromCamera
    }

    // MARK: The recording's side

    /// Whether anyone waits for a picture: only then is one made (or copied).
    public var wanted: Bool { state.withLock { !$0.ended && ($0.clients > 0 || !$0.waiters.isEmpty) } }

    /// A JPEG made or taken by the recording, for the viewers of /stream.mjpeg.
    public func publish(bytes: [UInt8]) { publish(ByteBuffer(bytes: bytes)) }

    public func publish(_ buffer: ByteBuffer) {
        let ready: [(CheckedContinuation<(ByteBuffer, UInt64)?, Never>, UInt64)] = state.withLock { state in
            state.sequence += 1
            state.recent.append((state.sequence, buffer))
            if state.recent.count > Self.kept { state.recent.removeFirst(state.recent.count - Self.kept) }
            let ready = state.waiters.values.map { ($0, state.sequence) }
            state.waiters.removeAll()
            return ready
        }
        for (continuation, sequence) in ready { continuation.resume(returning: (buffer, sequence)) }
    }

    /// The recording is over: every client ends.
    public func end() {
        let waiting = state.withLock { state in
            state.ended = true
            let waiting = Array(state.waiters.values)
            state.waiters.removeAll()
            return waiting
        }
        for continuation in waiting { continuation.resume(returning: nil) }
    }

    // MARK: The server's side

    /// A client of `/stream.mjpeg`; false when there are too many.
    func join() -> Bool {
        state.withLock { state in
            guard state.clients < maxClients, !state.ended else { return false }
            state.clients += 1
            return true
        }
    }

    func leave() { state.withLock { $0.clients -= 1 } }

    /// The first picture after `sequence` (0: the next one made), or the oldest kept when it is
    /// gone, waiting for it at most `timeout` (nil: as long as it takes); nil once the recording
    /// is over or when none came in time.
    func next(after sequence: UInt64, timeout: Duration?) async -> (ByteBuffer, UInt64)? {
        await withCheckedContinuation { continuation in
            // Answered at once (nil: the recording is over), or registered to wait.
            var now: (ByteBuffer, UInt64)?
            let registered: UInt64? = state.withLock { state in
                if state.ended { return nil }
                if sequence > 0, let kept = state.recent.first(where: { $0.sequence > sequence }) {
                    now = (kept.buffer, kept.sequence)
                    return nil
                }
                state.nextWaiter += 1
                state.waiters[state.nextWaiter] = continuation
                return state.nextWaiter
            }
            guard let registered else { return continuation.resume(returning: now) }
            guard let timeout else { return }
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                self?.state.withLock { $0.waiters.removeValue(forKey: registered) }?.resume(returning: nil)
            }
        }
    }

    public var clients: Int { state.withLock { $0.clients } }
}

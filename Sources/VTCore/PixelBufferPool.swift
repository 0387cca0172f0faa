import Dispatch
import Synchronization

/// At most `capacity` equally sized buffers, handed out and taken back, so that steady-state
/// capture allocates nothing per frame (CoreVideo's `CVPixelBufferPool`).
///
/// Buffers are made when first needed, so a pool sized for the worst case (every frame the
/// pipeline can hold at once) costs only the memory the recording really uses.
///
/// Sendable: the free list is guarded by a mutex and the counting semaphore only ever lets as
/// many takers through as the pool may hand out.
public final class PixelBufferPool: Sendable {
    public let format: PixelFormat
    public let width: Int
    public let height: Int
    public let capacity: Int

    private struct Buffers {
        var free: [PixelBuffer] = []
        var made = 0
    }

    private let buffers = Mutex(Buffers())
    /// Counts the buffers that may still be handed out: free ones and ones not made yet.
    private let available = DispatchSemaphore(value: 0)

    public init(format: PixelFormat, width: Int, height: Int, capacity: Int) {
        precondition(capacity > 0)
        self.format = format
        self.width = width
        self.height = height
        self.capacity = capacity
        // Start at zero and signal once per buffer: a semaphore freed below its initial value traps.
        for _ in 0..<capacity { available.signal() }
    }

    /// A free buffer, waiting for one to come back if all are out. Only for a consumer that
    /// may wait (a file): a live source uses `tryTake()`.
    public func take() -> PixelBufferLease {
        available.wait()
        return pop()
    }

    /// A free buffer, or nil at once if all are out.
    public func tryTake() -> PixelBufferLease? {
        guard available.wait(timeout: .now()) == .success else { return nil }
        return pop()
    }

    /// Buffers made and not handed out: equal to `madeCount` when every lease has ended.
    public var freeCount: Int { buffers.withLock { $0.free.count } }

    /// Buffers made so far: the most that were out at once.
    public var madeCount: Int { buffers.withLock { $0.made } }

    /// Buffers handed out whose leases have not ended.
    public var inUse: Int { buffers.withLock { $0.made - $0.free.count } }

    private func pop() -> PixelBufferLease {
        let reused = buffers.withLock { buffers -> PixelBuffer? in
            if let buffer = buffers.free.popLast() { return buffer }
            buffers.made += 1
            return nil
        }
        let buffer = reused ?? PixelBuffer(format: format, width: width, height: height) { [weak self] buffer in
            self?.giveBack(buffer)
        }
        return PixelBufferLease(handingOut: buffer)
    }

    private func giveBack(_ buffer: PixelBuffer) {
        buffers.withLock { $0.free.append(buffer) }
        available.signal()
    }
}

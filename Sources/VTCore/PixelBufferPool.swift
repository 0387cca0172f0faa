import Dispatch
import Synchronization

/// A fixed set of equally sized buffers, handed out and taken back, so that steady-state
/// capture allocates nothing per frame (CoreVideo's `CVPixelBufferPool`).
///
/// `@unchecked Sendable`: the free list is guarded by a mutex and the counting semaphore only
/// ever lets as many takers through as there are free buffers.
public final class PixelBufferPool: @unchecked Sendable {
    public let format: PixelFormat
    public let width: Int
    public let height: Int
    public let capacity: Int

    private let free = Mutex<[PixelBuffer]>([])
    private let available = DispatchSemaphore(value: 0)

    public init(format: PixelFormat, width: Int, height: Int, capacity: Int) {
        precondition(capacity > 0)
        self.format = format
        self.width = width
        self.height = height
        self.capacity = capacity
        var buffers: [PixelBuffer] = []
        for _ in 0..<capacity {
            buffers.append(PixelBuffer(format: format, width: width, height: height) { [weak self] buffer in
                self?.giveBack(buffer)
            })
        }
        free.withLock { $0 = buffers }
        // Start at zero and signal once per buffer: a semaphore freed below its initial value traps.
        for _ in 0..<capacity { available.signal() }
    }

    /// A free buffer, waiting for one to come back if all are out.
    public func take() -> PixelBuffer {
        available.wait()
        return pop()
    }

    /// A free buffer, or nil at once if all are out.
    public func tryTake() -> PixelBuffer? {
        guard available.wait(timeout: .now()) == .success else { return nil }
        return pop()
    }

    public var freeCount: Int { free.withLock { $0.count } }

    private func pop() -> PixelBuffer {
        let buffer = free.withLock { $0.removeLast() }
        buffer.beginLease()
        return buffer
    }

    private func giveBack(_ buffer: PixelBuffer) {
        free.withLock { $0.append(buffer) }
        available.signal()
    }
}

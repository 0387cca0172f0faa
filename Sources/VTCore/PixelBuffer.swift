import Synchronization

/// One plane of a picture: where it starts and how far apart its rows are.
public struct PixelPlane: Sendable {
    // The pointer is only dereferenced by the holder of the PixelBuffer lease.
    public nonisolated(unsafe) let baseAddress: UnsafeMutablePointer<UInt8>
    public let bytesPerRow: Int
    public let rowBytes: Int
    public let rows: Int

    public init(baseAddress: UnsafeMutablePointer<UInt8>, bytesPerRow: Int, rowBytes: Int, rows: Int) {
        precondition(bytesPerRow >= rowBytes, "a plane's stride cannot be shorter than its rows")
        self.baseAddress = baseAddress
        self.bytesPerRow = bytesPerRow
        self.rowBytes = rowBytes
        self.rows = rows
    }
}

/// A picture in memory, as CoreVideo's `CVPixelBuffer`.
///
/// A buffer either owns its memory or wraps memory that belongs to someone else (a pool, a
/// V4L2 driver buffer, a file mapping, a decoder's frame). Whoever owns the memory hands the
/// buffer out as a `PixelBufferLease`; when the lease ends, the buffer's release hook gives
/// the memory back (return to the pool, `VIDIOC_QBUF`, `munmap`, `av_frame_free`). Nothing
/// else ends a lease. The objects themselves are reused, so a steady stream of frames
/// allocates nothing.
///
/// `@unchecked Sendable`: every stored property is a `let`; the pixels behind `planes` are
/// read and written only by the holder of the buffer's one lease, which moves from thread to
/// thread (capture → encoder) but is held by one at a time; the lease flag is atomic and
/// catches a second lease or a double return.
public final class PixelBuffer: @unchecked Sendable {
    public let format: PixelFormat
    public let width: Int
    public let height: Int
    public let planes: [PixelPlane]

    private let ownedStorage: UnsafeMutableRawPointer?
    private let releaseHook: (@Sendable (PixelBuffer) -> Void)?
    private let leased = Atomic<Bool>(false)

    /// Allocates a tightly packed picture (rows of exactly `rowBytes`), laid out as Y4M and
    /// V4L2 lay out frames, so one read fills it.
    public init(format: PixelFormat, width: Int, height: Int,
                releaseHook: (@Sendable (PixelBuffer) -> Void)? = nil) {
        precondition(width > 0 && height > 0)
        let size = format.imageSize(width: width, height: height)
        let storage = UnsafeMutableRawPointer.allocate(byteCount: max(size, 1), alignment: 64)
        var planes: [PixelPlane] = []
        var offset = 0
        for p in 0..<format.planeCount {
            let rowBytes = format.rowBytes(plane: p, width: width)
            let rows = format.rows(plane: p, height: height)
            planes.append(PixelPlane(baseAddress: (storage + offset).assumingMemoryBound(to: UInt8.self),
                                     bytesPerRow: rowBytes, rowBytes: rowBytes, rows: rows))
            offset += rowBytes * rows
        }
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.ownedStorage = storage
        self.releaseHook = releaseHook
    }

    /// Wraps memory owned elsewhere (a driver's mmap'd buffer). `releaseHook` gives it back.
    public init(format: PixelFormat, width: Int, height: Int, planes: [PixelPlane],
                releaseHook: @escaping @Sendable (PixelBuffer) -> Void) {
        precondition(planes.count == format.planeCount)
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.ownedStorage = nil
        self.releaseHook = releaseHook
    }

    deinit {
        ownedStorage?.deallocate()
    }

    /// The contiguous bytes of a tightly packed buffer (one allocation, planes back to back).
    public var contiguousBytes: UnsafeMutableRawBufferPointer? {
        guard let ownedStorage else { return nil }
        return UnsafeMutableRawBufferPointer(start: ownedStorage,
                                             count: format.imageSize(width: width, height: height))
    }

    /// Marks the buffer as handed out; only `PixelBufferLease` calls it.
    fileprivate func beginLease() {
        let wasLeased = leased.exchange(true, ordering: .acquiringAndReleasing)
        precondition(!wasLeased, "PixelBuffer handed out while still leased")
    }

    /// Gives the memory back through the release hook; only the end of a `PixelBufferLease`
    /// calls it.
    fileprivate func endLease() {
        let wasLeased = leased.exchange(false, ordering: .acquiringAndReleasing)
        precondition(wasLeased, "PixelBuffer given back twice")
        releaseHook?(self)
    }

    /// Whether a lease on the buffer is held now.
    public var isLeased: Bool { leased.load(ordering: .acquiring) }
}

/// The right to use one `PixelBuffer` until the lease ends (CoreVideo's retain on a pooled
/// `CVPixelBuffer`). It cannot be copied, only moved from owner to owner, and its end gives
/// the memory back exactly once, on every path: when the last owner lets go of it, an error
/// unwinding past it included.
///
/// Made only by whoever owns the memory: `PixelBufferPool`, a capture source over a driver's
/// or a file's buffers, a decoder over its frames.
public struct PixelBufferLease: ~Copyable, Sendable {
    public let buffer: PixelBuffer

    /// Hands `buffer` out; its release hook runs when the lease ends.
    public init(handingOut buffer: PixelBuffer) {
        buffer.beginLease()
        self.buffer = buffer
    }

    deinit {
        buffer.endLease()
    }
}

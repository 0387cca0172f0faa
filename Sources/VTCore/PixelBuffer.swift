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
/// A buffer either owns its memory or leases memory that belongs to someone else (a pool, a
/// V4L2 driver buffer). A leased buffer is handed out with `beginLease()` and handed back with
/// `release()`, which runs the release hook (return to the pool, `VIDIOC_QBUF`). The objects
/// themselves are reused, so a steady stream of frames allocates nothing.
///
/// `@unchecked Sendable`: a buffer moves from the capture thread to the encoder thread and is
/// touched by one thread at a time; the lease flag is atomic and catches a double release.
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

    /// Marks the buffer as handed out. Called by whoever owns the memory (a pool, a source).
    public func beginLease() {
        let wasLeased = leased.exchange(true, ordering: .acquiringAndReleasing)
        precondition(!wasLeased, "PixelBuffer handed out while still leased")
    }

    /// Ends the holder's use of the buffer: its memory goes back to the pool or the driver.
    /// The corresponding CoreVideo call is `CVPixelBufferRelease`.
    public func release() {
        let wasLeased = leased.exchange(false, ordering: .acquiringAndReleasing)
        precondition(wasLeased, "PixelBuffer released twice")
        releaseHook?(self)
    }

    public var isLeased: Bool { leased.load(ordering: .acquiring) }
}

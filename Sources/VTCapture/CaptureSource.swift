import VTCore

/// What a source delivers: the picture layout and timing every frame shares.
public struct CaptureFormat: Sendable, Equatable {
    public var pixelFormat: PixelFormat
    public var width: Int
    public var height: Int
    /// The nominal frame rate.
    public var frameRate: FrameRate
    /// Pixel aspect ratio (Y4M `A`, V4L2 pixelaspect); nil when unknown.
    public var sampleAspectRatio: SampleAspectRatio?
    /// True when samples use the full 0–255 range (JPEG), false for video range, nil unknown.
    public var fullRange: Bool?
    /// A live source (camera, paced pattern) produces frames on its own clock and must never be
    /// blocked by the encoder; a file is read as fast as the encoder takes it.
    public var isLive: Bool

    public init(pixelFormat: PixelFormat, width: Int, height: Int, frameRate: FrameRate,
                sampleAspectRatio: SampleAspectRatio? = nil, fullRange: Bool? = nil,
                isLive: Bool) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.sampleAspectRatio = sampleAspectRatio
        self.fullRange = fullRange
        self.isLive = isLive
    }

}

/// One captured picture and when it was taken. The frame holds the picture's lease: it cannot
/// be copied, only moved, and the lease ends (the buffer goes back to its pool, to the driver
/// with VIDIOC_QBUF, or its file mapping is unmapped) exactly once, when the frame's last
/// owner lets go of it: after it is encoded, when it is dropped at the queue, displaced on
/// the frame grid, past a limit, or on an error path that unwinds past it.
public struct CapturedFrame: ~Copyable, Sendable {
    /// The picture's lease, held as long as the frame is; nil for a frame kept only as the
    /// camera compressed it (`--encoder copy`), which nothing decodes.
    public let picture: PixelBufferLease?
    /// Presentation time relative to the first frame.
    public var pts: MediaTime
    /// Capture counter as the source numbers frames (V4L2 `sequence`, Y4M frame index).
    public var sequence: UInt64
    /// When the picture was taken, CLOCK_MONOTONIC nanoseconds (a camera's buffer timestamp);
    /// nil for sources without a capture clock (files).
    public var captureTime: Int64?
    /// Frames before this one came from another stream (a reconnected camera): it starts a
    /// new GOP.
    public var isDiscontinuity: Bool
    /// The frame as the camera compressed it (a Motion-JPEG frame's bytes exactly as the driver
    /// delivered them; an H.264 access unit in AVCC form), when the source was asked to keep
    /// it; nil otherwise.
    public var compressed: CompressedFrame?

    /// A frame as the camera compressed it, without a picture.
    public init(compressed: CompressedFrame, pts: MediaTime, sequence: UInt64, captureTime: Int64? = nil,
                isDiscontinuity: Bool = false) {
        picture = nil
        buffer = nil
        self.pts = pts
        self.sequence = sequence
        self.captureTime = captureTime
        self.isDiscontinuity = isDiscontinuity
        self.compressed = compressed
    }

    public init(_ picture: consuming PixelBufferLease, pts: MediaTime, sequence: UInt64, captureTime: Int64? = nil,
                isDiscontinuity: Bool = false, compressed: CompressedFrame? = nil) {
        buffer = picture.buffer
        self.picture = .some(picture)
        self.pts = pts
        self.sequence = sequence
        self.captureTime = captureTime
        self.isDiscontinuity = isDiscontinuity
        self.compressed = compressed
    }

    /// The picture, for reading while the frame is held; nil for a frame kept only compressed.
    /// Kept beside the lease rather than read through it: reading into an optional
    /// non-copyable lease would take it out of the frame.
    public let buffer: PixelBuffer?
}

/// Where frames come from: a camera, a Y4M file or stream, the built-in test pattern.
///
/// Used from one thread (the capture thread) except `stop()`, which may be called from any.
public protocol CaptureSource: AnyObject, Sendable {
    /// Known once the source is open (a Y4M header has been read, a format negotiated).
    var format: CaptureFormat { get }
    /// Counters a source keeps about frames it could not deliver.
    var statistics: CaptureStatistics { get }
    /// Blocks until the next frame is ready; nil at the end of the input or after `stop()`.
    func nextFrame() throws -> CapturedFrame?
    /// Asks the source to end: the next `nextFrame()` returns nil.
    func stop()
    /// Gives back what the source holds (a camera's stream, buffers and device) once capture
    /// has ended; `nextFrame()` is not called afterwards.
    func close()
}

extension CaptureSource {
    public func close() {}
}

/// Frames a source saw but did not deliver, by reason.
public struct CaptureStatistics: Sendable, Equatable {
    /// Frames dropped before they reached vtrecord (driver drops, sequence gaps).
    public var droppedBySource: Int = 0
    /// Frames that arrived damaged and were not encoded.
    public var badFrames: Int = 0
    /// A last frame cut short (truncated file).
    public var truncatedFrames: Int = 0
    /// Times an unplugged camera came back (`--reconnect`).
    public var reconnects: Int = 0
    /// Frames stamped no later than the frame before them, placed one frame interval after it.
    public var retimedFrames: Int = 0

    public init() {}
}

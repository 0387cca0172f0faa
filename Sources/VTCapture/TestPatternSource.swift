import Synchronization
import VTCore

/// A built-in source of moving I420 pictures with the frame number coded into each one, for
/// trying the pipeline without a camera and for checking, after encoding and decoding, that
/// every frame came through once and in order.
///
/// Unpaced (the default), frames are produced as fast as they are taken, like a file. Live,
/// frames are due at the frame rate on the monotonic clock from the first `nextFrame()`, and
/// the source behaves like a camera's driver with `bufferCount` buffers: it never waits for
/// the consumer. Frames that came due while the consumer was away are kept, oldest first, as
/// many as there are buffers the consumer does not hold when it comes back, and handed out
/// before the next one is waited for; the others are dropped and counted in
/// `statistics.droppedBySource`, and their numbers are skipped, so the gap shows in
/// `sequence`, in `pts` and in the pictures.
public final class TestPatternSource: CaptureSource {
    public let format: CaptureFormat

    /// The smallest picture the frame code fits in with room left for motion.
    public static let minimumSize = (width: 64, height: 64)
    /// Larger pictures would be beyond every H.264 level and take gigabytes of buffers.
    public static let maximumDimension = 16384

    private let painter: TestPatternPainter
    private let pool: PixelBufferPool
    private let interrupt = SourceInterrupt()
    private let counters = Mutex(CaptureStatistics())
    /// Only the capture thread touches the schedule; the mutex makes that provable.
    private let schedule = Mutex(Schedule())

    private struct Schedule {
        /// The next frame to come due.
        var nextFrame = 0
        /// Frames kept while the consumer was away, to hand out before `nextFrame`.
        var kept = 0..<0
        /// `CLOCK_MONOTONIC` nanoseconds when frame 0 was due; set by the first `nextFrame()`.
        var start: Int64?
    }

    /// A pattern of `width`×`height` at `frameRate`, paced to the clock when `live`.
    ///
    /// Width and height must be even, because 4:2:0 encoders (x264, VA-API) require it, and
    /// at least 64×64, because the frame code needs the room.
    /// With `flashes`, the picture flashes white once a second (`FlashSchedule`), in step with
    /// the test sound's beeps.
    public init(width: Int, height: Int, frameRate: FrameRate, live: Bool = false,
                bufferCount: Int = 8, flashes: Bool = false) throws(CaptureError) {
        precondition(bufferCount > 0, "a source needs at least one buffer")
        func refuse(_ reason: String) -> CaptureError {
            .unsupportedPatternSize(width: width, height: height, reason: reason)
        }
        guard width >= Self.minimumSize.width, height >= Self.minimumSize.height else {
            throw refuse("the frame code needs at least \(Self.minimumSize.width)x\(Self.minimumSize.height)")
        }
        guard width <= Self.maximumDimension, height <= Self.maximumDimension else {
            throw refuse("width and height can be at most \(Self.maximumDimension)")
        }
        guard width % 2 == 0, height % 2 == 0 else {
            throw refuse("width and height must be even, as 4:2:0 encoders require")
        }
        format = CaptureFormat(pixelFormat: .i420, width: width, height: height, frameRate: frameRate,
                               sampleAspectRatio: SampleAspectRatio(width: 1, height: 1), fullRange: false, isLive: live)
        painter = TestPatternPainter(width: width, height: height,
                                     flashes: flashes ? FlashSchedule(frameRate: frameRate) : nil)
        pool = PixelBufferPool(format: .i420, width: width, height: height, capacity: bufferCount)
    }

    public var statistics: CaptureStatistics { counters.withLock { $0 } }

    /// Pictures handed out whose frames have not been let go: 0 once every consumer let go.
    public var picturesInUse: Int { pool.inUse }

    /// The next picture; nil only after `stop()`.
    public func nextFrame() -> CapturedFrame? {
        schedule.withLock { schedule -> CapturedFrame? in
            format.isLive ? nextLiveFrame(&schedule) : nextUnpacedFrame(&schedule)
        }
    }

    public func stop() {
        interrupt.trip()
    }

    /// Reads the frame number back from the luma plane of a decoded test-pattern picture of
    /// the given size, or returns nil when the picture does not carry a readable code.
    ///
    /// The number is the frame's `sequence` modulo 2³². `luma` must point at `height` rows of
    /// `bytesPerRow` bytes.
    public static func frameNumber(luma: UnsafePointer<UInt8>, width: Int, height: Int,
                                   bytesPerRow: Int) -> Int? {
        guard width >= minimumSize.width, height >= minimumSize.height, bytesPerRow >= width else {
            return nil
        }
        let code = FrameCode(width: width)
        guard code.bandHeight <= height else { return nil }
        return code.read(luma: luma, bytesPerRow: bytesPerRow).map { Int($0) }
    }

    private func nextUnpacedFrame(_ schedule: inout Schedule) -> CapturedFrame? {
        if interrupt.isTripped { return nil }
        let picture = pool.take()
        let n = schedule.nextFrame
        schedule.nextFrame += 1
        return deliver(frame: n, in: picture)
    }

    private func nextLiveFrame(_ schedule: inout Schedule) -> CapturedFrame? {
        let start = schedule.start ?? MonotonicClock.nanoseconds()
        schedule.start = start
        while true {
            if let n = schedule.kept.first {
                if interrupt.isTripped { return nil }
                schedule.kept = schedule.kept.dropFirst()
                guard let picture = pool.tryTake() else {
                    counters.withLock { $0.droppedBySource += 1 }
                    continue
                }
                return deliver(frame: n, in: picture)
            }
            let n = schedule.nextFrame
            guard interrupt.sleep(untilMonotonic: start + nanoseconds(untilFrame: n)) else { return nil }
            // Frames n…current are due. A driver fills its free buffers in turn and drops
            // what finds none: the oldest are kept, one for each buffer the consumer does
            // not hold now (a consumer that came back late, or that holds every buffer).
            let current = max(n, frameDue(atNanoseconds: MonotonicClock.nanoseconds() - start))
            let due = current - n + 1
            let kept = min(due, pool.capacity - pool.inUse)
            if kept < due { counters.withLock { $0.droppedBySource += due - kept } }
            schedule.nextFrame = current + 1
            schedule.kept = n..<(n + kept)
        }
    }

    private func deliver(frame n: Int, in picture: consuming PixelBufferLease) -> CapturedFrame {
        painter.paint(frame: n, into: picture.buffer)
        let duration = format.frameRate.frameDuration
        return CapturedFrame(picture,
                             pts: MediaTime(value: Int64(n) * duration.value, timescale: duration.timescale),
                             sequence: UInt64(n))
    }

    /// Time from frame 0 to frame `n`, exact in integers: n × denominator / numerator seconds.
    private func nanoseconds(untilFrame n: Int) -> Int64 {
        let rate = format.frameRate
        return Int64(Int128(n) * Int128(rate.denominator) * 1_000_000_000 / Int128(rate.numerator))
    }

    /// The newest frame due `elapsed` nanoseconds after frame 0.
    private func frameDue(atNanoseconds elapsed: Int64) -> Int {
        let rate = format.frameRate
        return Int(Int128(elapsed) * Int128(rate.numerator) / (Int128(rate.denominator) * 1_000_000_000))
    }
}

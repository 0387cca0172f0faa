import Foundation
import Synchronization
import VTCapture
import VTCore
import VTEncoding
import VTOutput

/// When a recording ends by itself.
public struct RecordingLimits: Sendable, Equatable {
    /// Frames written, then stop.
    public var frames: Int?
    /// Presentation time in seconds: frames before it are written, then stop.
    public var duration: Double?

    public init(frames: Int? = nil, duration: Double? = nil) {
        self.frames = frames
        self.duration = duration
    }
}

/// Why a recording ended.
public enum StopReason: String, Sendable, Codable {
    case endOfInput = "end_of_input"
    case frameLimit = "frames"
    case durationLimit = "duration"
    case signal
    case error
}

/// The pipeline: capture thread → bounded queue → encoder (this thread) → writer.
///
/// A live source (or `--realtime`) is never blocked: when the queue is full the newest frame is
/// dropped and counted. A file is never dropped: the reader waits for the encoder. On a stop
/// (limit, signal, end of input, capture failure) the frames already captured are encoded,
/// `completeFrames()` flushes the encoder, and the writer is closed: nothing captured is lost.
/// The source is closed as soon as capture ends, so a camera is free again while the encoder
/// drains. A recording stopped by a signal or an error before its first frame was written
/// leaves no output file: none is created after an early stop, and one created is removed (as
/// is a segment file that could not take its first frame).
public final class Recorder: @unchecked Sendable {
    // @unchecked Sendable: `requestStop` and `abort` are the only members used off the encoder
    // thread; they touch atomics, the queue (locked), and the writer under the write lock
    // (which is also held wherever the encoder thread sets, writes or closes the writer).
    public typealias SessionFactory = (@escaping EncodedFrameHandler) throws -> any CompressionSession

    private let source: any CaptureSource
    private let makeSession: SessionFactory
    private let makeWriter: () throws -> SegmentWriter
    private var writer: SegmentWriter?
    /// nil: one file for the whole recording.
    private var boundaries: SegmentBoundaries?
    private let realTime: Bool
    private let limits: RecordingLimits
    private let retiming: FrameRate?
    private let queue: BoundedQueue<CapturedFrame>
    private let progress: ProgressReporter?

    private let stopRequested = Atomic<Bool>(false)
    private let framesCaptured = Atomic<Int>(0)
    private let droppedAtQueue = Atomic<Int>(0)
    private let captureFailure = Mutex<(any Error)?>(nil)
    /// Held around each write so an abort never cuts an access unit in half.
    private let writeLock = Mutex<Void>(())
    private var session: (any CompressionSession)?
    private var framesSubmitted = 0
    private var limitHit: StopReason?
    /// `--timing cfr`: the grid's rate; nil encodes every frame once at its own time.
    private let timing: FrameRate?
    private let timestamps: TimestampLog?
    private var framesDuplicated = 0
    private var framesDroppedTiming = 0
    /// Capture time (CLOCK_MONOTONIC ns) of each picture in the encoder, by presentation time.
    /// Encoder thread only: the session hands out frames on the thread that feeds it.
    private var captureTimes: [Int64: Int64] = [:]
    /// Capture → written, per picture from a source with a capture clock.
    private var latency = LatencyHistogram()
    /// Signalled when the capture thread has left its loop; nil until it starts.
    private var captureThreadDone: DispatchSemaphore?
    private var sourceClosed = false

    /// The session is created and prepared before the writer, so settings the encoder refuses
    /// never leave an empty output file behind.
    /// `retiming` places frame n at n ÷ rate instead of at the source's time: a file whose
    /// header rate is overridden (`--fps` with `--input`). `timing` places frames on a
    /// constant-rate grid (`--timing cfr`). `timestamps` logs each encoded frame's time.
    /// `segments` splits the output into files; the limits apply to the whole recording.
    public init(source: any CaptureSource, realTime: Bool, limits: RecordingLimits,
                retiming: FrameRate? = nil, timing: FrameRate? = nil, timestamps: TimestampLog? = nil,
                segments: SegmentPolicy? = nil,
                queueCapacity: Int = 4, progress: ProgressReporter? = nil,
                makeSession: @escaping SessionFactory,
                makeWriter: @escaping () throws -> SegmentWriter) {
        self.source = source
        self.boundaries = segments.map(SegmentBoundaries.init(policy:))
        self.makeWriter = makeWriter
        self.realTime = realTime
        self.limits = limits
        self.retiming = retiming
        self.timing = timing
        self.timestamps = timestamps
        self.queue = BoundedQueue(capacity: queueCapacity)
        self.progress = progress
        self.makeSession = makeSession
    }

    /// Asks the recording to end cleanly (first SIGINT/SIGTERM). Safe from any thread.
    public func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        source.stop()
    }

    /// Ends the process at once (second signal) without cutting an access unit in half. An
    /// output file that got no frame yet is removed, as on a clean stop.
    public func abort(status: Int32) -> Never {
        writeLock.withLock { _ in
            writer?.removeIfUnused()
            _exit(status)
        }
    }

    /// Runs the recording to its end and reports what happened. Errors from the encoder or the
    /// writer end it early; a capture error ends it after what was captured is written.
    public func run() -> RecordingResult {
        let started = ContinuousClock.now
        var reason = StopReason.endOfInput
        var failure: (any Error)?
        var resolved: EncoderSettings?
        var encoderName = "none"

        do {
            let session = try makeSession { [unowned self] frame in try self.deliver(frame) }
            self.session = session
            encoderName = session.encoderName
            try session.prepare()
            // The session that opened (auto may have given way to x264).
            encoderName = session.encoderName
            resolved = session.resolvedSettings
            if stopRequested.load(ordering: .acquiring) {
                // Stopped while the source was opening: there is nothing to record.
                reason = .signal
                try timestamps?.close()
            } else {
                let writer = try makeWriter()
                writeLock.withLock { _ in self.writer = writer }
                startCaptureThread()
                reason = try encodeLoop(session)
                // Capture is over: the camera is given back before the encoder drains.
                finishCapture()
                try session.completeFrames()
                try timestamps?.close()
                try writeLock.withLock { _ throws(OutputError) in try writer.close() }
            }
        } catch {
            failure = error
            reason = .error
            stopCapture()
        }
        finishCapture()
        // Every run, clean or failed, hands the encoder back here: x264 joins its threads, a
        // VA-API device gets its context and surfaces back. The process may exit before the
        // session is freed, so this cannot be left to deinit.
        session?.invalidate()
        if failure == nil, let captureError = captureFailure.withLock({ $0 }) {
            failure = captureError
            reason = .error
        }
        if reason == .signal || reason == .error {
            writeLock.withLock { _ in _ = writer?.removeIfUnused() }
        }
        progress?.finish()
        let elapsed = started.duration(to: .now)
        var statistics = RecordingStatistics()
        statistics.framesCaptured = framesCaptured.load(ordering: .acquiring)
        statistics.framesEncoded = writer?.framesWritten ?? 0
        statistics.keyFrames = writer?.keyFramesWritten ?? 0
        statistics.bytes = writer?.bytesWritten ?? 0
        statistics.droppedQueue = droppedAtQueue.load(ordering: .acquiring)
        statistics.framesDuplicated = framesDuplicated
        statistics.framesDroppedTiming = framesDroppedTiming
        statistics.latency = latency
        statistics.source = source.statistics
        statistics.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return RecordingResult(statistics: statistics, stopReason: reason, encoder: encoderName,
                               settings: resolved, segments: writer?.paths ?? [], error: failure)
    }

    /// Once the capture thread is out of the source, the source can give its device back.
    private func finishCapture() {
        guard !sourceClosed else { return }
        sourceClosed = true
        captureThreadDone?.wait()
        source.close()
    }

    private func startCaptureThread() {
        let done = DispatchSemaphore(value: 0)
        captureThreadDone = done
        let thread = Thread { [self] in
            captureLoop()
            done.signal()
        }
        thread.name = "vtrecord-capture"
        thread.start()
    }

    private func captureLoop() {
        do {
            while !stopRequested.load(ordering: .acquiring) {
                guard let frame = try source.nextFrame() else { break }
                framesCaptured.add(1, ordering: .relaxed)
                if realTime ? queue.offer(frame) : queue.put(frame) { continue }
                if stopRequested.load(ordering: .acquiring) {
                    // The last frame the camera gave before the stop is kept, however far
                    // behind the encoder is: the encoder drains the queue anyway. Only a
                    // limit closes the queue, and then the frame is not wanted.
                    if !queue.put(frame) { frame.buffer.release() }
                    break
                }
                frame.buffer.release()
                droppedAtQueue.add(1, ordering: .relaxed)
            }
        } catch {
            captureFailure.withLock { $0 = error }
        }
        queue.close()
    }

    private func encodeLoop(_ session: any CompressionSession) throws -> StopReason {
        var grid = timing.map(ConstantRateGrid.init(rate:))
        while var frame = queue.take() {
            if let retiming {
                frame.pts = MediaTime(value: Int64(frame.sequence) * Int64(retiming.denominator),
                                      timescale: Int32(retiming.numerator))
            }
            if limitHit != nil {
                // Past a limit: what is still queued is not wanted.
                frame.buffer.release()
                continue
            }
            guard var constantRate = grid else {
                defer { frame.buffer.release() }
                try submit(frame.buffer, pts: frame.pts, shownAt: frame.pts, captureTime: frame.captureTime,
                           keyFrame: frame.isDiscontinuity, session: session)
                continue
            }
            let (emission, displaced) = constantRate.add(frame)
            grid = constantRate
            if let displaced {
                displaced.buffer.release()
                framesDroppedTiming += 1
            }
            if let emission { try encode(emission, grid: constantRate, session: session) }
        }
        if var constantRate = grid {
            if limitHit == nil, let last = constantRate.finish() {
                try encode(last, grid: constantRate, session: session)
            } else if let held = constantRate.discard() {
                held.buffer.release()
            }
        }
        if let limitHit { return limitHit }
        return stopRequested.load(ordering: .acquiring) ? .signal : .endOfInput
    }

    /// Encodes a frame into each grid slot it fills: once as itself, then as repeats.
    private func encode(_ emission: ConstantRateGrid.Emission, grid: ConstantRateGrid,
                        session: any CompressionSession) throws {
        defer { emission.frame.buffer.release() }
        for slot in emission.slots where limitHit == nil {
            let first = slot == emission.slots.lowerBound
            // The log keeps a picture's own capture time; a repeat is shown at its slot.
            let pts = grid.time(ofSlot: slot)
            try submit(emission.frame.buffer, pts: pts, shownAt: first ? emission.frame.pts : pts,
                       captureTime: first ? emission.frame.captureTime : nil,
                       keyFrame: first && emission.frame.isDiscontinuity, session: session)
            if !first && limitHit == nil { framesDuplicated += 1 }
        }
    }

    /// Hands one picture to the encoder at `pts`, unless a limit is reached first (then capture
    /// stops and nothing more is encoded). The caller keeps the lease.
    private func submit(_ buffer: PixelBuffer, pts: MediaTime, shownAt: MediaTime, captureTime: Int64?,
                        keyFrame: Bool, session: any CompressionSession) throws {
        if let reason = limitReached(at: pts) {
            limitHit = reason
            stopCapture()
            return
        }
        if let captureTime { captureTimes[Self.key(pts)] = captureTime }
        try timestamps?.record(shownAt)
        // A segment starts with a keyframe carrying SPS/PPS, so each file plays alone.
        let startsSegment = boundaries?.startsSegment(at: pts) ?? false
        try session.encode(buffer, pts: pts, forceKeyFrame: keyFrame || startsSegment)
        framesSubmitted += 1
    }

    private func limitReached(at pts: MediaTime) -> StopReason? {
        if let frames = limits.frames, framesSubmitted >= frames { return .frameLimit }
        if let duration = limits.duration, pts.seconds >= duration - 1e-9 { return .durationLimit }
        return nil
    }

    /// Presentation times as microseconds, to find a written frame's capture time.
    private static func key(_ pts: MediaTime) -> Int64 {
        Int64((pts.seconds * 1_000_000).rounded())
    }

    private func stopCapture() {
        stopRequested.store(true, ordering: .releasing)
        source.stop()
        queue.close()
        // Hand back whatever the capture thread had queued.
        while let frame = queue.take() { frame.buffer.release() }
    }

    private func deliver(_ frame: EncodedFrame) throws {
        guard let session, let writer else { return }
        if let captured = captureTimes.removeValue(forKey: Self.key(frame.pts)) {
            latency.add(milliseconds: Double(MonotonicClock.nanoseconds() - captured) / 1e6)
        }
        try writeLock.withLock { _ throws(OutputError) in
            if boundaries?.switchesFile(before: frame) == true { try writer.startNextSegment() }
            try writer.write(frame, format: session.formatDescription)
        }
        boundaries?.written(segmentBytes: writer.segmentBytesWritten)
        progress?.frameWritten(count: writer.framesWritten, bytes: writer.bytesWritten) {
            let source = self.source.statistics
            return ProgressReporter.Counters(captured: framesCaptured.load(ordering: .relaxed),
                                             droppedQueue: droppedAtQueue.load(ordering: .relaxed),
                                             droppedDriver: source.droppedBySource, bad: source.badFrames,
                                             duplicated: framesDuplicated)
        }
    }
}

import CLinux
import Foundation
import VTAudio
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

/// The pipeline: capture thread → bounded queue → encoder (the thread that calls `run`) →
/// output.
///
/// This type is the encoder thread's: the session, the output, the constant-rate grid,
/// limits, latency and progress live here and are touched by no other thread, so it is not
/// `Sendable`. What other threads touch (the stop flag, counters, the queue, the write lock)
/// is `control`, the only way in from a signal handler.
///
/// A live source (or `--realtime`) is never blocked: when the queue is full the newest frame is
/// dropped and counted. A file is never dropped: the reader waits for the encoder. On a stop
/// (limit, signal, end of input, capture failure) the frames already captured are encoded,
/// `completeFrames()` flushes the encoder, and the output is finished: nothing captured is
/// lost. The source is closed as soon as capture ends, so a camera is free again while the
/// encoder drains. A recording stopped by a signal or an error before its first frame was
/// written leaves no output file: none is created after an early stop, and one created is
/// removed (as is a segment file that could not take its first frame).
///
/// Every captured frame is owned by exactly one place at a time (the queue, the grid, the
/// frame being encoded), and its buffer goes back when that owner lets go of it, on every
/// path out, errors included.
public final class Recorder {
    public typealias SessionFactory = (@escaping EncodedFrameHandler) throws -> any CompressionSession
    public typealias OutputFactory = () throws -> any MediaOutput

    /// What the capture and signal threads share with this one.
    public let control: RecordingControl
    private let source: any CaptureSource
    private let makeSession: SessionFactory
    private let makeOutput: OutputFactory
    private let realTime: EncoderSettings.RealTimeMode
    /// `--realtime adaptive` with a session that has speeds to step between.
    private var speedControl: SpeedController?
    private var speedSteps: [String] = []
    /// When the last picture went into the encoder: the end of the time the speeds are
    /// counted over (the drain and the file's finishing come after).
    private var encodingEnded: Int64?
    /// Says what the recording could not do as asked (no speeds to adapt with).
    private let notice: (String) -> Void
    private let limits: RecordingLimits
    private let retiming: FrameRate?
    /// `--timing cfr`: the grid's rate; nil encodes every frame once at its own time.
    private let timing: FrameRate?
    private let timestamps: TimestampLog?
    private let progress: ProgressReporter?
    /// `--snapshot`: takes each frame it wants once the frame has been encoded.
    private let stills: StillTaker?
    /// `--audio`: the sound, written beside the picture.
    private let audio: AudioRecorder?
    /// The latest presentation time written and the frame after it: where the picture ends.
    private var pictureEnd: MediaTime?

    private var session: (any CompressionSession)?
    private var output: (any MediaOutput)?
    /// The parameter sets the output was last given.
    private var outputFormat: FormatDescription?
    private var framesSubmitted = 0
    private var limitHit: StopReason?
    private var framesDuplicated = 0
    private var framesDroppedTiming = 0
    /// What is known of each picture in the encoder, by the token it was given with; an entry
    /// goes when its picture comes out.
    private var inEncoder: [FrameToken: FrameRecord] = [:]
    private var nextToken: UInt64 = 0
    /// Decode times from the presentation times frames went in with, in the encoder's order.
    private var decodeTimes: DecodeTimes?
    /// Capture → written, per picture from a source with a capture clock.
    private var latency = LatencyHistogram()
    /// Signalled when the capture thread has left its loop; nil until it starts.
    private var captureThreadDone: DispatchSemaphore?
    private var sourceClosed = false

    private struct FrameRecord {
        /// The time the frame went into the encoder with: its capture time, or its grid slot.
        var pts: MediaTime
        /// CLOCK_MONOTONIC nanoseconds; nil for a repeat or a source without a capture clock.
        var captureTime: Int64?
    }

    /// The session is created and prepared before the output, so settings the encoder refuses
    /// never leave an empty output file behind.
    /// `retiming` places frame n at n ÷ rate instead of at the source's time: a file whose
    /// header rate is overridden (`--fps` with `--input`). `timing` places frames on a
    /// constant-rate grid (`--timing cfr`). `timestamps` logs each encoded frame's time.
    /// `depth` sizes the queue; the source's pools are sized from the same value. `stills`
    /// is offered every frame after it was encoded.
    public init(source: any CaptureSource, realTime: EncoderSettings.RealTimeMode, limits: RecordingLimits,
                retiming: FrameRate? = nil, timing: FrameRate? = nil, timestamps: TimestampLog? = nil,
                depth: PipelineDepth = PipelineDepth(), progress: ProgressReporter? = nil, stills: StillTaker? = nil,
                audio: AudioRecorder? = nil, notice: @escaping (String) -> Void = { _ in },
                makeSession: @escaping SessionFactory, makeOutput: @escaping OutputFactory) {
        precondition(timing == nil || depth.holdsGridFrame, "a constant-rate grid holds a frame the depth must count")
        precondition(stills == nil || depth.holdsStill, "a still taker holds a frame the depth must count")
        self.control = RecordingControl(source: source, depth: depth)
        self.source = source
        self.makeOutput = makeOutput
        self.realTime = realTime
        self.limits = limits
        self.retiming = retiming
        self.timing = timing
        self.timestamps = timestamps
        self.progress = progress
        self.stills = stills
        self.audio = audio
        self.notice = notice
        self.makeSession = makeSession
    }

    /// Pictures handed to the encoder that have not come out of it.
    var framesInEncoder: Int { inEncoder.count }

    /// How long a frame lasts: the source's rate, or the one it is retimed to.
    private var frameDuration: MediaTime { (retiming ?? source.format.frameRate).frameDuration }

    /// Runs the recording to its end and reports what happened. Errors from the encoder or the
    /// output end it early; a capture error ends it after what was captured is written.
    public func run() -> RecordingResult {
        let started = ContinuousClock.now
        var reason = StopReason.endOfInput
        var failure: (any Error)?
        var resolved: EncoderSettings?
        var encoderName = "none"
        var outputFinished = false

        do {
            let session = try makeSession { [unowned self] frame in try self.deliver(frame) }
            self.session = session
            encoderName = session.encoderName
            try session.prepare()
            // The session that opened (auto may have given way to x264).
            encoderName = session.encoderName
            resolved = session.resolvedSettings
            decodeTimes = DecodeTimes(delay: session.reorderDelay,
                                      frameDuration: frameDuration)
            if realTime == .adaptive { try startSpeedControl(session) }
            if control.isStopRequested {
                // Stopped while the source was opening: there is nothing to record.
                reason = .signal
                try timestamps?.close()
            } else {
                try control.whileWriting({ output = try makeOutput() }, unusedFile: { output?.unusedFile })
                audio?.start { [control] error in control.fail(error) }
                startCaptureThread()
                reason = try timing.map { try encodeOnGrid(ConstantRateGrid(rate: $0), session) } ?? encodeEach(session)
                encodingEnded = MonotonicClock.nanoseconds()
                // Capture is over: the camera is given back before the encoder drains.
                finishCapture()
                let captureFailed = control.captureFailure != nil
                try session.completeFrames()
                try timestamps?.close()
                if let output, let audio {
                    try finishSound(audio, output)
                }
                if let output {
                    try control.whileWriting({ () throws(OutputError) in
                        try output.finish(keepEmpty: reason != .signal && !captureFailed)
                    }, unusedFile: { nil })
                }
                outputFinished = true
            }
        } catch {
            failure = error
            reason = .error
            control.stopCapture()
        }
        stills?.finish()
        audio?.cancel()
        finishCapture()
        // Every run, clean or failed, hands the encoder back here, once: x264 joins its
        // threads, a VA-API device gets its context and surfaces back. The process may exit
        // before the session is freed, so this cannot be left to deinit.
        session?.invalidate()
        if failure == nil, let captureError = control.captureFailure {
            failure = captureError
            reason = .error
        }
        if !outputFinished, let output {
            control.whileWriting({ output.abandon() }, unusedFile: { nil })
        }
        progress?.finish()
        return result(reason: reason, failure: failure, encoder: encoderName, settings: resolved,
                      elapsed: started.duration(to: .now))
    }

    private func result(reason: StopReason, failure: (any Error)?, encoder: String, settings: EncoderSettings?,
                        elapsed: Duration) -> RecordingResult {
        var statistics = RecordingStatistics()
        let written = output?.statistics ?? OutputStatistics()
        statistics.framesCaptured = control.framesCaptured
        statistics.framesEncoded = written.frames
        statistics.keyFrames = written.keyFrames
        statistics.bytes = written.bytes
        statistics.droppedQueue = control.droppedAtQueue
        statistics.framesDuplicated = framesDuplicated
        statistics.framesDroppedTiming = framesDroppedTiming
        statistics.latency = latency
        statistics.longestCaptureHandoff = control.longestHandoffMilliseconds
        statistics.stills = stills?.statistics
        statistics.audio = audio?.summary
        if let speedControl {
            statistics.speed = SpeedStatistics(steps: speedSteps, current: speedControl.step, changes: speedControl.changes,
                                               seconds: speedControl.seconds(until: encodingEnded ?? MonotonicClock.nanoseconds()),
                                               history: speedControl.history.map { (Double($0.at) / 1e9, $0.step) })
        }
        statistics.source = source.statistics
        statistics.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return RecordingResult(statistics: statistics, stopReason: reason, encoder: encoder,
                               settings: settings, segments: output?.paths ?? [], finalized: output?.finalized,
                               error: failure)
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
        Thread.start(named: "vtrecord-cap") { [control, live = realTime.isLive] in
            control.capture(realTime: live)
            done.signal()
        }
    }

    /// Every frame once, at its own time.
    private func encodeEach(_ session: any CompressionSession) throws -> StopReason {
        while var frame = control.queue.take() {
            retime(&frame)
            // Past a limit, what is still queued is not wanted.
            guard limitHit == nil else { continue }
            try submit(frame.buffer, pts: frame.pts, shownAt: frame.pts, captureTime: frame.captureTime,
                       keyFrame: frame.isDiscontinuity, session: session)
            if let stills, limitHit == nil { stills.offer(frame) }
        }
        return stopReason()
    }

    /// Every slot of the constant-rate grid filled, each frame at the slot nearest its time.
    private func encodeOnGrid(_ grid: consuming ConstantRateGrid, _ session: any CompressionSession) throws -> StopReason {
        defer { framesDroppedTiming = grid.framesDisplaced }
        while var frame = control.queue.take() {
            retime(&frame)
            guard limitHit == nil else { continue }
            if let emission = grid.add(frame) {
                framesDroppedTiming = grid.framesDisplaced
                try encode(emission, grid: grid, session: session)
                if let stills, limitHit == nil { stills.offer(emission.frame) }
            }
        }
        if limitHit == nil, let last = grid.finish() {
            try encode(last, grid: grid, session: session)
            if let stills, limitHit == nil { stills.offer(last.frame) }
        }
        return stopReason()
    }

    private func stopReason() -> StopReason {
        if let limitHit { return limitHit }
        return control.isStopRequested ? .signal : .endOfInput
    }

    private func retime(_ frame: inout CapturedFrame) {
        guard let retiming else { return }
        frame.pts = MediaTime(value: Int64(frame.sequence) * Int64(retiming.denominator),
                              timescale: Int32(retiming.numerator))
    }

    /// Encodes a frame into each grid slot it fills: once as itself, then as repeats.
    private func encode(_ emission: borrowing ConstantRateGrid.Emission, grid: borrowing ConstantRateGrid,
                        session: any CompressionSession) throws {
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
    /// stops and nothing more is encoded). The caller keeps the frame.
    private func submit(_ buffer: PixelBuffer, pts: MediaTime, shownAt: MediaTime, captureTime: Int64?,
                        keyFrame: Bool, session: any CompressionSession) throws {
        if let reason = limitReached(at: pts) {
            limitHit = reason
            control.stopCapture()
            return
        }
        let token = FrameToken(nextToken)
        if nextToken == 0, let audio {
            // The picture's 0 on the clock the sound is stamped with.
            let ptsNanoseconds = pts.ticks(since: .zero, timescale: 1_000_000_000)
            audio.setOrigin((captureTime ?? MonotonicClock.nanoseconds()) - ptsNanoseconds)
        }
        nextToken += 1
        try timestamps?.record(shownAt)
        // A segment starts with a keyframe carrying SPS/PPS, so each file plays alone.
        let outputWantsKey = output?.requiresKeyFrame(for: token, at: pts) ?? false
        inEncoder[token] = FrameRecord(pts: pts, captureTime: captureTime)
        decodeTimes?.arrived(pts)
        let encodeStarted = MonotonicClock.nanoseconds()
        try session.encode(buffer, pts: pts, forceKeyFrame: keyFrame || outputWantsKey, token: token)
        framesSubmitted += 1
        if speedControl != nil { try adaptSpeed(session, encodeStarted: encodeStarted) }
    }

    private func limitReached(at pts: MediaTime) -> StopReason? {
        if let frames = limits.frames, framesSubmitted >= frames { return .frameLimit }
        if let duration = limits.duration, pts.seconds >= duration - 1e-9 { return .durationLimit }
        return nil
    }

    /// Writes one frame out of the encoder. Its times become the ones it went in with (the
    /// encoder may have rounded them to its timebase: x264 does) and the decode time that
    /// goes with them, so a container carries each frame's own time.
    private func deliver(_ encoded: EncodedFrame) throws {
        guard let session, let output else { return }
        var frame = encoded
        if let record = inEncoder.removeValue(forKey: frame.token) {
            frame.pts = record.pts
            if let captured = record.captureTime {
                latency.add(milliseconds: Double(MonotonicClock.nanoseconds() - captured) / 1e6)
            }
        }
        if let dts = decodeTimes?.next() { frame.dts = dts }
        let format = session.formatDescription
        try control.whileWriting({ () throws(OutputError) in
            if format != outputFormat {
                try output.writeHeader(format)
                outputFormat = format
            }
            try output.write(frame)
            if let audio { try writeSound(audio, output, through: frame) }
        }, unusedFile: { output.unusedFile })
        guard let progress else { return }
        let written = output.statistics
        progress.frameWritten(count: written.frames, bytes: written.bytes) {
            let source = self.source.statistics
            let sound = self.audio?.liveStatus
            return ProgressReporter.Counters(captured: control.framesCaptured, droppedQueue: control.droppedAtQueue,
                                             droppedDriver: source.droppedBySource, bad: source.badFrames,
                                             duplicated: framesDuplicated, soundGaps: sound?.gaps ?? 0,
                                             soundOverruns: sound?.overruns ?? 0, soundGone: sound?.gone ?? false,
                                             speed: self.currentSpeed)
        }
    }
}

extension Recorder {
    /// `--realtime adaptive`: the controller, if the session has speeds to step between, and
    /// the session at the controller's first step.
    private func startSpeedControl(_ session: any CompressionSession) throws(EncoderError) {
        speedSteps = session.speedSteps
        guard speedSteps.count > 1 else {
            let reason = speedSteps.isEmpty ? "\(session.encoderName) cannot change its speed while it runs here"
                : "\(session.encoderName) has nothing faster than \(speedSteps[0])"
            notice("--realtime adaptive: \(reason); frames are dropped at the queue if it falls behind")
            return
        }
        let control = SpeedController(steps: speedSteps.count,
                                      frameInterval: frameDuration.seconds,
                                      cores: Self.usableCores(),
                                      newEncoderFrom: session.newEncoderFromSpeedStep)
        try session.setSpeedStep(control.step)
        speedControl = control
    }

    /// The cores the process may run on (as x264 counts them for its threads), else those online.
    static func usableCores() -> Int {
        let allowed = Int(vt_usable_cores())
        return allowed > 0 ? allowed : max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }

    /// After each picture handed to the encoder: the controller's measurements, and the change
    /// of speed it asks for.
    private func adaptSpeed(_ session: any CompressionSession, encodeStarted: Int64) throws {
        let now = MonotonicClock.nanoseconds()
        let observation = SpeedController.Observation(
            now: now, encodeNanoseconds: now - encodeStarted, waiting: control.queue.waiting,
            dropped: control.droppedAtQueue, cpuNanoseconds: MonotonicClock.cpuNanoseconds(),
            encoderStarted: framesSubmitted > framesInEncoder && !session.speedChangePending)
        guard let step = speedControl?.observe(observation) else { return }
        try session.setSpeedStep(step)
    }

    /// The speed the encoder runs at now, for the status line; nil when it does not adapt.
    var currentSpeed: String? { speedControl.map { speedSteps[$0.step] } }

    /// After each frame: the sound up to the latest presentation time written, so the two are
    /// interleaved in the file (and a segment's file gets the sound up to its last picture);
    /// and the sound source is told how far the picture has come.
    private func writeSound(_ audio: AudioRecorder, _ output: any MediaOutput, through frame: EncodedFrame) throws(OutputError) {
        let duration = frameDuration
        let frameEnd = frame.pts + duration
        if pictureEnd.map({ frameEnd > $0 }) ?? true { pictureEnd = frameEnd }
        let latest = (pictureEnd ?? frameEnd).ticks(since: duration, timescale: Int32(audio.format.sampleRate))
        audio.pictureWritten(upTo: Double(latest) / Double(audio.format.sampleRate))
        for packet in audio.packets(through: latest) {
            try output.writeAudio(packet)
        }
    }

    /// At a clean end, once every frame is written: the sound to the picture's end, all of it.
    private func finishSound(_ audio: AudioRecorder, _ output: any MediaOutput) throws {
        let end = pictureEnd?.seconds ?? 0
        let rest = try audio.finish(atSeconds: end)
        try control.whileWriting({ () throws(OutputError) in
            for packet in rest { try output.writeAudio(packet) }
        }, unusedFile: { output.unusedFile })
    }
}

import CLinux
import Foundation
import VTAudio
import VTCapture
import VTCore
import VTEncoding
import VTEvents
import VTOutput
import VTPictures

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
    let limits: RecordingLimits
    let retiming: FrameRate?
    /// `--timing cfr`: the grid's rate; nil encodes every frame once at its own time.
    private let timing: FrameRate?
    let timestamps: TimestampLog?
    /// `--audio`: the sound, written beside the picture.
    let sound: SoundInterleaver?
    /// What runs beside the pipeline (stills, speed control, the status line), in order.
    private(set) var stages: [any RecordingStage] = []

    private var session: (any CompressionSession)?
    private(set) var output: (any MediaOutput)?
    /// The parameter sets the output was last given.
    private var outputFormat: VideoFormatDescription?
    var framesSubmitted = 0
    var limitHit: StopReason?
    var framesDuplicated = 0
    var framesDroppedTiming = 0
    /// What is known of each picture in the encoder, by the token it was given with; an entry
    /// goes when its picture comes out.
    var inEncoder: [FrameToken: FrameRecord] = [:]
    var nextToken: UInt64 = 0
    /// Decode times from the presentation times frames went in with, in the encoder's order.
    var decodeTimes: DecodeTimes?
    /// Capture → written, per picture from a source with a capture clock.
    private var latency = LatencyHistogram()
    /// Nanoseconds: the longest one picture kept the encoder thread in the encoder (its writes
    /// left out) and the longest one access unit took to write to the outputs. Either of them
    /// near the queue's length in frame intervals is what drops frames at the queue.
    var longestEncode: Int64 = 0
    private var longestWrite: Int64 = 0
    /// Time spent writing inside the current encode call (an encoder that delivers at once).
    var writingInEncode: Int64 = 0
    /// Signalled when the capture thread has left its loop; nil until it starts.
    private var captureThreadDone: DispatchSemaphore?
    private var sourceClosed = false
    /// `liveResults`: how often the figures so far are published to `control.liveResult`,
    /// in nanoseconds; nil publishes none.
    private let liveResultInterval: Int64?
    private var liveResultPublished: Int64 = 0
    /// What the result reports before the run is over.
    private var runStarted = ContinuousClock.now
    private var encoderName = "none"
    private var resolvedSettings: EncoderSettings?

    struct FrameRecord {
        /// The time the frame went into the encoder with: its capture time, or its grid slot.
        var pts: MediaTime
        /// CLOCK_MONOTONIC nanoseconds; nil for a repeat or a source without a capture clock.
        var captureTime: Int64?
    }

    /// How a recording runs, beside its source, encoder and output.
    public struct Configuration {
        public var realTime: EncoderSettings.RealTimeMode
        public var limits: RecordingLimits
        /// Places frame n at n ÷ rate instead of at the source's time: a file whose header
        /// rate is overridden (`--fps` with `--input`).
        public var retiming: FrameRate?
        /// Places frames on a constant-rate grid of this rate (`--timing cfr`).
        public var timing: FrameRate?
        /// Logs each encoded frame's time.
        public var timestamps: TimestampLog?
        /// Sizes the queue; the source's pools are sized from the same value.
        public var depth = PipelineDepth()
        public var progress: ProgressReporter?
        /// Offered every frame after it was encoded.
        public var stills: StillTaker?
        public var audio: AudioRecorder?
        public var motion: (detector: MotionDetector, inbox: EventInbox?)?
        /// Publishes the figures so far to `control.liveResult` twice a second.
        public var liveResults = false
        public var liveJPEGs: LiveJPEGs?
        public var liveEncoding: LiveEncoding?
        /// Says what changes as it records (not with --quiet).
        public var notice: (String) -> Void = { _ in }
        /// Says what went wrong but does not stop it (always).
        public var warn: (String) -> Void = { _ in }

        public init(realTime: EncoderSettings.RealTimeMode = .off, limits: RecordingLimits = RecordingLimits()) {
            self.realTime = realTime
            self.limits = limits
        }
    }

    /// The session is created and prepared before the output, so settings the encoder refuses
    /// never leave an empty output file behind.
    public init(source: any CaptureSource, configuration: Configuration,
                makeSession: @escaping SessionFactory, makeOutput: @escaping OutputFactory) {
        let (realTime, retiming, timing, depth, stills) = (configuration.realTime, configuration.retiming,
                                                           configuration.timing, configuration.depth, configuration.stills)
        precondition(timing == nil || depth.holdsGridFrame, "a constant-rate grid holds a frame the depth must count")
        precondition(stills == nil || depth.holdsStill, "a still taker holds a frame the depth must count")
        let control = RecordingControl(source: source, depth: depth)
        self.control = control
        self.source = source
        self.makeOutput = makeOutput
        self.realTime = realTime
        self.limits = configuration.limits
        self.retiming = retiming
        self.timing = timing
        self.timestamps = configuration.timestamps
        self.makeSession = makeSession
        liveResultInterval = configuration.liveResults ? 500_000_000 : nil
        let frameDuration = (retiming ?? source.format.frameRate).frameDuration
        sound = configuration.audio.map { SoundInterleaver($0, frameDuration: frameDuration) }
        let (notice, warn) = (configuration.notice, configuration.warn)
        var speed: SpeedControlStage?
        if realTime == .adaptive {
            speed = SpeedControlStage(control: control, frameInterval: frameDuration.seconds, notice: notice)
        }
        let status = configuration.progress.map { reporter in
            ProgressStage(reporter) { [unowned self] in progressCounters(speed: speed?.current) }
        }
        precondition(configuration.liveJPEGs == nil || depth.holdsLiveStill, "a live still taker holds a frame the depth must count")
        let live = configuration.liveJPEGs.map { LiveJPEGStage($0) }
        let liveEncode = configuration.liveEncoding.map { LiveEncodeStage($0) }
        // Motion first, then the live JPEGs, which take a frame only to make a JPEG of it: a
        // still taker takes every frame it is offered (letting go of those it does not want).
        let optional: [(any RecordingStage)?] = [configuration.motion.map { MotionStage(detector: $0.detector, inbox: $0.inbox,
                                                                             framesPerSecond: 1 / frameDuration.seconds, warn: warn) },
                                                 liveEncode, live, stills, speed, status]
        stages = optional.compactMap { $0 }
    }

    /// Pictures handed to the encoder that have not come out of it.
    var framesInEncoder: Int { inEncoder.count }

    /// How long a frame lasts: the source's rate, or the one it is retimed to.
    private var frameDuration: MediaTime { (retiming ?? source.format.frameRate).frameDuration }

    /// Runs the recording to its end and reports what happened. Errors from the encoder or the
    /// output end it early; a capture error ends it after what was captured is written.
    public func run() -> RecordingResult {
        let started = ContinuousClock.now
        runStarted = started
        var reason = StopReason.endOfInput
        var failure: (any Error)?
        var outputFinished = false

        do {
            let session = try makeSession { [unowned self] frame in try self.deliver(frame) }
            self.session = session
            encoderName = session.encoderName
            try session.prepare()
            // The session that opened (auto may have given way to x264).
            encoderName = session.encoderName
            resolvedSettings = session.resolvedSettings
            decodeTimes = DecodeTimes(delay: session.reorderDelay,
                                      frameDuration: frameDuration)
            for stage in stages { try stage.prepared(session) }
            if control.isStopRequested {
                // Stopped while the source was opening: there is nothing to record.
                reason = .signal
                try timestamps?.close()
            } else {
                try control.whileWriting({ output = try makeOutput() }, unusedFile: { output?.unusedFile })
                sound?.audio.start { [control] error in control.stopForFailure(error) }
                startCaptureThread()
                reason = try timing.map { try encodeOnGrid(ConstantRateGrid(rate: $0), session) } ?? encodeEach(session)
                // Capture is over: the camera is given back before the encoder drains.
                finishCapture()
                let captureFailed = control.captureFailure != nil
                try session.completeFrames()
                try timestamps?.close()
                if let output, let sound {
                    try sound.finish { packets in
                        try control.whileWriting({ () throws(OutputError) in
                            for packet in packets { try output.writeAudio(packet) }
                        }, unusedFile: { output.unusedFile })
                    }
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
            control.endCaptureEarly()
        }
        for stage in stages { stage.finish() }
        sound?.audio.cancel()
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
        let final = result(reason: reason, failure: failure, encoder: encoderName, settings: resolvedSettings,
                           elapsed: started.duration(to: .now))
        if liveResultInterval != nil { control.publishLive(final) }
        return final
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
        statistics.longestEncode = Double(longestEncode) / 1e6
        statistics.longestWrite = Double(longestWrite) / 1e6
        statistics.audio = sound?.audio.summary
        for stage in stages { stage.report(into: &statistics) }
        statistics.source = source.statistics
        statistics.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return RecordingResult(statistics: statistics, stopReason: reason, encoder: encoder,
                               settings: settings, segments: output?.paths ?? [], finalized: output?.finalized,
                               branches: output?.branchReports ?? [], error: failure)
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

    /// Writes one frame out of the encoder. Its times become the ones it went in with (the
    /// encoder may have rounded them to its timebase: x264 does) and the decode time that
    /// goes with them, so a container carries each frame's own time.
    private func deliver(_ encoded: EncodedFrame) throws {
        guard let session, let output else { return }
        var frame = encoded
        if let record = inEncoder.removeValue(forKey: frame.token) {
            frame.pts = record.pts
            frame.captureTime = record.captureTime
            if let captured = record.captureTime {
                latency.add(milliseconds: Double(MonotonicClock.nanoseconds() - captured) / 1e6)
            }
        }
        if let dts = decodeTimes?.next() { frame.dts = dts }
        let format = session.formatDescription
        let writeStarted = MonotonicClock.nanoseconds()
        defer {
            let took = MonotonicClock.nanoseconds() - writeStarted
            longestWrite = max(longestWrite, took)
            writingInEncode += took
        }
        try control.whileWriting({ () throws(OutputError) in
            if format != outputFormat {
                try output.writeHeader(format)
                outputFormat = format
            }
            try output.write(frame)
            try sound?.frameWritten(frame, to: output)
        }, unusedFile: { output.unusedFile })
        let written = output.statistics
        for stage in stages { stage.written(written) }
        if let interval = liveResultInterval {
            let now = MonotonicClock.nanoseconds()
            if now - liveResultPublished >= interval {
                liveResultPublished = now
                control.publishLive(result(reason: .recording, failure: nil, encoder: encoderName,
                                           settings: resolvedSettings, elapsed: runStarted.duration(to: .now)))
            }
        }
    }

    /// What the status line shows beside the frames written.
    private func progressCounters(speed: String?) -> ProgressReporter.Counters {
        let source = source.statistics
        let sound = sound?.audio.liveStatus
        return ProgressReporter.Counters(captured: control.framesCaptured, droppedQueue: control.droppedAtQueue,
                                         droppedDriver: source.droppedBySource, bad: source.badFrames,
                                         duplicated: framesDuplicated, soundGaps: sound?.gaps ?? 0,
                                         soundOverruns: sound?.overruns ?? 0, soundGone: sound?.gone ?? false,
                                         speed: speed, outputs: output?.branchReports ?? [],
                                         notes: stages.compactMap(\.statusNote) + (output?.statusNotes ?? []))
    }
}

import Foundation
import Logging
import Synchronization
import VTCore

/// What a recording's sound came to, for the summary.
public struct AudioSummary: Sendable, Equatable {
    public var device: String
    public var sampleRate: Int
    public var channels: Int
    public var codec: AudioCodec
    public var bitRate: Int?
    /// Samples in the file (per channel), the priming not counted.
    public var samples: Int64 = 0
    /// Gaps filled with silence (an overrun, a stall, an unplugged device), and their length.
    public var gaps = 0
    public var silenceSeconds = 0.0
    public var overruns = 0
    public var disconnects = 0
    public var reconnects = 0
    /// The device's clock against the camera's, in ppm; nil when not measured (not live, or
    /// under ten seconds).
    public var driftPPM: Double?
    /// CPU time the audio thread used (reading, converting, encoding), in seconds.
    public var cpuSeconds = 0.0
    /// The loudest sample of the last half second or so, in dB below full scale (nil before
    /// any sound came).
    public var levelDBFS: Double?
}

/// The sound half of a recording: an audio thread reads the source, the `AudioConformer`
/// puts the samples on the picture's timeline and the encoder session codes them; the
/// packets wait here until the recorder (the video encoder thread, which owns the output)
/// takes them, interleaved with the frames by time.
///
/// The order of calls from the recorder: `start` before the source's first frame is asked
/// for; `setOrigin` at the first frame, with the CLOCK_MONOTONIC instant of the picture's 0
/// (for a live source); `pictureWritten` and `packets(through:)` after each frame written;
/// then `finish(atSeconds:)` with the picture's end, or `cancel` after a failure.
///
/// A device that goes away is a warning: the recording goes on, silence fills the gap, and
/// the device is opened again when it comes back; with `required`, it ends the recording
/// instead (`start`'s `onFailure`, exit 3).
///
/// Sendable: what the audio thread and the recorder's thread share is atomic or behind a
/// mutex. The conformer (and the encoder in it) is the audio thread's while it runs and the
/// recorder's once `finish` or `cancel` has joined it; its mutex is never contended in that
/// use, and makes it provable.
public final class AudioRecorder: Sendable {
    public let format: AudioFormatDescription
    /// How often a device that went away is tried again.
    static let reopenInterval: Duration = .milliseconds(250)
    /// How long `finish` waits for a live device to give sound up to the end.
    static let finishTimeout = 1.0
    /// Sound held while the picture has not started yet, in seconds.
    static let heldBeforeStart = 2.0

    private let source: any AudioSource
    private let conformer: Mutex<AudioConformer>
    private let required: Bool
    private let logger: Logger
    /// CLOCK_MONOTONIC of the picture's 0; `Int64.min` until known.
    private let origin = Atomic<Int64>(.min)
    private let stopping = Atomic<Bool>(false)
    private let ready = Mutex<[EncodedAudioPacket]>([])
    private let failureSlot = Mutex<(any Error)?>(nil)
    private let done = DispatchSemaphore(value: 0)
    /// Where the audio thread is in its life, and what it counted (written by it, read once
    /// it is joined).
    private let progress = Mutex(Progress())

    private struct Progress {
        var started = false
        var joined = false
        var finished = false
        var disconnects = 0
        var reconnects = 0
        var threadCPU = 0.0
    }

    /// Opens the encoder for `codec` at the rate it codes the source's at; the source is open.
    public init(source: any AudioSource, codec: AudioCodec, bitRate: Int?, offsetMilliseconds: Double = 0,
                required: Bool = false, logger: Logger) throws(AudioEncoderError) {
        let rate = AudioCompressionSession.codingRate(for: codec, captureRate: source.format.sampleRate)
        let encoder = try AudioCompressionSession(codec: codec, sampleRate: rate, channels: source.format.channels,
                                                  bitRate: bitRate)
        let conformer = try AudioConformer(source: source.format, encoder: encoder,
                                           offsetNanoseconds: Int64((offsetMilliseconds * 1e6).rounded()))
        self.conformer = Mutex(conformer)
        format = encoder.format
        self.source = source
        self.required = required
        self.logger = logger
    }

    /// What the status line shows while recording: gaps filled so far, overruns, and whether
    /// the device is gone at the moment.
    public struct LiveStatus: Sendable, Equatable {
        public var gaps = 0
        public var overruns = 0
        public var gone = false
        /// The loudest sample of the latest half second, in dBFS.
        public var levelDBFS: Double?
    }

    public var liveStatus: LiveStatus { liveSlot.withLock { $0 } }
    private let liveSlot = Mutex(LiveStatus())

    /// What made the sound fail (the encoder, or a required device), if it did.
    public var failure: (any Error)? { failureSlot.withLock { $0 } }

    /// The audio thread's name, as `top -H` and /proc show it.
    public static let threadName = "vtrecord-audio"

    /// Starts the audio thread. `onFailure` is told when the sound fails in a way that must
    /// end the recording (a required device gone, the encoder failing).
    public func start(onFailure: @escaping @Sendable (any Error) -> Void) {
        progress.withLock { $0.started = true }
        Thread.start(named: Self.threadName) { [self] in
            run(onFailure: onFailure)
            let cpu = Double(MonotonicClock.cpuNanoseconds(thread: true)) / 1e9
            progress.withLock { $0.threadCPU = cpu }
            done.signal()
        }
    }

    /// The CLOCK_MONOTONIC instant the picture's time 0 stands for.
    public func setOrigin(_ nanoseconds: Int64) {
        _ = origin.compareExchange(expected: .min, desired: nanoseconds, ordering: .releasing)
    }

    /// The picture has been written up to `seconds` of the recording's timeline: the sound up
    /// to there may be encoded (what comes after waits, so it can still be cut where the
    /// picture ends).
    public func pictureWritten(upTo seconds: Double) {
        let sample = Int64((seconds * Double(format.sampleRate)).rounded(.down))
        if sample > released.load(ordering: .relaxed) { released.store(sample, ordering: .releasing) }
        source.pictureReached(seconds)
    }

    /// How far the sound may be encoded, in samples.
    private let released = Atomic<Int64>(0)

    /// The packets ready whose first sample is at or before `sample` (in the track's rate),
    /// in order, taken out.
    public func packets(through sample: Int64) -> [EncodedAudioPacket] {
        ready.withLock { queue in
            guard let firstLater = queue.firstIndex(where: { $0.pts > sample }) else {
                defer { queue.removeAll(keepingCapacity: true) }
                return queue
            }
            defer { queue.removeFirst(firstLater) }
            return Array(queue[..<firstLater])
        }
    }

    /// Ends the sound at `seconds` (the picture's end): waits for the source to reach it (a
    /// live one at most `finishTimeout` seconds more; silence stands in for what it did not
    /// give), drains the encoder and returns every packet not taken yet.
    public func finish(atSeconds seconds: Double) throws -> [EncodedAudioPacket] {
        let end = Int64((seconds * Double(format.sampleRate)).rounded())
        endSamples.store(end, ordering: .releasing)
        source.pictureReached(seconds + 1)
        if done.wait(timeout: .now() + Self.finishTimeout) == .timedOut {
            stopping.store(true, ordering: .releasing)
            source.stop()
            done.wait()
        }
        progress.withLock { $0.joined = true }
        source.close()
        // A device that failed is reported by the recording; its sound is completed with silence.
        if let failure = failure as? AudioEncoderError { throw failure }
        try conformer.withLock { conformer in
            conformer.setEnd(end)
            try conformer.finish()
        }
        progress.withLock { $0.finished = true }
        publish()
        return packets(through: .max)
    }

    /// Stops the sound after a failure of the recording; nothing more is encoded.
    public func cancel() {
        guard progress.withLock({ $0.started && !$0.joined }) else { return }
        stopping.store(true, ordering: .releasing)
        source.stop()
        done.wait()
        progress.withLock { $0.joined = true }
        source.close()
    }

    public var summary: AudioSummary {
        let (statistics, samples) = conformer.withLock { ($0.statistics, $0.encoder.samplesTaken) }
        let capture = source.statistics
        let thread = progress.withLock { $0 }
        var summary = AudioSummary(device: source.format.name, sampleRate: format.sampleRate, channels: format.channels,
                                   codec: format.codec, bitRate: format.bitRate)
        summary.samples = thread.finished ? samples : 0
        summary.gaps = statistics.gaps
        summary.silenceSeconds = Double(statistics.silenceSamples) / Double(format.sampleRate)
        summary.overruns = capture.overruns
        summary.disconnects = max(capture.disconnects, thread.disconnects)
        summary.reconnects = max(capture.reconnects, thread.reconnects)
        summary.driftPPM = statistics.driftPPM
        summary.cpuSeconds = thread.joined ? thread.threadCPU : 0
        summary.levelDBFS = liveSlot.withLock { $0.levelDBFS }
        return summary
    }

    /// The end in samples once `finish` is called; `Int64.max` until then.
    private let endSamples = Atomic<Int64>(.max)

    // MARK: - The audio thread

    private func run(onFailure: @Sendable (any Error) -> Void) {
        var held: [AudioChunk] = []
        var meter = LevelMeter(sampleRate: source.format.sampleRate)
        let live = source.format.isLive
        if live { ThreadPriority.raiseForLiveCapture() }
        do {
            while !stopping.load(ordering: .acquiring) {
                let end = endSamples.load(ordering: .acquiring)
                if end != .max {
                    let reached = conformer.withLock { conformer in
                        conformer.setEnd(end)
                        return conformer.reachedEnd
                    }
                    if reached { break }
                }
                guard let chunk = try nextChunk() else { break }
                let start = origin.load(ordering: .acquiring)
                if live && start == .min {
                    // The picture has not started: keep the last few seconds, which may hold its 0.
                    held.append(chunk)
                    let limit = Int(Self.heldBeforeStart * Double(source.format.sampleRate))
                    while held.dropFirst().reduce(0, { $0 + $1.frames }) > limit { held.removeFirst() }
                    continue
                }
                let earlier = held
                held.removeAll()
                let gaps = try conformer.withLock { conformer in
                    for chunk in earlier { try conformer.take(chunk, origin: start) }
                    try conformer.take(chunk, origin: live ? start : nil)
                    try conformer.encoder.release(upTo: released.load(ordering: .acquiring))
                    return conformer.statistics.gaps
                }
                publish()
                let overruns = source.statistics.overruns
                meter.take(chunk, format: source.format.sampleFormat)
                liveSlot.withLock { $0 = LiveStatus(gaps: gaps, overruns: overruns, gone: false, levelDBFS: meter.levelDBFS) }
            }
        } catch {
            failureSlot.withLock { $0 = error }
            onFailure(error)
        }
    }

    /// The next chunk; a device that went away is waited for (opened again every
    /// `reopenInterval`) unless it is required; nil once stopped.
    private func nextChunk() throws -> AudioChunk? {
        while true {
            do {
                return try source.nextChunk()
            } catch {
                if required { throw error }
                let disconnects = progress.withLock { progress in
                    progress.disconnects += 1
                    return progress.disconnects
                }
                liveSlot.withLock { $0.gone = true }
                if disconnects == 1 {
                    logger.warning("\(error): recording goes on with silence until it is back")
                }
                while !stopping.load(ordering: .acquiring) && endSamples.load(ordering: .acquiring) == .max {
                    Thread.sleep(forTimeInterval: Double(Self.reopenInterval.components.attoseconds) / 1e18)
                    do {
                        try source.reopen()
                        progress.withLock { $0.reconnects += 1 }
                        logger.notice("sound device \(source.format.name) is back")
                        break
                    } catch {
                        continue
                    }
                }
                if stopping.load(ordering: .acquiring) || endSamples.load(ordering: .acquiring) != .max { return nil }
            }
        }
    }

    /// Moves the encoder's new packets to where the recorder takes them.
    private func publish() {
        let made = conformer.withLock { $0.encoder.takePackets() }
        guard !made.isEmpty else { return }
        ready.withLock { $0.append(contentsOf: made) }
    }
}

import CAVFormat
import VTCore
import VTFFmpeg

/// Puts a sound source's samples on the recording's timeline, in the encoder's format and
/// rate, and keeps them there: libswresample converts, and stretches or squeezes by a few
/// samples a second so a sound card whose clock runs fast or slow against the camera's stays
/// with the picture for hours.
///
/// Each chunk from a live source carries the CLOCK_MONOTONIC time of its first sample; the
/// picture's time 0 is a CLOCK_MONOTONIC instant too (`origin`), so every chunk has a place
/// on the timeline it should land at. The conformer compares that with where it will land
/// (samples given to the encoder plus those still inside the resampler) and:
/// - a small difference (the clocks drifting apart, tens to hundreds of ppm) is corrected by
///   resampling (`swr_set_compensation`): the difference, smoothed over about a second, is
///   taken away over `correctionSeconds`, and its running sum (over `integralSeconds`) learns
///   the clocks' steady rate difference, so a constant drift leaves no constant lag; never
///   faster than `maximumCorrection`, so the pitch change is inaudible and there are no jumps;
/// - a large one (more than `jumpThreshold`: a stall, a device that went away and came back),
///   or any after the source said it lost samples (an overrun), is a gap: silence fills it (`swr_inject_silence`), or, for sound that would
///   land on sound already written, the overlap is dropped (`swr_drop_output`); both counted.
/// Sound from before the picture's start is dropped; a source that starts after it gets
/// silence in front. A source that is not live is taken as it comes, sample n at n ÷ rate.
final class AudioConformer {
    /// A difference beyond this is a gap or an overlap, corrected at once, in seconds.
    static let jumpThreshold = 0.040
    /// How long a smoothed difference takes to be corrected, in seconds.
    static let correctionSeconds = 4.0
    /// The fastest correction: 0.5 %, a twelfth of a semitone.
    static let maximumCorrection = 0.005
    /// The smoothing of the measured difference, in seconds.
    static let smoothingSeconds = 1.0
    /// How slowly the steady rate difference is learnt, in seconds.
    static let integralSeconds = 16.0

    struct Statistics: Sendable, Equatable {
        /// Gaps filled with silence, and the samples of silence written for them.
        var gaps = 0
        var silenceSamples: Int64 = 0
        /// Samples dropped because they would have landed on sound already written, or before
        /// the picture's start (`droppedBeforeStart`).
        var overlapSamples: Int64 = 0
        var droppedBeforeStart: Int64 = 0
        /// Silence written before the source's first sample, when it started after the picture.
        var leadingSilence: Int64 = 0
        /// The source's clock against CLOCK_MONOTONIC, in parts per million, measured over the
        /// whole recording (spans between gaps); nil until ten seconds are measured.
        var driftPPM: Double?
    }

    private(set) var statistics = Statistics()
    let encoder: AudioCompressionSession
    private let source: AudioCaptureFormat
    private var resampler: OpaquePointer?
    private let outputRate: Int
    /// Nanoseconds added to every chunk's time (`--audio-offset`).
    private let offset: Int64
    /// The smoothed difference, in output samples: positive when sound would land late.
    private var smoothedError: Double?
    /// The sum of the smoothed difference over time (sample-seconds): the integral term.
    private var errorIntegral = 0.0
    private var compensation = 0
    /// The span measured for the drift: where it started and the frames since.
    private var spanStart: Int64?
    private var spanFrames: Int64 = 0
    private var measuredSeconds = 0.0
    private var measuredFrames = 0.0
    /// The end of the recording in output samples, once known: nothing goes beyond it.
    private var end: Int64?
    private var started = false
    /// Output samples of a source without a clock skipped whole before its start (a negative
    /// offset longer than a chunk).
    private var skippedWithoutClock = 0.0

    init(source: AudioCaptureFormat, encoder: AudioCompressionSession, offsetNanoseconds: Int64 = 0) throws(AudioEncoderError) {
        self.source = source
        self.encoder = encoder
        self.offset = offsetNanoseconds
        outputRate = encoder.format.sampleRate
        var inLayout = AVChannelLayout()
        var outLayout = AVChannelLayout()
        vt_av_channel_layout_default(&inLayout, Int32(source.channels))
        vt_av_channel_layout_default(&outLayout, Int32(encoder.format.channels))
        defer {
            vt_av_channel_layout_uninit(&inLayout)
            vt_av_channel_layout_uninit(&outLayout)
        }
        var context: OpaquePointer?
        var status = vt_swr_alloc_set_opts2(&context, &outLayout, encoder.sampleFormat, Int32(outputRate),
                                            &inLayout, Self.avFormat(source.sampleFormat), Int32(source.sampleRate),
                                            0, nil)
        if status >= 0 { status = vt_swr_init(context) }
        resampler = context
        guard status >= 0 else {
            vt_swr_free(&resampler)
            throw AudioEncoderError("cannot convert \(source.sampleRate) Hz \(source.sampleFormat.rawValue) to the encoder's "
                                    + "\(outputRate) Hz: \(FFmpegLibraries.errorText(status))")
        }
    }

    deinit {
        vt_swr_free(&resampler)
    }

    /// Takes one chunk. `origin` is the CLOCK_MONOTONIC time of the picture's 0, for a live
    /// source. Returns false once the chunk reaches the end (when one is set): nothing more is
    /// wanted.
    @discardableResult
    func take(_ chunk: AudioChunk, origin: Int64?) throws(AudioEncoderError) -> Bool {
        var frames = chunk.frames
        var skip = 0
        if let time = chunk.time, let origin {
            let ideal = Double(time + offset - origin) * Double(outputRate) / 1e9
            if !started {
                guard try start(at: ideal, frames: &frames, skip: &skip) else { return true }
                measure(time: time + Int64(Double(skip) * 1e9 / Double(source.sampleRate)), frames: frames, restart: true)
            } else {
                let error = landingPosition() - ideal
                // After a known loss any difference is the gap; otherwise only a large one is.
                let threshold = chunk.followsLoss ? 0.5 : Self.jumpThreshold * Double(outputRate)
                if abs(error) > threshold {
                    try jump(by: error)
                    measure(time: time, frames: frames, restart: true)
                } else {
                    steer(error, chunkSeconds: Double(frames) / Double(source.sampleRate))
                    measure(time: time, frames: frames, restart: false)
                }
            }
        } else if !started {
            // A source without a clock starts at the recording's 0, moved by the offset.
            let ideal = Double(offset) * Double(outputRate) / 1e9 + skippedWithoutClock
            guard try start(at: ideal, frames: &frames, skip: &skip) else {
                skippedWithoutClock += Double(chunk.frames) * Double(outputRate) / Double(source.sampleRate)
                return true
            }
        }
        let bytes = source.bytesPerFrame
        let result = chunk.data.withUnsafeBytes { raw in
            Result { () throws(AudioEncoderError) -> Bool in
                try convert(raw.baseAddress.map { $0 + skip * bytes }, frames: frames)
            }
        }
        return try result.get()
    }

    /// Places the first chunk, whose first sample belongs at output sample `ideal`: sound
    /// before 0 is skipped (false when nothing of the chunk is left), silence fills up to a
    /// later start.
    private func start(at ideal: Double, frames: inout Int, skip: inout Int) throws(AudioEncoderError) -> Bool {
        if ideal < 0 {
            // Sound from before the picture's start.
            skip = min(frames, Int((-ideal * Double(source.sampleRate) / Double(outputRate)).rounded()))
            statistics.droppedBeforeStart += Int64(skip)
            frames -= skip
            if frames == 0 { return false }
        } else if ideal >= 1 {
            let silence = Int(ideal.rounded())
            try inject(silence)
            statistics.leadingSilence += Int64(silence)
        }
        started = true
        return true
    }

    /// Sets the recording's end, in output samples; nothing is encoded beyond it.
    func setEnd(_ samples: Int64) {
        end = samples
    }

    /// Whether the sound given so far reaches the end.
    var reachedEnd: Bool {
        guard let end else { return false }
        return encoder.samplesTaken + Int64(pendingSamples) >= end
    }

    /// Completes the sound to the end: what the resampler holds, then silence for whatever the
    /// source did not give (counted as a gap when it is more than a packet), then the encoder
    /// is drained.
    func finish() throws(AudioEncoderError) {
        try drain(input: nil, frames: 0)
        if let end, encoder.samplesTaken < end {
            let missing = end - encoder.samplesTaken
            if missing > Int64(encoder.format.samplesPerPacket) {
                statistics.gaps += 1
                statistics.silenceSamples += missing
            }
            try encoder.fillSilence(Int(missing))
        }
        if let end { encoder.cut(at: end) }
        try encoder.finish()
    }

    /// Samples inside the resampler, in output samples.
    private var pendingSamples: Int {
        Int(vt_swr_get_delay(resampler, Int64(outputRate)))
    }

    /// Where the next input sample will land, in output samples.
    private func landingPosition() -> Double {
        Double(encoder.samplesTaken) + Double(pendingSamples)
    }

    private func jump(by error: Double) throws(AudioEncoderError) {
        let samples = Int(abs(error).rounded())
        if error < 0 {
            try inject(samples)
            statistics.gaps += 1
            statistics.silenceSamples += Int64(samples)
        } else {
            let status = vt_swr_drop_output(resampler, Int32(samples))
            guard status >= 0 else { throw failure("dropping samples", status) }
            statistics.overlapSamples += Int64(samples)
        }
        smoothedError = nil
    }

    /// Silence of `samples` output samples, through the resampler so it lands after what it holds.
    private func inject(_ samples: Int) throws(AudioEncoderError) {
        let input = Int32((Double(samples) * Double(source.sampleRate) / Double(outputRate)).rounded())
        guard input > 0 else { return }
        let status = vt_swr_inject_silence(resampler, input)
        guard status >= 0 else { throw failure("writing silence", status) }
    }

    /// Resamples a little faster or slower so the smoothed difference goes away over
    /// `correctionSeconds`.
    private func steer(_ error: Double, chunkSeconds: Double) {
        let weight = min(1, chunkSeconds / Self.smoothingSeconds)
        let smoothed = smoothedError.map { $0 + (error - $0) * weight } ?? error
        smoothedError = smoothed
        let distance = Int(Self.correctionSeconds * Double(outputRate))
        let limit = Self.maximumCorrection * Double(distance)
        // Kept within what the limit can use, so it does not wind up while the correction is
        // at its limit.
        errorIntegral = max(-limit * Self.integralSeconds, min(limit * Self.integralSeconds,
                                                               errorIntegral + smoothed * chunkSeconds))
        let wanted = smoothed + errorIntegral / Self.integralSeconds
        let delta = Int(max(-limit, min(limit, -wanted)).rounded())
        guard delta != compensation else { return }
        // Not fatal: without it the sound drifts, as it would with any other recorder.
        if vt_swr_set_compensation(resampler, Int32(delta), Int32(distance)) >= 0 { compensation = delta }
    }

    /// Follows the source's rate against CLOCK_MONOTONIC over spans without gaps.
    private func measure(time: Int64, frames: Int, restart: Bool) {
        if restart || spanStart == nil {
            closeSpan(at: nil)
            spanStart = time
            spanFrames = Int64(frames)
            return
        }
        closeSpan(at: time)
        spanStart = time
        spanFrames = Int64(frames)
    }

    private func closeSpan(at time: Int64?) {
        guard let start = spanStart, let time else { return }
        let seconds = Double(time - start) / 1e9
        guard seconds > 0 else { return }
        measuredSeconds += seconds
        measuredFrames += Double(spanFrames)
        if measuredSeconds >= 10 {
            statistics.driftPPM = (measuredFrames / Double(source.sampleRate) / measuredSeconds - 1) * 1e6
        }
    }

    /// Converts `frames` input frames into the encoder, then whatever the resampler still has
    /// ready, up to the end.
    private func convert(_ input: UnsafeRawPointer?, frames: Int) throws(AudioEncoderError) -> Bool {
        if frames > 0 { try drain(input: input, frames: frames) }
        return !reachedEnd
    }

    /// Feeds `frames` input frames (none, with `input` nil, to flush the resampler at the end)
    /// and moves every sample it gives into the encoder.
    private func drain(input: UnsafeRawPointer?, frames: Int) throws(AudioEncoderError) {
        var pending = input.map { UnsafePointer<UInt8>($0.assumingMemoryBound(to: UInt8.self)) }
        var pendingFrames = frames
        let flushing = input == nil
        // A non-nil input with no frames asks for what is buffered without flushing the filter.
        var none: UInt8 = 0
        while true {
            var produced = 0
            var room = 0
            try encoder.fill { planes, space throws(AudioEncoderError) in
                room = space
                if let end = self.end { room = Int(max(0, min(Int64(space), end - self.encoder.samplesTaken))) }
                let status: Int32 = withUnsafeMutablePointer(to: &none) { nonePointer in
                    var inputs: [UnsafePointer<UInt8>?] = [flushing && pendingFrames == 0 ? nil : (pending ?? UnsafePointer(nonePointer))]
                    return inputs.withUnsafeMutableBufferPointer { list in
                        vt_swr_convert(self.resampler, planes, Int32(room),
                                       flushing && pendingFrames == 0 ? nil : list.baseAddress, Int32(pendingFrames))
                    }
                }
                guard status >= 0 else { throw self.failure("converting samples", status) }
                produced = Int(status)
                return produced
            }
            pending = nil
            pendingFrames = 0
            if room == 0 {
                // At the end: what the resampler still holds is beyond it.
                return
            }
            if produced < room { return }
        }
    }

    private func failure(_ what: String, _ status: Int32) -> AudioEncoderError {
        AudioEncoderError("sound conversion failed \(what): \(FFmpegLibraries.errorText(status))")
    }

    static func avFormat(_ format: AudioSampleFormat) -> AVSampleFormat {
        switch format {
        case .s16: AV_SAMPLE_FMT_S16
        case .s32: AV_SAMPLE_FMT_S32
        case .float32: AV_SAMPLE_FMT_FLT
        }
    }
}

import VTCapture
import VTCore
import VTEncoding
import VTOutput

/// The encoder thread's loop: frames from the queue into the encoder, each once at its own time
/// or on the constant-rate grid, until a limit, a stop or the end of input.
extension Recorder {
    /// Every frame once, at its own time.
    func encodeEach(_ session: any CompressionSession) throws -> StopReason {
        while var frame = control.queue.take() {
            retime(&frame)
            // Past a limit, what is still queued is not wanted.
            guard limitHit == nil else { continue }
            try submit(frame, pts: frame.pts, shownAt: frame.pts, captureTime: frame.captureTime,
                       keyFrame: frame.isDiscontinuity, session: session)
            if limitHit == nil { encoded(frame) }
        }
        return stopReason()
    }

    /// Every slot of the constant-rate grid filled, each frame at the slot nearest its time.
    func encodeOnGrid(_ grid: consuming ConstantRateGrid, _ session: any CompressionSession) throws -> StopReason {
        defer { framesDroppedTiming = grid.framesDisplaced }
        while var frame = control.queue.take() {
            retime(&frame)
            guard limitHit == nil else { continue }
            if let emission = grid.add(frame) {
                framesDroppedTiming = grid.framesDisplaced
                try encode(emission, grid: grid, session: session)
                if limitHit == nil { encoded(emission.frame) }
            }
        }
        if limitHit == nil, let last = grid.finish() {
            try encode(last, grid: grid, session: session)
            if limitHit == nil { encoded(last.frame) }
        }
        return stopReason()
    }

    /// The encoder is done with `frame`: the stages see it, and one may keep it.
    private func encoded(_ frame: consuming CapturedFrame) {
        var done: CapturedFrame? = consume frame
        for stage in stages { stage.encoded(&done) }
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
            try submit(emission.frame, pts: pts, shownAt: first ? emission.frame.pts : pts,
                       captureTime: first ? emission.frame.captureTime : nil,
                       keyFrame: first && emission.frame.isDiscontinuity, session: session)
            if !first && limitHit == nil { framesDuplicated += 1 }
        }
    }

    /// Hands one frame to the encoder at `pts` (its picture, or the camera's compressed frame
    /// to a session that takes those), unless a limit is reached first (then capture stops and
    /// nothing more is encoded). The caller keeps the frame.
    private func submit(_ frame: borrowing CapturedFrame, pts: MediaTime, shownAt: MediaTime, captureTime: Int64?,
                        keyFrame: Bool, session: any CompressionSession) throws {
        if let reason = limitReached(at: pts) {
            limitHit = reason
            control.endCaptureEarly()
            return
        }
        let token = FrameToken(nextToken)
        if nextToken == 0 { sound?.firstPicture(pts: pts, captureTime: captureTime) }
        nextToken += 1
        try timestamps?.record(shownAt)
        // A segment starts with a keyframe carrying SPS/PPS, so each file plays alone.
        let outputWantsKey = output?.requiresKeyFrame(for: token, at: pts) ?? false
        inEncoder[token] = FrameRecord(pts: pts, captureTime: captureTime)
        decodeTimes?.arrived(pts)
        let encodeStarted = MonotonicClock.nanoseconds()
        writingInEncode = 0
        if session.takesCompressedFrames {
            guard let compressed = frame.compressed else { preconditionFailure("the source keeps no compressed frames") }
            try session.pass(compressed, pts: pts, forceKeyFrame: keyFrame || outputWantsKey, token: token)
        } else {
            guard let picture = frame.buffer else { preconditionFailure("the source delivers no pictures") }
            try session.encode(picture, pts: pts, forceKeyFrame: keyFrame || outputWantsKey, token: token)
        }
        longestEncode = max(longestEncode, MonotonicClock.nanoseconds() - encodeStarted - writingInEncode)
        framesSubmitted += 1
        for stage in stages {
            try stage.submitted(RecordingSubmission(session: session, encodeStarted: encodeStarted,
                                                    framesSubmitted: framesSubmitted, framesInEncoder: framesInEncoder))
        }
    }

    private func limitReached(at pts: MediaTime) -> StopReason? {
        if let frames = limits.frames, framesSubmitted >= frames { return .frameLimit }
        if let duration = limits.duration, pts.seconds >= duration - 1e-9 { return .durationLimit }
        return nil
    }
}

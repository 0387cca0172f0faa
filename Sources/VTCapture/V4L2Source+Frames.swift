import CV4L2
import Logging
import Synchronization
import VTCore
import VTH264
import VTPictures

/// Reading frames: the streaming loop, and what each filled buffer becomes (a leased driver
/// buffer, a converted picture, or the camera's compressed frame alone), or why it is dropped.
extension V4L2Source {
    /// Waits for the next good frame. Nil after `stop()`. Throws `.unplugged` when the device
    /// goes away; frames delivered before that have all been handed out.
    public func nextFrame() throws(CaptureError) -> CapturedFrame? {
        try reader.withLock { reader throws(CaptureError) -> CapturedFrame? in
            try next(&reader)
        }
    }

    private func next(_ reader: inout Reader) throws(CaptureError) -> CapturedFrame? {
        if !reader.streaming {
            try reader.stream.ring.start()
            reader.streaming = true
        }
        while true {
            let ring = reader.stream.ring
            // Poll first: a DQBUF that finds nothing makes libv4l2 complain on stderr.
            guard !interrupt.isTripped, interrupt.waitUntilReadable(ring.device.fd) else {
                ring.stop()
                return nil
            }
            let dequeued: V4L2BufferRing.Filled?
            do throws(CaptureError) {
                dequeued = try ring.dequeue()
            } catch .unplugged(let path) {
                guard reconnects else { throw .unplugged(path: path) }
                guard try recover(&reader) else { return nil }
                continue
            }
            guard let filled = dequeued else { continue }
            countSequence(filled, &reader)
            if let frame = deliver(filled, &reader) { return frame }
        }
    }

    /// Gaps in `sequence` are frames the driver dropped because no buffer was free. Across a
    /// reconnect the sequence starts again, so the frames the gap would have held are counted
    /// from the time it lasted.
    private func countSequence(_ filled: borrowing V4L2BufferRing.Filled, _ reader: inout Reader) {
        let sequence = filled.sequence
        if let last = reader.lastSequence {
            if sequence > last &+ 1 {
                counters.withLock { $0.droppedBySource += Int(sequence - last - 1) }
                // A camera's H.264 after a lost access unit may refer to it.
                reader.accessUnits.waitForKeyFrame()
            }
        } else if reader.discontinuity, let before = reader.lastTimestamp {
            let frames = Double(filled.timestamp - before) / 1e9 * format.frameRate.framesPerSecond
            counters.withLock { $0.droppedBySource += max(0, Int(frames.rounded()) - 1) }
        }
        reader.lastSequence = sequence
        reader.lastTimestamp = filled.timestamp
        reader.restartedWithoutFrame = false
    }

    /// The frame of a filled buffer, or nil when it is damaged or there is no buffer to
    /// convert it into (then the driver gets its buffer back at once, and the frame is counted).
    private func deliver(_ filled: consuming V4L2BufferRing.Filled, _ reader: inout Reader) -> CapturedFrame? {
        let sequence = filled.sequence
        let timestamp = filled.timestamp
        if filled.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0 {
            return rejected("the driver flagged frame \(sequence) as damaged")
        }
        let stream = reader.stream
        if let check = keepsOnlyCompressed {
            let bytes = UnsafeRawBufferPointer(start: filled.bytes, count: filled.bytesUsed)
            if cameraFormat == .h264 {
                let unit: CompressedFrame
                switch reader.accessUnits.take(bytes) {
                case let .unit(data, isKeyFrame, format):
                    unit = CompressedFrame(data: data, format: format, isKeyFrame: isKeyFrame)
                    switch reader.decodeCheck?.check(data, format: unit.format, isKeyFrame: isKeyFrame) ?? .whole {
                    case .whole:
                        break
                    case .damaged(let why):
                        reader.accessUnits.waitForKeyFrame()
                        return rejected("frame \(sequence): \(why)")
                    case .cannotCheck(let why):
                        reader.decodeCheck = nil
                        logger.warning("\(path): --check-frames decode: the camera's H.264 cannot be decoded here (\(why)); its access units are checked by their NAL structure alone")
                    }
                case .damaged(let why):
                    return rejected("frame \(sequence): \(why)")
                case .waitingForKeyFrame:
                    return rejected("frame \(sequence) follows a damaged or missing one and may refer to it: "
                                    + "the next IDR picture is waited for")
                }
                return compressedFrame(unit, sequence: sequence, timestamp: timestamp, &reader)
            }
            if let problem = JPEGFrameCheck.problem(bytes, width: stream.image.width, height: stream.image.height) {
                return rejected("frame \(sequence): \(problem)")
            }
            if case .decoded = check {
                guard let pooled = stream.pool.tryTake() else {
                    counters.withLock { $0.droppedBySource += 1 }
                    logger.warning("\(path): frame \(sequence) dropped: all \(depth.framesHeld) capture buffers are in use")
                    return nil
                }
                do throws(FrameConverter.Failure) {
                    try reader.converter.decodeJPEG(filled.bytes, bytes: filled.bytesUsed, into: pooled.buffer)
                } catch {
                    return rejected("frame \(sequence): \(Self.describe(error))")
                }
            }
            let jpeg = CompressedFrame(data: Array(bytes), format: .mjpeg(width: stream.image.width, height: stream.image.height),
                                       isKeyFrame: true)
            return compressedFrame(jpeg, sequence: sequence, timestamp: timestamp, &reader)
        }
        let picture: PixelBufferLease
        var compressed: CompressedFrame?
        if zeroCopy && stream.ring.buffersWithDriver >= Self.leaseFloor(buffers: stream.ring.mappings.count) {
            guard filled.bytesUsed >= stream.rawImageSize else {
                return rejected("frame \(sequence) is short (\(filled.bytesUsed) of \(stream.rawImageSize) bytes)")
            }
            let index = filled.index
            picture = filled.lease(stream.wrappers[index])
        } else {
            guard let pooled = stream.pool.tryTake() else {
                // The pool holds as many pictures as the pipeline can: running out means the
                // pipeline holds more than `depth` says. The frame is dropped rather than
                // making the camera wait.
                counters.withLock { $0.droppedBySource += 1 }
                logger.warning("\(path): frame \(sequence) dropped: all \(depth.framesHeld) capture buffers are in use")
                return nil
            }
            // Copied before the buffer goes back to the driver; a JPEG that does not decode
            // (below) is rejected with its frame, so a still is never a damaged picture.
            if keepsCompressed && cameraFormat == .mjpeg {
                compressed = CompressedFrame(data: Array(UnsafeRawBufferPointer(start: filled.bytes, count: filled.bytesUsed)),
                                             format: .mjpeg(width: stream.image.width, height: stream.image.height),
                                             isKeyFrame: true)
            }
            do throws(FrameConverter.Failure) {
                try convert(filled, stream.image, into: pooled.buffer, &reader.converter)
            } catch {
                return rejected("frame \(sequence): \(Self.describe(error))")
            }
            picture = pooled
        }
        let relative = presentationTime(timestamp, &reader)
        defer { reader.discontinuity = false }
        return CapturedFrame(picture,
                             pts: MediaTime(value: relative / 1_000, timescale: 1_000_000),
                             sequence: UInt64(sequence),
                             captureTime: timestamp, isDiscontinuity: reader.discontinuity,
                             compressed: compressed)
    }

    /// A frame of the camera's compressed frame alone (`--encoder copy`), at its time.
    private func compressedFrame(_ frame: CompressedFrame, sequence: UInt32, timestamp: Int64,
                                 _ reader: inout Reader) -> CapturedFrame {
        let relative = presentationTime(timestamp, &reader)
        defer { reader.discontinuity = false }
        return CapturedFrame(compressed: frame, pts: MediaTime(value: relative / 1_000, timescale: 1_000_000),
                             sequence: UInt64(sequence), captureTime: timestamp, isDiscontinuity: reader.discontinuity)
    }

    /// Converts (or copies) the camera's picture into `buffer`; the driver gets its buffer
    /// back as soon as this returns.
    private func convert(_ filled: consuming V4L2BufferRing.Filled, _ image: V4L2Device.NegotiatedImage,
                         into buffer: PixelBuffer, _ converter: inout FrameConverter) throws(FrameConverter.Failure) {
        switch cameraFormat {
        case .yuyv:
            try converter.convertYUYV(filled.bytes, bytesPerLine: image.bytesPerLine, bytes: filled.bytesUsed, into: buffer)
        case .mjpeg:
            try converter.decodeJPEG(filled.bytes, bytes: filled.bytesUsed, into: buffer)
        case .nv12, .yu12:
            try converter.copy420(filled.bytes, layout: image.fourCC == .nv12 ? .nv12 : .i420, bytesPerLine: image.bytesPerLine,
                                  bytes: filled.bytesUsed, into: buffer)
        case .h264:
            preconditionFailure("a camera's H.264 is only copied (refused at open otherwise)")
        }
    }

    /// When a frame is shown, in nanoseconds after the first: its timestamp, unless that is no
    /// later than the frame before. A camera clock that glitches backwards does not make the
    /// frame older than the one it came after, so it is placed one frame interval after that
    /// one and counted, keeping presentation times rising for the encoder, the constant-rate
    /// grid (where it would otherwise push a good frame out of its slot) and the timestamp log.
    private func presentationTime(_ timestamp: Int64, _ reader: inout Reader) -> Int64 {
        if reader.firstTimestamp == nil { reader.firstTimestamp = timestamp }
        var relative = max(0, timestamp - reader.firstTimestamp!)
        if let last = reader.lastPresentation, relative <= last {
            let rate = format.frameRate
            relative = last + 1_000_000_000 * Int64(rate.denominator) / Int64(rate.numerator)
            counters.withLock { $0.retimedFrames += 1 }
        }
        reader.lastPresentation = relative
        return relative
    }

    /// Counts a damaged frame (its buffer has gone back to the driver).
    private func rejected(_ why: @autoclosure () -> String) -> CapturedFrame? {
        let count = counters.withLock { statistics in
            statistics.badFrames += 1
            return statistics.badFrames
        }
        // The first few explain what is happening; the summary counts the rest.
        if count <= 3 { logger.warning("\(path): \(why()): not encoded") }
        return nil
    }

    private static func describe(_ failure: FrameConverter.Failure) -> String {
        switch failure {
        case let .short(bytes, needed): "short buffer (\(bytes) of \(needed) bytes)"
        case let .undecodable(reason): "undecodable JPEG (\(reason))"
        case let .wrongSize(width, height): "JPEG is \(width)x\(height), not the negotiated size"
        }
    }
}

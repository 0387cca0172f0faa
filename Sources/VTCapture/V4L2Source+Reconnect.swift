import VTCore

/// `--reconnect`: a camera that stops delivering is brought back and recording goes on in the
/// same file, starting a new GOP.
extension V4L2Source {
    /// A stream the driver failed (EIO) while the camera stayed plugged in is started again on
    /// the descriptor it has: a new descriptor could not take the stream over, since the old one
    /// still owns it while a frame of its buffers is being encoded. Otherwise (the camera is
    /// gone, or the restarted stream failed again before giving a frame) the camera is waited
    /// for and opened again. False when a stop was asked for while waiting.
    func recover(_ reader: inout Reader) throws(CaptureError) -> Bool {
        if !reader.restartedWithoutFrame, reader.stream.ring.restart() {
            reader.restartedWithoutFrame = true
            reader.lastSequence = nil
            reader.discontinuity = true
            reader.accessUnits.waitForKeyFrame()
            counters.withLock { $0.reconnects += 1 }
            logger.warning("\(path) stopped responding: its stream was started again (--reconnect)")
            return true
        }
        return try reconnect(&reader)
    }

    /// Waits for an unplugged camera to come back, opens it in the format it had, and starts
    /// a new stream. False when a stop was asked for while waiting.
    private func reconnect(_ reader: inout Reader) throws(CaptureError) -> Bool {
        logger.warning("\(path) was unplugged: waiting for it to come back (--reconnect)")
        reader.stream.ring.close()
        let old = reader.stream.image
        while true {
            guard interrupt.sleep(untilMonotonic: MonotonicClock.nanoseconds() + 100_000_000) else { return false }
            let device: V4L2Device
            do throws(CaptureError) {
                device = try V4L2Device(path: path)
            } catch {
                // Not back yet, or back before udev has given it its permissions.
                switch error {
                case .noSuchDevice, .devicePermissionDenied, .unplugged, .deviceBusy: continue
                default: throw error
                }
            }
            // A replugged camera is in its power-on state: set everything again.
            let image = try device.setFormat(old.fourCC, FrameSize(width: old.width, height: old.height))
            guard image.fourCC == old.fourCC, image.width == old.width, image.height == old.height else {
                throw .unsupportedDeviceFormat(path: path, detail: "came back as \(image.fourCC) \(image.width)x\(image.height) "
                    + "instead of \(old.fourCC) \(old.width)x\(old.height): the recording cannot go on in the same file")
            }
            _ = try device.setFrameRate(format.frameRate)
            try device.applyControls(controls, logger: logger)
            let ring = try V4L2BufferRing(device: device, count: bufferCount)
            guard Self.canPassWithoutCopy(cameraFormat, image, ring) == zeroCopy else {
                throw .unsupportedDeviceFormat(path: path, detail: "came back with a buffer layout the recording cannot go on with")
            }
            reader.stream = Self.stream(ring, image, cameraFormat, zeroCopy: zeroCopy, depth: depth)
            try ring.start()
            reader.lastSequence = nil
            reader.discontinuity = true
            reader.accessUnits.waitForKeyFrame()
            counters.withLock { $0.reconnects += 1 }
            logger.notice("\(path) is back: recording goes on")
            return true
        }
    }
}

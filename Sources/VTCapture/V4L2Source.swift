import CV4L2
import Logging
import Synchronization
import VTCore
import VTDecoding
import VTH264

#if canImport(Glibc)
import Glibc
#endif

/// Frames from a V4L2 camera: format negotiation, memory-mapped streaming, and one
/// conversion at most per frame.
///
/// NV12 and YU12 frames reach the encoder without a copy: the driver's buffer is wrapped as a
/// leased `PixelBuffer` whose release gives it back to the driver (VIDIOC_QBUF), never before
/// the encoder is done with it — as long as that leaves the driver `leaseFloor` buffers to
/// fill; otherwise the frame is copied into a pooled buffer and the driver's goes back at once,
/// so a camera never runs out of buffers because the pipeline sits on them (FFmpeg's v4l2
/// input does the same). YUYV and Motion-JPEG are converted to I420 into a pooled buffer and
/// the driver's buffer goes back at once. The pool holds as many buffers as the pipeline can
/// hold frames (`PipelineDepth`), so the capture thread never waits for one. Damaged frames
/// (V4L2_BUF_FLAG_ERROR, short raw buffers, undecodable JPEGs) are given back unencoded and
/// counted.
public final class V4L2Source: CaptureSource {
    public let format: CaptureFormat
    public let path: String
    /// What was asked and what the driver chose.
    public let negotiation: CameraNegotiationReport

    let cameraFormat: CameraPixelFormat
    let zeroCopy: Bool
    let bufferCount: Int
    let depth: PipelineDepth
    /// `--reconnect`: an unplugged camera is waited for and recording goes on.
    private let reconnects: Bool
    /// `--control` settings, and the H.264 I-frame period set from `--keyint`, set again after a
    /// reconnect (a replugged camera forgets them).
    let controls: [ControlSetting]
    /// Each Motion-JPEG frame also carries the camera's own bytes (`CapturedFrame.compressed`):
    /// a still is written as the camera made it. Off for recording, which only needs pictures.
    let keepsCompressed: Bool
    /// `--encoder copy`: each frame is the camera's JPEG or H.264 access unit alone, checked
    /// (a JPEG by its markers, H.264 by its NAL structure; with `.decoded` each is also
    /// decoded, into a picture let go at once); nil otherwise.
    let keepsOnlyCompressed: CompressedFrameCheck?
    let interrupt = SourceInterrupt()
    private let reader: Mutex<Reader>
    let counters = Mutex(CaptureStatistics())
    let logger: Logger

    /// One open stream: the device's buffers and what frames are read into. A reconnect
    /// replaces it.
    struct Stream {
        var ring: V4L2BufferRing
        var image: V4L2Device.NegotiatedImage
        /// Bytes a complete raw 4:2:0 picture takes in the driver's layout.
        var rawImageSize: Int
        /// Pictures converted or copied out of the driver's buffers, as many as the pipeline
        /// holds; in the delivered format.
        var pool: PixelBufferPool
        /// One wrapper per driver buffer, made once (zero-copy formats only).
        var wrappers: [PixelBuffer]
    }

    /// What only the capture thread touches (and `close()`, once capture has ended).
    struct Reader {
        var stream: Stream
        var converter: FrameConverter
        var lastSequence: UInt32?
        var firstTimestamp: Int64?
        var lastTimestamp: Int64?
        /// Nanoseconds after the first frame that the last delivered frame is shown at.
        var lastPresentation: Int64?
        var streaming = false
        /// The next frame follows a reconnect: it starts a new GOP.
        var discontinuity = false
        /// The stream was started again after it failed, and no frame has come since.
        var restartedWithoutFrame = false
        /// An H.264 camera's access units, checked and made AVCC (`--encoder copy`).
        var accessUnits = CameraAccessUnits()
        /// Each of those decoded as well (`--check-frames decode`); nil when not asked for, or
        /// when the decoder cannot decode the stream.
        var decodeCheck: H264DecodeCheck?
    }

    /// Opens `path`, checks it can capture, negotiates `request` and maps `bufferCount`
    /// buffers; `depth` is how many frames the pipeline behind the source holds at most. Streaming starts with the first `nextFrame()`, so a busy camera, a refused
    /// format or a bad control is reported before any output exists.
    ///
    /// `strict`: a format, size or rate other than the asked one is an error instead of a
    /// notice. `controls` are set after the format and rate (S_FMT may reset some), in order.
    /// `keepCompressed`: Motion-JPEG frames carry the camera's JPEG as well as the picture.
    /// `onlyCompressed` (`--encoder copy`): frames carry the camera's compressed frame alone:
    /// a JPEG checked by its markers and size (`JPEGFrameCheck`), and decoded in full as well
    /// with `.decoded`; an H.264 access unit checked by its NAL structure (`CameraAccessUnits`,
    /// which also holds back what follows damage until the next IDR picture), and decoded by
    /// libavcodec as well with `.decoded` (`H264DecodeCheck`). A camera that sends neither is
    /// refused, and H.264 is refused without it: vtrecord records a camera's H.264 only as it
    /// comes. `iFramePeriod` gives, at the negotiated rate, how often such a camera is
    /// to send an IDR picture (`--keyint`): set through its H.264 I-frame period control where
    /// it has one and `controls` do not set it themselves, else the camera keeps its own.
    public init(path: String, request: CameraRequest, bufferCount: Int = 8, depth: PipelineDepth = PipelineDepth(),
                strict: Bool = false,
                reconnect: Bool = false, controls: [ControlSetting] = [], keepCompressed: Bool = false,
                onlyCompressed: CompressedFrameCheck? = nil, iFramePeriod: ((FrameRate) -> Int)? = nil,
                logger: Logger = Logger(label: "vtrecord.capture")) throws(CaptureError) {
        let device = try V4L2Device(path: path)
        let offered = try device.enumerateFormats()
        guard let choice = CameraNegotiation.choose(from: offered, request: request) else {
            let names = offered.map(\.fourCC.description).joined(separator: ", ")
            throw .unsupportedDeviceFormat(path: path, detail: "offers no format vtrecord can record "
                + "(it offers \(names.isEmpty ? "none" : names); vtrecord reads YUYV, NV12, YU12 and MJPEG, "
                + "and stores H264 as it comes with --encoder copy --format h264)")
        }
        let image = try device.setFormat(choice.format.fourCC, choice.size)
        guard let cameraFormat = CameraPixelFormat(fourCC: image.fourCC) else {
            throw .unsupportedDeviceFormat(path: path, detail: "the driver switched to \(image.fourCC), which vtrecord cannot read")
        }
        guard image.width >= 16, image.height >= 16, image.width % 2 == 0, image.height % 2 == 0 else {
            throw .unsupportedDeviceFormat(path: path, detail: "the driver chose \(image.width)x\(image.height); H.264 4:2:0 needs even sizes of at least 16")
        }
        if onlyCompressed != nil && cameraFormat != .mjpeg && cameraFormat != .h264 {
            throw .unsupportedDeviceFormat(path: path, detail: "--encoder copy stores the camera's own MJPEG or H.264 frames, "
                + "and it sends \(cameraFormat.rawValue) (ask for --format mjpeg or h264, or record with another --encoder)")
        }
        if onlyCompressed == nil && cameraFormat == .h264 {
            throw .unsupportedDeviceFormat(path: path, detail: "the camera sends H.264, which vtrecord stores as it comes "
                + "but does not decode: record it with --encoder copy")
        }
        let askedRate = request.frameRate ?? choice.frameRate
        let rate = try device.setFrameRate(askedRate) ?? askedRate

        let report = CameraNegotiationReport(
            requested: request, format: cameraFormat, width: image.width, height: image.height, frameRate: rate)
        if let difference = report.difference {
            if strict {
                throw .unsupportedDeviceFormat(path: path, detail: difference + " (--strict-format)")
            }
            logger.notice("\(path): \(difference)")
        }
        try device.applyControls(controls, logger: logger)
        var applied = controls
        if cameraFormat == .h264, let iFramePeriod,
           let setting = try Self.iFramePeriodSetting(iFramePeriod(rate), on: device, unless: controls, path: path, logger: logger) {
            try device.applyControls([setting], logger: logger)
            applied.append(setting)
        }

        let ring = try V4L2BufferRing(device: device, count: bufferCount)
        self.path = path
        self.cameraFormat = cameraFormat
        self.negotiation = report
        self.logger = logger
        self.bufferCount = bufferCount
        self.depth = depth
        self.reconnects = reconnect
        self.controls = applied
        self.keepsCompressed = keepCompressed
        keepsOnlyCompressed = onlyCompressed
        zeroCopy = Self.canPassWithoutCopy(cameraFormat, image, ring)
        format = CaptureFormat(pixelFormat: zeroCopy ? cameraFormat.deliveredPixelFormat : .i420,
                               width: image.width, height: image.height, frameRate: rate,
                               fullRange: cameraFormat == .mjpeg ? true : nil, isLive: true)
        let stream = Self.stream(ring, image, cameraFormat, zeroCopy: zeroCopy, depth: depth)
        var initial = Reader(stream: stream, converter: FrameConverter(width: image.width, height: image.height))
        if cameraFormat == .h264 && onlyCompressed == .decoded {
            do {
                initial.decodeCheck = try H264DecodeCheck()
            } catch {
                logger.warning("\(path): --check-frames decode: \(error); the camera's H.264 access units are checked by their NAL structure alone")
            }
        }
        reader = Mutex(initial)
    }

    /// The V4L2 name of a camera's H.264 I-frame period (V4L2_CID_MPEG_VIDEO_H264_I_PERIOD).
    static let iFramePeriodControl = "h264_i_frame_period"

    /// The I-frame period control to set, unless `controls` set it themselves or the camera has
    /// none (then it keeps its own interval, and says so).
    private static func iFramePeriodSetting(_ period: Int, on device: V4L2Device, unless controls: [ControlSetting],
                                            path: String, logger: Logger) throws(CaptureError) -> ControlSetting? {
        let named = controls.contains { CameraControl.normalizedName($0.name) == iFramePeriodControl }
        guard !named else { return nil }
        guard try device.controls().contains(where: { $0.name == iFramePeriodControl }) else {
            logger.notice("\(path): the camera has no H.264 I-frame period control; it keeps its own keyframe interval")
            return nil
        }
        return ControlSetting(name: iFramePeriodControl, value: "\(period)")
    }

    /// The encoder takes NV12 and I420 with any stride, as long as each plane's rows fit in
    /// the driver's buffer.
    static func canPassWithoutCopy(_ format: CameraPixelFormat, _ image: V4L2Device.NegotiatedImage,
                                   _ ring: V4L2BufferRing) -> Bool {
        let rawSize = rawImageSize(image)
        return format.isRaw420 && image.bytesPerLine >= image.width
            && (format == .nv12 || image.bytesPerLine % 2 == 0)
            && ring.mappings.allSatisfy { $0.length >= rawSize }
    }

    private static func rawImageSize(_ image: V4L2Device.NegotiatedImage) -> Int {
        FrameConverter.imageSize(fourCC: image.fourCC, width: image.width, height: image.height,
                                 bytesPerLine: image.bytesPerLine)
    }

    static func stream(_ ring: V4L2BufferRing, _ image: V4L2Device.NegotiatedImage, _ format: CameraPixelFormat,
                       zeroCopy: Bool, depth: PipelineDepth) -> Stream {
        let pool = PixelBufferPool(format: zeroCopy ? format.deliveredPixelFormat : .i420,
                                   width: image.width, height: image.height, capacity: depth.framesHeld)
        guard zeroCopy else {
            return Stream(ring: ring, image: image, rawImageSize: rawImageSize(image), pool: pool, wrappers: [])
        }
        let wrappers = ring.pictures(format: format.deliveredPixelFormat, width: image.width, height: image.height) {
            planes(of: $0, format, image)
        }
        return Stream(ring: ring, image: image, rawImageSize: rawImageSize(image), pool: pool, wrappers: wrappers)
    }

    /// Buffers a camera keeps with its driver at least: one being filled and one ready, so a
    /// frame that comes due while the capture thread is busy (converting, or late to run on a
    /// loaded machine) still has a buffer.
    static let driverReserve = 2

    /// The fewest capture buffers that work: the driver's reserve and the one the capture
    /// thread is reading. With fewer, one late wake-up of the capture thread costs a frame.
    public static let minimumBufferCount = driverReserve + 1

    /// Buffers left with the driver below which a frame is copied instead of leased: the
    /// reserve, and one spare where there are buffers for it. When the encoder falls behind,
    /// leased frames pile up in the queue until the driver is down to this many, so it is the
    /// slack a late capture thread has: two frames are 33 ms at 60 fps, which a busy virtual
    /// machine can take from a thread; three are 50 ms.
    static func leaseFloor(buffers: Int) -> Int {
        buffers > minimumBufferCount ? driverReserve + 1 : driverReserve
    }

    public var statistics: CaptureStatistics { counters.withLock { $0 } }

    /// Pictures handed out (converted into the pool, or the driver's own buffers) whose frames
    /// have not been let go: 0 once every consumer let go. Read once capture has ended (it
    /// waits for the capture thread's hold on the stream).
    public var picturesInUse: Int {
        reader.withLock { reader in reader.stream.pool.inUse + reader.stream.ring.buffersLeased }
    }

    public func stop() {
        interrupt.trip()
    }

    /// STREAMOFF, munmap and close; a frame still leased keeps its buffer until it is given
    /// back. Called once capture has ended.
    public func close() {
        interrupt.trip()
        reader.withLock { $0.stream.ring.close() }
    }

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
            if check == .decoded {
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
            try converter.copy420(filled.bytes, fourCC: image.fourCC, bytesPerLine: image.bytesPerLine,
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

    /// The planes of a single-planar 4:2:0 driver buffer.
    private static func planes(of base: UnsafeMutableRawPointer, _ format: CameraPixelFormat,
                               _ image: V4L2Device.NegotiatedImage) -> [PixelPlane] {
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        let pitch = image.bytesPerLine
        let luma = PixelPlane(baseAddress: bytes, bytesPerRow: pitch, rowBytes: image.width, rows: image.height)
        let chromaRows = (image.height + 1) / 2
        let chroma = bytes + pitch * image.height
        if format == .nv12 {
            return [luma, PixelPlane(baseAddress: chroma, bytesPerRow: pitch,
                                     rowBytes: PixelFormat.nv12.rowBytes(plane: 1, width: image.width), rows: chromaRows)]
        }
        let chromaPitch = pitch / 2
        let rowBytes = PixelFormat.i420.rowBytes(plane: 1, width: image.width)
        return [luma,
                PixelPlane(baseAddress: chroma, bytesPerRow: chromaPitch, rowBytes: rowBytes, rows: chromaRows),
                PixelPlane(baseAddress: chroma + chromaPitch * chromaRows, bytesPerRow: chromaPitch,
                           rowBytes: rowBytes, rows: chromaRows)]
    }
}

/// How `--encoder copy` checks a camera's frame before it is stored (`--check-frames`).
public enum CompressedFrameCheck: Sendable {
    /// A JPEG's markers and size (`JPEGFrameCheck`), an H.264 access unit's NAL structure
    /// (`AccessUnitCheck`): cheap, and what a cut-short or garbled frame fails.
    case markers
    /// Those, and a full decode (libturbojpeg; libavcodec for H.264, `H264DecodeCheck`),
    /// which also finds damage inside the picture.
    case decoded
}

/// What the user asked of the camera beside what the driver chose, for the notice and the
/// JSON summary.
public struct CameraNegotiationReport: Sendable, Equatable {
    public var requested: CameraRequest
    public var format: CameraPixelFormat
    public var width: Int
    public var height: Int
    public var frameRate: FrameRate

    public init(requested: CameraRequest, format: CameraPixelFormat, width: Int, height: Int,
                frameRate: FrameRate) {
        self.requested = requested
        self.format = format
        self.width = width
        self.height = height
        self.frameRate = frameRate
    }

    /// One line naming each asked value the driver did not give, or nil when it gave all.
    public var difference: String? {
        var asked: [String] = []
        var got: [String] = []
        if let wanted = requested.format, wanted != format {
            asked.append(wanted.rawValue)
            got.append(format.rawValue)
        }
        if let size = requested.size, size != FrameSize(width: width, height: height) {
            asked.append("\(size)")
            got.append("\(width)x\(height)")
        }
        if let rate = requested.frameRate, rate != frameRate {
            asked.append("\(rate) fps")
            got.append("\(frameRate) fps")
        }
        guard !asked.isEmpty else { return nil }
        return "asked for \(asked.joined(separator: " ")), the camera gives \(got.joined(separator: " "))"
    }
}

import CV4L2
import Logging
import Synchronization
import VTCore
import VTH264

#if canImport(Glibc)
import Glibc
import VTPictures
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
    let reconnects: Bool
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
    let reader: Mutex<Reader>
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
        var decodeCheck: (any AccessUnitDecodeCheck)?
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
    /// the check `.decoded` makes as well. A camera that sends neither is
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
        if cameraFormat == .h264, case .decoded(let makeCheck) = onlyCompressed {
            do {
                initial.decodeCheck = try makeCheck()
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
        FrameConverter.imageSize(layout: image.fourCC == .nv12 ? .nv12 : .i420, width: image.width, height: image.height,
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

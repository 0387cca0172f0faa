import CX264
import Foundation
import Logging
import VTCore
import VTH264

/// The software encoder: libx264 behind the `CompressionSession` contract.
public final class X264Session: CompressionSession {
    public let encoderName = "x264"
    public private(set) var formatDescription: VideoFormatDescription
    public private(set) var resolvedSettings: EncoderSettings
    /// x264's own `i_bframe_delay`: one picture with B-frames, two with a B-pyramid.
    public private(set) var reorderDelay = 0

    private let width: Int
    private let height: Int
    private let pixelFormat: PixelFormat
    private let settings: EncoderSettings
    private let output: EncodedFrameHandler
    private var encoder: OpaquePointer?
    private var picture = x264_picture_t()
    private var framesIn = 0
    /// x264's version/options SEI, sent once before the first picture as the x264 CLI does.
    private var pendingSEI: [UInt8] = []
    /// The speeds `--realtime adaptive` steps between; made when the encoder opens.
    private var speeds: X264SpeedSteps?
    public var speedSteps: [String] { speeds?.names ?? [] }
    /// The first speed step coded by a light encoder, if any (see `X264SpeedSteps`).
    public var newEncoderFromSpeedStep: Int? { speeds?.newEncoderFromStep }
    public var speedChangePending: Bool { speeds?.changePending ?? false }
    private let logSink: UnsafeMutablePointer<vt_x264_log_sink>
    /// Where x264's messages go; the log sink points at it, and the session keeps it alive
    /// until every encoder (the one emptied on its own thread too) is closed.
    private let logContext: X264LogContext

    public init(width: Int, height: Int, pixelFormat: PixelFormat, settings: EncoderSettings,
                logger: Logger = Logger(label: "vtrecord.x264"),
                output: @escaping EncodedFrameHandler) throws(UsageError) {
        try settings.validate()
        try X264Parameters.validate(settings)
        // x264 refuses these only when the encoder opens, with a log line of its own and an
        // encoder error; the size comes from the input (a Y4M header may give any), so it is
        // bad input, refused here as the VA-API session refuses it.
        guard width % 2 == 0, height % 2 == 0 else {
            throw UsageError("x264 encodes 4:2:0 pictures of even size, not \(width)x\(height)")
        }
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.settings = settings
        self.resolvedSettings = settings
        self.output = output
        self.formatDescription = VideoFormatDescription(width: width, height: height,
                                                        sequenceParameterSets: [], pictureParameterSets: [])
        logContext = X264LogContext(logger: logger)
        logSink = .allocate(capacity: 1)
        logSink.initialize(to: vt_x264_log_sink(fn: { context, level, message in
            guard let context, let message else { return }
            Unmanaged<X264LogContext>.fromOpaque(context).takeUnretainedValue()
                .log(level: level, message: String(cString: message))
        }, context: Unmanaged.passUnretained(logContext).toOpaque()))
    }

    /// Checks the x264 preset and tune names (`--speed`, `--tune`) without opening anything.
    public static func validateNames(_ settings: EncoderSettings) throws(UsageError) {
        try X264Parameters.validate(settings)
    }

    deinit {
        invalidate()
        logSink.deallocate()
    }

    public func prepare() throws(EncoderError) {
        var params = try X264Parameters.make(settings, width: width, height: height, format: pixelFormat)
        vt_x264_param_set_log(&params, logSink, X264_LOG_WARNING)
        guard let encoder = vt_x264_encoder_open(&params) else {
            throw .openFailed(encoder: "x264", reason: "x264 refused the settings (see its message above)")
        }
        self.encoder = encoder

        let headers = try headersNow()
        pendingSEI = headers.sei
        formatDescription = VideoFormatDescription(width: width, height: height,
                                                   sequenceParameterSets: headers.sps, pictureParameterSets: headers.pps)

        let actual = Self.parameters(of: encoder)
        speeds = X264SpeedSteps(settings: settings, width: width, height: height, pixelFormat: pixelFormat,
                                opened: actual, parameterSets: formatDescription, logSink: logSink,
                                logger: logContext.logger) { [unowned self] in try output($0) }
        resolvedSettings.bFrames = Int(actual.i_bframe)
        reorderDelay = actual.i_bframe == 0 ? 0 : (actual.i_bframe_pyramid != 0 ? 2 : 1)
        resolvedSettings.threads = Int(actual.i_threads)
        resolvedSettings.entropy = actual.b_cabac != 0 ? .cabac : .cavlc
        resolvedSettings.keyFrameInterval = .frames(Int(actual.i_keyint_max))
        resolvedSettings.rateControl = settings.effectiveRateControl
        if settings.effectiveRateControl == .crf, resolvedSettings.crf == nil {
            resolvedSettings.crf = EncoderSettings.defaultCRF
        }
        resolvedSettings.maxBitRate = settings.effectiveMaxBitRate
        resolvedSettings.bufferSize = settings.effectiveBufferSize

        x264_picture_init(&picture)
        picture.img.i_csp = pixelFormat == .nv12 ? X264_CSP_NV12 : X264_CSP_I420
        picture.img.i_plane = Int32(pixelFormat.planeCount)
    }

    public func encode(_ buffer: PixelBuffer, pts: MediaTime, forceKeyFrame: Bool, token: FrameToken) throws {
        guard let encoder else { preconditionFailure("encode before prepare") }
        guard buffer.format == pixelFormat, buffer.width == width, buffer.height == height else {
            throw EncoderError.unsupportedPixelFormat(encoder: "x264", format: buffer.format)
        }
        let planes = buffer.planes
        picture.img.plane.0 = planes[0].baseAddress
        picture.img.i_stride.0 = Int32(planes[0].bytesPerRow)
        picture.img.plane.1 = planes[1].baseAddress
        picture.img.i_stride.1 = Int32(planes[1].bytesPerRow)
        if planes.count > 2 {
            picture.img.plane.2 = planes[2].baseAddress
            picture.img.i_stride.2 = Int32(planes[2].bytesPerRow)
        }
        picture.i_pts = frameTicks(pts)
        picture.i_type = forceKeyFrame ? X264_TYPE_IDR : X264_TYPE_AUTO
        // x264 copies `opaque` from a picture to the frame coded from it.
        picture.opaque = Self.opaque(token)
        try speeds?.deliverRetired(waiting: false)
        framesIn += 1
        speeds?.pictureIn()
        // x264 copies the picture inside x264_encoder_encode, so the caller's lease on the
        // buffer may end as soon as this returns.
        try encodeAndDeliver(encoder, input: &picture)
    }

    public func completeFrames() throws {
        guard let encoder else { return }
        try speeds?.deliverRetired(waiting: true)
        while x264_encoder_delayed_frames(encoder) > 0 {
            try encodeAndDeliver(encoder, input: nil)
        }
    }

    /// Encodes the pictures from now on at `speedSteps[step]` (see `X264SpeedSteps`).
    public func setSpeedStep(_ step: Int) throws(EncoderError) {
        guard let speeds, encoder != nil else { preconditionFailure("speed change before prepare") }
        // Nothing coded yet: the options SEI is the encoder's that codes the first picture.
        if let sei = try speeds.set(step, encoder: &encoder, framesIn: framesIn), framesIn == 0 { pendingSEI = sei }
    }

    /// The parameter sets x264 writes for its settings now, and its version/options SEI
    /// (length-prefixed, as it goes before the first picture). Only while no picture is being
    /// coded (after `prepare()`, or after `completeFrames()`): it writes into the buffers the
    /// frame threads use.
    func headersNow() throws(EncoderError) -> Headers {
        guard let encoder else { preconditionFailure("headers before prepare") }
        return try Self.headers(of: encoder)
    }

    /// Parameter sets as NAL units, and the options SEI length-prefixed.
    typealias Headers = (sps: [[UInt8]], pps: [[UInt8]], sei: [UInt8])

    static func headers(of encoder: OpaquePointer) throws(EncoderError) -> Headers {
        var nals: UnsafeMutablePointer<x264_nal_t>?
        var count: Int32 = 0
        guard x264_encoder_headers(encoder, &nals, &count) >= 0, let nals else {
            throw .headersFailed(encoder: "x264")
        }
        var sps: [[UInt8]] = []
        var pps: [[UInt8]] = []
        var sei: [UInt8] = []
        for i in 0..<Int(count) {
            let nal = nals[i]
            // b_annexb = 0: each payload starts with its 4-byte length.
            let bytes = Array(UnsafeBufferPointer(start: nal.p_payload + 4, count: Int(nal.i_payload) - 4))
            switch nal.i_type {
            case Int32(NAL_SPS.rawValue): sps.append(bytes)
            case Int32(NAL_PPS.rawValue): pps.append(bytes)
            case Int32(NAL_SEI.rawValue): sei = Array(UnsafeBufferPointer(start: nal.p_payload, count: Int(nal.i_payload)))
            default: break
            }
        }
        guard !sps.isEmpty, !pps.isEmpty else { throw .headersFailed(encoder: "x264") }
        return (sps, pps, sei)
    }

    /// The settings in force on `encoder`, as x264 reports them.
    static func parameters(of encoder: OpaquePointer?) -> x264_param_t {
        var now = x264_param_t()
        if let encoder { x264_encoder_parameters(encoder, &now) }
        return now
    }

    /// The settings in force on the running encoder.
    var currentParameters: x264_param_t { Self.parameters(of: encoder) }

    public func invalidate() {
        // Its messages go to the log sink freed with this session.
        speeds?.close()
        if let encoder {
            x264_encoder_close(encoder)
            self.encoder = nil
        }
    }

    private func encodeAndDeliver(_ encoder: OpaquePointer,
                                  input: UnsafeMutablePointer<x264_picture_t>?) throws {
        guard var frame = try Self.code(encoder, input: input, frameRate: settings.frameRate, framesIn: framesIn) else { return }
        if !pendingSEI.isEmpty {
            frame.data = pendingSEI + frame.data
            pendingSEI = []
        }
        if let speeds { try speeds.deliver(frame) } else { try output(frame) }
    }

    /// Feeds one picture (nil: none, to empty the encoder) and returns what came out.
    static func code(_ encoder: OpaquePointer, input: UnsafeMutablePointer<x264_picture_t>?,
                     frameRate: FrameRate, framesIn: Int) throws(EncoderError) -> EncodedFrame? {
        var nals: UnsafeMutablePointer<x264_nal_t>?
        var count: Int32 = 0
        var out = x264_picture_t()
        let size = x264_encoder_encode(encoder, &nals, &count, input, &out)
        guard size >= 0 else { throw .encodeFailed(encoder: "x264", frame: framesIn) }
        guard size > 0, let nals else { return nil }
        // x264 lays out the NAL units of one picture back to back in one buffer.
        let data = Array(UnsafeBufferPointer(start: nals[0].p_payload, count: Int(size)))
        return EncodedFrame(data: data, pts: mediaTime(out.i_pts, frameRate), dts: mediaTime(out.i_dts, frameRate),
                            isKeyFrame: out.b_keyframe != 0 && out.i_type == X264_TYPE_IDR,
                            token: token(out.opaque))
    }

    /// A token as x264's `opaque` pointer: one more than the token, so token 0 is not NULL.
    private static func opaque(_ token: FrameToken) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: UInt(token.rawValue) &+ 1)
    }

    private static func token(_ opaque: UnsafeMutableRawPointer?) -> FrameToken {
        FrameToken(UInt64(UInt(bitPattern: opaque)) &- 1)
    }

    /// x264's timebase is one frame (1/fps, as with b_vfr_input = 0).
    private func frameTicks(_ time: MediaTime) -> Int64 {
        let rate = settings.frameRate
        let scaled = Int128(time.value) * Int128(rate.numerator)
        let divisor = Int128(time.timescale) * Int128(rate.denominator)
        return Int64((scaled + divisor / 2) / divisor)
    }

    private static func mediaTime(_ ticks: Int64, _ rate: FrameRate) -> MediaTime {
        MediaTime(value: ticks * Int64(rate.denominator), timescale: Int32(rate.numerator))
    }
}

/// Carries x264's messages into swift-log.
private final class X264LogContext {
    let logger: Logger
    init(logger: Logger) { self.logger = logger }

    func log(level: Int32, message: String) {
        let text = "x264: " + message.trimmingCharacters(in: .newlines)
        switch level {
        case X264_LOG_ERROR: logger.error("\(text)")
        case X264_LOG_WARNING: logger.warning("\(text)")
        case X264_LOG_INFO: logger.info("\(text)")
        default: logger.debug("\(text)")
        }
    }
}

import CX264
import Foundation
import Logging
import VTCore
import VTH264

/// The software encoder: libx264 behind the `CompressionSession` contract.
public final class X264Session: CompressionSession {
    public let encoderName = "x264"
    public private(set) var formatDescription: FormatDescription
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
    /// Pictures given to the encoder that codes now (`encoder`) since it opened.
    private var framesInCurrent = 0
    /// Whether `encoder` is the light one the fastest speed steps open (see `setSpeedStep`).
    private var light = false
    /// The first speed step coded by a light encoder, if any; nil once the light encoder's
    /// parameter sets turned out not to match (every step then only reconfigures).
    public private(set) var newEncoderFromSpeedStep: Int?
    /// The encoder left at the last change of encoder, emptied on a thread of its own; its
    /// pictures go out first, so `held` keeps the new encoder's until it is done.
    private var retiring: X264Retirement?
    private var held: [EncodedFrame] = []
    /// The last frame handed out, if it was an IDR (see `emit`).
    private var lastIDR: [UInt8]?
    private var parsedParameterSets: (sps: SequenceParameterSet, pps: PictureParameterSet)?
    /// Whether `encoder` has given out a picture since it opened.
    private var currentHasCoded = false
    public var speedChangePending: Bool { retiring != nil || !currentHasCoded }
    /// x264's version/options SEI, sent once before the first picture as the x264 CLI does.
    private var pendingSEI: [UInt8] = []
    /// The parameters the encoder opened with, as x264 resolved them: what each speed step
    /// changes only the analysis of.
    private var opened = x264_param_t()
    /// The same for the light encoder, while it codes.
    private var lightOpened = x264_param_t()
    /// Whether the encoder opened with an exhaustive motion search (placebo) has left it.
    private var leftExhaustiveSearch = false
    public private(set) var speedSteps: [String] = []
    private let logSink: UnsafeMutablePointer<vt_x264_log_sink>
    private let logContext: Unmanaged<X264LogContext>

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
        self.formatDescription = FormatDescription(width: width, height: height,
                                                   sequenceParameterSets: [], pictureParameterSets: [])
        logContext = Unmanaged.passRetained(X264LogContext(logger: logger))
        logSink = .allocate(capacity: 1)
        logSink.initialize(to: vt_x264_log_sink(fn: { context, level, message in
            guard let context, let message else { return }
            Unmanaged<X264LogContext>.fromOpaque(context).takeUnretainedValue()
                .log(level: level, message: String(cString: message))
        }, context: logContext.toOpaque()))
    }

    /// Checks the x264 preset and tune names (`--speed`, `--tune`) without opening anything.
    public static func validateNames(_ settings: EncoderSettings) throws(UsageError) {
        try X264Parameters.validate(settings)
    }

    deinit {
        invalidate()
        logSink.deallocate()
        logContext.release()
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
        formatDescription = FormatDescription(width: width, height: height,
                                              sequenceParameterSets: headers.sps, pictureParameterSets: headers.pps)

        var actual = x264_param_t()
        x264_encoder_parameters(encoder, &actual)
        opened = actual
        // The opened preset, then every faster one down to superfast: x264's documentation of
        // x264_encoder_reconfig warns that many of ultrafast's shortcuts cannot be switched out
        // of, and advises against switching between it and other presets.
        let presets = X264Parameters.presetNames
        if let index = presets.firstIndex(of: settings.speed) {
            speedSteps = presets[...index].reversed().filter { $0 != "ultrafast" || index == 0 }
        }
        // The fastest steps run on an encoder opened without a lookahead: what x264 cannot
        // change on a running encoder costs more, at those steps, than the rest of superfast.
        newEncoderFromSpeedStep = speedSteps.indices.dropFirst().first { Self.lightPresets.contains(speedSteps[$0]) }
        // A buffer model (VBV; with CBR also the HRD's buffering periods) lives in the encoder.
        // A new one would start it again from x264's initial fullness in the middle of the
        // stream, where the old one's may be near empty: the fastest steps then only change
        // the running encoder's analysis, as the others do.
        if actual.rc.i_vbv_max_bitrate > 0 && actual.rc.i_vbv_buffer_size > 0 { newEncoderFromSpeedStep = nil }
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
        try deliverRetired(waiting: false)
        framesIn += 1
        framesInCurrent += 1
        // x264 copies the picture inside x264_encoder_encode, so the caller may release the
        // buffer as soon as this returns.
        try encodeAndDeliver(encoder, input: &picture)
    }

    public func completeFrames() throws {
        guard let encoder else { return }
        try deliverRetired(waiting: true)
        while x264_encoder_delayed_frames(encoder) > 0 {
            try encodeAndDeliver(encoder, input: nil)
        }
    }

    /// Changes what `x264_encoder_reconfig` changes on a running encoder and nothing that is in
    /// the parameter sets or fixed when it opened (B-frames, lookahead, weighted prediction,
    /// adaptive quantisation, rate control): the motion search, sub-pixel refinement,
    /// partitions, trellis, reference count, fast P-skip and DCT decimation of the step's
    /// preset, with the tune and explicit settings laid over it as when opening. Deblocking
    /// stays as opened (ultrafast turns it off: a blocky picture for a few percent). What
    /// x264 can lower but never raise again (sub-pixel refinement 0, scene-cut detection off)
    /// is kept where it was opened, so every step stays reachable; an exhaustive motion search
    /// (esa, tesa: `--speed placebo`) is the exception, which x264 cannot return to once it
    /// left it, so the first step searches with umh instead once the encoder has left it.
    ///
    /// The fastest steps (veryfast, superfast) run on another encoder instead, opened without
    /// a lookahead: see `openLight`. Leaving them opens the encoder `--speed` asks for again.
    /// Either change starts with a keyframe, and the parameter sets stay byte for byte those
    /// of `formatDescription`.
    public func setSpeedStep(_ step: Int) throws(EncoderError) {
        guard encoder != nil else { preconditionFailure("speed change before prepare") }
        let wantLight = newEncoderFromSpeedStep.map { step >= $0 } ?? false
        if wantLight != light {
            if wantLight {
                try openLight()
            } else {
                var params = try X264Parameters.make(settings, width: width, height: height, format: pixelFormat)
                try replaceEncoder(opening: &params, light: false)
            }
        }
        guard let encoder else { return }
        var target = light ? lightOpened : opened
        if target.analyse.i_me_method >= X264_ME_ESA, step > 0 || leftExhaustiveSearch {
            target.analyse.i_me_method = X264_ME_UMH
            leftExhaustiveSearch = true
        }
        if step > 0 {
            Self.takeAnalysis(of: try parameters(at: speedSteps[step]), into: &target)
        }
        if light {
            // The light encoder searches the references the parameter sets declare (x264 keeps
            // a picture buffer for them anyway): at superfast's analysis about a tenth more
            // work for a better picture than superfast's one reference gives.
            target.i_frame_reference = lightOpened.i_frame_reference
        }
        guard x264_encoder_reconfig(encoder, &target) == 0 else {
            throw .speedChangeFailed(encoder: "x264", speed: speedSteps[step])
        }
    }

    /// The presets whose steps a light encoder codes (after `--speed` itself).
    static let lightPresets: Set = ["veryfast", "superfast"]
    /// The preset a light encoder opens with: the fastest that keeps CABAC, deblocking and
    /// B-frames, so its parameter sets can be the opened encoder's.
    static let lightPreset = "superfast"

    /// `--speed` replaced by `preset`, as x264 would open it.
    private func parameters(at preset: String) throws(EncoderError) -> x264_param_t {
        var stepSettings = settings
        stepSettings.speed = preset
        return try X264Parameters.make(stepSettings, width: width, height: height, format: pixelFormat)
    }

    /// Changes to an encoder opened with superfast's lookahead (none), frame-type decision,
    /// weighted prediction and analysis, and everything the parameter sets say taken from the
    /// opened encoder (reference count, B-frames and pyramid, CABAC, 8×8 transform, chroma QP
    /// offset, level, rate control, VUI). If x264 still writes other parameter sets, the light
    /// encoder is closed unused and every step only reconfigures from then on.
    private func openLight() throws(EncoderError) {
        var params = Self.lightParameters(opened: opened, superfast: try parameters(at: Self.lightPreset))
        guard try replaceEncoder(opening: &params, light: true) else {
            newEncoderFromSpeedStep = nil
            logContext.takeUnretainedValue().logger.warning(
                "x264: an encoder without lookahead would write other parameter sets here; the fast speeds only change the analysis")
            return
        }
        lightOpened = currentParameters
    }

    /// The light encoder's parameters: the opened encoder's as x264 resolved them, with
    /// superfast's structure and analysis. x264 resolved the chroma QP offset with psy-RD in
    /// mind; at superfast's sub-pixel refinement it does not adjust it again.
    static func lightParameters(opened: x264_param_t, superfast: x264_param_t) -> x264_param_t {
        var p = opened
        // x264 owns the strings and zones of its parameters: a copy must not point into them.
        p.psz_cqm_file = nil
        p.psz_dump_yuv = nil
        p.psz_clbin_file = nil
        p.rc.psz_stat_out = nil
        p.rc.psz_stat_in = nil
        p.rc.psz_zones = nil
        p.rc.zones = nil
        p.rc.i_zones = 0
        p.opaque = nil
        p.param_free = nil
        takeAnalysis(of: superfast, into: &p)
        p.i_frame_reference = opened.i_frame_reference
        p.rc.i_lookahead = superfast.rc.i_lookahead
        p.rc.b_mb_tree = superfast.rc.b_mb_tree
        p.i_bframe_adaptive = superfast.i_bframe_adaptive
        p.i_sync_lookahead = superfast.i_sync_lookahead
        p.i_lookahead_threads = superfast.i_lookahead_threads
        p.analyse.i_mv_range_thread = superfast.analyse.i_mv_range_thread
        // The PPS says only whether P-slices are weighted.
        p.analyse.i_weighted_pred = opened.analyse.i_weighted_pred > 0 ? max(1, superfast.analyse.i_weighted_pred) : 0
        return p
    }

    /// Opens an encoder with `params` and makes it the one that codes from the next picture;
    /// the one before is emptied on a thread of its own (or closed, if it never had a picture).
    /// Returns false, opening nothing, when the new encoder's parameter sets are not
    /// `formatDescription`'s.
    @discardableResult
    private func replaceEncoder(opening params: inout x264_param_t, light: Bool) throws(EncoderError) -> Bool {
        // One change at a time: the encoder before the last must be empty first.
        do { try deliverRetired(waiting: true) } catch {
            throw .encodeFailed(encoder: "x264", frame: framesIn, reason: "\(error)")
        }
        vt_x264_param_set_log(&params, logSink, X264_LOG_WARNING)
        guard let next = vt_x264_encoder_open(&params) else {
            throw .openFailed(encoder: "x264", reason: "x264 refused the settings of a speed step (see its message above)")
        }
        let headers: (sps: [[UInt8]], pps: [[UInt8]], sei: [UInt8])
        do { headers = try Self.headers(of: next) } catch {
            x264_encoder_close(next)
            throw error
        }
        guard headers.sps == formatDescription.sequenceParameterSets,
              headers.pps == formatDescription.pictureParameterSets else {
            x264_encoder_close(next)
            return false
        }
        if let old = encoder {
            if framesInCurrent == 0 {
                x264_encoder_close(old)
            } else {
                // The pictures still in it are coded at the fastest analysis: it empties
                // sooner, and takes less from the new encoder meanwhile.
                var fastest = currentParameters
                Self.takeAnalysis(of: try parameters(at: Self.lightPreset), into: &fastest)
                if x264_encoder_reconfig(old, &fastest) != 0 {
                    // Not fatal: it empties at the speed it had.
                    logContext.takeUnretainedValue().logger.debug("x264: the encoder being emptied kept its speed")
                }
                retiring = X264Retirement(encoder: old, frameRate: settings.frameRate, framesIn: framesIn)
            }
        }
        // Nothing coded yet: the options SEI is the encoder's that codes the first picture.
        if framesIn == 0 { pendingSEI = headers.sei }
        encoder = next
        framesInCurrent = 0
        currentHasCoded = false
        leftExhaustiveSearch = false
        self.light = light
        return true
    }

    /// Hands out what the retiring encoder has coded so far, or (`waiting`) everything it
    /// holds; once it is empty, the new encoder's pictures held meanwhile.
    private func deliverRetired(waiting: Bool) throws {
        guard let retiring else { return }
        let (frames, done) = try retiring.take(waiting: waiting)
        for frame in frames { try emit(frame) }
        guard done else { return }
        self.retiring = nil
        let waited = held
        held = []
        for frame in waited { try emit(frame) }
    }

    /// Hands a frame to the output. Each encoder numbers its IDRs from idr_pic_id 0: when the
    /// encoder left ended on an IDR, the next one's first IDR must take the other id.
    private func emit(_ frame: EncodedFrame) throws {
        var frame = frame
        if frame.isKeyFrame, let previous = lastIDR {
            let sets = try parameterSets()
            if let id = try IDRPictureID.read(in: frame.data, sps: sets.sps, pps: sets.pps),
               id == (try IDRPictureID.read(in: previous, sps: sets.sps, pps: sets.pps)) {
                frame.data = try IDRPictureID.replacing(in: frame.data, with: id == 0 ? 1 : 0, sps: sets.sps, pps: sets.pps)
            }
        }
        lastIDR = frame.isKeyFrame ? frame.data : nil
        try output(frame)
    }

    /// The parameter sets, parsed (for `emit`).
    private func parameterSets() throws -> (sps: SequenceParameterSet, pps: PictureParameterSet) {
        if let parsedParameterSets { return parsedParameterSets }
        let sps = try SequenceParameterSet(nalUnit: formatDescription.sequenceParameterSets[0])
        let pps = try PictureParameterSet(nalUnit: formatDescription.pictureParameterSets[0], chromaFormatIdc: sps.chromaFormatIdc)
        parsedParameterSets = (sps, pps)
        return (sps, pps)
    }

    /// The speed-related fields `x264_encoder_reconfig` takes, from a faster preset's
    /// parameters into the opened ones.
    static func takeAnalysis(of faster: x264_param_t, into target: inout x264_param_t) {
        let opened = target
        target.i_frame_reference = min(faster.i_frame_reference, opened.i_frame_reference)
        target.analyse.inter = faster.analyse.inter
        target.analyse.intra = faster.analyse.intra
        target.analyse.i_direct_mv_pred = faster.analyse.i_direct_mv_pred
        target.analyse.i_me_method = faster.analyse.i_me_method
        target.analyse.i_me_range = min(faster.analyse.i_me_range, opened.analyse.i_me_range)
        // x264 cannot leave sub-pixel refinement 0 once in it.
        target.analyse.i_subpel_refine = opened.analyse.i_subpel_refine == 0 ? 0 : max(1, faster.analyse.i_subpel_refine)
        target.analyse.i_trellis = faster.analyse.i_trellis
        target.analyse.b_chroma_me = faster.analyse.b_chroma_me
        target.analyse.b_fast_pskip = faster.analyse.b_fast_pskip
        target.analyse.b_dct_decimate = faster.analyse.b_dct_decimate
        target.analyse.b_mixed_references = faster.analyse.b_mixed_references
        // The PPS says whether the 8×8 transform may be used: off, it stays off.
        target.analyse.b_transform_8x8 = opened.analyse.b_transform_8x8 != 0 ? faster.analyse.b_transform_8x8 : 0
    }

    /// The parameter sets x264 writes for its settings now, and its version/options SEI
    /// (length-prefixed, as it goes before the first picture). Only while no picture is being
    /// coded (after `prepare()`, or after `completeFrames()`): it writes into the buffers the
    /// frame threads use.
    func headersNow() throws(EncoderError) -> (sps: [[UInt8]], pps: [[UInt8]], sei: [UInt8]) {
        guard let encoder else { preconditionFailure("headers before prepare") }
        return try Self.headers(of: encoder)
    }

    private static func headers(of encoder: OpaquePointer) throws(EncoderError) -> (sps: [[UInt8]], pps: [[UInt8]], sei: [UInt8]) {
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

    /// The settings in force on the running encoder, as x264 reports them.
    var currentParameters: x264_param_t {
        var now = x264_param_t()
        if let encoder { x264_encoder_parameters(encoder, &now) }
        return now
    }

    public func invalidate() {
        // Its messages go to the log sink freed with this session.
        retiring?.close()
        retiring = nil
        held = []
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
        currentHasCoded = true
        if retiring != nil {
            held.append(frame)
        } else {
            try emit(frame)
        }
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

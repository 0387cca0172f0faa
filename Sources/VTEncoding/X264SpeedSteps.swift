import CX264
import Logging
import VTCore
import VTH264

/// How an `X264Session` changes speed while it runs (`--realtime adaptive`): the steps from
/// the opened preset down to superfast, the light encoder the fastest steps run on, the change
/// from one encoder to another with the encoder left emptied on a thread of its own
/// (`X264Retirement`), and the order the pictures of both come out in.
///
/// Each step changes what `x264_encoder_reconfig` changes on a running encoder and nothing
/// that is in the parameter sets or fixed when it opened (B-frames, lookahead, weighted
/// prediction, adaptive quantisation, rate control): the motion search, sub-pixel refinement,
/// partitions, trellis, reference count, fast P-skip and DCT decimation of the step's preset,
/// with the tune and explicit settings laid over it as when opening. Deblocking stays as
/// opened (ultrafast turns it off: a blocky picture for a few percent). What x264 can lower but
/// never raise again (sub-pixel refinement 0, scene-cut detection off) is kept where it was
/// opened, so every step stays reachable; an exhaustive motion search (esa, tesa: `--speed
/// placebo`) is the exception, which x264 cannot return to once it left it, so the first step
/// searches with umh instead once the encoder has left it.
///
/// The fastest steps (veryfast, superfast) run on another encoder instead, opened without a
/// lookahead: see `openLight`. Leaving them opens the encoder `--speed` asks for again.
/// Either change starts with a keyframe, and the parameter sets stay byte for byte those the
/// session opened with.
///
/// Used by the session's thread only.
final class X264SpeedSteps {
    /// The opened preset, then every faster one down to superfast.
    let names: [String]
    /// The first step coded by a light encoder, if any; nil once the light encoder's
    /// parameter sets turned out not to match (every step then only reconfigures).
    private(set) var newEncoderFromStep: Int?

    private let settings: EncoderSettings
    private let width: Int
    private let height: Int
    private let pixelFormat: PixelFormat
    private let parameterSets: VideoFormatDescription
    private let logSink: UnsafeMutablePointer<vt_x264_log_sink>
    private let logger: Logger
    private let output: EncodedFrameHandler
    /// The parameters the encoder opened with, as x264 resolved them: what each step changes
    /// only the analysis of.
    private let opened: x264_param_t
    /// The same for the light encoder, while it codes.
    private var lightOpened = x264_param_t()
    /// Whether the encoder that codes now is the light one.
    private var light = false
    /// Whether the encoder opened with an exhaustive motion search (placebo) has left it.
    private var leftExhaustiveSearch = false
    /// Pictures given to the encoder that codes now since it opened.
    private var framesInCurrent = 0
    /// Whether the encoder that codes now has given out a picture since it opened.
    private var currentHasCoded = false
    /// The encoder left at the last change of encoder, emptied on a thread of its own; its
    /// pictures go out first, so `held` keeps the new encoder's until it is done.
    private var retiring: X264Retirement?
    private var held: [EncodedFrame] = []
    /// The last frame handed out, if it was an IDR (see `emit`).
    private var lastIDR: [UInt8]?
    private var parsed: (sps: SequenceParameterSet, pps: PictureParameterSet)?

    /// The presets whose steps a light encoder codes (after `--speed` itself).
    static let lightPresets: Set = ["veryfast", "superfast"]
    /// The preset a light encoder opens with: the fastest that keeps CABAC, deblocking and
    /// B-frames, so its parameter sets can be the opened encoder's.
    static let lightPreset = "superfast"

    /// The steps of an encoder opened with `opened` (as x264 resolved them) for `settings`,
    /// whose parameter sets are `parameterSets`; pictures go to `output`.
    init(settings: EncoderSettings, width: Int, height: Int, pixelFormat: PixelFormat, opened: x264_param_t,
         parameterSets: VideoFormatDescription, logSink: UnsafeMutablePointer<vt_x264_log_sink>, logger: Logger,
         output: @escaping EncodedFrameHandler) {
        self.settings = settings
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.opened = opened
        self.parameterSets = parameterSets
        self.logSink = logSink
        self.logger = logger
        self.output = output
        // x264's documentation of x264_encoder_reconfig warns that many of ultrafast's
        // shortcuts cannot be switched out of, and advises against switching between it and
        // other presets.
        let presets = X264Parameters.presetNames
        if let index = presets.firstIndex(of: settings.speed) {
            names = presets[...index].reversed().filter { $0 != "ultrafast" || index == 0 }
        } else {
            names = []
        }
        // The fastest steps run on an encoder opened without a lookahead: what x264 cannot
        // change on a running encoder costs more, at those steps, than the rest of superfast.
        newEncoderFromStep = names.indices.dropFirst().first { Self.lightPresets.contains(names[$0]) }
        // A buffer model (VBV; with CBR also the HRD's buffering periods) lives in the encoder.
        // A new one would start it again from x264's initial fullness in the middle of the
        // stream, where the old one's may be near empty: the fastest steps then only change
        // the running encoder's analysis, as the others do.
        if opened.rc.i_vbv_max_bitrate > 0 && opened.rc.i_vbv_buffer_size > 0 { newEncoderFromStep = nil }
    }

    /// Whether a change of encoder is still settling: the encoder left is being emptied, or
    /// the new one has not given out a picture yet.
    var changePending: Bool { retiring != nil || !currentHasCoded }

    /// Moves `encoder` (replacing it when the step crosses `newEncoderFromStep`) to step
    /// `step`. Returns the new encoder's options SEI when it replaced the one before.
    func set(_ step: Int, encoder: inout OpaquePointer?, framesIn: Int) throws(EncoderError) -> [UInt8]? {
        var sei: [UInt8]?
        let wantLight = newEncoderFromStep.map { step >= $0 } ?? false
        if wantLight != light {
            if wantLight {
                sei = try openLight(&encoder, framesIn: framesIn)
            } else {
                var params = try X264Parameters.make(settings, width: width, height: height, format: pixelFormat)
                sei = try replace(&encoder, opening: &params, light: false, framesIn: framesIn)
            }
        }
        guard let running = encoder else { return sei }
        var target = light ? lightOpened : opened
        if target.analyse.i_me_method >= X264_ME_ESA, step > 0 || leftExhaustiveSearch {
            target.analyse.i_me_method = X264_ME_UMH
            leftExhaustiveSearch = true
        }
        if step > 0 {
            Self.takeAnalysis(of: try parameters(at: names[step]), into: &target)
        }
        if light {
            // The light encoder searches the references the parameter sets declare (x264 keeps
            // a picture buffer for them anyway): at superfast's analysis about a tenth more
            // work for a better picture than superfast's one reference gives.
            target.i_frame_reference = lightOpened.i_frame_reference
        }
        guard x264_encoder_reconfig(running, &target) == 0 else {
            throw .speedChangeFailed(encoder: "x264", speed: names[step])
        }
        return sei
    }

    /// A picture went into the encoder that codes now.
    func pictureIn() { framesInCurrent += 1 }

    /// A frame the encoder that codes now gave out: held while the encoder left is still
    /// being emptied, handed out otherwise.
    func deliver(_ frame: EncodedFrame) throws {
        currentHasCoded = true
        if retiring != nil {
            held.append(frame)
        } else {
            try emit(frame)
        }
    }

    /// Hands out what the encoder left has coded so far, or (`waiting`) everything it holds;
    /// once it is empty, the new encoder's pictures held meanwhile.
    func deliverRetired(waiting: Bool) throws {
        guard let retiring else { return }
        let (frames, done) = try retiring.take(waiting: waiting)
        for frame in frames { try emit(frame) }
        guard done else { return }
        self.retiring = nil
        let waited = held
        held = []
        for frame in waited { try emit(frame) }
    }

    /// Waits for the encoder left to be closed, dropping what it and the new one hold (the
    /// session is going away).
    func close() {
        retiring?.close()
        retiring = nil
        held = []
    }

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
    private func openLight(_ encoder: inout OpaquePointer?, framesIn: Int) throws(EncoderError) -> [UInt8]? {
        var params = Self.lightParameters(opened: opened, superfast: try parameters(at: Self.lightPreset))
        guard let sei = try replace(&encoder, opening: &params, light: true, framesIn: framesIn) else {
            newEncoderFromStep = nil
            logger.warning("x264: an encoder without lookahead would write other parameter sets here; the fast speeds only change the analysis")
            return nil
        }
        lightOpened = X264Session.parameters(of: encoder)
        return sei
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
    /// Returns the new encoder's options SEI, or nil, opening nothing, when its parameter sets
    /// are not the session's.
    private func replace(_ encoder: inout OpaquePointer?, opening params: inout x264_param_t, light: Bool,
                         framesIn: Int) throws(EncoderError) -> [UInt8]? {
        // One change at a time: the encoder before the last must be empty first.
        do { try deliverRetired(waiting: true) } catch {
            throw .encodeFailed(encoder: "x264", frame: framesIn, reason: "\(error)")
        }
        vt_x264_param_set_log(&params, logSink, X264_LOG_WARNING)
        guard let next = vt_x264_encoder_open(&params) else {
            throw .openFailed(encoder: "x264", reason: "x264 refused the settings of a speed step (see its message above)")
        }
        let headers: X264Session.Headers
        do { headers = try X264Session.headers(of: next) } catch {
            x264_encoder_close(next)
            throw error
        }
        guard headers.sps == parameterSets.sequenceParameterSets, headers.pps == parameterSets.pictureParameterSets else {
            x264_encoder_close(next)
            return nil
        }
        if let old = encoder {
            if framesInCurrent == 0 {
                x264_encoder_close(old)
            } else {
                // The pictures still in it are coded at the fastest analysis: it empties
                // sooner, and takes less from the new encoder meanwhile.
                var fastest = X264Session.parameters(of: old)
                Self.takeAnalysis(of: try parameters(at: Self.lightPreset), into: &fastest)
                if x264_encoder_reconfig(old, &fastest) != 0 {
                    // Not fatal: it empties at the speed it had.
                    logger.debug("x264: the encoder being emptied kept its speed")
                }
                retiring = X264Retirement(encoder: old, frameRate: settings.frameRate, framesIn: framesIn)
            }
        }
        encoder = next
        framesInCurrent = 0
        currentHasCoded = false
        leftExhaustiveSearch = false
        self.light = light
        return headers.sei
    }

    /// Hands a frame to the output. Each encoder numbers its IDRs from idr_pic_id 0: when the
    /// encoder left ended on an IDR, the next one's first IDR must take the other id.
    private func emit(_ frame: EncodedFrame) throws {
        var frame = frame
        if frame.isKeyFrame, let previous = lastIDR {
            let sets = try parsedParameterSets()
            if let id = try IDRPictureID.read(in: frame.data, sps: sets.sps, pps: sets.pps),
               id == (try IDRPictureID.read(in: previous, sps: sets.sps, pps: sets.pps)) {
                frame.data = try IDRPictureID.replacing(in: frame.data, with: id == 0 ? 1 : 0, sps: sets.sps, pps: sets.pps)
            }
        }
        lastIDR = frame.isKeyFrame ? frame.data : nil
        try output(frame)
    }

    /// The parameter sets, parsed (for `emit`).
    private func parsedParameterSets() throws -> (sps: SequenceParameterSet, pps: PictureParameterSet) {
        if let parsed { return parsed }
        let sps = try SequenceParameterSet(nalUnit: parameterSets.sequenceParameterSets[0])
        let pps = try PictureParameterSet(nalUnit: parameterSets.pictureParameterSets[0], chromaFormatIdc: sps.chromaFormatIdc)
        parsed = (sps, pps)
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
}

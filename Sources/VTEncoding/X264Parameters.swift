import CX264
import VTCore
import VTH264

/// Builds the `x264_param_t` for a session, layered as the x264 CLI does: preset → tune →
/// explicit settings → profile. The mapping is the table on `EncoderSettings`.
enum X264Parameters {
    static var presetNames: [String] { names(vt_x264_preset_name) }
    static var tuneNames: [String] { names(vt_x264_tune_name) }

    private static func names(_ at: (Int32) -> UnsafePointer<CChar>?) -> [String] {
        var result: [String] = []
        var i: Int32 = 0
        while let name = at(i) {
            result.append(String(cString: name))
            i += 1
        }
        return result
    }

    /// Checks the x264-specific names before anything is opened.
    static func validate(_ settings: EncoderSettings) throws(UsageError) {
        if !presetNames.contains(settings.speed) {
            throw UsageError("--speed \(settings.speed) is not an x264 preset: use one of \(presetNames.joined(separator: ", "))")
        }
        if let tune = settings.tune {
            for part in tune.split(separator: ",") where !tuneNames.contains(String(part)) {
                throw UsageError("--tune \(part) is not an x264 tune: use one of \(tuneNames.joined(separator: ", "))")
            }
        }
    }

    static func make(_ settings: EncoderSettings, width: Int, height: Int,
                     format: PixelFormat) throws(EncoderError) -> x264_param_t {
        var p = x264_param_t()
        guard x264_param_default_preset(&p, settings.speed, settings.tune) == 0 else {
            throw .openFailed(encoder: "x264", reason: "unknown preset \(settings.speed) or tune \(settings.tune ?? "")")
        }
        p.i_width = Int32(width)
        p.i_height = Int32(height)
        switch format {
        case .i420: p.i_csp = X264_CSP_I420
        case .nv12: p.i_csp = X264_CSP_NV12
        case .yuyv: throw .unsupportedPixelFormat(encoder: "x264", format: format)
        }
        p.i_threads = Int32(settings.threads ?? 0)

        // A constant-rate source: with b_vfr_input = 1 x264 writes fixed_frame_rate_flag = 0,
        // holds a frame more, and players misread the rate of a raw stream.
        let rate = settings.frameRate
        p.b_vfr_input = 0
        p.i_fps_num = UInt32(rate.numerator)
        p.i_fps_den = UInt32(rate.denominator)
        p.i_timebase_num = UInt32(rate.denominator)
        p.i_timebase_den = UInt32(rate.numerator)

        if let sar = settings.sampleAspectRatio?.fittingH264 {
            p.vui.i_sar_width = Int32(sar.width)
            p.vui.i_sar_height = Int32(sar.height)
        }
        if let fullRange = settings.fullRange {
            p.vui.b_fullrange = fullRange ? 1 : 0
        }

        p.i_keyint_max = Int32(settings.keyFrameInterval.frames(at: rate))
        if let bFrames = settings.bFrames { p.i_bframe = Int32(bFrames) }
        if let entropy = settings.entropy { p.b_cabac = entropy == .cabac ? 1 : 0 }
        if let level = settings.level, let idc = EncoderSettings.levelIDC(level) {
            p.i_level_idc = Int32(idc)
        }

        switch settings.effectiveRateControl {
        case .crf:
            p.rc.i_rc_method = X264_RC_CRF
            p.rc.f_rf_constant = Float(settings.crf ?? EncoderSettings.defaultCRF)
        case .cqp:
            p.rc.i_rc_method = X264_RC_CQP
            p.rc.i_qp_constant = Int32(settings.qp ?? 23)
        case .abr, .vbr, .cbr:
            p.rc.i_rc_method = X264_RC_ABR
            p.rc.i_bitrate = kilobits(settings.bitRate ?? 0)
        }
        if let peak = settings.effectiveMaxBitRate, let buffer = settings.effectiveBufferSize {
            p.rc.i_vbv_max_bitrate = kilobits(peak)
            p.rc.i_vbv_buffer_size = kilobits(buffer * 8)
        }
        if settings.effectiveRateControl == .cbr {
            p.i_nal_hrd = X264_NAL_HRD_CBR
        }

        // AVCC out, as VideoToolbox hands it out: 4-byte lengths, parameter sets out of band.
        p.b_annexb = 0
        p.b_repeat_headers = 0

        if let profile = settings.profile {
            guard x264_param_apply_profile(&p, profile.rawValue) == 0 else {
                throw .openFailed(encoder: "x264", reason: "profile \(profile.rawValue) cannot be applied to these settings")
            }
        }
        return p
    }

    /// x264 counts rates in kbit/s (1000 bit/s).
    private static func kilobits(_ bits: Int64) -> Int32 {
        Int32(clamping: (bits + 500) / 1000)
    }
}

import VTCore

extension SampleAspectRatio {
    /// Table E-1: the ratios aspect_ratio_idc 1 to 16 stand for.
    static let table: [SampleAspectRatio] = [
        (1, 1), (12, 11), (10, 11), (16, 11), (40, 33), (24, 11), (20, 11), (32, 11),
        (80, 33), (18, 11), (15, 11), (64, 33), (160, 99), (4, 3), (3, 2), (2, 1),
    ].map { SampleAspectRatio(width: $0.0, height: $0.1) }

    /// The ratio as the VUI's 16-bit sar_width and sar_height can carry it, by x264's rule:
    /// reduced, then both terms halved until they fit; nil when a term is not positive or
    /// halves to zero (no ratio close enough fits). An input file may state any ratio (a Y4M
    /// `A` tag has no limit), and an encoder given one that does not fit would write a
    /// damaged SPS or stop.
    public var fittingH264: SampleAspectRatio? {
        guard width > 0, height > 0 else { return nil }
        var (a, b) = (width, height)
        while b != 0 { (a, b) = (b, a % b) }
        var (w, h) = (width / a, height / a)
        while w > 0xFFFF || h > 0xFFFF {
            w /= 2
            h /= 2
        }
        return w > 0 && h > 0 ? SampleAspectRatio(width: w, height: h) : nil
    }
}

/// timing_info of the VUI: the clock the stream's timing counts in.
public struct TimingInfo: Sendable, Equatable {
    public var numUnitsInTick: UInt32
    public var timeScale: UInt32
    public var fixedFrameRate: Bool

    public init(numUnitsInTick: UInt32, timeScale: UInt32, fixedFrameRate: Bool) {
        self.numUnitsInTick = numUnitsInTick
        self.timeScale = timeScale
        self.fixedFrameRate = fixedFrameRate
    }

    /// Frames per second as time_scale ÷ (2 × num_units_in_tick): a tick is one field period,
    /// so a frame takes two (E.2.1). nil when either value is zero or the reduced fraction is
    /// outside what `FrameRate` holds.
    public var frameRate: FrameRate? {
        guard numUnitsInTick > 0 else { return nil }
        return FrameRate(numerator: Int(timeScale), denominator: 2 * Int(numUnitsInTick))
    }

    /// frameRate as a decimal number of frames per second.
    public var framesPerSecond: Double? {
        guard numUnitsInTick > 0 else { return nil }
        return Double(timeScale) / (2 * Double(numUnitsInTick))
    }
}

/// chroma_loc_info of the VUI: where chroma samples sit relative to luma (Figure E-1).
public struct ChromaSampleLocation: Sendable, Equatable {
    /// chroma_sample_loc_type_top_field, 0–5.
    public var top: Int
    /// chroma_sample_loc_type_bottom_field, 0–5.
    public var bottom: Int

    public init(top: Int, bottom: Int) {
        self.top = top
        self.bottom = bottom
    }
}

/// bitstream_restriction of the VUI: limits a decoder can size its buffers by.
public struct BitstreamRestriction: Sendable, Equatable {
    public var motionVectorsOverPicBoundaries = true
    public var maxBytesPerPicDenom = 2
    public var maxBitsPerMbDenom = 1
    public var log2MaxMvLengthHorizontal = 15
    public var log2MaxMvLengthVertical = 15
    /// Frames that may precede another in decode order and follow it in output order:
    /// 0 means no B-frame reordering.
    public var maxNumReorderFrames: Int
    public var maxDecFrameBuffering: Int

    public init(maxNumReorderFrames: Int, maxDecFrameBuffering: Int) {
        self.maxNumReorderFrames = maxNumReorderFrames
        self.maxDecFrameBuffering = maxDecFrameBuffering
    }

    static func read(from reader: inout BitReader) throws(BitstreamError) -> BitstreamRestriction {
        let motionVectors = try reader.flag("motion_vectors_over_pic_boundaries_flag")
        let bytesPerPic = try reader.ue("max_bytes_per_pic_denom", in: 0...16)
        let bitsPerMb = try reader.ue("max_bits_per_mb_denom", in: 0...16)
        let mvHorizontal = try reader.ue("log2_max_mv_length_horizontal", in: 0...16)
        let mvVertical = try reader.ue("log2_max_mv_length_vertical", in: 0...16)
        let reorder = try reader.ue("max_num_reorder_frames", in: 0...16)
        let buffering = try reader.ue("max_dec_frame_buffering", in: 0...16)
        var restriction = BitstreamRestriction(maxNumReorderFrames: reorder, maxDecFrameBuffering: buffering)
        restriction.motionVectorsOverPicBoundaries = motionVectors
        restriction.maxBytesPerPicDenom = bytesPerPic
        restriction.maxBitsPerMbDenom = bitsPerMb
        restriction.log2MaxMvLengthHorizontal = mvHorizontal
        restriction.log2MaxMvLengthVertical = mvVertical
        return restriction
    }

    func write(to writer: inout BitBuilder) {
        writer.flag(motionVectorsOverPicBoundaries)
        writer.ue(maxBytesPerPicDenom)
        writer.ue(maxBitsPerMbDenom)
        writer.ue(log2MaxMvLengthHorizontal)
        writer.ue(log2MaxMvLengthVertical)
        writer.ue(maxNumReorderFrames)
        writer.ue(maxDecFrameBuffering)
    }
}

/// vui_parameters() (Annex E.1.1): display and timing information that does not change how
/// pictures decode. Every optional member is nil when its present-flag is 0.
public struct VideoUsabilityInformation: Sendable, Equatable {
    /// aspect_ratio_idc: 0 unspecified, 1–16 Table E-1, 255 Extended_SAR.
    public var aspectRatioIdc: Int?
    /// sar_width and sar_height, sent only with aspect_ratio_idc 255.
    public var extendedSampleAspectRatio: SampleAspectRatio?
    public var overscanAppropriate: Bool?
    public var videoSignalType: VideoSignalType?
    public var chromaSampleLocation: ChromaSampleLocation?
    public var timing: TimingInfo?
    public var nalHRD: HRDParameters?
    public var vclHRD: HRDParameters?
    /// low_delay_hrd_flag, sent only when there are HRD parameters.
    public var lowDelayHRD = false
    public var picStructPresent = false
    public var bitstreamRestriction: BitstreamRestriction?

    public init() {}

    /// The sample aspect ratio, from Table E-1 or Extended_SAR; nil when unspecified or
    /// reserved.
    public var sampleAspectRatio: SampleAspectRatio? {
        get {
            guard let idc = aspectRatioIdc else { return nil }
            if idc == 255 { return extendedSampleAspectRatio }
            return (1...16).contains(idc) ? SampleAspectRatio.table[idc - 1] : nil
        }
        set {
            guard let sar = newValue else {
                aspectRatioIdc = nil
                extendedSampleAspectRatio = nil
                return
            }
            // A table entry takes 8 bits where Extended_SAR takes 40.
            if let index = SampleAspectRatio.table.firstIndex(of: sar) {
                aspectRatioIdc = index + 1
                extendedSampleAspectRatio = nil
            } else {
                aspectRatioIdc = 255
                extendedSampleAspectRatio = sar
            }
        }
    }

    static func read(from reader: inout BitReader) throws(BitstreamError) -> VideoUsabilityInformation {
        var vui = VideoUsabilityInformation()
        if try reader.flag("aspect_ratio_info_present_flag") {
            let idc = Int(try reader.u(8, "aspect_ratio_idc"))
            vui.aspectRatioIdc = idc
            if idc == 255 {
                vui.extendedSampleAspectRatio = SampleAspectRatio(
                    width: Int(try reader.u(16, "sar_width")), height: Int(try reader.u(16, "sar_height")))
            }
        }
        if try reader.flag("overscan_info_present_flag") {
            vui.overscanAppropriate = try reader.flag("overscan_appropriate_flag")
        }
        if try reader.flag("video_signal_type_present_flag") {
            var signal = VideoSignalType(videoFormat: Int(try reader.u(3, "video_format")),
                                         fullRange: try reader.flag("video_full_range_flag"))
            if try reader.flag("colour_description_present_flag") {
                signal.colourDescription = ColourDescription(
                    colourPrimaries: Int(try reader.u(8, "colour_primaries")),
                    transferCharacteristics: Int(try reader.u(8, "transfer_characteristics")),
                    matrixCoefficients: Int(try reader.u(8, "matrix_coefficients")))
            }
            vui.videoSignalType = signal
        }
        if try reader.flag("chroma_loc_info_present_flag") {
            vui.chromaSampleLocation = ChromaSampleLocation(
                top: try reader.ue("chroma_sample_loc_type_top_field", in: 0...5),
                bottom: try reader.ue("chroma_sample_loc_type_bottom_field", in: 0...5))
        }
        if try reader.flag("timing_info_present_flag") {
            vui.timing = TimingInfo(numUnitsInTick: try reader.u(32, "num_units_in_tick"),
                                    timeScale: try reader.u(32, "time_scale"),
                                    fixedFrameRate: try reader.flag("fixed_frame_rate_flag"))
        }
        if try reader.flag("nal_hrd_parameters_present_flag") {
            vui.nalHRD = try HRDParameters.read(from: &reader)
        }
        if try reader.flag("vcl_hrd_parameters_present_flag") {
            vui.vclHRD = try HRDParameters.read(from: &reader)
        }
        if vui.nalHRD != nil || vui.vclHRD != nil {
            vui.lowDelayHRD = try reader.flag("low_delay_hrd_flag")
        }
        vui.picStructPresent = try reader.flag("pic_struct_present_flag")
        if try reader.flag("bitstream_restriction_flag") {
            do {
                vui.bitstreamRestriction = try BitstreamRestriction.read(from: &reader)
            } catch .endOfData {
                // Some encoders cut the SPS short inside bitstream_restriction; decoders
                // (FFmpeg among them) accept such streams, and nothing after it matters to
                // decoding, so the restriction is dropped instead of rejecting the stream.
                vui.bitstreamRestriction = nil
            }
        }
        return vui
    }

    func write(to writer: inout BitBuilder) {
        writer.flag(aspectRatioIdc != nil)
        if let idc = aspectRatioIdc {
            writer.u(idc, bits: 8)
            if idc == 255 {
                writer.u(extendedSampleAspectRatio?.width ?? 0, bits: 16)
                writer.u(extendedSampleAspectRatio?.height ?? 0, bits: 16)
            }
        }
        writer.flag(overscanAppropriate != nil)
        if let overscan = overscanAppropriate { writer.flag(overscan) }
        writer.flag(videoSignalType != nil)
        if let signal = videoSignalType {
            writer.u(signal.videoFormat, bits: 3)
            writer.flag(signal.fullRange)
            writer.flag(signal.colourDescription != nil)
            if let colour = signal.colourDescription {
                writer.u(colour.colourPrimaries, bits: 8)
                writer.u(colour.transferCharacteristics, bits: 8)
                writer.u(colour.matrixCoefficients, bits: 8)
            }
        }
        writer.flag(chromaSampleLocation != nil)
        if let location = chromaSampleLocation {
            writer.ue(location.top)
            writer.ue(location.bottom)
        }
        writer.flag(timing != nil)
        if let timing {
            writer.u(timing.numUnitsInTick, bits: 32)
            writer.u(timing.timeScale, bits: 32)
            writer.flag(timing.fixedFrameRate)
        }
        writer.flag(nalHRD != nil)
        nalHRD?.write(to: &writer)
        writer.flag(vclHRD != nil)
        vclHRD?.write(to: &writer)
        if nalHRD != nil || vclHRD != nil { writer.flag(lowDelayHRD) }
        writer.flag(picStructPresent)
        writer.flag(bitstreamRestriction != nil)
        bitstreamRestriction?.write(to: &writer)
    }
}

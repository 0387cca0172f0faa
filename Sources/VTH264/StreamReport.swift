/// What `vtrecord inspect` says about an H.264 elementary stream: how many NAL units and
/// frames of each kind, how the keyframes are spaced, whether each keyframe can start
/// decoding on its own, and the first SPS and PPS.
///
/// The JSON form (`--json`) uses snake_case keys, and leaves out values the stream does not
/// send (a VUI field that is not present) rather than guessing defaults.
public struct StreamReport: Codable, Sendable, Equatable {
    /// The first SPS, flattened to the values people look for.
    public struct SequenceSummary: Codable, Sendable, Equatable {
        public var profile: String
        public var profileIdc: Int
        /// constraint_set0_flag to constraint_set5_flag.
        public var constraintSetFlags: [Bool]
        public var level: String
        public var levelIdc: Int
        public var seqParameterSetId: Int
        public var chromaFormatIdc: Int
        public var bitDepthLuma: Int
        public var bitDepthChroma: Int
        /// After cropping.
        public var width: Int
        public var height: Int
        public var codedWidth: Int
        public var codedHeight: Int
        public var frameMbsOnly: Bool
        public var mbAdaptiveFrameField: Bool
        public var picOrderCntType: Int
        public var maxNumRefFrames: Int
        public var scalingMatrixPresent: Bool
        /// "16:15"; absent when the stream does not say.
        public var sar: String?
        public var videoFullRange: Bool?
        public var colourPrimaries: String?
        public var transferCharacteristics: String?
        public var matrixCoefficients: String?
        public var timeScale: UInt32?
        public var numUnitsInTick: UInt32?
        public var fixedFrameRate: Bool?
        /// Exact, as "30000/1001" or "25".
        public var frameRate: String?
        public var framesPerSecond: Double?
        /// 0 when the stream promises no B-frame reordering.
        public var maxNumReorderFrames: Int?
        /// Bit rate of the first NAL HRD buffer, when the encoder sends one (VBV streams).
        public var hrdBitRate: Int?

        enum CodingKeys: String, CodingKey {
            case profile, level, width, height, sar
            case profileIdc = "profile_idc"
            case constraintSetFlags = "constraint_set_flags"
            case levelIdc = "level_idc"
            case seqParameterSetId = "seq_parameter_set_id"
            case chromaFormatIdc = "chroma_format_idc"
            case bitDepthLuma = "bit_depth_luma"
            case bitDepthChroma = "bit_depth_chroma"
            case codedWidth = "coded_width"
            case codedHeight = "coded_height"
            case frameMbsOnly = "frame_mbs_only"
            case mbAdaptiveFrameField = "mb_adaptive_frame_field"
            case picOrderCntType = "pic_order_cnt_type"
            case maxNumRefFrames = "max_num_ref_frames"
            case scalingMatrixPresent = "scaling_matrix_present"
            case videoFullRange = "video_full_range"
            case colourPrimaries = "colour_primaries"
            case transferCharacteristics = "transfer_characteristics"
            case matrixCoefficients = "matrix_coefficients"
            case timeScale = "time_scale"
            case numUnitsInTick = "num_units_in_tick"
            case fixedFrameRate = "fixed_frame_rate"
            case frameRate = "frame_rate"
            case framesPerSecond = "frames_per_second"
            case maxNumReorderFrames = "max_num_reorder_frames"
            case hrdBitRate = "hrd_bit_rate"
        }

        public init(_ sps: SequenceParameterSet) {
            profile = sps.profileName
            profileIdc = sps.profileIdc
            constraintSetFlags = (0...5).map(sps.hasConstraintSet)
            level = sps.level
            levelIdc = sps.levelIdc
            seqParameterSetId = sps.seqParameterSetId
            chromaFormatIdc = sps.chromaFormatIdc
            bitDepthLuma = sps.bitDepthLuma
            bitDepthChroma = sps.bitDepthChroma
            width = sps.width
            height = sps.height
            codedWidth = sps.codedWidth
            codedHeight = sps.codedHeight
            frameMbsOnly = sps.frameMbsOnly
            mbAdaptiveFrameField = sps.mbAdaptiveFrameField
            picOrderCntType = sps.pictureOrderCount.type
            maxNumRefFrames = sps.maxNumRefFrames
            scalingMatrixPresent = sps.scalingMatrix != nil
            sar = sps.sampleAspectRatio?.description
            let signal = sps.vui?.videoSignalType
            videoFullRange = signal?.fullRange
            colourPrimaries = signal?.colourDescription?.colourPrimariesName
            transferCharacteristics = signal?.colourDescription?.transferCharacteristicsName
            matrixCoefficients = signal?.colourDescription?.matrixCoefficientsName
            let timing = sps.timing
            timeScale = timing?.timeScale
            numUnitsInTick = timing?.numUnitsInTick
            fixedFrameRate = timing?.fixedFrameRate
            frameRate = timing?.frameRate?.description
            framesPerSecond = timing?.framesPerSecond
            maxNumReorderFrames = sps.vui?.bitstreamRestriction?.maxNumReorderFrames
            hrdBitRate = sps.vui?.nalHRD.map { $0.bitRate() }
        }
    }

    /// The first PPS.
    public struct PictureSummary: Codable, Sendable, Equatable {
        public var picParameterSetId: Int
        public var seqParameterSetId: Int
        public var entropyCoding: PictureParameterSet.EntropyCoding
        public var transform8x8Mode: Bool
        public var weightedPred: Bool
        public var weightedBipredIdc: Int
        public var picInitQp: Int
        public var numRefIdxL0DefaultActive: Int
        public var numRefIdxL1DefaultActive: Int
        public var deblockingFilterControlPresent: Bool
        public var constrainedIntraPred: Bool
        public var scalingMatrixPresent: Bool

        enum CodingKeys: String, CodingKey {
            case picParameterSetId = "pic_parameter_set_id"
            case seqParameterSetId = "seq_parameter_set_id"
            case entropyCoding = "entropy_coding"
            case transform8x8Mode = "transform_8x8_mode"
            case weightedPred = "weighted_pred"
            case weightedBipredIdc = "weighted_bipred_idc"
            case picInitQp = "pic_init_qp"
            case numRefIdxL0DefaultActive = "num_ref_idx_l0_default_active"
            case numRefIdxL1DefaultActive = "num_ref_idx_l1_default_active"
            case deblockingFilterControlPresent = "deblocking_filter_control_present"
            case constrainedIntraPred = "constrained_intra_pred"
            case scalingMatrixPresent = "scaling_matrix_present"
        }

        public init(_ pps: PictureParameterSet) {
            picParameterSetId = pps.picParameterSetId
            seqParameterSetId = pps.seqParameterSetId
            entropyCoding = pps.entropyCoding
            transform8x8Mode = pps.transform8x8Mode
            weightedPred = pps.weightedPred
            weightedBipredIdc = pps.weightedBipredIdc
            picInitQp = pps.picInitQp
            numRefIdxL0DefaultActive = pps.numRefIdxL0DefaultActive
            numRefIdxL1DefaultActive = pps.numRefIdxL1DefaultActive
            deblockingFilterControlPresent = pps.deblockingFilterControlPresent
            constrainedIntraPred = pps.constrainedIntraPred
            scalingMatrixPresent = pps.highProfileExtension?.scalingMatrix != nil
        }
    }

    /// NAL units by `NALUnitType.key` ("slice_idr", "sps").
    public var nalCounts: [String: Int]
    /// Coded pictures: slices with first_mb_in_slice 0. A field-coded picture counts once per
    /// field; x264 and VA-API code interlaced video as frames (MBAFF), which count once.
    public var frames: Int
    /// Frames coded as IDR pictures: the points where decoding can start.
    public var idrFrames: Int
    /// Frames by the type of their first slice: "I", "P", "B", "SP", "SI".
    public var frameTypes: [String: Int]
    /// Frames from each IDR up to the next, the last one up to the end of the stream.
    /// Frames before the first IDR belong to no GOP: a decoder cannot start there.
    public var gopLengths: [Int]
    /// True when every IDR frame has an SPS and a PPS since the frame before it, so the
    /// stream can be cut at any IDR and still decode. True for a stream without IDR frames.
    public var everyIDRHasParameterSets: Bool
    public var sps: SequenceSummary?
    public var pps: PictureSummary?

    enum CodingKeys: String, CodingKey {
        case frames, sps, pps
        case nalCounts = "nal_counts"
        case idrFrames = "idr_frames"
        case frameTypes = "frame_types"
        case gopLengths = "gop_lengths"
        case everyIDRHasParameterSets = "every_idr_has_parameter_sets"
    }

    public init(nalCounts: [String: Int], frames: Int, idrFrames: Int, frameTypes: [String: Int],
                gopLengths: [Int], everyIDRHasParameterSets: Bool,
                sps: SequenceSummary?, pps: PictureSummary?) {
        self.nalCounts = nalCounts
        self.frames = frames
        self.idrFrames = idrFrames
        self.frameTypes = frameTypes
        self.gopLengths = gopLengths
        self.everyIDRHasParameterSets = everyIDRHasParameterSets
        self.sps = sps
        self.pps = pps
    }
}

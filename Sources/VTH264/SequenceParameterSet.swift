import VTCore

/// seq_parameter_set_rbsp() (clause 7.3.2.1): what every picture of a coded video sequence
/// shares — profile, level, picture size, frame numbering, colour and timing.
///
/// Fields hold the values the syntax codes, with the "_minus1"/"_minus4"/"_minus8" offsets
/// added back. A parsed SPS writes back bit for bit with `rbsp()`, and an encoder can build
/// one from `init(profileIdc:levelIdc:width:height:)` and adjust it.
public struct SequenceParameterSet: Sendable, Equatable {
    /// pic_order_cnt_type and the fields that come with it.
    public enum PictureOrderCount: Sendable, Equatable {
        /// Picture order count sent in each slice header, modulo 2^log2MaxPicOrderCntLsb.
        case type0(log2MaxPicOrderCntLsb: Int)
        /// Picture order count predicted from frame_num with per-slice deltas.
        case type1(deltaPicOrderAlwaysZero: Bool, offsetForNonRefPic: Int,
                   offsetForTopToBottomField: Int, offsetForRefFrame: [Int])
        /// Output order equals decode order (no B-frame reordering).
        case type2

        public var type: Int {
            switch self {
            case .type0: 0
            case .type1: 1
            case .type2: 2
            }
        }
    }

    /// frame_crop_*_offset, in crop units (`cropUnitX`, `cropUnitY`), not samples.
    public struct FrameCropping: Sendable, Equatable {
        public var left: Int
        public var right: Int
        public var top: Int
        public var bottom: Int

        public init(left: Int = 0, right: Int = 0, top: Int = 0, bottom: Int = 0) {
            self.left = left
            self.right = right
            self.top = top
            self.bottom = bottom
        }
    }

    public var profileIdc: Int
    /// The byte after profile_idc: constraint_set0_flag in the top bit down to
    /// constraint_set5_flag, then reserved_zero_2bits. avcC calls it profile_compatibility.
    public var constraintFlags: UInt8
    public var levelIdc: Int
    public var seqParameterSetId: Int
    /// 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4. Sent only by the High profiles; 1 otherwise.
    public var chromaFormatIdc = 1
    public var separateColourPlane = false
    public var bitDepthLuma = 8
    public var bitDepthChroma = 8
    public var qpprimeYZeroTransformBypass = false
    /// The scaling matrix, one entry per list (8, or 12 for 4:4:4); nil when
    /// seq_scaling_matrix_present_flag is 0 (flat matrices).
    public var scalingMatrix: [ScalingList?]?
    public var log2MaxFrameNum: Int
    public var pictureOrderCount: PictureOrderCount
    public var maxNumRefFrames: Int
    public var gapsInFrameNumAllowed = false
    public var picWidthInMbs: Int
    /// Height in slice group map units: macroblocks for frames, macroblock pairs when
    /// fields may be coded (frame_mbs_only_flag 0).
    public var picHeightInMapUnits: Int
    public var frameMbsOnly = true
    public var mbAdaptiveFrameField = false
    public var direct8x8Inference = true
    public var frameCropping: FrameCropping?
    public var vui: VideoUsabilityInformation?

    /// An SPS for a progressive 4:2:0 8-bit stream of `width`×`height` samples, with the
    /// cropping that size needs. Width and height must be even (4:2:0 crops in pairs of
    /// samples); callers check sizes before they get here.
    public init(profileIdc: Int, constraintFlags: UInt8 = 0, levelIdc: Int, width: Int, height: Int,
                maxNumRefFrames: Int = 1, pictureOrderCount: PictureOrderCount = .type2,
                log2MaxFrameNum: Int = 8) {
        precondition(width > 0 && height > 0 && width % 2 == 0 && height % 2 == 0,
                     "a 4:2:0 SPS needs an even, non-zero size, not \(width)x\(height)")
        self.profileIdc = profileIdc
        self.constraintFlags = constraintFlags
        self.levelIdc = levelIdc
        self.seqParameterSetId = 0
        self.log2MaxFrameNum = log2MaxFrameNum
        self.pictureOrderCount = pictureOrderCount
        self.maxNumRefFrames = maxNumRefFrames
        self.picWidthInMbs = (width + 15) / 16
        self.picHeightInMapUnits = (height + 15) / 16
        let right = (picWidthInMbs * 16 - width) / 2
        let bottom = (picHeightInMapUnits * 16 - height) / 2
        if right > 0 || bottom > 0 {
            frameCropping = FrameCropping(right: right, bottom: bottom)
        }
    }

    /// constraint_set`index`_flag, index 0 to 5.
    public func hasConstraintSet(_ index: Int) -> Bool {
        (0...5).contains(index) && constraintFlags & (0x80 >> UInt8(index)) != 0
    }

    /// The profiles that send chroma format, bit depths and scaling matrices (7.3.2.1.1).
    static let highProfileIdcs: Set<Int> = [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]

    /// ChromaArrayType: 0 when there is no chroma or each colour plane is coded as monochrome.
    public var chromaArrayType: Int { separateColourPlane ? 0 : chromaFormatIdc }

    /// Width of the decoded picture before cropping.
    public var codedWidth: Int { picWidthInMbs * 16 }
    /// Height of the decoded frame before cropping (both fields when fields are coded).
    public var codedHeight: Int { (frameMbsOnly ? 1 : 2) * picHeightInMapUnits * 16 }

    /// CropUnitX (7-19, 7-21): one sample, or one chroma sample's width.
    public var cropUnitX: Int { chromaArrayType == 1 || chromaArrayType == 2 ? 2 : 1 }
    /// CropUnitY (7-20, 7-22): one chroma sample's height, doubled when a frame may be coded
    /// as two fields, since each field is cropped by the same amount.
    public var cropUnitY: Int {
        (chromaArrayType == 1 ? 2 : 1) * (frameMbsOnly ? 1 : 2)
    }

    /// Width after cropping: what a player shows.
    public var width: Int {
        codedWidth - cropUnitX * ((frameCropping?.left ?? 0) + (frameCropping?.right ?? 0))
    }

    /// Height after cropping: what a player shows.
    public var height: Int {
        codedHeight - cropUnitY * ((frameCropping?.top ?? 0) + (frameCropping?.bottom ?? 0))
    }

    /// The profile's name as Annex A (and FFmpeg) spell it, telling apart the profiles that
    /// share a profile_idc by their constraint flags.
    public var profileName: String {
        switch profileIdc {
        case 66: hasConstraintSet(1) ? "Constrained Baseline" : "Baseline"
        case 77: "Main"
        case 88: "Extended"
        case 100:
            hasConstraintSet(4) && hasConstraintSet(5) ? "Constrained High"
                : hasConstraintSet(4) ? "Progressive High" : "High"
        case 110:
            hasConstraintSet(3) ? "High 10 Intra" : hasConstraintSet(4) ? "Progressive High 10" : "High 10"
        case 122: hasConstraintSet(3) ? "High 4:2:2 Intra" : "High 4:2:2"
        case 244: hasConstraintSet(3) ? "High 4:4:4 Intra" : "High 4:4:4 Predictive"
        case 44: "CAVLC 4:4:4 Intra"
        case 83: "Scalable Baseline"
        case 86: "Scalable High"
        case 118: "Multiview High"
        case 128: "Stereo High"
        case 134: "MFC High"
        case 135: "MFC Depth High"
        case 138: "Multiview Depth High"
        case 139: "Enhanced Multiview Depth High"
        default: "Unknown (profile_idc \(profileIdc))"
        }
    }

    /// The level as written in Table A-1: "3.1", "4.0", and "1b" for level 1b, which Baseline,
    /// Main and Extended code as level_idc 11 with constraint_set3_flag and the other
    /// profiles as level_idc 9.
    public var level: String {
        let oneB = levelIdc == 9 || (levelIdc == 11 && hasConstraintSet(3) && [66, 77, 88].contains(profileIdc))
        return oneB ? "1b" : "\(levelIdc / 10).\(levelIdc % 10)"
    }

    /// The sample aspect ratio from the VUI; nil when not sent or unspecified.
    public var sampleAspectRatio: SampleAspectRatio? { vui?.sampleAspectRatio }

    /// Frames per second from the VUI timing; nil when not sent.
    public var timing: TimingInfo? { vui?.timing }
}

/// pic_parameter_set_rbsp() (clause 7.3.2.2): the coding tools and defaults the slices of a
/// picture refer to.
///
/// Slice groups (flexible macroblock ordering, Baseline only) are not read: no encoder this
/// program works with produces them, and a PPS that has them is rejected as unsupported.
public struct PictureParameterSet: Sendable, Equatable {
    public enum EntropyCoding: String, Sendable, Codable {
        /// Context-adaptive variable-length coding: Baseline and Extended, and any profile.
        case cavlc
        /// Context-adaptive binary arithmetic coding: Main and above; about 10 % smaller.
        case cabac
    }

    /// The fields that follow the base syntax only when more_rbsp_data() (High profiles).
    public struct HighProfileExtension: Sendable, Equatable {
        public var transform8x8Mode: Bool
        /// nil when pic_scaling_matrix_present_flag is 0.
        public var scalingMatrix: [ScalingList?]?
        public var secondChromaQpIndexOffset: Int

        public init(transform8x8Mode: Bool, scalingMatrix: [ScalingList?]? = nil, secondChromaQpIndexOffset: Int) {
            self.transform8x8Mode = transform8x8Mode
            self.scalingMatrix = scalingMatrix
            self.secondChromaQpIndexOffset = secondChromaQpIndexOffset
        }
    }

    public var picParameterSetId: Int
    public var seqParameterSetId: Int
    public var entropyCoding: EntropyCoding
    public var bottomFieldPicOrderInFramePresent = false
    /// num_ref_idx_l0_default_active_minus1 + 1.
    public var numRefIdxL0DefaultActive = 1
    /// num_ref_idx_l1_default_active_minus1 + 1.
    public var numRefIdxL1DefaultActive = 1
    public var weightedPred = false
    /// 0 default, 1 explicit, 2 implicit weighted bi-prediction.
    public var weightedBipredIdc = 0
    /// 26 + pic_init_qp_minus26.
    public var picInitQp = 26
    /// 26 + pic_init_qs_minus26.
    public var picInitQs = 26
    public var chromaQpIndexOffset = 0
    public var deblockingFilterControlPresent = true
    public var constrainedIntraPred = false
    public var redundantPicCntPresent = false
    public var highProfileExtension: HighProfileExtension?

    public init(picParameterSetId: Int = 0, seqParameterSetId: Int = 0, entropyCoding: EntropyCoding) {
        self.picParameterSetId = picParameterSetId
        self.seqParameterSetId = seqParameterSetId
        self.entropyCoding = entropyCoding
    }

    /// transform_8x8_mode_flag; false when the High profile fields are absent.
    public var transform8x8Mode: Bool { highProfileExtension?.transform8x8Mode ?? false }

    /// Parses a PPS NAL unit: its header byte, then the escaped RBSP (no start code).
    ///
    /// `chromaFormatIdc` is the referenced SPS's: a PPS with 8x8 transforms and its own
    /// scaling matrix carries 6 more lists for 4:4:4, and nothing in the PPS says so.
    public init(nalUnit: [UInt8], chromaFormatIdc: Int = 1) throws(BitstreamError) {
        try self.init(rbsp: payload(of: nalUnit, expecting: .pps), chromaFormatIdc: chromaFormatIdc)
    }

    /// Parses pic_parameter_set_rbsp() from RBSP bytes (no header, no emulation prevention).
    public init(rbsp: [UInt8], chromaFormatIdc: Int = 1) throws(BitstreamError) {
        var reader = BitReader(rbsp: rbsp, syntax: "PPS")
        picParameterSetId = try reader.ue("pic_parameter_set_id", in: 0...255)
        seqParameterSetId = try reader.ue("seq_parameter_set_id", in: 0...31)
        entropyCoding = try reader.flag("entropy_coding_mode_flag") ? .cabac : .cavlc
        bottomFieldPicOrderInFramePresent = try reader.flag("bottom_field_pic_order_in_frame_present_flag")
        let sliceGroups = try reader.ue("num_slice_groups_minus1", in: 0...7) + 1
        guard sliceGroups == 1 else {
            throw .unsupported(syntax: "PPS", feature: "\(sliceGroups) slice groups (flexible macroblock ordering)")
        }
        numRefIdxL0DefaultActive = try reader.ue("num_ref_idx_l0_default_active_minus1", in: 0...31) + 1
        numRefIdxL1DefaultActive = try reader.ue("num_ref_idx_l1_default_active_minus1", in: 0...31) + 1
        weightedPred = try reader.flag("weighted_pred_flag")
        weightedBipredIdc = try reader.u(2, "weighted_bipred_idc", in: 0...2)
        // The lower bound depends on the bit depth (−(26 + QpBdOffsetY)); 14-bit video
        // reaches −62.
        picInitQp = try reader.se("pic_init_qp_minus26", in: -62...25) + 26
        picInitQs = try reader.se("pic_init_qs_minus26", in: -26...25) + 26
        chromaQpIndexOffset = try reader.se("chroma_qp_index_offset", in: -12...12)
        deblockingFilterControlPresent = try reader.flag("deblocking_filter_control_present_flag")
        constrainedIntraPred = try reader.flag("constrained_intra_pred_flag")
        redundantPicCntPresent = try reader.flag("redundant_pic_cnt_present_flag")
        if reader.moreRBSPData() {
            let transform8x8 = try reader.flag("transform_8x8_mode_flag")
            var matrix: [ScalingList?]?
            if try reader.flag("pic_scaling_matrix_present_flag") {
                let count = 6 + (transform8x8 ? (chromaFormatIdc == 3 ? 6 : 2) : 0)
                matrix = try ScalingList.readMatrix(from: &reader, count: count)
            }
            highProfileExtension = HighProfileExtension(
                transform8x8Mode: transform8x8, scalingMatrix: matrix,
                secondChromaQpIndexOffset: try reader.se("second_chroma_qp_index_offset", in: -12...12))
        }
    }

    /// pic_parameter_set_rbsp() as RBSP bytes, ending in rbsp_trailing_bits.
    public func rbsp() -> [UInt8] {
        var writer = BitBuilder()
        writer.ue(picParameterSetId)
        writer.ue(seqParameterSetId)
        writer.flag(entropyCoding == .cabac)
        writer.flag(bottomFieldPicOrderInFramePresent)
        writer.ue(0)
        writer.ue(numRefIdxL0DefaultActive - 1)
        writer.ue(numRefIdxL1DefaultActive - 1)
        writer.flag(weightedPred)
        writer.u(weightedBipredIdc, bits: 2)
        writer.se(picInitQp - 26)
        writer.se(picInitQs - 26)
        writer.se(chromaQpIndexOffset)
        writer.flag(deblockingFilterControlPresent)
        writer.flag(constrainedIntraPred)
        writer.flag(redundantPicCntPresent)
        if let high = highProfileExtension {
            writer.flag(high.transform8x8Mode)
            writer.flag(high.scalingMatrix != nil)
            if let matrix = high.scalingMatrix { ScalingList.writeMatrix(matrix, to: &writer) }
            writer.se(high.secondChromaQpIndexOffset)
        }
        writer.rbspTrailingBits()
        return writer.bytes
    }

    /// The PPS as a NAL unit (header byte, escaped RBSP). nal_ref_idc is 3, as parameter sets
    /// conventionally carry.
    public func nalUnit(refIdc: UInt8 = 3) -> [UInt8] {
        NALUnitHeader(type: .pps, refIdc: refIdc).nalUnit(rbsp: rbsp())
    }
}

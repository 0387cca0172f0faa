/// slice_header() (clause 7.3.3) for the pictures an encoder that manages its own references
/// writes: frames only (no fields), one slice group, POC type 0, no reference list
/// modification and no memory management operations (sliding-window marking), no weighted
/// prediction. VA-API encoders are handed this header as a packed slice header; the hardware
/// appends the slice data.
public struct SliceHeader: Sendable, Equatable {
    /// slice_type (Table 7-6), the values 0–2 that say every slice of the picture has this type.
    public enum SliceType: Int, Sendable {
        case p = 0
        case b = 1
        case i = 2
    }

    /// How many entries of each reference list a slice uses.
    public struct ActiveReferences: Sendable, Equatable {
        public var l0: Int
        public var l1: Int

        public init(l0: Int, l1: Int) {
            self.l0 = l0
            self.l1 = l1
        }
    }

    public var firstMbInSlice = 0
    public var sliceType: SliceType
    public var picParameterSetId = 0
    public var frameNum: Int
    /// idr_pic_id: present only in IDR pictures.
    public var idrPicId: Int?
    /// pic_order_cnt_lsb: the picture order count modulo MaxPicOrderCntLsb.
    public var picOrderCntLsb: Int
    /// B slices: spatial (true) or temporal direct prediction.
    public var directSpatialMvPred = true
    /// num_ref_idx_l0/l1_active_minus1 + 1 when they differ from the PPS defaults (then
    /// num_ref_idx_active_override_flag is set); nil to use the defaults.
    public var activeReferences: ActiveReferences?
    /// The picture is a reference (nal_ref_idc ≠ 0): dec_ref_pic_marking() is present.
    public var isReference: Bool
    public var cabacInitIdc = 0
    /// SliceQPY − (26 + pic_init_qp_minus26).
    public var sliceQpDelta = 0
    public var disableDeblockingFilterIdc = 0
    public var sliceAlphaC0OffsetDiv2 = 0
    public var sliceBetaOffsetDiv2 = 0

    public init(sliceType: SliceType, frameNum: Int, idrPicId: Int?, picOrderCntLsb: Int, isReference: Bool) {
        self.sliceType = sliceType
        self.frameNum = frameNum
        self.idrPicId = idrPicId
        self.picOrderCntLsb = picOrderCntLsb
        self.isReference = isReference
    }

    /// The NAL header byte and the header's bits, without trailing bits: the slice data
    /// continues at `bitCount`, which need not be a byte boundary.
    public func write(sps: SequenceParameterSet, pps: PictureParameterSet) -> BitBuilder {
        guard case .type0(let log2MaxPicOrderCntLsb) = sps.pictureOrderCount else {
            preconditionFailure("slice headers are written for pic_order_cnt_type 0 only")
        }
        let isIDR = idrPicId != nil
        var w = BitBuilder(capacity: 16)
        let header = NALUnitHeader(type: isIDR ? .sliceIDR : .sliceNonIDR, refIdc: isReference ? 3 : 0)
        w.u(Int(header.byte), bits: 8)
        w.ue(firstMbInSlice)
        w.ue(sliceType.rawValue + 5)
        w.ue(picParameterSetId)
        w.u(frameNum, bits: sps.log2MaxFrameNum)
        if let idrPicId { w.ue(idrPicId) }
        w.u(picOrderCntLsb, bits: log2MaxPicOrderCntLsb)
        if pps.bottomFieldPicOrderInFramePresent { w.se(0) }
        if sliceType == .b { w.flag(directSpatialMvPred) }
        if sliceType != .i {
            let active = activeReferences
            w.flag(active != nil)
            if let active {
                w.ue(active.l0 - 1)
                if sliceType == .b { w.ue(active.l1 - 1) }
            }
            // ref_pic_list_modification(): the default lists.
            w.flag(false)
            if sliceType == .b { w.flag(false) }
        }
        if isReference {
            if isIDR {
                w.flag(false)   // no_output_of_prior_pics_flag
                w.flag(false)   // long_term_reference_flag
            } else {
                w.flag(false)   // adaptive_ref_pic_marking_mode_flag: sliding window
            }
        }
        if pps.entropyCoding == .cabac && sliceType != .i { w.ue(cabacInitIdc) }
        w.se(sliceQpDelta)
        if pps.deblockingFilterControlPresent {
            w.ue(disableDeblockingFilterIdc)
            if disableDeblockingFilterIdc != 1 {
                w.se(sliceAlphaC0OffsetDiv2)
                w.se(sliceBetaOffsetDiv2)
            }
        }
        return w
    }
}

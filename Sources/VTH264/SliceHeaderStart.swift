/// The fields every slice_header() (clause 7.3.3) starts with, up to idr_pic_id: what tells
/// pictures apart, and where idr_pic_id sits for rewriting it.
struct SliceHeaderStart {
    var firstMbInSlice: Int
    /// slice_type as coded: 0–4, or 5–9 when every slice of the picture has that type (% 5).
    var sliceType: Int
    var picParameterSetId: Int
    var frameNum: Int
    /// field_pic_flag: false where the SPS allows frames only.
    var fieldPic: Bool
    /// An IDR slice's idr_pic_id, and its bits in the RBSP.
    var idrPicId: (value: Int, bits: Range<Int>)?

    /// Reads them from the start of a slice's RBSP. `sps` finds the SPS of the PPS the slice
    /// names; it is returned with the fields.
    static func read(_ r: inout BitReader, isIDR: Bool,
                     sps: (Int) throws(BitstreamError) -> SequenceParameterSet)
        throws(BitstreamError) -> (start: SliceHeaderStart, sps: SequenceParameterSet) {
        let firstMb = Int(try r.ue("first_mb_in_slice"))
        let sliceType = Int(try r.ue("slice_type"))
        let ppsId = Int(try r.ue("pic_parameter_set_id"))
        let sps = try sps(ppsId)
        if sps.separateColourPlane { try r.skip(bits: 2, "colour_plane_id") }
        let frameNum = Int(try r.u(sps.log2MaxFrameNum, "frame_num"))
        var field = false
        if !sps.frameMbsOnly {
            field = try r.flag("field_pic_flag")
            if field { try r.skip(bits: 1, "bottom_field_flag") }
        }
        var idrPicId: (Int, Range<Int>)?
        if isIDR {
            let start = r.bitPosition
            let id = Int(try r.ue("idr_pic_id"))
            idrPicId = (id, start..<r.bitPosition)
        }
        return (SliceHeaderStart(firstMbInSlice: firstMb, sliceType: sliceType, picParameterSetId: ppsId,
                                 frameNum: frameNum, fieldPic: field, idrPicId: idrPicId), sps)
    }
}

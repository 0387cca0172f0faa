/// idr_pic_id (clause 7.4.3) of an IDR access unit, read and rewritten.
///
/// Two IDR access units in a row must differ in it, or a decoder takes the second for more
/// slices of the first (clause 7.4.1.2.4). An encoder alternates it between its own IDRs, but
/// one that starts where another stopped (x264's light encoder, `--realtime adaptive`) starts
/// again at 0: when the stopped one's last picture was an IDR with id 0, the next IDR's id is
/// rewritten. The slice data stays as it was: only the header's bits move, and with CABAC the
/// alignment bits before the byte-aligned slice data absorb the move.
public enum IDRPictureID {
    /// Where idr_pic_id sits in an IDR slice's RBSP, and where the slice header ends.
    struct Layout {
        var id: Int
        var idBits: Range<Int>
        var headerEnd: Int
    }

    /// The idr_pic_id of the first IDR slice of `accessUnit` (AVCC, `lengthSize`-byte
    /// lengths); nil when it has none.
    public static func read(in accessUnit: [UInt8], lengthSize: Int = 4, sps: SequenceParameterSet,
                            pps: PictureParameterSet) throws(BitstreamError) -> Int? {
        for range in try AVCC.nalUnitRanges(in: accessUnit, lengthSize: lengthSize) where accessUnit[range.lowerBound] & 0x1F == 5 {
            let rbsp = removeEmulationPrevention(accessUnit[(range.lowerBound + 1)..<range.upperBound])
            return try layout(rbsp, sps: sps, pps: pps).id
        }
        return nil
    }

    /// `accessUnit` with every IDR slice's idr_pic_id set to `id`; other NAL units as they were.
    public static func replacing(in accessUnit: [UInt8], with id: Int, lengthSize: Int = 4,
                                 sps: SequenceParameterSet, pps: PictureParameterSet) throws(BitstreamError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(accessUnit.count + 8)
        for range in try AVCC.nalUnitRanges(in: accessUnit, lengthSize: lengthSize) {
            var nal = Array(accessUnit[range])
            if nal[0] & 0x1F == 5 {
                let rbsp = removeEmulationPrevention(nal[1...])
                nal = [nal[0]] + addEmulationPrevention(try rewritten(rbsp, id: id, sps: sps, pps: pps))
            }
            for shift in stride(from: (lengthSize - 1) * 8, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: nal.count >> shift))
            }
            out += nal
        }
        return out
    }

    /// Reads an I or SI slice header (an IDR has no other) up to its end.
    static func layout(_ rbsp: [UInt8], sps: SequenceParameterSet, pps: PictureParameterSet) throws(BitstreamError) -> Layout {
        var r = BitReader(rbsp: rbsp, syntax: "IDR slice header")
        let (start, _) = try SliceHeaderStart.read(&r, isIDR: true) { _ throws(BitstreamError) in sps }
        let sliceType = start.sliceType % 5
        guard start.sliceType <= 9, sliceType == 2 || sliceType == 4, let (id, idBits) = start.idrPicId else {
            // (An IDR picture has only I or SI slices.)
            throw .valueOutOfRange(syntax: "IDR slice header", field: "slice_type % 5", value: sliceType, range: 2...2)
        }
        let field = start.fieldPic
        switch sps.pictureOrderCount {
        case let .type0(log2MaxPicOrderCntLsb):
            try r.skip(bits: log2MaxPicOrderCntLsb, "pic_order_cnt_lsb")
            if pps.bottomFieldPicOrderInFramePresent && !field { _ = try r.se("delta_pic_order_cnt_bottom") }
        case let .type1(deltaPicOrderAlwaysZero, _, _, _):
            if !deltaPicOrderAlwaysZero {
                _ = try r.se("delta_pic_order_cnt[0]")
                if pps.bottomFieldPicOrderInFramePresent && !field { _ = try r.se("delta_pic_order_cnt[1]") }
            }
        case .type2:
            break
        }
        if pps.redundantPicCntPresent { _ = try r.ue("redundant_pic_cnt") }
        // An I or SI slice has no reference lists or weights; an IDR (nal_ref_idc > 0) marks.
        _ = try r.flag("no_output_of_prior_pics_flag")
        _ = try r.flag("long_term_reference_flag")
        _ = try r.se("slice_qp_delta")
        if sliceType == 4 { _ = try r.se("slice_qs_delta") }
        if pps.deblockingFilterControlPresent {
            if try r.ue("disable_deblocking_filter_idc", in: 0...2) != 1 {
                _ = try r.se("slice_alpha_c0_offset_div2")
                _ = try r.se("slice_beta_offset_div2")
            }
        }
        return Layout(id: id, idBits: idBits, headerEnd: r.bitPosition)
    }

    static func rewritten(_ rbsp: [UInt8], id: Int, sps: SequenceParameterSet,
                          pps: PictureParameterSet) throws(BitstreamError) -> [UInt8] {
        let layout = try layout(rbsp, sps: sps, pps: pps)
        var w = BitBuilder(capacity: rbsp.count + 2)
        var r = BitReader(rbsp: rbsp, syntax: "IDR slice header")
        try copy(&r, to: &w, bits: layout.idBits.lowerBound)
        w.ue(id)
        try r.skip(bits: layout.idBits.count, "idr_pic_id")
        if pps.entropyCoding == .cabac {
            // cabac_alignment_one_bit up to the byte-aligned slice data, copied as it was.
            try copy(&r, to: &w, bits: layout.headerEnd - r.bitPosition)
            while !w.isByteAligned { w.flag(true) }
            return w.bytes + rbsp[((layout.headerEnd + 7) / 8)...]
        }
        // CAVLC: the slice data follows the header bit for bit, up to the stop bit.
        guard let last = rbsp.lastIndex(where: { $0 != 0 }) else {
            throw .valueOutOfRange(syntax: "IDR slice", field: "rbsp_stop_one_bit", value: 0, range: 1...1)
        }
        let stop = last * 8 + 7 - rbsp[last].trailingZeroBitCount
        try copy(&r, to: &w, bits: stop - r.bitPosition)
        w.rbspTrailingBits()
        return w.bytes
    }

    private static func copy(_ r: inout BitReader, to w: inout BitBuilder, bits: Int) throws(BitstreamError) {
        var left = bits
        while left > 0 {
            let n = min(32, left)
            w.u(try r.u(n, "slice"), bits: n)
            left -= n
        }
    }
}

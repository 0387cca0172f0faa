extension SequenceParameterSet {
    /// Parses an SPS NAL unit: its header byte, then the escaped RBSP (no start code).
    public init(nalUnit: [UInt8]) throws(BitstreamError) {
        let rbsp = try payload(of: nalUnit, expecting: .sps)
        try self.init(rbsp: rbsp)
    }

    /// Parses seq_parameter_set_rbsp() from RBSP bytes (no header, no emulation prevention).
    public init(rbsp: [UInt8]) throws(BitstreamError) {
        var reader = BitReader(rbsp: rbsp, syntax: "SPS")
        profileIdc = Int(try reader.u(8, "profile_idc"))
        constraintFlags = UInt8(try reader.u(8, "constraint_set_flags"))
        levelIdc = Int(try reader.u(8, "level_idc"))
        seqParameterSetId = try reader.ue("seq_parameter_set_id", in: 0...31)
        if Self.highProfileIdcs.contains(profileIdc) {
            chromaFormatIdc = try reader.ue("chroma_format_idc", in: 0...3)
            if chromaFormatIdc == 3 {
                separateColourPlane = try reader.flag("separate_colour_plane_flag")
            }
            bitDepthLuma = try reader.ue("bit_depth_luma_minus8", in: 0...6) + 8
            bitDepthChroma = try reader.ue("bit_depth_chroma_minus8", in: 0...6) + 8
            qpprimeYZeroTransformBypass = try reader.flag("qpprime_y_zero_transform_bypass_flag")
            if try reader.flag("seq_scaling_matrix_present_flag") {
                // Lists must be read, not skipped: they have no length field, and everything
                // after them is only found by parsing them.
                scalingMatrix = try ScalingList.readMatrix(from: &reader, count: chromaFormatIdc == 3 ? 12 : 8)
            }
        }
        log2MaxFrameNum = try reader.ue("log2_max_frame_num_minus4", in: 0...12) + 4
        switch try reader.ue("pic_order_cnt_type", in: 0...2) {
        case 0:
            pictureOrderCount = .type0(
                log2MaxPicOrderCntLsb: try reader.ue("log2_max_pic_order_cnt_lsb_minus4", in: 0...12) + 4)
        case 1:
            let alwaysZero = try reader.flag("delta_pic_order_always_zero_flag")
            let nonRef = Int(try reader.se("offset_for_non_ref_pic"))
            let topToBottom = Int(try reader.se("offset_for_top_to_bottom_field"))
            let cycle = try reader.ue("num_ref_frames_in_pic_order_cnt_cycle", in: 0...255)
            var offsets: [Int] = []
            for index in 0..<cycle {
                offsets.append(Int(try reader.se("offset_for_ref_frame[\(index)]")))
            }
            pictureOrderCount = .type1(deltaPicOrderAlwaysZero: alwaysZero, offsetForNonRefPic: nonRef,
                                       offsetForTopToBottomField: topToBottom, offsetForRefFrame: offsets)
        default:
            pictureOrderCount = .type2
        }
        maxNumRefFrames = try reader.ue("max_num_ref_frames", in: 0...16)
        gapsInFrameNumAllowed = try reader.flag("gaps_in_frame_num_value_allowed_flag")
        picWidthInMbs = Int(try reader.ue("pic_width_in_mbs_minus1")) + 1
        picHeightInMapUnits = Int(try reader.ue("pic_height_in_map_units_minus1")) + 1
        frameMbsOnly = try reader.flag("frame_mbs_only_flag")
        if !frameMbsOnly {
            mbAdaptiveFrameField = try reader.flag("mb_adaptive_frame_field_flag")
        }
        direct8x8Inference = try reader.flag("direct_8x8_inference_flag")
        if try reader.flag("frame_cropping_flag") {
            frameCropping = try readCropping(&reader)
        }
        if try reader.flag("vui_parameters_present_flag") {
            vui = try VideoUsabilityInformation.read(from: &reader)
        }
    }

    /// Reads the four crop offsets and checks that they leave at least one sample in each
    /// direction, so `width` and `height` are always positive.
    private func readCropping(_ reader: inout BitReader) throws(BitstreamError) -> FrameCropping {
        let columns = codedWidth / cropUnitX
        let rows = codedHeight / cropUnitY
        let left = try reader.ue("frame_crop_left_offset", in: 0...columns - 1)
        let right = try reader.ue("frame_crop_right_offset", in: 0...columns - 1 - left)
        let top = try reader.ue("frame_crop_top_offset", in: 0...rows - 1)
        let bottom = try reader.ue("frame_crop_bottom_offset", in: 0...rows - 1 - top)
        return FrameCropping(left: left, right: right, top: top, bottom: bottom)
    }

    /// seq_parameter_set_rbsp() as RBSP bytes, ending in rbsp_trailing_bits.
    ///
    /// Fields must hold values the syntax can code (what the parser accepts); the SPS is
    /// built by the program, so a value out of range stops it.
    public func rbsp() -> [UInt8] {
        var writer = BitBuilder()
        writer.u(profileIdc, bits: 8)
        writer.u(UInt32(constraintFlags), bits: 8)
        writer.u(levelIdc, bits: 8)
        writer.ue(seqParameterSetId)
        if Self.highProfileIdcs.contains(profileIdc) {
            writer.ue(chromaFormatIdc)
            if chromaFormatIdc == 3 { writer.flag(separateColourPlane) }
            writer.ue(bitDepthLuma - 8)
            writer.ue(bitDepthChroma - 8)
            writer.flag(qpprimeYZeroTransformBypass)
            writer.flag(scalingMatrix != nil)
            if let scalingMatrix { ScalingList.writeMatrix(scalingMatrix, to: &writer) }
        }
        writer.ue(log2MaxFrameNum - 4)
        writer.ue(pictureOrderCount.type)
        switch pictureOrderCount {
        case .type0(let log2MaxPicOrderCntLsb):
            writer.ue(log2MaxPicOrderCntLsb - 4)
        case .type1(let alwaysZero, let nonRef, let topToBottom, let offsets):
            writer.flag(alwaysZero)
            writer.se(nonRef)
            writer.se(topToBottom)
            writer.ue(offsets.count)
            for offset in offsets { writer.se(offset) }
        case .type2:
            break
        }
        writer.ue(maxNumRefFrames)
        writer.flag(gapsInFrameNumAllowed)
        writer.ue(picWidthInMbs - 1)
        writer.ue(picHeightInMapUnits - 1)
        writer.flag(frameMbsOnly)
        if !frameMbsOnly { writer.flag(mbAdaptiveFrameField) }
        writer.flag(direct8x8Inference)
        writer.flag(frameCropping != nil)
        if let crop = frameCropping {
            writer.ue(crop.left)
            writer.ue(crop.right)
            writer.ue(crop.top)
            writer.ue(crop.bottom)
        }
        writer.flag(vui != nil)
        vui?.write(to: &writer)
        writer.rbspTrailingBits()
        return writer.bytes
    }

    /// The SPS as a NAL unit (header byte, escaped RBSP), ready for avcC or a start code.
    /// nal_ref_idc is 3, as parameter sets conventionally carry.
    public func nalUnit(refIdc: UInt8 = 3) -> [UInt8] {
        NALUnitHeader(type: .sps, refIdc: refIdc).nalUnit(rbsp: rbsp())
    }
}

/// The RBSP of a NAL unit after checking its type: header byte dropped, emulation prevention
/// removed.
func payload(of nalUnit: [UInt8], expecting type: NALUnitType) throws(BitstreamError) -> [UInt8] {
    guard let header = nalUnit.first else { throw .emptyNALUnit(expected: type) }
    let found = NALUnitType(headerByte: header)
    guard found == type else { throw .unexpectedNALUnitType(expected: type, found: found) }
    return removeEmulationPrevention(nalUnit[1...])
}

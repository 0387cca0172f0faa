import CVAAPI
import VTCore
import VTH264
import VTVAAPI

/// The buffers each picture is handed to the driver with: sequence, picture and slice
/// parameters, packed headers, and the misc parameters of rate control. Every value comes from
/// the plan, the planner's picture and the same SPS/PPS the packed headers are written from.
extension VAAPISession {
    func parameterBuffers(for picture: PlannedPicture, coded: VABufferID) throws(VAAPIFailure) -> [VABufferID] {
        var buffers: [VABufferID] = []
        do {
            if picture.kind == .idr {
                var sequence = sequenceParameters()
                buffers.append(try makeBuffer(VAEncSequenceParameterBufferType, &sequence))
                buffers += try miscParameterBuffers()
                qualityLevelSent = qualityLevel
            } else if qualityLevel != qualityLevelSent, let level = qualityLevel {
                // A change of speed (`--realtime adaptive`) goes with the next picture.
                buffers.append(try qualityLevelBuffer(level))
                qualityLevelSent = level
            }
            var pictureParameters = pictureParameters(picture, coded: coded)
            buffers.append(try makeBuffer(VAEncPictureParameterBufferType, &pictureParameters))
            if picture.kind == .idr && plan.packedHeaders & UInt32(VA_ENC_PACKED_HEADER_SEQUENCE) != 0 {
                // SPS and PPS together, as one sequence header (what drivers expect).
                let bytes = AnnexB.startCode + headers.sps.nalUnit() + AnnexB.startCode + headers.pps.nalUnit()
                buffers += try packedHeader(VAEncPackedHeaderSequence, bytes: bytes, bitLength: bytes.count * 8)
            }
            let sliceHeader = headers.sliceHeader(for: picture)
            if plan.packedHeaders & UInt32(VA_ENC_PACKED_HEADER_SLICE) != 0 {
                let bits = sliceHeader.write(sps: headers.sps, pps: headers.pps)
                // Emulation prevention over the whole bytes written, as ffmpeg does; the driver
                // continues the slice data at the bit after the header.
                let padding = bits.bytes.count * 8 - bits.bitCount
                let escaped = AnnexB.startCode + [bits.bytes[0]] + addEmulationPrevention(Array(bits.bytes.dropFirst()))
                buffers += try packedHeader(VAEncPackedHeaderSlice, bytes: escaped, bitLength: escaped.count * 8 - padding)
            }
            var slice = sliceParameters(picture, header: sliceHeader)
            buffers.append(try makeBuffer(VAEncSliceParameterBufferType, &slice))
            return buffers
        } catch {
            for id in buffers { _ = vaDestroyBuffer(display, id) }
            throw error
        }
    }

    func makeBuffer<T>(_ type: VABufferType, _ value: inout T) throws(VAAPIFailure) -> VABufferID {
        var id = VABufferID(VA_INVALID_ID)
        let status = withUnsafeMutableBytes(of: &value) { raw in
            vaCreateBuffer(display, context, type, UInt32(raw.count), 1, raw.baseAddress, &id)
        }
        try vaCheck(status, "vaCreateBuffer(\(Self.name(of: type)))")
        return id
    }

    func makeBuffer(_ type: VABufferType, bytes: [UInt8]) throws(VAAPIFailure) -> VABufferID {
        var id = VABufferID(VA_INVALID_ID)
        var copy = bytes
        try vaCheck(vaCreateBuffer(display, context, type, UInt32(copy.count), 1, &copy, &id),
                    "vaCreateBuffer(\(Self.name(of: type)))")
        return id
    }

    func packedHeader(_ type: VAEncPackedHeaderType, bytes: [UInt8], bitLength: Int) throws(VAAPIFailure) -> [VABufferID] {
        var parameters = VAEncPackedHeaderParameterBuffer()
        parameters.type = type.rawValue
        parameters.bit_length = UInt32(bitLength)
        parameters.has_emulation_bytes = 1
        let first = try makeBuffer(VAEncPackedHeaderParameterBufferType, &parameters)
        do {
            return [first, try makeBuffer(VAEncPackedHeaderDataBufferType, bytes: bytes)]
        } catch {
            _ = vaDestroyBuffer(display, first)
            throw error
        }
    }

    /// A misc parameter buffer: the VAEncMiscParameterBuffer header (its type) followed by the
    /// parameter structure.
    func miscBuffer<T>(_ type: VAEncMiscParameterType, _ value: T) throws(VAAPIFailure) -> VABufferID {
        let headerSize = MemoryLayout<VAEncMiscParameterBuffer>.size
        var bytes = [UInt8](repeating: 0, count: headerSize + MemoryLayout<T>.size)
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: type.rawValue, toByteOffset: 0, as: UInt32.self)
            withUnsafeBytes(of: value) { source in
                raw.baseAddress!.advanced(by: headerSize).copyMemory(from: source.baseAddress!, byteCount: source.count)
            }
        }
        return try makeBuffer(VAEncMiscParameterBufferType, bytes: bytes)
    }

    /// Rate control, HRD, frame rate and quality level: sent with every IDR, as ffmpeg does.
    /// The values follow ffmpeg's h264_vaapi for the same options, so a driver sees the same
    /// thing from either program.
    func miscParameterBuffers() throws(VAAPIFailure) -> [VABufferID] {
        var buffers: [VABufferID] = []
        do {
            switch plan.rateControl {
            case .cbr, .vbr:
                let peak = UInt64(plan.peakBitRate)
                let target = UInt64(plan.targetBitRate)
                let bufferBits = UInt64(plan.bufferBits)
                var rc = VAEncMiscParameterRateControl()
                rc.bits_per_second = UInt32(clamping: peak)
                rc.target_percentage = plan.rateControl == .cbr ? 100 : UInt32(target * 100 / max(peak, 1))
                rc.window_size = UInt32(clamping: bufferBits * 1000 / max(peak, 1))
                buffers.append(try miscBuffer(VAEncMiscParameterTypeRateControl, rc))
                var hrd = VAEncMiscParameterHRD()
                hrd.buffer_size = UInt32(clamping: bufferBits)
                hrd.initial_buffer_fullness = UInt32(clamping: bufferBits * 3 / 4)
                buffers.append(try miscBuffer(VAEncMiscParameterTypeHRD, hrd))
            case .icq:
                var rc = VAEncMiscParameterRateControl()
                rc.ICQ_quality_factor = UInt32(plan.quality)
                buffers.append(try miscBuffer(VAEncMiscParameterTypeRateControl, rc))
            case .cqp:
                break
            }
            var rate = VAEncMiscParameterFrameRate()
            // Numerator and denominator get 16 bits each.
            let fitting = settings.frameRate.approximated(limit: 0xFFFF)
            rate.framerate = UInt32(fitting.denominator) << 16 | UInt32(fitting.numerator)
            buffers.append(try miscBuffer(VAEncMiscParameterTypeFrameRate, rate))
            if let level = qualityLevel {
                buffers.append(try qualityLevelBuffer(level))
            }
            return buffers
        } catch {
            for id in buffers { _ = vaDestroyBuffer(display, id) }
            throw error
        }
    }

    private func qualityLevelBuffer(_ level: Int) throws(VAAPIFailure) -> VABufferID {
        var quality = VAEncMiscParameterBufferQualityLevel()
        quality.quality_level = UInt32(level)
        return try miscBuffer(VAEncMiscParameterTypeQualityLevel, quality)
    }

    func sequenceParameters() -> VAEncSequenceParameterBufferH264 {
        let sps = headers.sps
        var s = VAEncSequenceParameterBufferH264()
        s.seq_parameter_set_id = UInt8(sps.seqParameterSetId)
        s.level_idc = UInt8(sps.levelIdc)
        s.intra_period = UInt32(keyInterval)
        s.intra_idr_period = UInt32(keyInterval)
        s.ip_period = UInt32(plan.bFrames + 1)
        s.bits_per_second = plan.rateControl == .cbr || plan.rateControl == .vbr ? UInt32(clamping: plan.peakBitRate) : 0
        s.max_num_ref_frames = UInt32(sps.maxNumRefFrames)
        s.picture_width_in_mbs = UInt16(sps.picWidthInMbs)
        s.picture_height_in_mbs = UInt16(sps.picHeightInMapUnits)
        s.seq_fields.bits.chroma_format_idc = 1
        s.seq_fields.bits.frame_mbs_only_flag = 1
        s.seq_fields.bits.direct_8x8_inference_flag = 1
        s.seq_fields.bits.log2_max_frame_num_minus4 = UInt32(sps.log2MaxFrameNum - 4)
        if case .type0(let log2MaxPocLsb) = sps.pictureOrderCount {
            s.seq_fields.bits.pic_order_cnt_type = 0
            s.seq_fields.bits.log2_max_pic_order_cnt_lsb_minus4 = UInt32(log2MaxPocLsb - 4)
        }
        if let crop = sps.frameCropping {
            s.frame_cropping_flag = 1
            s.frame_crop_left_offset = UInt32(crop.left)
            s.frame_crop_right_offset = UInt32(crop.right)
            s.frame_crop_top_offset = UInt32(crop.top)
            s.frame_crop_bottom_offset = UInt32(crop.bottom)
        }
        if let vui = sps.vui {
            s.vui_parameters_present_flag = 1
            if let idc = vui.aspectRatioIdc {
                s.vui_fields.bits.aspect_ratio_info_present_flag = 1
                s.aspect_ratio_idc = UInt8(idc)
                if let sar = vui.extendedSampleAspectRatio {
                    s.sar_width = UInt32(sar.width)
                    s.sar_height = UInt32(sar.height)
                }
            }
            if let timing = vui.timing {
                s.vui_fields.bits.timing_info_present_flag = 1
                s.num_units_in_tick = timing.numUnitsInTick
                s.time_scale = timing.timeScale
                s.vui_fields.bits.fixed_frame_rate_flag = timing.fixedFrameRate ? 1 : 0
            }
            if let restriction = vui.bitstreamRestriction {
                s.vui_fields.bits.bitstream_restriction_flag = 1
                s.vui_fields.bits.motion_vectors_over_pic_boundaries_flag = restriction.motionVectorsOverPicBoundaries ? 1 : 0
                s.vui_fields.bits.log2_max_mv_length_horizontal = UInt32(restriction.log2MaxMvLengthHorizontal)
                s.vui_fields.bits.log2_max_mv_length_vertical = UInt32(restriction.log2MaxMvLengthVertical)
            }
        }
        return s
    }

    func vaPicture(_ reference: ReferencePicture) -> VAPictureH264 {
        VAPictureH264(picture_id: referenceSurfaces[reference.slot], frame_idx: UInt32(reference.frameNum),
                      flags: UInt32(VA_PICTURE_H264_SHORT_TERM_REFERENCE),
                      TopFieldOrderCnt: Int32(reference.pictureOrderCount),
                      BottomFieldOrderCnt: Int32(reference.pictureOrderCount), va_reserved: (0, 0, 0, 0))
    }

    static let invalidPicture = VAPictureH264(
        picture_id: VASurfaceID(VA_INVALID_SURFACE), frame_idx: 0, flags: UInt32(VA_PICTURE_H264_INVALID),
        TopFieldOrderCnt: 0, BottomFieldOrderCnt: 0, va_reserved: (0, 0, 0, 0))

    /// Fills a C array of pictures (a tuple in Swift) with `pictures`, the rest invalid.
    func fill<Tuple>(_ tuple: inout Tuple, with pictures: [VAPictureH264]) {
        withUnsafeMutableBytes(of: &tuple) { raw in
            let slots = raw.bindMemory(to: VAPictureH264.self)
            for i in slots.indices { slots[i] = i < pictures.count ? pictures[i] : Self.invalidPicture }
        }
    }

    func pictureParameters(_ picture: PlannedPicture, coded: VABufferID) -> VAEncPictureParameterBufferH264 {
        let pps = headers.pps
        var p = VAEncPictureParameterBufferH264()
        p.CurrPic = VAPictureH264(picture_id: referenceSurfaces[picture.slot], frame_idx: UInt32(picture.frameNum),
                                  flags: 0, TopFieldOrderCnt: Int32(picture.pictureOrderCount),
                                  BottomFieldOrderCnt: Int32(picture.pictureOrderCount), va_reserved: (0, 0, 0, 0))
        fill(&p.ReferenceFrames, with: picture.references.map(vaPicture))
        p.coded_buf = coded
        p.pic_parameter_set_id = UInt8(pps.picParameterSetId)
        p.seq_parameter_set_id = UInt8(pps.seqParameterSetId)
        p.frame_num = UInt16(picture.frameNum)
        p.pic_init_qp = UInt8(pps.picInitQp)
        p.num_ref_idx_l0_active_minus1 = UInt8(pps.numRefIdxL0DefaultActive - 1)
        p.num_ref_idx_l1_active_minus1 = UInt8(pps.numRefIdxL1DefaultActive - 1)
        p.chroma_qp_index_offset = Int8(pps.chromaQpIndexOffset)
        p.second_chroma_qp_index_offset = Int8(pps.highProfileExtension?.secondChromaQpIndexOffset ?? pps.chromaQpIndexOffset)
        p.pic_fields.bits.idr_pic_flag = picture.kind == .idr ? 1 : 0
        p.pic_fields.bits.reference_pic_flag = picture.isReference ? 1 : 0
        p.pic_fields.bits.entropy_coding_mode_flag = pps.entropyCoding == .cabac ? 1 : 0
        p.pic_fields.bits.transform_8x8_mode_flag = pps.transform8x8Mode ? 1 : 0
        p.pic_fields.bits.deblocking_filter_control_present_flag = pps.deblockingFilterControlPresent ? 1 : 0
        return p
    }

    func sliceParameters(_ picture: PlannedPicture, header: SliceHeader) -> VAEncSliceParameterBufferH264 {
        var s = VAEncSliceParameterBufferH264()
        s.macroblock_address = 0
        s.num_macroblocks = UInt32(headers.sps.picWidthInMbs * headers.sps.picHeightInMapUnits)
        s.macroblock_info = VABufferID(VA_INVALID_ID)
        s.slice_type = UInt8(header.sliceType.rawValue)
        s.pic_parameter_set_id = UInt8(header.picParameterSetId)
        s.idr_pic_id = UInt16(header.idrPicId ?? 0)
        s.pic_order_cnt_lsb = UInt16(header.picOrderCntLsb)
        s.direct_spatial_mv_pred_flag = header.directSpatialMvPred ? 1 : 0
        s.num_ref_idx_active_override_flag = header.activeReferences != nil ? 1 : 0
        s.num_ref_idx_l0_active_minus1 = UInt8((header.activeReferences?.l0 ?? headers.pps.numRefIdxL0DefaultActive) - 1)
        s.num_ref_idx_l1_active_minus1 = UInt8((header.activeReferences?.l1 ?? headers.pps.numRefIdxL1DefaultActive) - 1)
        fill(&s.RefPicList0, with: picture.list0.map(vaPicture))
        fill(&s.RefPicList1, with: picture.list1.map(vaPicture))
        s.cabac_init_idc = UInt8(header.cabacInitIdc)
        s.slice_qp_delta = Int8(header.sliceQpDelta)
        s.disable_deblocking_filter_idc = UInt8(header.disableDeblockingFilterIdc)
        s.slice_alpha_c0_offset_div2 = Int8(header.sliceAlphaC0OffsetDiv2)
        s.slice_beta_offset_div2 = Int8(header.sliceBetaOffsetDiv2)
        return s
    }

    /// A buffer type as error messages name it.
    static func name(of type: VABufferType) -> String {
        switch type {
        case VAEncSequenceParameterBufferType: "sequence parameters"
        case VAEncPictureParameterBufferType: "picture parameters"
        case VAEncSliceParameterBufferType: "slice parameters"
        case VAEncPackedHeaderParameterBufferType: "packed header parameters"
        case VAEncPackedHeaderDataBufferType: "packed header data"
        case VAEncMiscParameterBufferType: "misc parameters"
        case VAEncCodedBufferType: "coded buffer"
        default: "buffer type \(type.rawValue)"
        }
    }
}

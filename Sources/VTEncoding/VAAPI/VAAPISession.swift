import CVAAPI
import CYUV
import Foundation
import Logging
import VTCore
import VTH264

/// The hardware encoder: H.264 through VA-API behind the `CompressionSession` contract.
///
/// VA-API leaves every decision of the bitstream to the client: picture types and order
/// (`H264ReferencePlanner`), the parameter sets and slice headers (`VAAPIHeaders`, written as
/// packed headers when the driver takes them), reference lists and rate control. The driver
/// codes the slice data into a coded buffer as Annex B, which this session turns into AVCC
/// access units and parameter sets like any other session.
///
/// Pictures are submitted as soon as they can be coded and collected `pipelineDepth` pictures
/// later, so the hardware works on one picture while the next is uploaded.
public final class VAAPISession: CompressionSession {
    public let encoderName = "vaapi"
    public private(set) var formatDescription: FormatDescription
    public private(set) var resolvedSettings: EncoderSettings
    public let plan: VAAPIPlan

    private let width: Int
    private let height: Int
    private let pixelFormat: PixelFormat
    private let settings: EncoderSettings
    private let output: EncodedFrameHandler
    private let logger: Logger
    private var planner: H264ReferencePlanner
    private var headers: VAAPIHeaders

    private var device: VADevice?
    private var config = VAConfigID(VA_INVALID_ID)
    private var context = VAContextID(VA_INVALID_ID)
    private var inputSurfaces: [VASurfaceID] = []
    private var freeInputs: [Int] = []
    private var referenceSurfaces: [VASurfaceID] = []
    private var codedBuffers: [VABufferID] = []
    private var freeCoded: [Int] = []
    /// The image pictures are written into when the driver cannot map its surfaces
    /// (vaDeriveImage fails, as on many AMD drivers): written, then copied with vaPutImage.
    private var uploadImage: VAImage?
    private var deriveWorks = true
    private var codedBufferSize = 0

    /// Uploaded frames waiting for the planner, by display index.
    private var waiting: [Int: Int] = [:]
    private var nextDisplayIndex = 0
    private var inFlight: [Submitted] = []
    /// Presentation times in arrival order, not yet used as decode times. The k-th picture out
    /// (decode order) decodes at the k-th arrival time, or with B-frames at the (k−1)-th (the
    /// first one frame early): a picture coded at position k shows at display index k−1 or
    /// later, so decode times never pass presentation times, even when frames arrive unevenly.
    private var arrivalTimes: [MediaTime] = []
    private var picturesDelivered = 0
    private var presentationTimes: [Int: MediaTime] = [:]
    private var framesIn = 0
    private var pipelineDepth = 2

    private struct Submitted {
        var picture: PlannedPicture
        var input: Int
        var coded: Int
    }

    /// The session for `plan` (from `VAAPIPlan(capabilities:settings:)`); nothing is opened
    /// until `prepare()`.
    public init(plan: VAAPIPlan, width: Int, height: Int, pixelFormat: PixelFormat, settings: EncoderSettings,
                logger: Logger = Logger(label: "vtrecord.vaapi"),
                output: @escaping EncodedFrameHandler) throws(UsageError) {
        try settings.validate()
        guard width % 2 == 0, height % 2 == 0 else {
            throw UsageError("VA-API encodes 4:2:0 pictures of even size, not \(width)x\(height)")
        }
        self.plan = plan
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.settings = settings
        self.output = output
        self.logger = logger
        let planner = H264ReferencePlanner(keyInterval: settings.keyFrameInterval.frames(at: settings.frameRate),
                                           bFrames: plan.bFrames)
        self.planner = planner
        let headers = VAAPIHeaders(plan: plan, settings: settings, width: width, height: height, planner: planner)
        self.headers = headers
        self.formatDescription = FormatDescription(width: width, height: height,
                                                   sequenceParameterSets: [], pictureParameterSets: [])
        var resolved = settings
        resolved.profile = plan.profile
        resolved.entropy = plan.entropy
        resolved.bFrames = plan.bFrames
        resolved.keyFrameInterval = .frames(planner.keyInterval)
        resolved.level = H264Level.all.first { $0.idc == headers.sps.levelIdc }?.name
        resolved.threads = nil
        switch plan.rateControl {
        case .cqp:
            resolved.rateControl = .cqp
            resolved.qp = plan.qp
            resolved.crf = nil
        case .icq:
            resolved.rateControl = .crf
            resolved.crf = Double(plan.quality)
        case .cbr:
            resolved.rateControl = .cbr
            resolved.maxBitRate = settings.bitRate
            resolved.bufferSize = settings.effectiveBufferSize
        case .vbr:
            resolved.rateControl = .vbr
            resolved.maxBitRate = settings.maxBitRate ?? settings.bitRate
            resolved.bufferSize = settings.bufferSize ?? (settings.maxBitRate ?? settings.bitRate ?? 0) / 8
        }
        self.resolvedSettings = resolved
    }

    deinit { invalidate() }

    private var display: VADisplay { device!.display }
    private var alignedWidth: Int { (width + 15) & ~15 }
    private var alignedHeight: Int { (height + 15) & ~15 }
    private var peakBitRate: Int64 { settings.effectiveMaxBitRate ?? settings.bitRate ?? 0 }
    private var bufferBytes: Int64 { settings.bufferSize ?? peakBitRate / 8 }

    public func prepare() throws(EncoderError) {
        do {
            try open()
        } catch let error as VADevice.OpenError {
            throw .openFailed(encoder: "vaapi", reason: error.description)
        } catch {
            throw .openFailed(encoder: "vaapi", reason: "\(error)")
        }
        formatDescription = FormatDescription(width: width, height: height,
                                              sequenceParameterSets: [headers.sps.nalUnit()],
                                              pictureParameterSets: [headers.pps.nalUnit()])
    }

    private func open() throws {
        let device = try VADevice(path: plan.device)
        self.device = device
        var attributes = [
            VAConfigAttrib(type: VAConfigAttribRTFormat, value: UInt32(VA_RT_FORMAT_YUV420)),
            VAConfigAttrib(type: VAConfigAttribRateControl, value: plan.rateControl.vaBit),
        ]
        if plan.packedHeaders != 0 {
            attributes.append(VAConfigAttrib(type: VAConfigAttribEncPackedHeaders, value: plan.packedHeaders))
        }
        try vaCheck(vaCreateConfig(display, plan.profile.vaProfile, plan.entrypoint.vaEntrypoint,
                                   &attributes, Int32(attributes.count), &config), "vaCreateConfig")

        let inputCount = plan.bFrames + pipelineDepth + 2
        inputSurfaces = try makeSurfaces(inputCount)
        freeInputs = Array(inputSurfaces.indices)
        referenceSurfaces = try makeSurfaces(planner.slotCount)
        try vaCheck(vaCreateContext(display, config, Int32(alignedWidth), Int32(alignedHeight), VA_PROGRESSIVE,
                                    &referenceSurfaces, Int32(referenceSurfaces.count), &context), "vaCreateContext")

        // The worst case the standard allows for a picture (384 bytes of raw samples a
        // macroblock, plus headers), so a coded buffer never overflows.
        codedBufferSize = (alignedWidth / 16) * (alignedHeight / 16) * 400 + 64 * 1024
        for _ in 0..<(pipelineDepth + 1) {
            var id = VABufferID(VA_INVALID_ID)
            try vaCheck(vaCreateBuffer(display, context, VAEncCodedBufferType, UInt32(codedBufferSize), 1, nil, &id),
                        "vaCreateBuffer(coded)")
            codedBuffers.append(id)
        }
        freeCoded = Array(codedBuffers.indices)
    }

    private func makeSurfaces(_ count: Int) throws -> [VASurfaceID] {
        var surfaces = [VASurfaceID](repeating: VASurfaceID(VA_INVALID_SURFACE), count: count)
        var attribute = VASurfaceAttrib()
        attribute.type = VASurfaceAttribPixelFormat
        attribute.flags = UInt32(VA_SURFACE_ATTRIB_SETTABLE)
        attribute.value.type = VAGenericValueTypeInteger
        attribute.value.value.i = Int32(bitPattern: Self.fourccNV12)
        try vaCheck(vaCreateSurfaces(display, UInt32(VA_RT_FORMAT_YUV420), UInt32(alignedWidth), UInt32(alignedHeight),
                                     &surfaces, UInt32(count), &attribute, 1), "vaCreateSurfaces")
        return surfaces
    }

    static let fourccNV12: UInt32 = 0x3231_564E  // 'N' 'V' '1' '2'

    public func encode(_ buffer: PixelBuffer, pts: MediaTime, forceKeyFrame: Bool) throws {
        guard device != nil else { preconditionFailure("encode before prepare") }
        guard buffer.width == width, buffer.height == height else {
            throw EncoderError.unsupportedPixelFormat(encoder: "vaapi", format: buffer.format)
        }
        framesIn += 1
        while freeInputs.isEmpty { try collectOldest() }
        let input = freeInputs.removeFirst()
        do {
            try upload(buffer, to: inputSurfaces[input])
        } catch {
            freeInputs.append(input)
            throw error
        }
        let index = nextDisplayIndex
        nextDisplayIndex += 1
        waiting[index] = input
        presentationTimes[index] = pts
        arrivalTimes.append(pts)
        for picture in planner.push(forceKeyFrame: forceKeyFrame) {
            try submit(picture)
        }
    }

    public func completeFrames() throws {
        guard device != nil else { return }
        for picture in planner.flush() {
            try submit(picture)
        }
        while !inFlight.isEmpty { try collectOldest() }
    }

    public func invalidate() {
        guard let device else { return }
        let display = device.display
        for id in codedBuffers { _ = vaDestroyBuffer(display, id) }
        codedBuffers = []
        if let image = uploadImage { _ = vaDestroyImage(display, image.image_id) }
        uploadImage = nil
        if context != VA_INVALID_ID { _ = vaDestroyContext(display, context) }
        let surfaces = inputSurfaces + referenceSurfaces
        if !surfaces.isEmpty {
            var ids = surfaces
            _ = vaDestroySurfaces(display, &ids, Int32(ids.count))
        }
        inputSurfaces = []
        referenceSurfaces = []
        if config != VA_INVALID_ID { _ = vaDestroyConfig(display, config) }
        context = VAContextID(VA_INVALID_ID)
        config = VAConfigID(VA_INVALID_ID)
        self.device = nil
    }

    // MARK: Upload

    private func upload(_ buffer: PixelBuffer, to surface: VASurfaceID) throws {
        if deriveWorks {
            var image = VAImage()
            let status = vaDeriveImage(display, surface, &image)
            if status == VA_STATUS_SUCCESS && image.format.fourcc == Self.fourccNV12 {
                defer { _ = vaDestroyImage(display, image.image_id) }
                try write(buffer, into: image)
                return
            }
            if status == VA_STATUS_SUCCESS { _ = vaDestroyImage(display, image.image_id) }
            // Many drivers cannot map their surfaces; write into an image and copy it over.
            deriveWorks = false
            logger.debug("vaDeriveImage unavailable (\(String(cString: vaErrorStr(status)))): uploading with vaPutImage")
        }
        let image = try uploadImageForPut()
        try write(buffer, into: image)
        try vaCheck(vaPutImage(display, surface, image.image_id, 0, 0, UInt32(width), UInt32(height),
                               0, 0, UInt32(width), UInt32(height)), "vaPutImage")
    }

    private func uploadImageForPut() throws -> VAImage {
        if let uploadImage { return uploadImage }
        var count = vaMaxNumImageFormats(display)
        var formats = [VAImageFormat](repeating: VAImageFormat(), count: Int(max(count, 1)))
        try vaCheck(vaQueryImageFormats(display, &formats, &count), "vaQueryImageFormats")
        guard var format = formats.prefix(Int(count)).first(where: { $0.fourcc == Self.fourccNV12 }) else {
            throw EncoderError.openFailed(encoder: "vaapi", reason: "\(plan.device) can neither map its surfaces nor take NV12 images")
        }
        var image = VAImage()
        try vaCheck(vaCreateImage(display, &format, Int32(width), Int32(height), &image), "vaCreateImage")
        uploadImage = image
        return image
    }

    /// Copies the picture into a mapped NV12 image, honouring the image's pitches and plane
    /// offsets; I420 and YUYV are converted on the way.
    private func write(_ buffer: PixelBuffer, into image: VAImage) throws {
        var mapped: UnsafeMutableRawPointer?
        try vaCheck(vaMapBuffer(display, image.buf, &mapped), "vaMapBuffer(image)")
        defer { _ = vaUnmapBuffer(display, image.buf) }
        guard let base = mapped?.assumingMemoryBound(to: UInt8.self) else {
            throw VAAPICallError(call: "vaMapBuffer(image)", status: VA_STATUS_ERROR_INVALID_BUFFER)
        }
        let y = base + Int(image.offsets.0)
        let uv = base + Int(image.offsets.1)
        let yPitch = Int32(image.pitches.0)
        let uvPitch = Int32(image.pitches.1)
        let planes = buffer.planes
        let w = Int32(width)
        let h = Int32(height)
        let status: Int32
        switch buffer.format {
        case .nv12:
            CopyPlane(planes[0].baseAddress, Int32(planes[0].bytesPerRow), y, yPitch, w, h)
            CopyPlane(planes[1].baseAddress, Int32(planes[1].bytesPerRow), uv, uvPitch, w, h / 2)
            status = 0
        case .i420:
            status = I420ToNV12(planes[0].baseAddress, Int32(planes[0].bytesPerRow),
                                planes[1].baseAddress, Int32(planes[1].bytesPerRow),
                                planes[2].baseAddress, Int32(planes[2].bytesPerRow),
                                y, yPitch, uv, uvPitch, w, h)
        case .yuyv:
            status = YUY2ToNV12(planes[0].baseAddress, Int32(planes[0].bytesPerRow), y, yPitch, uv, uvPitch, w, h)
        }
        guard status == 0 else { throw EncoderError.unsupportedPixelFormat(encoder: "vaapi", format: buffer.format) }
    }

    // MARK: Submitting pictures

    private func submit(_ picture: PlannedPicture) throws {
        guard let input = waiting.removeValue(forKey: picture.displayIndex) else {
            preconditionFailure("picture \(picture.displayIndex) planned before it arrived")
        }
        while freeCoded.isEmpty { try collectOldest() }
        let coded = freeCoded.removeFirst()
        var buffers: [VABufferID] = []
        defer { for id in buffers { _ = vaDestroyBuffer(display, id) } }
        do {
            buffers = try parameterBuffers(for: picture, coded: codedBuffers[coded])
            try vaCheck(vaBeginPicture(display, context, inputSurfaces[input]), "vaBeginPicture")
            try vaCheck(vaRenderPicture(display, context, &buffers, Int32(buffers.count)), "vaRenderPicture")
            try vaCheck(vaEndPicture(display, context), "vaEndPicture")
        } catch {
            freeCoded.append(coded)
            freeInputs.append(input)
            throw EncoderError.encodeFailed(encoder: "vaapi", frame: picture.displayIndex, reason: "\(error)")
        }
        inFlight.append(Submitted(picture: picture, input: input, coded: coded))
        if inFlight.count > pipelineDepth { try collectOldest() }
    }

    private func parameterBuffers(for picture: PlannedPicture, coded: VABufferID) throws -> [VABufferID] {
        var buffers: [VABufferID] = []
        do {
            if picture.kind == .idr {
                var sequence = sequenceParameters()
                buffers.append(try makeBuffer(VAEncSequenceParameterBufferType, &sequence))
                buffers += try miscParameterBuffers()
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

    private func makeBuffer<T>(_ type: VABufferType, _ value: inout T) throws -> VABufferID {
        var id = VABufferID(VA_INVALID_ID)
        let status = withUnsafeMutableBytes(of: &value) { raw in
            vaCreateBuffer(display, context, type, UInt32(raw.count), 1, raw.baseAddress, &id)
        }
        try vaCheck(status, "vaCreateBuffer(\(type.rawValue))")
        return id
    }

    private func makeBuffer(_ type: VABufferType, bytes: [UInt8]) throws -> VABufferID {
        var id = VABufferID(VA_INVALID_ID)
        var copy = bytes
        try vaCheck(vaCreateBuffer(display, context, type, UInt32(copy.count), 1, &copy, &id),
                    "vaCreateBuffer(\(type.rawValue))")
        return id
    }

    private func packedHeader(_ type: VAEncPackedHeaderType, bytes: [UInt8], bitLength: Int) throws -> [VABufferID] {
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
    private func miscBuffer<T>(_ type: VAEncMiscParameterType, _ value: T) throws -> VABufferID {
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
    private func miscParameterBuffers() throws -> [VABufferID] {
        var buffers: [VABufferID] = []
        do {
            switch plan.rateControl {
            case .cbr, .vbr:
                let peak = UInt64(peakBitRate)
                let target = UInt64(settings.bitRate ?? peakBitRate)
                let bufferBits = UInt64(bufferBytes) * 8
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
            rate.framerate = UInt32(settings.frameRate.denominator) << 16 | UInt32(settings.frameRate.numerator)
            buffers.append(try miscBuffer(VAEncMiscParameterTypeFrameRate, rate))
            if let level = plan.qualityLevel {
                var quality = VAEncMiscParameterBufferQualityLevel()
                quality.quality_level = UInt32(level)
                buffers.append(try miscBuffer(VAEncMiscParameterTypeQualityLevel, quality))
            }
            return buffers
        } catch {
            for id in buffers { _ = vaDestroyBuffer(display, id) }
            throw error
        }
    }

    private func sequenceParameters() -> VAEncSequenceParameterBufferH264 {
        let sps = headers.sps
        var s = VAEncSequenceParameterBufferH264()
        s.seq_parameter_set_id = UInt8(sps.seqParameterSetId)
        s.level_idc = UInt8(sps.levelIdc)
        s.intra_period = UInt32(planner.keyInterval)
        s.intra_idr_period = UInt32(planner.keyInterval)
        s.ip_period = UInt32(plan.bFrames + 1)
        s.bits_per_second = plan.rateControl == .cbr || plan.rateControl == .vbr ? UInt32(clamping: peakBitRate) : 0
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

    private func vaPicture(_ reference: ReferencePicture) -> VAPictureH264 {
        VAPictureH264(picture_id: referenceSurfaces[reference.slot], frame_idx: UInt32(reference.frameNum),
                      flags: UInt32(VA_PICTURE_H264_SHORT_TERM_REFERENCE),
                      TopFieldOrderCnt: Int32(reference.pictureOrderCount),
                      BottomFieldOrderCnt: Int32(reference.pictureOrderCount), va_reserved: (0, 0, 0, 0))
    }

    private static let invalidPicture = VAPictureH264(
        picture_id: VASurfaceID(VA_INVALID_SURFACE), frame_idx: 0, flags: UInt32(VA_PICTURE_H264_INVALID),
        TopFieldOrderCnt: 0, BottomFieldOrderCnt: 0, va_reserved: (0, 0, 0, 0))

    /// Fills a C array of pictures (a tuple in Swift) with `pictures`, the rest invalid.
    private func fill<Tuple>(_ tuple: inout Tuple, with pictures: [VAPictureH264]) {
        withUnsafeMutableBytes(of: &tuple) { raw in
            let slots = raw.bindMemory(to: VAPictureH264.self)
            for i in slots.indices { slots[i] = i < pictures.count ? pictures[i] : Self.invalidPicture }
        }
    }

    private func pictureParameters(_ picture: PlannedPicture, coded: VABufferID) -> VAEncPictureParameterBufferH264 {
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

    private func sliceParameters(_ picture: PlannedPicture, header: SliceHeader) -> VAEncSliceParameterBufferH264 {
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

    // MARK: Collecting coded pictures

    private func collectOldest() throws {
        guard !inFlight.isEmpty else { return }
        let done = inFlight.removeFirst()
        defer {
            freeInputs.append(done.input)
            freeCoded.append(done.coded)
        }
        let picture = done.picture
        let bytes: [UInt8]
        do {
            try vaCheck(vaSyncSurface(display, inputSurfaces[done.input]), "vaSyncSurface")
            bytes = try readCodedBuffer(codedBuffers[done.coded])
        } catch {
            throw EncoderError.encodeFailed(encoder: "vaapi", frame: picture.displayIndex, reason: "\(error)")
        }
        try deliver(bytes, picture: picture)
    }

    /// The coded buffer's segments, in order, after checking none overflowed.
    private func readCodedBuffer(_ id: VABufferID) throws -> [UInt8] {
        var mapped: UnsafeMutableRawPointer?
        try vaCheck(vaMapBuffer(display, id, &mapped), "vaMapBuffer(coded)")
        defer { _ = vaUnmapBuffer(display, id) }
        var bytes: [UInt8] = []
        var segment = mapped?.assumingMemoryBound(to: VACodedBufferSegment.self)
        while let current = segment {
            if current.pointee.status & UInt32(VA_CODED_BUF_STATUS_SLICE_OVERFLOW_MASK) != 0 {
                throw CodedBufferOverflow(size: codedBufferSize)
            }
            if current.pointee.size > 0, let data = current.pointee.buf {
                bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: Int(current.pointee.size)))
            }
            segment = current.pointee.next?.assumingMemoryBound(to: VACodedBufferSegment.self)
        }
        return bytes
    }

    struct CodedBufferOverflow: Error, CustomStringConvertible {
        let size: Int
        var description: String { "the coded picture did not fit its \(size)-byte buffer" }
    }

    /// Annex B from the driver → AVCC access unit; parameter sets go to the format description
    /// (the driver's own when it wrote them, so the file carries what the slices were coded
    /// with).
    private func deliver(_ annexB: [UInt8], picture: PlannedPicture) throws {
        var data: [UInt8] = []
        data.reserveCapacity(annexB.count + 16)
        var sps: [[UInt8]] = []
        var pps: [[UInt8]] = []
        annexB.withUnsafeBytes { raw in
            for range in AnnexB.nalUnitRanges(in: raw) where !range.isEmpty {
                let nal = Array(annexB[range])
                switch NALUnitHeader(nal[0]).type {
                case .sps: sps.append(nal)
                case .pps: pps.append(nal)
                case .accessUnitDelimiter: break
                default:
                    let length = UInt32(nal.count)
                    data += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
                    data += nal
                }
            }
        }
        if plan.packedHeaders & UInt32(VA_ENC_PACKED_HEADER_SEQUENCE) == 0, !sps.isEmpty, !pps.isEmpty {
            formatDescription = FormatDescription(width: width, height: height,
                                                  sequenceParameterSets: sps, pictureParameterSets: pps)
        }
        guard !data.isEmpty else {
            throw EncoderError.encodeFailed(encoder: "vaapi", frame: picture.displayIndex,
                                            reason: "the driver returned no slice data")
        }
        let pts = presentationTimes.removeValue(forKey: picture.displayIndex)!
        let dts: MediaTime
        if plan.bFrames > 0 && picturesDelivered == 0 {
            let rate = settings.frameRate
            dts = arrivalTimes[0] + MediaTime(value: -Int64(rate.denominator), timescale: Int32(rate.numerator))
        } else {
            dts = arrivalTimes.removeFirst()
        }
        picturesDelivered += 1
        try output(EncodedFrame(data: data, pts: pts, dts: dts, isKeyFrame: picture.kind == .idr))
    }
}

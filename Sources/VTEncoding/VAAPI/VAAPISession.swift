import CVAAPI
import CYUV
import Foundation
import Logging
import VTCore
import VTH264
import VTVAAPI

/// The hardware encoder: H.264 through VA-API behind the `CompressionSession` contract.
///
/// VA-API leaves every decision of the bitstream to the client: picture types and order
/// (`H264ReferencePlanner`), the parameter sets and slice headers (`VAAPIHeaders`, written as
/// packed headers when the driver takes them), reference lists and rate control. The driver
/// codes the slice data into a coded buffer as Annex B, which this session turns into AVCC
/// access units and parameter sets like any other session.
///
/// Pictures are submitted as soon as they can be coded and collected `pipelineDepth` pictures
/// later, so the hardware works on one picture while the next is uploaded. Once speeds are
/// stepped, one picture in `timedEvery` is coded alone and waited for, which times the device.
public final class VAAPISession: CompressionSession {
    public let encoderName = "vaapi"
    public private(set) var formatDescription: VideoFormatDescription
    public private(set) var resolvedSettings: EncoderSettings
    public let plan: VAAPIPlan
    /// B-frames here are never references: decoding runs one picture ahead.
    public var reorderDelay: Int { decodeTimes.delay }

    let width: Int
    let height: Int
    let settings: EncoderSettings
    private let output: EncodedFrameHandler
    private let logger: Logger
    private var planner: H264ReferencePlanner
    let headers: VAAPIHeaders

    private var device: VADevice?
    private var config = VAConfigID(VA_INVALID_ID)
    var context = VAContextID(VA_INVALID_ID)
    private var inputSurfaces: [VASurfaceID] = []
    private var freeInputs: [Int] = []
    var referenceSurfaces: [VASurfaceID] = []
    private var codedBuffers: [VABufferID] = []
    private var freeCoded: [Int] = []
    private var uploader: VAAPIUploader?
    private var codedBufferSize = 0

    /// Uploaded frames waiting for the planner, by display index.
    private var waiting: [Int: Int] = [:]
    private var nextDisplayIndex = 0
    private var inFlight: [Submitted] = []
    private var decodeTimes: DecodeTimes
    /// Presentation time and token of each picture in the session, by display index.
    private var arrivals: [Int: (pts: MediaTime, token: FrameToken)] = [:]
    /// Pictures submitted and not yet collected at most; the hardware codes one while the
    /// next is uploaded.
    private let pipelineDepth = 2
    /// The quality level pictures are coded at now (`--speed`, then `--realtime adaptive`'s
    /// steps), and the one the driver was last sent.
    var qualityLevel: Int?
    var qualityLevelSent: Int?

    /// Speeds are stepped: pictures are timed on the device (`takeDeviceTime()`).
    private var timing = false
    /// One picture in this many is timed: the pipeline is emptied before it, so the device
    /// starts it at once, and it is waited for as soon as it is sent. That picture's upload
    /// and the device's work do not overlap; the others' do.
    static let timedEvery = 4
    private var sentSinceTimed = 0
    /// The times of the pictures timed since `takeDeviceTime()` was last called.
    private var deviceTime: (nanoseconds: Int64, pictures: Int) = (0, 0)

    private struct Submitted {
        var picture: PlannedPicture
        var input: Int
        var coded: Int
    }

    /// The session for `plan` (from `VAAPIPlan(capabilities:settings:)`); nothing is opened
    /// until `prepare()`.
    /// Pictures may be NV12, I420 or YUYV, each converted to NV12 as it is uploaded.
    public init(plan: VAAPIPlan, width: Int, height: Int, settings: EncoderSettings,
                logger: Logger = Logger(label: "vtrecord.vaapi"),
                output: @escaping EncodedFrameHandler) throws(UsageError) {
        try settings.validate()
        guard width % 2 == 0, height % 2 == 0 else {
            throw UsageError("VA-API encodes 4:2:0 pictures of even size, not \(width)x\(height)")
        }
        self.plan = plan
        qualityLevel = plan.qualityLevel
        self.width = width
        self.height = height
        self.settings = settings
        self.decodeTimes = DecodeTimes(delay: plan.bFrames > 0 ? 1 : 0, frameDuration: settings.frameRate.frameDuration)
        self.output = output
        self.logger = logger
        let planner = H264ReferencePlanner(keyInterval: settings.keyFrameInterval.frames(at: settings.frameRate),
                                           bFrames: plan.bFrames, extraSlots: pipelineDepth)
        self.planner = planner
        let headers = VAAPIHeaders(plan: plan, settings: settings, width: width, height: height, planner: planner)
        self.headers = headers
        self.formatDescription = VideoFormatDescription(width: width, height: height,
                                                        sequenceParameterSets: [], pictureParameterSets: [])
        var resolved = settings
        resolved.profile = plan.profile
        resolved.entropy = plan.entropy
        resolved.bFrames = plan.bFrames
        resolved.keyFrameInterval = .frames(planner.keyInterval)
        if settings.level == nil || settings.level == "auto" {
            resolved.level = H264Level.all.first { $0.idc == headers.sps.levelIdc }?.name
        }
        resolved.threads = nil
        switch plan.rateControl {
        case .cqp:
            resolved.rateControl = .cqp
            resolved.qp = plan.qp
            resolved.crf = nil
        case .icq:
            resolved.rateControl = .crf
            resolved.crf = Double(plan.quality)
        case .cbr, .vbr:
            resolved.rateControl = plan.rateControl == .cbr ? .cbr : .vbr
            resolved.maxBitRate = plan.peakBitRate
            resolved.bufferSize = plan.bufferBits / 8
        }
        self.resolvedSettings = resolved
    }

    deinit { invalidate() }

    /// The open device's display; nil (which every libva call refuses) while none is open.
    var display: VADisplay? { device?.display }
    var keyInterval: Int { planner.keyInterval }
    private var alignedWidth: Int { (width + 15) & ~15 }
    private var alignedHeight: Int { (height + 15) & ~15 }

    public func prepare() throws(EncoderError) {
        do {
            try open()
        } catch where error.isDeviceUnusable {
            // The device worked when it was chosen; it has gone or changed since.
            throw .unavailable(encoder: "vaapi", reason: error.description)
        } catch {
            throw .openFailed(encoder: "vaapi", reason: error.description)
        }
        formatDescription = VideoFormatDescription(width: width, height: height,
                                                   sequenceParameterSets: [headers.sps.nalUnit()],
                                                   pictureParameterSets: [headers.pps.nalUnit()])
    }

    private func open() throws(VAAPIFailure) {
        let device = try VADevice(path: plan.device)
        self.device = device
        uploader = VAAPIUploader(display: device.display, width: width, height: height, logger: logger)
        var attributes = [
            VAConfigAttrib(type: VAConfigAttribRTFormat, value: UInt32(VA_RT_FORMAT_YUV420)),
            VAConfigAttrib(type: VAConfigAttribRateControl, value: plan.rateControl.vaBit),
        ]
        if plan.packedHeaders != 0 {
            attributes.append(VAConfigAttrib(type: VAConfigAttribEncPackedHeaders, value: plan.packedHeaders))
        }
        try vaCheck(vaCreateConfig(display, plan.profile.vaProfile, plan.entrypoint.vaEntrypoint,
                                   &attributes, Int32(attributes.count), &config), "vaCreateConfig")

        // Input surfaces have the picture's size, as ffmpeg's hwupload makes them: drivers pad
        // to whole macroblocks themselves, and some (Mesa) copy a whole surface in vaPutImage.
        // Reconstructed surfaces have the coded size.
        inputSurfaces = try makeSurfaces(plan.bFrames + pipelineDepth + 2, width: width, height: height)
        freeInputs = Array(inputSurfaces.indices)
        referenceSurfaces = try makeSurfaces(planner.slotCount, width: alignedWidth, height: alignedHeight)
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

    private func makeSurfaces(_ count: Int, width: Int, height: Int) throws(VAAPIFailure) -> [VASurfaceID] {
        var surfaces = [VASurfaceID](repeating: VASurfaceID(VA_INVALID_SURFACE), count: count)
        var attribute = VASurfaceAttrib()
        attribute.type = VASurfaceAttribPixelFormat
        attribute.flags = UInt32(VA_SURFACE_ATTRIB_SETTABLE)
        attribute.value.type = VAGenericValueTypeInteger
        attribute.value.value.i = Int32(bitPattern: VAAPIUploader.fourccNV12)
        try vaCheck(vaCreateSurfaces(display, UInt32(VA_RT_FORMAT_YUV420), UInt32(width), UInt32(height),
                                     &surfaces, UInt32(count), &attribute, 1), "vaCreateSurfaces")
        return surfaces
    }

    public func encode(_ buffer: PixelBuffer, pts: MediaTime, forceKeyFrame: Bool, token: FrameToken) throws {
        guard let uploader else { preconditionFailure("encode before prepare") }
        let index = nextDisplayIndex
        guard buffer.width == width, buffer.height == height else {
            throw EncoderError.encodeFailed(encoder: "vaapi", frame: index,
                                            reason: "a \(buffer.width)x\(buffer.height) picture in a \(width)x\(height) session")
        }
        while freeInputs.isEmpty { try collectOldest() }
        let input = freeInputs.removeFirst()
        do {
            try uploader.upload(buffer, to: inputSurfaces[input])
        } catch {
            freeInputs.append(input)
            throw EncoderError.encodeFailed(encoder: "vaapi", frame: index, reason: error.description)
        }
        nextDisplayIndex += 1
        waiting[index] = input
        arrivals[index] = (pts, token)
        decodeTimes.arrived(pts)
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

    /// The driver's quality levels from the one `--speed` chose to its fastest, as "level N".
    public var speedSteps: [String] {
        guard let first = plan.qualityLevel, let last = plan.fastestQualityLevel, last > first else {
            return plan.qualityLevel.map { ["level \($0)"] } ?? []
        }
        return (first...last).map { "level \($0)" }
    }

    /// A new quality level, sent with the next picture.
    public func setSpeedStep(_ step: Int) throws(EncoderError) {
        guard let first = plan.qualityLevel else {
            preconditionFailure("\(encoderName) has no speeds to step between")
        }
        qualityLevel = first + step
        // The next picture sent is the first at the new level: time it, and forget the old
        // level's times.
        timing = true
        sentSinceTimed = Self.timedEvery
        deviceTime = (0, 0)
    }

    public var timesDevice: Bool { true }

    public func takeDeviceTime() -> (nanoseconds: Int64, pictures: Int)? {
        defer { deviceTime = (0, 0) }
        return deviceTime.pictures > 0 ? deviceTime : nil
    }

    public func invalidate() {
        guard let device else { return }
        let display = device.display
        for id in codedBuffers { _ = vaDestroyBuffer(display, id) }
        codedBuffers = []
        uploader?.close()
        uploader = nil
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

    // MARK: Submitting pictures

    private func submit(_ picture: PlannedPicture) throws {
        guard let input = waiting.removeValue(forKey: picture.displayIndex) else {
            preconditionFailure("picture \(picture.displayIndex) planned before it arrived")
        }
        while freeCoded.isEmpty { try collectOldest() }
        // A reconstructed surface is rewritten only once no picture still being coded writes or
        // reads it (the planner leaves spare surfaces, so this rarely waits).
        while inFlight.contains(where: { $0.picture.touches(slot: picture.slot) }) { try collectOldest() }
        let timed = timing && sentSinceTimed >= Self.timedEvery
        sentSinceTimed = timed ? 1 : sentSinceTimed + 1
        if timed {
            while !inFlight.isEmpty { try collectOldest() }
        }
        var sent: Int64 = 0
        let coded = freeCoded.removeFirst()
        var buffers: [VABufferID] = []
        defer { for id in buffers { _ = vaDestroyBuffer(display, id) } }
        do {
            buffers = try parameterBuffers(for: picture, coded: codedBuffers[coded])
            try vaCheck(vaBeginPicture(display, context, inputSurfaces[input]), "vaBeginPicture")
            try vaCheck(vaRenderPicture(display, context, &buffers, Int32(buffers.count)), "vaRenderPicture")
            try vaCheck(vaEndPicture(display, context), "vaEndPicture")
            sent = MonotonicClock.nanoseconds()
        } catch {
            freeCoded.append(coded)
            freeInputs.append(input)
            throw EncoderError.encodeFailed(encoder: "vaapi", frame: picture.displayIndex, reason: error.description)
        }
        inFlight.append(Submitted(picture: picture, input: input, coded: coded))
        if timed {
            try collectOldest(sent: sent)
        } else if inFlight.count > pipelineDepth {
            try collectOldest()
        }
    }

    // MARK: Collecting coded pictures

    /// `sent`: when the picture, alone on the device, was sent (vaEndPicture returned; the
    /// driver's work inside it is the encode call's, on the CPU); its time there is counted.
    private func collectOldest(sent: Int64? = nil) throws {
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
            if let sent {
                deviceTime.nanoseconds += MonotonicClock.nanoseconds() - sent
                deviceTime.pictures += 1
            }
            bytes = try readCodedBuffer(codedBuffers[done.coded])
        } catch {
            throw EncoderError.encodeFailed(encoder: "vaapi", frame: picture.displayIndex, reason: error.description)
        }
        try deliver(bytes, picture: picture)
    }

    /// The coded buffer's segments, in order, after checking none overflowed.
    private func readCodedBuffer(_ id: VABufferID) throws(VAAPIFailure) -> [UInt8] {
        var mapped: UnsafeMutableRawPointer?
        try vaCheck(vaMapBuffer(display, id, &mapped), "vaMapBuffer(coded)")
        defer { _ = vaUnmapBuffer(display, id) }
        var bytes: [UInt8] = []
        var segment = mapped?.assumingMemoryBound(to: VACodedBufferSegment.self)
        while let current = segment {
            if current.pointee.status & UInt32(VA_CODED_BUF_STATUS_SLICE_OVERFLOW_MASK) != 0 {
                throw .codedBufferOverflow(size: codedBufferSize)
            }
            if current.pointee.size > 0, let data = current.pointee.buf {
                bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: Int(current.pointee.size)))
            }
            segment = current.pointee.next?.assumingMemoryBound(to: VACodedBufferSegment.self)
        }
        return bytes
    }

    /// Annex B from the driver → AVCC access unit; parameter sets go to the format description
    /// (the driver's own when it wrote them, so the file carries what the slices were coded
    /// with).
    private func deliver(_ annexB: [UInt8], picture: PlannedPicture) throws {
        let split = AVCC.fromAnnexB(annexB, parameterSetsApart: true)
        let data = split.accessUnit
        let sps = split.sequenceParameterSets
        let pps = split.pictureParameterSets
        if plan.packedHeaders & UInt32(VA_ENC_PACKED_HEADER_SEQUENCE) == 0, !sps.isEmpty, !pps.isEmpty {
            formatDescription = VideoFormatDescription(width: width, height: height,
                                                       sequenceParameterSets: sps, pictureParameterSets: pps)
        }
        guard !data.isEmpty else {
            throw EncoderError.encodeFailed(encoder: "vaapi", frame: picture.displayIndex,
                                            reason: "the driver returned no slice data")
        }
        guard let arrival = arrivals.removeValue(forKey: picture.displayIndex) else {
            throw EncoderError.encodeFailed(encoder: "vaapi", frame: picture.displayIndex,
                                            reason: "a coded picture came back that was never submitted")
        }
        let dts = decodeTimes.next()
        try output(EncodedFrame(data: data, pts: arrival.pts, dts: dts, isKeyFrame: picture.kind == .idr,
                                token: arrival.token))
    }
}

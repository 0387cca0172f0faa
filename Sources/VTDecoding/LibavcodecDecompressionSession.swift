import CAVFormat
import Glibc
import Synchronization
import VTCore
import VTFFmpeg
import VTH264

/// FFmpeg's libavcodec H.264 decoder behind the `DecompressionSession` contract: in software,
/// with its frame and slice threads on, or through its VA-API hwaccel on a render node, each
/// picture then copied out of its surface as NV12. Pictures are handed out in libavcodec's own
/// memory (no further copy); each is freed when its `PixelBuffer` is released.
public final class LibavcodecDecompressionSession: DecompressionSession {
    public var decoderName: String { backend.name }
    public private(set) var formatDescription: VideoFormatDescription

    private let backend: DecoderSelection.Backend
    /// The VA-API device libavcodec decodes on (an AVHWDeviceContext); nil in software.
    private var hardwareDevice: UnsafeMutablePointer<AVBufferRef>?
    /// Set to 1 by `vt_get_format_vaapi` when libavcodec's hwaccel did not take the stream.
    private let hardwareRefused = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    private let threads: Int
    private let refusingDamage: Bool
    private let showsAtOnce: Bool
    private let output: DecodedFrameHandler
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private let packet: UnsafeMutablePointer<AVPacket>
    private let frame: UnsafeMutablePointer<AVFrame>
    /// Where each access unit is copied with the zeroed padding libavcodec reads past its end.
    private var scratch = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    /// The time scale of the first frame's times; later frames are converted to it.
    private var timescale: Int32?
    /// The last unit sent: what an error found while finishing is reported against.
    private var lastToken = FrameToken(0)
    private let picturesOut = PictureCount()

    /// Pictures handed out whose frames are still held: 0 once every receiver let go.
    public var picturesHeld: Int { picturesOut.value }

    /// A session for `format` on `backend`. `threads` 0 lets libavcodec choose (one per core,
    /// and one more; VA-API decodes on one). `refusingDamage` makes a unit with any error the decoder detects give no picture at all
    /// (libavcodec's `err_detect explode`) instead of one with the damage concealed: how
    /// `verify` finds damaged units exactly, whatever the threads (a concealed picture's flag
    /// can reach the picture too late when frame threads finish it). `showsAtOnce` hands each
    /// picture out as soon as it is decoded unless the stream's VUI says it reorders (libavcodec
    /// holds pictures back only once it sees reordering), for a check that wants each unit's
    /// picture with the unit rather than every picture in order.
    public init(format: VideoFormatDescription, backend: DecoderSelection.Backend = .software, threads: Int = 0,
                refusingDamage: Bool = false, showsAtOnce: Bool = false,
                output: @escaping DecodedFrameHandler) throws(DecoderError) {
        let name = backend.name
        if let problem = FFmpegLibraries.loadFailure() { throw .openFailed(decoder: name, reason: problem) }
        guard let packet = vt_av_packet_alloc() else { throw .openFailed(decoder: name, reason: "out of memory") }
        guard let frame = vt_av_frame_alloc() else {
            var unused: UnsafeMutablePointer<AVPacket>? = packet
            vt_av_packet_free(&unused)
            throw .openFailed(decoder: name, reason: "out of memory")
        }
        self.packet = packet
        self.frame = frame
        self.backend = backend
        self.threads = threads
        self.refusingDamage = refusingDamage
        self.showsAtOnce = showsAtOnce
        self.output = output
        hardwareRefused.initialize(to: 0)
        formatDescription = format
        if case .vaapi(let device) = backend {
            var context: UnsafeMutablePointer<AVBufferRef>?
            let status = vt_av_hwdevice_ctx_create(&context, AV_HWDEVICE_TYPE_VAAPI, device, nil, 0)
            guard status >= 0, let context else {
                throw .openFailed(decoder: name, reason: "\(device): \(FFmpegLibraries.errorText(status))")
            }
            hardwareDevice = context
        }
        try open(format)
    }

    deinit {
        invalidate()
        var packet: UnsafeMutablePointer<AVPacket>? = self.packet
        vt_av_packet_free(&packet)
        var frame: UnsafeMutablePointer<AVFrame>? = self.frame
        vt_av_frame_free(&frame)
        vt_av_buffer_unref(&hardwareDevice)
        hardwareRefused.deallocate()
        scratch.deallocate()
    }

    private func open(_ format: VideoFormatDescription) throws(DecoderError) {
        let record: [UInt8]
        do {
            record = try format.avcC()
        } catch {
            throw .openFailed(decoder: decoderName, reason: "its parameter sets do not make an avcC record: \(error)")
        }
        guard let codec = vt_avcodec_find_decoder(AV_CODEC_ID_H264) else {
            throw .openFailed(decoder: decoderName, reason: "this FFmpeg was built without its H.264 decoder")
        }
        guard let context = vt_avcodec_alloc_context3(codec),
              let extradata = vt_av_mallocz(record.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
            throw .openFailed(decoder: decoderName, reason: "out of memory")
        }
        extradata.copyMemory(from: record, byteCount: record.count)
        context.pointee.extradata = extradata.assumingMemoryBound(to: UInt8.self)
        context.pointee.extradata_size = Int32(record.count)
        if let hardwareDevice {
            // The hwaccel decodes on the device; one thread feeds it.
            guard let reference = vt_av_buffer_ref(hardwareDevice) else {
                vt_avcodec_free_context(&self.context)
                throw .openFailed(decoder: decoderName, reason: "out of memory")
            }
            context.pointee.hw_device_ctx = reference
            context.pointee.get_format = vt_get_format_vaapi
            context.pointee.opaque = UnsafeMutableRawPointer(hardwareRefused)
            context.pointee.thread_count = 1
        } else {
            context.pointee.thread_count = Int32(threads)
            context.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
        }
        if refusingDamage { context.pointee.err_recognition |= AV_EF_EXPLODE }
        // Without the SPS's max_num_reorder_frames libavcodec starts by showing each picture at
        // once and drops any that arrives after a later one was shown (B-pyramids, cameras'
        // streams). Holding pictures as long as the standard lets the stream reorder them
        // gives every one; an SPS that does not parse is left to libavcodec's guess.
        if !showsAtOnce, let nal = format.sequenceParameterSets.first, let sps = try? SequenceParameterSet(nalUnit: nal) {
            context.pointee.has_b_frames = Int32(sps.maxNumReorderFrames)
        }
        self.context = context
        let status = vt_avcodec_open2(context, codec, nil)
        guard status >= 0 else {
            vt_avcodec_free_context(&self.context)
            throw .openFailed(decoder: decoderName, reason: FFmpegLibraries.errorText(status))
        }
        formatDescription = format
    }

    public func decode(_ encoded: EncodedFrame, format: VideoFormatDescription?) throws {
        if let format, format != formatDescription {
            // A new SPS (a new size, say): finish the pictures of the old one, then start over
            // with the new parameter sets.
            try finishDelayedFrames()
            vt_avcodec_free_context(&context)
            try open(format)
        }
        guard let context else { throw DecoderError.failed(decoder: decoderName, reason: "the session was invalidated") }
        let scale = timescale ?? encoded.pts.timescale
        timescale = scale
        let padded = encoded.data.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)
        if scratch.count < padded {
            scratch.deallocate()
            scratch = .allocate(byteCount: padded * 2, alignment: 64)
        }
        encoded.data.withUnsafeBytes { scratch.copyMemory(from: $0) }
        memset(scratch.baseAddress! + encoded.data.count, 0, Int(AV_INPUT_BUFFER_PADDING_SIZE))
        // Not reference-counted: libavcodec copies what it keeps.
        packet.pointee.data = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
        packet.pointee.size = Int32(encoded.data.count)
        packet.pointee.pts = encoded.pts.converted(to: scale).value
        packet.pointee.dts = encoded.dts.converted(to: scale).value
        packet.pointee.flags = encoded.isKeyFrame ? AV_PKT_FLAG_KEY : 0
        // The token comes back on the picture made of this unit, wherever reordering puts it.
        context.pointee.reordered_opaque = Int64(bitPattern: encoded.token.rawValue)
        lastToken = encoded.token
        var status = vt_avcodec_send_packet(context, packet)
        var refusedEarlier: Int32?
        if status == vt_averror(EAGAIN) {
            // The decoder's output is full: take its pictures, then it takes the unit.
            refusedEarlier = try receive()
            status = vt_avcodec_send_packet(context, packet)
        }
        packet.pointee.data = nil
        packet.pointee.size = 0
        let refused = try receive() ?? refusedEarlier
        if status < 0 { try refuse(status, token: encoded.token) }
        if let refused { try refuse(refused, token: encoded.token) }
    }

    /// A unit libavcodec could not decode: damage, which the session survives; running out of
    /// memory is not.
    private func refuse(_ status: Int32, token: FrameToken) throws(DecoderError) {
        if status == vt_averror(ENOMEM) { throw .failed(decoder: decoderName, reason: FFmpegLibraries.errorText(status)) }
        if hardwareRefused.pointee != 0 {
            throw .failed(decoder: decoderName, reason: "libavcodec's VA-API hwaccel did not take the stream "
                          + "(the driver refused its profile, size or surfaces)")
        }
        throw .damaged(token: token, reason: FFmpegLibraries.errorText(status))
    }

    public func finishDelayedFrames() throws {
        guard let context else { return }
        // Draining can itself report a unit it could not decode: damage, as in `decode`.
        let status = vt_avcodec_send_packet(context, nil)
        let drainRefused = status < 0 && status != vt_averror_eof() ? status : nil
        let refused = try receive() ?? drainRefused
        // Ready for more units, as a VideoToolbox session is after finishing its frames.
        vt_avcodec_flush_buffers(context)
        if let refused { try refuse(refused, token: lastToken) }
    }

    public func invalidate() {
        vt_avcodec_free_context(&context)
    }

    /// Hands out every picture the decoder has ready. With frame threads libavcodec reports a
    /// unit it could not decode here, a few units after it was sent; the first such error is
    /// returned once the ready pictures are out.
    private func receive() throws -> Int32? {
        guard let context else { return nil }
        var refused: Int32?
        var errors = 0
        while true {
            let status = vt_avcodec_receive_frame(context, frame)
            if status == vt_averror(EAGAIN) || status == vt_averror_eof() { return refused }
            if status < 0 {
                // Each failed unit is reported once; a decoder that kept failing would be a bug.
                errors += 1
                guard errors <= 64 else {
                    throw DecoderError.failed(decoder: decoderName, reason: FFmpegLibraries.errorText(status))
                }
                refused = refused ?? status
                continue
            }
            try deliver()
        }
    }

    private func deliver() throws {
        if frame.pointee.format == AV_PIX_FMT_VAAPI.rawValue { return try deliverSurface() }
        let format = frame.pointee.format
        guard format == AV_PIX_FMT_YUV420P.rawValue || format == AV_PIX_FMT_YUVJ420P.rawValue else {
            let name = vt_av_get_pix_fmt_name(AVPixelFormat(format)).map { String(cString: $0) } ?? "format \(format)"
            vt_av_frame_unref(frame)
            throw DecoderError.unsupportedPicture(decoder: decoderName, format: name)
        }
        guard let held = vt_av_frame_alloc() else {
            vt_av_frame_unref(frame)
            throw DecoderError.failed(decoder: decoderName, reason: "out of memory")
        }
        vt_av_frame_move_ref(held, frame)
        let owner = HeldFrame(held, counting: picturesOut)
        let picture = held.pointee
        let width = Int(picture.width)
        let height = Int(picture.height)
        let data = [picture.data.0, picture.data.1, picture.data.2]
        let strides = [picture.linesize.0, picture.linesize.1, picture.linesize.2]
        var planes: [PixelPlane] = []
        for plane in 0..<3 {
            guard let base = data[plane], strides[plane] > 0 else {
                throw DecoderError.failed(decoder: decoderName, reason: "libavcodec gave a picture without plane \(plane)")
            }
            planes.append(PixelPlane(baseAddress: base, bytesPerRow: Int(strides[plane]),
                                     rowBytes: PixelFormat.i420.rowBytes(plane: plane, width: width),
                                     rows: PixelFormat.i420.rows(plane: plane, height: height)))
        }
        let buffer = PixelBuffer(format: .i420, width: width, height: height, planes: planes) { _ in owner.free() }
        try hand(PixelBufferLease(handingOut: buffer), of: picture, fullRange: format == AV_PIX_FMT_YUVJ420P.rawValue)
    }

    /// A picture in a VA-API surface: copied out as NV12 (av_hwframe_transfer_data, which maps
    /// the surface or reads it with vaGetImage) and handed out in that copy's memory.
    private func deliverSurface() throws {
        defer { vt_av_frame_unref(frame) }
        guard let copy = vt_av_frame_alloc() else {
            throw DecoderError.failed(decoder: decoderName, reason: "out of memory")
        }
        let owner = HeldFrame(copy, counting: picturesOut)
        let status = vt_av_hwframe_transfer_data(copy, frame, 0)
        let picture = frame.pointee
        guard status >= 0, copy.pointee.format == AV_PIX_FMT_NV12.rawValue else {
            let reason = status < 0 ? FFmpegLibraries.errorText(status)
                : "it gave \(vt_av_get_pix_fmt_name(AVPixelFormat(copy.pointee.format)).map { String(cString: $0) } ?? "?"), not NV12"
            throw DecoderError.failed(decoder: decoderName, reason: "a picture could not be read from its surface: \(reason)")
        }
        guard let luma = copy.pointee.data.0, let chroma = copy.pointee.data.1,
              copy.pointee.linesize.0 > 0, copy.pointee.linesize.1 > 0 else {
            throw DecoderError.failed(decoder: decoderName, reason: "a picture read from its surface has no NV12 planes")
        }
        let width = Int(picture.width)
        let height = Int(picture.height)
        let planes = [
            PixelPlane(baseAddress: luma, bytesPerRow: Int(copy.pointee.linesize.0),
                       rowBytes: PixelFormat.nv12.rowBytes(plane: 0, width: width), rows: PixelFormat.nv12.rows(plane: 0, height: height)),
            PixelPlane(baseAddress: chroma, bytesPerRow: Int(copy.pointee.linesize.1),
                       rowBytes: PixelFormat.nv12.rowBytes(plane: 1, width: width), rows: PixelFormat.nv12.rows(plane: 1, height: height)),
        ]
        let buffer = PixelBuffer(format: .nv12, width: width, height: height, planes: planes) { _ in owner.free() }
        try hand(PixelBufferLease(handingOut: buffer), of: picture, fullRange: false)
    }

    /// Hands a picture out with the time, token and state of the frame it was decoded as.
    private func hand(_ picture: consuming PixelBufferLease, of frame: AVFrame, fullRange: Bool) throws {
        let ticks = frame.pts != vt_av_nopts_value() ? frame.pts : frame.best_effort_timestamp
        let damaged = frame.flags & AV_FRAME_FLAG_CORRUPT != 0 || frame.decode_error_flags != 0
        try output(DecodedFrame(picture: picture, pts: MediaTime(value: ticks, timescale: timescale ?? 1),
                                token: FrameToken(UInt64(bitPattern: frame.reordered_opaque)), isDamaged: damaged,
                                isFullRange: fullRange || frame.color_range == AVCOL_RANGE_JPEG))
    }
}

/// How many pictures a session handed out are still held.
private final class PictureCount: Sendable {
    private let count = Atomic<Int>(0)
    func add(_ change: Int) { count.add(change, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// The AVFrame behind a handed-out picture, freed when the picture's lease ends, or when this
/// goes if no lease was made of it (a picture refused on its way out).
private final class HeldFrame: Sendable {
    /// The frame's address; 0 once freed. Taken out with one atomic exchange, so whichever
    /// thread ends the lease (or this object's end, for a frame never leased) frees it once.
    private let address: Atomic<UInt>
    private let count: PictureCount

    init(_ frame: UnsafeMutablePointer<AVFrame>, counting count: PictureCount) {
        address = Atomic(UInt(bitPattern: frame))
        self.count = count
        count.add(1)
    }

    deinit { free() }

    func free() {
        var frame = UnsafeMutablePointer<AVFrame>(bitPattern: address.exchange(0, ordering: .acquiringAndReleasing))
        guard frame != nil else { return }
        vt_av_frame_free(&frame)
        count.add(-1)
    }
}

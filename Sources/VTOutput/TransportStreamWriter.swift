import CAVFormat
import VTFFmpeg
import VTCore
import VTH264

/// Writes an MPEG transport stream through FFmpeg's muxer (libavformat), which does it well.
/// The bytes go through vtrecord's own `OutputFile` (a custom AVIOContext), so a failed write
/// cuts a regular file back and is reported as every output error is, and standard output
/// and pipes work as for the other kinds.
///
/// Access units go in as Annex B with SPS/PPS before each keyframe; the muxer puts PAT/PMT
/// before keyframes and carries PCR; each packet is written at once, so a file cut anywhere
/// plays to its last whole packet.
///
/// Presentation times start at 0 in each file. With B-frames the first decode times are then
/// below 0: they are carried modulo 2^33, as the format's 33-bit clock wraps anyway
/// (libavformat would otherwise shift the whole file by the B-frame lead).
public final class TransportStreamWriter: SingleFileOutput {
    public struct Options: Sendable {
        public var frameRate: FrameRate
        public var metadata: ContainerMetadata
        /// The sound track (AAC or Opus), if there is one.
        public var audio: AudioFormatDescription?

        public init(frameRate: FrameRate, metadata: ContainerMetadata, audio: AudioFormatDescription? = nil) {
            precondition(audio?.codec != .pcm, "a transport stream carries no 16-bit PCM")
            self.frameRate = frameRate
            self.metadata = metadata
            self.audio = audio
        }
    }

    public let file: OutputFile
    public private(set) var statistics = OutputStatistics()
    private let options: Options
    private let sink: Sink
    private var format: VideoFormatDescription?
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var stream: UnsafeMutablePointer<AVStream>?
    private var soundStream: UnsafeMutablePointer<AVStream>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    /// The time subtracted from every frame's, so the file starts at 0.
    private var base: MediaTime?
    private var framesGiven = 0
    private var accessUnit: [UInt8] = []

    /// Where libavformat's writes go: appended to the output file (the transport stream muxer
    /// never goes back).
    final class Sink {
        let file: OutputFile
        var failure: OutputError?

        init(file: OutputFile) { self.file = file }

        func write(_ bytes: UnsafeRawBufferPointer) throws(OutputError) {
            try file.append(bytes)
            file.startWriteback(ofLast: Int64(bytes.count))
        }
    }

    /// Opens `path` ("-" for standard output); see `OutputFile` for what is refused.
    /// Refused before anything is opened when libavformat cannot be loaded.
    public init(path: String, overwrite: Bool, options: Options) throws(OutputError) {
        if let problem = FFmpegLibraries.loadFailure() { throw .muxer(path: path, reason: problem) }
        self.options = options
        file = try OutputFile(path: path, overwrite: overwrite)
        file.unitName = "packet"
        sink = Sink(file: file)
    }

    deinit { closeMuxer() }

    /// The muxer is opened with the first frame.
    public var holdsNothing: Bool { framesGiven == 0 }

    public func writeHeader(_ format: VideoFormatDescription) throws(OutputError) {
        guard format != self.format else { return }
        self.format = format
    }

    /// Sound packets go to the muxer as they come (AAC gets its ADTS headers there); their
    /// times count from the same base as the picture's, so AAC's priming puts the first one
    /// just before 0.
    public func writeAudio(_ sound: EncodedAudioPacket) throws(OutputError) {
        guard let audio = options.audio, let context, let soundStream, let packet, let base else {
            preconditionFailure("sound written to an output opened without a sound track, or before the first frame")
        }
        let timescale = soundStream.pointee.time_base.den
        let rate = Int32(audio.sampleRate)
        let pts = MediaTime(value: sound.pts, timescale: rate).ticks(since: base, timescale: timescale)
        var data = sound.data
        let status = send(&data, packet, to: context, stream: soundStream, pts: pts, dts: pts,
                          duration: MediaTime(value: Int64(sound.duration), timescale: rate).ticks(since: .zero, timescale: timescale),
                          flags: AV_PKT_FLAG_KEY)
        try check(status, "write a sound packet")
        statistics.bytes = file.endOffset
    }

    public func write(_ frame: EncodedFrame) throws(OutputError) {
        guard let format else { preconditionFailure("a frame written before its header") }
        if context == nil { try open(format, first: frame) }
        guard let context, let stream, let packet, let base else { return }
        accessUnit.removeAll(keepingCapacity: true)
        do {
            try frame.data.withUnsafeBytes { avcc in
                try AnnexB.appendAccessUnit(avcc: avcc, nalUnitLengthSize: format.nalUnitLengthSize,
                                            parameterSets: frame.isKeyFrame ? format.sequenceParameterSets
                                                + format.pictureParameterSets : [],
                                            to: &accessUnit)
            }
        } catch {
            throw .invalidAccessUnit(reason: "\(error)")
        }
        // The muxer's clock is 90 kHz (time base 1/90000).
        let timescale = stream.pointee.time_base.den
        let status = send(&accessUnit, packet, to: context, stream: stream,
                          pts: frame.pts.ticks(since: base, timescale: timescale),
                          dts: frame.dts.ticks(since: base, timescale: timescale),
                          duration: options.frameRate.frameDuration.ticks(since: .zero, timescale: timescale),
                          flags: frame.isKeyFrame ? AV_PKT_FLAG_KEY : 0)
        framesGiven += 1
        try check(status, "write a frame")
        statistics.frames += 1
        if frame.isKeyFrame { statistics.keyFrames += 1 }
        statistics.bytes = file.endOffset
    }

    public func complete() throws(OutputError) {
        if let context {
            try check(vt_av_write_trailer(context), "finish the file")
        }
        closeMuxer()
        statistics.bytes = file.endOffset
    }

    public func salvage() {
        // What the muxer still holds goes out if the medium takes it.
        if let io = context?.pointee.pb { vt_avio_flush(io) }
        closeMuxer()
    }

    /// Sets up the muxer for the stream `format` describes and writes the file's header.
    private func open(_ format: VideoFormatDescription, first frame: EncodedFrame) throws(OutputError) {
        // Whatever fails is reported once, as an OutputError.
        var made: UnsafeMutablePointer<AVFormatContext>?
        try check(vt_avformat_alloc_output_context2(&made, nil, "mpegts", nil), "set up the mpegts muxer")
        guard let context = made else { throw .muxer(path: file.path, reason: "no mpegts muxer") }
        self.context = context
        // 188-byte TS packets fill the buffer exactly, so a write never ends inside one.
        let bufferSize: Int32 = 188 * 174
        guard let buffer = vt_av_malloc(Int(bufferSize))?.assumingMemoryBound(to: UInt8.self) else {
            throw .muxer(path: file.path, reason: "out of memory")
        }
        let opaque = Unmanaged.passUnretained(sink).toOpaque()
        guard let io = vt_avio_alloc_context(buffer, bufferSize, 1, opaque, nil, Self.writePacket, nil) else {
            vt_av_free(buffer)
            throw .muxer(path: file.path, reason: "out of memory")
        }
        io.pointee.seekable = 0
        context.pointee.pb = io
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO | AVFMT_FLAG_FLUSH_PACKETS
        context.pointee.flush_packets = 1
        context.pointee.avoid_negative_ts = AVFMT_AVOID_NEG_TS_DISABLED

        guard let stream = vt_avformat_new_stream(context, nil) else {
            throw .muxer(path: file.path, reason: "cannot add a video stream")
        }
        self.stream = stream
        guard let parameters = stream.pointee.codecpar else {
            throw .muxer(path: file.path, reason: "libavformat made a video stream without codec parameters")
        }
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = AV_CODEC_ID_H264
        parameters.pointee.width = Int32(format.width)
        parameters.pointee.height = Int32(format.height)
        let rate = options.frameRate
        stream.pointee.time_base = AVRational(num: 1, den: 90_000)
        stream.pointee.avg_frame_rate = AVRational(num: Int32(rate.numerator), den: Int32(rate.denominator))

        if let audio = options.audio { try addSoundStream(audio, to: context) }

        let metadata = options.metadata
        // What a transport stream carries of it: its SDT's provider and service names.
        var tags: [(String, String)] = [("service_provider", metadata.encoder)]
        if let source = metadata.source { tags.append(("service_name", source)) }
        for (key, value) in tags { vt_av_dict_set(&context.pointee.metadata, key, value, 0) }

        try check(vt_avformat_write_header(context, nil), "write the mpegts header")
        packet = vt_av_packet_alloc()
        guard packet != nil else { throw .muxer(path: file.path, reason: "out of memory") }
        base = frame.pts
    }

    /// Writes `bytes` as one packet of `stream` (times in its time base) and returns
    /// libavformat's status. The packet is not reference-counted: av_write_frame writes it
    /// before returning, and it points at nothing afterwards.
    private func send(_ bytes: inout [UInt8], _ packet: UnsafeMutablePointer<AVPacket>,
                      to context: UnsafeMutablePointer<AVFormatContext>, stream: UnsafeMutablePointer<AVStream>,
                      pts: Int64, dts: Int64, duration: Int64, flags: Int32) -> Int32 {
        bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            packet.pointee.data = buffer.baseAddress
            packet.pointee.size = Int32(buffer.count)
            packet.pointee.stream_index = stream.pointee.index
            packet.pointee.pts = pts
            packet.pointee.dts = dts
            packet.pointee.duration = duration
            packet.pointee.flags = flags
            let status = vt_av_write_frame(context, packet)
            packet.pointee.data = nil
            packet.pointee.size = 0
            return status
        }
    }

    /// The second elementary stream: the sound, with its codec's setup bytes as extradata.
    private func addSoundStream(_ audio: AudioFormatDescription, to context: UnsafeMutablePointer<AVFormatContext>)
        throws(OutputError) {
        guard let stream = vt_avformat_new_stream(context, nil), let parameters = stream.pointee.codecpar else {
            throw .muxer(path: file.path, reason: "cannot add a sound stream")
        }
        soundStream = stream
        parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
        parameters.pointee.codec_id = audio.codec == .opus ? AV_CODEC_ID_OPUS : AV_CODEC_ID_AAC
        parameters.pointee.sample_rate = Int32(audio.sampleRate)
        vt_av_channel_layout_default(&parameters.pointee.ch_layout, Int32(audio.channels))
        parameters.pointee.frame_size = Int32(audio.samplesPerPacket)
        parameters.pointee.initial_padding = Int32(audio.primingSamples)
        if let bitRate = audio.bitRate { parameters.pointee.bit_rate = Int64(bitRate) }
        if !audio.magicCookie.isEmpty {
            // libavformat frees extradata with the context; it wants zeroed padding after it.
            let padded = audio.magicCookie.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)
            guard let extradata = vt_av_mallocz(padded)?.assumingMemoryBound(to: UInt8.self) else {
                throw .muxer(path: file.path, reason: "out of memory")
            }
            extradata.update(from: audio.magicCookie, count: audio.magicCookie.count)
            parameters.pointee.extradata = extradata
            parameters.pointee.extradata_size = Int32(audio.magicCookie.count)
        }
        stream.pointee.time_base = AVRational(num: 1, den: 90_000)
    }

    /// Turns a libavformat status into the error of the write it failed in.
    private func check(_ status: Int32, _ what: String) throws(OutputError) {
        guard status < 0 else { return }
        if let failure = sink.failure { throw failure }
        throw .muxer(path: file.path, reason: "cannot \(what): \(FFmpegLibraries.errorText(status))")
    }

    private func closeMuxer() {
        if let context {
            if let io = context.pointee.pb {
                vt_av_free(io.pointee.buffer)
                var pointer: UnsafeMutablePointer<AVIOContext>? = io
                vt_avio_context_free(&pointer)
                context.pointee.pb = nil
            }
            vt_avformat_free_context(context)
            self.context = nil
        }
        if packet != nil { vt_av_packet_free(&packet) }
        stream = nil
        soundStream = nil
    }

    private static let writePacket: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = {
        opaque, buffer, size in
        guard let opaque, let buffer, size >= 0 else { return vt_averror_eio() }
        let sink = Unmanaged<Sink>.fromOpaque(opaque).takeUnretainedValue()
        do throws(OutputError) {
            try sink.write(UnsafeRawBufferPointer(start: buffer, count: Int(size)))
        } catch {
            sink.failure = error
            return vt_averror_eio()
        }
        return size
    }
}

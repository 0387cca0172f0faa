import CAVFormat
import VTCore
import VTFFmpeg
import VTH264

#if canImport(Glibc)
import Glibc
#endif

/// One of FFmpeg's muxers (libavformat) with the streams a recording has: its H.264 picture,
/// handed over as Annex B with SPS/PPS before each keyframe (what MPEG-TS needs, and what the
/// FLV and RTP muxers take and convert themselves), and its sound, if any. What it writes to is
/// its owner's: a file through a custom AVIOContext (`TransportStreamWriter`), a network
/// protocol opened with `avio_open2`, or nothing for a muxer that opens its own (RTSP)
/// (`NetworkOutput`). The owner sets `context.pb` and its options, then calls `writeHeader`.
///
/// Times count from the first frame's presentation time (`base`), so a stream starts at 0.
/// Statuses are libavformat's; `fail` turns one into the owner's error.
final class FFmpegMuxer {
    let context: UnsafeMutablePointer<AVFormatContext>
    private let video: UnsafeMutablePointer<AVStream>
    private var sound: UnsafeMutablePointer<AVStream>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let frameRate: FrameRate
    private let audio: AudioFormatDescription?
    private let fail: (Int32, String) -> OutputError
    /// The time subtracted from every frame's and packet's, so the stream starts at 0.
    let base: MediaTime
    private var accessUnit: [UInt8] = []

    /// Sets up `formatName`'s muxer for `url` (nil for custom I/O) with a video stream of
    /// `format` and a sound stream of `audio`; times count from `base`.
    /// `fail(status, what)` makes the error of a status; `what` says what could not be done.
    /// `parameterSetsUpFront`: the stream's SPS and PPS go in its codec parameters too, for a
    /// muxer that describes the stream before its first packet.
    init(formatName: String, url: String?, format: VideoFormatDescription, base: MediaTime,
         frameRate: FrameRate, audio: AudioFormatDescription?, tags: [(String, String)],
         parameterSetsUpFront: Bool, fail: @escaping (Int32, String) -> OutputError) throws(OutputError) {
        var made: UnsafeMutablePointer<AVFormatContext>?
        let status = vt_avformat_alloc_output_context2(&made, nil, formatName, url)
        guard status >= 0, let context = made else { throw fail(min(status, -1), "set up the \(formatName) muxer") }
        self.context = context
        self.frameRate = frameRate
        self.audio = audio
        self.fail = fail
        self.base = base
        guard let video = vt_avformat_new_stream(context, nil), let parameters = video.pointee.codecpar else {
            vt_avformat_free_context(context)
            throw fail(vt_averror(ENOMEM), "add a video stream")
        }
        self.video = video
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = AV_CODEC_ID_H264
        parameters.pointee.width = Int32(format.width)
        parameters.pointee.height = Int32(format.height)
        // FLV and RTSP describe the stream from its parameter sets before the first packet
        // (an avcC, an SDP's sprop-parameter-sets); they take them as Annex B.
        let parameterSets = (format.sequenceParameterSets + format.pictureParameterSets)
            .flatMap { (nal: [UInt8]) -> [UInt8] in [0, 0, 0, 1] + nal }
        // From here a failure frees the context in deinit.
        if parameterSetsUpFront { try attach(extradata: parameterSets, to: parameters) }
        video.pointee.time_base = AVRational(num: 1, den: 90_000)
        video.pointee.avg_frame_rate = AVRational(num: Int32(frameRate.numerator), den: Int32(frameRate.denominator))
        if let audio { try addSoundStream(audio) }
        for (key, value) in tags { vt_av_dict_set(&context.pointee.metadata, key, value, 0) }
        packet = vt_av_packet_alloc()
        guard packet != nil else { throw fail(vt_averror(ENOMEM), "allocate a packet") }
    }

    deinit { close() }

    /// Writes the stream's header (for a network muxer, this may be where it connects).
    func writeHeader(options: inout OpaquePointer?) throws(OutputError) {
        let status = vt_avformat_write_header(context, &options)
        guard status >= 0 else { throw fail(status, "write the \(String(cString: context.pointee.oformat.pointee.name)) header") }
    }

    /// One access unit, as Annex B with the parameter sets of `format` before a keyframe.
    func write(_ frame: EncodedFrame, format: VideoFormatDescription) throws(OutputError) {
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
        try send(&accessUnit, of: frame)
    }

    /// One access unit already in Annex B form, with SPS and PPS before a keyframe (as
    /// `write(_:format:)` makes it): converted once for every stream that sends it.
    func write(_ frame: EncodedFrame, annexB: [UInt8]) throws(OutputError) {
        // Read, not written: a copy to make it mutable would undo the sharing.
        let status = annexB.withUnsafeBufferPointer { buffer in
            send(UnsafeMutablePointer(mutating: buffer.baseAddress), count: buffer.count, of: frame)
        }
        guard status >= 0 else { throw fail(status, "write a frame") }
    }

    private func send(_ accessUnit: inout [UInt8], of frame: EncodedFrame) throws(OutputError) {
        let status = accessUnit.withUnsafeMutableBufferPointer { buffer in
            send(buffer.baseAddress, count: buffer.count, of: frame)
        }
        guard status >= 0 else { throw fail(status, "write a frame") }
    }

    /// The picture's packet: `data` is read only (libavformat neither keeps nor changes the
    /// data of a packet that is not reference-counted).
    private func send(_ data: UnsafeMutablePointer<UInt8>?, count: Int, of frame: EncodedFrame) -> Int32 {
        let timescale = video.pointee.time_base.den
        return send(data, count: count, stream: video,
                    pts: frame.pts.ticks(since: base, timescale: timescale),
                    dts: frame.dts.ticks(since: base, timescale: timescale),
                    duration: frameRate.frameDuration.ticks(since: .zero, timescale: timescale),
                    flags: frame.isKeyFrame ? AV_PKT_FLAG_KEY : 0)
    }

    /// One packet of sound, its time counted from the same base as the picture's.
    func writeAudio(_ sound: EncodedAudioPacket) throws(OutputError) {
        guard let audio, let stream = self.sound else {
            preconditionFailure("sound written to a muxer opened without a sound track")
        }
        let timescale = stream.pointee.time_base.den
        let rate = Int32(audio.sampleRate)
        let pts = MediaTime(value: sound.pts, timescale: rate).ticks(since: base, timescale: timescale)
        let duration = MediaTime(value: Int64(sound.duration), timescale: rate).ticks(since: .zero, timescale: timescale)
        let status = sound.data.withUnsafeBufferPointer { buffer in
            send(UnsafeMutablePointer(mutating: buffer.baseAddress), count: buffer.count, stream: stream,
                 pts: pts, dts: pts, duration: duration, flags: AV_PKT_FLAG_KEY)
        }
        guard status >= 0 else { throw fail(status, "write a sound packet") }
    }

    func writeTrailer() throws(OutputError) {
        let status = vt_av_write_trailer(context)
        guard status >= 0 else { throw fail(status, "finish the stream") }
    }

    /// Frees the muxer; the owner has closed or freed `context.pb` first.
    private func close() {
        vt_avformat_free_context(context)
        if packet != nil { vt_av_packet_free(&packet) }
    }

    /// Writes `count` bytes at `data` as one packet of `stream` (times in its time base) and
    /// returns libavformat's status. The packet is not reference-counted: av_write_frame writes
    /// it before returning, and it points at nothing afterwards.
    private func send(_ data: UnsafeMutablePointer<UInt8>?, count: Int, stream: UnsafeMutablePointer<AVStream>,
                      pts: Int64, dts: Int64, duration: Int64, flags: Int32) -> Int32 {
        guard let packet else { return vt_averror(ENOMEM) }
        packet.pointee.data = data
        packet.pointee.size = Int32(count)
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

    /// The second elementary stream: the sound, with its codec's setup bytes as extradata.
    private func addSoundStream(_ audio: AudioFormatDescription) throws(OutputError) {
        guard let stream = vt_avformat_new_stream(context, nil), let parameters = stream.pointee.codecpar else {
            throw fail(vt_averror(ENOMEM), "add a sound stream")
        }
        sound = stream
        parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
        parameters.pointee.codec_id = audio.codec == .opus ? AV_CODEC_ID_OPUS : AV_CODEC_ID_AAC
        parameters.pointee.sample_rate = Int32(audio.sampleRate)
        vt_av_channel_layout_default(&parameters.pointee.ch_layout, Int32(audio.channels))
        parameters.pointee.frame_size = Int32(audio.samplesPerPacket)
        parameters.pointee.initial_padding = Int32(audio.primingSamples)
        if let bitRate = audio.bitRate { parameters.pointee.bit_rate = Int64(bitRate) }
        try attach(extradata: audio.magicCookie, to: parameters)
        stream.pointee.time_base = AVRational(num: 1, den: 90_000)
    }

    /// Gives a stream its codec's setup bytes; libavformat frees them with the context and
    /// wants zeroed padding after them.
    private func attach(extradata bytes: [UInt8], to parameters: UnsafeMutablePointer<AVCodecParameters>)
        throws(OutputError) {
        guard !bytes.isEmpty else { return }
        let padded = bytes.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)
        guard let extradata = vt_av_mallocz(padded)?.assumingMemoryBound(to: UInt8.self) else {
            throw fail(vt_averror(ENOMEM), "allocate the codec's setup bytes")
        }
        extradata.update(from: bytes, count: bytes.count)
        parameters.pointee.extradata = extradata
        parameters.pointee.extradata_size = Int32(bytes.count)
    }
}

import CAVFormat
import VTCore
import VTFFmpeg

/// An audio encoder session, beside the video ones and in their shape: made for a codec, rate
/// and channels, it hands out its `AudioFormatDescription` (the AudioSpecificConfig or
/// OpusHead a container stores) before the first sample, takes samples, and gives packets in
/// order with their times. libavcodec's encoders do the work: its native AAC-LC encoder,
/// libopus, and 16-bit PCM.
///
/// Samples are written straight into the frame being filled (`fill`), in the encoder's own
/// sample format (`sampleFormat`), by whoever converts them (the `AudioConformer`). Full
/// frames are held until `release` lets them go, so that the sound can still be cut exactly
/// where the picture ends (`cut`): the recorder releases the sound up to the picture it has
/// written. Sample n of the input is at time n ÷ rate of the recording: the first packet
/// starts at minus the encoder's priming.
public final class AudioCompressionSession {
    public let format: AudioFormatDescription
    /// The sample format frames are filled in.
    public let sampleFormat: AVSampleFormat
    /// libavcodec's name of the encoder ("aac", "libopus", "pcm_s16le").
    public let encoderName: String

    private var context: UnsafeMutablePointer<AVCodecContext>?
    /// The frame being filled.
    private var frame: UnsafeMutablePointer<AVFrame>?
    /// Full frames not sent yet, oldest first.
    private var held: [UnsafeMutablePointer<AVFrame>] = []
    private let packet: UnsafeMutablePointer<AVPacket>
    /// Samples per frame sent.
    private let frameSamples: Int
    /// Whether the encoder takes a shorter last frame; if not, the last one is padded.
    private let takesShortLastFrame: Bool
    private let planes: Int
    private let bytesPerSample: Int
    /// Samples in the frame being filled.
    private var filled = 0
    /// Samples in full frames (sent or held): the frame being filled starts here.
    private var framed: Int64 = 0
    /// Samples sent to the encoder so far.
    private var sent: Int64 = 0
    private var packets: [EncodedAudioPacket] = []
    private var finished = false

    /// The rate a codec records at when the capture offers `rate`: Opus only codes 48 kHz
    /// (and lower rates no microphone is asked for); AAC and PCM keep the capture's rate
    /// where AAC defines it.
    public static func codingRate(for codec: AudioCodec, captureRate rate: Int) -> Int {
        switch codec {
        case .opus: 48_000
        case .aac: aacRates.contains(rate) ? rate : 48_000
        case .pcm: rate
        }
    }

    /// The sampling frequencies AAC has an index for.
    static let aacRates = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000]

    /// The bit rate each codec gets when none is asked for (bits per second).
    public static func defaultBitRate(for codec: AudioCodec) -> Int? {
        switch codec {
        case .aac: 128_000
        case .opus: 96_000
        case .pcm: nil
        }
    }

    /// Samples in each PCM packet: 1024, as AAC's, about 21 ms at 48 kHz.
    static let pcmPacketSamples = 1024

    public init(codec: AudioCodec, sampleRate: Int, channels: Int, bitRate: Int?) throws(AudioEncoderError) {
        if let problem = FFmpegLibraries.loadFailure() { throw AudioEncoderError(problem) }
        let name = switch codec {
        case .aac: "aac"
        case .opus: "libopus"
        case .pcm: "pcm_s16le"
        }
        encoderName = name
        guard let encoder = vt_avcodec_find_encoder_by_name(name) else {
            throw AudioEncoderError("FFmpeg's libavcodec has no \(name) encoder: install a libavcodec built with it")
        }
        guard let packet = vt_av_packet_alloc() else { throw AudioEncoderError("out of memory for the \(name) encoder") }
        self.packet = packet
        guard let context = vt_avcodec_alloc_context3(encoder) else {
            var unused: UnsafeMutablePointer<AVPacket>? = packet
            vt_av_packet_free(&unused)
            throw AudioEncoderError("out of memory for the \(name) encoder")
        }
        self.context = context
        sampleFormat = Self.preferredSampleFormat(encoder.pointee.sample_fmts)
        planes = Self.isPlanar(sampleFormat) ? channels : 1
        bytesPerSample = Self.bytesPerSample(sampleFormat) * (planes == 1 ? channels : 1)
        takesShortLastFrame = encoder.pointee.capabilities & (AV_CODEC_CAP_SMALL_LAST_FRAME | AV_CODEC_CAP_VARIABLE_FRAME_SIZE) != 0

        let rate = bitRate ?? Self.defaultBitRate(for: codec)
        context.pointee.sample_fmt = sampleFormat
        context.pointee.sample_rate = Int32(sampleRate)
        context.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        vt_av_channel_layout_default(&context.pointee.ch_layout, Int32(channels))
        if let rate { context.pointee.bit_rate = Int64(rate) }
        // Containers that keep the codec's setup apart from the packets (MP4, Matroska) need it
        // as extradata, not in-band.
        context.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        let status = vt_avcodec_open2(context, encoder, nil)
        guard status >= 0 else {
            // self is not fully made: free what init took by hand.
            var unused: UnsafeMutablePointer<AVCodecContext>? = context
            vt_avcodec_free_context(&unused)
            var unusedPacket: UnsafeMutablePointer<AVPacket>? = packet
            vt_av_packet_free(&unusedPacket)
            self.context = nil
            throw AudioEncoderError("the \(name) encoder refused \(sampleRate) Hz, \(channels) channel(s)"
                                    + "\(rate.map { ", \($0 / 1000) kb/s" } ?? ""): \(FFmpegLibraries.errorText(status))")
        }
        let codedSamples = Int(context.pointee.frame_size)
        frameSamples = codedSamples > 0 ? codedSamples : Self.pcmPacketSamples
        let extradata = context.pointee.extradata
        let cookie = extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(context.pointee.extradata_size))) } ?? []
        format = AudioFormatDescription(codec: codec, sampleRate: sampleRate, channels: channels,
                                        bitRate: codec == .pcm ? nil : rate, magicCookie: cookie,
                                        primingSamples: Int(context.pointee.initial_padding),
                                        samplesPerPacket: frameSamples)
    }

    deinit {
        vt_av_frame_free(&frame)
        for var frame in held.map(Optional.some) { vt_av_frame_free(&frame) }
        vt_avcodec_free_context(&context)
        var packet: UnsafeMutablePointer<AVPacket>? = self.packet
        vt_av_packet_free(&packet)
    }

    /// Lets `body` write samples into the frame being filled: it is given one pointer per
    /// plane, at the first free sample, and the room left (in samples), and returns how many
    /// it wrote. A frame that is full is encoded.
    public func fill(_ body: (_ planes: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, _ room: Int) throws(AudioEncoderError) -> Int)
        throws(AudioEncoderError) {
        precondition(!finished, "samples after the end")
        let frame = try currentFrame()
        let room = frameSamples - filled
        var pointers = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: planes)
        for plane in 0..<planes {
            pointers[plane] = frame.pointee.extended_data[plane].map { $0 + filled * bytesPerSample }
        }
        let written = try pointers.withUnsafeMutableBufferPointer { buffer throws(AudioEncoderError) in
            try body(buffer.baseAddress!, room)
        }
        precondition(written >= 0 && written <= room, "wrote outside the frame")
        filled += written
        if filled == frameSamples {
            frame.pointee.pts = framed
            held.append(frame)
            self.frame = nil
            framed += Int64(filled)
            filled = 0
        }
    }

    /// Sends the held frames that end at or before `sample` to the encoder.
    public func release(upTo sample: Int64) throws(AudioEncoderError) {
        while let first = held.first, first.pointee.pts + Int64(first.pointee.nb_samples) <= sample {
            held.removeFirst()
            defer {
                var done: UnsafeMutablePointer<AVFrame>? = first
                vt_av_frame_free(&done)
            }
            try send(first)
        }
    }

    /// Writes `count` samples of silence.
    public func fillSilence(_ count: Int) throws(AudioEncoderError) {
        var left = count
        while left > 0 {
            try fill { planes, room throws(AudioEncoderError) in
                let n = min(room, left)
                for plane in 0..<self.planes {
                    if let samples = planes[plane] { memset(samples, 0, n * self.bytesPerSample) }
                }
                left -= n
                return n
            }
        }
    }

    /// Samples taken so far (the next sample's index on the recording's timeline).
    public var samplesTaken: Int64 { framed + Int64(filled) }

    /// The packets made since the last call, in order.
    public func takePackets() -> [EncodedAudioPacket] {
        defer { packets.removeAll(keepingCapacity: true) }
        return packets
    }

    /// Cuts the sound at `end` samples: what was taken beyond it and is not sent yet is
    /// dropped. Returns false when some of it was sent already (the sound then ends later).
    @discardableResult
    public func cut(at end: Int64) -> Bool {
        if let frame, framed + Int64(filled) > end {
            filled = Int(max(0, end - framed))
            if filled == 0 {
                var dropped: UnsafeMutablePointer<AVFrame>? = frame
                vt_av_frame_free(&dropped)
                self.frame = nil
            }
        }
        while let last = held.last, last.pointee.pts + Int64(last.pointee.nb_samples) > end {
            if last.pointee.pts >= end {
                held.removeLast()
                framed = last.pointee.pts
                var dropped: UnsafeMutablePointer<AVFrame>? = last
                vt_av_frame_free(&dropped)
                continue
            }
            // The frame the end falls in is the last one, shortened.
            last.pointee.nb_samples = Int32(end - last.pointee.pts)
            framed = end
            break
        }
        return sent <= end
    }

    /// Encodes everything taken (a short last frame, padded with silence where the encoder
    /// needs whole frames) and drains the encoder.
    public func finish() throws(AudioEncoderError) {
        guard !finished, let context else { return }
        if filled > 0, let frame {
            frame.pointee.pts = framed
            frame.pointee.nb_samples = Int32(filled)
            held.append(frame)
            self.frame = nil
            framed += Int64(filled)
            filled = 0
        }
        if !takesShortLastFrame, let last = held.last, Int(last.pointee.nb_samples) < frameSamples {
            let missing = frameSamples - Int(last.pointee.nb_samples)
            for plane in 0..<planes {
                if let samples = last.pointee.extended_data[plane] {
                    memset(samples + Int(last.pointee.nb_samples) * bytesPerSample, 0, missing * bytesPerSample)
                }
            }
            last.pointee.nb_samples = Int32(frameSamples)
        }
        try release(upTo: .max)
        finished = true
        let status = vt_avcodec_send_frame(context, nil)
        guard status >= 0 else { throw failure("flushing", status) }
        try receivePackets()
    }

    private func currentFrame() throws(AudioEncoderError) -> UnsafeMutablePointer<AVFrame> {
        if let frame { return frame }
        guard let context else { throw AudioEncoderError("the \(encoderName) encoder is closed") }
        guard let made = vt_av_frame_alloc() else { throw AudioEncoderError("out of memory for audio frames") }
        made.pointee.format = sampleFormat.rawValue
        made.pointee.nb_samples = Int32(frameSamples)
        made.pointee.sample_rate = context.pointee.sample_rate
        let copied = vt_av_channel_layout_copy(&made.pointee.ch_layout, &context.pointee.ch_layout)
        let status = copied < 0 ? copied : vt_av_frame_get_buffer(made, 0)
        guard status >= 0 else {
            var unused: UnsafeMutablePointer<AVFrame>? = made
            vt_av_frame_free(&unused)
            throw failure("allocating a frame", status)
        }
        frame = made
        return made
    }

    private func send(_ frame: UnsafeMutablePointer<AVFrame>) throws(AudioEncoderError) {
        guard let context else { return }
        let status = vt_avcodec_send_frame(context, frame)
        guard status >= 0 else { throw failure("encoding", status) }
        sent = frame.pointee.pts + Int64(frame.pointee.nb_samples)
        try receivePackets()
    }

    private func receivePackets() throws(AudioEncoderError) {
        guard let context else { return }
        while true {
            let status = vt_avcodec_receive_packet(context, packet)
            if status == vt_averror_eagain() || status == vt_averror_eof() { return }
            guard status >= 0 else { throw failure("encoding", status) }
            defer { vt_av_packet_unref(packet) }
            let data = Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
            let duration = packet.pointee.duration > 0 ? Int(packet.pointee.duration) : frameSamples
            let pts = packet.pointee.pts == vt_av_nopts_value() ? (packets.last?.end ?? -Int64(format.primingSamples))
                : packet.pointee.pts
            packets.append(EncodedAudioPacket(data: data, pts: pts, duration: duration))
        }
    }

    private func failure(_ what: String, _ status: Int32) -> AudioEncoderError {
        AudioEncoderError("the \(encoderName) encoder failed \(what): \(FFmpegLibraries.errorText(status))")
    }

    /// Float samples where the encoder takes them (AAC: planar float; Opus: interleaved
    /// float), else the encoder's first choice (PCM: 16-bit).
    private static func preferredSampleFormat(_ list: UnsafePointer<AVSampleFormat>?) -> AVSampleFormat {
        guard let list else { return AV_SAMPLE_FMT_S16 }
        var offered: [AVSampleFormat] = []
        var index = 0
        while list[index] != AV_SAMPLE_FMT_NONE {
            offered.append(list[index])
            index += 1
        }
        for wanted in [AV_SAMPLE_FMT_FLTP, AV_SAMPLE_FMT_FLT] where offered.contains(wanted) { return wanted }
        return offered.first ?? AV_SAMPLE_FMT_S16
    }

    static func isPlanar(_ format: AVSampleFormat) -> Bool {
        [AV_SAMPLE_FMT_U8P, AV_SAMPLE_FMT_S16P, AV_SAMPLE_FMT_S32P, AV_SAMPLE_FMT_FLTP, AV_SAMPLE_FMT_DBLP,
         AV_SAMPLE_FMT_S64P].contains(format)
    }

    static func bytesPerSample(_ format: AVSampleFormat) -> Int {
        switch format {
        case AV_SAMPLE_FMT_U8, AV_SAMPLE_FMT_U8P: 1
        case AV_SAMPLE_FMT_S16, AV_SAMPLE_FMT_S16P: 2
        case AV_SAMPLE_FMT_DBL, AV_SAMPLE_FMT_DBLP, AV_SAMPLE_FMT_S64, AV_SAMPLE_FMT_S64P: 8
        default: 4
        }
    }
}

/// The codecs a recording's sound can be stored as.
public enum AudioCodec: String, CaseIterable, Sendable, Codable {
    /// AAC-LC (ISO/IEC 14496-3), FFmpeg's native encoder: MP4, MPEG-TS, Matroska.
    case aac
    /// Opus (RFC 6716) through libopus: Matroska, MP4, MPEG-TS.
    case opus
    /// 16-bit little-endian PCM, uncompressed: Matroska only.
    case pcm
}

/// What a decoder needs before the first audio packet (CoreMedia's
/// `CMAudioFormatDescription`): the codec, the stream's rate and channels, the codec's setup
/// bytes and the samples its encoder put before the sound.
public struct AudioFormatDescription: Sendable, Equatable {
    public var codec: AudioCodec
    /// Samples per second per channel; also the track's timescale in every container.
    public var sampleRate: Int
    public var channels: Int
    /// The bit rate asked of the encoder (bits per second); nil for PCM.
    public var bitRate: Int?
    /// The codec's setup bytes (`kCMFormatDescriptionExtension_...MagicCookie`): AAC's
    /// AudioSpecificConfig, Opus's identification header ("OpusHead", RFC 7845 §5.1), as
    /// libavcodec gives them as extradata; empty for PCM.
    public var magicCookie: [UInt8]
    /// Samples the encoder puts before the first input sample (AAC's priming, Opus's
    /// pre-skip), at `sampleRate`: a player skips them. The first packet's `pts` is minus this.
    public var primingSamples: Int
    /// Samples in each packet but the last (1024 for AAC, 960 for Opus at 48 kHz).
    public var samplesPerPacket: Int

    public init(codec: AudioCodec, sampleRate: Int, channels: Int, bitRate: Int?, magicCookie: [UInt8],
                primingSamples: Int, samplesPerPacket: Int) {
        precondition(sampleRate > 0 && channels > 0 && samplesPerPacket > 0, "a sound has a rate, channels and packets")
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitRate = bitRate
        self.magicCookie = magicCookie
        self.primingSamples = primingSamples
        self.samplesPerPacket = samplesPerPacket
    }

    /// Bytes per sample frame (all channels) of PCM; 0 for the compressed codecs.
    public var pcmBytesPerFrame: Int { codec == .pcm ? 2 * channels : 0 }
}

/// One compressed audio packet as an audio encoder session hands it out, in order.
///
/// Times are in samples at the format's `sampleRate` on the recording's timeline, where 0 is
/// the instant the first video frame is shown: the first packet of an encoder with priming
/// starts before 0 (at minus `primingSamples`), and a player shows sample 0 with picture 0.
public struct EncodedAudioPacket: Sendable, Equatable {
    public var data: [UInt8]
    /// The packet's first sample (priming included), in samples from the recording's start.
    public var pts: Int64
    /// Samples the packet holds, priming included.
    public var duration: Int

    public init(data: [UInt8], pts: Int64, duration: Int) {
        precondition(duration > 0, "an audio packet holds samples")
        self.data = data
        self.pts = pts
        self.duration = duration
    }

    /// One past the packet's last sample.
    public var end: Int64 { pts + Int64(duration) }
}

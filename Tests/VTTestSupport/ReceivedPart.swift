/// What one receiver process took in from one connection (for UDP, which has none, from the
/// process's whole life), decoded.
public struct ReceivedPart: Sendable {
    /// Which receiver process it came from: 0 for the first, 1 after one restart, and so on.
    public var generation: Int
    /// The video frames, in the order they were decoded, as framemd5 lists them.
    public var frames: [FrameChecksum]
    /// The sound frames decoded beside them (framemd5 of the stream's sound as well, so sound
    /// that is declared but does not decode counts as none).
    public var soundFrames: [FrameChecksum]
    /// How an RTSP publisher asked for the media to travel in SETUP; nil for other kinds.
    public var rtspTransport: RTSPTransport?
    /// The receiver's messages and the decoder's, for failure messages and for damage.
    public var standardError: String

    public init(generation: Int, checksums: FrameChecksums, rtspTransport: RTSPTransport? = nil,
                standardError: String) {
        self.generation = generation
        frames = checksums.video
        soundFrames = checksums.audio
        self.rtspTransport = rtspTransport
        self.standardError = standardError
    }

    public var hashes: [String] { frames.map(\.hash) }
    public var soundHashes: [String] { soundFrames.map(\.hash) }
    public var hasSound: Bool { !soundFrames.isEmpty }

    /// The lines in which ffmpeg's demuxer or decoder reported damage: a lost or late packet
    /// shows up as one of these, where a clean stream has none.
    public var decodingErrors: [String] {
        let signs = ["corrupt", "error while decoding", "concealing", "Invalid NAL", "non-existing PPS",
                     "decode_slice_header error", "no frame!", "missing picture", "Invalid data found"]
        return standardError.split(separator: "\n").map(String.init).filter { line in
            signs.contains { line.localizedCaseInsensitiveContains($0) }
        }
    }
}

/// The lower transport an RTSP publisher chose: RTP interleaved on its TCP connection, or RTP
/// over UDP ports of its own.
public enum RTSPTransport: Sendable, Equatable {
    case tcp
    case udp
}

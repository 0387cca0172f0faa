import VTCore

/// `--encoder copy`: no encoder at all. A camera's frames go to the output as the camera sent
/// them and the source checked them (`CompressedFrame`): Motion-JPEG frames, each a keyframe,
/// or H.264 access units with the camera's parameter sets as the format. They come in the order
/// they were captured and are decoded at the time they are shown (a camera's H.264 has no
/// B-frames to reorder). What the encoder settings ask (speed, bit rate) does not apply: the
/// camera chose them, and a keyframe asked for (a segment's start) comes with the camera's
/// next one.
public final class CopySession: CompressionSession {
    public let encoderName = "copy"
    /// The format of the last frame passed on; before the first, `codec` at the negotiated
    /// size (for H.264 without parameter sets, which come with the camera's first IDR picture).
    public private(set) var formatDescription: VideoFormatDescription
    public let resolvedSettings: EncoderSettings
    public let reorderDelay = 0
    private let output: EncodedFrameHandler

    public init(codec: VideoCodec, width: Int, height: Int, settings: EncoderSettings,
                output: @escaping EncodedFrameHandler) {
        formatDescription = codec == .mjpeg ? .mjpeg(width: width, height: height)
            : VideoFormatDescription(width: width, height: height, sequenceParameterSets: [], pictureParameterSets: [])
        resolvedSettings = settings
        self.output = output
    }

    public func prepare() throws(EncoderError) {}

    public var takesCompressedFrames: Bool { true }

    public func encode(_ buffer: PixelBuffer, pts: MediaTime, forceKeyFrame: Bool, token: FrameToken) throws {
        preconditionFailure("--encoder copy takes the camera's frames, not pictures")
    }

    public func pass(_ compressed: CompressedFrame, pts: MediaTime, forceKeyFrame: Bool, token: FrameToken) throws {
        formatDescription = compressed.format
        try output(EncodedFrame(data: compressed.data, pts: pts, dts: pts, isKeyFrame: compressed.isKeyFrame, token: token))
    }

    public func completeFrames() throws {}

    public func invalidate() {}
}

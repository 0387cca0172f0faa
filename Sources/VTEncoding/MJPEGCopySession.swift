import VTCore

/// `--encoder copy`: no encoder at all. A camera's Motion-JPEG frames go to the output as the
/// camera sent them, each one a keyframe (a JPEG stands alone), in the order they came, so each
/// is decoded at the time it is shown. What the encoder settings ask (speed, bit rate,
/// keyframe interval) does not apply: the camera chose them.
public final class MJPEGCopySession: CompressionSession {
    public let encoderName = "copy"
    public let formatDescription: VideoFormatDescription
    public let resolvedSettings: EncoderSettings
    public let reorderDelay = 0
    private let output: EncodedFrameHandler

    public init(width: Int, height: Int, settings: EncoderSettings, output: @escaping EncodedFrameHandler) {
        formatDescription = .mjpeg(width: width, height: height)
        resolvedSettings = settings
        self.output = output
    }

    public func prepare() throws(EncoderError) {}

    public var takesCompressedFrames: Bool { true }

    public func encode(_ buffer: PixelBuffer, pts: MediaTime, forceKeyFrame: Bool, token: FrameToken) throws {
        preconditionFailure("--encoder copy takes the camera's frames, not pictures")
    }

    public func pass(_ compressed: [UInt8], pts: MediaTime, forceKeyFrame: Bool, token: FrameToken) throws {
        try output(EncodedFrame(data: compressed, pts: pts, dts: pts, isKeyFrame: true, token: token))
    }

    public func completeFrames() throws {}

    public func invalidate() {}
}

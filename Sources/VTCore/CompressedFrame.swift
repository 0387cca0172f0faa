/// A frame as a camera compressed it, ready to be stored as it is (`--encoder copy`): checked
/// by the source, which also says what decodes it.
public struct CompressedFrame: Sendable, Equatable {
    /// A whole JPEG, or an H.264 access unit in AVCC form without its parameter sets.
    public var data: [UInt8]
    /// What decodes it: Motion JPEG of the negotiated size, or the H.264 stream's parameter sets.
    public var format: VideoFormatDescription
    /// A frame decoding can start at: every JPEG, an H.264 IDR picture.
    public var isKeyFrame: Bool

    public init(data: [UInt8], format: VideoFormatDescription, isKeyFrame: Bool) {
        self.data = data
        self.format = format
        self.isKeyFrame = isKeyFrame
    }
}

/// One compressed access unit as a `CompressionSession` hands it out (CoreMedia's
/// `CMSampleBuffer` from the VideoToolbox output callback), in decode order.
public struct EncodedFrame: Sendable {
    /// The access unit in AVCC form: each NAL unit preceded by its length as a 4-byte
    /// big-endian integer, without parameter sets (those live in the `FormatDescription`).
    public var data: [UInt8]
    public var pts: MediaTime
    public var dts: MediaTime
    /// True for an IDR picture: a point where decoding can start
    /// (VideoToolbox: no `kCMSampleAttachmentKey_NotSync`).
    public var isKeyFrame: Bool

    public init(data: [UInt8], pts: MediaTime, dts: MediaTime, isKeyFrame: Bool) {
        self.data = data
        self.pts = pts
        self.dts = dts
        self.isKeyFrame = isKeyFrame
    }
}

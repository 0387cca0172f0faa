/// An opaque per-frame value handed to `CompressionSession.encode` and given back, unchanged,
/// on the `EncodedFrame` made of that picture (VideoToolbox's `sourceFrameRefcon`).
///
/// Whatever is known about a frame before it is encoded (when it was captured, whether it
/// starts a segment) is found again by its token, never by its presentation time, which an
/// encoder may round (x264 snaps times to its timebase).
public struct FrameToken: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64

    public init(_ rawValue: UInt64) {
        self.rawValue = rawValue
    }

    public var description: String { "#\(rawValue)" }
}

/// One compressed access unit as a `CompressionSession` hands it out (CoreMedia's
/// `CMSampleBuffer` from the VideoToolbox output callback), in decode order.
public struct EncodedFrame: Sendable {
    /// The access unit in AVCC form: each NAL unit preceded by its length as a 4-byte
    /// big-endian integer, without parameter sets (those live in the `VideoFormatDescription`).
    public var data: [UInt8]
    public var pts: MediaTime
    public var dts: MediaTime
    /// True for an IDR picture: a point where decoding can start
    /// (VideoToolbox: no `kCMSampleAttachmentKey_NotSync`).
    public var isKeyFrame: Bool
    /// The token the picture was given to `encode` with.
    public var token: FrameToken
    /// CLOCK_MONOTONIC nanoseconds when the picture was captured, for a source with a capture
    /// clock (a camera): what ties the stream's times to the moment something happened (an
    /// event asked for now). Set by the recorder; nil from a session and for a file.
    public var captureTime: Int64?

    public init(data: [UInt8], pts: MediaTime, dts: MediaTime, isKeyFrame: Bool, token: FrameToken,
                captureTime: Int64? = nil) {
        self.data = data
        self.pts = pts
        self.dts = dts
        self.isKeyFrame = isKeyFrame
        self.token = token
        self.captureTime = captureTime
    }
}

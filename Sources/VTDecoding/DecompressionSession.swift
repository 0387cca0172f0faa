import VTCore

/// One decoded picture with the time and token of the access unit it came from (the
/// VideoToolbox decode output callback's image buffer, presentation time and
/// `sourceFrameRefcon`).
///
/// The frame holds the picture's lease: the decoder's memory is handed out as it is, not
/// copied, and goes back to the decoder when the frame's last owner lets go of it.
public struct DecodedFrame: ~Copyable {
    public let picture: PixelBufferLease
    public let pts: MediaTime
    /// The token of the `EncodedFrame` this picture was decoded from.
    public let token: FrameToken
    /// The decoder concealed damage in this picture, or it refers to pictures that were lost.
    public let isDamaged: Bool
    /// Full-range levels (0–255, as JPEG has them) rather than video's 16–235.
    public let isFullRange: Bool

    /// The picture, for reading while the frame is held.
    public var pixelBuffer: PixelBuffer { picture.buffer }
}

/// Receives each decoded picture in presentation order. An error thrown here ends the decode
/// call that delivered it.
public typealias DecodedFrameHandler = (consuming DecodedFrame) throws -> Void

/// An H.264 decoder with VideoToolbox's shape (`VTDecompressionSession`): made from a format
/// description, fed AVCC access units with their times, handing out pictures in presentation
/// order, then finished and invalidated. Used from one thread.
public protocol DecompressionSession: AnyObject {
    /// "software" or "vaapi": which decoder runs.
    var decoderName: String { get }

    /// The parameter sets the session decodes with; it follows a new description given with a
    /// frame (a new size mid-stream), as a VideoToolbox session accepts a new one.
    var formatDescription: VideoFormatDescription { get }

    /// Decodes one access unit (`VTDecompressionSessionDecodeFrame`); pictures go to the output
    /// handler, possibly later ones. `format`, when given and different from the session's,
    /// takes effect from this frame on (the pictures before it are finished first).
    /// A damaged access unit throws `DecoderError.damaged` and the session goes on with the
    /// next; other errors end it.
    func decode(_ frame: EncodedFrame, format: VideoFormatDescription?) throws

    /// Emits every picture the decoder still holds (`VTDecompressionSessionFinishDelayedFrames`).
    func finishDelayedFrames() throws

    /// Releases the decoder (`VTDecompressionSessionInvalidate`). Pictures already handed out
    /// stay valid until their frames are let go.
    func invalidate()
}

extension DecompressionSession {
    public func decode(_ frame: EncodedFrame) throws { try decode(frame, format: nil) }
}

/// Why decoding failed.
public enum DecoderError: ReportableError, Equatable {
    /// The decoder could not be opened (or its library loaded); exit 4.
    case openFailed(decoder: String, reason: String)
    /// One access unit could not be decoded; the session goes on with the next.
    case damaged(token: FrameToken, reason: String)
    /// The decoder gave pictures of a kind vtrecord does not handle (4:2:2, 10-bit).
    case unsupportedPicture(decoder: String, format: String)
    /// The session failed as a whole; exit 4.
    case failed(decoder: String, reason: String)

    public var exitStatus: ExitStatus {
        switch self {
        case .damaged, .unsupportedPicture: .usage
        case .openFailed, .failed: .encoder
        }
    }

    public var description: String {
        switch self {
        case let .openFailed(decoder, reason): "the \(decoder) decoder could not be opened: \(reason)"
        case let .damaged(token, reason): "access unit \(token) does not decode: \(reason)"
        case let .unsupportedPicture(decoder, format):
            "the \(decoder) decoder gives \(format) pictures; vtrecord reads 8-bit 4:2:0 H.264 only"
        case let .failed(decoder, reason): "the \(decoder) decoder failed: \(reason)"
        }
    }
}

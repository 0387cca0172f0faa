import VTH264
import VTPictures

/// How `--encoder copy` checks a camera's frame before it is stored (`--check-frames`).
public enum CompressedFrameCheck: Sendable {
    /// A JPEG's markers and size (`JPEGFrameCheck`), an H.264 access unit's NAL structure
    /// (`AccessUnitCheck`): cheap, and what a cut-short or garbled frame fails.
    case markers
    /// Those, and a full decode, which also finds damage inside the picture: libturbojpeg's
    /// for a JPEG; for H.264, the check `h264` makes (VTDecoding's `H264DecodeCheck`, on
    /// libavcodec: capture does not decode). `h264` throws when the check cannot be made.
    case decoded(h264: @Sendable () throws -> any AccessUnitDecodeCheck)
}

/// How `--encoder copy` checks a camera's frame before it is stored (`--check-frames`).
public enum CompressedFrameCheck: Sendable {
    /// A JPEG's markers and size (`JPEGFrameCheck`), an H.264 access unit's NAL structure
    /// (`AccessUnitCheck`): cheap, and what a cut-short or garbled frame fails.
    case markers
    /// Those, and a full decode (libturbojpeg; libavcodec for H.264, `H264DecodeCheck`),
    /// which also finds damage inside the picture.
    case decoded
}

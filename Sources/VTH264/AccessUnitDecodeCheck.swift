import VTCore

/// A full decode of a camera's H.264 access units, one at a time, for what `AccessUnitCheck`
/// cannot see: damage inside a slice's data (`--check-frames decode` with `--encoder copy`).
/// The decoding side (VTDecoding's `H264DecodeCheck`) makes one and hands it to the source,
/// which never decodes itself; the source calls it on its capture thread alone.
public protocol AccessUnitDecodeCheck: AnyObject {
    /// Decodes one access unit (AVCC, with the stream's parameter sets in `format`).
    func check(_ unit: [UInt8], format: VideoFormatDescription, isKeyFrame: Bool) -> AccessUnitDecodeFinding
}

/// What a decode check found of one access unit.
public enum AccessUnitDecodeFinding: Equatable, Sendable {
    case whole
    /// The unit, or one before it whose picture came out with it, did not decode whole.
    case damaged(String)
    /// The decoder cannot decode this stream at all (its library, a 4:2:2 picture): the check
    /// cannot be made, now or for any later unit, and the source goes on with the structure
    /// check alone.
    case cannotCheck(String)
}

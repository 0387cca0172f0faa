import VTCore
import VTEncoding

/// An encoder for the Recorder's tests: it takes every picture, first calling `onEncode` with
/// the picture's index (to fail, or to hold up the encoder thread), and notes the presentation
/// times it was given and how often it was invalidated. It never produces output.
final class StubSession: CompressionSession, @unchecked Sendable {
    let encoderName = "stub"
    let formatDescription = FormatDescription(width: 64, height: 64, sequenceParameterSets: [], pictureParameterSets: [])
    let resolvedSettings = EncoderSettings()
    private let onEncode: (_ index: Int) throws -> Void
    private(set) var encoded: [Int64] = []
    private(set) var invalidations = 0

    init(onEncode: @escaping (_ index: Int) throws -> Void = { _ in }) { self.onEncode = onEncode }

    func prepare() throws(EncoderError) {}
    func encode(_ buffer: PixelBuffer, pts: MediaTime, forceKeyFrame: Bool) throws {
        try onEncode(encoded.count)
        encoded.append(pts.value)
    }
    func completeFrames() throws {}
    func invalidate() { invalidations += 1 }
}

import VTCore
import VTEncoding

/// An encoder for the Recorder's tests: it takes every picture, first calling `onEncode` with
/// the picture's index (to fail, or to hold up the encoder thread), and notes the presentation
/// times it was given and how often it was invalidated. With `output`, it hands out a small
/// access unit per picture through the recorder's handler, `delay` pictures late (as an
/// encoder with lookahead does), with a presentation time rounded to whole frames (as x264
/// does) and the picture's token; `completeFrames` hands out the rest.
final class StubSession: CompressionSession, @unchecked Sendable {
    // @unchecked Sendable: made by a test and then used by the recorder's encoder thread only.
    let encoderName = "stub"
    let formatDescription = VideoFormatDescription(width: 64, height: 64, sequenceParameterSets: [[0x67, 0x42, 0x00, 0x1E]],
                                                   pictureParameterSets: [[0x68, 0xCE, 0x38, 0x80]])
    let resolvedSettings = EncoderSettings()
    /// Pictures come out in the order they went in.
    let reorderDelay = 0
    private let onEncode: (_ index: Int) throws -> Void
    private let output: EncodedFrameHandler?
    private let delay: Int
    private var held: [(pts: MediaTime, token: FrameToken)] = []
    private(set) var encoded: [Int64] = []
    private(set) var tokens: [FrameToken] = []
    private(set) var invalidations = 0

    init(output: EncodedFrameHandler? = nil, delay: Int = 0,
         onEncode: @escaping (_ index: Int) throws -> Void = { _ in }) {
        self.output = output
        self.delay = delay
        self.onEncode = onEncode
    }

    func prepare() throws(EncoderError) {}

    func encode(_ buffer: PixelBuffer, pts: MediaTime, forceKeyFrame: Bool, token: FrameToken) throws {
        try onEncode(encoded.count)
        encoded.append(pts.value)
        tokens.append(token)
        guard output != nil else { return }
        held.append((pts, token))
        while held.count > delay { try emit() }
    }

    func completeFrames() throws {
        while !held.isEmpty { try emit() }
    }

    func invalidate() { invalidations += 1 }

    private func emit() throws {
        let (pts, token) = held.removeFirst()
        // To the nearest 1/30 s, as x264 rounds a camera's times to its timebase.
        let rounded = MediaTime(value: Int64((pts.seconds * 30).rounded()), timescale: 30)
        let slice: [UInt8] = [0, 0, 0, 3, 0x65, 0x88, 0x84]
        try output?(EncodedFrame(data: slice, pts: rounded, dts: rounded, isKeyFrame: token.rawValue == 0, token: token))
    }
}

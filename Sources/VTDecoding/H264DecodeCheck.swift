import VTCore
import VTFFmpeg
import VTH264

/// `--check-frames decode` for a camera's H.264 (`--encoder copy`): each access unit that
/// passed the structure check (`AccessUnitCheck`) is decoded by libavcodec, in software on one
/// thread, and one whose picture the decoder could not decode whole (it concealed damage inside
/// a slice, or refused the unit) is reported, so that the source drops it and what follows up to
/// the next IDR picture. The pictures are let go at once.
///
/// Each picture comes out with its unit unless the stream's VUI says it reorders pictures;
/// then a damaged picture may come out a unit or two late, after its unit was stored, and is
/// reported against the unit it came out with (which the source drops, with what follows).
public final class H264DecodeCheck: AccessUnitDecodeCheck {
    public typealias Finding = AccessUnitDecodeFinding

    private var session: LibavcodecDecompressionSession?
    /// Tokens of the damaged pictures handed out during the current `check`.
    private var damaged: [FrameToken] = []
    private var next: UInt64 = 0
    /// Why the decoder could not go on: the check is over for this stream (a decoder made
    /// again would start on a unit that refers to pictures it never saw).
    private var failure: String?

    /// Fails when FFmpeg's libraries cannot be loaded: the check cannot be made at all.
    public init() throws(DecoderError) {
        if let problem = FFmpegLibraries.loadFailure() { throw .openFailed(decoder: "software", reason: problem) }
    }

    /// Decodes one access unit (AVCC, with the stream's parameter sets in `format`).
    public func check(_ unit: [UInt8], format: VideoFormatDescription, isKeyFrame: Bool) -> Finding {
        if let failure { return .cannotCheck(failure) }
        next += 1
        let token = FrameToken(next)
        let frame = EncodedFrame(data: unit, pts: MediaTime(value: Int64(next), timescale: 30),
                                 dts: MediaTime(value: Int64(next), timescale: 30), isKeyFrame: isKeyFrame, token: token)
        damaged.removeAll(keepingCapacity: true)
        do {
            if let session {
                try session.decode(frame, format: format)
            } else {
                // Not refusing damage (err_detect explode): that also fails a unit for an SEI
                // that does not parse, which a camera may send with every IDR picture. On one
                // thread, what the decoder concealed is flagged on the picture it hands out.
                let session = try LibavcodecDecompressionSession(
                    format: format, backend: .software, threads: 1, showsAtOnce: true
                ) { [unowned self] picture in
                    if picture.isDamaged { damaged.append(picture.token) }
                }
                self.session = session
                try session.decode(frame, format: nil)
            }
        } catch DecoderError.damaged(_, let reason) {
            return .damaged("it does not decode: \(reason)")
        } catch {
            session = nil
            failure = "\(error)"
            return .cannotCheck("\(error)")
        }
        guard let first = damaged.first else { return .whole }
        return .damaged(first == token ? "the decoder concealed damage in its picture"
                                       : "the decoder concealed damage in the picture of an earlier unit, already stored")
    }
}

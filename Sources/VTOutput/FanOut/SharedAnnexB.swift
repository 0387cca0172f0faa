import Synchronization
import VTCore
import VTH264

/// An access unit's Annex B form (SPS and PPS before a keyframe), made once, by the first
/// output that writes it, for every output that takes Annex B: a raw stream or MPEG-TS
/// recording and the streams beside it (MPEG-TS, FLV and RTP all take it) cost one
/// conversion, not one each.
public final class SharedAnnexB: Sendable {
    private let frame: EncodedFrame
    private let format: VideoFormatDescription
    private let made = Mutex<[UInt8]?>(nil)
    /// The bytes the Annex B form takes: the access unit's, each length prefix a start code,
    /// and the parameter sets with theirs before a keyframe.
    public let byteCount: Int

    public init(_ frame: EncodedFrame, format: VideoFormatDescription) {
        self.frame = frame
        self.format = format
        let parameterSets = frame.isKeyFrame ? format.sequenceParameterSets + format.pictureParameterSets : []
        // A 4-byte length prefix becomes a 4-byte start code (every encoder here writes 4).
        byteCount = frame.data.count + parameterSets.reduce(0) { $0 + 4 + $1.count }
    }

    /// Whether an output has made the bytes yet.
    public var isMade: Bool { made.withLock { $0 != nil } }

    /// The bytes; the array's storage is shared, not copied, by each caller.
    public func bytes() throws(OutputError) -> [UInt8] {
        try made.withLock { (made) throws(OutputError) -> [UInt8] in
            if let made { return made }
            do {
                let bytes = try AnnexB.annexB(frame, format: format)
                made = bytes
                return bytes
            } catch {
                throw .invalidAccessUnit(reason: "\(error)")
            }
        }
    }
}

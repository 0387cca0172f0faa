import Synchronization
import VTCore
import VTH264

/// An access unit's Annex B form (SPS and PPS before a keyframe), made once, by the first
/// stream that sends it, for every stream beside the recording: MPEG-TS, FLV and RTP all take
/// it, so three streams cost one conversion, not three.
final class SharedAnnexB: Sendable {
    private let frame: EncodedFrame
    private let format: VideoFormatDescription
    private let made = Mutex<[UInt8]?>(nil)

    init(_ frame: EncodedFrame, format: VideoFormatDescription) {
        self.frame = frame
        self.format = format
    }

    /// The bytes; the array's storage is shared, not copied, by each caller.
    func bytes() throws(OutputError) -> [UInt8] {
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

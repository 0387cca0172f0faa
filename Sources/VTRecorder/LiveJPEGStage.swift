import Synchronization
import VTCapture
import VTCore

/// `--http`'s Motion JPEG (`/stream.mjpeg`): where the pictures go, and how they are made.
public struct LiveJPEGs: Sendable {
    /// Whether a client waits for a picture: nothing is made or copied otherwise.
    public var wanted: @Sendable () -> Bool
    public var publish: @Sendable ([UInt8]) -> Void
    /// Seconds between the JPEGs made from pictures (a camera's own come as they come).
    public var interval: Double
    /// A JPEG of a picture, on the thread the stage makes them on.
    public var encode: @Sendable (PixelBuffer) throws -> [UInt8]
    /// What to say of a JPEG that could not be made.
    public var warn: @Sendable (String) -> Void

    public init(wanted: @escaping @Sendable () -> Bool, publish: @escaping @Sendable ([UInt8]) -> Void,
                interval: Double, encode: @escaping @Sendable (PixelBuffer) throws -> [UInt8],
                warn: @escaping @Sendable (String) -> Void) {
        self.wanted = wanted
        self.publish = publish
        self.interval = interval
        self.encode = encode
        self.warn = warn
    }
}

/// Hands the live MJPEG stream its pictures while a client wants them: a Motion-JPEG camera's
/// own JPEG of each frame, as it came (no encode); otherwise, every `interval`, the frame
/// itself goes to a still thread of its own that makes the JPEG (as `--snapshot` does, so the
/// encoder thread never waits for a JPEG encoder, and a JPEG still being made when the next
/// is due makes that one wait: a slow machine serves fewer pictures, never fewer frames).
final class LiveJPEGStage: RecordingStage {
    private let jpegs: LiveJPEGs
    private let taker: StillTaker
    private var nextDue = 0.0
    /// A picture asked of the still thread and not yet made.
    private let asked = Flag()

    private final class Flag: Sendable {
        let raised = Atomic<Bool>(false)
    }

    init(_ jpegs: LiveJPEGs) {
        self.jpegs = jpegs
        taker = StillTaker(requestsOnly: jpegs.warn)
    }

    func encoded(_ frame: inout CapturedFrame?) {
        guard frame != nil, jpegs.wanted() else { return }
        if let compressed = frame?.compressed {
            // A camera's H.264 (copied) is no JPEG, and has no picture to make one of.
            if compressed.format.codec == .mjpeg { jpegs.publish(compressed.data) }
            return
        }
        let seconds = frame?.pts.seconds ?? 0
        guard seconds >= nextDue, !asked.raised.load(ordering: .acquiring) else { return }
        nextDue = seconds + jpegs.interval * 0.9
        asked.raised.store(true, ordering: .releasing)
        taker.request({ [jpegs] still in
                          switch still {
                          case .picture(let picture): jpegs.publish(try jpegs.encode(picture))
                          case .cameraJPEG(let jpeg): jpegs.publish(jpeg)
                          }
                      },
                      answer: { [asked] _ in asked.raised.store(false, ordering: .releasing) })
        taker.offer(frame.take()!)
    }

    func finish() { taker.finish() }
}

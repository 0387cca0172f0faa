import Foundation
import Synchronization
import VTCapture
import VTCore
import VTEncoding
import VTOutput

/// `--live-size`, `--live-bitrate`: a second, low-latency encode of the captured pictures for
/// the live view, as IP cameras serve a sub-stream, so the recording's own settings (x264's
/// lookahead, B-frames, a long keyframe interval) do not decide how late the live picture is.
public struct LiveEncoding {
    /// A picture ready for the second encoder (scaled to its size), made on the encoder thread
    /// from the recording's picture, which is let go right after.
    public var prepare: @Sendable (PixelBuffer) -> PixelBuffer
    /// The second encoder, made on its own thread.
    public var makeSession: @Sendable (@escaping EncodedFrameHandler) throws -> any CompressionSession
    /// Where its frames go (the live stream), used on its thread only.
    public var output: any MediaOutput
    public var warn: @Sendable (String) -> Void

    public init(prepare: @escaping @Sendable (PixelBuffer) -> PixelBuffer,
                makeSession: @escaping @Sendable (@escaping EncodedFrameHandler) throws -> any CompressionSession,
                output: any MediaOutput, warn: @escaping @Sendable (String) -> Void) {
        self.prepare = prepare
        self.makeSession = makeSession
        self.output = output
        self.warn = warn
    }
}

/// Runs the second encode (`LiveEncoding`) on a thread of its own (`vtrecord-live`). The
/// encoder thread hands it each picture, already scaled, through a one-picture mailbox: a
/// picture that comes while the one before is still being encoded replaces it, so a second
/// encoder that falls behind costs the live view pictures (counted), never the recording.
final class LiveEncodeStage: RecordingStage {
    /// What the encoder thread and the live thread share.
    private final class Shared: Sendable {
        struct Mailbox {
            var picture: (buffer: PixelBuffer, pts: MediaTime)?
            var finished = false
        }

        let mailbox = Mutex(Mailbox())
        let wake = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
    }

    /// The session and the output, owned by the live thread: the stage only starts and ends it.
    private final class Encoder: @unchecked Sendable {
        let encoding: LiveEncoding
        var session: (any CompressionSession)?
        var format: VideoFormatDescription?
        var token: UInt64 = 0
        var failed = false

        init(_ encoding: LiveEncoding) { self.encoding = encoding }
    }

    private let prepare: @Sendable (PixelBuffer) -> PixelBuffer
    private let shared = Shared()

    init(_ encoding: LiveEncoding) {
        prepare = encoding.prepare
        let encoder = Encoder(encoding)
        Thread.start(named: "vtrecord-live") { [shared] in
            Self.run(encoder, shared)
            shared.done.signal()
        }
    }

    func encoded(_ frame: inout CapturedFrame?) {
        guard let pts = frame?.pts, let picture = frame?.buffer else { return }
        let ready = prepare(picture)
        let wasEmpty = shared.mailbox.withLock { mailbox in
            let wasEmpty = mailbox.picture == nil
            mailbox.picture = (ready, pts)
            return wasEmpty
        }
        if wasEmpty { shared.wake.signal() }
    }

    func finish() {
        shared.mailbox.withLock { $0.finished = true }
        shared.wake.signal()
        shared.done.wait()
    }

    private static func run(_ encoder: Encoder, _ shared: Shared) {
        let encoding = encoder.encoding
        do {
            let session = try encoding.makeSession { frame in
                guard let session = encoder.session else { return }
                if session.formatDescription != encoder.format {
                    encoder.format = session.formatDescription
                    try encoding.output.writeHeader(session.formatDescription)
                }
                try encoding.output.write(frame)
            }
            try session.prepare()
            encoder.session = session
        } catch {
            encoding.warn("the live view's own encoder could not start: \(error)")
            encoder.failed = true
        }
        while true {
            shared.wake.wait()
            let (next, finished) = shared.mailbox.withLock { mailbox in (mailbox.picture.take(), mailbox.finished) }
            if let next, let session = encoder.session, !encoder.failed {
                let token = FrameToken(encoder.token)
                encoder.token += 1
                do {
                    let key = encoding.output.requiresKeyFrame(for: token, at: next.pts)
                    try session.encode(next.buffer, pts: next.pts, forceKeyFrame: key, token: token)
                } catch {
                    encoding.warn("the live view's own encoder failed: \(error)")
                    encoder.failed = true
                }
            }
            if finished { break }
        }
        if let session = encoder.session {
            if !encoder.failed { try? session.completeFrames() }
            session.invalidate()
        }
        if encoder.failed { encoding.output.abandon() } else { try? encoding.output.finish(keepEmpty: false) }
    }
}

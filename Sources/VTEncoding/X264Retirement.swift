import CX264
import Foundation
import VTCore

/// An x264 encoder given up at a change of encoder (`X264Session.setSpeedStep`), emptied on a
/// thread of its own so the encoder that replaced it codes the new pictures meanwhile: the
/// pictures in its lookahead and frame threads cost seconds at the slower structure, longer
/// than a live source's queue can wait. What it codes is taken in order by the session's own
/// thread, which writes it before anything the new encoder gave out.
///
/// `@unchecked Sendable`: `frames`, `finished` and `failure` are touched only with `condition`
/// locked (the draining thread appends, the session's thread takes); nothing else is mutable.
final class X264Retirement: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var frames: [EncodedFrame] = []
    private var finished = false
    private var failure: EncoderError?

    /// Takes over `encoder` (closed when it is empty). `framesIn`: pictures given to the
    /// session so far, for an error message.
    init(encoder: OpaquePointer, frameRate: FrameRate, framesIn: Int) {
        let owned = EncoderHandle(encoder)
        Thread.start(named: "vtrecord-drain") { [self] in
            var failure: EncoderError?
            do throws(EncoderError) {
                while x264_encoder_delayed_frames(owned.pointer) > 0 {
                    guard let frame = try X264Session.code(owned.pointer, input: nil, frameRate: frameRate,
                                                           framesIn: framesIn) else { continue }
                    condition.withLock {
                        frames.append(frame)
                        condition.broadcast()
                    }
                }
            } catch {
                failure = error
            }
            x264_encoder_close(owned.pointer)
            condition.withLock {
                self.failure = failure
                finished = true
                condition.broadcast()
            }
        }
    }

    /// The pictures coded since the last call, and whether the encoder is now empty and
    /// closed; `waiting`: not before it is. Throws what went wrong coding them, once everything
    /// before it was taken.
    func take(waiting: Bool) throws(EncoderError) -> (frames: [EncodedFrame], finished: Bool) {
        condition.lock()
        defer { condition.unlock() }
        while waiting && !finished { condition.wait() }
        let taken = frames
        frames = []
        if finished, let failure { throw failure }
        return (taken, finished)
    }

    /// Waits for the encoder to be closed, dropping what it codes (the session is going away).
    func close() {
        condition.lock()
        while !finished { condition.wait() }
        frames = []
        condition.unlock()
    }
}

/// x264's encoder pointer, handed to the thread that empties it.
/// `@unchecked Sendable`: once handed over, only that thread uses the pointer (and closes it).
private struct EncoderHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

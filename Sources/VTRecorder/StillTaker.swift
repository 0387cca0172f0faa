import Foundation
import Synchronization
import VTCapture
import VTCore

/// Keeps a still of the latest picture while recording (`--snapshot PATH --snapshot-every T`),
/// on a thread of its own, so that neither the capture thread nor the encoder thread ever
/// waits for a JPEG encoder or a disk.
///
/// The encoder thread offers each frame once the encoder is done with it. When a still is due
/// (at the first frame, then every `interval` of presentation time) the frame itself moves to
/// the still thread, which makes the still from its picture (`take`) and then lets it go: no
/// picture is copied on the encoder thread, and the pipeline's pools count the one frame held
/// here (`PipelineDepth.holdsStill`). A still that comes due while the one before is still
/// being made is skipped and counted, so a slow disk costs stills, never frames. The still
/// thread runs below the encoder's priority: on a busy machine the recording comes first.
///
/// A still can also be asked for (`request`, the control socket's `snapshot PATH`): the next
/// frame offered while the still thread is free is taken for it, and the asker is answered
/// once it is written. A taker made with `requestsOnly` makes no other stills.
public final class StillTaker: Sendable {
    /// Makes and writes one still; throws to have the failure counted.
    public typealias Take = @Sendable (StillSource) throws -> Void

    /// What happened to the stills of one recording.
    public struct Statistics: Sendable, Equatable {
        /// Stills written.
        public var written = 0
        /// Stills that came due while the one before was still being made.
        public var skipped = 0
        /// Stills that could not be made or written (each warned about, the first few).
        public var failed = 0
    }

    /// A still asked for: how to make it, and who waits for the outcome.
    private struct Request: Sendable {
        let take: Take
        let answer: @Sendable ((any Error)?) -> Void
    }

    private struct Slot: ~Copyable {
        var pending: CapturedFrame?
        /// Whether the pending frame makes the periodic still, and the requests it answers.
        var periodicDue = false
        var answering: [Request] = []
        var requested: [Request] = []
        var busy = false
        var finished = false
        /// Presentation time in seconds at or after which the next still is due.
        var nextDue = 0.0
        var statistics = Statistics()
    }

    /// nil: stills only when asked for.
    private let interval: Double?
    private let take: Take
    private let warn: @Sendable (String) -> Void
    private let slot = Mutex(Slot())
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// Failures warned about one by one; the summary counts the rest.
    static let failuresWarned = 3

    /// Starts the still thread. `interval` is in seconds of presentation time.
    public init(interval: Double, take: @escaping Take, warn: @escaping @Sendable (String) -> Void) {
        precondition(interval > 0, "stills need a positive interval")
        self.interval = interval
        self.take = take
        self.warn = warn
        Thread.start(named: "vtrecord-still") { [self] in run() }
    }

    /// A taker that makes stills only when asked for (`request`).
    public init(requestsOnly warn: @escaping @Sendable (String) -> Void) {
        interval = nil
        take = { _ in }
        self.warn = warn
        Thread.start(named: "vtrecord-still") { [self] in run() }
    }

    /// Asks for a still of the next frame, made by `take`; `answer` is called on the still
    /// thread once it is written (nil) or failed, or at the end of the recording if no frame
    /// came first. From any thread.
    public func request(_ take: @escaping Take, answer: @escaping @Sendable ((any Error)?) -> Void) {
        let finished = slot.withLock { slot in
            if !slot.finished { slot.requested.append(Request(take: take, answer: answer)) }
            return slot.finished
        }
        if finished { answer(StillNotTaken()) }
    }

    /// The recording ended before a frame came for a still asked for.
    public struct StillNotTaken: Error, CustomStringConvertible {
        public var description: String { "the recording ended before the next picture" }
    }

    public var statistics: Statistics { slot.withLock { $0.statistics } }

    /// From the encoder thread, each frame after it was encoded: kept for a still when one is
    /// due and the still thread is free, else let go at once. A frame kept only as a camera's
    /// H.264 (`--encoder copy`) has nothing to make a still of.
    func offer(_ frame: consuming CapturedFrame) {
        guard frame.buffer != nil || frame.compressed?.format.codec == .mjpeg else { return }
        let seconds = frame.pts.seconds
        var handed: CapturedFrame? = consume frame
        let accepted = slot.withLock { slot -> Bool in
            guard !slot.finished else { return false }
            var periodic = false
            if let interval, seconds >= slot.nextDue {
                slot.nextDue = ((seconds / interval).rounded(.down) + 1) * interval
                periodic = true
                if slot.busy { slot.statistics.skipped += 1 }
            }
            // A request waits for the next frame the still thread is free for.
            guard !slot.busy, periodic || !slot.requested.isEmpty else { return false }
            slot.busy = true
            slot.periodicDue = periodic
            slot.answering = slot.requested
            slot.requested = []
            slot.pending = handed.take()
            return true
        }
        if accepted { wake.signal() }
        // A frame not taken goes back here, outside the lock.
        _ = handed.take()
    }

    /// Waits for the still being made, if any, and ends the still thread. Called once, when
    /// the recording is over.
    func finish() {
        slot.withLock { $0.finished = true }
        wake.signal()
        done.wait()
    }

    private func run() {
        ThreadPriority.move(by: Self.niceDrop)
        while true {
            wake.wait()
            var next: CapturedFrame?
            let (finished, periodic, answering) = slot.withLock { slot in
                next = slot.pending.take()
                return (slot.finished, slot.periodicDue, slot.answering)
            }
            if let frame = next {
                // `offer` keeps only frames with a picture or a camera's JPEG.
                let source: StillSource
                if let picture = frame.buffer {
                    source = .picture(picture)
                } else if let jpeg = frame.compressed, jpeg.format.codec == .mjpeg {
                    source = .cameraJPEG(jpeg.data)
                } else {
                    preconditionFailure("a still was taken of a frame with neither a picture nor a JPEG")
                }
                var failure: (any Error)?
                if periodic { failure = still(of: source, take) }
                for request in answering { request.answer(still(of: source, request.take)) }
                // The frame is let go before the thread waits again.
                _ = consume frame
                let failures = slot.withLock { slot -> Int in
                    slot.busy = false
                    slot.answering = []
                    if periodic {
                        if failure == nil { slot.statistics.written += 1 } else { slot.statistics.failed += 1 }
                    }
                    return slot.statistics.failed
                }
                if let failure, failures <= Self.failuresWarned {
                    warn("snapshot not written: \((failure as? any ReportableError)?.description ?? "\(failure)")")
                }
            }
            if finished { break }
        }
        // Asked for too late for any frame.
        let unanswered = slot.withLock { slot in
            defer { slot.requested = [] }
            return slot.requested
        }
        for request in unanswered { request.answer(StillNotTaken()) }
        done.signal()
    }

    /// Makes one still.
    private func still(of source: StillSource, _ take: Take) -> (any Error)? {
        do {
            try take(source)
            return nil
        } catch {
            return error
        }
    }

    /// How far the still thread lowers its priority (nice value, per thread on Linux) below
    /// the encoder's; lowering is always allowed.
    static let niceDrop: Int32 = 10
}

/// What a still is made of: the frame's picture, or, for a frame kept only as an MJPEG camera's
/// JPEG (`--encoder copy`), that JPEG as the camera made it.
public enum StillSource: Sendable {
    case picture(PixelBuffer)
    case cameraJPEG([UInt8])
}

import Foundation
import Synchronization
import VTCapture
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// The part of a recording other threads touch: the stop flag, the counters the capture
/// thread keeps, the queue between the capture and encoder threads, and the write lock with
/// the one thing it guards for an abort. Everything else (the session, the output, the frame
/// grid, limits, latency, progress) belongs to the encoder thread in `Recorder`.
///
/// The capture thread runs `capture(realTime:)`: it never waits for the encoder when
/// `realTime` (a camera, a paced pattern): a frame that finds the queue full is dropped and
/// counted.
public final class RecordingControl: Sendable {
    let source: any CaptureSource
    let queue: BoundedQueue<CapturedFrame>

    private let stopRequested = Atomic<Bool>(false)
    private let captured = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    /// Nanoseconds: the longest the capture thread took to hand a frame on (queue or drop).
    private let longestHandoff = Atomic<Int64>(0)
    private let failure = Mutex<(any Error)?>(nil)
    private let live = Mutex<RecordingResult?>(nil)
    /// Held around each write to the output, so an abort never cuts an access unit in half.
    /// It guards the file an abort must remove: one the output made that holds no frame yet.
    private let writing = Mutex<String?>(nil)

    init(source: any CaptureSource, depth: PipelineDepth) {
        self.source = source
        queue = BoundedQueue(capacity: depth.queue)
    }

    /// Asks the recording to end cleanly (first SIGINT/SIGTERM). Safe from any thread.
    public func stopCleanly() {
        stopRequested.store(true, ordering: .releasing)
        source.stop()
    }

    /// Ends the process at once (second signal) without cutting an access unit in half. An
    /// output file that got no frame yet is removed, as on a clean stop.
    public func abortProcess(exitStatus status: Int32) -> Never {
        writing.withLock { unusedFile in
            if let unusedFile { _ = try? systemCall("unlink") { unlink(unusedFile) } }
            _exit(status)
        }
    }

    var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }
    /// Frames the source gave so far, and of those the ones dropped at the queue; for any thread.
    public var framesCaptured: Int { captured.load(ordering: .acquiring) }
    public var droppedAtQueue: Int { dropped.load(ordering: .acquiring) }
    var longestHandoffMilliseconds: Double { Double(longestHandoff.load(ordering: .acquiring)) / 1e6 }
    var captureFailure: (any Error)? { failure.withLock { $0 } }

    /// The recording's figures so far (`Recorder(liveResults: true)`), refreshed twice a
    /// second as frames are written, and the final result once the run is over; for any thread.
    public var liveResult: RecordingResult? { live.withLock { $0 } }
    func publishLive(_ result: RecordingResult) { live.withLock { $0 = result } }

    /// Ends the recording for a failure found off the capture thread (a required microphone
    /// gone, the audio encoder failing): capture stops as for a signal, what was captured is
    /// written, and the recording reports `error` (the first one, if several come).
    public func stopForFailure(_ error: any Error) {
        failure.withLock { if $0 == nil { $0 = error } }
        stopRequested.store(true, ordering: .releasing)
        source.stop()
    }

    /// Stops capture from the encoder thread (a limit, a failure) and hands back whatever the
    /// capture thread had queued.
    func endCaptureEarly() {
        stopRequested.store(true, ordering: .releasing)
        source.stop()
        queue.closeAndEmpty()
    }

    /// Runs `body` (a write to the output) under the write lock, then notes the file an abort
    /// would have to remove.
    func whileWriting<E: Error>(_ body: () throws(E) -> Void, unusedFile: () -> String?) throws(E) {
        try writing.withLock { slot throws(E) in
            defer { slot = unusedFile() }
            try body()
        }
    }

    /// The capture thread's loop: frames from the source into the queue until the source
    /// ends, fails or is stopped; then the queue is closed so the encoder drains it.
    func capture(realTime: Bool) {
        if realTime { ThreadPriority.raiseForLiveCapture() }
        // A camera's H.264 access unit dropped here (`--encoder copy`) may be referred to by
        // those after it: they are dropped too, up to the next IDR picture, so that nothing
        // stored refers to a picture that is not there.
        var waitsForKeyFrame = false
        do {
            while !isStopRequested {
                guard let frame = try source.nextFrame() else { break }
                let handoffStarted = MonotonicClock.nanoseconds()
                captured.add(1, ordering: .relaxed)
                if waitsForKeyFrame, let compressed = frame.compressed, compressed.format.codec == .h264 {
                    guard compressed.isKeyFrame else {
                        dropped.add(1, ordering: .relaxed)
                        continue
                    }
                    waitsForKeyFrame = false
                }
                let refused = realTime ? queue.offer(frame) : queue.put(frame)
                guard let frame = refused else {
                    noteHandoff(since: handoffStarted)
                    continue
                }
                if isStopRequested {
                    // The last frame the camera gave before the stop is kept, however far
                    // behind the encoder is: the encoder drains the queue anyway. Only a
                    // limit closes the queue, and then the frame is not wanted.
                    _ = queue.put(frame)
                    break
                }
                // The frame is dropped: its lease ends with this iteration.
                dropped.add(1, ordering: .relaxed)
                if frame.compressed?.format.codec == .h264 { waitsForKeyFrame = true }
                noteHandoff(since: handoffStarted)
            }
        } catch {
            failure.withLock { $0 = error }
        }
        queue.close()
    }

    private func noteHandoff(since start: Int64) {
        let took = MonotonicClock.nanoseconds() - start
        var seen = longestHandoff.load(ordering: .relaxed)
        while took > seen {
            let (exchanged, current) = longestHandoff.compareExchange(expected: seen, desired: took, ordering: .relaxed)
            if exchanged { break }
            seen = current
        }
    }
}

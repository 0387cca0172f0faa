import Foundation
import Synchronization
import VTCore

/// One output beside the recording, on its own thread behind its own bounded queue: a second
/// file, a media server. It is best effort: when it fails it is opened again, after 1 s, then
/// after twice as long each time up to 30 s; when it falls behind, whole GOPs wait no longer
/// (`BranchQueue`); either is said once and counted. The encoder thread only hands it
/// packets, under a lock held for as long as a queue append takes, so nothing it does can make
/// the camera, the encoder or the recording wait.
///
/// A stream (re)opened while the queue holds no keyframe first waits for one, and asks for it
/// (`takeKeyFrameRequest`), so a receiver can start within a second instead of a GOP.
///
/// With a source that is not live (a file, the test pattern without `--realtime`), the encoder
/// runs as fast as it can and nothing needs to be dropped to keep up: then a full queue makes
/// the encoder thread wait for room (`waitsForRoom`), as the file's reader waits for the
/// encoder, and only an output that is down loses packets.
public final class OutputBranch: Sendable {
    /// Opens the output, for the `attempt`th time (0 first): connected, for a network one,
    /// with its header sent for pictures coded with `format`, times counted from `base`.
    public typealias Open = @Sendable (_ attempt: Int, _ format: VideoFormatDescription, _ base: MediaTime)
        throws(OutputError) -> any MediaOutput

    /// What an output did, for the summary and the status line (the recording's too, written
    /// by the recorder from its own figures).
    public struct Report: Codable, Sendable, Equatable {
        public enum State: String, Codable, Sendable {
            /// Waiting for the first picture, or opening.
            case connecting
            case connected
            /// Failed; waiting to try again.
            case down
            /// Ended cleanly with the recording.
            case finished
            /// Ended by the recording while down, or cut short at its end.
            case failed
        }

        /// The URL (its secrets masked) or the file template, as given.
        public var name: String
        public var state: State
        /// Media bytes handed to the output.
        public var bytes: Int64 = 0
        /// Access units and sound packets sent (for the recording: frames written).
        public var packetsWritten = 0
        public var packetsDropped = 0
        public var gopsDropped = 0
        public var reconnects = 0
        public var secondsDown = 0.0
        /// The most the queue held, in bytes, and its bound (0 for the recording, which has none).
        public var queuePeakBytes = 0
        public var queueLimitBytes = 0
        public var keyFramesRequested = 0
        /// The longest a stream (re)opened waited for its first keyframe to go out, in seconds:
        /// how long a receiver waited to start.
        public var keyFrameWaitMax = 0.0
        /// Every file written (a file output), in order.
        public var paths: [String] = []
        /// The last failure, if any.
        @NullWhenAbsent public var lastError: String?

        public init(name: String, state: State, queueLimitBytes: Int = 0) {
            self.name = name
            self.state = state
            self.queueLimitBytes = queueLimitBytes
        }

        enum CodingKeys: String, CodingKey {
            case name, state, bytes, packetsWritten = "packets_written", packetsDropped = "packets_dropped"
            case gopsDropped = "gops_dropped", reconnects, secondsDown = "seconds_down"
            case queuePeakBytes = "queue_peak_bytes", queueLimitBytes = "queue_limit_bytes"
            case keyFramesRequested = "keyframes_requested", keyFrameWaitMax = "keyframe_wait_max"
            case paths = "files", lastError = "error"
        }

        /// Nothing was dropped and it never failed.
        public var keptUp: Bool { packetsDropped == 0 && reconnects == 0 && lastError == nil && state != .failed }
    }

    struct State: ~Copyable {
        var queue: BranchQueue
        var report: Report
        /// The recording's first picture time: every stream of this branch counts from it.
        var base: MediaTime?
        var format: VideoFormatDescription?
        var accepting = true
        var finishing = false
        /// CLOCK_MONOTONIC nanoseconds when finishing must end (`longestFinish` after it began).
        var finishingEnds: Int64 = 0
        var abandoning = false
        var keyFrameWanted = false
        /// CLOCK_MONOTONIC nanoseconds the branch went down; nil while up.
        var downSince: Int64?
        var behindSaid: Int64?
        var bytesBefore: Int64 = 0
        /// CLOCK_MONOTONIC nanoseconds the stream was opened, until its first keyframe is sent.
        var openedAt: Int64?
    }

    public let name: String
    /// A file output split into segments: where they begin is decided on the encoder thread
    /// (`OutputFanOut`), as for the recording, so their keyframes are asked of the encoder.
    public let segmentPolicy: SegmentPolicy?
    /// Whether its output writes Annex B (a stream, a raw or MPEG-TS file), which the fan-out
    /// then makes once for it and every other output that does.
    public let writesAnnexB: Bool
    /// Bytes in the segment file being written, for `segmentPolicy`'s size.
    private let segmentBytesWritten = Atomic<Int64>(0)
    let state: Mutex<State>
    let wake = DispatchSemaphore(value: 0)
    /// Signalled each time the branch's thread takes a packet, for an encoder waiting for room.
    private let room = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    private let waitsForRoom: Bool
    let open: Open
    private let interrupt: NetworkInterrupt
    let say: @Sendable (String) -> Void

    /// The longest the encoder waits for room for one packet, with a source that is not live.
    static let longestWait = 5.0
    /// Retries wait 1 s, then twice as long each time, up to this.
    static let longestBackoff = 30.0
    /// At the end of a recording, how long the stream may take to send each packet that
    /// waits: a receiver that takes nothing is given up on after that long...
    public static let finishingTime = 0.5
    /// ...and one that takes what waits slowly after this in all (the time a stream that is
    /// the recording has). A stream that connected late, or fell behind, and is paced by SRT
    /// sends its backlog slower than real time: cut after 0.5 s in all, a loaded run's
    /// receiver lacked the last 8 of 90 pictures.
    public static let longestFinish = 5.0

    /// Starts the branch's thread (`threadName`, at most 15 bytes). `interrupt` is the one its
    /// network output waits with; `say` gets its one-line notices.
    public init(name: String, threadName: String, limits: BranchQueue.Limits = .init(), segmentPolicy: SegmentPolicy? = nil,
                waitsForRoom: Bool = false, writesAnnexB: Bool = false, interrupt: NetworkInterrupt,
                say: @escaping @Sendable (String) -> Void, open: @escaping Open) {
        self.name = name
        self.writesAnnexB = writesAnnexB
        self.waitsForRoom = waitsForRoom
        self.segmentPolicy = segmentPolicy
        self.open = open
        self.interrupt = interrupt
        self.say = say
        state = Mutex(State(queue: BranchQueue(limits: limits),
                            report: Report(name: name, state: .connecting, queueLimitBytes: limits.bytes)))
        Thread.start(named: threadName) { [self] in
            run()
            ended.signal()
        }
    }

    /// Hands the branch a packet; never waits for its thread unless `waitsForRoom`. Called by
    /// the encoder thread.
    func offer(_ packet: BranchPacket) {
        if waitsForRoom {
            // At most `longestWait` for each packet: an output that takes no data for that long
            // (a receiver that stopped reading, a listener nobody calls) drops instead, so
            // neither it nor a stop can hold the encoder for longer.
            let until = MonotonicClock.nanoseconds() + Int64(Self.longestWait * 1e9)
            while state.withLock({ $0.accepting && !$0.finishing && !$0.queue.fits(packet) }),
                  MonotonicClock.nanoseconds() < until {
                wake.signal()
                _ = room.wait(timeout: .now() + .milliseconds(100))
            }
        }
        let fellBehind: Bool = state.withLock { state in
            if case .frame(let frame, let format, _, _) = packet {
                state.format = format
                if state.base == nil { state.base = frame.pts }
            }
            guard !state.finishing else { return false }
            guard state.accepting else {
                state.queue.refuse(packet)
                return false
            }
            let outcome = state.queue.offer(packet)
            // A keyframe the encoder made by itself serves as well as one asked for (and one
            // asked for right after it would be refused by x264 as too close).
            if outcome != .skipped && packet.isKeyFrame { state.keyFrameWanted = false }
            // While it is still opening, the wait is not the stream's falling behind.
            guard outcome == .overflowed, state.report.state == .connected else { return false }
            // Said once a while, not for every GOP of a long stall.
            let now = MonotonicClock.nanoseconds()
            guard state.behindSaid.map({ now - $0 > 30_000_000_000 }) ?? true else { return false }
            state.behindSaid = now
            return true
        }
        wake.signal()
        if fellBehind { say("\(name): falling behind; dropping whole GOPs until it catches up") }
    }

    /// Bytes in the segment file being written.
    var segmentBytes: Int64 { segmentBytesWritten.load(ordering: .relaxed) }

    /// Whether the branch asked for a keyframe since the last time; the asking is cleared.
    func takeKeyFrameRequest() -> Bool {
        state.withLock { state in
            guard state.keyFrameWanted else { return false }
            state.keyFrameWanted = false
            state.report.keyFramesRequested += 1
            return true
        }
    }

    public var report: Report {
        state.withLock { state in
            var report = state.report
            if let since = state.downSince {
                report.secondsDown += Double(MonotonicClock.nanoseconds() - since) / 1e9
            }
            report.packetsDropped = state.queue.dropped.packets
            report.gopsDropped = state.queue.dropped.gops
            report.queuePeakBytes = state.queue.peakBytes
            return report
        }
    }

    /// The recording ended cleanly: what waits is sent, each packet within `finishingTime`
    /// and all within `longestFinish`, and the stream is ended. Returns at once; `finish` waits.
    func beginFinishing() {
        let (first, connected): (Bool, Bool) = state.withLock { state in
            defer { state.finishing = true }
            if !state.finishing { state.finishingEnds = MonotonicClock.nanoseconds() + Int64(Self.longestFinish * 1e9) }
            return (!state.finishing, state.report.state == .connected)
        }
        // A stream still connecting (or down) has nothing it could send in time: it ends at once.
        if first { connected ? interrupt.endBy(Self.finishingTime) : interrupt.stop() }
        wake.signal()
    }

    /// As `beginFinishing`, and returns once the branch's thread has ended.
    func finish() {
        beginFinishing()
        waitUntilEnded()
    }

    /// The recording failed: the stream ends at once.
    func abandon() {
        state.withLock {
            $0.finishing = true
            $0.abandoning = true
        }
        interrupt.stop()
        wake.signal()
        waitUntilEnded()
    }

    /// Waits for the branch's thread, at most `longestFinish` and a second more (an SRT socket
    /// lingers up to a second on close for what its receiver has not acknowledged): past that
    /// the process goes on without it.
    private func waitUntilEnded() {
        guard ended.wait(timeout: .now() + .milliseconds(Int((Self.longestFinish + 1) * 1000))) == .success else { return }
        // For whoever waits next.
        ended.signal()
    }

    // MARK: the branch's thread

    /// How a stream ended.
    enum StreamEnd {
        /// With the recording.
        case ended
        case failed(OutputError)
    }

    /// Sends what comes until the recording ends or the output fails.
    func stream(to output: any MediaOutput) -> StreamEnd {
        var given: VideoFormatDescription?
        var framesWritten = 0
        while true {
            let next: (packet: BranchPacket?, finishing: Bool, abandoning: Bool) = state.withLock { state in
                (state.queue.take(), state.finishing, state.abandoning)
            }
            if next.packet != nil && waitsForRoom { room.signal() }
            if next.abandoning {
                output.abandon()
                return .ended
            }
            guard let packet = next.packet else {
                if next.finishing {
                    finishStream(output)
                    return .ended
                }
                wake.wait()
                continue
            }
            do throws(OutputError) {
                switch packet {
                case .frame(let frame, let format, let startsSegment, let annexB):
                    // A stream opened again starts a file of its own anyway.
                    if startsSegment && framesWritten > 0, let segmented = output as? SegmentedOutput {
                        try segmented.startNextSegment(at: frame.pts)
                    }
                    if format != given {
                        try output.writeHeader(format)
                        given = format
                    }
                    if let annexB {
                        try output.write(frame, sharing: annexB)
                    } else {
                        try output.write(frame)
                    }
                    framesWritten += 1
                    if let segmented = output as? SegmentedOutput {
                        segmentBytesWritten.store(segmented.segmentBytesWritten, ordering: .relaxed)
                    }
                case .sound(let sound):
                    try output.writeAudio(sound)
                }
            } catch {
                output.abandon()
                let bytes = output.statistics.bytes
                state.withLock { $0.bytesBefore += bytes }
                return .failed(error)
            }
            let bytes = output.statistics.bytes
            let paths = output.paths
            let finishingEnds = state.withLock { state in
                if packet.isKeyFrame, let opened = state.openedAt {
                    let waited = Double(MonotonicClock.nanoseconds() - opened) / 1e9
                    state.report.keyFrameWaitMax = max(state.report.keyFrameWaitMax, waited)
                    state.openedAt = nil
                }
                state.report.packetsWritten += 1
                state.report.bytes = state.bytesBefore + bytes
                state.report.paths = paths
                return state.finishingEnds
            }
            // A packet went out while finishing: the next has its own `finishingTime`.
            if finishingEnds != 0 {
                let left = Double(finishingEnds - MonotonicClock.nanoseconds()) / 1e9
                interrupt.endBy(max(0, min(Self.finishingTime, left)))
            }
        }
    }

    private func finishStream(_ output: any MediaOutput) {
        var failure: OutputError?
        do throws(OutputError) {
            try output.finish(keepEmpty: false)
        } catch {
            failure = error
        }
        let bytes = output.statistics.bytes
        let paths = output.paths
        state.withLock { state in
            state.report.bytes = state.bytesBefore + bytes
            state.report.paths = paths
            state.report.state = failure == nil ? .finished : .failed
            if let failure { state.report.lastError = failure.description }
        }
    }
}

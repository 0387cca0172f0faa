import Foundation
import NIOCore
import Synchronization
import VTCore

/// The live H.264 stream as the HTTP server serves it: the init segment, the viewers of
/// `/live.mp4` with their queues, and the HLS window. `LiveFeed` fills it on the recording's
/// thread; the server's tasks read it. Nothing here makes the recording wait.
public final class LiveStream: Sendable {
    public struct Limits: Sendable {
        /// Viewers of `/live.mp4` at once; one more is refused (503).
        public var viewers: Int
        /// Bytes one viewer may fall behind before it is cut off.
        public var viewerQueueBytes: Int

        public init(viewers: Int = 64, viewerQueueBytes: Int = 4 << 20) {
            self.viewers = viewers
            self.viewerQueueBytes = viewerQueueBytes
        }
    }

    public enum JoinRefusal: Error, Sendable {
        case tooManyViewers
        case ended
    }

    private struct Viewer {
        var viewer: LiveViewer
        /// Has had the init segment and a keyframe: takes every fragment from now on.
        var started = false
    }

    private struct State {
        var initSegment: ByteBuffer?
        var contentType = "video/mp4"
        var viewers: [ObjectIdentifier: Viewer] = [:]
        var keyFrameWanted = false
        var ended = false
        var hls: HLSWindow
        var hlsWaiters: [UInt64: (sequence: Int, part: Int?, continuation: CheckedContinuation<Bool, Never>)] = [:]
        var nextWaiter: UInt64 = 0
        var viewersCutOff = 0
        var viewersServed = 0
    }

    public let limits: Limits
    private let state: Mutex<State>
    /// CLOCK_MONOTONIC nanoseconds of the last playlist request.
    private let lastPlaylistRequest = Atomic<Int64>(Int64.min / 2)

    /// A player asked for the playlist: HLS is being watched.
    public func notePlaylistRequest() { lastPlaylistRequest.store(MonotonicClock.nanoseconds(), ordering: .relaxed) }
    /// Whether a player asked for the playlist in the last 30 s.
    var hlsWatched: Bool { MonotonicClock.nanoseconds() - lastPlaylistRequest.load(ordering: .relaxed) < 30_000_000_000 }

    public init(limits: Limits = Limits(), partTarget: Double) {
        self.limits = limits
        state = Mutex(State(hls: HLSWindow(partTarget: partTarget)))
    }

    // MARK: The recording's side

    /// A new time line starts (the first picture, or pictures of a new size): viewers of the
    /// old one are ended (a player cannot take a second init segment mid-stream everywhere),
    /// HLS starts over.
    func start(initSegment buffer: ByteBuffer, codec: String?) {
        let ended: [LiveViewer] = state.withLock { state in
            state.initSegment = buffer
            state.contentType = codec.map { "video/mp4; codecs=\"\($0)\"" } ?? "video/mp4"
            state.hls.restart(initSegment: buffer)
            let started = state.viewers.values.filter(\.started).map(\.viewer)
            for viewer in started { state.viewers[ObjectIdentifier(viewer)] = nil }
            return started
        }
        for viewer in ended { viewer.end() }
    }

    /// One fragment of `/live.mp4`: each viewer that has started takes it; one that waits for
    /// a keyframe starts with it if it is one.
    func publish(_ fragment: ByteBuffer, keyFrame: Bool) {
        state.withLock { state in
            guard let initSegment = state.initSegment else { return }
            var cut = 0
            for (key, entry) in state.viewers {
                var entry = entry
                if !entry.started {
                    guard keyFrame else { continue }
                    entry.started = true
                    entry.viewer.offer(initSegment)
                    state.viewers[key] = entry
                }
                if !entry.viewer.offer(fragment) {
                    state.viewers[key] = nil
                    cut += 1
                }
            }
            state.viewersCutOff += cut
        }
    }

    /// A part of the HLS stream; `endsSegment` when a keyframe comes next.
    func publishPart(_ bytes: ByteBuffer, duration: Double, independent: Bool, endsSegment: Bool) {
        let ready: [CheckedContinuation<Bool, Never>] = state.withLock { state in
            state.hls.add(HLSWindow.Part(bytes: bytes, duration: duration, independent: independent))
            if endsSegment { state.hls.closeSegment() }
            return Self.takeReady(&state)
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// The segment being made ends here (a keyframe comes next).
    func closeSegment() {
        let ready: [CheckedContinuation<Bool, Never>] = state.withLock { state in
            state.hls.closeSegment()
            return Self.takeReady(&state)
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Whether a viewer waits for a keyframe.
    var keyFrameWanted: Bool { state.withLock { $0.keyFrameWanted } }
    func keyFrameAsked() { state.withLock { $0.keyFrameWanted = false } }

    /// The recording is over: every viewer ends after what it has, every waiting request is
    /// answered.
    func end() {
        let (viewers, waiters) = state.withLock { state in
            state.ended = true
            let viewers = state.viewers.values.map(\.viewer)
            state.viewers.removeAll()
            let waiters = state.hlsWaiters.values.map(\.continuation)
            state.hlsWaiters.removeAll()
            return (viewers, waiters)
        }
        for viewer in viewers { viewer.end() }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    private static func takeReady(_ state: inout State) -> [CheckedContinuation<Bool, Never>] {
        var ready: [CheckedContinuation<Bool, Never>] = []
        for (id, waiter) in state.hlsWaiters where state.hls.has(sequence: waiter.sequence, part: waiter.part) {
            ready.append(waiter.continuation)
            state.hlsWaiters[id] = nil
        }
        return ready
    }

    // MARK: The server's side

    /// A new viewer of `/live.mp4`, which starts at the next keyframe (asked of the encoder).
    public func join() throws(JoinRefusal) -> LiveViewer {
        try state.withLock { state throws(JoinRefusal) in
            guard !state.ended else { throw .ended }
            guard state.viewers.count < limits.viewers else { throw .tooManyViewers }
            let viewer = LiveViewer(limit: limits.viewerQueueBytes)
            state.viewers[ObjectIdentifier(viewer)] = Viewer(viewer: viewer)
            state.keyFrameWanted = true
            state.viewersServed += 1
            return viewer
        }
    }

    /// A viewer whose connection ended.
    public func leave(_ viewer: LiveViewer) {
        state.withLock { $0.viewers[ObjectIdentifier(viewer)] = nil }
        viewer.end()
    }

    /// The MSE type of `/live.mp4` (`video/mp4; codecs="avc1.64001f"`).
    public var contentType: String { state.withLock { $0.contentType } }

    public struct Figures: Sendable {
        public var viewers: Int
        public var viewersServed: Int
        public var viewersCutOff: Int
    }

    public var figures: Figures {
        state.withLock {
            Figures(viewers: $0.viewers.count, viewersServed: $0.viewersServed, viewersCutOff: $0.viewersCutOff)
        }
    }

    // MARK: HLS

    public var hlsInit: ByteBuffer? { state.withLock { $0.hls.initSegment } }
    public func hlsSegment(_ sequence: Int) -> ByteBuffer? { state.withLock { $0.hls.segmentBytes(sequence) } }

    /// The playlist; nil before the first part.
    public func hlsPlaylist(prefix: String) -> String? {
        state.withLock { $0.hls.isEmpty ? nil : $0.hls.playlist(prefix: prefix) }
    }

    public var hlsCurrentSequence: Int { state.withLock { $0.hls.currentSequence } }
    /// Whether a player can start on the playlist: it lists enough complete segments.
    public var hlsIsStartable: Bool { state.withLock { $0.hls.isStartable } }

    /// A part: at once if it exists, after waiting for it (at most `timeout`) if it is the next
    /// one; nil if it is gone, too far ahead, or did not come in time.
    public func hlsPart(_ sequence: Int, _ index: Int, timeout: Duration) async -> ByteBuffer? {
        let (bytes, worthWaiting) = state.withLock { state in
            (state.hls.part(sequence, index), state.hls.isNext(sequence: sequence, part: index))
        }
        if let bytes { return bytes }
        guard worthWaiting, await waitFor(sequence: sequence, part: index, timeout: timeout) else { return nil }
        return state.withLock { $0.hls.part(sequence, index) }
    }

    /// Waits until segment `sequence` (part `part` of it, if given) exists, at most `timeout`;
    /// false if it did not come (or the stream ended).
    public func waitFor(sequence: Int, part: Int?, timeout: Duration) async -> Bool {
        await withCheckedContinuation { continuation in
            let registered: UInt64? = state.withLock { state in
                if state.hls.has(sequence: sequence, part: part) { return nil }
                if state.ended { return UInt64.max }
                state.nextWaiter += 1
                state.hlsWaiters[state.nextWaiter] = (sequence, part, continuation)
                return state.nextWaiter
            }
            guard let registered else { return continuation.resume(returning: true) }
            if registered == UInt64.max { return continuation.resume(returning: false) }
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                let waiter = self?.state.withLock { $0.hlsWaiters.removeValue(forKey: registered) }
                waiter?.continuation.resume(returning: false)
            }
        }
    }
}

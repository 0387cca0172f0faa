import Foundation
import Synchronization
import VTCore

/// The branch's thread: an output is opened only once the first picture gives its format,
/// and one that fails is opened again after a back-off, so a receiver that went away can come
/// back while the recording goes on without it.
extension OutputBranch {
    func run() {
        var attempt = 0
        var backoff = 1.0
        opening: while let (format, base) = waitForFirstPicture() {
            let output: any MediaOutput
            do {
                output = try open(attempt, format, base)
            } catch {
                // Opening was cut short by the end of the recording: nothing to say.
                if state.withLock({ $0.finishing }) { break }
                attempt += 1
                wentDown(error, retryingIn: backoff)
                guard pause(backoff) else { break }
                backoff = min(backoff * 2, Self.longestBackoff)
                continue
            }
            cameUp()
            attempt += 1
            switch stream(to: output) {
            case .ended:
                break opening
            case .failed(let error):
                wentDown(error, retryingIn: 1)
                guard pause(1) else { break opening }
                backoff = 2
            }
        }
        state.withLock { state in
            if state.report.state != .finished { state.report.state = .failed }
            if let since = state.downSince {
                state.report.secondsDown += Double(MonotonicClock.nanoseconds() - since) / 1e9
                state.downSince = nil
            }
        }
    }

    /// The first picture's format and time, once it has come; nil when the recording ended first.
    private func waitForFirstPicture() -> (VideoFormatDescription, MediaTime)? {
        while true {
            let ready: (VideoFormatDescription, MediaTime)?? = state.withLock { state in
                if state.abandoning || (state.finishing && (state.base == nil || state.downSince != nil)) { return .some(nil) }
                if let format = state.format, let base = state.base { return .some((format, base)) }
                return nil
            }
            if let ready { return ready }
            wake.wait()
        }
    }

    /// Opened: the branch takes packets again, from a keyframe (asked for when none waits).
    private func cameUp() {
        let downFor: Double? = state.withLock { state in
            state.accepting = true
            state.report.state = .connected
            state.openedAt = MonotonicClock.nanoseconds()
            if !state.queue.startAtKeyFrame() { state.keyFrameWanted = true }
            guard let since = state.downSince else { return nil }
            state.downSince = nil
            state.report.reconnects += 1
            let seconds = Double(MonotonicClock.nanoseconds() - since) / 1e9
            state.report.secondsDown += seconds
            return seconds
        }
        if let downFor { say(String(format: "%@: connected again after %.1f s", name, downFor)) }
    }

    /// Failed: packets are dropped until it is up again; said once for each time it goes down.
    private func wentDown(_ error: OutputError, retryingIn seconds: Double) {
        let first: Bool = state.withLock { state in
            state.accepting = false
            state.report.state = .down
            state.report.lastError = error.description
            state.queue.dropAll()
            guard state.downSince == nil else { return false }
            state.downSince = MonotonicClock.nanoseconds()
            return true
        }
        if first {
            say("\(error.description); trying again in \(Int(seconds)) s, then less often (the recording goes on)")
        }
    }

    /// Waits `seconds` before the next try; false when the recording ended meanwhile.
    private func pause(_ seconds: Double) -> Bool {
        let until = MonotonicClock.nanoseconds() + Int64(seconds * 1e9)
        while true {
            if state.withLock({ $0.finishing }) { return false }
            let left = until - MonotonicClock.nanoseconds()
            guard left > 0 else { return true }
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(left)))
        }
    }
}

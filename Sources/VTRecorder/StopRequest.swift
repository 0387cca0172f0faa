import Synchronization
import VTCapture

#if canImport(Glibc)
import Glibc
#endif

/// The process's answer to being told to end (SIGINT, SIGTERM, as `StopSignals` hears them),
/// from the moment vtrecord starts opening its source: the first asks for a clean stop (of a
/// recording, or of a source read on its own, as `snapshot` does), a second aborts at once.
///
/// A signal can come before there is a recording to stop, while a slow camera opens or
/// negotiates its format. It is kept, and the recording ends as soon as it is made, before it
/// creates any output. A second signal before then has nothing to keep whole and ends the
/// process straight away.
public final class StopRequest: Sendable {
    private struct State {
        var requested = false
        var recording: RecordingControl?
        var source: (any CaptureSource)?
    }

    private let state = Mutex(State())

    public init() {}

    public var isStopRequested: Bool { state.withLock { $0.requested } }

    /// The first signal: stops the recording, or the one about to be made.
    public func stopCleanly() {
        let (recording, source) = state.withLock { state in
            state.requested = true
            return (state.recording, state.source)
        }
        recording?.stopCleanly()
        source?.stop()
    }

    /// From now on a request goes to `recorder`; one made earlier goes to it at once.
    public func attach(_ recorder: Recorder) {
        let recording = recorder.control
        let requested = state.withLock { state in
            state.recording = recording
            return state.requested
        }
        if requested { recording.stopCleanly() }
    }

    /// From now on a request stops `source` (read without a recorder); one made earlier stops
    /// it at once.
    public func attach(_ source: any CaptureSource) {
        let requested = state.withLock { state in
            state.source = source
            return state.requested
        }
        if requested { source.stop() }
    }

    /// The second signal. A recording aborts without cutting an access unit in half; before
    /// there is one, nothing is being written.
    public func abortProcess(exitStatus status: Int32) -> Never {
        if let recording = state.withLock({ $0.recording }) { recording.abortProcess(exitStatus: status) }
        _exit(status)
    }
}

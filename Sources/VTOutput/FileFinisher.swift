import Dispatch
import Synchronization
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// Finishes the files a segmented recording is done with, and deletes the ones it no longer
/// keeps, on `DiskThread`, in the order they were handed over.
///
/// Both wait for the disk: finishing an MP4 waits for its bytes to reach the medium
/// (fdatasync) before its header is written over, and unlinking a large file on a file system
/// mounted with `discard` waits for the device to discard its blocks. On a busy or slow disk
/// (another program writing, an SD card) either can take a second, which on the encoder thread
/// is a second of frames dropped at the queue. Here the encoder thread only hands the file over
/// and goes on with the next segment.
///
/// At most `capacity` files wait to be finished: a disk slower than that holds the encoder
/// back rather than letting finished files pile up. A failure is kept and reported by the
/// next `check()` (the segmented output's next write) or by `wait()`.
final class FileFinisher: Sendable {
    /// What the files handed over hold (each as finished, or as it was handed over while it
    /// waits: an MP4 counts its last fragment and its index once finished), whether all
    /// finished so far were finalized, and the first failure.
    struct Outcome: Sendable {
        var statistics = OutputStatistics()
        var finalized: Bool?
        var failure: OutputError?
    }

    /// A file the encoder thread handed over and no longer touches.
    private struct Handed: @unchecked Sendable {
        let output: any MediaOutput
    }

    private let room: DispatchSemaphore
    private let state = Mutex(Outcome())

    init(capacity: Int = 3) {
        room = DispatchSemaphore(value: capacity)
    }

    /// Finishes `output` (kept even if empty) and closes it.
    func finish(_ output: any MediaOutput) {
        let before = output.statistics
        state.withLock { $0.statistics = $0.statistics + before }
        room.wait()
        let handed = Handed(output: output)
        DiskThread.shared.run { [self] in
            defer { room.signal() }
            let output = handed.output
            do throws(OutputError) {
                try output.finish(keepEmpty: true)
            } catch {
                state.withLock { if $0.failure == nil { $0.failure = error } }
            }
            let added = output.statistics - before
            let finalized = output.finalized
            state.withLock { outcome in
                outcome.statistics = outcome.statistics + added
                if let finalized { outcome.finalized = finalized && (outcome.finalized ?? true) }
            }
        }
    }

    /// Deletes `path` after the files handed over before it are finished. Someone else removing
    /// it first is what was wanted anyway; another failure is told to `warn`.
    func delete(_ path: String, warn: @escaping @Sendable (SystemError) -> Void) {
        DiskThread.shared.run {
            do throws(SystemError) {
                try systemCall("unlink") { unlink(path) }
            } catch where error.errno != ENOENT {
                warn(error)
            } catch {}
        }
    }

    /// What the files finished so far came to.
    var outcome: Outcome { state.withLock { $0 } }

    /// Throws the first failure of a file finished so far.
    func check() throws(OutputError) {
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    /// Waits until every file handed over is finished and every deletion done, then throws the
    /// first failure.
    func wait() throws(OutputError) {
        DiskThread.shared.waitForAll()
        try check()
    }
}

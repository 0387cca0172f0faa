import Foundation
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGINT and SIGTERM into a clean stop: the first asks the recording to finish (drain,
/// flush, close, summary, exit 0), a second aborts at once. SIGUSR1 asks for an event clip
/// (`--events`), as often as it comes.
///
/// The signals are blocked in every thread and taken by one thread with sigwait(2), so no
/// handler runs at an arbitrary point and blocking calls elsewhere are not interrupted.
public enum StopSignals {
    /// Broken pipes and file-size limits come back as EPIPE and EFBIG from write(2) instead of
    /// killing the process, so the writer can say what happened and keep the file whole.
    public static func ignoreWriteSignals() {
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
    }

    /// Call before any other thread starts: threads inherit the blocked set.
    /// `hangUp` adds SIGHUP (a closed terminal) to the signals that stop.
    public static func blockStopSignals(hangUp: Bool = false) {
        var set = stopSignals(hangUp: hangUp)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Starts the thread that waits for the signals. `onFirst` gets the signal's name;
    /// `onEvent` is called for each SIGUSR1.
    public static func start(hangUp: Bool = false, onFirst: @escaping @Sendable (String) -> Void,
                             onSecond: @escaping @Sendable () -> Never,
                             onEvent: @escaping @Sendable () -> Void = {}) {
        Thread.start(named: "vtrecord-sig") {
            var set = stopSignals(hangUp: hangUp)
            var count = 0
            while true {
                var received: Int32 = 0
                guard sigwait(&set, &received) == 0 else { continue }
                if received == SIGUSR1 {
                    onEvent()
                    continue
                }
                count += 1
                if count == 1 {
                    onFirst(received == SIGINT ? "SIGINT" : received == SIGHUP ? "SIGHUP" : "SIGTERM")
                } else {
                    onSecond()
                }
            }
        }
    }

    private static func stopSignals(hangUp: Bool) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGUSR1)
        if hangUp { sigaddset(&set, SIGHUP) }
        return set
    }
}

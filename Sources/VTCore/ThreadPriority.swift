#if canImport(Glibc)
import Glibc
#endif

/// The calling thread's scheduling priority (its nice value, which Linux keeps per thread).
public enum ThreadPriority {
    /// How far a live source's capture thread, the camera's or the microphone's, raises its
    /// priority above the encoder's, where the system allows it.
    public static let liveCaptureBoost: Int32 = 10

    /// A live capture thread has a deadline every period (a buffer back to the driver before
    /// the next one comes due; samples read before the device's ring overruns) while the
    /// encoders only have throughput: given the same priority, encoders using every core can
    /// keep it off the CPU long enough to lose data or time it late. Raising it needs root,
    /// CAP_SYS_NICE or an RLIMIT_NICE (limits.conf); without them the thread stays at the
    /// normal priority.
    public static func raiseForLiveCapture() {
        move(by: -liveCaptureBoost)
    }

    /// Moves the calling thread's nice value by `delta`: negative raises its priority, which
    /// needs the rights above (without them, EPERM or EACCES leave it as it is); positive
    /// lowers it, which is always allowed.
    public static func move(by delta: Int32) {
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let current = getpriority(which, 0)
        guard errno == 0 else { return }
        // who 0 is the calling thread.
        _ = try? systemCall("setpriority") { setpriority(which, 0, current + delta) }
    }
}

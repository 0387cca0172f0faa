import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// Moves the calling thread's nice value (per thread on Linux) by `delta`: negative raises its
/// priority, which needs root, CAP_SYS_NICE or an RLIMIT_NICE (without them, EPERM or EACCES
/// leave it as it is); positive lowers it, which is always allowed.
func moveThreadNice(by delta: Int32) {
    let which = __priority_which_t(PRIO_PROCESS.rawValue)
    errno = 0
    let current = getpriority(which, 0)
    guard errno == 0 else { return }
    // who 0 is the calling thread.
    _ = try? systemCall("setpriority") { setpriority(which, 0, current + delta) }
}

#if canImport(Glibc)
import Glibc
#endif

/// The clock live sources pace frames by: it does not jump when the wall clock is set.
public enum MonotonicClock {
    public static func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// CPU time used so far by every thread of the process, or by the calling thread only.
    public static func cpuNanoseconds(thread: Bool = false) -> Int64 {
        var used = timespec()
        clock_gettime(thread ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID, &used)
        return Int64(used.tv_sec) * 1_000_000_000 + Int64(used.tv_nsec)
    }
}

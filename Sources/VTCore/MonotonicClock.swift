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
}

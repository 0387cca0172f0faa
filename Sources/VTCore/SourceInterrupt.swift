import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One source's way out of its blocking waits, a latch: tripped once from any thread, it wakes
/// a capture thread blocked in `poll(2)` (waiting on a pipe, a camera, a microphone, or the
/// next frame time of a paced source) and ends every wait after. It knows nothing of signals
/// or recordings; `StopRequest` decides when a recording stops, and the recording stops its
/// source, which trips this.
///
/// A flag alone would be seen only after the blocking call returned, which on an idle pipe or
/// at a low frame rate could be never or seconds later.
public final class SourceInterrupt: Sendable {
    private let tripped = Atomic<Bool>(false)
    /// A pipe whose read end becomes readable once stop is requested; nothing ever reads it,
    /// so it stays readable for every later poll.
    private let wakeRead: Int32
    private let wakeWrite: Int32

    public init() {
        var fds: [Int32] = [-1, -1]
        // pipe() fails only when the process is out of file descriptors; a signal that cannot
        // wake a poll still works as a flag, so stopping degrades rather than fails. fcntl on
        // a pipe just made cannot fail.
        if (try? systemCall("pipe") { pipe(&fds) }) != nil {
            for fd in fds { _ = try? systemCall("fcntl") { fcntl(fd, F_SETFD, FD_CLOEXEC) } }
            _ = try? systemCall("fcntl") { fcntl(fds[1], F_SETFL, O_NONBLOCK) }
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
    }

    deinit {
        if wakeRead >= 0 { try? closeDescriptor(wakeRead) }
        if wakeWrite >= 0 { try? closeDescriptor(wakeWrite) }
    }

    public var isTripped: Bool { tripped.load(ordering: .acquiring) }

    /// Ends the source's waits, now and from then on; a second call does nothing.
    public func trip() {
        guard !tripped.exchange(true, ordering: .acquiringAndReleasing), wakeWrite >= 0 else { return }
        var byte: UInt8 = 1
        // The pipe is empty and nothing else writes it, so this byte fits; were it ever full,
        // the read end would already be readable, which is all the byte is for.
        _ = try? systemCall("write") { write(wakeWrite, &byte, 1) }
    }

    /// Waits until `fd` is readable (or at end of input). Returns false if stop was requested
    /// first.
    public func waitUntilReadable(_ fd: Int32) -> Bool {
        poll(fd: fd, timeoutMilliseconds: -1)
    }

    /// Sleeps until `deadline` (nanoseconds on `CLOCK_MONOTONIC`). Returns false if stop was
    /// requested first.
    public func sleep(untilMonotonic deadline: Int64) -> Bool {
        while !isTripped {
            let remaining = deadline - MonotonicClock.nanoseconds()
            if remaining <= 0 { return true }
            // poll counts whole milliseconds: round up so a frame is never early; deadlines are
            // absolute, so the rounding does not accumulate from frame to frame.
            let milliseconds = Int32(min((remaining + 999_999) / 1_000_000, Int64(Int32.max)))
            if !poll(fd: -1, timeoutMilliseconds: milliseconds) { return false }
        }
        return false
    }

    /// Polls `descriptors` together with the wake pipe, for at most `timeoutMilliseconds` (-1
    /// waits as long as it takes). Returns false when stop was requested first, true when one
    /// of them is ready (see their `revents`) or the time ran out. The corresponding C function
    /// is `poll`; EINTR is retried.
    public func poll(_ descriptors: inout [pollfd], timeoutMilliseconds: Int32) throws(SystemError) -> Bool {
        if isTripped { return false }
        descriptors.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
        defer { descriptors.removeLast() }
        try systemCall("poll") { Glibc.poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds) }
        return !(descriptors[descriptors.count - 1].revents != 0 || isTripped)
    }

    /// Polls `fd` (ignored when negative) together with the wake pipe. Returns false when the
    /// wake pipe fired or stop was requested.
    private func poll(fd: Int32, timeoutMilliseconds: Int32) -> Bool {
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        // poll fails (past EINTR, which the funnel retries) only for EINVAL/ENOMEM; letting
        // the caller's read(2) or clock check go ahead reports or rides out any real problem.
        return (try? poll(&fds, timeoutMilliseconds: timeoutMilliseconds)) ?? !isTripped
    }
}

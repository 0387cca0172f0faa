import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: what was called (`open`, `write`, `ioctl(VIDIOC_DQBUF)`, `mmap`) and
/// the errno it gave.
public struct SystemError: Error, Equatable, CustomStringConvertible {
    public let call: String
    public let errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var reason: String { Self.reason(errno) }
    public var description: String { "\(call): \(reason)" }

    /// strerror's text for `code`.
    public static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}

/// Where a descriptor came from, which decides what EBADF means.
public enum DescriptorOrigin: Sendable {
    /// Opened by this process: EBADF means it was closed twice or never opened, a bug.
    case own
    /// Handed to the process (standard input, output, error): it may have been closed before
    /// vtrecord started, which is the caller's environment, reported like any other error.
    case inherited
}

// MARK: - The funnel

/// Makes one system call the way every call in vtrecord is made (the pattern of swift-nio's
/// `syscall`): a call interrupted by a signal (EINTR) is made again; EBADF on a descriptor of
/// our own and EFAULT are programming errors and stop the process, naming the call; any other
/// failure is thrown as a `SystemError` naming the call and errno, for the caller to turn into
/// what it means there (ENOSPC is "disk full", ENODEV from a camera is "unplugged").
///
/// `call` names the call for errors and for `SystemCallFaults`; it is only evaluated when
/// something failed or a test has armed faults. `body` returns -1 on failure with errno set.
@inline(__always)
@discardableResult
public func systemCall<T: FixedWidthInteger & SignedInteger>(
    _ call: @autoclosure () -> String, descriptor: DescriptorOrigin = .own, _ body: () -> T
) throws(SystemError) -> T {
    try retrying(call, descriptor) {
        let result = body()
        return result == -1 ? nil : result
    }
}

/// `systemCall` for calls that return a pointer and report failure as nil or `MAP_FAILED`
/// (`mmap`). The corresponding C function is `mmap`.
@inline(__always)
public func systemCall(
    _ call: @autoclosure () -> String, _ body: () -> UnsafeMutableRawPointer?
) throws(SystemError) -> UnsafeMutableRawPointer {
    try retrying(call, .own) {
        let result = body()
        return result == MAP_FAILED ? nil : result
    }
}

/// The funnel's loop: `attempt` gives nil on failure, with errno set.
@inline(__always)
private func retrying<R>(_ call: () -> String, _ descriptor: DescriptorOrigin,
                         _ attempt: () -> R?) throws(SystemError) -> R {
    while true {
        let code: Int32
        if let forced = SystemCallFaults.forcedErrno(call) {
            code = forced
        } else {
            if let result = attempt() { return result }
            code = errno
        }
        if code == EINTR { continue }
        throw failure(call(), code, descriptor)
    }
}

/// Closes a descriptor of our own. Unlike every other call, close is not made again after
/// EINTR: Linux has already released the descriptor, and a second close could close one
/// another thread has just been given. The corresponding C function is `close`.
///
/// `close` is the function that closes it, for a descriptor a library handed out
/// (`v4l2_close` for one given to libv4l2).
public func closeDescriptor(_ fd: Int32, call: String = "close",
                            _ close: (Int32) -> Int32 = { Glibc.close($0) }) throws(SystemError) {
    let code: Int32
    if let forced = SystemCallFaults.forcedErrno({ call }) {
        code = forced
        _ = close(fd)
    } else {
        if close(fd) == 0 { return }
        code = errno
    }
    if code == EINTR { return }
    throw failure(call, code, .own)
}

/// Gives a mapping back. munmap fails only for a range that is not mapped, which is a bug, so
/// a failure stops the process. `munmap` is the function that unmaps it, for a mapping a
/// library made (`v4l2_munmap`). The corresponding C function is `munmap`.
public func unmapMemory(_ address: UnsafeMutableRawPointer, length: Int,
                        _ munmap: (UnsafeMutableRawPointer, Int) -> Int32 = { Glibc.munmap($0, $1) }) {
    do {
        try systemCall("munmap") { munmap(address, length) }
    } catch {
        preconditionFailure("unmapping \(length) bytes at \(address): \(error)")
    }
}

/// Writes all of `bytes` to `fd`, continuing after short writes. The corresponding C function
/// is `write`.
public func writeFully(_ fd: Int32, _ bytes: UnsafeRawBufferPointer,
                       descriptor: DescriptorOrigin = .own) throws(SystemError) {
    var offset = 0
    while offset < bytes.count {
        offset += try systemCall("write", descriptor: descriptor) {
            write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        }
    }
}

/// `writeFully` for an array's bytes.
public func writeFully(_ fd: Int32, _ bytes: [UInt8], descriptor: DescriptorOrigin = .own) throws(SystemError) {
    let result = bytes.withUnsafeBytes { buffer in
        Result { () throws(SystemError) in try writeFully(fd, buffer, descriptor: descriptor) }
    }
    try result.get()
}

/// Writes a line to standard error with one write(2). The C global `stderr` is not
/// concurrency-safe in Swift 6, so messages go to fd 2 directly. Where standard error has
/// been closed or fails there is nowhere left to say so, and the line is lost.
public func writeToStandardError(_ text: String) {
    var line = text
    if !line.hasSuffix("\n") { line += "\n" }
    try? writeFully(2, Array(line.utf8), descriptor: .inherited)
}

private func failure(_ call: String, _ code: Int32, _ descriptor: DescriptorOrigin) -> SystemError {
    if let bug = SystemError.programmingError(code, descriptor: descriptor) {
        preconditionFailure("\(call) \(bug): a bug in vtrecord")
    }
    return SystemError(call: call, errno: code)
}

extension SystemError {
    /// What `code` says about the program itself, when it says the call was made wrongly
    /// rather than refused: EFAULT always, EBADF on a descriptor of our own. The funnel stops
    /// the process with it instead of reporting it as the user's problem.
    public static func programmingError(_ code: Int32, descriptor: DescriptorOrigin) -> String? {
        switch code {
        case EFAULT: "was given a bad address (EFAULT)"
        case EBADF where descriptor == .own: "was given a descriptor that is not open (EBADF)"
        default: nil
        }
    }
}

// MARK: - The test seam

/// Makes named system calls fail with a chosen errno, so a test can reach every error path
/// without a broken disk or device (the seam swift-system's mocking gives).
///
///     let faults = SystemCallFaults([.init(call: "write", errno: ENOSPC, after: 2)])
///     try faults.during { try output.write(frame) }   // the third write fails
///     #expect(faults.attempts(of: "write") == 3)
///
/// Rules apply only to calls made on the thread that runs `during`, so tests running side by
/// side never see each other's faults. With nothing armed the funnel pays one relaxed atomic
/// load per call.
public final class SystemCallFaults: Sendable {
    public struct Rule: Sendable {
        public var call: String
        public var errno: Int32
        /// Calls that go through untouched before the first failure.
        public var after: Int
        /// Failures before the call works again (Int.max: for good).
        public var times: Int

        public init(call: String, errno: Int32, after: Int = 0, times: Int = Int.max) {
            self.call = call
            self.errno = errno
            self.after = after
            self.times = times
        }
    }

    private struct State {
        var rules: [Rule]
        var attempts: [String: Int] = [:]
    }

    private let state: Mutex<State>

    public init(_ rules: [Rule]) {
        state = Mutex(State(rules: rules))
    }

    /// Runs `body` with the rules armed for calls on this thread.
    public func during<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        let thread = UInt(pthread_self())
        Self.registry.withLock { $0.append((thread, self)) }
        Self.armed.add(1, ordering: .releasing)
        defer {
            Self.registry.withLock { entries in
                if let index = entries.lastIndex(where: { $0.plan === self }) { entries.remove(at: index) }
            }
            Self.armed.subtract(1, ordering: .releasing)
        }
        return try body()
    }

    /// How many times `call` was attempted on the arming thread, failures and retries included.
    public func attempts(of call: String) -> Int {
        state.withLock { $0.attempts[call, default: 0] }
    }

    private static let armed = Atomic<Int>(0)
    private static let registry = Mutex<[(thread: UInt, plan: SystemCallFaults)]>([])

    /// The errno a test has armed for this attempt at `call`, if any.
    @inline(__always)
    static func forcedErrno(_ call: () -> String) -> Int32? {
        guard armed.load(ordering: .relaxed) != 0 else { return nil }
        return forcedErrnoSlow(call())
    }

    private static func forcedErrnoSlow(_ call: String) -> Int32? {
        let thread = UInt(pthread_self())
        guard let plan = registry.withLock({ $0.last(where: { $0.thread == thread })?.plan }) else { return nil }
        return plan.state.withLock { state in
            state.attempts[call, default: 0] += 1
            guard let index = state.rules.firstIndex(where: { $0.call == call }) else { return nil }
            if state.rules[index].after > 0 {
                state.rules[index].after -= 1
                return nil
            }
            guard state.rules[index].times > 0 else { return nil }
            state.rules[index].times -= 1
            return state.rules[index].errno
        }
    }
}

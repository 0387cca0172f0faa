#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call: its name and errno.
public struct SystemError: Error, Equatable, CustomStringConvertible {
    public let call: String
    public let errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var reason: String { String(cString: strerror(errno)) }
    public var description: String { "\(call): \(reason)" }
}

/// Runs a system call, retrying while it is interrupted by a signal (EINTR), and turns -1
/// into a `SystemError` carrying the call's name.
@discardableResult
public func systemCall<T: FixedWidthInteger>(_ name: String, _ body: () -> T) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemError(call: name, errno: code)
    }
}

/// Writes all of `bytes` to `fd`, continuing after short writes and EINTR.
/// Returns nil on success, or the errno of the write that failed.
public func writeFully(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    var offset = 0
    while offset < bytes.count {
        let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return errno
        }
        offset += n
    }
    return nil
}

/// Writes a line to standard error with one write(2). The C global `stderr` is not
/// concurrency-safe in Swift 6, so messages go to fd 2 directly.
public func writeToStandardError(_ text: String) {
    var line = text
    if !line.hasSuffix("\n") { line += "\n" }
    _ = Array(line.utf8).withUnsafeBytes { writeFully(2, $0) }
}

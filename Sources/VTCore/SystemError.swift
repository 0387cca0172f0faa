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

/// Writes a line to standard error with one write(2). The C global `stderr` is not
/// concurrency-safe in Swift 6, so messages go to fd 2 directly.
public func writeToStandardError(_ text: String) {
    var line = text
    if !line.hasSuffix("\n") { line += "\n" }
    line.utf8CString.withUnsafeBufferPointer { buffer in
        var offset = 0
        let count = buffer.count - 1
        while offset < count {
            let n = write(2, buffer.baseAddress! + offset, count - offset)
            if n < 0 { if errno == EINTR { continue } else { return } }
            offset += n
        }
    }
}

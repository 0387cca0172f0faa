/// The exit codes scripts can rely on.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Success, including a clean stop by SIGINT or SIGTERM.
    case success = 0
    /// An unexpected failure.
    case failure = 1
    /// Bad usage, a bad option value or an input file vtrecord cannot read.
    case usage = 2
    /// The capture device is missing, busy, unsupported or was unplugged.
    case capture = 3
    /// The encoder failed or required hardware is unusable.
    case encoder = 4
    /// The output cannot be written (no permission, disk full, reader gone).
    case output = 5
    /// `verify` found a damaged file; `remux` left out frames of a damaged one.
    case damaged = 6
    /// Aborted by a second signal.
    case aborted = 130
}

/// An error with a message a user can act on and the exit code it ends the program with.
public protocol ReportableError: Error, CustomStringConvertible {
    var exitStatus: ExitStatus { get }
}

/// A bad option value or combination found after parsing (exit 2).
public struct UsageError: ReportableError, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var exitStatus: ExitStatus { .usage }
    public var description: String { message }
}

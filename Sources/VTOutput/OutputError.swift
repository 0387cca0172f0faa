import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// Why the output could not be written (exit 5).
public enum OutputError: ReportableError, Equatable {
    case exists(path: String)
    case cannotOpen(path: String, errno: Int32)
    case isDirectory(path: String)
    /// `cutBack`: the output is a regular file, cut back to its last complete `unit` (an
    /// access unit of a raw stream: "frame"; an MP4's "fragment").
    case diskFull(path: String, cutBack: Bool = false, unit: String = "frame")
    case fileTooLarge(path: String, cutBack: Bool = false, unit: String = "frame")
    case readerClosed(path: String)
    case writeFailed(path: String, errno: Int32)
    /// A muxer refused something (FFmpeg's, or a container writer of vtrecord's given what it
    /// cannot store): not an error of the medium, which is reported as one of the above.
    case muxer(path: String, reason: String)
    /// A network output could not connect, or its connection failed (`url` with its secrets
    /// masked).
    case network(url: String, reason: String)
    /// The session handed out an access unit that is not valid AVCC (a bug, not a user error).
    case invalidAccessUnit(reason: String)

    public var exitStatus: ExitStatus {
        if case .invalidAccessUnit = self { return .failure }
        return .output
    }

    public var description: String {
        switch self {
        case .exists(let path):
            return "\(path) already exists: choose another name with -o, or pass --overwrite"
        case let .cannotOpen(path, code):
            switch code {
            case EACCES, EPERM:
                return "cannot create \(path): no permission to write there"
            case ENOENT:
                return "cannot create \(path): its directory does not exist"
            case EROFS:
                return "cannot create \(path): the file system is read-only"
            default:
                return "cannot open \(path): \(SystemError(call: "open", errno: code).reason)"
            }
        case .isDirectory(let path):
            return "\(path) is a directory: give a file name with -o"
        case let .diskFull(path, cutBack, unit):
            return "\(Self.name(path)): no space left on the device" + Self.ending(cutBack, unit)
        case let .fileTooLarge(path, cutBack, unit):
            return "\(Self.name(path)): file size limit reached" + Self.ending(cutBack, unit)
        case .readerClosed(let path):
            return "\(Self.name(path)): the reading end of the pipe was closed"
        case let .writeFailed(path, code):
            return "cannot write \(Self.name(path)): \(SystemError(call: "write", errno: code).reason)"
        case let .muxer(path, reason):
            return "\(Self.name(path)): \(reason)"
        case let .network(url, reason):
            return "\(url): \(reason)"
        case .invalidAccessUnit(let reason):
            return "the encoder produced an invalid access unit: \(reason)"
        }
    }

    static func name(_ path: String) -> String { path == "-" ? "standard output" : path }

    /// What a failed write left of a regular file; a device or pipe keeps what it was given.
    private static func ending(_ cutBack: Bool, _ unit: String) -> String {
        cutBack ? "; the file ends at the last complete \(unit)" : ""
    }
}

import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// Why the output could not be written (exit 5).
public enum OutputError: ReportableError, Equatable {
    case exists(path: String)
    case cannotOpen(path: String, errno: Int32)
    case isDirectory(path: String)
    /// `cutBack`: the output is a regular file, cut back to its last complete access unit.
    case diskFull(path: String, cutBack: Bool = false)
    case fileTooLarge(path: String, cutBack: Bool = false)
    case readerClosed(path: String)
    case writeFailed(path: String, errno: Int32)
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
        case let .diskFull(path, cutBack):
            return "\(Self.name(path)): no space left on the device" + Self.ending(cutBack)
        case let .fileTooLarge(path, cutBack):
            return "\(Self.name(path)): file size limit reached" + Self.ending(cutBack)
        case .readerClosed(let path):
            return "\(Self.name(path)): the reading end of the pipe was closed"
        case let .writeFailed(path, code):
            return "cannot write \(Self.name(path)): \(SystemError(call: "write", errno: code).reason)"
        case .invalidAccessUnit(let reason):
            return "the encoder produced an invalid access unit: \(reason)"
        }
    }

    static func name(_ path: String) -> String { path == "-" ? "standard output" : path }

    /// What a failed write left of a regular file; a device or pipe keeps what it was given.
    private static func ending(_ cutBack: Bool) -> String {
        cutBack ? "; the file ends at the last complete frame" : ""
    }
}

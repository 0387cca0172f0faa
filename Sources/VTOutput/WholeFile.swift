import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// Writes a small document (a JSON summary) to `path`, or to standard output for "-",
/// replacing what was there.
public func writeWholeFile(path: String, bytes: [UInt8]) throws(OutputError) {
    let fd: Int32
    if path == "-" {
        fd = 1
    } else {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard fd >= 0 else {
            if errno == EISDIR { throw .isDirectory(path: path) }
            throw .cannotOpen(path: path, errno: errno)
        }
    }
    defer { if fd != 1 { close(fd) } }
    if let failure = bytes.withUnsafeBytes({ writeFully(fd, $0) }) { throw .writeFailed(path: path, errno: failure) }
}

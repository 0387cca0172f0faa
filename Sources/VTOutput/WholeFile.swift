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
        do {
            fd = try systemCall("open") { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666) }
        } catch {
            if error.errno == EISDIR { throw .isDirectory(path: path) }
            throw .cannotOpen(path: path, errno: error.errno)
        }
    }
    do {
        try writeFully(fd, bytes, descriptor: fd == 1 ? .inherited : .own)
        if fd != 1 { try closeDescriptor(fd) }
    } catch {
        if fd != 1 { try? closeDescriptor(fd) }
        throw .writeFailed(path: path, errno: error.errno)
    }
}

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
    } catch {
        if fd != 1 { try? closeDescriptor(fd) }
        throw .writeFailed(path: path, errno: error.errno)
    }
    // Linux releases the descriptor even when close(2) fails: it is never closed twice.
    if fd != 1 {
        do { try closeDescriptor(fd) } catch { throw .writeFailed(path: path, errno: error.errno) }
    }
}

/// Writes a small file (a still) so that a reader sees the file before or the file after,
/// never part of one: the bytes go to a new file beside `path`, are flushed to the disk, and
/// the new file then takes the name — by rename(2) when `replace`, else by link(2), which
/// refuses a name that exists, so an existing file is never replaced even by a race. "-" is
/// standard output. The corresponding C functions are `open`, `fdatasync`, `rename`, `link`.
public func writeFileAtomically(path: String, bytes: [UInt8], replace: Bool) throws(OutputError) {
    guard path != "-" else {
        try writeWholeFile(path: path, bytes: bytes)
        return
    }
    if !replace && access(path, F_OK) == 0 { throw .exists(path: path) }
    let slash = path.lastIndex(of: "/")
    let directory = slash.map { String(path[...$0]) } ?? ""
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    // Hidden, and unique to this process and call, so two writers never share a temporary.
    let temporary = "\(directory).\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
    let fd: Int32
    do {
        fd = try systemCall("open") { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666) }
    } catch {
        throw .cannotOpen(path: path, errno: error.errno)
    }
    var failure: SystemError?
    do {
        try writeFully(fd, bytes)
        try systemCall("fdatasync") { fdatasync(fd) }
    } catch {
        failure = error
    }
    // Closed once whatever happened: Linux releases the descriptor even when close(2) fails.
    do { try closeDescriptor(fd) } catch { failure = failure ?? error }
    if let failure {
        unlink(temporary)
        if failure.errno == ENOSPC { throw .diskFull(path: path) }
        if failure.errno == EFBIG { throw .fileTooLarge(path: path) }
        throw .writeFailed(path: path, errno: failure.errno)
    }
    do {
        if replace {
            try systemCall("rename") { rename(temporary, path) }
        } else {
            defer { unlink(temporary) }
            try systemCall("link") { link(temporary, path) }
        }
    } catch {
        if replace { unlink(temporary) }
        if error.errno == EEXIST { throw .exists(path: path) }
        if error.errno == EISDIR { throw .isDirectory(path: path) }
        throw .cannotOpen(path: path, errno: error.errno)
    }
}

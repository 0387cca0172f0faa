import CLinux
import Synchronization
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// The file (or standard output, a device, a pipe) an output writes to, and the rules every
/// output shares: an existing regular file is refused unless `overwrite`; a failed write cuts
/// a regular file back to the end of the last complete unit; a file this process made and put
/// nothing into can be removed again.
public final class OutputFile {
    /// The path as given; "-" is standard output.
    public let path: String
    /// A regular file: it can be cut back after a failed write and sought in (an output that
    /// finishes an index at the end needs that; a pipe or a terminal cannot).
    public let isRegularFile: Bool
    /// What the file is made of, as a failed write reports where it now ends: "frame" (one
    /// access unit per write), or "fragment" for an MP4.
    public var unitName = "frame"
    /// Bytes this output has written.
    public private(set) var bytesWritten: Int64 = 0

    private var fd: Int32
    private let ownsDescriptor: Bool
    /// The file did not exist before this output made it.
    private var createdFile = false
    /// Where our bytes start in a regular file (not 0 when standard output is appended to one).
    private var startOffset: off_t = 0
    /// Where `startWriteback` notes the ranges to write, made at its first call.
    private var writeback: WritebackRequests?

    /// Opens `path` ("-" for standard output). An existing regular file is refused unless
    /// `overwrite`; devices and FIFOs (/dev/null, a named pipe) are written as they are.
    public init(path: String, overwrite: Bool) throws(OutputError) {
        self.path = path
        if path == "-" {
            fd = 1
            ownsDescriptor = false
            var info = stat()
            isRegularFile = fstat(1, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
            if isRegularFile { startOffset = max(0, lseek(1, 0, SEEK_CUR)) }
            return
        }
        var info = stat()
        let exists = stat(path, &info) == 0
        let kind = info.st_mode & S_IFMT
        var flags = O_WRONLY | O_CLOEXEC
        if !exists {
            flags |= O_CREAT | O_EXCL
        } else if kind == S_IFDIR {
            throw .isDirectory(path: path)
        } else if kind == S_IFREG {
            guard overwrite else { throw .exists(path: path) }
            flags |= O_TRUNC
        }
        do {
            fd = try systemCall("open") { open(path, flags, 0o666) }
        } catch {
            // Another process created the file between stat and open.
            if error.errno == EEXIST { throw .exists(path: path) }
            throw .cannotOpen(path: path, errno: error.errno)
        }
        ownsDescriptor = true
        isRegularFile = !exists || kind == S_IFREG
        createdFile = !exists
        if isRegularFile { OutputFileRegistry.shared.opened(path) }
    }

    deinit {
        // Reached only after `close()` or when the recording already failed.
        if ownsDescriptor && fd >= 0 {
            try? closeDescriptor(fd)
            forget()
        }
    }

    /// The file is no longer held: retention may have it.
    private func forget() {
        if ownsDescriptor && isRegularFile { OutputFileRegistry.shared.closed(path) }
    }

    /// A file this output made that holds none of its bytes yet.
    public var isUnused: Bool { createdFile && bytesWritten == 0 }

    /// Appends `bytes` with one write(2) (continued after a short write), so a reader or a
    /// crash sees whole units. On failure a regular file is cut back to where it was.
    ///
    /// A full disk is first reported to whoever makes room (retention with `--keep-free`): when
    /// it made some, the unit is written again from where it started.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(OutputError) {
        var attempts = 0
        while true {
            do {
                try writeFully(fd, bytes, descriptor: ownsDescriptor ? .own : .inherited)
                break
            } catch {
                // Leave the file ending at its last complete unit.
                let length = startOffset + off_t(bytesWritten)
                let cutBack = isRegularFile && (try? systemCall("ftruncate") { ftruncate(fd, length) }) != nil
                attempts += 1
                if cutBack, error.errno == ENOSPC || error.errno == EDQUOT, attempts <= 3,
                   lseek(fd, length, SEEK_SET) == length, OutputFileRegistry.shared.makeRoom(for: path) {
                    continue
                }
                throw self.error(error.errno, cutBack: cutBack)
            }
        }
        bytesWritten += Int64(bytes.count)
    }

    /// `append` for bytes in an array.
    public func append(_ bytes: [UInt8]) throws(OutputError) {
        let failure = bytes.withUnsafeBytes { raw -> OutputError? in
            do throws(OutputError) { try append(raw) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Where the next appended byte goes, counted from the start of this output's bytes.
    public var endOffset: Int64 { bytesWritten }

    /// Writes `bytes` over bytes this output already wrote, at `offset` from the start of its
    /// bytes (a container's header finished in place). Only a regular file can do that.
    public func overwrite(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(OutputError) {
        precondition(isRegularFile && offset >= 0 && offset + Int64(bytes.count) <= bytesWritten,
                     "only bytes already written to a regular file are written over")
        var done = 0
        while done < bytes.count {
            let position = startOffset + off_t(offset) + off_t(done)
            do {
                done += try systemCall("pwrite", descriptor: ownsDescriptor ? .own : .inherited) {
                    pwrite(fd, bytes.baseAddress! + done, bytes.count - done, position)
                }
            } catch {
                throw self.error(error.errno)
            }
        }
    }

    /// `overwrite` for bytes in an array.
    public func overwrite(_ bytes: [UInt8], at offset: Int64) throws(OutputError) {
        let failure = bytes.withUnsafeBytes { raw -> OutputError? in
            do throws(OutputError) { try overwrite(raw, at: offset) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Starts writing the last `length` bytes appended to the medium (sync_file_range with
    /// SYNC_FILE_RANGE_WRITE): a power cut then loses less, and making the file durable at the
    /// end waits for little more than those bytes. Only a regular file; where the file system
    /// cannot, the kernel's own writeback does it later.
    ///
    /// The call itself runs on another thread (`WritebackRequests`): it does not wait for the
    /// writing, but it does wait for room in the disk's request queue, which a busy disk (other
    /// programs' writes, discards of deleted files) can fill for most of a second.
    public func startWriteback(ofLast length: Int64) {
        guard isRegularFile, length > 0, fd >= 0 else { return }
        if writeback == nil { writeback = WritebackRequests(duplicating: fd) }
        writeback?.add(offset: Int64(startOffset) + bytesWritten - length, length: length)
    }

    /// Waits until what was written so far is on the medium (fdatasync), so that what is written
    /// next cannot reach the disk before it. A device or pipe has nothing to wait for.
    public func synchronize() throws(OutputError) {
        guard isRegularFile else { return }
        do {
            try systemCall("fdatasync", descriptor: ownsDescriptor ? .own : .inherited) { fdatasync(fd) }
        } catch {
            throw self.error(error.errno)
        }
    }

    /// Closes the output. For a file, the data is handed to the kernel; close reports the
    /// errors some file systems only report there.
    public func close() throws(OutputError) {
        writeback = nil
        guard ownsDescriptor, fd >= 0 else { return }
        defer {
            fd = -1
            forget()
        }
        do {
            try closeDescriptor(fd)
        } catch {
            throw self.error(error.errno)
        }
    }

    /// Closes and deletes the file if this output made it and wrote nothing into it. True when
    /// it did.
    @discardableResult
    public func removeIfUnused() -> Bool {
        guard isUnused else { return false }
        if ownsDescriptor && fd >= 0 {
            // The file is going: whatever close reports about it no longer matters.
            try? closeDescriptor(fd)
            fd = -1
            forget()
        }
        createdFile = false
        return (try? systemCall("unlink") { unlink(path) }) != nil
    }

    private func error(_ code: Int32, cutBack: Bool = false) -> OutputError {
        switch code {
        case ENOSPC, EDQUOT: .diskFull(path: path, cutBack: cutBack, unit: unitName)
        case EFBIG: .fileTooLarge(path: path, cutBack: cutBack, unit: unitName)
        case EPIPE: .readerClosed(path: path)
        default: .writeFailed(path: path, errno: code)
        }
    }
}

/// The ranges of one file to start writing to the medium, started on `DiskThread`: the writer
/// only notes a range, and ranges noted while that thread is busy are started with one call.
/// It holds a descriptor of its own for the file (dup), so the file can be closed while a range
/// waits; that descriptor is closed once the last range was started and the file's writer let
/// go of it.
final class WritebackRequests: Sendable {
    private struct Pending {
        var start: Int64
        var end: Int64
    }

    private let fd: Int32
    private let pending = Mutex<Pending?>(nil)

    /// nil when the descriptor cannot be duplicated (then no range is started early).
    init?(duplicating descriptor: Int32) {
        guard let copy = try? systemCall("dup", { fcntl(descriptor, F_DUPFD_CLOEXEC, 0) }) else { return nil }
        fd = copy
    }

    deinit {
        try? closeDescriptor(fd)
    }

    func add(offset: Int64, length: Int64) {
        let first = pending.withLock { pending -> Bool in
            guard let noted = pending else {
                pending = Pending(start: offset, end: offset + length)
                return true
            }
            pending = Pending(start: min(noted.start, offset), end: max(noted.end, offset + length))
            return false
        }
        guard first else { return }
        DiskThread.shared.run { [self] in
            guard let range = pending.withLock({ pending in defer { pending = nil }; return pending }) else { return }
            _ = try? systemCall("sync_file_range") { vt_start_writeback(fd, range.start, range.end - range.start) }
        }
    }
}

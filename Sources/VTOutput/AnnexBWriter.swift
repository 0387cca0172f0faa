import VTCore
import VTH264

#if canImport(Glibc)
import Glibc
#endif

/// Writes a raw H.264 elementary stream (Annex B): start code + SPS, start code + PPS before
/// every keyframe, so every GOP decodes on its own, then each NAL unit of the access unit.
///
/// One write(2) per access unit, so the file always ends at its last complete access unit; a
/// regular file is cut back to that point after a failed write.
public final class AnnexBWriter {
    /// The path as given; "-" is standard output.
    public let path: String
    public private(set) var bytesWritten: Int64 = 0
    public private(set) var framesWritten = 0
    public private(set) var keyFramesWritten = 0

    private var fd: Int32
    private let ownsDescriptor: Bool
    private let isRegularFile: Bool
    /// The file did not exist before this writer made it.
    private var createdFile = false
    /// Where our bytes start in a regular file (not 0 when standard output is appended to one).
    private var startOffset: off_t = 0
    private var accessUnit: [UInt8] = []
    private var parameterSetsFor: FormatDescription?
    private var parameterSets: [[UInt8]] = []

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
        let opened = open(path, flags, 0o666)
        guard opened >= 0 else {
            // Another process created the file between stat and open.
            if errno == EEXIST { throw .exists(path: path) }
            throw .cannotOpen(path: path, errno: errno)
        }
        fd = opened
        ownsDescriptor = true
        isRegularFile = !exists || kind == S_IFREG
        createdFile = !exists
    }

    deinit {
        if ownsDescriptor && fd >= 0 { Glibc.close(fd) }
    }

    /// Appends one access unit, with the parameter sets of `format` first when it is a keyframe.
    public func write(_ frame: EncodedFrame, format: FormatDescription) throws(OutputError) {
        accessUnit.removeAll(keepingCapacity: true)
        if frame.isKeyFrame && parameterSetsFor != format {
            parameterSets = format.sequenceParameterSets + format.pictureParameterSets
            parameterSetsFor = format
        }
        do {
            try frame.data.withUnsafeBytes { avcc in
                try AnnexB.appendAccessUnit(avcc: avcc, nalUnitLengthSize: format.nalUnitLengthSize,
                                            parameterSets: frame.isKeyFrame ? parameterSets : [],
                                            to: &accessUnit)
            }
        } catch {
            throw .invalidAccessUnit(reason: "\(error)")
        }
        try writeAll(accessUnit)
        bytesWritten += Int64(accessUnit.count)
        framesWritten += 1
        if frame.isKeyFrame { keyFramesWritten += 1 }
    }

    /// Closes the output. For a file, the data is handed to the kernel; close reports the
    /// errors some file systems only report there.
    public func close() throws(OutputError) {
        guard ownsDescriptor, fd >= 0 else { return }
        let result = Glibc.close(fd)
        let code = errno
        fd = -1
        if result != 0 && code != EINTR { throw mapWriteError(code) }
    }

    /// Closes and deletes the file if this writer created it and it holds no access unit, so
    /// a recording that ends before its first frame leaves nothing behind. True when it did.
    @discardableResult
    public func removeIfUnused() -> Bool {
        guard createdFile, bytesWritten == 0 else { return false }
        if fd >= 0 {
            // The file is going: whatever close reports about it no longer matters.
            _ = Glibc.close(fd)
            fd = -1
        }
        createdFile = false
        return unlink(path) == 0
    }

    private func writeAll(_ bytes: [UInt8]) throws(OutputError) {
        guard let failure = bytes.withUnsafeBytes({ writeFully(fd, $0) }) else { return }
        // Leave the file ending at its last complete access unit.
        let cutBack = isRegularFile && ftruncate(fd, startOffset + off_t(bytesWritten)) == 0
        throw mapWriteError(failure, cutBack: cutBack)
    }

    private func mapWriteError(_ code: Int32, cutBack: Bool = false) -> OutputError {
        switch code {
        case ENOSPC, EDQUOT: .diskFull(path: path, cutBack: cutBack)
        case EFBIG: .fileTooLarge(path: path, cutBack: cutBack)
        case EPIPE: .readerClosed(path: path)
        default: .writeFailed(path: path, errno: code)
        }
    }
}

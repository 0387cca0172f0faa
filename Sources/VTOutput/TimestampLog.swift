import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// `--timestamps FILE`: the time of every encoded frame, in mkvmerge's "timestamp format v2"
/// (a header line, then one time in milliseconds per frame in presentation order), so
/// `mkvmerge --timestamps 0:FILE` can give a raw stream its capture timing back.
///
/// Lines are collected in memory and written in large pieces; the file is created when the
/// log is, so a bad path fails before recording starts.
public final class TimestampLog {
    public let path: String
    private let fd: Int32
    private var pending: [UInt8] = []
    private static let flushSize = 64 * 1024

    /// Whether this log made the file (rather than truncating or writing one that was there,
    /// such as /dev/null): only then may it be removed again.
    public let createdFile: Bool

    public init(path: String, overwrite: Bool) throws(OutputError) {
        self.path = path
        do {
            do {
                fd = try systemCall("open") { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666) }
                createdFile = true
            } catch where error.errno == EEXIST && overwrite {
                fd = try systemCall("open") { open(path, O_WRONLY | O_TRUNC | O_CLOEXEC) }
                createdFile = false
            }
        } catch {
            switch error.errno {
            case EEXIST: throw .exists(path: path)
            case EISDIR: throw .isDirectory(path: path)
            case let code: throw .cannotOpen(path: path, errno: code)
            }
        }
        pending.append(contentsOf: "# timestamp format v2\n".utf8)
    }

    deinit {
        // Every line was written by `close()` or the recording already failed.
        try? closeDescriptor(fd)
    }

    /// Deletes the file if this log created it: a run that wrote no frame leaves none behind.
    /// A file that was there before (or a device) is left alone.
    public func removeIfCreated() {
        if createdFile { _ = try? systemCall("unlink") { unlink(path) } }
    }

    /// Adds the time of the next encoded frame.
    public func record(_ time: MediaTime) throws(OutputError) {
        pending.append(contentsOf: Self.format(time.seconds * 1000).utf8)
        pending.append(0x0A)
        if pending.count >= Self.flushSize { try flush() }
    }

    /// Writes what is left; the file then holds a line per encoded frame.
    public func close() throws(OutputError) {
        try flush()
    }

    private func flush() throws(OutputError) {
        guard !pending.isEmpty else { return }
        do {
            try writeFully(fd, pending)
        } catch {
            throw error.errno == ENOSPC ? .diskFull(path: path) : .writeFailed(path: path, errno: error.errno)
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Milliseconds with microsecond precision, without a trailing fraction when whole.
    static func format(_ milliseconds: Double) -> String {
        let micro = Int64((milliseconds * 1000).rounded())
        let whole = micro / 1000
        let fraction = abs(micro % 1000)
        guard fraction != 0 else { return "\(whole)" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }
}

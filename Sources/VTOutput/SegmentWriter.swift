import Foundation
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// The recording's output: one file, or a run of segment files named from an `OutputTemplate`,
/// each an `AnnexBWriter` of its own. It decides nothing about where segments end; the
/// recorder tells it when the next one starts (always at a keyframe, so each file plays alone).
///
/// With `maxFiles`, only the newest files are kept: starting a file deletes the oldest beyond
/// that count, never the one being written.
public final class SegmentWriter {
    public let template: OutputTemplate
    /// Every file written, in order, including any deleted since to keep `maxFiles`.
    public private(set) var paths: [String] = []
    public var bytesWritten: Int64 { closedBytes + current.bytesWritten }
    public var framesWritten: Int { closedFrames + current.framesWritten }
    public var keyFramesWritten: Int { closedKeyFrames + current.keyFramesWritten }
    /// Bytes in the file being written.
    public var segmentBytesWritten: Int64 { current.bytesWritten }

    private var current: AnnexBWriter
    private let device: String
    private let preset: String?
    private let overwrite: Bool
    private let maxFiles: Int?
    private let now: () -> Date
    private let warn: (String) -> Void
    /// Files on disk, oldest first, for `maxFiles`.
    private var kept: [String] = []
    private var closedBytes: Int64 = 0
    private var closedFrames = 0
    private var closedKeyFrames = 0

    /// Opens the first file (segment 0). `device` and `preset` fill the template's fields;
    /// `now` gives each file's start time; `warn` reports a file that could not be deleted.
    public init(template: OutputTemplate, device: String, preset: String? = nil, overwrite: Bool,
                maxFiles: Int? = nil, now: @escaping () -> Date = Date.init,
                warn: @escaping (String) -> Void = { _ in }) throws(OutputError) {
        precondition(maxFiles.map { $0 >= 1 } ?? true, "maxFiles must keep at least the file being written")
        self.template = template
        self.device = device
        self.preset = preset
        self.overwrite = overwrite
        self.maxFiles = maxFiles
        self.now = now
        self.warn = warn
        let path = template.expand(.init(date: now(), device: device, preset: preset, segment: 0))
        current = try AnnexBWriter(path: path, overwrite: overwrite)
        paths = [path]
        kept = [path]
    }

    /// The file being written.
    public var currentPath: String { current.path }

    /// Appends one access unit to the current file.
    public func write(_ frame: EncodedFrame, format: FormatDescription) throws(OutputError) {
        try current.write(frame, format: format)
    }

    /// Closes the current file and opens the next, named for the next segment number and the
    /// time now. The next access unit written must be a keyframe.
    public func startNextSegment() throws(OutputError) {
        let path = template.expand(.init(date: now(), device: device, preset: preset, segment: paths.count))
        try current.close()
        // Counted once the next file is open: until then the closed writer still holds them.
        let next = try AnnexBWriter(path: path, overwrite: overwrite)
        closedBytes += current.bytesWritten
        closedFrames += current.framesWritten
        closedKeyFrames += current.keyFramesWritten
        current = next
        paths.append(path)
        kept.append(path)
        deleteOldest()
    }

    /// Closes the current file.
    public func close() throws(OutputError) {
        try current.close()
    }

    /// Deletes the file being written if this writer created it and no frame went into it: a
    /// recording that ends before its first frame leaves nothing behind, and one that fails on
    /// the first frame of a new segment (a full disk) leaves no empty file after the full ones.
    /// True when it did.
    @discardableResult
    public func removeIfUnused() -> Bool {
        guard current.framesWritten == 0, current.removeIfUnused() else { return false }
        paths.removeLast()
        kept.removeLast()
        return true
    }

    private func deleteOldest() {
        guard let maxFiles else { return }
        while kept.count > maxFiles {
            let oldest = kept.removeFirst()
            // Someone else removing it first is what was wanted anyway.
            if unlink(oldest) != 0 && errno != ENOENT {
                let reason = SystemError(call: "unlink", errno: errno).reason
                warn("could not delete \(oldest) to keep the newest \(maxFiles) files: \(reason); it stays")
            }
        }
    }
}

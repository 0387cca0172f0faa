import Foundation
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// A recording split into a run of files named from an `OutputTemplate`, each an output of its
/// own made by `open` (any kind: a raw stream, a container): a decorator that knows its files
/// only as `MediaOutput`s. It decides where segments begin (`SegmentBoundaries`): it asks for a
/// keyframe where a segment starts, and opens the next file when that keyframe comes out, so
/// each file starts with a keyframe and its parameter sets and plays alone.
///
/// `{n}` counts from `firstNumber`: a recording started again in a folder where an earlier run
/// left files goes on after their highest number (`OutputTemplate.nextNumber`) instead of
/// colliding with them.
///
/// With `maxFiles`, only the newest files are kept: starting a file deletes the oldest beyond
/// that count, never the one being written.
///
/// With sound (`audioSampleRate`), a file is finished only once the sound has passed the
/// first picture of the next: the sound comes a little after the picture (it is written up to
/// the pictures already written, and its encoder holds a packet or two), and each file gets the
/// sound up to its own end rather than losing that last moment.
public final class SegmentedOutput: MediaOutput {
    public typealias Open = (_ path: String) throws(OutputError) -> any MediaOutput

    public let template: OutputTemplate
    /// Every file written, in order, including any deleted since to keep `maxFiles`.
    public private(set) var paths: [String] = []

    private var current: any MediaOutput
    /// The file before `current`, kept open for the sound up to `boundary` (in samples).
    private var previous: (any MediaOutput)?
    private var boundary: Int64 = 0
    private let audioSampleRate: Int?
    private let open: Open
    /// `{n}` of the first file.
    private let firstNumber: Int
    private var boundaries: SegmentBoundaries?
    private let device: String
    private let preset: String?
    private let maxFiles: Int?
    private let now: () -> Date
    private let warn: (String) -> Void
    /// Files on disk, oldest first, for `maxFiles`.
    private var kept: [String] = []
    private var closed = OutputStatistics()
    private var format: VideoFormatDescription?
    /// Whether every file finished so far was finalized (nil: the kind has nothing to finish).
    private var closedFinalized: Bool?

    /// Opens the first file (segment 0). `policy` nil: one file for the whole recording.
    /// `device` and `preset` fill the template's fields; `now` gives each file's start time;
    /// `warn` reports a file that could not be deleted.
    public init(template: OutputTemplate, policy: SegmentPolicy?, device: String, preset: String? = nil,
                maxFiles: Int? = nil, firstNumber: Int = 0, now: @escaping () -> Date = Date.init,
                audioSampleRate: Int? = nil, warn: @escaping (String) -> Void = { _ in },
                open: @escaping Open) throws(OutputError) {
        precondition(maxFiles.map { $0 >= 1 } ?? true, "maxFiles must keep at least the file being written")
        self.template = template
        self.boundaries = policy.map(SegmentBoundaries.init(policy:))
        self.device = device
        self.preset = preset
        self.maxFiles = maxFiles
        self.now = now
        self.warn = warn
        self.open = open
        self.firstNumber = firstNumber
        self.audioSampleRate = audioSampleRate
        let path = template.expand(.init(date: now(), device: device, preset: preset, segment: firstNumber))
        current = try open(path)
        paths = [path]
        kept = [path]
    }

    /// The file being written.
    public var currentPath: String { paths[paths.count - 1] }

    public var statistics: OutputStatistics { closed + (previous?.statistics ?? OutputStatistics()) + current.statistics }
    /// Bytes in the file being written.
    public var segmentBytesWritten: Int64 { current.statistics.bytes }
    public var unusedFile: String? { current.unusedFile }
    public var finalized: Bool? {
        guard let now = current.finalized else { return closedFinalized }
        return now && (closedFinalized ?? true)
    }

    public func requiresKeyFrame(for token: FrameToken, at pts: MediaTime) -> Bool {
        boundaries?.startsSegment(token, at: pts) ?? false
    }

    public func writeHeader(_ format: VideoFormatDescription) throws(OutputError) {
        self.format = format
        try current.writeHeader(format)
    }

    public func write(_ frame: EncodedFrame) throws(OutputError) {
        if boundaries?.switchesFile(before: frame) == true { try startNextSegment(at: frame.pts) }
        try current.write(frame)
        boundaries?.written(segmentBytes: current.statistics.bytes)
    }

    public func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError) {
        if let previous {
            if packet.pts < boundary { return try previous.writeAudio(packet) }
            try finishPrevious()
        }
        try current.writeAudio(packet)
    }

    public func finish(keepEmpty: Bool) throws(OutputError) {
        try finishPrevious()
        let empty = current.unusedFile != nil
        try current.finish(keepEmpty: keepEmpty)
        if empty && !keepEmpty { forgetCurrent() }
    }

    /// A file that could not take its first frame (a full disk at a segment's start) goes;
    /// the files before it stay whole.
    public func abandon() {
        previous?.abandon()
        previous = nil
        let empty = current.unusedFile != nil
        current.abandon()
        if empty { forgetCurrent() }
    }

    /// Finishes the current file and opens the next, named for the next segment number and
    /// the time now, with the header of the frames to come. The next frame written must be a
    /// keyframe; `start` is its presentation time, where a recording with sound keeps the
    /// current file open for the sound before it.
    public func startNextSegment(at start: MediaTime? = nil) throws(OutputError) {
        let path = template.expand(.init(date: now(), device: device, preset: preset, segment: firstNumber + paths.count))
        try finishPrevious()
        let keepForSound = audioSampleRate != nil && start != nil
        if !keepForSound { try current.finish(keepEmpty: true) }
        // Counted once the next file is open: until then the finished one still holds them.
        let next = try open(path)
        if let format { try next.writeHeader(format) }
        if let rate = audioSampleRate, let start, keepForSound {
            previous = current
            boundary = start.ticks(since: .zero, timescale: Int32(rate))
        } else {
            close(current)
        }
        current = next
        paths.append(path)
        kept.append(path)
        deleteOldest()
    }

    /// The file kept open for its sound is finished.
    private func finishPrevious() throws(OutputError) {
        guard let previous else { return }
        self.previous = nil
        try previous.finish(keepEmpty: true)
        close(previous)
    }

    /// Counts a finished file's frames and whether it was finalized.
    private func close(_ output: any MediaOutput) {
        closed = closed + output.statistics
        if let done = output.finalized { closedFinalized = done && (closedFinalized ?? true) }
    }

    /// The file being written was removed: it is no longer one of the recording's files.
    private func forgetCurrent() {
        paths.removeLast()
        kept.removeLast()
    }

    private func deleteOldest() {
        guard let maxFiles else { return }
        while kept.count > maxFiles {
            let oldest = kept.removeFirst()
            // Someone else removing it first is what was wanted anyway.
            do {
                try systemCall("unlink") { unlink(oldest) }
            } catch where error.errno != ENOENT {
                warn("could not delete \(oldest) to keep the newest \(maxFiles) files: \(error.reason); it stays")
            } catch {}
        }
    }
}

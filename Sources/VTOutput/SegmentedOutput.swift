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
/// A file the recording is done with is finished, and an old one deleted, by a `FileFinisher`
/// on its own thread, since both can wait for the disk; the next file is opened and written at
/// once. A file that fails to finish ends the recording at the next write, as a failed write
/// does. `finish` and `abandon` wait for the files handed over.
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
    /// `current` went to the finisher because the next file would not open: this thread no
    /// longer touches it, and the recording ends.
    private var currentHandedOver = false
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
    private let warn: @Sendable (String) -> Void
    private let finisher = FileFinisher()
    /// Files on disk, oldest first, for `maxFiles`.
    private var kept: [String] = []
    private var format: VideoFormatDescription?

    /// Opens the first file (segment 0). `policy` nil: one file for the whole recording.
    /// `device` and `preset` fill the template's fields; `now` gives each file's start time;
    /// `warn` reports a file that could not be deleted.
    public init(template: OutputTemplate, policy: SegmentPolicy?, device: String, preset: String? = nil,
                maxFiles: Int? = nil, firstNumber: Int = 0, now: @escaping () -> Date = Date.init,
                audioSampleRate: Int? = nil, warn: @escaping @Sendable (String) -> Void = { _ in },
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

    public var statistics: OutputStatistics {
        finisher.outcome.statistics + (previous?.statistics ?? OutputStatistics())
            + (currentHandedOver ? OutputStatistics() : current.statistics)
    }
    /// Bytes in the file being written.
    public var segmentBytesWritten: Int64 { current.statistics.bytes }
    public var unusedFile: String? { currentHandedOver ? nil : current.unusedFile }
    public var finalized: Bool? {
        // The files handed to the finisher count once it has finished them.
        let finished = finisher.outcome.finalized
        guard !currentHandedOver, let now = current.finalized else { return finished }
        return now && (finished ?? true)
    }

    public func requiresKeyFrame(for token: FrameToken, at pts: MediaTime) -> Bool {
        boundaries?.startsSegment(token, at: pts) ?? false
    }

    public func writeHeader(_ format: VideoFormatDescription) throws(OutputError) {
        self.format = format
        try current.writeHeader(format)
    }

    public func write(_ frame: EncodedFrame) throws(OutputError) {
        try write(frame) { (output) throws(OutputError) in try output.write(frame) }
    }

    public var writesAnnexB: Bool { current.writesAnnexB }

    public func write(_ frame: EncodedFrame, sharing annexB: SharedAnnexB) throws(OutputError) {
        try write(frame) { (output) throws(OutputError) in try output.write(frame, sharing: annexB) }
    }

    private func write(_ frame: EncodedFrame, to body: (any MediaOutput) throws(OutputError) -> Void) throws(OutputError) {
        try finisher.check()
        if boundaries?.switchesFile(before: frame) == true { try startNextSegment(at: frame.pts) }
        try body(current)
        boundaries?.written(segmentBytes: current.statistics.bytes)
    }

    public func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError) {
        try finisher.check()
        if let previous {
            if packet.pts < boundary { return try previous.writeAudio(packet) }
            finishPrevious()
        }
        try current.writeAudio(packet)
    }

    public func finish(keepEmpty: Bool) throws(OutputError) {
        finishPrevious()
        try finisher.wait()
        guard !currentHandedOver else { return }
        let empty = current.unusedFile != nil
        try current.finish(keepEmpty: keepEmpty)
        if empty && !keepEmpty { forgetCurrent() }
    }

    /// A file that could not take its first frame (a full disk at a segment's start) goes;
    /// the files before it stay whole.
    public func abandon() {
        previous?.abandon()
        previous = nil
        // The files finished before stay whole: the process may end once this returns.
        try? finisher.wait()
        guard !currentHandedOver else { return }
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
        finishPrevious()
        let keepForSound = audioSampleRate != nil && start != nil
        let next: any MediaOutput
        do throws(OutputError) {
            next = try open(path)
        } catch {
            // The recording ends here; the file it was writing is finished all the same.
            finisher.finish(current)
            currentHandedOver = true
            throw error
        }
        if let format { try next.writeHeader(format) }
        if let rate = audioSampleRate, let start, keepForSound {
            previous = current
            boundary = start.ticks(since: .zero, timescale: Int32(rate))
        } else {
            finisher.finish(current)
        }
        current = next
        paths.append(path)
        kept.append(path)
        deleteOldest()
    }

    /// Waits until the files the recording is done with are finished and the ones beyond
    /// `maxFiles` deleted, and throws the first failure among them.
    public func waitForFinishedFiles() throws(OutputError) {
        try finisher.wait()
    }

    /// The file kept open for its sound is done with.
    private func finishPrevious() {
        guard let previous else { return }
        self.previous = nil
        finisher.finish(previous)
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
            finisher.delete(oldest) { [warn] error in
                warn("could not delete \(oldest) to keep the newest \(maxFiles) files: \(error.reason); it stays")
            }
        }
    }
}

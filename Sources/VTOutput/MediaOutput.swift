import VTCore

/// What an output has taken so far.
public struct OutputStatistics: Sendable, Equatable {
    public var bytes: Int64 = 0
    public var frames = 0
    public var keyFrames = 0

    public init(bytes: Int64 = 0, frames: Int = 0, keyFrames: Int = 0) {
        self.bytes = bytes
        self.frames = frames
        self.keyFrames = keyFrames
    }

    static func + (lhs: OutputStatistics, rhs: OutputStatistics) -> OutputStatistics {
        OutputStatistics(bytes: lhs.bytes + rhs.bytes, frames: lhs.frames + rhs.frames,
                         keyFrames: lhs.keyFrames + rhs.keyFrames)
    }

    static func - (lhs: OutputStatistics, rhs: OutputStatistics) -> OutputStatistics {
        OutputStatistics(bytes: lhs.bytes - rhs.bytes, frames: lhs.frames - rhs.frames,
                         keyFrames: lhs.keyFrames - rhs.keyFrames)
    }
}

/// Where a recording's encoded frames go, in the x264 CLI's shape (open, write headers, write
/// frame, close): a raw H.264 stream (`AnnexBWriter`), and the containers that store a
/// session's output as it is (AVCC samples and an avcC built from the format description).
/// `SegmentedOutput` splits a recording into a run of files of any one kind.
///
/// The order of calls: the output is opened when it is made; `writeHeader` comes before the
/// first frame, and again whenever the session's parameter sets change; then `write` for
/// each access unit in decode order; then exactly one of `finish` (a clean end: whatever the
/// format keeps to the end, such as a sample table, is written now) or `abandon` (a failure:
/// the output is left as far as it got). An output that must seek back (to finish an index)
/// learns from its `OutputFile` whether it can; standard output cannot.
public protocol MediaOutput: AnyObject {
    /// Every file written, in order; "-" for standard output.
    var paths: [String] { get }
    var statistics: OutputStatistics { get }
    /// A file this output created that holds no frame yet: what an abort must remove so a
    /// recording that ends before its first frame leaves nothing behind.
    var unusedFile: String? { get }
    /// For a container that is finished at a clean end (MP4): whether every file written is
    /// finished; nil for a format that has nothing to finish (a raw stream).
    var finalized: Bool? { get }

    /// Asked once for each frame given to the encoder, in that order, with the frame's token
    /// and time: whether the output needs that frame coded as a keyframe (a new segment starts
    /// with it, so that each file plays alone).
    func requiresKeyFrame(for token: FrameToken, at pts: MediaTime) -> Bool

    /// The parameter sets the frames that follow were coded with.
    func writeHeader(_ format: VideoFormatDescription) throws(OutputError)

    /// Appends one access unit. A failed write leaves the output ending at its last complete
    /// access unit wherever the medium allows (a regular file is cut back to it).
    func write(_ frame: EncodedFrame) throws(OutputError)

    /// Whether the output writes access units in Annex B form (a raw stream, MPEG-TS, a
    /// stream it publishes), and so takes `write(_:sharing:)`'s bytes rather than converting.
    var writesAnnexB: Bool { get }

    /// `write(_:)` for an access unit whose Annex B form is shared with other outputs: one that
    /// writes Annex B takes those bytes (made by whichever output comes first), the others
    /// write the frame as it is.
    func write(_ frame: EncodedFrame, sharing annexB: SharedAnnexB) throws(OutputError)

    /// Appends one packet of the sound track, which the output was opened with (see
    /// `AssetWriter.Settings.audio`). Packets come in their own order, interleaved with the
    /// frames roughly by time (the recorder writes the sound up to each frame's decode time);
    /// an output that must order them (fragments, clusters) does so. Never called for an
    /// output opened without sound.
    func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError)

    /// A clean end: completes and closes the output; a file that holds no frame and was made
    /// by this output is removed when `keepEmpty` is false.
    func finish(keepEmpty: Bool) throws(OutputError)

    /// Ends the output after a failure, without completing it; never throws. A file this
    /// output made that holds no frame is removed.
    func abandon()

    /// The outputs written beside this one (`OutputFanOut`'s branches): what each did.
    var branchReports: [OutputBranch.Report] { get }

    /// What the output says of itself on the status line, beside the recording's figures
    /// (event clips: the clip being written, what the pre-roll holds). Read on the encoder thread.
    var statusNotes: [String] { get }
}

extension MediaOutput {
    public func requiresKeyFrame(for token: FrameToken, at pts: MediaTime) -> Bool { false }
    public var finalized: Bool? { nil }
    public var branchReports: [OutputBranch.Report] { [] }
    public var statusNotes: [String] { [] }
    public var writesAnnexB: Bool { false }
    public func write(_ frame: EncodedFrame, sharing annexB: SharedAnnexB) throws(OutputError) { try write(frame) }
}

/// An output that writes one file (or standard output): what every such writer shares, how a
/// clean end and an end after a failure treat the file, is written here once. A file that
/// holds no frame is removed unless asked to keep it; after a failure it is removed, or else
/// left as far as the writer got.
public protocol SingleFileOutput: MediaOutput {
    var file: OutputFile { get }
    /// Nothing is held back for the file (a fragment, a cluster, a muxer's buffer): with the
    /// file itself unused, the output holds no frame.
    var holdsNothing: Bool { get }
    /// Writes what a clean end completes (what is held back, a trailer, an index), before the
    /// file is closed.
    func complete() throws(OutputError)
    /// After a failure: writes what is held back if the medium still takes it; never throws.
    func salvage()
}

extension SingleFileOutput {
    public var paths: [String] { [file.path] }
    public var unusedFile: String? { file.isUnused && holdsNothing ? file.path : nil }

    public func finish(keepEmpty: Bool) throws(OutputError) {
        if !keepEmpty && unusedFile != nil && file.removeIfUnused() { return }
        try complete()
        try file.close()
    }

    public func abandon() {
        salvage()
        // What a failed close would report no longer changes anything.
        if !file.removeIfUnused() { try? file.close() }
    }
}

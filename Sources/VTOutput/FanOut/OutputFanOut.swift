import VTCore

/// One encode written to several outputs: the recording, written on the encoder thread as
/// ever (its failure ends the run), and branches beside it, each on its own thread behind its
/// own queue (`OutputBranch`), which it only hands packets to. Every access unit and sound
/// packet is shared with each branch, never copied.
///
/// Outputs `beside` the recording (event clips) are also written on the encoder thread, after
/// it: they only hand packets to threads of their own, and their failures are their own.
///
/// To the recorder it is the recording: its paths, figures and finalization are the
/// recording's. Keyframes the branches ask for (a stream opened again) are asked of the
/// encoder at most once a second for all of them together.
public final class OutputFanOut: MediaOutput {
    public let recording: any MediaOutput
    public let branches: [OutputBranch]
    /// Whether a branch writes Annex B: known when the branches are, not asked per frame.
    private let branchWritesAnnexB: Bool
    public let beside: [any MediaOutput]
    private var format: VideoFormatDescription?
    /// Where each segmented branch's files begin, by the branch's index.
    private var segmenters: [Int: SegmentBoundaries] = [:]
    /// Keyframes asked for branches.
    private var keyFramePacing = KeyFrameRequestPacing()
    private var ended = false

    public init(recording: any MediaOutput, branches: [OutputBranch], beside: [any MediaOutput] = []) {
        self.recording = recording
        self.branches = branches
        branchWritesAnnexB = branches.contains(where: \.writesAnnexB)
        self.beside = beside
        for (index, branch) in branches.enumerated() {
            if let policy = branch.segmentPolicy { segmenters[index] = SegmentBoundaries(policy: policy) }
        }
    }

    deinit { endBranches(finishing: false) }

    public var paths: [String] { recording.paths }
    public var statistics: OutputStatistics { recording.statistics }
    public var unusedFile: String? { recording.unusedFile }
    public var finalized: Bool? { recording.finalized }

    public var statusNotes: [String] { recording.statusNotes + beside.flatMap(\.statusNotes) }

    /// What each branch did, in the order given.
    public var branchReports: [OutputBranch.Report] { branches.map(\.report) }

    public func requiresKeyFrame(for token: FrameToken, at pts: MediaTime) -> Bool {
        var outputsWant = recording.requiresKeyFrame(for: token, at: pts)
        for output in beside where output.requiresKeyFrame(for: token, at: pts) { outputsWant = true }
        // Every segmenter sees every frame, in order.
        for index in segmenters.keys {
            if segmenters[index]?.startsSegment(token, at: pts) == true { outputsWant = true }
        }
        let now = MonotonicClock.nanoseconds()
        var branchWants = false
        if keyFramePacing.mayAsk(at: now) {
            for branch in branches where branch.takeKeyFrameRequest() { branchWants = true }
            if branchWants { keyFramePacing.asked(at: now) }
        }
        return outputsWant || branchWants
    }

    public func writeHeader(_ format: VideoFormatDescription) throws(OutputError) {
        try recording.writeHeader(format)
        for output in beside { try? output.writeHeader(format) }
        self.format = format
    }

    public func write(_ frame: EncodedFrame) throws(OutputError) {
        // Made only when an output writes Annex B, and then once for all of them.
        let annexB = format.flatMap { format in
            recording.writesAnnexB || branchWritesAnnexB ? SharedAnnexB(frame, format: format) : nil
        }
        if let annexB, recording.writesAnnexB {
            try recording.write(frame, sharing: annexB)
        } else {
            try recording.write(frame)
        }
        for output in beside { try? output.write(frame) }
        guard let format else { return }
        for (index, branch) in branches.enumerated() {
            let startsSegment = segmenters[index]?.switchesFile(before: frame) ?? false
            branch.offer(.frame(frame, format, startsSegment: startsSegment, annexB: branch.writesAnnexB ? annexB : nil))
            segmenters[index]?.written(segmentBytes: branch.segmentBytes)
        }
    }

    public func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError) {
        try recording.writeAudio(packet)
        for output in beside { try? output.writeAudio(packet) }
        for branch in branches { branch.offer(.sound(packet)) }
    }

    /// The recording is finished first, then each branch is given a moment to send what waits.
    public func finish(keepEmpty: Bool) throws(OutputError) {
        defer {
            for output in beside { try? output.finish(keepEmpty: false) }
            endBranches(finishing: true)
        }
        try recording.finish(keepEmpty: keepEmpty)
    }

    public func abandon() {
        recording.abandon()
        for output in beside { output.abandon() }
        endBranches(finishing: false)
    }

    private func endBranches(finishing: Bool) {
        guard !ended else { return }
        ended = true
        // Each branch is told before any is waited for, so they end side by side.
        if finishing {
            for branch in branches { branch.beginFinishing() }
            for branch in branches { branch.finish() }
        } else {
            for branch in branches { branch.abandon() }
        }
    }
}

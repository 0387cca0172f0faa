import VTAudio
import VTCapture
import VTCore
import VTEncoding
import VTOutput

/// Counters of one recording.
public struct RecordingStatistics: Sendable, Equatable {
    public var framesCaptured = 0
    public var framesEncoded = 0
    public var keyFrames = 0
    public var bytes: Int64 = 0
    /// Frames dropped because the encoder fell behind a live source.
    public var droppedQueue = 0
    public var source = CaptureStatistics()
    /// Repeats of a frame filling empty slots of the constant-rate grid.
    public var framesDuplicated = 0
    /// Frames that lost their grid slot to a later frame.
    public var framesDroppedTiming = 0
    /// Capture → written, per picture (sources with a capture clock only).
    public var latency = LatencyHistogram()
    /// Milliseconds: the longest the capture thread took to hand a frame on to the queue (or
    /// drop it). A live source's capture thread never waits for the encoder, so this stays
    /// far below a frame interval; a file's reader waits for room by design.
    public var longestCaptureHandoff = 0.0
    /// Milliseconds: the longest one picture kept the encoder thread in the encoder, and the
    /// longest one access unit took to write to the outputs (a file finished at a segment's
    /// end included).
    public var longestEncode = 0.0
    public var longestWrite = 0.0
    /// `--snapshot`: stills written, skipped and failed; nil without it.
    public var stills: StillTaker.Statistics?
    /// `--audio`: the sound track; nil without it.
    public var audio: AudioSummary?
    /// `--realtime adaptive`: the speeds the encoder ran at; nil when it did not adapt.
    public var speed: SpeedStatistics?
    /// `--motion`: what the detector saw; nil without it.
    public var motion: MotionStatistics?
    /// Wall-clock time of the run.
    public var seconds = 0.0

    public init() {}
}

/// `--realtime adaptive`: which speeds the encoder ran at, and for how long.
public struct SpeedStatistics: Sendable, Equatable {
    /// The session's speeds, `--speed` first, then each faster one.
    public var steps: [String]
    /// The index of the one in force at the end.
    public var current: Int
    /// Times the speed changed.
    public var changes: Int
    /// Seconds at each step, from the first picture to the end.
    public var seconds: [Double]
    /// Each change (the first thousand): seconds since the first picture, and the step taken.
    public var history: [(at: Double, step: Int)]

    public static func == (a: Self, b: Self) -> Bool {
        a.steps == b.steps && a.current == b.current && a.changes == b.changes && a.seconds == b.seconds
            && a.history.elementsEqual(b.history) { $0.at == $1.at && $0.step == $1.step }
    }
}

/// How a recording went: counters, why it stopped, and the error that ended it, if any.
public struct RecordingResult: Sendable {
    public var statistics: RecordingStatistics
    public var stopReason: StopReason
    /// The encoder that ran ("x264"), or "none" if none could be created.
    public var encoder: String
    public var settings: EncoderSettings?
    /// Every output file written, in order (one unless segmenting).
    public var segments: [String]
    /// Whether the container was finished into its final form at the end (MP4 finalized);
    /// nil for a raw stream.
    public var finalized: Bool?
    /// The outputs beside the recording (a second `-o` and on): what each did.
    public var branches: [OutputBranch.Report]
    public var error: (any Error)?

    public init(statistics: RecordingStatistics, stopReason: StopReason, encoder: String,
                settings: EncoderSettings?, segments: [String] = [], finalized: Bool? = nil,
                branches: [OutputBranch.Report] = [], error: (any Error)?) {
        self.statistics = statistics
        self.stopReason = stopReason
        self.encoder = encoder
        self.settings = settings
        self.segments = segments
        self.finalized = finalized
        self.branches = branches
        self.error = error
    }

    public var exitStatus: ExitStatus {
        guard let error else { return .success }
        return (error as? any ReportableError)?.exitStatus ?? .failure
    }
}

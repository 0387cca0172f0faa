import VTCapture
import VTCore
import VTEncoding
import VTOutput

/// A part of a recording beside the pipeline itself (stills, speed control, the status line):
/// told what happens to each frame, it adds what it knows to the result. A recording without
/// one runs none of its code. Stages run on the encoder thread, in the order given.
protocol RecordingStage: AnyObject {
    /// The session is prepared and nothing has been captured yet.
    func prepared(_ session: any CompressionSession) throws
    /// A picture went into the encoder.
    func submitted(_ submission: RecordingSubmission) throws
    /// The encoder is done with a captured frame: a stage that wants it takes it (the frame
    /// is let go once every stage has seen it and none took it).
    func encoded(_ frame: inout CapturedFrame?)
    /// A frame was written; `statistics` are the output's so far.
    func written(_ statistics: OutputStatistics)
    /// The recording is over, cleanly or not.
    func finish()
    /// What the stage adds to the recording's figures.
    func report(into statistics: inout RecordingStatistics)
    /// What it shows on the status line, if anything.
    var statusNote: String? { get }
}

extension RecordingStage {
    func prepared(_ session: any CompressionSession) throws {}
    func submitted(_ submission: RecordingSubmission) throws {}
    func encoded(_ frame: inout CapturedFrame?) {}
    func written(_ statistics: OutputStatistics) {}
    func finish() {}
    func report(into statistics: inout RecordingStatistics) {}
    var statusNote: String? { nil }
}

/// One picture handed to the encoder, as a stage sees it.
struct RecordingSubmission {
    let session: any CompressionSession
    /// CLOCK_MONOTONIC nanoseconds when the encode call started.
    let encodeStarted: Int64
    /// Pictures handed to the encoder so far, this one included.
    let framesSubmitted: Int
    /// Of those, the ones that have not come out of it.
    let framesInEncoder: Int
}

extension StillTaker: RecordingStage {
    func encoded(_ frame: inout CapturedFrame?) {
        guard let taken = frame.take() else { return }
        offer(taken)
    }

    func report(into statistics: inout RecordingStatistics) {
        statistics.stills = self.statistics
    }
}

/// The status line (`ProgressReporter`), with what it shows beside the frames written.
final class ProgressStage: RecordingStage {
    private let reporter: ProgressReporter
    private let counters: () -> ProgressReporter.Counters

    init(_ reporter: ProgressReporter, counters: @escaping () -> ProgressReporter.Counters) {
        self.reporter = reporter
        self.counters = counters
    }

    func written(_ statistics: OutputStatistics) {
        reporter.frameWritten(count: statistics.frames, bytes: statistics.bytes, counters: counters)
    }

    func finish() { reporter.finish() }
}

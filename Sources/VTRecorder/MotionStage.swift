import VTCapture
import VTCore
import VTEvents

#if canImport(Glibc)
import Glibc
import VTPictures
#endif

/// What `--motion` saw, for the summary.
public struct MotionStatistics: Sendable, Equatable {
    /// Pictures analysed, and the episodes of motion among them.
    public var frames = 0
    public var episodes = 0
    /// Episodes ended for going on longer than `--motion-max` without a pause.
    public var episodesCut = 0
    /// The share of the watched picture that changed: the highest, and the last.
    public var peakScore = 0.0
    public var latestScore = 0.0
    /// The camera's noise as the detector measured it (luma levels).
    public var noiseLevel = 0.0
    /// CPU time the detector took on the encoder thread.
    public var cpuSeconds = 0.0
    /// The size it analysed, for the record.
    public var analysisWidth = 0
    public var analysisHeight = 0
}

/// `--motion`: every picture, once the encoder is done with it, goes through the motion
/// detector on the encoder thread (a downscaled luma picture: a fraction of a millisecond at
/// 1080p), and an episode of motion is an event that lasts until the motion ends, asked of
/// the event clips through the same inbox as a signal or the control socket. It runs before
/// the other stages, which may take the frame.
final class MotionStage: RecordingStage {
    private let detector: MotionDetector
    /// Where episodes go as events; nil without --events (the figures are still kept).
    private let inbox: EventInbox?
    /// Capture times of the last pictures: an episode starts at the first of the pictures that
    /// started it, not at the last.
    private var recent: [Int64] = []
    private var statistics = MotionStatistics()
    /// Says what a cut episode means, once per cut.
    private let warn: (String) -> Void
    /// Pictures a second, to say the settings' frame counts in seconds.
    private let framesPerSecond: Double

    init(detector: MotionDetector, inbox: EventInbox?, framesPerSecond: Double, warn: @escaping (String) -> Void) {
        self.detector = detector
        self.inbox = inbox
        self.framesPerSecond = framesPerSecond
        self.warn = warn
        statistics.analysisWidth = detector.analysisWidth
        statistics.analysisHeight = detector.analysisHeight
    }

    func encoded(_ frame: inout CapturedFrame?) {
        guard let taken = frame.take() else { return }
        // The detector reads 8-bit luma from plane 0: packed pictures are not watched (the
        // pipeline converts a camera's YUYV before the encoder, so none come here today), nor
        // frames kept only compressed (`--encoder copy`, which refuses --motion).
        guard let picture = taken.buffer, picture.format == .i420 || picture.format == .nv12 else {
            frame = consume taken
            return
        }
        // A camera that came back may be pointed elsewhere: its first picture is the scene.
        if taken.isDiscontinuity { detector.forgetScene() }
        let started = Self.threadCPUNanoseconds()
        let observation = detector.analyze(picture)
        statistics.cpuSeconds += Double(Self.threadCPUNanoseconds() - started) / 1e9
        recent.append(taken.captureTime ?? MonotonicClock.nanoseconds())
        if recent.count > detector.settings.framesToStart { recent.removeFirst() }
        frame = consume taken
        statistics.frames += 1
        if observation.started {
            inbox?.add(EventRequest(source: .motion, kind: .begin(label: nil, duration: nil), time: recent[0]))
        }
        if observation.ended {
            inbox?.add(EventRequest(source: .motion, kind: .end, time: recent.last!))
        }
        if observation.cut {
            let settings = detector.settings, rate = framesPerSecond
            warn(String(format: "motion went on for %g s without a pause of %g s (a blinking light, a screen, leaves in the wind?): "
                        + "the episode%@ ends here, and the next starts once the picture has been still that long; "
                        + "leave that part out with --motion-mask, or raise --motion-max",
                        Double(settings.framesToCut) / rate, Double(settings.framesToEnd) / rate,
                        inbox == nil ? "" : " and its clip"))
        }
    }

    var statusNote: String? {
        String(format: "motion %.1f %%%@", detector.summary.latestScore * 100, detector.summary.isActive ? " (moving)" : "")
    }

    func report(into statistics: inout RecordingStatistics) {
        // The scores and episodes are the detector's own; the stage adds what it counted.
        var mine = self.statistics
        mine.episodes = detector.summary.episodes
        mine.episodesCut = detector.summary.episodesCut
        mine.peakScore = detector.summary.peakScore
        mine.latestScore = detector.summary.latestScore
        mine.noiseLevel = detector.noiseLevel
        statistics.motion = mine
    }

    /// This thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
    private static func threadCPUNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}

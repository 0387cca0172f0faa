import VTCore

/// What one picture showed.
public struct MotionObservation: Sendable, Equatable {
    /// The part of the picture that changed, from 0 to 1, once noise, light changes, speckles
    /// and the mask are taken out.
    public var score: Double
    /// Whether motion is going on, after the hysteresis.
    public var isActive: Bool
    /// Motion starts with this picture.
    public var started: Bool
    /// Motion ends with this picture.
    public var ended: Bool
    /// It ends because it went on for `framesToCut` without a pause: no episode starts again
    /// until the picture has been still for `framesToEnd`.
    public var cut: Bool

    public init(score: Double, isActive: Bool, started: Bool, ended: Bool, cut: Bool = false) {
        self.score = score
        self.isActive = isActive
        self.started = started
        self.ended = ended
        self.cut = cut
    }
}

/// What the detector has seen so far, as a value another thread may be given (the status line,
/// the summary).
public struct MotionSummary: Sendable, Equatable {
    /// The score of the latest picture.
    public var latestScore: Double
    /// The highest score of any picture.
    public var peakScore: Double
    /// How many times motion started.
    public var episodes: Int
    /// Episodes ended for lasting `framesToCut` without a pause.
    public var episodesCut: Int
    public var isActive: Bool

    public init(latestScore: Double = 0, peakScore: Double = 0, episodes: Int = 0, episodesCut: Int = 0,
                isActive: Bool = false) {
        self.latestScore = latestScore
        self.peakScore = peakScore
        self.episodes = episodes
        self.episodesCut = episodesCut
        self.isActive = isActive
    }
}

/// Finds motion in a stream of pictures, as Motion (motion-project) does: each picture's luma,
/// shrunk to a small analysis picture, is compared with a reference picture of the still scene
/// that the detector keeps.
///
/// For every picture:
/// 1. The luma is averaged down to the analysis picture (about 160 pixels wide), which also
///    averages out most of a camera's noise.
/// 2. The light: the typical change against the reference (the median difference over the
///    watched pixels) is the scene's change of light. A pixel counts as changed only when it
///    differs both from the reference and from the reference lit by that change, so neither
///    a global change of light nor what does not follow it (a saturated sky, a lamp, a
///    screen) is motion.
/// 3. The noise: a pixel must differ by more than the sensitivity's luma threshold, or by
///    several times the measured noise (the median difference, smoothed over the frames that
///    show no motion) when the camera is noisier than that.
/// 4. Despeckle: isolated changed pixels and thin lines are opened away (`MotionDespeckle`);
///    the score is what remains, as a part of the whole picture.
/// 5. The reference follows unchanged pixels quickly (an eighth of the way every frame), so
///    slow changes of light and shadow are learnt; a changed pixel is left alone, so a passing
///    object leaves no trail, until it has been changed for `framesToAccept` frames in a row
///    (a parked car, a moved chair): then it becomes part of the scene.
/// 6. Hysteresis: motion starts after `framesToStart` pictures in a row whose score reaches
///    `minimumArea`, and ends after `framesToEnd` pictures in a row below it.
///
/// Not thread-safe: one thread (the encoder's) owns it and feeds it every picture in order;
/// `summary` is the value to hand to others.
public final class MotionDetector {
    public struct Settings: Sendable, Equatable {
        /// From 0 (only large changes of brightness count) to 1 (small ones do): maps to
        /// `pixelThreshold`, from 40 luma levels down to 8.
        public var sensitivity: Double
        /// The least part of the picture (0.01: 1 %) that must change for a picture to count.
        public var minimumArea: Double
        /// The parts of the picture to ignore; nil watches all of it.
        public var mask: MotionMask?
        /// Pictures in a row reaching `minimumArea` before motion starts.
        public var framesToStart: Int
        /// Pictures in a row below `minimumArea` before motion ends.
        public var framesToEnd: Int
        /// Pictures in a row a pixel stays changed before it is taken as the scene's new look.
        public var framesToAccept: Int
        /// The most pictures one episode lasts. A light that blinks, a screen or leaves in the
        /// wind change the picture again before it has been still for `framesToEnd` and never
        /// become the scene (they do not stay changed): without a bound, one episode, and one
        /// event clip, would last the whole recording.
        public var framesToCut: Int
        /// The analysis picture's width (at most the picture's); its height keeps the aspect.
        public var analysisWidth: Int

        /// The defaults, for a fixed camera watching a room or a doorway:
        /// - sensitivity 0.5, 24 luma levels: far above what averaging leaves of a webcam's
        ///   noise (±6 at 640x480 averages to about ±1 at 160 pixels wide), below the contrast
        ///   of a person against a wall or floor;
        /// - a minimum area of 1 %: a person across the room fills several times that, the
        ///   frame code's changing blocks or an insect near the lens less;
        /// - 3 frames to start (0.1 s at 30 fps), so a one-picture glitch starts nothing;
        /// - 30 frames to end (1 s), so someone pausing mid-step is one episode, not two;
        /// - 300 frames to accept (10 s), how long something moved must stay before it counts
        ///   as the scene again;
        /// - 9000 frames to cut (5 minutes), longer than someone walks through a doorway or
        ///   works in view, short enough that a flickering light makes a clip of minutes, not
        ///   of the whole recording;
        /// - 160 pixels of analysis width: small objects still cover dozens of pixels, and
        ///   1080p costs about half a percent of a core at 30 fps.
        public init(sensitivity: Double = 0.5, minimumArea: Double = 0.01, mask: MotionMask? = nil,
                    framesToStart: Int = 3, framesToEnd: Int = 30, framesToAccept: Int = 300,
                    framesToCut: Int = 9000, analysisWidth: Int = 160) {
            self.sensitivity = sensitivity
            self.minimumArea = minimumArea
            self.mask = mask
            self.framesToStart = framesToStart
            self.framesToEnd = framesToEnd
            self.framesToAccept = framesToAccept
            self.framesToCut = framesToCut
            self.analysisWidth = analysisWidth
        }

        /// The least change of luma (0–255) at which an analysis pixel counts as changed in a
        /// camera that is not noisy.
        public var pixelThreshold: Int { Int((40 - 32 * sensitivity).rounded()) }

        /// A count of frames lasting `seconds` at `rate`, at least one: for `framesToEnd` and
        /// `framesToAccept` given in seconds.
        public static func frames(_ seconds: Double, at rate: FrameRate) -> Int {
            max(1, Int((seconds * rate.framesPerSecond).rounded()))
        }

        func validated() throws(MotionError) -> Settings {
            func check(_ ok: Bool, _ name: String, _ value: String, _ accepted: String) throws(MotionError) {
                if !ok { throw .setting(name: name, value: value, accepted: accepted) }
            }
            try check((0...1).contains(sensitivity), "sensitivity", "\(sensitivity)", "0 (least) to 1 (most)")
            try check(minimumArea > 0 && minimumArea <= 1, "minimum area", "\(minimumArea)",
                      "a part of the picture above 0, at most 1 (0.01 is 1 %)")
            try check(framesToStart >= 1, "frames to start", "\(framesToStart)", "at least 1")
            try check(framesToEnd >= 1, "frames to end", "\(framesToEnd)", "at least 1")
            try check(framesToCut > framesToStart, "frames to cut", "\(framesToCut)", "more than the frames to start")
            try check((1...Int(UInt16.max)).contains(framesToAccept), "frames to accept", "\(framesToAccept)",
                      "1 to \(UInt16.max)")
            try check(Self.analysisWidths.contains(analysisWidth), "analysis width", "\(analysisWidth)",
                      "\(Self.analysisWidths.lowerBound) to \(Self.analysisWidths.upperBound) pixels")
            return self
        }

        static let analysisWidths = 32...1024
    }

    public let settings: Settings
    /// The picture size the detector was made for.
    public let width: Int
    public let height: Int
    /// The analysis picture's size.
    public let analysisWidth: Int
    public let analysisHeight: Int

    public private(set) var summary = MotionSummary()
    /// The luma threshold in use now: the settings' or, in a noisy picture, a multiple of the noise.
    public private(set) var pixelThreshold: Int
    /// The noise measured so far: the median luma difference of a watched pixel from the reference.
    public private(set) var noiseLevel: Double = 0
    private var noiseMeasured = false

    private let reference: MotionReference
    private let scaler: MotionAnalysisScaler
    /// 1 for a watched analysis pixel, 0 for one the mask ignores.
    private let watched: [UInt8]
    /// The size of the pictures the scene was learnt from.
    private var sceneSize = (width: 0, height: 0)
    private var framesAbove = 0
    private var framesBelow = 0
    /// Pictures since the episode going on started.
    private var framesInEpisode = 0
    /// An episode was cut: none starts until the picture has been still for `framesToEnd`.
    private var waitsForStillness = false

    /// A detector for pictures of `width` × `height`. Throws when a setting is out of range or
    /// the mask leaves nothing watched.
    public init(settings: Settings, width: Int, height: Int) throws(MotionError) {
        precondition(width > 0 && height > 0, "a picture has a size")
        self.settings = try settings.validated()
        self.width = width
        self.height = height
        analysisWidth = min(settings.analysisWidth, width)
        analysisHeight = max(1, (height * analysisWidth + width / 2) / width)
        watched = try settings.mask?.watchedPixels(pictureWidth: width, pictureHeight: height,
                                                   analysisWidth: analysisWidth, analysisHeight: analysisHeight)
            ?? [UInt8](repeating: 1, count: analysisWidth * analysisHeight)
        pixelThreshold = settings.pixelThreshold
        reference = MotionReference(width: analysisWidth, height: analysisHeight)
        scaler = MotionAnalysisScaler(width: analysisWidth, height: analysisHeight)
    }

    /// Looks at the next picture (I420 or NV12: plane 0 is 8-bit luma). The first picture, and
    /// the first after `forgetScene()` or a change of picture size, only teaches the detector
    /// the scene and scores 0.
    public func analyze(_ picture: borrowing PixelBuffer) -> MotionObservation {
        precondition(picture.format == .i420 || picture.format == .nv12,
                     "motion detection reads 8-bit luma from plane 0 of I420 or NV12")
        if sceneSize != (picture.width, picture.height) {
            reference.forget()
            sceneSize = (picture.width, picture.height)
        }
        scaler.shrink(picture.planes[0], sourceWidth: picture.width, sourceHeight: picture.height,
                      into: reference.current)
        let score = reference.isLearnt ? compare() : learn()
        return settle(score)
    }

    /// Forgets the scene: the next picture is learnt as the reference, as after the camera
    /// came back from an unplug. Motion already going on is not ended by it.
    public func forgetScene() {
        reference.forget()
    }

    private func learn() -> Double {
        reference.learn()
        return 0
    }

    /// Steps 2 to 5 of the type's description: the score of the picture in `reference.current`.
    private func compare() -> Double {
        let measuredNoise = watched.withUnsafeBufferPointer { watchedPixels in
            let watched = watchedPixels.baseAddress!
            let light = reference.lightChange(watched: watched)
            let noise = reference.noise(watched: watched, lightChange: light)
            reference.markChanged(watched: watched, lightChange: light, threshold: pixelThreshold,
                                  framesToAccept: settings.framesToAccept)
            return noise
        }
        let score = Double(reference.despeckledCount()) / Double(analysisWidth * analysisHeight)
        // Learnt only from pictures that show no motion, as Motion tunes its noise level:
        // whatever changes a whole picture at once (a light the median missed, someone right
        // in front of the lens) would otherwise read as noise and raise the threshold until
        // it no longer counts. Smoothed, so one picture does not move the threshold; the first
        // measurement stands alone, so a noisy camera is never stuck above the threshold it
        // starts with.
        if !noiseMeasured || score < settings.minimumArea {
            noiseLevel = noiseMeasured ? noiseLevel + (measuredNoise - noiseLevel) / 16 : measuredNoise
            noiseMeasured = true
            // Nearly five standard deviations of Gaussian noise: a few pixels in a million pass.
            pixelThreshold = max(settings.pixelThreshold, Int((7 * noiseLevel).rounded(.up)))
        }
        return score
    }

    /// Step 6: the hysteresis.
    private func settle(_ score: Double) -> MotionObservation {
        if score >= settings.minimumArea {
            framesAbove += 1
            framesBelow = 0
        } else {
            framesBelow += 1
            framesAbove = 0
        }
        var started = false, ended = false, cut = false
        if waitsForStillness {
            waitsForStillness = framesBelow < settings.framesToEnd
        } else if !summary.isActive, framesAbove >= settings.framesToStart {
            summary.isActive = true
            summary.episodes += 1
            framesInEpisode = 0
            started = true
        } else if summary.isActive, framesBelow >= settings.framesToEnd {
            summary.isActive = false
            ended = true
        }
        if summary.isActive {
            framesInEpisode += 1
            if framesInEpisode >= settings.framesToCut {
                summary.isActive = false
                summary.episodesCut += 1
                waitsForStillness = true
                (ended, cut) = (true, true)
            }
        }
        summary.latestScore = score
        summary.peakScore = max(summary.peakScore, score)
        return MotionObservation(score: score, isActive: summary.isActive, started: started, ended: ended, cut: cut)
    }
}

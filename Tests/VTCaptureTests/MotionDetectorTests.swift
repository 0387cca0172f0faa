import Foundation
import Testing
@testable import VTCapture
import VTCore
@testable import VTPictures

/// What a detector made of a run of pictures: the frames motion started and ended at.
struct MotionEpisodes {
    var observations: [MotionObservation] = []
    var starts: [Int] = []
    var ends: [Int] = []

    mutating func record(_ observation: MotionObservation, frame: Int) {
        observations.append(observation)
        if observation.started { starts.append(frame) }
        if observation.ended { ends.append(frame) }
    }

    var peakScore: Double { observations.map(\.score).max() ?? 0 }
}

/// The motion detector on synthetic pictures of a fixed camera's scene, frame code and all.
@Suite struct MotionDetectorTests {
    static func run(_ scene: SyntheticScene, frames: Int,
                    settings: MotionDetector.Settings = .init()) throws -> (MotionDetector, MotionEpisodes) {
        let detector = try MotionDetector(settings: settings, width: scene.width, height: scene.height)
        var painter = SyntheticScene.Painter(scene)
        var episodes = MotionEpisodes()
        for n in 0..<frames {
            episodes.record(detector.analyze(painter.paint(frame: n)), frame: n)
        }
        return (detector, episodes)
    }

    static let quick = MotionDetector.Settings(framesToStart: 3, framesToEnd: 15)

    @Test func aMovingSquareStartsMotionAndItsStopEndsIt() throws {
        let scene = SyntheticScene(noise: 6, square: SyntheticScene.crossing(30..<90))
        let (detector, episodes) = try Self.run(scene, frames: 130, settings: Self.quick)
        // Its third picture starts motion; the fifteenth picture without it ends it.
        #expect(episodes.starts == [32])
        #expect(episodes.ends == [90 + 15 - 1])
        #expect(episodes.observations[32...103].allSatisfy { $0.isActive })
        #expect(!episodes.observations[104...].contains { $0.isActive })
        // A square a sixth of the picture's height on a side is 2.1 % of it.
        let scores = episodes.observations[30..<90].map(\.score)
        #expect(scores.allSatisfy { $0 > 0.015 && $0 < 0.025 }, "\(scores)")
        #expect(detector.summary.episodes == 1 && !detector.summary.isActive)
        #expect(detector.summary.peakScore == episodes.peakScore)
        #expect(detector.summary.latestScore == 0)
    }

    /// Motion that goes on past `framesToCut` ends there, counted as cut, and none starts again
    /// while it goes on: only once the picture has been still for `framesToEnd`.
    @Test func motionWithoutAPauseIsCutAndStartsNoMoreEpisodes() throws {
        var settings = Self.quick
        settings.framesToCut = 40
        let scene = SyntheticScene(noise: 6, square: SyntheticScene.crossing(30..<200))
        let (detector, episodes) = try Self.run(scene, frames: 240, settings: settings)
        #expect(episodes.starts == [32])
        #expect(episodes.ends == [32 + 40 - 1])
        #expect(episodes.observations.filter(\.cut).count == 1 && episodes.observations[71].cut)
        #expect(!episodes.observations[72...].contains { $0.isActive })
        #expect(detector.summary.episodes == 1 && detector.summary.episodesCut == 1)
    }

    @Test func noiseAloneIsNotMotion() throws {
        let (_, episodes) = try Self.run(SyntheticScene(noise: 6), frames: 150)
        #expect(episodes.starts.isEmpty)
        #expect(episodes.peakScore == 0)
    }

    /// At full sensitivity heavy noise crosses the threshold it sets (8 luma levels) in many
    /// pixels, so the detector raises its threshold with the noise it measures, and a square
    /// still shows through.
    @Test func heavyNoiseRaisesTheThresholdWithoutHidingASquare() throws {
        let settings = MotionDetector.Settings(sensitivity: 1, framesToEnd: 15)
        let noisy = SyntheticScene(noise: 40)
        let (quiet, still) = try Self.run(noisy, frames: 120, settings: settings)
        #expect(still.starts.isEmpty, "\(still.observations.map(\.score))")
        #expect(quiet.pixelThreshold > settings.pixelThreshold, "noise level \(quiet.noiseLevel)")

        var moving = noisy
        moving.square = SyntheticScene.crossing(60..<100)
        let (_, episodes) = try Self.run(moving, frames: 120, settings: settings)
        #expect(episodes.starts == [62])
    }

    /// Someone right in front of the lens: a checkered square over more than half of the
    /// picture, as much darker as brighter than the scene, so no change of light explains it.
    /// Most pixels differ by far more than the noise, and that must not be learnt as noise:
    /// motion lasts as long as the square moves.
    @Test func motionFillingMostOfThePictureIsNotLearntAsNoise() throws {
        var scene = SyntheticScene(noise: 6, square: SyntheticScene.crossing(20..<110, from: 0, step: 2, side: 420))
        scene.squareSide = 420
        scene.squareChecked = true
        let (detector, episodes) = try Self.run(scene, frames: 140, settings: Self.quick)
        #expect(episodes.starts == [22])
        #expect(episodes.ends == [110 + 15 - 1])
        #expect(detector.pixelThreshold == MotionDetector.Settings().pixelThreshold)
    }

    @Test(arguments: [40, -40])
    func aSlowChangeOfLightIsNotMotion(delta: Int) throws {
        // Three seconds at 30 fps; the frame code does not follow the light.
        let scene = SyntheticScene(noise: 6, light: SyntheticScene.ramp(from: 20, to: 110, delta: delta))
        let (_, episodes) = try Self.run(scene, frames: 150)
        #expect(episodes.starts.isEmpty, "\(episodes.observations.map(\.score))")
    }

    @Test(arguments: [30, -30, 60])
    func aSuddenChangeOfLightIsNotMotion(delta: Int) throws {
        let scene = SyntheticScene(noise: 6, light: SyntheticScene.ramp(from: 20, to: 20, delta: delta))
        let (_, episodes) = try Self.run(scene, frames: 100)
        #expect(episodes.starts.isEmpty, "\(episodes.observations.map(\.score))")
    }

    @Test func aSquareIsFoundWhileTheLightChanges() throws {
        let scene = SyntheticScene(noise: 6, square: SyntheticScene.crossing(40..<80),
                                   light: SyntheticScene.ramp(from: 30, to: 60, delta: 30))
        let (_, episodes) = try Self.run(scene, frames: 110, settings: Self.quick)
        #expect(episodes.starts == [42])
        #expect(episodes.ends == [80 + 15 - 1])
    }

    /// The frame code changes two 16×16 blocks a frame (0.2 % of the picture), and over the
    /// frames more of its blocks stand changed from the scene: too small and too scattered
    /// to be motion. A finer analysis sees them, so the test can tell.
    @Test func theFrameCodeAloneIsNotMotion() throws {
        let scene = SyntheticScene()
        let (_, episodes) = try Self.run(scene, frames: 300)
        #expect(episodes.starts.isEmpty)
        #expect(episodes.peakScore < 0.002)

        let fine = MotionDetector.Settings(minimumArea: 0.0005, analysisWidth: 320)
        let (_, seen) = try Self.run(scene, frames: 60, settings: fine)
        #expect(seen.peakScore > 0.0005 && seen.peakScore < 0.01)
    }

    /// Bright 8×8 speckles over 3 % of the picture, somewhere else in every frame: more than
    /// the minimum area, but no shape of it survives the despeckle.
    @Test func scatteredSpecklesAreNotMotion() throws {
        let (_, episodes) = try Self.run(SyntheticScene(noise: 6, speckles: 0.03), frames: 60)
        #expect(episodes.starts.isEmpty)
        #expect(episodes.peakScore < 0.01)
    }

    @Test func aSquareBehindTheMaskIsNotMotion() throws {
        let scene = SyntheticScene(noise: 6, square: SyntheticScene.crossing(30..<90))
        // The square's path: y 200…279, x 40…355.
        let masked = try MotionMask.parse("30,190,340,100")
        let (_, episodes) = try Self.run(scene, frames: 100, settings: .init(mask: masked))
        #expect(episodes.starts.isEmpty)
        #expect(episodes.peakScore == 0)

        let halfOfThePath = try MotionMask.parse("30,190,340,100;0,0,10,10")
        #expect(halfOfThePath.shape == .ignoredRectangles([.init(x: 30, y: 190, width: 340, height: 100),
                                                           .init(x: 0, y: 0, width: 10, height: 10)]))
        let elsewhere = try MotionMask.parse("400, 0, 240, 480")
        let (_, seen) = try Self.run(scene, frames: 40, settings: .init(mask: elsewhere))
        #expect(seen.starts == [32], "a mask away from the square hides nothing of it")
    }

    /// A PGM mask of another size than the picture is stretched over it: a 4×2 mask with its
    /// left half black ignores the left half of the picture.
    @Test func aPGMMaskIsStretchedOverThePicture() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("left.pgm")
        let header = Array("P5\n# left half ignored\n4 2\n255\n".utf8)
        try Data(header + [0, 0, 255, 255, 0, 0, 255, 255]).write(to: URL(fileURLWithPath: path))
        let mask = try MotionMask.parse(path)
        #expect(mask.shape == .image(width: 4, height: 2, pixels: [0, 0, 255, 255, 0, 0, 255, 255]))

        let left = SyntheticScene(noise: 6, square: SyntheticScene.crossing(10..<50, from: 20, step: 2))
        let (_, hidden) = try Self.run(left, frames: 50, settings: .init(mask: mask))
        #expect(hidden.starts.isEmpty)
        let right = SyntheticScene(noise: 6, square: SyntheticScene.crossing(10..<50, from: 420, step: 2))
        let (_, seen) = try Self.run(right, frames: 50, settings: .init(mask: mask))
        #expect(seen.starts == [12])
    }

    @Test func aPictureOfAnotherSizeStartsTheSceneAgain() throws {
        let detector = try MotionDetector(settings: .init(), width: 640, height: 480)
        var small = SyntheticScene.Painter(SyntheticScene(noise: 6))
        var large = SyntheticScene.Painter(SyntheticScene(width: 1280, height: 720, noise: 6))
        for n in 0..<5 { #expect(detector.analyze(small.paint(frame: n)).score == 0) }
        for n in 0..<5 { #expect(detector.analyze(large.paint(frame: n)).score == 0) }
    }
}

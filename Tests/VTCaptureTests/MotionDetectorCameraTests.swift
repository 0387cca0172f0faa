import Foundation
import Testing
import VTCapture
import VTCore
import VTTestSupport

#if canImport(Glibc)
import Glibc
import VTPictures
#endif

/// The motion detector on the fake camera's pictures, as ffmpeg captures them: a still scene
/// with sensor noise and the frame code counting, and a mover or a change of light in front of
/// it. The camera runs in real time, so frames may be dropped under load; every expectation is
/// about frame numbers (read from each picture's code) and counts the frames that came, so it
/// holds whichever were dropped.
@Suite struct MotionDetectorCameraTests {
    static let settings = MotionDetector.Settings(framesToStart: 3, framesToEnd: 15)

    /// What the detector made of `frames` pictures of a camera with `knobs`, in frame order,
    /// and the frame numbers that came.
    static func watch(_ knobs: [FakeCamera.Knob], frames: Int,
                      settings: MotionDetector.Settings = settings) throws -> (received: [Int], episodes: MotionEpisodes) {
        let planes = try FakeCamera(knobs: [.still, .noise(amplitude: 6)] + knobs).lumaPlanes(frames: frames)
        let received = planes.keys.sorted()
        try #require(received.count >= frames * 9 / 10, "only \(received.count) of \(frames) frames came")
        let detector = try MotionDetector(settings: settings, width: 640, height: 480)
        let picture = PixelBuffer(format: .i420, width: 640, height: 480)
        let luma = picture.planes[0]
        var episodes = MotionEpisodes()
        for number in received {
            planes[number]!.withUnsafeBufferPointer { source in
                for row in 0..<480 {
                    memcpy(luma.baseAddress + row * luma.bytesPerRow, source.baseAddress! + row * 640, 640)
                }
            }
            episodes.record(detector.analyze(picture), frame: number)
        }
        return (received, episodes)
    }

    /// The frame that is the `nth` (from 1) to come at or after frame `first`.
    static func nth(_ nth: Int, from first: Int, in received: [Int]) -> Int? {
        let after = received.filter { $0 >= first }
        return after.count >= nth ? after[nth - 1] : nil
    }

    /// The mover crosses the picture in frames 30 to 74: motion starts with the third of its
    /// pictures and ends with the fifteenth picture after it has gone.
    @Test func theMoverIsOneEpisodeCoveringItsWindow() throws {
        let (received, episodes) = try Self.watch([.mover(from: 30, to: 75)], frames: 100)
        #expect(episodes.starts == [try #require(Self.nth(3, from: 30, in: received))])
        #expect(episodes.ends == [try #require(Self.nth(15, from: 75, in: received))])
        let crossing = zip(received, episodes.observations).filter { (30..<75).contains($0.0) }.map(\.1.score)
        #expect(crossing.allSatisfy { $0 > 0.015 }, "a square a sixth of the picture high is 2.1 % of it: \(crossing)")
    }

    /// +40 over three seconds, as a cloud passing or a lamp warming up.
    @Test func noiseAndASlowChangeOfLightAreNoMotion() throws {
        let (_, episodes) = try Self.watch([.lightRamp(from: 15, to: 105, delta: 40)], frames: 110)
        #expect(episodes.starts.isEmpty, "\(episodes.observations.map(\.score))")
        #expect(episodes.peakScore < 0.005)
    }

    /// A light switched on: every pixel of the scene brighter from one frame to the next (60
    /// levels saturate part of it), the frame code not.
    @Test(arguments: [30, 60])
    func aSuddenChangeOfLightIsNoMotion(delta: Int) throws {
        let (_, episodes) = try Self.watch([.lightRamp(from: 30, to: 30, delta: delta)], frames: 60)
        #expect(episodes.starts.isEmpty, "\(episodes.observations.map(\.score))")
    }

    /// A mask over the mover's path (rows 200 to 279, the whole width) hides it.
    @Test func aMaskOverTheMoversPathHidesIt() throws {
        var masked = Self.settings
        masked.mask = try MotionMask.parse("0,190,640,100")
        let (_, episodes) = try Self.watch([.mover(from: 20, to: 60)], frames: 70, settings: masked)
        #expect(episodes.starts.isEmpty)
        #expect(episodes.peakScore == 0)
    }
}

import Foundation
import Testing
import VTTestSupport

/// The fake VA driver's engine whose cost per picture follows the quality level
/// (FAKE_VA_LEVEL_MS) and which can be busy for a while (FAKE_VA_BUSY), proved against ffmpeg's
/// h264_vaapi, which sends `-compression_level` as the quality level, and driven picture by
/// picture with the C client. Only lower bounds on waits are exact (a wait ends no earlier than
/// the picture's cost after its vaEndPicture); what must be fast is checked with wide margins,
/// as the suite runs in parallel on two cores.
@Suite("Fake VA-API driver's cost per picture")
struct FakeVACostTests {
    /// Milliseconds for quality levels 1 (best, slowest) to 4.
    static let costs = [80, 40, 10, 2]

    /// The same 30 pictures through ffmpeg at level 1 and at level 4: the driver sees each
    /// picture at the level asked for, and the wall time follows the level's cost.
    @Test func ffmpegPicturesTakeWhatTheirQualityLevelCosts() throws {
        func encode(level: Int) throws -> (took: Duration, report: FakeVADevice.Report) {
            let device = try FakeVADevice(knobs: [.levelMilliseconds(Self.costs)])
            _ = try device.environment()    // builds the driver on first use, which must not be timed
            let started = ContinuousClock.now
            let result = try FakeVA.ffmpegEncode(device, ["-compression_level", "\(level)"],
                                                 output: device.file("level\(level).h264"))
            let took = started.duration(to: .now)
            try #require(result.status == 0, "\(result.transcript)")
            return (took, try device.report())
        }
        let slow = try encode(level: 1)
        let fast = try encode(level: 4)
        #expect(slow.report.violations.isEmpty && fast.report.violations.isEmpty)
        #expect(slow.report.picturesByQualityLevel == [1: FakeVA.frames])
        #expect(fast.report.picturesByQualityLevel == [4: FakeVA.frames])
        #expect(slow.report.qualityLevel?.qualityLevel == 1 && fast.report.qualityLevel?.qualityLevel == 4)
        // 30 pictures at 80 ms, one after another, take 2.4 s; at 2 ms, ffmpeg's own work.
        #expect(slow.took >= .milliseconds(FakeVA.frames * Self.costs[0] * 8 / 10), "\(slow.took)")
        #expect(slow.took >= fast.took * 2, "level 1 took \(slow.took), level 4 \(fast.took)")
    }

    /// A level changed on a running session, as a recorder keeping up with a camera changes it:
    /// each picture costs what the level in force when it was sent costs, and the level stays in
    /// force for the pictures sent without one.
    @Test func aLevelChangedMidStreamChangesTheCostOfTheFollowingPictures() throws {
        let device = try FakeVADevice(knobs: [.levelMilliseconds(Self.costs)])
        let (result, _, _) = try FakeVA.client(device, ["--frames", "20", "--quality-levels", "0:2,8:4,14:1",
                                                        "--timings"])
        try #require(result.status == 0, "\(result.transcript)")
        let report = try device.report()
        #expect(report.violations.isEmpty)
        #expect(report.picturesByQualityLevel == [2: 8, 4: 6, 1: 6])
        let timings = Timing.parse(result.standardOutputText)
        try #require(timings.map(\.level) == Array(repeating: 2, count: 8) + Array(repeating: 4, count: 6)
            + Array(repeating: 1, count: 6), "\(result.standardOutputText)")
        for timing in timings {
            let cost = Double(Self.costs[timing.level - 1])
            #expect(timing.took >= cost - 0.5, "picture \(timing.picture) at level \(timing.level): \(timing.took) ms")
        }
        let atLevel4 = timings.filter { $0.level == 4 }.map(\.took)
        #expect(Timing.median(atLevel4) < 20, "level 4 (2 ms) pictures took \(atLevel4) ms")
    }

    /// A busy window from 150 to 400 ms: pictures submitted inside it cost eight times as much
    /// (80 ms instead of 10), those before and after it do not.
    @Test func picturesSubmittedInsideTheBusyWindowCostMoreAndThoseAfterItDoNot() throws {
        let window = 150.0..<400.0
        let device = try FakeVADevice(knobs: [.levelMilliseconds([10]),
                                              .busy(fromMilliseconds: 150, toMilliseconds: 400, factor: 8)])
        let (result, _, _) = try FakeVA.client(device, ["--frames", "30", "--timings"])
        try #require(result.status == 0, "\(result.transcript)")
        let report = try device.report()
        #expect(report.violations.isEmpty && report.frames == 30)
        #expect(report.picturesByQualityLevel == [0: 30])
        let timings = Timing.parse(result.standardOutputText)
        try #require(timings.count == 30, "\(result.standardOutputText)")
        // Only pictures whose submission is known to be on one side of an edge are judged.
        let before = timings.filter { $0.submittedMax < window.lowerBound }
        let inside = timings.filter { $0.submittedMin >= window.lowerBound && $0.submittedMax < window.upperBound }
        let after = timings.filter { $0.submittedMin >= window.upperBound }
        #expect(!before.isEmpty && inside.count >= 2 && after.count >= 5, "\(timings)")
        for timing in inside {
            #expect(timing.took >= 80 - 0.5, "picture \(timing.picture) inside the window: \(timing.took) ms")
        }
        for timing in before + after {
            #expect(timing.took >= 10 - 0.5, "picture \(timing.picture): \(timing.took) ms")
        }
        #expect(Timing.median(before.map(\.took)) < 40, "before the window: \(before.map(\.took)) ms")
        #expect(Timing.median(after.map(\.took)) < 40, "after the window: \(after.map(\.took)) ms")
    }

    /// The fixed wait of FAKE_VA_SYNC_MS and the engine of FAKE_VA_LEVEL_MS are different
    /// models of a slow encoder; a busy window needs costs to multiply. Asking for either
    /// mixture stops the client with a message, rather than running against a driver the test
    /// did not mean.
    @Test(arguments: [
        ([FakeVADevice.Knob.syncMilliseconds(40), .levelMilliseconds([10])], "FAKE_VA_SYNC_MS is set too"),
        ([FakeVADevice.Knob.busy(fromMilliseconds: 0, toMilliseconds: 100)], "needs FAKE_VA_LEVEL_MS"),
    ])
    func knobsThatDoNotGoTogetherAreRefused(knobs: [FakeVADevice.Knob], message: String) throws {
        let device = try FakeVADevice(knobs: knobs)
        let result = try ChildProcess.run(["vainfo", "--display", "drm", "--device", device.devicePath],
                                          environment: device.environment())
        #expect(result.status != 0)
        #expect(result.standardError.contains(message), "\(result.standardError)")
    }

    /// One `timing:` line of the C client's --timings.
    struct Timing: CustomStringConvertible {
        var picture: Int
        var level: Int
        /// Milliseconds since the first picture's vaEndPicture: bounds of when this one's was called.
        var submittedMin: Double
        var submittedMax: Double
        /// Milliseconds from just before vaEndPicture until vaSyncSurface returned.
        var took: Double

        var description: String {
            "#\(picture) L\(level) at \(submittedMin)…\(submittedMax) took \(took)"
        }

        static func parse(_ output: String) -> [Timing] {
            output.split(separator: "\n").filter { $0.hasPrefix("timing: ") }.compactMap { line in
                var fields: [Substring: Substring] = [:]
                for pair in line.dropFirst("timing: ".count).split(separator: " ") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    if parts.count == 2 { fields[parts[0]] = parts[1] }
                }
                guard let picture = fields["picture"].flatMap({ Int($0) }), let level = fields["level"].flatMap({ Int($0) }),
                      let submittedMin = fields["submitted_min"].flatMap({ Double($0) }),
                      let submittedMax = fields["submitted_max"].flatMap({ Double($0) }),
                      let took = fields["took"].flatMap({ Double($0) }) else { return nil }
                return Timing(picture: picture, level: level, submittedMin: submittedMin, submittedMax: submittedMax,
                              took: took)
            }
        }

        static func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? .infinity : sorted[sorted.count / 2]
        }
    }
}

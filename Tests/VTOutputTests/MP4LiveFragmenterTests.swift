import Testing
import VTCore
import VTOutput

/// The live stream's time line (`MP4LiveFragmenter.sample`): pictures missing from it leave no
/// step a Media Source Extensions player takes for a discontinuity (more than twice the last
/// picture's duration, after which it drops every picture up to the next keyframe), and a
/// camera whose rate falls keeps its true time.
@Suite struct MP4LiveFragmenterTests {
    static let rate = FrameRate(numerator: 30, denominator: 1)!
    static let interval: Int64 = 3000  // 90 kHz ticks at 30 fps

    /// The samples of pictures taken at these frame numbers of a 30 fps clock (or `timescale`).
    static func samples(_ numbers: [Int64], timescale: Int32 = 30) -> [MP4LiveFragmenter.Sample] {
        var fragmenter = MP4LiveFragmenter(frameRate: rate)
        return numbers.map { number in
            let time = MediaTime(value: number, timescale: timescale)
            return fragmenter.sample(for: EncodedFrame(data: [0, 0, 0, 1, 0x65], pts: time, dts: time, isKeyFrame: number == 0,
                                                       token: FrameToken(UInt64(number))))
        }
    }

    /// Each step is forward and at most one and a half times the duration the picture before
    /// was given: within the twice that a browser's Media Source Extensions allow, with room
    /// for its rounding to microseconds.
    static func expectNoDiscontinuity(_ samples: [MP4LiveFragmenter.Sample], sourceLocation: SourceLocation = #_sourceLocation) {
        for (before, sample) in zip(samples, samples.dropFirst()) {
            let step = sample.decode - before.decode
            #expect(step > 0 && step * 2 <= before.duration * 3,
                    "a step of \(step) ticks after a picture of \(before.duration)", sourceLocation: sourceLocation)
        }
    }

    @Test func aSteadyStreamStepsOneIntervalAndStartsAtZero() {
        let samples = Self.samples(Array(100..<130))
        #expect(samples.map(\.decode) == (0..<30).map { $0 * Self.interval })
        #expect(samples.allSatisfy { $0.duration == Self.interval && $0.presentation == $0.decode })
    }

    @Test(arguments: [1, 2, 4, 30, 300])
    func missingPicturesLeaveNoDiscontinuity(missing: Int64) {
        let numbers = Array(0..<10) + Array((10 + missing)..<(40 + missing))
        let samples = Self.samples(numbers)
        Self.expectNoDiscontinuity(samples)
        // Past the gap the pictures keep their true spacing: no time is made up.
        let after = samples.suffix(25)
        #expect(zip(after, after.dropFirst()).allSatisfy { $1.decode - $0.decode == Self.interval })
        #expect(samples[10].decode == 9 * Self.interval + Self.interval * 3 / 2)
    }

    /// A camera at 30 fps that falls to 15 (a long exposure): a picture or two have a shorter
    /// step than their time, then the true one, and a step never exceeds what a player takes.
    @Test func aCameraWhoseRateFallsKeepsItsTrueTimeWithinAFewPictures() {
        let numbers = Array(0..<10) + stride(from: 10, to: 70, by: 2).map { Int64($0) }
        let samples = Self.samples(numbers)
        Self.expectNoDiscontinuity(samples)
        let late = samples.suffix(20)
        #expect(zip(late, late.dropFirst()).allSatisfy { $1.decode - $0.decode == 2 * Self.interval })
        #expect(late.allSatisfy { $0.duration == 2 * Self.interval })
        #expect(samples.last!.decode >= 68 * Self.interval - 2 * Self.interval)
    }

    /// Times that come back (a clock that stepped) still increase on the live time line.
    @Test func decodeTimesAlwaysIncrease() {
        let samples = Self.samples([0, 1, 2, 2, 1, 3, 4])
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $1.decode > $0.decode })
    }
}

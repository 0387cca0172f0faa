import Testing
import VTCapture
import VTCore
@testable import VTRecorder

/// Frames onto the nominal grid: empty slots repeat, crowded slots keep the later frame.
@Suite struct ConstantRateGridTests {
    static let thirty = FrameRate(numerator: 30, denominator: 1)!

    /// A frame captured `milliseconds` after the first, numbered `sequence`.
    static func frame(_ sequence: UInt64, at milliseconds: Double) -> CapturedFrame {
        CapturedFrame(buffer: PixelBuffer(format: .i420, width: 16, height: 16),
                      pts: MediaTime(seconds: milliseconds / 1000, timescale: 1_000_000), sequence: sequence)
    }

    /// Feeds frames through a grid; returns (sequence, slots) per emission and the displaced.
    static func run(_ frames: [CapturedFrame]) -> (emitted: [(UInt64, Range<Int64>)], displaced: [UInt64]) {
        var grid = ConstantRateGrid(rate: thirty)
        var emitted: [(UInt64, Range<Int64>)] = []
        var displaced: [UInt64] = []
        for frame in frames {
            let (emission, lost) = grid.add(frame)
            if let emission { emitted.append((emission.frame.sequence, emission.slots)) }
            if let lost { displaced.append(lost.sequence) }
        }
        if let last = grid.finish() { emitted.append((last.frame.sequence, last.slots)) }
        return (emitted, displaced)
    }

    @Test func steadyFramesFillOneSlotEach() {
        let frames = (0..<5).map { Self.frame(UInt64($0), at: Double($0) * 1000 / 30 + 2) }
        let (emitted, displaced) = Self.run(frames)
        #expect(emitted.map(\.0) == [0, 1, 2, 3, 4])
        #expect(emitted.map(\.1) == [0..<1, 1..<2, 2..<3, 3..<4, 4..<5])
        #expect(displaced.isEmpty)
    }

    @Test func aMissingFrameIsFilledByTheOneBefore() {
        // Frame 2 never came: frame 1 fills slots 1 and 2.
        let frames = [0, 1, 3, 4].map { Self.frame(UInt64($0), at: Double($0) * 1000 / 30) }
        let (emitted, _) = Self.run(frames)
        #expect(emitted.map(\.0) == [0, 1, 3, 4])
        #expect(emitted.map(\.1) == [0..<1, 1..<3, 3..<4, 4..<5])
    }

    @Test func halfTheRateRepeatsEveryFrame() {
        let frames = (0..<4).map { Self.frame(UInt64($0), at: Double($0) * 1000 / 15) }
        let (emitted, _) = Self.run(frames)
        #expect(emitted.map { $0.1.count }.reduce(0, +) == 7)
        #expect(emitted.dropLast().allSatisfy { $0.1.count == 2 })
    }

    @Test func twoFramesInOneSlotKeepTheLater() {
        let frames = [Self.frame(0, at: 0), Self.frame(1, at: 30), Self.frame(2, at: 40), Self.frame(3, at: 66)]
        let (emitted, displaced) = Self.run(frames)
        #expect(displaced == [1])
        #expect(emitted.map(\.0) == [0, 2, 3])
        #expect(emitted.map(\.1) == [0..<1, 1..<2, 2..<3])
    }

    @Test func aTimestampGoingBackwardsTakesTheSlotOfTheFrameBefore() {
        let frames = [Self.frame(0, at: 0), Self.frame(1, at: 33), Self.frame(2, at: 10), Self.frame(3, at: 67)]
        let (emitted, displaced) = Self.run(frames)
        #expect(displaced == [1])
        #expect(emitted.map(\.0) == [0, 2, 3])
        #expect(emitted.map(\.1) == [0..<1, 1..<2, 2..<3])
    }

    @Test func slotTimesAreExactMultiplesOfTheFrameDuration() {
        let grid = ConstantRateGrid(rate: FrameRate(numerator: 30000, denominator: 1001)!)
        #expect(grid.time(ofSlot: 3) == MediaTime(value: 3003, timescale: 30000))
        #expect(grid.slot(for: MediaTime(value: 3003, timescale: 30000)) == 3)
    }
}

@Suite struct LatencyHistogramTests {
    @Test func quantilesToWithinABucket() {
        var histogram = LatencyHistogram()
        #expect(histogram.quantile(0.5) == nil)
        for millisecond in 1...100 { histogram.add(milliseconds: Double(millisecond)) }
        #expect(abs(histogram.quantile(0.5)! - 50) <= 0.1)
        #expect(abs(histogram.quantile(0.99)! - 99) <= 0.1)
        histogram.add(milliseconds: 60_000)
        #expect(histogram.quantile(1) == 60_000)
        #expect(histogram.count == 101)
    }
}

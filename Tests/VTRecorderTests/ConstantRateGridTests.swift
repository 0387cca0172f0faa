import Testing
import VTCapture
import VTCore
@testable import VTRecorder

/// Frames onto the nominal grid: empty slots repeat, crowded slots keep the later frame.
@Suite struct ConstantRateGridTests {
    static let thirty = FrameRate(numerator: 30, denominator: 1)!

    /// Feeds frames (sequence, milliseconds after the first) through a grid; returns
    /// (sequence, slots) per emission and the frames released without one (displaced), each
    /// known by its buffer's release.
    static func run(_ frames: [(UInt64, Double)])
        -> (emitted: [(UInt64, Range<Int64>)], displaced: [UInt64]) {
        let released = ReleaseLog()
        var grid = ConstantRateGrid(rate: thirty)
        var emitted: [(UInt64, Range<Int64>)] = []
        for (sequence, milliseconds) in frames {
            let storage = PixelBuffer(format: .i420, width: 16, height: 16)
            let buffer = PixelBuffer(format: .i420, width: 16, height: 16, planes: storage.planes) { _ in
                _ = storage
                released.append(sequence)
            }
            let frame = CapturedFrame(PixelBufferLease(handingOut: buffer), pts: MediaTime(seconds: milliseconds / 1000, timescale: 1_000_000),
                                      sequence: sequence)
            if let emission = grid.add(frame) {
                emitted.append((emission.frame.sequence, emission.slots))
                #expect(!released.sequences.contains(emission.frame.sequence))
            }
        }
        if let last = grid.finish() { emitted.append((last.frame.sequence, last.slots)) }
        let emittedSequences = Set(emitted.map { $0.0 })
        return (emitted, released.sequences.filter { !emittedSequences.contains($0) })
    }

    @Test func steadyFramesFillOneSlotEach() {
        let frames = (0..<5).map { (UInt64($0), Double($0) * 1000 / 30 + 2) }
        let (emitted, displaced) = Self.run(frames)
        #expect(emitted.map { $0.0 } == [0, 1, 2, 3, 4])
        #expect(emitted.map { $0.1 } == [0..<1, 1..<2, 2..<3, 3..<4, 4..<5])
        #expect(displaced.isEmpty)
    }

    @Test func aMissingFrameIsFilledByTheOneBefore() {
        // Frame 2 never came: frame 1 fills slots 1 and 2.
        let frames = [0, 1, 3, 4].map { (UInt64($0), Double($0) * 1000 / 30) }
        let (emitted, _) = Self.run(frames)
        #expect(emitted.map { $0.0 } == [0, 1, 3, 4])
        #expect(emitted.map { $0.1 } == [0..<1, 1..<3, 3..<4, 4..<5])
    }

    @Test func halfTheRateRepeatsEveryFrame() {
        let frames = (0..<4).map { (UInt64($0), Double($0) * 1000 / 15) }
        let (emitted, _) = Self.run(frames)
        #expect(emitted.map { $0.1.count }.reduce(0, +) == 7)
        #expect(emitted.dropLast().allSatisfy { $0.1.count == 2 })
    }

    @Test func twoFramesInOneSlotKeepTheLater() {
        let frames: [(UInt64, Double)] = [(0, 0), (1, 30), (2, 40), (3, 66)]
        let (emitted, displaced) = Self.run(frames)
        #expect(displaced == [1])
        #expect(emitted.map { $0.0 } == [0, 2, 3])
        #expect(emitted.map { $0.1 } == [0..<1, 1..<2, 2..<3])
    }

    @Test func aTimestampGoingBackwardsTakesTheSlotOfTheFrameBefore() {
        let frames: [(UInt64, Double)] = [(0, 0), (1, 33), (2, 10), (3, 67)]
        let (emitted, displaced) = Self.run(frames)
        #expect(displaced == [1])
        #expect(emitted.map { $0.0 } == [0, 2, 3])
        #expect(emitted.map { $0.1 } == [0..<1, 1..<2, 2..<3])
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

/// Sequences of frames whose buffers were given back, in order.
private final class ReleaseLog: @unchecked Sendable {
    // @unchecked Sendable: the grid tests release buffers on their own thread only.
    private(set) var sequences: [UInt64] = []
    func append(_ sequence: UInt64) { sequences.append(sequence) }
}

import Foundation
import Synchronization
import Testing
import VTCore
@testable import VTCapture

/// The frame number read from a picture's luma plane.
func frameNumber(in buffer: PixelBuffer) -> Int? {
    let luma = buffer.planes[0]
    return TestPatternSource.frameNumber(luma: UnsafePointer(luma.baseAddress), width: buffer.width,
                                         height: buffer.height, bytesPerRow: luma.bytesPerRow)
}

struct TestPatternSourceTests {
    static let rate30 = FrameRate(numerator: 30, denominator: 1)!

    @Test(arguments: [(1280, 720), (1920, 1080), (320, 240), (64, 64), (96, 64), (318, 200), (640, 66), (66, 400)])
    func everyFrameCarriesItsNumber(width: Int, height: Int) throws {
        let source = try TestPatternSource(width: width, height: height, frameRate: Self.rate30)
        #expect(source.format == CaptureFormat(pixelFormat: .i420, width: width, height: height,
                                               frameRate: Self.rate30, sampleAspectRatio: SampleAspectRatio(width: 1, height: 1),
                                               fullRange: false, isLive: false))
        for n in 0..<40 {
            let frame = try requireFrame(source.nextFrame())
            #expect(frame.sequence == UInt64(n))
            #expect(frame.pts == MediaTime(value: Int64(n), timescale: 30))
            #expect(frameNumber(in: frame.buffer!) == n)
            _ = consume frame
        }
        #expect(source.statistics == CaptureStatistics())
    }

    @Test func numbersFarFromZeroRoundTrip() {
        let painter = TestPatternPainter(width: 128, height: 96)
        let buffer = PixelBuffer(format: .i420, width: 128, height: 96)
        for n in [1, 255, 256, 65_535, 123_456_789, 1 << 31, (1 << 32) - 1] {
            painter.paint(frame: n, into: buffer)
            #expect(frameNumber(in: buffer) == n)
        }
    }

    @Test func anySingleFlippedBlockIsRejected() {
        for number: UInt32 in [0, 1, 0xDEAD_BEEF, 0xFFFF_FFFF, 4_000_000] {
            let slots = FrameCode.slots(for: number)
            #expect(FrameCode.frameNumber(fromSlots: slots) == number)
            for i in slots.indices {
                var damaged = slots
                damaged[i].toggle()
                #expect(FrameCode.frameNumber(fromSlots: damaged) == nil, "block \(i) of \(number)")
            }
        }
    }

    @Test func consecutiveFramesAdvanceByOneDataBlock() {
        for n: UInt32 in [0, 1, 7, 1023, 99_999] {
            let a = FrameCode.slots(for: n)
            let b = FrameCode.slots(for: n + 1)
            #expect(zip(a[2..<34], b[2..<34]).filter { $0 != $1 }.count == 1)
        }
    }

    @Test func picturesWithoutACodeReadAsNil() throws {
        let buffer = PixelBuffer(format: .i420, width: 320, height: 240)
        let bytes = try #require(buffer.contiguousBytes)
        for value: UInt8 in [0, 16, 128, 235, 255] {
            bytes.initializeMemory(as: UInt8.self, repeating: value)
            #expect(frameNumber(in: buffer) == nil, "flat \(value)")
        }
        let raw = try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240", "-frames:v", "1",
                              "-pix_fmt", "yuv420p", "-f", "rawvideo", "-"])
        raw.withUnsafeBytes { bytes.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<bytes.count])) }
        #expect(frameNumber(in: buffer) == nil, "ffmpeg testsrc2")
        // Too small to hold a code at all.
        #expect(TestPatternSource.frameNumber(luma: UnsafePointer(buffer.planes[0].baseAddress),
                                              width: 32, height: 32, bytesPerRow: 320) == nil)
    }

    @Test(arguments: [(1280, 720), (64, 64)])
    func contentMovesFromFrameToFrame(width: Int, height: Int) throws {
        let source = try TestPatternSource(width: width, height: height, frameRate: Self.rate30)
        let painter = TestPatternPainter(width: width, height: height)
        let band = painter.code.bandHeight
        var previous: [UInt8]?
        for n in 0..<10 {
            let frame = try requireFrame(source.nextFrame())
            let picture = pictureBytes(frame.buffer!)
            _ = consume frame
            // Below the code band, so only the scene counts, not the code changing.
            let scene = Array(picture[(band * width)..<(width * height)])
            if let previous {
                var changed = 0
                for i in scene.indices where scene[i] != previous[i] { changed += 1 }
                #expect(changed > scene.count / 4, "frame \(n): only \(changed) of \(scene.count) luma samples changed")
            }
            previous = scene
            // Not a flat picture, not noise: a good spread of levels, within video range.
            var histogram = [Int](repeating: 0, count: 256)
            for value in scene { histogram[Int(value)] += 1 }
            #expect(histogram[..<16].allSatisfy { $0 == 0 } && histogram[236...].allSatisfy { $0 == 0 })
            #expect(histogram.filter { $0 > 0 }.count > 50)
            var step = 0
            for i in 1..<scene.count where i % width != 0 { step += abs(Int(scene[i]) - Int(scene[i - 1])) }
            #expect(step / scene.count < 20, "neighbouring samples should mostly agree, as in a scene")
        }
        #expect(painter.boxOrigin(frame: 0) != painter.boxOrigin(frame: 1))
    }

    @Test func ntscTimestampsAreExact() throws {
        let rate = FrameRate(numerator: 30000, denominator: 1001)!
        let source = try TestPatternSource(width: 64, height: 64, frameRate: rate)
        for n in 0..<3 {
            let frame = try requireFrame(source.nextFrame())
            #expect(frame.pts == MediaTime(value: Int64(n) * 1001, timescale: 30000))
            _ = consume frame
        }
    }

    @Test(arguments: [
        (62, 64, "the frame code needs at least 64x64"),
        (64, 32, "the frame code needs at least 64x64"),
        (65, 64, "width and height must be even, as 4:2:0 encoders require"),
        (640, 481, "width and height must be even, as 4:2:0 encoders require"),
        (16386, 64, "width and height can be at most 16384"),
    ])
    func refusesSizesItCannotServe(width: Int, height: Int, reason: String) {
        let error = #expect(throws: CaptureError.self) {
            try TestPatternSource(width: width, height: height, frameRate: Self.rate30)
        }
        #expect(error?.description == "test pattern size \(width)x\(height) is not supported: \(reason)")
        #expect(error?.exitStatus == .usage)
    }

    @Test func stopEndsAnUnpacedPattern() throws {
        let source = try TestPatternSource(width: 64, height: 64, frameRate: Self.rate30)
        _ = try requireFrame(source.nextFrame())
        source.stop()
        #expect(noFrame { source.nextFrame() })
    }
}

/// The live pattern against the clock. Serialized so timing is not disturbed by the other
/// tests in this suite.
@Suite(.serialized)
struct LiveTestPatternTests {
    @Test func tenFramesAtFiftyTakeAboutAFifthOfASecond() throws {
        let source = try TestPatternSource(width: 320, height: 240,
                                           frameRate: FrameRate(numerator: 50, denominator: 1)!, live: true)
        #expect(source.format.isLive)
        let start = ContinuousClock.now
        var sequences: [UInt64] = []
        for _ in 0..<10 {
            let frame = try requireFrame(source.nextFrame())
            sequences.append(frame.sequence)
            #expect(frameNumber(in: frame.buffer!) == Int(frame.sequence))
            _ = consume frame
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(180) && elapsed <= .milliseconds(500), "took \(elapsed)")
        #expect(sequences == Array(sequences.sorted()))
        #expect(sequences.last! == 9 + UInt64(source.statistics.droppedBySource))
    }

    @Test func stopWakesASleepingLivePattern() throws {
        let source = try TestPatternSource(width: 64, height: 64,
                                           frameRate: FrameRate(numerator: 1, denominator: 2)!, live: true)
        _ = try requireFrame(source.nextFrame())
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { source.stop() }
        let start = ContinuousClock.now
        #expect(noFrame { source.nextFrame() })
        #expect(ContinuousClock.now - start < .milliseconds(1500), "the next frame was 2 s away")
    }

    /// A consumer away for 80 ms at 100 frames a second, with four buffers free: the four
    /// oldest frames that came due meanwhile come at once, in order, as a driver's filled
    /// buffers would, and the rest up to the next one handed out were dropped.
    @Test func framesDueWhileTheConsumerWasAwayComeOldestFirst() throws {
        let source = try TestPatternSource(width: 64, height: 64,
                                           frameRate: FrameRate(numerator: 100, denominator: 1)!,
                                           live: true, bufferCount: 4)
        let first = try requireFrame(source.nextFrame())
        #expect(first.sequence == 0)
        _ = consume first
        Thread.sleep(forTimeInterval: 0.08)
        var sequences: [UInt64] = []
        for _ in 0..<5 {
            let frame = try requireFrame(source.nextFrame())
            #expect(frameNumber(in: frame.buffer!) == Int(frame.sequence))
            sequences.append(frame.sequence)
        }
        #expect(Array(sequences.prefix(4)) == [1, 2, 3, 4], "\(sequences)")
        #expect(sequences[4] == 5 + UInt64(source.statistics.droppedBySource), "\(sequences)")
        #expect(source.statistics.droppedBySource >= 3, "at least frames 5 to 7 came due with no buffer free")
    }

    @Test func framesDueWhileEveryBufferIsHeldAreDropped() throws {
        let source = try TestPatternSource(width: 64, height: 64,
                                           frameRate: FrameRate(numerator: 100, denominator: 1)!,
                                           live: true, bufferCount: 2)
        let held = Mutex<CapturedFrame?>(try requireFrame(source.nextFrame()))
        let kept = try requireFrame(source.nextFrame())
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { held.withLock { $0 = nil } }
        let frame = try requireFrame(source.nextFrame())
        #expect(frame.sequence >= 5, "frames kept coming due for 100 ms with no buffer to paint into")
        #expect(source.statistics.droppedBySource == Int(frame.sequence) - 2)
        #expect(frameNumber(in: frame.buffer!) == Int(frame.sequence))
        _ = consume frame
        _ = consume kept
    }
}

import Foundation
import Testing
import VTCapture
import VTCore
import VTEncoding
import VTOutput
import VTTestSupport
@testable import VTRecorder

/// What the recorder knows of each picture is found again by the token it goes through the
/// encoder with, never by its time: x264 hands a camera's microsecond times back rounded to
/// whole frames, so a lookup by time finds nothing for a frame off the grid.
@Suite struct FrameTokenTests {
    /// A camera whose frames are stamped up to ±`jitter` µs off the 30 fps grid.
    final class JitteredCamera: CaptureSource, @unchecked Sendable {
        // @unchecked Sendable: `next` and `random` are touched by the capture thread only.
        let format = CaptureFormat(pixelFormat: .i420, width: 64, height: 64,
                                   frameRate: FrameRate(numerator: 30, denominator: 1)!, isLive: false)
        let statistics = CaptureStatistics()
        private let frames: Int
        private let jitter: Int64
        private var next = 0
        private var random = SeededRandom(seed: 20261125)

        init(frames: Int, jitter: Int64) {
            self.frames = frames
            self.jitter = jitter
        }

        func nextFrame() throws -> CapturedFrame? {
            guard next < frames else { return nil }
            defer { next += 1 }
            let buffer = PixelBuffer(format: .i420, width: 64, height: 64)
            buffer.contiguousBytes!.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: next * 7))
            let offset = Int64(random.next() % UInt64(2 * jitter + 1)) - jitter
            let micro = Int64(next) * 1_000_000 / 30 + (next == 0 ? 0 : offset)
            return CapturedFrame(PixelBufferLease(handingOut: buffer), pts: MediaTime(value: micro, timescale: 1_000_000),
                                 sequence: UInt64(next), captureTime: MonotonicClock.nanoseconds())
        }

        func stop() {}
    }

    @Test func passthroughWithJitterGivesOneLatencyPerFrameWrittenAndForgetsEveryFrame() async throws {
        let frames = 90
        let outcome = await onOwnThread { () -> (RecordingResult, inEncoder: Int, tokens: [FrameToken]) in
            var settings = EncoderSettings()
            settings.frameRate = FrameRate(numerator: 30, denominator: 1)!
            settings.speed = "ultrafast"
            settings.bFrames = 2
            let output = FailingOutput()
            let recorder = Recorder(source: JitteredCamera(frames: frames, jitter: 4_000),
                                    configuration: Recorder.Configuration(realTime: .off),
                                    makeSession: { handler in
                                        try X264Session(width: 64, height: 64, pixelFormat: .i420, settings: settings,
                                                        output: handler)
                                    },
                                    makeOutput: { output })
            let result = recorder.run()
            return (result, recorder.framesInEncoder, output.tokens)
        }
        let (result, inEncoder, tokens) = outcome
        #expect(result.error == nil)
        #expect(result.statistics.framesEncoded == frames)
        #expect(result.statistics.latency.count == frames, "one latency sample per frame written")
        #expect(inEncoder == 0, "nothing is kept of a frame once it is written")
        #expect(Set(tokens).count == frames)
    }
}

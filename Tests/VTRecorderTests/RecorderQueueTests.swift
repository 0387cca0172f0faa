import Dispatch
import Testing
import VTCapture
import VTCore
import VTEncoding
import VTOutput
@testable import VTRecorder

/// A live recording whose encoder has fallen behind: every frame the camera gave is either
/// encoded or counted as dropped at the queue, including the one in hand when the stop comes.
@Suite struct RecorderQueueTests {
    /// A camera whose frames come out in a fixed order against the encoder: frame 1 only once
    /// the encoder is busy with frame 0, and the stop is asked for as frame `stopAt` is handed out.
    final class ScriptedCamera: CaptureSource, @unchecked Sendable {
        let format = SourceFormat(pixelFormat: .i420, width: 64, height: 64,
                                  frameRate: FrameRate(numerator: 30, denominator: 1)!, isLive: true)
        let statistics = CaptureStatistics()
        let encoderBusy = DispatchSemaphore(value: 0)
        let encoderMayGoOn = DispatchSemaphore(value: 0)
        let stopAt: UInt64
        var onStop: (() -> Void)?
        private var next: UInt64 = 0

        init(stopAt: UInt64) { self.stopAt = stopAt }

        func nextFrame() throws -> CapturedFrame? {
            let sequence = next
            guard sequence <= stopAt else { return nil }
            next += 1
            if sequence == 1 { encoderBusy.wait() }
            if sequence == stopAt {
                onStop?()
                // Long after the capture thread has found the queue full.
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { [self] in
                    encoderMayGoOn.signal()
                }
            }
            let buffer = PixelBuffer(format: .i420, width: 64, height: 64)
            buffer.beginLease()
            return CapturedFrame(buffer: buffer, pts: MediaTime(value: Int64(sequence), timescale: 30),
                                 sequence: sequence)
        }

        func stop() {}
    }

    @Test func theFrameInHandAtTheStopIsEncodedEvenWithTheQueueFull() throws {
        // Queue of one: frame 0 is in the encoder, 1 fills the queue, 2 is dropped, and the stop
        // comes with 3 in hand and no room for it.
        let camera = ScriptedCamera(stopAt: 3)
        // The encoder holds on to frame 0 until the camera lets it go.
        let session = StubSession { index in
            guard index == 0 else { return }
            camera.encoderBusy.signal()
            camera.encoderMayGoOn.wait()
        }
        let recorder = Recorder(source: camera, realTime: true, limits: RecordingLimits(), queueCapacity: 1,
                                makeSession: { _ in session },
                                makeWriter: { try SegmentWriter(template: OutputTemplate("/dev/null"), device: "scripted", overwrite: true) })
        camera.onStop = { [weak recorder] in recorder?.requestStop() }
        let result = recorder.run()
        #expect(result.stopReason == .signal)
        #expect(result.statistics.framesCaptured == 4)
        #expect(result.statistics.droppedQueue == 1)
        #expect(session.encoded == [0, 1, 3])
    }
}

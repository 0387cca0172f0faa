import Dispatch
import Foundation
import Testing
import VTCapture
import VTCore
import VTEncoding
import VTOutput
import VTTestSupport
@testable import VTRecorder

/// A live recording whose encoder has fallen behind: every frame the camera gave is either
/// encoded or counted as dropped at the queue, including the one in hand when the stop comes.
@Suite struct RecorderQueueTests {
    /// A camera whose frames come out in a fixed order against the encoder: frame 1 only once
    /// the encoder is busy with frame 0, and the stop is asked for as frame `stopAt` is handed out.
    final class ScriptedCamera: CaptureSource, @unchecked Sendable {
        // @unchecked Sendable: `next` is touched by the capture thread only.
        let format = CaptureFormat(pixelFormat: .i420, width: 64, height: 64,
                                   frameRate: FrameRate(numerator: 30, denominator: 1)!, isLive: true)
        let statistics = CaptureStatistics()
        let encoderBusy = DispatchSemaphore(value: 0)
        let stopAt: UInt64
        var onStop: (@Sendable () -> Void)?
        private var next: UInt64 = 0

        init(stopAt: UInt64) { self.stopAt = stopAt }

        func nextFrame() throws -> CapturedFrame? {
            let sequence = next
            guard sequence <= stopAt else { return nil }
            next += 1
            if sequence == 1 { encoderBusy.wait() }
            if sequence == stopAt { onStop?() }
            let buffer = PixelBuffer(format: .i420, width: 64, height: 64)
            return CapturedFrame(PixelBufferLease(handingOut: buffer), pts: MediaTime(value: Int64(sequence), timescale: 30),
                                 sequence: sequence)
        }

        func stop() {}
    }

    @Test func theFrameInHandAtTheStopIsEncodedEvenWithTheQueueFull() async {
        // Queue of one: frame 0 is in the encoder, 1 fills the queue, 2 is dropped, and the stop
        // comes with 3 in hand and no room for it. The encoder goes on with frame 0 only once
        // the capture thread waits for room for frame 3.
        let (result, encoded) = await onOwnThread { () -> (RecordingResult, [Int64]) in
            let camera = ScriptedCamera(stopAt: 3)
            let box = ControlBox()
            let session = StubSession(onEncode: { index in
                guard index == 0 else { return }
                camera.encoderBusy.signal()
                box.control?.queue.waitForBlockedProducer()
            })
            var configuration = Recorder.Configuration(realTime: .drop)
            configuration.depth = PipelineDepth(queue: 1)
            let recorder = Recorder(source: camera, configuration: configuration,
                                    makeSession: { _ in session },
                                    makeOutput: { try AnnexBWriter(path: "/dev/null", overwrite: true) })
            box.control = recorder.control
            // Weak: the control holds the camera, which holds this closure.
            camera.onStop = { [weak control = recorder.control] in control?.stopCleanly() }
            return (recorder.run(), session.encoded)
        }
        #expect(result.stopReason == .signal)
        #expect(result.statistics.framesCaptured == 4)
        #expect(result.statistics.droppedQueue == 1)
        #expect(encoded == [0, 1, 3])
    }
}

/// The recorder's control, handed to a session made before the recorder.
final class ControlBox: @unchecked Sendable {
    // @unchecked Sendable: set once before the recording starts, read on its encoder thread.
    var control: RecordingControl?
}

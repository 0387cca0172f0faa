import Testing
import VTCapture
import VTCore
import VTEncoding
import VTOutput
@testable import VTRecorder

/// A recording that fails still hands its encoder back, as a clean stop does: x264 joins its
/// threads, a VA-API device gets its context and surfaces back. Found by ThreadSanitizer, which
/// saw x264's threads never joined when the output failed (`-o /dev/full`).
@Suite struct RecorderFailureTests {
    @Test(arguments: ["writer", "encoder"])
    func aFailedRecordingStillInvalidatesTheSession(failing: String) throws {
        let source = try TestPatternSource(width: 64, height: 64, frameRate: FrameRate(numerator: 30, denominator: 1)!)
        let session = StubSession { index in
            if failing == "encoder" { throw EncoderError.encodeFailed(encoder: "stub", frame: index) }
        }
        let recorder = Recorder(source: source, realTime: false, limits: RecordingLimits(frames: 5),
                                makeSession: { _ in session },
                                makeWriter: { () throws -> SegmentWriter in
                                    guard failing == "encoder" else { throw OutputError.diskFull(path: "/dev/full") }
                                    return try SegmentWriter(template: OutputTemplate("/dev/null"), device: "test-pattern", overwrite: true)
                                })
        let result = recorder.run()
        #expect(result.stopReason == .error)
        #expect(session.invalidations >= 1)
    }
}

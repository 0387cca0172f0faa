import Foundation
import Synchronization
import Testing
import VTCapture
import VTCore
import VTEncoding
import VTOutput
import VTTestSupport
@testable import VTRecorder

/// A recording that fails (the output cannot be opened or written, the encoder refuses a
/// picture) ends with that error, hands its encoder back exactly once, and gives back every
/// frame it took from the source, also the one the constant-rate grid holds back. Found by
/// ThreadSanitizer (x264's threads never joined after `-o /dev/full`) and by review (with
/// `--timing cfr` a camera buffer held on the grid was never given back after a failed write).
@Suite struct RecorderFailureTests {
    enum Failure: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case outputOpen, outputWrite, encoder
        var testDescription: String { rawValue }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var failure: Failure
        var grid: Bool
        var testDescription: String { "\(failure.rawValue)\(grid ? " on the grid" : "")" }
    }

    static let cases = Failure.allCases.flatMap { [Case(failure: $0, grid: false), Case(failure: $0, grid: true)] }

    @Test(arguments: cases)
    func aFailedRecordingEndsWithItsErrorAndGivesEverythingBack(_ c: Case) async {
        let rate = FrameRate(numerator: 30, denominator: 1)!
        let outcome = await onOwnThread { () -> (RecordingResult, invalidations: Int, delivered: Int, released: Int) in
            let source = CountingSource(frames: 20, frameRate: rate)
            let box = ControlBox()
            _ = box
            var handler: EncodedFrameHandler?
            let session = StubSession(output: { try handler?($0) }, delay: 2) { index in
                if c.failure == .encoder && index == 6 { throw EncoderError.encodeFailed(encoder: "stub", frame: index) }
            }
            var configuration = Recorder.Configuration(realTime: .off)
            configuration.timing = c.grid ? rate : nil
            configuration.depth = PipelineDepth(holdsGridFrame: c.grid)
            let recorder = Recorder(source: source, configuration: configuration,
                                    makeSession: { output in handler = output; return session },
                                    makeOutput: {
                                        if c.failure == .outputOpen { throw OutputError.cannotOpen(path: "/nowhere/x.h264", errno: ENOENT) }
                                        return FailingOutput(failAt: c.failure == .outputWrite ? 4 : nil)
                                    })
            let result = recorder.run()
            return (result, session.invalidations, source.delivered, source.released)
        }
        let (result, invalidations, delivered, released) = outcome
        #expect(result.stopReason == .error)
        #expect(invalidations == 1)
        #expect(delivered > 0 || c.failure == .outputOpen)
        #expect(released == delivered, "every frame taken from the source is given back once")
        switch c.failure {
        case .outputOpen:
            #expect(result.error as? OutputError == .cannotOpen(path: "/nowhere/x.h264", errno: ENOENT))
            #expect(result.statistics.framesEncoded == 0)
            #expect(delivered == 0)
        case .outputWrite:
            #expect(result.error as? OutputError == .diskFull(path: "failing", cutBack: true))
            #expect(result.statistics.framesEncoded == 3)
        case .encoder:
            #expect(result.error as? EncoderError == .encodeFailed(encoder: "stub", frame: 6))
            // Frames 0…5 went in, two stay in the stub's lookahead.
            #expect(result.statistics.framesEncoded == 4)
        }
    }
}

/// A file-like source of `frames` pictures that counts the frames it hands out and the ones
/// given back.
final class CountingSource: CaptureSource, @unchecked Sendable {
    // @unchecked Sendable: `next` is touched by the capture thread only; the counts are atomic.
    let format: CaptureFormat
    let statistics = CaptureStatistics()
    private let frames: Int
    private var next = 0
    private let handedOut = Atomic<Int>(0)
    private let givenBack = Atomic<Int>(0)

    init(frames: Int, frameRate: FrameRate) {
        self.frames = frames
        format = CaptureFormat(pixelFormat: .i420, width: 64, height: 64, frameRate: frameRate, isLive: false)
    }

    var delivered: Int { handedOut.load(ordering: .acquiring) }
    var released: Int { givenBack.load(ordering: .acquiring) }

    func nextFrame() throws -> CapturedFrame? {
        guard next < frames else { return nil }
        let storage = PixelBuffer(format: .i420, width: 64, height: 64)
        let buffer = PixelBuffer(format: .i420, width: 64, height: 64, planes: storage.planes) { [self] _ in
            _ = storage
            givenBack.add(1, ordering: .releasing)
        }
        handedOut.add(1, ordering: .releasing)
        let duration = format.frameRate.frameDuration
        defer { next += 1 }
        return CapturedFrame(PixelBufferLease(handingOut: buffer), pts: MediaTime(value: Int64(next) * duration.value, timescale: duration.timescale),
                             sequence: UInt64(next))
    }

    func stop() {}
}

/// An output that keeps what it is given and fails the `failAt`-th write (1-based) as a full
/// disk would.
final class FailingOutput: MediaOutput {
    let failAt: Int?
    private(set) var statistics = OutputStatistics()
    private(set) var headers: [VideoFormatDescription] = []
    private(set) var tokens: [FrameToken] = []
    private(set) var finished = false
    private(set) var abandoned = false

    init(failAt: Int? = nil) { self.failAt = failAt }

    var paths: [String] { ["failing"] }
    var unusedFile: String? { nil }

    func writeHeader(_ format: VideoFormatDescription) throws(OutputError) { headers.append(format) }

    func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError) {}

    func write(_ frame: EncodedFrame) throws(OutputError) {
        if let failAt, statistics.frames + 1 == failAt { throw .diskFull(path: "failing", cutBack: true) }
        tokens.append(frame.token)
        statistics.frames += 1
        statistics.bytes += Int64(frame.data.count)
        if frame.isKeyFrame { statistics.keyFrames += 1 }
    }

    func finish(keepEmpty: Bool) throws(OutputError) { finished = true }
    func abandon() { abandoned = true }
}

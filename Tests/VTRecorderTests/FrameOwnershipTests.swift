import Foundation
import Synchronization
import Testing
import VTCapture
import VTCore
import VTEncoding
import VTOutput
import VTTestSupport
@testable import VTRecorder

/// Every picture a real source hands out comes back, whichever stage fails: the encoder
/// refusing a picture, the output refusing a frame, a still that cannot be made; on the plain
/// path, on the constant-rate grid (which holds a frame back) and with stills (which hold one
/// on their own thread). A leaked lease would leave the source's pool short (and a live
/// source dropping frames for want of buffers) or a file's pages mapped.
@Suite struct FrameOwnershipTests {
    enum Source: String, CaseIterable, Sendable {
        /// Pooled buffers the pattern is painted into.
        case testPattern
        /// A Y4M file's 4:2:0 pictures, mapped and leased without a copy.
        case mappedY4M
        /// A mono Y4M file's pictures, read into pooled buffers (chroma is added).
        case readY4M
    }

    enum Failure: String, CaseIterable, Sendable {
        case encoder, output, still
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var source: Source
        var failure: Failure
        var grid: Bool
        var testDescription: String { "\(source.rawValue), \(failure.rawValue) fails\(grid ? ", on the grid" : "")" }
    }

    static let cases = Source.allCases.flatMap { source in
        Failure.allCases.flatMap { failure in [false, true].map { Case(source: source, failure: failure, grid: $0) } }
    }

    static let rate = FrameRate.fps30
    static let frames = 24

    /// A Y4M file of `frames` 64×64 pictures: 4:2:0, or mono.
    static func y4m(mono: Bool, in directory: URL) throws -> String {
        let path = directory.appendingPathComponent(mono ? "mono.y4m" : "c420.y4m").path
        var bytes = Array("YUV4MPEG2 W64 H64 F30:1 Ip A1:1 \(mono ? "Cmono" : "C420jpeg")\n".utf8)
        let picture = mono ? 64 * 64 : 64 * 64 * 3 / 2
        for n in 0..<frames {
            bytes += Array("FRAME\n".utf8)
            bytes += [UInt8](repeating: UInt8(truncatingIfNeeded: n * 9), count: picture)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(arguments: cases)
    func everyPictureComesBackWhicheverStageFails(_ c: Case) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("vtrecord-ownership-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let depth = PipelineDepth(holdsGridFrame: c.grid, holdsStill: true)
        let source: any CaptureSource
        let picturesInUse: @Sendable () -> Int
        switch c.source {
        case .testPattern:
            let pattern = try TestPatternSource(width: 64, height: 64, frameRate: Self.rate, bufferCount: depth.framesHeld)
            source = pattern
            picturesInUse = { pattern.picturesInUse }
        case .mappedY4M, .readY4M:
            let file = try Y4MSource(path: try Self.y4m(mono: c.source == .readY4M, in: directory),
                                     bufferCount: depth.framesHeld)
            source = file
            picturesInUse = { file.picturesInUse }
        }
        let outcome = await onOwnThread { () -> (RecordingResult, stillsFailed: Int) in
            var handler: EncodedFrameHandler?
            let session = StubSession(output: { try handler?($0) }, delay: 2) { index in
                if c.failure == .encoder && index == 12 { throw EncoderError.encodeFailed(encoder: "stub", frame: index) }
            }
            // A still due at every frame: the still thread holds a frame most of the time.
            let stills = StillTaker(interval: 1 / 30, take: { _ in
                if c.failure == .still { throw OutputError.cannotOpen(path: "still.jpg", errno: EACCES) }
            }, warn: { _ in })
            var configuration = Recorder.Configuration(realTime: .off, limits: RecordingLimits(frames: Self.frames))
            configuration.timing = c.grid ? Self.rate : nil
            configuration.depth = depth
            configuration.stills = stills
            let recorder = Recorder(source: source, configuration: configuration,
                                    makeSession: { output in handler = output; return session },
                                    makeOutput: { FailingOutput(failAt: c.failure == .output ? 8 : nil) })
            let result = recorder.run()
            return (result, stills.statistics.failed)
        }
        let (result, stillsFailed) = outcome
        switch c.failure {
        case .encoder, .output:
            #expect(result.stopReason == .error, "\(String(describing: result.error))")
        case .still:
            #expect(result.error == nil && result.statistics.framesEncoded > 0)
            #expect(stillsFailed > 0, "a still failed on the way")
        }
        #expect(result.statistics.framesCaptured > 0)
        #expect(picturesInUse() == 0, "every picture the source handed out came back")
    }
}

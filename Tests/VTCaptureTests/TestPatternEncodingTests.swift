import Foundation
import Testing
import VTCore
import VTCapture

/// The frame code must survive the trip it exists for: x264 at ordinary and at poor quality,
/// B-frames and all, then ffmpeg decoding back to pictures.
struct TestPatternEncodingTests {
    static let frames = 24

    @Test(arguments: [(1280, 720, 23), (1280, 720, 40), (1920, 1080, 40), (320, 240, 23), (320, 240, 40),
                      (64, 64, 23), (64, 64, 40)])
    func frameCodeSurvivesX264(width: Int, height: Int, crf: Int) throws {
        let dir = try TemporaryDirectory()
        let rate = FrameRate(numerator: 30, denominator: 1)!
        let source = try TestPatternSource(width: width, height: height, frameRate: rate)
        var writer = Y4MWriter(width: width, height: height, frameRate: rate)
        for _ in 0..<Self.frames {
            let frame = try requireFrame(source.nextFrame())
            writer.append(frame.buffer!)
            _ = consume frame
        }
        let input = dir.path("pattern.y4m")
        let encoded = dir.path("pattern.264")
        try writer.data.write(to: URL(fileURLWithPath: input))
        try runTool(["x264", "--quiet", "--crf", "\(crf)", "--preset", "veryfast", "--bframes", "3",
                     "-o", encoded, input])

        let decoded = try ffmpeg(["-i", encoded, "-fps_mode", "passthrough", "-f", "rawvideo",
                                  "-pix_fmt", "gray", "-"])
        let pictures = decoded.pictures(ofSize: width * height)
        let numbers = pictures.map { picture in
            picture.withUnsafeBufferPointer {
                TestPatternSource.frameNumber(luma: $0.baseAddress!, width: width, height: height,
                                              bytesPerRow: width)
            }
        }
        #expect(numbers == Array(0..<Self.frames))
    }
}

import Foundation
import Testing
import VTCore
import VTTestSupport

/// Inputs the fuzz runs found broken, cut down to what still showed the fault, kept as bytes
/// so they are tried on every run, whatever the seed.
@Suite struct FuzzRegressionTests {
    /// A Y4M stream whose header gives one frame of `width`×`height`.
    static func y4m(_ tags: String, width: Int, height: Int) -> [UInt8] {
        Array("YUV4MPEG2 \(tags)\nFRAME\n".utf8)
            + [UInt8](repeating: 0x80, count: PixelFormat.i420.imageSize(width: width, height: height))
    }

    /// Found by cli-y4m-x264: an odd height in the Y4M header reached x264, which refused to
    /// open (exit 4, with x264's own log line as a second error). Now refused as bad input by
    /// either encoder, in one line.
    @Test(arguments: ["x264", "vaapi"])
    func oddSizedY4MIsBadInput(encoder: String) throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("odd.y4m")
        try Data(Self.y4m("W48 H1 F30:1", width: 48, height: 1)).write(to: URL(fileURLWithPath: input))
        let va = try FakeVADevice()
        let environment = encoder == "vaapi" ? try va.environment() : ProcessInfo.processInfo.environment
        let device = encoder == "vaapi" ? ["--va-device", va.devicePath] : []
        let result = try Tools.run(Tools.vtrecord, ["--input", input, "--encoder", encoder, "--quiet",
                                                    "-o", directory.path("out.h264")] + device,
                                   environment: environment)
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasSuffix("encodes 4:2:0 pictures of even size, not 48x1") == true, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("out.h264")))
    }
}

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

    /// Found by cli-y4m-vaapi: a Y4M `A` tag beyond 16 bits stopped the VA-API session
    /// writing its SPS (and x264's settings, converting to Int32). H.264 keeps the ratio in
    /// two 16-bit fields, so it is fitted there as x264 fits it, or left out, with a warning.
    @Test(arguments: ["x264", "vaapi"])
    func aspectRatioBeyondSixteenBitsIsFittedOrLeftOut(encoder: String) throws {
        let va = try FakeVADevice()
        let environment = encoder == "vaapi" ? try va.environment() : ProcessInfo.processInfo.environment
        let device = encoder == "vaapi" ? ["--va-device", va.devicePath] : []
        let directory = try TemporaryDirectory()
        for (tag, coded, warning) in [("A16:4294967295", "SAR unspecified", "left out"),
                                      ("A100000:99999", "SAR 50000:49999", "recorded as 50000:49999")] {
            let input = directory.path("sar.y4m")
            try Data(Self.y4m("W32 H16 F30:1 \(tag)", width: 32, height: 16)).write(to: URL(fileURLWithPath: input))
            let output = directory.path("sar.h264")
            let result = try Tools.run(Tools.vtrecord, ["--input", input, "--encoder", encoder, "--quiet", "-o", output,
                                                        "--overwrite"] + device, environment: environment)
            #expect(result.status == 0, "\(tag): \(result.stderr)")
            #expect(result.stderr.hasSuffix("does not fit H.264's 16-bit fields: \(warning)\n"), "\(tag): \(result.stderr)")
            let report = try Tools.vtrecord(["inspect", output])
            #expect(report.stdoutText.contains(coded), "\(tag): \(report.stdoutText)")
        }
    }
}

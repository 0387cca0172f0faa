import Foundation
import Testing
import VTTestSupport

/// The fake VA-API driver's decoding (VAEntrypointVLD) proved against clients written by other
/// people: vainfo lists it, and ffmpeg 5.1's VA-API hwaccel (libavcodec's vaapi_h264.c, the code
/// the product will decode with) decodes through it every kind of stream the driver's encoder
/// makes via h264_vaapi — CAVLC and CABAC, with and without B-frames, in several slices, at
/// cropped sizes — to exactly the pictures ffmpeg's software decoder gives for the same file.
/// A stream that is not made of I_PCM macroblocks is refused loudly, never decoded wrongly.
///
/// The command line that decodes through the fake, for the product side to mirror:
///
///     ffmpeg -hwaccel vaapi -hwaccel_device /dev/null -i in.h264 -pix_fmt yuv420p -f framemd5 -
///
/// with FakeVADevice's environment. libavcodec falls back to software decoding when it cannot
/// set the hwaccel up, so every test reads the driver's report to know the driver decoded.
@Suite("Fake VA-API driver decoding through ffmpeg's VA-API hwaccel")
struct FakeVADecodeTests {
    static func vainfoLines(_ device: FakeVADevice) throws -> [String] {
        let result = try ChildProcess.run(["vainfo", "--display", "drm", "--device", device.devicePath],
                                          environment: device.environment())
        try #require(result.status == 0, "\(result.transcript)")
        return result.standardOutputText.split(separator: "\n").filter { $0.contains("VAEntrypoint") }
            .map { $0.replacingOccurrences(of: " ", with: "").replacingOccurrences(of: "\t", with: "") }
    }

    @Test func vainfoListsDecodingForTheThreeProfilesByDefault() throws {
        let lines = try Self.vainfoLines(try FakeVADevice())
        #expect(lines == ["ConstrainedBaseline", "Main", "High"].flatMap { profile in
            ["VLD", "EncSlice", "EncSliceLP"].map { "VAProfileH264\(profile):VAEntrypoint\($0)" }
        })
        let decodeOnly = try Self.vainfoLines(try FakeVADevice(knobs: [.entrypoints([.decode])]))
        #expect(decodeOnly == ["VAProfileH264ConstrainedBaseline:VAEntrypointVLD", "VAProfileH264Main:VAEntrypointVLD",
                               "VAProfileH264High:VAEntrypointVLD"])
        let encodeOnly = try Self.vainfoLines(try FakeVADevice(knobs: [.entrypoints([.slice, .lowPower])]))
        #expect(!encodeOnly.contains { $0.contains("VLD") } && encodeOnly.count == 6)
    }

    /// An encoding made through the driver with ffmpeg's h264_vaapi, then decoded through it.
    struct Stream: Sendable, CustomTestStringConvertible {
        var name: String
        var encode: [String] = []
        var size = "\(FakeVA.width)x\(FakeVA.height)"
        var frames = 12
        var decodeKnobs: [FakeVADevice.Knob] = []
        var decodeOptions: [String] = []
        var outputOptions = ["-pix_fmt", "yuv420p"]
        var expect: @Sendable (FakeVADevice.Report.Decode) -> Void = { _ in }
        var testDescription: String { name }
    }

    static let streams: [Stream] = [
        Stream(name: "High, CABAC, B-frames") { decode in
            #expect(decode.profile == "high")
            #expect(decode.cabacSlices == 12 && decode.cavlcSlices == 0)
            #expect(decode.iSlices == 1 && decode.pSlices > 0 && decode.bSlices > 0)
        },
        Stream(name: "High, CABAC, no B-frames", encode: ["-bf", "0"]) { decode in
            #expect(decode.iSlices == 1 && decode.pSlices == 11 && decode.bSlices == 0)
            #expect(decode.cabacSlices == 12)
        },
        Stream(name: "High, CAVLC, B-frames", encode: ["-coder", "cavlc"]) { decode in
            #expect(decode.cavlcSlices == 12 && decode.cabacSlices == 0 && decode.bSlices > 0)
        },
        Stream(name: "Main, CAVLC, no B-frames",
               encode: ["-profile:v", "main", "-coder", "cavlc", "-bf", "0"]) { decode in
            #expect(decode.profile == "main")
            #expect(decode.cavlcSlices == 12 && decode.pSlices == 11)
        },
        Stream(name: "Main, CABAC, B-frames", encode: ["-profile:v", "main"]) { decode in
            #expect(decode.profile == "main" && decode.cabacSlices == 12 && decode.bSlices > 0)
        },
        Stream(name: "Constrained Baseline", encode: ["-profile:v", "constrained_baseline", "-bf", "0"]) { decode in
            #expect(decode.profile == "constrained_baseline")
            #expect(decode.cavlcSlices == 12 && decode.bSlices == 0)
        },
        Stream(name: "four slices a picture, CABAC, B-frames", encode: ["-slices", "4"]) { decode in
            #expect(decode.cabacSlices == 48)
        },
        Stream(name: "four slices a picture, CAVLC", encode: ["-slices", "4", "-coder", "cavlc"]) { decode in
            #expect(decode.cavlcSlices == 48)
        },
        Stream(name: "200x120, cropped from 208x128, CABAC", size: "200x120") { decode in
            #expect(decode.macroblocks == 13 * 8 * 12)
        },
        Stream(name: "200x120, cropped, CAVLC, no B-frames", encode: ["-coder", "cavlc", "-bf", "0"], size: "200x120"),
        Stream(name: "1366x768, cropped from 1376x768, CAVLC", encode: ["-coder", "cavlc"], size: "1366x768",
               frames: 4) { decode in
            #expect(decode.macroblocks == 86 * 48 * 4)
        },
        Stream(name: "1366x768, cropped, CABAC, no B-frames", encode: ["-bf", "0"], size: "1366x768", frames: 4),
        Stream(name: "downloaded without vaDeriveImage", decodeKnobs: [.noDerive]),
        Stream(name: "frames kept on the GPU, then hwdownload", decodeOptions: ["-hwaccel_output_format", "vaapi"],
               outputOptions: ["-vf", "hwdownload,format=nv12", "-pix_fmt", "yuv420p"]),
    ]

    @Test(arguments: streams)
    func ffmpegDecodesWhatTheDriverEncodedThroughTheDriver(stream: Stream) throws {
        let encoder = try FakeVADevice()
        let file = encoder.file("stream.h264")
        let encoded = try FakeVA.ffmpegEncode(encoder, stream.encode, output: file, frames: stream.frames,
                                              size: stream.size)
        try #require(encoded.status == 0, "\(encoded.transcript)")
        let software = try FakeVA.decode(file)
        try #require(software.errors.isEmpty && software.pictures.count == stream.frames, "\(software.errors)")

        let decoder = try FakeVADevice(knobs: stream.decodeKnobs)
        let (result, pictures) = try FakeVA.hardwareDecode(decoder, file, decodeOptions: stream.decodeOptions,
                                                           outputOptions: stream.outputOptions)
        try #require(result.status == 0, "\(result.transcript)")
        #expect(result.standardError.isEmpty, "\(result.standardError)")
        #expect(pictures == software.pictures)
        let report = try decoder.report()
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(report.decode.pictures == stream.frames && report.decode.failedPictures == 0)
        #expect(report.frames == 0, "nothing encoded")
        #expect(!report.configs.isEmpty && report.configs.allSatisfy { $0.entrypoint == "vld" })
        #expect(report.terminated && report.liveObjects?.none == true, "\(String(describing: report.liveObjects))")
        stream.expect(report.decode)
    }

    /// The software decoder's pictures are the clip's own (I_PCM is lossless), so the hardware
    /// path matching them proves the samples land where they belong, not merely consistently.
    @Test func theDecodedPicturesAreTheSourcePictures() throws {
        let encoder = try FakeVADevice()
        let file = encoder.file("stream.h264")
        let size = "200x120"
        let encoded = try FakeVA.ffmpegEncode(encoder, [], output: file, frames: 8, size: size)
        try #require(encoded.status == 0, "\(encoded.transcript)")
        let decoder = try FakeVADevice()
        let (result, pictures) = try FakeVA.hardwareDecode(decoder, file)
        try #require(result.status == 0, "\(result.transcript)")
        #expect(pictures == (try FakeVA.sourcePictures(size: size, frames: 8)))
        #expect(try decoder.report().decode.pictures == 8)
    }

    /// libx264's macroblocks are not I_PCM: the driver says what it found instead for every
    /// picture and fails it (VA_STATUS_ERROR_DECODING_ERROR, 23), and ffmpeg reports the failed
    /// pictures. (libavcodec still hands out frames for some of them: only the errors tell.)
    /// Weighted prediction is off so the P slices' headers parse and their macroblocks are read.
    static let x264Streams: [(coder: String, violations: [String])] = [
        ("cabac", [
            "picture 0 slice 0: macroblock 0 (x 0, y 0) mb_type in an I slice, expected I_PCM, got I_NxN",
            "picture 1 slice 0: macroblock 0 (x 0, y 0) mb_type in a P slice, expected I_PCM, got an inter "
                + "macroblock type",
            "picture 2 slice 0: macroblock 0 (x 0, y 0) mb_type in a B slice, expected I_PCM, got an inter "
                + "macroblock type",
            "picture 3 slice 0: macroblock 0 (x 0, y 0) in a B slice, expected I_PCM, got a skipped macroblock "
                + "(mb_skip_flag 1)",
            "picture 4 slice 0: macroblock 0 (x 0, y 0) mb_type in a P slice, expected I_PCM, got an inter "
                + "macroblock type",
        ]),
        ("cavlc", [
            "picture 0 slice 0: macroblock 0 (x 0, y 0) mb_type in an I slice, expected I_PCM (25), got 0 (I_NxN)",
            "picture 1 slice 0: macroblock 0 (x 0, y 0) mb_type in a P slice, expected I_PCM (30), got 0 (an inter "
                + "macroblock type)",
            "picture 2 slice 0: macroblock 0 (x 0, y 0) mb_type in a B slice, expected I_PCM (48), got 2 (an inter "
                + "macroblock type)",
            "picture 3 slice 0: macroblock 0 (x 0, y 0) in a B slice, expected I_PCM, got 4 skipped macroblocks "
                + "(mb_skip_run)",
            "picture 4 slice 0: macroblock 0 (x 0, y 0) mb_type in a P slice, expected I_PCM (30), got 0 (an inter "
                + "macroblock type)",
        ]),
    ]

    @Test(arguments: x264Streams)
    func aStreamThatIsNotIPCMIsRefusedWithAViolation(coder: String, violations: [String]) throws {
        let device = try FakeVADevice()
        let file = device.file("x264.h264")
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = nil
        let made = try ChildProcess.run(
            ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-f", "lavfi",
             "-i", "testsrc2=size=320x240:rate=30", "-frames:v", "5", "-c:v", "libx264", "-coder", coder,
             "-weightp", "0", "-y", file],
            environment: environment, timeout: .seconds(60))
        try #require(made.status == 0, "\(made.transcript)")
        let (result, _) = try FakeVA.hardwareDecode(device, file)
        #expect(result.status != 0, "more than 2/3 of the pictures failed: ffmpeg exits 69")
        let lines = FakeVA.violations(result.standardError).sorted()
        #expect(lines == violations.map { "fake-va: violation: decode: " + $0 }, "\(result.standardError)")
        #expect(result.standardError.contains("Failed to end picture decode issue: 23 (internal decoding error)"),
                "\(result.standardError)")
        #expect(result.standardError.contains("hardware accelerator failed to decode picture"))
        let report = try device.report()
        #expect(report.decode.pictures == 0 && report.decode.failedPictures == 5)
        #expect(report.violations.sorted() == violations.map { "decode: " + $0 })
    }

    /// A slice cut short: the driver refuses the picture rather than invent the missing part.
    /// ffmpeg still outputs a frame for it and exits 0 (one failed picture is within its error
    /// rate), so a client must heed avcodec's error for that packet, and a test the report.
    @Test func sliceDataThatEndsEarlyIsRefused() throws {
        let encoder = try FakeVADevice()
        let file = encoder.file("stream.h264")
        let encoded = try FakeVA.ffmpegEncode(encoder, ["-coder", "cavlc"], output: file, frames: 1)
        try #require(encoded.status == 0, "\(encoded.transcript)")
        let cut = encoder.file("cut.h264")
        try Data(contentsOf: URL(fileURLWithPath: file)).prefix(60_000).write(to: URL(fileURLWithPath: cut))

        let decoder = try FakeVADevice()
        let (result, pictures) = try FakeVA.hardwareDecode(decoder, cut)
        let violation = "decode: picture 0 slice 0: slice data ends early: macroblock 155 (x 15, y 7) I_PCM samples, "
            + "expected 384 bytes, got 41"
        #expect(FakeVA.violations(result.standardError) == ["fake-va: violation: " + violation],
                "\(result.standardError)")
        #expect(result.standardError.contains("Error while decoding stream #0:0: Input/output error"))
        #expect(result.status == 0 && pictures.count == 1)
        let report = try decoder.report()
        #expect(report.violations == [violation])
        #expect(report.decode.pictures == 0 && report.decode.failedPictures == 1)
    }

    /// Decoding not offered, or a picture larger than FAKE_VA_DECODE_MAX: libavcodec cannot set
    /// the hwaccel up and quietly decodes in software instead (exit 0, right pictures), which
    /// only the driver's report shows.
    @Test(arguments: [[FakeVADevice.Knob.entrypoints([.slice, .lowPower])], [.decodeMax(width: 256, height: 256)]])
    func withoutDecodingLibavcodecFallsBackToSoftware(knobs: [FakeVADevice.Knob]) throws {
        let encoder = try FakeVADevice()
        let file = encoder.file("stream.h264")
        let encoded = try FakeVA.ffmpegEncode(encoder, [], output: file, frames: 3)
        try #require(encoded.status == 0, "\(encoded.transcript)")
        let decoder = try FakeVADevice(knobs: knobs)
        let (result, pictures) = try FakeVA.hardwareDecode(decoder, file)
        #expect(result.status == 0, "\(result.transcript)")
        #expect(pictures == (try FakeVA.decode(file)).pictures)
        let report = try decoder.report()
        #expect(report.decode.pictures == 0 && report.decode.failedPictures == 0)
    }

    @Test func theConfigProbeGetsADecodingConfig() throws {
        let device = try FakeVADevice()
        let result = try ChildProcess.run([try FakeVADevice.client("config_probe")], environment: device.environment())
        try #require(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutputText.hasPrefix("decoding entrypoint: success (no error)\n"))
    }
}

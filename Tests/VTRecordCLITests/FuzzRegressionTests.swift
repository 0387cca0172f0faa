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
    /// Found by FuzzPreset (make fuzz): a table header with no key after its `[` — four bytes,
    /// `[` newline ` w`, were enough — made the toml++ parser inside TOMLKit fail an assertion
    /// and abort vtrecord (exit 134). A NUL byte cut the file short without a word. Both are
    /// now refused before TOMLKit sees the text, with the line and column, in presets and in
    /// batch files alike.
    static let crashingPresets: [(bytes: [UInt8], line: Int, says: String)] = [
        ([0x5B, 0x0A, 0x20, 0x77], 1, "a table header needs a key after '[', not the end of the line (column 2)"),
        (Array("fps = 30\n[=]\n".utf8), 2, "a table header needs a key after '[', not '=' (column 2)"),
        (Array("[[.]]\n".utf8), 1, "a table header needs a key after '[', not '.' (column 3)"),
        ([0x0A, 0x0A, 0x0A, 0x0A, 0x0A, 0x0A, 0x5B, 0x0A, 0x20, 0x77, 0x00, 0xC3, 0xBF, 0x76, 0x00, 0x0A], 7,
         "a table header needs a key after '[', not the end of the line (column 2)"),
        (Array("size = \"640x480\"\u{0}\n".utf8), 1, "a NUL byte, which TOML does not allow (column 17)"),
    ]

    @Test(arguments: crashingPresets.indices)
    func aTableHeaderWithoutAKeyIsBadTOMLNotACrash(_ index: Int) throws {
        let (bytes, line, says) = Self.crashingPresets[index]
        let directory = try TemporaryDirectory()
        let preset = directory.path("bad.toml")
        try Data(bytes).write(to: URL(fileURLWithPath: preset))
        let shown = try Tools.run(Tools.vtrecord, ["presets", "show", preset],
                                  environment: FuzzCLITests.environment(directory))
        #expect(shown.status == 2, "\(shown.stderr)")
        #expect(shown.stderr == "vtrecord: error: \(preset):\(line): not valid TOML: \(says)\n")
        let batch = directory.path("jobs.toml")
        try Data(bytes).write(to: URL(fileURLWithPath: batch))
        let batched = try Tools.run(Tools.vtrecord, ["batch", batch], environment: FuzzCLITests.environment(directory))
        #expect(batched.status == 2, "\(batched.stderr)")
        #expect(batched.stderr.contains("\(batch):\(line): not valid TOML: \(says)"), "\(batched.stderr)")
    }

    /// What looks like a bad header inside a string or a comment is text, not a header.
    @Test func bracketsInStringsAndCommentsAreNotHeaders() throws {
        let directory = try TemporaryDirectory()
        let preset = directory.path("fine.toml")
        let text = "description = \"\"\"\n[=]\n\"\"\"\n# [=\ncontrol = [\n  'a=[', # [.\n  \"b=\\\"[\",\n]\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: preset))
        let shown = try Tools.run(Tools.vtrecord, ["presets", "show", preset], environment: FuzzCLITests.environment(directory))
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdoutText.contains("control = [\"a=[\", \"b=\\\"[\"]"), "\(shown.stdoutText)")
    }

    /// Found by FuzzCLITests (seed 314389365): a preset's bad `output` template was refused
    /// with the command line's two-line usage error instead of the preset's file, line and key,
    /// because the template's messages call the option `-o` and only long names were looked up.
    @Test func aBadOutputTemplateInAPresetNamesThePresetLine() throws {
        let directory = try TemporaryDirectory()
        let preset = directory.path("seg.toml")
        try Data("description = \"\"\"a file,\nin segments\"\"\"\ninput = \"clip.y4m\"\noutput = \"out-{n:03}-%qp\"\n".utf8)
            .write(to: URL(fileURLWithPath: preset))
        let shown = try Tools.run(Tools.vtrecord, ["presets", "show", preset], environment: FuzzCLITests.environment(directory))
        #expect(shown.status == 2, "\(shown.stderr)")
        #expect(shown.stderr == "vtrecord: error: \(preset):4: output: -o out-{n:03}-%qp: %q is not a strftime time field "
                + "(such as %Y%m%d-%H%M%S): write %% for a percent sign\n")
        // Given on the command line, the same value is the command line's to answer for.
        let typed = try Tools.run(Tools.vtrecord, ["presets", "show", preset, "-o", "out-%q"],
                                  environment: FuzzCLITests.environment(directory))
        #expect(typed.status == 2)
        #expect(!typed.stderr.contains(preset), "\(typed.stderr)")
    }

    /// Found by FuzzCLITests (seed 3278565669): an output extension vtrecord cannot write, set in
    /// a preset, was refused with the command line's two-line usage error, because its message
    /// named only --container, which the preset did not set.
    @Test func anOutputExtensionInAPresetNamesThePresetLine() throws {
        let directory = try TemporaryDirectory()
        let preset = directory.path("ext.toml")
        try Data("test-pattern = true\noutput = \"out-{n:03}-%Y%m%d.h1e309\"\n".utf8).write(to: URL(fileURLWithPath: preset))
        let shown = try Tools.run(Tools.vtrecord, ["presets", "show", preset], environment: FuzzCLITests.environment(directory))
        #expect(shown.status == 2, "\(shown.stderr)")
        #expect(shown.stderr == "vtrecord: error: \(preset):2: output: cannot write .h1e309 files (-o out-{n:03}-%Y%m%d.h1e309): "
                + "name the output .h264, .264, .mp4, .m4v, .mkv, .ts, or choose the format with --container h264|mp4|mkv|ts\n")
    }

    /// Found by FuzzCLITests (seed 3325022844): a raw stream whose last unit breaks as the decoder
    /// drains (a cut, bytes inserted) ended `thumbnail` with exit 4, "the software decoder
    /// failed", because the session took an error while draining for its own failure rather
    /// than damage. Now it is damage: no picture to show (exit 2, one line), and verify says
    /// damaged (exit 6). (The seed asked for 0.1 s, past the end of this 0.04 s stream, which
    /// is now refused before decoding; 0 s takes the same way through the decoder.)
    @Test func anErrorWhileDrainingIsDamageNotAFailedDecoder() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("drain.h264")
        let bytes = try #require(Data(base64Encoded: [
            "AAAAAWdkAAqs2UQAAEQAAAMABAAAAwDyPEiWWAAAAAFo6+PLIsAAAAABBgX//6bcRem95tlIt5Ys2CDZI+7veDI2NCAtIGNv",
            "cmUgMTY0IHIzMDk1IGJhZWU0MDAgLSBILjI2NC9NUEVHLTQgQVZDIGNvZGVjIC0gQ29wedY/bGVmdCAyMDAzLTIwMjIgLSBo",
            "dHRwOi8vd3d3LnZpZGVvbGFuLm9yZy94MjY0Lmh0bWwgLSBvcHRpb25zOiBjYWJhYz0xIHJlZj0zIGRlYmxvY2s9MTowOjAg",
            "YW5hbHlzZT0weDM6MHgxMTMgbWU9aGV4IHN1Ym1lPTcgcHN5PTEgcHN5X3JkPTEuMDA6MC4wMCBtaXhlZF9yZWY9MSBtZV9y",
            "YW5nZT0xNiBjaHJvbWFfbWU9MSB0cmVsbGlzPTEgOHg4ZGN0PTEgY3FtPTAgZGVhZHpvbmU9MjEsMTEgZmFzdF9wc2tpcD0x",
            "IGNocm9tYV9xcF9vZmZzZXQ9LTIgdGhyZWFkcz0yIGxvb2thaGVhZF90aHJlYWRzPTEgc2xpY2VkX3RocmVhZHM9MCBucj0w",
            "IGRlY2ltYXRlPTEgaW50ZXJsYWNlZD0wIGJsdXJheV9jb21wYXQ9MCBjb25zdHJhaW5lZF9pbnRyYT0wIGJmcmFtZXM9MiBi",
            "X3B5cmFtaWQ9MiBiX2FkYXB0PTEgYl9iaWFzPTAgZGlyZWN0PTEgd2VpZ2h0Yj0xIG9wZW5fZ29wPTAgd2VpZ2h0cD0yIGtl",
            "eWludD0zIGtleWludF9taW49MSBzY2VuZWN1dD00MCBpbnRyYV9yZWZyZXNoPTAgcmNfbG9va2FoZWFkPTMgcmM9Y3JmIG1i",
            "dHJlZT0xIGNyZj0yMy4wIHFjb21wPTAuNjAgcXBtaW49MCBxcG1heD02OSBxcHN0ZXA9NCBpcF9yYXRpbz0xLjQwIGFxPTE6",
            "MS4wMACAAAAAAWWIhAAx/wP7/8O25SEfnj/+oquXcX8aADKIUEoKyVmV/Yj//GXvr6IOQTM="
        ].joined()))
        try bytes.write(to: URL(fileURLWithPath: path))
        let thumbnail = try Tools.vtrecord(["thumbnail", path, "--at", "0", "--exact", "-o", directory.path("t.jpg")])
        #expect(thumbnail.status == 2, "\(thumbnail.stderr)")
        #expect(thumbnail.stderr == "vtrecord: error: \(path): has no picture to show at 0.000 s\n")
        let verify = try Tools.vtrecord(["verify", path])
        #expect(verify.status == 6, "\(verify.stderr)")
        #expect(verify.stderr.isEmpty)
    }
}

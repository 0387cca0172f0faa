import Foundation
import Testing
import VTTestSupport

/// Recording through the VA-API encoder, against the driver double of Tests/FakeVA. The double
/// codes every macroblock as I_PCM, so the decoded file must equal the input bit for bit, and
/// it fails the encode at the first mistake in frame_num, POC, reference lists, idr_pic_id,
/// packed headers or rate-control values — so a file that decodes exactly also proves the
/// bookkeeping.
@Suite struct VAAPIRecordingTests {
    /// Runs vtrecord on the VA double (`--encoder vaapi` unless `arguments` say otherwise) and
    /// returns the result and the JSON summary.
    static func record(_ va: FakeVADevice, _ arguments: [String], output: String? = nil,
                       environment: [String: String]? = nil) throws -> (ProcessResult, [String: Any]) {
        let out = output ?? va.file("out.h264")
        let summary = va.file("summary.json")
        let encoder = arguments.contains("--encoder") ? [] : ["--encoder", "vaapi"]
        let r = try Tools.run(Tools.vtrecord,
                              encoder + ["--va-device", va.devicePath, "-o", out, "--overwrite",
                                         "--json-summary", summary] + arguments,
                              environment: environment ?? (try va.environment()))
        let data = (try? Data(contentsOf: URL(fileURLWithPath: summary))) ?? Data()
        let json = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
        return (r, json)
    }

    /// Test media made once per test process: a 640x480 Y4M clip, and the frame MD5s of it and
    /// of the 640x480 test pattern (through x264 at QP 0, which is lossless). 720p goes through
    /// the driver live (CameraRecordingTests.liveThroughVAAPI); here, where every coding is
    /// tried, its I_PCM pictures (1.4 MB each, decoded twice) made this the costliest test of
    /// its lane.
    final class Media: Sendable {
        let directory: TemporaryDirectory
        let clip: String
        let clipMD5s: [String]
        let patternMD5s: [String]

        init() throws {
            directory = try TemporaryDirectory()
            clip = directory.path("clip.y4m")
            let made = try Tools.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x480:rate=30",
                                                "-frames:v", "90", "-pix_fmt", "yuv420p", clip])
            try #require(made.status == 0, "\(made.stderr)")
            clipMD5s = try Tools.frameMD5s(clip)
            let lossless = directory.path("pattern-qp0.h264")
            let x264 = try Tools.vtrecord(["--test-pattern", "--size", "640x480", "--frames", "90", "--encoder", "x264",
                                           "--qp", "0", "--speed", "ultrafast", "--quiet", "-o", lossless])
            try #require(x264.status == 0, "\(x264.stderr)")
            patternMD5s = try Tools.frameMD5s(lossless)
            try #require(clipMD5s.count == 90 && patternMD5s.count == 90)
        }

        static let shared = Result { try Media() }
    }

    struct Coding: CustomTestStringConvertible, Sendable {
        var profile: String
        var entropy: String
        var keyint: Int
        var testDescription: String { "\(profile) \(entropy) keyint \(keyint)" }

        var arguments: [String] { ["--profile", profile, "--entropy", entropy, "--keyint", "\(keyint)"] }
    }

    static let codings: [Coding] = [("baseline", "cavlc"), ("main", "cavlc"), ("main", "cabac"),
                                    ("high", "cavlc"), ("high", "cabac")]
        .flatMap { pair in [5, 30].map { Coding(profile: pair.0, entropy: pair.1, keyint: $0) } }

    /// The file decodes without errors to exactly `expected`, with an IDR every `keyint`.
    static func expectExact(_ file: String, _ expected: [String], keyint: Int, summary: [String: Any]) throws {
        let md5s = try Tools.frameMD5s(file)
        #expect(md5s.count == expected.count)
        let mismatched = zip(md5s, expected).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        #expect(mismatched.isEmpty, "frames differing from the input: \(mismatched.prefix(10))")
        #expect(summary["encoder"] as? String == "vaapi")
        #expect(summary["keyframes"] as? Int == (expected.count + keyint - 1) / keyint)
    }

    @Test(arguments: codings)
    func aY4MClipDecodesBitExact(_ coding: Coding) throws {
        let media = try Media.shared.get()
        let va = try FakeVADevice()
        let (r, json) = try Self.record(va, ["--input", media.clip, "--quiet"] + coding.arguments)
        #expect(r.status == 0, "\(r.stderr)")
        try Self.expectExact(va.file("out.h264"), media.clipMD5s, keyint: coding.keyint, summary: json)
        let report = try va.report()
        #expect(report.violations.isEmpty)
        #expect(report.config?.profile == (coding.profile == "baseline" ? "constrained_baseline" : coding.profile))
        #expect(report.frames == 90)
        // B-frames by default wherever the profile allows them.
        #expect((report.bSlices > 0) == (coding.profile != "baseline"))
    }

    @Test(arguments: codings)
    func theTestPatternDecodesBitExactWithItsCountersInOrder(_ coding: Coding) throws {
        let media = try Media.shared.get()
        let va = try FakeVADevice()
        let out = va.file("out.h264")
        let (r, json) = try Self.record(va, ["--test-pattern", "--size", "640x480", "--frames", "90", "--quiet"]
                                            + coding.arguments, output: out)
        #expect(r.status == 0, "\(r.stderr)")
        try Self.expectExact(out, media.patternMD5s, keyint: coding.keyint, summary: json)
        #expect(try Tools.counters(out, width: 640) == (0..<90).map { $0 })
        #expect(try va.report().violations.isEmpty)
    }

    struct Quirk: CustomTestStringConvertible, Sendable {
        var name: String
        var knobs: [FakeVADevice.Knob]
        var testDescription: String { name }
    }

    /// What real drivers do differently; each must still give an exact file.
    static let quirks = [
        Quirk(name: "low-power entrypoint only", knobs: [.entrypoints([.lowPower])]),
        Quirk(name: "no vaDeriveImage", knobs: [.noDerive]),
        Quirk(name: "no packed headers", knobs: [.packedHeaders([])]),
        Quirk(name: "packed sequence header only", knobs: [.packedHeaders([.sequence])]),
        Quirk(name: "no L1 references", knobs: [.maxReferences(l0: 1, l1: 0)]),
        Quirk(name: "coded buffers in 3 segments", knobs: [.segments(3)]),
    ]

    @Test(arguments: quirks)
    func driverQuirksStillGiveExactFiles(_ quirk: Quirk) throws {
        let media = try Media.shared.get()
        let va = try FakeVADevice(knobs: quirk.knobs)
        let (r, json) = try Self.record(va, ["--input", media.clip, "--keyint", "30", "--bframes", "2"])
        #expect(r.status == 0, "\(r.stderr)")
        try Self.expectExact(va.file("out.h264"), media.clipMD5s, keyint: 30, summary: json)
        let report = try va.report()
        #expect(report.violations.isEmpty)
        switch quirk.knobs.first {
        case .entrypoints?: #expect(report.config?.entrypoint == "lp")
        case .noDerive?: #expect(report.images.derived == 0 && report.images.put == 90)
        case .packedHeaders(let headers)?: #expect(report.packedHeaders.slice == 0 && (report.packedHeaders.sequence > 0) == !headers.isEmpty)
        case .maxReferences?:
            #expect(report.bSlices == 0)
            #expect(r.stderr.contains("no backward references"), "\(r.stderr)")
        default: break
        }
        #expect(report.liveObjects?.none == true, "objects left at vaTerminate: \(String(describing: report.liveObjects))")
    }

    @Test func cqpSendsTheQuantisersAsked() throws {
        let media = try Media.shared.get()
        for (arguments, qp) in [([String](), (i: 22, p: 25, b: 27)), (["--qp", "30"], (i: 27, p: 30, b: 32))] {
            let va = try FakeVADevice()
            let (r, json) = try Self.record(va, ["--input", media.clip, "--frames", "12", "--quiet"] + arguments)
            #expect(r.status == 0, "\(r.stderr)")
            let report = try va.report()
            #expect(report.config?.rateControl == "cqp")
            #expect(report.lastQp == .init(i: qp.i, p: qp.p, b: qp.b))
            #expect(report.rateControl == nil)
            #expect((json["settings"] as? [String: Any])?["qp"] as? Int == qp.p)
        }
    }

    @Test func cbrAndVBRReachTheDriverWithTheValuesAsked() throws {
        let media = try Media.shared.get()
        let cbr = try FakeVADevice()
        var (r, _) = try Self.record(cbr, ["--input", media.clip, "--frames", "40", "--keyint", "15", "--quiet",
                                           "--rate-control", "cbr", "--bitrate", "2M"])
        #expect(r.status == 0, "\(r.stderr)")
        var report = try cbr.report()
        #expect(report.config?.rateControl == "cbr")
        #expect(report.rateControl?.bitsPerSecond == 2_000_000)
        #expect(report.rateControl?.targetPercentage == 100)
        #expect(report.hrd?.bufferSize == 2_000_000)             // one second of the peak
        #expect(report.sequence?.bitsPerSecond == 2_000_000)
        #expect(report.rateControl?.count == 3)                   // with every IDR: 0, 15, 30
        #expect(report.frameRate?.numerator == 30 && report.frameRate?.denominator == 1)

        let vbr = try FakeVADevice()
        (r, _) = try Self.record(vbr, ["--input", media.clip, "--frames", "10", "--quiet", "--rate-control", "vbr",
                                       "--bitrate", "1M", "--max-bitrate", "2M", "--bufsize", "500k"])
        #expect(r.status == 0, "\(r.stderr)")
        report = try vbr.report()
        #expect(report.config?.rateControl == "vbr")
        #expect(report.rateControl?.bitsPerSecond == 2_000_000)
        #expect(report.rateControl?.targetPercentage == 50)
        #expect(report.hrd?.bufferSize == 4_000_000)
        #expect(report.hrd?.initialBufferFullness == 3_000_000)
    }

    /// The same settings through ffmpeg's h264_vaapi reach the driver with the same values.
    @Test(arguments: [
        (["--rate-control", "cbr", "--bitrate", "2M"], ["-b:v", "2M", "-maxrate", "2M", "-bufsize", "2M"]),
        (["--rate-control", "vbr", "--bitrate", "1M", "--max-bitrate", "2M", "--bufsize", "500k"],
         ["-b:v", "1M", "-maxrate", "2M", "-bufsize", "4M"]),
        (["--bitrate", "1M"], ["-b:v", "1M"]),
    ])
    func rateControlEqualsWhatFFmpegSends(_ ours: [String], _ theirs: [String]) throws {
        let media = try Media.shared.get()
        let va = try FakeVADevice()
        let (r, _) = try Self.record(va, ["--input", media.clip, "--frames", "10", "--quiet", "--keyint", "30",
                                          "--bframes", "0"] + ours)
        #expect(r.status == 0, "\(r.stderr)")
        let mine = try va.report()

        let reference = try FakeVADevice()
        let ffmpeg = try Tools.run("ffmpeg", ["-v", "error", "-init_hw_device", "vaapi=va:\(reference.devicePath)",
                                              "-filter_hw_device", "va", "-i", media.clip, "-frames:v", "10",
                                              "-vf", "format=nv12,hwupload", "-c:v", "h264_vaapi", "-g", "30", "-bf", "0"]
                                   + theirs + ["-y", reference.file("ffmpeg.h264")],
                                   environment: try reference.environment())
        #expect(ffmpeg.status == 0, "\(ffmpeg.stderr)")
        let theirsReport = try reference.report()
        #expect(mine.config?.rateControl == theirsReport.config?.rateControl)
        #expect(mine.rateControl?.bitsPerSecond == theirsReport.rateControl?.bitsPerSecond)
        #expect(mine.rateControl?.targetPercentage == theirsReport.rateControl?.targetPercentage)
        #expect(mine.rateControl?.windowSize == theirsReport.rateControl?.windowSize)
        #expect(mine.rateControl?.initialQp == theirsReport.rateControl?.initialQp)
        #expect(mine.rateControl?.minQp == theirsReport.rateControl?.minQp)
        #expect(mine.rateControl?.maxQp == theirsReport.rateControl?.maxQp)
        #expect(mine.hrd?.bufferSize == theirsReport.hrd?.bufferSize)
        #expect(mine.hrd?.initialBufferFullness == theirsReport.hrd?.initialBufferFullness)
        #expect(mine.frameRate?.framerate == theirsReport.frameRate?.framerate)
        #expect(mine.sequence?.bitsPerSecond == theirsReport.sequence?.bitsPerSecond)
        #expect(mine.sequence?.intraPeriod == theirsReport.sequence?.intraPeriod)
        #expect(mine.sequence?.ipPeriod == theirsReport.sequence?.ipPeriod)
        #expect(mine.violations.isEmpty && theirsReport.violations.isEmpty)
    }

    @Test func crfWithoutICQExitsFourNamingTheModesOffered() throws {
        let va = try FakeVADevice(knobs: [.rateControlModes([.cqp, .vbr])])
        let out = va.file("refused.h264")
        let (r, _) = try Self.record(va, ["--test-pattern", "--frames", "5", "--rate-control", "crf"], output: out)
        #expect(r.status == 4)
        #expect(r.stderr.contains("--rate-control crf is not offered"), "\(r.stderr)")
        #expect(r.stderr.contains("it offers cqp, vbr"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func crfUsesICQWhereTheDriverHasIt() throws {
        let va = try FakeVADevice(knobs: [.rateControlModes([.cqp, .icq])])
        let (r, json) = try Self.record(va, ["--test-pattern", "--size", "320x240", "--frames", "5", "--crf", "20"])
        #expect(r.status == 0, "\(r.stderr)")
        let report = try va.report()
        #expect(report.config?.rateControl == "icq")
        #expect(report.rateControl?.icqQualityFactor == 20)
        #expect((json["settings"] as? [String: Any])?["rate_control"] as? String == "crf")
    }

    @Test func autoFallsBackToX264WithANotice() throws {
        let dir = try TemporaryDirectory()
        let out = dir.path("auto.h264")
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "5", "--encoder", "auto",
                                    "--va-device", dir.path("renderD128"), "-o", out, "--json-summary", dir.path("s.json")])
        #expect(r.status == 0, "\(r.stderr)")
        let notices = r.stderr.split(separator: "\n").filter { $0.contains("encoding with") }
        #expect(notices.count == 1)
        #expect(notices.first?.contains("encoding with x264: cannot open \(dir.path("renderD128"))") == true, "\(r.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("s.json")))) as? [String: Any]
        #expect(summary?["encoder"] as? String == "x264")
    }

    @Test(arguments: [["--va-device", "/nonexistent/renderD128"], ["--va-device", "/dev/null"]])
    func vaapiWithoutAUsableDeviceExitsFourWithTheReason(_ device: [String]) throws {
        let dir = try TemporaryDirectory()
        let out = dir.path("never.h264")
        let r = try Tools.vtrecord(["--test-pattern", "--frames", "5", "--encoder", "vaapi", "-o", out] + device)
        #expect(r.status == 4)
        #expect(r.stderr.contains("--encoder vaapi cannot be used: "), "\(r.stderr)")
        #expect(r.stderr.contains(device[1]), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func autoPicksAUsableDeviceAndSaysSo() throws {
        let va = try FakeVADevice(knobs: [.vendor("Example iHD driver")])
        let (r, json) = try Self.record(va, ["--test-pattern", "--size", "320x240", "--frames", "5", "--encoder", "auto"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("encoding with VA-API on /dev/null (Example iHD driver)"), "\(r.stderr)")
        #expect(json["encoder"] as? String == "vaapi")
    }

    @Test func anOverflowingCodedBufferIsAnEncoderError() throws {
        let va = try FakeVADevice(knobs: [.codedBufferLimit(bytes: 2000)])
        let (r, _) = try Self.record(va, ["--test-pattern", "--size", "320x240", "--frames", "5"])
        #expect(r.status == 4)
        #expect(r.stderr.contains("did not fit"), "\(r.stderr)")
    }

    @Test func encodersListsWhatTheDeviceOffers() throws {
        let va = try FakeVADevice(knobs: [.entrypoints([.lowPower]), .profiles([.main, .high]),
                                          .rateControlModes([.cqp, .cbr]), .packedHeaders([.sequence]),
                                          .maxReferences(l0: 2, l1: 0), .vendor("Example driver")])
        let r = try Tools.run(Tools.vtrecord, ["encoders", "--va-device", va.devicePath, "--json"],
                              environment: try va.environment())
        #expect(r.status == 0, "\(r.stderr)")
        let list = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]])
        #expect(list.first?["name"] as? String == "x264")
        let device = try #require(list.first { $0["name"] as? String == "vaapi" })
        #expect(device["vendor"] as? String == "Example driver")
        let profiles = try #require(device["profiles"] as? [[String: Any]])
        #expect(profiles.compactMap { $0["profile"] as? String } == ["main", "high"])
        let entry = try #require((profiles[0]["entrypoints"] as? [[String: Any]])?.first)
        #expect(entry["entrypoint"] as? String == "EncSliceLP")
        #expect(entry["rate_control"] as? [String] == ["cqp", "cbr"])
        #expect(entry["packed_headers"] as? [String] == ["sequence"])
        #expect(entry["max_refs_l0"] as? Int == 2 && entry["max_refs_l1"] as? Int == 0)

        let text = try Tools.run(Tools.vtrecord, ["encoders", "--va-device", va.devicePath], environment: try va.environment())
        #expect(text.stdoutText.contains("vaapi /dev/null: Example driver"), "\(text.stdoutText)")
        #expect(text.stdoutText.contains("high EncSliceLP: rate control cqp, cbr"), "\(text.stdoutText)")
    }

    /// Sizes that are not whole macroblocks: input surfaces of the picture's size, cropping in
    /// the SPS, through both upload paths.
    @Test(arguments: [[], [FakeVADevice.Knob.noDerive]])
    func aSizeThatIsNotWholeMacroblocksDecodesBitExact(_ knobs: [FakeVADevice.Knob]) throws {
        let va = try FakeVADevice(knobs: knobs)
        let pattern = ["--test-pattern", "--size", "1366x768", "--frames", "20", "--quiet"]
        let lossless = va.file("qp0.h264")
        let x264 = try Tools.vtrecord(pattern + ["--encoder", "x264", "--qp", "0", "--speed", "ultrafast", "-o", lossless])
        #expect(x264.status == 0, "\(x264.stderr)")
        let (r, json) = try Self.record(va, pattern + ["--keyint", "8"])
        #expect(r.status == 0, "\(r.stderr)")
        try Self.expectExact(va.file("out.h264"), try Tools.frameMD5s(lossless), keyint: 8, summary: json)
        #expect(try va.report().violations.isEmpty)
    }

    /// A GOP longer than MaxFrameNum (16) and than MaxPicOrderCntLsb allows before wrapping.
    @Test(arguments: [0, 1, 3])
    func frameNumAndPictureOrderCountWrapInALongGOP(_ bFrames: Int) throws {
        let media = try Media.shared.get()
        let va = try FakeVADevice()
        let (r, json) = try Self.record(va, ["--input", media.clip, "--keyint", "90", "--bframes", "\(bFrames)", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        try Self.expectExact(va.file("out.h264"), media.clipMD5s, keyint: 90, summary: json)
        let report = try va.report()
        #expect(report.violations.isEmpty)
        #expect((report.bSlices > 0) == (bFrames > 0))
    }

    /// A driver call failing mid-stream ends the run with exit 4 and one line; what was written
    /// stays decodable.
    @Test(arguments: [("vaPutImage", [FakeVADevice.Knob.noDerive]), ("vaEndPicture", [])])
    func aFailingDriverCallIsAnEncoderErrorInOneLine(_ call: String, _ knobs: [FakeVADevice.Knob]) throws {
        let va = try FakeVADevice(knobs: knobs + [.failing([call])])
        let (r, _) = try Self.record(va, ["--test-pattern", "--size", "320x240", "--frames", "10", "--quiet"])
        #expect(r.status == 4)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(r.stderr)")
        #expect(lines.first?.hasPrefix("vtrecord: error: vaapi failed to encode frame 0: \(call) failed") == true, "\(r.stderr)")
        #expect(try va.report().liveObjects?.none == true)
    }

    @Test func autoFallsBackToX264WhenTheHardwareSessionCannotOpen() throws {
        let va = try FakeVADevice(knobs: [.failing(["vaCreateContext"])])
        let (r, json) = try Self.record(va, ["--test-pattern", "--size", "320x240", "--frames", "5", "--encoder", "auto"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("encoding with VA-API on /dev/null"), "\(r.stderr)")
        #expect(r.stderr.contains("encoding with x264: vaapi could not open the encoder: vaCreateContext failed"), "\(r.stderr)")
        #expect(json["encoder"] as? String == "x264")
        #expect(try Tools.frameMD5s(va.file("out.h264")).count == 5)

        let strict = try FakeVADevice(knobs: [.failing(["vaCreateContext"])])
        let out = strict.file("never.h264")
        let (refused, _) = try Self.record(strict, ["--test-pattern", "--size", "320x240", "--frames", "5"], output: out)
        #expect(refused.status == 4)
        #expect(refused.stderr.contains("vaCreateContext failed"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try strict.report().liveObjects?.none == true)
    }

    @Test func aPictureLargerThanTheDeviceTakesX264WithAuto() throws {
        let va = try FakeVADevice()
        let (r, json) = try Self.record(va, ["--test-pattern", "--size", "4160x2176", "--frames", "2", "--encoder", "auto",
                                             "--speed", "ultrafast"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("encoding with x264: 4160x2176 is larger than /dev/null encodes (at most 4096x4096)"),
                "\(r.stderr)")
        #expect(json["encoder"] as? String == "x264")
    }

    @Test func aDeviceWithOnlyConstrainedBaselineCodesIPPPWithANotice() throws {
        let media = try Media.shared.get()
        let va = try FakeVADevice(knobs: [.profiles([.constrainedBaseline])])
        let (r, json) = try Self.record(va, ["--input", media.clip, "--frames", "30", "--bframes", "2", "--entropy", "cabac",
                                             "--keyint", "30"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("encodes only Constrained Baseline"), "\(r.stderr)")
        try Self.expectExact(va.file("out.h264"), Array(media.clipMD5s.prefix(30)), keyint: 30, summary: json)
        #expect(try va.report().bSlices == 0)
    }
}

import Foundation
import Testing
import VTTestSupport

/// The fake VA-API driver (Tests/FakeVA) proved against clients written by other people: libva's
/// vainfo, and ffmpeg 5.1's h264_vaapi encoder, whose output must decode to the very pictures it
/// was given (the driver codes I_PCM, which is lossless). If ffmpeg encodes through it with no
/// violation, in every configuration a real driver offers, code tested against it is tested
/// against something shaped like iHD or radeonsi.
@Suite("Fake VA-API driver against vainfo and ffmpeg")
struct FakeVADriverProofTests {
    @Test func vainfoListsTheOfferedProfilesAndEntrypoints() throws {
        let device = try FakeVADevice(knobs: [.vendor("Test Encoder 2.0"), .entrypoints([.lowPower])])
        let result = try ChildProcess.run(["vainfo", "--display", "drm", "--device", device.devicePath],
                                          environment: device.environment())
        try #require(result.status == 0, "\(result.transcript)")
        let text = result.standardOutputText
        #expect(text.contains("Driver version: Test Encoder 2.0"))
        let lines = text.split(separator: "\n").filter { $0.contains("VAEntrypoint") }
            .map { $0.replacingOccurrences(of: " ", with: "").replacingOccurrences(of: "\t", with: "") }
        #expect(lines == ["VAProfileH264ConstrainedBaseline:VAEntrypointEncSliceLP",
                          "VAProfileH264Main:VAEntrypointEncSliceLP", "VAProfileH264High:VAEntrypointEncSliceLP"])
    }

    /// An ffmpeg configuration and what the driver must have seen of it.
    struct Encoding: Sendable, CustomTestStringConvertible {
        var name: String
        var knobs: [FakeVADevice.Knob] = []
        var arguments: [String] = []
        var size = "\(FakeVA.width)x\(FakeVA.height)"
        var expect: @Sendable (FakeVADevice.Report) -> Void = { _ in }
        var testDescription: String { name }
    }

    static let encodings: [Encoding] = [
        Encoding(name: "defaults: High, CABAC, B-frames") { report in
            #expect(report.config?.profile == "high")
            #expect(report.config?.entrypoint == "slice")
            #expect(report.bSlices > 0 && report.pSlices > 0 && report.idrPictures == 1)
            #expect(report.packedHeaders == .init(sequence: 1, picture: 0, slice: 30, rawData: 1))
            #expect(report.images.derived > 0 && report.images.put == 0)
        },
        Encoding(name: "no B-frames", arguments: ["-bf", "0"]) { report in
            #expect(report.bSlices == 0 && report.pSlices == 29)
        },
        Encoding(name: "CAVLC with B-frames", arguments: ["-coder", "cavlc"]) { report in
            #expect(report.bSlices > 0)
        },
        Encoding(name: "Constrained Baseline", arguments: ["-profile:v", "constrained_baseline", "-bf", "0"]) { report in
            #expect(report.config?.profile == "constrained_baseline")
        },
        Encoding(name: "low-power entrypoint only", knobs: [.entrypoints([.lowPower])]) { report in
            #expect(report.config?.entrypoint == "lp")
        },
        Encoding(name: "no vaDeriveImage", knobs: [.noDerive]) { report in
            #expect(report.images.derived == 0)
            #expect(report.images.created == report.images.put && report.images.put == FakeVA.frames)
        },
        Encoding(name: "no packed headers", knobs: [.packedHeaders([])]) { report in
            #expect(report.packedHeaders == .init(sequence: 0, picture: 0, slice: 0, rawData: 0))
            #expect(report.config?.packedHeaders == 0)
        },
        Encoding(name: "packed sequence headers only", knobs: [.packedHeaders([.sequence])]) { report in
            #expect(report.packedHeaders == .init(sequence: 1, picture: 0, slice: 0, rawData: 0))
        },
        Encoding(name: "no L1 references", knobs: [.maxReferences(l0: 1, l1: 0)]) { report in
            #expect(report.bSlices == 0)
        },
        Encoding(name: "coded buffers in three segments", knobs: [.segments(3)]),
        Encoding(name: "a size that is not whole macroblocks", size: "200x150"),
        Encoding(name: "a cropped size with SPS and PPS from the driver", knobs: [.packedHeaders([])], size: "200x150"),
    ]

    @Test(arguments: encodings)
    func ffmpegEncodesAndItsOutputDecodesToItsInput(encoding: Encoding) throws {
        let device = try FakeVADevice(knobs: encoding.knobs)
        let output = device.file("out.h264")
        let result = try FakeVA.ffmpegEncode(device, encoding.arguments, output: output, size: encoding.size)
        try #require(result.status == 0, "\(result.transcript)")
        #expect(FakeVA.violations(result.standardError).isEmpty, "\(result.standardError)")
        let decoded = try FakeVA.decode(output)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        #expect(decoded.pictures == (try FakeVA.sourcePictures(size: encoding.size)))
        let report = try device.report()
        #expect(report.violations.isEmpty)
        #expect(report.frames == FakeVA.frames)
        #expect(report.terminated && report.liveObjects?.none == true, "\(String(describing: report.liveObjects))")
        encoding.expect(report)
    }

    // What ffmpeg 5.1 sends for each rate-control mode, for comparison with vtrecord's encoder:
    //
    //   CBR (-b:v 2M -maxrate 2M -bufsize 2M): RateControl bits_per_second 2000000,
    //     target_percentage 100, window_size 1000, initial_qp 0, min_qp 0, max_qp 0,
    //     ICQ_quality_factor 1, rc_flags 0; HRD buffer_size 2000000, initial_buffer_fullness
    //     1500000; FrameRate 0x1001e (30/1); each once, with the IDR picture. Sequence
    //     bits_per_second 2000000, intra_period 120, intra_idr_period 120, ip_period 3,
    //     max_num_ref_frames 2, time_scale 60, num_units_in_tick 1, level_idc 20. A raw (SEI)
    //     packed header with every picture.
    //   VBR (-b:v 1M -maxrate 2M -bufsize 4M): bits_per_second 2000000 (the maximum),
    //     target_percentage 50, window_size 2000; HRD buffer_size 4000000,
    //     initial_buffer_fullness 3000000; sequence bits_per_second 2000000, level_idc 13.
    //   CQP (-qp 20): no RateControl or HRD buffer at all, FrameRate only; sequence
    //     bits_per_second 0; slice QP 20 for I and P, 24 for B (its default b_qfactor).
    //   ICQ (-rc_mode ICQ -global_quality 25, with the icq knob): ICQ_quality_factor 25,
    //     quality_factor 25, bits_per_second 0, target_percentage 100, window_size 1000; no HRD.
    //   No misc QualityLevel buffer unless -compression_level is given (then quality_level N).
    //   ffmpeg queries RTFormat, RateControl, EncMaxRefFrames, PredictionDirection,
    //   EncPackedHeaders and EncROI one at a time, and creates the config with RTFormat,
    //   RateControl and EncPackedHeaders (SEQUENCE|SLICE|MISC = 0xd, none when the driver has none).

    @Test func ffmpegConstantBitrateParameters() throws {
        let device = try FakeVADevice()
        let result = try FakeVA.ffmpegEncode(device, ["-b:v", "2M", "-maxrate", "2M", "-bufsize", "2M"],
                                             output: device.file("cbr.h264"), frames: 10)
        try #require(result.status == 0, "\(result.transcript)")
        let report = try device.report()
        #expect(report.violations.isEmpty)
        #expect(report.config?.rateControl == "cbr")
        let rc = try #require(report.rateControl)
        #expect(rc.count == 1 && rc.bitsPerSecond == 2_000_000 && rc.targetPercentage == 100 && rc.windowSize == 1000)
        #expect(rc.initialQp == 0 && rc.minQp == 0 && rc.maxQp == 0 && rc.rcFlags.value == 0)
        #expect(report.hrd == .init(count: 1, bufferSize: 2_000_000, initialBufferFullness: 1_500_000))
        #expect(report.frameRate == .init(count: 1, framerate: 0x1001e, numerator: 30, denominator: 1))
        let sequence = try #require(report.sequence)
        #expect(sequence.bitsPerSecond == 2_000_000 && sequence.ipPeriod == 3 && sequence.intraIdrPeriod == 120)
        #expect(sequence.maxNumRefFrames == 2 && sequence.timeScale == 60 && sequence.numUnitsInTick == 1)
        #expect(report.packedHeaders.rawData == 10, "buffering period and picture timing SEI with every picture")
    }

    @Test func ffmpegVariableBitrateParameters() throws {
        let device = try FakeVADevice()
        let result = try FakeVA.ffmpegEncode(device, ["-b:v", "1M", "-maxrate", "2M", "-bufsize", "4M"],
                                             output: device.file("vbr.h264"), frames: 10)
        try #require(result.status == 0, "\(result.transcript)")
        let report = try device.report()
        #expect(report.violations.isEmpty)
        #expect(report.config?.rateControl == "vbr")
        let rc = try #require(report.rateControl)
        #expect(rc.bitsPerSecond == 2_000_000 && rc.targetPercentage == 50 && rc.windowSize == 2000)
        #expect(report.hrd == .init(count: 1, bufferSize: 4_000_000, initialBufferFullness: 3_000_000))
        #expect(report.sequence?.bitsPerSecond == 2_000_000)
    }

    @Test func ffmpegConstantQPParameters() throws {
        let device = try FakeVADevice()
        let result = try FakeVA.ffmpegEncode(device, ["-qp", "20"], output: device.file("cqp.h264"), frames: 10)
        try #require(result.status == 0, "\(result.transcript)")
        let report = try device.report()
        #expect(report.violations.isEmpty)
        #expect(report.config?.rateControl == "cqp")
        #expect(report.rateControl == nil && report.hrd == nil && report.qualityLevel == nil)
        #expect(report.frameRate?.numerator == 30)
        #expect(report.sequence?.bitsPerSecond == 0)
        #expect(report.lastQp == .init(i: 20, p: 20, b: 24))
    }

    @Test func ffmpegConstantQualityAndQualityLevelParameters() throws {
        let device = try FakeVADevice(knobs: [.rateControlModes([.cqp, .cbr, .vbr, .icq])])
        let result = try FakeVA.ffmpegEncode(device, ["-rc_mode", "ICQ", "-global_quality", "25", "-compression_level", "4"],
                                             output: device.file("icq.h264"), frames: 5)
        try #require(result.status == 0, "\(result.transcript)")
        let report = try device.report()
        #expect(report.violations.isEmpty)
        #expect(report.config?.rateControl == "icq")
        let rc = try #require(report.rateControl)
        #expect(rc.icqQualityFactor == 25 && rc.qualityFactor == 25 && rc.bitsPerSecond == 0)
        #expect(report.hrd == nil)
        #expect(report.qualityLevel?.qualityLevel == 4)
        #expect(report.picturesByQualityLevel == [4: 5])
    }

    /// Constrained Baseline has no B slices, but ffmpeg 5.1 keeps its default of B-frames when
    /// asked for that profile: the driver refuses the first B picture, as a strict one should.
    @Test func ffmpegBFramesInConstrainedBaselineAreRefused() throws {
        let device = try FakeVADevice()
        let result = try FakeVA.ffmpegEncode(device, ["-profile:v", "constrained_baseline"],
                                             output: device.file("cb.h264"), frames: 5)
        #expect(result.status != 0)
        #expect(FakeVA.violations(result.standardError)
            == ["fake-va: violation: picture 2 (B, frame_num 2, POC 1): slice 0 slice_type in Constrained Baseline, "
                + "expected I or P, got B"])
        #expect(result.standardError.contains("Failed to end picture encode issue: 18 (invalid parameter)"))
        #expect(try device.report().violationCount == 1)
    }

    /// A coded buffer too small for the picture: ffmpeg 5.1 does not look at the segment status,
    /// so the overflow shows only in the report (and in the stream, cut short).
    @Test func aCodedPictureThatDoesNotFitIsCutOff() throws {
        let device = try FakeVADevice(knobs: [.codedBufferLimit(bytes: 20_000)])
        let result = try FakeVA.ffmpegEncode(device, ["-bf", "0"], output: device.file("cut.h264"), frames: 3)
        try #require(result.status == 0, "\(result.transcript)")
        #expect(try device.report().codedBufferOverflows == 3)
        #expect(try Data(contentsOf: URL(fileURLWithPath: device.file("cut.h264"))).count == 60_000)
    }

    /// A slow encoder: ffmpeg calls vaSyncSurface before it uploads each picture (h264_vaapi
    /// itself waits in vaSyncBuffer, which FAKE_VA_SYNC_MS leaves alone), so 20 pictures at
    /// 40 ms each take at least 0.8 s, and the stream still decodes to its input.
    @Test func aSlowEncoderMakesItsClientWaitForEveryPicture() throws {
        let slow = try FakeVADevice(knobs: [.syncMilliseconds(40)])
        _ = try slow.environment()      // builds the driver on first use, which must not be timed
        let started = ContinuousClock.now
        let result = try FakeVA.ffmpegEncode(slow, ["-bf", "0"], output: slow.file("slow.h264"), frames: 20)
        let took = started.duration(to: .now)
        try #require(result.status == 0, "\(result.transcript)")
        #expect(took >= .milliseconds(800), "\(took)")
        #expect(try slow.report().frames == 20)
        let decoded = try FakeVA.decode(slow.file("slow.h264"))
        #expect(decoded.pictures.count == 20 && decoded.errors.isEmpty, "\(decoded.errors)")
    }

    /// The two preload libraries compose: a child sees the fake camera and the fake VA driver.
    @Test func environmentComposesWithTheFakeCamera() throws {
        let device = try FakeVADevice()
        let camera = try FakeCamera()
        let both = try device.environment(base: camera.environment())
        let preloads = try #require(both["LD_PRELOAD"]).split(separator: ":").map(String.init)
        #expect(preloads == [try FakeVADevice.drmShim(), try FakeV4L2Library.path()])
        let again = try camera.environment(base: both)
        #expect(again["LD_PRELOAD"] == [try FakeV4L2Library.path(), try FakeVADevice.drmShim()].joined(separator: ":"))
        #expect(again["LIBVA_DRIVER_NAME"] == "fake" && again["FAKE_V4L2_DEVICE"] == camera.path)
    }
}

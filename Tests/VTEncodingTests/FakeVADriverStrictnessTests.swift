import Foundation
import Testing
import VTTestSupport

/// The fake VA-API driver proved with a small client of our own (Tests/FakeVA/clients/
/// encode_h264.c): encoding correctly, it gets back exactly what it uploaded in both entropy
/// modes, with and without B-frames, in several slices, and in every driver configuration; and
/// each single wrong value it can be told to feed is refused with a violation naming it.
@Suite("Fake VA-API driver against a client of our own, right and wrong")
struct FakeVADriverStrictnessTests {
    struct Run: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var knobs: [FakeVADevice.Knob] = []
        var testDescription: String { (arguments + knobs.map { "\($0)" }).joined(separator: " ") }
    }

    static let correctRuns: [Run] = [
        Run(arguments: ["--gop", "ippp", "--entropy", "cavlc"]),
        Run(arguments: ["--gop", "ippp", "--entropy", "cabac"]),
        Run(arguments: ["--gop", "ibp", "--entropy", "cavlc"]),
        Run(arguments: ["--gop", "ibp", "--entropy", "cabac"]),
        Run(arguments: ["--gop", "ibp", "--slices", "3"]),
        Run(arguments: ["--gop", "ippp", "--slices", "4", "--entropy", "cavlc", "--rc", "cbr"]),
        Run(arguments: ["--gop", "ibp"], knobs: [.noDerive]),
        Run(arguments: ["--gop", "ibp"], knobs: [.packedHeaders([])]),
        Run(arguments: ["--gop", "ibp", "--entropy", "cavlc"], knobs: [.packedHeaders([.sequence])]),
        Run(arguments: ["--gop", "ibp"], knobs: [.segments(4), .entrypoints([.lowPower])]),
        Run(arguments: ["--poc-type", "2", "--entropy", "cavlc"]),
        Run(arguments: ["--poc-type", "2"], knobs: [.packedHeaders([])]),
    ]

    @Test(arguments: correctRuns)
    func aCorrectClientGetsItsPicturesBack(run: Run) throws {
        let device = try FakeVADevice(knobs: run.knobs)
        let (result, stream, pictures) = try FakeVA.client(device, run.arguments)
        try #require(result.status == 0, "\(result.transcript)")
        #expect(result.standardError.isEmpty, "the driver prints nothing but violations")
        let decoded = try FakeVA.decode(stream)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        let expected = try FakeVA.rawPictures(pictures)
        #expect(expected.count == 8)
        #expect(decoded.pictures == expected)
        let report = try device.report()
        #expect(report.frames == 8 && report.idrPictures == 2 && report.violations.isEmpty)
        #expect(report.liveObjects?.none == true)
    }

    /// One wrong value each, and the line the driver prints for it.
    static let faults: [(fault: String, violation: String)] = [
        ("frame_num", "picture 2 (P, frame_num 3, POC 4): frame_num, expected 2 (previous reference picture's 1 + 1, "
            + "mod MaxFrameNum 16), got 3"),
        ("poc", "picture 2 (P, frame_num 2, POC 2): TopFieldOrderCnt, expected a POC not used since the last IDR "
            + "picture, got 2 again"),
        ("poc_lsb", "picture 2 (P, frame_num 2, POC 4): slice 0 pic_order_cnt_lsb, expected 4 (TopFieldOrderCnt 4 mod "
            + "MaxPicOrderCntLsb 256), got 6"),
        ("idr_pic_id", "picture 4 (IDR I, frame_num 0, POC 0): idr_pic_id, expected one different from the previous "
            + "IDR picture's 0, got 0"),
        ("ref_list", "picture 2 (P, frame_num 2, POC 4): slice 0 RefPicList0[0], expected surface 0x4000002 "
            + "(frame_num 1, POC 2), got surface 0x4000001 (frame_idx 0, POC 0)"),
        ("ref_frames", "picture 2 (P, frame_num 2, POC 4): ReferenceFrames, expected surface 0x4000002 (frame_num 1, "
            + "POC 2), which a decoder still holds (sliding window of max_num_ref_frames 2), got it missing (1 entries)"),
        ("slice_header", "picture 0 (IDR I, frame_num 0, POC 0): slice 0 header (packed) vs slice parameters: "
            + "slice_qp_delta, expected 0, got 1"),
        ("sps", "picture 0 (IDR I, frame_num 0, POC 0): SPS (packed) vs sequence parameters: max_num_ref_frames, "
            + "expected 2, got 3"),
        ("pps", "picture 0 (IDR I, frame_num 0, POC 0): PPS (packed) vs picture parameters: pic_init_qp_minus26, "
            + "expected 0, got 1"),
        ("rate_control", "picture 0 (IDR I, frame_num 0, POC 0): CBR target_percentage, expected 100, got 90"),
        ("hrd", "picture 0 (IDR I, frame_num 0, POC 0): cbr HRD buffer_size, expected an HRD misc parameter buffer "
            + "with buffer_size > 0, got none"),
        ("slice_qp", "picture 2 (P, frame_num 2, POC 4): slice 0 QP (pic_init_qp 26 + slice_qp_delta 30), expected "
            + "0…51, got 56"),
        ("recon_reuse", "picture 2 (P, frame_num 2, POC 4): CurrPic.picture_id 0x4000001, expected a surface no "
            + "reference picture is in, got the one holding frame_num 0 (POC 0)"),
        ("slice_cover", "picture 2 (P, frame_num 2, POC 4): macroblocks covered by the slices, expected 99, got 98"),
    ]

    @Test(arguments: faults)
    func oneWrongValueFailsEndPictureWithItsViolation(fault: String, violation: String) throws {
        let device = try FakeVADevice()
        let (result, _, _) = try FakeVA.client(device, ["--gop", "ippp", "--fault", fault])
        #expect(result.status == 1, "\(result.transcript)")
        #expect(result.standardError.contains("vaEndPicture: invalid parameter (status 0x12)"), "\(result.transcript)")
        let lines = FakeVA.violations(result.standardError)
        #expect(lines.first == "fake-va: violation: " + violation, "\(result.standardError)")
        let report = try device.report()
        #expect(report.violations.first == violation)
        #expect(report.violationCount == lines.count)
    }

    @Test func pocType2FollowsFrameNum() throws {
        let device = try FakeVADevice()
        let (result, _, _) = try FakeVA.client(device, ["--poc-type", "2", "--fault", "poc"])
        #expect(result.status == 1)
        #expect(FakeVA.violations(result.standardError).first == "fake-va: violation: picture 2 (P, frame_num 2, "
            + "POC 2): TopFieldOrderCnt with pic_order_cnt_type 2, expected 4, got 2")
    }

    @Test func anUndeclaredPackedHeaderFailsRenderPicture() throws {
        let device = try FakeVADevice()
        let (result, _, _) = try FakeVA.client(device, ["--fault", "packed_type"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("vaRenderPicture: invalid parameter (status 0x12)"))
        #expect(FakeVA.violations(result.standardError) == [
            "fake-va: violation: packed header type 2 not declared at vaCreateConfig, expected EncPackedHeaders to "
                + "include 0x2, got 0x5",
        ])
    }

    /// B slices need an L1 reference, which a driver reporting EncMaxRefFrames L1 0 does not take.
    @Test func bFramesBeyondEncMaxRefFramesAreRefused() throws {
        let device = try FakeVADevice(knobs: [.maxReferences(l0: 1, l1: 0)])
        let (result, _, _) = try FakeVA.client(device, ["--gop", "ibp"])
        #expect(result.status == 1)
        #expect(FakeVA.violations(result.standardError).first == "fake-va: violation: picture 2 (B, frame_num 2, "
            + "POC 2): slice 0 active references in list 1, expected at most EncMaxRefFrames' 0, got 1")
    }

    @Test func aCodedBufferOverflowIsFlaggedInTheSegmentStatus() throws {
        let device = try FakeVADevice(knobs: [.codedBufferLimit(bytes: 5000)])
        let (result, _, _) = try FakeVA.client(device, ["--frames", "2"])
        try #require(result.status == 0, "\(result.transcript)")
        #expect(result.standardError == "coded buffer overflow in picture 0\ncoded buffer overflow in picture 1\n")
        #expect(try device.report().codedBufferOverflows == 2)
    }

    /// Refusals with the statuses real encode drivers give; the surface layout padded as theirs.
    /// (Decoding is left out, as on an encode-only driver: FakeVADecodeTests take it.)
    @Test func configsSurfacesAndImagesARealDriverWouldRefuseAreRefused() throws {
        let device = try FakeVADevice(knobs: [.packedHeaders([.sequence, .slice]), .entrypoints([.slice, .lowPower])])
        let result = try ChildProcess.run([try FakeVADevice.client("config_probe")], environment: device.environment())
        try #require(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutputText == """
            decoding entrypoint: the requested VAEntryPoint is not supported
            HEVC profile: the requested VAProfile is not supported
            4:2:2: the requested RT Format is not supported
            QVBR: an invalid/unsupported value was supplied
            CBR and VBR at once: an invalid/unsupported value was supplied
            packed picture headers: an invalid/unsupported value was supplied
            ROI attribute: attribute not supported
            CBR: success (no error)
            4:2:2 surface: the requested RT Format is not supported
            4:2:0 surface: success (no error)
            derived image: success (no error)
              pitches 128 128, chroma offset 8192

            """)
        #expect(result.standardError.isEmpty)
    }

    @Test func deriveImageFailsLikeOnAMDWhenAskedTo() throws {
        let device = try FakeVADevice(knobs: [.noDerive])
        let result = try ChildProcess.run([try FakeVADevice.client("config_probe")], environment: device.environment())
        try #require(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutputText.contains("derived image: operation failed\n"))
    }

    @Test func aBadKnobStopsTheClientLoudly() throws {
        let device = try FakeVADevice(knobs: [.maxReferences(l0: 0, l1: 0)])
        let (result, _, _) = try FakeVA.client(device, [])
        #expect(result.status != 0)
        #expect(result.standardError.contains("fake-va: FAKE_VA_MAX_REFS=0,0: expected L0,L1"))
    }
}

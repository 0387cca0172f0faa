import Testing
import VTCore
@testable import VTEncoding

@Suite struct EncoderSettingsTests {
    @Test func rateControlIsInferredFromTheOptions() {
        var s = EncoderSettings()
        #expect(s.effectiveRateControl == .crf)
        s.qp = 20
        #expect(s.effectiveRateControl == .cqp)
        s = EncoderSettings()
        s.bitRate = 2_000_000
        #expect(s.effectiveRateControl == .abr)
        s.maxBitRate = 4_000_000
        #expect(s.effectiveRateControl == .vbr)
        #expect(s.effectiveBufferSize == 500_000)
    }

    @Test func cbrPeakIsTheBitRateWithOneSecondBuffer() {
        var s = EncoderSettings()
        s.rateControl = .cbr
        s.bitRate = 2_000_000
        #expect(s.effectiveMaxBitRate == 2_000_000)
        #expect(s.effectiveBufferSize == 250_000)
    }

    @Test func keyFrameIntervalInSecondsFollowsTheRate() {
        let ntsc = FrameRate(numerator: 30000, denominator: 1001)!
        #expect(EncoderSettings.KeyFrameInterval.seconds(2).frames(at: ntsc) == 60)
        #expect(EncoderSettings.KeyFrameInterval.seconds(2).frames(at: FrameRate(numerator: 25, denominator: 1)!) == 50)
        #expect(EncoderSettings.KeyFrameInterval.frames(7).frames(at: ntsc) == 7)
    }

    static let refused: [(String, @Sendable (inout EncoderSettings) -> Void, String)] = [
        ("baseline+bframes", { $0.profile = .baseline; $0.bFrames = 2 }, "--bframes"),
        ("baseline+cabac", { $0.profile = .baseline; $0.entropy = .cabac }, "--entropy cabac"),
        ("cbr+crf", { $0.rateControl = .cbr; $0.bitRate = 1_000_000; $0.crf = 20 }, "--crf"),
        ("abr+qp", { $0.bitRate = 1_000_000; $0.qp = 20 }, "--bitrate"),
        ("vbr without peak", { $0.rateControl = .vbr; $0.bitRate = 1_000_000 }, "--max-bitrate"),
        ("vbr peak below average", { $0.rateControl = .vbr; $0.bitRate = 2_000_000; $0.maxBitRate = 1_000_000 }, "below"),
        ("cbr with peak", { $0.rateControl = .cbr; $0.bitRate = 1_000_000; $0.maxBitRate = 2_000_000 }, "--max-bitrate"),
        ("abr without rate", { $0.rateControl = .abr }, "--bitrate"),
        ("crf with bitrate", { $0.rateControl = .crf; $0.bitRate = 1_000_000 }, "--bitrate"),
        ("cqp with peak", { $0.qp = 20; $0.maxBitRate = 1_000_000 }, "--max-bitrate"),
        ("crf out of range", { $0.crf = 60 }, "--crf"),
        ("bufsize alone", { $0.bufferSize = 100_000 }, "--bufsize"),
        ("bit rate in kbit by mistake", { $0.bitRate = 500 }, "bit/s"),
        ("bad level", { $0.level = "9" }, "--level"),
    ]

    @Test(arguments: refused.indices)
    func refusesContradictions(_ index: Int) {
        let (name, change, mentions) = Self.refused[index]
        var s = EncoderSettings()
        change(&s)
        do {
            try s.validate()
            Issue.record("\(name) was accepted")
        } catch {
            #expect(error.message.contains(mentions), "\(name): \(error.message)")
        }
    }

    @Test func acceptsCappedCRF() throws {
        var s = EncoderSettings()
        s.crf = 21
        s.maxBitRate = 6_000_000
        try s.validate()
        #expect(s.effectiveRateControl == .crf)
        #expect(s.effectiveBufferSize == 750_000)
    }

    @Test func x264NamesAreChecked() throws {
        var s = EncoderSettings()
        s.speed = "veryfast"
        s.tune = "zerolatency"
        try X264Session.validateNames(s)
        s.speed = "warp"
        #expect(throws: UsageError.self) { try X264Session.validateNames(s) }
        s.speed = "medium"
        s.tune = "film,zerolatency"
        try X264Session.validateNames(s)
        s.tune = "cinema"
        #expect(throws: UsageError.self) { try X264Session.validateNames(s) }
    }

    @Test func parametersFollowTheMappingTable() throws {
        var s = EncoderSettings()
        s.frameRate = FrameRate(numerator: 30000, denominator: 1001)!
        s.keyFrameInterval = .seconds(2)
        s.rateControl = .cbr
        s.bitRate = 2_500_000
        s.bFrames = 0
        s.entropy = .cavlc
        s.level = "4.1"
        s.sampleAspectRatio = SampleAspectRatio(width: 16, height: 15)
        let p = try X264Parameters.make(s, width: 1280, height: 720, format: .i420)
        #expect(p.i_keyint_max == 60)
        #expect(p.i_fps_num == 30000 && p.i_fps_den == 1001)
        #expect(p.b_vfr_input == 0)
        #expect(p.rc.i_bitrate == 2500 && p.rc.i_vbv_max_bitrate == 2500)
        #expect(p.rc.i_vbv_buffer_size == 2500)
        #expect(p.i_nal_hrd == 2)
        #expect(p.i_bframe == 0 && p.b_cabac == 0)
        #expect(p.i_level_idc == 41)
        #expect(p.vui.i_sar_width == 16 && p.vui.i_sar_height == 15)
        #expect(p.b_annexb == 0 && p.b_repeat_headers == 0)
    }

    /// A ratio wider than x264's int fields (from a Y4M header) is fitted to H.264's 16 bits,
    /// or left out, instead of stopping the program when converted.
    @Test func aspectRatioBeyondSixteenBitsIsFittedOrLeftOut() throws {
        var s = EncoderSettings()
        s.frameRate = FrameRate(numerator: 25, denominator: 1)!
        s.sampleAspectRatio = SampleAspectRatio(width: 16, height: 4_294_967_295)
        var p = try X264Parameters.make(s, width: 64, height: 64, format: .i420)
        #expect(p.vui.i_sar_width == 0 && p.vui.i_sar_height == 0)
        s.sampleAspectRatio = SampleAspectRatio(width: 200_000, height: 199_998)
        p = try X264Parameters.make(s, width: 64, height: 64, format: .i420)
        #expect(p.vui.i_sar_width == 50_000 && p.vui.i_sar_height == 49_999)
    }
}

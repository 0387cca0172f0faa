import Testing
import VTCore
@testable import VTH264

@Suite struct SequenceParameterSetTests {
    @Test func builtSPSCropsToTheRequestedSizeAndRoundTrips() throws {
        let sps = SequenceParameterSet(profileIdc: 100, levelIdc: 40, width: 1366, height: 766)
        #expect(sps.picWidthInMbs == 86)
        #expect(sps.picHeightInMapUnits == 48)
        #expect(sps.frameCropping == .init(right: 5, bottom: 1))
        #expect(sps.width == 1366)
        #expect(sps.height == 766)
        let parsed = try SequenceParameterSet(nalUnit: sps.nalUnit())
        #expect(parsed == sps)
        #expect(parsed.nalUnit().first == 0x67)
    }

    @Test func fieldCodingDoublesTheVerticalCropUnit() throws {
        var sps = SequenceParameterSet(profileIdc: 77, levelIdc: 30, width: 720, height: 480)
        sps.frameMbsOnly = false
        sps.mbAdaptiveFrameField = true
        sps.picHeightInMapUnits = 9
        sps.frameCropping = .init(bottom: 3)
        let parsed = try SequenceParameterSet(nalUnit: sps.nalUnit())
        #expect(parsed.cropUnitY == 4)
        #expect(parsed.codedHeight == 288)
        #expect(parsed.height == 276)
        #expect(parsed.mbAdaptiveFrameField)
    }

    @Test func chromaFormatSetsTheCropUnits() {
        var sps = SequenceParameterSet(profileIdc: 244, levelIdc: 30, width: 320, height: 240)
        sps.frameCropping = .init(right: 1, bottom: 1)
        sps.chromaFormatIdc = 3
        #expect((sps.cropUnitX, sps.cropUnitY, sps.width, sps.height) == (1, 1, 319, 239))
        sps.chromaFormatIdc = 2
        #expect((sps.cropUnitX, sps.cropUnitY, sps.width, sps.height) == (2, 1, 318, 239))
        sps.chromaFormatIdc = 0
        #expect((sps.cropUnitX, sps.cropUnitY) == (1, 1))
        sps.frameMbsOnly = false
        #expect(sps.cropUnitY == 2)
    }

    @Test func pictureOrderCountType1AndHighProfileFieldsRoundTrip() throws {
        var sps = SequenceParameterSet(profileIdc: 110, levelIdc: 41, width: 1920, height: 1080)
        sps.bitDepthLuma = 10
        sps.bitDepthChroma = 10
        sps.chromaFormatIdc = 2
        sps.pictureOrderCount = .type1(deltaPicOrderAlwaysZero: false, offsetForNonRefPic: -3,
                                       offsetForTopToBottomField: 1, offsetForRefFrame: [2, -2, 7])
        sps.scalingMatrix = [ScalingList(deltaScales: [-8]), nil, nil,
                             ScalingList(deltaScales: [2, 0, -1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
                             nil, nil, ScalingList(deltaScales: [8, -16]), nil]
        sps.seqParameterSetId = 31
        sps.log2MaxFrameNum = 16
        sps.maxNumRefFrames = 16
        sps.gapsInFrameNumAllowed = true
        let parsed = try SequenceParameterSet(nalUnit: sps.nalUnit())
        #expect(parsed == sps)
        #expect(parsed.profileName == "High 10")
        #expect(parsed.scalingMatrix?[0]?.usesDefaultMatrix == true)
        #expect(parsed.scalingMatrix?[6]?.scales(count: 64) == [16] + Array(repeating: 16, count: 63))
    }

    @Test func scalingListEndsEarlyAndRepeatsItsLastValue() throws {
        // 8 + 4 = 12, then a delta of −12 gives a next scale of 0: 12 for the remaining 14.
        let list = ScalingList(deltaScales: [4, -12])
        #expect(list.scales(count: 16) == Array(repeating: 12, count: 16))
        var writer = BitBuilder()
        list.write(to: &writer)
        writer.se(-5)
        var reader = BitReader(rbsp: writer.bytes)
        #expect(try ScalingList.read(from: &reader, size: 16) == list)
        #expect(try reader.se("after") == -5)
    }

    @Test func vuiFieldsRoundTrip() throws {
        var sps = SequenceParameterSet(profileIdc: 100, levelIdc: 31, width: 1280, height: 720)
        var vui = VideoUsabilityInformation()
        vui.sampleAspectRatio = SampleAspectRatio(width: 12, height: 11)
        vui.overscanAppropriate = false
        vui.videoSignalType = VideoSignalType(fullRange: true, colourDescription: .bt709)
        vui.chromaSampleLocation = ChromaSampleLocation(top: 2, bottom: 2)
        vui.timing = TimingInfo(numUnitsInTick: 1001, timeScale: 60000, fixedFrameRate: true)
        vui.nalHRD = HRDParameters(bitRateScale: 1, cpbSizeScale: 3, codedPictureBuffers: [
            .init(bitRateValue: 31_250, cpbSizeValue: 62_500, constantBitRate: true)])
        vui.lowDelayHRD = false
        vui.picStructPresent = true
        vui.bitstreamRestriction = BitstreamRestriction(maxNumReorderFrames: 2, maxDecFrameBuffering: 4)
        sps.vui = vui
        let parsed = try SequenceParameterSet(nalUnit: sps.nalUnit())
        #expect(parsed == sps)
        #expect(parsed.vui?.aspectRatioIdc == 2)
        #expect(parsed.sampleAspectRatio?.description == "12:11")
        #expect(parsed.timing?.frameRate == FrameRate(numerator: 30000, denominator: 1001))
        #expect(parsed.vui?.nalHRD?.bitRate() == 4_000_000)
        #expect(parsed.vui?.nalHRD?.cpbSize() == 8_000_000)
    }

    @Test func spsCutInsideBitstreamRestrictionKeepsTheRest() throws {
        var sps = SequenceParameterSet(profileIdc: 77, levelIdc: 31, width: 1280, height: 720)
        sps.vui = VideoUsabilityInformation()
        sps.vui?.timing = TimingInfo(numUnitsInTick: 1, timeScale: 60, fixedFrameRate: true)
        sps.vui?.bitstreamRestriction = BitstreamRestriction(maxNumReorderFrames: 16, maxDecFrameBuffering: 16)
        let rbsp = sps.rbsp()
        let cut = try SequenceParameterSet(rbsp: Array(rbsp.dropLast(2)))
        #expect(cut.vui?.bitstreamRestriction == nil)
        #expect(cut.vui?.timing == sps.vui?.timing)
        #expect(cut.width == 1280)
        #expect(try SequenceParameterSet(rbsp: rbsp) == sps)
    }

    /// max_num_reorder_frames as E.2.1 infers it when the VUI does not send it: the level's
    /// MaxDpbFrames at the picture's size (A.3.1 h), none for the intra profiles.
    @Test func reorderDepthIsInferredFromTheLevelWhenNotSent() {
        var sps = SequenceParameterSet(profileIdc: 100, levelIdc: 30, width: 640, height: 320)
        #expect(sps.maxNumReorderFrames == 10, "8100 MaxDpbMbs / (40 × 20) macroblocks")
        sps.levelIdc = 51
        #expect(sps.maxNumReorderFrames == 16, "at most 16 however many fit")
        sps = SequenceParameterSet(profileIdc: 77, levelIdc: 31, width: 1280, height: 720)
        #expect(sps.maxNumReorderFrames == 5, "18000 / 3600")
        sps.frameMbsOnly = false
        sps.picHeightInMapUnits = 23
        #expect(sps.maxDpbFrames == 4, "a frame of two fields is 80 × 46 macroblocks")
        sps = SequenceParameterSet(profileIdc: 66, constraintFlags: 0b0001_0000, levelIdc: 11, width: 176, height: 144)
        #expect(sps.level == "1b")
        #expect(sps.maxNumReorderFrames == 4, "level 1b: 396 / 99")
        sps.levelIdc = 99
        #expect(sps.maxNumReorderFrames == 16, "a level Table A-1 does not list")
        sps = SequenceParameterSet(profileIdc: 100, constraintFlags: 0b0001_0000, levelIdc: 40, width: 1920, height: 1080)
        #expect(sps.maxNumReorderFrames == 0, "High Intra reorders nothing")
        sps.vui = VideoUsabilityInformation()
        sps.vui?.bitstreamRestriction = BitstreamRestriction(maxNumReorderFrames: 2, maxDecFrameBuffering: 4)
        #expect(sps.maxNumReorderFrames == 2, "what the VUI sends wins")
    }

    @Test func aspectRatioOutsideTheTableUsesExtendedSAR() {
        var vui = VideoUsabilityInformation()
        vui.sampleAspectRatio = SampleAspectRatio(width: 16, height: 15)
        #expect(vui.aspectRatioIdc == 255)
        #expect(vui.sampleAspectRatio == SampleAspectRatio(width: 16, height: 15))
        vui.aspectRatioIdc = 16
        #expect(vui.sampleAspectRatio?.description == "2:1")
        vui.aspectRatioIdc = 17
        #expect(vui.sampleAspectRatio == nil)
    }

    /// sar_width and sar_height are 16 bits; a Y4M header may state any ratio. Found by the
    /// CLI fuzz run, where A16:4294967295 stopped both encoders.
    @Test func aspectRatioIsFittedToSixteenBitsAsX264Does() {
        func fit(_ w: Int, _ h: Int) -> String? { SampleAspectRatio(width: w, height: h).fittingH264?.description }
        #expect(fit(16, 15) == "16:15")
        #expect(fit(32, 30) == "16:15")
        #expect(fit(65535, 1) == "65535:1")
        #expect(fit(100_000, 99_999) == "50000:49999")
        #expect(fit(16, 4_294_967_295) == nil)
        #expect(fit(Int.max, 3) == nil)
        #expect(fit(0, 1) == nil)
        #expect(fit(1, -1) == nil)
    }

    @Test(arguments: [
        (66, 0b1100_0000, 30, "Constrained Baseline", "3.0"),
        (66, 0b1000_0000, 11, "Baseline", "1.1"),
        (66, 0b1101_0000, 11, "Constrained Baseline", "1b"),
        (77, 0b0100_0000, 31, "Main", "3.1"),
        (77, 0b0001_0000, 11, "Main", "1b"),
        (100, 0, 9, "High", "1b"),
        (100, 0b0000_1000, 40, "Progressive High", "4.0"),
        (100, 0b0000_1100, 52, "Constrained High", "5.2"),
        (110, 0b0001_0000, 50, "High 10 Intra", "5.0"),
        (122, 0, 42, "High 4:2:2", "4.2"),
        (244, 0, 51, "High 4:4:4 Predictive", "5.1"),
        (44, 0, 30, "CAVLC 4:4:4 Intra", "3.0"),
        (7, 0, 30, "Unknown (profile_idc 7)", "3.0"),
    ] as [(Int, UInt8, Int, String, String)])
    func profileAndLevelNames(profile: Int, flags: UInt8, level: Int, name: String, levelName: String) {
        let sps = SequenceParameterSet(profileIdc: profile, constraintFlags: flags, levelIdc: level,
                                       width: 16, height: 16)
        #expect(sps.profileName == name)
        #expect(sps.level == levelName)
    }

    @Test func wrongOrEmptyNALUnitIsRejected() {
        #expect(throws: BitstreamError.unexpectedNALUnitType(expected: .sps, found: .pps)) {
            try SequenceParameterSet(nalUnit: [0x68, 0xCE, 0x38, 0x80])
        }
        #expect(throws: BitstreamError.emptyNALUnit(expected: .sps)) { try SequenceParameterSet(nalUnit: []) }
    }

    @Test func cropLargerThanThePictureIsRejected() {
        var sps = SequenceParameterSet(profileIdc: 66, levelIdc: 30, width: 32, height: 32)
        sps.frameCropping = .init(left: 8, right: 8)
        #expect(throws: BitstreamError.valueOutOfRange(syntax: "SPS", field: "frame_crop_right_offset",
                                                        value: 8, range: 0...7)) {
            try SequenceParameterSet(nalUnit: sps.nalUnit())
        }
    }

    @Test func everyTruncationThrowsInsteadOfReadingPastTheEnd() throws {
        var sps = SequenceParameterSet(profileIdc: 100, levelIdc: 31, width: 1280, height: 720)
        var vui = VideoUsabilityInformation()
        vui.videoSignalType = VideoSignalType(fullRange: false, colourDescription: .bt709)
        vui.timing = TimingInfo(numUnitsInTick: 1, timeScale: 50, fixedFrameRate: true)
        sps.vui = vui
        let nal = sps.nalUnit()
        for length in 1..<nal.count - 1 {
            #expect(throws: BitstreamError.self) { try SequenceParameterSet(nalUnit: Array(nal.prefix(length))) }
        }
    }

    @Test func corruptBytesNeverTrap() {
        var sps = SequenceParameterSet(profileIdc: 100, levelIdc: 31, width: 1280, height: 720)
        sps.vui = VideoUsabilityInformation()
        sps.vui?.timing = TimingInfo(numUnitsInTick: 1, timeScale: 50, fixedFrameRate: true)
        let nal = sps.nalUnit()
        var state: UInt64 = 42
        var parsed = 0
        for _ in 0..<2000 {
            var damaged = nal
            for _ in 0..<3 {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let index = 1 + Int(state >> 33) % (damaged.count - 1)
                damaged[index] = UInt8(truncatingIfNeeded: state >> 13)
            }
            if (try? SequenceParameterSet(nalUnit: damaged)) != nil { parsed += 1 }
            _ = try? PictureParameterSet(nalUnit: [0x68] + damaged.dropFirst())
        }
        #expect(parsed < 2000)
    }
}

@Suite struct PictureParameterSetTests {
    @Test func baseFieldsRoundTrip() throws {
        var pps = PictureParameterSet(picParameterSetId: 3, seqParameterSetId: 1, entropyCoding: .cavlc)
        pps.numRefIdxL0DefaultActive = 3
        pps.weightedBipredIdc = 2
        pps.picInitQp = 20
        pps.chromaQpIndexOffset = -2
        pps.constrainedIntraPred = true
        let nal = pps.nalUnit()
        #expect(nal.first == 0x68)
        let parsed = try PictureParameterSet(nalUnit: nal)
        #expect(parsed == pps)
        #expect(parsed.highProfileExtension == nil)
        #expect(!parsed.transform8x8Mode)
    }

    @Test func highProfileFieldsNeedTheSPSChromaFormat() throws {
        var pps = PictureParameterSet(entropyCoding: .cabac)
        let lists = (0..<12).map { $0 % 3 == 0 ? ScalingList(deltaScales: [-8]) : nil }
        pps.highProfileExtension = .init(transform8x8Mode: true, scalingMatrix: lists, secondChromaQpIndexOffset: 4)
        let nal = pps.nalUnit()
        #expect(try PictureParameterSet(nalUnit: nal, chromaFormatIdc: 3) == pps)
        #expect(try PictureParameterSet(nalUnit: nal, chromaFormatIdc: 1) != pps)
    }

    @Test func handDecodedPPS() throws {
        // 1 1 1 0 1 011 1 1 10 00111 1 1 1 0 0 1 0 1, then the stop bit: ids 0 and 0, CABAC,
        // one slice group, 3 L0 refs, 1 L1 ref, weighted P, implicit bi-prediction,
        // pic_init_qp_minus26 −3, deblocking control, 8x8 transform, second chroma offset 0.
        let pps = try PictureParameterSet(nalUnit: [0x68, 0xEB, 0xE3, 0xF2, 0xC0])
        #expect(pps.entropyCoding == .cabac)
        #expect(pps.numRefIdxL0DefaultActive == 3)
        #expect(pps.weightedPred)
        #expect(pps.weightedBipredIdc == 2)
        #expect(pps.picInitQp == 23)
        #expect(pps.deblockingFilterControlPresent)
        #expect(pps.transform8x8Mode)
        #expect(pps.highProfileExtension?.secondChromaQpIndexOffset == 0)
    }

    @Test func sliceGroupsAreUnsupported() {
        var writer = BitBuilder()
        writer.ue(0)
        writer.ue(0)
        writer.flag(false)
        writer.flag(false)
        writer.ue(2)
        writer.rbspTrailingBits()
        let error = #expect(throws: BitstreamError.self) {
            try PictureParameterSet(nalUnit: [0x68] + addEmulationPrevention(writer.bytes))
        }
        #expect(error?.description == "the PPS uses 3 slice groups (flexible macroblock ordering), "
            + "which vtrecord does not support")
    }
}

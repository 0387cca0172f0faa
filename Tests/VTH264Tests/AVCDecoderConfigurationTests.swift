import Testing
import VTCore
@testable import VTH264

@Suite struct AVCDecoderConfigurationTests {
    private let baselineSPS = SequenceParameterSet(profileIdc: 66, constraintFlags: 0xC0, levelIdc: 30,
                                                   width: 640, height: 360).nalUnit()
    private let pps = PictureParameterSet(entropyCoding: .cavlc).nalUnit()

    @Test func baselineRecordLayoutAndRoundTrip() throws {
        let format = try VideoFormatDescription(h264ParameterSets: [baselineSPS, pps], nalUnitLengthSize: 2)
        #expect(format.width == 640 && format.height == 360)
        let record = try format.avcC()
        let expected: [UInt8] = [1, 66, 0xC0, 30, 0xFD, 0xE1, 0, UInt8(baselineSPS.count)] + baselineSPS
            + [1, 0, UInt8(pps.count)] + pps
        #expect(record == expected)
        #expect(try VideoFormatDescription(avcC: record) == format)
    }

    @Test func highProfileGetsTheTrailer() throws {
        var sps = SequenceParameterSet(profileIdc: 110, levelIdc: 40, width: 1920, height: 1080)
        sps.bitDepthLuma = 10
        sps.bitDepthChroma = 9
        sps.chromaFormatIdc = 2
        // 4:2:2 crops rows one at a time, 4:2:0 in pairs.
        sps.frameCropping?.bottom = 8
        let format = try VideoFormatDescription(h264ParameterSets: [sps.nalUnit(), pps])
        let record = try format.avcC()
        #expect(record.suffix(4) == [0xFE, 0xFA, 0xF9, 0x00])
        #expect(record[4] == 0xFF)
        #expect(try VideoFormatDescription(avcC: record) == format)
        #expect(format.height == 1080)
    }

    @Test func severalParameterSetsKeepTheirOrder() throws {
        var second = SequenceParameterSet(profileIdc: 66, levelIdc: 30, width: 320, height: 240)
        second.seqParameterSetId = 1
        let pps2 = PictureParameterSet(picParameterSetId: 1, seqParameterSetId: 1, entropyCoding: .cavlc).nalUnit()
        let format = try VideoFormatDescription(h264ParameterSets: [baselineSPS, pps, second.nalUnit(), pps2])
        #expect(format.sequenceParameterSets == [baselineSPS, second.nalUnit()])
        #expect(format.pictureParameterSets == [pps, pps2])
        #expect(format.parameterSet(at: 2) == pps)
        #expect(try VideoFormatDescription(avcC: format.avcC()) == format)
        #expect(format.width == 640)
    }

    @Test func malformedRecordsAreRejected() throws {
        let record = try VideoFormatDescription(h264ParameterSets: [baselineSPS, pps]).avcC()
        #expect(throws: BitstreamError.avcCTruncated(field: "configurationVersion", offset: 0, size: 0)) {
            try VideoFormatDescription(avcC: [])
        }
        #expect(throws: BitstreamError.avcCVersion(0)) { try VideoFormatDescription(avcC: [0] + record.dropFirst()) }
        for length in 1..<record.count {
            #expect(throws: BitstreamError.self) { try VideoFormatDescription(avcC: Array(record.prefix(length))) }
        }
        var threeByteLengths = record
        threeByteLengths[4] = 0xFE
        #expect(throws: BitstreamError.invalidNALUnitLengthSize(3)) { try VideoFormatDescription(avcC: threeByteLengths) }
        var ppsInTheSPSList = record
        ppsInTheSPSList[8] = 0x68
        #expect(throws: BitstreamError.unexpectedNALUnitType(expected: .sps, found: .pps)) {
            try VideoFormatDescription(avcC: ppsInTheSPSList)
        }
        var noPPS = Array(record.prefix(8 + baselineSPS.count))
        noPPS.append(0)
        #expect(throws: BitstreamError.missingParameterSet(.pps)) { try VideoFormatDescription(avcC: noPPS) }
        let error = #expect(throws: BitstreamError.self) { try VideoFormatDescription(avcC: [1, 66, 0, 30, 0xFF, 0xE0, 0]) }
        #expect(error == .missingParameterSet(.sps))
        #expect(error?.description == "no SPS: a decoder needs at least one SPS and one PPS")
    }

    @Test func descriptionsAvcCCannotHoldAreRejected() {
        var format = VideoFormatDescription(width: 16, height: 16, sequenceParameterSets: [baselineSPS],
                                            pictureParameterSets: [[0x68] + Array(repeating: 0xAA, count: 70_000)])
        #expect(throws: BitstreamError.parameterSetTooLarge(.pps, size: 70_001)) { try format.avcC() }
        format.pictureParameterSets = Array(repeating: pps, count: 256)
        #expect(throws: BitstreamError.tooManyParameterSets(.pps, count: 256, maximum: 255)) { try format.avcC() }
        format.pictureParameterSets = []
        #expect(throws: BitstreamError.missingParameterSet(.pps)) { try format.avcC() }
        #expect(throws: BitstreamError.unexpectedNALUnitType(expected: .sps, found: .sliceIDR)) {
            try VideoFormatDescription(h264ParameterSets: [baselineSPS, pps, [0x65, 0x88]])
        }
    }
}

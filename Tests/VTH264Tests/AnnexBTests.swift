import Testing
import VTCore
@testable import VTH264

@Suite struct AVCCToAnnexBTests {
    private func convert(_ avcc: [UInt8], lengthSize: Int = 4,
                         parameterSets: [[UInt8]] = []) throws(BitstreamError) -> [UInt8] {
        var out: [UInt8] = []
        try withBytes(avcc) { (bytes) throws(BitstreamError) in
            try AnnexB.appendAccessUnit(avcc: bytes, nalUnitLengthSize: lengthSize,
                                        parameterSets: parameterSets, to: &out)
        }
        return out
    }

    @Test func fourByteLengths() throws {
        let avcc: [UInt8] = [0, 0, 0, 2, 0x65, 0xAA, 0, 0, 0, 3, 0x41, 0xBB, 0xCC]
        #expect(try convert(avcc) == [0, 0, 0, 1, 0x65, 0xAA, 0, 0, 0, 1, 0x41, 0xBB, 0xCC])
    }

    @Test(arguments: [1, 2, 4])
    func everyLengthSize(lengthSize: Int) throws {
        let nal: [UInt8] = [0x41, 1, 2, 3, 4]
        let prefix = [UInt8](repeating: 0, count: lengthSize - 1) + [UInt8(nal.count)]
        let avcc = prefix + nal + prefix + nal
        #expect(try convert(avcc, lengthSize: lengthSize) == [0, 0, 0, 1] + nal + [0, 0, 0, 1] + nal)
    }

    @Test func lengthAbove255InTwoBytes() throws {
        let nal = [0x41] + [UInt8](repeating: 7, count: 299)
        #expect(try convert([0x01, 0x2C] + nal, lengthSize: 2) == [0, 0, 0, 1] + nal)
    }

    @Test func zeroLengthNALUnitIsSkipped() throws {
        let avcc: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 1, 0x09, 0, 0, 0, 0]
        #expect(try convert(avcc) == [0, 0, 0, 1, 0x09])
    }

    @Test func parameterSetsComeFirst() throws {
        let out = try convert([0, 0, 0, 1, 0x65], parameterSets: [[0x67, 1], [0x68, 2]])
        #expect(out == [0, 0, 0, 1, 0x67, 1, 0, 0, 0, 1, 0x68, 2, 0, 0, 0, 1, 0x65])
    }

    @Test func lengthRunningPastTheEndThrowsAndLeavesOutputAlone() throws {
        let avcc: [UInt8] = [0, 0, 0, 1, 0x65, 0, 0, 0x13, 0x88, 0x41]
        var out: [UInt8] = [9, 9]
        let error = #expect(throws: BitstreamError.self) {
            try avcc.withUnsafeBytes {
                try AnnexB.appendAccessUnit(avcc: $0, nalUnitLengthSize: 4, parameterSets: [[0x67]], to: &out)
            }
        }
        #expect(error == .nalUnitPastEnd(length: 5000, offset: 5, accessUnitSize: 10))
        #expect(error?.description == "NAL unit length 5000 at offset 5 runs past the end of the "
            + "10-byte access unit: the data is truncated or its length size is wrong")
        #expect(out == [9, 9])
    }

    @Test func truncatedLengthFieldThrows() {
        #expect(throws: BitstreamError.truncatedLengthField(offset: 5, lengthSize: 4, accessUnitSize: 7)) {
            try convert([0, 0, 0, 1, 0x65, 0, 0])
        }
        #expect(throws: BitstreamError.truncatedLengthField(offset: 0, lengthSize: 2, accessUnitSize: 1)) {
            try convert([5], lengthSize: 2)
        }
    }

    @Test func lengthSizeThreeIsRejected() {
        #expect(throws: BitstreamError.invalidNALUnitLengthSize(3)) {
            try convert([0, 0, 1, 0x65], lengthSize: 3)
        }
    }

    @Test func emptyAccessUnitGivesOnlyParameterSets() throws {
        #expect(try convert([]) == [])
        #expect(try convert([], parameterSets: [[0x67]]) == [0, 0, 0, 1, 0x67])
    }

    @Test func keyframeGetsFormatParameterSetsAndOtherFramesDoNot() throws {
        let format = VideoFormatDescription(width: 16, height: 16, sequenceParameterSets: [[0x67, 0x42]],
                                            pictureParameterSets: [[0x68, 0xCE]], nalUnitLengthSize: 2)
        let key = EncodedFrame(data: [0, 2, 0x65, 0x88], pts: .zero, dts: .zero, isKeyFrame: true, token: FrameToken(0))
        let other = EncodedFrame(data: [0, 2, 0x41, 0x9A], pts: .zero, dts: .zero, isKeyFrame: false, token: FrameToken(0))
        #expect(try AnnexB.annexB(key, format: format)
            == [0, 0, 0, 1, 0x67, 0x42, 0, 0, 0, 1, 0x68, 0xCE, 0, 0, 0, 1, 0x65, 0x88])
        #expect(try AnnexB.annexB(other, format: format) == [0, 0, 0, 1, 0x41, 0x9A])
    }
}

@Suite struct AnnexBSplittingTests {
    private func units(_ stream: [UInt8]) -> [[UInt8]] {
        AnnexB.nalUnitRanges(in: stream).map { Array(stream[$0]) }
    }

    @Test func threeAndFourByteStartCodes() {
        let stream: [UInt8] = [0, 0, 0, 1, 0x67, 0x42, 0, 0, 1, 0x68, 0xCE, 0, 0, 1, 0x65, 0x88, 0x84]
        #expect(units(stream) == [[0x67, 0x42], [0x68, 0xCE], [0x65, 0x88, 0x84]])
        #expect(AnnexB.nalUnitRanges(in: stream) == [4..<6, 9..<11, 14..<17])
    }

    @Test func trailingZeroBytesBelongToNoNALUnit() {
        let stream: [UInt8] = [0, 0, 1, 0x09, 0xF0, 0, 0, 0, 0, 0, 1, 0x41, 0x01, 0, 0]
        #expect(units(stream) == [[0x09, 0xF0], [0x41, 0x01]])
    }

    @Test func leadingBytesAndEmptyUnitsAreIgnored() {
        let stream: [UInt8] = [0xFF, 0x12, 0, 0, 0, 1, 0, 0, 1, 0x41, 0x7F]
        #expect(units(stream) == [[0x41, 0x7F]])
    }

    @Test func noStartCodeGivesNothing() {
        #expect(units([]).isEmpty)
        #expect(units([0, 0]).isEmpty)
        #expect(units([0x65, 0x88, 0x00, 0x00, 0x02, 0x01]).isEmpty)
    }

    @Test func startCodeAtTheVeryEnd() {
        #expect(units([0, 0, 1, 0x41, 0x55, 0, 0, 1]) == [[0x41, 0x55]])
    }

    @Test func escapedBytesDoNotSplit() {
        let stream: [UInt8] = [0, 0, 1, 0x41, 0, 0, 3, 1, 0, 0, 3, 0, 0x80]
        #expect(units(stream) == [[0x41, 0, 0, 3, 1, 0, 0, 3, 0, 0x80]])
    }

    @Test func annexBToAVCCAndBack() throws {
        let stream: [UInt8] = [0, 0, 0, 1, 0x67, 0x42, 0, 0, 1, 0x65, 0x88, 0, 0, 3, 0x01, 0x80]
        let avcc = AVCC.fromAnnexB(stream)
        #expect(avcc == [0, 0, 0, 2, 0x67, 0x42, 0, 0, 0, 7, 0x65, 0x88, 0, 0, 3, 0x01, 0x80])
        #expect(try AVCC.nalUnitRanges(in: avcc, lengthSize: 4) == [4..<6, 10..<17])
        var back: [UInt8] = []
        try avcc.withUnsafeBytes {
            try AnnexB.appendAccessUnit(avcc: $0, nalUnitLengthSize: 4, parameterSets: [], to: &back)
        }
        #expect(back == [0, 0, 0, 1, 0x67, 0x42, 0, 0, 0, 1, 0x65, 0x88, 0, 0, 3, 0x01, 0x80])
    }
}

import Testing
@testable import VTH264

@Suite struct EmulationPreventionTests {
    @Test(arguments: [
        ([0x00, 0x00, 0x00], [0x00, 0x00, 0x03, 0x00]),
        ([0x00, 0x00, 0x01], [0x00, 0x00, 0x03, 0x01]),
        ([0x00, 0x00, 0x02], [0x00, 0x00, 0x03, 0x02]),
        ([0x00, 0x00, 0x03], [0x00, 0x00, 0x03, 0x03]),
        ([0x00, 0x00, 0x04], [0x00, 0x00, 0x04]),
        ([0x00, 0x00, 0x00, 0x00], [0x00, 0x00, 0x03, 0x00, 0x00, 0x03]),
        ([0x00, 0x00], [0x00, 0x00, 0x03]),
        ([0x80, 0x00, 0x00], [0x80, 0x00, 0x00, 0x03]),
        ([0x00], [0x00]),
        ([0x80, 0x00], [0x80, 0x00]),
        ([], []),
        ([0x00, 0x00, 0x00, 0x00, 0x00, 0x00], [0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03]),
        ([0x25, 0x00, 0x00, 0x01, 0x00, 0x00, 0xFF], [0x25, 0x00, 0x00, 0x03, 0x01, 0x00, 0x00, 0xFF]),
    ] as [([UInt8], [UInt8])])
    func escapesAndRoundTrips(rbsp: [UInt8], ebsp: [UInt8]) {
        #expect(addEmulationPrevention(rbsp) == ebsp)
        #expect(removeEmulationPrevention(ebsp) == rbsp)
    }

    @Test func threeByteAtTheVeryEndIsRemoved() {
        #expect(removeEmulationPrevention([0x41, 0x00, 0x00, 0x03]) == [0x41, 0x00, 0x00])
    }

    @Test func threeWithoutTwoZerosIsKept() {
        #expect(removeEmulationPrevention([0x00, 0x03, 0x00, 0x03, 0x03]) == [0x00, 0x03, 0x00, 0x03, 0x03])
    }

    @Test func escapedOutputHasNoStartCodePrefix() {
        var state: UInt64 = 0x9E3779B97F4A7C15
        for _ in 0..<200 {
            var rbsp: [UInt8] = []
            for _ in 0..<64 {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                // Mostly zeros and small values, the bytes that need escaping.
                let r = UInt8(truncatingIfNeeded: state >> 59)
                rbsp.append(r < 20 ? 0 : r & 3)
            }
            let ebsp = addEmulationPrevention(rbsp)
            #expect(removeEmulationPrevention(ebsp) == rbsp)
            for i in 0..<max(0, ebsp.count - 2) where ebsp[i] == 0 && ebsp[i + 1] == 0 {
                #expect(ebsp[i + 2] == 3)
            }
            #expect(!(ebsp.count >= 2 && ebsp.suffix(2) == [0, 0]))
        }
    }

    @Test func nalUnitFromHeaderAndRBSP() {
        #expect(NALUnitHeader(type: .sei, refIdc: 0).nalUnit(rbsp: [0x05, 0x00, 0x00, 0x01, 0x80])
            == [0x06, 0x05, 0x00, 0x00, 0x03, 0x01, 0x80])
    }
}

@Suite struct NALUnitHeaderTests {
    @Test func readsTypeAndRefIdc() {
        #expect(NALUnitHeader(0x67).type == .sps)
        #expect(NALUnitHeader(0x67).refIdc == 3)
        #expect(NALUnitHeader(0x65).type == .sliceIDR)
        #expect(NALUnitHeader(0x41).refIdc == 2)
        #expect(NALUnitHeader(0x01).type == .sliceNonIDR)
        #expect(NALUnitHeader(0x01).refIdc == 0)
        #expect(NALUnitHeader(0x06).type == .sei)
        #expect(NALUnitHeader(0x09).type == .accessUnitDelimiter)
        #expect(NALUnitHeader(0x0C).type == .fillerData)
        #expect(NALUnitHeader(0xE8).forbiddenZeroBit)
        #expect(NALUnitHeader(type: .pps, refIdc: 3).byte == 0x68)
    }

    @Test func everyFiveBitValueHasATypeWithADistinctKey() {
        #expect(NALUnitType.allCases.count == 32)
        #expect(Set(NALUnitType.allCases.map(\.key)).count == 32)
        #expect(NALUnitType(headerByte: 0xFF) == .unspecified31)
        #expect(NALUnitType(headerByte: 0x17) == .reserved23)
        #expect(NALUnitType.sps.key == "sps")
        #expect(NALUnitType.sliceIDR.name == "Coded slice of an IDR picture")
        #expect(NALUnitType.allCases.filter(\.isVCL) == [.sliceNonIDR, .sliceDataPartitionA,
                                                          .sliceDataPartitionB, .sliceDataPartitionC, .sliceIDR])
    }
}

import Testing
@testable import VTH264

@Suite struct ExpGolombTests {
    /// Table 9-2's bit strings for codeNum 0 to 8.
    @Test func knownCodes() throws {
        var reader = BitReader(rbsp: [0b1010_0110, 0b0100_0010, 0b1000_0000])
        #expect(try reader.ue("a") == 0)   // 1
        #expect(try reader.ue("b") == 1)   // 010
        #expect(try reader.ue("c") == 2)   // 011
        #expect(try reader.ue("d") == 3)   // 00100
        #expect(try reader.ue("e") == 4)   // 00101
        #expect(reader.bitPosition == 17)
    }

    @Test(arguments: [0, 1, 2, 7, 8, 254, 255, 256, 65_535, 1 << 20, (1 << 31) - 1, 1 << 31,
                      UInt32.max - 1] as [UInt32])
    func unsignedRoundTrip(value: UInt32) throws {
        var writer = BitBuilder()
        writer.u(1, bits: 1)
        writer.ue(value)
        writer.u(0b101, bits: 3)
        var reader = BitReader(rbsp: writer.bytes)
        #expect(try reader.u(1, "marker") == 1)
        #expect(try reader.ue("value") == value)
        #expect(try reader.u(3, "marker") == 0b101)
        #expect(reader.bitPosition == writer.bitCount)
    }

    @Test(arguments: [0, 1, -1, 2, -2, 127, -128, 1_000_000, -1_000_000, Int32.max, Int32.min + 1] as [Int32])
    func signedRoundTrip(value: Int32) throws {
        var writer = BitBuilder()
        writer.se(value)
        var reader = BitReader(rbsp: writer.bytes)
        #expect(try reader.se("value") == value)
    }

    @Test func signedMapping() throws {
        // codeNum 1, 2, 3, 4 are +1, −1, +2, −2 (Table 9-3).
        var writer = BitBuilder()
        for codeNum: UInt32 in [1, 2, 3, 4] { writer.ue(codeNum) }
        var reader = BitReader(rbsp: writer.bytes)
        #expect(try [reader.se("a"), reader.se("b"), reader.se("c"), reader.se("d")] == [1, -1, 2, -2])
    }

    @Test func largestValueUses31LeadingZeros() {
        var writer = BitBuilder()
        writer.ue(UInt32.max - 1)
        #expect(writer.bitCount == 63)
        #expect(writer.bytes.prefix(3) == [0, 0, 0])
    }

    @Test func allZeroBitsAreMalformed() {
        var long = BitReader(rbsp: [0, 0, 0, 0, 0xFF], syntax: "SPS")
        #expect(throws: BitstreamError.expGolombTooLong(syntax: "SPS", field: "level", bitOffset: 0)) {
            try long.ue("level")
        }
        var short = BitReader(rbsp: [0, 0], syntax: "PPS")
        #expect(throws: BitstreamError.endOfData(syntax: "PPS", field: "pic_parameter_set_id", bitOffset: 16)) {
            try short.ue("pic_parameter_set_id")
        }
        var empty = BitReader(rbsp: [])
        #expect(throws: BitstreamError.self) { try empty.ue("x") }
    }

    @Test func suffixRunningPastTheEndThrows() {
        // 0001 announces 3 suffix bits after the marker; only 0 remain.
        var reader = BitReader(rbsp: [0b1111_0001], syntax: "SPS")
        _ = try? reader.u(4, "skip")
        #expect(throws: BitstreamError.endOfData(syntax: "SPS", field: "x", bitOffset: 8)) {
            try reader.ue("x")
        }
    }

    @Test func rangeCheckedRead() {
        var writer = BitBuilder()
        writer.ue(40)
        var reader = BitReader(rbsp: writer.bytes, syntax: "SPS")
        let error = #expect(throws: BitstreamError.self) { try reader.ue("seq_parameter_set_id", in: 0...31) }
        #expect(error == .valueOutOfRange(syntax: "SPS", field: "seq_parameter_set_id", value: 40, range: 0...31))
        #expect(error?.description == "SPS seq_parameter_set_id is 40, outside the allowed 0...31: the data is corrupt")
    }
}

@Suite struct FixedWidthBitsTests {
    @Test func readsAcrossByteBoundaries() throws {
        var reader = BitReader(rbsp: [0xDE, 0xAD, 0xBE, 0xEF, 0x5A])
        #expect(try reader.u(4, "a") == 0xD)
        #expect(try reader.u(12, "b") == 0xEAD)
        #expect(throws: BitstreamError.self) { try reader.u(32, "too long") }
        #expect(reader.bitPosition == 16)
        #expect(try reader.u(24, "c") == 0xBE_EF5A)
        #expect(reader.bitsRemaining == 0)
        #expect(try reader.u(0, "nothing") == 0)
        #expect(throws: BitstreamError.self) { try reader.flag("past the end") }
    }

    @Test func thirtyTwoBitField() throws {
        var reader = BitReader(rbsp: [0x80, 0x00, 0x00, 0x01, 0xFF])
        _ = try reader.u(1, "skip")
        #expect(try reader.u(32, "num_units_in_tick") == 0x0000_0003)
    }

    @Test func writerRoundTripsMixedFields() throws {
        var writer = BitBuilder()
        writer.u(0x64, bits: 8)
        writer.flag(true)
        writer.u(5, bits: 3)
        writer.u(UInt32.max, bits: 32)
        writer.ue(12_345)
        writer.se(-77)
        writer.rbspTrailingBits()
        #expect(writer.isByteAligned)
        var reader = BitReader(rbsp: writer.bytes)
        #expect(try reader.u(8, "a") == 0x64)
        #expect(try reader.flag("b"))
        #expect(try reader.u(3, "c") == 5)
        #expect(try reader.u(32, "d") == UInt32.max)
        #expect(try reader.ue("e") == 12_345)
        #expect(try reader.se("f") == -77)
        #expect(!reader.moreRBSPData())
        #expect(try reader.flag("rbsp_stop_one_bit"))
    }

    @Test func trailingBitsAndAlignment() {
        var writer = BitBuilder()
        writer.u(0b101, bits: 3)
        writer.rbspTrailingBits()
        #expect(writer.bytes == [0b1011_0000])
        writer.rbspTrailingBits()
        #expect(writer.bytes == [0b1011_0000, 0b1000_0000])
        writer.append(bytes: [0x12])
        #expect(writer.bytes == [0b1011_0000, 0b1000_0000, 0x12])
        #expect(writer.bitCount == 24)
    }

    @Test func moreRBSPDataStopsAtTheStopBit() throws {
        // 1 bit of data, then the stop bit, then zero alignment bits and a cabac_zero_word.
        var reader = BitReader(rbsp: [0b1100_0000, 0x00, 0x00])
        #expect(reader.moreRBSPData())
        _ = try reader.flag("data")
        #expect(!reader.moreRBSPData())
        #expect(!BitReader(rbsp: [0, 0]).moreRBSPData())
    }

    @Test func byteAlignSkipsToTheNextByte() throws {
        var reader = BitReader(rbsp: [0xFF, 0x42])
        _ = try reader.u(3, "x")
        reader.byteAlign()
        #expect(reader.isByteAligned)
        #expect(try reader.u(8, "y") == 0x42)
        reader.byteAlign()
        #expect(reader.bitPosition == 16)
    }
}

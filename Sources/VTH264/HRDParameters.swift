/// hrd_parameters() (Annex E.1.2): the hypothetical reference decoder's buffer model, sent by
/// encoders running with a VBV (constant or capped bit rate).
public struct HRDParameters: Sendable, Equatable {
    /// One coded picture buffer specification.
    public struct CodedPictureBuffer: Sendable, Equatable {
        /// bit_rate_value_minus1 + 1.
        public var bitRateValue: Int
        /// cpb_size_value_minus1 + 1.
        public var cpbSizeValue: Int
        public var constantBitRate: Bool

        public init(bitRateValue: Int, cpbSizeValue: Int, constantBitRate: Bool) {
            self.bitRateValue = bitRateValue
            self.cpbSizeValue = cpbSizeValue
            self.constantBitRate = constantBitRate
        }
    }

    public var bitRateScale: Int
    public var cpbSizeScale: Int
    /// cpb_cnt_minus1 + 1 entries, 1 to 32.
    public var codedPictureBuffers: [CodedPictureBuffer]
    /// initial_cpb_removal_delay_length_minus1 + 1.
    public var initialCpbRemovalDelayLength: Int
    /// cpb_removal_delay_length_minus1 + 1.
    public var cpbRemovalDelayLength: Int
    /// dpb_output_delay_length_minus1 + 1.
    public var dpbOutputDelayLength: Int
    public var timeOffsetLength: Int

    public init(bitRateScale: Int, cpbSizeScale: Int, codedPictureBuffers: [CodedPictureBuffer],
                initialCpbRemovalDelayLength: Int = 24, cpbRemovalDelayLength: Int = 24,
                dpbOutputDelayLength: Int = 24, timeOffsetLength: Int = 24) {
        self.bitRateScale = bitRateScale
        self.cpbSizeScale = cpbSizeScale
        self.codedPictureBuffers = codedPictureBuffers
        self.initialCpbRemovalDelayLength = initialCpbRemovalDelayLength
        self.cpbRemovalDelayLength = cpbRemovalDelayLength
        self.dpbOutputDelayLength = dpbOutputDelayLength
        self.timeOffsetLength = timeOffsetLength
    }

    /// Bits per second of buffer `index` (E-37): value × 2^(6 + bit_rate_scale).
    public func bitRate(_ index: Int = 0) -> Int {
        codedPictureBuffers[index].bitRateValue << (6 + bitRateScale)
    }

    /// Buffer size in bits of buffer `index` (E-38): value × 2^(4 + cpb_size_scale).
    public func cpbSize(_ index: Int = 0) -> Int {
        codedPictureBuffers[index].cpbSizeValue << (4 + cpbSizeScale)
    }

    static func read(from reader: inout BitReader) throws(BitstreamError) -> HRDParameters {
        let count = try reader.ue("cpb_cnt_minus1", in: 0...31) + 1
        let bitRateScale = Int(try reader.u(4, "bit_rate_scale"))
        let cpbSizeScale = Int(try reader.u(4, "cpb_size_scale"))
        var buffers: [CodedPictureBuffer] = []
        for _ in 0..<count {
            let bitRate = Int(try reader.ue("bit_rate_value_minus1")) + 1
            let cpbSize = Int(try reader.ue("cpb_size_value_minus1")) + 1
            let cbr = try reader.flag("cbr_flag")
            buffers.append(CodedPictureBuffer(bitRateValue: bitRate, cpbSizeValue: cpbSize, constantBitRate: cbr))
        }
        return HRDParameters(
            bitRateScale: bitRateScale, cpbSizeScale: cpbSizeScale, codedPictureBuffers: buffers,
            initialCpbRemovalDelayLength: Int(try reader.u(5, "initial_cpb_removal_delay_length_minus1")) + 1,
            cpbRemovalDelayLength: Int(try reader.u(5, "cpb_removal_delay_length_minus1")) + 1,
            dpbOutputDelayLength: Int(try reader.u(5, "dpb_output_delay_length_minus1")) + 1,
            timeOffsetLength: Int(try reader.u(5, "time_offset_length")))
    }

    func write(to writer: inout BitBuilder) {
        writer.ue(codedPictureBuffers.count - 1)
        writer.u(bitRateScale, bits: 4)
        writer.u(cpbSizeScale, bits: 4)
        for buffer in codedPictureBuffers {
            writer.ue(buffer.bitRateValue - 1)
            writer.ue(buffer.cpbSizeValue - 1)
            writer.flag(buffer.constantBitRate)
        }
        writer.u(initialCpbRemovalDelayLength - 1, bits: 5)
        writer.u(cpbRemovalDelayLength - 1, bits: 5)
        writer.u(dpbOutputDelayLength - 1, bits: 5)
        writer.u(timeOffsetLength, bits: 5)
    }
}

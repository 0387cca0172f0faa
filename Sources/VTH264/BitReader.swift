/// Reads the bit-level syntax of H.264 (clause 7.2): fixed-width fields u(n), exp-Golomb
/// ue(v) and se(v), over RBSP bytes (emulation prevention already removed).
///
/// Every read names the field it reads, so that running out of data or meeting an impossible
/// value produces an error that says which field of which structure was broken.
public struct BitReader: Sendable {
    public let bytes: [UInt8]
    /// The structure being read ("SPS", "slice header"), for error messages.
    public let syntax: String
    /// Bits consumed so far, from the most significant bit of the first byte.
    public private(set) var bitPosition = 0

    public init(rbsp: [UInt8], syntax: String = "RBSP") {
        self.bytes = rbsp
        self.syntax = syntax
    }

    public var bitCount: Int { bytes.count * 8 }
    public var bitsRemaining: Int { bitCount - bitPosition }
    public var isByteAligned: Bool { bitPosition & 7 == 0 }

    /// u(n) for n in 0...32, most significant bit first.
    public mutating func u(_ n: Int, _ field: String) throws(BitstreamError) -> UInt32 {
        precondition((0...32).contains(n), "u(n) reads 0 to 32 bits, not \(n)")
        guard n <= bitsRemaining else {
            throw .endOfData(syntax: syntax, field: field, bitOffset: bitCount)
        }
        var value: UInt64 = 0
        var remaining = n
        var position = bitPosition
        while remaining > 0 {
            let available = 8 - (position & 7)
            let take = min(available, remaining)
            let chunk = (UInt64(bytes[position >> 3]) >> (available - take)) & ((1 << take) - 1)
            value = (value << take) | chunk
            remaining -= take
            position += take
        }
        bitPosition = position
        return UInt32(value)
    }

    /// u(n) checked against the values the standard allows.
    public mutating func u(_ n: Int, _ field: String, in range: ClosedRange<Int>) throws(BitstreamError) -> Int {
        try checked(Int(u(n, field)), field, range)
    }

    public mutating func flag(_ field: String) throws(BitstreamError) -> Bool {
        try u(1, field) == 1
    }

    /// ue(v) (clause 9.1). A valid code has at most 31 leading zero bits, which gives the
    /// largest value the standard uses, 2^32 − 2; more zeros can only be corrupt data.
    public mutating func ue(_ field: String) throws(BitstreamError) -> UInt32 {
        let start = bitPosition
        var leadingZeros = 0
        while true {
            guard bitPosition < bitCount else {
                throw .endOfData(syntax: syntax, field: field, bitOffset: bitCount)
            }
            if bytes[bitPosition >> 3] & (0x80 >> UInt8(bitPosition & 7)) != 0 { break }
            leadingZeros += 1
            bitPosition += 1
            if leadingZeros > 31 {
                throw .expGolombTooLong(syntax: syntax, field: field, bitOffset: start)
            }
        }
        bitPosition += 1
        let suffix = try u(leadingZeros, field)
        return UInt32((UInt64(1) << leadingZeros) - 1 + UInt64(suffix))
    }

    /// se(v) (clause 9.1.1): codeNum k maps to (−1)^(k+1) × ⌈k ÷ 2⌉.
    public mutating func se(_ field: String) throws(BitstreamError) -> Int32 {
        let k = Int64(try ue(field))
        return Int32(k & 1 == 1 ? (k + 1) / 2 : -(k / 2))
    }

    /// ue(v) checked against the values the standard allows.
    public mutating func ue(_ field: String, in range: ClosedRange<Int>) throws(BitstreamError) -> Int {
        try checked(Int(ue(field)), field, range)
    }

    /// se(v) checked against the values the standard allows.
    public mutating func se(_ field: String, in range: ClosedRange<Int>) throws(BitstreamError) -> Int {
        try checked(Int(se(field)), field, range)
    }

    public mutating func skip(bits n: Int, _ field: String) throws(BitstreamError) {
        guard n <= bitsRemaining else {
            throw .endOfData(syntax: syntax, field: field, bitOffset: bitCount)
        }
        bitPosition += n
    }

    /// Moves to the next byte boundary (no-op when aligned), without checking the skipped
    /// bits: alignment bits are all zeros in some structures and all ones in others.
    public mutating func byteAlign() {
        bitPosition = min(bitCount, (bitPosition + 7) & ~7)
    }

    /// more_rbsp_data() (clause 7.2): true while data remains before the rbsp_stop_one_bit,
    /// which is the last bit set to 1 in the RBSP.
    public func moreRBSPData() -> Bool {
        guard let last = bytes.lastIndex(where: { $0 != 0 }) else { return false }
        let stopBit = last * 8 + 7 - bytes[last].trailingZeroBitCount
        return bitPosition < stopBit
    }

    private func checked(_ value: Int, _ field: String, _ range: ClosedRange<Int>) throws(BitstreamError) -> Int {
        guard range.contains(value) else {
            throw .valueOutOfRange(syntax: syntax, field: field, value: value, range: range)
        }
        return value
    }
}

/// Writes the bit-level syntax of H.264 (clause 7.2): u(n), ue(v), se(v) and the RBSP
/// trailing bits, into RBSP bytes. Encoders that write their own parameter sets and slice
/// headers (VA-API) build them with it.
///
/// The values come from the program, not from input data, so a value that cannot be coded
/// (a negative length, 33 bits into u(32)) is a programming error and stops the program.
public struct BitBuilder: Sendable {
    /// The bits written so far; a partly written last byte is padded with zero bits.
    public private(set) var bytes: [UInt8] = []
    public private(set) var bitCount = 0

    public init(capacity: Int = 64) {
        bytes.reserveCapacity(capacity)
    }

    public var isByteAligned: Bool { bitCount & 7 == 0 }

    /// u(n): the low `n` bits of `value`, most significant first.
    public mutating func u(_ value: UInt32, bits n: Int) {
        precondition((0...32).contains(n), "u(n) writes 0 to 32 bits, not \(n)")
        precondition(n == 32 || value >> UInt32(n) == 0, "\(value) does not fit in \(n) bits")
        var remaining = n
        while remaining > 0 {
            if isByteAligned { bytes.append(0) }
            let free = 8 - (bitCount & 7)
            let take = min(free, remaining)
            let chunk = UInt8(truncatingIfNeeded: (UInt64(value) >> (remaining - take)) & ((1 << take) - 1))
            bytes[bytes.count - 1] |= chunk << (free - take)
            remaining -= take
            bitCount += take
        }
    }

    /// u(n) for a field the program holds as an `Int`.
    public mutating func u(_ value: Int, bits n: Int) {
        precondition(value >= 0 && UInt64(value) <= UInt64(UInt32.max), "\(value) is not a u(\(n)) value")
        u(UInt32(value), bits: n)
    }

    public mutating func flag(_ value: Bool) {
        u(value ? 1 : 0, bits: 1)
    }

    /// ue(v) for 0 ... 2^32 − 2, the values a code with at most 31 leading zeros can carry.
    public mutating func ue(_ value: UInt32) {
        precondition(value < UInt32.max, "ue(v) cannot code \(value)")
        let codeNumPlusOne = value + 1
        let leadingZeros = UInt32.bitWidth - 1 - codeNumPlusOne.leadingZeroBitCount
        u(0, bits: leadingZeros)
        u(codeNumPlusOne, bits: leadingZeros + 1)
    }

    /// ue(v) for a field the program holds as an `Int`.
    public mutating func ue(_ value: Int) {
        precondition(value >= 0 && value < Int(UInt32.max), "ue(v) cannot code \(value)")
        ue(UInt32(value))
    }

    /// se(v): positive k as codeNum 2k − 1, zero and negative k as −2k.
    public mutating func se(_ value: Int32) {
        precondition(value != Int32.min, "se(v) cannot code \(value)")
        let k = Int64(value)
        ue(UInt32(k > 0 ? 2 * k - 1 : -2 * k))
    }

    /// se(v) for a field the program holds as an `Int`.
    public mutating func se(_ value: Int) {
        precondition(value > Int(Int32.min) && value <= Int(Int32.max), "se(v) cannot code \(value)")
        se(Int32(value))
    }

    /// rbsp_trailing_bits(): the stop bit, then zero bits to the byte boundary.
    public mutating func rbspTrailingBits() {
        flag(true)
        alignWithZeros()
    }

    /// Zero bits up to the next byte boundary (no-op when aligned).
    public mutating func alignWithZeros() {
        bitCount = (bitCount + 7) & ~7
    }

    /// Whole bytes, such as SEI payload bytes; the writer must be byte aligned.
    public mutating func append<Bytes: Sequence<UInt8>>(bytes more: Bytes) {
        precondition(isByteAligned, "bytes can only be appended at a byte boundary")
        bytes.append(contentsOf: more)
        bitCount = bytes.count * 8
    }
}

/// EBSP → RBSP (clause 7.3.1): drops each emulation_prevention_three_byte, the 0x03 that
/// follows two zero bytes, including one at the very end of the NAL unit.
///
/// Input of any kind is accepted; a 0x03 after two zeros is removed even when the byte after
/// it is not 0x00–0x03 (invalid data that decoders read the same way).
public func removeEmulationPrevention(_ ebsp: [UInt8]) -> [UInt8] {
    ebsp.withUnsafeBufferPointer { removeEmulationPrevention($0) }
}

/// EBSP → RBSP for part of a larger buffer, such as the first bytes of a slice.
public func removeEmulationPrevention(_ ebsp: ArraySlice<UInt8>) -> [UInt8] {
    ebsp.withUnsafeBufferPointer { removeEmulationPrevention($0) }
}

func removeEmulationPrevention(_ ebsp: UnsafeBufferPointer<UInt8>) -> [UInt8] {
    var rbsp: [UInt8] = []
    rbsp.reserveCapacity(ebsp.count)
    var zeros = 0
    for byte in ebsp {
        if zeros >= 2 && byte == 0x03 {
            zeros = 0
            continue
        }
        rbsp.append(byte)
        zeros = byte == 0 ? zeros + 1 : 0
    }
    return rbsp
}

/// RBSP → EBSP (clause 7.4.1): inserts 0x03 wherever two zero bytes would be followed by a
/// byte 0x00–0x03, so that no start code (00 00 01) or its prefix appears inside a NAL unit.
///
/// At the end: an RBSP that ends in two zero bytes (only cabac_zero_words do) gets a final
/// 0x03, as 7.4.1 requires, because an Annex B reader would otherwise take those zeros for
/// trailing_zero_8bits before the next start code. 7.4.1 words the rule as "the last byte is
/// 0x00"; a valid RBSP never ends in a single zero byte (its last byte holds the stop bit),
/// and appending 0x03 after a lone zero could not be undone by
/// `removeEmulationPrevention`, so only the two-zero case appends. With that,
/// `removeEmulationPrevention(addEmulationPrevention(x)) == x` for every byte string.
public func addEmulationPrevention(_ rbsp: [UInt8]) -> [UInt8] {
    var ebsp: [UInt8] = []
    ebsp.reserveCapacity(rbsp.count + rbsp.count / 64 + 4)
    var zeros = 0
    for byte in rbsp {
        if zeros == 2 && byte <= 0x03 {
            ebsp.append(0x03)
            zeros = 0
        }
        ebsp.append(byte)
        zeros = byte == 0 ? zeros + 1 : 0
    }
    if zeros == 2 { ebsp.append(0x03) }
    return ebsp
}

extension NALUnitHeader {
    /// A complete NAL unit: this header byte, then `rbsp` with emulation prevention added.
    public func nalUnit(rbsp: [UInt8]) -> [UInt8] {
        [byte] + addEmulationPrevention(rbsp)
    }
}

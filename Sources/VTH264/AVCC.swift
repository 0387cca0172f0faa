/// The length-prefixed NAL unit framing of ISO/IEC 14496-15 ("AVCC"): each NAL unit preceded
/// by its size as a big-endian integer of 1, 2 or 4 bytes. This is what a `CompressionSession`
/// hands out and what MP4 stores.
public enum AVCC {
    /// The byte ranges of the NAL units in one access unit, without their length prefixes.
    ///
    /// A NAL unit of length zero carries nothing (not even a header byte), so it is skipped
    /// rather than reported as an empty range.
    public static func nalUnitRanges(in data: UnsafeRawBufferPointer,
                                     lengthSize: Int) throws(BitstreamError) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        try forEachNALUnit(in: data, lengthSize: lengthSize) { ranges.append($0) }
        return ranges
    }

    public static func nalUnitRanges(in data: [UInt8], lengthSize: Int) throws(BitstreamError) -> [Range<Int>] {
        try withBytes(data) { (bytes) throws(BitstreamError) in
            try nalUnitRanges(in: bytes, lengthSize: lengthSize)
        }
    }

    /// NAL units in AVCC form: each preceded by its length in `lengthSize` big-endian bytes.
    public static func lengthPrefixed(_ nalUnits: [[UInt8]], lengthSize: Int = 4) -> [UInt8] {
        precondition([1, 2, 4].contains(lengthSize), "AVCC lengths are 1, 2 or 4 bytes")
        var out: [UInt8] = []
        for nal in nalUnits {
            precondition(nal.count >> (8 * lengthSize) == 0, "a NAL unit longer than its length field holds")
            for shift in stride(from: 8 * (lengthSize - 1), through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: nal.count >> shift))
            }
            out.append(contentsOf: nal)
        }
        return out
    }

    /// Annex B → AVCC with 4-byte lengths: each NAL unit of `AnnexB.nalUnitRanges(in:)`
    /// prefixed with its size. Bytes before the first start code are dropped.
    public static func fromAnnexB(_ data: [UInt8]) -> [UInt8] {
        fromAnnexB(data, parameterSetsApart: false).accessUnit
    }

    /// An access unit as an encoder's Annex B output holds it, split the way a format
    /// description wants it: the SPS and PPS NAL units apart (without start codes), access
    /// unit delimiters and empty units dropped, and every other NAL unit in AVCC with 4-byte
    /// lengths.
    public struct SplitAccessUnit: Equatable, Sendable {
        public var accessUnit: [UInt8]
        public var sequenceParameterSets: [[UInt8]]
        public var pictureParameterSets: [[UInt8]]
    }

    /// Annex B → AVCC with 4-byte lengths, and with `parameterSetsApart`, SPS/PPS/AUD out of
    /// the access unit (`SplitAccessUnit`).
    public static func fromAnnexB(_ data: [UInt8], parameterSetsApart: Bool) -> SplitAccessUnit {
        data.withUnsafeBytes { fromAnnexB($0, parameterSetsApart: parameterSetsApart) }
    }

    /// `fromAnnexB(_:parameterSetsApart:)` for bytes in place (a camera's buffer), copied once.
    public static func fromAnnexB(_ raw: UnsafeRawBufferPointer, parameterSetsApart: Bool) -> SplitAccessUnit {
        fromAnnexB(raw, units: AnnexB.nalUnitRanges(in: raw), parameterSetsApart: parameterSetsApart)
    }

    /// `fromAnnexB(_:parameterSetsApart:)` of bytes whose NAL units
    /// (`AnnexB.nalUnitRanges(in: raw)`) were found already.
    static func fromAnnexB(_ raw: UnsafeRawBufferPointer, units ranges: [Range<Int>],
                           parameterSetsApart: Bool) -> SplitAccessUnit {
        let bytes = raw.assumingMemoryBound(to: UInt8.self)
        var split = SplitAccessUnit(accessUnit: [], sequenceParameterSets: [], pictureParameterSets: [])
        split.accessUnit.reserveCapacity(ranges.reduce(0) { $0 + 4 + $1.count })
        for range in ranges {
            if parameterSetsApart {
                // An empty unit between two start codes carries nothing to keep.
                if range.isEmpty { continue }
                switch NALUnitHeader(bytes[range.lowerBound]).type {
                case .sps:
                    split.sequenceParameterSets.append(Array(bytes[range]))
                    continue
                case .pps:
                    split.pictureParameterSets.append(Array(bytes[range]))
                    continue
                case .accessUnitDelimiter:
                    continue
                default:
                    break
                }
            }
            let length = UInt32(truncatingIfNeeded: range.count)
            split.accessUnit.append(UInt8(truncatingIfNeeded: length >> 24))
            split.accessUnit.append(UInt8(truncatingIfNeeded: length >> 16))
            split.accessUnit.append(UInt8(truncatingIfNeeded: length >> 8))
            split.accessUnit.append(UInt8(truncatingIfNeeded: length))
            split.accessUnit.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[range]))
        }
        return split
    }

    /// Walks the length prefixes of one access unit, calling `body` with each non-empty NAL
    /// unit's range. Throws before reading any length or NAL unit that runs past the end.
    static func forEachNALUnit(in data: UnsafeRawBufferPointer, lengthSize: Int,
                               _ body: (Range<Int>) -> Void) throws(BitstreamError) {
        guard lengthSize == 1 || lengthSize == 2 || lengthSize == 4 else {
            throw .invalidNALUnitLengthSize(lengthSize)
        }
        var offset = 0
        while offset < data.count {
            guard data.count - offset >= lengthSize else {
                throw .truncatedLengthField(offset: offset, lengthSize: lengthSize, accessUnitSize: data.count)
            }
            var length = 0
            for index in offset..<offset + lengthSize {
                length = length << 8 | Int(data[index])
            }
            let start = offset + lengthSize
            guard length <= data.count - start else {
                throw .nalUnitPastEnd(length: length, offset: offset, accessUnitSize: data.count)
            }
            if length > 0 { body(start..<start + length) }
            offset = start + length
        }
    }
}

/// `[UInt8].withUnsafeBytes` for a body with a typed error, which the standard library's
/// overload would widen to `any Error`.
func withBytes<R>(_ data: [UInt8],
                  _ body: (UnsafeRawBufferPointer) throws(BitstreamError) -> R) throws(BitstreamError) -> R {
    let result: Result<R, BitstreamError> = data.withUnsafeBytes { bytes in
        do throws(BitstreamError) { return .success(try body(bytes)) } catch { return .failure(error) }
    }
    return try result.get()
}

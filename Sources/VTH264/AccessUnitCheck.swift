/// A cheap check of an H.264 access unit as a camera delivered it (Annex B), for storing it
/// without decoding: its NAL units are well formed and make one picture a decoder can start
/// on. What it sees (H.264 clause 7.4.1): a NAL unit with forbidden_zero_bit set or of a type
/// the standard reserves, no slice, IDR and non-IDR slices in
/// one picture, a picture that does not begin with its first macroblock, an IDR, SPS or PPS
/// with nal_ref_idc 0, and an IDR whose parameter sets are neither in the access unit nor seen
/// before. What it does not see, damage inside a slice's data, only a decode finds.
public enum AccessUnitCheck {
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        case noStartCode
        case noSlice
        /// forbidden_zero_bit set: the unit was damaged on its way.
        case forbiddenBit(unit: Int)
        case reservedType(unit: Int, type: UInt8)
        case mixedSlices
        /// The first slice does not begin at macroblock 0: the start of the picture is missing.
        case pictureStartMissing
        /// An IDR, SPS or PPS that says nothing refers to it (nal_ref_idc 0).
        case unreferenced(unit: Int, type: UInt8)
        case noParameterSets

        public var description: String {
            switch self {
            case .noStartCode: "it does not begin with an Annex B start code"
            case .noSlice: "it holds no slice"
            case .forbiddenBit(let unit): "NAL unit \(unit) has its forbidden bit set"
            case .reservedType(let unit, let type): "NAL unit \(unit) is of reserved type \(type)"
            case .mixedSlices: "it mixes IDR and non-IDR slices"
            case .pictureStartMissing: "its first slice does not start the picture"
            case .unreferenced(let unit, let type): "NAL unit \(unit) (type \(type)) has nal_ref_idc 0"
            case .noParameterSets: "it is an IDR picture with no SPS and PPS before it"
            }
        }
    }

    /// What is wrong with the access unit in `bytes` (nil: nothing this check sees).
    /// `parameterSetsSeen`: an SPS and a PPS came before it in the stream.
    public static func problem(_ bytes: UnsafeRawBufferPointer, parameterSetsSeen: Bool) -> Problem? {
        if case .failure(let problem) = examine(bytes, parameterSetsSeen: parameterSetsSeen) { return problem }
        return nil
    }

    /// `problem`, or for a unit without one whether its picture is an IDR.
    static func examine(_ bytes: UnsafeRawBufferPointer, parameterSetsSeen: Bool) -> Result<Bool, Problem> {
        examine(bytes, units: AnnexB.nalUnitRanges(in: bytes), parameterSetsSeen: parameterSetsSeen)
    }

    /// `examine` of a unit whose NAL units (`AnnexB.nalUnitRanges(in: bytes)`) were found
    /// already, so a caller that goes on to use them scans the bytes once.
    static func examine(_ bytes: UnsafeRawBufferPointer, units: [Range<Int>],
                        parameterSetsSeen: Bool) -> Result<Bool, Problem> {
        var first = 0
        while first < bytes.count, bytes[first] == 0 { first += 1 }
        guard first >= 2, first < bytes.count, bytes[first] == 1 else { return .failure(.noStartCode) }
        var sawIDR = false, sawNonIDR = false, sawSPS = false, sawPPS = false
        var firstSlice = true
        for (index, range) in units.enumerated() {
            let header = NALUnitHeader(bytes[range.lowerBound])
            let type = header.type
            if header.forbiddenZeroBit { return .failure(.forbiddenBit(unit: index)) }
            switch type {
            case .reserved17, .reserved18, .reserved22, .reserved23:
                return .failure(.reservedType(unit: index, type: type.rawValue))
            case .sliceIDR, .sps, .pps:
                if header.refIdc == 0 { return .failure(.unreferenced(unit: index, type: type.rawValue)) }
            default:
                break
            }
            switch type {
            case .sps: sawSPS = true
            case .pps: sawPPS = true
            case .sliceIDR, .sliceNonIDR, .sliceDataPartitionA:
                if type == .sliceIDR { sawIDR = true } else { sawNonIDR = true }
                if firstSlice {
                    firstSlice = false
                    // first_mb_in_slice is ue(v): 0 is the single bit 1.
                    guard range.count > 1, bytes[range.lowerBound + 1] & 0x80 != 0 else { return .failure(.pictureStartMissing) }
                }
            default:
                break
            }
        }
        if !sawIDR && !sawNonIDR { return .failure(.noSlice) }
        if sawIDR && sawNonIDR { return .failure(.mixedSlices) }
        if sawIDR && !(parameterSetsSeen || (sawSPS && sawPPS)) { return .failure(.noParameterSets) }
        return .success(sawIDR)
    }

    /// `problem` of an array's bytes.
    public static func problem(_ bytes: [UInt8], parameterSetsSeen: Bool) -> Problem? {
        bytes.withUnsafeBytes { problem($0, parameterSetsSeen: parameterSetsSeen) }
    }
}

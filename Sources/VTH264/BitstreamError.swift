import VTCore

/// Malformed or unsupported H.264 data. Every case says where the data went wrong, so a user
/// can tell a truncated file from a stream that is not H.264 at all.
///
/// Bad data is bad input, not a program failure: the exit status is `.usage`.
public enum BitstreamError: ReportableError, Equatable {
    /// An AVCC length prefix size other than 1, 2 or 4 bytes.
    case invalidNALUnitLengthSize(Int)
    /// The access unit ends inside a NAL unit length prefix.
    case truncatedLengthField(offset: Int, lengthSize: Int, accessUnitSize: Int)
    /// A NAL unit length prefix claims more bytes than the access unit has left.
    case nalUnitPastEnd(length: Int, offset: Int, accessUnitSize: Int)
    /// Input with no Annex B start code anywhere.
    case noStartCode(size: Int)

    /// A syntax structure (`syntax`, such as "SPS") ended while reading `field`.
    case endOfData(syntax: String, field: String, bitOffset: Int)
    /// An exp-Golomb code with more than 31 leading zero bits, which no valid ue(v) has.
    case expGolombTooLong(syntax: String, field: String, bitOffset: Int)
    /// A field holds a value the standard does not allow.
    case valueOutOfRange(syntax: String, field: String, value: Int, range: ClosedRange<Int>)
    /// A parser was handed a NAL unit of another type.
    case unexpectedNALUnitType(expected: NALUnitType, found: NALUnitType)
    /// A NAL unit without even its header byte.
    case emptyNALUnit(expected: NALUnitType)
    /// Valid H.264 that uses a feature this program does not read.
    case unsupported(syntax: String, feature: String)

    /// An avcC record ended while reading `field`.
    case avcCTruncated(field: String, offset: Int, size: Int)
    /// An avcC record whose configurationVersion is not 1.
    case avcCVersion(UInt8)
    /// Parameter sets missing where a decoder needs them.
    case missingParameterSet(NALUnitType)
    /// A parameter set longer than the avcC record's 16-bit length field can carry.
    case parameterSetTooLarge(NALUnitType, size: Int)
    /// More parameter sets of one kind than the avcC record's count field can carry.
    case tooManyParameterSets(NALUnitType, count: Int, maximum: Int)

    public var exitStatus: ExitStatus { .usage }

    public var description: String {
        switch self {
        case .invalidNALUnitLengthSize(let size):
            return "NAL unit length size \(size) is not valid: AVCC length prefixes are 1, 2 or 4 bytes"
        case .truncatedLengthField(let offset, let lengthSize, let total):
            return "the \(total)-byte access unit ends inside the \(lengthSize)-byte NAL unit "
                + "length at offset \(offset): the data is truncated or its length size is wrong"
        case .nalUnitPastEnd(let length, let offset, let total):
            return "NAL unit length \(length) at offset \(offset) runs past the end of the "
                + "\(total)-byte access unit: the data is truncated or its length size is wrong"
        case .noStartCode(let size):
            return "no start code (00 00 01) in \(size) bytes: the input is not an H.264 "
                + "Annex B stream"
        case .endOfData(let syntax, let field, let bit):
            return "the \(syntax) ends at bit \(bit) while reading \(field): "
                + "the NAL unit is truncated or corrupt"
        case .expGolombTooLong(let syntax, let field, let bit):
            return "\(field) at bit \(bit) of the \(syntax) is an exp-Golomb code with more than "
                + "31 leading zero bits: the data is corrupt"
        case .valueOutOfRange(let syntax, let field, let value, let range):
            return "\(syntax) \(field) is \(value), outside the allowed "
                + "\(range.lowerBound)...\(range.upperBound): the data is corrupt"
        case .unexpectedNALUnitType(let expected, let found):
            return "expected a NAL unit of type \(expected.rawValue) (\(expected.name)), found "
                + "type \(found.rawValue) (\(found.name))"
        case .emptyNALUnit(let expected):
            return "an empty NAL unit where \(Self.name(expected)) was expected: the data is truncated"
        case .unsupported(let syntax, let feature):
            return "the \(syntax) uses \(feature), which vtrecord does not support"
        case .avcCTruncated(let field, let offset, let size):
            return "the \(size)-byte avcC record ends at offset \(offset) while reading \(field): "
                + "it is truncated or not an avcC record"
        case .avcCVersion(let version):
            return "avcC configurationVersion is \(version), not 1: "
                + "this is not an AVC decoder configuration record"
        case .missingParameterSet(let type):
            return "no \(Self.name(type)): a decoder needs at least one SPS and one PPS"
        case .parameterSetTooLarge(let type, let size):
            return "a \(size)-byte \(Self.name(type)) does not fit in an avcC record (at most 65535 bytes)"
        case .tooManyParameterSets(let type, let count, let maximum):
            return "\(count) \(Self.name(type))s do not fit in an avcC record (at most \(maximum))"
        }
    }

    /// The abbreviations people know parameter sets by; other types by their full name.
    private static func name(_ type: NALUnitType) -> String {
        switch type {
        case .sps: "SPS"
        case .pps: "PPS"
        default: type.name.prefix(1).lowercased() + type.name.dropFirst()
        }
    }
}

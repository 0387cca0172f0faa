import VTCore

/// The AVC decoder configuration record ("avcC", ISO/IEC 14496-15 5.3.3.1) that MP4 and
/// Matroska store in place of in-band parameter sets, and the VideoToolbox-style ways to make
/// a `VideoFormatDescription`.
///
/// Width and height always come from the first SPS (after cropping) rather than from the
/// caller: the SPS is what a decoder will use, so a description cannot disagree with its
/// own stream.
extension VideoFormatDescription {
    /// A description from SPS and PPS NAL units in any order, as
    /// `CMVideoFormatDescriptionCreateFromH264ParameterSets` takes them.
    public init(h264ParameterSets parameterSets: [[UInt8]], nalUnitLengthSize: Int = 4) throws(BitstreamError) {
        var sequence: [[UInt8]] = []
        var picture: [[UInt8]] = []
        for nalUnit in parameterSets {
            guard let header = nalUnit.first else { throw .emptyNALUnit(expected: .sps) }
            switch NALUnitType(headerByte: header) {
            case .sps: sequence.append(nalUnit)
            case .pps: picture.append(nalUnit)
            case let other: throw .unexpectedNALUnitType(expected: .sps, found: other)
            }
        }
        self = try Self.checked(sequence, picture, nalUnitLengthSize: nalUnitLengthSize)
    }

    /// A description from an avcC record. The optional High-profile trailer (chroma format,
    /// bit depths, SPS extensions) is not read: the SPS carries the same values, and many
    /// writers leave the trailer out.
    public init(avcC record: [UInt8]) throws(BitstreamError) {
        var reader = RecordReader(bytes: record)
        let version = try reader.byte("configurationVersion")
        guard version == 1 else { throw .avcCVersion(version) }
        _ = try reader.bytes(3, "AVCProfileIndication, profile_compatibility and AVCLevelIndication")
        let lengthSize = Int(try reader.byte("lengthSizeMinusOne") & 0x3) + 1
        let spsCount = Int(try reader.byte("numOfSequenceParameterSets") & 0x1F)
        var sequence: [[UInt8]] = []
        for _ in 0..<spsCount {
            let length = try reader.uint16("sequenceParameterSetLength")
            sequence.append(try reader.bytes(length, "sequenceParameterSetNALUnit"))
        }
        let ppsCount = Int(try reader.byte("numOfPictureParameterSets"))
        var picture: [[UInt8]] = []
        for _ in 0..<ppsCount {
            let length = try reader.uint16("pictureParameterSetLength")
            picture.append(try reader.bytes(length, "pictureParameterSetNALUnit"))
        }
        self = try Self.checked(sequence, picture, nalUnitLengthSize: lengthSize)
    }

    /// Checks what a decoder needs (a valid length size, at least one parseable SPS and one
    /// PPS) and takes the size from the first SPS.
    private static func checked(_ sequence: [[UInt8]], _ picture: [[UInt8]],
                                nalUnitLengthSize: Int) throws(BitstreamError) -> VideoFormatDescription {
        guard [1, 2, 4].contains(nalUnitLengthSize) else { throw .invalidNALUnitLengthSize(nalUnitLengthSize) }
        guard let first = sequence.first else { throw .missingParameterSet(.sps) }
        guard !picture.isEmpty else { throw .missingParameterSet(.pps) }
        for (nalUnits, expected) in [(sequence, NALUnitType.sps), (picture, .pps)] {
            for nalUnit in nalUnits {
                guard let header = nalUnit.first else { throw .emptyNALUnit(expected: expected) }
                let type = NALUnitType(headerByte: header)
                guard type == expected else { throw .unexpectedNALUnitType(expected: expected, found: type) }
            }
        }
        let sps = try SequenceParameterSet(nalUnit: first)
        return VideoFormatDescription(width: sps.width, height: sps.height, sequenceParameterSets: sequence,
                                      pictureParameterSets: picture, nalUnitLengthSize: nalUnitLengthSize)
    }

    /// The avcC record for this description. Profiles 100, 110, 122 and 144 get the trailer
    /// with chroma format and bit depths that ISO/IEC 14496-15 requires for them.
    ///
    /// Throws when the description cannot be stored: no SPS or PPS, a parameter set over
    /// 65535 bytes, more than 31 SPS or 255 PPS, a length size other than 1, 2 or 4, or an
    /// SPS too damaged to read the trailer's values from.
    public func avcC() throws(BitstreamError) -> [UInt8] {
        guard [1, 2, 4].contains(nalUnitLengthSize) else { throw .invalidNALUnitLengthSize(nalUnitLengthSize) }
        guard let first = sequenceParameterSets.first else { throw .missingParameterSet(.sps) }
        guard !pictureParameterSets.isEmpty else { throw .missingParameterSet(.pps) }
        guard sequenceParameterSets.count <= 31 else {
            throw .tooManyParameterSets(.sps, count: sequenceParameterSets.count, maximum: 31)
        }
        guard pictureParameterSets.count <= 255 else {
            throw .tooManyParameterSets(.pps, count: pictureParameterSets.count, maximum: 255)
        }
        let sps = try SequenceParameterSet(nalUnit: first)

        var record: [UInt8] = [1, UInt8(sps.profileIdc), sps.constraintFlags, UInt8(sps.levelIdc),
                               0xFC | UInt8(nalUnitLengthSize - 1),
                               0xE0 | UInt8(sequenceParameterSets.count)]
        try Self.append(sequenceParameterSets, type: .sps, to: &record)
        record.append(UInt8(pictureParameterSets.count))
        try Self.append(pictureParameterSets, type: .pps, to: &record)
        if [100, 110, 122, 144].contains(sps.profileIdc) {
            record.append(0xFC | UInt8(sps.chromaFormatIdc))
            record.append(0xF8 | UInt8(sps.bitDepthLuma - 8))
            record.append(0xF8 | UInt8(sps.bitDepthChroma - 8))
            record.append(0)
        }
        return record
    }

    private static func append(_ parameterSets: [[UInt8]], type: NALUnitType,
                               to record: inout [UInt8]) throws(BitstreamError) {
        for nalUnit in parameterSets {
            guard nalUnit.count <= 0xFFFF else { throw .parameterSetTooLarge(type, size: nalUnit.count) }
            record.append(UInt8(nalUnit.count >> 8))
            record.append(UInt8(nalUnit.count & 0xFF))
            record.append(contentsOf: nalUnit)
        }
    }
}

/// Reads the byte-aligned fields of an avcC record, throwing instead of reading past its end.
private struct RecordReader {
    let bytes: [UInt8]
    var offset = 0

    mutating func byte(_ field: String) throws(BitstreamError) -> UInt8 {
        try bytes(1, field)[0]
    }

    mutating func uint16(_ field: String) throws(BitstreamError) -> Int {
        let pair = try bytes(2, field)
        return Int(pair[0]) << 8 | Int(pair[1])
    }

    mutating func bytes(_ count: Int, _ field: String) throws(BitstreamError) -> [UInt8] {
        guard count <= bytes.count - offset else {
            throw .avcCTruncated(field: field, offset: offset, size: bytes.count)
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }
}

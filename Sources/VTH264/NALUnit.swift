/// `nal_unit_type` (H.264 Table 7-1).
///
/// The field is five bits wide, so every value 0–31 has a case: a stream carrying a type this
/// program has no use for still round-trips and is counted under its own name instead of
/// failing to parse.
public enum NALUnitType: UInt8, Sendable, CaseIterable {
    case unspecified0 = 0
    case sliceNonIDR = 1
    case sliceDataPartitionA = 2
    case sliceDataPartitionB = 3
    case sliceDataPartitionC = 4
    case sliceIDR = 5
    case sei = 6
    case sps = 7
    case pps = 8
    case accessUnitDelimiter = 9
    case endOfSequence = 10
    case endOfStream = 11
    case fillerData = 12
    case spsExtension = 13
    case prefixNALUnit = 14
    case subsetSPS = 15
    case depthParameterSet = 16
    case reserved17 = 17
    case reserved18 = 18
    case sliceAuxiliary = 19
    case sliceExtension = 20
    case sliceExtensionDepthView = 21
    case reserved22 = 22
    case reserved23 = 23
    case unspecified24 = 24
    case unspecified25 = 25
    case unspecified26 = 26
    case unspecified27 = 27
    case unspecified28 = 28
    case unspecified29 = 29
    case unspecified30 = 30
    case unspecified31 = 31

    /// The type in the low five bits of a NAL unit header byte.
    public init(headerByte: UInt8) {
        // Five bits always name a case, so the force-unwrap cannot fail.
        self = NALUnitType(rawValue: headerByte & 0x1F)!
    }

    /// True for VCL NAL units (types 1–5), the ones that carry picture data; everything else
    /// is parameter sets, SEI, delimiters and filler.
    public var isVCL: Bool { (1...5).contains(rawValue) }

    /// A short snake_case name, stable for JSON keys and scripts ("slice_idr", "sps").
    public var key: String {
        switch self {
        case .sliceNonIDR: "slice_non_idr"
        case .sliceDataPartitionA: "slice_partition_a"
        case .sliceDataPartitionB: "slice_partition_b"
        case .sliceDataPartitionC: "slice_partition_c"
        case .sliceIDR: "slice_idr"
        case .sei: "sei"
        case .sps: "sps"
        case .pps: "pps"
        case .accessUnitDelimiter: "access_unit_delimiter"
        case .endOfSequence: "end_of_sequence"
        case .endOfStream: "end_of_stream"
        case .fillerData: "filler_data"
        case .spsExtension: "sps_extension"
        case .prefixNALUnit: "prefix_nal_unit"
        case .subsetSPS: "subset_sps"
        case .depthParameterSet: "depth_parameter_set"
        case .sliceAuxiliary: "slice_auxiliary"
        case .sliceExtension: "slice_extension"
        case .sliceExtensionDepthView: "slice_extension_depth_view"
        case .reserved17, .reserved18, .reserved22, .reserved23: "reserved_\(rawValue)"
        case .unspecified0, .unspecified24, .unspecified25, .unspecified26, .unspecified27,
             .unspecified28, .unspecified29, .unspecified30, .unspecified31:
            "unspecified_\(rawValue)"
        }
    }

    /// The name Table 7-1 gives the type.
    public var name: String {
        switch self {
        case .sliceNonIDR: "Coded slice of a non-IDR picture"
        case .sliceDataPartitionA: "Coded slice data partition A"
        case .sliceDataPartitionB: "Coded slice data partition B"
        case .sliceDataPartitionC: "Coded slice data partition C"
        case .sliceIDR: "Coded slice of an IDR picture"
        case .sei: "Supplemental enhancement information (SEI)"
        case .sps: "Sequence parameter set"
        case .pps: "Picture parameter set"
        case .accessUnitDelimiter: "Access unit delimiter"
        case .endOfSequence: "End of sequence"
        case .endOfStream: "End of stream"
        case .fillerData: "Filler data"
        case .spsExtension: "Sequence parameter set extension"
        case .prefixNALUnit: "Prefix NAL unit"
        case .subsetSPS: "Subset sequence parameter set"
        case .depthParameterSet: "Depth parameter set"
        case .sliceAuxiliary: "Coded slice of an auxiliary coded picture without partitioning"
        case .sliceExtension: "Coded slice extension"
        case .sliceExtensionDepthView: "Coded slice extension for a depth view component"
        case .reserved17, .reserved18, .reserved22, .reserved23: "Reserved (\(rawValue))"
        case .unspecified0, .unspecified24, .unspecified25, .unspecified26, .unspecified27,
             .unspecified28, .unspecified29, .unspecified30, .unspecified31:
            "Unspecified (\(rawValue))"
        }
    }
}

/// The one-byte NAL unit header: forbidden_zero_bit, nal_ref_idc, nal_unit_type.
public struct NALUnitHeader: Sendable, Equatable {
    public var byte: UInt8

    public init(_ byte: UInt8) { self.byte = byte }

    public init(type: NALUnitType, refIdc: UInt8) {
        byte = (refIdc & 0x3) << 5 | type.rawValue
    }

    public var type: NALUnitType { NALUnitType(headerByte: byte) }

    /// 0 for a NAL unit no reference picture depends on; non-zero for parameter sets and
    /// reference slices.
    public var refIdc: UInt8 { (byte >> 5) & 0x3 }

    /// Set only in damaged data: a decoder may drop such a NAL unit.
    public var forbiddenZeroBit: Bool { byte & 0x80 != 0 }
}

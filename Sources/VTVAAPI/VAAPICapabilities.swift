import CVAAPI
import VTCore
import VTH264

/// What one VA-API device offers for H.264 encoding: per profile, the encode entrypoints and
/// their attributes. `vtrecord encoders` prints it; `VAAPIPlan` decides from it.
public struct VAAPICapabilities: Sendable {
    /// The two encode entrypoints: the full one, and the low-power one some Intel parts
    /// (Arc, Meteor Lake) offer alone.
    public enum EntrypointKind: String, Sendable, Encodable {
        case encSlice = "EncSlice"
        case encSliceLP = "EncSliceLP"

        package init?(_ entrypoint: VAEntrypoint) {
            switch entrypoint {
            case VAEntrypointEncSlice: self = .encSlice
            case VAEntrypointEncSliceLP: self = .encSliceLP
            default: return nil
            }
        }

        package var vaEntrypoint: VAEntrypoint {
            switch self {
            case .encSlice: VAEntrypointEncSlice
            case .encSliceLP: VAEntrypointEncSliceLP
            }
        }
    }

    public struct Entrypoint: Sendable, Encodable {
        public var kind: EntrypointKind
        public var yuv420: Bool
        /// VA_RC_* bits.
        public var rateControl: UInt32
        /// VA_ENC_PACKED_HEADER_* bits.
        public var packedHeaders: UInt32
        public var maxReferencesL0: Int
        public var maxReferencesL1: Int
        public var maxSlices: Int
        /// VAConfigAttribEncQualityRange: levels 1 (best) … n (fastest); 0 when not offered.
        public var qualityLevels: Int
        /// The largest picture the entrypoint encodes; nil when the driver does not say.
        public var maxWidth: Int?
        public var maxHeight: Int?

        /// The rate-control modes vtrecord uses that the entrypoint offers.
        public var rateControlModes: [RateControlMode] {
            RateControlMode.allCases.filter { rateControl & $0.vaBit != 0 }
        }

        public var packedHeaderNames: [String] {
            [(VA_ENC_PACKED_HEADER_SEQUENCE, "sequence"), (VA_ENC_PACKED_HEADER_PICTURE, "picture"),
             (VA_ENC_PACKED_HEADER_SLICE, "slice"), (VA_ENC_PACKED_HEADER_MISC, "misc"),
             (VA_ENC_PACKED_HEADER_RAW_DATA, "raw")]
                .filter { packedHeaders & UInt32($0.0) != 0 }.map(\.1)
        }

        enum CodingKeys: String, CodingKey {
            case kind = "entrypoint", rateControlModes = "rate_control", packedHeaderNames = "packed_headers"
            case maxReferencesL0 = "max_refs_l0", maxReferencesL1 = "max_refs_l1", maxSlices = "max_slices"
            case qualityLevels = "quality_levels", maxWidth = "max_width", maxHeight = "max_height"
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(kind, forKey: .kind)
            try c.encode(rateControlModes.map(\.rawValue), forKey: .rateControlModes)
            try c.encode(packedHeaderNames, forKey: .packedHeaderNames)
            try c.encode(maxReferencesL0, forKey: .maxReferencesL0)
            try c.encode(maxReferencesL1, forKey: .maxReferencesL1)
            try c.encode(maxSlices, forKey: .maxSlices)
            try c.encode(qualityLevels, forKey: .qualityLevels)
            try c.encode(maxWidth, forKey: .maxWidth)
            try c.encode(maxHeight, forKey: .maxHeight)
        }
    }

    public struct Profile: Sendable, Encodable {
        public var name: H264Profile
        public var entrypoints: [Entrypoint]

        enum CodingKeys: String, CodingKey { case name = "profile", entrypoints }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name.rawValue, forKey: .name)
            try c.encode(entrypoints, forKey: .entrypoints)
        }
    }

    /// The VA-API rate-control modes vtrecord uses, by the names of `--rate-control`.
    public enum RateControlMode: String, Sendable, CaseIterable {
        case cqp, cbr, vbr
        /// Intel's intelligent constant quality: what `--rate-control crf` maps to.
        case icq

        package var vaBit: UInt32 {
            switch self {
            case .cqp: UInt32(VA_RC_CQP)
            case .cbr: UInt32(VA_RC_CBR)
            case .vbr: UInt32(VA_RC_VBR)
            case .icq: UInt32(VA_RC_ICQ)
            }
        }

        /// The `--rate-control` value that selects this mode.
        package var optionName: String { self == .icq ? "crf" : rawValue }
    }

    public var device: String
    public var vendor: String
    public var apiVersion: String
    /// Only profiles with at least one encode entrypoint.
    public var profiles: [Profile]

    public var offersEncoding: Bool { !profiles.isEmpty }

    public func profile(_ name: H264Profile) -> Profile? {
        profiles.first { $0.name == name }
    }
}

import CVAAPI
import VTCore
import VTH264
import VTVAAPI

/// Why a VA-API device cannot encode what was asked (exit 4 with `--encoder vaapi`; a fallback
/// to x264 with `--encoder auto`).
public struct VAAPIUnusable: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}

/// How a VA-API session encodes, chosen from what the device offers and what the settings ask:
/// profile, entrypoint, rate-control mode, packed headers, B-frames. Making the plan opens
/// nothing, so the choice is made (and refused) before any output exists.
public struct VAAPIPlan: Sendable {
    public var device: String
    public var vendor: String
    public var profile: H264Profile
    public var entrypoint: VAAPICapabilities.EntrypointKind
    public var rateControl: VAAPICapabilities.RateControlMode
    /// The constant quantiser of P-pictures in CQP mode (I: 3 less; B: 2 more, as x264's --qp).
    public var qp: Int
    /// ICQ quality factor (`--crf`), 1 to 51.
    public var quality: Int
    /// CBR and VBR: the peak rate (VBV maximum) and the average, in bit/s, and the HRD buffer
    /// in bits. `--bitrate` alone (abr) is VBR with the peak at twice the average and one second
    /// of the average as buffer, as ffmpeg's h264_vaapi does; 0 in the other modes.
    public var peakBitRate: Int64 = 0
    public var targetBitRate: Int64 = 0
    public var bufferBits: Int64 = 0
    /// The packed headers this session writes (VA_ENC_PACKED_HEADER_* bits); the driver
    /// writes the rest itself.
    public var packedHeaders: UInt32
    public var bFrames: Int
    public var entropy: EncoderSettings.Entropy
    /// VAEncMiscParameterBufferQualityLevel from `--speed`, when the driver has levels.
    public var qualityLevel: Int?
    /// The driver's fastest quality level (its EncQualityRange), when it has levels: how far
    /// `--realtime adaptive` can step.
    public var fastestQualityLevel: Int?
    /// Things the user asked for that this device changes, one line each.
    public var notices: [String]

    /// The CQP quantiser of P-pictures when no rate-control option is given: x264 at its
    /// default CRF 23 codes 720p P-pictures at an average QP of 22.9 (mandelbrot) to 26.5
    /// (testsrc2), I-pictures about 3 lower and B-pictures 3 to 6 higher.
    public static let defaultQP = 25

    /// x264's presets, fastest first: `--speed` picks a VA quality level by its place here.
    static let speeds = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow",
                         "slower", "veryslow", "placebo"]

    /// The plan for pictures of `width`×`height` (nil: not checked against the device's limits).
    public init(capabilities: VAAPICapabilities, settings: EncoderSettings,
                width: Int? = nil, height: Int? = nil) throws(VAAPIUnusable) {
        let device = capabilities.device
        guard capabilities.offersEncoding else {
            throw VAAPIUnusable("\(device) (\(capabilities.vendor)) has no H.264 encode entrypoint")
        }
        let offeredProfiles = capabilities.profiles.map(\.name.rawValue).joined(separator: ", ")
        let chosen: VAAPICapabilities.Profile
        if let wanted = settings.profile {
            guard let found = capabilities.profile(wanted) else {
                throw VAAPIUnusable("\(device) has no H.264 encode entrypoint for --profile \(wanted.rawValue) (it offers \(offeredProfiles))")
            }
            chosen = found
        } else {
            // High when there, as x264 does; otherwise the best the device has.
            chosen = capabilities.profile(.high) ?? capabilities.profile(.main) ?? capabilities.profiles[0]
        }
        // The full entrypoint when offered; some parts only have the low-power one.
        guard let entry = chosen.entrypoints.first(where: { $0.kind == .encSlice })
                ?? chosen.entrypoints.first(where: { $0.kind == .encSliceLP }) else {
            throw VAAPIUnusable("\(device) has no H.264 encode entrypoint for --profile \(chosen.name.rawValue)")
        }
        if let width, let height, let maxWidth = entry.maxWidth, let maxHeight = entry.maxHeight,
           width > maxWidth || height > maxHeight {
            throw VAAPIUnusable("\(width)x\(height) is larger than \(device) encodes (at most \(maxWidth)x\(maxHeight))")
        }
        guard entry.yuv420 else {
            throw VAAPIUnusable("\(device) cannot encode 4:2:0 pictures with --profile \(chosen.name.rawValue)")
        }

        let mode: VAAPICapabilities.RateControlMode
        switch settings.effectiveRateControl {
        case .crf where settings.rateControl == .crf || settings.crf != nil: mode = .icq
        case .crf, .cqp: mode = .cqp
        case .cbr: mode = .cbr
        case .vbr, .abr: mode = .vbr
        }
        if mode == .icq, settings.maxBitRate != nil {
            throw VAAPIUnusable("--crf with --max-bitrate (capped quality) has no VA-API equivalent here: drop --max-bitrate, or use --rate-control vbr")
        }
        guard entry.rateControl & mode.vaBit != 0 else {
            let offered = entry.rateControlModes.map(\.optionName)
            throw VAAPIUnusable("--rate-control \(mode.optionName) is not offered by \(device) (\(capabilities.vendor)): it offers \(offered.joined(separator: ", "))")
        }
        guard entry.maxReferencesL0 >= 1 else {
            throw VAAPIUnusable("\(device) offers no reference pictures for inter prediction")
        }

        var notices: [String] = []
        let requestedB = settings.bFrames ?? (chosen.name == .baseline || settings.tune == "zerolatency" ? 0 : 2)
        var bFrames = requestedB
        if chosen.name == .baseline && settings.profile == nil {
            // Constrained Baseline is all this device has: no B-frames, no CABAC.
            if requestedB > 0 || settings.entropy == .cabac {
                notices.append("\(device) encodes only Constrained Baseline: coding without B-frames and with CAVLC")
            }
            bFrames = 0
        }
        if bFrames > 0 && entry.maxReferencesL1 == 0 {
            bFrames = 0
            if settings.bFrames != nil {
                notices.append("\(device) offers no backward references: coding without B-frames (--bframes \(requestedB) ignored)")
            }
        }
        if let tune = settings.tune, tune != "zerolatency" {
            notices.append("--tune \(tune) has no VA-API equivalent: ignored")
        }

        // Our own SPS, PPS and slice headers when the driver takes them; a driver that takes
        // only the sequence header writes slice headers itself; one that takes none writes all.
        let sequenceAndSlice = UInt32(VA_ENC_PACKED_HEADER_SEQUENCE | VA_ENC_PACKED_HEADER_SLICE)
        let packed: UInt32 = entry.packedHeaders & sequenceAndSlice == sequenceAndSlice ? sequenceAndSlice
            : entry.packedHeaders & UInt32(VA_ENC_PACKED_HEADER_SEQUENCE) != 0 ? UInt32(VA_ENC_PACKED_HEADER_SEQUENCE)
            : 0

        var qualityLevel: Int?
        if entry.qualityLevels > 1, let index = Self.speeds.firstIndex(of: settings.speed) {
            let slowest = Self.speeds.count - 1
            qualityLevel = 1 + Int((Double((slowest - index) * (entry.qualityLevels - 1)) / Double(slowest)).rounded())
        }

        self.device = device
        self.vendor = capabilities.vendor
        self.profile = chosen.name
        self.entrypoint = entry.kind
        self.rateControl = mode
        self.qp = settings.qp ?? Self.defaultQP
        self.quality = min(51, max(1, Int((settings.crf ?? EncoderSettings.defaultCRF).rounded())))
        if let average = settings.bitRate, mode == .cbr || mode == .vbr {
            switch settings.effectiveRateControl {
            case .cbr:
                (peakBitRate, targetBitRate) = (average, average)
                bufferBits = (settings.bufferSize ?? average / 8) * 8
            case .abr:
                (peakBitRate, targetBitRate) = (2 * average, average)
                bufferBits = average
            default:
                let peak = settings.maxBitRate ?? average
                (peakBitRate, targetBitRate) = (peak, average)
                bufferBits = (settings.bufferSize ?? peak / 8) * 8
            }
        }
        self.packedHeaders = packed
        self.bFrames = bFrames
        self.entropy = chosen.name == .baseline ? .cavlc : (settings.entropy ?? .cabac)
        self.qualityLevel = qualityLevel
        self.fastestQualityLevel = qualityLevel == nil ? nil : entry.qualityLevels
        self.notices = notices
    }

    /// One line for the log: what runs, where.
    public var summary: String {
        "VA-API on \(device) (\(vendor)): \(profile.rawValue) profile, \(entrypoint.rawValue), \(rateControl.rawValue.uppercased())"
    }
}

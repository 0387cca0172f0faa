import VTCore
import VTH264

/// The compression properties a session is created with — VideoToolbox's
/// `kVTCompressionPropertyKey_*` as one value type. Each maps to an x264 field (and, later, a
/// VA-API parameter):
///
/// | VideoToolbox property        | vtrecord option               | x264 field                                   |
/// |------------------------------|-------------------------------|----------------------------------------------|
/// | MaxKeyFrameInterval          | `--keyint N`                  | `i_keyint_max`                               |
/// | MaxKeyFrameIntervalDuration  | `--keyint 2s`                 | `i_keyint_max` = seconds × fps               |
/// | ExpectedFrameRate            | `--fps`                       | `i_fps_num/den`, `i_timebase`, `b_vfr_input = 0` |
/// | AverageBitRate               | `--bitrate`                   | `rc.i_bitrate` (kbit/s)                      |
/// | DataRateLimits               | `--max-bitrate`, `--bufsize`  | `rc.i_vbv_max_bitrate`, `rc.i_vbv_buffer_size` |
/// | (rate-control mode)          | `--rate-control`, `--crf`, `--qp` | `rc.i_rc_method`, `f_rf_constant`, `i_qp_constant`, `i_nal_hrd` |
/// | ProfileLevel                 | `--profile`, `--level`        | `x264_param_apply_profile`, `i_level_idc`    |
/// | AllowFrameReordering         | `--bframes N` (0 = off)       | `i_bframe`                                   |
/// | H264EntropyMode              | `--entropy cabac\|cavlc`      | `b_cabac`                                    |
/// | RealTime                     | `--realtime adaptive\|drop\|off` | (pipeline: never block a live source; step the speed, or drop at the queue) |
/// | PixelAspectRatio             | from the source               | `vui.i_sar_width/height`                     |
/// | (x264 only)                  | `--speed`, `--tune`, `--threads` | `x264_param_default_preset`, `i_threads` |
public struct EncoderSettings: Sendable, Equatable {
    public enum Entropy: String, Sendable, CaseIterable { case cabac, cavlc }

    /// `--realtime` (VideoToolbox's `kVTCompressionPropertyKey_RealTime`): what happens when
    /// the encoder cannot keep up with the source.
    public enum RealTimeMode: String, Sendable, CaseIterable {
        /// The source is never made to wait; the encoder steps to faster settings before the
        /// queue overflows and back when there is room again. Frames are dropped at the queue
        /// only while it settles, or when even its fastest settings cannot keep up.
        case adaptive
        /// The source is never made to wait: a frame that finds the queue full is dropped and
        /// counted; the encoder keeps its speed.
        case drop
        /// The source waits for the encoder (a file's pace): nothing is dropped.
        case off

        /// Whether the source is live-paced (a pattern at its frame rate) and never waits.
        public var isLive: Bool { self != .off }
    }

    public enum RateControl: String, Sendable, CaseIterable {
        /// Constant quality (`--crf`), optionally capped by `--max-bitrate`.
        case crf
        /// Constant quantiser (`--qp`).
        case cqp
        /// Average bit rate only.
        case abr
        /// Average bit rate with `--max-bitrate` as the VBV peak.
        case vbr
        /// VBV peak = average bit rate, with NAL HRD signalling (x264; a VA-API driver holds the
        /// rate without HRD parameters in the SPS).
        case cbr
    }

    public enum KeyFrameInterval: Sendable, Equatable, CustomStringConvertible {
        case frames(Int)
        case seconds(Double)

        public func frames(at rate: FrameRate) -> Int {
            switch self {
            case .frames(let n): n
            case .seconds(let s): max(1, Int((s * rate.framesPerSecond).rounded()))
            }
        }

        public var description: String {
            switch self {
            case .frames(let n): "\(n)"
            case .seconds(let s): s == s.rounded() ? "\(Int(s))s" : "\(s)s"
            }
        }
    }

    /// x264 preset name (`--speed`).
    public var speed: String = "medium"
    public var tune: String?
    public var profile: H264Profile?
    /// "3.1", "4", … or nil for automatic.
    public var level: String?
    public var keyFrameInterval: KeyFrameInterval = .seconds(2)
    public var bFrames: Int?
    public var entropy: Entropy?
    /// nil: chosen from the other options (`--qp` → cqp, `--bitrate` → abr or vbr, else crf).
    public var rateControl: RateControl?
    public var crf: Double?
    public var qp: Int?
    /// Average bit rate in bit/s.
    public var bitRate: Int64?
    /// VBV peak in bit/s.
    public var maxBitRate: Int64?
    /// VBV buffer in bytes; defaults to one second of the peak rate.
    public var bufferSize: Int64?
    /// Encoder threads; nil or 0 lets the encoder choose.
    public var threads: Int?
    /// What the pipeline does when the encoder falls behind the source. nil: adaptive for a
    /// live source, off for a file.
    public var realTime: RealTimeMode?
    public var frameRate: FrameRate = .fps30
    public var sampleAspectRatio: SampleAspectRatio?
    /// Samples use the full 0–255 range (signalled in the VUI).
    public var fullRange: Bool?

    public init() {}

    public static let defaultCRF = 23.0

    /// The rate-control mode in force once defaults are applied.
    public var effectiveRateControl: RateControl {
        if let rateControl { return rateControl }
        if qp != nil { return .cqp }
        if bitRate != nil { return maxBitRate != nil ? .vbr : .abr }
        return .crf
    }

    /// The VBV peak in force, if any.
    public var effectiveMaxBitRate: Int64? {
        switch effectiveRateControl {
        case .cbr: bitRate
        case .vbr, .crf: maxBitRate
        case .abr, .cqp: nil
        }
    }

    /// The VBV buffer in force: given, or one second of the peak (x264 ignores a peak without
    /// a buffer).
    public var effectiveBufferSize: Int64? {
        guard let peak = effectiveMaxBitRate else { return nil }
        return bufferSize ?? peak / 8
    }

    /// Refuses combinations that cannot mean what the user asked, naming the options.
    public func validate() throws(UsageError) {
        let mode = effectiveRateControl
        if let profile, profile == .baseline {
            if let bFrames, bFrames > 0 {
                throw UsageError("--profile baseline allows no B-frames: drop --bframes \(bFrames) or use --profile main")
            }
            if entropy == .cabac {
                throw UsageError("--profile baseline allows only CAVLC: drop --entropy cabac or use --profile main")
            }
        }
        if let bFrames, !(0...16).contains(bFrames) {
            throw UsageError("--bframes \(bFrames) is out of range: use 0 to 16")
        }
        if let crf, !(0...51).contains(crf) {
            throw UsageError("--crf \(crf) is out of range: use 0 to 51")
        }
        if let qp, !(0...51).contains(qp) {
            throw UsageError("--qp \(qp) is out of range: use 0 to 51")
        }
        if let threads, !(0...128).contains(threads) {
            throw UsageError("--threads \(threads) is out of range: use 0 (automatic) to 128")
        }
        if case .frames(let n) = keyFrameInterval, n < 1 {
            throw UsageError("--keyint \(n) is out of range: use 1 or more frames, or a duration such as 2s")
        }
        if case .seconds(let s) = keyFrameInterval, !(s > 0) {
            throw UsageError("--keyint must be longer than 0s")
        }
        if crf != nil && mode != .crf {
            throw UsageError("--crf cannot be used with --rate-control \(mode.rawValue): use --bitrate (or --rate-control crf)")
        }
        if qp != nil && mode != .cqp {
            throw UsageError("--qp cannot be used with --rate-control \(mode.rawValue): use --rate-control cqp")
        }
        switch mode {
        case .crf, .cqp:
            if bitRate != nil {
                throw UsageError("--bitrate cannot be used with --rate-control \(mode.rawValue): use --rate-control abr, vbr or cbr")
            }
            if mode == .cqp && (maxBitRate != nil || bufferSize != nil) {
                throw UsageError("--max-bitrate and --bufsize cannot be used with --rate-control cqp: use --rate-control vbr")
            }
            if mode == .crf && bufferSize != nil && maxBitRate == nil {
                throw UsageError("--bufsize needs --max-bitrate")
            }
        case .abr:
            guard bitRate != nil else { throw UsageError("--rate-control abr needs --bitrate") }
            if maxBitRate != nil || bufferSize != nil {
                throw UsageError("--max-bitrate and --bufsize cannot be used with --rate-control abr: use --rate-control vbr")
            }
        case .vbr:
            guard let bitRate else { throw UsageError("--rate-control vbr needs --bitrate") }
            guard let maxBitRate else { throw UsageError("--rate-control vbr needs --max-bitrate (the peak rate)") }
            if maxBitRate < bitRate {
                throw UsageError("--max-bitrate \(formatDecimalQuantity(maxBitRate)) is below --bitrate \(formatDecimalQuantity(bitRate))")
            }
        case .cbr:
            guard bitRate != nil else { throw UsageError("--rate-control cbr needs --bitrate") }
            if maxBitRate != nil {
                throw UsageError("--max-bitrate cannot be used with --rate-control cbr: the peak is --bitrate")
            }
        }
        for (name, value) in [("--bitrate", bitRate), ("--max-bitrate", maxBitRate)] {
            if let value, value < 1000 {
                throw UsageError("\(name) \(value) is too low: rates are in bit/s, e.g. 2M or 500k")
            }
        }
        if let bufferSize, bufferSize < 125 {
            throw UsageError("--bufsize \(bufferSize) is too small: sizes are in bytes, e.g. 250k")
        }
        if let level, level != "auto", Self.levelIDC(level) == nil {
            throw UsageError("--level \(level) is not an H.264 level: use 1, 1b, 1.1 … 5.2, 6.2 or auto")
        }
    }

    /// level_idc for "3.1" (31), "4" (40), "1b" (9).
    public static func levelIDC(_ text: String) -> Int? {
        let known = ["1": 10, "1b": 9, "1.1": 11, "1.2": 12, "1.3": 13, "2": 20, "2.1": 21, "2.2": 22,
                     "3": 30, "3.1": 31, "3.2": 32, "4": 40, "4.1": 41, "4.2": 42, "5": 50, "5.1": 51,
                     "5.2": 52, "6": 60, "6.1": 61, "6.2": 62]
        return known[text.lowercased()]
    }
}

import VTCore
import VTH264
import VTVAAPI

/// `--decoder`: auto uses a VA-API device when one can decode the stream, vaapi requires it,
/// software never looks for one (as `--encoder` does for encoding).
public enum DecoderChoice: String, Sendable, CaseIterable {
    case auto, vaapi, software
}

/// Which decoder a stream gets, decided from its parameter sets before any picture is decoded.
public struct DecoderSelection: Sendable, Equatable {
    public enum Backend: Sendable, Equatable {
        case software
        /// libavcodec's VA-API hwaccel on this render node.
        case vaapi(device: String)

        public var name: String {
            switch self {
            case .software: "software"
            case .vaapi: "vaapi"
            }
        }
    }

    public let backend: Backend
    /// Why auto decodes in software although there is a VA-API device: each device's reason.
    /// Nil when it got the hardware, or when the machine has no device to ask.
    public let reason: String?

    /// Probes `vaDevice`, or every render node, for one that decodes the stream `format`
    /// describes (its profile, 8-bit 4:2:0, its size). `vaapi` without one throws (exit 4) with
    /// the reasons; auto falls back to software and keeps them in `reason`.
    public static func select(_ choice: DecoderChoice, vaDevice: String?,
                              format: VideoFormatDescription) throws(DecoderError) -> DecoderSelection {
        if choice == .software { return DecoderSelection(backend: .software, reason: nil) }
        let candidates = vaDevice.map { [$0] } ?? VADecodeSupport.renderNodes()
        // Software is simply what a machine without a device decodes with, whatever the
        // stream: nothing to explain under auto.
        if candidates.isEmpty && choice == .auto { return DecoderSelection(backend: .software, reason: nil) }
        var reasons: [String] = []
        switch Self.profile(of: format) {
        case .failure(let why):
            reasons.append(why.description)
        case .success(let profile):
            if candidates.isEmpty {
                reasons.append("no VA-API device (no render node in /dev/dri; name one with --va-device)")
            }
            for path in candidates {
                do throws(VAAPIFailure) {
                    let support = try VADecodeSupport(path: path)
                    guard let refusal = support.refusal(profile: profile, width: format.width, height: format.height) else {
                        return DecoderSelection(backend: .vaapi(device: path), reason: nil)
                    }
                    reasons.append(refusal)
                } catch {
                    reasons.append(error.description)
                }
            }
        }
        let reason = reasons.joined(separator: "; ")
        if choice == .vaapi { throw .openFailed(decoder: "vaapi", reason: reason) }
        return DecoderSelection(backend: .software, reason: reason)
    }

    /// The VA-API profile that decodes the stream, or why none does: VA-API decodes 8-bit 4:2:0
    /// H.264 in Constrained Baseline, Main and High (a Baseline stream without
    /// constraint_set1_flag may use tools only Extended has).
    static func profile(of format: VideoFormatDescription) -> Result<H264Profile, StreamRefusal> {
        guard let nal = format.sequenceParameterSets.first, let sps = try? SequenceParameterSet(nalUnit: nal) else {
            return .failure(StreamRefusal("the stream's SPS does not parse"))
        }
        guard sps.chromaFormatIdc == 1, sps.bitDepthLuma == 8, sps.bitDepthChroma == 8 else {
            return .failure(StreamRefusal("VA-API decodes 8-bit 4:2:0 H.264, and this stream is not"))
        }
        switch sps.profileIdc {
        case 66 where sps.constraintFlags & 0x40 != 0: return .success(.baseline)
        case 77: return .success(.main)
        case 100: return .success(.high)
        default:
            return .failure(StreamRefusal("VA-API decodes H.264 Constrained Baseline, Main and High, "
                                          + "not profile_idc \(sps.profileIdc)"))
        }
    }

    /// Why a stream cannot go to VA-API at all, whatever the device.
    struct StreamRefusal: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// Makes the decompression sessions of one file: the decoder is chosen for the first format
/// description and again for any later one that differs (a new SPS can change the answer).
public final class DecoderChooser {
    public let choice: DecoderChoice
    public let vaDevice: String?
    /// The last selection made, for reports.
    public private(set) var selection: DecoderSelection?
    private var chosenFor: VideoFormatDescription?
    /// A VA-API session failed under auto: software from then on.
    private var softwareOnly = false

    public init(choice: DecoderChoice = .software, vaDevice: String? = nil) {
        self.choice = choice
        self.vaDevice = vaDevice
    }

    /// The backend for `format`.
    public func backend(for format: VideoFormatDescription) throws(DecoderError) -> DecoderSelection.Backend {
        if let selection, chosenFor == format || softwareOnly { return selection.backend }
        let made = try DecoderSelection.select(choice, vaDevice: vaDevice, format: format)
        selection = made
        chosenFor = format
        return made.backend
    }

    /// After a session failed (not a damaged unit): with auto and VA-API chosen, software from
    /// now on, the failure kept as the selection's reason, and true (decode again); otherwise
    /// false, and the failure stands.
    public func fallBack(after error: any Error) -> Bool {
        guard choice == .auto, let selection, selection.backend != .software, let error = error as? DecoderError else {
            return false
        }
        switch error {
        case .openFailed, .failed: break
        case .damaged, .unsupportedPicture: return false
        }
        self.selection = DecoderSelection(backend: .software, reason: error.description)
        softwareOnly = true
        return true
    }

    /// A session for `format` on the chosen backend.
    public func session(format: VideoFormatDescription, threads: Int = 0, refusingDamage: Bool = false,
                        output: @escaping DecodedFrameHandler) throws(DecoderError) -> LibavcodecDecompressionSession {
        try LibavcodecDecompressionSession(format: format, backend: backend(for: format), threads: threads,
                                           refusingDamage: refusingDamage, output: output)
    }
}

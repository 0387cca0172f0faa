import CX264
import Logging
import VTCore
import VTVAAPI

/// `--encoder`: VideoToolbox's encoder specification. auto prefers the hardware encoder when it
/// can do what the settings ask; vaapi requires it; x264 never looks for it; copy encodes
/// nothing and stores a camera's own Motion-JPEG frames.
public enum EncoderChoice: String, Sendable, CaseIterable {
    case auto, vaapi, x264, copy
}

/// Which encoder a recording uses, decided before anything is created on disk.
public struct EncoderSelection: Sendable {
    public enum Encoder: Sendable {
        case x264
        case vaapi(VAAPIPlan)
        /// The camera's frames as it compressed them (`CopySession`).
        case copy
    }

    public let choice: EncoderChoice
    public let encoder: Encoder
    /// Why this encoder, one line (auto only), then anything the encoder changes of the
    /// settings.
    public let notices: [String]

    /// Probes the VA-API devices (`vaDevice`, or every render node) for one that offers what
    /// `settings` ask for pictures of `width`×`height`: profile, entrypoint, rate-control mode,
    /// size. `--encoder vaapi` without one throws (exit 4) with the reason; auto falls back to
    /// x264 and says why.
    public static func select(_ choice: EncoderChoice, vaDevice: String?, settings: EncoderSettings,
                              width: Int, height: Int) throws(EncoderError) -> EncoderSelection {
        if choice == .x264 { return EncoderSelection(choice: choice, encoder: .x264, notices: []) }
        if choice == .copy { return EncoderSelection(choice: choice, encoder: .copy, notices: []) }
        let candidates = vaDevice.map { [$0] } ?? VADevice.renderNodes()
        var reasons: [String] = []
        if candidates.isEmpty {
            reasons.append("no VA-API device (no render node in /dev/dri; name one with --va-device)")
        }
        for path in candidates {
            do throws(VAAPIFailure) {
                let device = try VADevice(path: path)
                do throws(VAAPIUnusable) {
                    let plan = try VAAPIPlan(capabilities: device.capabilities(), settings: settings,
                                             width: width, height: height)
                    let why = choice == .auto ? ["encoding with \(plan.summary)"] : []
                    return EncoderSelection(choice: choice, encoder: .vaapi(plan), notices: why + plan.notices)
                } catch {
                    reasons.append(error.description)
                }
            } catch {
                reasons.append(error.description)
            }
        }
        let reason = reasons.joined(separator: "; ")
        if choice == .vaapi { throw .unavailable(encoder: "vaapi", reason: reason) }
        return EncoderSelection(choice: choice, encoder: .x264, notices: ["encoding with x264: \(reason)"])
    }

    public var name: String {
        switch encoder {
        case .x264: "x264"
        case .vaapi: "vaapi"
        case .copy: "copy"
        }
    }

    /// The session for the chosen encoder. With auto, a hardware session that cannot be
    /// opened (the driver refuses the context, say) gives way to x264 before any frame, and
    /// `notice` says why. `copying` is what the camera compresses its frames as (copy only).
    public func makeSession(width: Int, height: Int, pixelFormat: PixelFormat, settings: EncoderSettings,
                            copying: VideoCodec = .mjpeg, notice: @escaping @Sendable (String) -> Void,
                            output: @escaping EncodedFrameHandler) throws -> any CompressionSession {
        let software = { () throws(UsageError) -> any CompressionSession in
            try X264Session(width: width, height: height, pixelFormat: pixelFormat, settings: settings, output: output)
        }
        switch encoder {
        case .x264:
            return try software()
        case .vaapi(let plan):
            let hardware = try VAAPISession(plan: plan, width: width, height: height, settings: settings, output: output)
            guard choice == .auto else { return hardware }
            return FallbackSession(hardware, fallback: software, notice: notice)
        case .copy:
            return CopySession(codec: copying, width: width, height: height, settings: settings, output: output)
        }
    }
}

/// One encoder this machine has, as `vtrecord encoders` lists it.
public enum AvailableEncoder: Sendable {
    case x264(build: Int)
    case vaapi(VAAPICapabilities)
    /// A render node that could not be opened or initialised.
    case unusableDevice(path: String, reason: String)

    /// x264, then every render node (or just `vaDevice`).
    public static func all(vaDevice: String? = nil) -> [AvailableEncoder] {
        var found: [AvailableEncoder] = [.x264(build: Int(X264_BUILD))]
        for path in vaDevice.map({ [$0] }) ?? VADevice.renderNodes() {
            do {
                found.append(.vaapi(try VADevice(path: path).capabilities()))
            } catch {
                found.append(.unusableDevice(path: path, reason: error.description))
            }
        }
        return found
    }
}

/// `--encoder auto` once a VA-API device looked usable: the hardware session, unless it cannot
/// be opened, then x264. Past `prepare()` it is simply the session that opened.
final class FallbackSession: CompressionSession {
    private var active: any CompressionSession
    private let fallback: () throws(UsageError) -> any CompressionSession
    private let notice: (String) -> Void

    init(_ primary: any CompressionSession, fallback: @escaping () throws(UsageError) -> any CompressionSession,
         notice: @escaping (String) -> Void) {
        active = primary
        self.fallback = fallback
        self.notice = notice
    }

    var encoderName: String { active.encoderName }
    var formatDescription: VideoFormatDescription { active.formatDescription }
    var resolvedSettings: EncoderSettings { active.resolvedSettings }
    var reorderDelay: Int { active.reorderDelay }

    func prepare() throws(EncoderError) {
        do {
            try active.prepare()
        } catch {
            active.invalidate()
            notice("encoding with x264: \(error.description)")
            do {
                active = try fallback()
            } catch {
                throw .openFailed(encoder: "x264", reason: error.message)
            }
            try active.prepare()
        }
    }

    func encode(_ buffer: PixelBuffer, pts: MediaTime, forceKeyFrame: Bool, token: FrameToken) throws {
        try active.encode(buffer, pts: pts, forceKeyFrame: forceKeyFrame, token: token)
    }

    func completeFrames() throws { try active.completeFrames() }

    func invalidate() { active.invalidate() }

    var speedSteps: [String] { active.speedSteps }
    func setSpeedStep(_ step: Int) throws(EncoderError) { try active.setSpeedStep(step) }
    var speedChangePending: Bool { active.speedChangePending }
    var newEncoderFromSpeedStep: Int? { active.newEncoderFromSpeedStep }
    var timesDevice: Bool { active.timesDevice }
    func takeDeviceTime() -> (nanoseconds: Int64, pictures: Int)? { active.takeDeviceTime() }
}

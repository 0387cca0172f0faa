import CX264
import Logging
import VTCore

/// `--encoder`: VideoToolbox's encoder specification. auto prefers the hardware encoder when it
/// can do what the settings ask; vaapi requires it; x264 never looks for it.
public enum EncoderChoice: String, Sendable, CaseIterable {
    case auto, vaapi, x264
}

/// Which encoder a recording uses, decided before anything is created on disk.
public struct EncoderSelection: Sendable {
    public enum Encoder: Sendable {
        case x264
        case vaapi(VAAPIPlan)
    }

    public let encoder: Encoder
    /// Why this encoder, one line (auto only), then anything the encoder changes of the
    /// settings.
    public let notices: [String]

    /// Probes the VA-API devices (`vaDevice`, or every render node) for one that can encode
    /// with `settings`. `--encoder vaapi` without one throws (exit 4) with the reason;
    /// auto falls back to x264 and says why.
    public static func select(_ choice: EncoderChoice, vaDevice: String?, settings: EncoderSettings)
        throws(EncoderError) -> EncoderSelection {
        if choice == .x264 { return EncoderSelection(encoder: .x264, notices: []) }
        let candidates = vaDevice.map { [$0] } ?? VADevice.renderNodes()
        var reasons: [String] = []
        if candidates.isEmpty {
            reasons.append("no VA-API device (no render node in /dev/dri; name one with --va-device)")
        }
        for path in candidates {
            do {
                let device = try VADevice(path: path)
                let plan = try VAAPIPlan(capabilities: device.capabilities(), settings: settings)
                let why = choice == .auto ? ["encoding with \(plan.summary)"] : []
                return EncoderSelection(encoder: .vaapi(plan), notices: why + plan.notices)
            } catch let error as VADevice.OpenError {
                reasons.append(error.description)
            } catch let error as VAAPIUnusable {
                reasons.append(error.description)
            } catch {
                reasons.append("\(path): \(error)")
            }
        }
        let reason = reasons.joined(separator: "; ")
        if choice == .vaapi { throw .unavailable(encoder: "vaapi", reason: reason) }
        return EncoderSelection(encoder: .x264, notices: ["encoding with x264: \(reason)"])
    }

    public var name: String {
        switch encoder {
        case .x264: "x264"
        case .vaapi: "vaapi"
        }
    }

    /// The session for the chosen encoder.
    public func makeSession(width: Int, height: Int, pixelFormat: PixelFormat, settings: EncoderSettings,
                            output: @escaping EncodedFrameHandler) throws -> any CompressionSession {
        switch encoder {
        case .x264:
            try X264Session(width: width, height: height, pixelFormat: pixelFormat, settings: settings, output: output)
        case .vaapi(let plan):
            try VAAPISession(plan: plan, width: width, height: height, pixelFormat: pixelFormat, settings: settings,
                             output: output)
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

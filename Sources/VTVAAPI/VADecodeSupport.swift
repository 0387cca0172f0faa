import CVAAPI
import VTCore
import VTH264

/// What a VA-API device can decode of H.264: each profile it offers a decode entrypoint
/// (VAEntrypointVLD) for with 4:2:0 surfaces, and the largest picture it takes. `--decoder auto`
/// and `vaapi` check a stream against this before libavcodec's VA-API hwaccel is asked to
/// decode it, so a device that cannot is passed over with the reason rather than failing on the
/// first picture.
public struct VADecodeSupport: Sendable {
    public let device: String
    public let vendor: String
    /// The profiles the device decodes, with the largest picture (nil: the driver does not say).
    public let profiles: [H264Profile: FrameSize?]

    /// Opens and probes `path`.
    public init(path: String) throws(VAAPIFailure) {
        let opened = try VADevice(path: path)
        device = path
        vendor = opened.vendor
        profiles = opened.decodeProfiles()
    }

    /// The render nodes of this machine, in name order.
    public static func renderNodes() -> [String] { VADevice.renderNodes() }

    /// Why the device cannot decode `profile` at `width`×`height`, or nil when it can.
    public func refusal(profile: H264Profile, width: Int, height: Int) -> String? {
        guard let limit = profiles[profile] else {
            let offered = H264Profile.allCases.filter { profiles[$0] != nil }.map(\.streamName)
            return "\(device) does not decode H.264 \(profile.streamName)"
                + (offered.isEmpty ? " (it decodes no H.264)" : " (it decodes \(offered.joined(separator: ", ")))")
        }
        if let limit, width > limit.width || height > limit.height {
            return "\(device) decodes H.264 up to \(limit.width)x\(limit.height), not \(width)x\(height)"
        }
        return nil
    }
}

extension VADevice {
    /// H.264 profiles with a decode entrypoint and 4:2:0 surfaces, with the largest picture.
    package func decodeProfiles() -> [H264Profile: FrameSize?] {
        var count = vaMaxNumProfiles(display)
        var offered = [VAProfile](repeating: VAProfileNone, count: Int(max(count, 1)))
        guard vaQueryConfigProfiles(display, &offered, &count) == VA_STATUS_SUCCESS else { return [:] }
        let available = Set(offered.prefix(Int(count)).map(\.rawValue))
        var found: [H264Profile: FrameSize?] = [:]
        for profile in H264Profile.allCases where available.contains(profile.vaProfile.rawValue) {
            var entryCount = vaMaxNumEntrypoints(display)
            var entrypoints = [VAEntrypoint](repeating: VAEntrypoint(0), count: Int(max(entryCount, 1)))
            guard vaQueryConfigEntrypoints(display, profile.vaProfile, &entrypoints, &entryCount) == VA_STATUS_SUCCESS,
                  entrypoints.prefix(Int(entryCount)).contains(VAEntrypointVLD) else { continue }
            var attributes = [VAConfigAttribRTFormat, VAConfigAttribMaxPictureWidth, VAConfigAttribMaxPictureHeight]
                .map { VAConfigAttrib(type: $0, value: 0) }
            guard vaGetConfigAttributes(display, profile.vaProfile, VAEntrypointVLD, &attributes, Int32(attributes.count))
                    == VA_STATUS_SUCCESS,
                  attributes[0].value != VA_ATTRIB_NOT_SUPPORTED,
                  attributes[0].value & UInt32(VA_RT_FORMAT_YUV420) != 0 else { continue }
            let width = attributes[1].value, height = attributes[2].value
            let known = width != VA_ATTRIB_NOT_SUPPORTED && height != VA_ATTRIB_NOT_SUPPORTED && width > 0 && height > 0
            // updateValue: assigning nil through the subscript would remove the profile.
            found.updateValue(known ? FrameSize(width: Int(width), height: Int(height)) : nil, forKey: profile)
        }
        return found
    }
}

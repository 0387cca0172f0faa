import CVAAPI
import Foundation
import VTCore
import VTH264

/// Why VA-API could not be used, or stopped working, each said in one line.
public enum VAAPIFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The render node could not be opened.
    case cannotOpen(path: String, SystemError)
    /// The node opened but libva found no DRM display on it.
    case notARenderNode(path: String)
    /// vaInitialize failed: no driver for this GPU, or the driver refused it.
    case noDriver(path: String, status: VAStatus)
    /// A libva call failed: which call, and libva's words for the status.
    case call(String, status: VAStatus)
    /// libyuv could not turn a picture into the NV12 the surfaces hold.
    case conversion(from: PixelFormat)
    /// Pictures cannot reach the driver: its surfaces cannot be mapped and it takes no NV12
    /// image to copy from.
    case noNV12Upload
    /// The driver's coded picture was bigger than the buffer made for the worst case.
    case codedBufferOverflow(size: Int)

    /// The device itself cannot be used (as opposed to one request to it failing).
    public var isDeviceUnusable: Bool {
        switch self {
        case .cannotOpen, .notARenderNode, .noDriver: true
        case .call, .conversion, .noNV12Upload, .codedBufferOverflow: false
        }
    }

    public var description: String {
        switch self {
        case let .cannotOpen(path, failure): "cannot open \(path): \(failure.reason)"
        case let .notARenderNode(path): "\(path) is not a DRM render node"
        case let .noDriver(path, status): "no VA-API driver works with \(path): \(Self.words(status))"
        case let .call(call, status): "\(call) failed: \(Self.words(status))"
        case let .conversion(format): "libyuv could not convert a \(format.rawValue) picture to NV12"
        case .noNV12Upload: "the driver can neither map its surfaces nor take NV12 images"
        case let .codedBufferOverflow(size): "the coded picture did not fit its \(size)-byte buffer"
        }
    }

    private static func words(_ status: VAStatus) -> String { String(cString: vaErrorStr(status)) }
}

/// Checks a libva status.
package func vaCheck(_ status: VAStatus, _ call: @autoclosure () -> String) throws(VAAPIFailure) {
    guard status == VA_STATUS_SUCCESS else { throw .call(call(), status: status) }
}

/// An initialised VA-API display on a DRM render node (`/dev/dri/renderD128`).
package final class VADevice {
    package let path: String
    package let display: VADisplay
    package let vendor: String
    package let apiVersion: String
    private let fd: Int32

    package init(path: String) throws(VAAPIFailure) {
        let fd: Int32
        do {
            fd = try systemCall("open") { open(path, O_RDWR | O_CLOEXEC) }
        } catch {
            throw .cannotOpen(path: path, error)
        }
        guard let display = vaGetDisplayDRM(fd) else {
            try? closeDescriptor(fd)
            throw .notARenderNode(path: path)
        }
        // libva announces its version and driver on the info channel: keep that quiet. Its
        // error channel stays on standard error.
        _ = vaSetInfoCallback(display, nil, nil)
        var major: Int32 = 0
        var minor: Int32 = 0
        let status = vaInitialize(display, &major, &minor)
        guard status == VA_STATUS_SUCCESS else {
            _ = vaTerminate(display)
            try? closeDescriptor(fd)
            throw .noDriver(path: path, status: status)
        }
        self.path = path
        self.fd = fd
        self.display = display
        self.apiVersion = "\(major).\(minor)"
        self.vendor = vaQueryVendorString(display).map { String(cString: $0) } ?? "unknown"
    }

    deinit {
        _ = vaTerminate(display)
        try? closeDescriptor(fd)
    }

    /// The render nodes of this machine, in name order.
    package static func renderNodes(directory: String = "/dev/dri") -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix("renderD") }.sorted().map { "\(directory)/\($0)" }
    }

    /// What the driver offers for H.264 encoding.
    package func capabilities() -> VAAPICapabilities {
        var profiles: [VAAPICapabilities.Profile] = []
        var count = vaMaxNumProfiles(display)
        var offered = [VAProfile](repeating: VAProfileNone, count: Int(max(count, 1)))
        guard vaQueryConfigProfiles(display, &offered, &count) == VA_STATUS_SUCCESS else {
            return VAAPICapabilities(device: path, vendor: vendor, apiVersion: apiVersion, profiles: [])
        }
        let available = Set(offered.prefix(Int(count)).map(\.rawValue))
        for profile in H264Profile.allCases {
            let vaProfile = profile.vaProfile
            guard available.contains(vaProfile.rawValue) else { continue }
            var entryCount = vaMaxNumEntrypoints(display)
            var entrypoints = [VAEntrypoint](repeating: VAEntrypoint(0), count: Int(max(entryCount, 1)))
            guard vaQueryConfigEntrypoints(display, vaProfile, &entrypoints, &entryCount) == VA_STATUS_SUCCESS else {
                continue
            }
            var encoders: [VAAPICapabilities.Entrypoint] = []
            for entrypoint in entrypoints.prefix(Int(entryCount)) {
                guard let kind = VAAPICapabilities.EntrypointKind(entrypoint) else { continue }
                encoders.append(encodeAttributes(profile: vaProfile, entrypoint: kind))
            }
            if !encoders.isEmpty {
                profiles.append(VAAPICapabilities.Profile(name: profile, entrypoints: encoders))
            }
        }
        return VAAPICapabilities(device: path, vendor: vendor, apiVersion: apiVersion, profiles: profiles)
    }

    private func encodeAttributes(profile: VAProfile, entrypoint: VAAPICapabilities.EntrypointKind)
        -> VAAPICapabilities.Entrypoint {
        let types = [VAConfigAttribRTFormat, VAConfigAttribRateControl, VAConfigAttribEncPackedHeaders,
                     VAConfigAttribEncMaxRefFrames, VAConfigAttribEncMaxSlices, VAConfigAttribEncQualityRange,
                     VAConfigAttribMaxPictureWidth, VAConfigAttribMaxPictureHeight]
        var attributes = types.map { VAConfigAttrib(type: $0, value: 0) }
        if vaGetConfigAttributes(display, profile, entrypoint.vaEntrypoint, &attributes, Int32(attributes.count))
            != VA_STATUS_SUCCESS {
            attributes = types.map { VAConfigAttrib(type: $0, value: VA_ATTRIB_NOT_SUPPORTED) }
        }
        func value(_ type: VAConfigAttribType) -> UInt32? {
            let found = attributes.first { $0.type == type }?.value
            return found == VA_ATTRIB_NOT_SUPPORTED ? nil : found
        }
        let refs = value(VAConfigAttribEncMaxRefFrames) ?? 1
        return VAAPICapabilities.Entrypoint(
            kind: entrypoint,
            yuv420: (value(VAConfigAttribRTFormat) ?? 0) & UInt32(VA_RT_FORMAT_YUV420) != 0,
            rateControl: value(VAConfigAttribRateControl) ?? 0,
            packedHeaders: value(VAConfigAttribEncPackedHeaders) ?? 0,
            maxReferencesL0: Int(refs & 0xFFFF),
            maxReferencesL1: Int(refs >> 16),
            maxSlices: Int(value(VAConfigAttribEncMaxSlices) ?? 1),
            qualityLevels: Int(value(VAConfigAttribEncQualityRange) ?? 0),
            maxWidth: value(VAConfigAttribMaxPictureWidth).map(Int.init),
            maxHeight: value(VAConfigAttribMaxPictureHeight).map(Int.init))
    }
}

extension H264Profile {
    package var vaProfile: VAProfile {
        switch self {
        case .baseline: VAProfileH264ConstrainedBaseline
        case .main: VAProfileH264Main
        case .high: VAProfileH264High
        }
    }
}

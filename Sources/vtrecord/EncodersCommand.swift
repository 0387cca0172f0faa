import ArgumentParser
import VTEncoding
import VTRecorder

/// `vtrecord encoders`: x264 and what each VA-API device offers for H.264.
struct Encoders: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encoders",
        abstract: "List the H.264 encoders: x264, and each VA-API device with its profiles, entrypoints, rate-control modes, packed headers and reference limits.",
        discussion: """
            A device that cannot be opened or has no VA-API driver is listed with the reason. \
            The exit status is 0 either way; 'vtrecord --encoder vaapi' is the command that \
            fails (exit 4) when no device can encode.
            """
    )

    @OptionGroup var vaDeviceOption: VADeviceOption

    @Flag(name: .long, help: "Print the list as JSON: an array of encoders, each with its name and details.")
    var json = false

    func run() throws {
        let encoders = AvailableEncoder.all(vaDevice: vaDeviceOption.vaDevice)
        if json {
            try printJSON(encoders.map(EncoderJSON.init))
            return
        }
        for encoder in encoders {
            switch encoder {
            case .x264(let build):
                print("x264: software (libx264 build \(build))")
            case .unusableDevice(let path, let reason):
                print("vaapi \(path): not usable: \(reason)")
            case .vaapi(let device):
                print("vaapi \(device.device): \(device.vendor) (VA-API \(device.apiVersion))")
                if device.profiles.isEmpty { print("  no H.264 encode entrypoint") }
                for profile in device.profiles {
                    for entry in profile.entrypoints {
                        let headers = entry.packedHeaderNames.isEmpty ? "none" : entry.packedHeaderNames.joined(separator: ", ")
                        print("  \(profile.name.rawValue) \(entry.kind.rawValue): rate control \(entry.rateControlModes.map(\.rawValue).joined(separator: ", ")); packed headers \(headers); references L0 \(entry.maxReferencesL0), L1 \(entry.maxReferencesL1); slices \(entry.maxSlices); quality levels \(entry.qualityLevels)" + (entry.maxWidth.map { w in "; up to \(w)x\(entry.maxHeight ?? w)" } ?? ""))
                    }
                }
            }
        }
        if !encoders.contains(where: { if case .x264 = $0 { false } else { true } }) {
            print("vaapi: no render node in /dev/dri")
        }
    }
}

/// One encoder in `encoders --json`.
struct EncoderJSON: Encodable {
    let encoder: AvailableEncoder

    init(_ encoder: AvailableEncoder) { self.encoder = encoder }

    enum CodingKeys: String, CodingKey { case name, kind, build, device, error, vendor, apiVersion = "va_api_version", profiles }

    func encode(to coder: any Encoder) throws {
        var c = coder.container(keyedBy: CodingKeys.self)
        switch encoder {
        case .x264(let build):
            try c.encode("x264", forKey: .name)
            try c.encode("software", forKey: .kind)
            try c.encode(build, forKey: .build)
        case .unusableDevice(let path, let reason):
            try c.encode("vaapi", forKey: .name)
            try c.encode("hardware", forKey: .kind)
            try c.encode(path, forKey: .device)
            try c.encode(reason, forKey: .error)
        case .vaapi(let capabilities):
            try c.encode("vaapi", forKey: .name)
            try c.encode("hardware", forKey: .kind)
            try c.encode(capabilities.device, forKey: .device)
            try c.encode(capabilities.vendor, forKey: .vendor)
            try c.encode(capabilities.apiVersion, forKey: .apiVersion)
            try c.encode(capabilities.profiles, forKey: .profiles)
        }
    }
}

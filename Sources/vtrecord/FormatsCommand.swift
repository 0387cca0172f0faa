import ArgumentParser
import VTCapture
import VTCore
import VTRecorder

/// `vtrecord formats`: what a camera can send, as `v4l2-ctl --list-formats-ext` lists it.
struct Formats: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "formats",
        abstract: "List a camera's pixel formats, sizes and frame rates.",
        discussion: """
            Formats are listed as the camera offers them through libv4l2, which adds formats it \
            converts to (marked emulated). A format with a --format name is one vtrecord records.
            """
    )

    @OptionGroup var camera: DeviceOption

    var device: String { camera.path }

    @Flag(name: .long, help: "Print the formats as JSON.")
    var json = false

    func run() throws {
        let formats = try CameraDiscovery.formats(path: device)
        if json {
            try printJSON(formats.map(FormatJSON.init))
            return
        }
        for format in formats {
            var traits = [format.name]
            if format.isCompressed { traits.append("compressed") }
            if format.isEmulated { traits.append("emulated") }
            let use = format.pixelFormat.map { "--format \($0.rawValue)" } ?? "not recordable"
            print("\(format.fourCC) (\(traits.joined(separator: "; "))): \(use)")
            for size in format.sizes {
                let rates = size.frameRates.map(\.description).joined(separator: ", ")
                print("  \(size.size): \(rates.isEmpty ? "no frame rates listed" : rates + " fps")")
            }
        }
    }
}

/// One format in `formats --json`.
struct FormatJSON: Encodable {
    struct Size: Encodable {
        var width: Int
        var height: Int
        /// Fastest first, as `--fps` takes them: "30", "30000/1001".
        var fps: [String]
    }

    var fourcc: String
    var description: String
    /// The `--format` name, null for a format vtrecord does not record.
    @NullWhenAbsent var format: String?
    var emulated: Bool
    var compressed: Bool
    var sizes: [Size]

    init(_ format: CameraFormatOffer) {
        fourcc = format.fourCC.description
        description = format.name
        self.format = format.pixelFormat?.rawValue
        emulated = format.isEmulated
        compressed = format.isCompressed
        sizes = format.sizes.map {
            Size(width: $0.size.width, height: $0.size.height, fps: $0.frameRates.map(\.description))
        }
    }

    enum CodingKeys: String, CodingKey {
        case fourcc, description, format, emulated, compressed, sizes
    }

}

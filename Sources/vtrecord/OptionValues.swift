import ArgumentParser
import VTCapture
import VTCore
import VTDecoding
import VTEncoding
import VTH264
import VTOutput

/// `--size 1280x720`.
extension FrameSize: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(parsing: argument)
    }
}

/// `--format auto|yuyv|nv12|yu12|mjpeg`.
enum CameraFormatArgument: String, ExpressibleByArgument, CaseIterable {
    case auto, yuyv, nv12, yu12, mjpeg

    var pixelFormat: CameraPixelFormat? { CameraPixelFormat(rawValue: rawValue) }
}

/// `--control brightness=20`: checked against the camera's controls once it is open.
extension ControlSetting: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(parsing: argument)
    }
}

/// `--container h264|mp4|mkv|ts`.
extension Container: ExpressibleByArgument {}

/// `--timing cfr|passthrough`.
enum TimingArgument: String, ExpressibleByArgument, CaseIterable {
    case cfr, passthrough
}

/// No source was named and there is no camera at the default path.
struct NoDefaultCamera: ReportableError {
    var exitStatus: ExitStatus { .capture }
    var description: String {
        "no source given and \(DeviceOption.defaultPath) does not exist: plug in a camera, "
            + "or give --device PATH, --input FILE.y4m or --test-pattern"
    }
}

/// `--fps 30`, `--fps 30000/1001`, `--fps 29.97`.
struct FrameRateArgument: ExpressibleByArgument {
    let rate: FrameRate
    init?(argument: String) {
        guard let rate = FrameRate(parsing: argument) else { return nil }
        self.rate = rate
    }
}

/// A positive count with an optional decimal suffix: rates in bit/s (`2M`, `500k`) and sizes
/// in bytes (`250k`).
struct DecimalQuantity: ExpressibleByArgument {
    let value: Int64
    init?(argument: String) {
        guard let value = parseDecimalQuantity(argument), value > 0 else { return nil }
        self.value = value
    }
}

/// `--duration 10s`, `1m30s`, `500ms`, `90` (seconds).
struct DurationArgument: ExpressibleByArgument {
    let seconds: Double
    init?(argument: String) {
        guard let value = parseDuration(argument), value > 0 else { return nil }
        seconds = value
    }
}

/// `--keyint 60` (frames) or `--keyint 2s` (a duration: frames = seconds × fps).
struct KeyIntervalArgument: ExpressibleByArgument {
    let interval: EncoderSettings.KeyFrameInterval
    init?(argument: String) {
        if let frames = Int(argument) {
            guard frames > 0 else { return nil }
            interval = .frames(frames)
        } else if argument.last?.isLetter == true, let seconds = parseDuration(argument), seconds > 0 {
            interval = .seconds(seconds)
        } else {
            return nil
        }
    }
}

/// `--level 3.1`, `--level 4`, `--level auto`.
struct LevelArgument: ExpressibleByArgument {
    let level: String?
    init?(argument: String) {
        if argument == "auto" {
            level = nil
        } else if EncoderSettings.levelIDC(argument) != nil {
            level = argument
        } else {
            return nil
        }
    }
}

extension H264Profile: ExpressibleByArgument {}
extension EncoderSettings.Entropy: ExpressibleByArgument {}
extension EncoderSettings.RateControl: ExpressibleByArgument {}

extension EncoderSettings.RealTimeMode: ExpressibleByArgument {
    /// Also true and false, as presets written when --realtime was a flag have them: true is
    /// the live default (adaptive), false is off.
    public init?(argument: String) {
        switch argument {
        case "true": self = .adaptive
        case "false": self = .off
        default: self.init(rawValue: argument)
        }
    }

    /// `--realtime` with no mode after it (as when it was a flag) means adaptive, and
    /// `--no-realtime` is `--realtime off`: the words are put in before the parser sees the
    /// command line, so the last of them wins as with any option.
    static func expandingBareFlag(_ arguments: [String]) -> [String] {
        var result: [String] = []
        for (index, argument) in arguments.enumerated() {
            if argument == "--" {
                result += arguments[index...]
                break
            }
            if argument == "--no-realtime" {
                result += ["--realtime", Self.off.rawValue]
                continue
            }
            result.append(argument)
            guard argument == "--realtime" else { continue }
            let next: String? = arguments.indices.contains(index + 1) ? arguments[index + 1] : nil
            if next.map({ $0.hasPrefix("-") }) ?? true { result.append(Self.adaptive.rawValue) }
        }
        return result
    }
}
extension EncoderChoice: ExpressibleByArgument {}

/// `--decoder auto|vaapi|software`.
extension DecoderChoice: ExpressibleByArgument {}

/// `--decoder` and `--va-device` of the commands that decode (verify, thumbnail).
struct DecoderOptions: ParsableArguments {
    @Option(name: .long, help: "Decoder: auto (default: VA-API hardware when a device can decode the stream's profile and size, else libavcodec in software, naming a device that could not and why), vaapi (hardware or exit 4), software.")
    var decoder: DecoderChoice = .auto

    @Option(name: .long, help: ArgumentHelp("VA-API device (DRM render node) to decode on. Default: the first /dev/dri/renderD* that can decode the stream.", valueName: "path"))
    var vaDevice: String?

    /// A chooser for one file's sessions.
    func chooser() -> DecoderChooser { DecoderChooser(choice: decoder, vaDevice: vaDevice) }

    /// Says once why auto decodes in software although a device was there.
    static func noteFallback(_ chooser: DecoderChooser, file: String, said: inout Set<String>) {
        guard let reason = chooser.selection?.reason, said.insert(reason).inserted else { return }
        writeToStandardError("vtrecord: \(file): decoding in software: \(reason)")
    }
}

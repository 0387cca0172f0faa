import ArgumentParser
import VTCapture
import VTCore
import VTDecoding
import VTEncoding
import VTH264
import VTOutput
import VTRecorder

/// `--size 1280x720`.
extension FrameSize: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(parsing: argument)
    }
}

/// `--format auto|yuyv|nv12|yu12|mjpeg`.
enum CameraFormatArgument: String, ExpressibleByArgument, CaseIterable {
    case auto, yuyv, nv12, yu12, mjpeg, h264

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
extension FrameTiming: ExpressibleByArgument {}
typealias TimingArgument = FrameTiming

/// `--check-frames`: how a camera's compressed frames are checked before `--encoder copy`
/// stores them.
enum FrameCheckArgument: String, ExpressibleByArgument, CaseIterable {
    case markers, decode
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
///
/// Time options read their value with `parsing: .unconditional` and `transform: parse`: by
/// default swift-argument-parser takes `-1s` for an option of its own and answers "Missing
/// value", where the user needs to hear that a time cannot be negative. Options that take a
/// number read it with `.unconditional` too, so `--frames -1` hears the option's range.
struct DurationArgument: ExpressibleByArgument {
    let seconds: Double
    init?(argument: String) {
        guard let value = try? Self.parse(argument) else { return nil }
        self = value
    }

    private init(seconds: Double) { self.seconds = seconds }

    /// A time above zero, or why `argument` is not one.
    static func parse(_ argument: String) throws(TimeValueError) -> DurationArgument {
        let seconds = try TimeValueError.seconds(argument)
        guard seconds > 0 else { throw .zero }
        return DurationArgument(seconds: seconds)
    }
}

/// Why the value of a time option is not a time it takes; swift-argument-parser prints it
/// after "The value '…' is invalid for '--option <time>'".
enum TimeValueError: Error, CustomStringConvertible {
    case negative, zero, notATime

    /// Seconds, 0 and up, or the reason `argument` is not a time.
    static func seconds(_ argument: String) throws(TimeValueError) -> Double {
        if let seconds = parseDuration(argument) { return seconds }
        let trimmed = argument.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("-"), parseDuration(String(trimmed.dropFirst())) != nil { throw .negative }
        throw .notATime
    }

    var description: String {
        switch self {
        case .negative: "a time cannot be negative: give one above zero, such as 10s, 1m30s, 500ms or 90 (seconds)"
        case .zero: "the time must be above zero: give one such as 10s, 1m30s, 500ms or 90 (seconds)"
        case .notATime: "not a time: give one such as 10s, 1m30s, 500ms or 90 (seconds)"
        }
    }
}

/// `--keyint 60` (frames) or `--keyint 2s` (a duration: frames = seconds × fps).
struct KeyIntervalArgument: ExpressibleByArgument {
    let interval: EncoderSettings.KeyFrameInterval
    init?(argument: String) {
        guard let value = try? Self.parse(argument) else { return nil }
        self = value
    }

    private init(_ interval: EncoderSettings.KeyFrameInterval) { self.interval = interval }

    /// Frames or a time, above zero, or why `argument` is neither (read as `DurationArgument`
    /// is, so that `-2s` is not taken for an option).
    static func parse(_ argument: String) throws(KeyIntervalError) -> KeyIntervalArgument {
        if let frames = Int(argument) {
            guard frames > 0 else { throw frames < 0 ? .negative : .zero }
            return KeyIntervalArgument(.frames(frames))
        }
        guard argument.last?.isLetter == true else { throw .notAnInterval }
        let seconds: Double
        do {
            seconds = try TimeValueError.seconds(argument)
        } catch {
            throw error == .negative ? .negative : .notAnInterval
        }
        guard seconds > 0 else { throw .zero }
        return KeyIntervalArgument(.seconds(seconds))
    }
}

/// Why the value of `--keyint` is not an interval.
enum KeyIntervalError: Error, CustomStringConvertible {
    case negative, zero, notAnInterval

    var description: String {
        switch self {
        case .negative: "the keyframe interval cannot be negative: give frames (60) or a time (2s) above zero"
        case .zero: "the keyframe interval must be above zero: give frames (60) or a time (2s)"
        case .notAnInterval: "give frames (60) or a time with its unit (2s, 500ms)"
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

import VTCore

/// Why a sound device could not be opened or stopped giving samples, phrased so the user
/// knows what to do next. A device problem ends a recording only with `--audio-required`
/// (exit 3, as a camera's would); otherwise the recording goes on with silence.
public enum AudioCaptureError: ReportableError, Equatable {
    /// No PCM or card of that name; `known` lists what there is.
    case noSuchDevice(name: String, known: [String])
    /// The device exists but cannot be opened (busy, permission): ALSA's words.
    case cannotOpen(name: String, reason: String)
    /// The device offers nothing that can be recorded as asked (`detail` says what it offers).
    case unsupportedFormat(name: String, detail: String)
    /// A call on an open device failed in a way no other case describes.
    case deviceCall(name: String, call: String, reason: String)
    /// The device went away while recording.
    case unplugged(name: String)

    public var exitStatus: ExitStatus {
        switch self {
        case .noSuchDevice, .cannotOpen, .unsupportedFormat, .deviceCall, .unplugged: .capture
        }
    }

    public var description: String {
        switch self {
        case let .noSuchDevice(name, known):
            let list = known.isEmpty ? "this machine has no sound capture device"
                : "capture devices here: \(known.joined(separator: ", "))"
            return "no sound device \"\(name)\" (\(list)): see `vtrecord devices`"
        case let .cannotOpen(name, reason):
            return "cannot open sound device \(name): \(reason)"
        case let .unsupportedFormat(name, detail):
            return "sound device \(name) cannot record as asked: \(detail)"
        case let .deviceCall(name, call, reason):
            return "sound device \(name): \(call) failed: \(reason)"
        case let .unplugged(name):
            return "sound device \(name) went away (unplugged?)"
        }
    }
}

/// Why the audio encoder could not be set up or failed (exit 4, as the video encoder's).
public struct AudioEncoderError: ReportableError, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var exitStatus: ExitStatus { .encoder }
    public var description: String { message }
}

import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// Why a source could not be opened or stopped delivering frames, phrased so the user knows
/// what to do next.
///
/// Input-file problems (a Y4M file or standard input) are bad usage: the user handed vtrecord
/// something it cannot read, so they exit with status 2. Camera device problems exit with
/// status 3.
public enum CaptureError: ReportableError, Equatable {
    /// `open(2)` failed on an input file.
    case cannotOpen(path: String, errno: Int32)
    /// `read(2)` failed part-way through an input.
    case readFailed(path: String, errno: Int32)
    /// The input does not begin with the Y4M signature at all.
    case notY4M(path: String)
    /// The Y4M stream header is damaged; `problem` says what is wrong and where.
    case malformedHeader(path: String, problem: String)
    /// A Y4M colour space (`C` tag, without the `C`) other than 8-bit 4:2:0 or 8-bit mono.
    case unsupportedColourSpace(path: String, colourSpace: String)
    /// The bytes where a frame should start are not a `FRAME` marker. `frame` counts from 0,
    /// as `CapturedFrame.sequence` does; `offset` is the byte position in the input.
    case malformedFrameMarker(path: String, frame: Int, offset: Int64)
    /// A test pattern size the frame code or a 4:2:0 encoder cannot work with.
    case unsupportedPatternSize(width: Int, height: Int, reason: String)

    /// No device node at the path.
    case noSuchDevice(path: String)
    /// The node exists but this user may not open it.
    case devicePermissionDenied(path: String)
    /// Another program holds the camera (EBUSY from S_FMT or REQBUFS).
    case deviceBusy(path: String)
    /// The node opened but is not a streaming video capture device; `what` says what it is.
    case notACaptureDevice(path: String, what: String)
    /// The device offers nothing vtrecord can record (`detail` says what it does offer), or
    /// `--strict-format` was given and the driver chose something other than what was asked.
    case unsupportedDeviceFormat(path: String, detail: String)
    /// A call on the device (an ioctl, mmap, open) failed in a way no other case describes.
    case deviceCall(path: String, SystemError)
    /// The device went away while recording (ENODEV, EIO, POLLERR).
    case unplugged(path: String)
    /// A `--control` the camera does not have or will not take: bad usage, exit 2.
    case control(ControlError)

    public var exitStatus: ExitStatus {
        switch self {
        case .cannotOpen, .readFailed, .notY4M, .malformedHeader, .unsupportedColourSpace,
             .malformedFrameMarker, .unsupportedPatternSize:
            .usage
        case .noSuchDevice, .devicePermissionDenied, .deviceBusy, .notACaptureDevice,
             .unsupportedDeviceFormat, .deviceCall, .unplugged:
            .capture
        case let .control(error):
            error.exitStatus
        }
    }

    public var description: String {
        switch self {
        case let .cannotOpen(path, code):
            return "cannot open \(Self.displayName(path)): \(SystemError.reason(code))"
        case let .readFailed(path, code):
            return "cannot read \(Self.displayName(path)): \(SystemError.reason(code))"
        case let .notY4M(path):
            let hint = path == "-" ? "ffmpeg … -f yuv4mpegpipe -" : "ffmpeg -i \(path) -pix_fmt yuv420p -f yuv4mpegpipe out.y4m"
            return "\(Self.displayName(path)) is not a Y4M stream (it does not start with "
                + "\"YUV4MPEG2\"): convert it with \(hint)"
        case let .malformedHeader(path, problem):
            return "\(Self.displayName(path)): malformed Y4M header: \(problem)"
        case let .unsupportedColourSpace(path, colourSpace):
            let depth = Self.bitDepth(of: colourSpace)
            let named = depth.map { "C\(colourSpace) (\($0)-bit)" } ?? "C\(colourSpace)"
            let target = depth == nil ? "4:2:0" : "8-bit 4:2:0"
            return "\(Self.displayName(path)): Y4M colour space \(named) is not supported: "
                + "convert to \(target) (ffmpeg -pix_fmt yuv420p)"
        case let .malformedFrameMarker(path, frame, offset):
            return "\(Self.displayName(path)): frame \(frame) (byte \(offset)) does not start "
                + "with a FRAME marker: the stream is damaged or its header gives the wrong size"
        case let .unsupportedPatternSize(width, height, reason):
            return "test pattern size \(width)x\(height) is not supported: \(reason)"
        case let .noSuchDevice(path):
            return "\(path): no such device: is the camera plugged in? (vtrecord devices lists the cameras)"
        case let .devicePermissionDenied(path):
            return "\(path): no permission: add the user to the 'video' group (sudo usermod -aG video $USER, then log in again)"
        case let .deviceBusy(path):
            return "\(path) is busy: another program is using the camera"
        case let .notACaptureDevice(path, what):
            return "\(path) is not a video capture device: it is \(what)"
        case let .unsupportedDeviceFormat(path, detail):
            return "\(path): \(detail)"
        case let .deviceCall(path, failure):
            return "\(path): \(failure)"
        case let .unplugged(path):
            return "\(path) was unplugged or stopped responding: the recording ends here (--reconnect waits for it to come back)"
        case let .control(error):
            return error.description
        }
    }

    /// How messages name an input: "-" is what the user typed for standard input, but not
    /// what they should read back.
    static func displayName(_ path: String) -> String {
        path == "-" ? "standard input" : path
    }

    /// The bit depth spelled in a colour space name such as `420p10` or `mono16`, when the
    /// name carries one.
    private static func bitDepth(of colourSpace: String) -> Int? {
        let digits = colourSpace.reversed().prefix(while: \.isNumber)
        guard !digits.isEmpty, colourSpace.dropLast(digits.count).hasSuffix("p")
            || colourSpace.dropLast(digits.count).hasSuffix("mono") else { return nil }
        return Int(String(digits.reversed()))
    }
}

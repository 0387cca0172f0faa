import VTCore

/// Receives each compressed access unit in decode order (the VideoToolbox output callback).
/// An error thrown here (the output failed) ends the encode call that delivered the frame.
public typealias EncodedFrameHandler = (EncodedFrame) throws -> Void

/// An H.264 encoder with VideoToolbox's shape (`VTCompressionSession`): created for a size and
/// settings, prepared, fed pictures, then completed. Every backend hands out AVCC access units
/// plus a `VideoFormatDescription`, so the writer and the pipeline never depend on the backend.
///
/// A session is used from one thread (the encoder thread).
public protocol CompressionSession: AnyObject {
    /// "x264" or "vaapi": which encoder runs, as reported in the summary.
    var encoderName: String { get }

    /// The parameter sets, valid after `prepare()`.
    var formatDescription: VideoFormatDescription { get }

    /// The settings as the encoder resolved them (defaults filled in, automatic values chosen).
    var resolvedSettings: EncoderSettings { get }

    /// How many pictures decoding can run ahead of presentation (0 without B-frames, 1 with
    /// B-frames that no other picture references, 2 with a B-pyramid), valid after `prepare()`:
    /// the k-th frame out decodes at the presentation time of the (k − delay)-th frame in.
    var reorderDelay: Int { get }

    /// Opens the encoder and produces the parameter sets
    /// (`VTCompressionSessionPrepareToEncodeFrames`).
    func prepare() throws(EncoderError)

    /// Encodes one picture; finished frames go to the output handler, possibly later ones
    /// (`VTCompressionSessionEncodeFrame`). The session is done with `buffer` when this returns.
    /// `token` comes back on the `EncodedFrame` made of this picture (`sourceFrameRefcon`).
    func encode(_ buffer: PixelBuffer, pts: MediaTime, forceKeyFrame: Bool, token: FrameToken) throws

    /// Whether the session takes the source's frames as the camera compressed them
    /// (`--encoder copy`): then the recorder calls `pass` instead of `encode`.
    var takesCompressedFrames: Bool { get }

    /// Hands on one frame as the camera compressed it, for a session that
    /// `takesCompressedFrames`; `token` comes back on the `EncodedFrame`, as with `encode`.
    func pass(_ compressed: CompressedFrame, pts: MediaTime, forceKeyFrame: Bool, token: FrameToken) throws

    /// Emits every delayed frame (`VTCompressionSessionCompleteFrames`): nothing is lost on a
    /// clean stop.
    func completeFrames() throws

    /// Releases the encoder (`VTCompressionSessionInvalidate`).
    func invalidate()

    /// The speeds the running session can step between (`--realtime adaptive`), best and
    /// slowest first, the first being the one it was opened with: settings the encoder can
    /// change between two pictures without new parameter sets (a change across
    /// `newEncoderFromSpeedStep` starts with a keyframe). Empty when it has none to change.
    /// Valid after `prepare()`.
    var speedSteps: [String] { get }

    /// Encodes the pictures from now on at `speedSteps[step]`.
    func setSpeedStep(_ step: Int) throws(EncoderError)

    /// The first speed step coded by another encoder than the one `speedSteps[0]` runs on, if
    /// any (x264: one opened without a lookahead). A change across it starts with a keyframe
    /// and empties the encoder left, which costs a moment's extra work.
    var newEncoderFromSpeedStep: Int? { get }

    /// True after a change of speed until what it costs shows: until the encoder it opened
    /// (if it opened one) has given out its first picture.
    var speedChangePending: Bool { get }

    /// Whether the pictures are coded on a device, off the CPU, whose time per picture the
    /// session measures once speeds are stepped (`takeDeviceTime()`). A pipelined device's cost
    /// shows neither in the process's CPU time nor in the encode call, which waits for the
    /// device only once it has fallen behind.
    var timesDevice: Bool { get }

    /// The device's time over the pictures timed since the last call, in nanoseconds, and how
    /// many were timed; nil when none was (or the session does not time a device). The encode
    /// calls spent that time waiting for the timed pictures, which an untimed picture would
    /// have spent coding while the next was uploaded.
    func takeDeviceTime() -> (nanoseconds: Int64, pictures: Int)?
}

extension CompressionSession {
    public var takesCompressedFrames: Bool { false }
    public func pass(_ compressed: CompressedFrame, pts: MediaTime, forceKeyFrame: Bool, token: FrameToken) throws {
        preconditionFailure("\(encoderName) encodes pictures; it takes no compressed frames")
    }
    public var speedSteps: [String] { [] }
    public var speedChangePending: Bool { false }
    public var newEncoderFromSpeedStep: Int? { nil }
    public var timesDevice: Bool { false }
    public func takeDeviceTime() -> (nanoseconds: Int64, pictures: Int)? { nil }
    public func setSpeedStep(_ step: Int) throws(EncoderError) {
        preconditionFailure("\(encoderName) has no speeds to step between")
    }
}

/// Why the encoder failed (exit 4).
public enum EncoderError: ReportableError, Equatable {
    case openFailed(encoder: String, reason: String)
    case headersFailed(encoder: String)
    case encodeFailed(encoder: String, frame: Int, reason: String? = nil)
    case unsupportedPixelFormat(encoder: String, format: PixelFormat)
    /// `--encoder vaapi` and no device can do what was asked.
    case unavailable(encoder: String, reason: String)
    /// A running encoder refused a change of speed (`--realtime adaptive`).
    case speedChangeFailed(encoder: String, speed: String)

    public var exitStatus: ExitStatus { .encoder }

    public var description: String {
        switch self {
        case let .openFailed(encoder, reason):
            "\(encoder) could not open the encoder: \(reason)"
        case let .headersFailed(encoder):
            "\(encoder) produced no SPS/PPS parameter sets"
        case let .encodeFailed(encoder, frame, reason):
            "\(encoder) failed to encode frame \(frame)" + (reason.map { ": \($0)" } ?? "")
        case let .unavailable(encoder, reason):
            "--encoder \(encoder) cannot be used: \(reason)"
        case let .speedChangeFailed(encoder, speed):
            "\(encoder) refused to change its speed to \(speed) while running: record with --realtime drop"
        case let .unsupportedPixelFormat(encoder, format):
            "\(encoder) cannot take \(format.rawValue) pictures: convert to I420 or NV12 first"
        }
    }
}

import ArgumentParser
import Foundation
import Logging
import Synchronization
import VTCapture
import VTCore
import VTDecoding
import VTOutput
import VTPictures
import VTRecorder

/// `vtrecord snapshot`: one still from a camera.
struct Snapshot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Take one JPEG still from a camera, once its automatic exposure has settled.",
        discussion: """
            The camera is opened as for recording (--size, --format, --fps, --control), the \
            first frames are let go while its automatic exposure and white balance settle \
            (--skip), and the next good frame is written. An MJPEG camera's own JPEG is written \
            byte for byte as it came; other formats are compressed with libturbojpeg, video \
            levels stretched to JPEG's full range. The file appears whole or not at all: it is \
            written beside its name and then renamed. Exit status as for recording; a signal \
            before the picture is taken ends without a file, status 130.
            """
    )

    @OptionGroup var camera: DeviceOption

    @Option(name: .long, help: ArgumentHelp("Picture size, as WxH (default 1280x720, or the nearest the camera offers, as for recording).", valueName: "WxH"))
    var size: FrameSize?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Frame rate to run the camera at while it settles: 30, 30000/1001.", valueName: "rate"))
    var fps: FrameRateArgument?

    @Option(name: .long, help: "Camera pixel format: auto (as for recording), yuyv, nv12, yu12, mjpeg (the camera's own JPEG); h264 is refused, as a still needs a picture.")
    var format: CameraFormatArgument = .auto

    @Option(name: .customLong("control"), help: ArgumentHelp("Set a camera control first, e.g. exposure_auto=1 (repeatable, as for recording).", valueName: "name=value"))
    var controls: [ControlSetting] = []

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Frames to let go first while the camera settles (default: one second's worth at its rate).", valueName: "n"))
    var skip: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("The longest to wait for a frame before giving up (exit 3): a camera that streams nothing does not hang a script (default 10s).", valueName: "time"), transform: DurationArgument.parse)
    var timeout: DurationArgument?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("JPEG quality, 1 to 100, when vtrecord compresses the picture (an MJPEG camera's JPEG is kept as it is).", valueName: "q"))
    var quality = 90

    @Option(name: [.short, .long], help: ArgumentHelp("Where to write: a template with strftime fields (%Y%m%d-%H%M%S) and {device} (the camera's node name), or '-' for standard output (default '{device}-%Y%m%d-%H%M%S.jpg').", valueName: "path"))
    var output = "{device}-%Y%m%d-%H%M%S.jpg"

    @Flag(name: .long, help: "Replace an existing file.")
    var overwrite = false

    @Flag(name: .long, help: "Print what was written as JSON on standard output.")
    var json = false

    @Flag(name: .long, help: "Print nothing but errors.")
    var quiet = false

    /// Buffers a still needs: the driver's reserve and the one being read.
    static let bufferCount = V4L2Source.minimumBufferCount + 1

    func validate() throws {
        if format == .h264 {
            throw ValidationError("--format h264: a still needs a picture, and vtrecord does not decode a camera's H.264: "
                                  + "use --format mjpeg or a raw format")
        }
        if let skip, !(0...10_000).contains(skip) {
            throw ValidationError("--skip must be between 0 and 10000, not \(skip)")
        }
        guard (1...100).contains(quality) else { throw ValidationError("--quality must be between 1 and 100, not \(quality)") }
        if json && output == "-" {
            throw ValidationError("-o - and --json both want standard output: write the JPEG to a file")
        }
    }

    /// What `--json` prints.
    struct Report: Encodable {
        let file: String
        let device: String
        let format: String
        let width: Int
        let height: Int
        /// The camera's number for the frame taken (V4L2 `sequence`).
        let sequence: UInt64
        let skipped: Int
        let bytes: Int
        /// The camera's own JPEG, written as it came.
        let cameraJPEG: Bool

        enum CodingKeys: String, CodingKey {
            case file, device, format, width, height, sequence, skipped, bytes
            case cameraJPEG = "camera_jpeg"
        }
    }

    func run() throws {
        StopSignals.blockStopSignals()
        let logger = Logging.Logger(label: "vtrecord")
        let stop = StopRequest()
        StopSignals.start(onFirst: { _ in stop.stopCleanly() },
                            onSecond: { stop.abortProcess(exitStatus: ExitStatus.aborted.rawValue) })
        let template: OutputTemplate
        do { template = try OutputTemplate(output) } catch { throw UsageError("-o \(output): \(error.description)") }
        let device = Record.deviceName(camera: camera.path, input: nil)
        if !template.isStandardOutput && !overwrite {
            // Refused before the camera is opened, when the name is already known to be taken.
            let path = template.expand(.init(date: Date(), device: device, segment: 1))
            if FileManager.default.fileExists(atPath: path) { throw OutputError.exists(path: path) }
        }
        guard camera.device != nil || FileManager.default.fileExists(atPath: DeviceOption.defaultPath) else {
            throw NoDefaultCamera()
        }
        let request = CameraRequest(format: format.pixelFormat, size: size, frameRate: fps?.rate)
        let source = try V4L2Source(path: camera.path, request: request, bufferCount: Self.bufferCount,
                                    depth: PipelineDepth(queue: 1), controls: controls, keepCompressed: true,
                                    logger: logger)
        stop.attach(source)
        let skip = self.skip ?? max(1, Int(source.format.frameRate.framesPerSecond.rounded(.up)))
        let watchdog = FrameWatchdog(source, limit: timeout?.seconds ?? 10)
        let taken: (bytes: [UInt8], sequence: UInt64, cameraJPEG: Bool)
        do {
            taken = try Self.settledStill(source, skip: skip, quality: quality, watchdog: watchdog)
        } catch {
            watchdog.cancel()
            source.close()
            if error is StoppedBeforePicture, watchdog.fired {
                throw NoFrames(path: camera.path, seconds: timeout?.seconds ?? 10)
            }
            throw error
        }
        watchdog.cancel()
        source.close()
        let path = template.expand(.init(date: Date(), device: device, segment: 1))
        try writeFileAtomically(path: path, bytes: taken.bytes, replace: overwrite)
        let wire = source.negotiation.format.rawValue
        let report = Report(file: path, device: camera.path, format: wire, width: source.format.width,
                            height: source.format.height, sequence: taken.sequence, skipped: skip,
                            bytes: taken.bytes.count, cameraJPEG: taken.cameraJPEG)
        if json {
            print(String(decoding: try jsonDocument(report), as: UTF8.self))
        } else if !quiet && !template.isStandardOutput {
            logger.notice("wrote \(path): \(report.width)x\(report.height) JPEG, \(report.bytes) bytes, frame \(report.sequence) of the camera's \(wire) stream\(taken.cameraJPEG ? " as it came" : "")")
        }
    }

    /// The first good frame after `skip`, as JPEG bytes: the camera's own when it sends JPEG.
    static func settledStill(_ source: V4L2Source, skip: Int, quality: Int,
                             watchdog: FrameWatchdog) throws -> (bytes: [UInt8], sequence: UInt64, cameraJPEG: Bool) {
        var seen = 0
        while let frame = try source.nextFrame() {
            watchdog.frameArrived()
            guard seen == skip else {
                seen += 1
                continue
            }
            if let jpeg = frame.compressed { return (jpeg.data, frame.sequence, true) }
            guard let picture = frame.buffer else { preconditionFailure("the camera was opened for pictures") }
            let bytes = try Pictures.still(picture, fullRange: source.format.fullRange == true, quality: quality)
            return (bytes, frame.sequence, false)
        }
        throw StoppedBeforePicture()
    }
}

/// Stops a source that has given no frame for `limit` seconds, from a thread of its own.
final class FrameWatchdog: Sendable {
    private struct State {
        var last = ContinuousClock.now
        var fired = false
        var cancelled = false
    }

    private let state = Mutex(State())
    private let done = DispatchSemaphore(value: 0)

    init(_ source: any CaptureSource, limit: Double) {
        Thread.start(named: "vtrecord-watch") { [self] in watch(source, allowed: .milliseconds(Int64(limit * 1000))) }
    }

    private func watch(_ source: any CaptureSource, allowed: Duration) {
        while true {
            let (expired, cancelled) = state.withLock { state -> (Bool, Bool) in
                let expired = !state.cancelled && state.last.duration(to: .now) > allowed
                if expired { state.fired = true }
                return (expired, state.cancelled)
            }
            if expired { source.stop() }
            if expired || cancelled { return }
            // Polled: a tenth of a second's lateness in giving up does not matter.
            _ = done.wait(timeout: .now() + .milliseconds(100))
        }
    }

    /// Whether it stopped the source.
    var fired: Bool { state.withLock { $0.fired } }

    func frameArrived() { state.withLock { $0.last = .now } }

    func cancel() {
        state.withLock { $0.cancelled = true }
        done.signal()
    }
}

/// `snapshot` waited `--timeout` for a frame that never came.
struct NoFrames: ReportableError {
    let path: String
    let seconds: Double
    var exitStatus: ExitStatus { .capture }
    var description: String {
        String(format: "%@ gave no frame for %g s: check that nothing else holds it and that it streams "
               + "(vtrecord formats --device %@), or allow longer with --timeout", path, seconds, path)
    }
}

/// A signal ended `snapshot` before it had a picture.
struct StoppedBeforePicture: ReportableError {
    var exitStatus: ExitStatus { .aborted }
    var description: String { "stopped before a picture was taken: nothing written" }
}

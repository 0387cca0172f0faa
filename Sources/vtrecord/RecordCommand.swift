import ArgumentParser
import Foundation
import Logging
import VTCapture
import VTCore
import VTDecoding
import VTPictures
import VTRecorder

/// Recording: the plan of the options, run by VTRecorder's `RecordingSession`; what comes back
/// is said on stderr and in `--json-summary`.
extension Record {
    /// `--events` without `-o`: only the clips are kept.
    var eventsAlone: Bool { events.events != nil && output.recording == nil }

    func run() throws {
        StopSignals.blockStopSignals()
        let logger = Logging.Logger(label: "vtrecord")
        var plan = try plan()
        if case .camera = plan.source, input.device == nil, !FileManager.default.fileExists(atPath: DeviceOption.defaultPath) {
            throw NoDefaultCamera()
        }
        if case .ifCameraOffers(let wanted) = plan.copy {
            let offers = try? CameraDiscovery.formats(path: input.camera.path)
            plan = plan.settlingCopy(offered: offers?.contains { $0.pixelFormat == wanted } == true, camera: input.camera.path)
        }
        let session = RecordingSession(plan: plan, logger: logger, tools: RecordingSession.Tools(
            h264DecodeCheck: { try H264DecodeCheck() }, thumbnail: { path in Self.recordingThumbnail(path: path) }))
        let outcome: RecordingSession.Outcome
        do {
            outcome = try session.run()
        } catch CaptureError.control(let error) {
            throw PresetLocatedError.locating(error, presets: presets, commandLine: Array(CommandLine.arguments.dropFirst()))
        }
        let (result, summary) = (outcome.result, outcome.summary)
        if !output.quiet && result.statistics.framesEncoded > 0 {
            logger.notice("\(Self.describe(summary, result: result, clipsOnly: eventsAlone))")
        }
        if let path = output.jsonSummary {
            try writeSummary(summary, to: path)
        }
        if let error = result.error {
            if let reportable = error as? any ReportableError { throw reportable }
            throw error
        }
    }

    /// A still for `/recordings`' cards: the first picture, 320 pixels wide.
    static func recordingThumbnail(path: String) -> [UInt8]? {
        guard let generator = try? AssetImageGenerator(path: path),
              let image = try? generator.image(at: 0, exact: false) else { return nil }
        let source = image.picture
        let width = 320
        let height = max(2, Int((Double(width) * Double(source.height) / Double(max(1, source.width))).rounded()) & ~1)
        let picture = Pictures.scaled(source, width: width, height: height)
        if !image.isFullRange { Pictures.expandToFullRange(picture) }
        return try? Pictures.jpeg(picture, quality: 75)
    }
}

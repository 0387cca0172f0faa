import Foundation
import Logging
import VTCore
import VTOutput

/// The outputs beside the recording (`-o` given more than once).
extension Record {
    /// An output beside the recording, on a thread of its own (`vtrecord-out1`, …). Its
    /// notices are printed even with --quiet: an output that fails is an error of its own.
    /// With a source that is not `live`, a full queue makes the encoder wait rather than drop.
    static func branch(_ spec: OutputSpec, index: Int, writerSettings: AssetWriter.Settings, device: String,
                       preset: String?, live: Bool, logger: Logging.Logger, quiet: Bool) -> OutputBranch {
        let interrupt = NetworkInterrupt()
        let say: @Sendable (String) -> Void = { text in logger.warning("\(text)") }
        if !quiet { logger.notice("also writing to \(spec.name)") }
        switch spec.target {
        case .network(let destination):
            let settings = NetworkOutput.Settings(frameRate: writerSettings.frameRate, audio: writerSettings.audio,
                                                  metadata: writerSettings.metadata)
            return OutputBranch(name: spec.name, threadName: "vtrecord-out\(index)", waitsForRoom: !live,
                                writesAnnexB: true, interrupt: interrupt, say: say) {
                _, format, base throws(OutputError) in
                let stream = try NetworkOutput(destination: destination, settings: settings, interrupt: interrupt)
                try stream.connect(format: format, base: base)
                return stream
            }
        case .file(let path):
            var settings = writerSettings
            settings.container = spec.fileContainer
            if settings.container == .h264 { settings.audio = nil }
            let fileSettings = settings
            return OutputBranch(name: spec.name, threadName: "vtrecord-out\(index)", segmentPolicy: spec.segmentPolicy,
                                waitsForRoom: !live, writesAnnexB: settings.container == .h264 || settings.container == .ts,
                                interrupt: interrupt, say: say) { attempt, _, _ throws(OutputError) in
                // A file opened again after a failure gets a name of its own: name-1.mp4, …
                let name = attempt == 0 ? path : OutputOptions.suffixed(path, attempt)
                let template: OutputTemplate
                do throws(OutputTemplateError) {
                    template = try OutputTemplate(name)
                } catch {
                    throw .cannotOpen(path: name, errno: EINVAL)
                }
                // Segments are started by the branch, where the encoder thread decided.
                return try SegmentedOutput(template: template, policy: nil, device: device, preset: preset,
                                           maxFiles: spec.maxFiles,
                                           firstNumber: template.nextNumber(device: device, preset: preset),
                                           audioSampleRate: fileSettings.audio?.sampleRate,
                                           warn: say, open: { file throws(OutputError) in
                                               try AssetWriter.open(path: file, settings: fileSettings)
                                           })
            }
        }
    }
}

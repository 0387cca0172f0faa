import Foundation
import Logging
import Synchronization
import VTCore
import VTDecoding
import VTEvents
import VTOutput
import VTRecorder

extension Record {
    /// `--events`: the clips, or nil without it. Clips number on from those a previous run left.
    static func eventClips(_ options: EventOptions, container: Container?, writerSettings: AssetWriter.Settings,
                           device: String, preset: String?, inbox: EventInbox, logger: Logging.Logger,
                           quiet: Bool) throws -> EventClips? {
        guard let template = try options.template(), let container else { return nil }
        // A folder that is not there (or not writable) would fail only at the first event:
        // refused now, before anything is written, as -o into it is.
        if let directory = template.fixedDirectory, access(directory, W_OK) != 0 {
            throw OutputError.cannotOpen(path: template.text, errno: errno)
        }
        var settings = writerSettings
        settings.container = container
        if container == .h264 { settings.audio = nil }
        let fileSettings = settings
        let clipSettings = EventClips.Settings(
            template: template, preRoll: options.preRollSeconds, postRoll: options.postRollSeconds,
            maxClip: options.maxClip?.seconds, heldBytesLimit: EventOptions.heldBytesLimit, device: device,
            preset: preset, firstNumber: template.nextNumber(device: device, preset: preset),
            audioSampleRate: fileSettings.audio?.sampleRate, onEvent: options.onEvent)
        return EventClips(settings: clipSettings, inbox: inbox,
                          open: { path throws(OutputError) in try AssetWriter.open(path: path, settings: fileSettings) },
                          say: { text in logger.warning("\(text)") },
                          closed: { clip in
                              if !quiet {
                                  logger.notice("event clip \(clip.file): \(clip.frames) frames, \(String(format: "%.1f", clip.preRoll)) s before the event")
                              }
                          })
    }

    /// Why a recording that copies an H.264 camera's stream as it came has no stills.
    static let noStillOfH264 = "this recording keeps the camera's H.264 as it comes, with no picture to take a still of: "
        + "watch /live.mp4 with --http, or take stills from a file it wrote (vtrecord thumbnail)"
}

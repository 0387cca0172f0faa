import Foundation
import VTCore
import VTEvents
import VTOutput
import VTPictures

/// Where a recording goes: the recording itself (a file or its segments, a stream, or the
/// clips alone), the outputs beside it, the event clips and the stills.
extension RecordingSession {
    /// The recording and what is written beside it, opened when the first frame comes.
    func makeOutputs(writerSettings: AssetWriter.Settings, interrupt: NetworkInterrupt, clips: EventClips?,
                     liveFeed: (any MediaOutput)?) throws -> any MediaOutput {
        let plan = plan, notice = notice, warn = warn
        let source = plan.inputName == "-" ? "standard input" : plan.inputName
        let recording: any MediaOutput
        if let destination = plan.destination {
            recording = try NetworkOutput(
                destination: destination,
                settings: NetworkOutput.Settings(frameRate: writerSettings.frameRate, audio: writerSettings.audio,
                                                 metadata: writerSettings.metadata),
                interrupt: interrupt)
            notice("publishing \(source) to \(destination)")
        } else if let template = plan.template {
            let writer = try SegmentedOutput(template: template, policy: plan.segments, device: plan.deviceName,
                                             preset: plan.presetNames, maxFiles: plan.maxFiles,
                                             firstNumber: template.nextNumber(device: plan.deviceName, preset: plan.presetNames),
                                             audioSampleRate: writerSettings.audio?.sampleRate, warn: warn,
                                             open: { path throws(OutputError) in
                                                 try AssetWriter.open(path: path, settings: writerSettings)
                                             })
            if !template.isStandardOutput {
                let target = plan.segments.map { Self.describe($0, template: template, maxFiles: plan.maxFiles) }
                    ?? writer.currentPath
                notice("recording \(source) to \(target)")
            }
            recording = writer
        } else if let clips {
            recording = clips
            notice("keeping event clips of \(source) as \(clips.settings.template)")
        } else {
            preconditionFailure("a recording is a file, a stream or event clips")
        }
        // With an encode of its own, the live view is not fed from the recording's.
        let live: [any MediaOutput] = plan.http?.hasLiveEncode == true ? [] : liveFeed.map { [$0] } ?? []
        let beside: [any MediaOutput] = (plan.eventsAlone ? [] : clips.map { [$0] } ?? []) + live
        guard !plan.branches.isEmpty || !beside.isEmpty else { return recording }
        let branches = plan.branches.enumerated().map { index, branch in
            self.branch(branch, index: index + 1, writerSettings: writerSettings)
        }
        return OutputFanOut(recording: recording, branches: branches, beside: beside)
    }

    /// An output beside the recording, on a thread of its own (`vtrecord-out1`, …). Its
    /// notices are printed even with --quiet: an output that fails is an error of its own.
    /// With a source that is not live, a full queue makes the encoder wait rather than drop.
    func branch(_ branch: RecordingPlan.Branch, index: Int, writerSettings: AssetWriter.Settings) -> OutputBranch {
        let interrupt = NetworkInterrupt()
        let device = plan.deviceName, preset = plan.presetNames, live = plan.realTime.isLive, say = warn
        notice("also writing to \(branch.name)")
        switch branch.target {
        case .network(let destination):
            let settings = NetworkOutput.Settings(frameRate: writerSettings.frameRate, audio: writerSettings.audio,
                                                  metadata: writerSettings.metadata)
            return OutputBranch(name: branch.name, threadName: "vtrecord-out\(index)", waitsForRoom: !live,
                                writesAnnexB: true, interrupt: interrupt, say: say) {
                _, format, base throws(OutputError) in
                let stream = try NetworkOutput(destination: destination, settings: settings, interrupt: interrupt)
                try stream.connect(format: format, base: base)
                return stream
            }
        case .file(let path, let container):
            var settings = writerSettings
            settings.container = container
            if container == .h264 { settings.audio = nil }
            let fileSettings = settings, maxFiles = branch.maxFiles
            return OutputBranch(name: branch.name, threadName: "vtrecord-out\(index)", segmentPolicy: branch.segments,
                                waitsForRoom: !live, writesAnnexB: container == .h264 || container == .ts,
                                interrupt: interrupt, say: say) { attempt, _, _ throws(OutputError) in
                // A file opened again after a failure gets a name of its own: name-1.mp4, …
                let name = attempt == 0 ? path : OutputTemplate.suffixed(path, attempt)
                let template: OutputTemplate
                do throws(OutputTemplateError) {
                    template = try OutputTemplate(name)
                } catch {
                    throw .cannotOpen(path: name, errno: EINVAL)
                }
                // Segments are started by the branch, where the encoder thread decided.
                return try SegmentedOutput(template: template, policy: nil, device: device, preset: preset,
                                           maxFiles: maxFiles,
                                           firstNumber: template.nextNumber(device: device, preset: preset),
                                           audioSampleRate: fileSettings.audio?.sampleRate,
                                           warn: say, open: { file throws(OutputError) in
                                               try AssetWriter.open(path: file, settings: fileSettings)
                                           })
            }
        }
    }

    /// `--events`: the clips, or nil without it. Clips number on from those a previous run left.
    func eventClips(writerSettings: AssetWriter.Settings, inbox: EventInbox) throws -> EventClips? {
        guard let events = plan.events else { return nil }
        let template = events.template, notice = notice
        // A folder that is not there (or not writable) would fail only at the first event:
        // refused now, before anything is written, as -o into it is.
        if let directory = template.fixedDirectory, access(directory, W_OK) != 0 {
            throw OutputError.cannotOpen(path: template.text, errno: errno)
        }
        var settings = writerSettings
        settings.container = events.container
        if events.container == .h264 { settings.audio = nil }
        let fileSettings = settings
        let device = plan.deviceName, preset = plan.presetNames
        let clipSettings = EventClips.Settings(
            template: template, preRoll: events.preRoll, postRoll: events.postRoll,
            maxClip: events.maxClip, heldBytesLimit: events.heldBytesLimit, device: device,
            preset: preset, firstNumber: template.nextNumber(device: device, preset: preset),
            audioSampleRate: fileSettings.audio?.sampleRate, onEvent: events.onEvent)
        return EventClips(settings: clipSettings, inbox: inbox,
                          open: { path throws(OutputError) in try AssetWriter.open(path: path, settings: fileSettings) },
                          say: warn,
                          closed: { clip in
                              notice("event clip \(clip.file): \(clip.frames) frames, \(String(format: "%.1f", clip.preRoll)) s before the event")
                          })
    }

    /// "seg-{n}.h264, a new file every 2 s, keeping the newest 3".
    static func describe(_ policy: SegmentPolicy, template: OutputTemplate, maxFiles: Int?) -> String {
        var rules: [String] = []
        if let duration = policy.duration { rules.append(String(format: "every %g s", duration)) }
        if let bytes = policy.maxBytes { rules.append("at \(formatDecimalQuantity(bytes)) bytes") }
        var text = "\(template.text), a new file \(rules.joined(separator: " or "))"
        if let maxFiles { text += ", keeping the newest \(maxFiles)" }
        return text
    }

    // MARK: Stills

    /// JPEG quality of `--snapshot`'s stills.
    static let snapshotQuality = 90

    /// Why a recording that copies an H.264 camera's stream as it came has no stills.
    static let noStillOfH264 = "this recording keeps the camera's H.264 as it comes, with no picture to take a still of: "
        + "watch /live.mp4 with --http, or take stills from a file it wrote (vtrecord thumbnail)"

    /// The stills of `--snapshot`, and those the control socket's `snapshot PATH` and
    /// `/snapshot.jpg` ask for, attached to `commands`. An H.264 camera's frames copied as
    /// they came have no picture to make a still of (an MJPEG camera's stills are its JPEGs).
    func makeStills(commands: RecordingCommands, copiesH264: Bool, fullRange: Bool,
                    warn: @escaping @Sendable (String) -> Void) throws -> StillTaker? {
        let stills = copiesH264 ? nil : try plan.snapshot.map { snapshot in
            try Self.stillTaker(path: snapshot.path, interval: snapshot.interval, fullRange: fullRange, warn: warn)
        } ?? (plan.controlSocket != nil || plan.http != nil ? StillTaker(requestsOnly: warn) : nil)
        if let stills {
            commands.attach(stills: .taker(stills, jpeg: { still in try Self.stillJPEG(still, fullRange: fullRange) }))
        } else if copiesH264 {
            commands.attach(stills: .none(why: Self.noStillOfH264))
        }
        return stills
    }

    /// A still's JPEG: a picture made into one, or an MJPEG camera's own as it came.
    static func stillJPEG(_ source: StillSource, fullRange: Bool) throws -> [UInt8] {
        switch source {
        case .picture(let picture): try Pictures.still(picture, fullRange: fullRange, quality: snapshotQuality)
        case .cameraJPEG(let jpeg): jpeg
        }
    }

    /// `--snapshot PATH`: its directory is checked before recording starts (exit 5 if it
    /// cannot take the file); a failure later costs that still only, with a warning.
    static func stillTaker(path: String, interval: Double, fullRange: Bool,
                           warn: @escaping @Sendable (String) -> Void) throws -> StillTaker {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw OutputError.cannotOpen(path: path, errno: EISDIR)
        }
        if access(directory, W_OK) != 0 { throw OutputError.cannotOpen(path: path, errno: errno) }
        return StillTaker(interval: interval, take: { still in
            let bytes = try stillJPEG(still, fullRange: fullRange)
            try writeFileAtomically(path: path, bytes: bytes, replace: true)
        }, warn: warn)
    }
}

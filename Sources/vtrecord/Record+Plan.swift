import ArgumentParser
import VTAudio
import VTCapture
import VTCore
import VTEncoding
import VTEvents
import VTOutput
import VTRecorder

/// The recording's options made a plan (VTRecorder's `RecordingPlan`): every check of options
/// that must go together, and every choice they settle, before anything is opened.
extension Record {
    /// The plan of this command line, or the first check it fails, in one line.
    func plan() throws -> RecordingPlan {
        try checkOptions()
        var notices: [String] = []
        let copy: RecordingPlan.Copy
        if encoder.encoder == .copy {
            copy = .store
        } else if encoder.preferCopy, encoder.encoder == .auto {
            if let obstacle = copyObstacle() {
                notices.append("--prefer-copy: encoding instead, as \(obstacle)")
                copy = .encode
            } else {
                copy = .ifCameraOffers(input.format == .h264 ? .h264 : .mjpeg)
            }
        } else {
            copy = .encode
        }
        let clipContainer = try events.container()
        let container = eventsAlone ? clipContainer! : try output.chosenContainer()
        let branches = try output.branches()
        let destination = try output.recordingDestination()
        let clipSpec = try eventsAlone ? nil : events.events.map { text throws(UsageError) in try OutputSpec(parsing: text) }
        let streamsWithSound = (destination.map { [OutputSpec(destination: $0)] } ?? []) + branches + (clipSpec.map { [$0] } ?? [])
        let source: RecordingPlan.Source = input.input.map { .file(path: $0) }
            ?? (input.testPattern ? .testPattern : .camera(path: input.camera.path))
        var cameraPath: String?
        if case .camera(let path) = source { cameraPath = path }
        let camera = RecordingPlan.Camera(
            request: CameraRequest(format: input.format.pixelFormat, size: input.size, frameRate: input.fps?.rate),
            buffers: input.buffers, strictFormat: input.strictFormat, reconnect: input.reconnect,
            controls: input.controls, decodesFrames: input.checkFrames == .decode)
        let deviceName = Self.deviceName(camera: cameraPath, input: input.input)
        let presetNames = presets.isEmpty ? nil : presets.map(PresetLibrary.name(of:)).joined(separator: "+")
        let template = try destination == nil && !eventsAlone ? output.template() : nil
        var plan = RecordingPlan(
            source: source, camera: camera, copy: copy, eventsAlone: eventsAlone, container: container,
            destination: destination, template: template,
            branches: branches.map { spec in
                let target: RecordingPlan.Branch.Target = switch spec.target {
                case .file(let path): .file(path: path, container: spec.fileContainer)
                case .network(let destination): .network(destination)
                }
                return RecordingPlan.Branch(name: spec.name, target: target, segments: spec.segmentPolicy,
                                            maxFiles: spec.maxFiles)
            },
            encoder: encoder.encoder, settings: encoder.settings(), requestedTiming: input.timing(for: container),
            limits: RecordingLimits(frames: output.frames, duration: output.duration?.seconds),
            deviceName: deviceName, writingApplication: "vtrecord \(VTRecord.version)")
        plan.size = input.size
        plan.frameRate = input.fps?.rate
        plan.segments = output.segmentPolicy
        plan.maxFiles = output.maxFiles
        if let clipContainer, let clips = try events.template() {
            plan.events = RecordingPlan.Events(
                template: clips, container: clipContainer, preRoll: events.preRollSeconds, postRoll: events.postRollSeconds,
                maxClip: events.maxClip?.seconds, onEvent: events.onEvent, heldBytesLimit: EventOptions.heldBytesLimit)
        }
        plan.motion = try events.motionPlan()
        plan.controlSocket = events.controlSocket
        if !retention.isEmpty {
            plan.retention = retention.rules(recording: template, clips: plan.events?.template, device: deviceName,
                                             preset: presetNames)
            plan.keepFree = retention.keepFree?.target
        }
        if let address = try http.address {
            plan.http = RecordingPlan.HTTP(address: address, passwordFile: http.httpAuth, mjpegInterval: http.mjpegInterval,
                                           mjpegSize: http.httpMjpegSize, liveSize: http.liveSize,
                                           liveBitRate: http.liveBitrate.map { Int64($0.value) })
        }
        if let device = sound.audio {
            let codec = try sound.codec(for: container, alsoFor: streamsWithSound)
            plan.sound = RecordingPlan.Sound(device: sound.isTestSound ? nil : device, sampleRate: sound.audioRate,
                                             channels: sound.audioChannels, codec: codec,
                                             bitRate: sound.audioBitrate.map { Int($0.value) },
                                             offsetMilliseconds: sound.audioOffset?.milliseconds ?? 0,
                                             required: sound.audioRequired)
        }
        plan.vaDevice = encoder.vaDevice
        plan.snapshot = output.snapshot.map { RecordingPlan.Snapshot(path: $0, interval: output.snapshotEvery?.seconds ?? 10) }
        plan.timestamps = input.timestamps
        plan.overwrite = output.overwrite
        plan.quiet = output.quiet
        plan.fragmentDuration = output.fragmentDuration?.seconds ?? 1
        plan.keepFragmented = output.mp4Fragmented
        plan.recordingName = output.recording
        plan.presetNames = presetNames
        plan.notices = notices
        return plan
    }

    /// swift-argument-parser's check after parsing: the plan's checks of options that must go
    /// together (what the plan derives is checked when it is made, in `run`).
    func validate() throws { try checkOptions() }

    /// The checks of options that must go together.
    private func checkOptions() throws {
        if output.recording == "-" && output.jsonSummary == "-" {
            throw ValidationError("-o - and --json-summary - both want standard output: write the summary to a file")
        }
        if input.namedSources.count > 1 {
            throw ValidationError("\(input.namedSources.joined(separator: " and ")) are different sources: give one")
        }
        if input.input != nil && input.size != nil {
            throw ValidationError("--size applies to a camera or the test pattern; a Y4M input has its own size")
        }
        if !input.controls.isEmpty && (input.input != nil || input.testPattern) {
            throw ValidationError("--control applies to a camera, not to \(input.input != nil ? "--input" : "--test-pattern")")
        }
        if !(V4L2Source.minimumBufferCount...32).contains(input.buffers) {
            throw ValidationError("--buffers must be \(V4L2Source.minimumBufferCount) to 32: the driver needs two buffers "
                                  + "to fill while vtrecord reads a third")
        }
        if encoder.vaDevice != nil && encoder.encoder == .x264 {
            throw ValidationError("--va-device applies to --encoder vaapi or auto, not x264")
        }
        if let frames = output.frames, frames < 1 {
            throw ValidationError("--frames must be at least 1")
        }
        try output.validateOutput()
        try events.validateEvents(recording: output.recording)
        try retention.validateRetention(recording: output.recording, events: events.events, eventsAlone: eventsAlone)
        try http.validateHTTP()
        if eventsAlone, output.segmentPolicy != nil || output.maxFiles != nil {
            throw ValidationError("\(output.segmentOptions.isEmpty ? "--max-files" : output.segmentOptions) applies to -o, "
                                  + "and --events without -o keeps only the clips: add -o for a continuous recording")
        }
        try sound.validateSound()
        try validateCopy()
        do throws(UsageError) {
            var settings = encoder.settings()
            settings.frameRate = input.fps?.rate ?? settings.frameRate
            try settings.validate()
            try X264Session.validateNames(settings)
        } catch {
            throw ValidationError(error.message)
        }
    }
}

import ArgumentParser
import VTAudio
import VTCapture
import VTCore
import VTEncoding
import VTOutput
import VTRecorder

/// A recording decided from its options, presets included, before anything is opened: every
/// check the options must pass together, and every choice they settle (source, container,
/// outputs, timing, real-time mode, queue depth, sound, copying). Made without touching a
/// device or a file, so it is unit-tested on its own (RecordingPlanTests); `Record.run`
/// opens what it names and assembles the pipeline from it.
struct RecordingPlan {
    enum Source: Equatable {
        case camera(path: String)
        case file(path: String)
        case testPattern
    }

    /// The camera's own frames stored as they come (`--encoder copy`), encoded, or stored if
    /// the camera offers them (`--prefer-copy`, settled by `settlingCopy` once it is asked).
    enum Copy: Equatable {
        case encode
        case store
        case ifCameraOffers(CameraPixelFormat)
    }

    var source: Source
    var copy: Copy
    /// The camera format asked for (`--format`); nil: the best the camera has.
    var cameraFormat: CameraPixelFormat?
    /// `--events` without `-o`: the clips are all that is kept.
    var eventsAlone: Bool
    /// The recording's container: the first `-o`'s, or the clips' when they are all.
    var container: Container
    /// The clips' container, with `--events`.
    var clipContainer: Container?
    /// The first `-o` when it is a URL: the recording is published, not written.
    var destination: NetworkDestination?
    /// The first `-o` as a file template (standard output included); nil when published or
    /// with `--events` alone.
    var template: OutputTemplate?
    var segments: SegmentPolicy?
    /// The other `-o`s.
    var branches: [OutputSpec]
    var soundCodec: AudioCodec?
    /// The encoder's settings as the options give them; the source's rate, range and aspect
    /// are added once it is open.
    var settings: EncoderSettings
    /// `--timing`, or what the container calls for.
    var requestedTiming: TimingArgument
    var limits: RecordingLimits
    /// Stills can be asked for (`--snapshot`, the control socket, HTTP).
    var takesStills: Bool
    /// `--http`.
    var serves: Bool
    /// The name `{device}` stands for.
    var deviceName: String
    /// The presets' names, joined with '+', for `{preset}`.
    var presetNames: String?
    /// What the options settled that the user should hear of (not with --quiet).
    var notices: [String] = []

    var copying: Bool { copy == .store }
    var fromCamera: Bool { if case .camera = source { true } else { false } }

    /// A camera's H.264 cannot repeat an access unit into an empty slot: every frame once.
    var timing: TimingArgument { copying && cameraFormat == .h264 ? .passthrough : requestedTiming }

    /// A camera adapts unless told otherwise (or its frames are copied, which takes no
    /// encoding to adapt); a file or the pattern only when told to.
    var realTime: EncoderSettings.RealTimeMode {
        settings.realTime ?? (fromCamera ? (copying ? .drop : .adaptive) : .off)
    }

    /// The frames the pipeline can hold, which the source's buffer pools are sized for.
    var depth: PipelineDepth {
        PipelineDepth(queue: copying ? PipelineDepth.copyQueue
                        : realTime == .adaptive ? PipelineDepth.adaptiveQueue : PipelineDepth.defaultQueue,
                      holdsGridFrame: timing == .cfr, holdsStill: takesStills, holdsLiveStill: serves)
    }

    /// `--prefer-copy` settled: the camera offers the format it would store, or not.
    func settlingCopy(offered: Bool, camera: String) -> RecordingPlan {
        guard case .ifCameraOffers(let wanted) = copy else { return self }
        var plan = self
        plan.copy = offered ? .store : .encode
        if !offered { plan.notices.append("--prefer-copy: encoding instead, as \(camera) does not offer \(wanted.rawValue)") }
        return plan
    }
}

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
        return RecordingPlan(
            source: source, copy: copy, cameraFormat: input.format.pixelFormat, eventsAlone: eventsAlone,
            container: container, clipContainer: clipContainer, destination: destination,
            template: try destination == nil && !eventsAlone ? output.template() : nil,
            segments: output.segmentPolicy, branches: branches,
            soundCodec: try sound.audio.map { _ throws(UsageError) in try sound.codec(for: container, alsoFor: streamsWithSound) },
            settings: encoder.settings(), requestedTiming: input.timing(for: container),
            limits: RecordingLimits(frames: output.frames, duration: output.duration?.seconds),
            takesStills: output.snapshot != nil || events.controlSocket != nil || http.http != nil,
            serves: http.http != nil, deviceName: Self.deviceName(camera: cameraPath, input: input.input),
            presetNames: presets.isEmpty ? nil : presets.map(PresetLibrary.name(of:)).joined(separator: "+"),
            notices: notices)
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

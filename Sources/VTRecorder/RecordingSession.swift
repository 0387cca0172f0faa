import Foundation
import Logging
import VTAudio
import VTCapture
import VTCore
import VTEncoding
import VTEvents
import VTH264
import VTLiveServer
import VTOutput
import VTPictures

/// A recording assembled from its plan and run to its end: the stop signals and the control
/// socket listening first, then the source, the encoder session, the outputs (files,
/// segments, streams, clips), stills, motion, retention and the HTTP server, each made from
/// what the plan settled, handed to a `Recorder`, and closed in order when it ends. The
/// command line maps options to a plan and prints what comes back; it assembles nothing.
public struct RecordingSession: Sendable {
    /// What the session takes from modules the pipeline does not rest on (decoding).
    public struct Tools: Sendable {
        /// `--check-frames decode`: a check that decodes a camera's H.264 access units.
        public var h264DecodeCheck: @Sendable () throws -> any AccessUnitDecodeCheck
        /// A JPEG of a recorded file's first picture, for the cards of `/recordings`.
        public var thumbnail: @Sendable (String) -> [UInt8]?
        public init(h264DecodeCheck: @escaping @Sendable () throws -> any AccessUnitDecodeCheck,
                    thumbnail: @escaping @Sendable (String) -> [UInt8]?) {
            (self.h264DecodeCheck, self.thumbnail) = (h264DecodeCheck, thumbnail)
        }
    }

    /// How the recording ended and its summary (the final line and `--json-summary`).
    public struct Outcome: Sendable {
        public let result: RecordingResult
        public let summary: RecordingSummary
    }

    public let plan: RecordingPlan
    let logger: Logger
    let tools: Tools

    public init(plan: RecordingPlan, logger: Logger, tools: Tools) {
        (self.plan, self.logger, self.tools) = (plan, logger, tools)
    }

    /// What the recording says as it goes, unless --quiet.
    var notice: @Sendable (String) -> Void {
        let quiet = plan.quiet, logger = logger
        return { text in if !quiet { logger.notice("\(text)") } }
    }

    /// What it could not do as asked: said even with --quiet.
    var warn: @Sendable (String) -> Void {
        let logger = logger
        return { text in logger.warning("\(text)") }
    }

    /// Runs the recording; throws what stops it before its first frame can be taken (a source
    /// or an output that cannot open, a port in use), and returns how it ended otherwise.
    public func run() throws -> Outcome {
        let plan = plan, logger = logger, quiet = plan.quiet, notice = notice, warn = warn
        plan.notices.forEach(notice)
        // A camera's recording may run for days: large allocations are mapped on their own, so
        // that what is freed goes back to the system (a 1080p recording with a clip every 6 s
        // grew 89 MiB an hour without it and none in the same 5 minutes with it).
        if case .camera = plan.source, !Allocator.mapAllocations(from: 64 * 1024) {
            warn("glibc refused an mmap threshold of 64 KiB: a long recording's memory may creep up")
        }
        // Listening from the start: a camera can take its time to open, and a signal meanwhile
        // must not wait for it (nor two signals merge into one while nobody takes them).
        let stop = StopRequest()
        // A published recording's network calls: after a stop, they have as long as a stream
        // beside the recording has in all (OutputBranch.longestFinish, 5 s; the encoder's
        // last pictures included) to send the end of the stream, and no longer: a receiver
        // that stopped reading cannot hold the end.
        let recordingInterrupt = NetworkInterrupt()
        let inbox = EventInbox()
        // What signals, the control socket and HTTP ask of the recording, one path for all.
        let commands = RecordingCommands(
            events: plan.events == nil ? nil : inbox, stop: stop, overwrite: plan.overwrite,
            stopping: { who, againAborts in
                notice("\(who): finishing the recording\(againAborts ? " (send it again to abort)" : "")")
                recordingInterrupt.endBy(OutputBranch.longestFinish)
            })
        StopSignals.start(
            onFirst: { name in commands.stop(by: name, againAborts: true) },
            onSecond: { stop.abortProcess(exitStatus: ExitStatus.aborted.rawValue) },
            onEvent: {
                do throws(RecordingCommands.Refusal) {
                    try commands.event(label: nil, duration: 0, from: .signal)
                } catch {
                    warn("SIGUSR1 asks for an event clip: \(error), so there is nothing to do")
                }
            })
        let controlSocket = try plan.controlSocket.map { path in
            try ControlSocket(path: path) { line in commands.answer(line) }
        }
        defer { controlSocket?.close() }

        var settings = plan.settings
        let source = try openSource(keyFrames: settings.keyFrameInterval)
        let camera = source as? V4L2Source
        var format = source.format
        if case .file = plan.source, let rate = plan.frameRate { format.frameRate = rate }
        settings.frameRate = format.frameRate
        settings.sampleAspectRatio = format.sampleAspectRatio?.fittingH264
        if let stated = format.sampleAspectRatio, settings.sampleAspectRatio.map({ $0.hasSameRatio(as: stated) }) != true {
            let coded = settings.sampleAspectRatio.map { "recorded as \($0)" } ?? "left out"
            warn("sample aspect ratio \(stated) does not fit H.264's 16-bit fields: \(coded)")
        }
        settings.fullRange = format.fullRange
        if let events = plan.events,
           let text = RecordingPlan.fitKeyFrameInterval(&settings, preRoll: events.preRoll, frameRate: format.frameRate) {
            notice(text)
        }
        let selection = try EncoderSelection.select(plan.copying ? .copy : plan.encoder, vaDevice: plan.vaDevice,
                                                    settings: settings, width: format.width, height: format.height)
        for text in selection.notices { notice(text) }

        let timestampLog = try plan.timestamps.map { path throws(OutputError) in
            try TimestampLog(path: path, overwrite: plan.overwrite)
        }
        let audio = try plan.sound.map { sound in
            try AudioRecorder(source: openSound(sound, frameRate: format.frameRate), codec: sound.codec,
                              bitRate: sound.bitRate, offsetMilliseconds: sound.offsetMilliseconds,
                              required: sound.required, logger: logger)
        }
        var writerSettings = AssetWriter.Settings(
            container: plan.container, overwrite: plan.overwrite, frameRate: format.frameRate,
            sourceTimes: format.isLive && plan.timing == .passthrough,
            fragmentDuration: plan.fragmentDuration, keepFragmented: plan.keepFragmented,
            metadata: ContainerMetadata(encoder: plan.writingApplication, source: plan.inputName))
        writerSettings.audio = audio?.format
        if plan.container == .mp4 && plan.template?.isStandardOutput == true {
            notice("standard output cannot be finalized: the MP4 stays fragmented")
        }
        // Copied frames: an MJPEG camera's JPEGs are the live view and its stills, and there is
        // no H.264 to stream; an H.264 camera's stream is, and there is no picture to make a
        // JPEG of.
        let copied = plan.copying ? camera?.negotiation.format : nil
        let fullRange = format.fullRange == true
        let stills = try makeStills(commands: commands, copiesH264: copied == .h264, fullRange: fullRange, warn: warn)
        let motion = try plan.motion.map { motion throws(MotionError) in
            (detector: try MotionDetector(settings: motion.settings(at: format.frameRate), width: format.width,
                                          height: format.height),
             inbox: plan.events == nil ? nil : inbox as EventInbox?)
        }
        let clips = try eventClips(writerSettings: writerSettings, inbox: inbox)
        let janitor = plan.retention.isEmpty ? nil
            : RetentionJanitor(rules: plan.retention, keepFree: plan.keepFree, say: notice)
        // --http: the server starts listening now (a port in use stops the run before anything
        // is written); what it reads of the recording is attached as the recording is made.
        let library = try librarySources()
        let liveServer = try plan.http.map { http in
            try startLiveServer(http, jpegsFromCamera: camera?.negotiation.format == .mjpeg, copied: copied,
                                commands: commands, library: library)
        }
        defer { liveServer?.stop() }
        if let liveServer, let http = plan.http {
            notice("serving the live view on http://\(http.address.withPort(liveServer.port))/")
        }
        let liveFeed = copied == .mjpeg ? nil : liveServer.map { server in
            LiveFeed(stream: server.stream, frameRate: format.frameRate, partTarget: Self.hlsPartTarget,
                     segmentTarget: Self.hlsSegmentTarget)
        }
        let summarize = summarizer(format: format, negotiation: camera?.negotiation, janitor: janitor,
                                   liveServer: liveServer, libraryFolders: library.map(\.directory))
        var configuration = Recorder.Configuration(realTime: plan.realTime, limits: plan.limits)
        if case .file = plan.source { configuration.retiming = plan.frameRate }
        configuration.timing = format.isLive && plan.timing == .cfr ? format.frameRate : nil
        configuration.timestamps = timestampLog
        configuration.depth = plan.depth
        configuration.progress = quiet ? nil
            : ProgressReporter.forTerminal(frameRate: format.frameRate, notes: { janitor?.statusNote.map { [$0] } ?? [] })
        configuration.stills = stills
        configuration.audio = audio
        configuration.motion = motion
        configuration.liveResults = liveServer != nil
        if let http = plan.http {
            configuration.liveJPEGs = copied == .h264 ? nil : liveServer.map { server in
                Self.liveJPEGs(server.jpegs, http: http, fullRange: fullRange, warn: warn)
            }
            configuration.liveEncoding = http.hasLiveEncode ? liveFeed.map { feed in
                Self.liveEncoding(http, output: feed, format: format, warn: warn)
            } : nil
        }
        configuration.notice = notice
        configuration.warn = warn
        let copies: VideoCodec = camera?.negotiation.format == .h264 ? .h264 : .mjpeg
        let recorder = Recorder(
            source: source, configuration: configuration,
            makeSession: { handler in
                try selection.makeSession(width: format.width, height: format.height, pixelFormat: format.pixelFormat,
                                          settings: settings, copying: copies, notice: notice, output: handler)
            },
            makeOutput: {
                try makeOutputs(writerSettings: writerSettings, interrupt: recordingInterrupt, clips: clips,
                                liveFeed: liveFeed)
            })
        stop.attach(recorder)
        commands.attach(recorder.control)
        commands.attach(summary: { [liveEvents = clips?.liveReport] result in summarize(result, liveEvents?()) })

        // Before the first file: what earlier runs left is brought within bounds first.
        janitor?.start()
        let result = recorder.run()
        janitor?.stop()
        controlSocket?.close()
        liveServer?.stop()
        // A run stopped or failed before its first frame leaves no output file (the recorder
        // removes it) and no timestamp file either (one it made: /dev/null stays).
        if let timestampLog, result.statistics.framesEncoded == 0,
           result.error != nil || result.stopReason == .signal {
            timestampLog.removeIfCreated()
        }
        return Outcome(result: result, summary: summarize(result, clips?.report))
    }

    /// The summary of --json-summary, at the end and (GET /status) as the recording goes.
    private func summarizer(format: CaptureFormat, negotiation: CameraNegotiationReport?, janitor: RetentionJanitor?,
                            liveServer: LiveServer?, libraryFolders: [String])
        -> @Sendable (RecordingResult, EventReport?) -> RecordingSummary {
        let plan = plan
        return { result, eventReport in
            // The name chosen when -o was not given, unless there are several.
            let outputName = plan.destination?.description ?? plan.recordingName
                ?? (plan.eventsAlone ? plan.events?.template.text : nil)
                ?? (plan.segments == nil ? result.segments.first : nil) ?? plan.template?.text ?? "-"
            var summary = RecordingSummary(result: result, input: plan.inputName, output: outputName,
                                           container: plan.destination?.scheme.formatName ?? plan.container.rawValue,
                                           format: format, camera: negotiation, realTime: plan.realTime)
            summary.events = eventReport
            summary.retention = janitor?.report
            if let server = liveServer {
                summary.disk = Self.diskFigures(libraryFolders)
                summary.http = server.report
            }
            return summary
        }
    }

    /// `live`: a test pattern is paced to the clock like a camera.
    private func openSource(keyFrames: EncoderSettings.KeyFrameInterval) throws -> any CaptureSource {
        let depth = plan.depth
        switch plan.source {
        case .file(let path):
            return try Y4MSource(path: path, bufferCount: depth.framesHeld)
        case .camera(let path):
            let copies = plan.copying, camera = plan.camera
            // --encoder copy keeps the camera's MJPEG, so that is what it asks for.
            var request = camera.request
            if copies && request.format == nil { request.format = .mjpeg }
            return try V4L2Source(path: path, request: request, bufferCount: camera.buffers, depth: depth,
                                  strict: camera.strictFormat, reconnect: camera.reconnect,
                                  controls: camera.controls, keepCompressed: plan.serves,
                                  onlyCompressed: copies ? (camera.decodesFrames ? .decoded(h264: tools.h264DecodeCheck) : .markers) : nil,
                                  iFramePeriod: copies ? { keyFrames.frames(at: $0) } : nil, logger: logger)
        case .testPattern:
            let size = plan.size ?? FrameSize(width: 1280, height: 720)
            return try TestPatternSource(width: size.width, height: size.height, frameRate: plan.frameRate ?? .fps30,
                                         live: plan.realTime.isLive, bufferCount: depth.framesHeld,
                                         flashes: plan.sound.map { $0.device == nil } ?? false)
        }
    }

    /// `--audio`: the test sound, or an ALSA device.
    private func openSound(_ sound: RecordingPlan.Sound, frameRate: FrameRate) throws -> any AudioSource {
        guard let device = sound.device else {
            return TestToneSource(sampleRate: sound.sampleRate ?? 48_000, channels: sound.channels ?? 2, frameRate: frameRate)
        }
        return try ALSASource(device: device, sampleRate: sound.sampleRate, channels: sound.channels, logger: logger)
    }
}

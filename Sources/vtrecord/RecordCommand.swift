import ArgumentParser
import Foundation
import Logging
import VTAudio
import VTCapture
import VTCore
import VTDecoding
import VTEncoding
import VTEvents
import VTH264
import VTLiveServer
import VTOutput
import VTPictures
import VTRecorder

/// Recording: the root command's own options and run.
extension Record {
    /// `--events` without `-o`: only the clips are kept.
    var eventsAlone: Bool { events.events != nil && output.recording == nil }

    func run() throws {
        StopSignals.blockStopSignals()
        let logger = Logging.Logger(label: "vtrecord")
        var plan = try plan()
        if case .ifCameraOffers(let wanted) = plan.copy {
            let offers = try? CameraDiscovery.formats(path: input.camera.path)
            plan = plan.settlingCopy(offered: offers?.contains { $0.pixelFormat == wanted } == true, camera: input.camera.path)
        }
        if !output.quiet {
            for notice in plan.notices { logger.notice("\(notice)") }
        }
        // Listening from the start: a camera can take its time to open, and a signal meanwhile
        // must not wait for it (nor two signals merge into one while nobody takes them).
        let stop = StopRequest()
        // A published recording's network calls: after a stop, they have 5 s (the encoder's
        // last pictures included) to send the end of the stream, and no longer: a receiver
        // that stopped reading cannot hold the end.
        let recordingInterrupt = NetworkInterrupt()
        let inbox = EventInbox()
        // What signals, the control socket and HTTP ask of the recording, one path for all.
        let commands = RecordingCommands(
            events: events.events == nil ? nil : inbox, stop: stop, overwrite: output.overwrite,
            stopping: { [quiet = output.quiet] who in
                // A signal sent again aborts.
                if !quiet { logger.notice("\(who): finishing the recording\(who.hasPrefix("SIG") ? " (send it again to abort)" : "")") }
                recordingInterrupt.endBy(Self.publishedEndingTime)
            })
        StopSignals.start(
            onFirst: { name in commands.stop(by: name) },
            onSecond: { stop.abortProcess(exitStatus: ExitStatus.aborted.rawValue) },
            onEvent: {
                do throws(RecordingCommands.Refusal) {
                    try commands.event(label: nil, duration: 0, from: .signal)
                } catch {
                    logger.warning("SIGUSR1 asks for an event clip: \(error), so there is nothing to do")
                }
            })
        let controlSocket = try events.controlSocket.map { path in
            try ControlSocket(path: path) { line in commands.answer(line) }
        }
        defer { controlSocket?.close() }
        let (container, clipContainer, branchSpecs, destination) = (plan.container, plan.clipContainer, plan.branches, plan.destination)
        let (copying, timing, realTime, depth) = (plan.copying, plan.timing, plan.realTime, plan.depth)
        var settings = plan.settings
        let source: any CaptureSource
        do {
            source = try openSource(depth: depth, live: realTime.isLive, copying: copying,
                                    keyFrames: settings.keyFrameInterval, logger: logger)
        } catch CaptureError.control(let error) {
            throw PresetLocatedError.locating(error, presets: presets, commandLine: Array(CommandLine.arguments.dropFirst()))
        }
        let camera = source as? V4L2Source
        var format = source.format
        if input.input != nil, let fps = input.fps { format.frameRate = fps.rate }

        settings.frameRate = format.frameRate
        settings.sampleAspectRatio = format.sampleAspectRatio?.fittingH264
        if let stated = format.sampleAspectRatio, settings.sampleAspectRatio.map({ $0.hasSameRatio(as: stated) }) != true {
            let coded = settings.sampleAspectRatio.map { "recorded as \($0)" } ?? "left out"
            logger.warning("sample aspect ratio \(stated) does not fit H.264's 16-bit fields: \(coded)")
        }
        settings.fullRange = format.fullRange
        if let notice = events.fitKeyFrameInterval(&settings, frameRate: format.frameRate), !output.quiet {
            logger.notice("\(notice)")
        }

        let selection = try EncoderSelection.select(copying ? .copy : encoder.encoder, vaDevice: encoder.vaDevice, settings: settings,
                                                    width: format.width, height: format.height)
        if !output.quiet {
            for notice in selection.notices { logger.notice("\(notice)") }
        }

        let (template, segments, deviceName, presetNames) = (plan.template, plan.segments, plan.deviceName, plan.presetNames)
        let inputName = input.input ?? camera?.path ?? "test-pattern"

        let timestampLog = try input.timestamps.map { path throws(OutputError) in
            try TimestampLog(path: path, overwrite: output.overwrite)
        }
        let audio = try plan.soundCodec.map { codec in
            try AudioRecorder(source: sound.openSource(frameRate: format.frameRate, logger: logger), codec: codec,
                              bitRate: sound.audioBitrate.map { Int($0.value) },
                              offsetMilliseconds: sound.audioOffset?.milliseconds ?? 0,
                              required: sound.audioRequired, logger: logger)
        }
        var writerSettings = AssetWriter.Settings(
            container: container, overwrite: output.overwrite, frameRate: format.frameRate,
            sourceTimes: format.isLive && timing == .passthrough,
            fragmentDuration: output.fragmentDuration?.seconds ?? 1, keepFragmented: output.mp4Fragmented,
            metadata: ContainerMetadata(encoder: "vtrecord \(VTRecord.version)", source: inputName))
        writerSettings.audio = audio?.format
        if container == .mp4 && template?.isStandardOutput == true && !output.quiet {
            logger.notice("standard output cannot be finalized: the MP4 stays fragmented")
        }
        // The control socket's `snapshot PATH` and `/snapshot.jpg` ask the same taker, or one of its own.
        // An H.264 camera's frames copied as they came have no picture to make a still of (an
        // MJPEG camera's stills are its own JPEGs).
        let copiesH264 = copying && camera?.negotiation.format == .h264
        let stills = copiesH264 ? nil : try output.snapshot.map { path in
            try Self.stillTaker(path: path, interval: output.snapshotInterval!, fullRange: format.fullRange == true,
                                logger: logger)
        } ?? (events.controlSocket != nil || http.http != nil ? StillTaker(requestsOnly: { text in logger.warning("\(text)") }) : nil)
        if let stills {
            commands.attach(stills: .taker(stills, jpeg: { [fullRange = format.fullRange == true] still in
                try Self.stillJPEG(still, fullRange: fullRange)
            }))
        } else if copiesH264 {
            commands.attach(stills: .none(why: Self.noStillOfH264))
        }
        let motion = try events.motionSettings(rate: format.frameRate).map { settings throws(MotionError) in
            (detector: try MotionDetector(settings: settings, width: format.width, height: format.height),
             inbox: events.events == nil ? nil : inbox as EventInbox?)
        }
        let clips = try Self.eventClips(events, container: clipContainer, writerSettings: writerSettings, device: deviceName,
                                        preset: presetNames, inbox: inbox, logger: logger, quiet: output.quiet)
        let rules = retention.rules(recording: template, clips: clips?.settings.template, device: deviceName,
                                    preset: presetNames)
        let janitor = retention.isEmpty || rules.isEmpty ? nil
            : RetentionJanitor(rules: rules, keepFree: retention.keepFree?.target,
                               say: { [quiet = output.quiet] text in if !quiet { logger.notice("\(text)") } })
        // --http: the server starts listening now (a port in use stops the run before anything
        // is written); what it reads of the recording is attached as the recording is made.
        let library = try Self.librarySources(recording: template, clips: clips?.settings.template, device: deviceName,
                                          preset: presetNames)
        // Copied frames: an MJPEG camera's JPEGs are the live view, and there is no H.264 to
        // stream; an H.264 camera's stream is, and there is no picture to make a JPEG of.
        let copied = copying ? camera?.negotiation.format : nil
        let liveServer = try http.http.map { _ in
            try Self.startLiveServer(http, jpegsFromCamera: camera?.negotiation.format == .mjpeg,
                                     liveVideoAbsent: copied == .mjpeg
                                        ? "this recording keeps the camera's own Motion JPEG, which the live stream "
                                          + "cannot carry: watch /stream.mjpeg" : nil,
                                     jpegsAbsent: copied == .h264
                                        ? "this recording keeps the camera's H.264 as it comes, with no picture to "
                                          + "make a JPEG of: watch /live.mp4" : nil,
                                     commands: commands, library: library)
        }
        defer { liveServer?.stop() }
        if let liveServer, !output.quiet, let address = try http.address {
            logger.notice("serving the live view on http://\(address.withPort(liveServer.port))/")
        }
        let libraryFolders = library.map(\.directory)
        let liveFeed = copied == .mjpeg ? nil : liveServer.map { server in
            LiveFeed(stream: server.stream, frameRate: format.frameRate, partTarget: Self.hlsPartTarget,
                     segmentTarget: Self.hlsSegmentTarget)
        }
        // The summary of --json-summary, at the end and (GET /status) as the recording goes.
        let summarize: @Sendable (RecordingResult, EventReport?) -> RecordingSummary = {
            [recordingName = output.recording, eventsName = eventsAlone ? events.events : nil, negotiation = camera?.negotiation,
             janitor, liveServer, libraryFolders, format] result, eventReport in
            // The name chosen when -o was not given, unless there are several.
            let outputName = destination?.description ?? recordingName ?? eventsName
                ?? (segments == nil ? result.segments.first : nil) ?? template?.text ?? "-"
            var summary = RecordingSummary(result: result, input: inputName, output: outputName,
                                           container: destination?.scheme.formatName ?? container.rawValue,
                                           format: format, camera: negotiation, realTime: realTime)
            summary.events = eventReport
            summary.retention = janitor?.report
            if let server = liveServer {
                summary.disk = Self.diskFigures(libraryFolders)
                summary.http = server.report
            }
            return summary
        }
        let progress = output.quiet ? nil
            : ProgressReporter.forTerminal(frameRate: format.frameRate, notes: { janitor?.statusNote.map { [$0] } ?? [] })
        // What the recording could not do as asked, unless --quiet.
        let notice: @Sendable (String) -> Void = { [quiet = output.quiet] text in if !quiet { logger.notice("\(text)") } }
        var configuration = Recorder.Configuration(
            realTime: realTime, limits: plan.limits)
        configuration.retiming = input.input != nil ? input.fps?.rate : nil
        configuration.timing = format.isLive && timing == .cfr ? format.frameRate : nil
        configuration.timestamps = timestampLog
        configuration.depth = depth
        configuration.progress = progress
        configuration.stills = stills
        configuration.audio = audio
        configuration.motion = motion
        configuration.liveResults = liveServer != nil
        configuration.liveJPEGs = copied == .h264 ? nil : liveServer.map { server in
            Self.liveJPEGs(server.jpegs, options: http, fullRange: format.fullRange == true,
                           warn: { text in logger.warning("\(text)") })
        }
        configuration.liveEncoding = http.hasLiveEncode ? liveFeed.map { feed in
            Self.liveEncoding(http, output: feed, format: format, warn: { text in logger.warning("\(text)") })
        } : nil
        configuration.notice = notice
        configuration.warn = { text in logger.warning("\(text)") }
        let recorder = Recorder(
            source: source, configuration: configuration,
            makeSession: { handler in
                try selection.makeSession(width: format.width, height: format.height, pixelFormat: format.pixelFormat,
                                          settings: settings, copying: camera?.negotiation.format == .h264 ? .h264 : .mjpeg,
                                          notice: notice,
                                          output: handler)
            },
            makeOutput: { [output] in
                let source = inputName == "-" ? "standard input" : inputName
                let recording: any MediaOutput
                if let destination {
                    recording = try NetworkOutput(
                        destination: destination,
                        settings: NetworkOutput.Settings(frameRate: writerSettings.frameRate, audio: writerSettings.audio,
                                                         metadata: writerSettings.metadata),
                        interrupt: recordingInterrupt)
                    if !output.quiet { logger.notice("publishing \(source) to \(destination)") }
                } else if let template {
                    let writer = try SegmentedOutput(template: template, policy: segments, device: deviceName,
                                                     preset: presetNames, maxFiles: output.maxFiles,
                                                     firstNumber: template.nextNumber(device: deviceName, preset: presetNames),
                                                     audioSampleRate: writerSettings.audio?.sampleRate,
                                                     warn: { text in logger.warning("\(text)") },
                                                     open: { path throws(OutputError) in
                                                         try AssetWriter.open(path: path, settings: writerSettings)
                                                     })
                    if !output.quiet && !template.isStandardOutput {
                        let target = segments.map { Self.describe($0, template: template, maxFiles: output.maxFiles) }
                            ?? writer.currentPath
                        logger.notice("recording \(source) to \(target)")
                    }
                    recording = writer
                } else if let clips {
                    recording = clips
                    if !output.quiet { logger.notice("keeping event clips of \(source) as \(clips.settings.template)") }
                } else {
                    preconditionFailure("a recording is a file, a stream or event clips")
                }
                // With an encode of its own, the live view is not fed from the recording's.
                let live: [any MediaOutput] = http.hasLiveEncode ? [] : liveFeed.map { [$0] } ?? []
                let beside: [any MediaOutput] = (eventsAlone ? [] : clips.map { [$0] } ?? []) + live
                guard !branchSpecs.isEmpty || !beside.isEmpty else { return recording }
                let branches = branchSpecs.enumerated().map { index, spec in
                    Self.branch(spec, index: index + 1, writerSettings: writerSettings, device: deviceName,
                                preset: presetNames, live: realTime.isLive, logger: logger, quiet: output.quiet)
                }
                return OutputFanOut(recording: recording, branches: branches, beside: beside)
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
        let summary = summarize(result, clips?.report)
        if !output.quiet && result.statistics.framesEncoded > 0 {
            logger.notice("\(Self.describe(summary, result: result, clipsOnly: eventsAlone))")
        }
        if let path = output.jsonSummary {
            try writeSummary(summary, to: path)
        }
        // A run stopped or failed before its first frame leaves no output file (the recorder
        // removes it) and no timestamp file either (one it made: /dev/null stays).
        if let timestampLog, result.statistics.framesEncoded == 0,
           result.error != nil || result.stopReason == .signal {
            timestampLog.removeIfCreated()
        }
        if let error = result.error {
            if let reportable = error as? any ReportableError { throw reportable }
            throw error
        }
    }

    /// `live`: a test pattern is paced to the clock like a camera.
    private func openSource(depth: PipelineDepth, live: Bool, copying copies: Bool,
                            keyFrames: EncoderSettings.KeyFrameInterval,
                            logger: Logging.Logger) throws -> any CaptureSource {
        if let path = input.input {
            return try Y4MSource(path: path, bufferCount: depth.framesHeld)
        }
        if !input.testPattern {
            // Checked here, not in validate(): swift-argument-parser validates this command
            // also when a subcommand (inspect) runs.
            guard input.device != nil || FileManager.default.fileExists(atPath: DeviceOption.defaultPath) else {
                throw NoDefaultCamera()
            }
            // --encoder copy keeps the camera's MJPEG, so that is what it asks for.
            let request = CameraRequest(format: input.format.pixelFormat ?? (copies ? .mjpeg : nil), size: input.size,
                                        frameRate: input.fps?.rate)
            return try V4L2Source(path: input.camera.path, request: request, bufferCount: input.buffers, depth: depth,
                                  strict: input.strictFormat, reconnect: input.reconnect,
                                  controls: input.controls, keepCompressed: http.http != nil,
                                  onlyCompressed: copies ? (input.checkFrames == .decode ? .decoded(h264: { try H264DecodeCheck() }) : .markers) : nil,
                                  iFramePeriod: copies ? { keyFrames.frames(at: $0) } : nil, logger: logger)
        }
        let size = input.size ?? FrameSize(width: 1280, height: 720)
        let rate = input.fps?.rate ?? .fps30
        return try TestPatternSource(width: size.width, height: size.height, frameRate: rate,
                                     live: live, bufferCount: depth.framesHeld,
                                     flashes: sound.isTestSound)
    }

    /// Seconds a published recording has after a stop to send the end of its stream.
    static let publishedEndingTime = 5.0

    /// JPEG quality of `--snapshot`'s stills.
    static let snapshotQuality = 90

    /// A still's JPEG: a picture made into one, or an MJPEG camera's own as it came.
    static func stillJPEG(_ source: StillSource, fullRange: Bool) throws -> [UInt8] {
        switch source {
        case .picture(let picture): try Pictures.still(picture, fullRange: fullRange, quality: snapshotQuality)
        case .cameraJPEG(let jpeg): jpeg
        }
    }

    /// `--snapshot PATH`: its directory is checked before recording starts (exit 5 if it
    /// cannot take the file); a failure later costs that still only, with a warning.
    static func stillTaker(path: String, interval: Double, fullRange: Bool, logger: Logging.Logger) throws -> StillTaker {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw OutputError.cannotOpen(path: path, errno: EISDIR)
        }
        if access(directory, W_OK) != 0 { throw OutputError.cannotOpen(path: path, errno: errno) }
        return StillTaker(interval: interval, take: { still in
            let bytes = try stillJPEG(still, fullRange: fullRange)
            try writeFileAtomically(path: path, bytes: bytes, replace: true)
        }, warn: { text in logger.warning("\(text)") })
    }
}

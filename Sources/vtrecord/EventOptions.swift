import ArgumentParser
import Foundation
import VTCapture
import VTCore
import VTEncoding
import VTEvents
import VTOutput
import VTPictures
import VTRecorder

/// `--events` and what goes with it: clips of what happened, with the moments before.
struct EventOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Keep a clip of each event (SIGUSR1, the control socket), from --pre-roll before it to --post-roll after it, in files named by this template: strftime fields, {device}, {preset}, {label} (the event's) and {n} (the clip's number, going on after the files a previous run left). Alone (without -o), only the clips are kept; with -o, beside the continuous recording. The extension chooses the container (.mp4, .mkv, .ts, .h264).", valueName: "template"))
    var events: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With --events: how much before an event its clip starts (default 5s, at most 120s). The clip starts at the keyframe at or before that; a keyframe interval longer than this is shortened to it.", valueName: "time"), transform: { try TimeValueError.seconds($0) })
    var preRoll: Double?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With --events: how long a clip goes on after the last event it holds (default 10s); an event during a clip extends it.", valueName: "time"), transform: { try TimeValueError.seconds($0) })
    var postRoll: Double?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With --events: a clip longer than this goes on in a new file, cut at a keyframe (no picture lost or repeated).", valueName: "time"), transform: DurationArgument.parse)
    var maxClip: DurationArgument?

    @Option(name: .long, help: ArgumentHelp("With --events: run this shell command for each clip once it is finished, for uploads and notifications, with VTRECORD_CLIP_FILE, _START, _END, _TRIGGER, _LABEL, _FRAMES, _PRE_ROLL and _CONTINUES in its environment; the recording never waits for it.", valueName: "command"))
    var onEvent: String?

    @Option(name: .long, help: ArgumentHelp("Take commands on this Unix socket, one a line, each answered with a line of JSON: 'event [LABEL [DURATION|open]]', 'event-end', 'snapshot PATH' (a JPEG of the next picture), 'status'.", valueName: "path"))
    var controlSocket: String?

    @Flag(name: .long, inversion: .prefixedNo, help: "Watch every picture for motion (a downscaled luma picture against a reference that follows light and noise): an episode of motion is an event, which lasts until the motion has stopped for --motion-end (--no-motion undoes a preset's).")
    var motion = false

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With --motion: from 0 (only large changes of brightness count) to 1 (small ones do); default 0.5.", valueName: "0-1"))
    var motionSensitivity: Double?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With --motion: the least part of the watched picture that must change, as 1% or 0.01 (default 1%).", valueName: "share"))
    var motionArea: ShareArgument?

    @Option(name: .long, help: ArgumentHelp("With --motion: the parts of the picture to ignore, as rectangles in picture pixels 'x,y,w,h;x,y,w,h', or a binary PGM image of any size (white watched, black ignored).", valueName: "rects|file.pgm"))
    var motionMask: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With --motion: how long the picture must be still before an episode of motion ends (default 1s).", valueName: "time"), transform: DurationArgument.parse)
    var motionEnd: DurationArgument?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With --motion: the longest an episode of motion lasts (default 5m). Motion that never pauses for --motion-end (a blinking light, a screen) ends there, with its clip, is reported, and starts no episode until the picture has been still.", valueName: "time"), transform: DurationArgument.parse)
    var motionMax: DurationArgument?

    static let defaultPreRoll = 5.0
    static let defaultPostRoll = 10.0
    static let longestPreRoll = 120.0
    /// The most the pre-roll holds: 120 s at 8 Mbit/s with sound, and some room.
    static let heldBytesLimit = 160_000_000

    var preRollSeconds: Double { preRoll ?? Self.defaultPreRoll }
    var postRollSeconds: Double { postRoll ?? Self.defaultPostRoll }

    /// `--events` as a template (`{label}` allowed).
    func template() throws(OutputTemplateError) -> OutputTemplate? {
        try events.map { text throws(OutputTemplateError) in try OutputTemplate(text, option: "--events", labels: true) }
    }

    /// The clips' container, by the template's extension.
    func container() throws(UsageError) -> Container? {
        guard let events else { return nil }
        return try Container.choose(explicit: nil, path: events, option: "--events")
    }

    /// Seconds an episode of motion lasts at most without --motion-max.
    static let defaultMotionMax = 300.0

    /// The detector's settings, its times in seconds (the mask read and checked here); nil
    /// without `--motion`.
    func motionPlan() throws(MotionError) -> RecordingPlan.Motion? {
        guard motion else { return nil }
        var settings = MotionDetector.Settings()
        if let motionSensitivity { settings.sensitivity = motionSensitivity }
        if let motionArea { settings.minimumArea = motionArea.share }
        settings.mask = try motionMask.map { text throws(MotionError) in try MotionMask.parse(text) }
        return RecordingPlan.Motion(settings: settings, endSeconds: motionEnd?.seconds,
                                    maxSeconds: motionMax?.seconds ?? Self.defaultMotionMax)
    }

    /// Not named validate(): swift-argument-parser would call that on its own.
    func validateEvents(recording: String?) throws {
        if !motion, let given = [motionSensitivity.map { _ in "--motion-sensitivity" }, motionArea.map { _ in "--motion-area" },
                                 motionMask.map { _ in "--motion-mask" }, motionEnd.map { _ in "--motion-end" },
                                 motionMax.map { _ in "--motion-max" }]
            .compactMap({ $0 }).first {
            throw ValidationError("\(given) applies to motion detection: add --motion")
        }
        if let motionMax, motionMax.seconds < 1 {
            throw ValidationError("--motion-max: give 1 s or more, such as 5m: the longest an episode of motion lasts")
        }
        if let motionSensitivity, !(0...1).contains(motionSensitivity) {
            throw ValidationError("--motion-sensitivity \(motionSensitivity): give 0 (least) to 1 (most)")
        }
        do throws(MotionError) {
            _ = try motionPlan()
        } catch {
            throw ValidationError(error.description)
        }
        guard let events else {
            let given = [preRoll.map { _ in "--pre-roll" }, postRoll.map { _ in "--post-roll" },
                         maxClip.map { _ in "--max-clip" }, onEvent.map { _ in "--on-event" }].compactMap { $0 }
            if let first = given.first { throw ValidationError("\(first) applies to event clips: add --events TEMPLATE") }
            return
        }
        if events == "-" {
            throw ValidationError("--events writes a file for each clip, not standard output: give it a template such as 'event-%Y%m%d-%H%M%S.mp4'")
        }
        let template: OutputTemplate
        do throws(OutputTemplateError) {
            template = try self.template()!
        } catch {
            throw ValidationError(error.description)
        }
        if !template.namesEachFile {
            throw ValidationError("--events \(events): every clip would get the same name: add {n} or the time to the second, e.g. '\(OutputOptions.numbered(events))'")
        }
        do throws(UsageError) {
            _ = try container()
        } catch {
            throw ValidationError(error.message)
        }
        if preRollSeconds > Self.longestPreRoll {
            throw ValidationError("--pre-roll \(RecordingPlan.formatSeconds(preRollSeconds)) is longer than vtrecord holds: at most \(Int(Self.longestPreRoll))s")
        }
        if let recording, !NetworkDestination.looksLikeURL(recording), recording != "-",
           URL(fileURLWithPath: recording).standardizedFileURL.path == URL(fileURLWithPath: events).standardizedFileURL.path {
            throw ValidationError("--events \(events) is also -o: give the clips a template of their own")
        }
        if let controlSocket {
            do throws(ControlSocket.SetUpError) {
                _ = try ControlSocket.check(controlSocket)
            } catch {
                throw ValidationError(error.message)
            }
        }
    }
}

/// `--motion-area 1%` or `0.01`: a share of the picture above 0, at most all of it.
struct ShareArgument: ExpressibleByArgument {
    let share: Double

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces)
        let value = text.hasSuffix("%") ? Double(text.dropLast()).map { $0 / 100 } : Double(text)
        guard let value, value > 0, value <= 1 else { return nil }
        share = value
    }
}

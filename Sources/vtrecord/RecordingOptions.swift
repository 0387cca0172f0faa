import ArgumentParser
import Foundation
import Logging
import VTCapture
import VTCore
import VTEncoding
import VTH264
import VTOutput
import VTRecorder

/// `--device`, in a group of its own because the recording command and the camera commands
/// (formats, controls) both take it: swift-argument-parser hands the root command every
/// `--device` on the line, and a subcommand gets the value by including the same group.
struct DeviceOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The V4L2 camera, such as /dev/video0 (the default when no other source is given) or a /dev/v4l/by-id/ link.", valueName: "path"))
    var device: String?

    /// The camera used when no `--device` is given.
    static let defaultPath = "/dev/video0"

    /// `--device`, or the default camera.
    var path: String { device ?? Self.defaultPath }
}

/// `--va-device`, a group of its own for the same reason as `--device`: the recording command
/// and `encoders` both take it.
struct VADeviceOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("VA-API device (DRM render node). Default: the first /dev/dri/renderD* that can encode H.264 (for 'encoders': every one).", valueName: "path"))
    var vaDevice: String?
}

struct InputOptions: ParsableArguments {
    @OptionGroup var camera: DeviceOption

    var device: String? { camera.device }

    @Option(name: .long, help: ArgumentHelp("Read frames from a Y4M file, or '-' for standard input.", valueName: "path"))
    var input: String?

    @Flag(name: .long, help: "Record the built-in test pattern (moving content with a frame counter).")
    var testPattern = false

    @Option(name: .long, help: ArgumentHelp("Picture size of the camera or the test pattern, as WxH (default 1280x720).", valueName: "WxH"))
    var size: FrameSize?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Frame rate: 30, 30000/1001 or 29.97. Default: the input's rate; 30 for a camera and the test pattern.", valueName: "rate"))
    var fps: FrameRateArgument?

    @Option(name: .long, help: "Camera pixel format: auto (default: raw 4:2:0, then YUYV, then MJPEG when raw cannot reach the rate), yuyv, nv12, yu12, mjpeg, h264 (with --encoder copy only: stored as the camera sends it).")
    var format: CameraFormatArgument = .auto

    @Flag(name: .long, inversion: .prefixedNo, help: "Fail (exit 3) instead of going on when the camera cannot give the asked format, size or rate (--no-strict-format undoes a preset's).")
    var strictFormat = false

    @Option(name: .long, help: "With --encoder copy: how each of the camera's frames is checked before it is stored: markers (default, no decoding: a JPEG's start of image, frame header of the negotiated size and end of image; an H.264 access unit's NAL structure) or decode (also decoded in full, with libturbojpeg or libavcodec, at that cost). A frame that fails is counted in frames_bad and not stored, and with H.264 so is what follows it up to the next IDR picture.")
    var checkFrames: FrameCheckArgument = .markers

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Camera capture buffers, 3–32 (default 8).", valueName: "n"))
    var buffers: Int = 8

    @Flag(name: .long, inversion: .prefixedNo, help: "When the camera is unplugged, wait for it to come back and go on in the same file (the gap is counted; --no-reconnect undoes a preset's).")
    var reconnect = false

    @Option(name: .customLong("control"), help: ArgumentHelp("Set a camera control before recording, e.g. brightness=20 or power_line_frequency=50hz (repeatable; 'vtrecord controls' lists them). Values: integers, 0/1/true/false, menu items by index or name.", valueName: "name=value"))
    var controls: [ControlSetting] = []

    @Option(name: .long, help: "Live sources: passthrough encodes every captured frame once at its capture time (the default for .mp4, .mkv and .ts, which carry each frame's time); cfr puts frames on the nominal frame grid, repeating a frame into an empty slot and keeping the later of two in one slot, so a raw stream, which has no times, plays at the right speed (the default for .h264).")
    var timing: TimingArgument?

    /// `--timing`, or what the container calls for: a container with times keeps each frame's
    /// own; a raw stream needs the grid.
    func timing(for container: Container) -> TimingArgument {
        timing ?? (container.carriesTime ? .passthrough : .cfr)
    }

    @Option(name: .long, help: ArgumentHelp("Write the time of every encoded frame to a file (mkvmerge timestamp format v2).", valueName: "path"))
    var timestamps: String?

    /// Which source the options name; nil when none is named (the default camera, if any).
    var namedSources: [String] {
        [device.map { _ in "--device" }, input.map { _ in "--input" }, testPattern ? "--test-pattern" : nil]
            .compactMap { $0 }
    }
}

struct OutputOptions: ParsableArguments {
    @Option(name: [.short, .long], help: ArgumentHelp("Output file, or '-' for standard output (default: vtrecord-%Y%m%d-%H%M%S.h264, and vtrecord-%Y%m%d-%H%M%S-{n}.h264 when segmenting). A template: strftime fields such as %Y%m%d-%H%M%S (%% for a percent sign), {device}, {preset}, and {n}, the segment number, after the highest a file of the template in its folder already has ({n:03} pads it to 3 digits), expanded as each file starts. Repeat it to write the same encode to more outputs at once: files, srt://, rtsp://, rtmp://, rtmps:// or udp:// URLs, each on its own thread and best effort (the first is the recording; options for one of the others go before it in brackets: '[segment-time=10m,max-files=6]cam-{n}.mkv').", valueName: "path"))
    var output: [String] = []

    /// The first `-o`: the recording.
    var recording: String? { output.first }

    @Option(name: .long, help: ArgumentHelp("What to write: h264 (a raw H.264 stream), mp4, mkv (Matroska) or ts (MPEG transport stream). Default: chosen by the -o extension (.h264 or .264, .mp4 or .m4v, .mkv, .ts); raw H.264 for standard output and names without one of these.", valueName: "kind"))
    var container: Container?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("MP4 and Matroska: the longest fragment (cluster) while recording, so the most a crash or power cut can lose (default 1s); every keyframe starts one too, and a Matroska cluster ends before it spans 327 ms.", valueName: "time"), transform: DurationArgument.parse)
    var fragmentDuration: DurationArgument?

    @Flag(name: .long, inversion: .prefixedNo, help: "MP4: leave the file fragmented at the end (for streaming and browsers' Media Source Extensions) instead of finalizing it in place into a regular MP4 (--no-mp4-fragmented undoes a preset's).")
    var mp4Fragmented = false

    @Flag(name: .long, inversion: .prefixedNo, help: "Replace an existing output file (or segment file); --no-overwrite undoes a preset's.")
    var overwrite = false

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Start a new file at every multiple of this presentation time: 60s, 10m. Each file starts with a keyframe and plays alone; -o must contain {n}. --frames and --duration count the whole recording.", valueName: "time"), transform: DurationArgument.parse)
    var segmentTime: DurationArgument?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Start a new file once one holds this many bytes: 500M, 2G. A file may exceed it by the few frames the encoder holds back; -o must contain {n}.", valueName: "bytes"))
    var segmentSize: DecimalQuantity?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With --segment-time or --segment-size: keep only the newest n files, deleting the oldest as a new one starts.", valueName: "n"))
    var maxFiles: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Stop after this many frames have been written.", valueName: "n"))
    var frames: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Stop after this much presentation time: 10s, 1m30s, 500ms.", valueName: "time"), transform: DurationArgument.parse)
    var duration: DurationArgument?

    @Flag(name: .long, inversion: .prefixedNo, help: "Print nothing but errors (--no-quiet undoes a preset's).")
    var quiet = false

    @Option(name: .long, help: ArgumentHelp("Write a JSON summary (schema 1) to a file, or '-' for standard output.", valueName: "path"))
    var jsonSummary: String?

    @Option(name: .long, help: ArgumentHelp("While recording, keep this file a JPEG of the latest picture (for dashboards), replaced whole every --snapshot-every; made on a thread of its own, skipped and counted when it falls behind, never at the cost of a frame.", valueName: "path"))
    var snapshot: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("How often --snapshot is replaced, in the recording's time (default 10s).", valueName: "time"), transform: DurationArgument.parse)
    var snapshotEvery: DurationArgument?

    /// When the output is split into files; nil for one file.
    var segmentPolicy: SegmentPolicy? {
        guard segmentTime != nil || segmentSize != nil else { return nil }
        return SegmentPolicy(duration: segmentTime?.seconds, maxBytes: segmentSize?.value)
    }

    /// The segmenting options given, for messages.
    var segmentOptions: String {
        [segmentTime.map { _ in "--segment-time" }, segmentSize.map { _ in "--segment-size" }]
            .compactMap { $0 }.joined(separator: " and ")
    }

    /// `-o`, or the default name in the current directory (numbered when segmenting), with
    /// the extension of `--container`.
    func template() throws(OutputTemplateError) -> OutputTemplate {
        let ext = (container ?? .h264).extensions[0]
        return try OutputTemplate(recording ?? (segmentPolicy == nil ? "vtrecord-%Y%m%d-%H%M%S.\(ext)"
                                                                   : "vtrecord-%Y%m%d-%H%M%S-{n}.\(ext)"))
    }

    /// The container: `--container`, else the output name's extension. An extension vtrecord
    /// cannot write is refused (exit 2) before anything is opened.
    func chosenContainer() throws(UsageError) -> Container {
        // A stream carries each frame's time, as MPEG-TS does; its sound is checked by its scheme.
        if try recordingDestination() != nil { return .ts }
        return try Container.choose(explicit: container, path: recording ?? "-")
    }

    /// Not named validate(): swift-argument-parser would call that on its own, ahead of the
    /// command's checks.
    func validateOutput() throws {
        do throws(UsageError) {
            // Brackets are the options of an output beside the recording; taken as a file name here
            // they would make a file named "[segment-time=1s]seg-0.mp4".
            if let recording, recording.hasPrefix("["), recording.contains("]") {
                throw UsageError("-o \(recording): the first -o is the recording, which takes the command's own options "
                                 + "(--segment-time, --max-files, --container…), not brackets: give them as options")
            }
            try checkBranches(try branches())
            if let destination = try recordingDestination() {
                let fileOptions = [container.map { _ in "--container" }, segmentTime.map { _ in "--segment-time" },
                                   segmentSize.map { _ in "--segment-size" }, maxFiles.map { _ in "--max-files" },
                                   mp4Fragmented ? "--mp4-fragmented" : nil,
                                   fragmentDuration.map { _ in "--fragment-duration" }].compactMap { $0 }
                if let first = fileOptions.first {
                    throw UsageError("\(first) applies to files; -o \(destination) always carries "
                                     + destination.scheme.streamKind)
                }
                return
            }
        } catch {
            throw ValidationError(error.message)
        }
        let template: OutputTemplate
        do throws(OutputTemplateError) {
            template = try self.template()
        } catch {
            throw ValidationError(error.description)
        }
        if let maxFiles {
            guard segmentPolicy != nil else {
                throw ValidationError("--max-files applies to segments: add --segment-time or --segment-size")
            }
            guard maxFiles >= 1 else { throw ValidationError("--max-files must be at least 1") }
        }
        do throws(UsageError) {
            _ = try chosenContainer()
        } catch {
            throw ValidationError(error.message)
        }
        let container = try? chosenContainer()
        if mp4Fragmented, container != .mp4 {
            throw ValidationError("--mp4-fragmented applies to MP4 output: name the file .mp4 or add --container mp4")
        }
        if fragmentDuration != nil, container != .mp4 && container != .mkv {
            throw ValidationError("--fragment-duration applies to MP4 and Matroska output: name the file .mp4 or .mkv, or add --container")
        }
        if snapshotEvery != nil && snapshot == nil {
            throw ValidationError("--snapshot-every applies to --snapshot: add --snapshot PATH")
        }
        if snapshot == "-" {
            throw ValidationError("--snapshot keeps a file up to date: give it a file name, not standard output")
        }
        guard segmentPolicy != nil else { return }
        if template.isStandardOutput {
            throw ValidationError("\(segmentOptions) writes several files, not standard output: give -o a file template such as 'rec-{n:03}.h264'")
        }
        if !template.numbersSegments {
            throw ValidationError("\(segmentOptions) needs {n} in -o so that every file has a name of its own, e.g. -o '\(Self.numbered(template.text))'")
        }
    }

    /// The recording's URL, when the first `-o` is one: the recording is then published.
    func recordingDestination() throws(UsageError) -> NetworkDestination? {
        guard let recording, NetworkDestination.looksLikeURL(recording) else { return nil }
        return try NetworkDestination(parsing: recording)
    }

    /// Every `-o` after the first.
    func branches() throws(UsageError) -> [OutputSpec] {
        try output.dropFirst().map { text throws(UsageError) in try OutputSpec(parsing: text) }
    }

    /// What no two outputs may share: a file, standard output.
    private func checkBranches(_ branches: [OutputSpec]) throws(UsageError) {
        var files: [String] = recording.flatMap { NetworkDestination.looksLikeURL($0) ? nil : [Self.normalized($0)] } ?? []
        if jsonSummary == "-" { files.append("-") }
        for branch in branches {
            guard case .file(let path) = branch.target else { continue }
            let normalized = Self.normalized(path)
            if files.contains(normalized) {
                let what = path == "-" ? "standard output" : path
                throw UsageError("-o \(path): \(what) is already an output: each output needs a file of its own")
            }
            files.append(normalized)
        }
    }

    /// A path as a comparison sees it: `./a.mp4` and `a.mp4` are one file.
    private static func normalized(_ path: String) -> String {
        path == "-" ? path : URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// A suggestion: `name.h264` → `name-{n:03}.h264`.
    static func numbered(_ path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let ext = url.pathExtension
        guard !ext.isEmpty else { return path + "-{n:03}" }
        return String(path.dropLast(ext.count + 1)) + "-{n:03}." + ext
    }
}

struct EncoderOptions: ParsableArguments {
    @Option(name: .long, help: "Encoder: auto (default: VA-API hardware when a device can encode with these settings, else x264, saying which and why), vaapi (hardware or exit 4), x264, copy (no encoding: store a camera's own MJPEG frames in .mkv or .mp4, or with --format h264 its H.264 in any output).")
    var encoder: EncoderChoice = .auto

    @Flag(name: .long, inversion: .prefixedNo, help: "With --encoder auto: store the camera's own MJPEG frames (H.264 with --format h264) as --encoder copy does when the camera offers them and nothing asked needs the pictures; otherwise encode, saying why (--no-prefer-copy undoes a preset's).")
    var preferCopy = false

    @OptionGroup var vaDeviceOption: VADeviceOption

    var vaDevice: String? { vaDeviceOption.vaDevice }

    @Option(name: .long, help: ArgumentHelp("x264 preset: ultrafast … placebo (default medium).", valueName: "preset"))
    var speed: String?

    @Option(name: .long, help: ArgumentHelp("x264 tune: film, animation, grain, stillimage, psnr, ssim, fastdecode, zerolatency.", valueName: "tune"))
    var tune: String?

    @Option(name: .long, help: "H.264 profile (baseline means Constrained Baseline).")
    var profile: H264Profile?

    @Option(name: .long, help: ArgumentHelp("H.264 level: 3.1, 4, 4.1 … or auto.", valueName: "level"))
    var level: LevelArgument?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Longest distance between keyframes: frames (60) or time (2s). Default 2s.", valueName: "n|time"), transform: KeyIntervalArgument.parse)
    var keyint: KeyIntervalArgument?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("B-frames between references; 0 turns frame reordering off.", valueName: "n"))
    var bframes: Int?

    @Option(name: .long, help: "Entropy coding.")
    var entropy: EncoderSettings.Entropy?

    @Option(name: .long, help: "Rate control: crf (default), cqp, abr, vbr (with --max-bitrate), cbr.")
    var rateControl: EncoderSettings.RateControl?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Constant quality, 0–51 (default 23; lower is better).", valueName: "q"))
    var crf: Double?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Constant quantiser, 0–51 (with --rate-control cqp).", valueName: "qp"))
    var qp: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Average bit rate in bit/s: 2M, 500k.", valueName: "rate"))
    var bitrate: DecimalQuantity?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Peak bit rate in bit/s (the VBV maximum).", valueName: "rate"))
    var maxBitrate: DecimalQuantity?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("VBV buffer in bytes: 250k (default: one second of the peak rate).", valueName: "bytes"))
    var bufsize: DecimalQuantity?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Encoder threads (0 = automatic).", valueName: "n"))
    var threads: Int?

    @Option(name: .long, help: ArgumentHelp("When the encoder falls behind a live source: adaptive (run faster settings than --speed while it must, instead of dropping frames), drop (drop frames at the queue), off (make the source wait). Default: adaptive for cameras, off for files; --realtime alone is adaptive.", valueName: "mode"))
    var realtime: EncoderSettings.RealTimeMode?

    @Flag(name: .customLong("no-realtime"), help: "The same as --realtime off.")
    var noRealtime = false

    /// The mode given, if any (`--no-realtime` is `off`).
    var realTimeMode: EncoderSettings.RealTimeMode? { noRealtime ? .off : realtime }

    func settings() -> EncoderSettings {
        var s = EncoderSettings()
        if let speed { s.speed = speed }
        s.tune = tune
        s.profile = profile
        s.level = level?.level
        if let keyint { s.keyFrameInterval = keyint.interval }
        s.bFrames = bframes
        s.entropy = entropy
        s.rateControl = rateControl
        s.crf = crf
        s.qp = qp
        s.bitRate = bitrate?.value
        s.maxBitRate = maxBitrate?.value
        s.bufferSize = bufsize?.value
        s.threads = threads
        s.realTime = realTimeMode
        return s
    }
}

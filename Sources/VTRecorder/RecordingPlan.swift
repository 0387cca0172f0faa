import Foundation
import VTAudio
import VTCapture
import VTCore
import VTEncoding
import VTEvents
import VTLiveServer
import VTOutput
import VTPictures

/// `--timing`: a constant frame rate (slots the source missed filled by repeating a frame)
/// or each frame at the time it came.
public enum FrameTiming: String, Sendable, CaseIterable {
    case cfr, passthrough
}

/// A recording decided before anything is opened: every choice its options and presets
/// settle (source, container, outputs, timing, real-time mode, queue depth, sound, copying,
/// events, retention, HTTP), as plain values. The command line makes one from its options and
/// checks them together (`Record.plan()`); `RecordingSession` opens what it names and
/// assembles the pipeline from it. Made without touching a device or a file, so it is
/// unit-tested on its own (RecordingPlanTests).
public struct RecordingPlan: Sendable {
    public enum Source: Equatable, Sendable {
        case camera(path: String)
        case file(path: String)
        case testPattern
    }

    /// The camera's own frames stored as they come (`--encoder copy`), encoded, or stored if
    /// the camera offers them (`--prefer-copy`, settled by `settlingCopy` once it is asked).
    public enum Copy: Equatable, Sendable {
        case encode
        case store
        case ifCameraOffers(CameraPixelFormat)
    }

    /// How a camera is opened (`--format`, `--size`, `--fps`, `--buffers`, `--control`…).
    public struct Camera: Sendable {
        public var request: CameraRequest
        public var buffers: Int
        public var strictFormat: Bool
        public var reconnect: Bool
        public var controls: [ControlSetting]
        /// `--check-frames decode`: a copied H.264 frame is decoded, not only parsed.
        public var decodesFrames: Bool
        public init(request: CameraRequest, buffers: Int, strictFormat: Bool, reconnect: Bool,
                    controls: [ControlSetting], decodesFrames: Bool) {
            (self.request, self.buffers, self.strictFormat) = (request, buffers, strictFormat)
            (self.reconnect, self.controls, self.decodesFrames) = (reconnect, controls, decodesFrames)
        }
    }

    /// An output beside the recording (`-o` after the first), with its own options.
    public struct Branch: Equatable, Sendable {
        public enum Target: Equatable, Sendable {
            case file(path: String, container: Container)
            case network(NetworkDestination)
        }
        public var name: String
        public var target: Target
        public var segments: SegmentPolicy?
        public var maxFiles: Int?
        public init(name: String, target: Target, segments: SegmentPolicy?, maxFiles: Int?) {
            (self.name, self.target, self.segments, self.maxFiles) = (name, target, segments, maxFiles)
        }
    }

    /// `--events`: clips of what happened around each event.
    public struct Events: Sendable {
        public var template: OutputTemplate
        public var container: Container
        public var preRoll: Double
        public var postRoll: Double
        public var maxClip: Double?
        public var onEvent: String?
        /// The bytes the pre-roll may hold.
        public var heldBytesLimit: Int
        public init(template: OutputTemplate, container: Container, preRoll: Double, postRoll: Double,
                    maxClip: Double?, onEvent: String?, heldBytesLimit: Int) {
            (self.template, self.container, self.preRoll, self.postRoll) = (template, container, preRoll, postRoll)
            (self.maxClip, self.onEvent, self.heldBytesLimit) = (maxClip, onEvent, heldBytesLimit)
        }
    }

    /// `--motion`: the detector's settings, with its times in seconds until the rate is known.
    public struct Motion: Sendable {
        public var settings: MotionDetector.Settings
        public var endSeconds: Double?
        public var maxSeconds: Double
        public init(settings: MotionDetector.Settings, endSeconds: Double?, maxSeconds: Double) {
            (self.settings, self.endSeconds, self.maxSeconds) = (settings, endSeconds, maxSeconds)
        }

        /// The settings at the source's rate.
        public func settings(at rate: FrameRate) -> MotionDetector.Settings {
            var settings = self.settings
            if let endSeconds { settings.framesToEnd = MotionDetector.Settings.frames(endSeconds, at: rate) }
            settings.framesToCut = MotionDetector.Settings.frames(maxSeconds, at: rate)
            return settings
        }
    }

    /// `--http`: the server's address and what it serves.
    public struct HTTP: Sendable {
        public var address: HTTPAddress
        /// `--http-auth`.
        public var passwordFile: String?
        /// Seconds between the JPEGs made for /stream.mjpeg, and their size.
        public var mjpegInterval: Double
        public var mjpegSize: FrameSize?
        /// `--live-size`, `--live-bitrate`: the live view's own encode.
        public var liveSize: FrameSize?
        public var liveBitRate: Int64?
        public var hasLiveEncode: Bool { liveSize != nil || liveBitRate != nil }
        public init(address: HTTPAddress, passwordFile: String?, mjpegInterval: Double, mjpegSize: FrameSize?,
                    liveSize: FrameSize?, liveBitRate: Int64?) {
            (self.address, self.passwordFile, self.mjpegInterval) = (address, passwordFile, mjpegInterval)
            (self.mjpegSize, self.liveSize, self.liveBitRate) = (mjpegSize, liveSize, liveBitRate)
        }
    }

    /// `--audio`: the device (nil: the test sound) and how its sound is kept.
    public struct Sound: Sendable {
        public var device: String?
        public var sampleRate: Int?
        public var channels: Int?
        public var codec: AudioCodec
        public var bitRate: Int?
        public var offsetMilliseconds: Double
        public var required: Bool
        public init(device: String?, sampleRate: Int?, channels: Int?, codec: AudioCodec, bitRate: Int?,
                    offsetMilliseconds: Double, required: Bool) {
            (self.device, self.sampleRate, self.channels, self.codec) = (device, sampleRate, channels, codec)
            (self.bitRate, self.offsetMilliseconds, self.required) = (bitRate, offsetMilliseconds, required)
        }
    }

    public var source: Source
    public var camera: Camera
    /// `--size` of the test pattern; `--fps` of a camera, the pattern, or a file retimed.
    public var size: FrameSize?
    public var frameRate: FrameRate?
    public var copy: Copy
    /// The camera format asked for (`--format`); nil: the best the camera has.
    public var cameraFormat: CameraPixelFormat? { camera.request.format }
    /// `--events` without `-o`: the clips are all that is kept.
    public var eventsAlone: Bool
    /// The recording's container: the first `-o`'s, or the clips' when they are all.
    public var container: Container
    /// The first `-o` when it is a URL: the recording is published, not written.
    public var destination: NetworkDestination?
    /// The first `-o` as a file template (standard output included); nil when published or
    /// with `--events` alone.
    public var template: OutputTemplate?
    public var segments: SegmentPolicy?
    public var maxFiles: Int?
    /// The other `-o`s.
    public var branches: [Branch]
    public var events: Events?
    /// The clips' container, with `--events`.
    public var clipContainer: Container? { events?.container }
    public var motion: Motion?
    public var controlSocket: String?
    public var retention: [RetentionRule] = []
    public var keepFree: FreeSpaceTarget?
    public var http: HTTP?
    public var sound: Sound?
    public var soundCodec: AudioCodec? { sound?.codec }
    /// The encoder asked for (`--encoder`) and its device (`--va-device`).
    public var encoder: EncoderChoice
    public var vaDevice: String?
    /// The encoder's settings as the options give them; the source's rate, range and aspect
    /// are added once it is open.
    public var settings: EncoderSettings
    /// `--timing`, or what the container calls for.
    public var requestedTiming: FrameTiming
    public var limits: RecordingLimits
    /// `--snapshot PATH`: a still replaced every `interval` seconds of the recording.
    public struct Snapshot: Sendable, Equatable {
        public var path: String
        public var interval: Double
        public init(path: String, interval: Double) { (self.path, self.interval) = (path, interval) }
    }
    public var snapshot: Snapshot?
    public var timestamps: String?
    public var overwrite = false
    public var quiet = false
    /// MP4: seconds a fragment lasts while recording, and whether it stays fragmented.
    public var fragmentDuration: Double = 1
    public var keepFragmented = false
    /// The first `-o` as given, for the summary.
    public var recordingName: String?
    /// The name `{device}` stands for.
    public var deviceName: String
    /// The presets' names, joined with '+', for `{preset}`.
    public var presetNames: String?
    /// Written into the files' metadata ("vtrecord 1.0").
    public var writingApplication: String
    /// What the options settled that the user should hear of (not with --quiet).
    public var notices: [String] = []

    public init(source: Source, camera: Camera, copy: Copy, eventsAlone: Bool, container: Container,
                destination: NetworkDestination?, template: OutputTemplate?, branches: [Branch],
                encoder: EncoderChoice, settings: EncoderSettings, requestedTiming: FrameTiming,
                limits: RecordingLimits, deviceName: String, writingApplication: String) {
        (self.source, self.camera, self.copy, self.eventsAlone) = (source, camera, copy, eventsAlone)
        (self.container, self.destination, self.template, self.branches) = (container, destination, template, branches)
        (self.encoder, self.settings, self.requestedTiming, self.limits) = (encoder, settings, requestedTiming, limits)
        (self.deviceName, self.writingApplication) = (deviceName, writingApplication)
    }

    public var copying: Bool { copy == .store }
    public var fromCamera: Bool { if case .camera = source { true } else { false } }
    /// Stills can be asked for (`--snapshot`, the control socket, HTTP).
    public var takesStills: Bool { snapshot != nil || controlSocket != nil || http != nil }
    /// `--http`.
    public var serves: Bool { http != nil }
    /// What the summary calls the source.
    public var inputName: String {
        switch source {
        case .camera(let path), .file(let path): path
        case .testPattern: "test-pattern"
        }
    }

    /// A camera's H.264 cannot repeat an access unit into an empty slot: every frame once.
    public var timing: FrameTiming { copying && cameraFormat == .h264 ? .passthrough : requestedTiming }

    /// A camera adapts unless told otherwise (or its frames are copied, which takes no
    /// encoding to adapt); a file or the pattern only when told to.
    public var realTime: EncoderSettings.RealTimeMode {
        settings.realTime ?? (fromCamera ? (copying ? .drop : .adaptive) : .off)
    }

    /// The frames the pipeline can hold, which the source's buffer pools are sized for.
    public var depth: PipelineDepth {
        PipelineDepth(queue: copying ? PipelineDepth.copyQueue
                        : realTime == .adaptive ? PipelineDepth.adaptiveQueue : PipelineDepth.defaultQueue,
                      holdsGridFrame: timing == .cfr, holdsStill: takesStills, holdsLiveStill: serves)
    }

    /// `--prefer-copy` settled: the camera offers the format it would store, or not.
    public func settlingCopy(offered: Bool, camera: String) -> RecordingPlan {
        guard case .ifCameraOffers(let wanted) = copy else { return self }
        var plan = self
        plan.copy = offered ? .store : .encode
        if !offered { plan.notices.append("--prefer-copy: encoding instead, as \(camera) does not offer \(wanted.rawValue)") }
        return plan
    }

    /// A keyframe interval longer than the pre-roll would make clips start too early or, at
    /// worst, a whole interval before: it is shortened to the pre-roll. Returns the notice.
    public static func fitKeyFrameInterval(_ settings: inout EncoderSettings, preRoll: Double,
                                           frameRate: FrameRate) -> String? {
        guard preRoll > 0 else { return nil }
        let frames = settings.keyFrameInterval.frames(at: frameRate)
        let seconds = Double(frames) / frameRate.framesPerSecond
        guard seconds > preRoll + 1e-9 else { return nil }
        let before = settings.keyFrameInterval
        settings.keyFrameInterval = .seconds(preRoll)
        return "--keyint \(before) is longer than --pre-roll \(formatSeconds(preRoll)): keyframes come every "
            + "\(formatSeconds(preRoll)) instead, so each clip starts within its pre-roll"
    }

    /// `5s`, `0.5s`: seconds as the options take them.
    public static func formatSeconds(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds))s" : String(format: "%gs", seconds)
    }
}

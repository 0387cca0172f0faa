import Foundation
import VTAudio
import VTCapture
import VTCore
import VTEncoding
import VTEvents
import VTLiveServer
import VTOutput

/// The `--json-summary` document. `schema` changes only when a field changes meaning or goes
/// away; new fields may appear within a schema version.
public struct RecordingSummary: Codable, Sendable, Equatable {
    public static let schemaVersion = 1

    public struct Format: Codable, Sendable, Equatable {
        public var pixelFormat: String
        public var width: Int
        public var height: Int
        public var fps: String

        enum CodingKeys: String, CodingKey {
            case pixelFormat = "pixel_format", width, height, fps
        }
    }

    /// What the user asked a camera for; null fields were left to vtrecord.
    public struct Requested: Codable, Sendable, Equatable {
        @NullWhenAbsent public var pixelFormat: String?
        @NullWhenAbsent public var width: Int?
        @NullWhenAbsent public var height: Int?
        @NullWhenAbsent public var fps: String?

        enum CodingKeys: String, CodingKey {
            case pixelFormat = "pixel_format", width, height, fps
        }
    }

    /// The settings as the encoder resolved them, keyed by option name.
    public struct Settings: Codable, Sendable, Equatable {
        public var speed: String
        public var tune: String?
        public var profile: String?
        public var level: String?
        public var keyint: Int
        public var bframes: Int?
        public var entropy: String?
        public var rateControl: String
        public var crf: Double?
        public var qp: Int?
        public var bitrate: Int64?
        public var maxBitrate: Int64?
        public var bufsize: Int64?
        public var threads: Int?
        /// Whether the source was never made to wait (`realtime_mode` adaptive or drop).
        public var realtime: Bool
        /// `--realtime`: adaptive, drop or off.
        public var realtimeMode: String
        public var fps: String
        public var sar: String?

        enum CodingKeys: String, CodingKey {
            case speed, tune, profile, level, keyint, bframes, entropy
            case rateControl = "rate_control", crf, qp, bitrate
            case maxBitrate = "max_bitrate", bufsize, threads, realtime, realtimeMode = "realtime_mode", fps, sar
        }
    }

    public var schema = RecordingSummary.schemaVersion
    public var encoder: String
    public var input: String
    /// `-o` as given (a template when segmenting), or the default file name.
    public var output: String
    /// The files written, in order: one, or each segment (including any deleted since to keep
    /// `--max-files`).
    public var segments: [String]
    /// h264 (raw), mp4, mkv, ts; for a recording published to a URL, its stream's format
    /// (ts, flv, rtp).
    public var container: String
    /// MP4: every file was finalized into a regular MP4; null for a raw stream.
    @NullWhenAbsent public var finalized: Bool?
    public var format: Format
    /// Only for a camera.
    public var requested: Requested?
    public var framesCaptured: Int
    public var framesEncoded: Int
    public var keyframes: Int
    public var bytes: Int64
    public var seconds: Double
    public var encodeFPS: Double
    /// Average bit rate of the stream in bit/s, over its presentation time.
    public var bitrate: Int64
    public var droppedQueue: Int
    public var droppedDriver: Int
    public var framesDuplicated: Int
    /// Times an unplugged camera came back (`--reconnect`).
    public var reconnects: Int
    public var framesDroppedTiming: Int
    /// Camera frames whose timestamp went backwards, placed one frame interval after the last.
    public var framesRetimed: Int
    /// Frames captured per wall-clock second.
    public var captureFPS: Double
    /// Capture → access unit written, for sources with a capture clock (cameras).
    public var latencyP50: Double?
    public var latencyP99: Double?
    /// The longest the capture thread took to hand a frame on (milliseconds).
    public var captureHandoffMax: Double
    public var encodeMax: Double
    public var writeMax: Double
    /// `--snapshot`: stills written, skipped because the one before was still being made, and
    /// failed; absent without it.
    public var snapshotsWritten: Int?
    public var snapshotsSkipped: Int?
    public var snapshotsFailed: Int?
    /// `--audio`: the sound track; absent without it.
    public var audio: Audio?
    /// `--realtime adaptive`: the speeds the encoder ran at; absent when it did not adapt.
    public var speed: Speed?
    public var framesBad: Int
    public var framesTruncated: Int
    /// Every output, the recording first: what each wrote, dropped and went through.
    public var outputs: [Output]
    /// Whether every output beside the recording took every packet (true with none).
    public var outputsKeptUp: Bool
    /// `--events`: the clips, the requests and what the pre-roll held; absent without it.
    public var events: EventReport?
    /// `--motion`: what the detector saw and cost; absent without it.
    public var motion: Motion?
    /// `--keep-size`, `--keep-free`, `--keep-age`: what was deleted; absent without them.
    public var retention: RetentionReport?
    /// `--http`: the file systems the recording writes to, and the server's own figures;
    /// absent without it.
    public var disk: [Disk]?
    public var http: HTTPReport?
    public var stopReason: StopReason
    public var error: String?
    public var settings: Settings?

    enum CodingKeys: String, CodingKey {
        case schema, encoder, input, output, segments, container, finalized, format, requested
        case framesCaptured = "frames_captured", framesEncoded = "frames_encoded", keyframes, bytes
        case seconds, encodeFPS = "encode_fps", bitrate, droppedQueue = "dropped_queue"
        case droppedDriver = "dropped_driver", framesBad = "frames_bad"
        case framesDuplicated = "frames_duplicated", framesDroppedTiming = "frames_dropped_timing", reconnects
        case framesRetimed = "frames_retimed"
        case captureFPS = "capture_fps", latencyP50 = "latency_ms_p50", latencyP99 = "latency_ms_p99"
        case captureHandoffMax = "capture_handoff_ms_max", encodeMax = "encode_ms_max", writeMax = "write_ms_max"
        case snapshotsWritten = "snapshots_written", snapshotsSkipped = "snapshots_skipped"
        case snapshotsFailed = "snapshots_failed", audio, speed
        case framesTruncated = "frames_truncated", outputs, outputsKeptUp = "outputs_kept_up", events, motion, retention
        case disk, http
        case stopReason = "stop_reason", error, settings
    }

    /// `camera` is what a camera was asked for and gave; `format.pixel_format` is then the
    /// camera's format (yuyv, mjpeg…), else the format frames arrive in.
    public init(result: RecordingResult, input: String, output: String, container: String = Container.h264.rawValue,
                format: CaptureFormat, camera: CameraNegotiationReport? = nil, realTime: EncoderSettings.RealTimeMode) {
        let s = result.statistics
        encoder = result.encoder
        self.input = input
        self.output = output
        segments = result.segments
        self.container = container
        finalized = result.finalized
        self.format = Format(pixelFormat: camera?.format.rawValue ?? format.pixelFormat.rawValue,
                             width: format.width, height: format.height, fps: format.frameRate.description)
        if let asked = camera?.requested {
            requested = Requested(pixelFormat: asked.format?.rawValue, width: asked.size?.width,
                                  height: asked.size?.height, fps: asked.frameRate?.description)
        }
        framesCaptured = s.framesCaptured
        framesEncoded = s.framesEncoded
        keyframes = s.keyFrames
        bytes = s.bytes
        seconds = (s.seconds * 1000).rounded() / 1000
        encodeFPS = s.seconds > 0 ? (Double(s.framesEncoded) / s.seconds * 10).rounded() / 10 : 0
        let mediaSeconds = Double(s.framesEncoded) / format.frameRate.framesPerSecond
        bitrate = mediaSeconds > 0 ? Int64((Double(s.bytes) * 8 / mediaSeconds).rounded()) : 0
        droppedQueue = s.droppedQueue
        droppedDriver = s.source.droppedBySource
        framesDuplicated = s.framesDuplicated
        reconnects = s.source.reconnects
        framesDroppedTiming = s.framesDroppedTiming
        framesRetimed = s.source.retimedFrames
        captureFPS = s.seconds > 0 ? (Double(s.framesCaptured) / s.seconds * 10).rounded() / 10 : 0
        latencyP50 = s.latency.quantile(0.5).map { ($0 * 100).rounded() / 100 }
        latencyP99 = s.latency.quantile(0.99).map { ($0 * 100).rounded() / 100 }
        captureHandoffMax = (s.longestCaptureHandoff * 1000).rounded() / 1000
        encodeMax = (s.longestEncode * 1000).rounded() / 1000
        writeMax = (s.longestWrite * 1000).rounded() / 1000
        snapshotsWritten = s.stills?.written
        snapshotsSkipped = s.stills?.skipped
        snapshotsFailed = s.stills?.failed
        audio = s.audio.map(Audio.init)
        speed = s.speed.map(Speed.init)
        motion = s.motion.map(Motion.init)
        framesBad = s.source.badFrames
        framesTruncated = s.source.truncatedFrames
        stopReason = result.stopReason
        error = result.error.map { ($0 as? any ReportableError)?.description ?? "\($0)" }
        // While it records (GET /status), the recording is written to, not finished.
        let state: OutputBranch.Report.State = error != nil ? .failed
            : result.stopReason != .recording ? .finished
            : s.framesEncoded > 0 ? .connected : .connecting
        var recording = OutputBranch.Report(name: output, state: state)
        recording.bytes = s.bytes
        recording.packetsWritten = s.framesEncoded
        recording.paths = result.segments
        recording.lastError = error
        outputs = [Output(role: .recording, report: recording)]
            + result.branches.map { Output(role: .secondary, report: $0) }
        outputsKeptUp = result.branches.allSatisfy(\.keptUp)
        settings = result.settings.map { Settings($0, realTime: realTime) }
    }

    /// `--motion`'s figures.
    public struct Motion: Codable, Sendable, Equatable {
        public var frames: Int
        public var episodes: Int
        /// Episodes ended for going on longer than --motion-max without a pause.
        public var episodesCut: Int
        /// Shares of the watched picture that changed (0–1).
        public var scorePeak: Double
        public var scoreLast: Double
        public var noiseLevel: Double
        public var cpuSeconds: Double
        /// The analysis picture, as "160x90".
        public var analysisSize: String

        enum CodingKeys: String, CodingKey {
            case frames, episodes, episodesCut = "episodes_cut", scorePeak = "score_peak", scoreLast = "score_last"
            case noiseLevel = "noise_level"
            case cpuSeconds = "cpu_seconds", analysisSize = "analysis_size"
        }

        init(_ m: MotionStatistics) {
            frames = m.frames
            episodes = m.episodes
            episodesCut = m.episodesCut
            scorePeak = (m.peakScore * 10_000).rounded() / 10_000
            scoreLast = (m.latestScore * 10_000).rounded() / 10_000
            noiseLevel = (m.noiseLevel * 100).rounded() / 100
            cpuSeconds = (m.cpuSeconds * 1000).rounded() / 1000
            analysisSize = "\(m.analysisWidth)x\(m.analysisHeight)"
        }
    }

    /// One output, the recording or one beside it: its role and what it did.
    public struct Output: Codable, Sendable, Equatable {
        public enum Role: String, Codable, Sendable {
            /// The first `-o`: its failure ends the run.
            case recording
            /// Any other: best effort.
            case secondary
        }

        public var role: Role
        public var report: OutputBranch.Report

        enum CodingKeys: String, CodingKey { case role }

        init(role: Role, report: OutputBranch.Report) {
            self.role = role
            self.report = report
            self.report.secondsDown = (report.secondsDown * 1000).rounded() / 1000
            self.report.keyFrameWaitMax = (report.keyFrameWaitMax * 1000).rounded() / 1000
        }

        /// One object: the role beside the report's own keys.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(role, forKey: .role)
            try report.encode(to: encoder)
        }

        public init(from decoder: any Decoder) throws {
            role = try decoder.container(keyedBy: CodingKeys.self).decode(Role.self, forKey: .role)
            report = try OutputBranch.Report(from: decoder)
        }
    }

    /// The sound track: what it was recorded from and as, and what happened to it.
    public struct Audio: Codable, Sendable, Equatable {
        public var device: String
        public var codec: String
        public var rate: Int
        public var channels: Int
        @NullWhenAbsent public var bitrate: Int?
        /// Samples per channel in the file.
        public var samples: Int64
        public var seconds: Double
        /// Gaps filled with silence (overruns, stalls, an unplugged device) and their length.
        public var gaps: Int
        public var silenceSeconds: Double
        public var xruns: Int
        public var disconnects: Int
        public var reconnects: Int
        /// The device's clock against the camera's, in ppm (null when not measured: the test
        /// sound, or under ten seconds).
        @NullWhenAbsent public var driftPPM: Double?
        /// CPU time of the audio thread (capture, conversion, encoding).
        public var cpuSeconds: Double
        /// The loudest sample of the last half second, in dBFS (−100 for silence).
        @NullWhenAbsent public var levelDBFS: Double?

        enum CodingKeys: String, CodingKey {
            case device, codec, rate, channels, bitrate, samples, seconds, gaps
            case silenceSeconds = "silence_seconds", xruns, disconnects, reconnects, driftPPM = "drift_ppm"
            case cpuSeconds = "cpu_seconds", levelDBFS = "level_dbfs"
        }

        init(_ summary: AudioSummary) {
            device = summary.device
            codec = summary.codec.rawValue
            rate = summary.sampleRate
            channels = summary.channels
            bitrate = summary.bitRate
            samples = summary.samples
            seconds = (Double(summary.samples) / Double(summary.sampleRate) * 1000).rounded() / 1000
            gaps = summary.gaps
            silenceSeconds = (summary.silenceSeconds * 1000).rounded() / 1000
            xruns = summary.overruns
            disconnects = summary.disconnects
            reconnects = summary.reconnects
            driftPPM = summary.driftPPM.map { ($0 * 10).rounded() / 10 }
            cpuSeconds = (summary.cpuSeconds * 1000).rounded() / 1000
            levelDBFS = summary.levelDBFS.map { ($0 * 10).rounded() / 10 }
        }
    }

    public func jsonData() throws -> Data {
        try jsonDocument(self)
    }
}

extension RecordingSummary {
    /// A folder the recording writes to, and the room on its file system.
    public struct Disk: Codable, Sendable, Equatable {
        public var path: String
        public var freeBytes: Int64
        public var totalBytes: Int64

        public init(path: String, freeBytes: Int64, totalBytes: Int64) {
            self.path = path
            self.freeBytes = freeBytes
            self.totalBytes = totalBytes
        }

        enum CodingKeys: String, CodingKey { case path, freeBytes = "free_bytes", totalBytes = "total_bytes" }
    }

    /// `--realtime adaptive`: where the encoder's speed went.
    public struct Speed: Codable, Sendable, Equatable {
        /// `--speed`: the best the encoder was allowed.
        public var slowest: String
        /// The speed at the end.
        public var last: String
        /// Times it changed.
        public var changes: Int
        /// Seconds at each speed it can step to (`--speed` and every faster one), in that order.
        public var seconds: [String: Double]
        /// The speeds, `--speed` first (the keys of `seconds` in order).
        public var steps: [String]
        /// Each change, in order (the first thousand): when (seconds since the first
        /// picture) and to which speed.
        public var history: [Change]

        public struct Change: Codable, Sendable, Equatable {
            public var at: Double
            public var speed: String
        }

        init(_ s: SpeedStatistics) {
            slowest = s.steps[0]
            last = s.steps[s.current]
            changes = s.changes
            steps = s.steps
            seconds = Dictionary(uniqueKeysWithValues: zip(s.steps, s.seconds.map { ($0 * 1000).rounded() / 1000 }))
            history = s.history.map { Change(at: ($0.at * 1000).rounded() / 1000, speed: s.steps[$0.step]) }
        }
    }
}

extension RecordingSummary.Settings {
    init(_ s: EncoderSettings, realTime: EncoderSettings.RealTimeMode) {
        speed = s.speed
        tune = s.tune
        profile = s.profile?.rawValue
        level = s.level
        keyint = s.keyFrameInterval.frames(at: s.frameRate)
        bframes = s.bFrames
        entropy = s.entropy?.rawValue
        rateControl = s.effectiveRateControl.rawValue
        crf = s.effectiveRateControl == .crf ? s.crf : nil
        qp = s.effectiveRateControl == .cqp ? s.qp : nil
        bitrate = s.bitRate
        maxBitrate = s.effectiveMaxBitRate
        bufsize = s.effectiveBufferSize
        threads = s.threads
        realtime = realTime.isLive
        realtimeMode = realTime.rawValue
        fps = s.frameRate.description
        sar = s.sampleAspectRatio?.description
    }
}

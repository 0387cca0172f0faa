import Foundation

/// A fake USB camera for a test: the environment that makes a child process see a uvcvideo
/// device at `path`, through the LD_PRELOAD library built from Tests/FakeV4L2, and the reports
/// the processes that used it leave when they exit.
///
///     let camera = try FakeCamera(knobs: [.dropEvery(5)])
///     let result = try ChildProcess.run(["ffmpeg", "-f", "v4l2", "-i", camera.path, …],
///                                       environment: camera.environment())
///     #expect(try camera.report().releasedEverything)
///
/// The camera lives in each child process separately: two processes never share stream
/// ownership unless the camera has a lock file (`.lockFile`), as `sharedOwnership()` gives.
public final class FakeCamera: Sendable {
    public let path: String
    public let knobs: [Knob]
    /// A directory of the camera's own, removed with it: reports, lock file, captures.
    public let directory: URL

    /// One fault or setting; each is an environment variable documented in fake_v4l2.c.
    public enum Knob: Sendable {
        /// Formats, sizes and rates: "YUYV:640x480@30/15/5,1920x1080@5;MJPG:…", or "webcam".
        case formats(String)
        case card(String)
        case maxBuffers(Int)
        /// Unplugged when frame `frames` of a stream comes due.
        case unplugAfter(frames: Int)
        /// The path reappears this long after the unplug.
        case reconnectAfter(milliseconds: Int)
        case deliveredFramesPerSecond(Double)
        case jitter(microseconds: Int)
        /// The driver drops sequence N-1, 2N-1, …
        case dropEvery(Int)
        case corruptJPEGEvery(Int)
        /// FAKE_V4L2_JPEG_HOLE_EVERY: every Nth JPEG loses the second half of its scan and keeps
        /// its end marker.
        case jpegHoleEvery(Int)
        /// Every Nth H264 access unit has the forbidden bit set in each slice's NAL header.
        case corruptH264Every(Int)
        /// FAKE_V4L2_H264_HOLE_EVERY: every Nth H264 access unit loses the middle third of its
        /// last slice's data; its NAL units stay well formed.
        case h264HoleEvery(Int)
        case shortBufferEvery(Int)
        case errorFlagEvery(Int)
        /// The stream breaks when frame `frames` comes due: DQBUF fails with EIO until STREAMOFF.
        case eioAfter(frames: Int)
        /// From frame `frame` on, frames come at `framesPerSecond`.
        case rateChange(frame: Int, framesPerSecond: Double)
        /// Every Nth frame is stamped `milliseconds` earlier than it came due.
        case timestampBackEvery(Int, milliseconds: Int)
        /// At every Nth frame the timestamps step `milliseconds` forward and stay ahead.
        case timestampJumpEvery(Int, milliseconds: Int)
        /// The camera stops for `milliseconds` the first time a client enters `phase` (open,
        /// s_fmt, s_parm, reqbufs, streamon, dqbuf:N), saying so on standard error.
        case pause(at: String, milliseconds: Int)
        /// Another program owns the camera: S_FMT, S_PARM, S_INPUT and REQBUFS give EBUSY.
        case busy
        /// open() fails with this errno name, e.g. "EACCES".
        case openError(String)
        /// The node is a metadata node, not a video capture device.
        case notCapture
        case jpegSubsampling(Int)
        case jpegQuality(Int)
        /// Luma noise of up to ±amplitude, new in every frame: pictures that are costly to encode.
        case noise(amplitude: Int)
        /// A still scene: the background does not pan (the frame code still changes every frame).
        case still
        /// A white square a sixth of the picture's height on a side crosses the picture left to
        /// right, 4 pixels a frame, in the frames with sequence `from` ≤ n < `to`.
        case mover(from: Int, to: Int)
        /// The light changes: the scene's luma (not the frame code's) shifts linearly by up to
        /// `delta` from frame `from` to frame `to`, and stays shifted; `from == to` is a step.
        case lightRamp(from: Int, to: Int, delta: Int)
        /// A lamp blinks: a white square in the upper right quarter, lit in the first `on`
        /// frames of every `period`.
        case blink(period: Int, on: Int)
        /// Only this many pictures are made, once each, then delivered in turn (frame codes
        /// 0…N-1 over and over): a camera whose pictures cost the process nothing.
        case pictureRing(Int)
        /// Frames on a grid through the whole seconds of CLOCK_MONOTONIC, the frame on each
        /// second with its lower half white: with the fake microphone's beeps on whole seconds,
        /// what sync is measured by.
        case flash
        /// The DQBUF that hands out each of these frame sequences sends the process SIGUSR1.
        case signalAt([Int])
        /// At each STREAMON the stream's start (CLOCK_MONOTONIC ns) is written to this file:
        /// frame n came due at start + (n+1) × interval.
        case streamOnFile(String)
        /// Every call on the device, and each control value set, is logged to standard error.
        case trace

        /// The environment variables the knob sets.
        var variables: [(name: String, value: String)] {
            switch self {
            case .formats(let table): [("FAKE_V4L2_FORMATS", table)]
            case .card(let name): [("FAKE_V4L2_CARD", name)]
            case .maxBuffers(let count): [("FAKE_V4L2_MAX_BUFFERS", "\(count)")]
            case .unplugAfter(let frames): [("FAKE_V4L2_UNPLUG_AFTER", "\(frames)")]
            case .reconnectAfter(let milliseconds): [("FAKE_V4L2_RECONNECT_MS", "\(milliseconds)")]
            case .deliveredFramesPerSecond(let rate): [("FAKE_V4L2_DELIVERED_FPS", "\(rate)")]
            case .jitter(let microseconds): [("FAKE_V4L2_JITTER_US", "\(microseconds)")]
            case .dropEvery(let n): [("FAKE_V4L2_DROP_EVERY", "\(n)")]
            case .corruptJPEGEvery(let n): [("FAKE_V4L2_CORRUPT_JPEG_EVERY", "\(n)")]
            case .jpegHoleEvery(let n): [("FAKE_V4L2_JPEG_HOLE_EVERY", "\(n)")]
            case .corruptH264Every(let n): [("FAKE_V4L2_CORRUPT_H264_EVERY", "\(n)")]
            case .h264HoleEvery(let n): [("FAKE_V4L2_H264_HOLE_EVERY", "\(n)")]
            case .shortBufferEvery(let n): [("FAKE_V4L2_SHORT_EVERY", "\(n)")]
            case .errorFlagEvery(let n): [("FAKE_V4L2_ERROR_EVERY", "\(n)")]
            case .eioAfter(let frames): [("FAKE_V4L2_EIO_AFTER", "\(frames)")]
            case .rateChange(let frame, let rate): [("FAKE_V4L2_RATE_CHANGE", "\(frame):\(rate)")]
            case .busy: [("FAKE_V4L2_BUSY", "1")]
            case .openError(let name): [("FAKE_V4L2_OPEN_ERRNO", name)]
            case .notCapture: [("FAKE_V4L2_NOT_CAPTURE", "1")]
            case .jpegSubsampling(let value): [("FAKE_V4L2_JPEG_SUBSAMPLING", "\(value)")]
            case .jpegQuality(let quality): [("FAKE_V4L2_JPEG_QUALITY", "\(quality)")]
            case .noise(let amplitude): [("FAKE_V4L2_NOISE", "\(amplitude)")]
            case .trace: [("FAKE_V4L2_TRACE", "1")]
            case .signalAt(let frames): [("FAKE_V4L2_SIGNAL_AT", frames.map(String.init).joined(separator: ","))]
            case .pictureRing(let count): [("FAKE_V4L2_PICTURE_RING", "\(count)")]
            case .still: [("FAKE_V4L2_STILL", "1")]
            case .mover(let start, let end): [("FAKE_V4L2_MOVER", "\(start):\(end)")]
            case .lightRamp(let start, let end, let delta): [("FAKE_V4L2_LIGHT_RAMP", "\(start):\(end):\(delta)")]
            case .blink(let period, let on): [("FAKE_V4L2_BLINK", "\(period):\(on)")]
            case .flash: [("FAKE_V4L2_FLASH", "1")]
            case .streamOnFile(let path): [("FAKE_V4L2_STREAMON_FILE", path)]
            case .timestampBackEvery(let n, let milliseconds):
                [("FAKE_V4L2_TIMESTAMP_BACK_EVERY", "\(n)"), ("FAKE_V4L2_TIMESTAMP_BACK_MS", "\(milliseconds)")]
            case .timestampJumpEvery(let n, let milliseconds):
                [("FAKE_V4L2_TIMESTAMP_JUMP_EVERY", "\(n)"), ("FAKE_V4L2_TIMESTAMP_JUMP_MS", "\(milliseconds)")]
            case .pause(let phase, let milliseconds):
                [("FAKE_V4L2_PAUSE_AT", phase), ("FAKE_V4L2_PAUSE_MS", "\(milliseconds)")]
            }
        }
    }

    /// A camera at `path` (which must not exist on disk) with the given knobs.
    public init(path: String = "/dev/video0", knobs: [Knob] = []) throws {
        self.path = path
        self.knobs = knobs
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("fake-camera-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// A path inside the camera's directory, for captures and other files of the test.
    public func file(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    /// The lock file that makes stream ownership hold across processes.
    public var lockFile: String { file("ownership.lock") }

    /// The environment for a child process: `base` without any FAKE_V4L2_ settings it had,
    /// plus the library, the device path, the report location and the knobs. `base` may be
    /// another double's environment (`FakeVADevice.environment()`): the preloads add up.
    public func environment(base: [String: String] = ProcessInfo.processInfo.environment,
                            sharedOwnership: Bool = false) throws -> [String: String] {
        var environment = base.filter { !$0.key.hasPrefix("FAKE_V4L2_") }
        environment["LD_PRELOAD"] = LDPreload.adding(try FakeV4L2Library.path(), to: base)
        environment["FAKE_V4L2_DEVICE"] = path
        environment["FAKE_V4L2_REPORT"] = file("report-%p.txt")
        if sharedOwnership { environment["FAKE_V4L2_LOCK_FILE"] = lockFile }
        for knob in knobs {
            for (name, value) in knob.variables { environment[name] = value }
        }
        return environment
    }

    /// The reports of every process that tried to open the camera and did not die of a signal.
    public func reports() throws -> [Report] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix("report-") && $0.hasSuffix(".txt") }
            .sorted()
        return try names.map { try Report(text: String(contentsOfFile: file($0), encoding: .utf8)) }
    }

    /// The report of the one process that used the camera.
    public func report() throws -> Report {
        let all = try reports()
        guard all.count == 1 else { throw ReportMissing(count: all.count, directory: directory.path) }
        return all[0]
    }

    public struct ReportMissing: Error, CustomStringConvertible {
        public let count: Int
        public let directory: String
        public var description: String {
            "expected one fake camera report in \(directory), found \(count) "
                + "(a process writes one only when it tried to open the camera and did not die of a signal)"
        }
    }

    /// What a process left of the camera when it exited.
    public struct Report: KeyValueReport, Sendable, Equatable, CustomStringConvertible {
        public let values: [String: String]

        init(text: String) {
            values = Self.values(of: text)
        }

        public var openHandles: Int { number("open_handles") }
        public var mappedBuffers: Int { number("mapped_buffers") }
        public var streaming: Bool { number("streaming") != 0 }
        /// Buffers the driver held at exit (queued or filled and not dequeued).
        public var buffersQueued: Int { number("buffers_queued") }
        /// Successful DQBUFs.
        public var framesDelivered: Int { number("frames_delivered") }
        public var framesDropped: Int { number("frames_dropped") }
        /// The sequence number of the last buffer dequeued, -1 when none was.
        public var lastSequence: Int { number("last_sequence") }
        public var opens: Int { number("opens") }
        public var unplugged: Bool { number("unplugged") != 0 }
        /// The stream broke with EIO (`.eioAfter`).
        public var failed: Bool { number("failed") != 0 }
        /// The phase the `.pause` knob stopped in ("s_fmt", "dqbuf"), or "none".
        public var pauseReached: String { values["pause_reached"] ?? "" }
        /// How the process ended: "exit" (returned from main or called exit) or "_exit" (left
        /// without destructors; the counts are what it still held, which the kernel releases).
        public var exitPath: String { values["exit"] ?? "" }
        public var processIdentifier: Int { number("pid") }

        /// Nothing open, mapped, queued or streaming: the process gave the camera back.
        public var releasedEverything: Bool {
            openHandles == 0 && mappedBuffers == 0 && !streaming && buffersQueued == 0
        }

        public var description: String {
            values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }
}

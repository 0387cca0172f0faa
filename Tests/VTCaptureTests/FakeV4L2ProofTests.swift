import Foundation
import Testing
import VTTestSupport

/// The fake camera (Tests/FakeV4L2) proved against clients written by other people: v4l2-ctl
/// (direct ioctls, and through libv4l2 with -w) and ffmpeg's v4l2 input. If these tools see a
/// webcam, capture code tested against the fake is tested against something camera-shaped.
@Suite("Fake V4L2 camera against v4l2-ctl and ffmpeg")
struct FakeV4L2ProofTests {
    static let defaultTable = ["YUYV", "MJPG", "NV12", "YU12"].flatMap { fourcc in
        ["640x480", "1280x720", "1920x1080"].map { "\(fourcc) \($0) 30,15,5" }
    }

    @Test func v4l2ctlListsEveryFormatSizeAndInterval() throws {
        let camera = try FakeCamera()
        let result = try camera.v4l2ctl(["--list-formats-ext"])
        try #require(result.status == 0, "\(result.transcript)")
        #expect(V4L2CtlText.formatTable(result.standardOutputText) == Self.defaultTable)
        #expect(result.standardOutputText.contains("'MJPG' (Motion-JPEG, compressed)"))
    }

    @Test func webcamTableOffersUncompressed1080pOnlyAtFivePerSecond() throws {
        let camera = try FakeCamera(knobs: [.formats("webcam")])
        let list = try camera.v4l2ctl(["--list-formats-ext"])
        try #require(list.status == 0, "\(list.transcript)")
        #expect(V4L2CtlText.formatTable(list.standardOutputText) == [
            "YUYV 640x480 30,15,5", "YUYV 1280x720 10,5", "YUYV 1920x1080 5",
            "MJPG 640x480 30,15,5", "MJPG 1280x720 30,15,5", "MJPG 1920x1080 30,15,5",
        ])
        // ffmpeg asks for 30 and is told what it gets, as with a real camera.
        let output = camera.file("yuyv1080.gray")
        let result = try camera.ffmpegGray(inputFormat: "yuyv422", size: "1920x1080", frames: 2,
                                           output: output, logLevel: "info")
        try #require(result.status == 0, "\(result.transcript)")
        #expect(result.standardError.contains("The driver changed the time per frame from 1/30 to 1/5"))
        let codes = try frameNumbers(in: Data(contentsOf: URL(fileURLWithPath: output)), layout: .gray,
                                     width: 1920, height: 1080)
        #expect(codes == [0, 1])
    }

    @Test func v4l2ctlShowsDriverInfoAndControls() throws {
        let camera = try FakeCamera(knobs: [.card("Test Webcam")])
        let all = try camera.v4l2ctl(["--all"])
        try #require(all.status == 0, "\(all.transcript)")
        let text = all.standardOutputText
        #expect(text.contains("Driver name      : uvcvideo"))
        #expect(text.contains("Card type        : Test Webcam"))
        #expect(text.contains("Video input : 0 (Camera 1: ok)"))
        #expect(text.contains("Pixel Format      : 'YUYV' (YUYV 4:2:2)"))
        #expect(text.contains("Frames per second: 30.000 (30/1)"))
        #expect(V4L2CtlText.controls(text).map { "\($0.name) \($0.type)" } == [
            "brightness int", "contrast int", "saturation int", "white_balance_temperature_auto bool",
            "power_line_frequency menu", "exposure_auto menu", "exposure_absolute int",
        ])
        #expect(text.contains("1: Manual Mode") && text.contains("3: Aperture Priority Mode"))
        #expect(!text.contains("0: Auto Mode"), "the camera skips that menu item")
        #expect(text.contains("flags=inactive"), "exposure time is inactive while exposure is automatic")
    }

    @Test func controlsClampOrRefuseAsUVCDoes() throws {
        let camera = try FakeCamera()
        let clamped = try camera.v4l2ctl(["--set-ctrl=brightness=1000,exposure_auto=1",
                                          "--get-ctrl=brightness,exposure_auto"])
        try #require(clamped.status == 0, "\(clamped.transcript)")
        #expect(clamped.standardOutputText == "brightness: 64\nexposure_auto: 1 (Manual Mode)\n")
        let outOfRange = try camera.v4l2ctl(["--set-ctrl=power_line_frequency=7"])
        #expect(outOfRange.status != 0)
        #expect(outOfRange.standardError.contains("Numerical result out of range"))
        let skipped = try camera.v4l2ctl(["--set-ctrl=exposure_auto=0"])
        #expect(skipped.status != 0)
        #expect(skipped.standardError.contains("Invalid argument"))
    }

    @Test func rateRequestsSnapToTheNearestOffered() throws {
        let camera = try FakeCamera()
        let result = try camera.v4l2ctl(["--set-parm=24"])
        try #require(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutputText.contains("Frame rate set to 30.000 fps"))
        let slower = try camera.v4l2ctl(["--set-parm=10"])
        #expect(slower.standardOutputText.contains("Frame rate set to 15.000 fps"))
    }

    @Test(arguments: [("YUYV", RawLayout.yuyv), ("NV12", .planar420), ("YU12", .planar420)])
    func v4l2ctlCapturesEveryFrameInOrder(fourcc: String, layout: RawLayout) throws {
        let camera = try FakeCamera()
        let output = camera.file("capture.raw")
        // Sixteen buffers: a client late by half a second on a busy machine still loses nothing.
        let result = try camera.v4l2ctl(["--set-fmt-video=width=640,height=480,pixelformat=\(fourcc)",
                                         "--stream-mmap=16", "--stream-count=12", "--stream-to=\(output)"])
        try #require(result.status == 0, "\(result.transcript)")
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(data.count == 12 * layout.pictureSize(width: 640, height: 480))
        #expect(frameNumbers(in: data, layout: layout, width: 640, height: 480) == Array(0..<12))
        let report = try camera.report()
        #expect(report.releasedEverything, "\(report)")
        #expect(report.lastSequence == 11)
    }

    @Test func libv4l2ReachesTheCameraThroughSyscall() throws {
        let camera = try FakeCamera(knobs: [.trace])
        let output = camera.file("capture.nv12")
        let result = try camera.v4l2ctl(["-w", "--set-fmt-video=width=1280,height=720,pixelformat=NV12",
                                         "--stream-mmap=16", "--stream-count=8", "--stream-to=\(output)"])
        try #require(result.status == 0, "\(result.transcript)")
        #expect(result.standardError.contains("syscall(SYS_ioctl)"), "libv4l2 bypasses libc's ioctl")
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(frameNumbers(in: data, layout: .planar420, width: 1280, height: 720) == Array(0..<8))
        #expect(try camera.report().releasedEverything)
    }

    /// Asked for YU12 by a camera without it, libv4l2 converts on its own from what the camera
    /// has, decoding MJPEG itself when that is all there is; the codes must survive that too.
    @Test(arguments: ["YUYV:640x480@30;MJPG:640x480@30", "MJPG:640x480@30"])
    func libv4l2ConvertsToFormatsTheCameraLacks(formats: String) throws {
        let camera = try FakeCamera(knobs: [.formats(formats)])
        let client = try FakeV4L2Library.client("libv4l2_capture")
        let result = try ChildProcess.run([client, camera.path, "YU12", "640", "480", "6"],
                                          environment: camera.environment(), timeout: .seconds(30))
        try #require(result.status == 0, "\(result.transcript)")
        #expect(result.standardError.hasPrefix("format YU12 640x480 460800\n"))
        #expect(frameNumbers(in: result.standardOutput, layout: .planar420, width: 640, height: 480)
                == Array(0..<6))
        #expect(try camera.report().releasedEverything)
    }

    @Test(arguments: [("yuyv422", "640x480"), ("mjpeg", "1280x720")])
    func ffmpegRecordsEveryFrameInOrder(inputFormat: String, size: String) throws {
        let camera = try FakeCamera()
        let output = camera.file("recording.gray")
        let result = try camera.ffmpegGray(inputFormat: inputFormat, size: size, frames: 12, output: output)
        try #require(result.status == 0, "\(result.transcript)")
        let dimensions = size.split(separator: "x").compactMap { Int($0) }
        let codes = try frameNumbers(in: Data(contentsOf: URL(fileURLWithPath: output)), layout: .gray,
                                     width: dimensions[0], height: dimensions[1])
        #expect(codes == Array(0..<12))
        let report = try camera.report()
        #expect(report.releasedEverything, "\(report)")
    }

    @Test func driverDropsShowAsSequenceGapsInV4l2ctl() throws {
        let camera = try FakeCamera(knobs: [.dropEvery(3)])
        let output = camera.file("capture.yuyv")
        let result = try camera.v4l2ctl(["--stream-mmap=16", "--stream-count=8", "--verbose",
                                         "--stream-to=\(output)"])
        try #require(result.status == 0, "\(result.transcript)")
        let expected = [0, 1, 3, 4, 6, 7, 9, 10]
        let sequences = V4L2CtlText.numbers(after: "seq:", in: result.standardOutputText + result.standardError)
        #expect(sequences.map { Int($0) } == expected)
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(frameNumbers(in: data, layout: .yuyv, width: 640, height: 480) == expected)
        #expect(try camera.report().framesDropped >= 3)
    }

    @Test func driverDropsShowAsGapsInFFmpegCounters() throws {
        let camera = try FakeCamera(knobs: [.dropEvery(4)])
        let output = camera.file("recording.gray")
        let result = try camera.ffmpegGray(inputFormat: "yuyv422", size: "640x480", frames: 9, output: output)
        try #require(result.status == 0, "\(result.transcript)")
        let codes = try frameNumbers(in: Data(contentsOf: URL(fileURLWithPath: output)), layout: .gray,
                                     width: 640, height: 480)
        #expect(codes == [0, 1, 2, 4, 5, 6, 8, 9, 10])
    }

    @Test func timestampsFollowTheDeliveredRateNotTheNominalOne() throws {
        let camera = try FakeCamera(knobs: [.deliveredFramesPerSecond(15)])
        let result = try camera.v4l2ctl(["--stream-mmap=16", "--stream-count=6", "--verbose", "--get-parm"])
        try #require(result.status == 0, "\(result.transcript)")
        let text = result.standardOutputText + result.standardError
        let deltas = V4L2CtlText.numbers(after: "delta:", in: text)
        #expect(deltas.count == 5)
        #expect(deltas.allSatisfy { abs($0 - 66.667) < 0.01 }, "\(deltas)")
        #expect(text.contains("Frames per second: 30.000 (30/1)"), "the driver still claims 30")
    }

    /// FAKE_V4L2_STREAMON_FILE: the start written there is where v4l2-ctl's timestamps count
    /// from, frame n at start + (n+1) × interval.
    @Test func theStreamsStartIsWhereItsTimestampsCountFrom() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("streamon-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("start").path
        let camera = try FakeCamera(knobs: [.streamOnFile(file)])
        let result = try camera.v4l2ctl(["--stream-mmap=16", "--stream-count=6", "--verbose"])
        try #require(result.status == 0, "\(result.transcript)")
        let start = try #require(Int64(try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        let stamps = V4L2CtlText.numbers(after: "ts:", in: result.standardOutputText + result.standardError)
        try #require(stamps.count == 6, "\(result.transcript)")
        for (n, stamp) in stamps.enumerated() {
            let expected = Double(start) / 1e9 + Double(n + 1) / 30
            #expect(abs(stamp - expected) < 2e-6, "frame \(n) at \(stamp), expected \(expected)")
        }
    }

    @Test func jitterMovesFramesButKeepsThemInOrder() throws {
        let camera = try FakeCamera(knobs: [.jitter(microseconds: 20000)])
        let result = try camera.v4l2ctl(["--stream-mmap=16", "--stream-count=8", "--verbose"])
        try #require(result.status == 0, "\(result.transcript)")
        let text = result.standardOutputText + result.standardError
        #expect(V4L2CtlText.numbers(after: "seq:", in: text).map { Int($0) } == Array(0..<8))
        let deltas = V4L2CtlText.numbers(after: "delta:", in: text)
        #expect(deltas.count == 7)
        #expect(deltas.allSatisfy { $0 > 33.333 - 20 && $0 < 33.334 + 20 }, "\(deltas)")
        #expect(Set(deltas.map { ($0 * 10).rounded() }).count > 1, "the intervals vary: \(deltas)")
    }

    /// `--stream-poll` waits in select() on a non-blocking descriptor: the unplug must wake it
    /// (POLLERR) and the DQBUF that follows must fail with ENODEV.
    @Test func selectSeesFramesAndTheUnplug() throws {
        let camera = try FakeCamera(knobs: [.unplugAfter(frames: 5)])
        let output = camera.file("capture.yuyv")
        let result = try camera.v4l2ctl(["--stream-mmap=16", "--stream-count=20", "--stream-poll",
                                         "--stream-to=\(output)"])
        #expect((result.standardOutputText + result.standardError).contains("VIDIOC_DQBUF: failed: No such device"),
                "\(result.transcript)")
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(frameNumbers(in: data, layout: .yuyv, width: 640, height: 480) == Array(0..<5))
        #expect(try camera.report().unplugged)
    }

    /// FAKE_V4L2_FLASH as ffmpeg's v4l2 input sees it (-copyts keeps the kernel's monotonic
    /// times, in microseconds): frames on whole seconds of CLOCK_MONOTONIC have their lower half
    /// white, and no other frame does.
    @Test func flashFramesSitOnWholeSecondsOfTheMonotonicClock() throws {
        let camera = try FakeCamera(knobs: [.flash])
        let result = try ChildProcess.run(["ffmpeg", "-nostdin", "-hide_banner", "-copyts", "-f", "v4l2",
                                           "-input_format", "yuyv422", "-video_size", "640x480", "-framerate", "30",
                                           "-i", camera.path, "-frames:v", "75",
                                           "-vf", "crop=iw:ih/2:0:ih/2,signalstats,metadata=print:key=lavfi.signalstats.YAVG",
                                           "-f", "null", "-"],
                                          environment: camera.environment(), timeout: .seconds(30))
        #expect(result.status == 0, "\(result.transcript)")
        var frames: [(pts: Int64, bright: Bool)] = []
        var pts: Int64?
        for line in result.standardError.split(separator: "\n") {
            if let range = line.range(of: " pts:") {
                pts = Int64(line[range.upperBound...].prefix { $0.isNumber })
            } else if let range = line.range(of: "YAVG="), let value = Double(line[range.upperBound...]), let time = pts {
                frames.append((time, value > 200))
            }
        }
        #expect(frames.count == 75)
        let flashes = frames.filter(\.bright).map(\.pts)
        #expect((2...3).contains(flashes.count), "flashes at \(flashes) µs")
        #expect(flashes.allSatisfy { $0 % 1_000_000 == 0 }, "\(flashes)")
        #expect(zip(flashes, flashes.dropFirst()).allSatisfy { $1 - $0 == 1_000_000 })
        // Every frame on a second flashes: the grid goes through them.
        #expect(frames.filter { $0.pts % 1_000_000 == 0 }.map(\.pts) == flashes)
    }

    @Test func aSecondHandleInTheSameProcessGetsEBUSY() throws {
        let camera = try FakeCamera()
        // ffmpeg opens one input after the other; the first owns the stream by then.
        let result = try ChildProcess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error",
                                           "-f", "v4l2", "-i", camera.path, "-f", "v4l2", "-i", camera.path,
                                           "-frames:v", "1", "-f", "null", "-"],
                                          environment: camera.environment(), timeout: .seconds(30))
        #expect(result.status != 0)
        #expect(result.standardError.contains("\(camera.path): Device or resource busy"), "\(result.transcript)")
    }

    @Test func aSecondProcessGetsEBUSYWhileTheFirstStreams() throws {
        let camera = try FakeCamera()
        let first = try ChildProcess(["v4l2-ctl", "-d", camera.path, "--stream-mmap", "--stream-count=30"],
                                     environment: camera.environment(sharedOwnership: true))
        // v4l2-ctl prints "<" for each frame it dequeues: by then it owns the stream.
        try #require(first.waitForStandardError(containing: "<"), "\(first.wait().transcript)")
        let second = try camera.v4l2ctl(["--set-fmt-video=width=1280,height=720"], sharedOwnership: true)
        #expect(second.status != 0)
        // v4l2-ctl reports failed ioctls on standard output.
        #expect(second.standardOutputText.contains("VIDIOC_S_FMT: failed: Device or resource busy"),
                "\(second.transcript)")
        let firstResult = first.wait(timeout: .seconds(30))
        #expect(firstResult.status == 0, "\(firstResult.transcript)")
        let third = try camera.v4l2ctl(["--set-fmt-video=width=1280,height=720"], sharedOwnership: true)
        #expect(third.status == 0, "the camera is free once the first process has gone: \(third.transcript)")
    }

    @Test func unpluggingEndsAnFFmpegRecordingWithENODEV() throws {
        let camera = try FakeCamera(knobs: [.unplugAfter(frames: 6)])
        let output = camera.file("recording.gray")
        let result = try camera.ffmpegGray(inputFormat: "yuyv422", size: "640x480", frames: 30, output: output,
                                           logLevel: "error")
        #expect(result.standardError.contains("ioctl(VIDIOC_DQBUF): No such device"), "\(result.transcript)")
        let codes = try frameNumbers(in: Data(contentsOf: URL(fileURLWithPath: output)), layout: .gray,
                                     width: 640, height: 480)
        #expect(codes == Array(0..<6))
        let report = try camera.report()
        #expect(report.unplugged)
        #expect(report.openHandles == 0 && report.mappedBuffers == 0, "\(report)")
    }

    @Test(arguments: [
        (FakeCamera.Knob.openError("EACCES"), "Permission denied"),
        (.notCapture, "Not a video capture device"),
        (.busy, "Device or resource busy"),
    ])
    func openingProblemsReachFFmpeg(knob: FakeCamera.Knob, message: String) throws {
        let camera = try FakeCamera(knobs: [knob])
        let result = try camera.ffmpegGray(inputFormat: "yuyv422", size: "640x480", frames: 1,
                                           output: camera.file("none.gray"), logLevel: "error")
        #expect(result.status != 0)
        #expect(result.standardError.contains(message), "\(result.transcript)")
    }

    @Test(arguments: [
        (FakeCamera.Knob.shortBufferEvery(4), "yuyv422", "Dequeued v4l2 buffer contains 307200 bytes, but 614400 were expected"),
        (.errorFlagEvery(4), "yuyv422", "Dequeued v4l2 buffer contains corrupted data"),
        (.corruptJPEGEvery(4), "mjpeg", "No JPEG data found in image"),
    ])
    func damagedFramesAreLostByFFmpeg(knob: FakeCamera.Knob, inputFormat: String, message: String) throws {
        let camera = try FakeCamera(knobs: [knob])
        let output = camera.file("recording.gray")
        let result = try camera.ffmpegGray(inputFormat: inputFormat, size: "640x480", frames: 9, output: output)
        #expect(result.standardError.contains(message), "\(result.transcript)")
        let codes = try frameNumbers(in: Data(contentsOf: URL(fileURLWithPath: output)), layout: .gray,
                                     width: 640, height: 480)
        #expect(codes == [0, 1, 2, 4, 5, 6, 8, 9, 10])
    }

    /// FAKE_V4L2_JPEG_HOLE_EVERY: the damaged JPEGs (sequences 3 and 7) still begin with a start
    /// of image and end with an end of image, as v4l2-ctl stores them, and only FFmpeg's
    /// decoder finds them cut short; the others decode without a word.
    @Test func aJPEGWithAHoleKeepsItsMarkersAndFailsToDecode() throws {
        let camera = try FakeCamera(knobs: [.jpegHoleEvery(4)])
        let output = camera.file("holes.mjpeg")
        let result = try camera.v4l2ctl(["--set-fmt-video=width=640,height=480,pixelformat=MJPG",
                                         "--stream-mmap=8", "--stream-count=8", "--stream-to=\(output)"])
        try #require(result.status == 0, "\(result.transcript)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
        // Each JPEG ends where the next one's start of image follows an end of image.
        var starts = [0]
        for index in 2 ..< max(2, bytes.count - 3)
            where bytes[index] == 0xFF && bytes[index + 1] == 0xD9 && bytes[index + 2] == 0xFF && bytes[index + 3] == 0xD8 {
            starts.append(index + 2)
        }
        let jpegs = zip(starts, starts.dropFirst() + [bytes.count]).map { Array(bytes[$0 ..< $1]) }
        try #require(jpegs.count == 8)
        for (sequence, jpeg) in jpegs.enumerated() {
            #expect(jpeg.prefix(2) == [0xFF, 0xD8] && jpeg.suffix(2) == [0xFF, 0xD9], "frame \(sequence)")
            let path = camera.file("frame-\(sequence).jpg")
            try Data(jpeg).write(to: URL(fileURLWithPath: path))
            let decode = try ChildProcess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"],
                                              environment: ProcessInfo.processInfo.environment, timeout: .seconds(30))
            let damaged = sequence % 4 == 3
            #expect(decode.standardError.isEmpty != damaged, "frame \(sequence): \(decode.transcript)")
        }
    }

    /// Motion (the motion-detection daemon, make bench's peer for --motion) captures from the
    /// camera, whose pictures reach its snapshots with their frame code, and gives every buffer
    /// back. Motion passes ioctl requests through a signed int, sign-extended to 64 bits, which
    /// the kernel (an unsigned int command) and so the camera must take.
    @Test func motionCapturesFromTheCamera() throws {
        let camera = try FakeCamera()
        let configuration = camera.file("motion.conf")
        try """
            daemon off
            log_level 4
            video_device \(camera.path)
            width 640
            height 480
            framerate 30
            picture_output off
            movie_output off
            snapshot_interval 1
            picture_type jpeg
            webcontrol_port 0
            stream_port 0
            target_dir \(camera.directory.path)
            snapshot_filename snapshot-%s
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        let child = try ChildProcess(["motion", "-n", "-c", configuration], environment: camera.environment(),
                                     signalsUnblocked: true)
        // Two seconds from its first snapshot, not a fixed time from its start: on a busy
        // machine Motion took most of 3 s to start capturing.
        func snapshots() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: camera.directory.path)) ?? [])
                .filter { $0.hasPrefix("snapshot-") && $0.hasSuffix(".jpg") }
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while snapshots().isEmpty, child.isRunning, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.05) }
        Thread.sleep(forTimeInterval: 2)
        child.send(SIGTERM)
        let result = child.wait(timeout: .seconds(20))
        let report = try camera.report()
        #expect(report.framesDelivered >= 45, "\(report) \(result.transcript)")
        #expect(report.releasedEverything, "\(report)")
        let snapshot = try #require(snapshots().sorted().first, "no snapshot: \(result.transcript)")
        let gray = camera.file("snapshot.gray")
        let converted = try ChildProcess.run(["ffmpeg", "-v", "error", "-i", camera.file(snapshot), "-f", "rawvideo",
                                              "-pix_fmt", "gray", "-y", gray], environment: camera.environment())
        try #require(converted.status == 0, "\(converted.transcript)")
        let codes = try frameNumbers(in: Data(contentsOf: URL(fileURLWithPath: gray)), layout: .gray, width: 640, height: 480)
        #expect(codes.count == 1 && codes[0] != nil, "no frame code in Motion's snapshot")
    }
}

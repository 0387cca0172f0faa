import Foundation
import Testing
import VTCapture
import VTTestSupport

/// Recording from the fake uvcvideo camera through the built binary. The camera draws its
/// `sequence` number into every picture, so the decoded file shows exactly which captured
/// frames it holds, in what order, and which were repeated.
///
/// Serialized: each test captures in real time, and two at once on a small machine would
/// make the encoder fall behind for reasons that have nothing to do with the test.
@Suite(.serialized) struct CameraRecordingTests {
    /// Runs vtrecord against `camera` and returns the result and the JSON summary.
    static func record(_ camera: FakeCamera, _ arguments: [String],
                       output: String? = nil) throws -> (ProcessResult, [String: Any]) {
        let out = output ?? camera.file("out.h264")
        let summary = camera.file("summary.json")
        let r = try Tools.run(Tools.vtrecord,
                              ["--device", camera.path, "-o", out, "--json-summary", summary, "--quiet",
                               "--speed", "ultrafast"] + arguments,
                              environment: try camera.environment())
        let data = (try? Data(contentsOf: URL(fileURLWithPath: summary))) ?? Data()
        let json = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
        return (r, json)
    }

    struct Mode: CustomTestStringConvertible, Sendable {
        var format: String
        var width: Int
        var height: Int
        var testDescription: String { "\(format) \(width)x\(height)" }
    }

    @Test(arguments: [Mode(format: "yuyv", width: 1280, height: 720),
                      Mode(format: "mjpeg", width: 1920, height: 1080),
                      Mode(format: "nv12", width: 640, height: 480)])
    func everyCapturedFrameOnceInOrder(_ mode: Mode) throws {
        let camera = try FakeCamera()
        let (r, json) = try Self.record(camera, ["--format", mode.format, "--size", "\(mode.width)x\(mode.height)",
                                                 "--fps", "30", "--frames", "150", "--timing", "passthrough"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Tools.counters(camera.file("out.h264"), width: mode.width) == (0..<150).map { Optional($0) },
                "summary: \(json)")
        #expect((json["format"] as? [String: Any])?["pixel_format"] as? String == mode.format)
        #expect(json["frames_encoded"] as? Int == 150)
        #expect(json["frames_bad"] as? Int == 0)
        let report = try camera.report()
        #expect(report.releasedEverything, "\(report)")
        if mode.format == "mjpeg" {
            let probe = try Tools.ffprobe(camera.file("out.h264"), ["-show_entries", "stream=color_range"])
            #expect((probe["streams"] as? [[String: Any]])?.first?["color_range"] as? String == "pc")
        }
    }

    /// Live through the hardware encoder: the camera's and the VA driver's doubles in one process.
    /// The driver double writes I_PCM (1.4 MB a 720p picture), so JPEG decoding and a 720p
    /// I_PCM stream together fell behind real time (11 of 60 frames dropped at the queue) while
    /// the rest of make test kept both cores busy; JPEG comes at 640x480, 720p with NV12.
    @Test(arguments: [Mode(format: "yuyv", width: 640, height: 480), Mode(format: "nv12", width: 1280, height: 720),
                      Mode(format: "mjpeg", width: 640, height: 480)])
    func liveThroughVAAPI(_ mode: Mode) throws {
        let camera = try FakeCamera()
        let va = try FakeVADevice()
        let out = camera.file("out.h264")
        let summary = camera.file("summary.json")
        let r = try Tools.run(Tools.vtrecord,
                              ["--device", camera.path, "--encoder", "vaapi", "--va-device", va.devicePath,
                               "--format", mode.format, "--size", "\(mode.width)x\(mode.height)", "--fps", "30",
                               "--frames", "60", "--timing", "passthrough", "-o", out, "--json-summary", summary, "--quiet"],
                              environment: try va.environment(base: try camera.environment()))
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: summary))) as? [String: Any]
        #expect(try Tools.counters(out, width: mode.width) == (0..<60).map { Optional($0) },
                "dropped at the queue \(json?["dropped_queue"] ?? "?"), by the driver \(json?["dropped_driver"] ?? "?")")
        #expect(json?["encoder"] as? String == "vaapi")
        #expect(json?["frames_encoded"] as? Int == 60)
        #expect(try camera.report().releasedEverything)
        let report = try va.report()
        #expect(report.violations.isEmpty)
        #expect(report.liveObjects?.none == true)
    }

    @Test func aFormatOnlyLibv4l2OffersIsConvertedByIt() throws {
        // The camera sends only YUYV; libv4l2 offers YU12 made from it.
        let camera = try FakeCamera(knobs: [.formats("YUYV:640x480@30")])
        let (r, json) = try Self.record(camera, ["--format", "yu12", "--size", "640x480", "--frames", "30",
                                                 "--timing", "passthrough", "--timestamps", camera.file("times.txt")])
        #expect(r.status == 0, "\(r.stderr)")
        #expect((json["format"] as? [String: Any])?["pixel_format"] as? String == "yu12")
        #expect(try Tools.counters(camera.file("out.h264"), width: 640) == (0..<30).map { Optional($0) })
        // One capture time per encoded frame, in order, about 1/30 s apart.
        let lines = try String(contentsOfFile: camera.file("times.txt"), encoding: .utf8).split(separator: "\n")
        #expect(lines.first == "# timestamp format v2")
        let times = lines.dropFirst().compactMap { Double($0) }
        #expect(times.count == 30 && times.first == 0)
        #expect(zip(times, times.dropFirst()).allSatisfy { abs($1 - $0 - 1000.0 / 30) < 5 }, "\(times)")
    }

    @Test func driverDropsAreCountedAndMissingFromAPassthroughFile() throws {
        let camera = try FakeCamera(knobs: [.dropEvery(10)])
        let (r, json) = try Self.record(camera, ["--size", "640x480", "--frames", "60", "--timing", "passthrough"])
        #expect(r.status == 0, "\(r.stderr)")
        let counters = try Tools.counters(camera.file("out.h264"), width: 640).map { try #require($0) }
        #expect(counters.count == 60)
        #expect(counters == counters.sorted() && Set(counters).count == counters.count, "duplicates or disorder: \(counters)")
        let missing = Set(0...counters.last!).subtracting(counters)
        #expect(missing.count == json["dropped_driver"] as? Int, "\(missing.sorted()) vs \(json)")
        #expect(missing.allSatisfy { $0 % 10 == 9 }, "\(missing.sorted())")
        #expect(json["frames_duplicated"] as? Int == 0)
    }

    @Test func driverDropsAreFilledOnTheGridWithCFR() throws {
        let camera = try FakeCamera(knobs: [.dropEvery(10)])
        let (r, json) = try Self.record(camera, ["--size", "640x480", "--fps", "30", "--duration", "3s"])
        #expect(r.status == 0, "\(r.stderr)")
        let counters = try Tools.counters(camera.file("out.h264"), width: 640).map { try #require($0) }
        #expect(counters.count == 90, "\(json)")
        #expect(counters == counters.sorted(), "\(counters)")
        let repeats = counters.count - Set(counters).count
        #expect(repeats == json["frames_duplicated"] as? Int, "\(counters) vs \(json)")
        #expect(repeats >= 8, "every tenth frame was dropped: \(counters)")
        // Each repeat stands in for the dropped frame after it.
        for (a, b) in zip(counters, counters.dropFirst()) where a == b { #expect(a % 10 == 8, "\(counters)") }
    }

    @Test func aCameraAtHalfRatePlaysForTheRightTime() throws {
        let camera = try FakeCamera(knobs: [.deliveredFramesPerSecond(15)])
        let (r, json) = try Self.record(camera, ["--size", "640x480", "--fps", "30", "--duration", "4s"])
        #expect(r.status == 0, "\(r.stderr)")
        let counters = try Tools.counters(camera.file("out.h264"), width: 640).map { try #require($0) }
        #expect(counters.count == 120, "\(json)")
        #expect(Set(counters).count <= 62, "a 15 fps camera gives about 60 pictures in 4 s: \(counters)")
        #expect(json["frames_duplicated"] as? Int == counters.count - Set(counters).count)
        let probe = try Tools.ffprobe(camera.file("out.h264"), ["-show_entries", "stream=r_frame_rate"])
        #expect((probe["streams"] as? [[String: Any]])?.first?["r_frame_rate"] as? String == "30/1")
    }

    @Test func autoPicksMJPEGWhenYUYVCannotReachTheRate() throws {
        let camera = try FakeCamera(knobs: [.formats("webcam")])
        let (r, json) = try Self.record(camera, ["--size", "1920x1080", "--fps", "30", "--frames", "10"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect((json["format"] as? [String: Any])?["pixel_format"] as? String == "mjpeg")
        #expect((json["format"] as? [String: Any])?["fps"] as? String == "30")

        // Asked for YUYV at 1080p30, the camera gives 5 fps: one line says so and the run goes
        // on; with --strict-format it stops before any output exists.
        let yuyv = try Self.record(camera, ["--size", "1920x1080", "--fps", "30", "--frames", "3", "--format", "yuyv",
                                            "--overwrite"])
        #expect(yuyv.0.status == 0, "\(yuyv.0.stderr)")
        #expect(yuyv.0.stderr.contains("asked for 30 fps, the camera gives 5 fps"), "\(yuyv.0.stderr)")
        #expect((yuyv.1["requested"] as? [String: Any])?["fps"] as? String == "30")
        #expect((yuyv.1["format"] as? [String: Any])?["fps"] as? String == "5")
        let strictOut = camera.file("strict.h264")
        let strict = try Self.record(camera, ["--size", "1920x1080", "--fps", "30", "--frames", "3", "--format", "yuyv",
                                              "--strict-format"], output: strictOut)
        #expect(strict.0.status == 3, "\(strict.0.stderr)")
        #expect(strict.0.stderr.contains("--strict-format"))
        #expect(!FileManager.default.fileExists(atPath: strictOut))
    }

    @Test func interruptedRecordingKeepsEveryCapturedFrame() throws {
        let camera = try FakeCamera()
        let child = try ChildProcess(
            [Tools.vtrecord, "--device", camera.path, "--size", "640x480", "--timing", "passthrough", "--speed", "ultrafast",
             "-o", camera.file("out.h264"), "--json-summary", camera.file("summary.json")],
            environment: try camera.environment())
        #expect(child.waitForStandardError(containing: "recording"), "\(child.standardErrorSoFar)")
        Thread.sleep(forTimeInterval: 2)
        child.send(SIGINT)
        let result = child.wait(timeout: .seconds(20))
        #expect(result.status == 0, "\(result.transcript)")
        let json = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: camera.file("summary.json")))) as? [String: Any])
        #expect(json["stop_reason"] as? String == "signal")
        let counters = try Tools.counters(camera.file("out.h264"), width: 640).map { try #require($0) }
        let encoded = try #require(json["frames_encoded"] as? Int)
        #expect(counters.count == encoded)
        #expect(encoded > 30)
        let captured = try #require(json["frames_captured"] as? Int)
        #expect(captured - (json["dropped_queue"] as? Int ?? -1) - (json["frames_bad"] as? Int ?? -1) == encoded)
        let report = try camera.report()
        #expect(counters.last == report.lastSequence, "last dequeued \(report.lastSequence), file ends at \(counters.last ?? -1)")
        #expect(report.releasedEverything, "\(report)")
    }

    @Test func anUnpluggedCameraEndsTheFileAtItsLastFrame() throws {
        let camera = try FakeCamera(knobs: [.unplugAfter(frames: 60)])
        let (r, json) = try Self.record(camera, ["--size", "640x480", "--timing", "passthrough"])
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr.contains("unplugged"), "\(r.stderr)")
        let counters = try Tools.counters(camera.file("out.h264"), width: 640).map { try #require($0) }
        let dropped = (json["dropped_driver"] as? Int ?? 0) + (json["dropped_queue"] as? Int ?? 0)
        #expect(counters.count == 60 - dropped, "\(counters)")
        #expect(counters.last == 59)
        #expect(counters == counters.sorted())
        #expect(json["stop_reason"] as? String == "error")
    }

    @Test func aReconnectedCameraGoesOnInTheSameFile() throws {
        let camera = try FakeCamera(knobs: [.unplugAfter(frames: 30), .reconnectAfter(milliseconds: 700), .trace])
        let (r, json) = try Self.record(camera, ["--size", "640x480", "--fps", "30", "--duration", "3s", "--reconnect",
                                                 "--control", "brightness=40"])
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        // The camera came back in its power-on state: the control was set on both opens.
        #expect(r.stderr.components(separatedBy: "control Brightness = 40").count - 1 == 2)
        #expect(json["reconnects"] as? Int == 1, "\(json)")
        #expect(json["stop_reason"] as? String == "duration")
        let counters = try Tools.counters(camera.file("out.h264"), width: 640).map { try #require($0) }
        #expect(counters.count == 90, "cfr fills the gap: \(counters)")
        // The camera numbers frames from 0 again after it comes back: two runs, each in order.
        let restart = try #require(counters.indices.dropFirst().first { counters[$0] < counters[$0 - 1] }, "\(counters)")
        let before = Array(counters[..<restart]), after = Array(counters[restart...])
        #expect(before == before.sorted() && before.last == 29, "\(before)")
        #expect(after == after.sorted() && after.first == 0, "\(after)")
        // The gap is counted and played as the last picture before it.
        let gap = try #require(json["dropped_driver"] as? Int)
        #expect(gap >= 15, "a 0.7 s gap at 30 fps: \(json)")
        #expect(before.filter { $0 == 29 }.count >= gap, "\(before)")
        // The stream starts again with an IDR where the camera came back.
        let frames = try Tools.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=key_frame",
                                               "-of", "csv=p=0", camera.file("out.h264")])
        let keys = frames.stdoutText.split(separator: "\n").map { $0.hasPrefix("1") }
        #expect(keys.count == 90)
        #expect(keys.indices.contains(restart) && keys[restart], "no keyframe at frame \(restart)")
    }

    /// Peak resident memory of a running process, kB.
    static func peakResidentKilobytes(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return try #require(Int(line.split(separator: " ").dropFirst().first { !$0.isEmpty }?.trimmingCharacters(in: .whitespaces) ?? ""))
    }

    /// Pictures written before the recording's memory counts as settled: x264's references and
    /// the capture pool, filled.
    static let picturesToSettle = 12

    /// Slices in a raw H.264 file written so far (one a picture, as x264 writes them with
    /// one thread): NAL units of type 1 or 5 after a start code.
    static func slices(in path: String) throws -> Int {
        guard let data = FileManager.default.contents(atPath: path) else { return 0 }
        return data.withUnsafeBytes { bytes in
            var count = 0
            var index = 3
            while index < bytes.count {
                if bytes[index - 1] == 1, bytes[index - 2] == 0, bytes[index - 3] == 0, [1, 5].contains(bytes[index] & 0x1F) {
                    count += 1
                }
                index += 1
            }
            return count
        }
    }

    @Test func anEncoderSlowerThanTheCameraDropsAtTheQueueAndMemoryStaysFlat() throws {
        // Noisy pictures, thorough analysis, one thread and no lookahead: well below 30 fps at
        // 1080p on any machine this runs on (the clean pattern alone is cheap enough to keep up),
        // with few reference frames and no frame queue inside x264, so x264's own memory is
        // settled once its references are filled: a few pictures in, which on a busy machine
        // can take seconds (at 5 s such a recording had not yet reached its size, and grew by
        // 12.7 MB afterwards), so the first measure waits for pictures, not for a time.
        let camera = try FakeCamera(knobs: [.formats("YUYV:1920x1080@30"), .noise(amplitude: 12)])
        let child = try ChildProcess(
            [Tools.vtrecord, "--device", camera.path, "--size", "1920x1080", "--fps", "30", "--timing", "passthrough",
             "--encoder", "x264", "--speed", "slow", "--tune", "zerolatency", "--threads", "1", "--realtime", "drop",
             "-o", camera.file("out.h264"),
             "--json-summary", camera.file("summary.json")],
            environment: try camera.environment())
        #expect(child.waitForStandardError(containing: "recording"), "\(child.standardErrorSoFar)")
        let settled = ContinuousClock.now + .seconds(30)
        while try Self.slices(in: camera.file("out.h264")) < Self.picturesToSettle, ContinuousClock.now < settled {
            Thread.sleep(forTimeInterval: 0.1)
        }
        let early = try Self.peakResidentKilobytes(child.processIdentifier)
        let written = try Self.slices(in: camera.file("out.h264"))
        Thread.sleep(forTimeInterval: 15)
        let late = try Self.peakResidentKilobytes(child.processIdentifier)
        child.send(SIGINT)
        let result = child.wait(timeout: .seconds(60))
        #expect(result.status == 0, "\(result.transcript)")
        #expect(written >= Self.picturesToSettle, "\(written) pictures written in 30 s")
        #expect(late <= early + 10_000, "peak RSS \(early) kB after \(written) pictures, \(late) kB 15 s later")

        let json = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: camera.file("summary.json")))) as? [String: Any])
        let counters = try Tools.counters(camera.file("out.h264"), width: 1920).map { try #require($0) }
        let droppedQueue = try #require(json["dropped_queue"] as? Int)
        #expect(droppedQueue > 100, "the encoder kept up: \(json)")
        #expect(json["dropped_driver"] as? Int == 0, "\(json)")
        // Every frame the camera delivered is in the file or was dropped at the queue.
        let lastDelivered = try camera.report().lastSequence
        let missing = Set(0...lastDelivered).subtracting(counters)
        #expect(missing.count == droppedQueue, "missing \(missing.count), dropped at the queue \(droppedQueue)")
        #expect(counters == counters.sorted() && Set(counters).count == counters.count)
    }

    struct Refusal: CustomTestStringConvertible, Sendable {
        var knob: FakeCamera.Knob?
        var device: String?
        var message: String
        var testDescription: String { message }
    }

    @Test(arguments: [Refusal(knob: .busy, message: "is busy: another program is using the camera"),
                      Refusal(knob: .openError("EACCES"), message: "no permission: add the user to the 'video' group"),
                      Refusal(knob: nil, device: "/dev/video7", message: "no such device"),
                      Refusal(knob: .notCapture, message: "is not a video capture device: it is a metadata capture node")])
    func refusedCamerasExitThreeAndCreateNothing(_ refusal: Refusal) throws {
        let camera = try FakeCamera(knobs: refusal.knob.map { [$0] } ?? [])
        let out = camera.file("never.h264")
        let r = try Tools.run(Tools.vtrecord, ["--device", refusal.device ?? camera.path, "-o", out, "--frames", "5"],
                              environment: try camera.environment())
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr.contains(refusal.message), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "one line: \(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}

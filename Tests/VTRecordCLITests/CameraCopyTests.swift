import Foundation
import Testing
import VTTestSupport

/// `--encoder copy`: an MJPEG camera's own JPEGs in Matroska and MP4, byte for byte as v4l2-ctl
/// receives them from the same camera (whose pictures depend only on their sequence number),
/// damaged ones counted and left out, segments that each play alone.
///
/// Nested in CameraRecordingTests, whose `.serialized` covers it: real-time capture.
extension CameraRecordingTests {
    @Suite struct CameraCopyTests {
        struct Copied {
            var result: ChildProcess.Result
            var summary: [String: Any]
            func count(_ key: String) -> Int { summary[key] as? Int ?? -1 }
        }

        static func record(_ camera: FakeCamera, to outputs: [String], _ arguments: [String]) throws -> Copied {
            let summaryPath = camera.file("summary.json")
            let r = try ChildProcess.run([Tools.vtrecord, "--device", camera.path, "--encoder", "copy", "--size", "640x480",
                                          "--fps", "30", "--json-summary", summaryPath, "--quiet"]
                                             + outputs.flatMap { ["-o", $0] } + arguments,
                                         environment: try camera.environment(), timeout: .seconds(60))
            let data = (try? Data(contentsOf: URL(fileURLWithPath: summaryPath))) ?? Data()
            return Copied(result: r, summary: (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:])
        }

        /// The JPEGs a file holds, in order, as FFmpeg's demuxer hands them out (`-c copy`).
        static func storedJPEGs(_ path: String, in camera: FakeCamera) throws -> [Data] {
            let copy = camera.file("stored-\(UUID().uuidString).mjpeg")
            let r = try Tools.run("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v", "-c", "copy", "-f", "mjpeg", copy])
            #expect(r.status == 0 && r.stderr.isEmpty, "\(path): \(r.stderr)")
            return CameraRecordingTests.SnapshotTests.jpegs(in: try Data(contentsOf: URL(fileURLWithPath: copy)))
        }

        @Test(arguments: ["mkv", "mp4"])
        func theCamerasJPEGsAreStoredByteForByte(_ container: String) throws {
            let camera = try FakeCamera()
            let out = camera.file("copy.\(container)")
            let copied = try Self.record(camera, to: [out], ["--frames", "60"])
            try #require(copied.result.status == 0, "\(copied.result.transcript)")
            #expect(copied.summary["encoder"] as? String == "copy", "\(copied.summary)")
            #expect(copied.count("frames_encoded") == 60 && copied.count("dropped_queue") == 0
                    && copied.count("frames_bad") == 0, "\(copied.summary)")
            if container == "mp4" { #expect(copied.summary["finalized"] as? Bool == true, "\(copied.summary)") }
            #expect(try camera.report().releasedEverything)
            let probe = try Tools.ffprobe(out, ["-show_entries", "stream=codec_name,width,height"])
            let stream = (probe["streams"] as? [[String: Any]])?.first
            #expect(stream?["codec_name"] as? String == "mjpeg" && stream?["width"] as? Int == 640, "\(probe)")

            let stored = try Self.storedJPEGs(out, in: camera)
            try Data(stored.joined()).write(to: URL(fileURLWithPath: camera.file("stored.mjpeg")))
            let numbers = try Tools.counters(camera.file("stored.mjpeg"), width: 640)
            #expect(numbers == (0..<60).map { Optional($0) }, "\(numbers)")
            let cameras = try CameraRecordingTests.SnapshotTests.camerasJPEGs(camera, count: 60)
            try #require(cameras.count == 60)
            for (index, jpeg) in stored.enumerated() where index < cameras.count {
                #expect(jpeg == cameras[index], "frame \(index) differs from the camera's")
            }
        }

        /// JPEGs without a start marker (every 7th) and cut short (every 5th) are counted and
        /// left out; every other frame is there once, in order.
        @Test func damagedJPEGsAreCountedAndLeftOut() throws {
            let camera = try FakeCamera(knobs: [.corruptJPEGEvery(7), .shortBufferEvery(5)])
            let out = camera.file("copy.mkv")
            let copied = try Self.record(camera, to: [out], ["--frames", "60"])
            try #require(copied.result.status == 0, "\(copied.result.transcript)")
            let stored = try Self.storedJPEGs(out, in: camera)
            try Data(stored.joined()).write(to: URL(fileURLWithPath: camera.file("stored.mjpeg")))
            let numbers = try Tools.counters(camera.file("stored.mjpeg"), width: 640).compactMap { $0 }
            #expect(numbers.count == 60)
            let last = try #require(numbers.last)
            let damaged = Set((0...last).filter { ($0 + 1) % 7 == 0 || ($0 + 1) % 5 == 0 })
            #expect(numbers == (0...last).filter { !damaged.contains($0) }, "\(numbers)")
            // Capture may run a frame or two past the last one written.
            #expect(copied.count("frames_bad") >= damaged.count && copied.count("frames_bad") <= damaged.count + 2,
                    "\(copied.summary)")
        }

        /// A JPEG that lost the middle of its scan keeps every marker: the default check stores
        /// it, and `--check-frames decode`, which decodes each JPEG, counts it and leaves it out.
        @Test func aFullDecodeFindsWhatTheMarkersDoNot() throws {
            for check in ["markers", "decode"] {
                let camera = try FakeCamera(knobs: [.jpegHoleEvery(4)])
                let out = camera.file("copy.mkv")
                let copied = try Self.record(camera, to: [out], ["--frames", "40", "--check-frames", check])
                try #require(copied.result.status == 0, "\(copied.result.transcript)")
                let stored = try Self.storedJPEGs(out, in: camera)
                try #require(stored.count == 40)
                if check == "markers" {
                    #expect(copied.count("frames_bad") == 0, "\(copied.summary)")
                    continue
                }
                try Data(stored.joined()).write(to: URL(fileURLWithPath: camera.file("stored.mjpeg")))
                let numbers = try Tools.counters(camera.file("stored.mjpeg"), width: 640).compactMap { $0 }
                let last = try #require(numbers.last)
                #expect(numbers == (0...last).filter { $0 % 4 != 3 }, "\(numbers)")
                let holes = (0...last).filter { $0 % 4 == 3 }.count
                #expect(copied.count("frames_bad") >= holes && copied.count("frames_bad") <= holes + 1, "\(copied.summary)")
            }
        }

        /// Segments of a second: every JPEG is a keyframe, each file decodes alone, and together
        /// they hold every frame once.
        @Test func segmentsEachPlayAlone() throws {
            let camera = try FakeCamera()
            let copied = try Self.record(camera, to: [camera.file("seg-{n}.mkv")],
                                         ["--frames", "75", "--segment-time", "1s"])
            try #require(copied.result.status == 0, "\(copied.result.transcript)")
            var numbers: [Int?] = []
            for n in 0..<3 {
                let path = camera.file("seg-\(n).mkv")
                let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
                #expect(decode.status == 0 && decode.stderr.isEmpty, "seg-\(n): \(decode.stderr)")
                numbers += try Tools.counters(path, width: 640)
            }
            #expect(numbers == (0..<75).map { Optional($0) }, "\(numbers)")
        }

        /// What copy cannot do is refused before anything is written, naming what to do instead.
        @Test func whatNeedsPicturesOrH264IsRefused() throws {
            let camera = try FakeCamera(knobs: [.formats("YUYV:640x480@30")])
            let refusals: [([String], Int32, String)] = [
                (["-o", camera.file("a.h264")], 2, ".mkv or .mp4"),
                (["-o", camera.file("a.ts")], 2, ".mkv or .mp4"),
                (["-o", camera.file("a.mkv"), "-o", "srt://127.0.0.1:9/"], 2, "a stream carries H.264"),
                (["-o", camera.file("a.mkv"), "--motion"], 2, "--motion needs the pictures"),
                (["-o", camera.file("a.mkv"), "--format", "yuyv"], 2, "use --format mjpeg"),
                (["-o", camera.file("a.mkv"), "--encoder", "x264", "--check-frames", "decode"], 2,
                 "--check-frames applies to --encoder copy"),
                (["-o", camera.file("a.mkv")], 3, "--encoder copy stores the camera's own MJPEG frames, and it sends yuyv"),
            ]
            for (arguments, status, words) in refusals {
                let r = try ChildProcess.run([Tools.vtrecord, "--device", camera.path, "--encoder", "copy", "--frames", "5"]
                                                 + arguments,
                                             environment: try camera.environment(), timeout: .seconds(30))
                #expect(r.status == status && r.standardError.contains(words), "\(arguments): \(r.transcript)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: camera.file("")).filter { $0.hasPrefix("a.") }.isEmpty)
            let pattern = try Tools.vtrecord(["--test-pattern", "--encoder", "copy", "--frames", "5",
                                              "-o", camera.file("b.mkv")])
            #expect(pattern.status == 2 && pattern.stderr.contains("--test-pattern sends pictures"), "\(pattern.stderr)")
        }
    }
}

import Foundation
import Testing
import VTTestSupport

/// Camera stills: `vtrecord snapshot`, and `--snapshot` kept up to date while recording. The
/// fake camera draws its `sequence` into every picture, so a still shows which frame it is.
///
/// Nested in CameraRecordingTests, whose `.serialized` covers them: real-time capture.
extension CameraRecordingTests {
    @Suite struct SnapshotTests {
        static func snapshot(_ camera: FakeCamera, _ arguments: [String]) throws -> (ChildProcess.Result, [String: Any]) {
            let r = try ChildProcess.run([Tools.vtrecord, "snapshot", "--device", camera.path] + arguments,
                                         environment: try camera.environment(), timeout: .seconds(60))
            let json = (try? JSONSerialization.jsonObject(with: r.standardOutput) as? [String: Any]) ?? [:]
            return (r, json)
        }

        /// The picture ffprobe finds in a file: codec, width, height.
        static func probe(_ path: String) throws -> (codec: String?, width: Int?, height: Int?) {
            let streams = try Tools.ffprobe(path, ["-show_entries", "stream=codec_name,width,height"])["streams"]
                as? [[String: Any]]
            let stream = streams?.first
            return (stream?["codec_name"] as? String, stream?["width"] as? Int, stream?["height"] as? Int)
        }

        @Test(arguments: ["yuyv", "nv12", "mjpeg"])
        func aStillOfTheAskedSizeAfterTheSkippedFrames(_ format: String) throws {
            let camera = try FakeCamera()
            let out = camera.file("still.jpg")
            let (r, json) = try Self.snapshot(camera, ["--format", format, "--size", "640x480", "--fps", "30",
                                                       "--skip", "7", "-o", out, "--json"])
            try #require(r.status == 0, "\(r.transcript)")
            let probe = try Self.probe(out)
            #expect(probe.codec == "mjpeg" && probe.width == 640 && probe.height == 480, "\(probe)")
            let counters = try Tools.counters(out, width: 640)
            #expect(counters.count == 1)
            let sequence = try #require(json["sequence"] as? Int, "\(json)")
            #expect(sequence >= 7)
            #expect(counters.first == sequence, "the picture shows frame \(String(describing: counters.first)); --json says \(sequence)")
            #expect(json["camera_jpeg"] as? Bool == (format == "mjpeg"))
            #expect(json["format"] as? String == format && json["skipped"] as? Int == 7)
            #expect(try camera.report().releasedEverything)
        }

        /// The camera's own JPEG, byte for byte: the same frame as v4l2-ctl receives it from the
        /// same camera (whose pictures depend only on their sequence number).
        @Test func anMJPEGCamerasStillIsItsOwnJPEG() throws {
            let camera = try FakeCamera()
            let out = camera.file("still.jpg")
            let (r, json) = try Self.snapshot(camera, ["--format", "mjpeg", "--size", "640x480", "--skip", "3",
                                                       "-o", out, "--json"])
            try #require(r.status == 0, "\(r.transcript)")
            let sequence = try #require(json["sequence"] as? Int, "\(json)")
            let ours = try Data(contentsOf: URL(fileURLWithPath: out))
            let pictures = try Self.camerasJPEGs(camera, count: sequence + 2)
            try #require(pictures.count == sequence + 2, "v4l2-ctl's stream holds \(pictures.count) JPEGs")
            #expect(ours == pictures[sequence], "\(ours.count) bytes against the camera's \(pictures[sequence].count)")
            #expect(ours != pictures[sequence + 1])
        }

        /// The 640x480 JPEGs of sequence numbers 0 ..< `count` as v4l2-ctl receives them from
        /// `camera`, whose pictures depend only on their sequence number.
        static func camerasJPEGs(_ camera: FakeCamera, count: Int, width: Int = 640, height: Int = 480) throws -> [Data] {
            let streamed = camera.file("v4l2-\(UUID().uuidString).mjpeg")
            let v4l2 = try ChildProcess.run(["v4l2-ctl", "-d", camera.path,
                                             "--set-fmt-video=width=\(width),height=\(height),pixelformat=MJPG",
                                             "--stream-mmap=16", "--stream-count=\(count)", "--stream-to=\(streamed)"],
                                            environment: try camera.environment(), timeout: .seconds(30))
            try #require(v4l2.status == 0, "\(v4l2.transcript)")
            return jpegs(in: try Data(contentsOf: URL(fileURLWithPath: streamed)))
        }

        /// A stream of JPEGs cut at each start of image that follows an end of image.
        static func jpegs(in data: Data) -> [Data] {
            let bytes = [UInt8](data)
            var starts = [0]
            var index = 2
            while index + 3 < bytes.count {
                if bytes[index] == 0xFF && bytes[index + 1] == 0xD9 && bytes[index + 2] == 0xFF && bytes[index + 3] == 0xD8 {
                    starts.append(index + 2)
                }
                index += 1
            }
            return zip(starts, starts.dropFirst() + [bytes.count]).map { Data(bytes[$0..<$1]) }
        }

        @Test func anExistingFileIsKeptWithoutOverwrite() throws {
            let camera = try FakeCamera()
            let out = camera.file("still.jpg")
            try Data("keep".utf8).write(to: URL(fileURLWithPath: out))
            let (r, _) = try Self.snapshot(camera, ["--size", "640x480", "--skip", "0", "-o", out])
            #expect(r.status == 5, "\(r.transcript)")
            #expect(r.standardError.split(separator: "\n").count == 1 && r.standardError.contains("--overwrite"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data("keep".utf8))
            let (again, _) = try Self.snapshot(camera, ["--size", "640x480", "--skip", "0", "-o", out, "--overwrite", "--quiet"])
            #expect(again.status == 0 && again.standardError.isEmpty, "\(again.transcript)")
            #expect(try Self.probe(out).width == 640)
            // Nothing is left beside it: the picture was written to a temporary and renamed.
            let names = try FileManager.default.contentsOfDirectory(atPath: URL(fileURLWithPath: out).deletingLastPathComponent().path)
            #expect(names.filter { $0.hasPrefix(".still.jpg") }.isEmpty, "\(names)")
        }

        /// A camera that streams nothing (here: a frame every 4 s) does not hang the command.
        @Test func aCameraThatGivesNoFrameTimesOut() throws {
            let camera = try FakeCamera(knobs: [.deliveredFramesPerSecond(0.25)])
            let out = camera.file("still.jpg")
            let started = ContinuousClock.now
            let (r, _) = try Self.snapshot(camera, ["--size", "640x480", "--skip", "0", "--timeout", "0.5s", "-o", out])
            #expect(r.status == 3, "\(r.transcript)")
            #expect(r.standardError.split(separator: "\n").count == 1 && r.standardError.contains("gave no frame for 0.5 s"),
                    "\(r.standardError)")
            #expect(started.duration(to: .now) < .seconds(3.5), "it waited for the frame after all")
            #expect(!FileManager.default.fileExists(atPath: out))
            #expect(try camera.report().releasedEverything)
        }

        @Test func aSignalBeforeThePictureLeavesNoFile() throws {
            let camera = try FakeCamera(knobs: [.trace])
            let out = camera.file("still.jpg")
            let child = try ChildProcess([Tools.vtrecord, "snapshot", "--device", camera.path, "--size", "320x240",
                                          "--fps", "30", "--skip", "10000", "-o", out],
                                         environment: try camera.environment())
            #expect(child.waitForStandardError(containing: "VIDIOC_DQBUF) = 0"), "\(child.standardErrorSoFar)")
            child.send(SIGINT)
            let r = child.wait()
            #expect(r.status == 130, "\(r.transcript)")
            #expect(r.standardError.contains("vtrecord: error: stopped before a picture was taken"))
            #expect(!FileManager.default.fileExists(atPath: out))
            #expect(try camera.report().releasedEverything)
        }

        /// `--snapshot` while recording 1080p30 live: the file is only ever a whole JPEG (read in
        /// a loop all through the recording), it keeps being replaced, and the recording drops
        /// nothing. The recording's settings keep up on two cores without stills (zerolatency:
        /// no frame-thread backlog), so a drop here is the stills' doing. make test runs it on its
        /// own, after the rest (`TEST_ALONE`): beside the other tests it once lost 2.5 s of frames.
        @Test func theSnapshotIsAlwaysAWholeJPEGAndCostsNoFrame() throws {
            let camera = try FakeCamera(knobs: [.pictureRing(10)])
            let still = camera.file("latest.jpg")
            let summaryPath = camera.file("summary.json")
            let child = try ChildProcess(
                [Tools.vtrecord, "--device", camera.path, "--format", "nv12", "--size", "1920x1080", "--fps", "30",
                 "--speed", "ultrafast", "--tune", "zerolatency", "--duration", "4s", "-o", camera.file("out.mp4"), "--quiet",
                 "--json-summary", summaryPath, "--snapshot", still, "--snapshot-every", "0.25s"],
                environment: try camera.environment())
            var reads = 0
            var distinct = Set<Data>()
            var broken: [String] = []
            while child.isRunning {
                guard let data = FileManager.default.contents(atPath: still) else {
                    usleep(20_000)
                    continue
                }
                reads += 1
                let bytes = [UInt8](data)
                if bytes.count < 4 || bytes[0] != 0xFF || bytes[1] != 0xD8 || bytes[bytes.count - 2] != 0xFF
                    || bytes[bytes.count - 1] != 0xD9 {
                    broken.append("read \(reads): \(bytes.count) bytes")
                }
                distinct.insert(data)
                // Paced, so the reader does not take a core from the recording it watches.
                usleep(20_000)
            }
            let r = child.wait()
            #expect(r.status == 0, "\(r.transcript)")
            #expect(broken.isEmpty, "\(broken)")
            let summary = SlowEncoderTests.summary(summaryPath)
            #expect(summary["dropped_queue"] as? Int == 0 && summary["dropped_driver"] as? Int == 0, "\(summary)")
            let written = summary["snapshots_written"] as? Int ?? -1
            let skipped = summary["snapshots_skipped"] as? Int ?? -1
            // Due at 0, 0.25 … 3.75 s of the recording: 16, each written or counted as skipped.
            #expect(written + skipped == 16 && written >= 8, "\(summary)")
            #expect(reads > 0 && distinct.count >= 2, "\(reads) reads, \(distinct.count) different pictures")
            let probe = try Self.probe(still)
            #expect(probe.width == 1920 && probe.height == 1080)
            let last = try #require(try Tools.counters(still, width: 1920).first ?? nil, "the last still shows no frame number")
            #expect(last > 0)
            #expect(try camera.report().releasedEverything)
        }
    }
}

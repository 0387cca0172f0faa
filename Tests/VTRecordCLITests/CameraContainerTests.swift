import Foundation
import Testing
import VTTestSupport

/// The fake camera into each container: the same pictures as the raw stream, and (MP4) each
/// frame at the time the camera stamped it, also when the camera slows down or its frames come
/// unevenly.
///
/// Nested in CameraRecordingTests, whose `.serialized` covers it: real-time capture.
extension CameraRecordingTests {
    @Suite struct CameraContainerTests {
        struct Case: CustomTestStringConvertible, Sendable {
            var container = "mp4"
            var format: String
            var bFrames: Int
            var vaapi = false
            var testDescription: String { "\(container): \(format), \(bFrames) B-frames\(vaapi ? ", VA-API" : "")" }
        }

        @Test(arguments: [Case(format: "yuyv", bFrames: 3), Case(format: "mjpeg", bFrames: 0),
                          Case(format: "mjpeg", bFrames: 2), Case(format: "nv12", bFrames: 1, vaapi: true),
                          Case(format: "yuyv", bFrames: 0, vaapi: true),
                          Case(container: "mkv", format: "mjpeg", bFrames: 3), Case(container: "mkv", format: "yuyv", bFrames: 1, vaapi: true),
                          Case(container: "ts", format: "yuyv", bFrames: 2), Case(container: "ts", format: "nv12", bFrames: 0, vaapi: true)])
        func containerHoldsTheSamePicturesAsTheRawStream(_ c: Case) throws {
            let camera = try FakeCamera()
            var environment = try camera.environment()
            var arguments = ["--device", camera.path, "--format", c.format, "--size", "640x480", "--fps", "30",
                             "--frames", "60", "--timing", "passthrough", "--bframes", "\(c.bFrames)", "--quiet"]
            var va: FakeVADevice?
            if c.vaapi {
                let device = try FakeVADevice()
                environment = try device.environment(base: environment)
                arguments += ["--encoder", "vaapi", "--va-device", device.devicePath]
                va = device
            } else {
                arguments += ["--encoder", "x264", "--speed", "ultrafast"] + Tools.reproducible
            }
            // One recording into the container (the recording's own output) and, from the same
            // encode, the raw stream beside it (a second output). Every camera frame must be
            // coded: one the host held up long enough to lose a frame (at the queue or in the
            // driver) is recorded again, up to twice.
            let file = camera.file("a.\(c.container)")
            var lost: [String] = []
            for _ in 0..<3 {
                // A recording made again replaces the one before (vtrecord keeps an existing file).
                for path in [camera.file("a.h264"), file] where FileManager.default.fileExists(atPath: path) {
                    try FileManager.default.removeItem(atPath: path)
                }
                let r = try Tools.run(Tools.vtrecord, arguments + ["-o", file, "-o", camera.file("a.h264")],
                                      environment: environment)
                try #require(r.status == 0, "\(r.stderr)")
                let frames = [try Tools.counters(camera.file("a.h264"), width: 640), try Tools.counters(file, width: 640)]
                if frames.allSatisfy({ $0 == Array(0..<60) }) {
                    lost = []
                    break
                }
                lost.append("camera frames coded: \(frames.map { $0.map { $0.map(String.init) ?? "?" }.joined(separator: ",") })")
            }
            try #require(lost.isEmpty, "every recording lost a frame: \(lost)")
            let md5s = try Tools.frameMD5s(file)
            #expect(md5s.count == 60)
            #expect(md5s == (try Tools.frameMD5s(camera.file("a.h264"))))
            if c.container == "mp4" {
                #expect(try MP4OutputTests.topLevelBoxes(file) == ["ftyp", "mdat", "moov"])
            }
            let (format, _) = try MP4OutputTests.probe(file)
            #expect(MP4OutputTests.seconds(format["start_time"]) == 0, "\(format)")
            #expect(abs(MP4OutputTests.seconds(format["duration"]) - 2) <= 1.0 / 30, "\(format)")
            if let va { #expect(try va.report().violations.isEmpty) }
        }

        /// Presentation times of a file's frames in seconds, in display order.
        static func frameTimes(_ path: String) throws -> [Double] {
            let json = try Tools.ffprobe(path, ["-select_streams", "v", "-show_entries", "packet=pts_time"])
            let packets = try #require(json["packets"] as? [[String: Any]])
            return packets.compactMap { Double($0["pts_time"] as? String ?? "") }.sorted()
        }

        struct Timing: CustomTestStringConvertible, Sendable {
            var name: String
            var knobs: [FakeCamera.Knob]
            var testDescription: String { name }
        }

        /// A camera slowing from 30 to 15 fps part-way, and one whose frames come up to 8 ms
        /// late: the MP4's and the Matroska file's frame times are the capture times the
        /// `--timestamps` log gives, to within one 90 kHz tick (MP4) or half of Matroska's 10 µs
        /// unit, and each file lasts as long as the capture did.
        @Test(arguments: [Timing(name: "30 then 15 fps", knobs: [.rateChange(frame: 40, framesPerSecond: 15)]),
                          Timing(name: "jitter 8 ms", knobs: [.jitter(microseconds: 8000)])])
        func containersCarryTheCapturedTimes(_ timing: Timing) throws {
            let camera = try FakeCamera(knobs: timing.knobs)
            for (container, tick) in [("mp4", 1.0 / 90_000), ("mkv", 0.000_005)] {
                let log = camera.file("times-\(container).txt")
                let file = camera.file("v.\(container)")
                let r = try Tools.run(Tools.vtrecord,
                                      ["--device", camera.path, "--format", "yuyv", "--size", "320x240", "--fps", "30",
                                       "--frames", "70", "--speed", "ultrafast", "--bframes", "2", "--quiet",
                                       "--timestamps", log, "-o", file, "--json-summary", camera.file("s.json")],
                                      environment: try camera.environment())
                #expect(r.status == 0, "\(r.stderr)")
                let logged = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
                    .filter { !$0.hasPrefix("#") }.compactMap { Double($0) }.map { $0 / 1000 }
                #expect(logged.count == 70)
                let times = try Self.frameTimes(file)
                #expect(times.count == 70)
                for (index, (inFile, captured)) in zip(times, logged).enumerated() {
                    #expect(abs(inFile - captured) <= tick + 1e-6,
                            "\(container) frame \(index): \(inFile) s in the file, captured at \(captured) s")
                }
                let json = try SegmentTests.json(camera.file("s.json"))
                #expect(json["frames_duplicated"] as? Int == 0)
                // The file lasts from the first capture to one frame interval after the last.
                let (format, _) = try MP4OutputTests.probe(file)
                let span = (logged.last ?? 0) - (logged.first ?? 0) + 1.0 / 30
                #expect(abs(MP4OutputTests.seconds(format["duration"]) - span) <= tick + 1e-3,
                        "\(container): \(format), span \(span)")
                if timing.name.hasPrefix("30 then 15") {
                    #expect(span > 3, "a camera slowing to 15 fps takes longer than 70 frames at 30 fps: \(span) s")
                }
            }
        }
    }
}

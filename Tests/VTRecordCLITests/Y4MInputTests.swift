import Foundation
import Testing

/// Y4M input through the binary: files, standard input, damage, refusals.
@Suite struct Y4MInputTests {
    static func makeY4M(_ dir: TemporaryDirectory, _ name: String, frames: Int = 10,
                        size: String = "320x240", rate: String = "25", pixelFormat: String = "yuv420p") throws -> String {
        let path = dir.path(name)
        let r = try Tools.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=\(rate)",
                                         "-frames:v", "\(frames)", "-pix_fmt", pixelFormat, "-strict", "-1", path])
        try #require(r.status == 0, "ffmpeg: \(r.stderr)")
        return path
    }

    @Test func standardInputGivesTheSamePicturesAsTheFile() throws {
        let dir = try TemporaryDirectory()
        let input = try Self.makeY4M(dir, "in.y4m", rate: "30000/1001")
        let fromFile = dir.path("file.h264")
        let fromPipe = dir.path("pipe.h264")
        #expect(try Tools.vtrecord(["--input", input, "-o", fromFile, "--quiet"] + Tools.reproducible).status == 0)
        let r = try Tools.vtrecord(["--input", "-", "-o", fromPipe, "--quiet"] + Tools.reproducible, stdin: input)
        #expect(r.status == 0, "\(r.stderr)")
        let a = try Tools.frameMD5s(fromFile)
        #expect(a.count == 10)
        #expect(a == (try Tools.frameMD5s(fromPipe)))
        let probe = try Tools.ffprobe(fromFile, ["-show_entries", "stream=r_frame_rate"])
        #expect((probe["streams"] as? [[String: Any]])?.first?["r_frame_rate"] as? String == "30000/1001")
    }

    @Test func fpsRetimesTheFileWithoutDroppingOrRepeatingPictures() throws {
        let dir = try TemporaryDirectory()
        let input = try Self.makeY4M(dir, "in.y4m", rate: "25")
        let asIs = dir.path("as-is.h264")
        let retimed = dir.path("retimed.h264")
        // Constant QP: x264's quality-based modes weigh frames by their duration.
        let settings = ["--rate-control", "cqp", "--qp", "20"] + Tools.reproducible
        #expect(try Tools.vtrecord(["--input", input, "-o", asIs, "--quiet"] + settings).status == 0)
        let r = try Tools.vtrecord(["--input", input, "--fps", "30000/1001", "-o", retimed, "--quiet",
                                    "--json-summary", dir.path("s.json")] + settings)
        #expect(r.status == 0, "\(r.stderr)")
        let probe = try Tools.ffprobe(retimed, ["-show_entries", "stream=r_frame_rate"])
        #expect((probe["streams"] as? [[String: Any]])?.first?["r_frame_rate"] as? String == "30000/1001")
        // The same ten pictures, each once: only the clock changed.
        let pictures = try Tools.frameMD5s(retimed)
        #expect(pictures.count == 10)
        #expect(pictures == (try Tools.frameMD5s(asIs)))
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("s.json")))) as? [String: Any]
        #expect((json?["format"] as? [String: Any])?["fps"] as? String == "30000/1001")
        let bytes = try #require(json?["bytes"] as? Int)
        let bitrate = try #require(json?["bitrate"] as? Int)
        // Bit rate over the new presentation time: 10 frames at 29.97 fps.
        #expect(abs(Double(bitrate) - Double(bytes) * 8 * 30000 / 10010) <= 1, "\(bitrate)")
    }

    @Test func truncatedLastFrameIsReportedAndTheRestEncoded() throws {
        let dir = try TemporaryDirectory()
        let input = try Self.makeY4M(dir, "in.y4m")
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: input))
        let size = try handle.seekToEnd()
        try handle.truncate(atOffset: size - 1000)
        try handle.close()
        let out = dir.path("out.h264")
        let r = try Tools.vtrecord(["--input", input, "-o", out, "--json-summary", dir.path("s.json")])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("truncated"))
        #expect(try Tools.frameMD5s(out).count == 9)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("s.json")))) as? [String: Any]
        #expect(json?["frames_truncated"] as? Int == 1)
    }

    @Test func monochromeIsEncodedWithNeutralChroma() throws {
        let dir = try TemporaryDirectory()
        let input = try Self.makeY4M(dir, "gray.y4m", frames: 3, pixelFormat: "gray")
        let out = dir.path("gray.h264")
        let r = try Tools.vtrecord(["--input", input, "-o", out, "--quiet", "--crf", "0"])
        #expect(r.status == 0, "\(r.stderr)")
        let decoded = try Tools.run("ffmpeg", ["-v", "error", "-i", out, "-frames:v", "1", "-f", "rawvideo",
                                               "-pix_fmt", "yuv420p", "-"])
        let chroma = decoded.stdout.dropFirst(320 * 240)
        #expect(chroma.count == 2 * 160 * 120)
        #expect(chroma.allSatisfy { $0 == 128 })
    }

    @Test(arguments: ["yuv422p", "yuv444p", "yuv420p10le"])
    func otherColourSpacesAreRefusedByName(_ pixelFormat: String) throws {
        let dir = try TemporaryDirectory()
        let input = try Self.makeY4M(dir, "in.y4m", frames: 1, pixelFormat: pixelFormat)
        let r = try Tools.vtrecord(["--input", input, "-o", dir.path("out.h264")])
        #expect(r.status == 2)
        #expect(r.stderr.contains("not supported"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("out.h264")))
    }

    @Test func missingInputExitsTwo() throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--input", dir.path("nope.y4m"), "-o", dir.path("out.h264")])
        #expect(r.status == 2)
        #expect(r.stderr.contains("nope.y4m"))
        #expect(!FileManager.default.fileExists(atPath: dir.path("out.h264")))
    }
}

import Foundation
import Testing
import VTCore
import VTDecoding

/// `AssetImageGenerator` and `vtrecord thumbnail` against FFmpeg's `-ss T -frames:v 1`.
@Suite struct ThumbnailTests {
    /// 320x240, 90 frames at 30 fps, GOPs of 15 with B-frames.
    static func record(_ dir: TemporaryDirectory, _ name: String) throws -> String {
        let path = dir.path(name)
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "90", "--keyint", "15",
                                    "--bframes", "2", "--quiet", "-o", path])
        #expect(r.status == 0, "\(r.stderr)")
        return path
    }

    /// The picture's planes packed, as FFmpeg writes raw I420.
    static func packed(_ buffer: PixelBuffer) -> Data { Data(DecompressionSessionTests.packed(buffer)) }

    /// FFmpeg's picture for `-ss time`, as raw I420. FFmpeg cannot seek in a raw stream (it
    /// gives no picture), and in a transport stream it starts decoding wherever its timestamp
    /// search lands, keyframe or not (a damaged picture, "co located POCs unavailable"); for
    /// those the picture is FFmpeg's at that place in display order at the stream's 30 fps,
    /// the first at or after the time.
    static func ffmpegPicture(_ path: String, at time: Double) throws -> Data {
        let seek = path.hasSuffix(".h264") || path.hasSuffix(".ts")
            ? ["-i", path, "-vf", "select=eq(n\\,\(Int((time * 30 - 0.000_001).rounded(.up))))"]
            : ["-ss", String(format: "%.6f", time), "-i", path]
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error"] + seek + ["-frames:v", "1", "-f", "rawvideo",
                                                                            "-pix_fmt", "yuv420p", "-"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.count == 320 * 240 * 3 / 2, "FFmpeg gave no picture at \(time) s of \(path)")
        return r.stdout
    }

    @Test(arguments: ["mp4", "mkv", "ts", "h264"])
    func exactIsFFmpegsPictureAndKeyframeIsTheOneBefore(_ container: String) throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, "clip.\(container)")
        let generator = try AssetImageGenerator(path: path)
        for time in [0.0, 1.1, 2.37] {
            let exact = try generator.image(at: time, exact: true)
            #expect(Self.packed(exact.picture) == (try Self.ffmpegPicture(path, at: time)), "\(container) at \(time) s")
            let key = try generator.image(at: time, exact: false)
            let keyTime = (time * 2).rounded(.down) / 2  // GOPs of 15 frames: a keyframe every 0.5 s
            #expect(key.isKeyFrame && abs(key.time - keyTime) < 0.001, "\(container) at \(time) s: \(key.time) s")
            #expect(Self.packed(key.picture) == (try Self.ffmpegPicture(path, at: keyTime)))
        }
    }

    /// The JPEG decodes to FFmpeg's own JPEG of the same frame, within rounding.
    @Test func theJPEGLooksLikeFFmpegs() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, "clip.mp4")
        let ours = dir.path("ours.jpg")
        let r = try Tools.vtrecord(["thumbnail", path, "--at", "1.2", "--exact", "--quality", "95", "-o", ours])
        #expect(r.status == 0, "\(r.stderr)")
        let theirs = dir.path("theirs.jpg")
        let f = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-ss", "1.2", "-i", path, "-frames:v", "1",
                                         "-q:v", "1", "-y", theirs])
        #expect(f.status == 0, "\(f.stderr)")
        func rgb(_ jpeg: String) throws -> [UInt8] {
            let d = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", jpeg, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
            #expect(d.status == 0, "\(d.stderr)")
            return [UInt8](d.stdout)
        }
        let a = try rgb(ours)
        let b = try rgb(theirs)
        #expect(a.count == 320 * 240 * 3 && a.count == b.count)
        let mean = zip(a, b).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(max(a.count, 1))
        #expect(mean < 3, "mean difference \(mean) per channel")
    }

    @Test func sizesSheetsAndNumbering() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, "clip.mkv")
        let r = try Tools.vtrecord(["thumbnail", path, "--count", "3", "--size", "160x", "-o", dir.path("t-{n:02}.jpg")])
        #expect(r.status == 0, "\(r.stderr)")
        for n in ["01", "02", "03"] {
            let probe = try Tools.ffprobe(dir.path("t-\(n).jpg"), ["-show_entries", "stream=width,height"])
            let stream = (probe["streams"] as? [[String: Any]])?.first
            #expect(stream?["width"] as? Int == 160 && stream?["height"] as? Int == 120, "\(probe)")
        }
        let sheet = try Tools.vtrecord(["thumbnail", path, "--tile", "3x2", "--size", "x60", "-o", dir.path("sheet.jpg")])
        #expect(sheet.status == 0, "\(sheet.stderr)")
        let probe = try Tools.ffprobe(dir.path("sheet.jpg"), ["-show_entries", "stream=width,height"])
        let stream = (probe["streams"] as? [[String: Any]])?.first
        #expect(stream?["width"] as? Int == 240 && stream?["height"] as? Int == 120, "\(probe)")
        // Several pictures need {n}.
        let unnumbered = try Tools.vtrecord(["thumbnail", path, "--count", "2", "-o", dir.path("one.jpg")])
        #expect(unnumbered.status == 2)
        #expect(unnumbered.stderr.split(separator: "\n").count == 1 && unnumbered.stderr.contains("{n}"), "\(unnumbered.stderr)")
        let many = try Tools.vtrecord(["thumbnail", path, "--every", "0.0001", "-o", dir.path("m-{n}.jpg")])
        #expect(many.status == 2 && many.stderr.contains("more than 10000"), "\(many.stderr)")
    }

    @Test(arguments: ["empty", "text"])
    func whatIsNotVideoGetsOneLine(_ kind: String) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("bad")
        try Data(kind == "empty" ? [] : Array("words, not pictures\n".utf8)).write(to: URL(fileURLWithPath: path))
        let r = try Tools.vtrecord(["thumbnail", path, "-o", dir.path("t.jpg")])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.hasPrefix("vtrecord: error: \(path)"), "\(r.stderr)")
    }
}

extension ThumbnailTests {
    /// A picture from the middle of a long recording reads the index and the bytes around that
    /// picture, not what comes before it: the bytes vtrecord reads from the file (strace -y
    /// names each descriptor's file) are a small part of it, in MP4 (its sync-sample table) and
    /// Matroska (its cues) alike.
    @Test(arguments: ["mp4", "mkv"])
    func aPictureFromTheMiddleOfALongFileDoesNotReadWhatComesBefore(_ container: String) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("long.\(container)")
        // Ten minutes, 18,000 frames in 2-second GOPs.
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30",
                                            "-t", "600", "-c:v", "libx264", "-preset", "ultrafast", "-g", "60", path])
        try #require(made.status == 0, "\(made.stderr)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let trace = dir.path("trace.txt")
        // LeakSanitizer cannot work in a traced process (make test-sanitize): leave it out here,
        // the other tests check leaks; ASan's other checks stay on.
        var environment = ProcessInfo.processInfo.environment
        if let asan = environment["ASAN_OPTIONS"] { environment["ASAN_OPTIONS"] = asan + ":detect_leaks=0" }
        let r = try Tools.run("strace", ["-f", "-y", "-e", "trace=read,pread64", "-e", "signal=none", "-o", trace,
                                         Tools.vtrecord, "thumbnail", path, "--at", "5m1s", "-o", dir.path("t.jpg")],
                              environment: environment)
        try #require(r.status == 0, "\(r.stderr)")
        let read = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").reduce(0) { total, line in
            guard line.contains("<\(path)>"), let result = line.split(separator: " = ").last.flatMap({ Int($0) }) else {
                return total
            }
            return total + result
        }
        #expect(read > 0, "strace saw no read of \(path)")
        #expect(Double(read) < Double(size) * 0.05, "read \(read) of \(size) bytes")
        let probe = try Tools.ffprobe(dir.path("t.jpg"), ["-show_entries", "stream=codec_name,width"])
        #expect((probe["streams"] as? [[String: Any]])?.first?["width"] as? Int == 160)
    }
}

import Foundation
import Testing
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `-o rec.mp4`: a fragmented MP4 while recording, a regular MP4 after a clean end, checked with
/// readers we did not write (ffmpeg, ffprobe, mediainfo, GStreamer's qtdemux) against the raw
/// stream of the same settings.
@Suite struct MP4OutputTests {
    /// The types of a file's top-level boxes.
    static func topLevelBoxes(_ path: String) throws -> [String] {
        try Box.file(path).map(\.type)
    }

    static func probe(_ path: String) throws -> (format: [String: Any], stream: [String: Any]) {
        let json = try Tools.ffprobe(path, ["-count_frames", "-show_entries",
                                            "format=format_name,duration,start_time:stream=nb_read_frames,codec_name,start_time,duration"])
        let format = try #require(json["format"] as? [String: Any])
        let stream = try #require((json["streams"] as? [[String: Any]])?.first)
        return (format, stream)
    }

    static func seconds(_ value: Any?) -> Double { Double(value as? String ?? "") ?? .nan }

    struct Case: CustomTestStringConvertible, Sendable {
        var source: [String]
        var settings: [String]
        var frames: Int
        var fps: Double
        var testDescription: String { (source + settings).joined(separator: " ") }
    }

    static let cases = [
        Case(source: ["--test-pattern", "--size", "320x240"], settings: ["--speed", "veryfast", "--bframes", "3"],
             frames: 60, fps: 30),
        Case(source: ["--test-pattern", "--size", "320x240", "--fps", "25"], settings: ["--speed", "ultrafast"],
             frames: 50, fps: 25),
        Case(source: ["--test-pattern", "--size", "320x240", "--fps", "30000/1001"],
             settings: ["--speed", "medium", "--keyint", "20"], frames: 61, fps: 30000.0 / 1001),
    ]

    /// The same pictures as the raw stream, every frame, a duration of exactly the frames
    /// recorded, first picture at 0, and a regular MP4 (ftyp, mdat, moov) at the end.
    @Test(arguments: cases)
    func mp4HoldsTheRawStreamsPicturesWithTheirTimes(_ c: Case) throws {
        let dir = try TemporaryDirectory()
        let common = c.source + c.settings + ["--frames", "\(c.frames)", "--quiet"] + Tools.reproducible
        let raw = try Tools.vtrecord(common + ["-o", dir.path("a.h264")])
        #expect(raw.status == 0, "\(raw.stderr)")
        let mp4 = try Tools.vtrecord(common + ["-o", dir.path("a.mp4"), "--json-summary", dir.path("s.json")])
        #expect(mp4.status == 0, "\(mp4.stderr)")

        #expect(try Self.topLevelBoxes(dir.path("a.mp4")) == ["ftyp", "mdat", "moov"])
        let md5s = try Tools.frameMD5s(dir.path("a.mp4"))
        #expect(md5s.count == c.frames)
        #expect(md5s == (try Tools.frameMD5s(dir.path("a.h264"))))
        let (format, stream) = try Self.probe(dir.path("a.mp4"))
        #expect((format["format_name"] as? String)?.contains("mp4") == true)
        #expect(stream["nb_read_frames"] as? String == "\(c.frames)")
        let expected = Double(c.frames) / c.fps
        #expect(abs(Self.seconds(format["duration"]) - expected) <= 1 / c.fps, "duration \(format["duration"] ?? "none")")
        #expect(Self.seconds(format["start_time"]) == 0)
        #expect(Self.seconds(stream["start_time"]) == 0)

        let summary = try SegmentTests.json(dir.path("s.json"))
        #expect(summary["container"] as? String == "mp4")
        #expect(summary["finalized"] as? Bool == true)
    }

    /// Readers other than FFmpeg: mediainfo names the container and codec and counts the
    /// frames; GStreamer demuxes and decodes every frame.
    @Test func mediainfoAndGStreamerReadIt() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("b.mp4")
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "45", "--speed", "veryfast",
                                    "--quiet", "-o", path])
        #expect(r.status == 0, "\(r.stderr)")
        let info = try Tools.run("mediainfo", ["--Output=JSON", path])
        #expect(info.status == 0, "\(info.stderr)")
        let media = try #require((try JSONSerialization.jsonObject(with: info.stdout) as? [String: Any])?["media"] as? [String: Any])
        let tracks = try #require(media["track"] as? [[String: Any]])
        let general = try #require(tracks.first { $0["@type"] as? String == "General" })
        let video = try #require(tracks.first { $0["@type"] as? String == "Video" })
        #expect(general["Format"] as? String == "MPEG-4")
        #expect(video["Format"] as? String == "AVC")
        #expect(video["FrameCount"] as? String == "45")
        #expect((general["Encoded_Application"] as? String)?.hasPrefix("vtrecord") == true, "\(general)")

        let decoded = try MuxedOutputTests.gstreamerDecodedFrames(path, demuxer: "qtdemux")
        #expect(decoded == 45, "GStreamer decoded \(decoded) frames")
    }

    /// `--mp4-fragmented` keeps the fragments; standard output can only be fragmented.
    @Test func fragmentedOutputStaysFragmentedAndPlays() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("f.mp4")
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "75", "--keyint", "30",
                                    "--quiet", "--mp4-fragmented", "-o", path, "--json-summary", dir.path("s.json")])
        #expect(r.status == 0, "\(r.stderr)")
        let boxes = try Self.topLevelBoxes(path)
        #expect(Array(boxes.prefix(2)) == ["ftyp", "moov"])
        #expect(boxes.filter { $0 == "moof" }.count == 3, "\(boxes)")
        #expect(try Tools.frameMD5s(path).count == 75)
        #expect(try SegmentTests.json(dir.path("s.json"))["finalized"] as? Bool == false)

        let piped = try Tools.shell("\"$VTRECORD\" --test-pattern --size 320x240 --frames 40 --container mp4 -o - "
                                    + "| ffprobe -v error -count_frames -show_entries format=format_name:stream=nb_read_frames -of json -i -")
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stderr.contains("standard output cannot be finalized"))
        #expect(piped.stdoutText.contains("\"nb_read_frames\": \"40\""), "\(piped.stdoutText)")
    }

    /// An extension vtrecord cannot write is refused before anything is opened.
    @Test func unknownExtensionIsRefusedWithExitTwo() throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--test-pattern", "--frames", "5", "-o", dir.path("x.avi")])
        #expect(r.status == 2)
        let lines = OutputTests.errorLines(r.stderr)
        #expect(lines.count == 1 && lines[0].contains(".mp4") && lines[0].contains("--container"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
        // --container names the kind whatever the extension.
        let named = try Tools.vtrecord(["--test-pattern", "--size", "160x120", "--frames", "5", "--quiet",
                                        "--container", "mp4", "-o", dir.path("x.avi")])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(try Self.topLevelBoxes(dir.path("x.avi")) == ["ftyp", "mdat", "moov"])
    }

    /// `inspect` tells a finalized MP4 from one a crash left fragmented, and reports the stream
    /// inside each container.
    @Test(arguments: ["mp4", "mkv", "ts"])
    func inspectDescribesTheContainer(_ container: String) throws {
        let dir = try TemporaryDirectory()
        var files = [(dir.path("a.\(container)"), [String]())]
        if container == "mp4" { files.append((dir.path("f.mp4"), ["--mp4-fragmented"])) }
        for (path, options) in files {
            let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "75", "--keyint", "30",
                                        "--quiet", "-o", path] + options)
            #expect(r.status == 0, "\(r.stderr)")
            let inspected = try Tools.vtrecord(["inspect", "--json", path])
            #expect(inspected.status == 0, "\(inspected.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: inspected.stdout) as? [String: Any])
            let about = try #require(json["container"] as? [String: Any])
            #expect(about["format"] as? String == container)
            #expect(about["frames"] as? Int == 75 && about["keyframes"] as? Int == 3, "\(about)")
            if container == "mp4" {
                let fragmented = !options.isEmpty
                #expect(about["finalized"] as? Bool == !fragmented, "\(about)")
                #expect(about["fragments"] as? Int == (fragmented ? 3 : 0), "\(about)")
            }
            let h264 = try #require(json["h264"] as? [String: Any])
            #expect(h264["frames"] != nil, "\(h264.keys)")
        }
    }
}

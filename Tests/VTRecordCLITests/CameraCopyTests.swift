import Foundation
import Testing
import VTH264
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `--encoder copy`: an MJPEG camera's own JPEGs in Matroska and MP4, byte for byte as v4l2-ctl
/// receives them from the same camera (whose pictures depend only on their sequence number),
/// damaged ones counted and left out, segments that each play alone; the same for an H.264
/// camera's access units in every container.
///
/// Real-time capture, but not among CameraRecordingTests and not one recording at a time:
/// storing small frames as they come costs next to no CPU, so these run beside the other
/// tests of the command line, in a lane beside the encoding camera tests. (One at a time, they
/// waited for the lane's other tests to end and then ran alone, two minutes more.)
@Suite struct CameraCopyTests {
    /// The cameras' size: small, so that the stand-in camera's own JPEG and H.264 encoding, in
    /// the recording's capture thread, costs the tests beside these little.
    static let width = 320, height = 240
    static let size = "\(width)x\(height)"

    /// vtrecord five nice levels below the rest of the suite: its capture thread, which here
    /// also runs the stand-in camera's encoding, then stays below the camera lane's, whose
    /// tests time theirs, while still above everything at the normal priority.
    static let vtrecord = ["/usr/bin/nice", "-n", "5", Tools.vtrecord]

    /// A camera sending `format` (MJPG or H264) at `size` and 30 fps.
    static func camera(_ format: String = "MJPG", _ knobs: [FakeCamera.Knob] = []) throws -> FakeCamera {
        try FakeCamera(knobs: [.formats("\(format):\(size)@30")] + knobs)
    }

    struct Copied {
        var result: ChildProcess.Result
        var summary: [String: Any]
        func count(_ key: String) -> Int { summary[key] as? Int ?? -1 }
    }

    static func record(_ camera: FakeCamera, to outputs: [String], _ arguments: [String]) throws -> Copied {
        let summaryPath = camera.file("summary.json")
        let r = try ChildProcess.run(Self.vtrecord + ["--device", camera.path, "--encoder", "copy", "--size", Self.size,
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

    /// The frame numbers JPEGs show, in order (nil where none reads).
    static func frameNumbers(_ jpegs: [Data], in camera: FakeCamera) throws -> [Int?] {
        try Data(jpegs.joined()).write(to: URL(fileURLWithPath: camera.file("stored.mjpeg")))
        return try Tools.counters(camera.file("stored.mjpeg"), width: Self.width)
    }

    /// The frame numbers of the JPEGs a file holds, in order.
    static func storedNumbers(_ path: String, in camera: FakeCamera) throws -> [Int] {
        try frameNumbers(storedJPEGs(path, in: camera), in: camera).compactMap { $0 }
    }

    @Test(arguments: ["mkv", "mp4"])
    func theCamerasJPEGsAreStoredByteForByte(_ container: String) throws {
        let camera = try Self.camera()
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
        #expect(stream?["codec_name"] as? String == "mjpeg" && stream?["width"] as? Int == Self.width, "\(probe)")

        let stored = try Self.storedJPEGs(out, in: camera)
        let numbers = try Self.frameNumbers(stored, in: camera)
        #expect(numbers == (0..<60).map { Optional($0) }, "\(numbers)")
        let cameras = try CameraRecordingTests.SnapshotTests.camerasJPEGs(camera, count: 60, width: Self.width, height: Self.height)
        try #require(cameras.count == 60)
        for (index, jpeg) in stored.enumerated() where index < cameras.count {
            #expect(jpeg == cameras[index], "frame \(index) differs from the camera's")
        }
    }

    /// JPEGs without a start marker (every 7th) and cut short (every 5th) are counted and
    /// left out; every other frame is there once, in order.
    @Test func damagedJPEGsAreCountedAndLeftOut() throws {
        let camera = try Self.camera("MJPG", [.corruptJPEGEvery(7), .shortBufferEvery(5)])
        let out = camera.file("copy.mkv")
        let copied = try Self.record(camera, to: [out], ["--frames", "60"])
        try #require(copied.result.status == 0, "\(copied.result.transcript)")
        let numbers = try Self.storedNumbers(out, in: camera)
        #expect(numbers.count == 60)
        let last = try #require(numbers.last)
        let damaged = Set((0...last).filter { ($0 + 1) % 7 == 0 || ($0 + 1) % 5 == 0 })
        #expect(numbers == (0...last).filter { !damaged.contains($0) }, "\(numbers)")
        // Capture may run a frame or two past the last one written.
        #expect(copied.count("frames_bad") >= damaged.count && copied.count("frames_bad") <= damaged.count + 2,
                "\(copied.summary)")
    }

    /// Frames the driver drops (every 10th) leave gaps in the stored frame numbers exactly
    /// there, each counted in `dropped_driver`; nothing else is missing.
    @Test func theOnlyGapsAreTheCountedDrops() throws {
        let camera = try Self.camera("MJPG", [.dropEvery(10)])
        let out = camera.file("copy.mkv")
        let copied = try Self.record(camera, to: [out], ["--frames", "45"])
        try #require(copied.result.status == 0, "\(copied.result.transcript)")
        let numbers = try Self.storedNumbers(out, in: camera)
        let last = try #require(numbers.last)
        #expect(numbers.count == 45 && numbers == (0...last).filter { $0 % 10 != 9 }, "\(numbers)")
        // Capture may run a frame past the last one written, and see the drop before it.
        let dropped = (0...last).filter { $0 % 10 == 9 }.count
        #expect((dropped ... dropped + 1).contains(copied.count("dropped_driver")), "\(copied.summary)")
    }

    /// An H.264 camera whose driver drops every 10th access unit, with an IDR picture every 30:
    /// what follows a lost unit may refer to it, so the stored stream goes on only from the next
    /// IDR picture, and decodes without a word; the waiting units are counted in `frames_bad`.
    @Test func h264AfterALostUnitWaitsForTheNextIDR() throws {
        let camera = try Self.camera("H264", [.dropEvery(10)])
        let out = camera.file("copy.mkv")
        let copied = try Self.record(camera, to: [out], ["--format", "h264", "--keyint", "1s", "--frames", "27"])
        try #require(copied.result.status == 0, "\(copied.result.transcript)")
        let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", out, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        let numbers = try Tools.counters(out, width: Self.width).map { try #require($0) }
        // Frames 0–8 of each second: 9 is lost, and 10–29 wait for the IDR picture at 30.
        #expect(numbers == (0..<90).filter { $0 % 30 < 9 }, "\(numbers)")
        #expect(copied.count("frames_bad") >= 40, "\(copied.summary)")
    }

    /// A JPEG that lost the middle of its scan keeps every marker: the default check stores
    /// it, and `--check-frames decode`, which decodes each JPEG, counts it and leaves it out.
    @Test func aFullDecodeFindsWhatTheMarkersDoNot() throws {
        for check in ["markers", "decode"] {
            let camera = try Self.camera("MJPG", [.jpegHoleEvery(4)])
            let out = camera.file("copy.mkv")
            let copied = try Self.record(camera, to: [out], ["--frames", "40", "--check-frames", check])
            try #require(copied.result.status == 0, "\(copied.result.transcript)")
            let stored = try Self.storedJPEGs(out, in: camera)
            try #require(stored.count == 40)
            if check == "markers" {
                #expect(copied.count("frames_bad") == 0, "\(copied.summary)")
                continue
            }
            let numbers = try Self.frameNumbers(stored, in: camera).compactMap { $0 }
            let last = try #require(numbers.last)
            #expect(numbers == (0...last).filter { $0 % 4 != 3 }, "\(numbers)")
            let holes = (0...last).filter { $0 % 4 == 3 }.count
            #expect(copied.count("frames_bad") >= holes && copied.count("frames_bad") <= holes + 1, "\(copied.summary)")
        }
    }

    /// Segments of a second: every JPEG is a keyframe, each file decodes alone, and together
    /// they hold every frame once.
    @Test func segmentsEachPlayAlone() throws {
        let camera = try Self.camera()
        let copied = try Self.record(camera, to: [camera.file("seg-{n}.mkv")],
                                     ["--frames", "75", "--segment-time", "1s"])
        try #require(copied.result.status == 0, "\(copied.result.transcript)")
        var numbers: [Int?] = []
        for n in 0..<3 {
            let path = camera.file("seg-\(n).mkv")
            let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
            #expect(decode.status == 0 && decode.stderr.isEmpty, "seg-\(n): \(decode.stderr)")
            numbers += try Tools.counters(path, width: Self.width)
        }
        #expect(numbers == (0..<75).map { Optional($0) }, "\(numbers)")
    }

    /// The coded pictures (VCL NAL units) of an Annex B stream, in order.
    static func codedPictures(_ annexB: [UInt8]) -> [[UInt8]] {
        AnnexB.nalUnitRanges(in: annexB).filter { !$0.isEmpty && NALUnitType(headerByte: annexB[$0.lowerBound]).isVCL }
            .map { Array(annexB[$0]) }
    }

    /// A file's H.264 as Annex B, as FFmpeg's demuxer hands it out (`-c copy`).
    static func storedAnnexB(_ path: String, in camera: FakeCamera) throws -> [UInt8] {
        let copy = camera.file("stored-\(UUID().uuidString).h264")
        let r = try Tools.run("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v", "-c", "copy", "-bsf:v", "h264_mp4toannexb",
                                         "-f", "h264", copy])
        #expect(r.status == 0 && r.stderr.isEmpty, "\(path): \(r.stderr)")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: copy)))
    }

    /// The camera's coded pictures of sequence numbers 0 ..< count, as v4l2-ctl receives
    /// them (one slice a picture), with an IDR picture every `iPeriod` if given.
    static func camerasPictures(_ camera: FakeCamera, count: Int, iPeriod: Int? = nil) throws -> [[UInt8]] {
        let streamed = camera.file("v4l2-\(UUID().uuidString).h264")
        let control = iPeriod.map { ["--set-ctrl=h264_i_frame_period=\($0)"] } ?? []
        let v4l2 = try ChildProcess.run(["v4l2-ctl", "-d", camera.path] + control
                                            + ["--set-fmt-video=width=\(width),height=\(height),pixelformat=H264",
                                               "--stream-mmap=16", "--stream-count=\(count)", "--stream-to=\(streamed)"],
                                        environment: try camera.environment(), timeout: .seconds(30))
        try #require(v4l2.status == 0, "\(v4l2.transcript)")
        return codedPictures([UInt8](try Data(contentsOf: URL(fileURLWithPath: streamed))))
    }

    /// An H.264 camera (`--format h264`) into a raw stream, Matroska, MP4 and MPEG-TS: each
    /// file decodes without a word, and its coded pictures are the camera's, byte for byte
    /// as v4l2-ctl receives them with the camera's I-frame period at 60, which vtrecord set
    /// from the default --keyint of 2 s.
    @Test(arguments: ["h264", "mkv", "mp4", "ts"])
    func anH264CamerasPicturesAreStoredByteForByte(_ container: String) throws {
        let camera = try Self.camera("H264")
        let out = camera.file("copy.\(container)")
        let copied = try Self.record(camera, to: [out], ["--format", "h264", "--frames", "60"])
        try #require(copied.result.status == 0, "\(copied.result.transcript)")
        #expect(copied.summary["encoder"] as? String == "copy" && copied.count("frames_encoded") == 60
                && copied.count("frames_bad") == 0 && copied.count("dropped_queue") == 0, "\(copied.summary)")
        let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", out, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        let stored = Self.codedPictures(container == "h264" ? [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
                                                             : try Self.storedAnnexB(out, in: camera))
        let cameras = try Self.camerasPictures(camera, count: 60, iPeriod: 60)
        try #require(stored.count == 60 && cameras.count == 60, "\(stored.count) and \(cameras.count) pictures")
        #expect(stored == cameras, "the stored pictures differ from the camera's")
        if container == "h264" {
            // The parameter sets come before every IDR picture, as the writer promises.
            #expect(try SegmentTests.nalTypes(out).prefix(2) == [.sps, .pps])
        }
    }

    /// Raw H.264 segments of a second, with `--keyint 1s` setting the camera's I-frame period
    /// to 30: each file starts with the parameter sets and an IDR picture and plays alone,
    /// and together they hold every frame once.
    @Test func h264SegmentsStartAtTheCamerasIDRPictures() throws {
        let camera = try Self.camera("H264")
        let copied = try Self.record(camera, to: [camera.file("seg-{n}.h264")],
                                     ["--format", "h264", "--frames", "90", "--segment-time", "1s", "--keyint", "1s"])
        try #require(copied.result.status == 0, "\(copied.result.transcript)")
        var numbers: [Int?] = []
        for n in 0..<3 { numbers += try SegmentTests.playsAlone(camera.file("seg-\(n).h264"), width: Self.width) }
        #expect(numbers == (0..<90).map { Optional($0) }, "\(numbers)")
    }

    /// Damaged access units (every 7th), with an IDR picture every 10 (the camera's H.264 I
    /// period control set with --control): a damaged one and those after it up to the next
    /// IDR picture are counted and left out, the rest are the camera's own.
    @Test func damagedH264IsLeftOutUpToTheNextIDR() throws {
        let camera = try Self.camera("H264", [.corruptH264Every(7)])
        let out = camera.file("copy.mkv")
        let copied = try Self.record(camera, to: [out], ["--format", "h264", "--frames", "30",
                                                         "--control", "h264_i_frame_period=10"])
        try #require(copied.result.status == 0, "\(copied.result.transcript)")
        var kept: [Int] = []
        var waiting = false
        var sequence = 0
        // Up to the 31st deliverable frame, which the capture thread hands on before the limit
        // stops it: the frames rejected before it are all counted.
        while kept.count < 31 {
            let damaged = (sequence + 1) % 7 == 0
            if sequence % 10 == 0 && !damaged { waiting = false }
            if damaged { waiting = true } else if !waiting { kept.append(sequence) }
            sequence += 1
        }
        let stored = Self.codedPictures(try Self.storedAnnexB(out, in: camera))
        let cameras = try Self.camerasPictures(camera, count: kept[29] + 1, iPeriod: 10)
        try #require(cameras.count == kept[29] + 1)
        #expect(stored == kept.prefix(30).map { cameras[$0] }, "stored \(stored.count) pictures, expected those of \(kept)")
        let rejected = kept[30] - 30
        #expect(copied.count("frames_bad") >= rejected && copied.count("frames_bad") <= rejected + 2, "\(copied.summary)")
    }

    /// Event clips and retention with the camera's own frames, MJPEG and H.264: SIGUSR1 at
    /// frame 90 with a second before and after makes a clip that holds the camera's frames
    /// from a keyframe at or before frame 60 through frame 120 (and on to the frame before the
    /// camera's next IDR picture, for H.264), each once, byte for byte as the camera sent them; beside it, segments of a second under `--keep-size 1k` go oldest
    /// first, and those left each play alone.
    @Test(arguments: ["mjpeg", "h264"])
    func eventClipsAndRetentionWorkAsForEncodedStreams(_ format: String) throws {
        let h264 = format == "h264"
        let camera = try Self.camera(h264 ? "H264" : "MJPG", [.signalAt([90])])
        let copied = try Self.record(camera, to: [camera.file("seg-{n}.mkv")],
                                     ["--format", format, "--frames", "240", "--segment-time", "1s", "--keyint", "1s",
                                      "--keep-size", "1k", "--events", camera.file("clip-{n}.mp4"),
                                      "--pre-roll", "1s", "--post-roll", "1s"])
        try #require(copied.result.status == 0, "\(copied.result.transcript)")
        #expect(copied.count("dropped_queue") == 0 && copied.count("frames_bad") == 0, "\(copied.summary)")
        let clips = EventClipTests.clips(copied.summary)
        try #require(clips.count == 1, "\(copied.summary["events"] ?? "no events")")
        #expect(clips[0]["state"] as? String == "finished" && clips[0]["trigger"] as? String == "signal")
        let clip = camera.file("clip-0.mp4")
        let frames = try EventClipTests.counters(clip, width: Self.width)
        let first = try #require(frames.first), last = try #require(frames.last)
        // The event's moment is when vtrecord takes the signal, which the camera sends as it
        // hands out frame 90: on a busy machine a frame or two later. Every JPEG is a keyframe,
        // so an MJPEG clip starts about a second before that moment (the pre-roll held is a second
        // back from the newest picture); an H.264 one at the IDR before it.
        let earliest = h264 ? 60 - 29 : 59, latest = h264 ? 60 : 62
        #expect((earliest ... latest).contains(first), "the pre-roll starts at \(first)")
        // A clip ends before a keyframe. An encoder is asked for one at the end of the post-roll;
        // the camera is not, so its clip runs on to the frame before its next IDR picture.
        #expect(last >= 120 && last <= (h264 ? 149 : 122), "the post-roll ends at \(last)")
        #expect(clips[0]["frames"] as? Int == frames.count)
        if h264 {
            let stored = Self.codedPictures(try Self.storedAnnexB(clip, in: camera))
            let cameras = try Self.camerasPictures(camera, count: last + 1, iPeriod: 30)
            #expect(stored == Array(cameras[first...]), "the clip's pictures differ from the camera's")
        } else {
            let stored = try Self.storedJPEGs(clip, in: camera)
            let cameras = try CameraRecordingTests.SnapshotTests.camerasJPEGs(camera, count: last + 1, width: Self.width,
                                                                             height: Self.height)
            #expect(stored == Array(cameras[first...]), "the clip's JPEGs differ from the camera's")
        }

        // Eight segments; at each close the sweep deletes all but the file being written.
        let retention = try RetentionTests.retention(copied.summary)
        let deleted = (retention["deleted"] as? [[String: Any]] ?? []).compactMap {
            ($0["file"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent }
        }
        #expect(deleted.count >= 6 && deleted == (0..<deleted.count).map { "seg-\($0).mkv" }, "oldest first: \(deleted)")
        let left = try FileManager.default.contentsOfDirectory(atPath: camera.directory.path)
            .filter { $0.hasPrefix("seg-") }.sorted()
        #expect(!left.isEmpty && left.count <= 2 && Set(left).isDisjoint(with: deleted), "\(left)")
        for name in left {
            let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", camera.file(name), "-f", "null", "-"])
            #expect(decode.status == 0 && decode.stderr.isEmpty, "\(name): \(decode.stderr)")
        }
    }

    /// An access unit that lost the middle of its slice (every 4th, with an IDR picture every
    /// 10) keeps a clean NAL structure: the default check stores it, and `--check-frames decode`,
    /// which decodes each unit with libavcodec, counts it and leaves it out with those after it up
    /// to the next IDR picture; what is stored is the camera's own, and decodes without a word.
    @Test func aFullDecodeFindsWhatTheNALStructureDoesNot() throws {
        for check in ["markers", "decode"] {
            let camera = try Self.camera("H264", [.h264HoleEvery(4)])
            let out = camera.file("copy.mkv")
            let copied = try Self.record(camera, to: [out], ["--format", "h264", "--frames", "20", "--check-frames", check,
                                                             "--control", "h264_i_frame_period=10"])
            try #require(copied.result.status == 0, "\(copied.result.transcript)")
            #expect(copied.count("frames_encoded") == 20, "\(copied.summary)")
            // FFmpeg's decoder conceals the damage the markers let through, and says so.
            let decode = try Tools.run("ffmpeg", ["-v", "info", "-nostats", "-threads", "1", "-i", out, "-f", "null", "-"])
            #expect(decode.status == 0)
            if check == "markers" {
                #expect(copied.count("frames_bad") == 0, "\(copied.summary)")
                #expect(decode.stderr.contains("concealing"), "\(decode.stderr)")
                continue
            }
            #expect(!decode.stderr.contains("concealing") && !decode.stderr.contains("error"), "\(decode.stderr)")
            let stored = Self.codedPictures(try Self.storedAnnexB(out, in: camera))
            // Kept: from each IDR picture up to the first damaged one after it, up to the 21st
            // deliverable frame, which the capture thread hands on before the limit stops it.
            var kept: [Int] = []
            var waiting = false
            var sequence = 0
            while kept.count < 21 {
                let damaged = sequence % 4 == 3
                if sequence % 10 == 0 && !damaged { waiting = false }
                if damaged { waiting = true } else if !waiting { kept.append(sequence) }
                sequence += 1
            }
            let cameras = try Self.camerasPictures(camera, count: kept[19] + 1, iPeriod: 10)
            #expect(stored == kept.prefix(20).map { cameras[$0] }, "stored \(stored.count) pictures, expected those of \(kept.prefix(20))")
            let rejected = kept[20] - 20
            #expect(copied.count("frames_bad") >= rejected && copied.count("frames_bad") <= rejected + 2, "\(copied.summary)")
        }
    }

    /// Starts a copy of `camera` with `--http 127.0.0.1:0`; the child and the port it serves on.
    static func serve(_ camera: FakeCamera, _ arguments: [String]) throws -> (ChildProcess, Int) {
        let child = try ChildProcess(Self.vtrecord + ["--device", camera.path, "--encoder", "copy", "--size", Self.size,
                                      "--fps", "30", "--http", "127.0.0.1:0", "--json-summary", camera.file("summary.json")]
                                         + arguments,
                                     environment: try camera.environment())
        guard child.waitForStandardError(containing: "serving the live view on http://127.0.0.1:", timeout: .seconds(15)) else {
            child.send(SIGKILL)
            Issue.record("no server: \(child.wait().standardError)")
            throw CancellationError()
        }
        let port = try #require(child.standardErrorSoFar.firstMatch(of: /127\.0\.0\.1:(\d+)\//).flatMap { Int($0.1) })
        return (child, port)
    }

    /// The live view of an MJPEG camera's copy is the camera's own JPEGs: /stream.mjpeg and
    /// /snapshot.jpg byte for byte as v4l2-ctl receives them, one for each frame; /live.mp4 and
    /// HLS, which carry H.264, answer 404 naming /stream.mjpeg (BrowserPlaybackTests shows the
    /// page then shows the MJPEG stream).
    @Test func anMJPEGCopysLiveViewIsTheCamerasJPEGs() throws {
        typealias Live = CameraRecordingTests.LiveServerTests
        let camera = try Self.camera()
        let (child, port) = try Self.serve(camera, ["--frames", "150", "-o", camera.file("rec.mkv")])
        defer { if child.isRunning { child.send(SIGKILL) } }
        for path in ["/live.mp4", "/live.m3u8", "/live/0.m4s"] {
            let answer = try Live.curl(port, path)
            #expect(answer.status == 404 && String(decoding: answer.body, as: UTF8.self).contains("watch \\/stream.mjpeg"),
                    "\(path): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
        let stream = try Tools.run("curl", ["-s", "--max-time", "1.5", "http://127.0.0.1:\(port)/stream.mjpeg"])
        let snapshot = try Live.curl(port, "/snapshot.jpg").body
        let r = child.wait()
        try #require(r.status == 0, "\(r.standardError)")
        #expect(try SegmentTests.json(camera.file("summary.json"))["dropped_queue"] as? Int == 0)

        try Live.expectTheCamerasJPEGs(camera, stream: stream.stdout, snapshot: snapshot, width: Self.width, height: Self.height)
    }

    /// The live view of an H.264 camera's copy is the camera's stream: /live.mp4 holds a run of
    /// the recording's own coded pictures from an IDR picture, and decodes clean; /stream.mjpeg
    /// and /snapshot.jpg, which need pictures, answer 404 naming /live.mp4.
    @Test func anH264CopysLiveStreamIsTheCamerasStream() throws {
        typealias Live = CameraRecordingTests.LiveServerTests
        let camera = try Self.camera("H264")
        let (child, port) = try Self.serve(camera, ["--format", "h264", "--keyint", "1s", "--frames", "240",
                                                    "-o", camera.file("rec.h264")])
        defer { if child.isRunning { child.send(SIGKILL) } }
        for path in ["/stream.mjpeg", "/snapshot.jpg"] {
            let answer = try Live.curl(port, path)
            #expect(answer.status == 404 && String(decoding: answer.body, as: UTF8.self).contains("watch \\/live.mp4"),
                    "\(path): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
        let received = camera.file("live.mp4")
        try Live.keepLiveMP4(port, seconds: 2, in: received)
        let r = child.wait()
        try #require(r.status == 0, "\(r.standardError)")
        #expect(try SegmentTests.json(camera.file("summary.json"))["dropped_queue"] as? Int == 0)
        let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", received, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        let live = Self.codedPictures(try Self.storedAnnexB(received, in: camera))
        let recorded = Self.codedPictures([UInt8](try Data(contentsOf: URL(fileURLWithPath: camera.file("rec.h264")))))
        try #require(live.count >= 45, "\(live.count) pictures in 2 s")
        let start = try #require(recorded.firstIndex(of: live[0]), "the live stream's first picture is not the recording's")
        #expect(start % 30 == 0, "the live stream starts at picture \(start), not at an IDR picture")
        #expect(Array(recorded[start ..< min(recorded.count, start + live.count)]) == live)
    }

    /// Stills of an MJPEG camera's copy are the camera's own JPEGs, byte for byte: `--snapshot`'s,
    /// and the control socket's `snapshot PATH`. An H.264 camera's copy has no picture to make
    /// one of, and the control socket says so.
    @Test func stillsOfACopyAreTheCamerasOwnJPEGs() throws {
        let camera = try Self.camera()
        let socketPath = camera.file("ctl")
        let latest = camera.file("latest.jpg")
        let child = try ChildProcess(Self.vtrecord + ["--device", camera.path, "--encoder", "copy", "--size", Self.size,
                                      "--fps", "30", "--frames", "120", "-o", camera.file("rec.mkv"), "--quiet",
                                      "--snapshot", latest, "--snapshot-every", "1s", "--control-socket", socketPath,
                                      "--json-summary", camera.file("summary.json")],
                                     environment: try camera.environment())
        defer { if child.isRunning { child.send(SIGKILL) } }
        let control = try #require(ControlClient.connecting(to: socketPath), "no control socket at \(socketPath)")
        let asked = camera.file("asked.jpg")
        let answer = try Self.askOnceStarted(control, "snapshot \(asked)")
        #expect(answer["ok"] as? Bool == true, "\(answer)")
        let r = child.wait()
        try #require(r.status == 0, "\(r.standardError)")
        let summary = try SegmentTests.json(camera.file("summary.json"))
        #expect(summary["snapshots_written"] as? Int ?? 0 >= 3 && summary["snapshots_failed"] as? Int == 0, "\(summary)")
        var stills: [(Int, Data)] = []
        for path in [latest, asked] {
            let number = try #require(try Tools.counters(path, width: Self.width).first ?? nil, "\(path) shows no frame number")
            stills.append((number, try Data(contentsOf: URL(fileURLWithPath: path))))
        }
        let pictures = try CameraRecordingTests.SnapshotTests.camerasJPEGs(camera, count: stills.map(\.0).max()! + 1,
                                                                          width: Self.width, height: Self.height)
        for (number, jpeg) in stills {
            #expect(pictures[number] == jpeg, "the still of frame \(number) is not the camera's JPEG")
        }

        let h264 = try Self.camera("H264")
        let h264Socket = h264.file("ctl")
        let copying = try ChildProcess(Self.vtrecord + ["--device", h264.path, "--encoder", "copy", "--format", "h264",
                                        "--size", Self.size, "--frames", "60", "-o", h264.file("rec.mkv"), "--quiet",
                                        "--control-socket", h264Socket], environment: try h264.environment())
        defer { if copying.isRunning { copying.send(SIGKILL) } }
        let h264Control = try #require(ControlClient.connecting(to: h264Socket), "no control socket at \(h264Socket)")
        let refused = try Self.askOnceStarted(h264Control, "snapshot \(h264.file("still.jpg"))")
        #expect(refused["ok"] as? Bool == false && (refused["error"] as? String)?.contains("no picture") == true, "\(refused)")
        #expect(copying.wait().status == 0)
    }

    /// The control socket's answer to `request` once the recording has started: the socket is
    /// open before the camera's first frame, and until then a snapshot is answered with that.
    static func askOnceStarted(_ control: ControlClient, _ request: String) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(10)
        var answer = try control.ask(request)
        while answer["error"] as? String == "the recording has not started yet" && Date() < deadline {
            usleep(50_000)
            answer = try control.ask(request)
        }
        return answer
    }

    /// An H.264 camera unplugged and back (`--reconnect`) is in its power-on state: vtrecord sets
    /// its I-frame period from `--keyint` again, and the recording goes on in the same file from
    /// the camera's next IDR picture, decoding clean, with keyframes as far apart as before.
    @Test func anH264CameraThatComesBackKeepsItsKeyframeInterval() throws {
        let camera = try Self.camera("H264", [.unplugAfter(frames: 70), .reconnectAfter(milliseconds: 500)])
        let out = camera.file("copy.mkv")
        let copied = try Self.record(camera, to: [out], ["--format", "h264", "--keyint", "2s", "--duration", "7s",
                                                         "--reconnect"])
        try #require(copied.result.status == 0, "\(copied.result.transcript)")
        #expect(copied.count("reconnects") == 1, "\(copied.summary)")
        let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", out, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        // The camera numbers its frames from 0 again when it comes back: two runs, each starting
        // at an IDR picture, with one every 60 pictures (2 s) in each.
        let numbers = try Tools.counters(out, width: Self.width).map { try #require($0) }
        let restart = try #require(numbers.indices.dropFirst().first { numbers[$0] < numbers[$0 - 1] }, "\(numbers)")
        #expect(Array(numbers[..<restart]) == Array(0..<70), "\(numbers)")
        let after = Array(numbers[restart...])
        #expect(after.first == 0 && after == Array(0..<after.count) && after.count > 61, "\(after)")
        let probe = try Tools.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=key_frame",
                                              "-of", "csv=p=0", out])
        let keys = probe.stdoutText.split(separator: "\n").map { $0.hasPrefix("1") }
        #expect(keys.indices.filter { keys[$0] } == [0, 60, restart, restart + 60] + (restart + 120 < keys.count ? [restart + 120] : []),
                "keyframes at \(keys.indices.filter { keys[$0] }) with the camera back at \(restart)")
    }

    /// Four 1080p30 MJPEG cameras recorded at once by four processes with --encoder copy,
    /// as one small host would record them: none drops a frame, and each file holds its
    /// camera's 150 frames in order. (Each camera hands out a ring of ten JPEGs it made
    /// once, so its own work does not crowd the recorders.)
    @Test func fourFullHDCamerasAtOnceDropNothing() throws {
        let cameras = try (0..<4).map { try FakeCamera(path: "/dev/video\($0)", knobs: [.pictureRing(10)]) }
        let children = try cameras.map { camera in
            try ChildProcess([Tools.vtrecord, "--device", camera.path, "--encoder", "copy", "--size", "1920x1080",
                              "--fps", "30", "--frames", "150", "-o", camera.file("copy.mkv"),
                              "--json-summary", camera.file("summary.json"), "--quiet"],
                             environment: try camera.environment())
        }
        for (camera, child) in zip(cameras, children) {
            let r = child.wait(timeout: .seconds(60))
            #expect(r.status == 0, "\(camera.path): \(r.transcript)")
            let summary = try SegmentTests.json(camera.file("summary.json"))
            #expect(summary["frames_encoded"] as? Int == 150 && summary["dropped_queue"] as? Int == 0
                    && summary["dropped_driver"] as? Int == 0 && summary["frames_bad"] as? Int == 0,
                    "\(camera.path): \(summary)")
            // A ring of ten pictures: frame n shows the number n mod 10.
            let numbers = try Tools.counters(camera.file("copy.mkv"), width: 1920)
            #expect(numbers == (0..<150).map { Optional($0 % 10) }, "\(camera.path): \(numbers)")
        }
    }

    /// `--encoder auto --prefer-copy` stores an MJPEG camera's JPEGs, and encodes, saying why,
    /// when something needs the pictures or the camera sends no MJPEG.
    @Test func autoCopiesOnlyWhenPreferredAndPossible() throws {
        let cases: [([FakeCamera.Knob], [String], String, String?)] = [
            ([], [], "copy", nil),
            ([], ["--motion"], "x264", "--prefer-copy: encoding instead, as --motion needs the pictures"),
            ([.formats("YUYV:640x480@30")], [], "x264", "does not offer mjpeg"),
        ]
        for (knobs, extra, encoder, notice) in cases {
            let camera = try FakeCamera(knobs: knobs)
            let summaryPath = camera.file("summary.json")
            let r = try ChildProcess.run([Tools.vtrecord, "--device", camera.path, "--encoder", "auto", "--prefer-copy",
                                          "--size", "640x480", "--frames", "10", "--speed", "ultrafast",
                                          "-o", camera.file("out.mkv"), "--json-summary", summaryPath] + extra,
                                         environment: try camera.environment(), timeout: .seconds(30))
            try #require(r.status == 0, "\(extra): \(r.transcript)")
            #expect(try SegmentTests.json(summaryPath)["encoder"] as? String == encoder, "\(extra)")
            if let notice { #expect(r.standardError.contains(notice), "\(r.standardError)") }
        }
        let plain = try FakeCamera()
        let r = try ChildProcess.run([Tools.vtrecord, "--device", plain.path, "--size", "640x480", "--frames", "5",
                                      "--format", "mjpeg", "--speed", "ultrafast", "-o", plain.file("out.mkv"),
                                      "--json-summary", plain.file("summary.json"), "--quiet"],
                                     environment: try plain.environment(), timeout: .seconds(30))
        try #require(r.status == 0, "\(r.transcript)")
        #expect(try SegmentTests.json(plain.file("summary.json"))["encoder"] as? String != "copy",
                "auto without --prefer-copy encodes")
    }

    /// What copy cannot do is refused before anything is written, naming what to do instead.
    @Test func whatNeedsPicturesOrH264IsRefused() throws {
        let camera = try FakeCamera(knobs: [.formats("YUYV:640x480@30")])
        let refusals: [([String], Int32, String)] = [
            (["-o", camera.file("a.h264")], 2, ".mkv or .mp4"),
            (["-o", camera.file("a.ts")], 2, ".mkv or .mp4"),
            (["-o", camera.file("a.mkv"), "-o", "srt://127.0.0.1:9/"], 2, "a stream carries H.264"),
            (["-o", camera.file("a.mkv"), "--motion"], 2, "--motion needs the pictures"),
            (["-o", camera.file("a.mkv"), "--http", "127.0.0.1:0", "--live-size", "320x240"], 2,
             "--live-size needs the pictures"),
            (["-o", camera.file("a.mkv"), "--format", "h264", "--snapshot", camera.file("a.jpg")], 2,
             "--snapshot needs the pictures"),
            (["-o", camera.file("a.mkv"), "--format", "yuyv"], 2, "use --format mjpeg"),
            (["-o", camera.file("a.mkv"), "--encoder", "x264", "--check-frames", "decode"], 2,
             "--check-frames applies to --encoder copy"),
            (["-o", camera.file("a.mkv")], 3, "--encoder copy stores the camera's own MJPEG or H.264 frames, and it sends yuyv"),
            (["-o", camera.file("a.mkv"), "--format", "h264", "--timing", "cfr"], 2, "--timing cfr repeats frames"),
            (["-o", camera.file("a.mkv"), "--format", "h264", "--encoder", "x264"], 2, "add --encoder copy"),
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

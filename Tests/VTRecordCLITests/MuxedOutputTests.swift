import Foundation
import Testing
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `-o rec.mkv` and `-o rec.ts`: FFmpeg's muxers behind the same writer interface, read back by
/// ffmpeg, GStreamer and mkvmerge, with the raw stream of the same settings as the reference;
/// and what every container shares: segments and output faults.
@Suite struct MuxedOutputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var container: String
        var settings: [String]
        var testDescription: String { ([container] + settings).joined(separator: " ") }
    }

    static let cases = [
        Case(container: "mkv", settings: ["--speed", "veryfast", "--bframes", "3"]),
        Case(container: "mkv", settings: ["--speed", "ultrafast"]),
        Case(container: "ts", settings: ["--speed", "veryfast", "--bframes", "3"]),
        Case(container: "ts", settings: ["--speed", "ultrafast", "--fps", "25"]),
    ]

    @Test(arguments: cases)
    func containerHoldsTheRawStreamsPicturesWithTheirTimes(_ c: Case) throws {
        let dir = try TemporaryDirectory()
        let frames = 60
        let fps = c.settings.contains("25") ? 25.0 : 30.0
        // Two recordings compared picture for picture: one encoder thread (`Tools.reproducible`).
        let common = ["--test-pattern", "--size", "320x240", "--frames", "\(frames)", "--quiet"] + c.settings
            + Tools.reproducible
        let raw = try Tools.vtrecord(common + ["-o", dir.path("a.h264")])
        #expect(raw.status == 0, "\(raw.stderr)")
        let file = dir.path("a.\(c.container)")
        let muxed = try Tools.vtrecord(common + ["-o", file, "--json-summary", dir.path("s.json")])
        #expect(muxed.status == 0, "\(muxed.stderr)")
        let md5s = try Tools.frameMD5s(file)
        #expect(md5s.count == frames)
        #expect(md5s == (try Tools.frameMD5s(dir.path("a.h264"))))
        let (format, stream) = try MP4OutputTests.probe(file)
        #expect((format["format_name"] as? String)?.contains(c.container == "mkv" ? "matroska" : "mpegts") == true)
        #expect(stream["nb_read_frames"] as? String == "\(frames)")
        // The first picture at 0: with B-frames a transport stream's first decode times are
        // below 0, carried modulo 2^33 as the format's clock wraps anyway.
        #expect(MP4OutputTests.seconds(format["start_time"]) == 0, "\(format)")
        #expect(MP4OutputTests.seconds(stream["start_time"]) == 0, "\(stream)")
        #expect(abs(MP4OutputTests.seconds(format["duration"]) - Double(frames) / fps) <= 1 / fps, "\(format)")
        let summary = try SegmentTests.json(dir.path("s.json"))
        #expect(summary["container"] as? String == c.container)

        let decoded = try Self.gstreamerDecodedFrames(file, demuxer: c.container == "mkv" ? "matroskademux" : "tsdemux")
        #expect(decoded == frames, "GStreamer decoded \(decoded) frames")
    }

    /// The pictures GStreamer decodes from a file with `demuxer`, h264parse and avdec_h264:
    /// fakesink -v prints a "chain" message for each picture it is given.
    static func gstreamerDecodedFrames(_ path: String, demuxer: String) throws -> Int {
        let gst = try Tools.run("gst-launch-1.0", ["filesrc", "location=\(path)", "!", demuxer, "!", "h264parse",
                                                   "!", "avdec_h264", "!", "fakesink", "silent=false", "-v"])
        #expect(gst.status == 0, "\(gst.stderr)")
        return gst.stdoutText.split(separator: "\n").filter { $0.contains("last-message = chain") }.count
    }

    @Test func mkvmergeIdentifiesTheMatroskaFile() throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("m.mkv")
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "45", "--quiet", "-o", file])
        #expect(r.status == 0, "\(r.stderr)")
        let identify = try Tools.run("mkvmerge", ["--identify", "--identification-format", "json", file])
        #expect(identify.status == 0, "\(identify.stdoutText)")
        let json = try #require(try JSONSerialization.jsonObject(with: identify.stdout) as? [String: Any])
        let tracks = try #require(json["tracks"] as? [[String: Any]])
        #expect(tracks.count == 1)
        #expect(tracks.first?["codec"] as? String == "AVC/H.264/MPEG-4p10")
        let container = try #require(json["container"] as? [String: Any])
        let properties = try #require(container["properties"] as? [String: Any])
        #expect((properties["writing_application"] as? String)?.hasPrefix("vtrecord") == true, "\(properties)")
        // Duration and an index (Cues) at a clean end.
        let duration = (properties["duration"] as? Int) ?? 0
        #expect(abs(Double(duration) / 1e9 - 1.5) <= 1.0 / 30, "duration \(duration) ns")
        // mkvinfo stops at the first cluster unless asked for everything; the Cues come last.
        let info = try Tools.run("mkvinfo", ["-v", file])
        #expect(info.stdoutText.contains("Cues"), "no Cues in \(info.stdoutText.prefix(2000))")
    }

    /// A Y4M file into every container: the same pictures as the raw stream, at the file's rate.
    @Test(arguments: ["mp4", "mkv", "ts"])
    func y4mInputGoesIntoEveryContainer(_ container: String) throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.y4m")
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=2",
                                            "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", input])
        try #require(made.status == 0, "\(made.stderr)")
        let common = ["--input", input, "--speed", "veryfast", "--quiet"] + Tools.reproducible
        let raw = try Tools.vtrecord(common + ["-o", dir.path("a.h264")])
        #expect(raw.status == 0, "\(raw.stderr)")
        let file = dir.path("a.\(container)")
        let muxed = try Tools.vtrecord(common + ["-o", file])
        #expect(muxed.status == 0, "\(muxed.stderr)")
        let md5s = try Tools.frameMD5s(file)
        let reference = try Tools.frameMD5s(dir.path("a.h264"))
        #expect(md5s.count == 50 && md5s == reference)
        let (format, stream) = try MP4OutputTests.probe(file)
        #expect(abs(MP4OutputTests.seconds(format["duration"]) - 2) <= 1.0 / 25, "\(format)")
        #expect(stream["nb_read_frames"] as? String == "50")
    }

    /// A transport stream to a pipe, as streaming tools take it.
    @Test func transportStreamGoesThroughAPipe() throws {
        let r = try Tools.shell("\"$VTRECORD\" --test-pattern --size 320x240 --frames 40 --container ts -o - --quiet "
                                + "| ffprobe -v error -count_frames -show_entries format=format_name:stream=nb_read_frames -of json -i -")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdoutText.contains("\"nb_read_frames\": \"40\""), "\(r.stdoutText)")
        #expect(r.stdoutText.contains("mpegts"))
    }

    /// Every keyframe of a transport stream is preceded by a PAT and a PMT, so a receiver can
    /// start at any of them.
    @Test func patAndPMTComeBeforeEveryKeyframe() throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("k.ts")
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "90", "--keyint", "15",
                                    "--quiet", "-o", file])
        #expect(r.status == 0, "\(r.stderr)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(bytes.count % 188 == 0)
        var lastPAT = -1, lastPMT = -1
        var keyframes = 0
        var pmtPID = -1
        for index in 0..<(bytes.count / 188) {
            let packet = bytes[(index * 188)..<(index * 188 + 188)]
            let at = packet.startIndex
            #expect(packet[at] == 0x47)
            let pid = Int(packet[at + 1] & 0x1F) << 8 | Int(packet[at + 2])
            let payloadStart = packet[at + 1] & 0x40 != 0
            if pid == 0 {
                lastPAT = index
                // The PMT's PID from the first program of the PAT.
                let pointer = Int(packet[at + 4])
                let section = at + 5 + pointer
                pmtPID = Int(packet[section + 10] & 0x1F) << 8 | Int(packet[section + 11])
                continue
            }
            if pid == pmtPID { lastPMT = index; continue }
            // A PES start whose adaptation field sets random_access_indicator: a keyframe.
            let hasAdaptation = packet[at + 3] & 0x20 != 0
            if payloadStart && hasAdaptation && packet[at + 4] > 0 && packet[at + 5] & 0x40 != 0 {
                keyframes += 1
                #expect(lastPAT >= 0 && lastPMT > lastPAT && lastPMT < index && index - lastPAT < 8,
                        "keyframe at packet \(index): PAT at \(lastPAT), PMT at \(lastPMT)")
            }
        }
        #expect(keyframes == 6)
    }

    /// Segments: each file complete (an MP4 finalized), starting with a keyframe at its own
    /// time 0, and together every frame once.
    @Test(arguments: ["mp4", "mkv", "ts"])
    func segmentsAreEachACompleteFile(_ container: String) throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--fps", "30", "--duration", "5s",
                                    "--speed", "veryfast", "--segment-time", "2s", "--quiet",
                                    "-o", dir.path("seg-{n}.\(container)")])
        #expect(r.status == 0, "\(r.stderr)")
        let files = try SegmentTests.files(in: dir)
        #expect(files == ["seg-0", "seg-1", "seg-2"].map { "\($0).\(container)" })
        var counters: [Int?] = []
        for (file, frames) in zip(files, [60, 60, 30]) {
            if container == "mp4" {
                #expect(try MP4OutputTests.topLevelBoxes(dir.path(file)) == ["ftyp", "mdat", "moov"], "\(file)")
            }
            let (format, stream) = try MP4OutputTests.probe(dir.path(file))
            #expect(stream["nb_read_frames"] as? String == "\(frames)", "\(file)")
            let start = MP4OutputTests.seconds(format["start_time"])
            #expect(start == 0, "\(file): \(format)")
            #expect(abs(MP4OutputTests.seconds(format["duration"]) - Double(frames) / 30) <= 1.0 / 30, "\(file): \(format)")
            counters += try Tools.counters(dir.path(file), width: 320)
        }
        #expect(counters == (0..<150).map { $0 })
    }

    /// libavformat is loaded only when it is needed. With its library unreadable (a bind mount
    /// of /dev/null over it in a private mount namespace): a raw stream, an MP4 and a Matroska
    /// file are written as ever; MPEG-TS output is refused before any file is made (exit 5)
    /// and `inspect` of a container says so (exit 2), each in one line naming the package.
    @Test func libavformatIsLoadedOnlyWhenNeeded() throws {
        let dir = try TemporaryDirectory()
        let library = "/lib/x86_64-linux-gnu/libavformat.so.59"
        try #require(FileManager.default.fileExists(atPath: library), "the libavformat the build uses")
        let ts = dir.path("a.ts"), mkv = dir.path("a.mkv"), mp4 = dir.path("a.mp4"), raw = dir.path("a.h264")
        let record = "\"$VTRECORD\" --test-pattern --size 160x120 --frames 10 --quiet -o"
        let script = """
            mount --bind /dev/null \(library) || exit 99
            for f in \(raw) \(mp4) \(mkv); do \(record) $f || echo "failed: $f"; done
            \(record) \(ts) 2> \(dir.path("ts.err")); echo "ts $?"
            "$VTRECORD" inspect \(mkv) 2> \(dir.path("inspect.err")) > /dev/null; echo "inspect $?"
            """
        let r = try Tools.shell("unshare --mount bash -c '\(script)'")
        try #require(r.status == 0, "a private mount namespace is needed for this test: \(r.stderr)")
        #expect(!r.stdoutText.contains("failed"), "\(r.stdoutText)")
        #expect(r.stdoutText.contains("ts 5") && r.stdoutText.contains("inspect 2"), "\(r.stdoutText)")
        #expect(!FileManager.default.fileExists(atPath: ts), "no transport stream file is left")
        for name in ["ts.err", "inspect.err"] {
            let text = try String(contentsOfFile: dir.path(name), encoding: .utf8)
            #expect(text.split(separator: "\n").count == 1 && text.contains("libavformat59"), "\(name): \(text)")
        }
        // Outside the namespace the files play, and the transport stream is written.
        for file in [raw, mp4, mkv] { #expect(try Tools.frameMD5s(file).count == 10, "\(file)") }
        let written = try Tools.vtrecord(["--test-pattern", "--size", "160x120", "--frames", "10", "--quiet", "-o", ts])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try Tools.frameMD5s(ts).count == 10)
    }

    /// A full disk and a file size limit: exit 5, one line, and the file plays to its last
    /// complete fragment, cluster or packet.
    @Test(arguments: ["mp4", "mkv", "ts"])
    func outputFaultsLeaveAFileThatPlays(_ container: String) throws {
        let full = try Tools.vtrecord(["--test-pattern", "--size", "160x120", "--frames", "10", "--container", container,
                                       "-o", "/dev/full"])
        #expect(full.status == 5, "\(full.stderr)")
        #expect(OutputTests.errorLines(full.stderr).count == 1, "\(full.stderr)")

        let dir = try TemporaryDirectory()
        let path = dir.path("limit.\(container)")
        let r = try Tools.shell("ulimit -f 100; exec \"$VTRECORD\" --test-pattern --size 640x480 --frames 300 "
                                + "--keyint 15 -o '\(path)'")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(OutputTests.errorLines(r.stderr).count == 1 && r.stderr.contains("file size limit"), "\(r.stderr)")
        if container == "mp4" {
            let boxes = try MP4OutputTests.topLevelBoxes(path)
            #expect(Array(boxes.prefix(2)) == ["ftyp", "moov"] && boxes.contains("moof"), "\(boxes)")
            #expect(r.stderr.contains("the file ends at the last complete fragment"), "\(r.stderr)")
        }
        let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        let counters = try Tools.counters(path, width: 640)
        #expect(counters.count >= 10 && counters == (0..<counters.count).map { $0 }, "\(counters.count) frames")
    }
}

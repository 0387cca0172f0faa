import Foundation
import Testing
import VTH264
import VTTestSupport

/// `--segment-time`, `--segment-size`, `--max-files` and `-o` templates: every file plays on
/// its own, and the files together hold every frame exactly once, in order.
@Suite struct SegmentTests {
    /// The NAL unit types of a file, in order.
    static func nalTypes(_ path: String) throws -> [NALUnitType] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        return AnnexB.nalUnitRanges(in: bytes).filter { !$0.isEmpty }.map { NALUnitType(headerByte: bytes[$0.lowerBound]) }
    }

    /// Checks that a file decodes alone without a single error and starts with SPS, PPS and an
    /// IDR picture (x264's SEI may sit before the slice); returns its frame counters.
    static func playsAlone(_ path: String, width: Int) throws -> [Int?] {
        let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(path) does not decode on its own: \(decode.stderr)")
        let types = try nalTypes(path)
        #expect(Array(types.prefix(2)) == [.sps, .pps], "\(path) starts with \(types.prefix(4))")
        let firstSlice = types.firstIndex { $0.isVCL }
        #expect(firstSlice.map { types[$0] } == .sliceIDR, "\(path): the first picture is not an IDR")
        #expect(firstSlice.map { types[2..<$0].allSatisfy { $0 == .sei } } ?? false, "\(path): \(types.prefix(6))")
        return try Tools.counters(path, width: width)
    }

    static func json(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func files(in dir: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()
    }

    static let tenSeconds = ["--test-pattern", "--size", "320x240", "--fps", "30", "--duration", "10s"]

    struct TimeCase: CustomTestStringConvertible, Sendable {
        var arguments: [String]
        var framesPerFile: [Int]
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let timeCases = [
        // Default speed medium: 3 B-frames, 40 frames of lookahead; IDRs every 2 s anyway.
        TimeCase(arguments: ["--segment-time", "2s"], framesPerFile: [60, 60, 60, 60, 60]),
        // No IDR of the encoder's own at the boundaries: each must be forced.
        TimeCase(arguments: ["--segment-time", "2s", "--keyint", "10s"], framesPerFile: [60, 60, 60, 60, 60]),
        TimeCase(arguments: ["--segment-time", "1.5s", "--keyint", "250", "--bframes", "2"],
                 framesPerFile: [45, 45, 45, 45, 45, 45, 30]),
        TimeCase(arguments: ["--segment-time", "2s", "--keyint", "10s", "--bframes", "0", "--speed", "veryfast"],
                 framesPerFile: [60, 60, 60, 60, 60]),
    ]

    @Test(arguments: timeCases)
    func segmentTimeGivesFilesThatPlayAloneWithEveryFrameOnce(_ timeCase: TimeCase) throws {
        let dir = try TemporaryDirectory()
        let summary = dir.path("summary.json")
        let r = try Tools.vtrecord(Self.tenSeconds + timeCase.arguments
                                   + ["-o", dir.path("seg-{n}.h264"), "--json-summary", summary, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let expected = timeCase.framesPerFile.indices.map { dir.path("seg-\($0).h264") }
        #expect(try Self.files(in: dir) == (expected.map { URL(fileURLWithPath: $0).lastPathComponent } + ["summary.json"]).sorted())
        var counters: [Int?] = []
        for (path, frames) in zip(expected, timeCase.framesPerFile) {
            let numbers = try Self.playsAlone(path, width: 320)
            #expect(numbers.count == frames, "\(path)")
            counters += numbers
        }
        #expect(counters == (0..<300).map { Optional($0) })
        let json = try Self.json(summary)
        #expect(json["segments"] as? [String] == expected)
        #expect(json["output"] as? String == dir.path("seg-{n}.h264"))
        #expect(json["frames_encoded"] as? Int == 300)
        if timeCase.arguments.contains("--keyint") {
            // Exactly the forced IDRs: one per file.
            #expect(json["keyframes"] as? Int == timeCase.framesPerFile.count)
        }
        if !timeCase.arguments.contains("--bframes") {
            #expect((json["settings"] as? [String: Any])?["bframes"] as? Int == 3)
        }
    }

    @Test func segmentTimeThroughVAAPI() throws {
        let va = try FakeVADevice()
        let template = va.file("seg-{n:02}.h264")
        let summary = va.file("summary.json")
        let r = try Tools.run(Tools.vtrecord, Self.tenSeconds + [
            "--encoder", "vaapi", "--va-device", va.devicePath, "--keyint", "10s", "--segment-time", "2s",
            "-o", template, "--json-summary", summary, "--quiet"], environment: try va.environment())
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try va.report().violations.isEmpty)
        let json = try Self.json(summary)
        #expect(json["encoder"] as? String == "vaapi")
        // The driver has backward references: B-frames are on, and must not cross a boundary.
        #expect((json["settings"] as? [String: Any])?["bframes"] as? Int == 2)
        #expect(json["keyframes"] as? Int == 5)
        var counters: [Int?] = []
        for n in 0..<5 {
            let numbers = try Self.playsAlone(va.file(String(format: "seg-%02d.h264", n)), width: 320)
            #expect(numbers.count == 60)
            counters += numbers
        }
        #expect(counters == (0..<300).map { Optional($0) })
        #expect(!FileManager.default.fileExists(atPath: va.file("seg-05.h264")))
    }

    /// A camera's presentation times are capture times in microseconds, off the frame grid by
    /// the camera's jitter: the keyframe forced at a boundary must still be recognised when it
    /// comes out of x264, which counts time in whole frames.
    @Test func cameraTimesSplitAtTheFirstFrameOfEachHalfSecond() throws {
        let camera = try FakeCamera(knobs: [.jitter(microseconds: 12_000)])
        let summary = camera.file("summary.json")
        let r = try Tools.run(Tools.vtrecord, [
            "--device", camera.path, "--format", "nv12", "--size", "640x480", "--fps", "30", "--frames", "90",
            "--timing", "passthrough", "--speed", "ultrafast", "--keyint", "10s", "--segment-time", "0.5s",
            "-o", camera.file("cam-{device}-{n}.h264"), "--json-summary", summary, "--quiet",
        ], environment: try camera.environment())
        #expect(r.status == 0, "\(r.stderr)")
        let json = try Self.json(summary)
        let segments = try #require(json["segments"] as? [String])
        #expect(segments.count == 6, "\(segments)")
        #expect(segments.first == camera.file("cam-video0-0.h264"))
        #expect(json["keyframes"] as? Int == segments.count)
        var counters: [Int?] = []
        for path in segments { counters += try Self.playsAlone(path, width: 640) }
        #expect(counters == (0..<90).map { Optional($0) })
    }

    @Test func maxFilesKeepsTheNewest() throws {
        let dir = try TemporaryDirectory()
        let summary = dir.path("summary.json")
        let r = try Tools.vtrecord(Self.tenSeconds + ["--segment-time", "2s", "--max-files", "2", "-o", dir.path("ring-{n}.h264"),
                                                      "--json-summary", summary, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.files(in: dir) == ["ring-3.h264", "ring-4.h264", "summary.json"])
        let counters = try Self.playsAlone(dir.path("ring-3.h264"), width: 320)
            + Self.playsAlone(dir.path("ring-4.h264"), width: 320)
        #expect(counters == (180..<300).map { Optional($0) })
        #expect(try Self.json(summary)["segments"] as? [String] == (0..<5).map { dir.path("ring-\($0).h264") })
    }

    @Test(arguments: [["--tune", "zerolatency"], []])
    func segmentSizeSplitsNearTheSize(_ extra: [String]) throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(Self.tenSeconds + extra + ["--segment-size", "100k", "-o", dir.path("size-{n:03}.h264"), "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let names = try Self.files(in: dir)
        #expect(names.count >= 3, "\(names)")
        #expect(names == names.indices.map { String(format: "size-%03d.h264", $0) })
        var counters: [Int?] = []
        for (index, name) in names.enumerated() {
            let size = try #require(try FileManager.default.attributesOfItem(atPath: dir.path(name))[.size] as? Int)
            if index < names.count - 1 {
                #expect(size >= 100_000, "\(name): \(size) bytes")
                // Without encoder delay a file ends within a frame or two of the size; with
                // medium's 40-frame lookahead, about that many frames later.
                #expect(size < (extra.isEmpty ? 200_000 : 110_000), "\(name): \(size) bytes")
            } else {
                #expect(size > 0 && size < 110_000)
            }
            counters += try Self.playsAlone(dir.path(name), width: 320)
        }
        #expect(counters == (0..<300).map { Optional($0) })
    }

    @Test func templateFieldsExpand() throws {
        let dir = try TemporaryDirectory()
        let before = Date()
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "60", "--segment-time", "1s",
                                    "-o", dir.path("%Y%m%d-%H%M%S_{device}_{preset}_{n:03}.h264"), "--quiet"])
        let after = Date()
        #expect(r.status == 0, "\(r.stderr)")
        let names = try Self.files(in: dir)
        #expect(names.count == 2, "\(names)")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        for (n, name) in names.enumerated() {
            let match = try #require(name.wholeMatch(of: /(\d{8}-\d{6})_test-pattern_default_(\d{3})\.h264/), "\(name)")
            #expect(match.output.2 == String(format: "%03d", n))
            let stamp = try #require(formatter.date(from: String(match.output.1)))
            #expect(stamp >= before.addingTimeInterval(-1) && stamp <= after, "\(name) is not the time of the run")
        }
    }

    @Test func timeFieldsAreInTheLocalZone() throws {
        let dir = try TemporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "Asia/Tokyo"
        let r = try Tools.run(Tools.vtrecord, ["--test-pattern", "--size", "320x240", "--frames", "5",
                                               "-o", dir.path("%z-%Z.h264"), "--quiet"], environment: environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.files(in: dir) == ["+0900-JST.h264"])
    }

    @Test func deviceFieldNamesTheInput() throws {
        let dir = try TemporaryDirectory()
        let clip = dir.path("my.clip.y4m")
        let made = try Tools.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25",
                                            "-frames:v", "5", "-pix_fmt", "yuv420p", clip])
        try #require(made.status == 0, "\(made.stderr)")
        let file = try Tools.vtrecord(["--input", clip, "-o", dir.path("{device}-{n}.h264"), "--quiet"])
        #expect(file.status == 0, "\(file.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.path("my.clip-0.h264")))
        let piped = try Tools.vtrecord(["--input", "-", "-o", dir.path("{device}.h264"), "--quiet"], stdin: clip)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(try Tools.frameMD5s(dir.path("stdin.h264")).count == 5)
    }

    /// A file where a segment is to go ends the recording with exit 5, the files before it
    /// whole. `{n}` numbers from 0 here because the folder is a field (`{device}`), which the
    /// numbering of a run started again does not look into.
    @Test func existingSegmentFileEndsWithExitFiveKeepingEarlierFiles() throws {
        let dir = try TemporaryDirectory()
        let folder = dir.path("test-pattern")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: folder + "/seg-2.h264", contents: Data("precious".utf8)))
        let template = dir.path("{device}/seg-{n}.h264")
        let r = try Tools.vtrecord(Self.tenSeconds + ["--segment-time", "2s", "-o", template])
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("seg-2.h264") && r.stderr.contains("--overwrite"), "\(r.stderr)")
        #expect(try String(contentsOfFile: folder + "/seg-2.h264", encoding: .utf8) == "precious")
        let counters = try Self.playsAlone(folder + "/seg-0.h264", width: 320)
            + Self.playsAlone(folder + "/seg-1.h264", width: 320)
        #expect(counters == (0..<120).map { Optional($0) })

        let again = try Tools.vtrecord(Self.tenSeconds + ["--segment-time", "2s", "-o", template, "--overwrite", "--quiet"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Self.playsAlone(folder + "/seg-2.h264", width: 320) == (120..<180).map { Optional($0) })
    }

    /// A recording started again (a service restarted) goes on after the highest `{n}` the run
    /// before left in the folder, instead of stopping at the first name taken; files of
    /// another template do not count.
    @Test func aRecordingStartedAgainGoesOnNumbering() throws {
        let dir = try TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: dir.path("other-9.h264"), contents: Data("another template".utf8)))
        let fourSeconds = ["--test-pattern", "--size", "320x240", "--fps", "30", "--duration", "4s", "--segment-time", "2s",
                           "-o", dir.path("cam-{n:02}.h264"), "--quiet"]
        let first = try Tools.vtrecord(fourSeconds + ["--json-summary", dir.path("first.json")])
        #expect(first.status == 0, "\(first.stderr)")
        let second = try Tools.vtrecord(fourSeconds + ["--json-summary", dir.path("second.json")])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try Self.json(dir.path("first.json"))["segments"] as? [String] == ["00", "01"].map { dir.path("cam-\($0).h264") })
        #expect(try Self.json(dir.path("second.json"))["segments"] as? [String] == ["02", "03"].map { dir.path("cam-\($0).h264") })
        for pair in [["00", "01"], ["02", "03"]] {
            let counters = try pair.flatMap { try Self.playsAlone(dir.path("cam-\($0).h264"), width: 320) }
            #expect(counters == (0..<120).map { Optional($0) }, "\(pair)")
        }
    }

    @Test func withoutSegmentsNIsZero() throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "10", "-o", dir.path("one-{n:02}.h264"),
                                    "--json-summary", "-", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.files(in: dir) == ["one-00.h264"])
        let json = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
        #expect(json["segments"] as? [String] == [dir.path("one-00.h264")])
    }

    struct Refusal: CustomTestStringConvertible, Sendable {
        var arguments: [String]
        var message: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let refusals = [
        Refusal(arguments: ["-o", "OUT/x-{camera}.h264"], message: "{camera}"),
        Refusal(arguments: ["-o", "OUT/x-{n.h264"], message: "closing"),
        Refusal(arguments: ["-o", "OUT/100%.h264"], message: "%%"),
        Refusal(arguments: ["-o", "-", "--segment-time", "2s"], message: "standard output"),
        Refusal(arguments: ["-o", "OUT/x.h264", "--segment-time", "2s"], message: "{n}"),
        Refusal(arguments: ["-o", "OUT/x-%H%M%S.h264", "--segment-size", "1M"], message: "{n}"),
        Refusal(arguments: ["-o", "OUT/x-{n}.h264", "--max-files", "2"], message: "--segment-time"),
        Refusal(arguments: ["-o", "OUT/x-{n}.h264", "--segment-time", "2s", "--max-files", "0"], message: "at least 1"),
        Refusal(arguments: ["-o", "OUT/x-{n}.h264", "--segment-time", "0s"], message: "--segment-time"),
        Refusal(arguments: ["-o", "OUT/x-{n}.h264", "--segment-size", "big"], message: "--segment-size"),
    ]

    @Test(arguments: refusals)
    func badSegmentOptionsExitTwoAndCreateNothing(_ refusal: Refusal) throws {
        let dir = try TemporaryDirectory()
        let arguments = refusal.arguments.map { $0.replacingOccurrences(of: "OUT", with: dir.url.path) }
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "10"] + arguments, cwd: dir.url)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains(refusal.message), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        #expect(try Self.files(in: dir).isEmpty)
    }
}

import Foundation
import Testing

/// vtrecord must feed x264 the same pictures with the same settings as the x264 CLI: for each
/// case both outputs decode to identical frames. A difference means different pictures or
/// different settings reached the encoder.
@Suite struct X264EquivalenceTests {
    /// A 640x360, 90-frame Y4M (ffmpeg's testsrc2 at 25 fps), made in the test's own directory:
    /// the settings, not the size, are what is compared, and a small picture keeps ten
    /// encodes by each side cheap.
    static func makeInput(in dir: TemporaryDirectory) throws -> String {
        let path = dir.path("testsrc2-360p.y4m")
        let r = try Tools.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25",
                                         "-frames:v", "90", "-pix_fmt", "yuv420p", path])
        try #require(r.status == 0, "ffmpeg could not make the input: \(r.stderr)")
        return path
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let ours: [String]
        let x264: [String]
        /// Bit-rate modes compare against the CLI writing Matroska: x264's rate control counts
        /// the bytes it emits, and only that output runs x264 length-prefixed like vtrecord.
        let referenceExtension: String
        var testDescription: String { ours.joined(separator: " ") }
    }

    // The input is 25 fps, so vtrecord's default keyint of 2s is 50 frames.
    static let cases: [Case] = [
        Case(ours: ["--speed", "veryfast", "--tune", "zerolatency", "--keyint", "30", "--crf", "23"],
             x264: ["--preset", "veryfast", "--tune", "zerolatency", "--keyint", "30", "--crf", "23"],
             referenceExtension: "h264"),
        Case(ours: ["--keyint", "30", "--crf", "23"],
             x264: ["--keyint", "30", "--crf", "23"], referenceExtension: "h264"),
        Case(ours: ["--bframes", "3"], x264: ["--bframes", "3", "--keyint", "50"], referenceExtension: "h264"),
        Case(ours: ["--speed", "medium", "--crf", "20"],
             x264: ["--preset", "medium", "--crf", "20", "--keyint", "50"], referenceExtension: "h264"),
        Case(ours: ["--profile", "main", "--entropy", "cavlc", "--keyint", "2s"],
             x264: ["--profile", "main", "--no-cabac", "--keyint", "50"], referenceExtension: "h264"),
        Case(ours: ["--profile", "baseline", "--level", "3.1"],
             x264: ["--profile", "baseline", "--level", "3.1", "--keyint", "50"], referenceExtension: "h264"),
        Case(ours: ["--rate-control", "abr", "--bitrate", "2M"],
             x264: ["--bitrate", "2000", "--keyint", "50"], referenceExtension: "mkv"),
        Case(ours: ["--rate-control", "vbr", "--bitrate", "1M", "--max-bitrate", "2M", "--threads", "1"],
             x264: ["--bitrate", "1000", "--vbv-maxrate", "2000", "--vbv-bufsize", "2000", "--threads", "1",
                    "--keyint", "50"], referenceExtension: "mkv"),
        Case(ours: ["--rate-control", "cbr", "--bitrate", "2M", "--threads", "1"],
             x264: ["--bitrate", "2000", "--vbv-maxrate", "2000", "--vbv-bufsize", "2000", "--nal-hrd", "cbr",
                    "--threads", "1", "--keyint", "50"], referenceExtension: "mkv"),
    ]

    @Test(arguments: cases)
    func samePicturesAsX264CLI(_ c: Case) throws {
        let dir = try TemporaryDirectory()
        let input = try Self.makeInput(in: dir)
        let ours = dir.path("ours.h264")
        let reference = dir.path("ref.\(c.referenceExtension)")

        let r = try Tools.vtrecord(["--input", input, "-o", ours, "--quiet", "--encoder", "x264"] + c.ours)
        try #require(r.status == 0, "vtrecord failed: \(r.stderr)")
        let x = try Tools.run("x264", ["--quiet", "-o", reference] + c.x264 + [input])
        try #require(x.status == 0, "x264 failed: \(x.stderr)")

        let ourFrames = try Tools.frameMD5s(ours)
        let referenceFrames = try Tools.frameMD5s(reference)
        #expect(ourFrames.count == 90)
        #expect(referenceFrames.count == 90)
        let firstDifference = zip(ourFrames, referenceFrames).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(ourFrames == referenceFrames, "decoded frames differ from frame \(firstDifference ?? -1)")
    }

    /// The comparison itself must notice a one-step difference in settings.
    @Test func differentSettingsGiveDifferentPictures() throws {
        let dir = try TemporaryDirectory()
        let input = try Self.makeInput(in: dir)
        let ours = dir.path("ours.h264")
        let reference = dir.path("ref.h264")
        #expect(try Tools.vtrecord(["--input", input, "-o", ours, "--quiet", "--encoder", "x264", "--keyint", "30", "--crf", "23",
                                    "--frames", "10"]).status == 0)
        #expect(try Tools.run("x264", ["--quiet", "-o", reference, "--keyint", "30", "--crf", "24",
                                       "--frames", "10", input]).status == 0)
        let a = try Tools.frameMD5s(ours)
        let b = try Tools.frameMD5s(reference)
        #expect(a.count == 10 && b.count == 10)
        #expect(a != b)
    }
}

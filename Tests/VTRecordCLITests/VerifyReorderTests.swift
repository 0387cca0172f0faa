import Foundation
import Testing
import VTH264

/// Streams whose SPS does not say how far pictures are reordered (no VUI
/// bitstream_restriction, so no max_num_reorder_frames), as many cameras and other encoders
/// write them. The standard then lets pictures be reordered as deep as the level's picture
/// buffer, so a decoder must hold them that long (these nine all come out at the final flush);
/// one that guesses shallower finds, in a B-pyramid, a picture due before one it already
/// gave, and libavcodec drops it. Each stream must verify clean, with every frame decoded, as
/// ffmpeg decodes it.
extension VerifyTests {
    /// Nine frames of x264 with three B-frames between references (I B B B P B B B P), the
    /// middle B of each three a reference for the other two (B-pyramid), then the
    /// bitstream_restriction taken out of its SPS.
    static func streamWithoutReorderInformation(_ dir: TemporaryDirectory, size: String, cabac: Bool) throws -> String {
        let coded = dir.path("coded.h264")
        let made = try Tools.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25",
                                            "-frames:v", "9", "-c:v", "libx264", "-bf", "3",
                                            "-x264-params", "b-adapt=0:b-pyramid=normal:cabac=\(cabac ? 1 : 0)", "-f", "h264", coded])
        try #require(made.status == 0, "\(made.stderr)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: coded)))
        var stripped: [UInt8] = []
        for range in AnnexB.nalUnitRanges(in: bytes) {
            var nal = Array(bytes[range])
            if NALUnitType(headerByte: nal[0]) == .sps {
                var sps = try SequenceParameterSet(nalUnit: nal)
                try #require(sps.vui?.bitstreamRestriction != nil, "x264 writes max_num_reorder_frames")
                sps.vui?.bitstreamRestriction = nil
                nal = sps.nalUnit(refIdc: (nal[0] >> 5) & 3)
            }
            stripped += AnnexB.startCode + nal
        }
        let path = dir.path("\(size)-\(cabac ? "cabac" : "cavlc").h264")
        try Data(stripped).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(arguments: [("640x320", true), ("640x320", false), ("1024x768", false)])
    func aStreamWithoutReorderInformationIsCleanWithEveryFrame(_ size: String, _ cabac: Bool) throws {
        let dir = try TemporaryDirectory()
        let path = try Self.streamWithoutReorderInformation(dir, size: size, cabac: cabac)

        // What FFmpeg reads in the stream: B-frames, the entropy coder asked for, and no
        // bitstream_restriction.
        let trace = try Tools.run("ffmpeg", ["-v", "info", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"])
        #expect(trace.status == 0, "\(trace.stderr)")
        // "[trace_headers @ 0x…] 156   bitstream_restriction_flag   1 = 1": the value ends the line.
        let lines = trace.stderr.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        func values(_ name: String) -> Set<String> { Set(lines.filter { $0.contains(name) }.compactMap(\.last)) }
        #expect(values("bitstream_restriction_flag") == ["0"], "\(trace.stderr)")
        #expect(values("max_num_reorder_frames").isEmpty)
        #expect(values("entropy_coding_mode_flag") == [cabac ? "1" : "0"])
        let types = try Tools.ffprobe(path, ["-show_entries", "frame=pict_type"])
        let pictTypes = ((types["frames"] as? [[String: Any]]) ?? []).compactMap { $0["pict_type"] as? String }
        #expect(pictTypes.filter { $0 == "B" }.count == 6, "\(pictTypes)")

        // ffmpeg decodes all nine, without an error.
        let decoded = try Tools.run("ffmpeg", ["-v", "error", "-i", path, "-fps_mode", "passthrough", "-f", "framemd5", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        let ffmpegPictures = decoded.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }.count
        #expect(ffmpegPictures == 9)

        let verdict = try Self.verify([path])
        #expect(verdict.status == 0, "\(verdict.stderr) \(verdict.problems)")
        #expect(verdict.problems.isEmpty, "\(verdict.problems)")
        #expect(verdict.file["frames"] as? Int == 9)
        #expect(verdict.file["decoded_frames"] as? Int == ffmpegPictures, "\(verdict.file)")
    }
}

import Foundation
import Testing

/// `vtrecord remux` of an MP4 cut inside a frame, as a crash or a full disk leaves a
/// recording (fragmented, its last sample short): libavformat hands out the part of the frame
/// that is there, and remux must not copy it into the new file as if it were whole.
extension RemuxTests {
    /// A fragmented MP4 of 60 frames (GOPs of 15, B-frames) cut in the middle of frame `unit`
    /// (decode order), with ffprobe's packets of the whole file.
    static func cutMP4(_ dir: TemporaryDirectory, inside unit: Int) throws -> (path: String, packets: [(pos: Int, size: Int)]) {
        let path = try VerifyTests.record(dir, "cut.mp4", ["--mp4-fragmented"])
        let packets = try VerifyTests.packets(path)
        try #require(packets.count == 60)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(packets[unit].pos + packets[unit].size / 2).write(to: URL(fileURLWithPath: path))
        // The demuxer still gives the frame that was cut, short.
        let left = try VerifyTests.packets(path)
        try #require(left.count == unit + 1 && left[unit].size < packets[unit].size, "\(left.suffix(2))")
        return (path, packets)
    }

    /// Cut inside its first frame: nothing whole to write. One line naming the frame, exit 2
    /// as for any file that cannot be read, and no output file.
    @Test func anMP4CutInsideItsFirstFrameWritesNothing() throws {
        let dir = try TemporaryDirectory()
        let (path, packets) = try Self.cutMP4(dir, inside: 0)
        let out = dir.path("out.mp4")
        let r = try Tools.vtrecord(["remux", path, "-o", out])
        #expect(r.status == 2, "\(r.stderr)")
        let lines = OutputTests.errorLines(r.stderr)
        #expect(lines.count == 1, "\(r.stderr)")
        #expect(lines.first?.contains("does not parse") == true, "\(r.stderr)")
        #expect(lines.first?.contains("frame 0 at byte \(packets[0].pos)") == true, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// Cut inside frame 40: frames 0–39 are written and decode without an error in ffmpeg; the
    /// cut one is left out, one line says so, and the exit status is 6, as `verify` gives for
    /// a damaged file.
    @Test(arguments: ["mp4", "mkv", "ts", "h264"])
    func anMP4CutInsideAFrameGivesTheFramesBeforeIt(_ container: String) throws {
        let dir = try TemporaryDirectory()
        let (path, packets) = try Self.cutMP4(dir, inside: 40)
        let out = dir.path("out.\(container)")
        let r = try Tools.vtrecord(["remux", path, "-o", out])
        #expect(r.status == 6, "\(r.stderr)")
        let lines = OutputTests.errorLines(r.stderr)
        #expect(lines.count == 1, "\(r.stderr)")
        #expect(lines.first?.contains("1 frame does not parse") == true, "\(r.stderr)")
        #expect(lines.first?.contains("frame 40 at byte \(packets[40].pos)") == true, "\(r.stderr)")
        #expect(lines.first?.contains("40 frames") == true, "\(r.stderr)")
        let probe = try Tools.ffprobe(out, ["-count_packets", "-select_streams", "v:0", "-show_entries", "stream=nb_read_packets"])
        let written = ((probe["streams"] as? [[String: Any]])?.first?["nb_read_packets"] as? String).flatMap(Int.init)
        #expect(written == 40)
        let decoded = try Tools.run("ffmpeg", ["-v", "error", "-i", out, "-fps_mode", "passthrough", "-f", "framemd5", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        #expect(decoded.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 40)
    }
}

import Foundation
import Testing
import VTDecoding

extension ThumbnailTests {
    /// A time past the end of the recording has no picture: ffmpeg's `-ss` there writes no
    /// file, and neither does thumbnail, which says so in one line naming the file's length
    /// (exit 2, as for any bad option value) instead of handing out the last picture as if it
    /// were the one asked for. Nothing is written when any of the times is past the end; a
    /// time inside the last frame still gives it.
    @Test(arguments: ["mp4", "mkv", "ts", "h264"])
    func aTimePastTheEndIsRefusedWithTheFilesLength(_ container: String) throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, "clip.\(container)")
        if container == "mp4" {
            let ffmpeg = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-ss", "99", "-i", path, "-frames:v", "1", dir.path("ff.jpg")])
            #expect(ffmpeg.status == 0 && !FileManager.default.fileExists(atPath: dir.path("ff.jpg")), "\(ffmpeg.stderr)")
        }
        for times in ["99s", "1s,99s", "3s"] {
            for exact in [[], ["--exact"]] {
                let r = try Tools.vtrecord(["thumbnail", path, "--at", times, "-o", dir.path("t-{n}.jpg")] + exact)
                #expect(r.status == 2, "--at \(times) \(exact): \(r.stderr)")
                let lines = r.stderr.split(separator: "\n")
                #expect(lines.count == 1 && lines[0].hasPrefix("vtrecord: error: --at"), "\(r.stderr)")
                #expect(r.stderr.contains("past the end of \(path)") && r.stderr.contains("3.000 s long"), "\(r.stderr)")
                let written = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("t-") }
                #expect(written.isEmpty, "--at \(times) \(exact) wrote \(written)")
                for name in written { try FileManager.default.removeItem(atPath: dir.path(name)) }
            }
        }
        let last = try Tools.vtrecord(["thumbnail", path, "--at", "2.99s", "--exact", "-o", dir.path("last.jpg")])
        #expect(last.status == 0, "\(last.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.path("last.jpg")))
    }
}

extension ThumbnailTests {
    /// Times in the last GOP, up to the last frame (at 2.967 s): FFmpeg's pictures, and the last
    /// keyframe. A transport stream's seek, a search by timestamps, lands after the last
    /// keyframe there.
    @Test(arguments: ["mp4", "mkv", "ts", "h264"])
    func theLastGOPGivesItsPictures(_ container: String) throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, "clip.\(container)")
        let generator = try AssetImageGenerator(path: path)
        for time in [2.6, 2.95] {
            let exact = try generator.image(at: time, exact: true)
            #expect(Self.packed(exact.picture) == (try Self.ffmpegPicture(path, at: time)), "\(container) at \(time) s")
            let key = try generator.image(at: time, exact: false)
            #expect(key.isKeyFrame && abs(key.time - 2.5) < 0.001, "\(container) at \(time) s: \(key.time) s")
        }
    }
}

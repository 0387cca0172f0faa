import Foundation
import Testing
import VTDecoding

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

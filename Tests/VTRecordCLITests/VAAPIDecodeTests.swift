import Foundation
import Testing
import VTTestSupport

/// `--decoder` of verify and thumbnail on the test VA-API driver, which decodes what VA-API
/// encoders of its kind make (I_PCM macroblocks) exactly and counts what it decoded: the
/// hardware path decodes every picture there, gives the pictures software gives, and a device
/// that cannot decode the stream is passed over (auto) or refused (vaapi) with its reason.
@Suite struct VAAPIDecodeTests {
    /// A recording made by vtrecord's VA-API encoder on the test driver.
    static func record(_ dir: TemporaryDirectory, _ name: String, profile: String, size: String, frames: Int) throws -> String {
        let clip = dir.path("clip-\(size).y4m")
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30",
                                            "-frames:v", "\(frames)", "-pix_fmt", "yuv420p", "-y", clip])
        try #require(made.status == 0, "\(made.stderr)")
        let path = dir.path(name)
        let va = try FakeVADevice()
        let r = try Tools.run(Tools.vtrecord, ["--input", clip, "--encoder", "vaapi", "--va-device", va.devicePath,
                                               "--profile", profile, "--keyint", "10", "--quiet", "-o", path],
                              environment: try va.environment())
        try #require(r.status == 0, "\(r.stderr)")
        return path
    }

    static func json(_ r: ProcessResult) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]) ?? [:]
    }

    @Test(arguments: [("high", "320x240", "clip.mp4"), ("baseline", "200x120", "clip.h264")])
    func verifyDecodesEveryPictureOnTheDevice(profile: String, size: String, name: String) throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, name, profile: profile, size: size, frames: 24)
        let va = try FakeVADevice()
        let r = try Tools.run(Tools.vtrecord, ["verify", "--json", "--decoder", "vaapi", "--va-device", va.devicePath, path],
                              environment: try va.environment())
        #expect(r.status == 0, "\(r.stderr)")
        let file = try #require((Self.json(r)["files"] as? [[String: Any]])?.first, "\(r.stdoutText)")
        #expect(file["decoder"] as? String == "vaapi" && file["clean"] as? Bool == true, "\(file)")
        #expect(file["decoded_frames"] as? Int == 24)
        let report = try va.report()
        #expect(report.decode.pictures == 24 && report.decode.failedPictures == 0, "\(report.decode)")
        #expect(report.violations.isEmpty, "\(report.violations)")
        // The same file in software: the same verdict, counted by the software decoder.
        let software = try Tools.run(Tools.vtrecord, ["verify", "--json", "--decoder", "software", path])
        #expect((Self.json(software)["files"] as? [[String: Any]])?.first?["decoder"] as? String == "software")
    }

    /// The picture a thumbnail shows is the same through the device as in software, byte for
    /// byte once it is a JPEG (the device's NV12 copied to I420, then the same encoder).
    @Test func aThumbnailThroughTheDeviceIsTheSoftwarePicture() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, "clip.mp4", profile: "main", size: "320x240", frames: 30)
        let va = try FakeVADevice()
        let hardware = dir.path("hardware.jpg")
        let r = try Tools.run(Tools.vtrecord, ["thumbnail", path, "--at", "0.5", "--exact", "--decoder", "vaapi",
                                               "--va-device", va.devicePath, "-o", hardware],
                              environment: try va.environment())
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        #expect(try va.report().decode.pictures > 0)
        let software = dir.path("software.jpg")
        let s = try Tools.run(Tools.vtrecord, ["thumbnail", path, "--at", "0.5", "--exact", "--decoder", "software",
                                               "-o", software])
        #expect(s.status == 0, "\(s.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: hardware)) == Data(contentsOf: URL(fileURLWithPath: software)))
    }

    /// A device whose decoder is too small for the stream: auto decodes in software and says
    /// why in one line; vaapi is refused with the same reason (exit 4).
    @Test func aDeviceThatCannotIsPassedOverOrRefusedWithItsReason() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, "clip.mp4", profile: "high", size: "320x240", frames: 12)
        let va = try FakeVADevice(knobs: [.decodeMax(width: 256, height: 256)])
        let auto = try Tools.run(Tools.vtrecord, ["verify", "--json", "--va-device", va.devicePath, path],
                                 environment: try va.environment())
        #expect(auto.status == 0, "\(auto.stderr)")
        #expect((Self.json(auto)["files"] as? [[String: Any]])?.first?["decoder"] as? String == "software")
        let lines = auto.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("decoding in software")
                && lines[0].contains("decodes H.264 up to 256x256, not 320x240"), "\(auto.stderr)")
        let required = try Tools.run(Tools.vtrecord, ["verify", "--decoder", "vaapi", "--va-device", va.devicePath, path],
                                     environment: try va.environment())
        #expect(required.status == 4, "\(required.stderr)")
        #expect(required.stderr.split(separator: "\n").count == 1
                && required.stderr.contains("decodes H.264 up to 256x256, not 320x240"), "\(required.stderr)")
        // A device that offers no decoding at all.
        let encodeOnly = try FakeVADevice(knobs: [.entrypoints([.slice, .lowPower])])
        let none = try Tools.run(Tools.vtrecord, ["thumbnail", path, "--decoder", "vaapi", "--va-device", encodeOnly.devicePath,
                                                  "-o", dir.path("t.jpg")],
                                 environment: try encodeOnly.environment())
        #expect(none.status == 4 && none.stderr.contains("does not decode H.264 High"), "\(none.stderr)")
    }
}

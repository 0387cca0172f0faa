import Foundation
import Testing
import VTTestSupport

/// Running encoders against the fake VA driver and decoding what they made.
enum FakeVA {
    /// The test clip: ffmpeg's testsrc2 at a small size.
    static let width = 320, height = 240, frames = 30

    /// ffmpeg 5.1's h264_vaapi encoding the clip (`size` pixels) through the driver, to `output`.
    static func ffmpegEncode(_ device: FakeVADevice, _ arguments: [String], output: String,
                             frames: Int = frames, size: String = "\(width)x\(height)") throws -> ChildProcess.Result {
        try ChildProcess.run(
            ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error",
             "-init_hw_device", "vaapi=va:\(device.devicePath)", "-filter_hw_device", "va",
             "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30", "-frames:v", "\(frames)",
             "-vf", "format=nv12,hwupload", "-c:v", "h264_vaapi"] + arguments + ["-y", output],
            environment: device.environment(), timeout: .seconds(60))
    }

    /// The MD5 of each decoded picture, and what the decoder complained about.
    struct Decoded {
        var pictures: [String]
        var errors: String
    }

    /// Decodes `input` (any ffmpeg input, `inputOptions` first) to one MD5 per picture, in the
    /// 8-bit 4:2:0 layout both an H.264 stream and raw I420 decode to.
    static func decode(_ input: String, inputOptions: [String] = []) throws -> Decoded {
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = nil
        let result = try ChildProcess.run(
            ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error"] + inputOptions
                + ["-i", input, "-pix_fmt", "yuv420p", "-f", "framemd5", "-"],
            environment: environment, timeout: .seconds(60))
        let pictures = result.standardOutputText.split(separator: "\n")
            .filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last?.trimmingCharacters(in: .whitespaces) }
        return Decoded(pictures: pictures,
                       errors: result.status == 0 ? result.standardError : "exit \(result.status): \(result.standardError)")
    }

    /// Decodes `input` with ffmpeg through `device`'s driver (libavcodec's VA-API hwaccel,
    /// frames downloaded from the surfaces as NV12 and converted to yuv420p, which only
    /// deinterleaves chroma) to one MD5 per picture. `decodeOptions` go before `-i` (after the
    /// hwaccel options), `outputOptions` after it. Only the driver's report tells whether the
    /// hwaccel really decoded: libavcodec falls back to software when it cannot set it up.
    static func hardwareDecode(_ device: FakeVADevice, _ input: String, decodeOptions: [String] = [],
                               outputOptions: [String] = ["-pix_fmt", "yuv420p"]) throws
        -> (result: ChildProcess.Result, pictures: [String]) {
        let result = try ChildProcess.run(
            ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error",
             "-hwaccel", "vaapi", "-hwaccel_device", device.devicePath] + decodeOptions
                + ["-i", input] + outputOptions + ["-f", "framemd5", "-"],
            environment: device.environment(), timeout: .seconds(120))
        let pictures = result.standardOutputText.split(separator: "\n")
            .filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last?.trimmingCharacters(in: .whitespaces) }
        return (result, pictures)
    }

    /// The clip's own pictures, as ffmpeg's encoders received them (NV12 is 4:2:0 like I420).
    static func sourcePictures(size: String = "\(width)x\(height)", frames: Int = frames) throws -> [String] {
        try decode("testsrc2=size=\(size):rate=30,trim=end_frame=\(frames)", inputOptions: ["-f", "lavfi"]).pictures
    }

    /// Raw I420 pictures of the C client's size.
    static func rawPictures(_ path: String, width: Int = 176, height: Int = 144) throws -> [String] {
        try decode(path, inputOptions: ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "\(width)x\(height)"]).pictures
    }

    /// The C client (Tests/FakeVA/clients/encode_h264.c) run against `device`, writing
    /// `<prefix>.h264` and `<prefix>.yuv` in the device's directory.
    static func client(_ device: FakeVADevice, _ arguments: [String], prefix: String = "client") throws
        -> (result: ChildProcess.Result, stream: String, pictures: String) {
        let program = try FakeVADevice.client("encode_h264")
        let output = device.file(prefix)
        let result = try ChildProcess.run([program] + arguments + [output], environment: device.environment(),
                                          timeout: .seconds(30))
        return (result, output + ".h264", output + ".yuv")
    }

    /// The violation lines a process printed.
    static func violations(_ standardError: String) -> [String] {
        standardError.split(separator: "\n").map(String.init).filter { $0.hasPrefix("fake-va: violation: ") }
    }
}
